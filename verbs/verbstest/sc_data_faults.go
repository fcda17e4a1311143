package verbstest

import (
	"github.com/vsh-rdma/vsh/verbs"
)

// faults returns the provider's FaultInjector and removes every rule when
// the scenario ends.
func (e *Env) faults() verbs.FaultInjector {
	fi, ok := e.P.(verbs.FaultInjector)
	if !ok {
		e.Fatalf("the provider does not implement verbs.FaultInjector")
	}
	e.Defer(fi.ClearFaults)
	return fi
}

func (e *Env) addFault(fi verbs.FaultInjector, r verbs.FaultRule) {
	if _, err := fi.AddFault(r); err != nil {
		e.Fatalf("AddFault(%+v): %v", r, err)
	}
}

// dataFaultsScenarios are this file's scenarios, each Run a named function.
var dataFaultsScenarios = []Scenario{
	{
		Name:   "fault/cut-link-retry-exceeded",
		Source: "sw/rxe/rxe_comp.c (Linux 6.1): with no response at all, every retransmit timeout (4.096 µs × 2^timeout) is COMPST_ERROR_RETRY; after retry_cnt retries the WR completes IB_WC_RETRY_EXC_ERR and the QP goes to ERR; the peer saw nothing and stays RTS",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultCutLinkRetryExceeded,
	},
	{
		Name:   "fault/lost-packet-go-back-n",
		Source: "sw/rxe/rxe_resp.c check_psn (Linux 6.1): a packet after a gap gets one NAK PSN sequence error carrying the expected PSN; rxe_comp.c check_ack sets comp.psn to it and retries (COMPST_ERROR_RETRY); rxe_req.c req_retry goes back to that PSN inside the first WQE (retry_first_write_send) — Go-Back-N; the message is placed once and completes once",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultLostPacketGoBackN,
	},
	{
		Name:   "fault/duplicates-delivered-once",
		Source: "sw/rxe/rxe_resp.c check_psn/duplicate_request (Linux 6.1): a request with a PSN older than expected is a duplicate — a SEND or WRITE is only re-ACKed, never placed or completed again (C9-105)",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultDuplicatesDeliveredOnce,
	},
	{
		Name:   "fault/corrupt-packet-dropped-then-retransmitted",
		Source: "sw/rxe/rxe_recv.c rxe_rcv (Linux 6.1): a packet whose ICRC does not match (rxe_icrc_check) is dropped; the sender's retransmit timer (rxe_comp.c COMPST_ERROR_RETRY) resends it and the SEND completes",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultCorruptPacketDroppedThenRetransmitted,
	},
	{
		Name:   "fault/lost-ack-covered-by-next",
		Source: "sw/rxe/rxe_comp.c check_psn (Linux 6.1): an ACK whose PSN is past the oldest WQE's last_psn completes that WQE too (coalesced, implicit acknowledgement)",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultLostACKCoveredByNext,
	},
	{
		Name:   "fault/lost-read-response-retried",
		Source: "sw/rxe/rxe_comp.c (Linux 6.1): a READ without its response times out (COMPST_ERROR_RETRY) and rxe_req.c req_retry re-issues it; the responder answers the duplicate READ from its resources (rxe_resp.c duplicate_request) and the data arrives once",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultLostReadResponseRetried,
	},
	{
		Name:   "fault/uc-lost-packet-loses-messages",
		Source: "sw/rxe/rxe_resp.c (Linux 6.1) on UC: a PSN gap sets drop_msg and drops the rest of the message (check_psn); the next message's ONLY packet then meets resp.opcode still SEND_FIRST and is dropped as well by do_class_d1e_error (which resets the half-filled receive WQE for reuse); the message after that lands in that same WQE — UC loses whole messages and never completes a partial one",
		Needs:  CapDataPath | CapFaults,
		Run:    scFaultUCLostPacketLosesMessages,
	},
}

func init() {
	registerAll(dataFaultsScenarios)
}

