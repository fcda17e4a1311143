package verbstest

import "github.com/vsh-rdma/vsh/verbs"

// The error state: the first completion says what went wrong, the flood of
// IBV_WC_WR_FLUSH_ERR after it only that the QP is in ERR
// (reference/rdma-core-examples.md §5, error 14).

const (
	srcFlushSQ = "sw/rxe/rxe_qp.c rxe_qp_error (Linux 6.1) sets every engine to ERROR; rxe_comp.c rxe_completer then drains the send queue with rxe_drain_resp_pkts(qp, true), completing every WR still queued with IB_WC_WR_FLUSH_ERR through do_complete, which posts an error completion even for an unsignaled WR (IBA 10.7.3.1)"
	srcFlushRQ = "sw/rxe/rxe_resp.c (Linux 6.1): in the ERROR state get_req drops queued packets and check_resource completes every posted receive with IB_WC_WR_FLUSH_ERR, in order (do_complete)"
)

// dataFlushScenarios are this file's scenarios, each Run a named function.
var dataFlushScenarios = []Scenario{
	{
		Name:   "flush/first-completion-explains",
		Source: srcFlushSQ + "; " + srcFlushRQ + "; the WRITE with a bad rkey is NAKed (rxe_resp.c check_rkey, class C), so both QPs enter ERR",
		Needs:  CapDataPath,
		Run:    scFlushFirstCompletionExplains,
	},
	{
		Name:   "flush/local-error-spares-the-peer",
		Source: srcFlushSQ + "; a bad lkey fails in the requester (rxe_req.c finish_packet → copy_data → IB_WC_LOC_QP_OP_ERR) before any packet leaves, so the peer sees nothing and stays RTS with its receives",
		Needs:  CapDataPath,
		Run:    scFlushLocalErrorSparesThePeer,
	},
	{
		Name:   "flush/modify-to-err-flushes-receives",
		Source: srcFlushRQ + "; ibv_modify_qp to IBV_QPS_ERR runs rxe_qp_error (rxe_qp.c rxe_qp_from_attr)",
		Needs:  CapDataPath,
		Run:    scFlushModifyToErrFlushesReceives,
	},
	{
		Name:   "flush/modify-to-err-flushes-sends",
		Source: srcFlushSQ + "; SENDs to a peer in RESET stay unacknowledged (rxe_recv.c check_type_state drops them; retry_cnt 7 retries for ever, rxe_comp.c COMPST_ERROR_RETRY) until the QP is moved to ERR",
		Needs:  CapDataPath,
		Run:    scFlushModifyToErrFlushesSends,
	},
	{
		Name:   "flush/post-send-in-err",
		Source: srcDoorbell + "; a WR posted in ERR is taken by rxe_req.c rxe_requester in QP_STATE_ERROR and completed IB_WC_WR_FLUSH_ERR, unsignaled or not (rxe_comp.c do_complete)",
		Needs:  CapDataPath,
		Run:    scFlushPostSendInErr,
	},
	{
		Name:   "flush/reset-discards-without-completions",
		Source: "sw/rxe/rxe_qp.c rxe_qp_reset (Linux 6.1): moving a QP to RESET runs its tasks in the RESET state, which drop queued receives (rxe_resp.c rxe_drain_req_pkts(qp, false)) and sends (rxe_comp.c rxe_drain_resp_pkts(qp, false)) without a completion, then empties the send queue (rxe_queue_reset)",
		Needs:  CapDataPath,
		Run:    scFlushResetDiscardsWithoutCompletions,
	},
}

func init() {
	registerAll(dataFlushScenarios)
}

// scFlushFirstCompletionExplains runs the scenario flush/first-completion-explains.
func scFlushFirstCompletionExplains(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	for i := 0; i < 3; i++ {
		e.recv(l.b, uint64(11+i), sgeAt(rbuf, i*1024, 1024))
	}
	send := func(id uint64, f verbs.SendFlags) verbs.SendWR {
		return verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: f, SGList: []verbs.SGE{sgeAt(local, 0, 64)}}
	}
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)},
		RemoteAddr: remote.Addr(), RKey: remote.RKey() ^ 0xff}, send(2, 0), send(3, 0), send(4, verbs.SendSignaled))
	wcs := e.waitWCs(l.acq, 4, "WRITE with a bad rkey, then three SENDs")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2, 3, 4},
		[]verbs.WCStatus{verbs.WCRemAccessErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "requester")
	wcs = e.waitWCs(l.bcq, 3, "the responder's receives")
	e.expectStatuses(wcs, l.b.Num(), []uint64{11, 12, 13},
		[]verbs.WCStatus{verbs.WCWRFlushErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "responder")
	e.expectNoWC(l.acq, "requester after the flush")
	e.expectNoWC(l.bcq, "responder after the flush")
	if !zero(rbuf.Bytes()) {
		e.Errorf("a flushed receive buffer was written")
	}
}

