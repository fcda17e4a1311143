package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// snapshot is what the live view last showed, so that the next one shows
// only what changed.
type snapshot struct {
	qp  map[*object]qpSnap
	cq  map[*object]cqSnap
	srq map[*object]int
}

type qpSnap struct {
	state  verbs.QPState
	sq, rq int
	insp   bool
}

type cqSnap struct {
	used       int
	overflowed bool
}

func newSnapshot() *snapshot {
	return &snapshot{qp: map[*object]qpSnap{}, cq: map[*object]cqSnap{}, srq: map[*object]int{}}
}

func (sn *snapshot) forget(o *object) {
	delete(sn.qp, o)
	delete(sn.cq, o)
	delete(sn.srq, o)
}

// liveView adds to a cell's output what changed: packets on the wire when
// tracing, QP states (as a diagram with the current state lit), queue and
// CQ occupancy, then the watched objects.
func (s *Shell) liveView(c *call) {
	s.flushWire(c, nil)
	if s.wire != nil && c.cell != nil {
		s.wire.endCell(c.cell.N)
	}
	watched := map[string]bool{}
	for _, w := range s.watched {
		watched[w] = true
	}
	insp, _ := s.prov.(verbs.Inspector)
	for _, o := range s.h.all() {
		switch o.kind {
		case kQP:
			attr, _, err := o.qp.Query(verbs.AttrState)
			if err != nil {
				continue
			}
			cur := qpSnap{state: attr.State}
			var queues string
			if insp != nil {
				if in, err := insp.InspectQP(o.qp); err == nil {
					cur.sq, cur.rq, cur.insp = len(in.SQ), len(in.RQ), true
					queues = qpQueues(o, in)
				}
			} else {
				cur.sq, cur.rq, cur.insp = len(o.sent), o.recvs, true
				queues = countedQueues(o)
			}
			prev, seen := s.snap.qp[o]
			s.snap.qp[o] = cur
			o.notePath(cur.state) // the device's moves too (to ERR, to SQE)
			if watched[o.name] {
				continue
			}
			if !seen || prev.state != cur.state {
				c.out.add(s.qpDiagram(o, cur.state))
				if cur.state == verbs.QPSErr && seen {
					c.line("%s", errStateNote(o))
				}
			}
			if cur.insp && (!seen || prev.sq != cur.sq || prev.rq != cur.rq) {
				c.out.add(queues)
			}
		case kCQ:
			if insp == nil {
				continue
			}
			in, err := insp.InspectCQ(o.cq)
			if err != nil {
				continue
			}
			cur := cqSnap{used: in.Used, overflowed: in.Overflowed}
			prev, seen := s.snap.cq[o]
			s.snap.cq[o] = cur
			if watched[o.name] || (seen && prev == cur) {
				continue
			}
			c.out.add(cqLine(o, in, prev.used, seen))
		case kSRQ:
			in := verbs.SRQInternals{Depth: o.rqDepth, Used: o.recvs}
			if insp != nil {
				var err error
				if in, err = insp.InspectSRQ(o.srq); err != nil {
					continue
				}
			}
			prev, seen := s.snap.srq[o]
			s.snap.srq[o] = in.Used
			if watched[o.name] || (seen && prev == in.Used) {
				continue
			}
			c.out.add(srqLine(o, in))
		}
	}
	for _, name := range s.watched {
		if o, ok := s.h.byName[name]; ok {
			c.out.add(s.draw(o, false))
		}
	}
}

func errStateNote(o *object) string {
	if o.qpType == verbs.QPTypeXRCRecv {
		return o.name + " is in ERR: it takes no more messages, and its senders' requests fail; the receives posted to the XRC " +
			"SRQs stay, since the SRQs are not the QP's. modify_qp " + o.name + " state=reset starts it over"
	}
	return o.name + " is in ERR: its outstanding WRs complete with IBV_WC_WR_FLUSH_ERR and new posts are flushed; " +
		"the first error completion says why. modify_qp " + o.name + " state=reset starts it over"
}

