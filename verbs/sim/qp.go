package sim

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// qp is a queue pair (struct rxe_qp).
type qp struct {
	fabric   *Fabric // pd.ctx.dev.f, kept at hand for the data path
	pd       *pd
	dead     string
	qpn      uint32
	typ      verbs.QPType
	scq, rcq *cq
	srq      *srq
	userCtx  any
	sqSigAll bool
	port     uint8 // ib_qp->port
	// The small fields of the engines below share this word: the heap an
	// idle QP holds is a benchmarked figure (BenchmarkCreateQPs), and a
	// few padding bytes more put the QP in the next allocation class.
	sched   [numTasks]bool
	needSkb bool   // see inflight
	srcPort uint16 // qp->src_port: the UDP source port of every packet it sends
	inList

	attr          verbs.QPAttr  // qp->attr: what modify_qp stored
	cached        verbs.QPState // libibverbs' ibv_qp.state
	sq            sendQueue
	rq            recvQueue    // unused with an SRQ
	mcast         []mcastEntry // uverbs' mcast_list: (GID, LID) pairs attached
	ssn           uint32
	mtu           uint32 // qp->mtu: the path MTU in bytes
	eventsUnacked int

	// rxe's three engines and what drives them.
	req    reqEngine
	comp   compEngine
	resp   respEngine
	timers [numTimers]timer

	route *route // the AV as the data path uses it (RC, UC); nil until set
	// tmoJiffies is qp_timeout_jiffies; 0 means no retransmit timer.
	tmoJiffies uint64
	// inflight counts the QP's packets on the fabric; needSkb is set while
	// an engine waits for it to fall below inflightLow.
	inflight int
	// opens counts the handles of an XRC_RECV QP (xrc.go).
	opens int
}

var _ verbs.QP = (*qp)(nil)

func (q *qp) name() string { return fmt.Sprintf("QP %#x", q.qpn) }

func (q *qp) fab() *Fabric { return q.fabric }

func (q *qp) check(op string) error {
	if q.dead != "" {
		return deadErr(op, q.name(), q.dead)
	}
	return q.pd.ctx.check(op)
}

// createQP does verbs.PD's CreateQP (ibv_create_qp). The order of checks is the
// kernel's: the QP type (create_qp in uverbs_cmd.c, then rxe_qp_chk_init:
// only RC, UC, UD), the CQs, then the capabilities against the device's
// limits (rxe_qp_chk_cap). The queues are sized as rxe_qp_init_req and
// rxe_qp_init_resp size them, and the caps rxe returns are what Query
// reports: max_send_wr rounded to 2^k-1, max_send_sge and max_inline_data
// both derived from one WQE size of max(16*max_send_sge, max_inline_data).
func (p *pd) createQP(attr verbs.QPInitAttr) (verbs.QP, error) {
	return p.createQPAs("ibv_create_qp", attr)
}

