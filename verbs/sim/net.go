package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The simulated segment: the engine runs that are due, the packets in
// flight ordered by arrival, the armed timers, and the observers and fault
// rules that watch them.

// task kinds: rxe's three tasklets per QP.
const (
	taskResp = iota
	taskComp
	taskReq
	numTasks
)

type taskRef struct {
	q    *qp
	kind uint8
}

// network holds what is in flight.
type network struct {
	f        *Fabric
	runq     []taskRef
	runHead  int
	pkts     flight
	timers   timerHeap
	pktOrd   uint64
	timerOrd uint64
	seq      uint64 // packets sent
	// ipv4IDs counts IPv4 packets from the UDP link checked with the
	// identification their ICRC implies (icrcOK).
	ipv4IDs uint64
	// linkDrops counts the packets from the UDP link that receive
	// dropped, by kind (UDPLinkStats).
	linkDrops struct{ malformed, badICRC, refused uint64 }
	pool      packetPool
	borrowed  []*packet // packets that may hold a borrowed payload
	held      []*packet // held back by a reorder fault

	observers []observer
	nextObs   int
	faults    []verbs.FaultRule
	faultHits []int // matches seen per rule (for Nth)
	nextFault int
	faultRng  *rand.Rand

	// alwaysEncode makes every packet travel as wire bytes (tests).
	alwaysEncode bool
	// general makes every packet and engine run take the general steps,
	// without the shortcuts for the usual case (tests: both must give the
	// same results).
	general bool
	// Packet trains (train.go): how many are in flight, spare ones, the
	// requester's turns left in its task for a train (trainRoom) and how
	// many one took (trainSent), and how many more packets runLocked may
	// deliver in this step (batchLeft) and did beyond the first (batched).
	// reqCont is the WQE whose next packet reqRunFast's next turn sends.
	trains     int
	freeTrains []*train
	trainRoom  int
	trainSent  int
	reqCont    *sendWQE
	batchLeft  int
	batched    int
	trainStats struct{ made, packets, split, inPlace uint64 } // (tests)
	// tap, when set, is told of every packet delivered, with why it was
	// dropped ("" when it was not), without turning any shortcut off
	// (tests: an observer would).
	tap func(p *packet, why string)
	// record collects fabric events for Step, Run and Advance.
	record *[]verbs.FabricEvent
	// scratch for Describe.
	descBuf []byte
}

func (n *network) init(f *Fabric) {
	n.f = f
	n.faultRng = rand.New(rand.NewPCG(uint64(f.cfg.Seed), 0x6661756c7473)) // "faults"
}

// reset drops everything in flight (the fabric is closed).
func (n *network) reset() {
	n.runq, n.runHead = nil, 0
	n.pkts, n.timers, n.held, n.borrowed = flight{}, nil, nil, nil
	n.trains, n.freeTrains = 0, nil
}

// schedule marks a task of q to run (rxe_sched_task / rxe_run_task): the
// engines run from runTasks, one at a time, in the order they were
// scheduled.
func (f *Fabric) schedule(q *qp, kind int) {
	if q.sched[kind] {
		return
	}
	q.sched[kind] = true
	f.net.runq = append(f.net.runq, taskRef{q, uint8(kind)})
}

// runTasks runs scheduled engines until none is due. Each engine runs as
// rxe_do_task runs it: again and again while it reports progress.
func (f *Fabric) runTasks() {
	if f.net.runHead < len(f.net.runq) {
		f.runQueued()
	}
}

func (f *Fabric) runQueued() {
	n := &f.net
	for guard := 0; n.runHead < len(n.runq) && guard < 1<<24; guard++ {
		t := n.runq[n.runHead]
		n.runq[n.runHead] = taskRef{}
		n.runHead++
		q := t.q
		q.sched[t.kind] = false
		if q.dead != "" {
			continue
		}
		again := true
		switch t.kind {
		case taskResp:
			again = f.respTask(q, q.respRun())
		case taskComp:
			for i := 0; again && i < taskBudget; i++ {
				again = q.completer()
				if again && i+1 < taskBudget && n.shortcuts() && q.compIdle() {
					again = false // the next run would find nothing to do
				}
			}
		default:
			if n.shortcuts() {
				again = q.reqRunFast() // fastpath.go
			} else {
				again = q.reqRun()
			}
		}
		if again {
			// Still busy: run again after the others, as a tasklet that
			// reschedules itself does.
			f.schedule(q, int(t.kind))
		}
	}
	n.runq, n.runHead = n.runq[:0], 0
}

