package verbstest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
)

// Every error completion from its real cause, with the status rxe gives.

const (
	srcRKey     = "sw/rxe/rxe_resp.c check_rkey (Linux 6.1): lookup_mr(qp->pd, access, rkey, RXE_LOOKUP_REMOTE) fails when no MR has that rkey, when the MR is in another PD or lacks the access (rxe_mr.c lookup_mr), and mr_check_range fails outside the MR; RESPST_ERR_RKEY_VIOLATION is class C on RC: NAK remote access error (AETH 0x62), the responder QP goes to ERR (do_class_ac_error, goto_error); the requester's completer turns the NAK into IB_WC_REM_ACCESS_ERR and moves its QP to ERR (rxe_comp.c check_ack, COMPST_ERROR)"
	srcQPAccess = "sw/rxe/rxe_resp.c check_op_valid (Linux 6.1): on RC a READ, WRITE or atomic the QP's qp_access_flags do not allow is RESPST_ERR_UNSUPPORTED_OPCODE, class C: NAK invalid request (AETH 0x61), responder QP to ERR; the requester completes IB_WC_REM_INV_REQ_ERR (rxe_comp.c check_ack) — not REM_ACCESS_ERR, which the MR's rights give"
	srcRdAtom0  = "sw/rxe/rxe_resp.c check_resource (Linux 6.1): a READ or atomic reaching a QP whose max_dest_rd_atomic is 0 is RESPST_ERR_TOO_MANY_RDMA_ATM_REQ, class C: NAK invalid request, so IB_WC_REM_INV_REQ_ERR at the requester (rxe_comp.c check_ack); rxe_qp_chk_attr accepts max_dest_rd_atomic 0"
	srcMalform  = "sw/rxe/rxe_resp.c send_data_in (Linux 6.1): copy_data into the receive WQE fails with -EINVAL when the message is longer than the WQE (rxe_mr.c copy_data: length > resid) or its lkey does not resolve to an MR with IB_ACCESS_LOCAL_WRITE (lookup_mr), and with -EFAULT outside the MR (rxe_mr_copy, mr_check_range); anything but -ENOSPC is RESPST_ERR_MALFORMED_WQE, class A for every QP type: the receive completes IB_WC_LOC_QP_OP_ERR and the receiving QP goes to ERR (do_class_ac_error, goto_error); on RC the NAK remote operational error (AETH 0x63) makes the sender's WR IB_WC_REM_OP_ERR (rxe_comp.c check_ack). rxe never reports IB_WC_LOC_LEN_ERR for a short receive buffer"
)

// remoteCase is one cause of an error an RC responder finds in a request.
type remoteCase struct {
	name     string
	op       verbs.WROpcode
	mrAcc    verbs.Access // the target MR's access; 0 means accAll
	qpAcc    verbs.Access // the responder QP's qp_access_flags, when qpAccSet
	qpAccSet bool
	otherPD  bool // the target MR is registered in another PD than the responder QP's
	badKey   bool // the rkey's key byte is wrong
	dereg    bool // the target MR is deregistered before the request
	destRd0  bool // the responder's max_dest_rd_atomic is 0
	off, n   int  // remote address offset from the MR's start, and length
	want     verbs.WCStatus
	source   string
}

