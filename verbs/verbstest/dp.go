package verbstest

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Helpers of the data-path scenarios (sc_data_*.go). A scenario builds a
// link — two QPs on the scenario's device, each with its own CQ, connected
// as rc_pingpong connects them — posts work requests, and checks every
// completion field and every byte against the suite's own reading of rxe.

// Access sets the scenarios register memory with.
const (
	accLocal = verbs.AccessLocalWrite
	accAll   = verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
)

// Attribute values of the pyverbs/rc_pingpong constants that scenarios
// change (rdma-core tests/utils.py; ibv_modify_qp(3)).
const (
	// shortTimeout is a local ACK timeout of 4.096 µs × 2^10 ≈ 4.2 ms
	// (rxe_qp.c rxe_qp_from_attr: nsecs_to_jiffies(4096 << timeout), at
	// least one jiffy), so that retry exhaustion takes milliseconds.
	shortTimeout = 10
	// udGRH is the room a UD receive buffer needs in front of the payload
	// for the network header (rxe_resp.c execute; ibv_post_recv(3), ud_pingpong.c).
	udGRH = 40
)

// link is two QPs on the scenario's device: a, the requester of the
// scenario's work requests, and b, its peer. Each has its own CQ for send
// and receive completions, so that a scenario can tell the sides apart.
type link struct {
	typ      verbs.QPType
	a, b     verbs.QP
	acq, bcq verbs.CQ
	apd, bpd verbs.PD
	ah       verbs.AH // UD: the address of the device itself (loopback)
}

// linkCfg customises a link; the zero value is DefaultCap, the default PD,
// a fresh 64-entry CQ per QP and pyverbs' attribute values.
type linkCfg struct {
	cap      verbs.QPCap // zero: DefaultCap
	aSigAll  bool        // sq_sig_all on a
	bSRQ     verbs.SRQ   // b receives from this SRQ
	bPD      verbs.PD    // b's protection domain (default: the scenario's PD)
	aCQ, bCQ verbs.CQ    // each QP's send and receive CQ (default: a new one each)
	// aAttr and bAttr adjust the attributes each QP is walked to RTS with
	// (retry counts, timeouts, access flags, rd_atomic ...). Only the
	// attributes the kernel table requires for each step are passed, so a
	// change to any of them takes effect.
	aAttr, bAttr func(*verbs.QPAttr)
	// bState is the state b is left in: RTS unless set to RTR.
	bState verbs.QPState
}

// link builds and connects a link of type typ.
func (e *Env) link(typ verbs.QPType, c linkCfg) *link {
	l := &link{typ: typ, apd: e.PD(), bpd: c.bPD}
	if l.bpd == nil {
		l.bpd = e.PD()
	}
	caps := c.cap
	if caps == (verbs.QPCap{}) {
		caps = DefaultCap
	}
	l.acq, l.bcq = c.aCQ, c.bCQ
	if l.acq == nil {
		l.acq = e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 64})
	}
	if l.bcq == nil {
		l.bcq = e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 64})
	}
	l.a = e.NewQP(l.apd, verbs.QPInitAttr{Type: typ, SendCQ: l.acq, RecvCQ: l.acq, Cap: caps, SQSigAll: c.aSigAll})
	bcap := caps
	if c.bSRQ != nil {
		bcap.MaxRecvWR, bcap.MaxRecvSGE = 0, 0
	}
	l.b = e.NewQP(l.bpd, verbs.QPInitAttr{Type: typ, SendCQ: l.bcq, RecvCQ: l.bcq, SRQ: c.bSRQ, Cap: bcap})
	bState := verbs.QPSRTS
	if c.bState == verbs.QPSRTR {
		bState = verbs.QPSRTR
	}
	e.bringWith(l.a, l.b.Num(), verbs.QPSRTS, c.aAttr)
	e.bringWith(l.b, l.a.Num(), bState, c.bAttr)
	if typ == verbs.QPTypeUD {
		l.ah = e.AH(l.apd, e.AV())
	}
	return l
}

// bringWith walks q from RESET to target as Bring does, with the
// attributes adjusted by adj.
func (e *Env) bringWith(q verbs.QP, peer uint32, target verbs.QPState, adj func(*verbs.QPAttr)) {
	cur := verbs.QPSReset
	col := typeCol(q.Type())
	for _, next := range pathTo[target] {
		row, ok := lookupRow(cur, next)
		if !ok {
			e.Fatalf("suite bug: %v→%v is not in the table", cur, next)
		}
		attr := e.attrsFor(q.Type(), q.Num(), peer, cur, next, verbs.QPCap{})
		if adj != nil {
			adj(&attr)
		}
		if err := q.Modify(&attr, aState|row.req[col]); err != nil {
			e.Fatalf("%v QP %#x %v→%v with %v: %v", q.Type(), q.Num(), cur, next, aState|row.req[col], err)
		}
		cur = next
	}
}

// toState moves q to st with the state bit alone (→ERR, →RESET), which
// every current state allows (qp_state_table).
func (e *Env) toState(q verbs.QP, st verbs.QPState) {
	e.Must(q.Modify(&verbs.QPAttr{State: st}, aState), "ibv_modify_qp(QP %#x → %v)", q.Num(), st)
}