// respTask is the rest of the responder's task after its first run, which
// reported again: it runs rxe_responder while it makes progress, at most
// taskBudget times in all, and reports whether it still does.
func (f *Fabric) respTask(q *qp, again bool) bool {
	for i := 1; again; i++ {
		if i == taskBudget {
			return true
		}
		if f.net.shortcuts() && q.respIdle() {
			return false // the next run would find nothing to do
		}
		again = q.respRun()
	}
	return false
}

// taskBudget is how many times an engine runs before the others get a turn.
const taskBudget = 256

// The in-flight limit of a QP's packets (RXE_INFLIGHT_SKBS_PER_QP_HIGH and
// _LOW): rxe's requester pauses while more than 64 of its skbs are in the
// network stack and resumes below 16. The simulator counts a QP's packets
// until they are delivered or lost, and applies the limit where nothing
// else bounds them: UC and UD requesters and READ responses (an RC
// requester has its 128-PSN window).
const (
	inflightHigh = 64
	inflightLow  = 16
)

// sent counts p against its sender's in-flight packets.
func (p *packet) sent() {
	if p.sender != nil {
		p.sender.inflight++
	}
}

// leaveFlight counts one of q's packets out of flight (delivered or lost)
// and reports whether q waits for the room that makes (see wake).
func (q *qp) leaveFlight() bool {
	q.inflight--
	return q.needSkb && q.inflight < inflightLow
}

// wake schedules the engines of a QP that waited for room in flight.
func (f *Fabric) wake(q *qp) {
	q.needSkb = false
	f.schedule(q, taskReq)
	f.schedule(q, taskResp)
}

// errTxRefused is what rxe_send returns when the IP layer refuses a
// datagram (-EAGAIN from rxe_xmit_packet).
type txError struct{ why string }

func (e *txError) Error() string { return e.why }

// xmit is rxe_xmit_packet for a packet q built: it checks that the engine
// may send, then puts the packet on the network. A packet the sender's IP
// layer refuses is returned as a *txError (the caller rolls back, as rxe
// does on -EAGAIN); every other loss is silent to the sender.
func (f *Fabric) xmit(q *qp, p *packet, request bool) error {
	from := q.pd.ctx.dev
	p.sender, p.from = q, from
	if (request && q.req.state != engReady) || (!request && q.resp.state != engReady) {
		// "Packet dropped. QP is not in ready state": rxe frees the skb
		// and reports success.
		f.net.seq++
		p.seq = f.net.seq
		f.observeLocal(p, "dropped: "+q.name()+" is not in a ready state (rxe_xmit_packet)")
		f.net.pool.put(p)
		return nil
	}
	if p.mcast {
		return f.xmitMcast(p)
	}
	to, size := p.to, p.size()
	if to == from {
		p.loopback = true
		f.put(p, size)
		return nil
	}
	if err := f.egressCheck(p, size); err != nil {
		return err
	}
	if to != nil && to.peer {
		return f.carrier.send(p) // another host's device
	}
	if to == nil {
		f.net.seq++
		p.seq = f.net.seq
		f.observe(p, "sent", "")
		f.observe(p, "dropped", "no device has address "+p.dgid.String()+" (ARP gets no answer)")
		f.net.pool.put(p)
		return nil
	}
	f.put(p, size)
	return nil
}

// egressCheck applies what the sender's IP layer checks before a packet
// of n bytes leaves: the datagram fits the MTU (DF is set).
func (f *Fabric) egressCheck(p *packet, n int) error {
	if from := p.from; n > from.link.cfg.MTU {
		why := fmt.Sprintf("%d-byte datagram exceeds %s's MTU %d; DF is set, so the IP layer refuses it "+
			"(ip_fragment: EMSGSIZE) and rxe keeps the WQE to try again", n, from.name, from.link.cfg.MTU)
		f.net.seq++
		p.seq = f.net.seq
		f.observeLocal(p, "refused: "+why)
		return &txError{why}
	}
	return nil
}

