package verbstest

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Ordering, fences, rd_atomic credits, atomics, QP states on the data path,
// UC's silent drops, and — on a backend with a Stepper — the timers.

// UC: no acknowledgements, so every fault is a silent drop.
const srcUCDrop = "sw/rxe/rxe_resp.c (Linux 6.1): on UC without an SRQ, an R_Key violation (class E), a WRITE the QP's access flags forbid (check_op_valid) and a message with no receive WQE (RESPST_ERR_RNR, class D) set drop_msg and clean up: nothing is written or completed and the QP stays RTS; the sender completes on transmission (rxe_net.c rxe_xmit_packet)"

// dataOrderScenarios are this file's scenarios, each Run a named function.
var dataOrderScenarios = []Scenario{
	{
		Name:   "order/send-after-write-sees-data",
		Source: "sw/rxe/rxe_resp.c (Linux 6.1): one responder task executes a QP's requests strictly in PSN order (check_psn), so a WRITE's data is in memory before a later SEND on the same RC QP completes a receive (IBA 9.5 ordering); rdma-core's examples rely on it",
		Needs:  CapDataPath,
		Run:    scOrderSendAfterWriteSeesData,
	},
	{
		Name:   "order/read-after-write-sees-data",
		Source: "sw/rxe/rxe_resp.c (Linux 6.1): requests execute in PSN order, so a READ posted after a WRITE to the same range reads the written bytes (read_reply copies from the MR when the READ is executed)",
		Needs:  CapDataPath,
		Run:    scOrderReadAfterWriteSeesData,
	},
	{
		Name:   "order/completions-in-post-order",
		Source: "sw/rxe/rxe_comp.c (Linux 6.1): the completer only ever completes the send queue's head WQE (get_wqe, queue_head), so send completions come in the order the WRs were posted, whatever their opcodes; ibv_poll_cq(3)",
		Needs:  CapDataPath,
		Run:    scOrderCompletionsInPostOrder,
	},
	{
		Name:   "order/receives-consumed-in-order",
		Source: "sw/rxe/rxe_resp.c rxe_get_recv_wqe takes the receive queue's head (queue_head) for each new message (Linux 6.1): receives are consumed in the order they were posted; ibv_post_recv(3)",
		Needs:  CapDataPath,
		Run:    scOrderReceivesConsumedInOrder,
	},
	{
		Name:   "order/fence-waits-for-read",
		Source: "sw/rxe/rxe_req.c rxe_wqe_is_fenced (Linux 6.1, IBA 10.8.3.3): a WR with IBV_SEND_FENCE waits until every earlier READ and atomic has completed (rd_atomic back at max_rd_atomic), so a fenced SEND from the READ's destination buffer carries what the READ brought back",
		Needs:  CapDataPath,
		Run:    scOrderFenceWaitsForRead,
	},
	{
		Name:   "rdatomic/one-credit-many-reads",
		Source: "sw/rxe/rxe_req.c check_init_depth (Linux 6.1): every READ or atomic takes one of max_rd_atomic credits and the requester waits while none is left; rxe_comp.c complete_ack gives it back and restarts the requester; with max_rd_atomic 1 eight READs go one at a time and all complete, in order",
		Needs:  CapDataPath,
		Run:    scRdatomicOneCreditManyReads,
	},
	{
		Name:   "rdatomic/zero-credits-never-issue",
		Source: "sw/rxe/rxe_qp.c rxe_qp_from_attr sets the requester's credit count to max_rd_atomic, 0 included (rxe_qp_chk_attr allows 0); rxe_req.c check_init_depth then never lets a READ go and the requester waits, holding back every WR behind it; moving the QP to ERR flushes them (rxe_req.c, rxe_comp.c rxe_drain_resp_pkts)",
		Needs:  CapDataPath,
		Run:    scRdatomicZeroCreditsNeverIssue,
	},
	{
		Name:   "atomic/cmp-swap-mismatch",
		Source: "sw/rxe/rxe_resp.c atomic_reply (Linux 6.1): COMPARE_SWAP stores swap only when the 8 bytes equal compare, and always returns the original value, which rxe_comp.c do_atomic writes to the local SGE; IBV_WC_COMP_SWAP either way",
		Needs:  CapDataPath,
		Run:    scAtomicCmpSwapMismatch,
	},
	{
		Name:   "atomic/fetch-add-sequence-and-wrap",
		Source: "sw/rxe/rxe_resp.c atomic_reply (Linux 6.1): FETCH_ADD adds in 64-bit unsigned arithmetic (wrapping) under atomic_ops_lock and returns the value before; WRs execute in order, each on the previous result",
		Needs:  CapDataPath,
		Run:    scAtomicFetchAddSequenceAndWrap,
	},
	{
		Name:   "state/post-send-in-sqd-waits",
		Source: "sw/rxe/rxe_req.c req_next_wqe (Linux 6.1): while the requester is DRAIN or DRAINED (SQD) a WQE that has not started stays queued; " + srcDoorbell + "; after SQD→RTS the requester runs again at the next doorbell (rxe_qp_from_attr only sets req.state READY), and the WRs complete in order",
		Needs:  CapDataPath,
		Run:    scStatePostSendInSQDWaits,
	},
	{
		Name:   "state/rtr-responder-receives",
		Source: "sw/rxe/rxe_qp.c rxe_qp_from_attr (Linux 6.1): RTR makes the responder READY; rxe_recv.c check_type_state accepts requests once the responder is READY, and rxe_net.c rxe_xmit_packet sends its ACKs (responses need resp.state READY, not req); ibv_modify_qp(3): a QP in RTR can receive",
		Needs:  CapDataPath,
		Run:    scStateRTRResponderReceives,
	},
	{
		Name:   "uc/bad-rkey-write-dropped",
		Source: srcUCDrop,
		Needs:  CapDataPath,
		Run:    scUCBadRKeyWriteDropped,
	},
	{
		Name:   "uc/qp-without-remote-write-dropped",
		Source: srcUCDrop + "; a WRITE with immediate dropped this way leaves its receive WQE for the next message",
		Needs:  CapDataPath,
		Run:    scUCQPWithoutRemoteWriteDropped,
	},
	{
		Name:   "uc/no-receive-dropped",
		Source: srcUCDrop,
		Needs:  CapDataPath,
		Run:    scUCNoReceiveDropped,
	},

	// Timers in virtual time. rxe counts them in jiffies: see kernelTimerAt.
	{
		Name:   "timer/retransmit-timeout",
		Source: "sw/rxe/rxe_qp.c rxe_qp_from_attr (Linux 6.1): qp_timeout_jiffies = nsecs_to_jiffies(4096 ns << timeout), at least 1; rxe_req.c update_state arms the retransmit timer when a packet leaves (mod_timer), rxe_comp.c retransmit_timer → COMPST_ERROR_RETRY retries retry_cnt times, so with retry_cnt 2 and no answer the WR fails IB_WC_RETRY_EXC_ERR at the third expiry; " + srcJiffies,
		Needs:  CapDataPath | CapStepper,
		Run:    scTimerRetransmitTimeout,
	},
	{
		Name:   "timer/rnr-nak-delay",
		Source: "sw/rxe/rxe_resp.c sends an RNR NAK carrying the responder's min_rnr_timer (Linux 6.1); rxe_comp.c COMPST_RNR_RETRY arms rnr_nak_timer for rnrnak_jiffies(code) = max(usecs_to_jiffies(rnrnak_usec[code]), 1) (code 18: 5.12 ms, 2 jiffies), and rxe_req.c rnr_nak_timer retries only when it fires; " + srcJiffies,
		Needs:  CapDataPath | CapStepper,
		Run:    scTimerRNRNAKDelay,
	},
	{
		Name: "timer/rnr-outlasts-retransmit-timeout",
		Source: "rxe on one device (Debian's 6.1 kernel), observed on rxe0 in the lab: a SEND that meets RNR NAKs (rnr_retry 7) for longer than " +
			"retry_cnt+1 retransmit timeouts does not fail. How, as rxe's code reads (not traced): the RNR timer and the retransmit timer fall due " +
			"in the same tick, the wheel runs the later-armed RNR timer first (enqueue_timer adds at the head of the bucket), rxe_req.c resends, " +
			"and on loopback the RNR NAK reaches rxe_comp_queue_pkt, which runs the completer inline before its own tasklet: COMPST_GET_ACK finds " +
			"the NAK and clears timeout_retry, so the timeout is not counted; " + srcJiffies,
		Needs: CapDataPath,
		Run:   scTimerRNROutlastsRetransmitTimeout,
	},
}

