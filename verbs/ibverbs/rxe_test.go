//go:build linux && cgo && ibverbs

package ibverbs

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// What the backend does beyond the conformance suite, on rxe0 (VSH_RXE=1):
// the guards against libibverbs' hangs, the teardown on Close, the
// allocation-free data path, and explanations that name the cause.

type rxeEnv struct {
	t   *testing.T
	p   verbs.Provider
	ctx verbs.Context
	pd  verbs.PD
	cq  verbs.CQ
	gid verbs.GID
}

func newRXE(t *testing.T) *rxeEnv {
	p := needRXE(t)
	e := &rxeEnv{t: t, p: p}
	t.Cleanup(func() { p.Close() })
	devs, _ := p.Devices()
	for _, d := range devs {
		if d.Name() == rxeDevice() {
			ctx, err := d.Open()
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			e.ctx = ctx
		}
	}
	t.Cleanup(func() { e.ctx.Close() })
	var err error
	if e.gid, err = e.ctx.QueryGID(1, 1); err != nil || e.gid.IsZero() {
		t.Fatalf("QueryGID(1, 1) = %v, %v; want the lab's IPv4-mapped GID", e.gid, err)
	}
	if e.pd, err = e.ctx.AllocPD(); err != nil {
		t.Fatal(err)
	}
	if e.cq, err = e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 64}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *rxeEnv) must(err error, what string) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// rcPair connects two RC QPs on the device, as rc_pingpong does.
func (e *rxeEnv) rcPair(cq verbs.CQ) (a, b verbs.QP) {
	mk := func() verbs.QP {
		q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
		e.must(err, "CreateQP")
		return q
	}
	a, b = mk(), mk()
	for _, x := range []struct{ q, peer verbs.QP }{{a, b}, {b, a}} {
		e.must(x.q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: verbs.AccessRemote | verbs.AccessLocalWrite},
			verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags), "INIT")
		e.must(x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTR, PathMTU: verbs.MTU1024, DestQPN: x.peer.Num(), RQPSN: 0, MaxDestRdAtomic: 1,
			MinRNRTimer: 12, AH: verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: e.gid, SGIDIndex: 1, HopLimit: 1}}},
			verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer), "RTR")
		e.must(x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: 0, MaxRdAtomic: 1},
			verbs.AttrState|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|verbs.AttrSQPSN|verbs.AttrMaxQPRdAtomic), "RTS")
	}
	return a, b
}

func pollN(t *testing.T, cq verbs.CQ, n int) []verbs.WC {
	t.Helper()
	var out []verbs.WC
	buf := make([]verbs.WC, n)
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		k, err := cq.Poll(buf[:n-len(out)])
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		out = append(out, buf[:k]...)
	}
	if len(out) < n {
		t.Fatalf("got %d completions; want %d", len(out), n)
	}
	return out
}

// TestRXEUnackedEventsGuard: a CQ (or QP) whose events were not
// acknowledged is not destroyed — libibverbs would wait forever — and is
// once they are.
func TestRXEUnackedEventsGuard(t *testing.T) {
	e := newRXE(t)
	ch, err := e.ctx.CreateCompChannel()
	e.must(err, "CreateCompChannel")
	cq, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 16, Channel: ch})
	e.must(err, "CreateCQ")
	a, b := e.rcPair(cq)
	mr, err := e.pd.AllocMR(4096, verbs.AccessLocalWrite)
	e.must(err, "AllocMR")
	e.must(cq.ReqNotify(false), "ReqNotify")
	_, err = b.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}})
	e.must(err, "PostRecv")
	_, err = a.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}})
	e.must(err, "PostSend")
	got, err := ch.GetEvent(5 * time.Second)
	e.must(err, "GetEvent")
	if got != cq {
		t.Fatalf("GetEvent returned %v; want the CQ", got)
	}
	pollN(t, cq, 2)
	e.must(a.Destroy(), "Destroy a")
	e.must(b.Destroy(), "Destroy b")
	err = cq.Destroy()
	if !errors.Is(err, syscall.EBUSY) || !strings.Contains(err.Error(), "not acknowledged") {
		t.Fatalf("Destroy with an unacknowledged event = %v; want EBUSY naming it", err)
	}
	cq.AckEvents(5) // more than were got: only the one is acknowledged
	e.must(cq.Destroy(), "Destroy after AckEvents")
	e.must(ch.Destroy(), "Destroy channel")
	_, err = ch.GetEvent(0)
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("GetEvent on a destroyed channel = %v; want EINVAL", err)
	}
}

