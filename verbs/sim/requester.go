package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The requester (rxe_req.c, Linux 6.1): it takes send WQEs in order and
// turns each into packets, one packet per call.

const psnMask = wire.PSNMask

// psnCmp is psn_compare: the sign of a-b in 24-bit serial arithmetic.
func psnCmp(a, b uint32) int32 { return int32((a - b) << 8) }

// wrMask is wr_opcode_mask: what a QP of type t does with a work request
// opcode (rxe_opcode.c rxe_wr_opcode_info); 0 means it cannot.
func wrMask(t verbs.QPType, op verbs.WROpcode) int {
	if t == verbs.QPTypeXRCSend {
		t = verbs.QPTypeRC // XRC sends what RC sends
	}
	switch op {
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		if t == verbs.QPTypeRC || t == verbs.QPTypeUC {
			return wrInline | wrWrite
		}
	case verbs.WRSend, verbs.WRSendWithImm, verbs.WRSendWithInv:
		return wrInline | wrSend
	case verbs.WRRDMARead, verbs.WROpcode(11): // 11: IB_WR_RDMA_READ_WITH_INV
		if t == verbs.QPTypeRC {
			return wrRead
		}
	case verbs.WRAtomicCmpAndSwp, verbs.WRAtomicFetchAndAdd:
		if t == verbs.QPTypeRC {
			return wrAtomic
		}
	case verbs.WRLocalInv:
		if t == verbs.QPTypeRC {
			return wrLocalOp
		}
	case verbs.WRBindMW:
		if t == verbs.QPTypeRC || t == verbs.QPTypeUC {
			return wrLocalOp
		}
	}
	return 0
}

// getMTU is get_mtu: the path MTU for RC and UC, the port's for UD.
func (q *qp) getMTU() uint32 {
	if q.typ == verbs.QPTypeUD {
		return uint32(q.pd.ctx.dev.activeMTU().Bytes())
	}
	return q.mtu
}

// timeoutJiffies is qp_timeout_jiffies: nsecs_to_jiffies(4096 ns <<
// timeout), at least 1; 0 when timeout is 0 (no retransmit timer).
func (q *qp) timeoutJiffies() uint64 { return q.tmoJiffies }

// setTimeout is the timeout part of rxe_qp_from_attr.
func (q *qp) setTimeout(t uint8) {
	q.tmoJiffies = 0
	if t != 0 {
		q.tmoJiffies = max(q.f().nsecsToJiffies(4096<<t), 1)
	}
}

// reqRun is the requester's task: rxe_requester again and again while it
// makes progress, at most taskBudget times; it reports whether it still
// does, so that the task runs again after the others.
func (q *qp) reqRun() bool {
	for i := 0; i < taskBudget; i++ {
		if !q.requester() {
			return false
		}
	}
	return true
}

// requester is rxe_requester. It reports whether it made progress (rxe's
// return 0), so that the task runs it again.
func (q *qp) requester() bool {
	r := &q.req
	switch r.state {
	case engError:
		// Generate an error completion for each WQE in turn.
		w := q.reqNextWQE()
		if w == nil {
			return false
		}
		w.status = verbs.WCWRFlushErr
		q.reqError(w, "")
		return false
	case engReset:
		r.wqeIndex = q.sq.cons
		r.opcode = -1
		r.needRdAtomic, r.waitPSN, r.needRetry, r.waitForRNRTimer = false, false, false, false
		return false
	case engInit:
		return false
	}
	// A retry waits for the RNR timer if one is running.
	if r.needRetry && !r.waitForRNRTimer {
		q.reqRetry()
		r.needRetry = false
	}
	w := q.reqNextWQE()
	if w == nil {
		return false
	}
	if q.wqeIsFenced(w) {
		r.waitFence = true
		return false
	}
	if w.mask&wrLocalOp != 0 {
		return q.doLocalOps(w)
	}
	return q.reqSend(w)
}

