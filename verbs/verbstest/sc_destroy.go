package verbstest

import (
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// destroyScenarios are this file's scenarios, each Run a named function.
var destroyScenarios = []Scenario{
	{
		Name:   "destroy/pd-busy",
		Source: "core/uverbs_std_types.c uverbs_free_pd: -EBUSY while pd->usecnt, which every MR (ib_uverbs_reg_mr), QP, SRQ and AH (_rdma_create_ah) on it raises; ibv_dealloc_pd(3)",
		Run:    scDestroyPDBusy,
	},
	{
		Name:   "destroy/cq-busy-while-qp",
		Source: "core/verbs.c ib_destroy_cq_user: -EBUSY while cq->usecnt (a QP's send or receive CQ, ib_qp_usecnt_inc); rxe_destroy_cq would say -EINVAL (IBA C11-17) but the core refuses first; ibv_destroy_cq(3)",
		Run:    scDestroyCQBusyWhileQP,
	},
	{
		Name:   "destroy/rc-pingpong-teardown",
		Source: "rdma-core libibverbs/examples/rc_pingpong.c pp_close_ctx: destroy QP, CQ, MR, PD, channel, then close the device",
		Run:    scDestroyRCPingpongTeardown,
	},
	{
		Name:   "destroy/twice-pd-cq-channel",
		Source: "ibv_dealloc_pd(3), ibv_destroy_cq(3), ibv_destroy_comp_channel(3); DESIGN.md: double destroy is a clear error, never a crash",
		Run:    scDestroyTwicePDCQChannel,
	},
	{
		Name:   "async/none-pending-at-open",
		Source: "core/device.c ib_dispatch_event and uverbs_main.c ib_uverbs_event_handler: an async event reaches only the files open when it happens; rxe's PORT_ACTIVE (rxe_net.c rxe_port_up) comes when the netdev goes up, before any test opens the device; ibv_get_async_event(3)",
		Run:    scAsyncNonePendingAtOpen,
	},
	{
		Name:   "async/sq-drained",
		Source: "sw/rxe/rxe_req.c req_next_wqe: once a QP moved to SQD has no WQE left, req.state becomes DRAINED and IB_EVENT_SQ_DRAINED is raised through the QP's event handler (uverbs delivers it as IBV_EVENT_SQ_DRAINED); ibv_get_async_event(3)",
		Run:    scAsyncSQDrained,
	},
}

func init() {
	registerAll(destroyScenarios)
}

// scDestroyPDBusy runs the scenario destroy/pd-busy.
func scDestroyPDBusy(e *Env) {
	for _, c := range []struct {
		name string
		make func(pd verbs.PD) (destroy func() error)
	}{
		{"MR", func(pd verbs.PD) func() error {
			mr, err := pd.AllocMR(4096, verbs.AccessLocalWrite)
			e.Must(err, "ibv_reg_mr")
			return mr.Dereg
		}},
		{"QP", func(pd verbs.PD) func() error {
			q, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
			e.Must(err, "ibv_create_qp")
			return q.Destroy
		}},
		{"SRQ", func(pd verbs.PD) func() error {
			s, err := pd.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 8, MaxSGE: 1}})
			e.Must(err, "ibv_create_srq")
			return s.Destroy
		}},
		{"AH", func(pd verbs.PD) func() error {
			ah, err := pd.CreateAH(e.AV())
			e.Must(err, "ibv_create_ah")
			return ah.Destroy
		}},
	} {
		pd, err := e.Ctx.AllocPD()
		e.Must(err, "ibv_alloc_pd")
		destroy := c.make(pd)
		e.Defer(func() { _ = destroy(); _ = pd.Dealloc() })
		e.ExpectErrno(pd.Dealloc(), verbs.EBUSY, "ibv_dealloc_pd with a live %s", c.name)
		e.Must(destroy(), "destroying the %s", c.name)
		e.Must(pd.Dealloc(), "ibv_dealloc_pd after the %s is gone", c.name)
	}
}

// scDestroyCQBusyWhileQP runs the scenario destroy/cq-busy-while-qp.
func scDestroyCQBusyWhileQP(e *Env) {
	scq, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 8})
	e.Must(err, "ibv_create_cq")
	rcq, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 8})
	e.Must(err, "ibv_create_cq")
	e.Defer(func() { _ = scq.Destroy(); _ = rcq.Destroy() })
	q, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUC, SendCQ: scq, RecvCQ: rcq, Cap: DefaultCap})
	e.Must(err, "ibv_create_qp")
	e.Defer(func() { _ = q.Destroy() })
	e.ExpectErrno(scq.Destroy(), verbs.EBUSY, "ibv_destroy_cq of a QP's send CQ")
	e.ExpectErrno(rcq.Destroy(), verbs.EBUSY, "ibv_destroy_cq of a QP's receive CQ")
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.Must(scq.Destroy(), "ibv_destroy_cq after the QP is gone")
	e.Must(rcq.Destroy(), "ibv_destroy_cq after the QP is gone")
}

