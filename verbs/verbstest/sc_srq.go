package verbstest

import "github.com/vsh-rdma/vsh/verbs"

const (
	srcSRQInit = "sw/rxe/rxe_srq.c rxe_srq_chk_init (Linux 6.1): max_wr > max_srq_wr or <= 0, max_sge > max_srq_sge (27) are -EINVAL; max_sge 0 becomes RXE_MIN_SRQ_SGE (1)"
	srcSRQAttr = "sw/rxe/rxe_srq.c rxe_srq_chk_attr (Linux 6.1); ibv_modify_srq(3)"
	srcSRQQ    = "sw/rxe/rxe_verbs.c rxe_query_srq: max_wr = queue index_mask = roundup_pow_of_two(max_wr + 1) - 1 (rxe_queue.c)"
)

// srqScenarios are this file's scenarios, each Run a named function.
var srqScenarios = []Scenario{
	{
		Name:   "srq/create-query-rounded",
		Source: srcSRQQ + "; " + srcSRQInit,
		Run:    scSRQCreateQueryRounded,
	},
	{
		Name:   "srq/limit-given-at-create-is-kept",
		Source: "ibv_create_srq(3) calls srq_limit \"irrelevant for ibv_create_srq\", but uverbs passes it (uverbs_std_types_srq.c UVERBS_ATTR_CREATE_SRQ_LIMIT) and rxe_srq.c rxe_srq_from_init stores it unchecked (srq->limit), so query returns it and the limit is armed",
		Run:    scSRQLimitGivenAtCreateIsKept,
	},
	{
		Name:   "srq/max-wr-zero",
		Source: srcSRQInit,
		Run:    scSRQMaxWRZero,
	},
	{
		Name:   "srq/over-device-limits",
		Source: srcSRQInit,
		Run:    scSRQOverDeviceLimits,
	},
	{
		Name:   "srq/arm-limit",
		Source: srcSRQAttr + ": IBV_SRQ_LIMIT up to the current max_wr is accepted and query returns it (rxe_srq_from_attr, rxe_query_srq)",
		Run:    scSRQArmLimit,
	},
	{
		Name:   "srq/limit-over-max-wr",
		Source: srcSRQAttr + ": srq_limit > the queue's index_mask (its max_wr) is -EINVAL",
		Run:    scSRQLimitOverMaxWR,
	},
	{
		Name:   "srq/resize",
		Source: srcSRQAttr + ": IBV_SRQ_MAX_WR resizes (rxe_queue_resize, same rounding); IB_DEVICE_SRQ_RESIZE is in RXE_DEVICE_CAP_FLAGS",
		Run:    scSRQResize,
	},
	{
		Name:   "srq/resize-below-limit",
		Source: srcSRQAttr + ": with a limit armed, max_wr < srq_limit is -EINVAL",
		Run:    scSRQResizeBelowLimit,
	},
	{
		Name:   "srq/post-recv-rules",
		Source: "rdma-core v44 providers/rxe/rxe.c rxe_post_one_recv: a full queue is ENOMEM, more SGEs than max_sge is EINVAL; bad_wr is the refused WR (ibv_post_srq_recv(3))",
		Run:    scSRQPostRecvRules,
	},
	{
		Name:   "srq/qp-with-srq",
		Source: "sw/rxe/rxe_qp.c rxe_qp_chk_cap skips recv caps with an SRQ and rxe_qp_to_init leaves them 0; rdma-core v44 providers/rxe/rxe.c map_queue_pair (no RQ) and rxe_post_recv (no RQ: EINVAL)",
		Run:    scSRQQPWithSRQ,
	},
	{
		Name:   "srq/destroy-busy-while-qp",
		Source: "core/verbs.c ib_destroy_srq_user: srq->usecnt (QPs using it) makes it -EBUSY; ibv_destroy_srq(3)",
		Run:    scSRQDestroyBusyWhileQP,
	},
}

func init() {
	registerAll(srqScenarios)
}

