package sim

import (
	"encoding/binary"

	"github.com/vsh-rdma/vsh/verbs"
)

// receive is rxe_rcv for one packet: find the device and QP, apply
// hdr_check, check_type_state, check_keys and check_addr, and hand the
// packet to the responder (requests) or the completer (responses). It
// returns why the packet was dropped, or "".
func (f *Fabric) receive(p *packet) string {
	if p.from.portState != verbs.PortActive {
		return "the sender's port is down"
	}
	var to *device
	for _, d := range f.devs {
		if d.hasGID(p.dgid) {
			to = d
			break
		}
	}
	if to == nil {
		return "no device has GID " + p.dgid.String()
	}
	p.to = to
	if to.portState != verbs.PortActive {
		return "the receiver's port is down"
	}
	q := to.qps[p.destQP]
	if q == nil || q.dead != "" {
		return "no such QP on " + to.name
	}
	want := map[verbs.QPType]uint8{verbs.QPTypeRC: opRC, verbs.QPTypeUC: opUC, verbs.QPTypeUD: opUD}[q.typ]
	if p.op.transport() != want {
		return "opcode does not match the QP type (check_type_state)"
	}
	if p.op.isRequest() {
		if q.resp != engReady {
			return q.name() + " is not ready to receive (check_type_state: responder not in RTR/RTS)"
		}
		if q.typ == verbs.QPTypeUD {
			if p.qkey != q.attr.QKey {
				return "Q_Key mismatch (check_keys): the datagram is dropped"
			}
		} else {
			local, _ := to.gid(int(q.attr.AH.GRH.SGIDIndex))
			if p.sgid != q.attr.AH.GRH.DGID || p.dgid != local {
				return "source or destination address does not match the QP's address vector (check_addr)"
			}
		}
		q.respond(p)
		return ""
	}
	if q.req < engReady || q.req > engDrained {
		return q.name() + " is not sending (check_type_state)"
	}
	q.completer(p)
	f.schedule(q, taskReq)
	return ""
}

// reply builds a response packet back to the sender of p.
func (q *qp) reply(p *packet, op opcode) *packet {
	r := &packet{from: q.pd.ctx.dev, op: op, sgid: p.dgid, dgid: p.sgid, destQP: q.attr.DestQPN & psnMask}
	r.msn = q.t.msn
	return r
}

func (q *qp) sendAck(p *packet, syn uint8, psn uint32) {
	r := q.reply(p, opRC|opAck)
	r.syn, r.psn = syn, psn&psnMask
	q.f().send(r)
}

// takeRecvWQE gets a receive WQE from the SRQ or the RQ (check_resource,
// get_srq_wqe). With an SRQ the WQE is copied out and the limit event
// fires when fewer than srq_limit WQEs remain.
func (q *qp) takeRecvWQE() *recvWQE {
	if q.srq != nil {
		s := q.srq
		w := s.rq.peek()
		if w == nil {
			return nil
		}
		c := &q.t.rwqeCopy
		c.wrID, c.length = w.wrID, w.length
		c.sge = append(c.sge[:0], w.sge...)
		s.rq.pop()
		if s.limit > 0 && s.rq.count < s.limit {
			s.limit = 0
			s.pd.ctx.events = append(s.pd.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventSRQLimitReached, SRQ: s}})
		}
		return c
	}
	return q.rq.peek()
}

// finishRecv completes the receive WQE in progress (do_complete).
func (q *qp) finishRecv(wc verbs.WC, solicited bool) {
	w := q.t.rwqe
	if w == nil {
		return
	}
	wc.WRID = w.wrID
	wc.QPNum = q.qpn
	if q.srq == nil {
		q.rq.pop()
	}
	q.t.rwqe = nil
	if !q.rcq.post(wc, solicited) {
		q.toError() // RESPST_ERR_CQ_OVERFLOW: class G
	}
}

// classAC is do_class_ac_error followed by COMPLETE, ACKNOWLEDGE and
// ERROR: the receive WQE in progress (if any) completes with status, the
// requester gets a NAK, and the QP moves to ERR.
func (q *qp) classAC(p *packet, syn uint8, st verbs.WCStatus) {
	if q.t.rwqe != nil {
		q.finishRecv(verbs.WC{Status: st}, true)
	}
	if q.typ == verbs.QPTypeRC {
		q.sendAck(p, syn, p.psn)
	}
	q.toError()
}