// reqSend is the rest of rxe_requester once the WQE is chosen: the window,
// the opcode, the packet, its transmission and update_state.
func (q *qp) reqSend(w *sendWQE) bool {
	f := q.f()
	r := &q.req
	if q.reliable() && psnCmp(r.psn, q.comp.psn+rxeMaxUnackedPSNs) > 0 {
		r.waitPSN = true
		return false
	}
	if !q.reliable() && q.inflight > inflightHigh {
		q.needSkb = true // need_req_skb
		return false
	}
	op, ok := q.nextOpcode(w)
	if !ok {
		w.status = verbs.WCLocQPOpErr
		q.reqError(w, w.wr.Opcode.String()+" is not something a "+q.typ.String()+" QP can send (next_opcode)")
		return false
	}
	flags := op.Flags()
	if flags&(wire.FlagRead|wire.FlagAtomic) != 0 && !q.checkInitDepth(w) {
		return false
	}
	mtu := q.getMTU()
	var payload uint32
	if flags&(wire.FlagSend|wire.FlagWrite) != 0 {
		payload = w.dma.resid
	}
	if payload > mtu {
		if q.typ == verbs.QPTypeUD {
			// C10-93.1.1: a UD message larger than the port MTU emits no
			// packet and completes successfully.
			w.firstPSN, w.lastPSN = r.psn, r.psn
			r.psn = (r.psn + 1) & psnMask
			r.opcode = int(wire.UDSendOnly)
			r.wqeIndex++
			w.state = wqeDone
			w.status = verbs.WCSuccess
			f.schedule(q, taskComp)
			return true
		}
		payload = mtu
	}
	return q.reqPacket(w, op, flags, payload)
}

// reqPacket is the end of rxe_requester: the packet of w with opcode op
// (flags) and payload bytes is built and sent, and the requester's state
// moves on.
func (q *qp) reqPacket(w *sendWQE, op wire.Opcode, flags wire.Flags, payload uint32) bool {
	f := q.f()
	r := &q.req
	// save_state: a refused transmit rolls the WQE back.
	saveState, saveFirst, saveLast, saveDMA, savePSN := w.state, w.firstPSN, w.lastPSN, w.dma, r.psn
	p, st, why := q.buildRequest(w, op, payload)
	if st != verbs.WCSuccess {
		w.status = st
		q.reqError(w, why)
		return false
	}
	q.updateWQEState(w, op)
	q.updateWQEPSN(w, op, payload)
	// xmit drops the packet unless the requester is ready; a UC or UD
	// WQE is done only if its packet went out.
	ready := r.state == engReady
	to := p.to
	local := to != nil && to != q.pd.ctx.dev && !to.peer && !p.mcast // for reqSentMiddle: xmit may free p
	err := f.xmit(q, p, true)
	sent := ready && err == nil
	if err != nil {
		// rollback_state: the WQE is as before; rxe reschedules the
		// requester at once and fails the same way until something
		// changes. The simulator retries when the requester is next woken.
		w.state, w.firstPSN, w.lastPSN, w.dma, r.psn = saveState, saveFirst, saveLast, saveDMA, savePSN
		return false
	}
	if sent && !q.reliable() && flags&wire.FlagEnd != 0 {
		// UC and UD: a WQE is done once its last packet is out.
		w.state = wqeDone
		f.schedule(q, taskComp)
	}
	// update_state
	r.opcode = int(op)
	if flags&wire.FlagEnd != 0 {
		r.wqeIndex++
	}
	if tj := q.timeoutJiffies(); tj > 0 && !timerPending(&q.timers[timerRetrans]) {
		f.modTimer(&q.timers[timerRetrans], tj)
	}
	if flags&wire.FlagEnd == 0 && f.net.shortcuts() {
		q.reqSentMiddle(p, w, sent && local) // fastpath.go
	}
	return true
}

// reqNextWQE is req_next_wqe: the WQE the requester works on, or nil. In
// SQD it reports the send queue drained once nothing is in progress.
func (q *qp) reqNextWQE() *sendWQE {
	r := &q.req
	idx := r.wqeIndex
	if r.state == engDrain {
		h := q.sq.head()
		if h == nil || (idx == q.sq.cons && h.state == wqePosted) {
			r.state = engDrained
			q.sqDrained()
		}
	}
	if idx == q.sq.prod {
		return nil
	}
	w := q.sq.at(idx)
	if (r.state == engDrain || r.state == engDrained) && w.state != wqeProcessing {
		return nil
	}
	w.mask = wrMask(q.typ, w.wr.Opcode)
	return w
}

