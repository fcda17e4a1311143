package lessons

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// DiffKind names a kind of difference between the learner's session and
// the lesson's reference; a lesson's hint(KIND): line is shown for it.
type DiffKind string

// The kinds of difference.
const (
	DiffMissing  DiffKind = "missing"  // an object of the lesson is not there
	DiffType     DiffKind = "type"     // a QP of another transport
	DiffLink     DiffKind = "link"     // made from or connected to another object (a QP's CQs, its peer)
	DiffState    DiffKind = "state"    // a QP in another state
	DiffAttr     DiffKind = "attr"     // an attribute: an MR's length, a QP's path MTU
	DiffAccess   DiffKind = "access"   // access flags, of an MR or a QP
	DiffCap      DiffKind = "cap"      // a capacity below what the lesson asks for
	DiffPosted   DiffKind = "posted"   // how many work requests were posted
	DiffWR       DiffKind = "wr"       // what a work request asks for
	DiffPolled   DiffKind = "polled"   // the completions polled
	DiffUnpolled DiffKind = "unpolled" // the completions left in a CQ
	DiffMemory   DiffKind = "memory"   // the bytes of an MR
	DiffError    DiffKind = "error"    // a command the step makes fail
	DiffLook     DiffKind = "look"     // a command that shows something
	DiffDestroy  DiffKind = "destroy"  // an object the step destroys
	DiffEvent    DiffKind = "event"    // a CQ's arming and events
	DiffSetting  DiffKind = "setting"  // the fabric, tracing, faults
	DiffExpect   DiffKind = "expect"   // one of the lesson's expect: lines
)

// DiffKinds lists the kinds, for docs and for checking hint(KIND) lines.
var DiffKinds = []DiffKind{DiffMissing, DiffType, DiffLink, DiffState, DiffAttr, DiffAccess, DiffCap,
	DiffPosted, DiffWR, DiffPolled, DiffUnpolled, DiffMemory, DiffError, DiffLook, DiffDestroy, DiffEvent, DiffSetting, DiffExpect}

// A Diff is one way the learner's session differs from what the step's
// reference cell produced, said in the learner's words and handles.
type Diff struct {
	Kind DiffKind
	// Pending is set for work not done yet: more commands close it
	// (the second QP is not created yet, one receive of four is posted).
	// Otherwise a command led away from the goal.
	Pending bool
	// Lost is set when the goal can no longer be reached from here (a QP
	// in ERR the step does not expect, work posted twice): lesson reset.
	Lost bool
	// Handle is the learner's object it is about, Ref the lesson's name
	// for it; either may be "".
	Handle, Ref string
	Text        string
	// Detail, where set, is Text with what the reference has, which Text
	// leaves out so as not to give away a step's outcome (the status a
	// completion should have, the bytes a READ should bring).
	Detail string
	// acks is set for a count of events not acknowledged: bookkeeping
	// only a destroy looks at.
	acks bool
	// near is the cell of the learner's command that is the step's
	// experiment run with other settings (bench max=4k where the step
	// sweeps to 1M), which the tutor points out at once.
	near int
}

func (d Diff) String() string { return d.Text }

// spoiler makes d's text one that does not tell the step's outcome: text;
// what the reference has stays in the detail.
func spoiler(d Diff, text string) Diff {
	d.Detail, d.Text = d.Text, text
	return d
}

// idle reports whether a session's fabric holds no packet in flight, as
// far as its settings show (step mode): PSNs compared while a packet is on
// its way say nothing.
func idle(sn *snapshot) bool {
	for _, s := range sn.settings {
		if strings.HasPrefix(s, "pending=") && !strings.HasPrefix(s, "pending=0 packets") {
			return false
		}
		if s == "fabric=step" {
			return false
		}
	}
	return true
}

