package sim

import (
	"time"

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

// wqeXfer is the requester's progress through one send WQE.
type wqeXfer struct {
	firstPSN, lastPSN uint32
	sent              uint32 // bytes handed to packets so far
	npkts             uint32
}

// transport is one QP's requester, completer and responder state (the
// req, comp and resp members of struct rxe_qp).
type transport struct {
	q       *qp
	pending int  // scheduled tasks
	queued  bool // on the fabric's run queue

	// requester
	reqPSN       uint32
	next         int // index (from the SQ head) of the next WQE to start
	rdAtomicFree int
	retryLeft    int
	rnrRetryLeft int

	// completer
	compPSN uint32

	// responder
	respPSN   uint32
	msn       uint32
	resources int

	inlineScratch []byte
}

func (t *transport) init(q *qp) { t.q = q }

// reset clears the sequence state (rxe_qp_reset).
func (t *transport) reset() {
	t.next = 0
	t.msn = 0
}

// resizeResources is alloc_rd_atomic_resources: the responder's ring of
// READ/atomic replay slots.
func (t *transport) resizeResources(n int) { t.resources = n }

// network holds what is in flight on the simulated segment.
type network struct {
	f    *Fabric
	runq []*qp
}

func (n *network) init(f *Fabric) { n.f = f }

func (n *network) reset() { n.runq = nil }

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
	for guard := 0; len(f.net.runq) > 0 && guard < 1<<24; guard++ {
		q := f.net.runq[0]
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
			q.completer()
		}
		if tasks&taskReq != 0 {
			q.requester()
		}
	}
}

// cancelQP drops a QP's queued work (on RESET and destroy).
func (f *Fabric) cancelQP(q *qp) {
	q.t.pending = 0
}

// afterVerb runs the engines after a verb; in automatic delivery mode the
// fabric then runs until nothing is in flight.
func (f *Fabric) afterVerb() {
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
}

// idlePoll is called when a program polls an empty CQ in automatic mode:
// virtual time moves on to due timers, as real time passes while a
// program spins.
func (f *Fabric) idlePoll(ready func() bool) {
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
}

// waitFor lets up to d of virtual time pass in automatic mode, stopping
// early when ready reports true.
func (f *Fabric) waitFor(d time.Duration, ready func() bool) {
	f.runTasks()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
}

// runLocked delivers packets and fires due timers until nothing is
// pending now.
func (f *Fabric) runLocked() []verbs.FabricEvent {
	f.runTasks()
	return nil
}

// ---------------------------------------------------------------- requester

// requester is rxe_requester. In the error state it hands every WQE to
// the completer to be flushed; in the drain state it reports the drained
// send queue.
func (q *qp) requester() {
	switch q.req {
	case engError:
		if q.sq.count > 0 {
			q.f().schedule(q, taskComp)
		}
	case engDrain:
		q.checkDrained()
	}
}

// checkDrained is req_next_wqe's drain check: when no WQE is being sent
// the requester becomes DRAINED and raises IBV_EVENT_SQ_DRAINED (rxe
// raises it whether or not en_sqd_async_notify was set).
func (q *qp) checkDrained() {
	if q.t.next > 0 {
		return // a started WQE is not complete yet
	}
	q.req = engDrained
	q.pd.ctx.events = append(q.pd.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventSQDrained, QP: q}})
}

// ---------------------------------------------------------------- completer

// completer is rxe_completer. In the error state every send WQE completes
// with IBV_WC_WR_FLUSH_ERR, signaled or not (rxe_drain_resp_pkts with
// notify, do_complete: an error completion is always generated).
func (q *qp) completer() {
	if q.comp == engError {
		for q.sq.count > 0 {
			w := q.sq.at(0)
			w.status = verbs.WCWRFlushErr
			q.completeSend(w)
		}
		q.t.next = 0
	}
}

// completeSend is do_complete: post the send completion if it was asked
// for or failed, and retire the WQE.
func (q *qp) completeSend(w *sendWQE) {
	post := w.signal || w.status != verbs.WCSuccess
	var wc verbs.WC
	if post {
		wc = verbs.WC{WRID: w.wr.WRID, Status: w.status, QPNum: q.qpn}
		if w.status == verbs.WCSuccess {
			wc.Opcode = wcOpcodeOf(w.wr.Opcode)
			if w.wr.Opcode == verbs.WRRDMAWriteWithImm || w.wr.Opcode == verbs.WRSendWithImm {
				wc.Flags = verbs.WCWithImm
			}
			wc.ByteLen = w.length
		}
	}
	q.sq.pop()
	if q.t.next > 0 {
		q.t.next--
	}
	if post {
		q.scq.post(wc, false)
	}
}

// wcOpcodeOf is wr_to_wc_opcode.
func wcOpcodeOf(op verbs.WROpcode) verbs.WCOpcode {
	switch op {
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		return verbs.WCOpRDMAWrite
	case verbs.WRSend, verbs.WRSendWithImm, verbs.WRSendWithInv:
		return verbs.WCOpSend
	case verbs.WRRDMARead:
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
	return 0
}

// ---------------------------------------------------------------- responder

// responder is rxe_responder. In the error state it flushes the receive
// queue with IBV_WC_WR_FLUSH_ERR (check_resource); with an SRQ there is
// nothing of its own to flush.
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
	}
}

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

// Step implements verbs.Stepper: deliver one packet or fire one due timer.
func (f *Fabric) Step() (verbs.FabricEvent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runTasks()
	return verbs.FabricEvent{}, false
}

// Run implements verbs.Stepper.
func (f *Fabric) Run() []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runLocked()
}

// Advance implements verbs.Stepper.
func (f *Fabric) Advance(d time.Duration) []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.now += d
	}
	return f.runLocked()
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
	return 0, 0
}