func init() {
	registerAll(dataOrderScenarios)
}

// scOrderSendAfterWriteSeesData runs the scenario order/send-after-write-sees-data.
func scOrderSendAfterWriteSeesData(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 8192, accAll)
	remote := e.MR(l.bpd, 8192, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x33)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 64))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{sgeAt(local, 0, 5000)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 6000, 8)}})
	e.waitWCs(l.bcq, 1, "the SEND after the WRITE")
	e.expectBytes(remote.Bytes()[:5000], local.Bytes()[:5000], "the WRITE's data when the SEND's receive completed")
	e.waitWCs(l.acq, 1, "the signaled SEND")
}

// scOrderReadAfterWriteSeesData runs the scenario order/read-after-write-sees-data.
func scOrderReadAfterWriteSeesData(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 8192, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(local.Bytes()[:3000], 0x44)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{sgeAt(local, 0, 3000)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 4096, 3000)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "READ after WRITE")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 3000, QPNum: l.a.Num()}, "READ")
	e.expectBytes(local.Bytes()[4096:7096], local.Bytes()[:3000], "what the READ returned")
}

// scOrderCompletionsInPostOrder runs the scenario order/completions-in-post-order.
func scOrderCompletionsInPostOrder(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 8192, accAll)
	remote := e.MR(l.bpd, 8192, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 20, sgeAt(rbuf, 0, 2048))
	e.recv(l.b, 21, sgeAt(rbuf, 2048, 2048))
	s := verbs.SendSignaled
	e.post(l.a,
		verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: s, SGList: []verbs.SGE{sgeAt(local, 0, 2500)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: s, SGList: []verbs.SGE{sgeAt(local, 0, 10)}},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRRDMARead, Flags: s, SGList: []verbs.SGE{sgeAt(local, 4096, 2100)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 4, Opcode: verbs.WRAtomicFetchAndAdd, Flags: s, SGList: []verbs.SGE{sgeAt(local, 7000, 8)}, RemoteAddr: remote.Addr() + 4096, RKey: remote.RKey(), CompareAdd: 1},
		verbs.SendWR{WRID: 5, Opcode: verbs.WRSendWithImm, Flags: s, Imm: 1, SGList: []verbs.SGE{sgeAt(local, 0, 20)}},
	)
	wcs := e.waitWCs(l.acq, 5, "five mixed WRs")
	want := []struct {
		op verbs.WCOpcode
		n  uint32
		f  verbs.WCFlags
	}{{verbs.WCOpRDMAWrite, 2500, 0}, {verbs.WCOpSend, 10, 0}, {verbs.WCOpRDMARead, 2100, 0}, {verbs.WCOpFetchAdd, 8, 0}, {verbs.WCOpSend, 20, verbs.WCWithImm}}
	for i, w := range want {
		e.expectWC(wcs[i], verbs.WC{WRID: uint64(i + 1), Status: verbs.WCSuccess, Opcode: w.op, ByteLen: w.n, QPNum: l.a.Num(), Flags: w.f}, "completion %d", i+1)
	}
	e.waitWCs(l.bcq, 2, "the two receives")
}

