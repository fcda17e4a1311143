package verbstest

import (
	"github.com/vsh-rdma/vsh/verbs"
)

// Completion channels, solicited events and CQ overflow.

const (
	srcNotify    = "sw/rxe/rxe_cq.c rxe_cq_post (Linux 6.1): after queuing a CQE, a CQ armed with IB_CQ_NEXT_COMP, or with IB_CQ_SOLICITED and a solicited CQE, is disarmed (cq->notify = 0) and its completion handler runs once, which uverbs turns into one event on the CQ's channel; rxe_verbs.c rxe_req_notify_cq arms it; ibv_req_notify_cq(3), ibv_get_cq_event(3), ibv_ack_cq_events(3)"
	srcSolicited = "sw/rxe/rxe_req.c init_req_packet (Linux 6.1) sets the BTH SE bit on the last packet of a SEND or an RDMA WRITE with immediate posted with IBV_SEND_SOLICITED; rxe_resp.c do_complete passes bth_se(pkt) to rxe_cq_post as 'solicited', and 1 when it flushes a receive without a packet; " + srcNotify
)

// notifyLink builds an RC link whose receiving side's CQ uses a
// completion channel, and a buffer for it.
func (e *Env) notifyLink() (*link, verbs.CompChannel, verbs.MR, verbs.MR) {
	ch := e.Channel()
	bcq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 64, Channel: ch})
	l := e.link(verbs.QPTypeRC, linkCfg{bCQ: bcq})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accAll)
	for i := 0; i < 8; i++ {
		e.recv(l.b, uint64(200+i), sgeAt(rbuf, i*256, 256))
	}
	return l, ch, local, rbuf
}

func (l *link) sendFlags(e *Env, local verbs.MR, id uint64, f verbs.SendFlags) {
	e.post(l.a, verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | f, SGList: []verbs.SGE{sgeAt(local, 0, 16)}})
	e.waitWCs(l.acq, 1, "SEND %d", id)
}

// dataEventsScenarios are this file's scenarios, each Run a named function.
var dataEventsScenarios = []Scenario{
	{
		Name:   "channel/event-after-arm",
		Source: srcNotify,
		Needs:  CapDataPath,
		Run:    scChannelEventAfterArm,
	},
	{
		Name:   "channel/no-event-without-arm",
		Source: srcNotify + " (an unarmed CQ queues the CQE and raises nothing)",
		Needs:  CapDataPath,
		Run:    scChannelNoEventWithoutArm,
	},
	{
		Name:   "channel/one-event-per-arm",
		Source: srcNotify + " (the arm is consumed by the first CQE)",
		Needs:  CapDataPath,
		Run:    scChannelOneEventPerArm,
	},
	{
		Name:   "channel/shared-by-two-cqs",
		Source: srcNotify + "; ibv_create_cq(3): several CQs may share a channel, and ibv_get_cq_event returns the CQ the event is for",
		Needs:  CapDataPath,
		Run:    scChannelSharedByTwoCQs,
	},
	{
		Name:   "channel/solicited-only-skips-unsolicited",
		Source: srcSolicited,
		Needs:  CapDataPath,
		Run:    scChannelSolicitedOnlySkipsUnsolicited,
	},
	{
		Name:   "channel/solicited-write-with-imm",
		Source: srcSolicited,
		Needs:  CapDataPath,
		Run:    scChannelSolicitedWriteWithIMM,
	},
	{
		Name:   "channel/solicited-only-flush-raises-event",
		Source: srcSolicited + " — so flushed receives, error completions, raise the event",
		Needs:  CapDataPath,
		Run:    scChannelSolicitedOnlyFlushRaisesEvent,
	},
	{
		Name:   "channel/solicited-only-ignores-send-completions",
		Source: "sw/rxe/rxe_comp.c do_complete (Linux 6.1) posts every send-queue CQE with rxe_cq_post(qp->scq, &cqe, 0): never solicited, successful or not, so a send CQ armed for solicited completions gets no event from them (rxe differs here from IBA, where an error completion always raises one); " + srcNotify,
		Needs:  CapDataPath,
		Run:    scChannelSolicitedOnlyIgnoresSendCompletions,
	},
	{
		Name:   "channel/next-arm-not-narrowed",
		Source: "sw/rxe/rxe_verbs.c rxe_req_notify_cq (Linux 6.1): once armed with IB_CQ_NEXT_COMP, a later solicited-only arm does not narrow it (if (cq->notify != IB_CQ_NEXT_COMP) cq->notify = flags); " + srcNotify,
		Needs:  CapDataPath,
		Run:    scChannelNextArmNotNarrowed,
	},
	{
		Name:   "cq/overflow-cq-err-event",
		Source: "sw/rxe/rxe_cq.c rxe_cq_post (Linux 6.1): a full CQ refuses the CQE (-EBUSY) and raises IB_EVENT_CQ_ERR (uverbs: IBV_EVENT_CQ_ERR naming the CQ); rxe_resp.c do_complete then returns RESPST_ERR_CQ_OVERFLOW, class G, and the receiving QP goes to ERR (rxe_qp_error); the CQE is lost and the CQ keeps what it had; a CQ of depth 1 holds 1 (rxe_queue_init)",
		Needs:  CapDataPath,
		Run:    scCQOverflowCQErrEvent,
	},
}