// sgeAt returns an SGE of n bytes at offset off of mr.
func sgeAt(mr verbs.MR, off, n int) verbs.SGE {
	return verbs.SGE{Addr: mr.Addr() + uint64(off), Length: uint32(n), LKey: mr.LKey()}
}

// pattern fills b with bytes that differ from position to position and from
// seed to seed, so that a misplaced or stale byte shows.
func pattern(b []byte, seed byte) []byte {
	for i := range b {
		b[i] = seed + byte(i*7) + byte(i>>8)
	}
	return b
}

// patterned returns n pattern bytes, for comparing.
func patterned(n int, seed byte) []byte { return pattern(make([]byte, n), seed) }

// expectBytes compares memory with what it should hold.
func (e *Env) expectBytes(got, want []byte, what string, args ...any) {
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	e.Errorf("%s: %d bytes differ from what was expected, the first at offset %d (got % x…, want % x…)",
		fmt.Sprintf(what, args...), countDiff(got, want), i, head(got[min(i, len(got)):]), head(want[min(i, len(want)):]))
}

func countDiff(a, b []byte) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

func head(b []byte) []byte { return b[:min(len(b), 8)] }

// zero reports whether b is all zeros.
func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// post posts send work requests on q and fails the scenario if any is refused.
func (e *Env) post(q verbs.QP, wrs ...verbs.SendWR) {
	n, err := q.PostSend(wrs)
	if err != nil || n != len(wrs) {
		e.Fatalf("ibv_post_send of %d WRs on QP %#x = %d, %v; want all posted", len(wrs), q.Num(), n, err)
	}
}

// recv posts one receive with the given SGEs on q.
func (e *Env) recv(q verbs.QP, wrid uint64, sges ...verbs.SGE) {
	_, err := q.PostRecv([]verbs.RecvWR{{WRID: wrid, SGList: sges}})
	e.Must(err, "ibv_post_recv(wr_id %d) on QP %#x", wrid, q.Num())
}

// udWR returns a UD work request on l addressed at b.
func (l *link) udWR(wrid uint64, op verbs.WROpcode, flags verbs.SendFlags, sges ...verbs.SGE) verbs.SendWR {
	return verbs.SendWR{WRID: wrid, Opcode: op, Flags: flags, SGList: sges, AH: l.ah, RemoteQPN: l.b.Num(), RemoteQKey: qkey}
}

// quiet is how long a scenario watches for something that must not
// happen (a completion, an event): a twentieth of Options.Wait, at least
// 20 ms — on rxe's loopback a completion follows its cause within
// microseconds; scenarios that wait for timers wait longer themselves.
// On the simulator, polling an empty CQ lets virtual time run on, so every
// timer that could matter fires within it.
func (e *Env) quiet() time.Duration { return max(e.Opts.Wait/20, 20*time.Millisecond) }

// waitWCs polls cq for n completions and ends the scenario if fewer come
// within Options.Wait.
func (e *Env) waitWCs(cq verbs.CQ, n int, what string, args ...any) []verbs.WC {
	wcs := e.PollN(cq, n)
	if len(wcs) != n {
		e.Fatalf("%s: %d completion(s) within %v; want %d; got %s", fmt.Sprintf(what, args...), len(wcs), e.Opts.Wait, n, fmtWCs(wcs))
	}
	return wcs
}

// expectNoWC polls cq for the quiet period and reports any completion.
func (e *Env) expectNoWC(cq verbs.CQ, what string, args ...any) {
	deadline := time.Now().Add(e.quiet())
	buf := make([]verbs.WC, 8)
	for {
		n, err := cq.Poll(buf)
		if err != nil {
			e.Fatalf("ibv_poll_cq: %v", err)
		}
		if n > 0 {
			e.Errorf("%s: unexpected completion(s) %s", fmt.Sprintf(what, args...), fmtWCs(buf[:n]))
			return
		}
		if time.Now().After(deadline) {
			return
		}
		if st, ok := e.P.(verbs.Stepper); ok && st.DeliveryMode() == verbs.DeliverStep {
			st.Run()
		}
		time.Sleep(time.Millisecond)
	}
}

// fmtWC prints a completion the way ibv_rc_pingpong's error lines name
// its fields.
func fmtWC(wc verbs.WC) string {
	return fmt.Sprintf("{wr_id %d %v opcode %v byte_len %d imm %#x qp_num %#x src_qp %#x wc_flags %v}",
		wc.WRID, wc.Status.Short(), wc.Opcode.Short(), wc.ByteLen, wc.Imm, wc.QPNum, wc.SrcQP, wc.Flags)
}