// scOrderReceivesConsumedInOrder runs the scenario order/receives-consumed-in-order.
func scOrderReceivesConsumedInOrder(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	for i := 0; i < 5; i++ {
		e.recv(l.b, uint64(40+i), sgeAt(rbuf, i*512, 512))
		pattern(local.Bytes()[i*512:i*512+100], byte(i*40))
	}
	for i := 0; i < 5; i++ {
		e.post(l.a, verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(local, i*512, 60+i)}})
	}
	wcs := e.waitWCs(l.bcq, 5, "five receives")
	for i, wc := range wcs {
		e.expectWC(wc, verbs.WC{WRID: uint64(40 + i), Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(60 + i), QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive %d", i+1)
		e.expectBytes(rbuf.Bytes()[i*512:i*512+60+i], patterned(60+i, byte(i*40)), "receive buffer %d", i+1)
	}
}

// scOrderFenceWaitsForRead runs the scenario order/fence-waits-for-read.
func scOrderFenceWaitsForRead(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(remote.Bytes()[:512], 0x7c)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMARead, SGList: []verbs.SGE{sgeAt(local, 0, 512)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | verbs.SendFence, SGList: []verbs.SGE{sgeAt(local, 0, 512)}})
	e.waitWCs(l.acq, 1, "the fenced SEND")
	e.waitWCs(l.bcq, 1, "its receive")
	e.expectBytes(rbuf.Bytes()[:512], patterned(512, 0x7c), "a fenced SEND of the READ's destination")
}

