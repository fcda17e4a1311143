package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The data path's shortcuts for the usual case. Each one does exactly what
// the general steps would do, in fewer of them, and is taken only when the
// gate, shortcuts, allows it; the agreement tests run the same traffic
// both ways. They call into the engines, whose files (requester.go,
// responder.go, completer.go) follow rxe's; packet trains are in train.go.

// shortcuts reports whether the data path may take its shortcuts for the
// usual case. It is the one gate for all of them; net.general (tests)
// closes it, so that every packet and engine run takes the general steps.
func (n *network) shortcuts() bool { return !n.general }

// ---------------------------------------------------------------- receive

// hdrOK tells in one test that check_type_state, check_addr and check_keys
// all pass, in the usual case: an RC or UC packet of the QP's transport
// that its state takes, between the addresses of its AV, with the default
// P_Key. When it is false, the three checks run one by one and say why.
func (q *qp) hdrOK(p *packet) bool {
	rt, op := q.route, p.hdr.BTH.Opcode
	if rt == nil || (q.typ != verbs.QPTypeRC && q.typ != verbs.QPTypeUC) ||
		op.Transport() != wire.Transport(q.typ-verbs.QPTypeRC) || q.attr.PortNum != 1 ||
		p.hdr.BTH.PKey&0x7fff != wire.DefaultPKey&0x7fff || p.sgid != rt.dgid || p.dgid != rt.sgid {
		return false
	}
	if op.IsRequest() {
		return q.resp.state == engReady
	}
	return q.req.state >= engReady && q.req.state <= engDrained
}

// ---------------------------------------------------------------- requester

// reqRunFast is reqRun with the shortcuts (runQueued runs it when the gate
// is open). Between two runs in one task
// nothing but the requester runs. After a packet that does not end its
// message, the next run would therefore pick the same WQE by the same
// checks (the requester's state, a retry, the fence); it goes straight to
// the steps that send the WQE's next packet (reqNext). The packets the
// next turns would send alike may go as a train (reqSentMiddle).
func (q *qp) reqRunFast() bool {
	n := &q.f().net
	var cont *sendWQE
	for i := 0; i < taskBudget; i++ {
		// The turns left after this one, for a train.
		n.trainRoom, n.trainSent, n.reqCont = taskBudget-1-i, 0, nil
		var again bool
		if cont != nil {
			again = q.reqNext(cont)
		} else {
			again = q.requester()
		}
		if !again {
			n.trainRoom, n.reqCont = 0, nil
			return false
		}
		cont = n.reqCont
		i += n.trainSent // turns a train took (train.go)
	}
	n.trainRoom, n.reqCont = 0, nil
	return true
}

// reqNext sends the next packet of w, whose last packet did not end its
// message (see reqRunFast). For an RC WRITE or SEND it takes the steps of
// reqSend that such a packet takes — the window, next_opcode (MIDDLE, or
// LAST when the rest fits the MTU), the payload — without the general
// ones; anything else goes through reqSend.
func (q *qp) reqNext(w *sendWQE) bool {
	r := &q.req
	var middle, last wire.Opcode
	switch {
	case q.typ != verbs.QPTypeRC:
		return q.reqSend(w)
	case w.wr.Opcode == verbs.WRRDMAWrite && (r.opcode == int(wire.RCRDMAWriteFirst) || r.opcode == int(wire.RCRDMAWriteMiddle)):
		middle, last = wire.RCRDMAWriteMiddle, wire.RCRDMAWriteLast
	case w.wr.Opcode == verbs.WRSend && (r.opcode == int(wire.RCSendFirst) || r.opcode == int(wire.RCSendMiddle)):
		middle, last = wire.RCSendMiddle, wire.RCSendLast
	default:
		return q.reqSend(w)
	}
	if psnCmp(r.psn, q.comp.psn+rxeMaxUnackedPSNs) > 0 {
		r.waitPSN = true
		return false
	}
	op, payload := middle, w.dma.resid
	if payload <= q.mtu {
		op = last
	} else {
		payload = q.mtu
	}
	return q.reqPacket(w, op, op.Flags(), payload)
}

// reqSentMiddle is reqPacket's report that it sent p, a packet of w that
// does not end its message (local: p went into this fabric's flight queue
// toward another of its devices, unless xmit dropped it). When the
// requester is ready, the next turn of reqRunFast sends w's next packet,
// and the packets the next turns would send alike go as a train on p
// (extendTrain).
func (q *qp) reqSentMiddle(p *packet, w *sendWQE, local bool) {
	if q.req.state != engReady {
		return
	}
	n := &q.f().net
	if local && n.trainRoom > 0 {
		n.trainSent = q.extendTrain(p, w, n.trainRoom)
	}
	n.reqCont = w
}

// ---------------------------------------------------------------- responder

