package sim

import (
	"bufio"
	goctx "context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// BenchmarkUDPLinkVsBare measures the UDP link between two processes (this
// one and a peer, the test binary started again) against bare UDP between
// the same two processes, in interleaved rounds, and prints the medians
// and their ratios:
//
//   - latency: rc_pingpong's loop with 64-byte messages (pingpong rc -s 64:
//     a SEND each way, each with its ACK, four datagrams an iteration),
//     against a round trip of one 80-byte datagram each way (the size of
//     the SEND's datagram), blocking reads, as a plain Go program does it;
//   - throughput: a stream of 1 MiB RDMA WRITEs (path MTU 4096, eight
//     outstanding), against a stream of 4112-byte datagrams (the size of
//     the WRITE's middle packets), measured by the receiver.
//
// The work is the same whatever b.N is; UDPBENCH_ROUNDS sets the rounds
// (9: on a shared VM a median of five swung by a third between runs).
func BenchmarkUDPLinkVsBare(b *testing.B) {
	f, err := NewUDP(Config{Devices: 1}, "")
	if err != nil {
		b.Skipf("no UDP link here: %v", err)
	}
	defer f.Close()
	p := startBenchPeer(b)
	defer p.stop()
	rounds := 9
	if n, err := strconv.Atoi(os.Getenv("UDPBENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var bareRTT, linkIter, bareBW, linkBW []float64
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		bareRTT = append(bareRTT, p.bareRTT(b, 3000, 80))
		linkIter = append(linkIter, p.linkPingPong(b, f, 3000))
		bareBW = append(bareBW, p.bareStream(b, 8192, 4112))
		linkBW = append(linkBW, p.linkWrite(b, f, 32))
	}
	b.StopTimer()
	lat := median(linkIter) / median(bareRTT)
	bw := median(linkBW) / median(bareBW)
	b.ReportMetric(lat, "latency-x-bare")
	b.ReportMetric(bw, "throughput-x-bare")
	b.ReportMetric(0, "ns/op")
	b.Logf("UDP link vs bare UDP, two processes on loopback, %d interleaved rounds (median [min–max]):", rounds)
	b.Logf("  latency:    RC 64 B ping-pong %s µs/iter, bare 80 B round trip %s µs: ratio %.2f (target ≤ 2.5)",
		spread(linkIter), spread(bareRTT), lat)
	b.Logf("  throughput: RC 1 MiB WRITE stream %s Gbit/s, bare 4112 B stream %s Gbit/s: ratio %.2f (target ≥ 0.5)",
		spread(linkBW), spread(bareBW), bw)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func spread(v []float64) string {
	return fmt.Sprintf("%.1f [%.1f–%.1f]", median(v), slices.Min(v), slices.Max(v))
}

// benchPeerEnv starts TestUDPLinkBenchPeer as the other process.
const benchPeerEnv = "VSH_UDPBENCH_PEER"

// benchMsg is a line between the benchmark and its peer.
type benchMsg struct {
	Op    string
	N     int
	Size  int
	Port  uint16
	Dests []exchange.Dest
	QPN   uint32
	GID   verbs.GID
	RKey  uint32
	Addr  uint64
	Got   int
	Bytes int64
	Dur   time.Duration
	Err   string
}

type benchPeer struct {
	cmd *exec.Cmd
	in  *json.Encoder
	out *bufio.Scanner
}

func startBenchPeer(b *testing.B) *benchPeer {
	cmd := exec.Command(os.Args[0], "-test.run=^TestUDPLinkBenchPeer$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchPeerEnv+"=1")
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &benchPeer{cmd: cmd, in: json.NewEncoder(w), out: bufio.NewScanner(r)}
	p.out.Buffer(make([]byte, 1<<16), 1<<20)
	return p
}

func (p *benchPeer) stop() {
	p.in.Encode(benchMsg{Op: "quit"})
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func (p *benchPeer) send(b *testing.B, m benchMsg) {
	if err := p.in.Encode(m); err != nil {
		b.Fatal(err)
	}
}

// recv reads the peer's next line, skipping what is not one of its
// messages (the test framework's own lines).
func (p *benchPeer) recv(b *testing.B) benchMsg {
	for p.out.Scan() {
		var m benchMsg
		if json.Unmarshal(p.out.Bytes(), &m) == nil && m.Op != "" {
			if m.Err != "" {
				b.Fatalf("the peer: %s", m.Err)
			}
			return m
		}
	}
	b.Fatalf("the peer stopped: %v", p.out.Err())
	return benchMsg{}
}

// bareRTT: n round trips of a size-byte datagram; µs a round trip.
func (p *benchPeer) bareRTT(b *testing.B, n, size int) float64 {
	c := benchSocket(b)
	defer c.Close()
	p.send(b, benchMsg{Op: "echo", N: n})
	to := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), p.recv(b).Port)
	msg, buf := make([]byte, size), make([]byte, 1<<16)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := c.WriteToUDPAddrPort(msg, to); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	p.recv(b)
	return float64(d.Microseconds()) / float64(n)
}

// bareStream: count datagrams of size bytes back to back; Gbit/s as the
// peer received them.
func (p *benchPeer) bareStream(b *testing.B, count, size int) float64 {
	c := benchSocket(b)
	defer c.Close()
	p.send(b, benchMsg{Op: "sink", N: count})
	to := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), p.recv(b).Port)
	msg := make([]byte, size)
	for i := 0; i < count; i++ {
		if _, err := c.WriteToUDPAddrPort(msg, to); err != nil {
			b.Fatal(err)
		}
	}
	r := p.recv(b)
	return gbits(r.Bytes, r.Dur)
}

func gbits(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / d.Seconds() / 1e9
}

func benchSocket(b *testing.B) *net.UDPConn {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	_ = c.SetReadBuffer(udpRcvBuf)
	return c
}

// linkPingPong: pingpong rc -s 64 -n n, this process the client; µs an
// iteration, as the client reports it.
func (p *benchPeer) linkPingPong(b *testing.B, f *Fabric, n int) float64 {
	ctx := benchContext(b, f)
	defer ctx.Close()
	o := benchPingPongOptions(n)
	e, err := pingpong.NewEndpoint(ctx, o, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	p.send(b, benchMsg{Op: "pong", N: n, Dests: e.Local()})
	if err := e.Connect(p.recv(b).Dests); err != nil {
		b.Fatal(err)
	}
	st, err := e.Run(goctx.Background(), true, "")
	if err != nil {
		b.Fatal(err)
	}
	p.recv(b)
	return st.UsecPerIter()
}

func benchPingPongOptions(n int) pingpong.Options {
	o := pingpong.Defaults(pingpong.RC)
	o.Size, o.Iters, o.GIDIndex, o.Timeout = 64, n, 1, 30*time.Second
	return o
}

func benchContext(b testing.TB, f *Fabric) verbs.Context {
	ctx, err := openSim0(f)
	if err != nil {
		b.Fatal(err)
	}
	return ctx
}

// openSim0 opens f's device sim0.
func openSim0(f *Fabric) (verbs.Context, error) {
	d, err := f.Device(0)
	if err != nil {
		return nil, err
	}
	return d.Open()
}

// linkWrite: n RDMA WRITEs of 1 MiB to the peer's buffer, eight
// outstanding; Gbit/s from the first post to the last completion.
func (p *benchPeer) linkWrite(b *testing.B, f *Fabric, n int) float64 {
	const size, depth = 1 << 20, 8
	ctx := benchContext(b, f)
	defer ctx.Close()
	w, err := newWriteSide(ctx, size, depth)
	if err != nil {
		b.Fatal(err)
	}
	p.send(b, benchMsg{Op: "target", QPN: w.qp.Num(), GID: w.gid})
	t := p.recv(b)
	if err := w.connect(t.QPN, t.GID); err != nil {
		b.Fatal(err)
	}
	wr := []verbs.SendWR{{Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, RemoteAddr: t.Addr, RKey: t.RKey,
		SGList: []verbs.SGE{{Addr: w.mr.Addr(), Length: size, LKey: w.mr.LKey()}}}}
	wc := make([]verbs.WC, depth)
	posted, done := 0, 0
	deadline := time.Now().Add(60 * time.Second)
	start := time.Now()
	for done < n {
		for posted < n && posted-done < depth {
			if _, err := w.qp.PostSend(wr); err != nil {
				b.Fatal(err)
			}
			posted++
		}
		k, err := w.cq.Poll(wc)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range wc[:k] {
			if c.Status != verbs.WCSuccess {
				b.Fatalf("RDMA WRITE: %v", c.Status)
			}
		}
		done += k
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d RDMA WRITEs completed in 60 s", done, n)
		}
	}
	d := time.Since(start)
	p.send(b, benchMsg{Op: "done"})
	if r := p.recv(b); r.Got > 0 && os.Getenv("UDPBENCH_VERBOSE") != "" {
		b.Logf("the target's socket dropped %d datagrams so far", r.Got)
	}
	return gbits(int64(n)*size, d)
}

// writeSide is one side of the RDMA WRITE stream: an RC QP, its CQ and a
// buffer.
type writeSide struct {
	pd  verbs.PD
	cq  verbs.CQ
	qp  verbs.QP
	mr  verbs.MR
	gid verbs.GID
}

func newWriteSide(ctx verbs.Context, size, depth int) (*writeSide, error) {
	w := &writeSide{}
	var err error
	if w.pd, err = ctx.AllocPD(); err != nil {
		return nil, err
	}
	if w.cq, err = ctx.CreateCQ(verbs.CQInitAttr{CQE: 2 * depth}); err != nil {
		return nil, err
	}
	if w.mr, err = w.pd.AllocMR(size, verbs.AccessLocalWrite|verbs.AccessRemoteWrite); err != nil {
		return nil, err
	}
	if w.qp, err = w.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: w.cq, RecvCQ: w.cq,
		Cap: verbs.QPCap{MaxSendWR: depth, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return nil, err
	}
	if w.gid, err = ctx.QueryGID(1, 1); err != nil {
		return nil, err
	}
	return w, w.qp.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1,
		AccessFlags: verbs.AccessLocalWrite | verbs.AccessRemoteWrite}, initMask)
}