var remoteCases = []remoteCase{
	{name: "rc-write-bad-rkey", op: verbs.WRRDMAWrite, badKey: true, n: 64, want: verbs.WCRemAccessErr, source: srcRKey},
	{name: "rc-read-bad-rkey", op: verbs.WRRDMARead, badKey: true, n: 64, want: verbs.WCRemAccessErr, source: srcRKey},
	{name: "rc-atomic-bad-rkey", op: verbs.WRAtomicFetchAndAdd, badKey: true, n: 8, want: verbs.WCRemAccessErr, source: srcRKey},
	{name: "rc-write-rkey-of-other-pd", op: verbs.WRRDMAWrite, otherPD: true, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_pd(mr) != pd)"},
	{name: "rc-read-rkey-of-other-pd", op: verbs.WRRDMARead, otherPD: true, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_pd(mr) != pd)"},
	{name: "rc-write-out-of-bounds", op: verbs.WRRDMAWrite, off: 4096 - 32, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_check_range)"},
	{name: "rc-write-before-mr-start", op: verbs.WRRDMAWrite, off: -64, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_check_range: iova < mr iova)"},
	{name: "rc-read-out-of-bounds", op: verbs.WRRDMARead, off: 4096 - 16, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_check_range)"},
	{name: "rc-atomic-out-of-bounds", op: verbs.WRAtomicCmpAndSwp, off: 4096, n: 8, want: verbs.WCRemAccessErr, source: srcRKey + " (mr_check_range)"},
	{name: "rc-write-mr-without-remote-write", op: verbs.WRRDMAWrite, mrAcc: verbs.AccessLocalWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (access IB_ACCESS_REMOTE_WRITE not in mr->access)"},
	{name: "rc-read-mr-without-remote-read", op: verbs.WRRDMARead, mrAcc: verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + " (access IB_ACCESS_REMOTE_READ not in mr->access)"},
	{name: "rc-atomic-mr-without-remote-atomic", op: verbs.WRAtomicFetchAndAdd, mrAcc: verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead, n: 8, want: verbs.WCRemAccessErr, source: srcRKey + " (access IB_ACCESS_REMOTE_ATOMIC not in mr->access)"},
	{name: "rc-write-deregistered-mr", op: verbs.WRRDMAWrite, dereg: true, n: 64, want: verbs.WCRemAccessErr, source: srcRKey + "; ibv_dereg_mr frees the MR's pool index (rxe_mr.c rxe_dereg_mr), so its rkey resolves to nothing"},
	{name: "rc-write-qp-without-remote-write", op: verbs.WRRDMAWrite, qpAccSet: true, qpAcc: verbs.AccessRemoteRead | verbs.AccessRemoteAtomic, n: 64, want: verbs.WCRemInvReqErr, source: srcQPAccess},
	{name: "rc-read-qp-without-remote-read", op: verbs.WRRDMARead, qpAccSet: true, qpAcc: verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic, n: 64, want: verbs.WCRemInvReqErr, source: srcQPAccess},
	{name: "rc-atomic-qp-without-remote-atomic", op: verbs.WRAtomicCmpAndSwp, qpAccSet: true, qpAcc: verbs.AccessRemoteWrite | verbs.AccessRemoteRead, n: 8, want: verbs.WCRemInvReqErr, source: srcQPAccess},
	{name: "rc-read-max-dest-rd-atomic-0", op: verbs.WRRDMARead, destRd0: true, n: 64, want: verbs.WCRemInvReqErr, source: srcRdAtom0},
	{name: "rc-atomic-max-dest-rd-atomic-0", op: verbs.WRAtomicFetchAndAdd, destRd0: true, n: 8, want: verbs.WCRemInvReqErr, source: srcRdAtom0},
}

// dataStatusScenarios are this file's scenarios, each Run a named function.
var dataStatusScenarios = []Scenario{
	{
		Name:   "status/rc-write-with-imm-bad-rkey-completes-receive",
		Source: srcRKey + "; a WRITE with immediate takes its receive WQE in check_resource, before check_rkey, so the class C error completes that receive with IB_WC_REM_ACCESS_ERR on the responder too (do_complete with qp->resp.status)",
		Needs:  CapDataPath,
		Run:    scStatusRCWriteWithIMMBadRKeyCompletesReceive,
	},

	{
		Name:   "status/misaligned-atomic-refused-at-post",
		Source: srcPostSend + ". So rxe_resp.c atomic_reply's RESPST_ERR_MISALIGNED_ATOMIC (NAK invalid request, IB_WC_REM_INV_REQ_ERR) is never reached from rdma-core: the misaligned atomic is refused by ibv_post_send (bad_wr is that WR, the WRs before it are posted), nothing reaches the peer, and the QP stays usable",
		Needs:  CapDataPath,
		Run:    scStatusMisalignedAtomicRefusedAtPost,
	},

	// RNR and retry exhaustion.
	{
		Name:   "status/rnr-retry-exceeded",
		Source: "sw/rxe/rxe_resp.c (Linux 6.1): a SEND finding no receive WQE is RESPST_ERR_RNR: an RNR NAK, class B, the responder stays healthy; rxe_comp.c COMPST_RNR_RETRY: with comp.rnr_retry 0 the WR completes IB_WC_RNR_RETRY_EXC_ERR and the QP goes to ERR (7 would be infinite)",
		Needs:  CapDataPath,
		Run:    scStatusRNRRetryExceeded,
	},
	{
		Name:   "status/rnr-write-with-imm-needs-receive",
		Source: "sw/rxe/rxe_opcode.c: RDMA WRITE with immediate carries RXE_RWR_MASK, so rxe_resp.c check_resource wants a receive WQE before check_rkey and execute: with none it is an RNR NAK and nothing is written; rxe_comp.c COMPST_RNR_RETRY with rnr_retry 0: IB_WC_RNR_RETRY_EXC_ERR",
		Needs:  CapDataPath,
		Run:    scStatusRNRWriteWithIMMNeedsReceive,
	},
	{
		Name:   "status/rnr-retried-until-receive-posted",
		Source: "sw/rxe/rxe_comp.c COMPST_RNR_RETRY (Linux 6.1): rnr_retry 7 never runs out; the RNR timer (rnrnak_usec[min_rnr_timer], 0.64 ms for 12) makes rxe_req.c retry the SEND, which lands once a receive is posted",
		Needs:  CapDataPath,
		Run:    scStatusRNRRetriedUntilReceivePosted,
	},
	{
		Name:   "status/retry-exceeded-peer-in-reset",
		Source: "sw/rxe/rxe_recv.c check_type_state (Linux 6.1): a request for a QP whose responder is not READY — a peer moved to RESET, as a cut link would — is dropped without answer; rxe_comp.c: each retransmit timeout (4.096 µs × 2^timeout) is COMPST_ERROR_RETRY, which retries while comp.retry_cnt > 0 and then completes the WR IB_WC_RETRY_EXC_ERR and moves the QP to ERR",
		Needs:  CapDataPath,
		Run:    scStatusRetryExceededPeerInReset,
	},

	// A receive WQE that cannot take the message.
	{
		Name:   "status/rc-recv-too-small",
		Source: srcMalform,
		Needs:  CapDataPath,
		Run:    scStatusRCRecvTooSmall,
	},
	{
		Name:   "status/rc-recv-sges-too-small",
		Source: srcMalform + " (resid is the sum of all the WQE's SGEs)",
		Needs:  CapDataPath,
		Run:    scStatusRCRecvSGEsTooSmall,
	},
	{
		Name:   "status/uc-recv-too-small",
		Source: srcMalform + "; UC sends no NAK and its sender completes on transmission (rxe_net.c rxe_xmit_packet)",
		Needs:  CapDataPath,
		Run:    scStatusUCRecvTooSmall,
	},
	{
		Name:   "status/ud-recv-too-small",
		Source: srcMalform + "; on UD the 40-byte network header comes first (rxe_resp.c execute), so 40 + payload must fit; the UD sender completes on transmission (rxe_net.c rxe_xmit_packet)",
		Needs:  CapDataPath,
		Run:    scStatusUDRecvTooSmall,
	},
	{
		Name:   "status/ud-recv-without-grh-room",
		Source: srcMalform + "; a UD receive sized for the payload alone has no room for the 40-byte header (ud_pingpong.c posts size + 40)",
		Needs:  CapDataPath,
		Run:    scStatusUDRecvWithoutGRHRoom,
	},
	{
		Name:   "status/recv-bad-lkey",
		Source: srcMalform + "; ibv_post_recv does not look at lkeys (rdma-core rxe_post_one_recv)",
		Needs:  CapDataPath,
		Run:    scStatusRecvBadLKey,
	},
	{
		Name:   "status/recv-sge-outside-mr",
		Source: srcMalform,
		Needs:  CapDataPath,
		Run:    scStatusRecvSGEOutsideMR,
	},
	{
		Name:   "status/recv-into-mr-without-local-write",
		Source: srcMalform + "; send_data_in asks copy_data for IB_ACCESS_LOCAL_WRITE",
		Needs:  CapDataPath,
		Run:    scStatusRecvIntoMRWithoutLocalWrite,
	},

	// Local memory rights on the requester.
	{
		Name:   "status/read-into-mr-without-local-write",
		Source: "sw/rxe/rxe_comp.c do_read (Linux 6.1): the READ response is copied into the WR's SGEs by copy_data with IB_ACCESS_LOCAL_WRITE; an MR without it fails lookup_mr and the WR completes IB_WC_LOC_PROT_ERR, QP to ERR (COMPST_ERROR); the responder did nothing wrong and stays RTS",
		Needs:  CapDataPath,
		Run:    scStatusReadIntoMRWithoutLocalWrite,
	},
	{
		Name:   "status/atomic-result-into-mr-without-local-write",
		Source: "sw/rxe/rxe_comp.c do_atomic (Linux 6.1): the original value is stored through copy_data with IB_ACCESS_LOCAL_WRITE; without it the WR completes IB_WC_LOC_PROT_ERR — after the responder has already executed the atomic (rxe_resp.c atomic_reply), so the remote value did change",
		Needs:  CapDataPath,
		Run:    scStatusAtomicResultIntoMRWithoutLocalWrite,
	},
	{
		Name: "status/read-posted-inline",
		Source: "rdma-core 44 providers/rxe/rxe.c init_send_wqe copies the gather list's bytes into wqe->dma.inline_data, which shares its memory with the SGE list (struct rxe_dma_info), for any opcode with IBV_SEND_INLINE; " +
			"sw/rxe/rxe_comp.c do_read (Linux 6.1) then copies the READ response through SGEs that are those bytes, and the WR completes IB_WC_LOC_PROT_ERR, QP to ERR; ibv_post_send(3): inline is valid for SEND and RDMA WRITE only",
		Needs: CapDataPath,
		Run:   func(e *Env) { scStatusPostedInline(e, verbs.WRRDMARead) },
	},
	{
		Name:   "status/atomic-posted-inline",
		Source: "as status/read-posted-inline, through sw/rxe/rxe_comp.c do_atomic (Linux 6.1): the original value has no buffer to land in; the responder has executed the atomic",
		Needs:  CapDataPath,
		Run:    func(e *Env) { scStatusPostedInline(e, verbs.WRAtomicFetchAndAdd) },
	},
	{
		Name:   "status/send-from-mr-without-local-write",
		Source: "sw/rxe/rxe_req.c finish_packet (Linux 6.1) gathers with copy_data(qp->pd, 0, ...): access 0 asks for no right (rxe_mr.c lookup_mr), so a SEND or WRITE may read from an MR registered with no access flags at all; ibv_reg_mr(3): local read access is always enabled",
		Needs:  CapDataPath,
		Run:    scStatusSendFromMRWithoutLocalWrite,
	},
}

func init() {
	for _, c := range remoteCases {
		Register(Scenario{Name: "status/" + c.name, Source: c.source, Needs: CapDataPath, Run: func(e *Env) { runRemoteCase(e, c) }})
	}
	registerAll(dataStatusScenarios)
}

// scStatusRCWriteWithIMMBadRKeyCompletesReceive runs the scenario status/rc-write-with-imm-bad-rkey-completes-receive.
func scStatusRCWriteWithIMMBadRKeyCompletesReceive(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	e.recv(l.b, 7)
	e.recv(l.b, 8)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWriteWithImm, Flags: verbs.SendSignaled, Imm: 5,
		SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey() ^ 0xff})
	wcs := e.waitWCs(l.acq, 1, "WRITE with immediate, bad rkey")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRemAccessErr, QPNum: l.a.Num()}, "requester")
	wcs = e.waitWCs(l.bcq, 2, "the responder's receives")
	e.expectStatuses(wcs, l.b.Num(), []uint64{7, 8}, []verbs.WCStatus{verbs.WCRemAccessErr, verbs.WCWRFlushErr}, "responder")
	e.expectState(l.a, verbs.QPSErr, "requester")
	e.expectState(l.b, verbs.QPSErr, "responder")
}