// sqDrained raises IBV_EVENT_SQ_DRAINED (rxe raises it whether or not
// en_sqd_async_notify was set).
func (q *qp) sqDrained() {
	q.pd.ctx.events = append(q.pd.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventSQDrained, QP: q}})
	q.f().asyncQueued(q.pd.ctx)
}

// wqeIsFenced is rxe_wqe_is_fenced: LOCAL_INV waits for every earlier WQE
// to complete; IBV_SEND_FENCE waits for every READ and atomic.
func (q *qp) wqeIsFenced(w *sendWQE) bool {
	if w.wr.Opcode == verbs.WRLocalInv {
		return q.req.wqeIndex != q.sq.cons
	}
	return w.wr.Flags&verbs.SendFence != 0 && q.req.rdAtomic != int(q.attr.MaxRdAtomic)
}

// doLocalOps is rxe_do_local_ops. LOCAL_INV needs an MR from a fast
// registration: one from ibv_reg_mr cannot be invalidated
// (rxe_invalidate_mr: type IB_MR_TYPE_USER), so it fails, as every memory
// window operation does here.
func (q *qp) doLocalOps(w *sendWQE) bool {
	why := "rxe can only invalidate a fast-registered MR; this one came from ibv_reg_mr (rxe_invalidate_mr)"
	m := q.pd.ctx.dev.mrs[w.wr.InvRKey>>8]
	if m == nil || (m.rkey != 0 && m.rkey != w.wr.InvRKey) || (m.rkey == 0 && m.lkey != w.wr.InvRKey) {
		why = "no MR has key " + hex32(w.wr.InvRKey) + " (rxe_invalidate_mr)"
	}
	if w.wr.Opcode == verbs.WRBindMW {
		w.status = verbs.WCMWBindErr
		why = "memory windows are not modelled"
	} else {
		w.status = verbs.WCLocQPOpErr
	}
	q.reqError(w, why)
	return false
}

// reqError is the requester's err path: the WQE is marked in error and
// the completer completes it and moves the QP to ERR.
func (q *qp) reqError(w *sendWQE, why string) {
	r := &q.req
	if why != "" {
		w.errWhy = why
	}
	r.wqeIndex++
	w.state = wqeError
	r.state = engError
	q.f().schedule(q, taskComp)
}

// nextOpcode is next_opcode: the packet opcode for the WQE's next packet,
// from its WR opcode, whether the rest fits one MTU, and the opcode of the
// packet sent before.
func (q *qp) nextOpcode(w *sendWQE) (wire.Opcode, bool) {
	fits := w.dma.resid <= q.mtu
	prev := q.req.opcode
	switch q.typ {
	case verbs.QPTypeRC:
		return nextOpcodeRCUC(wire.RC, w.wr.Opcode, prev, fits)
	case verbs.QPTypeXRCSend:
		return nextOpcodeRCUC(wire.XRC, w.wr.Opcode, prev, fits)
	case verbs.QPTypeUC:
		switch w.wr.Opcode {
		case verbs.WRSendWithInv:
			return 0, false
		}
		return nextOpcodeRCUC(wire.UC, w.wr.Opcode, prev, fits)
	case verbs.QPTypeUD:
		switch w.wr.Opcode {
		case verbs.WRSend:
			return wire.UDSendOnly, true
		case verbs.WRSendWithImm:
			return wire.UDSendOnlyImm, true
		}
	}
	return 0, false
}

// pickOpcode chooses among a message's opcodes: LAST or MIDDLE inside a
// message, ONLY or FIRST to start one, as what is left fits one MTU or not.
func pickOpcode(base wire.Opcode, in, fits bool, last, middle, only, first wire.Opcode) wire.Opcode {
	switch {
	case in && fits:
		return base | last
	case in:
		return base | middle
	case fits:
		return base | only
	}
	return base | first
}