// createQPAs is createQP for the verb op (ibv_create_qp, ibv_create_qp_ex).
func (p *pd) createQPAs(op string, attr verbs.QPInitAttr) (verbs.QP, error) {
	f := p.ctx.fab()
	if err := p.check(op); err != nil {
		return nil, err
	}
	r := p.ctx.dev.profile()
	if err := r.QPType(attr.Type).Err(); err != nil {
		return nil, err
	}
	var s *srq
	if attr.SRQ != nil {
		x, ok := attr.SRQ.(*srq)
		if !ok || x.pd.ctx != p.ctx {
			return nil, verbs.Errorf(op, verbs.EINVAL, "create the SRQ on the same device context",
				"the SRQ belongs to another device context")
		}
		if x.dead != "" {
			return nil, deadErr(op, "the SRQ", x.dead)
		}
		if x.typ == verbs.SRQTypeXRC && attr.Type != verbs.QPTypeXRCSend {
			return nil, verbs.Errorf(op, verbs.EINVAL, "give this QP a basic SRQ (create_srq), or none; senders reach an XRC SRQ through an XRC_RECV QP",
				"an XRC SRQ serves only the XRC_RECV QPs of its domain, which pick it by the number in each message; it cannot be a %s QP's srq (uverbs create_qp: srq_type IB_SRQT_XRC)", attr.Type.Short())
		}
		s = x
	}
	cqOf := func(c verbs.CQ, which string) (*cq, error) {
		if c == nil {
			return nil, verbs.Errorf(op, verbs.EINVAL, "create a CQ and pass it as "+which,
				"%s is missing; every QP needs a send CQ and a receive CQ (rxe_qp_chk_init)", which)
		}
		x, ok := c.(*cq)
		if !ok || x.ctx != p.ctx {
			return nil, verbs.Errorf(op, verbs.EINVAL, "create the CQ on the same device context",
				"%s belongs to another device context", which)
		}
		if x.dead != "" {
			return nil, deadErr(op, "the "+which, x.dead)
		}
		return x, nil
	}
	scq, err := cqOf(attr.SendCQ, "send_cq")
	if err != nil {
		return nil, err
	}
	var rcq *cq
	if attr.Type == verbs.QPTypeXRCSend {
		// create_qp (uverbs_cmd.c): an XRC_INI QP has no receive side; its
		// recv_cq, SRQ and receive caps are ignored.
		s = nil
		attr.Cap.MaxRecvWR, attr.Cap.MaxRecvSGE = 0, 0
	} else if rcq, err = cqOf(attr.RecvCQ, "recv_cq"); err != nil {
		return nil, err
	}
	if err := r.QPCap(attr.Cap, s != nil).Err(); err != nil {
		return nil, err
	}
	d := p.ctx.dev
	if err := d.poolFull(op, poolQP); err != nil {
		return nil, err
	}
	qpn, ok := d.allocQPN()
	if !ok {
		return nil, verbs.Errorf(op, verbs.ENOMEM, "destroy some QPs", "the device has no free QP number")
	}
	q := newQP(f, p, qpn, attr.Type)
	q.scq, q.rcq, q.srq, q.sqSigAll, q.userCtx = scq, rcq, s, attr.SQSigAll, attr.Context
	// rxe_qp_init_req: one WQE size serves both SGEs and inline data.
	wqe := attr.Cap.MaxSendSGE * rxeSGESize
	if attr.Cap.MaxInlineData > wqe {
		wqe = attr.Cap.MaxInlineData
	}
	q.sq.init(roundQueue(attr.Cap.MaxSendWR))
	q.sq.maxSGE = wqe / rxeSGESize
	q.sq.maxInline = wqe
	if s == nil {
		q.rq.init(roundQueue(attr.Cap.MaxRecvWR), attr.Cap.MaxRecvSGE)
	} else {
		s.usecnt++
	}
	scq.usecnt++
	if rcq != nil {
		rcq.usecnt++
	}
	d.setQP(qpn, q)
	d.poolAdd(poolQP)
	listAdd(&p.qps, q)
	return q, nil
}

// newQP is a QP in RESET as rxe_qp_init_misc leaves it.
func newQP(f *Fabric, p *pd, qpn uint32, t verbs.QPType) *qp {
	q := &qp{fabric: f, pd: p, qpn: qpn, typ: t}
	// rxe_qp_init_misc: path_mtu starts at IB_MTU_256.
	q.attr.PathMTU = verbs.MTU256
	q.mtu = 256
	q.srcPort = wire.SourcePort(qpn)
	q.req.opcode, q.comp.opcode, q.resp.opcode = -1, -1, -1
	q.resp.aethSyn = wire.SyndromeACK
	for k := range q.timers {
		q.timers[k] = timer{q: q, kind: uint8(k), hix: -1}
	}
	q.attr.State = verbs.QPSReset
	return q
}

func (q *qp) PD() verbs.PD       { return q.pd }
func (q *qp) Num() uint32        { return q.qpn }
func (q *qp) Type() verbs.QPType { return q.typ }

