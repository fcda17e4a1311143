package sim

import (
	"encoding/binary"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The completer (rxe_comp.c, Linux 6.1): it matches ACKs, NAKs and READ
// and atomic responses against the oldest send WQEs, completes them, and
// decides on retries.

type compState int

const (
	compGetAck compState = iota
	compGetWQE
	compCompWQE
	compCompAck
	compCheckPSN
	compCheckAck
	compRead
	compAtomic
	compWriteSend
	compUpdateComp
	compErrorRetry
	compRNRRetry
	compError
	compExit
	compDone
)

// completer is rxe_completer. It reports whether it made progress, so
// that the task runs it again.
func (q *qp) completer() bool {
	f := q.f()
	c := &q.comp
	if c.state == engError || c.state == engReset {
		q.drainRespPkts()
		if c.state == engError {
			// rxe_drain_resp_pkts with notify: every WQE left completes
			// with IBV_WC_WR_FLUSH_ERR, even one the requester had already
			// marked with an error of its own.
			for w := q.sq.head(); w != nil; w = q.sq.head() {
				w.status = verbs.WCWRFlushErr
				q.doComplete(w)
			}
		} else {
			for q.sq.head() != nil {
				q.sq.advance()
			}
		}
		return false
	}
	if c.timeout {
		c.timeoutRetry = true
		c.timeout = false
	} else {
		c.timeoutRetry = false
	}
	if q.req.needRetry {
		return false
	}
	var p *packet
	again := q.compSteps(&p)
	if p != nil {
		f.net.pool.put(p) // the response is done with
	}
	return again
}

// compSteps runs the completer's state machine from COMPST_GET_ACK and
// reports whether it made progress; *pp is the response it took, if any,
// for the caller to free.
func (q *qp) compSteps(pp **packet) bool {
	f := q.f()
	c := &q.comp
	var p *packet
	var w *sendWQE
	state := compGetAck
	for {
		switch state {
		case compGetAck:
			p = c.pkts.pop()
			*pp = p
			if p != nil {
				c.timeoutRetry = false
			}
			state = compGetWQE
		case compGetWQE:
			state, w = q.getWQE(p)
		case compCheckPSN:
			state = q.compCheckPSN(p, w)
		case compCheckAck:
			state = q.compCheckAck(p, w)
		case compRead:
			state = q.doRead(p, w)
		case compAtomic:
			state = q.doAtomic(p, w)
		case compWriteSend:
			if w.state == wqePending && w.lastPSN == uint32(p.hdr.BTH.PSN) {
				state = compCompAck
			} else {
				state = compUpdateComp
			}
		case compCompAck:
			state = q.completeAck(p, w)
		case compCompWQE:
			state = q.completeWQE(p, w)
		case compUpdateComp:
			if p.hdr.BTH.Opcode.IsLast() {
				c.opcode = -1
			} else {
				c.opcode = int(p.hdr.BTH.Opcode & 0x1f) // XRC's are RC's
			}
			psn := uint32(p.hdr.BTH.PSN)
			if psnCmp(psn, c.psn) >= 0 {
				c.psn = (psn + 1) & psnMask
			}
			if q.req.waitPSN {
				q.req.waitPSN = false
				f.schedule(q, taskReq)
			}
			state = compDone
		case compDone:
			return true
		case compExit:
			if c.timeoutRetry && w != nil {
				state = compErrorRetry
				continue
			}
			// Push the retransmit timer back while something sent may
			// still be acknowledged.
			if q.reliable() && q.req.state == engReady && psnCmp(q.req.psn, c.psn) > 0 {
				if tj := q.timeoutJiffies(); tj > 0 {
					f.modTimer(&q.timers[timerRetrans], tj)
				}
			}
			return false
		case compErrorRetry:
			if w == nil || w.state == wqePosted {
				return false
			}
			// A retry already started is not started again, unless this
			// is a timeout.
			if c.startedRetry && !c.timeoutRetry {
				return true
			}
			if c.retryCnt > 0 {
				if c.retryCnt != 7 {
					c.retryCnt-- // rxe treats retry_cnt 7 as infinite
				}
				if psnCmp(q.req.psn, c.psn) > 0 {
					q.req.needRetry = true
					c.startedRetry = true
					f.schedule(q, taskReq)
				}
				return true
			}
			w.status = verbs.WCRetryExcErr
			if c.timeoutRetry {
				w.errWhy = "no ACK came back within the timeout, retry_cnt times (rxe_completer: COMPST_ERROR_RETRY)"
			} else {
				w.errWhy = "the responder kept answering NAK PSN sequence error, retry_cnt times"
			}
			state = compError
		case compRNRRetry:
			if c.rnrRetry > 0 {
				if c.rnrRetry != 7 {
					c.rnrRetry-- // 7 means retry forever
				}
				q.req.waitForRNRTimer = true
				code := wire.RNRTimer(p.hdr.AETH.Syndrome.Value())
				j := f.usecsToJiffies(int64(code.Duration() / 1000))
				f.modTimer(&q.timers[timerRNR], max(j, 1))
				return false
			}
			w.status = verbs.WCRNRRetryExcErr
			w.errWhy = "the receiver had no receive posted (RNR NAK), rnr_retry times"
			state = compError
		case compError:
			// A few sequence errors reach here without a status (rxe only
			// warns, WARN_ON_ONCE): the WQE then completes with
			// IBV_WC_SUCCESS and the QP still goes to ERR.
			q.doComplete(w)
			q.toError()
			return false
		}
	}
}

// getWQE is get_wqe.
func (q *qp) getWQE(p *packet) (compState, *sendWQE) {
	w := q.sq.head()
	if w == nil || w.state == wqePosted {
		if p != nil {
			return compDone, w
		}
		return compExit, w
	}
	switch w.state {
	case wqeDone:
		return compCompWQE, w
	case wqeError:
		return compError, w
	}
	if p != nil {
		return compCheckPSN, w
	}
	return compExit, w
}

func (q *qp) resetRetryCounters() {
	c := &q.comp
	c.retryCnt = int(q.attr.RetryCnt)
	c.rnrRetry = int(q.attr.RNRRetry)
	c.startedRetry = false
}

// compCheckPSN is the completer's check_psn: a response past the oldest
// WQE acknowledges it implicitly, unless that WQE waits for READ or atomic
// data (then its response was lost: retry).
func (q *qp) compCheckPSN(p *packet, w *sendWQE) compState {
	psn := uint32(p.hdr.BTH.PSN)
	if psnCmp(psn, w.lastPSN) > 0 {
		if w.state == wqePending {
			if w.mask&(wrAtomic|wrRead) != 0 {
				return compErrorRetry
			}
			q.resetRetryCounters()
			return compCompWQE
		}
		return compDone
	}
	diff := psnCmp(psn, q.comp.psn)
	switch {
	case diff < 0:
		// Most likely a retried response: complete the WQE it ends.
		if psn == w.lastPSN {
			return compCompAck
		}
		return compDone
	case diff > 0 && w.mask&(wrAtomic|wrRead) != 0:
		return compDone
	}
	return compCheckAck
}

// compCheckAck is the completer's check_ack.
func (q *qp) compCheckAck(p *packet, w *sendWQE) compState {
	op := p.hdr.BTH.Opcode & 0x1f // an XRC response is an RC one in another transport
	c := &q.comp
	switch c.opcode {
	case -1:
		if !op.IsFirst() {
			w.errWhy = "a response arrived out of sequence (check_ack)"
			return compError
		}
	case int(wire.RCRDMAReadResponseFirst), int(wire.RCRDMAReadResponseMiddle):
		if op != wire.RCRDMAReadResponseMiddle && op != wire.RCRDMAReadResponseLast {
			// A retried READ may start again with FIRST or ONLY.
			if !(uint32(p.hdr.BTH.PSN) == w.firstPSN && op == wire.RCRDMAReadResponseFirst) &&
				!(w.firstPSN == w.lastPSN && op == wire.RCRDMAReadResponseOnly) {
				w.errWhy = "a READ response arrived out of sequence (check_ack)"
				return compError
			}
		}
	}
	syn := p.hdr.AETH.Syndrome
	switch op {
	case wire.RCRDMAReadResponseFirst, wire.RCRDMAReadResponseLast, wire.RCRDMAReadResponseOnly, wire.RCRDMAReadResponseMiddle:
		if op != wire.RCRDMAReadResponseMiddle && !syn.IsACK() {
			w.errWhy = "a READ response carried a NAK (check_ack)"
			return compError
		}
		if w.wr.Opcode != verbs.WRRDMARead && w.wr.Opcode != verbs.WROpcode(11) {
			w.status = verbs.WCFatalErr
			w.errWhy = "a READ response arrived for a WQE that is not a READ (check_ack)"
			return compError
		}
		q.resetRetryCounters()
		return compRead
	case wire.RCAtomicAcknowledge:
		if !syn.IsACK() {
			w.errWhy = "an ATOMIC ACKNOWLEDGE carried a NAK (check_ack)"
			return compError
		}
		if !w.wr.Opcode.IsAtomic() {
			w.errWhy = "an ATOMIC ACKNOWLEDGE arrived for a WQE that is not an atomic (check_ack)"
			return compError
		}
		q.resetRetryCounters()
		return compAtomic
	case wire.RCAcknowledge:
		switch syn.Type() {
		case wire.SynACK:
			q.resetRetryCounters()
			return compWriteSend
		case wire.SynRNRNAK:
			return compRNRRetry
		case wire.SynNAK:
			switch syn.NAKCode() {
			case 0: // PSN sequence error: it acknowledges everything before it.
				psn := uint32(p.hdr.BTH.PSN)
				if psnCmp(psn, c.psn) > 0 {
					c.psn = psn
					if q.req.waitPSN {
						q.req.waitPSN = false
						q.f().schedule(q, taskReq)
					}
				}
				return compErrorRetry
			case 1:
				w.status = verbs.WCRemInvReqErr
				w.errWhy = "the responder answered NAK invalid request"
			case 2:
				w.status = verbs.WCRemAccessErr
				w.errWhy = "the responder answered NAK remote access error"
			default:
				w.status = verbs.WCRemOpErr
				w.errWhy = "the responder answered NAK remote operational error"
			}
			return compError
		}
	}
	w.errWhy = "an unexpected response (check_ack)"
	return compError
}

// doRead places READ response data (copy_data into the WQE's SGEs, which
// need local write).
func (q *qp) doRead(p *packet, w *sendWQE) compState {
	if why := inlineGather(w); why != "" {
		w.status, w.errWhy = verbs.WCLocProtErr, "the READ's response has nowhere to land: "+why
		return compError
	}
	if st, why := q.copyToSGL(w.sge, &w.dma, p.hdr.Payload); st != verbs.WCSuccess {
		w.status = verbs.WCLocProtErr
		w.errWhy = "the READ's local SGE cannot take the data: " + why
		return compError
	}
	if w.dma.resid == 0 && p.hdr.BTH.Opcode.IsLast() {
		return compCompAck
	}
	return compUpdateComp
}

// inlineGather says why a WR posted with IBV_SEND_INLINE has no gather
// list to land data in, "" for one without: rxe's provider copies the
// list's bytes into the WQE where the list would be (init_send_wqe; the
// two share struct rxe_dma_info), whatever the opcode.
func inlineGather(w *sendWQE) string {
	if w.wr.Flags&verbs.SendInline == 0 {
		return ""
	}
	return "it was posted with IBV_SEND_INLINE, and rxe keeps the gather list's bytes in the WQE in place of the list (inline is for SEND and RDMA WRITE)"
}

// doAtomic stores the original value in the atomic's local buffer.
func (q *qp) doAtomic(p *packet, w *sendWQE) compState {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], p.hdr.AtomicAckETH)
	if why := inlineGather(w); why != "" {
		w.status, w.errWhy = verbs.WCLocProtErr, "the atomic's original value has nowhere to land: "+why
		return compError
	}
	if st, why := q.copyToSGL(w.sge, &w.dma, b[:]); st != verbs.WCSuccess {
		w.status = verbs.WCLocProtErr
		w.errWhy = "the atomic's local SGE cannot take the original value: " + why
		return compError
	}
	return compCompAck
}