// respond is rxe_responder for one request packet.
func (q *qp) respond(p *packet) {
	if q.typ == verbs.QPTypeUD {
		q.respondUD(p)
		return
	}
	t := &q.t
	rc := q.typ == verbs.QPTypeRC
	// check_psn
	diff := psnCmp(p.psn, t.respPSN)
	if rc {
		if diff > 0 {
			if !t.sentPSNNak {
				t.sentPSNNak = true
				q.sendAck(p, synNAKPSNSeq, t.respPSN)
			}
			return
		}
		if diff < 0 {
			q.duplicate(p)
			return
		}
		t.sentPSNNak = false
	} else if t.dropMsg || diff != 0 {
		if !p.op.start() {
			t.dropMsg = true
			return
		}
		t.dropMsg, t.inMsg, t.rwqe = false, false, nil
	}
	// check_op_seq
	if t.inMsg {
		okSeq := (p.op.op() == opSendMiddle || p.op.op() == opSendLast || p.op.op() == opSendLastImm) && t.respOp.isSend() ||
			(p.op.op() == opWriteMiddle || p.op.op() == opWriteLast || p.op.op() == opWriteLastImm) && t.respOp.isWrite()
		if !okSeq {
			if rc {
				q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
			} else {
				t.dropMsg = true
			}
			return
		}
	} else if !p.op.start() {
		if rc {
			q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
		} else {
			t.dropMsg = true
		}
		return
	}
	// check_op_valid: the QP's own access flags.
	acc := q.attr.AccessFlags
	if (p.op.isWrite() && acc&verbs.AccessRemoteWrite == 0) || (p.op.isRead() && acc&verbs.AccessRemoteRead == 0) ||
		(p.op.isAtomic() && acc&verbs.AccessRemoteAtomic == 0) {
		if rc {
			q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
		} else {
			t.dropMsg = true
		}
		return
	}
	// check_resource
	if p.op.takesRecvWQE() && t.rwqe == nil {
		w := q.takeRecvWQE()
		if w == nil {
			if rc {
				q.sendAck(p, synRNRNAK|q.attr.MinRNRTimer&0x1f, p.psn)
			} else {
				t.dropMsg = true
			}
			return
		}
		t.rwqe, t.rdone = w, 0
	}
	if (p.op.isRead() || p.op.isAtomic()) && q.attr.MaxDestRdAtomic == 0 {
		q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
		return
	}
	// check_length (payload against the path MTU)
	mtu := q.pathMTU()
	n := uint32(len(p.payload))
	if (p.op.isSend() || p.op.isWrite()) && (!p.op.start() || !p.op.end()) {
		bad := (!p.op.end() && n != mtu) || (p.op.end() && (n == 0 || n > mtu))
		if bad {
			if rc {
				q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
			} else {
				t.dropMsg = true
			}
			return
		}
	} else if n > mtu {
		if rc {
			q.classAC(p, synNAKInvReq, verbs.WCRemInvReqErr)
		} else {
			t.dropMsg = true
		}
		return
	}
	// check_rkey
	if p.op.isWrite() && p.op.start() {
		t.wva, t.wrkey, t.wlen, t.woff = p.va, p.rkey, p.dmaLen, 0
	}
	if (p.op.isWrite() || p.op.isRead()) && (p.op.start()) && p.dmaLen > 0 || p.op.isAtomic() {
		need := verbs.AccessRemoteWrite
		length := uint64(p.dmaLen)
		switch {
		case p.op.isRead():
			need = verbs.AccessRemoteRead
		case p.op.isAtomic():
			need, length = verbs.AccessRemoteAtomic, 8
		}
		m := q.lookupMR(p.rkey, true, need)
		if m == nil || !m.contains(p.va, length) {
			if rc {
				q.classAC(p, synNAKRemAcc, verbs.WCRemAccessErr)
			} else {
				t.dropMsg = true
			}
			return
		}
	}
	// execute
	switch {
	case p.op.isSend():
		if t.rwqe == nil || uint32(len(p.payload)) > t.rwqe.length-t.rdone || !q.scatter(t.rwqe.sge, t.rdone, p.payload) {
			// copy_data: more data than the receive buffer holds, or a bad
			// lkey in it: RESPST_ERR_MALFORMED_WQE (class A).
			q.classAC(p, synNAKRemOp, verbs.WCLocQPOpErr)
			return
		}
		t.rdone += uint32(len(p.payload))
	case p.op.isWrite():
		if len(p.payload) > 0 {
			m := q.lookupMR(t.wrkey, true, verbs.AccessRemoteWrite)
			va := t.wva + uint64(t.woff)
			if m == nil || !m.contains(va, uint64(len(p.payload))) || t.woff+uint32(len(p.payload)) > t.wlen {
				if rc {
					q.classAC(p, synNAKRemAcc, verbs.WCRemAccessErr)
				} else {
					t.dropMsg = true
				}
				return
			}
			copy(m.buf[va-m.addr:], p.payload)
			t.woff += uint32(len(p.payload))
		}
	case p.op.isRead():
		t.msn++
		q.readReply(p)
		t.inMsg = false
		return
	case p.op.isAtomic():
		q.atomicReply(p)
		t.inMsg = false
		return
	}
	t.inMsg = !p.op.end()
	t.respOp = p.op
	if p.op.end() {
		t.msn++
	}
	t.respPSN = (p.psn + 1) & psnMask
	if p.op.completesRecv() {
		wc := verbs.WC{Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: t.rdone, Flags: verbs.WCGRH, PKeyIndex: 0}
		if p.op.isWrite() {
			wc.Opcode, wc.ByteLen = verbs.WCOpRecvRDMAWithImm, t.wlen
		}
		if p.hasImm {
			wc.Flags |= verbs.WCWithImm
			wc.Imm = p.imm
		}
		q.finishRecv(wc, p.se)
		if q.attr.State == verbs.QPSErr {
			return
		}
	}
	if rc && p.ackReq {
		q.sendAck(p, synACK, p.psn)
	}
}