// modify does verbs.QP's Modify (ibv_modify_qp).
//
// The checks run as the kernel runs them, with the core's transition table
// first: ib_uverbs_modify_qp (mask bits beyond IBV_QP_DEST_QPN are
// EOPNOTSUPP; state values beyond ERR are EINVAL); the source GID of an
// address vector (rdma_get_gid_attr: an empty slot is ENODATA);
// ib_modify_qp_is_ok (verbs.CheckTransition, with the current state taken
// from IBV_QP_CUR_STATE when given, as rxe_qp_chk_attr does); the port and
// address vector (modify_qp, rdma_check_ah_attr: RoCE needs a GRH); the ban
// on alternate paths on RoCE (_ib_modify_qp); then rxe_qp_chk_attr (SQ
// still draining, path_mtu above the port's max_mtu, max_rd_atomic above
// the device's max_qp_rd_atom, timeout above 31). Nothing else is checked:
// PSNs are masked to 24 bits (_ib_modify_qp), retry counts and
// min_rnr_timer are stored as given, max_dest_rd_atomic is not bounded.
func (q *qp) modify(a *verbs.QPAttr, mask verbs.QPAttrMask) error {
	f := q.fab()
	const op = "ibv_modify_qp"
	if err := q.check(op); err != nil {
		return err
	}
	if a == nil {
		return verbs.Errorf(op, verbs.EINVAL, "pass the attributes", "attr is nil")
	}
	// modify_qp_mask (uverbs_cmd.c): the attributes of the half an XRC
	// QP lacks are dropped before anything checks the mask.
	switch q.typ {
	case verbs.QPTypeXRCSend:
		mask &^= verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	case verbs.QPTypeXRCRecv:
		mask &^= verbs.AttrMaxQPRdAtomic | verbs.AttrRetryCnt | verbs.AttrRNRRetry
	}
	d := q.pd.ctx.dev
	r := d.profile()
	facts := rules.QP{Type: q.typ, State: q.attr.State, Draining: q.req.state == engDrain, DrainKnown: true}
	if err := r.ModifyQPCommand(facts, a, mask).Err(); err != nil {
		return err
	}
	// modify_qp (uverbs_cmd.c): outside INIT→RTR, an IBV_QP_AV that comes
	// without IBV_QP_PORT brings IBV_QP_PORT with it, taken from the AV's
	// port (the SQD→SQD path-change case); the transition table then judges
	// the widened mask. The caller's attributes are not touched.
	implied := rules.ImpliesPort(a, mask)
	if implied {
		c := *a
		c.PortNum = a.AH.PortNum
		a = &c
		mask |= verbs.AttrPort
	}
	if mask&verbs.AttrAV != 0 && a.AH.IsGlobal && a.AH.PortNum == 1 && int(a.AH.GRH.SGIDIndex) < rxePortGIDTblLen {
		if err := r.AV(op, "ah_attr", &a.AH, "IBV_QP_AV").Err(); err != nil {
			return err // ENODATA: an empty GID slot
		}
		if q.connected() {
			// _ib_modify_qp resolves the destination of a connected QP
			// (ib_resolve_eth_dmac), which also sets the hop limit.
			c := *a
			if err := f.resolveAV(op, "ah_attr", d, &c.AH); err != nil {
				return err
			}
			a = &c
		}
	}
	v := r.ModifyQPTransition(facts, a, mask, implied)
	v.Add(r.ModifyQPPort(a, mask))
	if mask&verbs.AttrAV != 0 {
		v.Add(r.AV(op, "ah_attr", &a.AH, "IBV_QP_AV"))
	}
	v.Add(r.ModifyQPAltPath(a, mask))
	v.Add(r.ModifyQPAttr(facts, a, mask))
	if err := v.Err(); err != nil {
		return err
	}
	q.apply(a, mask)
	if mask&verbs.AttrState != 0 {
		q.cached = a.State // ibv_modify_qp updates ibv_qp.state
	}
	f.afterVerb()
	return nil
}