// clonePacket copies p with its own payload buffer.
func (f *Fabric) clonePacket(p *packet) *packet {
	c := f.net.pool.get()
	own, enc := c.own, c.enc
	*c = *p
	c.own, c.enc = own, enc
	c.hix = -1
	c.encoded = false
	c.corrupt = false
	if len(p.hdr.Payload) > 0 {
		copy(c.ownPayload(len(p.hdr.Payload)), p.hdr.Payload)
	}
	if p.encoded {
		c.enc = append(c.enc[:0], p.enc...)
		c.encoded = true
		c.corrupt = p.corrupt
	}
	return c
}

// put gives a packet of size bytes its sequence number and arrival time,
// lets the fault rules act on it, tells the observers, and queues it for
// delivery.
func (f *Fabric) put(p *packet, size int) {
	n := &f.net
	n.seq++
	p.seq = n.seq
	p.at = f.arrival(p, size)
	if len(n.faults) == 0 && !f.mustEncode() && len(n.held) == 0 && n.shortcuts() {
		// No rule acts on the packet, nobody looks at it, no held packet
		// waits to pass it: it goes in the queue as enqueue puts it.
		p.sent()
		n.pktOrd++
		p.ord = n.pktOrd
		n.pkts.push(p)
		return
	}
	drop, dup := "", false
	if len(n.faults) > 0 {
		drop, dup = f.applyFaults(p, false)
	}
	if f.mustEncode() || p.corrupt {
		if err := p.encode(); err != nil {
			f.observe(p, "dropped", "cannot be framed: "+err.Error())
			n.pool.put(p)
			return
		}
		if p.corrupt {
			flipBit(p)
		}
	}
	f.observe(p, "sent", "")
	if drop != "" {
		f.observe(p, "dropped", drop)
		n.pool.put(p)
		return
	}
	if dup {
		c := f.clonePacket(p)
		c.dup = true
		n.pktOrd++
		c.ord = n.pktOrd
		c.sent()
		n.pkts.push(c)
	}
	p.sent()
	f.enqueue(p)
}

// enqueue puts p in the arrival heap, or holds it back for a reorder fault;
// a held packet is released behind the next packet queued.
func (f *Fabric) enqueue(p *packet) {
	n := &f.net
	if p.held {
		n.held = append(n.held, p)
		return
	}
	n.pktOrd++
	p.ord = n.pktOrd
	n.pkts.push(p)
	if len(n.held) > 0 {
		for _, h := range n.held {
			h.held = false
			if h.at < p.at {
				h.at = p.at
			}
			n.pktOrd++
			h.ord = n.pktOrd
			n.pkts.push(h)
		}
		clear(n.held)
		n.held = n.held[:0]
	}
}

// releaseHeld delivers held packets when nothing else will come to pass
// them.
func (f *Fabric) releaseHeld() bool {
	n := &f.net
	if len(n.held) == 0 {
		return false
	}
	for _, h := range n.held {
		h.held = false
		if h.at < f.clock.now() {
			h.at = f.clock.now()
		}
		n.pktOrd++
		h.ord = n.pktOrd
		n.pkts.push(h)
	}
	clear(n.held)
	n.held = n.held[:0]
	return true
}

// arrival computes when p reaches its destination under the link model.
func (f *Fabric) arrival(p *packet, size int) time.Duration {
	now := f.clock.now()
	if p.loopback {
		l := &p.from.link
		start := max(now, l.loopBusy)
		l.loopBusy = start + l.serialize(size)
		return l.loopBusy + f.cfg.LoopbackLatency
	}
	down := &p.to.link
	atSwitch := p.atSwitch
	if !p.mcast {
		atSwitch = f.uplink(p.from, size)
	}
	start := max(atSwitch, down.downBusy)
	down.downBusy = start + down.serialize(size)
	return down.downBusy + down.cfg.Latency
}

// uplink serializes a datagram of size bytes onto from's link and returns
// when it reaches the switch.
func (f *Fabric) uplink(from *device, size int) time.Duration {
	up := &from.link
	start := max(f.clock.now(), up.upBusy)
	up.upBusy = start + up.serialize(size)
	up.txPackets++
	up.txBytes += uint64(size)
	return up.upBusy + up.cfg.Latency
}

