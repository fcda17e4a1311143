package sim

import (
	"encoding/binary"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The responder (rxe_resp.c, Linux 6.1): it executes requests in PSN
// order, takes receive WQEs, writes memory, answers READs and atomics,
// acknowledges, and turns errors into NAKs and error completions.

type respState int

const (
	respGetReq respState = iota
	respChkPSN
	respChkOpSeq
	respChkOpValid
	respChkResource
	respChkRkey
	respExecute
	respReadReply
	respAtomicReply
	respComplete
	respAcknowledge
	respCleanup
	respDuplicate
	respErrMalformedWQE
	respErrUnsupportedOpcode
	respErrMisalignedAtomic
	respErrPSNOutOfSeq
	respErrMissingOpcodeFirst
	respErrMissingOpcodeLastC
	respErrMissingOpcodeLastD1E
	respErrTooManyRdmaAtmReq
	respErrRNR
	respErrRkeyViolation
	respErrInvalidateRkey
	respErrLength
	respErrCQOverflow
	respError
	respReset
	respDone
	respExit
)

// copy_data's errors, as the callers tell them apart.
const (
	copyOK    = iota
	copyInval // -EINVAL: too much data, or an lkey that does not resolve
	copyFault // -EFAULT: a range outside its MR
	copyNoSpc // -ENOSPC: the SGE list ran out
)

// responder is rxe_responder. It reports whether it made progress, so that
// the task runs it again.
func (q *qp) responder() bool {
	r := &q.resp
	r.aethSyn = wire.SyndromeACK
	state := respGetReq
	if r.state == engReset {
		state = respReset
	}
	return q.respSteps(state, nil)
}

// respSteps runs rxe_responder's state machine from state, with p the
// request in hand (nil before get_req and after cleanup).
func (q *qp) respSteps(state respState, p *packet) bool {
	r := &q.resp
	for guard := 0; guard < 1<<16; guard++ {
		switch state {
		case respGetReq:
			state, p = q.getReq()
		case respChkPSN:
			// A new request goes through the checks in rxe's order. When
			// a step leads to the next one, as it usually does, the switch
			// falls through to it rather than taking a turn of the loop.
			if state = q.respCheckPSN(p); state != respChkOpSeq {
				continue
			}
			fallthrough
		case respChkOpSeq:
			if state = q.checkOpSeq(p); state != respChkOpValid {
				continue
			}
			fallthrough
		case respChkOpValid:
			if state = q.checkOpValid(p); state != respChkResource {
				continue
			}
			fallthrough
		case respChkResource:
			if state = q.checkResource(p); state != respChkRkey {
				continue
			}
			fallthrough
		case respChkRkey:
			if state = q.checkRkey(p); state != respExecute {
				continue
			}
			fallthrough
		case respExecute:
			if state = q.execute(p); state != respAcknowledge {
				continue
			}
			fallthrough
		case respAcknowledge:
			if state = q.acknowledge(p); state != respCleanup {
				continue
			}
			fallthrough
		case respCleanup:
			state = q.respCleanup(p)
			p = nil
		case respComplete:
			state = q.respComplete(p)
		case respReadReply:
			state = q.readReply(p)
		case respAtomicReply:
			state = q.atomicReply(p)
		case respDuplicate:
			state = q.duplicateRequest(p)
		case respErrPSNOutOfSeq:
			// RC class B: one NAK carrying the PSN expected, then drop.
			q.sendAck(wire.NAK(0), r.psn)
			state = respCleanup
		case respErrTooManyRdmaAtmReq, respErrMissingOpcodeFirst, respErrMissingOpcodeLastC,
			respErrUnsupportedOpcode, respErrMisalignedAtomic:
			// RC class C.
			q.classAC(wire.NAK(1), verbs.WCRemInvReqErr, respErrWhy(state))
			state = respComplete
		case respErrMissingOpcodeLastD1E:
			q.discard(p, "it is not the MIDDLE or LAST the message under way needs (do_class_d1e_error)")
			state = q.classD1E()
		case respErrRNR:
			if q.reliable() {
				// RC class B: RNR NAK with the QP's min_rnr_timer.
				q.sendAck(wire.RNRNAK(wire.RNRTimer(q.attr.MinRNRTimer&0x1f)), uint32(p.hdr.BTH.PSN))
			} else {
				r.dropMsg = true // UC, UD: class D
				q.discard(p, "no receive posted for a new message")
			}
			state = respCleanup
		case respErrRkeyViolation:
			if q.reliable() {
				q.classAC(wire.NAK(2), verbs.WCRemAccessErr, "the R_Key, the range or the MR's access does not allow it (check_rkey)")
				state = respComplete
			} else {
				r.dropMsg = true
				q.discard(p, "the R_Key, the range or the MR's access does not allow the WRITE (check_rkey)")
				if q.srq != nil {
					r.status = verbs.WCRemAccessErr // UC with SRQ: class D
					state = respComplete
				} else {
					state = respCleanup // UC: class E
				}
			}
		case respErrInvalidateRkey:
			// RC class J.
			r.gotoError = true
			r.status = verbs.WCRemInvReqErr
			r.errWhy = "SEND with invalidate names an R_Key rxe cannot invalidate (rxe_invalidate_mr)"
			state = respComplete
		case respErrLength:
			switch {
			case q.reliable():
				q.classAC(wire.NAK(1), verbs.WCRemInvReqErr, "the packet's length does not fit the message (check_rkey)")
				state = respComplete
			case q.srq != nil:
				r.status = verbs.WCRemInvReqErr // UC/UD with SRQ: class E
				state = respComplete
			default:
				r.dropMsg = true // UC/UD: class D
				q.discard(p, "the message does not fit the receive buffer (check_length)")
				state = respCleanup
			}
		case respErrMalformedWQE:
			// All: class A.
			q.classAC(wire.NAK(3), verbs.WCLocQPOpErr, "the receive WQE cannot take the data: "+r.errWhy)
			state = respComplete
		case respErrCQOverflow:
			state = respError // class G
		case respDone:
			if r.gotoError {
				state = respError
				continue
			}
			return true
		case respExit:
			if r.gotoError {
				state = respError
				continue
			}
			return false
		case respReset:
			q.drainReqPkts()
			if q.srq == nil {
				q.rq.clear()
			}
			r.wqe = nil
			return false
		case respError:
			r.gotoError = false
			q.toError()
			return false
		default:
			return false
		}
	}
	return false
}

func respErrWhy(s respState) string {
	switch s {
	case respErrTooManyRdmaAtmReq:
		return "a READ or atomic arrived but max_dest_rd_atomic is 0 (check_resource)"
	case respErrMissingOpcodeFirst:
		return "a MIDDLE or LAST packet arrived without a FIRST (check_op_seq)"
	case respErrMissingOpcodeLastC:
		return "a new message started before the last one ended (check_op_seq)"
	case respErrUnsupportedOpcode:
		return "the QP's access flags do not allow this operation (check_op_valid)"
	case respErrMisalignedAtomic:
		return "the atomic's address is not 8-byte aligned (atomic_reply)"
	}
	return ""
}

// classAC is do_class_ac_error: the NAK to send, the status of the receive
// WQE, and the QP goes to ERR after this packet.
func (q *qp) classAC(syn wire.Syndrome, st verbs.WCStatus, why string) {
	r := &q.resp
	r.aethSyn = syn
	r.status = st
	r.gotoError = true
	if why != "" {
		r.errWhy = why
	}
}

// classD1E is do_class_d1e_error (UC): with an SRQ, drop the message and
// fail its receive; without, forget the message and keep the WQE for the
// next one.
func (q *qp) classD1E() respState {
	r := &q.resp
	if q.srq != nil {
		r.dropMsg = true
		if r.wqe != nil {
			r.status = verbs.WCRemInvReqErr
			return respComplete
		}
		return respCleanup
	}
	if r.wqe != nil {
		r.wqe.dma.reset()
		r.opcode = -1
	}
	r.mr = nil
	return respCleanup
}

// getReq is get_req.
func (q *qp) getReq() (respState, *packet) {
	r := &q.resp
	if r.state == engError {
		q.drainReqPkts()
		return respChkResource, nil
	}
	p := r.pkts.peek()
	if p == nil {
		return respExit, nil
	}
	if r.res != nil {
		return respReadReply, p
	}
	return respChkPSN, p
}

// respCheckPSN is the responder's check_psn.
func (q *qp) respCheckPSN(p *packet) respState {
	r := &q.resp
	diff := psnCmp(uint32(p.hdr.BTH.PSN), r.psn)
	switch q.typ {
	case verbs.QPTypeRC, verbs.QPTypeXRCRecv:
		if diff > 0 {
			if r.sentPSNNak {
				q.discard(p, "its PSN is past the one expected, and the NAK saying so was sent already")
				return respCleanup
			}
			r.sentPSNNak = true
			return respErrPSNOutOfSeq
		}
		if diff < 0 {
			return respDuplicate
		}
		r.sentPSNNak = false
	case verbs.QPTypeUC:
		if r.dropMsg || diff != 0 {
			if p.hdr.BTH.Opcode.IsFirst() {
				r.dropMsg = false
				return respChkOpSeq
			}
			if diff != 0 {
				q.discard(p, "a packet of its message was lost (a PSN gap), so UC drops the rest of the message")
			} else {
				q.discard(p, "the rest of a message UC is dropping")
			}
			r.dropMsg = true
			return respCleanup
		}
	}
	return respChkOpSeq
}

// checkOpSeq is check_op_seq: after FIRST or MIDDLE only MIDDLE or LAST
// of the same kind; a MIDDLE or LAST needs a FIRST.
func (q *qp) checkOpSeq(p *packet) respState {
	if !q.connected() {
		return respChkOpValid
	}
	r := &q.resp
	op := p.hdr.BTH.Opcode & 0x1f
	var inSend, inWrite bool
	if prev := r.opcode; prev >= 0 {
		switch wire.Opcode(prev) & 0x1f {
		case wire.RCSendFirst, wire.RCSendMiddle:
			inSend = true
		case wire.RCRDMAWriteFirst, wire.RCRDMAWriteMiddle:
			inWrite = true
		}
	}
	var sendCont, writeCont bool
	switch op {
	case wire.RCSendMiddle, wire.RCSendLast, wire.RCSendLastImm:
		sendCont = true
	case wire.RCSendLastInvalidate:
		sendCont = q.reliable()
	case wire.RCRDMAWriteMiddle, wire.RCRDMAWriteLast, wire.RCRDMAWriteLastImm:
		writeCont = true
	}
	bad := respErrMissingOpcodeLastC
	if q.typ == verbs.QPTypeUC {
		bad = respErrMissingOpcodeLastD1E
	}
	switch {
	case inSend:
		if sendCont {
			return respChkOpValid
		}
		return bad
	case inWrite:
		if writeCont {
			return respChkOpValid
		}
		return bad
	case sendCont || writeCont:
		if q.typ == verbs.QPTypeUC {
			q.discard(p, "a MIDDLE or LAST with no FIRST before it")
			r.dropMsg = true
			return respCleanup
		}
		return respErrMissingOpcodeFirst
	}
	return respChkOpValid
}

// checkOpValid is check_op_valid: the QP's own access flags.
func (q *qp) checkOpValid(p *packet) respState {
	fl := p.hdr.BTH.Opcode.Flags()
	acc := q.attr.AccessFlags
	switch q.typ {
	case verbs.QPTypeRC, verbs.QPTypeXRCRecv:
		if (fl&wire.FlagRead != 0 && acc&verbs.AccessRemoteRead == 0) ||
			(fl&wire.FlagWrite != 0 && acc&verbs.AccessRemoteWrite == 0) ||
			(fl&wire.FlagAtomic != 0 && acc&verbs.AccessRemoteAtomic == 0) {
			return respErrUnsupportedOpcode
		}
	case verbs.QPTypeUC:
		if fl&wire.FlagWrite != 0 && acc&verbs.AccessRemoteWrite == 0 {
			q.discard(p, "the QP's access flags lack IBV_ACCESS_REMOTE_WRITE")
			q.resp.dropMsg = true
			return respCleanup
		}
	}
	return respChkResource
}

// checkResource is check_resource: in ERR it flushes the receive queue;
// a READ or atomic needs max_dest_rd_atomic > 0; a packet that starts a
// receive takes a WQE from the SRQ or the receive queue, or gets RNR.
func (q *qp) checkResource(p *packet) respState {
	r := &q.resp
	if r.state == engError {
		if r.wqe != nil {
			r.status = verbs.WCWRFlushErr
			return respComplete
		}
		if q.srq == nil {
			if w := q.rq.peek(); w != nil {
				q.takeWQE(w)
				r.status = verbs.WCWRFlushErr
				return respComplete
			}
		}
		return respExit
	}
	if q.typ == verbs.QPTypeXRCRecv {
		if why, ok := q.xrcTarget(p); !ok {
			// The rxe XRC patch series (2021): RESPST_ERR_INVALID_XRCETH,
			// a class A error with a remote access NAK.
			q.classAC(wire.NAK(2), verbs.WCRemAccessErr, why)
			return respComplete
		}
	}
	fl := p.hdr.BTH.Opcode.Flags()
	if fl&(wire.FlagRead|wire.FlagAtomic) != 0 {
		// The requester keeps count; the responder only recycles its
		// resources.
		if q.attr.MaxDestRdAtomic > 0 {
			return respChkRkey
		}
		return respErrTooManyRdmaAtmReq
	}
	if fl&wire.FlagRWR != 0 {
		if q.srq != nil {
			return q.getSRQWQE()
		}
		w := q.rq.peek()
		if w == nil {
			return respErrRNR
		}
		q.takeWQE(w)
	}
	return respChkRkey
}

// takeWQE copies a receive WQE for the responder to fill (rxe keeps a
// copy in resp.srq_wqe, for the receive queue as for the SRQ).
func (q *qp) takeWQE(w *recvWQE) {
	c := &q.resp.wqeCopy
	c.wrID, c.length = w.wrID, w.length
	c.sge = append(c.sge[:0], w.sge...)
	c.dma = dmaInfo{length: w.length, resid: w.length}
	q.resp.wqe = c
}

// getSRQWQE is get_srq_wqe: take the SRQ's oldest WQE; the limit event
// fires when fewer than srq_limit are left.
func (q *qp) getSRQWQE() respState {
	s := q.srq
	w := s.rq.peek()
	if w == nil {
		return respErrRNR
	}
	q.takeWQE(w)
	s.rq.pop()
	if s.limit > 0 && s.rq.count < s.limit {
		s.limit = 0
		s.pd.ctx.events = append(s.pd.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventSRQLimitReached, SRQ: s}})
		s.pd.ctx.fab().asyncQueued(s.pd.ctx)
	}
	return respChkRkey
}

