package verbstest

import "github.com/vsh-rdma/vsh/verbs"

// Scenario QP attribute values: the constants rc_pingpong and pyverbs' tests
// use (rdma-core libibverbs/examples/rc_pingpong.c pp_connect_ctx,
// tests/utils.py), so that every legal transition below succeeds on rxe.
const (
	qkey        = 0x11111111
	minRNRTimer = 12
	timeout     = 14
	retryCnt    = 7
	rnrRetry    = 7
)

// psnOf is the first PSN a scenario QP sends with: any 24-bit value works;
// deriving it from the QPN keeps the two ends of a pair different.
func psnOf(qpn uint32) uint32 { return (qpn*2654435761 + 0x1000) & 0xffffff }

// attrsFor returns a QPAttr with a valid value in every field, for moving
// a QP of type typ, now in cur, to state to, addressed at peer. Which fields
// count is said by the mask the caller passes with it.
func (e *Env) attrsFor(typ verbs.QPType, qpn, peer uint32, cur, to verbs.QPState, caps verbs.QPCap) verbs.QPAttr {
	access := verbs.AccessRemoteWrite
	if typ == verbs.QPTypeRC {
		access |= verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
	}
	av := e.AV()
	return verbs.QPAttr{
		State:            to,
		CurState:         cur,
		PathMTU:          verbs.MTU1024,
		PathMigState:     verbs.MigMigrated,
		QKey:             qkey,
		RQPSN:            psnOf(peer),
		SQPSN:            psnOf(qpn),
		DestQPN:          peer,
		AccessFlags:      access,
		Cap:              caps,
		AH:               av,
		AltAH:            av,
		PKeyIndex:        0,
		AltPKeyIndex:     0,
		EnSQDAsyncNotify: true,
		MaxRdAtomic:      1,
		MaxDestRdAtomic:  1,
		MinRNRTimer:      minRNRTimer,
		PortNum:          e.Port,
		Timeout:          timeout,
		RetryCnt:         retryCnt,
		RNRRetry:         rnrRetry,
		AltPortNum:       e.Port,
		AltTimeout:       timeout,
	}
}

// qpCaps returns the capabilities q was created with (as query reports them).
func (e *Env) qpCaps(q verbs.QP) verbs.QPCap {
	_, init, err := q.Query(verbs.AttrCap)
	if err != nil {
		e.Fatalf("ibv_query_qp(IBV_QP_CAP): %v", err)
	}
	return init.Cap
}

// State returns q's state as ibv_query_qp reports it.
func (e *Env) State(q verbs.QP) verbs.QPState {
	a, _, err := q.Query(verbs.AttrState)
	if err != nil {
		e.Fatalf("ibv_query_qp(IBV_QP_STATE) on QP %#x: %v", q.Num(), err)
	}
	return a.State
}

// step moves q from cur to next with exactly the attributes the kernel
// table requires, and fails the scenario if that does not work.
func (e *Env) step(q verbs.QP, peer uint32, cur, next verbs.QPState) {
	row, ok := lookupRow(cur, next)
	if !ok {
		e.Fatalf("suite bug: %v→%v is not in the table", cur, next)
	}
	col := typeCol(q.Type())
	attr := e.attrsFor(q.Type(), q.Num(), peer, cur, next, verbs.QPCap{})
	if err := q.Modify(&attr, aState|row.req[col]); err != nil {
		e.Fatalf("%v QP %#x %v→%v with %v: %v", q.Type(), q.Num(), cur, next, aState|row.req[col], err)
	}
	if next == verbs.QPSSQD {
		e.waitDrained(q)
	}
}

// pathTo is the way the suite walks a fresh QP from RESET to each state.
var pathTo = map[verbs.QPState][]verbs.QPState{
	verbs.QPSReset: nil,
	verbs.QPSInit:  {verbs.QPSInit},
	verbs.QPSRTR:   {verbs.QPSInit, verbs.QPSRTR},
	verbs.QPSRTS:   {verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS},
	verbs.QPSSQD:   {verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSSQD},
	verbs.QPSErr:   {verbs.QPSInit, verbs.QPSErr},
}

// Bring walks q, which must be in RESET, to state target, addressed at peer.
func (e *Env) Bring(q verbs.QP, peer uint32, target verbs.QPState) {
	cur := verbs.QPSReset
	for _, next := range pathTo[target] {
		e.step(q, peer, cur, next)
		cur = next
	}
	if got := e.State(q); got != target {
		e.Fatalf("after walking QP %#x to %v, ibv_query_qp says %v", q.Num(), target, got)
	}
}

// waitDrained waits until an SQD QP has drained its send queue: rxe refuses
// to leave SQD (except to ERR) while the requester is still draining
// (rxe_qp_chk_attr), and reports sq_draining meanwhile (rxe_qp_to_attr).
func (e *Env) waitDrained(q verbs.QP) {
	ok := e.Eventually(func() bool {
		a, _, err := q.Query(verbs.AttrState)
		return err == nil && !a.SQDraining
	})
	if !ok {
		e.Fatalf("QP %#x is still draining after %v", q.Num(), e.Opts.Wait)
	}
}

// Pair creates two QPs of type typ on the device and, for RC and UC, moves
// both to RTS addressed at each other, as two ends of rc_pingpong on one
// rxe device do; UD QPs go to RTS on their own.
func (e *Env) Pair(typ verbs.QPType) (a, b verbs.QP) {
	a, b = e.QP(typ), e.QP(typ)
	e.Bring(a, b.Num(), verbs.QPSRTS)
	e.Bring(b, a.Num(), verbs.QPSRTS)
	return a, b
}