// mustEncode reports whether packets must travel as wire bytes now.
func (f *Fabric) mustEncode() bool {
	return f.net.alwaysEncode || len(f.net.observers) > 0
}

// flipBit flips one bit of an encoded packet's payload (or, for a packet
// without payload, of its last header byte), leaving the ICRC as it was:
// the receiver's ICRC check then drops the packet.
func flipBit(p *packet) {
	hl := p.hdr.HeaderLen()
	i := hl - 1
	if n := len(p.hdr.Payload); n > 0 {
		i = hl + n/2
	}
	if i >= 0 && i < len(p.enc)-wire.ICRCLen {
		p.enc[i] ^= 1 << (p.seq % 8)
	}
}

// deviceByGID returns the device that owns g, or nil.
func (f *Fabric) deviceByGID(g verbs.GID) *device {
	for _, d := range f.devs {
		if d.hasGID(g) {
			return d
		}
	}
	return nil
}

// settle copies the payloads still borrowed by packets in flight (or
// queued at a QP) into the packets, before a verb returns to the program.
func (f *Fabric) settle() {
	n := &f.net
	if n.trains > 0 {
		f.splitTrains()
	}
	for i, p := range n.borrowed {
		if p.borrowed {
			p.materialize()
		}
		n.borrowed[i] = nil
	}
	n.borrowed = n.borrowed[:0]
}

// deliverOne takes the next packet off the network, p (as pkts.peek
// returned it), and hands it to its destination. While events are
// recorded, it describes what happened in *ev (ev is nil when nobody wants
// to know). When p carries a train (train.go), the train's next packet
// becomes a packet of its own, or, when the responder takes p at delivery,
// the train's packets that the fabric would deliver next are taken in
// place (trainAtDelivery).
func (f *Fabric) deliverOne(p *packet, ev *verbs.FabricEvent) {
	f.net.pkts.take(p)
	if p.tr != nil && ev != nil {
		f.trainSplit(p) // each packet is an event of its own
	}
	f.clock.advance(p.at)
	if q := p.sender; q != nil && q.leaveFlight() {
		f.wake(q)
	}
	q, why := f.receive(p)
	if f.net.tap != nil {
		f.net.tap(p, why)
	}
	if q != nil {
		if ev == nil && f.takeAtDelivery(q, p) {
			return // the responder took p, and the engines ran (fastpath.go)
		}
		if p.tr != nil {
			f.trainSplit(p)
		}
		q.rcvPkt(p)
	} else if p.tr != nil {
		f.trainSplit(p)
	}
	kind := verbs.EventPacketDelivered
	verdict := "delivered"
	if why != "" {
		kind = verbs.EventPacketDropped
		verdict = "dropped"
	}
	if ev != nil && f.net.record != nil {
		*ev = verbs.FabricEvent{Time: f.clock.now(), Kind: kind, Text: f.describe(p, verdict, why)}
		pe := f.packetEvent(p, verdict, why)
		pe.Bytes = nil // not valid after the step
		ev.Packet = &pe
	}
	f.observe(p, verdict, why)
	if why != "" {
		if p.linked {
			f.net.countLinkDrop(why)
		}
		f.net.pool.put(p)
	}
	f.runTasks()
}

