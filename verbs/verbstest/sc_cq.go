package verbstest

import (
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

const (
	srcCQChk    = "sw/rxe/rxe_cq.c rxe_cq_chk_attr (Linux 6.1): cqe <= 0 or cqe > max_cqe ((1 << RXE_MAX_LOG_CQE) - 1 = 32767) is -EINVAL; ibv_create_cq(3)"
	srcCQRound  = "sw/rxe/rxe_queue.c rxe_queue_init: depth roundup_pow_of_two(cqe + 1) - 1, stored by rxe_cq_from_init in ibv_cq.cqe; ibv_create_cq(3): \"at least cqe entries\""
	srcChannels = "rdma-core v44 libibverbs/verbs.c ibv_destroy_comp_channel: EBUSY while channel->refcnt (CQs using it) is not 0; ibv_create_comp_channel(3)"
)

// cqScenarios are this file's scenarios, each Run a named function.
var cqScenarios = []Scenario{
	{
		Name:   "cq/depth-rounded-up",
		Source: srcCQRound,
		Run:    scCQDepthRoundedUp,
	},
	{
		Name:   "cq/cqe-zero-or-negative",
		Source: srcCQChk,
		Run:    scCQCQEZeroOrNegative,
	},
	{
		Name:   "cq/cqe-over-device-max",
		Source: srcCQChk,
		Run:    scCQCQEOverDeviceMax,
	},
	{
		Name:   "cq/bad-comp-vector",
		Source: "core/uverbs_std_types_cq.c UVERBS_METHOD_CQ_CREATE (and uverbs_cmd.c create_cq): comp_vector >= num_comp_vectors is -EINVAL; rxe sets num_comp_vectors = num_possible_cpus()",
		Run:    scCQBadCompVector,
	},
	{
		Name:   "cq/resize-rounded-up",
		Source: "sw/rxe/rxe_verbs.c rxe_resize_cq → rxe_cq_resize_queue → rxe_queue_resize (same rounding as create); ibv_resize_cq(3)",
		Run:    scCQResizeRoundedUp,
	},
	{
		Name:   "cq/resize-bad-size",
		Source: "sw/rxe/rxe_verbs.c rxe_resize_cq → rxe_cq_chk_attr: cqe <= 0 or > max_cqe is -EINVAL; ibv_resize_cq(3)",
		Run:    scCQResizeBadSize,
	},
	{
		Name:   "cq/poll-empty",
		Source: "ibv_poll_cq(3): returns 0 when the CQ is empty (rdma-core providers/rxe/rxe.c rxe_poll_cq)",
		Run:    scCQPollEmpty,
	},
	{
		Name:   "cq/req-notify",
		Source: "ibv_req_notify_cq(3); rxe_verbs.c rxe_req_notify_cq returns 0 (no missed-event report asked)",
		Run:    scCQReqNotify,
	},
	{
		Name:   "channel/no-event-pending",
		Source: "ibv_get_cq_event(3): blocks until an event; verbs.CompChannel.GetEvent: EAGAIN when none arrives in time",
		Run:    scChannelNoEventPending,
	},
	{
		Name:   "channel/destroy-busy-while-cq",
		Source: srcChannels + "; ibv_destroy_cq decrements refcnt",
		Run:    scChannelDestroyBusyWhileCQ,
	},
}

func init() {
	registerAll(cqScenarios)
}

// scCQDepthRoundedUp runs the scenario cq/depth-rounded-up.
func scCQDepthRoundedUp(e *Env) {
	for _, n := range []int{1, 2, 3, 16, 100, 500, 4096, rxe61.MaxCQE} {
		cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: n})
		if got, want := cq.CQE(), rxeQueueDepth(n); got != want {
			e.Errorf("ibv_create_cq(%d): cqe = %d; want %d", n, got, want)
		}
		_ = cq.Destroy()
	}
}

// scCQCQEZeroOrNegative runs the scenario cq/cqe-zero-or-negative.
func scCQCQEZeroOrNegative(e *Env) {
	for _, n := range []int{0, -1} {
		_, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: n})
		e.ExpectErrno(err, verbs.EINVAL, "ibv_create_cq(cqe=%d)", n)
	}
}