// reachable reports whether a QP in state from can get to state to by
// modify_qp, going forward: along RESET → INIT → RTR → RTS, between RTS
// and SQD, from SQE back to RTS, and to ERR from anywhere.
func reachable(from, to verbs.QPState) bool {
	f, t := qpStep(from), qpStep(to)
	switch {
	case f >= 0 && t >= 0:
		return f < t
	case to == verbs.QPSErr:
		return true
	case to == verbs.QPSSQD:
		return from == verbs.QPSRTS || f >= 0
	case from == verbs.QPSSQD, from == verbs.QPSSQE:
		return to == verbs.QPSRTS
	}
	return false
}

// qpStep orders the states on the way to RTS; -1 for the others.
func qpStep(s verbs.QPState) int {
	switch s {
	case verbs.QPSReset:
		return 0
	case verbs.QPSInit:
		return 1
	case verbs.QPSRTR:
		return 2
	case verbs.QPSRTS:
		return 3
	}
	return -1
}

func transport(t verbs.QPType) string { return strings.TrimPrefix(t.String(), "IBV_QPT_") }

// article is "a" or "an" before an acronym: an RC, a UC, a UD.
func article(word string) string {
	if word != "" && strings.ContainsAny(word[:1], "AEFHILMNORSX") {
		return "an"
	}
	return "a"
}

// describe says what a reference object is, in the learner's handles: "an
// RC QP on pd1 (send_cq cq1, recv_cq cq1)".
func describe(s *objSnap, m mapping) string {
	on := ""
	if s.parent != "" {
		on = " on " + m.learner(s.parent)
	}
	switch s.kind {
	case "ctx":
		return fmt.Sprintf("a context of device %s", devRole(s.dev))
	case "pd":
		return "a protection domain" + on
	case "ch":
		return "a completion channel" + on
	case "cq":
		d := "a CQ" + on
		if s.channel != "" {
			d += " with channel " + m.learner(s.channel)
		}
		return d
	case "mr":
		return fmt.Sprintf("a %d-byte MR%s with access %s", s.length, on, s.access.Short())
	case "srq":
		if s.srqType == verbs.SRQTypeXRC {
			return fmt.Sprintf("an XRC SRQ%s in %s, completing on %s", on, m.learner(s.srqXRCD), m.learner(s.srqCQ))
		}
		return "an SRQ" + on
	case "xrcd":
		return "an XRC domain" + on
	case "ah":
		return "an address handle" + on
	case "qp":
		t := transport(s.qpType)
		if s.qpType == verbs.QPTypeXRCRecv {
			return fmt.Sprintf("an %s QP in %s", t, m.learner(s.parent)) // no PD, CQs or queues
		}
		d := fmt.Sprintf("%s %s QP%s (send_cq %s", article(t), t, on, m.learner(s.sendCQ))
		if s.recvCQ != "" {
			d += ", recv_cq " + m.learner(s.recvCQ)
		}
		if s.srq != "" {
			d += ", srq " + m.learner(s.srq)
		}
		return d + ")"
	}
	return s.h
}

// devRole names a device by its place: A for the first, B for the second.
func devRole(dev int) string {
	switch dev {
	case 0:
		return "A"
	case 1:
		return "B"
	}
	return fmt.Sprintf("#%d", dev)
}