// checkRkey is check_rkey: the R_Key, the range and, for writes, the
// packet length against what the RETH promised.
func (q *qp) checkRkey(p *packet) respState {
	r := &q.resp
	h := &p.hdr
	fl := h.BTH.Opcode.Flags()
	var access verbs.Access
	switch {
	case fl&(wire.FlagRead|wire.FlagWrite) != 0:
		if h.BTH.Opcode.Has(wire.HasRETH) {
			r.va, r.offset, r.rkey = h.RETH.VA, 0, h.RETH.RKey
			r.resid, r.length = h.RETH.DMALen, h.RETH.DMALen
		}
		access = verbs.AccessRemoteWrite
		if fl&wire.FlagRead != 0 {
			access = verbs.AccessRemoteRead
		}
	case fl&wire.FlagAtomic != 0:
		r.va, r.offset, r.rkey = h.AtomicETH.VA, 0, h.AtomicETH.RKey
		r.resid = 8
		access = verbs.AccessRemoteAtomic
	default:
		return respExecute
	}
	// A zero-length READ or WRITE needs no address or R_Key (C9-88).
	if fl&(wire.FlagRead|wire.FlagWrite) != 0 && h.BTH.Opcode.Has(wire.HasRETH) && h.RETH.DMALen == 0 {
		return respExecute
	}
	m := q.lookupRemote(r.rkey, access)
	if m == nil {
		return respErrRkeyViolation
	}
	if !m.contains(r.va+r.offset, uint64(r.resid)) {
		return respErrRkeyViolation
	}
	if fl&wire.FlagWrite != 0 {
		n := uint32(len(h.Payload))
		pad := h.PadCount()
		if r.resid > q.mtu {
			if n != q.mtu || pad != 0 {
				return respErrLength
			}
		} else if n != r.resid || pad != int(-r.resid&3) {
			return respErrLength
		}
	}
	r.mr = m
	return respExecute
}