// scStatusMisalignedAtomicRefusedAtPost runs the scenario status/misaligned-atomic-refused-at-post.
func scStatusMisalignedAtomicRefusedAtPost(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	binary.NativeEndian.PutUint64(remote.Bytes()[8:], 1000)
	ok := verbs.SendWR{WRID: 1, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)},
		RemoteAddr: remote.Addr() + 8, RKey: remote.RKey(), CompareAdd: 1}
	bad := ok
	bad.WRID, bad.RemoteAddr = 2, remote.Addr()+12
	n, err := l.a.PostSend([]verbs.SendWR{ok, bad})
	if e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send(FETCH_ADD, FETCH_ADD at a 4-byte aligned address)") && n != 1 {
		e.Errorf("posted %d; want 1 (bad_wr is the misaligned one)", n)
	}
	wcs := e.waitWCs(l.acq, 1, "the aligned FETCH_ADD")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpFetchAdd, ByteLen: 8, QPNum: l.a.Num()}, "aligned FETCH_ADD")
	e.expectNoWC(l.acq, "the refused misaligned FETCH_ADD")
	if got := binary.NativeEndian.Uint64(remote.Bytes()[8:]); got != 1001 {
		e.Errorf("remote value %d; want 1001 (only the aligned FETCH_ADD executed)", got)
	}
	e.expectState(l.a, verbs.QPSRTS, "requester after a refused post")
	e.expectState(l.b, verbs.QPSRTS, "responder")
}

