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
		if t, ok := f.nextTimer(); !ok || t.at > f.now {
			f.releaseHeld()
		}
	}
	t, tok := f.nextTimer()
	if p := n.pkts.peek(); p != nil && (!tok || p.at <= t.at) {
		return stepPacket, p
	}
	if tok && t.at <= f.now {
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
	if f.link != nil {
		f.link.syncLocked() // real time (udplink.go)
	}
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
	f.settle()
	if f.link != nil {
		f.link.notifyLocked()
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
	if f.link != nil && f.mode == verbs.DeliverAuto {
		// Real time passes by itself (udplink.go).
		f.link.idleLocked(ready)
		f.settle()
		return
	}
	f.waitFor(idleTimeBudget, ready)
}

// waitFor lets up to d of virtual time pass in automatic mode, firing
// timers, until ready reports true.
func (f *Fabric) waitFor(d time.Duration, ready func() bool) {
	defer f.settle()
	f.runTasks()
	if f.mode != verbs.DeliverAuto {
		return
	}
	if f.link != nil {
		f.link.waitLocked(d, ready) // real time (udplink.go)
		return
	}
	f.runLocked()
	limit := f.now + d
	for i := 0; i < idleTimerBudget && !ready(); i++ {
		t, ok := f.nextTimer()
		if !ok || t.at > limit {
			break
		}
		f.fireTimer()
		f.runLocked()
	}
}

// ---------------------------------------------------------------- Stepper

var _ verbs.Stepper = (*Fabric)(nil)

// DeliveryMode implements verbs.Stepper.
func (f *Fabric) DeliveryMode() verbs.DeliveryMode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mode
}

// SetDeliveryMode implements verbs.Stepper. Switching to automatic mode
// runs the fabric until idle.
func (f *Fabric) SetDeliveryMode(m verbs.DeliveryMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m != verbs.DeliverStep {
		m = verbs.DeliverAuto
	}
	f.mode = m
	if m == verbs.DeliverAuto {
		f.runLocked()
	}
	f.settle()
}

// Step implements verbs.Stepper: deliver one packet or fire one due timer.
func (f *Fabric) Step() (verbs.FabricEvent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var evs []verbs.FabricEvent
	f.net.record = &evs
	ev, ok := f.stepLocked()
	f.net.record = nil
	f.settle()
	return ev, ok
}

// Run implements verbs.Stepper.
func (f *Fabric) Run() []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
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

// Advance implements verbs.Stepper: virtual time moves forward by d; the
// packets and timers that fall due are delivered and fired in order, with
// what they cause.
func (f *Fabric) Advance(d time.Duration) []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var evs []verbs.FabricEvent
	f.net.record = &evs
	defer func() { f.net.record = nil; f.settle() }()
	f.runTasks()
	if d < 0 {
		d = 0
	}
	limit := f.now + d
	if limit < f.now { // overflow
		limit = time.Duration(1<<63 - 1)
	}
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

// Pending implements verbs.Stepper: packets in flight (held ones
// included) and timers armed.
func (f *Fabric) Pending() (packets, timers int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.net.pkts.len() + len(f.net.held), len(f.net.timers)
}

// ---------------------------------------------------------------- helpers

func itoa(i int) string { return strconv.Itoa(i) }

func hex32(v uint32) string { return "0x" + strconv.FormatUint(uint64(v), 16) }