// scFaultCutLinkRetryExceeded runs the scenario fault/cut-link-retry-exceeded.
func scFaultCutLinkRetryExceeded(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RetryCnt, a.Timeout = 2, shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	e.recv(l.b, 2, sgeAt(e.MR(l.bpd, 4096, accLocal), 0, 4096))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultCut})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}})
	wcs := e.waitWCs(l.acq, 1, "SEND over a cut link, retry_cnt 2")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRetryExcErr, QPNum: l.a.Num()}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester")
	e.expectNoWC(l.bcq, "the peer behind the cut")
	e.expectState(l.b, verbs.QPSRTS, "the peer behind the cut")
}

// scFaultLostPacketGoBackN runs the scenario fault/lost-packet-go-back-n.
func scFaultLostPacketGoBackN(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x4e)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.recv(l.b, 3, sgeAt(rbuf, 0, 4096))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "SEND_MIDDLE", Count: 1})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 3000)}})
	wcs := e.waitWCs(l.acq, 1, "a 3-packet SEND whose middle packet is lost once")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 3000, QPNum: l.a.Num()}, "requester")
	wcs = e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 3000, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(rbuf.Bytes()[:3000], local.Bytes()[:3000], "the message after Go-Back-N")
	e.expectNoWC(l.bcq, "a second delivery")
}

// scFaultDuplicatesDeliveredOnce runs the scenario fault/duplicates-delivered-once.
func scFaultDuplicatesDeliveredOnce(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x5e)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 2048))
	e.recv(l.b, 3, sgeAt(rbuf, 2048, 2048))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultDuplicate, Opcode: "SEND"})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 1500)}})
	e.waitWCs(l.acq, 1, "a SEND whose packets all arrive twice")
	wcs := e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 1500, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectNoWC(l.bcq, "the duplicates")
	e.expectBytes(rbuf.Bytes()[:1500], local.Bytes()[:1500], "the message")
	if !zero(rbuf.Bytes()[2048:]) {
		e.Errorf("a duplicate was placed in the second receive")
	}
}

// scFaultCorruptPacketDroppedThenRetransmitted runs the scenario fault/corrupt-packet-dropped-then-retransmitted.
func scFaultCorruptPacketDroppedThenRetransmitted(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.Timeout = shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x6e)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultCorrupt, Opcode: "SEND_ONLY", Count: 1})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 200)}})
	e.waitWCs(l.acq, 1, "SEND whose first transmission was corrupted")
	wcs := e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 200, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(rbuf.Bytes()[:200], local.Bytes()[:200], "the retransmitted message (not the corrupted one)")
}

// scFaultLostACKCoveredByNext runs the scenario fault/lost-ack-covered-by-next.
func scFaultLostACKCoveredByNext(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 1024))
	e.recv(l.b, 3, sgeAt(rbuf, 1024, 1024))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "ACKNOWLEDGE", Count: 1})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 16)}},
		verbs.SendWR{WRID: 4, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 16)}})
	wcs := e.waitWCs(l.acq, 2, "two SENDs, the first ACK lost")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 4}, []verbs.WCStatus{verbs.WCSuccess, verbs.WCSuccess}, "requester")
	e.waitWCs(l.bcq, 2, "two receives")
	e.expectNoWC(l.bcq, "duplicate deliveries")
}

// scFaultLostReadResponseRetried runs the scenario fault/lost-read-response-retried.
func scFaultLostReadResponseRetried(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.Timeout = shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(remote.Bytes(), 0x7e)
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "READ_RESPONSE", Count: 1})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 2500)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "a READ whose first response packet is lost")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 2500, QPNum: l.a.Num()}, "READ")
	e.expectBytes(local.Bytes()[:2500], remote.Bytes()[:2500], "the READ's data")
}

// scFaultUCLostPacketLosesMessages runs the scenario fault/uc-lost-packet-loses-messages.
func scFaultUCLostPacketLosesMessages(e *Env) {
	fi := e.faults()
	l := e.link(verbs.QPTypeUC, linkCfg{})
	local := e.MR(l.apd, 8192, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x8e)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.addFault(fi, verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "SEND_MIDDLE", Count: 1})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(local, 0, 3000)}},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(local, 4000, 100)}},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 5000, 200)}})
	e.waitWCs(l.acq, 1, "three UC SENDs")
	wcs := e.waitWCs(l.bcq, 1, "the one receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 200, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(rbuf.Bytes()[:200], local.Bytes()[5000:5200], "the third message")
}
