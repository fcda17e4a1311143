package sim

import "github.com/vsh-rdma/vsh/verbs"

// The data path's shortcuts for the usual case. Each one does exactly what
// the general steps would do, only in fewer of them, and is taken only
// when the gate, shortcuts, allows it; the agreement tests run the same
// traffic both ways.

// shortcuts reports whether the data path may take its shortcuts for the
// usual case. It is the one gate for all of them; net.general (tests)
// closes it, so that every packet and engine run takes the general steps.
func (n *network) shortcuts() bool { return !n.general }

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