// doComplete is do_complete: post the send completion if it was asked
// for or failed, and retire the WQE.
func (q *qp) doComplete(w *sendWQE) {
	post := q.sqSigAll || w.signal || w.status != verbs.WCSuccess
	var wc verbs.WC
	if post {
		wc = verbs.WC{WRID: w.wr.WRID, Status: w.status, QPNum: q.qpn}
		if w.status == verbs.WCSuccess {
			wc.Opcode = wcOpcodeOf(w.wr.Opcode)
			if w.wr.Opcode == verbs.WRRDMAWriteWithImm || w.wr.Opcode == verbs.WRSendWithImm {
				wc.Flags = verbs.WCWithImm
			}
			wc.ByteLen = w.dma.length
		}
	}
	// A READ or atomic that fails or is flushed keeps its max_rd_atomic
	// slot, as in rxe (only complete_ack gives it back); the way back to
	// RTS sets max_rd_atomic again.
	q.sq.advance()
	if post {
		q.scq.noteWhy(wc, w.errWhy)
		q.scq.post(wc, false)
	}
	if q.req.waitFence {
		q.req.waitFence = false
		q.f().schedule(q, taskReq)
	}
}

// completeAck is complete_ack.
func (q *qp) completeAck(p *packet, w *sendWQE) compState {
	f := q.f()
	if w.hasRdAtomic {
		w.hasRdAtomic = false
		q.req.rdAtomic++
		if q.req.needRdAtomic {
			q.comp.timeoutRetry = false
			q.req.needRdAtomic = false
			f.schedule(q, taskReq)
		}
	}
	if q.req.state == engDrain && q.comp.psn == q.req.psn {
		q.req.state = engDrained
		q.sqDrained()
	}
	q.doComplete(w)
	if psnCmp(uint32(p.hdr.BTH.PSN), q.comp.psn) >= 0 {
		return compUpdateComp
	}
	return compDone
}