// apply is rxe_qp_from_attr.
func (q *qp) apply(a *verbs.QPAttr, mask verbs.QPAttrMask) {
	s := &q.attr
	if mask&verbs.AttrMaxQPRdAtomic != 0 {
		n := 0
		if a.MaxRdAtomic > 0 {
			n = roundPow2(int(a.MaxRdAtomic))
		}
		s.MaxRdAtomic = uint8(n)
		q.req.rdAtomic = n
	}
	if mask&verbs.AttrMaxDestRdAtomic != 0 {
		n := 0
		if a.MaxDestRdAtomic > 0 {
			n = roundPow2(int(a.MaxDestRdAtomic))
		}
		s.MaxDestRdAtomic = uint8(n)          // a u8 in struct ib_qp_attr: 256 wraps to 0, as in rxe
		q.resp.resources = make([]respRes, n) // free_rd_atomic_resources, alloc_rd_atomic_resources
		q.resp.resHead, q.resp.res = 0, nil
	}
	if mask&verbs.AttrCurState != 0 {
		s.CurState = a.State // rxe stores attr->qp_state here, not cur_qp_state
	}
	// IBV_QP_EN_SQD_ASYNC_NOTIFY is taken and not kept, as rxe does: a
	// query reads 0 (and SQ_DRAINED comes all the same).
	if mask&verbs.AttrAccessFlags != 0 {
		s.AccessFlags = a.AccessFlags
	}
	if mask&verbs.AttrPKeyIndex != 0 {
		s.PKeyIndex = a.PKeyIndex
	}
	if mask&verbs.AttrPort != 0 {
		s.PortNum = a.PortNum
		q.port = a.PortNum
	}
	if mask&verbs.AttrQKey != 0 {
		s.QKey = a.QKey
	}
	if mask&verbs.AttrAV != 0 {
		s.AH = a.AH
		rt := q.f().makeRoute(q.pd.ctx.dev, &s.AH)
		q.route = &rt
	}
	if mask&verbs.AttrPathMTU != 0 {
		s.PathMTU = a.PathMTU
		q.mtu = uint32(a.PathMTU.Bytes())
	}
	if mask&verbs.AttrTimeout != 0 {
		s.Timeout = a.Timeout
		q.setTimeout(a.Timeout)
	}
	if mask&verbs.AttrRetryCnt != 0 {
		s.RetryCnt = a.RetryCnt
		q.comp.retryCnt = int(a.RetryCnt)
	}
	if mask&verbs.AttrRNRRetry != 0 {
		s.RNRRetry = a.RNRRetry
		q.comp.rnrRetry = int(a.RNRRetry)
	}
	if mask&verbs.AttrRQPSN != 0 {
		s.RQPSN = a.RQPSN & psnMask
		q.resp.psn = s.RQPSN
	}
	if mask&verbs.AttrMinRNRTimer != 0 {
		s.MinRNRTimer = a.MinRNRTimer
	}
	if mask&verbs.AttrSQPSN != 0 {
		s.SQPSN = a.SQPSN & psnMask
		q.req.psn = s.SQPSN
		q.comp.psn = s.SQPSN
	}
	if mask&verbs.AttrPathMigState != 0 {
		s.PathMigState = a.PathMigState
	}
	if mask&verbs.AttrDestQPN != 0 {
		s.DestQPN = a.DestQPN
	}
	if mask&verbs.AttrState != 0 {
		s.State = a.State
		switch a.State {
		case verbs.QPSReset:
			q.reset()
		case verbs.QPSInit:
			q.req.state, q.resp.state, q.comp.state = engInit, engInit, engInit
		case verbs.QPSRTR:
			q.resp.state = engReady
		case verbs.QPSRTS:
			q.req.state, q.comp.state = engReady, engReady
		case verbs.QPSSQD:
			q.drain()
		case verbs.QPSErr:
			q.toError()
		}
	}
}

func (q *qp) f() *Fabric { return q.fabric }

// reset is rxe_qp_reset: the engines stop, the send queue and (without an
// SRQ) the receive queue are emptied without completions, packets queued
// for the QP are dropped, the sequence state is cleared. Attributes stay,
// and so do armed timers: rxe stops them only at destroy, and when they
// fire on a QP in RESET they find nothing to do.
func (q *qp) reset() {
	f := q.f()
	q.req.state, q.comp.state, q.resp.state = engReset, engReset, engReset
	// RESPST_RESET: rxe_drain_req_pkts, and the receive queue emptied.
	q.drainReqPkts()
	if q.srq == nil {
		q.rq.clear()
	}
	q.resp.wqe = nil
	// The completer in RESET: rxe_drain_resp_pkts without completions.
	q.drainRespPkts()
	for q.sq.head() != nil {
		q.sq.advance()
	}
	q.sq.cons, q.sq.prod = 0, 0 // rxe_queue_reset
	q.ssn = 0
	q.req = reqEngine{state: engReset, psn: q.req.psn, opcode: -1, rdAtomic: q.req.rdAtomic}
	q.comp.opcode = -1
	q.comp.timeout, q.comp.timeoutRetry, q.comp.startedRetry = false, false, false
	r := &q.resp
	r.msn, r.opcode = 0, -1
	r.dropMsg, r.gotoError, r.sentPSNNak = false, false, false
	r.mr, r.res, r.resHead = nil, nil, 0
	clear(r.resources) // cleanup_rd_atomic_resources
	q.sched = [numTasks]bool{}
	_ = f
}