// scSRQCreateQueryRounded runs the scenario srq/create-query-rounded.
func scSRQCreateQueryRounded(e *Env) {
	for _, c := range []struct{ wr, sge, wantSGE int }{{1, 1, 1}, {100, 2, 2}, {500, 0, 1}, {4096, 27, 27}} {
		srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: c.wr, MaxSGE: c.sge})
		a, err := srq.Query()
		e.Must(err, "ibv_query_srq")
		if a.MaxWR != rxeQueueDepth(c.wr) || a.MaxSGE != c.wantSGE || a.SRQLimit != 0 {
			e.Errorf("create_srq(max_wr %d, max_sge %d): query = %+v; want max_wr %d, max_sge %d, srq_limit 0",
				c.wr, c.sge, a, rxeQueueDepth(c.wr), c.wantSGE)
		}
		_ = srq.Destroy()
	}
}

// scSRQLimitGivenAtCreateIsKept runs the scenario srq/limit-given-at-create-is-kept.
func scSRQLimitGivenAtCreateIsKept(e *Env) {
	srq, err := e.PD().CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 16, MaxSGE: 1, SRQLimit: 5}})
	e.Must(err, "ibv_create_srq(max_wr 16, srq_limit 5)")
	e.Defer(func() { _ = srq.Destroy() })
	a, err := srq.Query()
	e.Must(err, "ibv_query_srq")
	if a.SRQLimit != 5 {
		e.Errorf("srq_limit after create with 5 = %d; want 5 (rxe keeps it)", a.SRQLimit)
	}
}

// scSRQMaxWRZero runs the scenario srq/max-wr-zero.
func scSRQMaxWRZero(e *Env) {
	_, err := e.PD().CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 0, MaxSGE: 1}})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_srq(max_wr 0)")
}

// scSRQOverDeviceLimits runs the scenario srq/over-device-limits.
func scSRQOverDeviceLimits(e *Env) {
	for _, a := range []verbs.SRQAttr{
		{MaxWR: rxe61.MaxSRQWR + 1, MaxSGE: 1},
		{MaxWR: 16, MaxSGE: rxe61.MaxSRQSGE + 1},
	} {
		_, err := e.PD().CreateSRQ(verbs.SRQInitAttr{Attr: a})
		e.ExpectErrno(err, verbs.EINVAL, "ibv_create_srq(%+v)", a)
	}
}

// scSRQArmLimit runs the scenario srq/arm-limit.
func scSRQArmLimit(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 100, MaxSGE: 1})
	for _, lim := range []int{10, rxeQueueDepth(100)} {
		e.Must(srq.Modify(verbs.SRQAttr{SRQLimit: lim}, verbs.SRQAttrLimit), "ibv_modify_srq(IBV_SRQ_LIMIT=%d)", lim)
		a, err := srq.Query()
		e.Must(err, "ibv_query_srq")
		if a.SRQLimit != lim {
			e.Errorf("srq_limit after arming %d = %d", lim, a.SRQLimit)
		}
	}
}

// scSRQLimitOverMaxWR runs the scenario srq/limit-over-max-wr.
func scSRQLimitOverMaxWR(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 100, MaxSGE: 1})
	lim := rxeQueueDepth(100) + 1
	e.ExpectErrno(srq.Modify(verbs.SRQAttr{SRQLimit: lim}, verbs.SRQAttrLimit), verbs.EINVAL, "ibv_modify_srq(IBV_SRQ_LIMIT=%d) on max_wr %d", lim, lim-1)
}

// scSRQResize runs the scenario srq/resize.
func scSRQResize(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 16, MaxSGE: 1})
	e.Must(srq.Modify(verbs.SRQAttr{MaxWR: 200}, verbs.SRQAttrMaxWR), "ibv_modify_srq(IBV_SRQ_MAX_WR=200)")
	a, err := srq.Query()
	e.Must(err, "ibv_query_srq")
	if a.MaxWR != rxeQueueDepth(200) {
		e.Errorf("max_wr after resize to 200 = %d; want %d", a.MaxWR, rxeQueueDepth(200))
	}
	e.ExpectErrno(srq.Modify(verbs.SRQAttr{MaxWR: 0}, verbs.SRQAttrMaxWR), verbs.EINVAL, "ibv_modify_srq(IBV_SRQ_MAX_WR=0)")
	e.ExpectErrno(srq.Modify(verbs.SRQAttr{MaxWR: rxe61.MaxSRQWR + 1}, verbs.SRQAttrMaxWR), verbs.EINVAL, "ibv_modify_srq(IBV_SRQ_MAX_WR=max+1)")
}