// respRun is one run of the responder's task: rxe_responder (responder).
// With the shortcuts, when an RC responder would find a request at
// get_req and go to check_psn, respMiddle tries it first, in place of the
// steps from check_psn to cleanup; the state machine goes on from where
// respMiddle leaves it, or from check_psn when it does not take it.
func (q *qp) respRun() bool {
	r := &q.resp
	if q.typ != verbs.QPTypeRC || r.state == engReset || r.state == engError || r.res != nil || !q.f().net.shortcuts() {
		return q.responder()
	}
	p := r.pkts.peek()
	if p == nil {
		return q.responder()
	}
	r.aethSyn = wire.SyndromeACK
	st := q.respMiddle(p)
	switch st {
	case respNone:
		st = respChkPSN
	case respDone:
		p = nil
	}
	return q.respSteps(st, p)
}

// respMiddle takes the packet that makes up most of a long RC message —
// a WRITE MIDDLE or LAST or a SEND MIDDLE with the PSN expected, continuing
// the message in progress — through the steps the state machine takes for
// it, in the same order and with the same effects, without a call and a
// turn of the loop per step: check_psn (in sequence), check_op_seq (it
// continues the message), check_op_valid (remote write allowed),
// check_resource (it needs no receive WQE and no resource), check_rkey
// (the R_Key, range and length of a write), execute (write_data_in or
// send_data_in), acknowledge (when asked for), cleanup. It returns
// respNone, having changed nothing, for any other packet; the state the
// machine goes on from when a step fails; respDone when it is through.
func (q *qp) respMiddle(p *packet) respState {
	r := &q.resp
	h := &p.hdr
	op, prev := h.BTH.Opcode, r.opcode
	write := false
	switch {
	case op == wire.RCRDMAWriteMiddle || op == wire.RCRDMAWriteLast:
		if prev != int(wire.RCRDMAWriteFirst) && prev != int(wire.RCRDMAWriteMiddle) ||
			q.attr.AccessFlags&verbs.AccessRemoteWrite == 0 {
			return respNone
		}
		write = true
	case op == wire.RCSendMiddle:
		if prev != int(wire.RCSendFirst) && prev != int(wire.RCSendMiddle) {
			return respNone
		}
	default:
		return respNone
	}
	if uint32(h.BTH.PSN) != r.psn {
		return respNone
	}
	r.sentPSNNak = false
	if write {
		// check_rkey
		m := q.lookupRemote(r.rkey, verbs.AccessRemoteWrite)
		if m == nil || !m.contains(r.va+r.offset, uint64(r.resid)) {
			return respErrRkeyViolation
		}
		n, pad := uint32(len(h.Payload)), h.PadCount()
		if r.resid > q.mtu {
			if n != q.mtu || pad != 0 {
				return respErrLength
			}
		} else if n != r.resid || pad != int(-r.resid&3) {
			return respErrLength
		}
		r.mr = m
		// write_data_in
		if n > 0 {
			va := r.va + r.offset
			if !m.contains(va, uint64(n)) {
				return respErrRkeyViolation
			}
			copy(m.buf[va-m.addr:], h.Payload)
			r.va += uint64(n)
			r.resid -= n
		}
		if op == wire.RCRDMAWriteLast {
			r.msn++
		}
	} else if st := q.sendDataIn(h.Payload); st != respNone {
		return st
	}
	r.psn = (r.psn + 1) & psnMask
	r.ackPSN = r.psn
	r.opcode = int(op)
	r.status = verbs.WCSuccess
	if h.BTH.AckReq || r.aethSyn != wire.SyndromeACK {
		q.acknowledge(p)
	}
	return q.respCleanup(p)
}

// respIdle reports whether a run of the responder would do nothing but
// find no packet and exit: it is ready (or in INIT), not going to ERR, and
// no request is queued.
func (q *qp) respIdle() bool {
	r := &q.resp
	return r.state != engReset && r.state != engError && !r.gotoError && r.pkts.len() == 0
}

// takeAtDelivery lets the responder take p, a request q accepted, at
// delivery, when p continues a long message (a WRITE MIDDLE or LAST, a
// SEND MIDDLE): with the train p carries (trainAtDelivery), or alone
// (respAtDelivery). It reports whether it did, the engines having run;
// otherwise deliverOne goes on with p. deliverOne asks only when no event
// is recorded.
func (f *Fabric) takeAtDelivery(q *qp, p *packet) bool {
	// Inlined in deliverOne: only these opcodes cost a call.
	switch p.hdr.BTH.Opcode {
	case wire.RCRDMAWriteMiddle, wire.RCRDMAWriteLast, wire.RCSendMiddle:
		return f.takeMiddleAtDelivery(q, p)
	}
	return false
}

// takeMiddleAtDelivery is takeAtDelivery for the opcodes it takes.
func (f *Fabric) takeMiddleAtDelivery(q *qp, p *packet) bool {
	if p.tr != nil {
		if f.trainAtDelivery(q, p) {
			f.runTasks()
			return true
		}
		if p.tr != nil {
			f.trainSplit(p)
		}
	}
	return f.respAtDelivery(q, p)
}

