package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"strings"

	"github.com/vsh-rdma/vsh/shell/render/picture"
	"github.com/vsh-rdma/vsh/verbs"
)

// maxQPPath is how many states a QP's recorded path keeps: the latest.
const maxQPPath = 32

// notePath records that QP o is now in state st: the path show --diagram
// draws. A state repeated is kept once; the oldest states go first.
func (o *object) notePath(st verbs.QPState) {
	if len(o.path) == 0 && st != verbs.QPSReset {
		o.path = append(o.path, verbs.QPSReset) // every QP starts in RESET
	}
	if n := len(o.path); n > 0 && o.path[n-1] == st {
		return
	}
	o.path = append(o.path, st)
	if len(o.path) > maxQPPath {
		o.path = append(o.path[:0], o.path[len(o.path)-maxQPPath:]...)
		o.pathCut = true
	}
}

// qpCell is where each state sits in the QP diagram: the way up to RTS
// on the first row with SQD beside RTS, ERR under RESET (ERR goes back to
// RESET), SQE under RTS (SQE goes back to RTS).
var qpCell = map[verbs.QPState][2]int{
	verbs.QPSReset: {0, 0}, verbs.QPSInit: {1, 0}, verbs.QPSRTR: {2, 0}, verbs.QPSRTS: {3, 0},
	verbs.QPSSQD: {4, 0}, verbs.QPSErr: {0, 1}, verbs.QPSSQE: {3, 1},
}

// qpStates are the states of the diagram, in enum ibv_qp_state order.
var qpStates = []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSSQD, verbs.QPSSQE, verbs.QPSErr}

// qpDrawn are the moves the diagram draws as arrows, when legal for the
// QP's type; the others are said in its notes.
var qpDrawn = [][2]verbs.QPState{
	{verbs.QPSReset, verbs.QPSInit}, {verbs.QPSInit, verbs.QPSRTR}, {verbs.QPSRTR, verbs.QPSRTS},
	{verbs.QPSRTS, verbs.QPSSQD}, {verbs.QPSSQD, verbs.QPSRTS}, {verbs.QPSSQE, verbs.QPSRTS},
	{verbs.QPSErr, verbs.QPSReset},
}

func stateName(st verbs.QPState) string { return strings.ToUpper(st.Short()) }

// sendErrorToSQE reports whether a send error takes a QP of type t from
// RTS to SQE (UC and UD) rather than to ERR (RC): the device's move.
func sendErrorToSQE(t verbs.QPType) bool { return t == verbs.QPTypeUC || t == verbs.QPTypeUD }

// qpStateDiagram builds ibv_modify_qp's state machine for QP o, now in cur,
// with the path o took: verbs.LookupTransition's table, the kernel's.
func (s *Shell) qpStateDiagram(o *object, cur verbs.QPState) *picture.Diagram {
	o.notePath(cur)
	taken := map[[2]verbs.QPState]bool{}
	visited := map[verbs.QPState]bool{}
	for i, st := range o.path {
		visited[st] = true
		if i > 0 {
			taken[[2]verbs.QPState{o.path[i-1], st}] = true
		}
	}
	d := &picture.Diagram{Title: fmt.Sprintf("%s %s %s, ibv_modify_qp's states; path: %s",
		o.name, strings.ToUpper(o.qpType.Short()), hex24(o.qp.Num()), o.pathString())}
	for _, st := range qpStates {
		at := qpCell[st]
		d.Nodes = append(d.Nodes, picture.Node{Name: stateName(st), Col: at[0], Row: at[1],
			Current: st == cur, Visited: visited[st]})
	}
	for _, m := range qpDrawn {
		if _, ok := verbs.LookupTransition(o.qpType, m[0], m[1]); ok {
			d.Edges = append(d.Edges, picture.Edge{From: stateName(m[0]), To: stateName(m[1]), Taken: taken[m]})
		}
	}
	if sendErrorToSQE(o.qpType) {
		m := [2]verbs.QPState{verbs.QPSRTS, verbs.QPSSQE}
		d.Edges = append(d.Edges, picture.Edge{From: "RTS", To: "SQE", Auto: true, Taken: taken[m]})
	}
	d.Notes = qpDiagramNotes(o.qpType, o.name)
	return d
}

// pathString is the states o went through: RESET → INIT → RTR → RTS.
func (o *object) pathString() string {
	var names []string
	if o.pathCut {
		names = append(names, "…")
	}
	for _, st := range o.path {
		names = append(names, stateName(st))
	}
	return strings.Join(names, " → ")
}

// qpDiagramNotes says what the arrows do not: the moves from (almost)
// every state, the states that may stay put, and where SQE comes from.
func qpDiagramNotes(t verbs.QPType, name string) []string {
	to := func(dst verbs.QPState) string {
		var not []string
		for _, st := range qpStates {
			if _, ok := verbs.LookupTransition(t, st, dst); !ok && st != dst {
				not = append(not, stateName(st))
			}
		}
		if len(not) == 0 {
			return "from any state"
		}
		return "from any state but " + strings.Join(not, ", ")
	}
	var stay []string
	for _, st := range qpStates {
		if _, ok := verbs.LookupTransition(t, st, st); ok {
			stay = append(stay, stateName(st))
		}
	}
	notes := []string{
		"→ RESET " + to(verbs.QPSReset) + " (modify_qp state=reset); → ERR " + to(verbs.QPSErr) +
			" (modify_qp state=err, or the device on an error)",
		"staying put, to change attributes only: " + strings.Join(stay, ", "),
	}
	switch {
	case sendErrorToSQE(t):
		notes = append(notes, "┄ the device's move: a send error takes a "+strings.ToUpper(t.Short())+" QP from RTS to SQE")
	case t == verbs.QPTypeXRCRecv:
		notes = append(notes, "SQE: an XRC_RECV QP never gets there: it has no send queue; an error on a message takes it to ERR")
	default:
		notes = append(notes, "SQE: an "+strings.ToUpper(t.Short())+" QP never gets there; a send error takes it to ERR")
	}
	return append(notes, "━ the path "+name+" took; ═ where it is now")
}

// showDiagram is show QP --diagram [width=W] [svg=FILE].
func showDiagram(c *call, objs []*object) error {
	if c.has("svg") && len(objs) > 1 {
		return usagef("show "+objs[0].name+" --diagram svg=FILE: one QP at a time", "svg= writes one picture; %d QPs given", len(objs))
	}
	w, err := c.pictureWidth()
	if err != nil {
		return err
	}
	for _, o := range objs {
		if o.kind != kQP {
			return usagef("show "+o.name+" draws it; --diagram is for QPs: show qp0 --diagram",
				"--diagram draws a QP's state diagram; %s is a %s", o.name, o.kind)
		}
		attr, _, err := o.qp.Query(verbs.AttrState)
		if err != nil {
			return err
		}
		d := c.s.qpStateDiagram(o, attr.State)
		if need := d.MinWidth() + c.indent(); w < need {
			return tooNarrow(w, need, "show "+o.name+" --diagram")
		}
		text, err := d.Text(w-c.indent(), c.s.st)
		if err != nil {
			return err
		}
		c.out.addKind(render.Figure, text) // drawn to fit: never wrapped
		if err := c.picture(d.SVG); err != nil {
			return err
		}
	}
	return nil
}