// scStatusRNRRetryExceeded runs the scenario status/rnr-retry-exceeded.
func scStatusRNRRetryExceeded(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RNRRetry = 0 }})
	local := e.MR(l.apd, 4096, accAll)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}})
	wcs := e.waitWCs(l.acq, 1, "SEND to a QP with no receive posted, rnr_retry 0")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRNRRetryExcErr, QPNum: l.a.Num()}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester after RNR retries ran out")
	e.expectState(l.b, verbs.QPSRTS, "responder that answered RNR NAK (class B, not an error)")
	e.expectNoWC(l.bcq, "responder")
}

// scStatusRNRWriteWithIMMNeedsReceive runs the scenario status/rnr-write-with-imm-needs-receive.
func scStatusRNRWriteWithIMMNeedsReceive(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RNRRetry = 0 }})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(local.Bytes()[:64], 3)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWriteWithImm, Flags: verbs.SendSignaled, Imm: 1,
		SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "WRITE with immediate and no receive posted")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRNRRetryExcErr, QPNum: l.a.Num()}, "requester")
	if !zero(remote.Bytes()) {
		e.Errorf("the target memory was written although the WRITE with immediate was refused with RNR")
	}
}

// scStatusRNRRetriedUntilReceivePosted runs the scenario status/rnr-retried-until-receive-posted.
func scStatusRNRRetriedUntilReceivePosted(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:200], 9)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 200)}})
	e.expectNoWC(l.acq, "SEND while the peer has no receive (RNR NAKs, rnr_retry 7)")
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	wcs := e.waitWCs(l.acq, 1, "SEND after the receive was posted")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 200, QPNum: l.a.Num()}, "requester")
	wcs = e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 200, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "responder")
	e.expectBytes(rbuf.Bytes()[:200], patterned(200, 9), "the receive buffer")
}