func init() {
	registerAll(dataEventsScenarios)
}

// scChannelEventAfterArm runs the scenario channel/event-after-arm.
func scChannelEventAfterArm(e *Env) {
	l, ch, local, _ := e.notifyLink()
	e.Must(l.bcq.ReqNotify(false), "ibv_req_notify_cq(0)")
	l.sendFlags(e, local, 1, 0)
	e.expectCQEvent(ch, l.bcq, "a receive completion on an armed CQ")
	wcs := e.waitWCs(l.bcq, 1, "the completion behind the event")
	e.expectWC(wcs[0], verbs.WC{WRID: 200, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 16, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
}

// scChannelNoEventWithoutArm runs the scenario channel/no-event-without-arm.
func scChannelNoEventWithoutArm(e *Env) {
	l, ch, local, _ := e.notifyLink()
	l.sendFlags(e, local, 1, verbs.SendSolicited)
	e.waitWCs(l.bcq, 1, "receive on an unarmed CQ")
	e.expectNoCQEvent(ch, "completion on a CQ never armed")
}

// scChannelOneEventPerArm runs the scenario channel/one-event-per-arm.
func scChannelOneEventPerArm(e *Env) {
	l, ch, local, _ := e.notifyLink()
	e.Must(l.bcq.ReqNotify(false), "ibv_req_notify_cq(0)")
	l.sendFlags(e, local, 1, 0)
	l.sendFlags(e, local, 2, 0)
	e.expectCQEvent(ch, l.bcq, "two completions after one arm")
	e.expectNoCQEvent(ch, "the second completion of one arm")
	e.waitWCs(l.bcq, 2, "both receives")
	e.Must(l.bcq.ReqNotify(false), "ibv_req_notify_cq(0) again")
	l.sendFlags(e, local, 3, 0)
	e.expectCQEvent(ch, l.bcq, "a completion after re-arming")
}

// scChannelSharedByTwoCQs runs the scenario channel/shared-by-two-cqs.
func scChannelSharedByTwoCQs(e *Env) {
	ch := e.Channel()
	acq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16, Channel: ch})
	bcq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16, Channel: ch})
	l := e.link(verbs.QPTypeRC, linkCfg{aCQ: acq, bCQ: bcq})
	local := e.MR(l.apd, 4096, accAll)
	e.recv(l.b, 2, sgeAt(e.MR(l.bpd, 4096, accLocal), 0, 4096))
	e.Must(bcq.ReqNotify(false), "arm the receiver's CQ")
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	e.expectCQEvent(ch, bcq, "the receive completion (only the receiver's CQ is armed)")
	e.expectNoCQEvent(ch, "the unarmed sender's CQ")
	e.waitWCs(acq, 1, "the send completion")
}

// scChannelSolicitedOnlySkipsUnsolicited runs the scenario channel/solicited-only-skips-unsolicited.
func scChannelSolicitedOnlySkipsUnsolicited(e *Env) {
	l, ch, local, _ := e.notifyLink()
	e.Must(l.bcq.ReqNotify(true), "ibv_req_notify_cq(solicited_only=1)")
	l.sendFlags(e, local, 1, 0)
	e.waitWCs(l.bcq, 1, "an unsolicited receive")
	e.expectNoCQEvent(ch, "an unsolicited SEND on a CQ armed for solicited completions")
	l.sendFlags(e, local, 2, verbs.SendSolicited)
	e.expectCQEvent(ch, l.bcq, "a solicited SEND")
	e.waitWCs(l.bcq, 1, "the solicited receive")
}