// sendDataIn is send_data_in: copy into the receive WQE.
func (q *qp) sendDataIn(b []byte) respState {
	r := &q.resp
	if r.wqe == nil {
		r.errWhy = "no receive WQE"
		return respErrMalformedWQE
	}
	kind, why := q.copyIn(r.wqe.sge, &r.wqe.dma, b)
	switch kind {
	case copyOK:
		return respNone
	case copyNoSpc:
		return respErrLength
	}
	r.errWhy = why
	return respErrMalformedWQE
}

// respNone means "no error" from a step that may fail.
const respNone respState = -1

// execute runs a new request (a duplicate never gets here).
func (q *qp) execute(p *packet) respState {
	r := &q.resp
	h := &p.hdr
	fl := h.BTH.Opcode.Flags()
	switch {
	case fl&wire.FlagSend != 0:
		if q.typ == verbs.QPTypeUD {
			var grh [wire.GRHLen]byte
			if err := p.network().PutGRH(grh[:], h); err != nil {
				r.errWhy = "no network header: " + err.Error()
				return respErrMalformedWQE
			}
			if p.loopback && !p.mcast && grh[20]>>4 == 4 {
				// rxe_loopback skips ip_local_out, which is what fills
				// the IPv4 header checksum; rxe leaves whatever the skb
				// held, the simulator 0. (A multicast copy went through
				// ip_local_out before the IP layer looped it back.)
				grh[30], grh[31] = 0, 0
			}
			if st := q.sendDataIn(grh[:]); st != respNone {
				return st
			}
		}
		if st := q.sendDataIn(h.Payload); st != respNone {
			return st
		}
	case fl&wire.FlagWrite != 0:
		// write_data_in
		if n := len(h.Payload); n > 0 {
			m := r.mr
			va := r.va + r.offset
			if m == nil || !m.contains(va, uint64(n)) {
				return respErrRkeyViolation
			}
			copy(m.buf[va-m.addr:], h.Payload)
			r.va += uint64(n)
			r.resid -= uint32(n)
		}
	case fl&wire.FlagRead != 0:
		r.msn++ // a READ counts at once (C9-148)
		return respReadReply
	case fl&wire.FlagAtomic != 0:
		return respAtomicReply
	}
	if h.BTH.Opcode.Has(wire.HasIETH) {
		// Only a fast-registered MR (or a memory window) can be invalidated;
		// every MR here comes from ibv_reg_mr.
		return respErrInvalidateRkey
	}
	if fl&wire.FlagEnd != 0 {
		r.msn++
	}
	r.psn = (uint32(h.BTH.PSN) + 1) & psnMask
	r.ackPSN = r.psn
	r.opcode = int(h.BTH.Opcode)
	r.status = verbs.WCSuccess
	switch {
	case fl&wire.FlagComp != 0:
		return respComplete
	case q.reliable():
		return respAcknowledge
	}
	return respCleanup
}

