package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Teardown is linear in the number of objects: each object leaves its
// owner's list in O(1), and the event queues are swept only as often as
// objects go. The tests count that work (device.listWork) instead of timing
// it; BenchmarkDestroyCQs reports the times.

// manyCQs is how many CQs the teardown tests make: 200,000, as in the
// issue that found exit quadratic, or 20,000 with -short or the race
// detector (the counts they check do not depend on the size).
func manyCQs() int {
	if testing.Short() || raceEnabled {
		return 20_000
	}
	return 200_000
}

// openCtx opens device 0 of a new one-device fabric.
func openCtx(t testing.TB) (*Fabric, *context) {
	t.Helper()
	f := New(Config{Devices: 1})
	devs, err := f.Devices()
	if err != nil {
		t.Fatal(err)
	}
	c, err := devs[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	return f, c.(*context)
}

func createCQs(t testing.TB, c *context, n int, ch verbs.CompChannel) []*cq {
	t.Helper()
	cqs := make([]*cq, n)
	for i := range cqs {
		q, err := c.CreateCQ(verbs.CQInitAttr{CQE: 1, Channel: ch})
		if err != nil {
			t.Fatalf("CQ %d: %v", i, err)
		}
		cqs[i] = q.(*cq)
	}
	return cqs
}

// checkWork fails unless the list work the device did is at most per
// slots per object for n objects.
func checkWork(t *testing.T, d *device, n, per int) {
	t.Helper()
	t.Logf("%d objects: %d slots moved or swept", n, d.listWork)
	if d.listWork > per*n {
		t.Errorf("tearing down %d objects moved or swept %d slots, want at most %d (%d per object): teardown is not linear",
			n, d.listWork, per*n, per)
	}
	for k, v := range d.pooled {
		if v != 0 {
			t.Errorf("the %s pool still counts %d objects after teardown", pools[k].name, v)
		}
	}
}

// TestDestroyCQsLinear destroys many CQs in the orders a program or the
// shell may use: newest first (vsh's exit), oldest first, at random, and
// all at once by closing the context.
func TestDestroyCQsLinear(t *testing.T) {
	n := manyCQs()
	orders := map[string]func([]*cq){
		"newest first": func(q []*cq) {
			for i, j := 0, len(q)-1; i < j; i, j = i+1, j-1 {
				q[i], q[j] = q[j], q[i]
			}
		},
		"oldest first": func([]*cq) {},
		"at random": func(q []*cq) {
			r := rand.New(rand.NewPCG(1, 2))
			r.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
		},
	}
	for _, name := range []string{"newest first", "oldest first", "at random"} {
		t.Run(name, func(t *testing.T) {
			f, c := openCtx(t)
			defer f.Close()
			cqs := createCQs(t, c, n, nil)
			orders[name](cqs)
			for _, q := range cqs {
				if err := q.Destroy(); err != nil {
					t.Fatal(err)
				}
			}
			if len(c.cqs) != 0 {
				t.Fatalf("the context still lists %d CQs", len(c.cqs))
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			checkWork(t, c.dev, n, 2)
		})
	}
	t.Run("close_device", func(t *testing.T) {
		f, c := openCtx(t)
		defer f.Close()
		cqs := createCQs(t, c, n, nil)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := cqs[n/2].Destroy(); verbs.ErrnoOf(err) != verbs.EINVAL {
			t.Errorf("Destroy after ibv_close_device = %v, want EINVAL", err)
		}
		checkWork(t, c.dev, n, 2)
	})
}

// TestDestroyWithEventsLinear destroys CQs that each have a completion
// event and an async event queued: the events go with their CQs (neither
// is read afterwards), and sweeping the queues stays linear.
func TestDestroyWithEventsLinear(t *testing.T) {
	n := manyCQs() / 4
	f, c := openCtx(t)
	defer f.Close()
	ch, err := c.CreateCompChannel()
	if err != nil {
		t.Fatal(err)
	}
	cqs := createCQs(t, c, n, ch)
	f.mu.Lock()
	for _, q := range cqs {
		q.notify = notifyNextComp
		q.post(verbs.WC{WRID: 1}, false) // a completion event
		q.post(verbs.WC{WRID: 2}, false) // the CQ holds 1: IBV_EVENT_CQ_ERR
	}
	f.mu.Unlock()
	keep := cqs[n/2]
	for i := len(cqs) - 1; i >= 0; i-- {
		if cqs[i] == keep {
			continue
		}
		if err := cqs[i].Destroy(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ch.GetEvent(0)
	if err != nil || got != verbs.CQ(keep) {
		t.Fatalf("GetEvent = %v, %v; want the one CQ left", got, err)
	}
	keep.AckEvents(1)
	if _, err := ch.GetEvent(0); verbs.ErrnoOf(err) != verbs.EAGAIN {
		t.Errorf("second GetEvent = %v, want EAGAIN: the destroyed CQs' events went with them", err)
	}
	ev, err := c.GetAsyncEvent(0)
	if err != nil || ev.CQ != verbs.CQ(keep) || ev.Type != verbs.EventCQErr {
		t.Fatalf("GetAsyncEvent = %+v, %v; want IBV_EVENT_CQ_ERR of the one CQ left", ev, err)
	}
	c.AckAsyncEvent(ev)
	if _, err := c.GetAsyncEvent(0); verbs.ErrnoOf(err) != verbs.EAGAIN {
		t.Errorf("second GetAsyncEvent = %v, want EAGAIN", err)
	}
	if err := keep.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := ch.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Per CQ: its slot in the list, and the share of two sweeps (the
	// channel's queue and the async one) of at most one slot each.
	checkWork(t, c.dev, n, 4)
}

// TestDestroyEveryKindLinear tears down every kind of object, first one by
// one newest first (as vsh's exit does), then all at once by closing the
// context.
func TestDestroyEveryKindLinear(t *testing.T) {
	n := manyCQs() / 20
	for _, how := range []string{"one by one", "close_device"} {
		t.Run(how, func(t *testing.T) {
			f, c := openCtx(t)
			defer f.Close()
			av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: c.dev.gids[1], SGIDIndex: 1}}
			var destroy []func() error
			for i := 0; i < n; i++ {
				p, err := c.AllocPD()
				if err != nil {
					t.Fatal(err)
				}
				ch, err := c.CreateCompChannel()
				if err != nil {
					t.Fatal(err)
				}
				q, err := c.CreateCQ(verbs.CQInitAttr{CQE: 1, Channel: ch})
				if err != nil {
					t.Fatal(err)
				}
				s, err := p.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 1, MaxSGE: 1}})
				if err != nil {
					t.Fatal(err)
				}
				m, err := p.AllocMR(64, verbs.AccessLocalWrite)
				if err != nil {
					t.Fatal(err)
				}
				a, err := p.CreateAH(av)
				if err != nil {
					t.Fatal(err)
				}
				qp, err := p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: q, RecvCQ: q, SRQ: s,
					Cap: verbs.QPCap{MaxSendWR: 1, MaxSendSGE: 1}})
				if err != nil {
					t.Fatal(err)
				}
				destroy = append(destroy, p.Dealloc, ch.Destroy, q.Destroy, s.Destroy, m.Dereg, a.Destroy, qp.Destroy)
			}
			if how == "one by one" {
				for i := len(destroy) - 1; i >= 0; i-- {
					if err := destroy[i](); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			checkWork(t, c.dev, 7*n, 2)
		})
	}
}