var mainStates = []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS}
var sideStates = []verbs.QPState{verbs.QPSSQD, verbs.QPSSQE, verbs.QPSErr}

// qpDiagram draws the QP state machine with the current state lit:
// "qp0 RC 0x000011  RESET → INIT → [RTR] → RTS | SQD SQE ERR".
func (s *Shell) qpDiagram(o *object, cur verbs.QPState) string {
	names := func(states []verbs.QPState) []string {
		var out []string
		for _, st := range states {
			out = append(out, strings.ToUpper(st.Short()))
		}
		return out
	}
	line := fmt.Sprintf("%s %s %s  %s", s.hn(o), strings.ToUpper(o.qpType.Short()), hex24(o.qp.Num()),
		s.st.StateLadder(names(mainStates), names(sideStates), strings.ToUpper(cur.Short())))
	if cur > verbs.QPSErr {
		line += "  (state " + cur.String() + ")"
	}
	return line
}

func qpQueues(o *object, in verbs.QPInternals) string {
	return queuesLine(o, len(in.SQ), in.SQDepth, len(in.RQ), in.RQDepth)
}

// countedQueues is qpQueues where the backend cannot be inspected: the
// occupancy as the application counts it, from what it posted and the
// completions it polled.
func countedQueues(o *object) string {
	return queuesLine(o, len(o.sent), o.sqDepth, o.recvs, o.rqDepth)
}

// queuesLine is a QP's queue occupancy: "qp0 SQ 1/31 RQ 0/31". An XRC QP
// has half the queues: XRC_SEND no receive queue, XRC_RECV none at all.
func queuesLine(o *object, sq, sqDepth, rq, rqDepth int) string {
	switch o.qpType {
	case verbs.QPTypeXRCRecv:
		return o.name + " no queues: its messages go to the XRC SRQs its senders name"
	case verbs.QPTypeXRCSend:
		return fmt.Sprintf("%s SQ %d/%d, no RQ (XRC_SEND)", o.name, sq, sqDepth)
	}
	r := fmt.Sprintf("RQ %d/%d", rq, rqDepth)
	if o.srqObj != nil {
		r = "RQ from " + o.srqObj.name
	}
	return fmt.Sprintf("%s SQ %d/%d %s", o.name, sq, sqDepth, r)
}

// srqTypeLine says what kind of SRQ o is: its type, its number when it
// has one, and an XRC SRQ's domain and CQ.
func (s *Shell) srqTypeLine(o *object) string {
	l := fmt.Sprintf("%s: srq_type %s", o.name, o.srqType)
	if n, err := o.srq.Num(); err == nil {
		l += fmt.Sprintf(", srq_num %s (%d)", hex24(n), n)
	}
	if o.srqType == verbs.SRQTypeXRC {
		l += fmt.Sprintf(", in %s, its receives complete on %s", nameOr(o.xrcdObj), nameOr(o.recvCQ))
	}
	return l
}

func cqLine(o *object, in verbs.CQInternals, prevUsed int, seen bool) string {
	l := fmt.Sprintf("%s CQ %d/%d", o.name, in.Used, in.Depth)
	if seen && in.Used > prevUsed {
		l += fmt.Sprintf(" (+%d new; poll_cq %s reads them)", in.Used-prevUsed, o.name)
	}
	if in.Overflowed {
		l += " OVERFLOWED: completions were lost; size the CQ for every outstanding WR"
	}
	return l
}

func srqLine(o *object, in verbs.SRQInternals) string {
	l := fmt.Sprintf("%s SRQ %d/%d", o.name, in.Used, in.Depth)
	if in.Limit > 0 {
		l += fmt.Sprintf(" limit %d", in.Limit)
		if in.Armed {
			l += " (armed)"
		}
	}
	return l
}

