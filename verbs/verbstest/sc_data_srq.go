package verbstest

import (
	"github.com/vsh-rdma/vsh/verbs"
)

// Shared receive queues on the data path.

const srcSRQWQE = "sw/rxe/rxe_resp.c check_resource → get_srq_wqe (Linux 6.1): a QP attached to an SRQ takes the SRQ's head WQE for every message that needs one; the completion goes to that QP's receive CQ with its qp_num (do_complete)"

// dataSrqScenarios are this file's scenarios, each Run a named function.
var dataSrqScenarios = []Scenario{
	{
		Name:   "srq/shared-by-many-qps",
		Source: srcSRQWQE + "; srq_pingpong.c maps completions to senders by qp_num the same way",
		Needs:  CapDataPath,
		Run:    scSRQSharedByManyQPs,
	},
	{
		Name:   "srq/limit-reached-event",
		Source: "sw/rxe/rxe_resp.c get_srq_wqe (Linux 6.1): after taking a WQE, when a limit is armed and fewer than srq_limit WQEs remain, the limit is disarmed (srq->limit = 0) and IB_EVENT_SRQ_LIMIT_REACHED is raised once (uverbs: IBV_EVENT_SRQ_LIMIT_REACHED naming the SRQ); rxe_query_srq then reports srq_limit 0; ibv_modify_srq(3)",
		Needs:  CapDataPath,
		Run:    scSRQLimitReachedEvent,
	},
	{
		Name:   "srq/qp-error-leaves-srq-wqes",
		Source: "sw/rxe/rxe_resp.c check_resource (Linux 6.1): a QP in ERROR flushes only its own receive queue; with an SRQ it flushes nothing (RESPST_EXIT), so the SRQ's WQEs stay for the other QPs; " + srcSRQWQE,
		Needs:  CapDataPath,
		Run:    scSRQQPErrorLeavesSRQWQEs,
	},
	{
		Name:   "srq/empty-srq-rnr",
		Source: "sw/rxe/rxe_resp.c get_srq_wqe (Linux 6.1): an empty SRQ is RESPST_ERR_RNR, an RNR NAK on RC; rxe_comp.c COMPST_RNR_RETRY with rnr_retry 0: IB_WC_RNR_RETRY_EXC_ERR",
		Needs:  CapDataPath,
		Run:    scSRQEmptySRQRNR,
	},
	{
		Name:   "srq/ud-qps-share",
		Source: srcSRQWQE + "; UD adds the 40-byte header and src_qp (rxe_resp.c execute, do_complete)",
		Needs:  CapDataPath,
		Run:    scSRQUDQPsShare,
	},
}

func init() {
	registerAll(dataSrqScenarios)
}

// scSRQSharedByManyQPs runs the scenario srq/shared-by-many-qps.
func scSRQSharedByManyQPs(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 16, MaxSGE: 1})
	rcq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 64})
	rbuf := e.MR(e.PD(), 16*256, accLocal)
	for i := 0; i < 12; i++ {
		_, err := srq.PostRecv([]verbs.RecvWR{{WRID: uint64(100 + i), SGList: []verbs.SGE{sgeAt(rbuf, i*256, 256)}}})
		e.Must(err, "ibv_post_srq_recv")
	}
	const links, msgs = 3, 3
	var ls []*link
	for i := 0; i < links; i++ {
		ls = append(ls, e.link(verbs.QPTypeRC, linkCfg{bSRQ: srq, bCQ: rcq}))
	}
	local := e.MR(e.PD(), 4096, accAll)
	for i, l := range ls {
		for m := 0; m < msgs; m++ {
			off := (i*msgs + m) * 64
			pattern(local.Bytes()[off:off+64], byte(16*i+m))
			e.post(l.a, verbs.SendWR{WRID: uint64(m), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, off, 10+i+m)}})
		}
		e.waitWCs(l.acq, msgs, "sender %d", i)
	}
	wcs := e.waitWCs(rcq, links*msgs, "receives from %d QPs sharing one SRQ", links)
	next := map[uint32]int{} // per receiving QP: which message comes next
	idx := map[uint32]int{}
	for i, l := range ls {
		idx[l.b.Num()] = i
	}
	usedWR := map[uint64]bool{}
	for _, wc := range wcs {
		i, ok := idx[wc.QPNum]
		if !ok {
			e.Errorf("receive completion %s names QP %#x, none of the SRQ's QPs", fmtWC(wc), wc.QPNum)
			continue
		}
		m := next[wc.QPNum]
		next[wc.QPNum]++
		n := 10 + i + m
		e.expectWC(wc, verbs.WC{WRID: wc.WRID, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(n), QPNum: ls[i].b.Num(), Flags: verbs.WCGRH},
			"receive on QP %d", i)
		slot := int(wc.WRID) - 100
		if slot < 0 || slot >= 12 || usedWR[wc.WRID] {
			e.Errorf("receive completion %s: wr_id is not an unused SRQ WQE", fmtWC(wc))
			continue
		}
		usedWR[wc.WRID] = true
		e.expectBytes(rbuf.Bytes()[slot*256:slot*256+n], patterned(n, byte(16*i+m)), "message %d of QP %d in SRQ WQE %d", m, i, wc.WRID)
	}
	// The SRQ hands out its WQEs in order, whoever asks.
	for id := uint64(100); id < uint64(100+links*msgs); id++ {
		if !usedWR[id] {
			e.Errorf("SRQ WQE %d was not used; the SRQ is a FIFO (get_srq_wqe takes queue_head)", id)
		}
	}
}