// drain is rxe_qp_drain (SQD): the requester stops taking new WQEs and
// raises IBV_EVENT_SQ_DRAINED once the ones in progress are done.
func (q *qp) drain() {
	if q.req.state == engDrained {
		return
	}
	f := q.f()
	q.req.state = engDrain
	f.schedule(q, taskComp)
	f.schedule(q, taskReq)
}

// toError is rxe_qp_error: every engine goes to ERROR and the tasks run to
// flush the queues: the receive queue first, then the send queue.
func (q *qp) toError() {
	q.req.state, q.resp.state, q.comp.state = engError, engError, engError
	q.attr.State = verbs.QPSErr
	f := q.f()
	f.schedule(q, taskResp)
	f.schedule(q, taskComp)
	f.schedule(q, taskReq)
}

// drainReqPkts drops the packets queued for the responder.
func (q *qp) drainReqPkts() {
	for p := q.resp.pkts.pop(); p != nil; p = q.resp.pkts.pop() {
		q.f().net.pool.put(p)
	}
}

// drainRespPkts drops the packets queued for the completer.
func (q *qp) drainRespPkts() {
	for p := q.comp.pkts.pop(); p != nil; p = q.comp.pkts.pop() {
		q.f().net.pool.put(p)
	}
}

// query does verbs.QP's Query (ibv_query_qp, rxe_qp_to_attr and
// rxe_qp_to_init): stored attributes, the live PSNs, rxe's rounded caps and
// depths, and an address vector that always reads as global.
func (q *qp) query(mask verbs.QPAttrMask) (verbs.QPAttr, verbs.QPInitAttr, error) {
	if err := q.check("ibv_query_qp"); err != nil {
		return verbs.QPAttr{}, verbs.QPInitAttr{}, err
	}
	a := q.attr
	a.RQPSN = q.resp.psn
	a.SQPSN = q.req.psn
	a.Cap = verbs.QPCap{MaxSendWR: q.sq.maxWR, MaxSendSGE: q.sq.maxSGE, MaxInlineData: q.sq.maxInline}
	if q.srq == nil {
		a.Cap.MaxRecvWR, a.Cap.MaxRecvSGE = q.rq.maxWR, q.rq.maxSGE
	}
	// rxe_av_to_attr always sets IB_AH_GRH.
	a.AH = verbs.AHAttr{GRH: q.attr.AH.GRH, IsGlobal: true, PortNum: q.attr.AH.PortNum}
	a.AltAH = verbs.AHAttr{IsGlobal: true}
	a.SQDraining = q.req.state == engDrain
	if mask&verbs.AttrState != 0 {
		q.cached = a.State // ibv_query_qp refreshes ibv_qp.state
	}
	init := verbs.QPInitAttr{Type: q.typ, Cap: a.Cap, SQSigAll: q.sqSigAll, Context: q.userCtx}
	if q.scq != nil {
		init.SendCQ = q.scq
	}
	if q.rcq != nil {
		init.RecvCQ = q.rcq
	}
	if q.srq != nil && q.typ != verbs.QPTypeXRCRecv {
		init.SRQ = q.srq
	}
	return a, init, nil
}