// respComplete is the responder's do_complete: the receive completion.
func (q *qp) respComplete(p *packet) respState {
	r := &q.resp
	w := r.wqe
	if w != nil {
		wc := verbs.WC{WRID: w.wrID, Status: r.status, QPNum: q.qpn}
		if r.status == verbs.WCSuccess {
			h := &p.hdr
			op := h.BTH.Opcode
			writeImm := op.Has(wire.HasImmDt) && op.Flags()&wire.FlagWrite != 0
			wc.Opcode = verbs.WCOpRecv
			wc.ByteLen = w.dma.length - w.dma.resid
			if writeImm {
				wc.Opcode = verbs.WCOpRecvRDMAWithImm
				wc.ByteLen = r.length
			}
			wc.Flags = verbs.WCGRH
			if op.Has(wire.HasImmDt) {
				wc.Flags |= verbs.WCWithImm
				wc.Imm = h.ImmDt
			}
			if op.Has(wire.HasIETH) {
				wc.Flags |= verbs.WCWithInv
				wc.Imm = h.IETH
			}
			if op.Has(wire.HasDETH) {
				wc.SrcQP = h.DETH.SrcQP
			}
			if q.typ == verbs.QPTypeXRCRecv {
				wc.SrcQP = q.attr.DestQPN // the sending XRC_SEND QP, as mlx5's CQE gives it
			}
		}
		if q.srq == nil {
			q.rq.pop()
		}
		r.wqe = nil
		solicited := true // a flush has no packet: do_complete counts it solicited
		if p != nil {
			solicited = p.hdr.BTH.SE
		}
		cq := q.rcq
		if q.typ == verbs.QPTypeXRCRecv {
			cq = q.srq.cq // an XRC receive completes on its SRQ's CQ
			if q.srq.dead != "" {
				cq = nil // destroyed under the message: its WQE went with it
			}
		}
		if cq != nil {
			cq.noteWhy(wc, r.errWhy)
		}
		if cq != nil && !cq.post(wc, solicited) {
			return respErrCQOverflow
		}
	}
	if r.state == engError {
		return respChkResource
	}
	if p == nil {
		return respDone
	}
	if q.reliable() {
		return respAcknowledge
	}
	return respCleanup
}

