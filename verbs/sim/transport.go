package sim

import (
	"encoding/binary"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// wqeXfer is the requester's progress through one send WQE.
type wqeXfer struct {
	started           bool
	firstPSN, lastPSN uint32
	sent              uint32 // bytes handed to packets
	done              bool   // every packet sent
	readGot           uint32 // READ: bytes of response placed
}

// transport is one QP's requester, completer and responder state (the
// req, comp and resp members of struct rxe_qp).
type transport struct {
	q           *qp
	pending     int
	queued      bool
	onTimerList bool

	// requester
	reqPSN       uint32
	next         int // index (from the SQ head) of the next WQE to start
	noackPkts    int
	rdAtomicFree int
	retryLeft    int
	rnrRetryLeft int
	retransAt    time.Duration // 0: not armed
	rnrAt        time.Duration
	waitRNR      bool

	// completer
	compPSN uint32

	// responder
	respPSN    uint32
	msn        uint32
	resources  int
	respOp     opcode // opcode of the message in progress (-1 none)
	inMsg      bool
	dropMsg    bool
	sentPSNNak bool
	rwqe       *recvWQE // receive WQE being filled
	rwqeCopy   recvWQE  // SRQ WQEs are copied out (rxe: resp.srq_wqe)
	rdone      uint32   // bytes placed in rwqe
	wva        uint64   // WRITE in progress
	wrkey      uint32
	wlen       uint32
	woff       uint32
	atomics    map[uint32]uint64 // replay of atomic results by PSN
	respQ      []*packet

	inlineScratch []byte
	buf           []byte
}

func (t *transport) init(q *qp) { t.q = q; t.atomics = map[uint32]uint64{} }

// reset clears the sequence state (rxe_qp_reset).
func (t *transport) reset() {
	t.next, t.msn, t.noackPkts = 0, 0, 0
	t.inMsg, t.dropMsg, t.sentPSNNak, t.rwqe = false, false, false, nil
	t.retransAt, t.rnrAt, t.waitRNR = 0, 0, false
	clear(t.atomics)
}

func (t *transport) resizeResources(n int) { t.resources = n }

func (t *transport) deadline() (time.Duration, bool) {
	switch {
	case t.rnrAt != 0:
		return t.rnrAt, true
	case t.retransAt != 0:
		return t.retransAt, true
	}
	return 0, false
}

// fire runs the due timer: the RNR timer restarts the requester
// (rnr_nak_timer); the retransmit timer hands a timeout to the completer
// (retransmit_timer).
func (t *transport) fire(now time.Duration) string {
	q := t.q
	if t.rnrAt != 0 {
		t.rnrAt = 0
		t.waitRNR = false
		q.goBackN()
		q.f().schedule(q, taskReq)
		return "rnr"
	}
	t.retransAt = 0
	if q.comp == engReady || q.comp == engDrain || q.comp == engDrained {
		q.timeoutRetry()
	}
	return "retransmit"
}

// timeoutNs is 4.096 µs × 2^timeout (rxe_qp_from_attr).
func (q *qp) timeout() time.Duration {
	if q.attr.Timeout == 0 {
		return 0
	}
	return time.Duration(4096) << q.attr.Timeout
}

// ---------------------------------------------------------------- memory

// lookupMR is lookup_mr: the key must be the MR's (lkey or rkey), in the
// same PD, with the access asked for.
func (q *qp) lookupMR(key uint32, remote bool, access verbs.Access) *mr {
	m := q.pd.ctx.dev.mrs[key>>8]
	if m == nil || m.dead != "" || m.pd != q.pd {
		return nil
	}
	if remote && m.rkey != key || !remote && m.lkey != key {
		return nil
	}
	if access != 0 && m.access&access == 0 {
		return nil
	}
	return m
}

// scatter writes src at offset off of an SGE list into memory that must
// be locally writable (copy_data to MR, IB_ACCESS_LOCAL_WRITE). It
// reports false when an lkey or range is bad.
func (q *qp) scatter(sgl []verbs.SGE, off uint32, src []byte) bool {
	for _, s := range sgl {
		if len(src) == 0 {
			return true
		}
		if off >= s.Length {
			off -= s.Length
			continue
		}
		take := s.Length - off
		if take > uint32(len(src)) {
			take = uint32(len(src))
		}
		m := q.lookupMR(s.LKey, false, verbs.AccessLocalWrite)
		if m == nil || !m.contains(s.Addr+uint64(off), uint64(take)) {
			return false
		}
		p := s.Addr + uint64(off) - m.addr
		copy(m.buf[p:], src[:take])
		src = src[take:]
		off = 0
	}
	return len(src) == 0
}

// payloadOf returns the bytes of a send WQE from offset off, n long.
func (q *qp) payloadOf(w *sendWQE, off, n uint32) ([]byte, bool) {
	out := make([]byte, n)
	if w.wr.Flags&verbs.SendInline != 0 {
		copy(out, w.inline[off:off+n])
		return out, true
	}
	rest := out
	for _, s := range w.sge {
		if len(rest) == 0 {
			break
		}
		if off >= s.Length {
			off -= s.Length
			continue
		}
		take := s.Length - off
		if take > uint32(len(rest)) {
			take = uint32(len(rest))
		}
		m := q.lookupMR(s.LKey, false, 0)
		if m == nil || !m.contains(s.Addr+uint64(off), uint64(take)) {
			return nil, false
		}
		p := s.Addr + uint64(off) - m.addr
		copy(rest, m.buf[p:p+uint64(take)])
		rest = rest[take:]
		off = 0
	}
	return out, len(rest) == 0
}

// ---------------------------------------------------------------- requester

// wrOK reports whether the QP type can do the opcode (rxe_wr_opcode_info).
func wrOK(t verbs.QPType, op verbs.WROpcode) bool {
	switch op {
	case verbs.WRSend, verbs.WRSendWithImm:
		return true
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		return t == verbs.QPTypeRC || t == verbs.QPTypeUC
	case verbs.WRRDMARead, verbs.WRAtomicCmpAndSwp, verbs.WRAtomicFetchAndAdd:
		return t == verbs.QPTypeRC
	}
	return false
}

// pathMTU is get_mtu: the path MTU for RC and UC, the port's for UD.
func (q *qp) pathMTU() uint32 {
	if q.typ == verbs.QPTypeUD {
		return uint32(activeMTU().Bytes())
	}
	if q.mtu <= 0 {
		return 256
	}
	return uint32(q.mtu)
}

// requester is rxe_requester: start WQEs in order and emit their packets.
func (q *qp) requester() {
	f := q.f()
	t := &q.t
	switch q.req {
	case engError:
		// Generate error completions for everything queued (req_next_wqe
		// in the error state, then the completer flushes).
		if q.sq.count > 0 {
			f.schedule(q, taskComp)
		}
		return
	case engDrain:
		q.checkDrained()
		return
	case engReady:
	default:
		return
	}
	if t.waitRNR {
		return
	}
	for t.next < q.sq.count {
		w := q.sq.at(t.next)
		if !w.xfer.started {
			if !wrOK(q.typ, w.wr.Opcode) {
				q.failSend(w, verbs.WCLocQPOpErr, w.wr.Opcode.String()+" is not valid on a "+q.typ.String()+" QP")
				return
			}
			if w.wr.Opcode == verbs.WRRDMARead || w.wr.Opcode.IsAtomic() {
				if t.rdAtomicFree <= 0 {
					return // need_rd_atomic: wait for the completer
				}
			}
			if w.wr.Flags&verbs.SendFence != 0 && t.rdAtomicFree < int(q.attr.MaxRdAtomic) {
				return // wait_fence
			}
			if q.typ == verbs.QPTypeRC && psnCmp(t.reqPSN, t.compPSN+rxeMaxUnackedPSNs) > 0 {
				return // wait_psn
			}
			if q.typ == verbs.QPTypeUD {
				if w.ah == nil || w.ah.dead != "" || w.ah.pd != q.pd {
					q.failSend(w, verbs.WCLocQPOpErr, "the address handle was destroyed or belongs to another PD (rxe_get_av)")
					return
				}
			}
			if (w.wr.Opcode == verbs.WRRDMARead || w.wr.Opcode.IsAtomic()) && q.typ == verbs.QPTypeRC {
				t.rdAtomicFree--
				w.rdAtom = true
			}
			mtu := q.pathMTU()
			npkts := (w.length + mtu - 1) / mtu
			if npkts == 0 {
				npkts = 1
			}
			if w.wr.Opcode.IsAtomic() {
				npkts = 1
			}
			w.xfer = wqeXfer{started: true, firstPSN: t.reqPSN, lastPSN: (t.reqPSN + npkts - 1) & psnMask}
			w.state = wqeProcessing
			if q.typ == verbs.QPTypeUD && w.length > mtu {
				// C10-93.1.1: a UD message larger than the MTU is silently
				// dropped, and the WR completes successfully.
				w.xfer.done = true
				w.state = wqeDone
				t.next++
				q.completeUnreliable()
				continue
			}
		}
		if !q.sendPackets(w) {
			return
		}
		t.next++
		if q.typ != verbs.QPTypeRC {
			// UC and UD: a WQE is done once its last packet left.
			w.state = wqeDone
			q.completeUnreliable()
		} else {
			w.state = wqePending
			if t.retransAt == 0 && q.timeout() > 0 {
				t.retransAt = f.now + q.timeout()
				f.armTimer(q)
			}
		}
	}
	if q.req == engDrain {
		q.checkDrained()
	}
}

// completeUnreliable retires finished UC/UD WQEs from the head.
func (q *qp) completeUnreliable() {
	for q.sq.count > 0 && q.t.next > 0 {
		w := q.sq.at(0)
		if w.state != wqeDone {
			return
		}
		q.completeSend(w)
	}
}

// sendPackets emits the remaining packets of w. It reports false when it
// had to stop (window full, or a local error).
func (q *qp) sendPackets(w *sendWQE) bool {
	f := q.f()
	t := &q.t
	mtu := q.pathMTU()
	op := w.wr.Opcode
	base := opcode(opRC)
	switch q.typ {
	case verbs.QPTypeUC:
		base = opUC
	case verbs.QPTypeUD:
		base = opUD
	}
	if op == verbs.WRRDMARead {
		npkts := (w.xfer.lastPSN - w.xfer.firstPSN + 1) & psnMask
		p := q.newPacket(base | opReadRequest)
		p.psn = w.xfer.firstPSN
		p.ackReq = true
		p.va, p.rkey, p.dmaLen = w.wr.RemoteAddr, w.wr.RKey, w.length
		t.reqPSN = (w.xfer.firstPSN + npkts) & psnMask
		w.xfer.done = true
		f.send(p)
		return true
	}
	if op.IsAtomic() {
		p := q.newPacket(base | opCompareSwap)
		if op == verbs.WRAtomicFetchAndAdd {
			p.op = base | opFetchAdd
			p.swap = w.wr.CompareAdd
		} else {
			p.swap, p.compare = w.wr.Swap, w.wr.CompareAdd
		}
		p.psn = w.xfer.firstPSN
		p.ackReq = true
		p.va, p.rkey = w.wr.RemoteAddr, w.wr.RKey
		t.reqPSN = (p.psn + 1) & psnMask
		w.xfer.done = true
		f.send(p)
		return true
	}
	for !w.xfer.done {
		if q.typ == verbs.QPTypeRC && psnCmp(t.reqPSN, t.compPSN+rxeMaxUnackedPSNs) > 0 {
			return false
		}
		n := w.length - w.xfer.sent
		first := w.xfer.sent == 0
		last := n <= mtu
		if !last {
			n = mtu
		}
		data, ok := q.payloadOf(w, w.xfer.sent, n)
		if !ok {
			q.failSend(w, verbs.WCLocProtErr, "an SGE's lkey does not name a registered MR of this PD, or the range lies outside it")
			return false
		}
		var code uint8
		isWrite := op == verbs.WRRDMAWrite || op == verbs.WRRDMAWriteWithImm
		imm := op == verbs.WRSendWithImm || op == verbs.WRRDMAWriteWithImm
		switch {
		case isWrite && first && last && imm:
			code = opWriteOnlyImm
		case isWrite && first && last:
			code = opWriteOnly
		case isWrite && first:
			code = opWriteFirst
		case isWrite && last && imm:
			code = opWriteLastImm
		case isWrite && last:
			code = opWriteLast
		case isWrite:
			code = opWriteMiddle
		case first && last && imm:
			code = opSendOnlyImm
		case first && last:
			code = opSendOnly
		case first:
			code = opSendFirst
		case last && imm:
			code = opSendLastImm
		case last:
			code = opSendLast
		default:
			code = opSendMiddle
		}
		p := q.newPacket(base | opcode(code))
		p.psn = t.reqPSN
		p.payload = data
		if isWrite && first {
			p.va, p.rkey, p.dmaLen = w.wr.RemoteAddr, w.wr.RKey, w.length
		}
		if last && imm {
			p.hasImm, p.imm = true, w.wr.Imm
		}
		if last && w.wr.Flags&verbs.SendSolicited != 0 && (!isWrite || imm) {
			p.se = true
		}
		if q.typ == verbs.QPTypeUD {
			p.destQP = w.wr.RemoteQPN & psnMask
			p.qkey, p.srcQP = w.wr.RemoteQKey, q.qpn
			p.sgid, _ = q.pd.ctx.dev.gid(int(w.ah.attr.GRH.SGIDIndex))
			p.dgid = w.ah.attr.GRH.DGID
		}
		if q.typ == verbs.QPTypeRC {
			t.noackPkts++
			if last || t.noackPkts > rxeMaxPktPerAck {
				p.ackReq = true
				t.noackPkts = 0
			}
		}
		t.reqPSN = (t.reqPSN + 1) & psnMask
		w.xfer.sent += n
		if last {
			w.xfer.done = true
		}
		f.send(p)
	}
	return true
}

// newPacket starts a packet from this QP to its peer (RC/UC: the AV).
func (q *qp) newPacket(op opcode) *packet {
	d := q.pd.ctx.dev
	p := &packet{from: d, op: op, destQP: q.attr.DestQPN & psnMask}
	p.sgid, _ = d.gid(int(q.attr.AH.GRH.SGIDIndex))
	p.dgid = q.attr.AH.GRH.DGID
	return p
}

// failSend completes w with an error status and moves the QP to ERR
// (the requester's err path and COMPST_ERROR: the WQE completes, signaled
// or not, then rxe_qp_error).
func (q *qp) failSend(w *sendWQE, st verbs.WCStatus, why string) {
	w.status, w.errWhy = st, why
	// Complete everything before it that is done, then this one.
	for q.sq.count > 0 && q.sq.at(0) != w {
		q.completeSend(q.sq.at(0))
	}
	if q.sq.count > 0 {
		q.completeSend(w)
	}
	q.toError()
}

// goBackN restarts the send queue from the oldest WQE not completed
// (req_retry): its PSNs are reused and everything after it is resent.
func (q *qp) goBackN() {
	t := &q.t
	if q.sq.count == 0 {
		t.next = 0
		return
	}
	first := q.sq.at(0)
	if first.xfer.started {
		t.reqPSN = first.xfer.firstPSN
	} else {
		t.reqPSN = t.compPSN
	}
	for i := 0; i < t.next; i++ {
		w := q.sq.at(i)
		if w.rdAtom {
			w.rdAtom = false
			t.rdAtomicFree++
		}
		w.xfer = wqeXfer{}
		w.state = wqePosted
	}
	t.next = 0
	t.noackPkts = 0
}

// timeoutRetry is the completer's ERROR_RETRY on a timeout: retry_cnt is
// spent (7 means forever, as rxe treats it), then RETRY_EXC_ERR.
func (q *qp) timeoutRetry() {
	t := &q.t
	if q.sq.count == 0 || t.next == 0 {
		return
	}
	if t.retryLeft == 0 {
		q.failSend(q.sq.at(0), verbs.WCRetryExcErr, "no ACK came back within the timeout, retry_cnt times")
		return
	}
	if q.attr.RetryCnt != 7 {
		t.retryLeft--
	}
	q.goBackN()
	q.f().schedule(q, taskReq)
}

// checkDrained is req_next_wqe's drain check: when no WQE is being sent
// the requester becomes DRAINED and raises IBV_EVENT_SQ_DRAINED (rxe
// raises it whether or not en_sqd_async_notify was set).
func (q *qp) checkDrained() {
	if q.t.next > 0 {
		return
	}
	q.req = engDrained
	q.pd.ctx.events = append(q.pd.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventSQDrained, QP: q}})
}