// postSend does verbs.QP's PostSend (ibv_post_send), as rdma-core 44's rxe
// provider and the 6.1 kernel do it together.
//
// rxe_post_send (providers/rxe/rxe.c) writes each WR into the send queue
// that user space shares with the kernel, after validate_send_wr: more SGEs
// than max_send_sge, an atomic on fewer than 8 bytes or an unaligned remote
// address, or inline data above max_inline_data are EINVAL; a full queue is
// ENOMEM. Nothing else is checked here: a bad lkey, an opcode the QP type
// cannot do or a destroyed AH surface later as error completions. Then it
// rings the doorbell (post_send_db), and the kernel's rxe_post_send refuses
// with EINVAL unless the requester is ready, that is unless the QP is in
// RTS (or SQD or ERR). The WRs are already in the queue by then: they stay
// there and go out after the QP reaches RTS and a later post rings again.
func (q *qp) postSend(wrs []verbs.SendWR) (int, error) {
	f := q.fab()
	const op = "ibv_post_send"
	if err := q.check(op); err != nil {
		return 0, err
	}
	if len(wrs) == 0 {
		return 0, verbs.Errorf(op, verbs.EINVAL, "pass at least one work request", "the work request list is empty (rxe_post_send: !wr_list)")
	}
	if q.typ == verbs.QPTypeXRCRecv {
		return 0, verbs.Errorf(op, verbs.EINVAL, "send from an XRC_SEND QP; an XRC_RECV QP only receives, into the SRQ each sender names",
			"an XRC_RECV QP has no send queue (mlx5 makes it with no_sq)")
	}
	n := len(wrs)
	var werr error
	for i := range wrs {
		if err := q.postOneSend(op, i, &wrs[i]); err != nil {
			n, werr = i, err
			break
		}
	}
	// post_send_db: the kernel's rxe_post_send.
	if q.req.state < engReady {
		where := "none of them was"
		if n > 0 {
			where = fmt.Sprintf("the %d WR(s) before it are", n)
			if n == len(wrs) {
				where = "all of them are"
			}
		}
		return n, verbs.Errorf(op, verbs.EINVAL, "move the QP to RTS first (rtr → rts with sq_psn, timeout, retry_cnt, rnr_retry, max_rd_atomic); receives may be posted from INIT",
			"the QP is in %s and sends need RTS: rxe's kernel refused the doorbell (rxe_post_send: req.state < READY). "+
				"rdma-core had already written the WRs into the send queue, so %s queued and will be sent after the QP reaches RTS and the next ibv_post_send",
			q.attr.State, where)
	}
	f.schedule(q, taskReq)
	f.afterVerb()
	return n, werr
}