// draw renders one object in full, as show does. With detail, queue
// contents and internals are listed too.
func (s *Shell) draw(o *object, detail bool) string {
	insp, _ := s.prov.(verbs.Inspector)
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	switch o.kind {
	case kCtx:
		var kids []string
		for _, k := range s.h.children(o) {
			kids = append(kids, k.name)
		}
		add("%s: context on %s; %s", s.hn(o), o.dev, listOrNone(kids))
	case kPD:
		var kids []string
		for _, k := range s.h.children(o) {
			kids = append(kids, k.name)
		}
		add("%s: protection domain on %s (%s); %s", s.hn(o), o.parent.name, o.dev, listOrNone(kids))
	case kMR:
		add("%s", mrLine(o))
	case kChan:
		var users []string
		for _, u := range s.h.users(o) {
			users = append(users, u.name)
		}
		add("%s: completion channel on %s; used by %s", s.hn(o), o.parent.name, listOrNone(users))
	case kCQ:
		ch := "no channel"
		if o.chObj != nil {
			ch = "channel " + o.chObj.name
		}
		line := fmt.Sprintf("%s: completion queue on %s, cqe %d, %s", s.hn(o), o.parent.name, o.cq.CQE(), ch)
		if insp != nil {
			if in, err := insp.InspectCQ(o.cq); err == nil {
				line = fmt.Sprintf("%s; %d/%d used", line, in.Used, in.Depth)
				if in.Armed {
					line += ", armed"
					if in.SolicitedOnly {
						line += " (solicited only)"
					}
				}
				if in.Overflowed {
					line += ", OVERFLOWED"
				}
			}
		}
		add("%s", line)
	case kSRQ:
		a, err := o.srq.Query()
		if err == nil {
			add("%s: shared receive queue on %s: max_wr %d max_sge %d srq_limit %d", s.hn(o), o.parent.name, a.MaxWR, a.MaxSGE, a.SRQLimit)
		} else {
			add("%s: shared receive queue on %s", s.hn(o), o.parent.name)
		}
		add("%s", s.srqTypeLine(o))
		if insp != nil {
			if in, err := insp.InspectSRQ(o.srq); err == nil {
				add("%s", srqLine(o, in))
				if detail && len(in.Queue) > 0 {
					add("%s", wqeTable(in.Queue))
				}
			}
		} else {
			add("%s", srqLine(o, verbs.SRQInternals{Depth: o.rqDepth, Used: o.recvs}))
		}
	case kQP:
		out = append(out, s.drawQP(o, detail, insp)...)
	case kXRCD:
		var kids []string
		for _, k := range append(s.h.children(o), s.h.users(o)...) {
			kids = append(kids, k.name)
		}
		file := "no file: private"
		if o.xrcdPath != "" {
			file = "file " + strconv.Quote(o.xrcdPath)
		}
		add("%s: XRC domain on %s (%s), %s, oflags %s; %s", s.hn(o), o.parent.name, o.dev, file, oflagsString(o.xrcdFlags), listOrNone(kids))
	case kAH:
		a := o.ah.Attr()
		add("%s: address handle on %s: dgid %s sgid_index %d hop_limit %d port_num %d sl %d", s.hn(o), o.parent.name,
			a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit, a.PortNum, a.SL)
	}
	return strings.Join(out, "\n")
}

