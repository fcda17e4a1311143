package sim

import (
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// Packet trains: the usual case of a long RC message, batched.
//
// Most packets of a long RC WRITE or SEND (with or without immediate data
// or invalidate: their MIDDLEs are the same) are MIDDLE packets that differ
// from each other only in their PSN, their payload (the next MTU of the
// same SGE), their number, and their arrival time; the requester sends
// them one after another in one run of its task, and the responder takes
// them one after another at delivery. Where nothing can tell the
// difference, the requester sends such a run as one train: the first
// packet is built and sent as every packet is, and the ones after it are
// accounted for in one step — the PSNs, the ACK count, the SGE offset, the
// link's reservations and counters, the packet numbers and the in-flight
// count all move as they would packet by packet — and travel as a count
// on that first packet (its tr). When the first packet is delivered, the
// next one is made from it: as a packet of its own (trainSplit) on the
// general path, or, when the responder takes it at delivery (see
// respAtDelivery), in place, packet after packet, for as long as the
// fabric's next step would be the train's next packet and the responder
// would take it in one go (trainAtDelivery). Every packet keeps its own
// arrival time, number and place among the other packets and timers.
//
// A train is made only when nobody looks at packets one by one: in
// automatic delivery, with no observer, no fault rule, no event recorded,
// no held packet, not on the general steps (net.general), between two
// devices of this process, and only on a carrier whose payload is borrowed
// (so that settle finds it: the packets made from it in place borrow from
// the same memory). None survives a verb: settle splits what is left
// before the verb returns (a packet in flight then must be one of its
// own), and then copies every borrowed payload still in flight.

// A train is the packets that follow the packet that carries it.
type train struct {
	left int    // packets after the one that carries the train
	rest []byte // their payloads, one MTU each, in order (borrowed)
	mtu  uint32
	// The link model's recurrence (see arrival): when the carrying packet
	// reached the switch and finished crossing the destination's link,
	// and the serialization times and latency of the packets after it.
	atSwitch, downBusy      time.Duration
	serUp, serDown, latency time.Duration
}

// next turns p, which carries tr, into the packet after it.
func (tr *train) next(p *packet) {
	tr.atSwitch += tr.serUp
	tr.downBusy = max(tr.atSwitch, tr.downBusy) + tr.serDown
	p.at = tr.downBusy + tr.latency
	p.seq++
	p.ord++
	p.hdr.BTH.PSN = (p.hdr.BTH.PSN + 1) & psnMask
	p.hdr.Payload = tr.rest[:tr.mtu:tr.mtu]
	tr.rest = tr.rest[tr.mtu:]
	tr.left--
}

// trainsAllowed reports whether packets may travel as trains now.
func (n *network) trainsAllowed() bool {
	f := n.f
	return n.shortcuts() && f.mode == verbs.DeliverAuto && n.record == nil && len(n.observers) == 0 &&
		len(n.faults) == 0 && len(n.held) == 0 && !n.alwaysEncode
}

func (n *network) newTrain() *train {
	if k := len(n.freeTrains); k > 0 {
		tr := n.freeTrains[k-1]
		n.freeTrains = n.freeTrains[:k-1]
		return tr
	}
	return &train{}
}

func (n *network) freeTrain(tr *train) {
	*tr = train{}
	n.freeTrains = append(n.freeTrains, tr)
	n.trains--
}

// extendTrain is called (by reqSentMiddle) right after reqPacket sent p,
// a MIDDLE packet of w that did not ask for an ACK, through the usual
// steps, with room turns left in the requester's task. It sends as many of w's next
// packets as the task would send in its next turns, up to room, as a
// train on p — each a MIDDLE of a full MTU without AckReq, inside the
// 128-PSN window, from the SGE p's payload was borrowed from — and
// returns how many. The requester's state, the link, the packet numbers
// and the QP's in-flight count end as the packets sent one by one would
// leave them.
func (q *qp) extendTrain(p *packet, w *sendWQE, room int) int {
	f := q.f()
	n := &f.net
	r := &q.req
	to, from := p.to, p.from
	// The carrier's payload must be borrowed (and so tracked for settle):
	// one gathered across two SGEs is its own, and the packets after it,
	// made from it in place (trainAtDelivery), would not be.
	if p.tr != nil || p.sender != q || !p.borrowed || to == nil || to == from || to.peer || p.mcast || p.loopback || p.encoded ||
		p.hdr.BTH.AckReq || (p.hdr.BTH.Opcode != wire.RCRDMAWriteMiddle && p.hdr.BTH.Opcode != wire.RCSendMiddle) ||
		w.wr.Flags&verbs.SendInline != 0 || r.state != engReady || !n.trainsAllowed() {
		return 0
	}
	mtu := q.mtu
	sgl := w.sge
	d := &w.dma
	if d.curSGE >= len(sgl) || d.resid <= mtu || uint32(len(p.hdr.Payload)) != mtu {
		return 0
	}
	// How many packets the next turns would send as such MIDDLEs: while
	// what is left is more than one MTU (next_opcode), the PSN is inside
	// the window (rxe_requester), no ACK is due (init_req_packet), and
	// the payload lies in the current SGE (copy_data's usual case).
	k := int((d.resid - 1) / mtu) // packets before the LAST
	if w := int(psnCmp(q.comp.psn+rxeMaxUnackedPSNs, r.psn)>>8) + 1; w < k {
		k = w
	}
	if a := rxeMaxPktPerAck - r.noackPkts + 1; a < k {
		k = a
	}
	if s := &sgl[d.curSGE]; d.sgeOffset > s.Length {
		return 0
	} else if c := int((s.Length - d.sgeOffset) / mtu); c < k {
		k = c
	}
	k = min(k, room)
	if k <= 0 {
		return 0
	}
	total := uint64(k) * uint64(mtu)
	rest := []byte(nil)
	if _, _, rest = q.inCurSGE(sgl, d, uint32(total), 0); rest == nil {
		return 0
	}
	// The requester's state after k more packets (build_request,
	// update_wqe_psn, update_state).
	r.psn = (r.psn + uint32(k)) & psnMask
	r.noackPkts += k
	d.sgeOffset += uint32(total)
	d.resid -= uint32(total)
	// The link: each packet serialized after the one before it, as
	// arrival and uplink reserve it.
	size := p.size()
	up, down := &from.link, &to.link
	tr := n.newTrain()
	n.trains++
	*tr = train{left: k, rest: rest, mtu: mtu,
		atSwitch: up.upBusy + up.cfg.Latency, downBusy: down.downBusy,
		serUp: up.serialize(size), serDown: down.serialize(size), latency: down.cfg.Latency}
	sw, busy := tr.atSwitch, tr.downBusy
	for i := 0; i < k; i++ {
		sw += tr.serUp
		busy = max(sw, busy) + tr.serDown
	}
	up.upBusy += time.Duration(k) * tr.serUp
	up.txPackets += uint64(k)
	up.txBytes += uint64(k) * uint64(size)
	down.downBusy = busy
	n.seq += uint64(k)
	n.pktOrd += uint64(k)
	q.inflight += k
	p.tr = tr
	n.trainStats.made++
	n.trainStats.packets += uint64(k)
	return k
}

// trainSplit makes the packet after p, which carries a train, a packet of
// its own, carrying the rest of the train, and queues it. It returns it.
func (f *Fabric) trainSplit(p *packet) *packet {
	n := &f.net
	tr := p.tr
	p.tr = nil
	c := n.pool.get()
	c.packetState = p.packetState
	c.hix = -1
	c.netwSet = false
	tr.next(c)
	if tr.left == 0 {
		n.freeTrain(tr)
	} else {
		c.tr = tr
	}
	c.borrowed = true
	n.borrowed = append(n.borrowed, c)
	n.pkts.push(c)
	n.trainStats.split++
	return c
}

// splitTrains makes every packet of every train in flight a packet of its
// own (settle: no train outlives the verb that sent it).
func (f *Fabric) splitTrains() {
	n := &f.net
	var heads []*packet
	for _, p := range n.pkts.fifo[n.pkts.head:] {
		if p.tr != nil {
			heads = append(heads, p)
		}
	}
	for _, p := range n.pkts.heap {
		if p.tr != nil {
			heads = append(heads, p)
		}
	}
	for _, p := range heads {
		for p.tr != nil {
			p = f.trainSplit(p)
		}
	}
}

// trainAtDelivery takes p, a WRITE or SEND MIDDLE that carries a train
// and that q accepted (deliverOne has done everything up to the responder
// for it), through the responder at delivery, as respAtDelivery would,
// and then the train's next packets in place, one by one, for as long as
// the fabric's next step would deliver the next one and the responder take
// it the same way: nothing else is in flight before it, no timer is due
// before it, no engine is waiting to run, its sender will not be woken by
// room in flight, and it continues the message in sequence, into the same
// MR (a WRITE) or the current SGE of the receive WQE (a SEND). It reports
// false, having split the train and changed nothing, when p itself cannot
// be taken so (the caller goes on with p the usual way).
func (f *Fabric) trainAtDelivery(q *qp, p *packet) bool {
	n := &f.net
	r := &q.resp
	mtu := q.mtu
	send := p.hdr.BTH.Opcode == wire.RCSendMiddle
	if !f.respTakesAtDelivery(q) {
		f.trainSplit(p)
		return false
	}
	var m *mr // a WRITE's target
	if send {
		if (r.opcode != int(wire.RCSendFirst) && r.opcode != int(wire.RCSendMiddle)) || r.wqe == nil {
			f.trainSplit(p)
			return false
		}
	} else {
		// check_rkey's MR and range: the same for every packet of the
		// train, whose range only shrinks from its start.
		if m = q.lookupRemote(r.rkey, verbs.AccessRemoteWrite); (r.opcode != int(wire.RCRDMAWriteFirst) && r.opcode != int(wire.RCRDMAWriteMiddle)) ||
			q.attr.AccessFlags&verbs.AccessRemoteWrite == 0 || m == nil || !m.contains(r.va+r.offset, uint64(r.resid)) {
			f.trainSplit(p)
			return false
		}
	}
	tr := p.tr
	to := p.to
	size := uint64(p.size())
	// dest is where respMiddle puts p's payload when p is in sequence and
	// every check passes — write_data_in's range of the MR, or the part of
	// the receive WQE's current SGE that send_data_in's copy_data fills in
	// its usual case — or nil.
	dest := func(p *packet) []byte {
		k := uint32(len(p.hdr.Payload))
		if uint32(p.hdr.BTH.PSN) != r.psn || k == 0 {
			return nil
		}
		if !send {
			va := r.va + r.offset
			if k != mtu || r.resid <= mtu || p.hdr.PadCount() != 0 || !m.contains(va, uint64(k)) {
				return nil
			}
			return m.buf[va-m.addr : va-m.addr+uint64(k)]
		}
		if d := &r.wqe.dma; k <= d.resid {
			_, _, b := q.inCurSGE(r.wqe.sge, d, k, verbs.AccessLocalWrite)
			return b
		}
		return nil
	}
	dst := dest(p)
	if dst == nil {
		f.trainSplit(p)
		return false
	}
	for {
		// respAtDelivery and respMiddle's effects; cleanup, and nothing
		// is scheduled.
		k := uint32(len(p.hdr.Payload))
		r.aethSyn = wire.SyndromeACK
		r.sentPSNNak = false
		copy(dst, p.hdr.Payload)
		if send {
			r.wqe.dma.sgeOffset += k
			r.wqe.dma.resid -= k
		} else {
			r.va += uint64(k)
			r.resid -= k
		}
		r.psn = (r.psn + 1) & psnMask
		r.ackPSN = r.psn
		r.opcode = int(p.hdr.BTH.Opcode)
		r.status = verbs.WCSuccess
		r.mr = nil
		if tr == nil {
			n.pool.put(p)
			return true
		}
		// The train's next packet: if the fabric's next step would
		// deliver it and the responder take it the same way, it is
		// delivered here; otherwise it goes in flight.
		tr.next(p)
		if tr.left == 0 {
			p.tr = nil
			n.freeTrain(tr)
			tr = nil
		}
		s := p.sender
		if x := n.pkts.peek(); (x != nil && !pktLess(p, x)) || n.batchLeft <= 1 ||
			(s != nil && s.needSkb && s.inflight-1 < inflightLow) {
			n.pkts.push(p)
			return true
		}
		if t, ok := f.nextTimer(); ok && p.at > t.at {
			n.pkts.push(p)
			return true
		}
		if dst = dest(p); dst == nil {
			n.pkts.push(p)
			return true
		}
		// deliverOne's steps before the responder: the clock, the sender's
		// count in flight, and receive, whose checks pass as for the
		// packet before (nothing has run since but the responder's steps
		// above); only its link counters move.
		n.batchLeft--
		n.batched++
		n.trainStats.inPlace++
		f.clock.advance(p.at)
		if s != nil {
			s.inflight--
		}
		to.link.rxPackets++
		to.link.rxBytes += size
		if n.tap != nil {
			n.tap(p, "")
		}
	}
}