// scStatusRetryExceededPeerInReset runs the scenario status/retry-exceeded-peer-in-reset.
func scStatusRetryExceededPeerInReset(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RetryCnt, a.Timeout = 1, shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	e.toState(l.b, verbs.QPSReset)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}})
	wcs := e.waitWCs(l.acq, 2, "SENDs to a peer in RESET, retry_cnt 1")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2}, []verbs.WCStatus{verbs.WCRetryExcErr, verbs.WCWRFlushErr}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester after retries ran out")
}

// scStatusRCRecvTooSmall runs the scenario status/rc-recv-too-small.
func scStatusRCRecvTooSmall(e *Env) {
	recvErrCase(e, verbs.QPTypeRC, 128, func(l *link, rbuf verbs.MR) []verbs.SGE { return []verbs.SGE{sgeAt(rbuf, 0, 64)} })
}

// scStatusRCRecvSGEsTooSmall runs the scenario status/rc-recv-sges-too-small.
func scStatusRCRecvSGEsTooSmall(e *Env) {
	recvErrCase(e, verbs.QPTypeRC, 100, func(l *link, rbuf verbs.MR) []verbs.SGE {
		return []verbs.SGE{sgeAt(rbuf, 0, 40), sgeAt(rbuf, 1000, 40)}
	})
}