// prepareRes is rxe_prepare_res: take the next responder resource for a
// READ or atomic, recycling the oldest.
func (q *qp) prepareRes(p *packet, typ int) *respRes {
	r := &q.resp
	if len(r.resources) == 0 {
		r.resources = make([]respRes, 1) // cannot happen: max_dest_rd_atomic > 0 was checked
	}
	res := &r.resources[r.resHead]
	r.resHead = (r.resHead + 1) % len(r.resources)
	*res = respRes{typ: typ}
	psn := uint32(p.hdr.BTH.PSN)
	switch typ {
	case int(wire.FlagRead):
		res.readVA = r.va + r.offset
		res.readOrg = res.readVA
		res.resid, res.length, res.rkey = r.resid, r.resid, r.rkey
		pkts := max((p.hdr.RETH.DMALen+q.mtu-1)/q.mtu, 1)
		res.firstPSN, res.curPSN = psn, psn
		res.lastPSN = (psn + pkts - 1) & psnMask
	case int(wire.FlagAtomic):
		res.firstPSN, res.lastPSN, res.curPSN = psn, psn, psn
	}
	return res
}

// recheckMR is rxe_recheck_mr: the MR behind an R_Key, still valid.
func (q *qp) recheckMR(rkey uint32) *mr {
	m := q.pd.ctx.dev.mrByIndex(rkey >> 8)
	if m == nil || m.dead != "" || m.rkey != rkey || (q.typ == verbs.QPTypeXRCRecv && m.pd != q.memPD()) {
		return nil
	}
	return m
}