func (w *writeSide) connect(qpn uint32, gid verbs.GID) error {
	av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: gid, SGIDIndex: 1, HopLimit: 64}}
	if err := w.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: verbs.MTU4096, DestQPN: qpn, RQPSN: 0,
		MaxDestRdAtomic: 1, MinRNRTimer: 12}, rtrMask); err != nil {
		return err
	}
	return w.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: 0, MaxRdAtomic: 1}, rtsMask)
}

// TestUDPLinkBenchPeer is BenchmarkUDPLinkVsBare's other process: it
// answers the benchmark's requests, one JSON line each, on stdin and
// stdout.
func TestUDPLinkBenchPeer(t *testing.T) {
	if os.Getenv(benchPeerEnv) == "" {
		t.Skip("the other process of BenchmarkUDPLinkVsBare, which starts it")
	}
	f, err := NewUDP(Config{Devices: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20)
	out := json.NewEncoder(os.Stdout)
	reply := func(m benchMsg) {
		if err := out.Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	fail := func(err error) { reply(benchMsg{Op: "error", Err: err.Error()}) }
	for in.Scan() {
		var m benchMsg
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fail(err)
			continue
		}
		switch m.Op {
		case "quit":
			return
		case "echo", "sink":
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				fail(err)
				continue
			}
			_ = c.SetReadBuffer(udpRcvBuf)
			reply(benchMsg{Op: m.Op, Port: uint16(c.LocalAddr().(*net.UDPAddr).Port)})
			if m.Op == "echo" {
				err = benchEcho(c, m.N)
			} else {
				var r benchMsg
				r, err = benchSink(c, m.N)
				if err == nil {
					reply(r)
				}
			}
			c.Close()
			if err != nil {
				fail(err)
			} else if m.Op == "echo" {
				reply(benchMsg{Op: "echoed"})
			}
		case "pong":
			if err := benchPong(f, m, reply); err != nil {
				fail(err)
			}
		case "target":
			if err := benchTarget(f, m, in, reply); err != nil {
				fail(err)
			}
		default:
			fail(fmt.Errorf("unknown request %q", m.Op))
		}
	}
}