// scStatusUCRecvTooSmall runs the scenario status/uc-recv-too-small.
func scStatusUCRecvTooSmall(e *Env) {
	recvErrCase(e, verbs.QPTypeUC, 128, func(l *link, rbuf verbs.MR) []verbs.SGE { return []verbs.SGE{sgeAt(rbuf, 0, 64)} })
}

// scStatusUDRecvTooSmall runs the scenario status/ud-recv-too-small.
func scStatusUDRecvTooSmall(e *Env) {
	recvErrCase(e, verbs.QPTypeUD, 64, func(l *link, rbuf verbs.MR) []verbs.SGE { return []verbs.SGE{sgeAt(rbuf, 0, udGRH+63)} })
}

// scStatusUDRecvWithoutGRHRoom runs the scenario status/ud-recv-without-grh-room.
func scStatusUDRecvWithoutGRHRoom(e *Env) {
	recvErrCase(e, verbs.QPTypeUD, 64, func(l *link, rbuf verbs.MR) []verbs.SGE { return []verbs.SGE{sgeAt(rbuf, 0, 64)} })
}

// scStatusRecvBadLKey runs the scenario status/recv-bad-lkey.
func scStatusRecvBadLKey(e *Env) {
	recvErrCase(e, verbs.QPTypeRC, 64, func(l *link, rbuf verbs.MR) []verbs.SGE {
		s := sgeAt(rbuf, 0, 4096)
		s.LKey ^= 0xff
		return []verbs.SGE{s}
	})
}

// scStatusRecvSGEOutsideMR runs the scenario status/recv-sge-outside-mr.
func scStatusRecvSGEOutsideMR(e *Env) {
	recvErrCase(e, verbs.QPTypeRC, 64, func(l *link, rbuf verbs.MR) []verbs.SGE { return []verbs.SGE{sgeAt(rbuf, 4096-32, 64)} })
}

// scStatusRecvIntoMRWithoutLocalWrite runs the scenario status/recv-into-mr-without-local-write.
func scStatusRecvIntoMRWithoutLocalWrite(e *Env) {
	recvErrCase(e, verbs.QPTypeRC, 64, func(l *link, _ verbs.MR) []verbs.SGE {
		ro := e.MR(l.bpd, 4096, verbs.AccessRemoteRead)
		return []verbs.SGE{sgeAt(ro, 0, 4096)}
	})
}

