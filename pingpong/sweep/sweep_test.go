package sweep

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		min, max int
		want     []int
	}{
		{64, 64, []int{64}},
		{64, 1 << 20, []int{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1 << 20}},
		{2, 16, []int{2, 4, 8, 16}},
		{1, 5, []int{1, 2, 4, 5}},
		{1000, 3000, []int{1000, 2000, 3000}},
		{MaxSize, MaxSize, []int{MaxSize}},
		{0, 10, nil},
		{10, 5, nil},
	} {
		if got := Sizes(tc.min, tc.max); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Sizes(%d, %d) = %v, want %v", tc.min, tc.max, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	st := sim.New(sim.Config{})
	defer st.Close()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // a part of the error; "" for none
	}{
		{"defaults on the simulator", Config{Fabric: st}, ""},
		{"wall clock without a fabric", Config{Clock: Wall}, ""},
		{"virtual time without a fabric", Config{}, "virtual time needs the simulator"},
		{"min above max", Config{Fabric: st, MinSize: 4096, MaxSize: 64}, "between the min size"},
		{"max above 8 MiB", Config{Fabric: st, MaxSize: MaxSize + 1}, "8 MiB"},
		{"too few iterations", Config{Fabric: st, Iters: 4}, "at least 5"},
		{"too few latency iterations", Config{Fabric: st, LatIters: 2}, "two largest"},
		{"latency iterations unused by bw", Config{Fabric: st, LatIters: 2, Tests: []Test{BW}}, ""},
		{"bad path MTU", Config{Fabric: st, MTU: 9}, "one of 256"},
		{"negative tx_depth", Config{Fabric: st, TxDepth: -1}, "tx_depth"},
		{"unknown op", Config{Fabric: st, Ops: []Op{7}}, "unknown operation"},
	} {
		err := tc.cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Validate() = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Op
		ok   bool
	}{{"send", Send, true}, {"WRITE", Write, true}, {"read", Read, true}, {"atomic", 0, false}} {
		got, err := ParseOp(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseOp(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if c, err := ParseClock("wall"); err != nil || c != Wall {
		t.Errorf("ParseClock(wall) = %v, %v", c, err)
	}
	if _, err := ParseClock("cpu"); err == nil {
		t.Errorf("ParseClock(cpu) = nil error")
	}
	if got := Program(Read, Lat); got != "ib_read_lat" {
		t.Errorf("Program(Read, Lat) = %q", got)
	}
}

// TestLatPoint checks perftest's statistics (print_report_lat): n-1
// deltas between posts, sorted, the two largest dropped, t_max the largest
// kept... as perftest indexes it, and the halving for SEND and WRITE.
func TestLatPoint(t *testing.T) {
	us := time.Microsecond
	// Posts at 0, 10, 30, 40, 50, 60, 160: deltas 10 20 10 10 10 100.
	posted := []time.Duration{0, 10 * us, 30 * us, 40 * us, 50 * us, 60 * us, 160 * us}
	for _, tc := range []struct {
		op                      Op
		min, max, typ, avg, p99 float64
	}{
		// Sorted: 10 10 10 10 20 100; kept: 10 10 10 10 (cnt 4).
		// Median of 4 (perftest's get_median: (n-1)%2 != 0): (d[2]+d[1])/2 = 10.
		// t_max is delta[cnt] = 20, the smallest dropped, as perftest prints it.
		// 99%: delta[ceil(4*0.99)] = delta[4] = 20.
		{Write, 5, 10, 5, 5, 10},
		{Send, 5, 10, 5, 5, 10},
		{Read, 10, 20, 10, 10, 20},
	} {
		p := latPoint(64, 7, posted, tc.op)
		got := []float64{p.TMin, p.TMax, p.TTypical, p.TAvg, p.T99}
		want := []float64{tc.min, tc.max, tc.typ, tc.avg, tc.p99}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("latPoint(%v) min,max,typical,avg,99%% = %v, want %v", tc.op, got, want)
		}
	}
}

func TestPointRates(t *testing.T) {
	p := Point{Size: 1 << 20, Iters: 100, Elapsed: 100 * time.Millisecond}
	if got := p.MiBps(); got != 1000 {
		t.Errorf("MiBps = %v, want 1000", got)
	}
	if got, want := p.Gbps(), float64(100<<20)*8/0.1/1e9; got != want {
		t.Errorf("Gbps = %v, want %v", got, want)
	}
	if got := p.Mpps(); got != 0.001 {
		t.Errorf("Mpps = %v, want 0.001", got)
	}
	if (Point{}).MiBps() != 0 {
		t.Errorf("a point with no time has a bandwidth")
	}
}

// open returns a fabric and contexts on devices i and j.
func open(t *testing.T, i, j int) (*sim.Fabric, verbs.Context, verbs.Context) {
	t.Helper()
	f := sim.New(sim.Config{Devices: 2, Seed: 1})
	t.Cleanup(func() { f.Close() })
	devs, err := f.Devices()
	if err != nil {
		t.Fatal(err)
	}
	a, err := devs[i].Open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := devs[j].Open()
	if err != nil {
		t.Fatal(err)
	}
	return f, a, b
}

// TestRunVirtual checks the shape of the curves the link model gives, that
// virtual time repeats exactly, and that every object is destroyed.
func TestRunVirtual(t *testing.T) {
	run := func() *Result {
		f, a, b := open(t, 0, 1)
		ca, cb := counting(a), counting(b)
		res, err := Run(context.Background(), ca, cb, Config{Ops: Ops(), MinSize: 64, MaxSize: 64 << 10,
			Iters: 300, LatIters: 10, Fabric: f})
		if err != nil {
			t.Fatal(err)
		}
		if ca.live != 0 || cb.live != 0 {
			t.Errorf("Run left %d objects on A and %d on B", ca.live, cb.live)
		}
		if ca.made == 0 {
			t.Errorf("the counting context saw no object made")
		}
		if f.DeliveryMode() != verbs.DeliverAuto {
			t.Errorf("delivery mode after Run = %v, want it restored to auto", f.DeliveryMode())
		}
		return res
	}
	res := run()
	if again := run(); !reflect.DeepEqual(res.Series, again.Series) {
		t.Errorf("two runs in virtual time differ:\n%v\n%v", res.Series, again.Series)
	}
	if res.PathMTU != verbs.MTU1024 || res.Loopback || res.OutReads != 128 {
		t.Errorf("path MTU %v, loopback %v, outstanding reads %d; want 1024, false, 128", res.PathMTU, res.Loopback, res.OutReads)
	}
	if len(res.Series) != 6 {
		t.Fatalf("%d series, want 6 (3 ops × bw, lat)", len(res.Series))
	}
	lat := map[Op]Series{}
	for _, s := range res.Series {
		if len(s.Points) != 11 {
			t.Fatalf("%s: %d points, want 11", s.Program(), len(s.Points))
		}
		for i := 1; i < len(s.Points); i++ {
			prev, p := s.Points[i-1], s.Points[i]
			if s.Test == BW && p.Gbps() < prev.Gbps() {
				t.Errorf("%s: %d B gets %.2f Gb/s, less than %d B's %.2f", s.Program(), p.Size, p.Gbps(), prev.Size, prev.Gbps())
			}
			if s.Test == BW && p.Mpps() > prev.Mpps() {
				t.Errorf("%s: %d B gets %.3f Mpps, more than %d B's %.3f", s.Program(), p.Size, p.Mpps(), prev.Size, prev.Mpps())
			}
			if s.Test == Lat && p.TTypical <= prev.TTypical {
				t.Errorf("%s: %d B takes %.2f usec, no more than %d B's %.2f", s.Program(), p.Size, p.TTypical, prev.Size, prev.TTypical)
			}
		}
		last := s.Points[len(s.Points)-1]
		if s.Test == BW && (last.Gbps() < 0.85*25 || last.Gbps() > 25) {
			t.Errorf("%s at 64 KiB: %.2f Gb/s; the 25 Gb/s link should be nearly full", s.Program(), last.Gbps())
		}
		if s.Test == Lat {
			lat[s.Op] = s
		}
	}
	// Small messages: the latency is the wire's (two cables of 1 µs each
	// way); a READ is a whole round trip, SEND and WRITE half of one.
	w, r := lat[Write].Points[0].TTypical, lat[Read].Points[0].TTypical
	if w < 2 || w > 2.5 {
		t.Errorf("ib_write_lat at 64 B = %.2f usec, want about 2 (one way over two 1 µs cables)", w)
	}
	if r < 1.8*w || r > 2.2*w {
		t.Errorf("ib_read_lat at 64 B = %.2f usec, want about twice ib_write_lat's %.2f", r, w)
	}
	// Above the MTU the packets pipeline through the switch: each doubling
	// adds less than twice what the one below the MTU added.
	pts := lat[Write].Points // 64 ... 1024 (index 4), 2048, 4096
	below := pts[4].TTypical - pts[3].TTypical
	above := pts[5].TTypical - pts[4].TTypical
	if above >= 2*below {
		t.Errorf("write latency 512→1024 B adds %.3f usec, 1024→2048 B %.3f: no knee at the 1024-byte MTU", below, above)
	}
}

func TestRunLoopbackAndMTU(t *testing.T) {
	f, a, b := open(t, 0, 0)
	res, err := Run(context.Background(), a, b, Config{Ops: []Op{Send}, Tests: []Test{Lat}, MinSize: 256, MaxSize: 1024,
		LatIters: 5, MTU: verbs.MTU256, Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Loopback || res.PathMTU != verbs.MTU256 || res.ActiveMTU != verbs.MTU1024 {
		t.Errorf("loopback %v, path MTU %v, active %v; want true, 256, 1024", res.Loopback, res.PathMTU, res.ActiveMTU)
	}
	// A path MTU above the port's is lowered to it, as perftest does.
	res, err = Run(context.Background(), a, b, Config{Tests: []Test{Lat}, MaxSize: 64, LatIters: 5, MTU: verbs.MTU4096, Fabric: f})
	if err != nil {
		t.Fatal(err)
	}
	if res.PathMTU != verbs.MTU1024 {
		t.Errorf("mtu 4096 on a 1500-byte netdev: path MTU %v, want 1024", res.PathMTU)
	}
}

func TestRunWall(t *testing.T) {
	f, a, b := open(t, 0, 1)
	f.SetDeliveryMode(verbs.DeliverStep)
	var seen []Progress
	ca, cb := counting(a), counting(b)
	res, err := Run(context.Background(), ca, cb, Config{Ops: Ops(), MinSize: 1024, MaxSize: 4096, Iters: 50, LatIters: 10,
		Clock: Wall, Fabric: f, Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if ca.live != 0 || cb.live != 0 {
		t.Errorf("Run left %d objects on A and %d on B", ca.live, cb.live)
	}
	if f.DeliveryMode() != verbs.DeliverStep {
		t.Errorf("delivery mode after Run = %v, want step again", f.DeliveryMode())
	}
	if len(seen) != 18 || seen[17].Done != 18 || seen[17].Total != 18 {
		t.Errorf("progress: %d calls, last %+v; want 18, the last 18 of 18", len(seen), seen[len(seen)-1])
	}
	for _, s := range res.Series {
		for _, p := range s.Points {
			if (s.Test == BW && p.Elapsed <= 0) || (s.Test == Lat && p.TMin <= 0) {
				t.Errorf("%s %d B: no time measured: %+v", s.Program(), p.Size, p)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	t.Run("lost packets", func(t *testing.T) {
		f, a, b := open(t, 0, 1)
		if _, err := f.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "RDMA_WRITE"}); err != nil {
			t.Fatal(err)
		}
		ca, cb := counting(a), counting(b)
		_, err := Run(context.Background(), ca, cb, Config{MaxSize: 64, Iters: 10, LatIters: 10, Timeout: 300 * time.Millisecond, Fabric: f})
		var se *Error
		if !errors.As(err, &se) || se.Program != "ib_write_bw" || se.Size != 64 || !strings.Contains(se.Msg, "only timers fired") {
			t.Fatalf("Run with every WRITE dropped = %v; want an ib_write_bw stall at 64 bytes", err)
		}
		if ca.live != 0 || cb.live != 0 {
			t.Errorf("after a failure Run left %d objects on A and %d on B", ca.live, cb.live)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		f, a, b := open(t, 0, 1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Run(ctx, a, b, Config{MaxSize: 64, Fabric: f})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run with a cancelled context = %v, want context.Canceled", err)
		}
	})
	t.Run("virtual time on a real-time fabric", func(t *testing.T) {
		f, a, b := open(t, 0, 1)
		_, err := Run(context.Background(), a, b, Config{MaxSize: 64, Fabric: realTime{f}})
		if err == nil || !strings.Contains(err.Error(), "follows the wall clock") {
			t.Fatalf("Run in virtual time on a real-time fabric = %v", err)
		}
	})
	t.Run("too large for the port", func(t *testing.T) {
		_, a, b := open(t, 0, 1)
		_, err := Run(context.Background(), a, b, Config{Clock: Wall, MinSize: 64, MaxSize: MaxSize + 1})
		if err == nil || !strings.Contains(err.Error(), "8 MiB") {
			t.Fatalf("Run with an 8 MiB + 1 maximum = %v", err)
		}
	})
}

// realTime is a fabric whose clock follows the wall clock, as the
// simulator's UDP link does.
type realTime struct{ *sim.Fabric }

func (realTime) RealTime() bool { return true }

// countingCtx counts the objects made through a context that are not
// destroyed yet.
type countingCtx struct {
	verbs.Context
	live, made int
}

func counting(c verbs.Context) *countingCtx { return &countingCtx{Context: c} }

func (c *countingCtx) add() { c.live++; c.made++ }

func (c *countingCtx) AllocPD() (verbs.PD, error) {
	pd, err := c.Context.AllocPD()
	if err != nil {
		return nil, err
	}
	c.add()
	return &countingPD{PD: pd, c: c}, nil
}

func (c *countingCtx) CreateCQ(attr verbs.CQInitAttr) (verbs.CQ, error) {
	cq, err := c.Context.CreateCQ(attr)
	if err != nil {
		return nil, err
	}
	c.add()
	return &countingCQ{CQ: cq, c: c}, nil
}

type countingPD struct {
	verbs.PD
	c *countingCtx
}

func (p *countingPD) Dealloc() error { p.c.live--; return p.PD.Dealloc() }

func (p *countingPD) AllocMR(n int, acc verbs.Access) (verbs.MR, error) {
	mr, err := p.PD.AllocMR(n, acc)
	if err != nil {
		return nil, err
	}
	p.c.add()
	return &countingMR{MR: mr, c: p.c}, nil
}

func (p *countingPD) CreateQP(attr verbs.QPInitAttr) (verbs.QP, error) {
	if cq, ok := attr.SendCQ.(*countingCQ); ok {
		attr.SendCQ = cq.CQ
	}
	if cq, ok := attr.RecvCQ.(*countingCQ); ok {
		attr.RecvCQ = cq.CQ
	}
	qp, err := p.PD.CreateQP(attr)
	if err != nil {
		return nil, err
	}
	p.c.add()
	return &countingQP{QP: qp, c: p.c}, nil
}

type countingMR struct {
	verbs.MR
	c *countingCtx
}

func (m *countingMR) Dereg() error { m.c.live--; return m.MR.Dereg() }

type countingCQ struct {
	verbs.CQ
	c *countingCtx
}

func (q *countingCQ) Destroy() error { q.c.live--; return q.CQ.Destroy() }

type countingQP struct {
	verbs.QP
	c *countingCtx
}

func (q *countingQP) Destroy() error { q.c.live--; return q.QP.Destroy() }
