package verbstest

import "github.com/vsh-rdma/vsh/verbs"

const (
	srcPostRecv = "rdma-core v44 providers/rxe/rxe.c rxe_post_recv / rxe_post_one_recv: EINVAL in RESET (C10-97.2.1, from the state libibverbs caches in ibv_modify_qp), ENOMEM when the RQ is full, EINVAL for more SGEs than max_recv_sge; lkeys are not looked at"
	srcPostSend = "rdma-core v44 providers/rxe/rxe.c post_one_send / validate_send_wr: EINVAL for more SGEs than max_send_sge, an atomic shorter than 8 bytes or not 8-byte aligned, inline data longer than max_inline; ENOMEM when the SQ is full; lkeys are not looked at"
	srcDoorbell = "rdma-core v44 providers/rxe/rxe.c rxe_post_send rings post_send_db, and the kernel's rxe_verbs.c rxe_post_send returns -EINVAL while qp->req.state < QP_STATE_READY (set at RTS by rxe_qp_from_attr)"
)

// sendSGE returns one SGE of length n at the start of mr.
func sendSGE(mr verbs.MR, n int) verbs.SGE {
	return verbs.SGE{Addr: mr.Addr(), Length: uint32(n), LKey: mr.LKey()}
}

// prepostRecv posts n receives of the whole MR on q, so that sends the
// scenario posts to q have somewhere to land.
func prepostRecv(e *Env, q verbs.QP, mr verbs.MR, n int) {
	wrs := make([]verbs.RecvWR, n)
	for i := range wrs {
		wrs[i] = verbs.RecvWR{WRID: uint64(1000 + i), SGList: []verbs.SGE{sendSGE(mr, mr.Length())}}
	}
	_, err := q.PostRecv(wrs)
	e.Must(err, "ibv_post_recv(%d)", n)
}

// postScenarios are this file's scenarios, each Run a named function.
var postScenarios = []Scenario{
	{
		Name:   "post/recv-in-reset",
		Source: srcPostRecv,
		Run:    scPostRecvInReset,
	},
	{
		Name:   "post/recv-allowed-from-init",
		Source: srcPostRecv + "; rc_pingpong.c posts its receives in INIT, before the address exchange",
		Run:    scPostRecvAllowedFromInit,
	},
	{
		Name:   "post/recv-too-many-sge",
		Source: srcPostRecv,
		Run:    scPostRecvTooManySGE,
	},
	{
		Name:   "post/recv-queue-full",
		Source: srcPostRecv + "; the RQ depth is roundup_pow_of_two(max_recv_wr+1)-1 (rxe_queue_init)",
		Run:    scPostRecvQueueFull,
	},
	{
		Name:   "post/recv-lkey-not-checked",
		Source: srcPostRecv,
		Run:    scPostRecvLKeyNotChecked,
	},
	{
		Name:   "post/send-before-rts",
		Source: srcDoorbell,
		Run:    scPostSendBeforeRTS,
	},
	{
		Name:   "post/send-allowed-rts-sqd-err",
		Source: srcDoorbell + " (RTS, SQD's DRAIN/DRAINED and ERROR are all >= READY; in ERR the WR is flushed, in SQD it waits)",
		Run:    scPostSendAllowedRTSSQDErr,
	},
	{
		Name:   "post/send-too-many-sge",
		Source: srcPostSend,
		Run:    scPostSendTooManySGE,
	},
	{
		Name:   "post/send-inline-limit",
		Source: srcPostSend + "; the limit is query's max_inline_data (rxe_qp_init_req)",
		Run:    scPostSendInlineLimit,
	},
	{
		Name:   "post/send-atomic-alignment-and-length",
		Source: srcPostSend,
		Run:    scPostSendAtomicAlignmentAndLength,
	},
	{
		Name:   "post/send-queue-full",
		Source: srcPostSend + "; the SQ depth is roundup_pow_of_two(max_send_wr+1)-1 (rxe_queue_init); the whole list is queued before the doorbell",
		Run:    scPostSendQueueFull,
	},
	{
		Name:   "post/send-lkey-not-checked",
		Source: srcPostSend + "; a bad lkey surfaces later as an error completion (rxe_req.c)",
		Run:    scPostSendLKeyNotChecked,
	},
	{
		Name:   "post/opcode-checked-later",
		Source: srcPostSend + " — nothing about the opcode; the kernel's rxe_req.c rxe_requester finds no UC opcode for READ or atomics (next_opcode) and completes the WR with IB_WC_LOC_QP_OP_ERR",
		Run:    scPostOpcodeCheckedLater,
	},
	{
		Name:   "post/send-zero-length",
		Source: "ibv_post_send(3): num_sge may be 0 (a zero-length message); validate_send_wr has no minimum",
		Run:    scPostSendZeroLength,
	},
}