// readReply is read_reply: one READ response packet per call, over the
// PSNs the request reserved, replayed from a duplicate's PSN.
func (q *qp) readReply(p *packet) respState {
	f := q.f()
	r := &q.resp
	mtu := q.mtu
	if q.inflight > inflightHigh {
		// Room first for the responses already out; the READ stays at
		// the head of the queue and resumes from where it stopped.
		q.needSkb = true
		return respExit
	}
	res := r.res
	if res == nil {
		res = q.prepareRes(p, int(wire.FlagRead))
		r.res = res
	}
	var m *mr
	var op wire.Opcode
	if !res.next {
		if !res.replay {
			m, r.mr = r.mr, nil
		} else if m = q.recheckMR(res.rkey); m == nil {
			return respErrRkeyViolation
		}
		op = wire.RCRDMAReadResponseFirst
		if res.resid <= mtu {
			op = wire.RCRDMAReadResponseOnly
		}
	} else {
		if m = q.recheckMR(res.rkey); m == nil {
			return respErrRkeyViolation
		}
		op = wire.RCRDMAReadResponseLast
		if res.resid > mtu {
			op = wire.RCRDMAReadResponseMiddle
		}
	}
	res.next = true
	n := min(res.resid, mtu)
	ack, ok := q.ackPacket(op, res.curPSN, wire.SyndromeACK)
	if !ok {
		return respErrRNR
	}
	if n > 0 && m != nil {
		if !m.contains(res.readVA, uint64(n)) {
			f.net.pool.put(ack)
			return respErrRkeyViolation
		}
		f.setPayload(ack, m.buf[res.readVA-m.addr:res.readVA-m.addr+uint64(n)])
	}
	if err := f.xmit(q, ack, false); err != nil {
		return respErrRNR
	}
	res.readVA += uint64(n)
	res.resid -= n
	res.curPSN = (res.curPSN + 1) & psnMask
	if res.resid > 0 {
		return respDone
	}
	r.res = nil
	if !res.replay {
		r.opcode = -1
	}
	if psnCmp(res.curPSN, r.psn) >= 0 {
		r.psn = res.curPSN
	}
	return respCleanup
}