// drawQP is draw's view of a QP: its diagram, what it was made with, its
// queues and, with detail, its engines, timers and WQEs.
func (s *Shell) drawQP(o *object, detail bool, insp verbs.Inspector) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	attr, _, err := o.qp.Query(verbs.AttrState)
	if err != nil {
		add("%s: %v", o.name, err)
		return out
	}
	add("%s", s.qpDiagram(o, attr.State))
	if detail {
		switch o.qpType {
		case verbs.QPTypeXRCRecv:
			add("%s: qp_num %s in %s (%s): no PD, no CQs, no queues; each message goes to the XRC SRQ its sender names", o.name,
				hex24(o.qp.Num()), o.parent.name, o.dev)
		case verbs.QPTypeXRCSend:
			add("%s: qp_num %s on %s (%s), send_cq %s; no receive side: each send names the peer's XRC SRQ (remote_srqn)", o.name,
				hex24(o.qp.Num()), o.parent.name, o.dev, s.hn(o.sendCQ))
		default:
			add("%s: qp_num %s on %s (%s), send_cq %s, recv_cq %s, srq %s", o.name, hex24(o.qp.Num()), o.parent.name, o.dev,
				s.hn(o.sendCQ), s.hn(o.recvCQ), s.hn(o.srqObj))
		}
	}
	if insp == nil {
		add("%s", countedQueues(o))
		if detail {
			add("(counted by vsh from the posts and the polled completions: the %s backend does not show its queues)", s.prov.Name())
		}
		return out
	}
	in, err := insp.InspectQP(o.qp)
	if err != nil {
		return out
	}
	add("%s", qpQueues(o, in))
	if detail {
		if o.qpType != verbs.QPTypeXRCRecv { // an XRC_RECV QP has no requester, an XRC_SEND QP no responder
			add("requester: next_psn %s, oldest unacked %s, retries left %d, RNR retries left %d, READ/atomic in flight %d",
				psnHex(in.NextPSN), psnHex(in.UnackedPSN), in.RetryLeft, in.RNRRetryLeft, in.InflightRdAtomic)
		}
		if o.qpType != verbs.QPTypeXRCSend {
			add("responder: expected_psn %s, msn %d", psnHex(in.ExpectedPSN), in.MSN)
		}
		switch {
		case attr.State == verbs.QPSErr && len(in.Timers) > 0:
			// rxe_qp_error leaves the timers armed; when one fires, the
			// requester and completer find the QP in ERR and only flush.
			add("no retransmit or RNR retry in ERR: rxe_qp_error leaves the timers armed, but one that fires only flushes (rxe_req.c, rxe_comp.c)")
		default:
			for _, t := range in.Timers {
				add("timer %s fires at %s", t.Name, t.Deadline)
			}
		}
		if len(in.SQ) > 0 {
			add("send queue:\n%s", wqeTable(in.SQ))
		}
		if len(in.RQ) > 0 {
			add("receive queue:\n%s", wqeTable(in.RQ))
		}
	}
	return out
}

// psnHex prints a packet sequence number as the wire trace and rdma-core's
// ping-pongs do (%06x): 24 bits, six hex digits, 0x000064. The shell prints
// every PSN so, in attribute lines, query_qp, show and fault rules alike.
func psnHex(n uint32) string { return fmt.Sprintf("0x%06x", n&0xffffff) }

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "nothing made from it yet"
	}
	return "holds " + strings.Join(names, ", ")
}

func wqeTable(q []verbs.WQEInfo) string {
	var rows [][]string
	for _, w := range q {
		psn := "-"
		switch {
		case w.State == "posted":
		case w.FirstPSN == w.LastPSN:
			psn = psnHex(w.FirstPSN)
		default:
			psn = psnHex(w.FirstPSN) + ".." + psnHex(w.LastPSN)
		}
		rows = append(rows, []string{fmt.Sprint(w.WRID), w.Opcode, fmt.Sprint(w.Length), w.State, psn})
	}
	return render.Table([]string{"wr_id", "opcode", "length", "state", "psn"}, rows)
}

// handleArgs resolves the words of show/watch/unwatch as handles.
func (s *Shell) handleArgs(words []token) ([]*object, error) {
	var out []*object
	for _, w := range words {
		name := strings.ToLower(w.text)
		o, ok := s.h.byName[name]
		if !ok {
			k, isHandle := kindOfName(name)
			if isHandle {
				return nil, s.h.notFound(w.text, k)
			}
			var all []string
			for _, x := range s.h.all() {
				all = append(all, x.name)
			}
			hint := "show with no argument lists every handle"
			if near := nearest(name, all); near != "" {
				hint = "did you mean " + near + "? " + hint
			}
			return nil, usagef(hint, "no object %q", w.text)
		}
		out = append(out, o)
	}
	return out, nil
}