// duplicate is duplicate_request: re-ACK sends and writes, replay READs
// and atomics.
func (q *qp) duplicate(p *packet) {
	switch {
	case p.op.isSend() || p.op.isWrite():
		q.sendAck(p, synACK, q.t.respPSN-1)
	case p.op.isRead():
		m := q.lookupMR(p.rkey, true, verbs.AccessRemoteRead)
		if p.dmaLen == 0 || (m != nil && m.contains(p.va, uint64(p.dmaLen))) {
			q.readReplyFrom(p, m)
		}
	case p.op.isAtomic():
		if orig, ok := q.t.atomics[p.psn]; ok {
			r := q.reply(p, opRC|opAtomicAck)
			r.syn, r.psn, r.orig = synACK, p.psn, orig
			q.f().send(r)
		}
	}
}

// readReply streams READ responses, one path MTU each, over the PSNs the
// requester reserved (read_reply).
func (q *qp) readReply(p *packet) {
	var m *mr
	if p.dmaLen > 0 {
		m = q.lookupMR(p.rkey, true, verbs.AccessRemoteRead)
	}
	q.readReplyFrom(p, m)
	mtu := q.pathMTU()
	npkts := (p.dmaLen + mtu - 1) / mtu
	if npkts == 0 {
		npkts = 1
	}
	q.t.respPSN = (p.psn + npkts) & psnMask
}

func (q *qp) readReplyFrom(p *packet, m *mr) {
	mtu := q.pathMTU()
	left := p.dmaLen
	psn := p.psn
	off := uint64(0)
	first := true
	for {
		n := left
		if n > mtu {
			n = mtu
		}
		last := left <= mtu
		var code uint8
		switch {
		case first && last:
			code = opReadRespOnly
		case first:
			code = opReadRespFirst
		case last:
			code = opReadRespLast
		default:
			code = opReadRespMiddle
		}
		r := q.reply(p, opcode(opRC|code))
		r.psn, r.syn = psn&psnMask, synACK
		if n > 0 && m != nil {
			start := p.va + off - m.addr
			r.payload = append([]byte(nil), m.buf[start:start+uint64(n)]...)
		}
		q.f().send(r)
		if last {
			return
		}
		left -= n
		off += uint64(n)
		psn++
		first = false
	}
}