// scRdatomicOneCreditManyReads runs the scenario rdatomic/one-credit-many-reads.
func scRdatomicOneCreditManyReads(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.MaxRdAtomic = 1 }})
	local := e.MR(l.apd, 8192, accAll)
	remote := e.MR(l.bpd, 8192, accAll)
	pattern(remote.Bytes(), 0x27)
	var wrs []verbs.SendWR
	for i := 0; i < 8; i++ {
		wrs = append(wrs, verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled,
			SGList: []verbs.SGE{sgeAt(local, i*1024, 1000)}, RemoteAddr: remote.Addr() + uint64(i*1000), RKey: remote.RKey()})
	}
	e.post(l.a, wrs...)
	wcs := e.waitWCs(l.acq, 8, "eight READs on one credit")
	for i, wc := range wcs {
		e.expectWC(wc, verbs.WC{WRID: uint64(i), Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 1000, QPNum: l.a.Num()}, "READ %d", i)
		e.expectBytes(local.Bytes()[i*1024:i*1024+1000], remote.Bytes()[i*1000:i*1000+1000], "READ %d's data", i)
	}
}

// scRdatomicZeroCreditsNeverIssue runs the scenario rdatomic/zero-credits-never-issue.
func scRdatomicZeroCreditsNeverIssue(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.MaxRdAtomic = 0 }})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 9, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	e.expectNoWC(l.acq, "a READ on a QP with max_rd_atomic 0, and a SEND behind it")
	e.expectNoWC(l.bcq, "the peer (nothing was sent)")
	e.toState(l.a, verbs.QPSErr)
	wcs := e.waitWCs(l.acq, 2, "the stuck WRs after ERR")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2}, []verbs.WCStatus{verbs.WCWRFlushErr, verbs.WCWRFlushErr}, "flushed")
}

