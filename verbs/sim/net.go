package sim

import (
	"fmt"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// The simulated segment: packets in flight, in the order they will
// arrive, and the QPs with armed timers. Time is virtual; a packet takes
// linkLatency to cross the switch (or the loopback path).

const linkLatency = time.Microsecond

// packet is a RoCEv2 packet in decoded form: the BTH and extension headers
// as fields, the payload as bytes, and the IP addresses as GIDs. This is
// the in-process form; it is encoded to wire bytes only when someone looks.
type packet struct {
	seq      uint64
	at       time.Duration // arrival time
	from, to *device
	sgid     verbs.GID // source and destination IP (as GIDs)
	dgid     verbs.GID

	op      opcode
	se      bool
	ackReq  bool
	destQP  uint32
	psn     uint32
	hasImm  bool
	imm     uint32
	va      uint64 // RETH / AtomicETH
	rkey    uint32
	dmaLen  uint32
	swap    uint64
	compare uint64
	syn     uint8  // AETH syndrome
	msn     uint32 // AETH MSN
	orig    uint64 // AtomicAckETH
	qkey    uint32 // DETH
	srcQP   uint32 // DETH
	payload []byte
}

// network holds what is in flight.
type network struct {
	f      *Fabric
	runq   []*qp
	wire   []*packet
	seq    uint64
	timers []*qp // QPs that may have an armed timer (stale entries are skipped)
}

func (n *network) init(f *Fabric) { n.f = f }

func (n *network) reset() {
	n.runq, n.wire, n.timers = nil, nil, nil
}

// schedule marks tasks of q to run (rxe_sched_task / rxe_run_task).
func (f *Fabric) schedule(q *qp, tasks int) {
	q.t.pending |= tasks
	if !q.t.queued {
		q.t.queued = true
		f.net.runq = append(f.net.runq, q)
	}
}

// runTasks runs scheduled tasks until none is left.
func (f *Fabric) runTasks() {
	for guard := 0; len(f.net.runq) > 0 && guard < 1<<22; guard++ {
		q := f.net.runq[0]
		f.net.runq[0] = nil
		f.net.runq = f.net.runq[1:]
		q.t.queued = false
		tasks := q.t.pending
		q.t.pending = 0
		if q.dead != "" {
			continue
		}
		if tasks&taskResp != 0 {
			q.responder()
		}
		if tasks&taskComp != 0 {
			q.completer(nil)
		}
		if tasks&taskReq != 0 {
			q.requester()
		}
	}
}

// cancelQP drops a QP's packets in flight, queued work and timers (on
// RESET and destroy).
func (f *Fabric) cancelQP(q *qp) {
	q.t.pending = 0
	q.t.retransAt, q.t.rnrAt = 0, 0
	q.t.respQ = q.t.respQ[:0]
}

// send puts a packet on the wire. Ports that are down drop it.
func (f *Fabric) send(p *packet) {
	f.net.seq++
	p.seq = f.net.seq
	p.at = f.now + linkLatency
	f.net.wire = append(f.net.wire, p)
}

// armTimer registers q as having a timer.
func (f *Fabric) armTimer(q *qp) {
	if !q.t.onTimerList {
		q.t.onTimerList = true
		f.net.timers = append(f.net.timers, q)
	}
}

// nextTimer returns the QP with the earliest armed timer and its deadline.
func (f *Fabric) nextTimer() (*qp, time.Duration, bool) {
	var best *qp
	var at time.Duration
	kept := f.net.timers[:0]
	for _, q := range f.net.timers {
		d, ok := q.t.deadline()
		if !ok || q.dead != "" {
			q.t.onTimerList = false
			continue
		}
		kept = append(kept, q)
		if best == nil || d < at {
			best, at = q, d
		}
	}
	for i := len(kept); i < len(f.net.timers); i++ {
		f.net.timers[i] = nil
	}
	f.net.timers = kept
	return best, at, best != nil
}

// deliverOne takes the first packet off the wire and hands it to its
// destination.
func (f *Fabric) deliverOne() verbs.FabricEvent {
	p := f.net.wire[0]
	f.net.wire[0] = nil
	f.net.wire = f.net.wire[1:]
	if p.at > f.now {
		f.now = p.at
	}
	ev := verbs.FabricEvent{Time: f.now, Kind: verbs.EventPacketDelivered}
	why := f.receive(p)
	if why != "" {
		ev.Kind = verbs.EventPacketDropped
	}
	ev.Text = describe(p, why)
	f.runTasks()
	return ev
}

// fireTimer fires the timer of q at its deadline.
func (f *Fabric) fireTimer(q *qp, at time.Duration) verbs.FabricEvent {
	if at > f.now {
		f.now = at
	}
	name := q.t.fire(f.now)
	f.runTasks()
	return verbs.FabricEvent{Time: f.now, Kind: verbs.EventTimerFired, Text: fmt.Sprintf("%s %s timer fired", q.name(), name)}
}

// stepLocked delivers one packet or fires one due timer.
func (f *Fabric) stepLocked() (verbs.FabricEvent, bool) {
	f.runTasks()
	tq, at, ok := f.nextTimer()
	if len(f.net.wire) > 0 && (!ok || f.net.wire[0].at <= at) {
		return f.deliverOne(), true
	}
	if ok && at <= f.now {
		return f.fireTimer(tq, at), true
	}
	return verbs.FabricEvent{}, false
}

// runLocked delivers packets and fires due timers until nothing is
// pending now. It is bounded: a fabric that never settles (a loop of
// retries) stops after a large number of steps.
func (f *Fabric) runLocked() []verbs.FabricEvent {
	var evs []verbs.FabricEvent
	record := f.mode == verbs.DeliverStep
	for i := 0; i < 1<<20; i++ {
		ev, ok := f.stepLocked()
		if !ok {
			break
		}
		if record {
			evs = append(evs, ev)
		}
	}
	return evs
}

// afterVerb runs the engines after a verb; in automatic delivery mode the
// fabric then runs until nothing is in flight.
func (f *Fabric) afterVerb() {
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
}

// Budgets for letting virtual time run in automatic mode.
const (
	idleTimerBudget = 64
	idleTimeBudget  = 2 * time.Second
)

// idlePoll is called when a program polls an empty CQ: in automatic mode
// virtual time moves on to the next timers, as real time passes while a
// program spins on ibv_poll_cq.
func (f *Fabric) idlePoll(ready func() bool) {
	f.waitFor(idleTimeBudget, ready)
}

// waitFor lets up to d of virtual time pass in automatic mode, firing
// timers, until ready reports true.
func (f *Fabric) waitFor(d time.Duration, ready func() bool) {
	f.runTasks()
	if f.mode != verbs.DeliverAuto {
		return
	}
	f.runLocked()
	limit := f.now + d
	for i := 0; i < idleTimerBudget && !ready(); i++ {
		q, at, ok := f.nextTimer()
		if !ok || at > limit {
			break
		}
		f.fireTimer(q, at)
		f.runLocked()
	}
}

// Step implements verbs.Stepper: deliver one packet or fire one due timer.
func (f *Fabric) Step() (verbs.FabricEvent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stepLocked()
}

// Run implements verbs.Stepper.
func (f *Fabric) Run() []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	mode := f.mode
	f.mode = verbs.DeliverStep // record events
	evs := f.runLocked()
	f.mode = mode
	return evs
}