// receive is rxe_rcv for one packet arriving at p.to: the device checks,
// then hdr_check (check_type_state, check_addr, check_keys), then the ICRC.
// It returns the QP a packet that passes goes to (the caller queues it
// for the responder or the completer with rcvPkt, and then it belongs to
// the QP), or why the packet was dropped.
func (f *Fabric) receive(p *packet) (*qp, string) {
	to := p.to
	if p.from.portState != verbs.PortActive {
		return nil, p.from.name + "'s port is down"
	}
	if to.portState != verbs.PortActive {
		return nil, to.name + "'s port is down"
	}
	if !p.loopback {
		n := p.size()
		if n > to.link.cfg.MTU {
			return nil, fmt.Sprintf("%d-byte datagram exceeds %s's MTU %d (the receiving NIC drops it)", n, to.name, to.link.cfg.MTU)
		}
		to.link.rxPackets++
		to.link.rxBytes += uint64(n)
	}
	if p.encoded {
		// The receiver works from the bytes: decode them; the ICRC is
		// checked after the header checks, as rxe_rcv does.
		if err := wire.Decode(p.enc, &p.hdr); err != nil {
			return nil, whyMalformed + err.Error()
		}
		p.borrowed = false
	}
	if p.mcast {
		if why := mcastInput(p); why != "" {
			return nil, why // the host's IP input (mcast.go)
		}
	}
	// rxe_chk_dgid: loopback and multicast are accepted; otherwise the
	// destination must be one of the device's RoCE v2 GIDs.
	if !p.loopback && !p.mcast && !to.hasGID(p.dgid) {
		return nil, to.name + " has no GID " + p.dgid.String()
	}
	bth := &p.hdr.BTH
	if bth.TVer != 0 {
		return nil, "TVer is not 0 (hdr_check)"
	}
	qpn := bth.DestQP
	if qpn == 0 {
		return nil, "QP 0 (SMI) does not exist on RoCE (hdr_check)"
	}
	if qpn == wire.MulticastQPN {
		if p.encoded && !f.icrcOK(p) {
			return nil, whyBadICRC
		}
		return nil, f.receiveMcast(p)
	}
	q := to.qp(qpn)
	if q == nil || q.dead != "" {
		if qpn == 1 {
			return nil, "QP 1 (GSI): the simulator has no management QP"
		}
		return nil, fmt.Sprintf("%s has no QP %#x (hdr_check)", to.name, qpn)
	}
	if !f.net.shortcuts() || !q.hdrOK(p) {
		if why := q.checkTypeState(p); why != "" {
			return nil, why
		}
		if why := q.checkAddr(p); why != "" {
			return nil, why
		}
		if why := q.checkKeys(p, qpn); why != "" {
			return nil, why
		}
	}
	if p.encoded && !f.icrcOK(p) {
		return nil, whyBadICRC
	}
	return q, ""
}

// icrcOK checks the ICRC of an encoded packet against its framing. A
// packet that came in over IPv4 on the UDP link has a framing without the
// sender's identification, which the socket does not show: it is checked
// with the one its ICRC implies (wire.RecoverIPv4), which then becomes
// its framing.
func (f *Fabric) icrcOK(p *packet) bool {
	nw := p.network()
	if !p.linked || p.ipv6 {
		return wire.VerifyICRC(p.enc, nw) == nil
	}
	got, err := wire.RecoverIPv4(p.enc, nw)
	if err != nil {
		return false
	}
	if got.ID != nw.ID {
		f.net.ipv4IDs++
		*nw = got
	}
	return true
}

// The beginnings of receive's reasons for the drops UDPLinkStats counts
// apart from the rest.
const (
	whyMalformed = "malformed packet: "
	whyBadICRC   = "bad ICRC (rxe_icrc_check)"
)

// countLinkDrop counts a packet from the UDP link that receive dropped
// for why.
func (n *network) countLinkDrop(why string) {
	switch {
	case strings.HasPrefix(why, whyMalformed):
		n.linkDrops.malformed++
	case strings.HasPrefix(why, whyBadICRC):
		n.linkDrops.badICRC++
	default:
		n.linkDrops.refused++
	}
}

// rcvPkt is rxe_rcv_pkt: requests to the responder, the rest to the
// completer.
func (q *qp) rcvPkt(p *packet) {
	f := q.f()
	if p.hdr.BTH.Opcode.IsRequest() {
		q.resp.pkts.push(p)
		f.schedule(q, taskResp)
		return
	}
	q.comp.pkts.push(p)
	f.schedule(q, taskComp)
}