func nextOpcodeRCUC(t wire.Transport, op verbs.WROpcode, prev int, fits bool) (wire.Opcode, bool) {
	base := wire.Opcode(t) << 5
	inSend := prev == int(base|wire.RCSendFirst) || prev == int(base|wire.RCSendMiddle)
	inWrite := prev == int(base|wire.RCRDMAWriteFirst) || prev == int(base|wire.RCRDMAWriteMiddle)
	pick := func(in bool, last, middle, only, first wire.Opcode) (wire.Opcode, bool) {
		return pickOpcode(base, in, fits, last, middle, only, first), true
	}
	switch op {
	case verbs.WRRDMAWrite: // the usual case first, without the closure
		return pickOpcode(base, inWrite, fits, wire.RCRDMAWriteLast, wire.RCRDMAWriteMiddle, wire.RCRDMAWriteOnly, wire.RCRDMAWriteFirst), true
	case verbs.WRRDMAWriteWithImm:
		return pick(inWrite, wire.RCRDMAWriteLastImm, wire.RCRDMAWriteMiddle, wire.RCRDMAWriteOnlyImm, wire.RCRDMAWriteFirst)
	case verbs.WRSend:
		return pickOpcode(base, inSend, fits, wire.RCSendLast, wire.RCSendMiddle, wire.RCSendOnly, wire.RCSendFirst), true
	case verbs.WRSendWithImm:
		return pick(inSend, wire.RCSendLastImm, wire.RCSendMiddle, wire.RCSendOnlyImm, wire.RCSendFirst)
	}
	if t == wire.UC {
		return 0, false
	}
	switch op {
	case verbs.WRRDMARead:
		return base | wire.RCRDMAReadRequest, true
	case verbs.WRAtomicCmpAndSwp:
		return base | wire.RCCompareSwap, true
	case verbs.WRAtomicFetchAndAdd:
		return base | wire.RCFetchAdd, true
	case verbs.WRSendWithInv:
		return pick(inSend, wire.RCSendLastInvalidate, wire.RCSendMiddle, wire.RCSendOnlyInvalidate, wire.RCSendFirst)
	}
	return 0, false
}

// checkInitDepth is check_init_depth: a READ or atomic takes one of the
// max_rd_atomic slots, or waits for the completer to free one.
func (q *qp) checkInitDepth(w *sendWQE) bool {
	r := &q.req
	if w.hasRdAtomic {
		return true
	}
	r.needRdAtomic = true
	if r.rdAtomic > 0 {
		r.rdAtomic--
		r.needRdAtomic = false
		w.hasRdAtomic = true
		return true
	}
	return false
}

// buildRequest is init_req_packet and finish_packet: the headers from the
// WQE, the payload from its memory. On failure it returns the WQE's status
// (LOC_QP_OP_ERR for a bad lkey or no address, LOC_PROT_ERR for an SGE
// outside its MR) and why.
func (q *qp) buildRequest(w *sendWQE, op wire.Opcode, payload uint32) (*packet, verbs.WCStatus, string) {
	f := q.f()
	flags, hs := op.Flags(), op.Headers()
	// rxe_get_av: the QP's AV, or for UD the WR's AH.
	rt := q.route
	if q.typ == verbs.QPTypeUD {
		a := w.ah
		if a == nil || a.dead != "" {
			return nil, verbs.WCLocQPOpErr, "the address handle was destroyed (rxe_get_av: no AH matches ah_num)"
		}
		if a.pd != q.pd {
			return nil, verbs.WCLocQPOpErr, "the address handle belongs to another PD (rxe_get_av)"
		}
		rt = &a.route
	}
	if rt == nil {
		return nil, verbs.WCLocQPOpErr, "the QP has no address vector (rxe_get_av)"
	}
	if rt.err != "" {
		return nil, verbs.WCLocQPOpErr, rt.err
	}
	p := f.net.pool.get()
	p.setRoute(rt, q.srcPort)
	h := &p.hdr
	r := &q.req
	h.BTH = wire.BTHFields{Opcode: op, PKey: wire.DefaultPKey, PSN: wire.PSN(r.psn)}
	if w.wr.Flags&verbs.SendSolicited != 0 && flags&wire.FlagEnd != 0 &&
		(flags&wire.FlagSend != 0 || (flags&wire.FlagWrite != 0 && hs&wire.HasImmDt != 0)) {
		h.BTH.SE = true
	}
	if hs&wire.HasDETH != 0 {
		h.BTH.DestQP = w.wr.RemoteQPN & wire.QPNMask
	} else {
		h.BTH.DestQP = q.attr.DestQPN & wire.QPNMask
	}
	if q.reliable() {
		ack := flags&wire.FlagEnd != 0
		if !ack {
			ack = r.noackPkts > rxeMaxPktPerAck
			r.noackPkts++
		}
		if ack {
			r.noackPkts = 0
		}
		h.BTH.AckReq = ack
	}
	if hs != 0 {
		q.extHeaders(w, h, op, hs)
	}
	// finish_packet: the payload.
	if flags&(wire.FlagSend|wire.FlagWrite) != 0 && payload > 0 {
		if w.wr.Flags&verbs.SendInline != 0 {
			f.setPayload(p, w.inline[w.dma.sgeOffset:w.dma.sgeOffset+payload])
			w.dma.resid -= payload
			w.dma.sgeOffset += payload
		} else if st, why := q.copyFromSGL(p, w, payload); st != verbs.WCSuccess {
			f.net.pool.put(p)
			return nil, st, why
		}
	}
	return p, verbs.WCSuccess, ""
}