func init() {
	registerAll(postScenarios)
}

// scPostRecvInReset runs the scenario post/recv-in-reset.
func scPostRecvInReset(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	for _, typ := range qpTypes {
		q := e.QP(typ)
		n, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sendSGE(mr, 64)}}})
		if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_recv on a %v QP in RESET", typ) && n != 0 {
			e.Errorf("ibv_post_recv in RESET reported %d posted; want 0", n)
		}
	}
}

// scPostRecvAllowedFromInit runs the scenario post/recv-allowed-from-init.
func scPostRecvAllowedFromInit(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	peer := e.QP(verbs.QPTypeRC)
	for _, st := range []verbs.QPState{verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSSQD, verbs.QPSErr} {
		q := e.QP(verbs.QPTypeRC)
		e.Bring(q, peer.Num(), st)
		n, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sendSGE(mr, 64)}}, {WRID: 2, SGList: []verbs.SGE{sendSGE(mr, 64)}}})
		if err != nil || n != 2 {
			e.Errorf("ibv_post_recv of 2 in %v = %d, %v; want 2, nil", st, n, err)
		}
	}
}

// scPostRecvTooManySGE runs the scenario post/recv-too-many-sge.
func scPostRecvTooManySGE(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	q := e.QP(verbs.QPTypeRC)
	e.Bring(q, q.Num(), verbs.QPSInit)
	sge := sendSGE(mr, 64)
	n, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sge}}, {WRID: 2, SGList: []verbs.SGE{sge, sge}}})
	if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_recv with 2 SGEs on max_recv_sge 1") && n != 1 {
		e.Errorf("posted %d; want 1 (bad_wr is the second WR)", n)
	}
}

// scPostRecvQueueFull runs the scenario post/recv-queue-full.
func scPostRecvQueueFull(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	q := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 5, MaxSendSGE: 1, MaxRecvSGE: 1}})
	e.Bring(q, q.Num(), verbs.QPSInit)
	depth := rxeQueueDepth(5)
	wrs := make([]verbs.RecvWR, depth+1)
	for i := range wrs {
		wrs[i] = verbs.RecvWR{WRID: uint64(i), SGList: []verbs.SGE{sendSGE(mr, 64)}}
	}
	n, err := q.PostRecv(wrs)
	if e.ExpectErrno(err, verbs.ENOMEM, "ibv_post_recv of %d on an RQ of depth %d", depth+1, depth) && n != depth {
		e.Errorf("posted %d; want %d", n, depth)
	}
}

// scPostRecvLKeyNotChecked runs the scenario post/recv-lkey-not-checked.
func scPostRecvLKeyNotChecked(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	q := e.QP(verbs.QPTypeRC)
	e.Bring(q, q.Num(), verbs.QPSInit)
	sge := sendSGE(mr, 64)
	sge.LKey ^= 0xff
	if _, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sge}}}); err != nil {
		e.Errorf("ibv_post_recv with a wrong lkey = %v; want success (rxe checks keys only when data arrives)", err)
	}
}

// scPostSendBeforeRTS runs the scenario post/send-before-rts.
func scPostSendBeforeRTS(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	peer := e.QP(verbs.QPTypeRC)
	for _, st := range []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR} {
		q := e.QP(verbs.QPTypeRC)
		e.Bring(q, peer.Num(), st)
		n, err := q.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sendSGE(mr, 64)}}})
		e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send on an RC QP in %v", st)
		if n != 1 {
			e.Errorf("ibv_post_send on an RC QP in %v refused by the doorbell reports %d WRs posted; want 1: rdma-core queued it before the kernel refused (bad_wr is not set)", st, n)
		}
	}
}

// scPostSendAllowedRTSSQDErr runs the scenario post/send-allowed-rts-sqd-err.
func scPostSendAllowedRTSSQDErr(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	for _, st := range []verbs.QPState{verbs.QPSRTS, verbs.QPSSQD, verbs.QPSErr} {
		a, b := e.Pair(verbs.QPTypeRC)
		prepostRecv(e, b, mr, 2)
		if st == verbs.QPSSQD {
			e.step(a, b.Num(), verbs.QPSRTS, verbs.QPSSQD)
		} else if st == verbs.QPSErr {
			e.step(a, b.Num(), verbs.QPSRTS, verbs.QPSErr)
		}
		n, err := a.PostSend([]verbs.SendWR{{WRID: 7, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sendSGE(mr, 64)}}})
		if err != nil || n != 1 {
			e.Errorf("ibv_post_send on an RC QP in %v = %d, %v; want 1, nil", st, n, err)
		}
	}
}