// scFlushLocalErrorSparesThePeer runs the scenario flush/local-error-spares-the-peer.
func scFlushLocalErrorSparesThePeer(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 11, sgeAt(rbuf, 0, 4096))
	bad := sgeAt(local, 0, 64)
	bad.LKey ^= 0xff
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, SGList: []verbs.SGE{bad}},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(local, 0, 64)}},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: rbuf.Addr(), RKey: 1})
	wcs := e.waitWCs(l.acq, 3, "unsignaled SEND with a bad lkey, then two more")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2, 3}, []verbs.WCStatus{verbs.WCLocQPOpErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester")
	e.expectNoWC(l.bcq, "the peer")
	if s := e.State(l.b); s != verbs.QPSRTS {
		e.Errorf("the peer is in %v; want RTS (nothing reached it)", s)
	}
}

// scFlushModifyToErrFlushesReceives runs the scenario flush/modify-to-err-flushes-receives.
func scFlushModifyToErrFlushesReceives(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	rbuf := e.MR(l.bpd, 4096, accLocal)
	ids := []uint64{21, 22, 23, 24}
	for i, id := range ids {
		e.recv(l.b, id, sgeAt(rbuf, i*64, 64))
	}
	e.expectNoWC(l.bcq, "posted receives before the QP leaves RTS")
	e.toState(l.b, verbs.QPSErr)
	wcs := e.waitWCs(l.bcq, 4, "receives of a QP moved to ERR")
	e.expectStatuses(wcs, l.b.Num(), ids, []verbs.WCStatus{verbs.WCWRFlushErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "flushed receives")
	e.expectNoWC(l.acq, "the peer")
}

// scFlushModifyToErrFlushesSends runs the scenario flush/modify-to-err-flushes-sends.
func scFlushModifyToErrFlushesSends(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.Timeout = shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	e.toState(l.b, verbs.QPSReset)
	for id := uint64(1); id <= 3; id++ {
		e.post(l.a, verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}})
	}
	e.expectNoWC(l.acq, "SENDs retried towards a peer in RESET (retry_cnt 7)")
	e.toState(l.a, verbs.QPSErr)
	wcs := e.waitWCs(l.acq, 3, "SENDs of a QP moved to ERR")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2, 3}, []verbs.WCStatus{verbs.WCWRFlushErr, verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "flushed sends")
}

// scFlushPostSendInErr runs the scenario flush/post-send-in-err.
func scFlushPostSendInErr(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	e.toState(l.a, verbs.QPSErr)
	e.post(l.a, verbs.SendWR{WRID: 5, Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(local, 0, 64)}},
		verbs.SendWR{WRID: 6, Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 2, "unsignaled WRs posted in ERR")
	e.expectStatuses(wcs, l.a.Num(), []uint64{5, 6}, []verbs.WCStatus{verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "WRs posted in ERR")
	if !zero(remote.Bytes()) {
		e.Errorf("a WRITE posted in ERR reached the peer's memory")
	}
}

// scFlushResetDiscardsWithoutCompletions runs the scenario flush/reset-discards-without-completions.
func scFlushResetDiscardsWithoutCompletions(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	for i := 0; i < 3; i++ {
		e.recv(l.b, uint64(30+i), sgeAt(rbuf, i*64, 64))
	}
	e.toState(l.b, verbs.QPSReset)
	e.expectNoWC(l.bcq, "receives of a QP moved to RESET")
	// a's SENDs now go unanswered; RESET discards them too.
	for id := uint64(1); id <= 2; id++ {
		e.post(l.a, verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}})
	}
	e.toState(l.a, verbs.QPSReset)
	e.expectNoWC(l.acq, "sends of a QP moved to RESET")
}