func (q *qp) postOneSend(op string, i int, wr *verbs.SendWR) error {
	var length uint32 // unsigned int in rdma-core: wraps as C does
	for _, s := range wr.SGList {
		length += s.Length
	}
	if len(wr.SGList) > q.sq.maxSGE {
		return verbs.Errorf(op, verbs.EINVAL, "use fewer SGEs, or create the QP with a larger max_send_sge",
			"send WR #%d has %d SGEs; this QP takes at most %d (validate_send_wr)", i+1, len(wr.SGList), q.sq.maxSGE)
	}
	if wr.Opcode.IsAtomic() {
		if length < 8 {
			return verbs.Errorf(op, verbs.EINVAL, "give the atomic an 8-byte local buffer for the original value",
				"atomic WR #%d has %d bytes of local buffer; atomics need 8 (validate_send_wr)", i+1, length)
		}
		if wr.RemoteAddr&7 != 0 {
			return verbs.Errorf(op, verbs.EINVAL, "align remote_addr to 8 bytes",
				"atomic WR #%d targets remote_addr %#x, which is not 8-byte aligned (validate_send_wr)", i+1, wr.RemoteAddr)
		}
	}
	if wr.Flags&verbs.SendInline != 0 && length > uint32(q.sq.maxInline) {
		return verbs.Errorf(op, verbs.EINVAL, "send it without inline, or create the QP with a larger max_inline_data",
			"send WR #%d has %d bytes of inline data; this QP takes at most %d (validate_send_wr)", i+1, length, q.sq.maxInline)
	}
	if wr.Opcode == verbs.WRBindMW {
		return verbs.Errorf(op, verbs.EINVAL, "memory windows are not modelled by the simulator",
			"IBV_WR_BIND_MW needs a memory window, which this API does not have")
	}
	var a *ah
	if q.typ == verbs.QPTypeUD && (wr.Opcode == verbs.WRSend || wr.Opcode == verbs.WRSendWithImm) {
		x, ok := wr.AH.(*ah)
		if wr.AH == nil || !ok {
			// rdma-core dereferences wr.ud.ah: in C this crashes.
			return verbs.Errorf(op, verbs.EINVAL, "create an AH for the destination (create_ah) and set ah=",
				"UD send WR #%d has no address handle (in C, rdma-core would dereference a NULL ah and crash)", i+1)
		}
		a = x
	}
	if q.sq.full() {
		return verbs.Errorf(op, verbs.ENOMEM, "wait for earlier WRs to finish: rxe frees a send slot when its completer retires the WR (after the ACK, signaled or not); hardware HCAs may free it only when you poll its CQE, and an unsignaled WR's with a later signaled one",
			"the send queue is full: it holds %d WRs (max_send_wr as rounded by rxe)", q.sq.maxWR)
	}
	var inline []byte
	if wr.Flags&verbs.SendInline != 0 {
		buf, err := q.gatherInline(op, i, wr.SGList, length)
		if err != nil {
			return err
		}
		inline = buf
	}
	q.sq.alloc()
	w := q.sq.at(q.sq.prod)
	w.sge = append(w.sge[:0], wr.SGList...)
	w.wr = *wr
	w.wr.SGList = w.sge
	w.wr.AH = nil
	w.inline = w.inline[:0]
	if len(inline) > 0 {
		w.inline = append(w.inline, inline...)
	}
	w.ah = a
	w.dma = dmaInfo{length: length, resid: length}
	w.iova = wr.RemoteAddr
	w.mask = wrMask(q.typ, wr.Opcode)
	w.firstPSN, w.lastPSN = 0, 0
	q.ssn++
	w.ssn = q.ssn
	w.state = wqePosted
	w.status = verbs.WCSuccess
	w.errWhy = ""
	w.signal = wr.Flags&verbs.SendSignaled != 0
	w.hasRdAtomic = false
	q.sq.prod++
	return nil
}

// gatherInline copies inline data at post time, as rdma-core's
// init_send_wqe does with memcpy from the SGE addresses. The lkeys are not
// used; the addresses only have to be memory of this process: the
// program's own, read through SetProcessMemory's reader when there is one
// (a zero-length SGE reads nothing), else that of any MR of the context.
func (q *qp) gatherInline(op string, i int, sgl []verbs.SGE, length uint32) ([]byte, error) {
	f := q.f()
	buf := f.inlineScratch[:0]
	for _, s := range sgl {
		var b []byte
		ok := false
		switch {
		case f.processMem != nil && s.Length == 0:
			ok = true
		case f.processMem != nil:
			b, ok = f.processBytes(s.Addr, int(s.Length))
		default:
			if m := q.pd.ctx.findMem(s.Addr, uint64(s.Length)); m != nil {
				off := s.Addr - m.addr
				b, ok = m.buf[off:off+uint64(s.Length)], true
			}
		}
		if !ok {
			hint := "point the SGE into memory from alloc_mr"
			if f.processMem != nil {
				hint = "point the SGE into the program's own memory"
			}
			return nil, verbs.Errorf(op, verbs.EFAULT, hint,
				"inline WR #%d reads %d bytes at %#x, which is no memory this program owns (in C this memcpy would crash)", i+1, s.Length, s.Addr)
		}
		buf = append(buf, b...)
	}
	f.inlineScratch = buf
	return buf, nil
}

// findMem finds memory of this process (any MR of the context) that holds
// [addr, addr+n).
func (c *context) findMem(addr, n uint64) *mr {
	for _, p := range c.pds {
		for _, m := range p.mrs {
			if m.contains(addr, n) {
				return m
			}
		}
	}
	return nil
}