// extHeaders fills the extension headers hs of a request (init_req_packet).
func (q *qp) extHeaders(w *sendWQE, h *wire.Packet, op wire.Opcode, hs wire.Headers) {
	if hs&wire.HasXRCETH != 0 {
		h.XRCETH = w.wr.RemoteSRQN & wire.QPNMask
	}
	if hs&wire.HasRETH != 0 {
		h.RETH = wire.RETHFields{VA: w.iova, RKey: w.wr.RKey, DMALen: w.dma.resid}
	}
	if hs&wire.HasImmDt != 0 {
		h.ImmDt = w.wr.Imm
	}
	if hs&wire.HasIETH != 0 {
		h.IETH = w.wr.InvRKey
	}
	if hs&wire.HasAtomicETH != 0 {
		h.AtomicETH = wire.AtomicETHFields{VA: w.iova, RKey: w.wr.RKey}
		if op&0x1f == wire.RCCompareSwap {
			h.AtomicETH.SwapAdd, h.AtomicETH.Compare = w.wr.Swap, w.wr.CompareAdd
		} else {
			h.AtomicETH.SwapAdd = w.wr.CompareAdd
		}
	}
	if hs&wire.HasDETH != 0 {
		h.DETH = wire.DETHFields{QKey: w.wr.RemoteQKey, SrcQP: q.qpn}
		if q.qpn == 1 {
			h.DETH.QKey = wire.GSIQKey
		}
	}
}

// copyFromSGL is copy_data from the send WQE's SGE list into the packet:
// the payload is borrowed when it lies in one SGE, gathered otherwise. An
// lkey lookup_mr cannot resolve is -EINVAL (LOC_QP_OP_ERR); a range outside
// the MR is -EFAULT from mr_check_range (LOC_PROT_ERR).
func (q *qp) copyFromSGL(p *packet, w *sendWQE, n uint32) (verbs.WCStatus, string) {
	dma := &w.dma
	if n > dma.resid {
		return verbs.WCLocQPOpErr, "the WQE has fewer bytes left than the packet needs (copy_data)"
	}
	if q.copyFromCurSGE(p, w, n) {
		return verbs.WCSuccess, "" // fastpath.go
	}
	sgl := w.sge
	var dst []byte
	first := true
	var m *mr
	if dma.curSGE < len(sgl) {
		s := sgl[dma.curSGE]
		if s.Length > 0 && dma.sgeOffset < s.Length {
			if m = q.lookupLocal(s.LKey, 0); m == nil {
				return verbs.WCLocQPOpErr, sgeKeyErr(dma.curSGE, s.LKey)
			}
		}
	}
	left := n
	for left > 0 {
		if dma.curSGE >= len(sgl) {
			return verbs.WCLocQPOpErr, "the SGE list ran out (copy_data)"
		}
		s := sgl[dma.curSGE]
		if dma.sgeOffset >= s.Length {
			dma.curSGE++
			dma.sgeOffset = 0
			m = nil
			if dma.curSGE >= len(sgl) {
				return verbs.WCLocQPOpErr, "the SGE list ran out (copy_data: -ENOSPC)"
			}
			s = sgl[dma.curSGE]
			if s.Length == 0 {
				continue
			}
			if m = q.lookupLocal(s.LKey, 0); m == nil {
				return verbs.WCLocQPOpErr, sgeKeyErr(dma.curSGE, s.LKey)
			}
		}
		b := min(left, s.Length-dma.sgeOffset)
		if b == 0 {
			continue
		}
		va := s.Addr + uint64(dma.sgeOffset)
		if !m.contains(va, uint64(b)) {
			return verbs.WCLocProtErr, sgeRangeErr(dma.curSGE)
		}
		src := m.buf[va-m.addr : va-m.addr+uint64(b)]
		if first && b == n {
			q.f().setPayload(p, src)
		} else {
			if dst == nil {
				dst = p.ownPayload(int(n))[:0]
			}
			dst = append(dst, src...)
		}
		first = false
		dma.sgeOffset += b
		dma.resid -= b
		left -= b
	}
	return verbs.WCSuccess, ""
}