// ---------------------------------------------------------------- completer

// completer is rxe_completer: it takes one response packet (or none, to
// flush in the error state).
func (q *qp) completer(p *packet) {
	t := &q.t
	f := q.f()
	if q.comp == engError {
		for q.sq.count > 0 {
			w := q.sq.at(0)
			w.status = verbs.WCWRFlushErr
			q.completeSend(w)
		}
		t.next = 0
		return
	}
	if p == nil || q.typ != verbs.QPTypeRC {
		return
	}
	for q.sq.count > 0 && t.next > 0 {
		w := q.sq.at(0)
		wop := w.wr.Opcode
		isRdAt := wop == verbs.WRRDMARead || wop.IsAtomic()
		// check_psn: a response past this WQE acks it implicitly, unless
		// it still waits for read or atomic data.
		if psnCmp(p.psn, w.xfer.lastPSN) > 0 {
			if isRdAt {
				q.goBackN()
				f.schedule(q, taskReq)
				return
			}
			if !w.xfer.done {
				return
			}
			q.ackWQE(w)
			continue
		}
		if psnCmp(p.psn, w.xfer.firstPSN) < 0 {
			return // old or duplicate response
		}
		syn := p.syn
		switch {
		case p.op.isReadResp():
			if wop != verbs.WRRDMARead {
				return
			}
			off := ((p.psn - w.xfer.firstPSN) & psnMask) * q.pathMTU()
			if !q.scatter(w.sge, off, p.payload) {
				q.failSend(w, verbs.WCLocProtErr, "the READ's local SGE names a bad lkey, a range outside the MR, or an MR without local write")
				return
			}
			t.retryLeft = int(q.attr.RetryCnt)
			t.rnrRetryLeft = int(q.attr.RNRRetry)
			t.compPSN = (p.psn + 1) & psnMask
			if p.op.op() == opReadRespLast || p.op.op() == opReadRespOnly {
				q.ackWQE(w)
			}
			return
		case p.op.op() == opAtomicAck:
			if !wop.IsAtomic() {
				return
			}
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], p.orig)
			if !q.scatter(w.sge, 0, b[:]) {
				q.failSend(w, verbs.WCLocProtErr, "the atomic's local SGE names a bad lkey or an MR without local write")
				return
			}
			t.compPSN = (p.psn + 1) & psnMask
			q.ackWQE(w)
			return
		case syn&synTypeMask == 0: // ACK
			if isRdAt {
				return
			}
			t.retryLeft = int(q.attr.RetryCnt)
			t.rnrRetryLeft = int(q.attr.RNRRetry)
			if psnCmp(p.psn, w.xfer.lastPSN) == 0 && w.xfer.done {
				q.ackWQE(w)
				continue
			}
			t.compPSN = (p.psn + 1) & psnMask
			return
		case syn&synTypeMask == synRNRNAK:
			if t.rnrRetryLeft == 0 {
				q.failSend(w, verbs.WCRNRRetryExcErr, "the receiver had no receive posted (RNR NAK), rnr_retry times")
				return
			}
			if q.attr.RNRRetry != 7 {
				t.rnrRetryLeft--
			}
			t.compPSN = p.psn
			t.waitRNR = true
			t.retransAt = 0
			t.rnrAt = f.now + time.Duration(rnrNakUsec[syn&0x1f])*time.Microsecond
			f.armTimer(q)
			return
		case syn == synNAKPSNSeq:
			t.compPSN = p.psn
			if t.retryLeft == 0 {
				q.failSend(w, verbs.WCRetryExcErr, "PSN sequence errors, retry_cnt times")
				return
			}
			if q.attr.RetryCnt != 7 {
				t.retryLeft--
			}
			q.goBackN()
			f.schedule(q, taskReq)
			return
		case syn == synNAKInvReq:
			q.failSend(w, verbs.WCRemInvReqErr, "the responder answered NAK invalid request")
			return
		case syn == synNAKRemAcc:
			q.failSend(w, verbs.WCRemAccessErr, "the responder answered NAK remote access error")
			return
		default:
			q.failSend(w, verbs.WCRemOpErr, "the responder answered NAK remote operational error")
			return
		}
	}
}