// TestPoolLimits checks that a device refuses one object more than its
// limit, as rxe's pools do, with an error that names the limit; that the
// count is per device, across contexts; and that a destroyed object frees
// its place. The limits are lowered for the test; TestPoolLimitsAreRxes
// checks the real ones.
func TestPoolLimits(t *testing.T) {
	const limit = 3
	type maker func(c *context) (func() error, error)
	mk := map[pool]maker{
		poolUContext: func(c *context) (func() error, error) {
			x, err := c.dev.Open()
			if err != nil {
				return nil, err
			}
			return x.Close, nil
		},
		poolPD: func(c *context) (func() error, error) {
			x, err := c.AllocPD()
			if err != nil {
				return nil, err
			}
			return x.Dealloc, nil
		},
		poolCQ: func(c *context) (func() error, error) {
			x, err := c.CreateCQ(verbs.CQInitAttr{CQE: 1})
			if err != nil {
				return nil, err
			}
			return x.Destroy, nil
		},
		poolSRQ: func(c *context) (func() error, error) {
			x, err := c.pds[0].CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 1, MaxSGE: 1}})
			if err != nil {
				return nil, err
			}
			return x.Destroy, nil
		},
		poolQP: func(c *context) (func() error, error) {
			x, err := c.pds[0].CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: c.cqs[0], RecvCQ: c.cqs[0],
				Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
			if err != nil {
				return nil, err
			}
			return x.Destroy, nil
		},
		poolAH: func(c *context) (func() error, error) {
			x, err := c.pds[0].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: c.dev.gids[1], SGIDIndex: 1}})
			if err != nil {
				return nil, err
			}
			return x.Destroy, nil
		},
		poolMR: func(c *context) (func() error, error) {
			x, err := c.pds[0].AllocMR(64, verbs.AccessLocalWrite)
			if err != nil {
				return nil, err
			}
			return x.Dereg, nil
		},
	}
	for k := pool(0); k < numPools; k++ {
		p := pools[k]
		t.Run(p.name, func(t *testing.T) {
			f, c1 := openCtx(t)
			defer f.Close()
			x, _ := c1.dev.Open()
			c2 := x.(*context)
			for _, c := range []*context{c1, c2} { // what the makers need
				if _, err := c.AllocPD(); err != nil {
					t.Fatal(err)
				}
				if _, err := c.CreateCQ(verbs.CQInitAttr{CQE: 4}); err != nil {
					t.Fatal(err)
				}
			}
			max := c1.dev.pooled[k] + limit // what the setup used, and limit more
			if p.held != "" {
				max++
			}
			old := pools[k].max
			pools[k].max = max
			defer func() { pools[k].max = old }()
			var frees []func() error
			for i := 0; i < limit; i++ {
				free, err := mk[k]([]*context{c1, c2}[i%2]) // the count is the device's
				if err != nil {
					t.Fatalf("object %d of %d: %v", i+1, limit, err)
				}
				frees = append(frees, free)
			}
			_, err := mk[k](c1)
			if got := verbs.ErrnoOf(err); got != p.errno {
				t.Fatalf("one %s more than the limit: %v, want %v", p.noun, err, syscall.Errno(p.errno))
			}
			if msg := err.Error(); !strings.Contains(msg, p.attr) || !strings.Contains(msg, fmt.Sprintf("holds %d %s", max, p.noun)) {
				t.Errorf("error %q does not name the limit %s and the count %d", msg, p.attr, max)
			}
			if err := frees[0](); err != nil {
				t.Fatal(err)
			}
			if _, err := mk[k](c2); err != nil {
				t.Errorf("after one %s went: %v, want room for another", p.noun, err)
			}
		})
	}
}