func fmtWCs(wcs []verbs.WC) string {
	s := make([]string, len(wcs))
	for i, wc := range wcs {
		s[i] = fmtWC(wc)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// expectWC compares a completion with the expected one. For a successful
// completion every field counts; for an error only wr_id, status and
// qp_num, the attributes ibv_poll_cq(3) says are valid then.
func (e *Env) expectWC(got, want verbs.WC, what string, args ...any) {
	var diffs []string
	add := func(field string, g, w any) {
		if g != w {
			diffs = append(diffs, fmt.Sprintf("%s %v (want %v)", field, g, w))
		}
	}
	add("wr_id", got.WRID, want.WRID)
	add("status", got.Status, want.Status)
	add("qp_num", fmt.Sprintf("%#x", got.QPNum), fmt.Sprintf("%#x", want.QPNum))
	if want.Status == verbs.WCSuccess && got.Status == verbs.WCSuccess {
		add("opcode", got.Opcode, want.Opcode)
		add("byte_len", got.ByteLen, want.ByteLen)
		add("imm_data", fmt.Sprintf("%#x", got.Imm), fmt.Sprintf("%#x", want.Imm))
		add("src_qp", fmt.Sprintf("%#x", got.SrcQP), fmt.Sprintf("%#x", want.SrcQP))
		add("wc_flags", got.Flags, want.Flags)
		add("pkey_index", got.PKeyIndex, want.PKeyIndex)
		add("slid", got.SLID, want.SLID)
		add("sl", got.SL, want.SL)
		add("dlid_path_bits", got.DLIDPathBits, want.DLIDPathBits)
		add("vendor_err", got.VendorErr, want.VendorErr)
	}
	if len(diffs) > 0 {
		e.Errorf("%s: completion %s: %s", fmt.Sprintf(what, args...), fmtWC(got), strings.Join(diffs, ", "))
	}
}

// expectStatuses checks that wcs are, in order, the completions of wrids
// with the given statuses on QP qpn; other fields are not compared.
func (e *Env) expectStatuses(wcs []verbs.WC, qpn uint32, wrids []uint64, st []verbs.WCStatus, what string) {
	if len(wcs) != len(wrids) {
		e.Errorf("%s: %d completions %s; want %d", what, len(wcs), fmtWCs(wcs), len(wrids))
		return
	}
	for i, wc := range wcs {
		want := wc // only wr_id, status and qp_num are compared here
		want.WRID, want.Status, want.QPNum = wrids[i], st[i], qpn
		e.expectWC(wc, want, "%s, completion %d", what, i+1)
	}
}

// expectState waits until q is in st (rxe changes a QP's state from its
// tasks, after the completion that caused it may already be visible).
func (e *Env) expectState(q verbs.QP, st verbs.QPState, what string) {
	var got verbs.QPState
	if !e.Eventually(func() bool { got = e.State(q); return got == st }) {
		e.Errorf("%s: QP %#x is in %v; want %v", what, q.Num(), got, st)
	}
}

// waitAsync waits for an async event of type typ on the scenario's context,
// acknowledging every event it reads; other events are logged.
func (e *Env) waitAsync(typ verbs.EventType, within time.Duration) (verbs.AsyncEvent, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ev, err := e.Ctx.GetAsyncEvent(10 * time.Millisecond)
		if err != nil {
			continue
		}
		e.Ctx.AckAsyncEvent(ev)
		if ev.Type == typ {
			return ev, true
		}
		e.Logf("other async event: %v", ev)
	}
	return verbs.AsyncEvent{}, false
}

// cqEvent waits up to within for a completion event on ch and acknowledges
// it (every event must be, or ibv_destroy_cq waits forever:
// ibv_ack_cq_events(3)). It returns the CQ the event names.
func (e *Env) cqEvent(ch verbs.CompChannel, within time.Duration) (verbs.CQ, bool) {
	deadline := time.Now().Add(within)
	for {
		cq, err := ch.GetEvent(10 * time.Millisecond)
		if err == nil {
			cq.AckEvents(1)
			return cq, true
		}
		if time.Now().After(deadline) {
			return nil, false
		}
	}
}

// expectCQEvent checks that ch delivers one event for cq.
func (e *Env) expectCQEvent(ch verbs.CompChannel, cq verbs.CQ, what string) {
	got, ok := e.cqEvent(ch, e.Opts.Wait)
	switch {
	case !ok:
		e.Errorf("%s: no completion event within %v", what, e.Opts.Wait)
	case got != cq:
		e.Errorf("%s: the completion event names another CQ", what)
	}
}

// expectNoCQEvent checks that ch delivers no event for the quiet period.
func (e *Env) expectNoCQEvent(ch verbs.CompChannel, what string) {
	if _, ok := e.cqEvent(ch, e.quiet()); ok {
		e.Errorf("%s: a completion event arrived; want none", what)
	}
}

// stepper returns the provider's Stepper when it has one.
func (e *Env) stepper() (verbs.Stepper, bool) {
	st, ok := e.P.(verbs.Stepper)
	return st, ok
}

// withHeldFabric runs f with a Stepper's fabric held (single-step mode),
// then lets it run again; without a Stepper it just runs f. Scenarios use
// it where the simulator's automatic delivery would finish an operation
// inside the verb that posts it, which real hardware never promises.
func (e *Env) withHeldFabric(f func()) {
	st, ok := e.stepper()
	if !ok {
		f()
		return
	}
	mode := st.DeliveryMode()
	st.SetDeliveryMode(verbs.DeliverStep)
	f()
	st.SetDeliveryMode(mode)
}