// ackWQE completes an acknowledged WQE (complete_ack).
func (q *qp) ackWQE(w *sendWQE) {
	t := &q.t
	f := q.f()
	if w.rdAtom {
		w.rdAtom = false
		t.rdAtomicFree++
		f.schedule(q, taskReq)
	}
	t.compPSN = (w.xfer.lastPSN + 1) & psnMask
	q.completeSend(w)
	if psnCmp(t.reqPSN, t.compPSN) > 0 && q.timeout() > 0 {
		t.retransAt = f.now + q.timeout()
		f.armTimer(q)
	} else {
		t.retransAt = 0
	}
	if q.req == engDrain {
		q.checkDrained()
	}
	f.schedule(q, taskReq)
}

// completeSend is do_complete: post the send completion if it was asked
// for or failed, and retire the WQE.
func (q *qp) completeSend(w *sendWQE) {
	post := w.signal || w.status != verbs.WCSuccess
	var wc verbs.WC
	if post {
		wc = verbs.WC{WRID: w.wr.WRID, Status: w.status, QPNum: q.qpn}
		if w.status == verbs.WCSuccess {
			wc.Opcode = wcOpcodeOf(w.wr.Opcode)
			if w.wr.Opcode == verbs.WRRDMAWriteWithImm || w.wr.Opcode == verbs.WRSendWithImm {
				wc.Flags = verbs.WCWithImm
			}
			wc.ByteLen = w.length
		}
	}
	if w.rdAtom {
		w.rdAtom = false
		q.t.rdAtomicFree++
	}
	q.sq.pop()
	if q.t.next > 0 {
		q.t.next--
	}
	if post {
		q.scq.post(wc, false)
	}
}

// wcOpcodeOf is wr_to_wc_opcode.
func wcOpcodeOf(op verbs.WROpcode) verbs.WCOpcode {
	switch op {
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		return verbs.WCOpRDMAWrite
	case verbs.WRSend, verbs.WRSendWithImm, verbs.WRSendWithInv:
		return verbs.WCOpSend
	case verbs.WRRDMARead:
		return verbs.WCOpRDMARead
	case verbs.WRAtomicCmpAndSwp:
		return verbs.WCOpCompSwap
	case verbs.WRAtomicFetchAndAdd:
		return verbs.WCOpFetchAdd
	case verbs.WRLocalInv:
		return verbs.WCOpLocalInv
	}
	return 0
}