// objDiffs compares the learner's object l with the reference's s, which
// it stands for in m. With full, it also compares what needs every object
// matched first (a QP's peer and PSNs); created says the step's cell
// made s. Queue counts, memory and completions are compared elsewhere.
func objDiffs(ref, le *snapshot, s, l *objSnap, m mapping, full, created bool) []Diff {
	d := &objDiff{s: s, l: l, m: m, created: created}
	switch s.kind {
	case "mr":
		if l.length != s.length {
			d.add(DiffAttr, false, "%s is %d bytes long; %s is %d bytes long", l.h, l.length, d.the("MR"), s.length)
		}
		if l.access != s.access {
			d.add(DiffAccess, false, "%s has access %s; %s has %s", l.h, l.access.Short(), d.the("MR"), s.access.Short())
		}
	case "cq":
		d.cq(ref, le)
	case "srq":
		if v, ok := s.asked["max_wr"]; ok && l.srqAttr.MaxWR < s.srqAttr.MaxWR {
			d.add(DiffCap, false, "%s holds %d receives (max_wr %d); %s asks for max_wr=%s", l.h, l.srqAttr.MaxWR, l.srqAttr.MaxWR, d.the("SRQ"), v)
		}
		if v, ok := s.asked["max_sge"]; ok && l.srqAttr.MaxSGE < s.srqAttr.MaxSGE {
			d.add(DiffCap, false, "%s takes %d SGEs a receive; %s asks for max_sge=%s", l.h, l.srqAttr.MaxSGE, d.the("SRQ"), v)
		}
		if l.srqAttr.SRQLimit != s.srqAttr.SRQLimit {
			d.add(DiffAttr, false, "%s's srq_limit is %d; %s is %d", l.h, l.srqAttr.SRQLimit, d.the("srq_limit"), s.srqAttr.SRQLimit)
		}
		if l.srqType != s.srqType {
			d.add(DiffAttr, false, "%s is %s SRQ; %s is %s one", l.h, srqKind(l.srqType), d.the("SRQ"), srqKind(s.srqType))
		} else if s.srqType == verbs.SRQTypeXRC {
			if w := m.learner(s.srqXRCD); l.srqXRCD != w {
				d.add(DiffAttr, false, "%s is in XRC domain %s; %s is in %s", l.h, orNone(l.srqXRCD), d.the("SRQ"), w)
			}
			if w := m.learner(s.srqCQ); l.srqCQ != w {
				d.add(DiffAttr, false, "%s's receives complete on %s; %s's on %s", l.h, orNone(l.srqCQ), d.the("SRQ"), w)
			}
		}
	case "ah":
		d.ah()
	case "qp":
		d.qp(ref, le, full)
	case "xrcd":
		if l.file != s.file {
			d.add(DiffAttr, false, "%s is the domain of %s; %s is that of %s", l.h, fileName(l.file), d.the("XRC domain"), fileName(s.file))
		}
	}
	return d.out
}

// objDiff collects the differences of the learner's object l from the
// reference's s, for objDiffs.
type objDiff struct {
	s, l    *objSnap
	m       mapping
	created bool // the step's cell made s
	out     []Diff
}

// add appends a difference of kind k.
func (d *objDiff) add(k DiffKind, pending bool, format string, a ...any) {
	d.out = append(d.out, Diff{Kind: k, Pending: pending, Handle: d.l.h, Ref: d.s.h, Text: fmt.Sprintf(format, a...)})
}

// the names what of the reference: this step's if the step made s, else
// the lesson's.
func (d *objDiff) the(what string) string {
	if d.created {
		return "this step's " + what
	}
	return "the lesson's " + what
}

// link compares a link to another object: sv the reference's handle, lv
// the learner's ("" for none).
func (d *objDiff) link(what, sv, lv string) {
	if d.m.s2l[sv] != lv || (sv == "") != (lv == "") {
		want := "none"
		if sv != "" {
			want = d.m.learner(sv)
		}
		got := lv
		if got == "" {
			got = "none"
		}
		d.add(DiffLink, false, "%s's %s is %s; %s is %s", d.l.h, what, got, d.the(what), want)
	}
}