// scSRQResizeBelowLimit runs the scenario srq/resize-below-limit.
func scSRQResizeBelowLimit(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 100, MaxSGE: 1})
	e.Must(srq.Modify(verbs.SRQAttr{SRQLimit: 50}, verbs.SRQAttrLimit), "ibv_modify_srq(limit 50)")
	e.ExpectErrno(srq.Modify(verbs.SRQAttr{MaxWR: 20}, verbs.SRQAttrMaxWR), verbs.EINVAL, "ibv_modify_srq(max_wr 20) with limit 50")
}

// scSRQPostRecvRules runs the scenario srq/post-recv-rules.
func scSRQPostRecvRules(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	sge := verbs.SGE{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}
	n, err := srq.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sge, sge}}})
	if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_srq_recv with 2 SGEs on max_sge 1") && n != 0 {
		e.Errorf("ibv_post_srq_recv with 2 SGEs: posted %d; want 0", n)
	}
	depth := rxeQueueDepth(4)
	wrs := make([]verbs.RecvWR, depth+1)
	for i := range wrs {
		wrs[i] = verbs.RecvWR{WRID: uint64(i), SGList: []verbs.SGE{sge}}
	}
	n, err = srq.PostRecv(wrs)
	if e.ExpectErrno(err, verbs.ENOMEM, "ibv_post_srq_recv of %d WRs on depth %d", depth+1, depth) && n != depth {
		e.Errorf("ibv_post_srq_recv of %d WRs: posted %d; want %d (bad_wr is the first that did not fit)", depth+1, n, depth)
	}
}

// scSRQQPWithSRQ runs the scenario srq/qp-with-srq.
func scSRQQPWithSRQ(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 16, MaxSGE: 1})
	q := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(), SRQ: srq,
		Cap: verbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1, MaxRecvWR: rxe61.MaxQPWR + 1, MaxRecvSGE: rxe61.MaxSGE + 1}})
	_, init, err := q.Query(verbs.AttrCap)
	e.Must(err, "ibv_query_qp")
	if init.Cap.MaxRecvWR != 0 || init.Cap.MaxRecvSGE != 0 {
		e.Errorf("QP on an SRQ: query max_recv_wr/sge = %d/%d; want 0/0", init.Cap.MaxRecvWR, init.Cap.MaxRecvSGE)
	}
	if init.SRQ != srq {
		e.Errorf("QP on an SRQ: query srq is not the SRQ")
	}
	e.Bring(q, q.Num(), verbs.QPSInit)
	_, err = q.PostRecv([]verbs.RecvWR{{WRID: 1}})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_post_recv on a QP attached to an SRQ")
}

// scSRQDestroyBusyWhileQP runs the scenario srq/destroy-busy-while-qp.
func scSRQDestroyBusyWhileQP(e *Env) {
	srq, err := e.PD().CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 16, MaxSGE: 1}})
	e.Must(err, "ibv_create_srq")
	e.Defer(func() { _ = srq.Destroy() })
	q, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(), SRQ: srq, Cap: verbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1}})
	e.Must(err, "ibv_create_qp on the SRQ")
	e.ExpectErrno(srq.Destroy(), verbs.EBUSY, "ibv_destroy_srq while a QP uses it")
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.Must(srq.Destroy(), "ibv_destroy_srq after the QP is gone")
	e.NoPanic("second ibv_destroy_srq", func() { e.ExpectError(srq.Destroy(), "second ibv_destroy_srq") })
}