// atomicReply is atomic_reply: compare-and-swap or fetch-and-add on 8
// bytes of the MR (host byte order, little-endian here); a replayed atomic
// is answered from the saved original value without touching memory.
func (q *qp) atomicReply(p *packet) respState {
	r := &q.resp
	res := r.res
	if res == nil {
		res = q.prepareRes(p, int(wire.FlagAtomic))
		r.res = res
	}
	if !res.replay {
		m := r.mr
		if m == nil || m.dead != "" {
			return respErrRkeyViolation
		}
		va := r.va + r.offset
		if va&7 != 0 || !m.contains(va, 8) {
			return respErrMisalignedAtomic
		}
		b := m.buf[va-m.addr:]
		orig := binary.LittleEndian.Uint64(b)
		res.origVal = orig
		v := orig
		a := &p.hdr.AtomicETH
		if p.hdr.BTH.Opcode&0x1f == wire.RCCompareSwap {
			if v == a.Compare {
				v = a.SwapAdd
			}
		} else {
			v += a.SwapAdd
		}
		binary.LittleEndian.PutUint64(b, v)
		r.msn++
		r.psn = (uint32(p.hdr.BTH.PSN) + 1) & psnMask
		r.ackPSN = r.psn
		r.opcode = int(p.hdr.BTH.Opcode)
		r.status = verbs.WCSuccess
	}
	return respAcknowledge
}

// ackPacket is prepare_ack_packet: a response from this QP to its peer.
func (q *qp) ackPacket(op wire.Opcode, psn uint32, syn wire.Syndrome) (*packet, bool) {
	f := q.f()
	if q.route == nil || q.route.err != "" {
		return nil, false // rxe_prepare fails: no skb
	}
	op = q.respOp(op)
	p := f.net.pool.get()
	p.setRoute(q.route, q.srcPort)
	p.hdr.BTH = wire.BTHFields{Opcode: op, PKey: wire.DefaultPKey, DestQP: q.attr.DestQPN & wire.QPNMask, PSN: wire.PSN(psn & psnMask)}
	if op.Has(wire.HasAETH) {
		p.hdr.AETH = wire.AETHFields{Syndrome: syn, MSN: q.resp.msn & 0xffffff}
	}
	if op.Has(wire.HasAtomicAckETH) && q.resp.res != nil {
		p.hdr.AtomicAckETH = q.resp.res.origVal
	}
	return p, true
}