// scAtomicCmpSwapMismatch runs the scenario atomic/cmp-swap-mismatch.
func scAtomicCmpSwapMismatch(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	binary.NativeEndian.PutUint64(remote.Bytes()[64:], 500)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRAtomicCmpAndSwp, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)},
		RemoteAddr: remote.Addr() + 64, RKey: remote.RKey(), CompareAdd: 499, Swap: 7})
	wcs := e.waitWCs(l.acq, 1, "CMP_SWP with a compare value that does not match")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpCompSwap, ByteLen: 8, QPNum: l.a.Num()}, "CMP_SWP")
	if got := binary.NativeEndian.Uint64(remote.Bytes()[64:]); got != 500 {
		e.Errorf("remote value = %d; want 500 unchanged", got)
	}
	if got := binary.NativeEndian.Uint64(local.Bytes()); got != 500 {
		e.Errorf("returned original = %d; want 500", got)
	}
}

// scAtomicFetchAddSequenceAndWrap runs the scenario atomic/fetch-add-sequence-and-wrap.
func scAtomicFetchAddSequenceAndWrap(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	start := ^uint64(0) - 3
	binary.NativeEndian.PutUint64(remote.Bytes()[8:], start)
	adds := []uint64{1, 2, 3, 4}
	for i, a := range adds {
		e.post(l.a, verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 8*i, 8)},
			RemoteAddr: remote.Addr() + 8, RKey: remote.RKey(), CompareAdd: a})
	}
	e.waitWCs(l.acq, len(adds), "four FETCH_ADDs")
	v := start
	for i, a := range adds {
		if got := binary.NativeEndian.Uint64(local.Bytes()[8*i:]); got != v {
			e.Errorf("FETCH_ADD %d returned %#x; want %#x", i, got, v)
		}
		v += a
	}
	if got := binary.NativeEndian.Uint64(remote.Bytes()[8:]); got != v {
		e.Errorf("final value %#x; want %#x (wrapped past 2^64)", got, v)
	}
}

// scStatePostSendInSQDWaits runs the scenario state/post-send-in-sqd-waits.
func scStatePostSendInSQDWaits(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 20, sgeAt(rbuf, 0, 2048))
	e.recv(l.b, 21, sgeAt(rbuf, 2048, 2048))
	e.step(l.a, l.b.Num(), verbs.QPSRTS, verbs.QPSSQD)
	pattern(local.Bytes()[:32], 0x91)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}})
	e.expectNoWC(l.acq, "a SEND posted in SQD")
	e.expectNoWC(l.bcq, "the peer while the sender is in SQD")
	e.step(l.a, l.b.Num(), verbs.QPSSQD, verbs.QPSRTS)
	e.post(l.a, verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 32, 16)}})
	wcs := e.waitWCs(l.acq, 2, "the SEND posted in SQD and one posted after RTS")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2}, []verbs.WCStatus{verbs.WCSuccess, verbs.WCSuccess}, "sender")
	wcs = e.waitWCs(l.bcq, 2, "receives")
	e.expectWC(wcs[0], verbs.WC{WRID: 20, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 32, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "first receive")
	e.expectBytes(rbuf.Bytes()[:32], patterned(32, 0x91), "the SEND posted in SQD")
}

// scStateRTRResponderReceives runs the scenario state/rtr-responder-receives.
func scStateRTRResponderReceives(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{bState: verbs.QPSRTR})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x58)
	pattern(remote.Bytes()[2048:2112], 0x59)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 1024, 64)}, RemoteAddr: remote.Addr() + 2048, RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 2, "SEND and READ to a QP in RTR")
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 3}, []verbs.WCStatus{verbs.WCSuccess, verbs.WCSuccess}, "requester")
	wcs = e.waitWCs(l.bcq, 1, "receive on an RTR QP")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 64, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(local.Bytes()[1024:1088], patterned(64, 0x59), "READ answered by an RTR QP")
	if s := e.State(l.b); s != verbs.QPSRTR {
		e.Errorf("the responder is in %v; want RTR", s)
	}
}