// atomicReply executes a compare-and-swap or fetch-and-add on 8 bytes of
// the MR (host byte order, little-endian here) and answers with the
// original value.
func (q *qp) atomicReply(p *packet) {
	m := q.lookupMR(p.rkey, true, verbs.AccessRemoteAtomic)
	b := m.buf[p.va-m.addr:]
	orig := binary.LittleEndian.Uint64(b)
	if p.op.op() == opCompareSwap {
		if orig == p.compare {
			binary.LittleEndian.PutUint64(b, p.swap)
		}
	} else {
		binary.LittleEndian.PutUint64(b, orig+p.swap)
	}
	q.t.atomics[p.psn] = orig
	if len(q.t.atomics) > 4*rxeMaxQPRdAtom {
		clear(q.t.atomics)
		q.t.atomics[p.psn] = orig
	}
	q.t.msn++
	q.t.respPSN = (p.psn + 1) & psnMask
	r := q.reply(p, opRC|opAtomicAck)
	r.syn, r.psn, r.orig = synACK, p.psn, orig
	q.f().send(r)
}

// respondUD handles a UD datagram: a receive WQE or a silent drop, then
// the 40-byte network header and the payload (execute, send_data_in).
func (q *qp) respondUD(p *packet) {
	w := q.takeRecvWQE()
	if w == nil {
		return // class D: dropped
	}
	q.t.rwqe, q.t.rdone = w, 0
	grh := udGRH(p)
	if uint32(len(grh)+len(p.payload)) > w.length || !q.scatter(w.sge, 0, grh[:]) || !q.scatter(w.sge, 40, p.payload) {
		// copy_data: more than the buffer holds, or a bad lkey:
		// RESPST_ERR_MALFORMED_WQE, class A, even on UD.
		q.classAC(p, 0, verbs.WCLocQPOpErr)
		return
	}
	wc := verbs.WC{Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(40 + len(p.payload)),
		Flags: verbs.WCGRH, SrcQP: p.srcQP}
	if p.hasImm {
		wc.Flags |= verbs.WCWithImm
		wc.Imm = p.imm
	}
	q.finishRecv(wc, p.se)
}

// udGRH is union rdma_network_hdr for IPv4 as rxe writes it at the front
// of a UD receive buffer: 20 zero bytes, then the received IPv4 header
// (with a valid checksum, so that ib_get_rdma_header_version recognises
// it). For IPv6 GIDs it is the 40-byte IPv6 header.
func udGRH(p *packet) [40]byte {
	var h [40]byte
	udpLen := 8 + 12 + 8 + len(p.payload) + ((-len(p.payload)) & 3) + 4
	if p.hasImm {
		udpLen += 4
	}
	src, sok := p.sgid.IPv4()
	dst, dok := p.dgid.IPv4()
	if sok && dok {
		ip := h[20:]
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+udpLen))
		binary.BigEndian.PutUint16(ip[6:], 0x4000) // DF
		ip[8] = 64                                 // TTL
		ip[9] = 17                                 // UDP
		s4, d4 := src.As4(), dst.As4()
		copy(ip[12:], s4[:])
		copy(ip[16:], d4[:])
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
		return h
	}
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(udpLen))
	h[6] = 17
	h[7] = 64
	copy(h[8:], p.sgid[:])
	copy(h[24:], p.dgid[:])
	return h
}

// responder is rxe_responder run as a task: in the error state it flushes
// the receive queue with IBV_WC_WR_FLUSH_ERR (check_resource); with an SRQ
// there is nothing of its own to flush.
func (q *qp) responder() {
	if q.resp == engError && q.srq == nil {
		for q.rq.count > 0 {
			w := q.rq.peek()
			wc := verbs.WC{WRID: w.wrID, Status: verbs.WCWRFlushErr, QPNum: q.qpn}
			q.rq.pop()
			// A flush completion has no packet and counts as solicited
			// (do_complete: pkt ? bth_se(pkt) : 1).
			q.rcq.post(wc, true)
		}
		q.t.rwqe = nil
	}
}