// scSRQLimitReachedEvent runs the scenario srq/limit-reached-event.
func scSRQLimitReachedEvent(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 16, MaxSGE: 1})
	rbuf := e.MR(e.PD(), 4096, accLocal)
	for i := 0; i < 8; i++ {
		_, err := srq.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: []verbs.SGE{sgeAt(rbuf, i*256, 256)}}})
		e.Must(err, "ibv_post_srq_recv")
	}
	e.Must(srq.Modify(verbs.SRQAttr{SRQLimit: 4}, verbs.SRQAttrLimit), "ibv_modify_srq(srq_limit 4)")
	l := e.link(verbs.QPTypeRC, linkCfg{bSRQ: srq})
	local := e.MR(l.apd, 4096, accAll)
	send := func(id uint64) {
		e.post(l.a, verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
		e.waitWCs(l.acq, 1, "SEND %d", id)
		e.waitWCs(l.bcq, 1, "receive %d", id)
	}
	for id := uint64(1); id <= 4; id++ {
		send(id) // 8 → 4 WQEs left: not fewer than 4
	}
	if ev, ok := e.waitAsync(verbs.EventSRQLimitReached, e.quiet()); ok {
		e.Errorf("%v with 4 WQEs left and srq_limit 4; want none until fewer than 4 remain", ev)
	}
	send(5) // 3 left
	ev, ok := e.waitAsync(verbs.EventSRQLimitReached, e.Opts.Wait)
	if !ok {
		e.Fatalf("no IBV_EVENT_SRQ_LIMIT_REACHED after the SRQ fell below its limit")
	}
	if ev.SRQ != srq {
		e.Errorf("the event names %v; want the SRQ", ev)
	}
	a, err := srq.Query()
	e.Must(err, "ibv_query_srq")
	if a.SRQLimit != 0 {
		e.Errorf("srq_limit after the event = %d; want 0 (the limit disarms itself)", a.SRQLimit)
	}
	send(6)
	if ev, ok := e.waitAsync(verbs.EventSRQLimitReached, e.quiet()); ok {
		e.Errorf("a second %v without re-arming the limit", ev)
	}
}

// scSRQQPErrorLeavesSRQWQEs runs the scenario srq/qp-error-leaves-srq-wqes.
func scSRQQPErrorLeavesSRQWQEs(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	rbuf := e.MR(e.PD(), 4096, accLocal)
	for i := 0; i < 2; i++ {
		_, err := srq.PostRecv([]verbs.RecvWR{{WRID: uint64(50 + i), SGList: []verbs.SGE{sgeAt(rbuf, i*1024, 1024)}}})
		e.Must(err, "ibv_post_srq_recv")
	}
	l1 := e.link(verbs.QPTypeRC, linkCfg{bSRQ: srq})
	l2 := e.link(verbs.QPTypeRC, linkCfg{bSRQ: srq})
	e.toState(l1.b, verbs.QPSErr)
	e.expectNoWC(l1.bcq, "a QP on an SRQ moved to ERR")
	local := e.MR(e.PD(), 4096, accAll)
	pattern(local.Bytes()[:48], 0x2c)
	e.post(l2.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 48)}})
	e.waitWCs(l2.acq, 1, "SEND to the other QP on the SRQ")
	wcs := e.waitWCs(l2.bcq, 1, "receive through the SRQ")
	e.expectWC(wcs[0], verbs.WC{WRID: 50, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 48, QPNum: l2.b.Num(), Flags: verbs.WCGRH}, "the first SRQ WQE")
	e.expectBytes(rbuf.Bytes()[:48], patterned(48, 0x2c), "the SRQ WQE's buffer")
}

// scSRQEmptySRQRNR runs the scenario srq/empty-srq-rnr.
func scSRQEmptySRQRNR(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	l := e.link(verbs.QPTypeRC, linkCfg{bSRQ: srq, aAttr: func(a *verbs.QPAttr) { a.RNRRetry = 0 }})
	local := e.MR(l.apd, 4096, accAll)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	wcs := e.waitWCs(l.acq, 1, "SEND to a QP whose SRQ is empty")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRNRRetryExcErr, QPNum: l.a.Num()}, "requester")
	e.expectState(l.b, verbs.QPSRTS, "the responder (RNR is not an error for it)")
}

// scSRQUDQPsShare runs the scenario srq/ud-qps-share.
func scSRQUDQPsShare(e *Env) {
	srq := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 8, MaxSGE: 1})
	rcq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
	rbuf := e.MR(e.PD(), 4096, accLocal)
	for i := 0; i < 2; i++ {
		_, err := srq.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: []verbs.SGE{sgeAt(rbuf, i*512, 512)}}})
		e.Must(err, "ibv_post_srq_recv")
	}
	l1 := e.link(verbs.QPTypeUD, linkCfg{bSRQ: srq, bCQ: rcq})
	l2 := e.link(verbs.QPTypeUD, linkCfg{bSRQ: srq, bCQ: rcq})
	local := e.MR(e.PD(), 4096, accAll)
	e.post(l1.a, l1.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 20)))
	e.waitWCs(l1.acq, 1, "first UD sender")
	e.post(l2.a, l2.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 30)))
	e.waitWCs(l2.acq, 1, "second UD sender")
	wcs := e.waitWCs(rcq, 2, "datagrams to two UD QPs on one SRQ")
	for i, l := range []*link{l1, l2} {
		e.expectWC(wcs[i], verbs.WC{WRID: uint64(i), Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(udGRH + 20 + 10*i),
			QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "datagram %d", i+1)
	}
}