// scUCBadRKeyWriteDropped runs the scenario uc/bad-rkey-write-dropped.
func scUCBadRKeyWriteDropped(e *Env) {
	l := e.link(verbs.QPTypeUC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	pattern(local.Bytes()[:128], 0x0c)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey() ^ 0xff})
	wcs := e.waitWCs(l.acq, 1, "UC WRITE with a bad rkey")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 64, QPNum: l.a.Num()}, "sender (no ACK on UC)")
	if !zero(remote.Bytes()) {
		e.Errorf("a UC WRITE with a bad rkey wrote memory")
	}
	e.expectState(l.b, verbs.QPSRTS, "UC responder after a dropped WRITE")
	e.post(l.a, verbs.SendWR{WRID: 2, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 64, 64)}, RemoteAddr: remote.Addr() + 64, RKey: remote.RKey()})
	e.waitWCs(l.acq, 1, "the next UC WRITE")
	e.expectBytes(remote.Bytes()[64:128], local.Bytes()[64:128], "the next WRITE (the QP still works)")
	if !zero(remote.Bytes()[:64]) {
		e.Errorf("the dropped WRITE's range was written")
	}
}

// scUCQPWithoutRemoteWriteDropped runs the scenario uc/qp-without-remote-write-dropped.
func scUCQPWithoutRemoteWriteDropped(e *Env) {
	l := e.link(verbs.QPTypeUC, linkCfg{bAttr: func(a *verbs.QPAttr) { a.AccessFlags = 0 }})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x1f)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 3, Opcode: verbs.WRRDMAWriteWithImm, Flags: verbs.SendSignaled, Imm: 1, SGList: []verbs.SGE{sgeAt(local, 0, 64)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 4, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 32)}})
	e.waitWCs(l.acq, 3, "WRITE, WRITE with immediate and SEND on UC")
	if !zero(remote.Bytes()) {
		e.Errorf("a UC QP without IBV_ACCESS_REMOTE_WRITE let a WRITE through")
	}
	wcs := e.waitWCs(l.bcq, 1, "the SEND's receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 32, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "the receive (the dropped WRITE with immediate did not take it)")
	e.expectState(l.b, verbs.QPSRTS, "UC responder")
}

// scUCNoReceiveDropped runs the scenario uc/no-receive-dropped.
func scUCNoReceiveDropped(e *Env) {
	l := e.link(verbs.QPTypeUC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x0a)
	pattern(local.Bytes()[64:128], 0x0b)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 64)}})
	wcs := e.waitWCs(l.acq, 1, "UC SEND with no receive posted")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 64, QPNum: l.a.Num()}, "sender")
	e.expectNoWC(l.bcq, "UC receiver without a receive WQE")
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 64, 64)}})
	e.waitWCs(l.acq, 1, "second UC SEND")
	e.waitWCs(l.bcq, 1, "its receive")
	e.expectBytes(rbuf.Bytes()[:64], patterned(64, 0x0b), "the second message (the first was dropped, not queued)")
}

// scTimerRetransmitTimeout runs the scenario timer/retransmit-timeout.
func scTimerRetransmitTimeout(e *Env) {
	const t, retries = 12, 2
	n := max(time.Duration(4096<<t)/jiffy, 1) // nsecs_to_jiffies rounds down: 16.78 ms is 4 jiffies
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RetryCnt, a.Timeout = retries, t }})
	local := e.MR(l.apd, 4096, accAll)
	e.toState(l.b, verbs.QPSReset)
	st, _ := e.stepper()
	st.SetDeliveryMode(verbs.DeliverStep)
	posted := st.Now()
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	// Armed when the SEND left, in the tick of the post; each
	// expiry re-arms it from a tick boundary for n+1 ticks.
	first := kernelTimerAt(posted, n)
	fail := first + retries*(n+1)*jiffy
	e.expectTimedWC(st, l.acq, fail, fail, verbs.WC{WRID: 1, Status: verbs.WCRetryExcErr, QPNum: l.a.Num()},
		fmt.Sprintf("timeout %d (%d jiffies at HZ %d), retry_cnt %d", t, n, debianHZ, retries))
}