func benchEcho(c *net.UDPConn, n int) error {
	buf := make([]byte, 1<<16)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for i := 0; i < n; i++ {
		k, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return err
		}
		if _, err := c.WriteToUDPAddrPort(buf[:k], from); err != nil {
			return err
		}
	}
	return nil
}

// benchSink reads n datagrams, or what comes until 200 ms pass without
// one, and reports the bytes and the time from the first to the last.
func benchSink(c *net.UDPConn, n int) (benchMsg, error) {
	buf := make([]byte, 1<<16)
	var first, last time.Time
	r := benchMsg{Op: "sunk"}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for r.Got < n {
		k, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if r.Got > 0 {
				break // the rest was lost
			}
			return r, err
		}
		last = time.Now()
		if r.Got == 0 {
			first = last
		} else {
			r.Bytes += int64(k) // the first marks the start
		}
		r.Got++
		c.SetReadDeadline(last.Add(200 * time.Millisecond))
	}
	r.Dur = last.Sub(first)
	return r, nil
}

func benchPong(f *Fabric, m benchMsg, reply func(benchMsg)) error {
	ctx, err := openSim0(f)
	if err != nil {
		return err
	}
	defer ctx.Close()
	e, err := pingpong.NewEndpoint(ctx, benchPingPongOptions(m.N), nil)
	if err != nil {
		return err
	}
	defer e.Close()
	reply(benchMsg{Op: "pong", Dests: e.Local()})
	if err := e.Connect(m.Dests); err != nil {
		return err
	}
	if _, err := e.Run(goctx.Background(), false, ""); err != nil {
		return err
	}
	reply(benchMsg{Op: "ponged"})
	return nil
}

// benchTarget is the passive side of the WRITE stream: it connects and
// waits, its program idle, until the benchmark says done.
func benchTarget(f *Fabric, m benchMsg, in *bufio.Scanner, reply func(benchMsg)) error {
	ctx, err := openSim0(f)
	if err != nil {
		return err
	}
	defer ctx.Close()
	w, err := newWriteSide(ctx, 1<<20, 1)
	if err != nil {
		return err
	}
	if err := w.connect(m.QPN, m.GID); err != nil {
		return err
	}
	reply(benchMsg{Op: "target", QPN: w.qp.Num(), GID: w.gid, RKey: w.mr.RKey(), Addr: w.mr.Addr()})
	if !in.Scan() {
		return fmt.Errorf("no done: %v", in.Err())
	}
	st := f.UDPStats()
	reply(benchMsg{Op: "written", Got: int(st.QueueDrops)})
	return nil
}