// scCQCQEOverDeviceMax runs the scenario cq/cqe-over-device-max.
func scCQCQEOverDeviceMax(e *Env) {
	_, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: rxe61.MaxCQE + 1})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_cq(cqe=%d)", rxe61.MaxCQE+1)
}

// scCQBadCompVector runs the scenario cq/bad-comp-vector.
func scCQBadCompVector(e *Env) {
	_, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 16, CompVector: 1 << 20})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_cq(comp_vector=1<<20)")
	cq, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 16, CompVector: 0})
	if err != nil {
		e.Errorf("ibv_create_cq(comp_vector=0) = %v; want success", err)
	} else {
		_ = cq.Destroy()
	}
}

// scCQResizeRoundedUp runs the scenario cq/resize-rounded-up.
func scCQResizeRoundedUp(e *Env) {
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
	for _, n := range []int{100, 5, rxe61.MaxCQE} {
		if err := cq.Resize(n); err != nil {
			e.Errorf("ibv_resize_cq(%d) = %v; want success", n, err)
			continue
		}
		if got, want := cq.CQE(), rxeQueueDepth(n); got != want {
			e.Errorf("after ibv_resize_cq(%d): cqe = %d; want %d", n, got, want)
		}
	}
}

// scCQResizeBadSize runs the scenario cq/resize-bad-size.
func scCQResizeBadSize(e *Env) {
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
	for _, n := range []int{0, -3, rxe61.MaxCQE + 1} {
		e.ExpectErrno(cq.Resize(n), verbs.EINVAL, "ibv_resize_cq(%d)", n)
	}
	if got := cq.CQE(); got != rxeQueueDepth(16) {
		e.Errorf("after refused resizes, cqe = %d; want %d unchanged", got, rxeQueueDepth(16))
	}
}

// scCQPollEmpty runs the scenario cq/poll-empty.
func scCQPollEmpty(e *Env) {
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 4})
	wc := make([]verbs.WC, 4)
	n, err := cq.Poll(wc)
	if n != 0 || err != nil {
		e.Errorf("Poll on a new CQ = %d, %v; want 0, nil", n, err)
	}
	n, err = cq.Poll(nil)
	if n != 0 || err != nil {
		e.Errorf("Poll(nil) = %d, %v; want 0, nil", n, err)
	}
}

// scCQReqNotify runs the scenario cq/req-notify.
func scCQReqNotify(e *Env) {
	ch := e.Channel()
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 4, Channel: ch})
	e.Must(cq.ReqNotify(false), "ibv_req_notify_cq(solicited_only=0)")
	e.Must(cq.ReqNotify(true), "ibv_req_notify_cq(solicited_only=1)")
	if cq.Channel() != ch {
		e.Errorf("CQ.Channel() is not the channel it was created with")
	}
}

// scChannelNoEventPending runs the scenario channel/no-event-pending.
func scChannelNoEventPending(e *Env) {
	ch := e.Channel()
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 4, Channel: ch})
	e.Must(cq.ReqNotify(false), "ibv_req_notify_cq")
	_, err := ch.GetEvent(10 * time.Millisecond)
	e.ExpectErrno(err, verbs.EAGAIN, "GetEvent with no completion")
}

// scChannelDestroyBusyWhileCQ runs the scenario channel/destroy-busy-while-cq.
func scChannelDestroyBusyWhileCQ(e *Env) {
	ch, err := e.Ctx.CreateCompChannel()
	e.Must(err, "ibv_create_comp_channel")
	a, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 4, Channel: ch})
	e.Must(err, "ibv_create_cq on the channel")
	b, err := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 4, Channel: ch})
	e.Must(err, "second ibv_create_cq on the channel")
	e.ExpectErrno(ch.Destroy(), verbs.EBUSY, "ibv_destroy_comp_channel with 2 CQs")
	e.Must(a.Destroy(), "ibv_destroy_cq")
	e.ExpectErrno(ch.Destroy(), verbs.EBUSY, "ibv_destroy_comp_channel with 1 CQ")
	e.Must(b.Destroy(), "ibv_destroy_cq")
	e.Must(ch.Destroy(), "ibv_destroy_comp_channel with no CQ")
}