// respTakesAtDelivery reports whether q's responder may take a request at
// delivery, as the task that rcvPkt schedules would take it right after:
// the shortcuts are allowed, nobody observes the packet, no engine is
// waiting to run before q's responder, q is RC, and its responder is not
// scheduled, has nothing queued, no READ or atomic reply in progress, is
// ready and is not going to ERR.
func (f *Fabric) respTakesAtDelivery(q *qp) bool {
	n := &f.net
	r := &q.resp
	return n.shortcuts() && len(n.observers) == 0 && n.runHead >= len(n.runq) && q.typ == verbs.QPTypeRC &&
		!q.sched[taskResp] && r.pkts.len() == 0 && r.res == nil && r.state == engReady && !r.gotoError
}

// respAtDelivery runs the responder's task for p, a request q accepted
// that may continue a long message (a WRITE MIDDLE or LAST, a SEND MIDDLE:
// the packets respMiddle takes; takeAtDelivery asks only for those),
// as deliverOne's runTasks would run it right after rcvPkt, when nothing
// can tell the difference: no event is recorded and nobody observes the
// packet (both would look at it before the responder), no engine is
// waiting to run before q's responder, and q's responder has nothing
// queued, no READ or atomic reply in progress, and is ready. It queues p,
// takes it through the same steps (respMiddle, then the state machine
// from the state respMiddle returned if it did not finish, or the whole
// task when respMiddle does not take the packet), runs the engines that
// were scheduled, and reports true; otherwise it does nothing and reports
// false.
func (f *Fabric) respAtDelivery(q *qp, p *packet) bool {
	r := &q.resp
	if !f.respTakesAtDelivery(q) {
		return false
	}
	r.pkts.push(p)
	// The task's first run of rxe_responder: get_req finds p, check_psn
	// starts with respMiddle (see respRun).
	r.aethSyn = wire.SyndromeACK
	switch st := q.respMiddle(p); {
	case st == respNone:
		f.schedule(q, taskResp) // nothing changed: the task runs as usual
	case st == respDone && !r.gotoError && q.respIdle():
		// rxe_responder returns 0 from its done state, and the task's next
		// run would find nothing to do (respTask).
	default:
		if st == respDone {
			p = nil
		}
		if f.respTask(q, q.respSteps(st, p)) {
			f.schedule(q, taskResp)
		}
	}
	f.runTasks()
	return true
}

// copyFromCurSGE is copyFromSGL's usual case: when the packet's n bytes
// (n no more than the WQE has left) lie in the current SGE, in its MR, it
// borrows the payload from there, moves the WQE's dma on and reports
// true, as copyFromSGL's loop would in more steps; otherwise it changes
// nothing and reports false (the loop then also says why it fails).
// inCurSGE's test is written out: on every packet, the call costs about
// 35 instructions.
func (q *qp) copyFromCurSGE(p *packet, w *sendWQE, n uint32) bool {
	dma, sgl := &w.dma, w.sge
	c := dma.curSGE
	if c >= len(sgl) || n == 0 || !q.fabric.net.shortcuts() {
		return false
	}
	s := &sgl[c]
	if dma.sgeOffset >= s.Length || n > s.Length-dma.sgeOffset {
		return false
	}
	m := q.lookupLocal(s.LKey, 0)
	va := s.Addr + uint64(dma.sgeOffset)
	if m == nil || !m.contains(va, uint64(n)) {
		return false
	}
	q.f().setPayload(p, m.buf[va-m.addr:va-m.addr+uint64(n)])
	dma.sgeOffset += n
	dma.resid -= n
	return true
}

// ---------------------------------------------------------------- completer

// compIdle reports whether a run of the completer would change nothing: no
// timeout to handle, no response queued, no WQE at the head of the send
// queue to complete or fail, and no retransmit timer to push back (or the
// requester waits for a retry, and the completer returns at once).
func (q *qp) compIdle() bool {
	c := &q.comp
	if c.state == engError || c.state == engReset || c.timeout || c.timeoutRetry {
		return false
	}
	if q.req.needRetry {
		return true
	}
	if c.pkts.len() > 0 {
		return false
	}
	if w := q.sq.head(); w != nil && (w.state == wqeDone || w.state == wqeError) {
		return false
	}
	return !(q.reliable() && q.req.state == engReady && psnCmp(q.req.psn, c.psn) > 0 && q.timeoutJiffies() > 0)
}

// copyToCurSGE is copyToSGL's usual case: when src (not empty, no longer
// than what dma has left) fits in the current SGE, in its MR, it copies
// src there, moves dma on and reports true, as copyToSGL's loop would in
// more steps; otherwise it changes nothing and reports false (the loop
// then also says why it fails). inCurSGE's test is written out, as in
// copyFromCurSGE.
func (q *qp) copyToCurSGE(sgl []verbs.SGE, dma *dmaInfo, src []byte) bool {
	n := uint32(len(src))
	c := dma.curSGE
	if c >= len(sgl) || !q.fabric.net.shortcuts() {
		return false
	}
	s := &sgl[c]
	if dma.sgeOffset >= s.Length || n > s.Length-dma.sgeOffset {
		return false
	}
	m := q.lookupLocal(s.LKey, verbs.AccessLocalWrite)
	va := s.Addr + uint64(dma.sgeOffset)
	if m == nil || !m.contains(va, uint64(n)) {
		return false
	}
	copy(m.buf[va-m.addr:], src)
	dma.sgeOffset += n
	dma.resid -= n
	return true
}