// cq compares a CQ: its size, channel and, where both sides inspect, its
// arming, events and overflow.
func (d *objDiff) cq(ref, le *snapshot) {
	s, l := d.s, d.l
	if v, ok := s.asked["cqe"]; ok && l.cqe < s.cqe {
		d.add(DiffCap, false, "%s has room for %d completions (cqe %d); %s asks for cqe=%s (the device gives %d)", l.h, l.cqe, l.cqe, d.the("CQ"), v, s.cqe)
	}
	d.link("completion channel", s.channel, l.channel)
	if ref.insp && le.insp {
		switch {
		case s.armed && !l.armed:
			d.add(DiffEvent, true, "%s is not armed; after this step it is (req_notify_cq)", l.h)
		case !s.armed && l.armed && ref.still && !sendsUnfinished(le):
			// Only a completion takes an arm back, and none can come
			// where the step completes nothing (no post, no flush).
			d.add(DiffEvent, false, "%s is armed; after this step it is not, and only a completion on it would take the arm back: nothing in this step completes", l.h)
			d.out[len(d.out)-1].Lost = true
		case !s.armed && l.armed:
			d.add(DiffEvent, false, "%s is armed; after this step it is not", l.h)
		case s.armed && s.solicited != l.solicited:
			d.add(DiffEvent, false, "%s is armed for %s; after this step it is armed for %s", l.h, notifyWhat(l.solicited), notifyWhat(s.solicited))
		}
		if l.events != s.events {
			d.add(DiffEvent, true, "%s has %d completion event%s waiting in its channel; after this step it has %d", l.h, l.events, plural(l.events), s.events)
		}
		if l.unacked != s.unacked {
			d.add(DiffEvent, true, "%s has %d completion event%s not acknowledged; after this step it has %d", l.h, l.unacked, plural(l.unacked), s.unacked)
			d.out[len(d.out)-1].acks = true
		}
		if l.overflowed != s.overflowed {
			d.add(DiffState, false, "%s %s; after this step it %s", l.h, overflowText(l.overflowed), overflowText(s.overflowed))
			d.out[len(d.out)-1] = spoiler(d.out[len(d.out)-1], fmt.Sprintf("%s %s, not as this step leaves it", l.h, overflowText(l.overflowed)))
		}
	}
}

// ah compares an address handle's destination and attributes.
func (d *objDiff) ah() {
	s, l := d.s, d.l
	if !l.dgid.equal(s.dgid) {
		d.add(DiffAttr, false, "%s sends to %s; %s sends to %s", l.h, gidText(l.dgid), d.the("address handle"), gidText(s.dgid))
	}
	la, sa := l.ahAttr, s.ahAttr
	hop := func(a verbs.AHAttr) uint64 {
		if a.RoutedHopLimit() {
			return 0 // the kernel puts the route's in its place
		}
		return uint64(a.GRH.HopLimit)
	}
	for _, f := range []struct {
		name string
		l, s uint64
	}{
		{"sgid_index", uint64(la.GRH.SGIDIndex), uint64(sa.GRH.SGIDIndex)},
		{"hop_limit", hop(la), hop(sa)},
		{"port", uint64(la.PortNum), uint64(sa.PortNum)},
		{"sl", uint64(la.SL), uint64(sa.SL)},
		{"traffic_class", uint64(la.GRH.TrafficClass), uint64(sa.GRH.TrafficClass)},
		{"flow_label", uint64(la.GRH.FlowLabel), uint64(sa.GRH.FlowLabel)},
	} {
		if f.l != f.s {
			d.add(DiffAttr, false, "%s's %s is %d; %s is %d", l.h, f.name, f.l, d.the(f.name), f.s)
		}
	}
}