func showCmd() *command {
	return &command{Name: "show", Group: gView, Usage: "show [OBJ...] [--diagram [width=W] [svg=FILE]]",
		Summary: "Draw objects: a QP's state diagram and queues, a CQ's occupancy, an MR's keys; all handles when none given",
		Help: "show qp0 --diagram draws the QP state machine of ibv_modify_qp as boxes and arrows (the kernel's " +
			"ib_modify_qp_is_ok table, as modify_qp checks it): the state the QP is in lit (written [RTS] without colour), " +
			"the path it took through the states in heavy lines, and below, the moves no arrow shows. " +
			"width= fits it to a narrower or wider terminal; svg=qp0.svg also writes it as an SVG picture for a web page.",
		Args: []argSpec{pos("OBJ", vAnyHandle, false, "the handles to draw: qp0 cq0 ..."),
			flag("--diagram", "draw a QP's state diagram", "diagram"),
			key("width", vNum, fmt.Sprint(defaultPictureWidth), "--diagram: the widest line, in columns, the cell's [N] included"),
			key("svg", vFile, "", "--diagram: also write the picture to this file as SVG")},
		rawArgs: true, run: cmdShow, complete: completeHandles}
}

func cmdShow(c *call) error {
	diagram, err := c.showOptions()
	if err != nil {
		return err
	}
	if diagram {
		if len(c.a.pos) == 0 {
			return usagef("show qp0 --diagram", "--diagram draws a QP: which one?")
		}
		objs, err := c.s.handleArgs(c.a.pos)
		if err != nil {
			return err
		}
		return showDiagram(c, objs)
	}
	if c.has("width") || c.has("svg") {
		return usagef("show "+strings.Join(append(tokenTexts(c.a.pos), "--diagram"), " ")+" width=...",
			"width= and svg= are for --diagram")
	}
	if len(c.a.pos) == 0 {
		all := c.s.h.all()
		if len(all) == 0 {
			c.line("no objects yet; open_device A starts")
			return nil
		}
		var rows [][]string
		for _, o := range all {
			parent := "-"
			if o.parent != nil {
				parent = o.parent.name
			}
			rows = append(rows, []string{o.name, o.kind.String(), parent, o.dev, c.s.summary(o)})
		}
		c.out.addTable(render.TableView{Columns: []render.Column{{Header: "handle"}, {Header: "object"},
			{Header: "from", Drop: 2}, {Header: "device", Drop: 1}, {Header: "details", Wrap: true}},
			Rows: rows, More: "show HANDLE"})
		return nil
	}
	objs, err := c.s.handleArgs(c.a.pos)
	if err != nil {
		return err
	}
	for _, o := range objs {
		c.out.add(c.s.draw(o, true))
	}
	return nil
}

// summary is one line about an object for show's table.
func (s *Shell) summary(o *object) string {
	switch o.kind {
	case kMR:
		return fmt.Sprintf("length %d lkey 0x%x rkey 0x%x", o.mr.Length(), o.mr.LKey(), o.mr.RKey())
	case kCQ:
		return fmt.Sprintf("cqe %d", o.cq.CQE())
	case kQP:
		st := "?"
		if a, _, err := o.qp.Query(verbs.AttrState); err == nil {
			st = a.State.String()
		}
		return fmt.Sprintf("%s qp_num %s %s", o.qpType, hex24(o.qp.Num()), st)
	case kAH:
		return "dgid " + o.ah.Attr().GRH.DGID.String()
	case kSRQ:
		if o.srqType == verbs.SRQTypeXRC {
			return fmt.Sprintf("XRC in %s, cq %s", nameOr(o.xrcdObj), nameOr(o.recvCQ))
		}
	case kXRCD:
		if o.xrcdPath != "" {
			return "file " + strconv.Quote(o.xrcdPath)
		}
		return "private"
	}
	return ""
}