// scPostSendTooManySGE runs the scenario post/send-too-many-sge.
func scPostSendTooManySGE(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	a, _ := e.Pair(verbs.QPTypeRC)
	sge := sendSGE(mr, 16)
	n, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, SGList: []verbs.SGE{sge, sge}}})
	if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send with 2 SGEs on max_send_sge 1") && n != 0 {
		e.Errorf("posted %d; want 0", n)
	}
}

// scPostSendInlineLimit runs the scenario post/send-inline-limit.
func scPostSendInlineLimit(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	a := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: verbs.QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
	e.Bring(a, a.Num(), verbs.QPSRTS)
	ah := e.AH(e.PD(), e.AV())
	wr := func(n int) []verbs.SendWR {
		return []verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendInline, SGList: []verbs.SGE{sendSGE(mr, n)}, AH: ah, RemoteQPN: a.Num(), RemoteQKey: qkey}}
	}
	_, err := a.PostSend(wr(65))
	e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send INLINE 65 bytes on max_inline_data 64")
	if _, err := a.PostSend(wr(64)); err != nil {
		e.Errorf("ibv_post_send INLINE 64 bytes on max_inline_data 64 = %v; want success", err)
	}
}

// scPostSendAtomicAlignmentAndLength runs the scenario post/send-atomic-alignment-and-length.
func scPostSendAtomicAlignmentAndLength(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite|verbs.AccessRemoteAtomic)
	a, b := e.Pair(verbs.QPTypeRC)
	_ = b
	for _, c := range []struct {
		name string
		addr uint64
		n    int
		op   verbs.WROpcode
	}{
		{"misaligned remote_addr", mr.Addr() + 4, 8, verbs.WRAtomicCmpAndSwp},
		{"misaligned remote_addr", mr.Addr() + 1, 8, verbs.WRAtomicFetchAndAdd},
		{"4-byte local buffer", mr.Addr(), 4, verbs.WRAtomicFetchAndAdd},
	} {
		n, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: c.op, SGList: []verbs.SGE{sendSGE(mr, c.n)}, RemoteAddr: c.addr, RKey: mr.RKey()}})
		if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send %v with %s", c.op, c.name) && n != 0 {
			e.Errorf("posted %d; want 0", n)
		}
	}
}

// scPostSendQueueFull runs the scenario post/send-queue-full.
func scPostSendQueueFull(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	mk := func() verbs.QP {
		return e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	}
	a, b := mk(), mk()
	e.Bring(a, b.Num(), verbs.QPSRTS)
	e.Bring(b, a.Num(), verbs.QPSRTS)
	depth := rxeQueueDepth(4)
	wrs := make([]verbs.SendWR, depth+1)
	for i := range wrs {
		wrs[i] = verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sendSGE(mr, 8)}}
	}
	n, err := a.PostSend(wrs)
	if e.ExpectErrno(err, verbs.ENOMEM, "ibv_post_send of %d WRs on an SQ of depth %d", depth+1, depth) && n != depth {
		e.Errorf("posted %d; want %d", n, depth)
	}
}

// scPostSendLKeyNotChecked runs the scenario post/send-lkey-not-checked.
func scPostSendLKeyNotChecked(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	a, b := e.Pair(verbs.QPTypeRC)
	prepostRecv(e, b, mr, 1)
	sge := sendSGE(mr, 64)
	sge.LKey ^= 0xff
	if _, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sge}}}); err != nil {
		e.Errorf("ibv_post_send with a wrong lkey = %v; want success (the error comes as a completion)", err)
	}
}

// scPostOpcodeCheckedLater runs the scenario post/opcode-checked-later.
func scPostOpcodeCheckedLater(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead|verbs.AccessRemoteAtomic)
	a, _ := e.Pair(verbs.QPTypeUC)
	for _, op := range []verbs.WROpcode{verbs.WRRDMARead, verbs.WRAtomicFetchAndAdd} {
		_, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: op, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sendSGE(mr, 8)}, RemoteAddr: mr.Addr(), RKey: mr.RKey()}})
		if err != nil {
			e.Errorf("ibv_post_send(%v) on a UC QP = %v; want success at post time (the error comes as a completion)", op, err)
		}
	}
}

// scPostSendZeroLength runs the scenario post/send-zero-length.
func scPostSendZeroLength(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	a, b := e.Pair(verbs.QPTypeRC)
	prepostRecv(e, b, mr, 1)
	if _, err := a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}}); err != nil {
		e.Errorf("ibv_post_send of a zero-length SEND = %v; want success", err)
	}
}