// scDestroyRCPingpongTeardown runs the scenario destroy/rc-pingpong-teardown.
func scDestroyRCPingpongTeardown(e *Env) {
	ch, err := e.Ctx.CreateCompChannel()
	e.Must(err, "ibv_create_comp_channel")
	pd, err := e.Ctx.AllocPD()
	e.Must(err, "ibv_alloc_pd")
	mr, err := pd.AllocMR(4096, verbs.AccessLocalWrite)
	e.Must(err, "ibv_reg_mr")
	cq, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 501, Channel: ch})
	e.Must(err, "ibv_create_cq")
	q, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 500, MaxSendSGE: 1, MaxRecvSGE: 1}})
	e.Must(err, "ibv_create_qp")
	e.Bring(q, q.Num(), verbs.QPSInit)
	prepostRecv(e, q, mr, 10)
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.Must(cq.Destroy(), "ibv_destroy_cq")
	e.Must(mr.Dereg(), "ibv_dereg_mr")
	e.Must(pd.Dealloc(), "ibv_dealloc_pd")
	e.Must(ch.Destroy(), "ibv_destroy_comp_channel")
}

// scDestroyTwicePDCQChannel runs the scenario destroy/twice-pd-cq-channel.
func scDestroyTwicePDCQChannel(e *Env) {
	pd, err := e.Ctx.AllocPD()
	e.Must(err, "ibv_alloc_pd")
	e.Must(pd.Dealloc(), "ibv_dealloc_pd")
	e.NoPanic("second ibv_dealloc_pd", func() { e.ExpectError(pd.Dealloc(), "second ibv_dealloc_pd") })
	cq, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 4})
	e.Must(err, "ibv_create_cq")
	e.Must(cq.Destroy(), "ibv_destroy_cq")
	e.NoPanic("second ibv_destroy_cq", func() { e.ExpectError(cq.Destroy(), "second ibv_destroy_cq") })
	e.NoPanic("ibv_poll_cq on a destroyed CQ", func() {
		_, err := cq.Poll(make([]verbs.WC, 1))
		e.ExpectError(err, "ibv_poll_cq on a destroyed CQ")
	})
	ch, err := e.Ctx.CreateCompChannel()
	e.Must(err, "ibv_create_comp_channel")
	e.Must(ch.Destroy(), "ibv_destroy_comp_channel")
	e.NoPanic("second ibv_destroy_comp_channel", func() { e.ExpectError(ch.Destroy(), "second ibv_destroy_comp_channel") })
}

// scAsyncNonePendingAtOpen runs the scenario async/none-pending-at-open.
func scAsyncNonePendingAtOpen(e *Env) {
	ev, err := e.Ctx.GetAsyncEvent(0)
	if err == nil {
		e.Errorf("a freshly opened context has an async event pending: %v; want none (EAGAIN)", ev)
		e.Ctx.AckAsyncEvent(ev)
		return
	}
	e.ExpectErrno(err, verbs.EAGAIN, "GetAsyncEvent(0) on a fresh context")
}

// scAsyncSQDrained runs the scenario async/sq-drained.
func scAsyncSQDrained(e *Env) {
	a, b := e.Pair(verbs.QPTypeRC)
	attr := e.attrsFor(verbs.QPTypeRC, a.Num(), b.Num(), verbs.QPSRTS, verbs.QPSSQD, verbs.QPCap{})
	e.Must(a.Modify(&attr, aState|aSQDNote), "RTS→SQD with en_sqd_async_notify")
	var got verbs.AsyncEvent
	found := false
	deadline := time.Now().Add(e.Opts.Wait)
	for !found && time.Now().Before(deadline) {
		ev, err := e.Ctx.GetAsyncEvent(10 * time.Millisecond)
		if err != nil {
			continue
		}
		e.Ctx.AckAsyncEvent(ev)
		if ev.Type == verbs.EventSQDrained {
			got, found = ev, true
		} else {
			e.Logf("other async event: %v", ev)
		}
	}
	if !found {
		e.Fatalf("no IBV_EVENT_SQ_DRAINED within %v after RTS→SQD", e.Opts.Wait)
	}
	if got.QP == nil || got.QP.Num() != a.Num() {
		e.Errorf("IBV_EVENT_SQ_DRAINED names QP %v; want QP %#x", got.QP, a.Num())
	}
}
