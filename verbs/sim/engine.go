package sim

import (
	"strconv"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// The drivers of the engines. Each QP has rxe's three tasks — requester,
// completer and responder — as plain functions over the QP's state. A verb,
// a packet arrival or a timer schedules tasks; runTasks runs them until none
// is due. Nothing here blocks, sleeps or starts a goroutine: time is the
// fabric's virtual clock, which moves only when a packet or timer falls due.

// stepLocked delivers one packet or fires one due timer. Packets are
// delivered whenever they are due, even in the future (the clock moves to
// their arrival); timers fire only when due now. At equal times a packet
// goes first.
func (f *Fabric) stepLocked() (verbs.FabricEvent, bool) {
	switch step, p := f.nextStep(); step {
	case stepPacket:
		var ev verbs.FabricEvent
		f.deliverOne(p, &ev)
		return ev, true
	case stepTimer:
		return f.fireTimer(), true
	}
	return verbs.FabricEvent{}, false
}

// What the next step of the fabric is.
const (
	stepNone = iota
	stepPacket
	stepTimer
)

// nextStep runs the due engines and tells what stepLocked does next:
// deliver a packet (the one returned), fire a timer, or nothing.
func (f *Fabric) nextStep() (int, *packet) {
	f.runTasks()
	n := &f.net
	if n.pkts.len() == 0 && len(n.held) > 0 {
		if t, ok := f.nextTimer(); !ok || t.at > f.clock.now() {
			f.releaseHeld()
		}
	}
	t, tok := f.nextTimer()
	if p := n.pkts.peek(); p != nil && (!tok || p.at <= t.at) {
		return stepPacket, p
	}
	if tok && t.at <= f.clock.now() {
		return stepTimer, nil
	}
	return stepNone, nil
}

// maxSteps bounds one run of the fabric: a fabric that never settles (two
// QPs retrying forever) stops after this many steps.
const maxSteps = 1 << 22

// runLocked delivers packets and fires due timers until nothing is
// pending now.
func (f *Fabric) runLocked() {
	// stepLocked's steps, without the events nobody records here. A
	// train's packets delivered in place count one step each.
	n := &f.net
	for i := 0; i < maxSteps; i++ {
		switch step, p := f.nextStep(); step {
		case stepPacket:
			n.batchLeft, n.batched = maxSteps-i, 0
			f.deliverOne(p, nil)
			i += n.batched
			n.batchLeft = 0
		case stepTimer:
			// What came before the timer fell due goes first, as rxe
			// handles each packet when it comes.
			if t, _ := f.nextTimer(); f.carrier.arrivedBy(t.at) {
				continue
			}
			f.fireTimer()
		default:
			return
		}
	}
}

// afterVerb runs the engines after a verb; in automatic delivery mode the
// fabric then runs until nothing is in flight. Payloads still borrowed by
// packets in flight are copied before the verb returns.
func (f *Fabric) afterVerb() {
	f.clock.advance(f.carrier.elapsed())
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
	f.settle()
	f.carrier.settled()
}

// Budgets for letting virtual time run in automatic mode.
const (
	idleTimerBudget = 64
	idleTimeBudget  = 2 * time.Second
)

// idlePoll is called when a program polls an empty CQ: in automatic mode
// the carrier lets the time pass that a program spinning on ibv_poll_cq
// lets pass.
func (f *Fabric) idlePoll(ready func() bool) {
	if f.mode != verbs.DeliverAuto {
		f.waitFor(idleTimeBudget, ready)
		return
	}
	f.carrier.idle(ready)
	f.settle()
}

// waitFor lets up to d pass in automatic mode, until ready reports true.
func (f *Fabric) waitFor(d time.Duration, ready func() bool) {
	defer f.settle()
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.carrier.wait(d, ready)
	}
}

// ---------------------------------------------------------------- Stepper

var _ verbs.Stepper = (*Fabric)(nil)

// setDeliveryMode does SetDeliveryMode's work.
func (f *Fabric) setDeliveryMode(m verbs.DeliveryMode) {
	if m != verbs.DeliverStep {
		m = verbs.DeliverAuto
	}
	f.mode = m
	if m == verbs.DeliverAuto {
		f.runLocked()
	}
	f.settle()
	f.carrier.settled() // the carrier's clock runs again: its timers too
}

// step does Step's work.
func (f *Fabric) step() (verbs.FabricEvent, bool) {
	var evs []verbs.FabricEvent
	f.net.record = &evs
	ev, ok := f.stepLocked()
	f.net.record = nil
	f.settle()
	return ev, ok
}

// run does Run's work.
func (f *Fabric) run() []verbs.FabricEvent {
	var evs []verbs.FabricEvent
	f.net.record = &evs
	for i := 0; i < maxSteps; i++ {
		ev, ok := f.stepLocked()
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	f.net.record = nil
	f.settle()
	return evs
}

// advance does Advance's work.
func (f *Fabric) advance(d time.Duration) []verbs.FabricEvent {
	var evs []verbs.FabricEvent
	f.net.record = &evs
	defer func() { f.net.record = nil; f.settle() }()
	f.runTasks()
	limit := f.clock.after(d)
	n := &f.net
	for i := 0; i < maxSteps; i++ {
		if n.pkts.len() == 0 && len(n.held) > 0 {
			f.releaseHeld()
		}
		t, tok := f.nextTimer()
		if p := n.pkts.peek(); p != nil && (!tok || p.at <= t.at) && p.at <= limit {
			var ev verbs.FabricEvent
			f.deliverOne(p, &ev)
			evs = append(evs, ev)
			continue
		}
		if tok && t.at <= limit {
			evs = append(evs, f.fireTimer())
			continue
		}
		break
	}
	f.clock.advance(limit)
	return evs
}

// ---------------------------------------------------------------- helpers

func itoa(i int) string { return strconv.Itoa(i) }

func hex32(v uint32) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