// postRecv does verbs.QP's PostRecv (ibv_post_recv; rdma-core's rxe_post_recv,
// which never enters the kernel): EINVAL in RESET (C10-97.2.1) or when the
// QP uses an SRQ; per WR, a full queue is ENOMEM and too many SGEs EINVAL.
func (q *qp) postRecv(wrs []verbs.RecvWR) (int, error) {
	f := q.fab()
	const op = "ibv_post_recv"
	if err := q.check(op); err != nil {
		return 0, err
	}
	if q.xrc() {
		return 0, verbs.Errorf(op, verbs.EINVAL, "post receives to the XRC SRQ (post_srq_recv); senders name it by its number",
			"an %s QP has no receive queue: XRC receives come from the XRC SRQ the sender names", q.typ.Short())
	}
	if q.srq != nil {
		return 0, verbs.Errorf(op, verbs.EINVAL, "post receives to the SRQ (post_srq_recv)",
			"this QP takes its receives from an SRQ and has no receive queue of its own (rxe_post_recv: no rq queue)")
	}
	if len(wrs) == 0 {
		return 0, verbs.Errorf(op, verbs.EINVAL, "pass at least one work request", "the work request list is empty (rxe_post_recv: !recv_wr)")
	}
	if q.cached == verbs.QPSReset {
		return 0, verbs.Errorf(op, verbs.EINVAL, "move the QP to INIT first: receives may be posted from INIT on",
			"the QP is in RESET, where receives cannot be posted (rxe_post_recv, C10-97.2.1)")
	}
	for i := range wrs {
		if q.rq.full() {
			return i, verbs.Errorf(op, verbs.ENOMEM, "poll the receive CQ, or create the QP with a larger max_recv_wr",
				"the receive queue is full: it holds %d WRs (max_recv_wr as rounded by rxe)", q.rq.maxWR)
		}
		if len(wrs[i].SGList) > q.rq.maxSGE {
			return i, verbs.Errorf(op, verbs.EINVAL, "use fewer SGEs, or create the QP with a larger max_recv_sge",
				"receive WR #%d has %d SGEs; this QP takes at most %d (rxe_post_one_recv)", i+1, len(wrs[i].SGList), q.rq.maxSGE)
		}
		q.rq.push(&wrs[i])
	}
	// rdma-core does not enter the kernel: a responder that is waiting for
	// a receive WQE (RNR) is woken by the peer's retry, not by this post.
	f.afterVerb()
	return len(wrs), nil
}

// destroy does verbs.QP's Destroy (ibv_destroy_qp). uverbs refuses with EBUSY
// while the QP is attached to multicast groups (uverbs_free_qp).
func (q *qp) destroy() error {
	const op = "ibv_destroy_qp"
	if err := q.check(op); err != nil {
		return err
	}
	if len(q.mcast) > 0 {
		gids := make([]string, len(q.mcast))
		for i, e := range q.mcast {
			gids[i] = e.gid.String()
		}
		return verbs.Errorf(op, verbs.EBUSY, "detach_mcast from every group first",
			"%s is still attached to multicast group(s) %s (uverbs_free_qp)", q.name(), strings.Join(gids, ", "))
	}
	if q.eventsUnacked > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "acknowledge every async event you read (ibv_ack_async_event; vsh's async_events does it for you)",
			"%d async event(s) of %s were read but not acknowledged; real libibverbs would block forever here (ibv_cmd_destroy_qp)",
			q.eventsUnacked, q.name())
	}
	q.destroyLocked("ibv_destroy_qp")
	return nil
}

// destroyLocked tears the QP down (rxe_qp_do_cleanup): no completions, its
// packets and timers dropped, the CQs, SRQ and PD released.
func (q *qp) destroyLocked(why string) {
	if q.dead != "" {
		return
	}
	q.dead = why
	f := q.f()
	for k := range q.timers {
		f.delTimer(&q.timers[k]) // del_timer_sync in rxe_qp_do_cleanup
	}
	q.drainReqPkts()
	q.drainRespPkts()
	q.detachAll()
	d := q.pd.ctx.dev
	if d.qp(q.qpn) == q {
		d.setQP(q.qpn, nil)
	}
	if q.scq != nil {
		q.scq.usecnt--
	}
	if q.rcq != nil {
		q.rcq.usecnt--
	}
	if q.srq != nil && q.typ != verbs.QPTypeXRCRecv {
		q.srq.usecnt--
	}
	d.poolDel(poolQP)
	q.pd.ctx.objectGone()
	listRemove(&q.pd.qps, q, &d.listWork)
}