// completeWQE is complete_wqe.
func (q *qp) completeWQE(p *packet, w *sendWQE) compState {
	if p != nil && w.state == wqePending {
		if psnCmp(w.lastPSN, q.comp.psn) >= 0 {
			q.comp.psn = (w.lastPSN + 1) & psnMask
			q.comp.opcode = -1
		}
		if q.req.waitPSN {
			q.req.waitPSN = false
			q.f().schedule(q, taskReq)
		}
	}
	q.doComplete(w)
	return compGetWQE
}

// wcOpcodeOf is wr_to_wc_opcode.
func wcOpcodeOf(op verbs.WROpcode) verbs.WCOpcode {
	switch op {
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		return verbs.WCOpRDMAWrite
	case verbs.WRSend, verbs.WRSendWithImm, verbs.WRSendWithInv:
		return verbs.WCOpSend
	case verbs.WRRDMARead, verbs.WROpcode(11):
		return verbs.WCOpRDMARead
	case verbs.WRAtomicCmpAndSwp:
		return verbs.WCOpCompSwap
	case verbs.WRAtomicFetchAndAdd:
		return verbs.WCOpFetchAdd
	case verbs.WRLocalInv:
		return verbs.WCOpLocalInv
	case verbs.WRBindMW:
		return verbs.WCOpBindMW
	case verbs.WRTSO:
		return verbs.WCOpTSO
	}
	return 0xff
}

