package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
)

// The engines. Each QP has rxe's three tasks — requester, completer and
// responder — as plain functions over the QP's state. A verb, a packet
// arrival or a timer schedules tasks; the fabric runs them until none is
// pending. Nothing here blocks, sleeps or starts a goroutine.

const psnMask = 0xffffff

// task bits, for schedule.
const (
	taskReq  = 1 << 0
	taskComp = 1 << 1
	taskResp = 1 << 2
)

// ---------------------------------------------------------------- Stepper

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
}