// scChannelSolicitedWriteWithIMM runs the scenario channel/solicited-write-with-imm.
func scChannelSolicitedWriteWithIMM(e *Env) {
	l, ch, local, rbuf := e.notifyLink()
	e.Must(l.bcq.ReqNotify(true), "ibv_req_notify_cq(solicited_only=1)")
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWriteWithImm, Flags: verbs.SendSignaled | verbs.SendSolicited, Imm: 9,
		SGList: []verbs.SGE{sgeAt(local, 0, 32)}, RemoteAddr: rbuf.Addr() + 3000, RKey: rbuf.RKey()})
	e.waitWCs(l.acq, 1, "WRITE with immediate, solicited")
	e.expectCQEvent(ch, l.bcq, "a solicited RDMA WRITE with immediate")
	wcs := e.waitWCs(l.bcq, 1, "the receive it consumed")
	e.expectWC(wcs[0], verbs.WC{WRID: 200, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecvRDMAWithImm, ByteLen: 32, Imm: 9, QPNum: l.b.Num(), Flags: verbs.WCGRH | verbs.WCWithImm}, "receive")
}

// scChannelSolicitedOnlyFlushRaisesEvent runs the scenario channel/solicited-only-flush-raises-event.
func scChannelSolicitedOnlyFlushRaisesEvent(e *Env) {
	l, ch, _, _ := e.notifyLink()
	e.Must(l.bcq.ReqNotify(true), "ibv_req_notify_cq(solicited_only=1)")
	e.toState(l.b, verbs.QPSErr)
	e.expectCQEvent(ch, l.bcq, "receives flushed on a CQ armed for solicited completions")
	wcs := e.waitWCs(l.bcq, 8, "flushed receives")
	for _, wc := range wcs {
		if wc.Status != verbs.WCWRFlushErr {
			e.Errorf("flushed receive %s; want IBV_WC_WR_FLUSH_ERR", fmtWC(wc))
		}
	}
}

// scChannelSolicitedOnlyIgnoresSendCompletions runs the scenario channel/solicited-only-ignores-send-completions.
func scChannelSolicitedOnlyIgnoresSendCompletions(e *Env) {
	ch := e.Channel()
	acq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16, Channel: ch})
	l := e.link(verbs.QPTypeRC, linkCfg{aCQ: acq})
	local := e.MR(l.apd, 4096, accAll)
	e.recv(l.b, 2, sgeAt(e.MR(l.bpd, 4096, accLocal), 0, 4096))
	e.Must(acq.ReqNotify(true), "ibv_req_notify_cq(solicited_only=1) on the send CQ")
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | verbs.SendSolicited, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	e.waitWCs(acq, 1, "a solicited SEND's own completion")
	e.expectNoCQEvent(ch, "the sender's completion of a solicited SEND")
	bad := sgeAt(local, 0, 8)
	bad.LKey ^= 0xff
	e.post(l.a, verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{bad}})
	e.waitWCs(acq, 1, "a SEND that fails locally")
	e.expectNoCQEvent(ch, "an error completion on a send CQ armed for solicited completions")
}

// scChannelNextArmNotNarrowed runs the scenario channel/next-arm-not-narrowed.
func scChannelNextArmNotNarrowed(e *Env) {
	l, ch, local, _ := e.notifyLink()
	e.Must(l.bcq.ReqNotify(false), "ibv_req_notify_cq(0)")
	e.Must(l.bcq.ReqNotify(true), "ibv_req_notify_cq(1)")
	l.sendFlags(e, local, 1, 0)
	e.expectCQEvent(ch, l.bcq, "an unsolicited completion on a CQ armed for any, then for solicited")
}

// scCQOverflowCQErrEvent runs the scenario cq/overflow-cq-err-event.
func scCQOverflowCQErrEvent(e *Env) {
	small := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 1})
	if small.CQE() != 1 {
		e.Fatalf("ibv_create_cq(1) gave %d entries; want 1", small.CQE())
	}
	l := e.link(verbs.QPTypeRC, linkCfg{bCQ: small, aAttr: func(a *verbs.QPAttr) { a.RetryCnt, a.Timeout = 1, shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 1, sgeAt(rbuf, 0, 1024))
	e.recv(l.b, 2, sgeAt(rbuf, 1024, 1024))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	e.waitWCs(l.acq, 1, "first SEND")
	e.post(l.a, verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	ev, ok := e.waitAsync(verbs.EventCQErr, e.Opts.Wait)
	if !ok {
		e.Fatalf("no IBV_EVENT_CQ_ERR after a second completion for a CQ of depth 1")
	}
	if ev.CQ != small {
		e.Errorf("IBV_EVENT_CQ_ERR names %v; want the full CQ", ev)
	}
	e.expectState(l.b, verbs.QPSErr, "the QP whose receive CQ overflowed")
	wcs := e.waitWCs(small, 1, "the overflowed CQ")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 8, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "the CQE that fitted")
	e.expectNoWC(small, "the overflowed CQ after its one CQE")
}