// inCurSGE is copy_data's usual case: n bytes (n > 0) at dma in sgl lie in
// the current SGE. When they do (fits), m is lookup_mr's answer for the
// SGE's lkey with access (nil: no such MR), and b the bytes in m (nil:
// the range reaches outside m, mr_check_range). copyFromSGL and copyToSGL
// write the same test out, as they run for every packet.
func (q *qp) inCurSGE(sgl []verbs.SGE, dma *dmaInfo, n uint32, access verbs.Access) (fits bool, m *mr, b []byte) {
	c := dma.curSGE
	if c >= len(sgl) || n == 0 {
		return false, nil, nil
	}
	s := &sgl[c]
	if dma.sgeOffset >= s.Length || n > s.Length-dma.sgeOffset {
		return false, nil, nil
	}
	if m = q.lookupLocal(s.LKey, access); m == nil {
		return true, nil, nil
	}
	va := s.Addr + uint64(dma.sgeOffset)
	if !m.contains(va, uint64(n)) {
		return true, m, nil
	}
	return true, m, m.buf[va-m.addr : va-m.addr+uint64(n)]
}

// sgeKeyErr says why copy_data failed on a send WQE's SGE i: its lkey
// names no MR of the PD.
func sgeKeyErr(i int, lkey uint32) string {
	return "SGE " + itoa(i) + " has lkey " + hex32(lkey) + ", which names no MR of this PD (copy_data: lookup_mr)"
}

// sgeRangeErr says why copy_data failed on SGE i: its range lies outside
// its MR.
func sgeRangeErr(i int) string {
	return "SGE " + itoa(i) + " reaches outside its MR (rxe_mr_copy: mr_check_range)"
}

// lookupLocal is lookup_mr(pd, access, lkey, RXE_LOOKUP_LOCAL).
func (q *qp) lookupLocal(key uint32, access verbs.Access) *mr {
	m := q.pd.ctx.dev.mrByIndex(key >> 8)
	if m == nil || m.dead != "" || m.pd != q.memPD() || m.lkey != key {
		return nil
	}
	if access != 0 && m.access&access == 0 {
		return nil
	}
	return m
}

// lookupRemote is lookup_mr(pd, access, rkey, RXE_LOOKUP_REMOTE).
func (q *qp) lookupRemote(key uint32, access verbs.Access) *mr {
	m := q.pd.ctx.dev.mrByIndex(key >> 8)
	if m == nil || m.dead != "" || m.pd != q.memPD() || m.rkey != key {
		return nil
	}
	if access != 0 && m.access&access == 0 {
		return nil
	}
	return m
}

// memPD is the PD the QP's memory accesses are checked against: the QP's
// own, or for an XRC_RECV QP the PD of the XRC SRQ the request names, for
// its receive buffers as for R_Keys (the rxe XRC patch series: pkt->pd =
// rxe_srq_pd(srq)).
func (q *qp) memPD() *pd {
	if q.typ == verbs.QPTypeXRCRecv && q.srq != nil {
		return q.srq.pd
	}
	return q.pd
}

// updateWQEState is update_wqe_state.
func (q *qp) updateWQEState(w *sendWQE, op wire.Opcode) {
	if op.IsLast() {
		if q.reliable() {
			w.state = wqePending
		}
	} else {
		w.state = wqeProcessing
	}
}