// sgeWriteKeyErr says why copy_data failed on a receive SGE i (or a READ's
// or atomic's local SGE): its lkey names no MR of the PD with local write.
func sgeWriteKeyErr(i int, lkey uint32) string {
	return "SGE " + itoa(i) + "'s lkey " + hex32(lkey) + " names no MR of this PD with local write (copy_data: lookup_mr)"
}

// noSpcWhy is copy_data's -ENOSPC: the SGE list ran out.
const noSpcWhy = "the SGE list ran out (copy_data: -ENOSPC)"

// copyToSGL is copy_data into memory (RXE_TO_MR_OBJ, access
// IB_ACCESS_LOCAL_WRITE), advancing the WQE's dma. It returns
// LOC_QP_OP_ERR when the data is longer than what is left, an lkey does not
// resolve or the SGE list runs out, and LOC_PROT_ERR when a range lies
// outside its MR.
func (q *qp) copyToSGL(sgl []verbs.SGE, dma *dmaInfo, src []byte) (verbs.WCStatus, string) {
	n := uint32(len(src))
	if n == 0 {
		return verbs.WCSuccess, ""
	}
	if n > dma.resid {
		return verbs.WCLocQPOpErr, "more data than the buffer has room for (copy_data: -EINVAL)"
	}
	if q.copyToCurSGE(sgl, dma, src) {
		return verbs.WCSuccess, "" // fastpath.go
	}
	var m *mr
	if dma.curSGE < len(sgl) {
		s := sgl[dma.curSGE]
		if s.Length > 0 && dma.sgeOffset < s.Length {
			if m = q.lookupLocal(s.LKey, verbs.AccessLocalWrite); m == nil {
				return verbs.WCLocQPOpErr, sgeWriteKeyErr(dma.curSGE, s.LKey)
			}
		}
	}
	for len(src) > 0 {
		if dma.curSGE >= len(sgl) {
			return verbs.WCLocQPOpErr, noSpcWhy
		}
		s := sgl[dma.curSGE]
		if dma.sgeOffset >= s.Length {
			dma.curSGE++
			dma.sgeOffset = 0
			m = nil
			if dma.curSGE >= len(sgl) {
				return verbs.WCLocQPOpErr, noSpcWhy
			}
			s = sgl[dma.curSGE]
			if s.Length == 0 {
				continue
			}
			if m = q.lookupLocal(s.LKey, verbs.AccessLocalWrite); m == nil {
				return verbs.WCLocQPOpErr, sgeWriteKeyErr(dma.curSGE, s.LKey)
			}
		}
		b := min(uint32(len(src)), s.Length-dma.sgeOffset)
		if b == 0 {
			continue
		}
		va := s.Addr + uint64(dma.sgeOffset)
		if !m.contains(va, uint64(b)) {
			return verbs.WCLocProtErr, sgeRangeErr(dma.curSGE)
		}
		copy(m.buf[va-m.addr:], src[:b])
		src = src[b:]
		dma.sgeOffset += b
		dma.resid -= b
	}
	return verbs.WCSuccess, ""
}