// Advance implements verbs.Stepper: virtual time moves forward by d; the
// timers that fall due fire in order, and what they cause is delivered.
func (f *Fabric) Advance(d time.Duration) []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	mode := f.mode
	f.mode = verbs.DeliverStep
	defer func() { f.mode = mode }()
	evs := f.runLocked()
	if d <= 0 {
		return evs
	}
	limit := f.now + d
	for i := 0; i < 1<<20; i++ {
		tq, at, ok := f.nextTimer()
		nextPkt := len(f.net.wire) > 0
		if nextPkt && (!ok || f.net.wire[0].at <= at) && f.net.wire[0].at <= limit {
			evs = append(evs, f.deliverOne())
			continue
		}
		if ok && at <= limit {
			evs = append(evs, f.fireTimer(tq, at))
			continue
		}
		break
	}
	if f.now < limit {
		f.now = limit
	}
	return evs
}

// Now implements verbs.Stepper.
func (f *Fabric) Now() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Pending implements verbs.Stepper.
func (f *Fabric) Pending() (packets, timers int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.net.timers {
		if _, ok := q.t.deadline(); ok && q.dead == "" {
			timers++
		}
	}
	return len(f.net.wire), timers
}

// describe is a one-line summary of a packet, as a trace shows it.
func describe(p *packet, why string) string {
	s := fmt.Sprintf("%s→%s %s qp=%#x psn=%#x", p.from.name, p.to.name, p.op, p.destQP, p.psn)
	if p.ackReq {
		s += " ackreq"
	}
	if p.op.hasAETH() {
		s += fmt.Sprintf(" %s msn=%d", synString(p.syn), p.msn)
	}
	if len(p.payload) > 0 {
		s += fmt.Sprintf(" len=%d", len(p.payload))
	}
	if why != "" {
		s += " dropped: " + why
	}
	return s
}