// scTimerRNRNAKDelay runs the scenario timer/rnr-nak-delay.
func scTimerRNRNAKDelay(e *Env) {
	n := (5120*time.Microsecond + jiffy - 1) / jiffy // usecs_to_jiffies rounds up
	l := e.link(verbs.QPTypeRC, linkCfg{bAttr: func(a *verbs.QPAttr) { a.MinRNRTimer = 18 }})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	st, _ := e.stepper()
	st.SetDeliveryMode(verbs.DeliverStep)
	posted := st.Now()
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	st.Run() // the SEND and its RNR NAK
	e.recv(l.b, 2, sgeAt(rbuf, 0, 64))
	// Armed when the NAK came back: in the tick of the post, or the
	// next one if the round trip crossed a tick boundary.
	lo := kernelTimerAt(posted, n)
	e.expectTimedWC(st, l.acq, lo, lo+jiffy, verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 8, QPNum: l.a.Num()},
		fmt.Sprintf("RNR timer code 18 (%d jiffies at HZ %d)", n, debianHZ))
}

// scTimerRNROutlastsRetransmitTimeout runs the scenario timer/rnr-outlasts-retransmit-timeout.
func scTimerRNROutlastsRetransmitTimeout(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aAttr: func(a *verbs.QPAttr) { a.RetryCnt, a.Timeout = 1, shortTimeout }})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:200], 11)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 200)}})
	e.expectNoWC(l.acq, "SEND meeting RNR NAKs (rnr_retry 7) for many retransmit timeouts (retry_cnt 1, timeout 10: about 4 ms)")
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	wcs := e.waitWCs(l.acq, 1, "SEND after the receive was posted")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 200, QPNum: l.a.Num()}, "requester")
	e.expectBytes(rbuf.Bytes()[:200], patterned(200, 11), "the receive buffer")
}

// debianHZ is the tick rate of the lab guest's kernel, Debian's
// linux-image-6.1.0-*-amd64 (CONFIG_HZ=250): rxe's timers count jiffies of
// 4 ms.
const debianHZ = 250

const jiffy = time.Second / debianHZ

const srcJiffies = "timers count jiffies (Debian's 6.1 kernel: CONFIG_HZ=250, 4 ms): nsecs_to_jiffies rounds down, usecs_to_jiffies up (kernel/time/time.c, include/linux/jiffies.h), and the timer wheel fires a timer due at tick k on tick k+1 at the earliest (kernel/time/timer.c calc_index: never early)"

// kernelTimerAt is when a timer armed at virtual time armed with
// mod_timer(jiffies + n) fires: on the tick after its expiry tick
// (kernel/time/timer.c calc_index rounds up by the level-0 granularity).
func kernelTimerAt(armed, n time.Duration) time.Duration {
	return (armed/jiffy + n + 1) * jiffy
}

// expectTimedWC advances a held fabric to just before lo and expects no
// completion on cq, then to hi (plus a quarter tick for the packets the
// timer sets off) and expects want.
func (e *Env) expectTimedWC(st verbs.Stepper, cq verbs.CQ, lo, hi time.Duration, want verbs.WC, what string) {
	wc := make([]verbs.WC, 2)
	if d := lo - time.Microsecond - st.Now(); d > 0 {
		st.Advance(d)
	}
	if n, _ := cq.Poll(wc); n != 0 {
		e.Errorf("%s: completion %s at %v, before the timer can fire (%v)", what, fmtWCs(wc[:n]), st.Now(), lo)
		return
	}
	st.Advance(hi + jiffy/4 - st.Now())
	n, _ := cq.Poll(wc)
	if n != 1 {
		e.Errorf("%s: %d completions by %v; want one (the timer fires at %v..%v)", what, n, st.Now(), lo, hi)
		return
	}
	e.expectWC(wc[0], want, "%s", what)
}