// updateWQEPSN is update_wqe_psn: a message's PSN range is fixed at its
// first packet; a READ request takes one PSN per response packet.
func (q *qp) updateWQEPSN(w *sendWQE, op wire.Opcode, payload uint32) {
	r := &q.req
	// qp->mtu, even for UD, where it stays 256 (rxe_qp_init_misc) and the
	// range it gives a datagram means nothing.
	fl := op.Flags()
	if fl&(wire.FlagStart|wire.FlagRead) == 0 {
		r.psn = (r.psn + 1) & psnMask // a MIDDLE or LAST packet
		return
	}
	mtu := q.mtu
	npkts := (w.dma.resid + payload + mtu - 1) / mtu
	if npkts == 0 {
		npkts = 1
	}
	if fl&wire.FlagStart != 0 {
		w.firstPSN = r.psn
		w.lastPSN = (r.psn + npkts - 1) & psnMask
	}
	if fl&wire.FlagRead != 0 {
		r.psn = (w.firstPSN + npkts) & psnMask
	} else {
		r.psn = (r.psn + 1) & psnMask
	}
}

// reqRetry is req_retry, Go-Back-N as rxe does it: the requester goes back
// to the oldest WQE not completed and to comp.psn. A send or write that was
// partly acknowledged resumes after the packets acknowledged; a READ is
// asked again for the bytes not yet received, from the VA where they start.
// Every later WQE is sent again from its start.
func (q *qp) reqRetry() {
	r := &q.req
	r.wqeIndex = q.sq.cons
	r.psn = q.comp.psn
	r.opcode = -1
	first := true
	for i := q.sq.cons; i != q.sq.prod; i++ {
		w := q.sq.at(i)
		mask := wrMask(q.typ, w.wr.Opcode)
		if w.state == wqePosted {
			break
		}
		if w.state == wqeDone {
			continue
		}
		switch {
		case mask&wrAtomic != 0, mask&(wrRead|wrWrite) != 0:
			w.iova = w.wr.RemoteAddr
		default:
			w.iova = 0
		}
		if !first || mask&wrRead == 0 {
			w.dma.reset()
		}
		if first {
			first = false
			if mask&(wrWrite|wrSend) != 0 {
				npsn := (q.comp.psn - w.firstPSN) & psnMask
				q.retryFirstWriteSend(w, npsn)
			}
			if mask&wrRead != 0 {
				npsn := (w.dma.length - w.dma.resid) / q.mtu
				w.iova += uint64(npsn) * uint64(q.mtu)
			}
		}
		w.state = wqePosted
	}
}

// retryFirstWriteSend skips the packets of a partly acknowledged send or
// write (retry_first_write_send).
func (q *qp) retryFirstWriteSend(w *sendWQE, npsn uint32) {
	for i := uint32(0); i < npsn; i++ {
		n := min(w.dma.resid, q.mtu)
		op, _ := q.nextOpcode(w)
		q.req.opcode = int(op)
		w.dma.resid -= n
		if w.wr.Flags&verbs.SendInline != 0 {
			w.dma.sgeOffset += n
		} else {
			advanceDMA(&w.dma, w.sge, n)
		}
	}
}

// advanceDMA is advance_dma_data.
func advanceDMA(d *dmaInfo, sgl []verbs.SGE, n uint32) {
	for n > 0 {
		if d.curSGE >= len(sgl) {
			return
		}
		if d.sgeOffset >= sgl[d.curSGE].Length {
			d.curSGE++
			d.sgeOffset = 0
			if d.curSGE >= len(sgl) {
				return
			}
		}
		b := min(n, sgl[d.curSGE].Length-d.sgeOffset)
		d.sgeOffset += b
		n -= b
	}
}

// rnrNakTimer is rnr_nak_timer: the requester may retry now.
func (q *qp) rnrNakTimer() {
	q.req.needRetry = true
	q.req.waitForRNRTimer = false
	q.f().schedule(q, taskReq)
}

// retransmitTimer is retransmit_timer: the completer sees a timeout.
func (q *qp) retransmitTimer() {
	if q.dead != "" {
		return
	}
	q.comp.timeout = true
	q.f().schedule(q, taskComp)
}