// qp compares a QP: its type (nothing else if it differs), links, caps,
// state and attributes (with full, those that need every object matched),
// and multicast groups.
func (d *objDiff) qp(ref, le *snapshot, full bool) {
	s, l, m := d.s, d.l, d.m
	if l.queryErr != nil || s.queryErr != nil {
		if (l.queryErr == nil) != (s.queryErr == nil) {
			d.add(DiffState, false, "ibv_query_qp(%s): %v", l.h, firstErr(l.queryErr, s.queryErr))
		}
		return
	}
	if l.qpType != s.qpType {
		// Not the lesson's QP at all: the rest of it does not matter.
		what := fmt.Sprintf("this step creates %s %s QP", article(transport(s.qpType)), transport(s.qpType))
		if !d.created {
			what = fmt.Sprintf("the lesson's %s is %s", s.h, transport(s.qpType))
		}
		d.add(DiffType, false, "%s is %s; %s", l.h, l.qpType, what)
		return
	}
	d.link("send CQ", s.sendCQ, l.sendCQ)
	d.link("receive CQ", s.recvCQ, l.recvCQ)
	d.link("SRQ", s.srq, l.srq)
	for _, f := range []struct {
		name, key, noun string
		l, s            int
	}{
		{"max_send_wr", "max_send_wr", "sends", l.cap.MaxSendWR, s.cap.MaxSendWR},
		{"max_recv_wr", "max_recv_wr", "receives", l.cap.MaxRecvWR, s.cap.MaxRecvWR},
		{"max_send_sge", "max_send_sge", "SGEs a send", l.cap.MaxSendSGE, s.cap.MaxSendSGE},
		{"max_recv_sge", "max_recv_sge", "SGEs a receive", l.cap.MaxRecvSGE, s.cap.MaxRecvSGE},
		{"max_inline_data", "max_inline", "inline bytes", l.cap.MaxInlineData, s.cap.MaxInlineData},
	} {
		if v, ok := s.asked[f.key]; ok && f.l < f.s && !(f.name == "max_recv_wr" && s.srq != "") {
			d.add(DiffCap, false, "%s takes %d %s at most (%s %d); %s asks for %s=%s", l.h, f.l, f.noun, f.name, f.l, d.the("QP"), f.key, v)
		}
	}
	if l.sigAll != s.sigAll {
		d.add(DiffAttr, false, "%s's sq_sig_all is %v; %s is %v", l.h, l.sigAll, d.the("sq_sig_all"), s.sigAll)
	}
	ls, ss := l.attr.State, s.attr.State
	if ls != ss {
		switch {
		case reachable(ls, ss):
			d.add(DiffState, true, "%s is in %s; this step takes it to %s", l.h, ls, ss)
			if ss == verbs.QPSErr || ss == verbs.QPSSQE {
				// Where the step ends in an error state is what it
				// asks the learner to find out.
				d.out[len(d.out)-1] = spoiler(d.out[len(d.out)-1], fmt.Sprintf("%s is in %s, not where this step leaves it", l.h, ls))
			}
		default:
			// A QP the step makes can be made again; one made before
			// it cannot go back without the steps since.
			d.out = append(d.out, Diff{Kind: DiffState, Lost: !d.created, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s is in %s; after this step the lesson's is in %s", l.h, ls, ss)})
		}
	}
	d.out = append(d.out, qpAttrDiffs(ref, le, s, l, m, full, d.the)...)
	if !sameGroups(l.groups, s.groups) {
		d.add(DiffAttr, len(l.groups) < len(s.groups), "%s is attached to %s; %s is attached to %s", l.h, groupsText(l.groups), d.the("QP"), groupsText(s.groups))
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func notifyWhat(solicited bool) string {
	if solicited {
		return "solicited completions only"
	}
	return "the next completion"
}

func overflowText(o bool) string {
	if o {
		return "has overflowed"
	}
	return "has not overflowed"
}

func gidText(g gidRef) string {
	if g.dev >= 0 {
		return fmt.Sprintf("device %s's GID %d", devRole(g.dev), g.idx)
	}
	return g.raw.String()
}

func groupsText(gs []verbs.GID) string {
	if len(gs) == 0 {
		return "no multicast group"
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, g.String())
	}
	return strings.Join(parts, ", ")
}

func sameGroups(a, b []verbs.GID) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[verbs.GID]int{}
	for _, g := range a {
		seen[g]++
	}
	for _, g := range b {
		if seen[g] == 0 {
			return false
		}
		seen[g]--
	}
	return true
}

// qpAttrDiffs compares the attributes of the transitions both QPs have
// made: INIT's (port, P_Key index, access or Q_Key), RTR's (the path and
// the peer) and RTS's (timeouts and retries). PSNs, random by nature, are
// compared as a relation: whether each side's rq_psn is its peer's sq_psn.
func qpAttrDiffs(ref, le *snapshot, s, l *objSnap, m mapping, full bool, the func(string) string) []Diff {
	var out []Diff
	upto := min(attrStep(l.attr.State), attrStep(s.attr.State))
	inError := func(st verbs.QPState) bool { return st == verbs.QPSErr || st == verbs.QPSSQE }
	switch {
	case inError(s.attr.State) && inError(l.attr.State):
		// A QP in error keeps the attributes it was given: a step that
		// ends in ERR (rnr_retry 0, retries exceeded) is about them.
		upto = 3
	case inError(s.attr.State):
		// On its way to the lesson's error: the attributes it has so far.
		upto = attrStep(l.attr.State)
	}
	defer func() {
		// RTS → RTS changes access flags and min_rnr_timer alone; there is
		// no RTR → RTR at all.
		st := map[verbs.QPState]string{verbs.QPSRTS: "RTS", verbs.QPSRTR: "RTR"}[l.attr.State]
		if st == "" {
			return
		}
		for i := range out {
			if !strings.Contains(out[i].Text, "access flags") && !strings.Contains(out[i].Text, "min_rnr_timer") &&
				(out[i].Kind == DiffAttr || out[i].Kind == DiffLink && st == "RTR") && !strings.Contains(out[i].Text, "modify_qp cannot") {
				out[i].Text += " (modify_qp cannot change it in " + st + ": take the QP through RESET and up again, or lesson reset)"
			}
		}
	}()
	la, sa := l.attr, s.attr
	num := func(name string, lv, sv uint64) {
		if lv != sv {
			out = append(out, Diff{Kind: DiffAttr, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s's %s is %d; %s is %d", l.h, name, lv, the(name), sv)})
		}
	}
	ud := s.qpType == verbs.QPTypeUD
	if upto >= 1 {
		num("pkey_index", uint64(la.PKeyIndex), uint64(sa.PKeyIndex))
		num("port", uint64(la.PortNum), uint64(sa.PortNum))
		if ud {
			if la.QKey != sa.QKey {
				out = append(out, Diff{Kind: DiffAttr, Handle: l.h, Ref: s.h,
					Text: fmt.Sprintf("%s's qkey is 0x%x; %s is 0x%x", l.h, la.QKey, the("qkey"), sa.QKey)})
			}
		} else if la.AccessFlags != sa.AccessFlags {
			out = append(out, Diff{Kind: DiffAccess, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s's access flags are %s; %s are %s", l.h, la.AccessFlags.Short(), the("QP's access flags"), sa.AccessFlags.Short())})
		}
	}
	if upto >= 2 && !ud {
		if la.PathMTU != sa.PathMTU {
			out = append(out, Diff{Kind: DiffAttr, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s's path_mtu is %s; %s is %s", l.h, la.PathMTU, the("path_mtu"), sa.PathMTU)})
		}
		if full && m.learner(s.peer) != l.peer && !(s.peer == "" && m.l2s[l.peer] == "") {
			want, got := "no QP of this session", "no QP of this session"
			if s.peer != "" {
				want = m.learner(s.peer)
			}
			if l.peer != "" {
				got = l.peer
			}
			out = append(out, Diff{Kind: DiffLink, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s sends to %s (dest_qpn 0x%06x); %s sends to %s", l.h, got, la.DestQPN, the("QP"), want)})
		}
		if !l.dgid.equal(s.dgid) {
			out = append(out, Diff{Kind: DiffAttr, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s's dgid is %s; %s is %s", l.h, gidText(l.dgid), the("dgid"), gidText(s.dgid))})
		}
		num("sgid_index", uint64(la.AH.GRH.SGIDIndex), uint64(sa.AH.GRH.SGIDIndex))
		num("hop_limit", uint64(la.AH.GRH.HopLimit), uint64(sa.AH.GRH.HopLimit))
		num("traffic_class", uint64(la.AH.GRH.TrafficClass), uint64(sa.AH.GRH.TrafficClass))
		num("flow_label", uint64(la.AH.GRH.FlowLabel), uint64(sa.AH.GRH.FlowLabel))
		num("sl", uint64(la.AH.SL), uint64(sa.AH.SL))
		// RC keeps both halves' attributes; an XRC QP only its own
		// half's (the kernel drops the rest: modify_qp_mask).
		if s.qpType == verbs.QPTypeRC || s.qpType == verbs.QPTypeXRCRecv {
			num("max_dest_rd_atomic", uint64(la.MaxDestRdAtomic), uint64(sa.MaxDestRdAtomic))
			num("min_rnr_timer", uint64(la.MinRNRTimer), uint64(sa.MinRNRTimer))
		}
	}
	if upto >= 3 && !ud {
		if s.qpType == verbs.QPTypeRC || s.qpType == verbs.QPTypeXRCSend {
			num("timeout", uint64(la.Timeout), uint64(sa.Timeout))
			num("retry_cnt", uint64(la.RetryCnt), uint64(sa.RetryCnt))
			num("rnr_retry", uint64(la.RNRRetry), uint64(sa.RNRRetry))
			num("max_rd_atomic", uint64(la.MaxRdAtomic), uint64(sa.MaxRdAtomic))
		} else if s.qpType == verbs.QPTypeXRCRecv {
			num("timeout", uint64(la.Timeout), uint64(sa.Timeout))
		}
		if full && s.peer != "" && l.peer == m.learner(s.peer) && idle(ref) && idle(le) {
			sp, lp := ref.by[s.peer], le.by[l.peer]
			rts := func(o *objSnap) bool { return o.attr.State == verbs.QPSRTS }
			// A sender with requests outstanding has PSNs in motion: rxe's
			// sq_psn goes back to the first unacknowledged PSN each time
			// it resends (req_retry), e.g. after an RNR NAK.
			settled := func(o *objSnap) bool { return o.sends == 0 }
			if sp != nil && lp != nil && rts(s) && rts(l) && rts(sp) && rts(lp) && settled(sp) && settled(lp) {
				sr, lr := sa.RQPSN == sp.attr.SQPSN, la.RQPSN == lp.attr.SQPSN
				if sr != lr {
					d := Diff{Kind: DiffAttr, Pending: ref.sends, Handle: l.h, Ref: s.h,
						Text: fmt.Sprintf("%s expects PSN 0x%06x next but %s sends 0x%06x; in the lesson they agree: each side's rq_psn is the other's sq_psn",
							l.h, la.RQPSN, lp.h, lp.attr.SQPSN)}
					if !sr {
						// A step after which they disagree is about why.
						d = spoiler(Diff{Kind: DiffAttr, Pending: ref.sends, Handle: l.h, Ref: s.h,
							Text: fmt.Sprintf("%s expects PSN 0x%06x next and %s sends it; in the lesson, after this step, they do not agree", l.h, la.RQPSN, lp.h)},
							fmt.Sprintf("%s's and %s's PSNs are not as this step leaves them", l.h, lp.h))
					}
					if !ref.sends {
						// RTS cannot change a PSN: only a QP taken back
						// through RESET and up again could.
						d.Text += " (modify_qp cannot change a PSN in RTS: take the QP through RESET and up again, or lesson reset)"
					}
					// Packets in flight move PSNs: where the step sends,
					// they may yet agree.
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// attrStep is how far a QP in state st has come: 1 for INIT, 2 for RTR, 3
// for RTS and SQD; 0 for RESET and the error states, whose attributes are
// not compared.
func attrStep(st verbs.QPState) int {
	if st == verbs.QPSSQD {
		return 3
	}
	return max(0, qpStep(st))
}

// srqKind names an SRQ's type with its article: "a basic", "an XRC".
func srqKind(t verbs.SRQType) string {
	if t == verbs.SRQTypeXRC {
		return "an XRC"
	}
	return "a basic"
}

// fileName names the file an XRC domain was opened on.
func fileName(f string) string {
	if f == "" {
		return "no file (a private domain)"
	}
	return f
}