// checkTypeState is check_type_state.
func (q *qp) checkTypeState(p *packet) string {
	t := p.hdr.BTH.Opcode.Transport()
	if t != q.transport() {
		return fmt.Sprintf("a %s packet for %s, a %s QP (check_type_state)", t, q.name(), q.typ.Short())
	}
	switch {
	case q.typ == verbs.QPTypeXRCSend && p.hdr.BTH.Opcode.IsRequest():
		return q.name() + " is an XRC_SEND QP: it sends requests and takes responses, and has no receive side"
	case q.typ == verbs.QPTypeXRCRecv && !p.hdr.BTH.Opcode.IsRequest():
		return q.name() + " is an XRC_RECV QP: it sends no requests, so it takes no responses"
	}
	if p.hdr.BTH.Opcode.IsRequest() {
		if q.resp.state != engReady {
			return q.name() + " is not ready to receive: its responder is not in RTR or RTS (check_type_state)"
		}
	} else if q.req.state < engReady || q.req.state > engDrained {
		return q.name() + " is not sending (check_type_state)"
	}
	return ""
}

// checkAddr is check_addr: an RC or UC packet must come from the QP's
// peer to the QP's own address.
func (q *qp) checkAddr(p *packet) string {
	if !q.connected() {
		return ""
	}
	if q.attr.PortNum != 1 {
		return q.name() + " has no port (check_addr)"
	}
	// The QP's route holds both addresses of its AV: dgid is the AV's
	// DGID, sgid the device's GID at the AV's index (zero for an empty
	// slot), as worked out when the AV was set.
	var remote, local verbs.GID
	if rt := q.route; rt != nil {
		remote, local = rt.dgid, rt.sgid
	} else {
		remote = q.attr.AH.GRH.DGID
		local, _ = q.pd.ctx.dev.gid(int(q.attr.AH.GRH.SGIDIndex))
	}
	if p.sgid != remote || p.dgid != local {
		return "source or destination address does not match " + q.name() + "'s address vector (check_addr)"
	}
	return ""
}

// checkKeys is check_keys: the P_Key (always 0xffff here) and, for UD,
// the Q_Key.
func (q *qp) checkKeys(p *packet, qpn uint32) string {
	if p.hdr.BTH.PKey&0x7fff != wire.DefaultPKey&0x7fff {
		q.pd.ctx.dev.badPKeyCntr++
		return "P_Key mismatch (check_keys)"
	}
	if q.typ == verbs.QPTypeUD {
		want := q.attr.QKey
		if qpn == 1 {
			want = wire.GSIQKey
		}
		if p.hdr.DETH.QKey != want {
			q.pd.ctx.dev.qkeyViolCntr++
			return fmt.Sprintf("Q_Key %#x does not match %s's %#x (check_keys): the datagram is dropped", p.hdr.DETH.QKey, q.name(), want)
		}
	}
	return ""
}

// ---------------------------------------------------------------- timers

// nextTimer returns the earliest armed timer.
func (f *Fabric) nextTimer() (*timer, bool) {
	if len(f.net.timers) == 0 {
		return nil, false
	}
	return f.net.timers[0], true
}

// fireTimer runs the earliest timer at its deadline.
func (f *Fabric) fireTimer() verbs.FabricEvent {
	t := f.net.timers.remove(0)
	f.clock.advance(t.at)
	q := t.q
	switch t.kind {
	case timerRetrans:
		q.retransmitTimer()
	case timerRNR:
		q.rnrNakTimer()
	}
	var ev verbs.FabricEvent
	if f.net.record != nil {
		ev = verbs.FabricEvent{Time: f.clock.now(), Kind: verbs.EventTimerFired, Text: q.name() + " " + timerNames[t.kind] + " timer fired"}
	}
	f.runTasks()
	return ev
}

// ---------------------------------------------------------------- describe

// describe is one line for a packet event, as a trace shows it.
func (f *Fabric) describe(p *packet, verdict, why string) string {
	b := f.net.descBuf[:0]
	b = append(b, "#"...)
	b = strconv.AppendUint(b, p.seq, 10)
	b = append(b, ' ')
	b = append(b, p.from.name...)
	b = append(b, "→"...)
	b = append(b, p.toName()...)
	b = append(b, ' ')
	b = wire.AppendDescribe(b, &p.hdr)
	b = append(b, ' ')
	b = append(b, verdict...)
	if why != "" {
		b = append(b, ": "...)
		b = append(b, why...)
	}
	f.net.descBuf = b
	return string(b)
}

// toName names where a packet goes.
func (p *packet) toName() string {
	if p.to != nil {
		return p.to.name
	}
	if p.mcast {
		return p.dgid.String()
	}
	return p.dgid.String()
}