func watchCmd() *command {
	return &command{Name: "watch", Group: gView, Usage: "watch [OBJ...]",
		Summary: "Redraw objects after every command (both QPs and both CQs, say)",
		Help:    "Without arguments it lists what is watched. Watched objects are drawn below each command's output, like Delve's display.",
		rawArgs: true, run: cmdWatch, complete: completeHandles}
}

func cmdWatch(c *call) error {
	if len(c.a.pos) == 0 {
		if len(c.s.watched) == 0 {
			c.line("nothing is watched; watch qp0 qp1 cq0 redraws them after every command")
		} else {
			c.line("watching %s", strings.Join(c.s.watched, ", "))
		}
		return nil
	}
	objs, err := c.s.handleArgs(c.a.pos)
	if err != nil {
		return err
	}
	for _, o := range objs {
		dup := false
		for _, w := range c.s.watched {
			dup = dup || w == o.name
		}
		if !dup {
			c.s.watched = append(c.s.watched, o.name)
		}
	}
	c.line("watching %s", strings.Join(c.s.watched, ", "))
	return nil
}

func unwatchCmd() *command {
	return &command{Name: "unwatch", Group: gView, Usage: "unwatch OBJ...|all",
		Summary: "Stop redrawing objects", rawArgs: true, run: cmdUnwatch, complete: completeWatched}
}

func cmdUnwatch(c *call) error {
	if len(c.a.pos) == 0 {
		return usagef("unwatch qp0, or unwatch all", "unwatch what?")
	}
	if len(c.a.pos) == 1 && strings.EqualFold(c.a.pos[0].text, "all") {
		c.s.watched = nil
		c.line("nothing is watched")
		return nil
	}
	for _, w := range c.a.pos {
		name := strings.ToLower(w.text)
		found := false
		for i, x := range c.s.watched {
			if x == name {
				c.s.watched = append(c.s.watched[:i], c.s.watched[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return usagef("watch lists what is watched", "%s is not watched", w.text)
		}
	}
	if len(c.s.watched) == 0 {
		c.line("nothing is watched")
	} else {
		c.line("watching %s", strings.Join(c.s.watched, ", "))
	}
	return nil
}

// showOptions takes show's --diagram and key=value words out of its
// positional words, by its spec.
func (c *call) showOptions() (diagram bool, err error) {
	var handles []token
	for _, t := range c.a.pos {
		w := strings.ToLower(t.text)
		switch {
		case !t.quoted && c.cmd.findSpec(w, flagArg) != nil:
			diagram = true
		case t.eq >= 0:
			k := strings.ToLower(t.text[:t.eq])
			sp := c.cmd.findSpec(k, keyArg)
			if sp == nil {
				return false, usagef(c.cmd.usageHint(), "%s", unknownArg(c.cmd, k))
			}
			c.a.kv[sp.name] = t.text[t.eq+1:]
			c.a.keys = append(c.a.keys, sp.name)
		default:
			handles = append(handles, t)
		}
	}
	c.a.pos = handles
	return diagram, nil
}

func tokenTexts(toks []token) []string {
	var out []string
	for _, t := range toks {
		out = append(out, t.text)
	}
	return out
}

// flushWire adds to a cell's output, when tracing, the packets on the wire
// since the last flush but those in shown, which the command printed as
// events of its own. A command whose verb lets time pass (poll_cq waiting)
// flushes before it shows what the verb returned, so that the packets come
// in the order things happened: a retransmission above the completion it
// caused.
func (s *Shell) flushWire(c *call, shown map[uint64]bool) {
	if s.tr == nil {
		return
	}
	for _, l := range s.tr.drain(shown) {
		c.out.addKind(render.Call, s.st.Render(s.st.Wire, l))
	}
}