// sendAck is send_ack: an ACKNOWLEDGE with a syndrome and PSN.
func (q *qp) sendAck(syn wire.Syndrome, psn uint32) {
	if p, ok := q.ackPacket(wire.RCAcknowledge, psn, syn); ok {
		_ = q.f().xmit(q, p, false)
	}
}

// acknowledge: a NAK when a syndrome was set, an ATOMIC ACKNOWLEDGE for an
// atomic, an ACK when the request asked for one.
func (q *qp) acknowledge(p *packet) respState {
	if !q.reliable() {
		return respCleanup
	}
	r := &q.resp
	psn := uint32(p.hdr.BTH.PSN)
	switch {
	case r.aethSyn != wire.SyndromeACK:
		q.sendAck(r.aethSyn, psn)
	case p.hdr.BTH.Opcode.Flags()&wire.FlagAtomic != 0:
		if a, ok := q.ackPacket(wire.RCAtomicAcknowledge, psn, wire.SyndromeACK); ok {
			_ = q.f().xmit(q, a, false)
		}
		r.res = nil
	case p.hdr.BTH.AckReq:
		q.sendAck(wire.SyndromeACK, psn)
	}
	return respCleanup
}

// respCleanup is cleanup: the packet is done with.
func (q *qp) respCleanup(p *packet) respState {
	if p != nil {
		if x := q.resp.pkts.pop(); x != nil {
			q.f().net.pool.put(x)
		}
	}
	q.resp.mr = nil
	return respDone
}

// findResource is find_resource: the READ or atomic whose PSNs hold psn.
func (q *qp) findResource(psn uint32) *respRes {
	for i := range q.resp.resources {
		res := &q.resp.resources[i]
		if res.typ == 0 {
			continue
		}
		if psnCmp(psn, res.firstPSN) >= 0 && psnCmp(psn, res.lastPSN) <= 0 {
			return res
		}
	}
	return nil
}

// duplicateRequest is duplicate_request: a SEND or WRITE is acknowledged
// again (C9-105); a READ is answered again from the PSN asked, if it is
// the same as or part of the original; an atomic gets its saved result.
func (q *qp) duplicateRequest(p *packet) respState {
	r := &q.resp
	fl := p.hdr.BTH.Opcode.Flags()
	switch {
	case fl&(wire.FlagSend|wire.FlagWrite) != 0:
		q.sendAck(wire.SyndromeACK, (r.ackPSN-1)&psnMask)
		return respCleanup
	case fl&wire.FlagRead != 0:
		psn := uint32(p.hdr.BTH.PSN)
		res := q.findResource(psn)
		if res == nil {
			return respCleanup // class D: drop
		}
		va, n := p.hdr.RETH.VA, p.hdr.RETH.DMALen
		if va < res.readOrg || n > res.length || va+uint64(n) > res.readOrg+uint64(res.length) || p.hdr.RETH.RKey != res.rkey {
			return respCleanup
		}
		res.curPSN = psn
		res.next = psn != res.firstPSN
		res.replay = true
		res.readOrg, res.readVA, res.resid = va, va, n
		r.res = res
		return respReadReply
	}
	res := q.findResource(uint32(p.hdr.BTH.PSN))
	if res == nil {
		return respCleanup
	}
	res.replay = true
	res.curPSN = uint32(p.hdr.BTH.PSN)
	r.res = res
	return respAtomicReply
}

// copyIn is copy_data into memory for the responder: it returns which of
// copy_data's errors happened.
func (q *qp) copyIn(sgl []verbs.SGE, dma *dmaInfo, src []byte) (int, string) {
	st, why := q.copyToSGL(sgl, dma, src)
	switch {
	case st == verbs.WCSuccess:
		return copyOK, ""
	case st == verbs.WCLocProtErr:
		return copyFault, why
	case why == noSpcWhy:
		return copyNoSpc, why
	}
	return copyInval, why
}
