package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// RC attribute values of perftest's ctx_modify_qp_to_rtr and _to_rts.
const (
	minRNRTimer = 12   // MIN_RNR_TIMER
	qpTimeout   = 14   // DEF_QP_TIME
	retryCnt    = 7    // retry_cnt
	rnrRetry    = 7    // rnr_retry
	hopLimit    = 0xff // grh.hop_limit
	port        = 1
)

// Error is a sweep that stopped: which program and size, what happened, and
// what most likely went wrong.
type Error struct {
	Program string // ib_write_bw; empty while setting up
	Size    int
	Msg     string
	Hint    string
	Err     error // the verb's error, if a verb failed
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Program != "" {
		s = fmt.Sprintf("%s, %d bytes: %s", e.Program, e.Size, e.Msg)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the verb's error, or the context's on cancellation.
func (e *Error) Unwrap() error { return e.Err }

// side is one endpoint: perftest's pingpong_context on one device.
type side struct {
	name     string
	vctx     verbs.Context
	dev      verbs.DeviceAttr
	port     verbs.PortAttr
	gidIndex int
	gid      verbs.GID
	pd       verbs.PD
	mr       verbs.MR
	buf      []byte
	scq, rcq verbs.CQ
	qp       verbs.QP
	psn      uint32
	src, dst int // offsets in buf: what this side sends from, what the peer writes into
	wc       []verbs.WC
	swr      [1]verbs.SendWR
	ssge     [1]verbs.SGE
	rwr      [1]verbs.RecvWR
	rsge     [1]verbs.SGE
}

// runner is one sweep in progress.
type runner struct {
	ctx      context.Context
	cfg      Config
	a, b     *side
	clk      clock
	sizes    []int
	res      *Result
	program  string
	size     int
	done     int
	total    int
	restore  func()
	outReads int
}

// Run measures what cfg asks between A (device context a) and B (context
// b), which may be contexts of one device. It creates its own PD, MR, CQs
// and QP on each side and destroys them before it returns. On an error it
// returns what was measured so far with an *Error.
func Run(ctx context.Context, a, b verbs.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &Error{Msg: err.Error(), Hint: "see the sweep's options"}
	}
	cfg = cfg.withDefaults()
	r := &runner{ctx: ctx, cfg: cfg, sizes: Sizes(cfg.MinSize, cfg.MaxSize)}
	r.res = &Result{Config: cfg, A: a.Device().Name(), B: b.Device().Name()}
	r.res.Loopback = r.res.A == r.res.B
	r.total = len(cfg.Ops) * len(cfg.Tests) * len(r.sizes)
	if err := r.setClock(); err != nil {
		return nil, err
	}
	defer r.restore()
	r.a = &side{name: "A", vctx: a}
	r.b = &side{name: "B", vctx: b}
	err := r.setup()
	if err == nil {
		err = r.measure()
	}
	if cerr := r.teardown(); err == nil && cerr != nil {
		err = &Error{Msg: "cleaning up", Err: cerr}
	}
	return r.res, err
}

// setClock picks the clock and puts the fabric in the delivery mode it
// needs, to be restored at the end.
func (r *runner) setClock() error {
	r.restore = func() {}
	st := r.cfg.Fabric
	if st == nil {
		r.clk = newWallClock(r.cfg.Timeout)
		return nil
	}
	if rt, ok := st.(verbs.RealTimeClock); ok && rt.RealTime() && r.cfg.Clock == Virtual {
		return &Error{Msg: "virtual time is not available: this fabric's clock follows the wall clock (the simulator's UDP link)",
			Hint: "use the wall clock"}
	}
	if packets, _ := st.Pending(); packets > 0 && st.DeliveryMode() == verbs.DeliverStep {
		return &Error{Msg: fmt.Sprintf("the fabric holds %d packet%s in step delivery, which a sweep would deliver", packets, plural(packets)),
			Hint: "deliver them first (run), or drop the fabric back to automatic delivery (fabric auto)"}
	}
	mode := st.DeliveryMode()
	want := verbs.DeliverAuto
	if r.cfg.Clock == Virtual {
		want = verbs.DeliverStep
		r.clk = &virtualClock{st: st, limit: r.cfg.Timeout, idleSince: -1}
	} else {
		r.clk = newWallClock(r.cfg.Timeout)
	}
	if mode != want {
		st.SetDeliveryMode(want)
		r.restore = func() { st.SetDeliveryMode(mode) }
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// setup makes both sides' objects and connects the QPs as perftest does.
func (r *runner) setup() error {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 0x7377656570)) // "sweep"
	for _, s := range []*side{r.a, r.b} {
		s.psn = rng.Uint32() & 0xffffff
		if err := r.open(s); err != nil {
			return err
		}
	}
	a, b := r.a, r.b
	r.res.QPNA, r.res.QPNB = a.qp.Num(), b.qp.Num()
	active := min(a.port.ActiveMTU, b.port.ActiveMTU)
	r.res.ActiveMTU = active
	r.res.PathMTU = active
	if m := r.cfg.MTU; m != 0 && m < active {
		r.res.PathMTU = m
	}
	r.outReads = 1
	if r.cfg.HasOp(Read) {
		r.outReads = positiveMin(a.dev.MaxQPRdAtom, a.dev.MaxQPInitRdAtom, b.dev.MaxQPRdAtom, b.dev.MaxQPInitRdAtom)
	}
	r.res.OutReads = r.outReads
	if err := r.connect(a, b); err != nil {
		return err
	}
	return r.connect(b, a)
}

func positiveMin(v ...int) int {
	m := 0
	for _, x := range v {
		if x > 0 && (m == 0 || x < m) {
			m = x
		}
	}
	return max(m, 1)
}

// hintFor is hint where err is errno, the failure it is about; "" (the
// verb's own hint) otherwise.
func hintFor(err error, errno syscall.Errno, hint string) string {
	if errors.Is(err, errno) {
		return hint
	}
	return ""
}

func setupErr(s *side, msg string, err error, hint string) *Error {
	return &Error{Msg: fmt.Sprintf("%s (%s): %s", s.name, s.vctx.Device().Name(), msg), Err: err, Hint: hint}
}

// open makes one side's objects: perftest's ctx_init and the receives of
// its ctx_set_recv_wqes, with the QP in INIT.
func (r *runner) open(s *side) error {
	var err error
	if s.dev, err = s.vctx.QueryDevice(); err != nil {
		return setupErr(s, "ibv_query_device", err, "")
	}
	if s.port, err = s.vctx.QueryPort(port); err != nil {
		return setupErr(s, "ibv_query_port", err, "")
	}
	if s.port.State != verbs.PortActive {
		return setupErr(s, fmt.Sprintf("port %d is %s", port, s.port.State), nil, "a sweep needs an active port: bring the link up")
	}
	if uint64(r.cfg.MaxSize) > uint64(s.port.MaxMsgSz) && s.port.MaxMsgSz != 0 {
		return setupErr(s, fmt.Sprintf("%d bytes is more than the port's max_msg_sz %d", r.cfg.MaxSize, s.port.MaxMsgSz), nil,
			"lower the largest size")
	}
	if s.port.LinkLayer == verbs.LinkLayerEthernet {
		if err := pickGID(s); err != nil {
			return err
		}
	}
	if s.pd, err = s.vctx.AllocPD(); err != nil {
		return setupErr(s, "ibv_alloc_pd", err, "")
	}
	size := r.cfg.MaxSize
	s.src, s.dst = 0, size
	if s.mr, err = s.pd.AllocMR(2*size, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead); err != nil {
		return setupErr(s, fmt.Sprintf("ibv_reg_mr of %d bytes", 2*size), err, hintFor(err, verbs.ENOMEM, "a large max size needs locked memory: check ulimit -l"))
	}
	s.buf = s.mr.Bytes()
	if s.scq, err = s.vctx.CreateCQ(verbs.CQInitAttr{CQE: r.cfg.TxDepth}); err != nil {
		return setupErr(s, "ibv_create_cq (send)", err, hintFor(err, verbs.EINVAL, "tx_depth sizes the send CQ: give at most the device's max_cqe (query_device)"))
	}
	if s.rcq, err = s.vctx.CreateCQ(verbs.CQInitAttr{CQE: r.cfg.RxDepth}); err != nil {
		return setupErr(s, "ibv_create_cq (recv)", err, "")
	}
	s.qp, err = s.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: s.scq, RecvCQ: s.rcq,
		Cap: verbs.QPCap{MaxSendWR: r.cfg.TxDepth, MaxRecvWR: r.cfg.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return setupErr(s, "ibv_create_qp", err, hintFor(err, verbs.EINVAL, "tx_depth sizes the send queue: give at most the device's max_qp_wr (query_device)"))
	}
	init := verbs.QPAttr{State: verbs.QPSInit, PKeyIndex: 0, PortNum: port,
		AccessFlags: verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessLocalWrite}
	if err := s.qp.Modify(&init, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags); err != nil {
		return setupErr(s, "ibv_modify_qp to INIT", err, "")
	}
	s.wc = make([]verbs.WC, min(max(r.cfg.TxDepth, r.cfg.RxDepth), 64))
	s.rsge[0] = verbs.SGE{Addr: s.mr.Addr() + uint64(s.dst), Length: uint32(r.cfg.MaxSize), LKey: s.mr.LKey()}
	s.rwr[0] = verbs.RecvWR{SGList: s.rsge[:]}
	for i := 0; i < r.cfg.RxDepth; i++ {
		if err := s.postRecv(); err != nil {
			return setupErr(s, "ibv_post_recv", err, "")
		}
	}
	return nil
}

// pickGID finds the source GID as perftest does on RoCE: the first RoCE v2
// GID with an IPv4 address, else the first RoCE v2 GID, else the first.
func pickGID(s *side) error {
	best, rank := -1, 0
	for i := 0; i < s.port.GIDTblLen && i < 256; i++ {
		g, err := s.vctx.QueryGID(port, i)
		if err != nil || g.IsZero() {
			continue
		}
		t, err := s.vctx.QueryGIDType(port, i)
		if err != nil {
			continue
		}
		_, v4 := g.IPv4()
		rk := 1
		if t == verbs.GIDTypeRoCEv2 {
			rk = 2
			if v4 {
				rk = 3
			}
		}
		if rk > rank {
			best, rank, s.gid = i, rk, g
		}
	}
	if best < 0 {
		return setupErr(s, "no GID on port 1", nil, "RoCE needs a GID: give the netdev an IP address")
	}
	s.gidIndex = best
	return nil
}

// connect takes s to RTR and RTS toward peer (ctx_modify_qp_to_rtr and
// ctx_modify_qp_to_rts).
func (r *runner) connect(s, peer *side) error {
	av := verbs.AHAttr{DLID: peer.port.LID, PortNum: port}
	if s.port.LinkLayer == verbs.LinkLayerEthernet {
		av.IsGlobal = true
		av.GRH = verbs.GlobalRoute{DGID: peer.gid, SGIDIndex: uint8(s.gidIndex), HopLimit: hopLimit}
	}
	rtr := verbs.QPAttr{State: verbs.QPSRTR, PathMTU: r.res.PathMTU, DestQPN: peer.qp.Num(), RQPSN: peer.psn, AH: av,
		MaxDestRdAtomic: uint8(r.outReads), MinRNRTimer: minRNRTimer}
	if err := s.qp.Modify(&rtr, verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|
		verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer); err != nil {
		return setupErr(s, "ibv_modify_qp to RTR", err, "")
	}
	rts := verbs.QPAttr{State: verbs.QPSRTS, SQPSN: s.psn, Timeout: qpTimeout, RetryCnt: retryCnt, RNRRetry: rnrRetry,
		MaxRdAtomic: uint8(r.outReads)}
	if err := s.qp.Modify(&rts, verbs.AttrState|verbs.AttrSQPSN|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|
		verbs.AttrMaxQPRdAtomic); err != nil {
		return setupErr(s, "ibv_modify_qp to RTS", err, "")
	}
	return nil
}

// teardown destroys both sides' objects, in the reverse order of creation.
func (r *runner) teardown() error {
	var errs []error
	for _, s := range []*side{r.a, r.b} {
		if s == nil {
			continue
		}
		if s.qp != nil {
			errs = append(errs, s.qp.Destroy())
		}
		if s.rcq != nil {
			errs = append(errs, s.rcq.Destroy())
		}
		if s.scq != nil {
			errs = append(errs, s.scq.Destroy())
		}
		if s.mr != nil {
			errs = append(errs, s.mr.Dereg())
		}
		if s.pd != nil {
			errs = append(errs, s.pd.Dealloc())
		}
	}
	return errors.Join(errs...)
}

// measure runs every series.
func (r *runner) measure() error {
	for _, op := range r.cfg.Ops {
		for _, t := range r.cfg.Tests {
			r.res.Series = append(r.res.Series, Series{Op: op, Test: t})
			sr := &r.res.Series[len(r.res.Series)-1]
			for _, size := range r.sizes {
				r.program, r.size = Program(op, t), size
				if err := r.ctx.Err(); err != nil {
					return r.fail("interrupted", err, "")
				}
				var p Point
				var err error
				if t == BW {
					p, err = r.bandwidth(op, size)
				} else {
					p, err = r.latency(op, size)
				}
				if err != nil {
					return err
				}
				sr.Points = append(sr.Points, p)
				r.done++
				if r.cfg.Progress != nil {
					r.cfg.Progress(Progress{Op: op, Test: t, Point: p, Done: r.done, Total: r.total, Series: len(r.res.Series) - 1})
				}
			}
		}
	}
	return nil
}

// fail is an error of the running program.
func (r *runner) fail(msg string, err error, hint string) *Error {
	return &Error{Program: r.program, Size: r.size, Msg: msg, Err: err, Hint: hint}
}

// tester is the loop of one program at one size, both sides of it: advance
// does all it can without waiting and says whether anything happened.
type tester interface {
	advance() (progress, done bool, err error)
	// waiting says what the loop waits for, for a stall.
	waiting() string
}

// drive runs a tester until it is done, moving the clock whenever it can do
// nothing.
func (r *runner) drive(t tester) error {
	for i := 0; ; i++ {
		progress, done, err := t.advance()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if i&255 == 255 {
			if err := r.ctx.Err(); err != nil {
				return r.fail("interrupted", err, "")
			}
		}
		if progress {
			r.clk.progressed()
			continue
		}
		if err := r.clk.idle(); err != nil {
			return r.fail(t.waiting()+", but "+err.Error(), nil, stallHint)
		}
	}
}

const stallHint = "packets are being lost: a fault rule (fault list), a link that is down, or a path MTU the link cannot carry; " +
	"with perftest's retry_cnt 7 rxe never gives up (it takes 7 as retry forever, rxe_comp.c), so a lost packet is resent at every timeout"

// post posts one work request of op from s to peer.
func (s *side) post(op Op, size int, wrid uint64, signaled bool, peer *side) error {
	wr := &s.swr[0]
	wr.WRID, wr.Opcode, wr.Flags = wrid, op.opcode(), 0
	if signaled {
		wr.Flags = verbs.SendSignaled
	}
	local, remote := s.src, peer.dst
	if op == Read {
		local, remote = s.dst, peer.src
	}
	s.ssge[0] = verbs.SGE{Addr: s.mr.Addr() + uint64(local), Length: uint32(size), LKey: s.mr.LKey()}
	wr.SGList = s.ssge[:]
	if op != Send {
		wr.RemoteAddr, wr.RKey = peer.mr.Addr()+uint64(remote), peer.mr.RKey()
	}
	_, err := s.qp.PostSend(s.swr[:])
	return err
}

func (s *side) postRecv() error {
	_, err := s.qp.PostRecv(s.rwr[:])
	return err
}

// poll polls cq for up to n completions and checks their status.
func (r *runner) poll(s *side, cq verbs.CQ, n int, what string) ([]verbs.WC, error) {
	got, err := cq.Poll(s.wc[:min(n, len(s.wc))])
	if err != nil {
		return nil, r.fail(fmt.Sprintf("ibv_poll_cq on %s's %s CQ", s.name, what), err, "")
	}
	for _, wc := range s.wc[:got] {
		if wc.Status != verbs.WCSuccess {
			return nil, r.fail(fmt.Sprintf("%s's %s completion wr_id %d: %s (%s)", s.name, what, wc.WRID, wc.Status, wc.Status.Str()),
				nil, statusHint(wc.Status))
		}
	}
	return s.wc[:got], nil
}

func statusHint(st verbs.WCStatus) string {
	switch st {
	case verbs.WCRetryExcErr:
		return "packets were lost until retry_cnt (7) ran out: a fault rule, a link that is down, or a path MTU the link cannot carry"
	case verbs.WCRNRRetryExcErr:
		return "the receiver had no receive posted"
	case verbs.WCWRFlushErr:
		return "the QP went to the error state before this work request ran; the first error completion says why"
	}
	return "explain " + st.Short() + " says what the status means"
}

func (r *runner) postErr(s *side, op Op, err error) *Error {
	return r.fail(fmt.Sprintf("ibv_post_send (%s) on %s", op.opcode(), s.name), err, "")
}

// ---------------------------------------------------------------- bandwidth

// bwTest is perftest's run_iter_bw on A, with run_iter_bw_server's
// receives on B for SEND: tx_depth work requests outstanding, one in cq_mod
// signaled, the time from the first post to the last completion.
type bwTest struct {
	r          *runner
	op         Op
	size       int
	iters      int
	scnt, ccnt int
	rcnt       int
	t0, t1     time.Duration
}

func (r *runner) bandwidth(op Op, size int) (Point, error) {
	t := &bwTest{r: r, op: op, size: size, iters: r.cfg.Iters}
	if err := r.drive(t); err != nil {
		return Point{}, err
	}
	return Point{Size: size, Iters: t.iters, Elapsed: t.t1 - t.t0}, nil
}

func (t *bwTest) advance() (bool, bool, error) {
	r, a, b := t.r, t.r.a, t.r.b
	progress := false
	for t.scnt < t.iters && t.scnt < t.ccnt+r.cfg.TxDepth {
		if t.scnt == 0 {
			t.t0 = r.clk.now()
		}
		signaled := t.scnt%r.cfg.CQMod == r.cfg.CQMod-1 || t.scnt == t.iters-1
		if err := a.post(t.op, t.size, uint64(t.scnt), signaled, b); err != nil {
			return false, false, r.postErr(a, t.op, err)
		}
		t.scnt++
		progress = true
	}
	wcs, err := r.poll(a, a.scq, len(a.wc), "send")
	if err != nil {
		return false, false, err
	}
	for _, wc := range wcs {
		t.ccnt = int(wc.WRID) + 1 // a signaled completion retires the unsignaled ones before it
		t.t1 = r.clk.now()
		progress = true
	}
	if t.op == Send {
		wcs, err := r.poll(b, b.rcq, len(b.wc), "receive")
		if err != nil {
			return false, false, err
		}
		for range wcs {
			t.rcnt++
			if err := b.postRecv(); err != nil {
				return false, false, r.fail("ibv_post_recv on B", err, "")
			}
			progress = true
		}
	}
	done := t.ccnt == t.iters && (t.op != Send || t.rcnt == t.iters)
	return progress, done, nil
}

func (t *bwTest) waiting() string {
	if t.ccnt < t.scnt {
		return fmt.Sprintf("A waits for the completion of wr_id %d (%d of %d messages completed)", t.nextSignaled(), t.ccnt, t.iters)
	}
	return fmt.Sprintf("B waits for receive completions (%d of %d)", t.rcnt, t.iters)
}

func (t *bwTest) nextSignaled() int {
	m := t.r.cfg.CQMod
	n := (t.ccnt/m+1)*m - 1
	return min(n, t.iters-1)
}

// ---------------------------------------------------------------- latency

// latSide is one side of a latency program.
type latSide struct {
	s, peer          *side
	first            bool // posts before it waits (A)
	scnt, ccnt, rcnt int
	phase            int
	posted           []time.Duration // A's post times
}

func (r *runner) latency(op Op, size int) (Point, error) {
	n := r.cfg.LatIters
	a := &latSide{s: r.a, peer: r.b, first: true, posted: make([]time.Duration, 0, n)}
	b := &latSide{s: r.b, peer: r.a}
	// The last byte of each buffer is the ping-pong's counter: clear it.
	for _, s := range []*side{r.a, r.b} {
		s.buf[s.src+size-1], s.buf[s.dst+size-1] = 0, 0
	}
	var t tester
	switch op {
	case Write:
		t = &pairLat{r: r, size: size, n: n, a: a, b: b, side: writeSide, done: (*latSide).done, what: "the peer's write"}
	case Send:
		t = &pairLat{r: r, size: size, n: n, a: a, b: b, side: sendSide, done: (*latSide).sendDone, what: "receive"}
	default:
		t = &readLat{r: r, size: size, n: n, a: a}
	}
	if err := r.drive(t); err != nil {
		return Point{}, err
	}
	return latPoint(size, n, a.posted, op), nil
}

// latPoint computes perftest's print_report_lat figures from the post
// times: n-1 round trips, sorted, the two largest dropped; SEND and WRITE
// report half a round trip.
func latPoint(size, n int, posted []time.Duration, op Op) Point {
	p := Point{Size: size, Iters: n}
	if len(posted) < 2 {
		return p
	}
	delta := make([]time.Duration, len(posted)-1)
	for i := range delta {
		delta[i] = posted[i+1] - posted[i]
	}
	slices.Sort(delta)
	factor := 2.0
	if op == Read {
		factor = 1
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / factor }
	cnt := max(len(delta)-latTail, 1)
	var median time.Duration
	if (cnt-1)%2 != 0 {
		median = (delta[cnt/2] + delta[cnt/2-1]) / 2
	} else {
		median = delta[cnt/2]
	}
	var sum float64
	for _, d := range delta[:cnt] {
		sum += us(d)
	}
	p.TMin = us(delta[0])
	p.TMax = us(delta[min(cnt, len(delta)-1)])
	p.TTypical = us(median)
	p.TAvg = sum / float64(cnt)
	p.T99 = us(delta[min(ceilDiv(cnt*99, 100), len(delta)-1)])
	return p
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// pairLat is a latency program that runs on both sides, A first: side
// advances one side's loop as far as it can go without waiting.
type pairLat struct {
	r    *runner
	size int
	n    int
	a, b *latSide
	side func(t *pairLat, p *latSide) (bool, error)
	done func(p *latSide, n int) bool
	what string // what a side waits for
}

func (t *pairLat) advance() (bool, bool, error) {
	pa, err := t.side(t, t.a)
	if err != nil {
		return false, false, err
	}
	pb, err := t.side(t, t.b)
	if err != nil {
		return false, false, err
	}
	return pa || pb, t.done(t.a, t.n) && t.done(t.b, t.n), nil
}

func (t *pairLat) waiting() string {
	for _, p := range []*latSide{t.a, t.b} {
		if !t.done(p, t.n) {
			if p.phase == 2 {
				return fmt.Sprintf("%s waits for the completion of its message %d of %d", p.s.name, p.scnt, t.n)
			}
			return fmt.Sprintf("%s waits for %s %d of %d", p.s.name, t.what, p.rcnt+1, t.n)
		}
	}
	return "nothing"
}

func (p *latSide) done(n int) bool { return p.scnt >= n && p.ccnt >= n && p.rcnt >= n }

// writeSide is perftest's run_iter_lat_write on one side: write the
// counter into the last byte of the peer's buffer, wait for the completion,
// spin until the peer's write changes the last byte of ours.
func writeSide(t *pairLat, p *latSide) (bool, error) {
	r, s, n := t.r, p.s, t.n
	progress := false
	for !p.done(n) {
		switch p.phase {
		case 0: // wait for the peer's write
			if p.rcnt < n && !(p.scnt < 1 && p.first) {
				if s.buf[s.dst+t.size-1] != byte(p.rcnt+1) {
					return progress, nil
				}
				p.rcnt++
				progress = true
			}
			p.phase = 1
		case 1: // write ours
			if p.scnt < n {
				if p.posted != nil {
					p.posted = append(p.posted, r.clk.now())
				}
				p.scnt++
				s.buf[s.src+t.size-1] = byte(p.scnt)
				if err := s.post(Write, t.size, uint64(p.scnt), true, p.peer); err != nil {
					return progress, r.postErr(s, Write, err)
				}
				progress = true
			}
			p.phase = 2
		case 2: // its completion
			if p.ccnt < n {
				wcs, err := r.poll(s, s.scq, 1, "send")
				if err != nil {
					return progress, err
				}
				if len(wcs) == 0 {
					return progress, nil
				}
				p.ccnt++
				progress = true
			}
			p.phase = 0
		}
	}
	return progress, nil
}

func (p *latSide) sendDone(n int) bool { return p.scnt >= n && p.rcnt >= n && p.phase != 2 }

// sendSide is perftest's run_iter_lat_send on one side: A sends first;
// each side waits for a receive completion (and posts the receive again),
// then sends, signaling one send in cq_mod and the last, and waits for that
// send's completion.
func sendSide(t *pairLat, p *latSide) (bool, error) {
	r, s, n := t.r, p.s, t.n
	progress := false
	for !p.sendDone(n) {
		switch p.phase {
		case 0: // a receive
			if p.rcnt < n && !(p.scnt < 1 && p.first) {
				wcs, err := r.poll(s, s.rcq, 1, "receive")
				if err != nil {
					return progress, err
				}
				if len(wcs) == 0 {
					return progress, nil
				}
				p.rcnt++
				if err := s.postRecv(); err != nil {
					return progress, r.fail("ibv_post_recv on "+s.name, err, "")
				}
				progress = true
			}
			p.phase = 1
		case 1: // a send
			p.phase = 0
			if p.scnt < n {
				if p.posted != nil {
					p.posted = append(p.posted, r.clk.now())
				}
				p.scnt++
				signaled := p.scnt%r.cfg.CQMod == 0 || p.scnt == n
				if err := s.post(Send, t.size, uint64(p.scnt), signaled, p.peer); err != nil {
					return progress, r.postErr(s, Send, err)
				}
				progress = true
				if signaled {
					p.phase = 2
				}
			}
		case 2: // the signaled send's completion
			wcs, err := r.poll(s, s.scq, 1, "send")
			if err != nil {
				return progress, err
			}
			if len(wcs) == 0 {
				return progress, nil
			}
			progress = true
			p.phase = 0
		}
	}
	return progress, nil
}

// readLat is perftest's run_iter_lat: A posts a READ and polls for its
// completion, n times; B's CPU does nothing.
type readLat struct {
	r    *runner
	size int
	n    int
	a    *latSide
}

func (t *readLat) advance() (bool, bool, error) {
	r, p := t.r, t.a
	s := p.s
	progress := false
	for p.ccnt < t.n {
		if p.phase == 0 {
			p.posted = append(p.posted, r.clk.now())
			p.scnt++
			if err := s.post(Read, t.size, uint64(p.scnt), true, p.peer); err != nil {
				return progress, false, r.postErr(s, Read, err)
			}
			progress = true
			p.phase = 2
		}
		wcs, err := r.poll(s, s.scq, 1, "send")
		if err != nil {
			return progress, false, err
		}
		if len(wcs) == 0 {
			return progress, false, nil
		}
		p.ccnt++
		p.phase = 0
		progress = true
	}
	return progress, true, nil
}

func (t *readLat) waiting() string {
	return fmt.Sprintf("A waits for the completion of READ %d of %d", t.a.scnt, t.n)
}

// ---------------------------------------------------------------- clocks

// clock is what a sweep measures time with and how it waits.
type clock interface {
	now() time.Duration
	// progressed says that the sides did something.
	progressed()
	// idle is called when the sides can do nothing: it moves the fabric,
	// or lets time pass, and fails when nothing can move any more.
	idle() error
}

// virtualClock drives a stepped fabric: one packet at a time, and when only
// timers are left, small advances of virtual time.
type virtualClock struct {
	st        verbs.Stepper
	limit     time.Duration
	idleSince time.Duration // -1 while things move
	steps     int
}

func (v *virtualClock) now() time.Duration { return v.st.Now() }

func (v *virtualClock) progressed() { v.idleSince, v.steps = -1, 0 }

// maxIdleSteps bounds the packets a fabric may deliver without either side
// seeing anything happen.
const maxIdleSteps = 1 << 24

func (v *virtualClock) idle() error {
	if _, ok := v.st.Step(); ok {
		if v.steps++; v.steps > maxIdleSteps {
			return fmt.Errorf("%d packets went by without a completion", maxIdleSteps)
		}
		return nil
	}
	packets, timers := v.st.Pending()
	if packets == 0 && timers == 0 {
		return fmt.Errorf("nothing is in flight any more")
	}
	now := v.st.Now()
	if v.idleSince < 0 {
		v.idleSince = now
	}
	waited := now - v.idleSince
	if waited > v.limit {
		return fmt.Errorf("for %v of virtual time only timers fired", v.limit)
	}
	if now >= verbs.MaxVirtualTime {
		return fmt.Errorf("virtual time has reached its end (%v), and only timers past it are left", verbs.MaxVirtualTime)
	}
	// Small steps, so that what a timer sets off is seen close to when it
	// happens: at most a thousandth of the time waited so far.
	v.st.Advance(max(time.Microsecond, waited/1000))
	return nil
}

// wallClock measures real time and spins.
type wallClock struct {
	start   time.Time
	last    time.Time // when the sides last did something, once idle
	moving  bool
	timeout time.Duration
	spins   int
}

func newWallClock(timeout time.Duration) *wallClock {
	now := time.Now()
	return &wallClock{start: now, last: now, timeout: timeout}
}

func (w *wallClock) now() time.Duration { return time.Since(w.start) }

func (w *wallClock) progressed() { w.moving = true }

func (w *wallClock) idle() error {
	if w.moving {
		w.moving, w.spins, w.last = false, 0, time.Now()
	}
	w.spins++
	if w.spins&1023 == 0 && time.Since(w.last) > w.timeout {
		return fmt.Errorf("nothing happened for %v", w.timeout)
	}
	return nil
}