// TestPoolLimitsAreRxes checks that the pools' limits are those
// ibv_query_device reports, and fills the smallest, max_ah (32767), for
// real.
func TestPoolLimitsAreRxes(t *testing.T) {
	f, c := openCtx(t)
	defer f.Close()
	a := c.dev.deviceAttr()
	for k, want := range map[pool]int{poolPD: a.MaxPD, poolCQ: a.MaxCQ, poolSRQ: a.MaxSRQ, poolQP: a.MaxQP, poolAH: a.MaxAH, poolMR: a.MaxMR} {
		if pools[k].max != want {
			t.Errorf("the %s pool holds %d, but query_device reports %s %d", pools[k].name, pools[k].max, pools[k].attr, want)
		}
	}
	p, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: c.dev.gids[1], SGIDIndex: 1}}
	for i := 0; i < a.MaxAH; i++ {
		if _, err := p.CreateAH(av); err != nil {
			t.Fatalf("AH %d of max_ah %d: %v", i+1, a.MaxAH, err)
		}
	}
	_, err = p.CreateAH(av)
	if verbs.ErrnoOf(err) != verbs.EINVAL || !strings.Contains(err.Error(), "max_ah") {
		t.Errorf("AH %d = %v, want EINVAL naming max_ah", a.MaxAH+1, err)
	}
}

// BenchmarkDestroyCQs destroys 100,000 and 200,000 CQs newest first (as
// vsh's exit does) and reports both times and their ratio: about 2 when
// teardown is linear, 4 when quadratic.
func BenchmarkDestroyCQs(b *testing.B) {
	destroy := func(n int) time.Duration {
		f, c := openCtx(b)
		defer f.Close()
		cqs := createCQs(b, c, n, nil)
		runtime.GC()
		t0 := time.Now()
		for i := len(cqs) - 1; i >= 0; i-- {
			if err := cqs[i].Destroy(); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(t0)
	}
	var t1, t2 time.Duration
	for b.Loop() {
		t1 += destroy(100_000)
		t2 += destroy(200_000)
	}
	b.ReportMetric(t1.Seconds()/float64(b.N), "s/100k-CQs")
	b.ReportMetric(t2.Seconds()/float64(b.N), "s/200k-CQs")
	b.ReportMetric(float64(t2)/float64(t1), "200k/100k")
}