// TestRXECloseTearsDown: Close with objects alive destroys them; they
// refuse afterwards instead of touching freed memory.
func TestRXECloseTearsDown(t *testing.T) {
	p := needRXE(t)
	defer p.Close()
	devs, _ := p.Devices()
	var ctx verbs.Context
	for _, d := range devs {
		if d.Name() == rxeDevice() {
			var err error
			if ctx, err = d.Open(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pd, _ := ctx.AllocPD()
	mr, _ := pd.AllocMR(4096, verbs.AccessLocalWrite)
	cq, _ := ctx.CreateCQ(verbs.CQInitAttr{CQE: 8})
	q, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatalf("Close with live objects = %v", err)
	}
	for i, err := range []error{mr.Dereg(), q.Destroy(), cq.Destroy(), pd.Dealloc(), ctx.Close()} {
		if err == nil {
			t.Errorf("call %d after Close succeeded", i)
		}
	}
	if b := mr.Bytes(); b != nil {
		t.Errorf("Bytes() after Close = %d bytes; want nil", len(b))
	}
	if m := Mispredictions(); m != 0 {
		t.Errorf("%d mispredictions: %v", m, MispredictionLog())
	}
}

// TestRXESteadyPathAllocs: once its buffers exist, posting and polling do
// not allocate in Go.
func TestRXESteadyPathAllocs(t *testing.T) {
	e := newRXE(t)
	a, b := e.rcPair(e.cq)
	mr, err := e.pd.AllocMR(4096, verbs.AccessLocalWrite)
	e.must(err, "AllocMR")
	sge := []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}
	recv := []verbs.RecvWR{{WRID: 1, SGList: sge}}
	send := []verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge}}
	wc := make([]verbs.WC, 4)
	round := func() {
		if _, err := b.PostRecv(recv); err != nil {
			t.Fatal(err)
		}
		if _, err := a.PostSend(send); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 2; {
			n, err := e.cq.Poll(wc)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
	round() // the buffers grow once
	if allocs := testing.AllocsPerRun(50, round); allocs != 0 {
		t.Errorf("a post/post/poll round allocates %v times; want 0", allocs)
	}
}

// TestRXEExplains: on the real device the errors carry the rules'
// explanation, and the rules agree with the kernel.
func TestRXEExplains(t *testing.T) {
	e := newRXE(t)
	before := Mispredictions()
	q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.cq, RecvCQ: e.cq, Cap: verbs.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1}})
	e.must(err, "CreateQP")
	for _, c := range []struct {
		name    string
		err     error
		errno   syscall.Errno
		mention string
	}{
		{"RESET→RTR", q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState), verbs.EINVAL, "IBV_QPS_INIT"},
		{"INIT without port", q.Modify(&verbs.QPAttr{State: verbs.QPSInit}, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrAccessFlags), verbs.EINVAL, "IBV_QP_PORT"},
		{"remote write MR", func() error { _, err := e.pd.AllocMR(4096, verbs.AccessRemoteWrite); return err }(), verbs.EINVAL, "LOCAL_WRITE"},
		{"cqe 0", func() error { _, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 0}); return err }(), verbs.EINVAL, "cqe 0"},
		{"sge 33", func() error {
			_, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: e.cq, RecvCQ: e.cq, Cap: verbs.QPCap{MaxSendSGE: 33}})
			return err
		}(), verbs.EINVAL, "max_send_sge 33"},
		{"send in RESET", func() error { _, err := q.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend}}); return err }(), verbs.EINVAL, "RESET"},
		{"recv in RESET", func() error { _, err := q.PostRecv([]verbs.RecvWR{{WRID: 1}}); return err }(), verbs.EINVAL, "RESET"},
		{"dealloc busy", e.pd.Dealloc(), verbs.EBUSY, "QP"},
	} {
		ve, ok := verbs.AsError(c.err)
		if !ok || ve.Errno != c.errno || !strings.Contains(ve.Why, c.mention) || strings.Contains(ve.Why, "misprediction") {
			t.Errorf("%s = %v; want %s mentioning %q", c.name, c.err, verbs.ErrnoName(c.errno), c.mention)
		}
	}
	if got := Mispredictions() - before; got != 0 {
		t.Errorf("%d mispredictions: %v", got, MispredictionLog())
	}
}

// TestRXESendBeforeRTSStaysQueued: rxe's provider queues a send in the SQ
// before the kernel refuses the doorbell of a QP not yet in RTS (bad_wr is
// not set), so the WR goes out after RTS with the next post — what the
// error's explanation says.
func TestRXESendBeforeRTSStaysQueued(t *testing.T) {
	e := newRXE(t)
	cq := e.cq
	mk := func() verbs.QP {
		q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
		e.must(err, "CreateQP")
		return q
	}
	a, b := mk(), mk()
	mr, err := e.pd.AllocMR(4096, verbs.AccessLocalWrite)
	e.must(err, "AllocMR")
	sge := []verbs.SGE{{Addr: mr.Addr(), Length: 8, LKey: mr.LKey()}}
	initAttr := &verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}
	initMask := verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	e.must(a.Modify(initAttr, initMask), "a INIT")
	n, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge}})
	if !errors.Is(err, syscall.EINVAL) || n != 1 || !strings.Contains(err.Error(), "stay there") {
		t.Fatalf("PostSend in INIT = %d, %v; want 1 (queued), EINVAL saying the WR stays queued", n, err)
	}
	e.must(b.Modify(initAttr, initMask), "b INIT")
	_, err = b.PostRecv([]verbs.RecvWR{{WRID: 10, SGList: sge}, {WRID: 11, SGList: sge}})
	e.must(err, "PostRecv")
	for _, x := range []struct{ q, peer verbs.QP }{{a, b}, {b, a}} {
		e.must(x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTR, PathMTU: verbs.MTU1024, DestQPN: x.peer.Num(), MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AH: verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: e.gid, SGIDIndex: 1, HopLimit: 1}}},
			verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer), "RTR")
		e.must(x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1},
			verbs.AttrState|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|verbs.AttrSQPSN|verbs.AttrMaxQPRdAtomic), "RTS")
	}
	_, err = a.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge}})
	e.must(err, "PostSend in RTS")
	wrids := map[uint64]bool{}
	for _, wc := range pollN(t, cq, 4) {
		if wc.Status != verbs.WCSuccess {
			t.Errorf("completion %+v", wc)
		}
		wrids[wc.WRID] = true
	}
	for _, id := range []uint64{1, 2, 10, 11} {
		if !wrids[id] {
			t.Errorf("no completion for wr_id %d (got %v)", id, wrids)
		}
	}
}