// scStatusReadIntoMRWithoutLocalWrite runs the scenario status/read-into-mr-without-local-write.
func scStatusReadIntoMRWithoutLocalWrite(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	ro := e.MR(l.apd, 4096, verbs.AccessRemoteRead)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(remote.Bytes()[:64], 5)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(ro, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "READ into an MR without LOCAL_WRITE")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCLocProtErr, QPNum: l.a.Num()}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester")
	e.expectState(l.b, verbs.QPSRTS, "responder")
	if !zero(ro.Bytes()) {
		e.Errorf("the READ wrote into an MR without IBV_ACCESS_LOCAL_WRITE")
	}
}

// scStatusPostedInline runs the scenarios status/read-posted-inline and
// status/atomic-posted-inline: a READ or FETCH_ADD posted with
// IBV_SEND_INLINE has no gather list on rxe to land its data in.
func scStatusPostedInline(e *Env, op verbs.WROpcode) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(local.Bytes()[:8], 3)
	was := append([]byte(nil), local.Bytes()[:8]...)
	binary.NativeEndian.PutUint64(remote.Bytes(), 40)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: op, Flags: verbs.SendSignaled | verbs.SendInline, SGList: []verbs.SGE{sgeAt(local, 0, 8)},
		RemoteAddr: remote.Addr(), RKey: remote.RKey(), CompareAdd: 2})
	wcs := e.waitWCs(l.acq, 1, "%s posted inline", op)
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCLocProtErr, QPNum: l.a.Num()}, "requester")
	e.expectState(l.a, verbs.QPSErr, "requester")
	if !bytes.Equal(local.Bytes()[:8], was) {
		e.Errorf("the %s posted inline wrote its local buffer: % x, was % x", op, local.Bytes()[:8], was)
	}
	if op.IsAtomic() {
		if got := binary.NativeEndian.Uint64(remote.Bytes()); got != 42 {
			e.Errorf("remote value = %d; want 42: the responder executes the FETCH_ADD before the requester finds nowhere to store its result", got)
		}
	}
}

// scStatusAtomicResultIntoMRWithoutLocalWrite runs the scenario status/atomic-result-into-mr-without-local-write.
func scStatusAtomicResultIntoMRWithoutLocalWrite(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	ro := e.MR(l.apd, 4096, verbs.AccessRemoteRead)
	remote := e.MR(l.bpd, 4096, accAll)
	binary.NativeEndian.PutUint64(remote.Bytes(), 40)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(ro, 0, 8)},
		RemoteAddr: remote.Addr(), RKey: remote.RKey(), CompareAdd: 2})
	wcs := e.waitWCs(l.acq, 1, "FETCH_ADD with the result going to an MR without LOCAL_WRITE")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCLocProtErr, QPNum: l.a.Num()}, "requester")
	if got := binary.NativeEndian.Uint64(remote.Bytes()); got != 42 {
		e.Errorf("remote value = %d; want 42: the responder executed the FETCH_ADD before the requester failed to store its result", got)
	}
	if !zero(ro.Bytes()) {
		e.Errorf("the atomic's result was written into an MR without IBV_ACCESS_LOCAL_WRITE")
	}
}

// scStatusSendFromMRWithoutLocalWrite runs the scenario status/send-from-mr-without-local-write.
func scStatusSendFromMRWithoutLocalWrite(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	ro := e.MR(l.apd, 4096, 0)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(ro.Bytes()[:96], 0x40)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(ro, 0, 96)}},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(ro, 0, 96)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 2, "SEND and WRITE from an MR with no access flags")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 96, QPNum: l.a.Num()}, "SEND")
	e.expectWC(wcs[1], verbs.WC{WRID: 3, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 96, QPNum: l.a.Num()}, "WRITE")
	e.waitWCs(l.bcq, 1, "receive")
	e.expectBytes(rbuf.Bytes()[:96], patterned(96, 0x40), "received bytes")
	e.expectBytes(remote.Bytes()[:96], patterned(96, 0x40), "written bytes")
}

// runRemoteCase sends one RC request the responder must refuse.
func runRemoteCase(e *Env, c remoteCase) {
	cfg := linkCfg{}
	if c.qpAccSet {
		cfg.bAttr = func(a *verbs.QPAttr) { a.AccessFlags = c.qpAcc }
	}
	if c.destRd0 {
		cfg.bAttr = func(a *verbs.QPAttr) { a.MaxDestRdAtomic = 0 }
	}
	l := e.link(verbs.QPTypeRC, cfg)
	local := e.MR(l.apd, 4096, accAll)
	pattern(local.Bytes()[:64], 0x21)
	tpd := l.bpd
	if c.otherPD {
		tpd = e.NewPD(e.Ctx)
	}
	acc := c.mrAcc
	if acc == 0 {
		acc = accAll
	}
	target := e.MR(tpd, 4096, acc)
	pattern(target.Bytes()[:4096], 0x77)
	rkey := target.RKey()
	if c.badKey {
		rkey ^= 0xff
	}
	addr := uint64(int64(target.Addr()) + int64(c.off))
	if c.dereg {
		e.Must(target.Dereg(), "ibv_dereg_mr of the target")
	}
	e.recv(l.b, 100, sgeAt(e.MR(l.bpd, 4096, accLocal), 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: c.op, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, c.n)},
		RemoteAddr: addr, RKey: rkey, CompareAdd: 1, Swap: 2})
	what := fmt.Sprintf("%v (%s)", c.op, c.name)
	wcs := e.waitWCs(l.acq, 1, "%s", what)
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: c.want, QPNum: l.a.Num()}, "requester's %s", what)
	e.expectState(l.a, verbs.QPSErr, "requester after "+c.want.String())
	e.expectState(l.b, verbs.QPSErr, "responder after refusing the request (class C)")
	// The responder's posted receive is flushed when it enters ERR.
	wcs = e.waitWCs(l.bcq, 1, "the responder's receive after it entered ERR")
	e.expectWC(wcs[0], verbs.WC{WRID: 100, Status: verbs.WCWRFlushErr, QPNum: l.b.Num()}, "responder's receive")
	if !c.dereg {
		e.expectBytes(target.Bytes(), patterned(4096, 0x77), "the target memory after a refused %v", c.op)
	}
	e.expectBytes(local.Bytes()[:64], patterned(64, 0x21), "the requester's buffer after a refused %v", c.op)
}

// recvErrCase sends n bytes to a receive WQE built by sges, which cannot
// take them.
func recvErrCase(e *Env, typ verbs.QPType, n int, sges func(l *link, rbuf verbs.MR) []verbs.SGE) {
	l := e.link(typ, linkCfg{cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 2, MaxRecvSGE: 2}})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:n], 0x31)
	e.recv(l.b, 2, sges(l, rbuf)...)
	e.recv(l.b, 3, sgeAt(rbuf, 2048, 2048))
	wr := verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, n)}}
	if typ == verbs.QPTypeUD {
		wr = l.udWR(1, verbs.WRSend, verbs.SendSignaled, wr.SGList...)
	}
	e.post(l.a, wr)
	wcs := e.waitWCs(l.bcq, 2, "%v SEND of %d bytes into a receive that cannot take it", typ, n)
	e.expectStatuses(wcs, l.b.Num(), []uint64{2, 3}, []verbs.WCStatus{verbs.WCLocQPOpErr, verbs.WCWRFlushErr}, "receiver")
	e.expectState(l.b, verbs.QPSErr, "receiver after a malformed receive WQE")
	wcs = e.waitWCs(l.acq, 1, "the sender's completion")
	if typ == verbs.QPTypeRC {
		e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCRemOpErr, QPNum: l.a.Num()}, "RC sender (NAK remote operational error)")
		e.expectState(l.a, verbs.QPSErr, "RC sender")
	} else {
		e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: uint32(n), QPNum: l.a.Num()}, "%v sender (no acknowledgement)", typ)
		e.expectState(l.a, verbs.QPSRTS, typ.String()+" sender")
	}
}
