package lessons

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/internal/number"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The judge's comparisons of what the step's commands did: the work they
// posted, the completions they polled and left, the bytes they changed,
// the commands that failed or showed something, the fabric's settings.

// queueKey names one queue of an object: "qp1 receive".
func queueKey(q string, recv bool) string {
	if recv {
		return q + " receive"
	}
	return q + " send"
}

func noun(recv bool, n int) string {
	if recv {
		return "receive" + plural(n)
	}
	return "send" + plural(n)
}

// postDiffs compares the work requests posted in the step, queue by queue;
// then, apart (they come after the completions, which usually explain
// them), the work still outstanding where the step's posts do not say it.
func (j *Judge) postDiffs(le *snapshot, m mapping, recs []Record) (posted, outstanding []Diff) {
	ref := j.tg.after
	refPosts := map[string][]Post{}
	var keys []string
	add := func(k string) {
		for _, x := range keys {
			if x == k {
				return
			}
		}
		keys = append(keys, k)
	}
	for _, r := range j.tg.recs {
		for _, p := range r.Posts {
			k := queueKey(p.Queue, p.Recv)
			refPosts[k] = append(refPosts[k], p)
			add(k)
		}
	}
	lPosts := map[string][]Post{}
	for _, r := range recs {
		for _, p := range r.Posts {
			s := m.l2s[p.Queue]
			if s == "" {
				continue // an object of the learner's own, not the lesson's
			}
			k := queueKey(s, p.Recv)
			lPosts[k] = append(lPosts[k], p)
			add(k)
		}
	}
	var out []Diff
	touched := map[string]bool{}
	for _, k := range keys {
		sp, lp := refPosts[k], lPosts[k]
		q, _, _ := strings.Cut(k, " ")
		recv := strings.HasSuffix(k, " receive")
		lq := m.learner(q)
		touched[q] = true
		bad := ""
		for i := 0; i < len(sp) && i < len(lp); i++ {
			if d := j.postDiff(ref, le, m, sp[i], lp[i]); d != "" {
				bad = fmt.Sprintf("%s %s you posted to %s %s", ordinalThe(i+1, len(lp)), noun(recv, 1), lq, d)
				break
			}
		}
		switch {
		case bad != "":
			out = append(out, Diff{Kind: DiffWR, Lost: true, Handle: lq, Ref: q, Text: bad})
		case len(lp) < len(sp):
			out = append(out, Diff{Kind: DiffPosted, Pending: true, Handle: lq, Ref: q,
				Text: fmt.Sprintf("%s has %d %s posted in this step; this step posts %d", lq, len(lp), noun(recv, len(lp)), len(sp))})
		case len(lp) > len(sp) && len(sp) == 0 && j.refilled(le, m, q, recv):
			// Posted again after the learner took the QP through RESET:
			// what is outstanding is the lesson's, as it should be.
		case len(lp) > len(sp):
			out = append(out, Diff{Kind: DiffPosted, Lost: true, Handle: lq, Ref: q,
				Text: fmt.Sprintf("%s has %d %s posted in this step; this step posts %d", lq, len(lp), noun(recv, len(lp)), len(sp))})
		}
	}
	// What is still outstanding, where the step's posts do not say it.
	posted, out = out, nil
	for _, s := range ref.objs {
		if (s.kind != "qp" && s.kind != "srq") || touched[s.h] {
			continue
		}
		l := le.by[m.s2l[s.h]]
		if l == nil {
			continue
		}
		for _, f := range []struct {
			recv bool
			l, s int
		}{{false, l.sends, s.sends}, {true, l.recvs, s.recvs}} {
			if f.l != f.s {
				// Pending either way: a poll retires work, the peer's
				// send consumes a receive; extra posts are caught above.
				out = append(out, Diff{Kind: DiffPosted, Pending: true, Handle: l.h, Ref: s.h,
					Text: fmt.Sprintf("%s has %d %s outstanding; after this step the lesson's has %d", l.h, f.l, noun(f.recv, f.l), f.s)})
			}
		}
	}
	return posted, out
}

// refilled reports whether the learner's queue holds as much outstanding
// work as the reference's: posts in a step that posts nothing there then
// restore what a reset emptied.
func (j *Judge) refilled(le *snapshot, m mapping, q string, recv bool) bool {
	s, l := j.tg.after.by[q], le.by[m.s2l[q]]
	if s == nil || l == nil {
		return false
	}
	if recv {
		return l.recvs == s.recvs
	}
	return l.sends == s.sends
}

// ordinalThe is "the" or "the second": what follows a tutor's "not yet: ".
func ordinalThe(i, n int) string {
	if n == 1 {
		return "the"
	}
	return "the " + ordinalWord(i)
}

func ordinalWord(i int) string {
	switch i {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return strconv.Itoa(i) + "th"
}

// span is where an SGE or a remote address points: an MR and an offset.
// Where no MR has both the key and the address (!ok), keyMR is the MR
// whose key it gives and atMR the one whose bytes hold the address, at
// off ("" where none).
type span struct {
	mr     string
	off    uint64
	length uint32
	ok     bool
	empty  bool // an SGE of length 0
	keyMR  string
	atMR   string
}

func (s span) text() string {
	if !s.ok {
		at, key := "an address outside every MR of the session", "a key of no MR"
		if s.atMR != "" {
			at = fmt.Sprintf("%s+%d", s.atMR, s.off)
		}
		if s.keyMR != "" {
			key = s.keyMR + "'s key"
		}
		return at + " with " + key
	}
	if s.length == 0 {
		return fmt.Sprintf("%s+%d", s.mr, s.off)
	}
	return fmt.Sprintf("%s+%d:%d", s.mr, s.off, s.length)
}

// sgeSpan finds the MR of an SGE posted to queue q.
func sgeSpan(sn *snapshot, q string, sge verbs.SGE) span {
	dev := -1
	if o := sn.by[q]; o != nil {
		dev = o.dev
	}
	mr, off, ok := sn.mrFor(dev, sge.LKey, sge.Addr, false)
	if !ok {
		mr, off, ok = sn.mrFor(-1, sge.LKey, sge.Addr, false)
	}
	sp := span{mr: mr, off: off, length: sge.Length, ok: ok, empty: sge.Length == 0}
	if !ok {
		sp.keyMR, sp.atMR, sp.off = sn.mrParts(sge.LKey, sge.Addr, false)
	}
	return sp
}

func remoteSpan(sn *snapshot, addr uint64, rkey uint32) span {
	mr, off, ok := sn.mrFor(-1, rkey, addr, true)
	sp := span{mr: mr, off: off, ok: ok}
	if !ok {
		sp.keyMR, sp.atMR, sp.off = sn.mrParts(rkey, addr, true)
	}
	return sp
}

// sameSpan compares a reference span with a learner's. Two that miss
// every MR are the same where their keys name the same MR (or none) and
// their addresses fall at the same place of the same MR (or outside all):
// a stale rkey is not a wrong address.
func (m mapping) sameSpan(s, l span) bool {
	if s.empty && l.empty {
		return true // an SGE of no bytes points nowhere in particular
	}
	if !s.ok || !l.ok {
		return s.ok == l.ok && m.learner(s.keyMR) == l.keyMR && m.learner(s.atMR) == l.atMR &&
			(s.atMR == "" || s.off == l.off)
	}
	return m.learner(s.mr) == l.mr && s.off == l.off && s.length == l.length
}

// learnerSpan says a reference span in the learner's handles.
func (m mapping) learnerSpan(s span) span {
	if s.ok {
		s.mr = m.learner(s.mr)
	}
	s.keyMR, s.atMR = m.learner(s.keyMR), m.learner(s.atMR)
	return s
}

// cpuWrites are the commands that write an MR's bytes with the CPU.
var cpuWrites = map[string]bool{"fill": true, "store": true}

// held is work the device holds: the bytes it takes (a SEND's, a
// WRITE's) or brings.
type held struct {
	spans  []span
	before bool // in flight when the records judged began
}

// wireFilled lists the MRs of sn that a command of recs wrote with the CPU
// where work took or brought those bytes (holding): a SEND's or WRITE's
// buffer, which the device reads when it chooses after the post; a
// receive's buffer, a WRITE's or atomic's target, a READ's or atomic's
// buffer, which it writes. Work posted in recs counts from its post on,
// polled or not (a WRITE of zeros, polled, then fill on both sides, would
// pass for the WRITE); work in flight when recs began (inFlight) once data
// may have landed, after a command of recs that moves the fabric
// (movesData): a buffer written before that is written before the wire's
// bytes. Each MR comes with every such write, in order.
func wireFilled(sn *snapshot, recs []Record, inFlight []held) map[string][]cpuWrite {
	live := append([]held(nil), inFlight...)
	moved := false
	out := map[string][]cpuWrite{}
	for _, r := range recs {
		calls := ranCalls(r)
		take := func(at int) {
			for _, p := range r.Posts {
				if p.Call == at || at < 0 && (p.Call < 0 || p.Call >= len(calls)) {
					live = append(live, holding(sn, p))
				}
			}
		}
		for k, c := range calls {
			if cpuWrites[c.Cmd] {
				if h := firstHandle(c); h != "" && overlaps(live, h, c.Wrote, moved) {
					w := cpuWrite{how: fmt.Sprintf("%s at [%d]", c.Cmd, r.N), r: ByteRange{0, ^uint64(0)}}
					if c.Wrote != nil {
						w.r = *c.Wrote
					}
					out[h] = append(out[h], w)
				}
				continue
			}
			take(k)
			moved = moved || movesData[c.Cmd]
		}
		take(-1) // what no kept call took
	}
	return out
}

// cpuWrite is a CPU write that met bytes the device holds: the command
// ("fill at [21]") and the bytes it wrote (all of the MR: Len ^0).
type cpuWrite struct {
	how string
	r   ByteRange
}

// within reports whether w's bytes all lie within the union of rs.
func within(w ByteRange, rs []cpuWrite) bool {
	lo, hi := w.Off, w.Off+w.Len
	if hi < lo { // all of the MR
		hi = ^uint64(0)
	}
	for lo < hi {
		next := lo
		for _, r := range rs {
			rhi := r.r.Off + r.r.Len
			if rhi < r.r.Off {
				rhi = ^uint64(0)
			}
			if r.r.Off <= lo && lo < rhi {
				next = max(next, rhi)
			}
		}
		if next == lo {
			return false
		}
		lo = next
	}
	return true
}

// cpuStored reports whether the last CPU write of recs into byte at of MR
// h was a store: a field written, where a fill (a memset before the
// fields) leaves them to come.
func cpuStored(recs []Record, h string, at uint64) bool {
	last := ""
	for _, r := range recs {
		for _, c := range ranCalls(r) {
			if w := c.Wrote; cpuWrites[c.Cmd] && w != nil && firstHandle(c) == h && w.Off <= at && at-w.Off < w.Len {
				last = c.Cmd
			}
		}
	}
	return last == "store"
}

// firstHandle is the handle a call names first: the MR of fill or store.
func firstHandle(c Call) string {
	for _, a := range c.Args {
		if a.Kind == ArgHandle {
			return a.Value
		}
	}
	return ""
}

// overlaps reports whether a CPU write of range w (nil: all of it) into MR
// mr meets bytes the device holds: work posted in the records judged, or,
// once moved, work in flight when they began.
func overlaps(live []held, mr string, w *ByteRange, moved bool) bool {
	lo, hi := uint64(0), ^uint64(0)
	if w != nil {
		lo, hi = w.Off, w.Off+w.Len
	}
	for _, h := range live {
		if h.before && !moved {
			continue
		}
		for _, sp := range h.spans {
			if sp.mr == mr && lo < sp.off+uint64(sp.length) && sp.off < hi {
				return true
			}
		}
	}
	return false
}

// looksForData are the commands of movesData that only look for what
// came: one that finds nothing moved nothing.
var looksForData = map[string]bool{"poll_cq": true, "get_cq_event": true, "async_events": true}

// movesData are the commands during which bytes may land in an MR: posts
// (a receive lets an RNR-stalled message in), polls, the fabric's clock
// and delivery, and the experiments that run the fabric.
var movesData = map[string]bool{"post_send": true, "post_recv": true, "post_srq_recv": true, "poll_cq": true,
	"step": true, "run": true, "advance": true, "retransmit": true, "get_cq_event": true, "async_events": true,
	"fabric": true, "fault": true, "pingpong": true, "bench": true}

// holding is what work request p holds of sn's MRs: a SEND's or WRITE's
// gather list, a receive's scatter list, a WRITE's or atomic's target,
// a READ's source, a READ's or atomic's buffer.
func holding(sn *snapshot, p Post) held {
	var h held
	op := p.WR.Opcode
	if !p.Recv {
		switch {
		case op == verbs.WRRDMAWrite || op == verbs.WRRDMAWriteWithImm:
			if n := wrBytes(p.WR); n > 0 { // (a WRITE of no bytes, a doorbell, writes none)
				if sp := remoteSpan(sn, p.WR.RemoteAddr, p.WR.RKey); sp.ok {
					sp.length = uint32(n)
					h.spans = append(h.spans, sp)
				}
			}
		case op == verbs.WRRDMARead:
			// The bytes it reads at the responder, when the device
			// there chooses.
			if sp := remoteSpan(sn, p.WR.RemoteAddr, p.WR.RKey); sp.ok {
				sp.length = uint32(wrBytes(p.WR))
				h.spans = append(h.spans, sp)
			}
		case op.IsAtomic():
			if sp := remoteSpan(sn, p.WR.RemoteAddr, p.WR.RKey); sp.ok {
				sp.length = 8
				h.spans = append(h.spans, sp)
			}
		}
	}
	for _, sge := range p.WR.SGList {
		if sp := sgeSpan(sn, p.Queue, sge); sp.ok && !sp.empty {
			h.spans = append(h.spans, sp)
		}
	}
	return h
}

// wrBytes is the length of a work request's gather list.
func wrBytes(w verbs.SendWR) uint64 {
	var n uint64
	for _, sge := range w.SGList {
		n += uint64(sge.Length)
	}
	return n
}

// inFlight is the work posted by recs (all a session's records up to sn)
// that the device still holds at sn: of each queue's posts since it was
// made, the last as many as it holds (the session counts a work request
// until its completion is polled).
func inFlight(sn *snapshot, recs []Record) []held {
	type queue struct{ recv, send []Post }
	posts := map[string]*queue{}
	for _, r := range recs {
		for _, h := range r.Created {
			delete(posts, h) // a handle used again names a new queue
		}
		for _, p := range r.Posts {
			q := posts[p.Queue]
			if q == nil {
				q = &queue{}
				posts[p.Queue] = q
			}
			if p.Recv {
				q.recv = append(q.recv, p)
			} else {
				q.send = append(q.send, p)
			}
		}
	}
	var out []held
	last := func(ps []Post, n int) []Post { return ps[max(0, len(ps)-n):] }
	for _, h := range slices.Sorted(maps.Keys(posts)) {
		q, o := posts[h], sn.by[h]
		if o == nil {
			continue
		}
		for _, p := range append(last(q.recv, o.recvs), last(q.send, o.sends)...) {
			w := holding(sn, p)
			w.before = true
			out = append(out, w)
		}
	}
	return out
}

// ranCalls are the calls of a record that ran to their end: all but the
// last when the record failed (a do or repeat keeps what ran before); all
// of a "! " line that succeeded.
func ranCalls(r Record) []Call {
	if r.Err != nil && !r.Unexpected && len(r.Calls) > 0 {
		return r.Calls[:len(r.Calls)-1]
	}
	return r.Calls
}

// cpuDiffs finds an MR the learner wrote with the CPU in the step where
// the wire's bytes should have been (wireFilled), in bytes the step's
// cell does not write so itself: the bytes the step compares there must come over
// the wire (a WRITE that carried zeros, then fill on both sides, would
// look like one that carried the data).
func (j *Judge) cpuDiffs(le *snapshot, m mapping, recs []Record) []Diff {
	mine := wireFilled(le, recs, j.inFlight)
	if len(mine) == 0 {
		return nil
	}
	ref := wireFilled(j.ref.after, j.ref.cellRecs, j.ref.inFlight)
	var out []Diff
	for _, o := range le.objs {
		how := ""
		for _, w := range mine[o.h] {
			if s := m.l2s[o.h]; s == "" || !within(w.r, ref[s]) {
				how = w.how
				break
			}
		}
		if how == "" {
			continue
		}
		out = append(out, Diff{Kind: DiffMemory, Lost: true, Handle: o.h, Ref: m.l2s[o.h], Text: fmt.Sprintf(
			"%s was written by %s, with the CPU, where work posted takes or brings its bytes: the bytes this step compares there must come over the wire (write a buffer before the work that uses it)",
			o.h, how)})
	}
	return out
}

// readsWRID reports whether the lesson's expectations read the wr_id of
// the reference's work request p: its value, from the CQ it completes on
// or from every CQ. A receive on an SRQ (its CQ is that of the QP it
// lands on) counts as read when its value is read from any CQ.
func (j *Judge) readsWRID(ref *snapshot, p Post) bool {
	read := j.wrids
	id := p.WR.WRID
	if read[""][id] {
		return true
	}
	o := ref.by[p.Queue]
	if o == nil || o.kind != "qp" {
		for _, ids := range read {
			if ids[id] {
				return true
			}
		}
		return false
	}
	if p.Recv {
		return read[o.recvCQ][id]
	}
	return read[o.sendCQ][id]
}

// postDiff says how the learner's work request lp differs from the
// reference's sp ("is IBV_WR_RDMA_WRITE; this step's is IBV_WR_SEND"), or
// "" when it does not.
func (j *Judge) postDiff(ref, le *snapshot, m mapping, sp, lp Post) string {
	s, l := sp.WR, lp.WR
	if sp.WRIDGiven && s.WRID != l.WRID && j.readsWRID(ref, sp) {
		// The lesson chose it, and its expectations read it:
		// rc_pingpong's say which kind of completion is which.
		return fmt.Sprintf("has wr_id %d; this step's has %d", l.WRID, s.WRID)
	}
	if !sp.Recv {
		if s.Opcode != l.Opcode {
			return fmt.Sprintf("is %s; this step's is %s", l.Opcode, s.Opcode)
		}
		// INLINE where the step has none copies the same bytes at post
		// time: where that matters, the bytes that arrive say so.
		// (INLINE is for SEND and WRITE alone: rxe copies the gather
		// list's bytes in place of the list, where a READ or an atomic
		// would land its data.)
		carries := s.Opcode == verbs.WRSend || s.Opcode == verbs.WRSendWithImm || s.Opcode == verbs.WRRDMAWrite || s.Opcode == verbs.WRRDMAWriteWithImm
		extraInline := carries && s.Flags&verbs.SendInline == 0 && s.Flags == l.Flags&^verbs.SendInline
		if s.Flags != l.Flags && !extraInline {
			return fmt.Sprintf("has send_flags %s; this step's has %s", l.Flags.Short(), s.Flags.Short())
		}
	}
	if len(s.SGList) != len(l.SGList) {
		return fmt.Sprintf("has %d SGE%s; this step's has %d", len(l.SGList), plural(len(l.SGList)), len(s.SGList))
	}
	for i := range s.SGList {
		ss, ls := sgeSpan(ref, sp.Queue, s.SGList[i]), sgeSpan(le, lp.Queue, l.SGList[i])
		if !m.sameSpan(ss, ls) {
			what := "its buffer"
			if len(s.SGList) > 1 {
				what = fmt.Sprintf("its SGE %d", i+1)
			}
			return fmt.Sprintf("has %s at %s; this step's at %s", what, ls.text(), m.learnerSpan(ss).text())
		}
	}
	if sp.Recv {
		return ""
	}
	if s.Opcode.HasImm() && s.Imm != l.Imm {
		return fmt.Sprintf("carries imm_data 0x%x; this step's carries 0x%x", l.Imm, s.Imm)
	}
	if s.Opcode.IsRDMA() || s.Opcode.IsAtomic() {
		ss, ls := remoteSpan(ref, s.RemoteAddr, s.RKey), remoteSpan(le, l.RemoteAddr, l.RKey)
		if !m.sameSpan(ss, ls) {
			return fmt.Sprintf("targets %s; this step's targets %s", ls.text(), m.learnerSpan(ss).text())
		}
	}
	if s.Opcode.IsAtomic() && (s.CompareAdd != l.CompareAdd || s.Swap != l.Swap) {
		return fmt.Sprintf("has compare_add %d swap %d; this step's has compare_add %d swap %d", l.CompareAdd, l.Swap, s.CompareAdd, s.Swap)
	}
	if q := ref.by[sp.Queue]; q != nil && q.qpType == verbs.QPTypeXRCSend {
		// The SRQ remote_srqn names on the device the QP is connected to
		// (a number no SRQ there has is as good as another).
		sq, lq := xrcTarget(ref, sp.Queue, s), xrcTarget(le, lp.Queue, l)
		if m.learner(sq) != lq || (sq == "") != (lq == "") {
			return fmt.Sprintf("goes to %s; this step's goes to %s", srqDest(lq, l.RemoteSRQN), srqDest(m.learner(sq), s.RemoteSRQN))
		}
	}
	if q := ref.by[sp.Queue]; q != nil && q.qpType == verbs.QPTypeUD {
		sah, lah := objName(ref, s.AH), objName(le, l.AH)
		if m.learner(sah) != lah {
			return fmt.Sprintf("uses address handle %s; this step's uses %s", orNone(lah), orNone(m.learner(sah)))
		}
		sq, lq := remoteQP(ref, s), remoteQP(le, l)
		if m.learner(sq) != lq || (sq == "") != (lq == "") || (s.RemoteQPN == wire.MulticastQPN) != (l.RemoteQPN == wire.MulticastQPN) {
			return fmt.Sprintf("goes to %s; this step's goes to %s", udDest(le, l, lq), udDest(ref, s, m.learner(sq)))
		}
		if s.RemoteQKey != l.RemoteQKey {
			return fmt.Sprintf("has remote_qkey 0x%x; this step's has 0x%x", l.RemoteQKey, s.RemoteQKey)
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// objName finds the handle of a verbs object in a snapshot.
func objName(sn *snapshot, o any) string {
	if o == nil {
		return ""
	}
	for _, x := range sn.objs {
		if x.obj == o {
			return x.h
		}
	}
	return ""
}

// remoteQP finds the QP a UD send goes to: numbered remote_qpn on the
// device its address handle names; none for a multicast group's GID.
func remoteQP(sn *snapshot, w verbs.SendWR) string {
	ah := sn.by[objName(sn, w.AH)]
	if ah == nil || ah.dgid.dev < 0 {
		return ""
	}
	return sn.qpAt(w.RemoteQPN, ah.dgid.dev)
}

// xrcTarget finds the XRC SRQ an XRC send on queue qp goes to: numbered
// remote_srqn on the device the QP is connected to.
func xrcTarget(sn *snapshot, qp string, w verbs.SendWR) string {
	q := sn.by[qp]
	if q == nil || q.dgid.dev < 0 {
		return ""
	}
	return sn.srqAt(w.RemoteSRQN, q.dgid.dev)
}

// srqDest says which SRQ an XRC send goes to.
func srqDest(srq string, n uint32) string {
	if srq == "" {
		return fmt.Sprintf("remote_srqn 0x%06x, which no XRC SRQ there has", n)
	}
	return fmt.Sprintf("SRQ %s (remote_srqn 0x%06x)", srq, n)
}

// udDest says where a UD send goes, q being the QP remoteQP found.
func udDest(sn *snapshot, w verbs.SendWR, q string) string {
	mcast := false
	if ah := sn.by[objName(sn, w.AH)]; ah != nil && ah.dgid.dev < 0 && ah.dgid.raw.IsMulticast() {
		mcast = true
	}
	switch {
	case w.RemoteQPN == wire.MulticastQPN && mcast:
		return "the multicast group (remote_qpn 0xffffff)"
	case w.RemoteQPN == wire.MulticastQPN:
		return "remote_qpn 0xffffff, the multicast QPN, on a unicast GID"
	case mcast:
		return fmt.Sprintf("remote_qpn 0x%06x on a multicast GID, which takes 0xffffff", w.RemoteQPN)
	case q == "":
		return fmt.Sprintf("remote_qpn 0x%06x, which no QP there has", w.RemoteQPN)
	}
	return fmt.Sprintf("QP %s (remote_qpn 0x%06x)", q, w.RemoteQPN)
}

// completionDiffs compares the completions polled in the step and those
// left in each CQ. The completions of one queue keep their order; those of
// different queues that share a CQ — two QPs, or one QP's sends and
// receives — may interleave otherwise, as they do on a real device.
func (j *Judge) completionDiffs(le *snapshot, m mapping, recs []Record) []Diff {
	ref := j.tg.after
	refQP := func(cq *objSnap, wc verbs.WC) string { return ref.qpAt(wc.QPNum, cq.dev) + queueOf(wc) }
	leQP := func(cq *objSnap, wc verbs.WC) string {
		h := le.qpAt(wc.QPNum, cq.dev)
		if s := m.l2s[h]; s != "" {
			return s + queueOf(wc)
		}
		return "your " + h + queueOf(wc)
	}
	refPolled := polledStreams(j.tg.recs, func(cq string) (string, bool) { return cq, true }, ref, refQP)
	lPolled := polledStreams(recs, func(cq string) (string, bool) { s := m.l2s[cq]; return s, s != "" }, le, leQP)
	var out, left []Diff
	for _, s := range ref.objs {
		if s.kind != "cq" {
			continue
		}
		sp, lp := refPolled[s.h], lPolled[s.h]
		if sp == nil {
			sp = &wcStream{}
		}
		if lp == nil {
			lp = &wcStream{}
		}
		lq := m.learner(s.h)
		l := le.by[m.s2l[s.h]]
		keys := append([]string(nil), sp.keys...)
		for _, k := range lp.keys {
			if _, ok := sp.wcs[k]; !ok {
				keys = append(keys, k)
			}
		}
		bad, badDetail, owed, nS, nL := "", "", 0, 0, 0
		for _, k := range keys {
			a, b := sp.wcs[k], lp.wcs[k]
			nS, nL = nS+len(a), nL+len(b)
			for i := 0; i < len(a) && i < len(b) && bad == ""; i++ {
				if mine, theirs := wcDiff(ref, le, m, s.dev, a[i], b[i]); mine != "" {
					bad, badDetail = outcome(fmt.Sprintf("%s completion of %s you polled from %s (wr_id %d)", ordinalThe(i+1, len(b)), m.learner(streamQP(k)), lq, b[i].WRID), mine, theirs, "what this step gets")
				}
			}
			if bad == "" && len(b) > len(a) {
				bad = fmt.Sprintf("you polled %d completion%s of %s from %s in this step; this step polls %d", len(b), plural(len(b)), m.learner(streamQP(k)), lq, len(a))
			}
			owed += max(0, len(a)-len(b))
		}
		if bad != "" {
			out = append(out, Diff{Kind: DiffPolled, Lost: true, Handle: lq, Ref: s.h, Text: bad, Detail: badDetail})
			continue
		}
		if l == nil || !l.wcsKnown || !s.wcsKnown {
			if owed > 0 {
				out = append(out, Diff{Kind: DiffPolled, Pending: true, Handle: lq, Ref: s.h,
					Text: fmt.Sprintf("you polled %d completion%s from %s in this step; this step polls %d", nL, plural(nL), lq, nS)})
			}
			continue
		}
		// What the CQ holds: the completions still to poll in this step,
		// then those the step leaves, stream by stream.
		want, have := &wcStream{}, &wcStream{}
		for _, k := range keys {
			a, b := sp.wcs[k], lp.wcs[k]
			if len(a) > len(b) {
				for _, wc := range a[len(b):] {
					want.add(k, wc)
				}
			}
		}
		for _, wc := range s.wcs {
			want.add(refQP(s, wc), wc)
		}
		for _, wc := range l.wcs {
			have.add(leQP(l, wc), wc)
		}
		hk := append([]string(nil), want.keys...)
		for _, k := range have.keys {
			if _, ok := want.wcs[k]; !ok {
				hk = append(hk, k)
			}
		}
		extra, short := 0, 0
		held, heldDetail := "", ""
		for _, k := range hk {
			a, b := want.wcs[k], have.wcs[k]
			for i := 0; i < len(a) && i < len(b) && held == ""; i++ {
				if mine, theirs := wcDiff(ref, le, m, s.dev, a[i], b[i]); mine != "" {
					held, heldDetail = outcome(fmt.Sprintf("%s holds a completion of %s (wr_id %d) that", l.h, m.learner(streamQP(k)), b[i].WRID), mine, theirs, "what this step gets")
				}
			}
			extra += max(0, len(b)-len(a))
			short += max(0, len(a)-len(b))
		}
		switch {
		case held != "":
			left = append(left, Diff{Kind: DiffUnpolled, Lost: true, Handle: l.h, Ref: s.h, Text: held, Detail: heldDetail})
		case owed > 0 && len(l.wcs) > 0:
			n := min(len(l.wcs), owed)
			left = append(left, Diff{Kind: DiffUnpolled, Pending: true, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s still holds %d completion%s you have not polled", l.h, n, plural(n))})
		case owed > 0:
			out = append(out, Diff{Kind: DiffPolled, Pending: true, Handle: lq, Ref: s.h,
				Text: fmt.Sprintf("you polled %d completion%s from %s in this step; this step polls %d", nL, plural(nL), lq, nS)})
		case extra > 0:
			left = append(left, Diff{Kind: DiffUnpolled, Lost: true, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s holds %d completion%s more than the lesson's (%d); this step does not make %s", l.h, extra, plural(extra), len(s.wcs), them(extra))})
		case short > 0:
			left = append(left, Diff{Kind: DiffUnpolled, Pending: true, Handle: l.h, Ref: s.h,
				Text: fmt.Sprintf("%s holds %d completion%s; after this step the lesson's holds %d (%d still to come)", l.h, len(l.wcs), plural(len(l.wcs)), len(s.wcs), short)})
		}
	}
	return append(out, left...)
}

// wcStream holds completions by stream (a QP's queue: see queueOf), the
// streams in the order they first appear; the completions of one stream
// keep their order.
type wcStream struct {
	keys []string
	wcs  map[string][]verbs.WC
}

// add appends wc to stream k.
func (st *wcStream) add(k string, wc verbs.WC) {
	if st.wcs == nil {
		st.wcs = map[string][]verbs.WC{}
	}
	if _, ok := st.wcs[k]; !ok {
		st.keys = append(st.keys, k)
	}
	st.wcs[k] = append(st.wcs[k], wc)
}

// polledStreams splits the completions polled in recs by the reference CQ
// that cqOf maps their CQ to (skipped when cqOf says no, or the CQ is not
// in sn), then by the stream key that key gives.
func polledStreams(recs []Record, cqOf func(string) (string, bool), sn *snapshot, key func(*objSnap, verbs.WC) string) map[string]*wcStream {
	polled := map[string]*wcStream{}
	for _, r := range recs {
		for _, c := range r.Completions {
			s, ok := cqOf(c.CQ)
			cq := sn.by[c.CQ]
			if !ok || cq == nil {
				continue
			}
			if polled[s] == nil {
				polled[s] = &wcStream{}
			}
			polled[s].add(key(cq, c.WC), c.WC)
		}
	}
	return polled
}

// queueOf names the queue a completion comes from, as a stream key's
// suffix: a success's by its opcode; errors (whose opcode is undefined) in
// a stream of their own.
func queueOf(wc verbs.WC) string {
	switch {
	case wc.Status != verbs.WCSuccess:
		return "/error"
	case wc.Opcode.IsRecv():
		return "/recv"
	}
	return "/send"
}

// streamQP is the QP of a stream key.
func streamQP(k string) string {
	qp, _, _ := strings.Cut(k, "/")
	return qp
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// wcDiff says how the learner's completion l differs from the reference's
// s, or "" when it does not: its status; for a success its opcode, length,
// flags, immediate data, and the QP it names. dev is the CQ's device.
func wcDiff(ref, le *snapshot, m mapping, dev int, s, l verbs.WC) (mine, theirs string) {
	if s.Status != l.Status {
		return "is " + l.Status.String(), "this step's is " + s.Status.String()
	}
	sq, lq := ref.qpAt(s.QPNum, dev), le.qpAt(l.QPNum, dev)
	if m.learner(sq) != lq || (sq == "") != (lq == "") {
		return fmt.Sprintf("is for %s; this step's is for %s", orNone(lq), orNone(m.learner(sq))), ""
	}
	if s.Status != verbs.WCSuccess {
		return "", ""
	}
	switch {
	case s.Opcode != l.Opcode:
		return "is " + l.Opcode.String(), "this step's is " + s.Opcode.String()
	case s.ByteLen != l.ByteLen:
		return fmt.Sprintf("has byte_len %d", l.ByteLen), fmt.Sprintf("this step's has %d", s.ByteLen)
	case s.Flags != l.Flags:
		return "has wc_flags " + l.Flags.Short(), "this step's has " + s.Flags.Short()
	case s.Flags&verbs.WCWithImm != 0 && s.Imm != l.Imm:
		return fmt.Sprintf("has imm_data 0x%x", l.Imm), fmt.Sprintf("this step's has 0x%x", s.Imm)
	}
	if s.SrcQP != 0 || l.SrcQP != 0 {
		if !m.someSame(ref.qpsNumbered(s.SrcQP), le.qpsNumbered(l.SrcQP)) {
			return fmt.Sprintf("comes from src_qp 0x%06x (%s); this step's from %s", l.SrcQP,
				orNone(strings.Join(le.qpsNumbered(l.SrcQP), " or ")), orNone(strings.Join(m.learnerAll(ref.qpsNumbered(s.SrcQP)), " or "))), ""
		}
	}
	return "", ""
}

// outcome joins what differs in a learner's completion or bytes (mine)
// with what the step's reference has (theirs): the text leaves theirs
// out, so as not to tell the learner what a step asks them to find out;
// the detail (lesson goal --detail) has it.
func outcome(head, mine, theirs, not string) (text, detail string) {
	if theirs == "" {
		return head + " " + mine, ""
	}
	return head + " " + mine + ", not " + not, head + " " + mine + "; " + theirs
}

// someSame reports whether a reference handle of refs is paired with a
// learner handle of les (or both are empty).
func (m mapping) someSame(refs, les []string) bool {
	if len(refs) == 0 || len(les) == 0 {
		return len(refs) == len(les)
	}
	for _, r := range refs {
		for _, l := range les {
			if m.s2l[r] == l {
				return true
			}
		}
	}
	return false
}

func (m mapping) learnerAll(hs []string) []string {
	var out []string
	for _, h := range hs {
		out = append(out, m.learner(h))
	}
	return out
}

// memoryDiffs compares the bytes the step changed, in the reference or in
// the learner's session, MR by MR: there they must agree, a key or
// address standing for the paired object's.
func (j *Judge) memoryDiffs(le *snapshot, m mapping, recs []Record) []Diff {
	var out []Diff
	for _, s := range j.tg.after.objs {
		if s.kind != "mr" {
			continue
		}
		l := le.by[m.s2l[s.h]]
		if l == nil || l.mrBytes == nil || s.mrBytes == nil {
			continue
		}
		var sb0, lb0 []uint64
		var kept []byte
		if b := j.ref.before.by[s.h]; b != nil {
			sb0 = b.pages
		}
		if b := j.start.by[l.h]; b != nil && b.obj == l.obj {
			lb0, kept = b.pages, b.kept
		}
		sb, lb := s.mrBytes(), l.mrBytes()
		n := min(len(sb), len(lb))
		for p := 0; p*pageSize < n; p++ {
			refChanged := p >= len(sb0) || p >= len(s.pages) || sb0[p] != s.pages[p]
			learnerChanged := p >= len(lb0) || p >= len(l.pages) || lb0[p] != l.pages[p]
			if !refChanged && !learnerChanged {
				continue
			}
			lo, hi := p*pageSize, min((p+1)*pageSize, n)
			at, ok := j.sameBytes(le, m, sb[lo:hi], lb[lo:hi])
			if ok {
				continue
			}
			at += lo
			end := min(at+16, n)
			// Not yet written is work to do; written otherwise, a wrong
			// turn: a byte that changed, or one a store of the step wrote
			// last (an rkey stored big-endian starts with the zero byte
			// that was there; a memset of zeros is no field yet).
			pending := !learnerChanged || at < len(kept) && kept[at] == lb[at] && !cpuStored(recs, l.h, uint64(at))
			text, detail := outcome(fmt.Sprintf("%s bytes %d..%d", l.h, at, end), "are "+bytesText(lb[at:end]), "after this step they are "+bytesText(sb[at:end]), "what this step leaves there")
			out = append(out, Diff{Kind: DiffMemory, Pending: pending, Handle: l.h, Ref: s.h, Text: text, Detail: detail})
			break
		}
	}
	return out
}

// sameBytes compares the reference's bytes s with the learner's l, where
// a 4- or 8-byte field that differs may hold a key, QP number or address
// of a pair of objects; it returns where they first differ otherwise.
func (j *Judge) sameBytes(le *snapshot, m mapping, s, l []byte) (int, bool) {
	if bytes.Equal(s, l) {
		return 0, true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == l[i] {
			continue
		}
		end := -1
		for at := max(0, i-19); at <= i && at+20 <= len(s); at++ {
			if j.sameIPv4Header(le, s[at:at+20], l[at:at+20]) {
				end = at + 20
				break
			}
		}
		for _, w := range []int{16, 8, 4} {
			if end >= 0 {
				break
			}
			for at := max(0, i-w+1); at <= i && at+w <= len(s); at++ {
				if j.sameValue(le, m, s[at:at+w], l[at:at+w]) {
					end = at + w
					break
				}
			}
			if end >= 0 {
				break
			}
		}
		if end < 0 {
			return i, false
		}
		i = end - 1
	}
	return 0, true
}

// sameIPv4Header reports whether two 20-byte windows are the IPv4 header
// of a RoCEv2 datagram (as a UD receive's GRH holds it) that differ only
// in what is random by nature: the identification and the checksum that
// covers it, and addresses that are the same device's GID.
func (j *Judge) sameIPv4Header(le *snapshot, s, l []byte) bool {
	if s[0] != 0x45 || l[0] != 0x45 || s[9] != 17 || l[9] != 17 {
		return false
	}
	for k := 0; k < 12; k++ {
		if k != 4 && k != 5 && k != 10 && k != 11 && s[k] != l[k] {
			return false
		}
	}
	for k := 12; k < 20; k += 4 {
		var sg, lg verbs.GID
		sg[10], sg[11], lg[10], lg[11] = 0xff, 0xff, 0xff, 0xff
		copy(sg[12:], s[k:k+4])
		copy(lg[12:], l[k:k+4])
		if sg != lg && !j.ref.gids.ref(sg).equal(j.gidsL.ref(lg)) {
			return false
		}
	}
	return true
}

// sameValue reports whether two fields of the same width, read either
// way round, hold the same random value of a pair of objects: an MR's
// rkey, lkey or an address within it, a QP's number; or, 16 bytes wide,
// the GID at the same place of the same device's table (a GRH's).
func (j *Judge) sameValue(le *snapshot, m mapping, s, l []byte) bool {
	if len(s) == 16 {
		var sg, lg verbs.GID
		copy(sg[:], s)
		copy(lg[:], l)
		sr, lr := j.ref.gids.ref(sg), j.gidsL.ref(lg)
		return sr.dev >= 0 && sr.equal(lr)
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		var sv, lv uint64
		if len(s) == 8 {
			sv, lv = order.Uint64(s), order.Uint64(l)
		} else {
			sv, lv = uint64(order.Uint32(s)), uint64(order.Uint32(l))
		}
		for sh, lh := range m.s2l {
			so, lo := j.tg.after.by[sh], le.by[lh]
			if so == nil || lo == nil {
				continue
			}
			switch so.kind {
			case "mr":
				if len(s) == 8 && sv >= so.addr && sv <= so.addr+uint64(so.length) && lv-lo.addr == sv-so.addr {
					return true
				}
				if len(s) == 4 && (sv == uint64(so.rkey) && lv == uint64(lo.rkey) || sv == uint64(so.lkey) && lv == uint64(lo.lkey)) {
					return true
				}
			case "qp":
				if len(s) == 4 && sv == uint64(so.qpn) && lv == uint64(lo.qpn) {
					return true
				}
			}
		}
	}
	return false
}

func bytesText(b []byte) string {
	if printable(b) {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("0x%x", b)
}

// expectedFailure reports whether a learner's failed command fails as one
// of the step's "! " lines does.
func (j *Judge) expectedFailure(lr Record) bool {
	if lr.Err == nil || j.outOfPlace[lr.N] != 0 {
		return false
	}
	m := j.lastMapping()
	for _, r := range j.tg.recs {
		if ok, _ := j.sameFailure(m, r, lr); ok {
			return true
		}
	}
	return false
}

// sameFailure reports whether the learner's record lr fails as the
// reference's "! " line r does: the same command on the paired objects,
// the same errno, and — where both sessions run on the same kind of
// backend, so that the verb explains itself the same way — for the same
// reason (EBUSY for an unacknowledged event is not EBUSY for a QP still
// there). Otherwise it says how near it came.
func (j *Judge) sameFailure(m mapping, r, lr Record) (bool, string) {
	if !r.ExpectFail || r.Err == nil || lr.Err == nil {
		return false, ""
	}
	want, lc := lastCall(r), lastCall(lr)
	if lc.Cmd != want.Cmd || !m.sameArgs(want.Args, lc.Args) {
		return false, ""
	}
	if verbs.ErrnoOf(lr.Err) != verbs.ErrnoOf(r.Err) {
		return false, fmt.Sprintf("your %s failed with %s; this step's fails with %s", lr.Line, errnoText(lr.Err), errnoText(r.Err))
	}
	if j.sameBackend() {
		rw, lw := why(r.Err), why(lr.Err)
		if rw != "" && lw != "" && reasonShape(rw) != reasonShape(lw) {
			return false, fmt.Sprintf("your %s failed with %s, but not for this step's reason: %s", lr.Line, errnoText(lr.Err), lw)
		}
	}
	return true, ""
}

// sameBackend reports whether the learner's session runs on the kind of
// backend the reference does (the simulator).
func (j *Judge) sameBackend() bool {
	return j.ref.sh != nil && j.env.Provider().Name() == j.ref.sh.Provider().Name()
}

// hexNumber finds the numbers a verb's explanation may hold that are
// random by nature: keys, QP numbers, addresses.
var hexNumber = regexp.MustCompile(`0x[0-9a-fA-F]+`)

// why is a verb failure's reason, its random numbers left out; "" for a
// failure that is not a verb's.
func why(err error) string {
	ve, ok := verbs.AsError(err)
	if !ok {
		return ""
	}
	return hexNumber.ReplaceAllString(ve.Why, "0x…")
}

// failureDiffs checks that the commands the step makes fail ("! " lines)
// failed the same way in the learner's session.
func (j *Judge) failureDiffs(m mapping, recs []Record) []Diff {
	var out []Diff
	used := make([]bool, len(recs))
	for _, r := range j.tg.recs {
		if !r.ExpectFail || r.Err == nil {
			continue
		}
		found, near := false, ""
		for i, lr := range recs {
			if used[i] {
				continue
			}
			ok, n := j.sameFailure(m, r, lr)
			switch p := j.outOfPlace[lr.N]; {
			case ok && p == placeEarly:
				ok, n = false, fmt.Sprintf("your %s failed as this step's does, but before what comes first in the step: try it again in its place", lr.Line)
			case ok && p == placeElsewhere:
				ok, n = false, fmt.Sprintf("your %s failed as this step's does, but in a session that differs from the step's there: "+
					"a command before it was done otherwise, or in another order; lesson reset starts the step over", lr.Line)
			}
			if ok {
				used[i], found = true, true
				break
			}
			if n != "" {
				near = n
			}
		}
		if found {
			continue
		}
		text := near
		if text == "" {
			what := m.callText(lastCall(r))
			if len(r.Calls) == 1 {
				what = j.translateText(r.Line)
			}
			text = fmt.Sprintf("this step makes %s fail (with %s); it has not failed yet", what, errnoText(r.Err))
		}
		out = append(out, Diff{Kind: DiffError, Pending: true, Text: text})
	}
	return out
}

func errnoText(err error) string {
	if n := verbs.ErrnoOf(err); n != 0 {
		return verbs.ErrnoName(n)
	}
	return "an error"
}

// lastCall is the call a record's line failed in, or its last.
func lastCall(r Record) Call {
	if len(r.Calls) == 0 {
		return Call{Cmd: r.Cmd}
	}
	return r.Calls[len(r.Calls)-1]
}

// lookCall is a call a step's cell made, with the line it is shown as.
type lookCall struct {
	Call
	line string // the record's line when the call is its only one
	n    int    // the record's cell
}

// calls lists the calls of records that succeeded, repeat and do left out
// (their commands are listed); with looksOnly, those that only show
// something.
func calls(recs []Record, looksOnly bool) []lookCall {
	var out []lookCall
	for _, r := range recs {
		for _, c := range ranCalls(r) {
			if c.Cmd == "repeat" || c.Cmd == "do" || looksOnly && !c.Look {
				continue
			}
			lc := lookCall{Call: c, n: r.N}
			if len(r.Calls) == 1 {
				lc.line = r.Line
			}
			out = append(out, lc)
		}
	}
	return out
}

// lookDiffs checks that the learner ran the commands of the step's cell
// that only show something, on the paired objects: query_port, mem, a
// poll_cq that finds nothing ("who hears about it?"), async_events. Where
// the cell changes nothing a snapshot shows, every command of it.
func (j *Judge) lookDiffs(m mapping, recs []Record) []Diff {
	want := calls(j.tg.recs, j.ref.effect)
	if !j.ref.effect {
		// A cell of looks asks for each once: repeat 3 poll_cq cq1 is
		// polling cq1.
		var once []lookCall
		for _, w := range want {
			dup := false
			for _, o := range once {
				dup = dup || o.Cmd == w.Cmd && slices.Equal(o.Args, w.Args)
			}
			if !dup {
				once = append(once, w)
			}
		}
		want = once
	}
	var out []Diff
	mine := calls(recs, false)
	used := make([]bool, len(mine))
	found := make([]bool, len(want))
	for k, w := range want {
		for i, c := range mine {
			if !used[i] && c.Cmd == w.Cmd && (sameRuleAction(w.Call, c.Call) || m.sameArgs(w.Args, c.Args) && sameSelection(w.Cmd, w.Args, c.Args) &&
				(!experiments[w.Cmd] || sameNumbers(w.Args, c.Args))) {
				used[i], found[k] = true, true
				break
			}
		}
	}
	for k, w := range want {
		if found[k] {
			continue
		}
		what := m.callText(w.Call)
		if w.line != "" {
			what = j.translateText(w.line)
		}
		d := Diff{Kind: DiffLook, Pending: true, Text: fmt.Sprintf("this step runs %s; you have not yet", what)}
		// The learner's try at it, the latest of the closest kind: the
		// same experiment with other settings; the experiment on the same
		// objects another way (bench op=send where the step runs op=all:
		// said at once, as it is the learner's try at the step's; a look
		// elsewhere, pp_dest on another QP, may be the learner's own); or
		// the look narrowed to a part (query_gid index=5 where the step
		// reads the table).
		kinds := []func(c lookCall) bool{
			func(c lookCall) bool { return experiments[w.Cmd] && m.sameArgs(w.Args, c.Args) },
			func(c lookCall) bool { return experiments[w.Cmd] && c.line != "" && m.sameHandles(w.Args, c.Args) },
			func(c lookCall) bool {
				return c.line != "" && m.sameArgs(w.Args, c.Args) && !sameSelection(w.Cmd, w.Args, c.Args)
			},
		}
	kinds:
		for k, near := range kinds {
			for i := len(mine) - 1; i >= 0; i-- {
				c := mine[i]
				if used[i] || c.Cmd != w.Cmd || !near(c) {
					continue
				}
				used[i] = true
				switch k {
				case 0:
					d.Text, d.near = fmt.Sprintf("this step runs %s; yours ran it with %s", what, otherNumbers(w.Args, c.Args, c.line)), c.n
				case 1:
					d.Text, d.near = fmt.Sprintf("this step runs %s; yours ran %s", what, c.line), c.n
				default:
					d.Text = fmt.Sprintf("this step runs %s; yours ran %s, which shows only part of it", what, c.line)
				}
				break kinds
			}
		}
		out = append(out, d)
	}
	return out
}

// sameRuleAction reports whether two fault calls add a rule of one action
// (drop, duplicate ...): which packets it picks (opcode=, psn=, nth=,
// count=) shows in what the step's packets and its settings do, which a
// step that breaks the wire on purpose compares.
func sameRuleAction(s, l Call) bool {
	return s.Cmd == "fault" && l.Cmd == "fault" && len(s.Args) > 0 && len(l.Args) > 0 && s.Args[0] == l.Args[0]
}

// sameArgs compares a reference call's arguments with a learner's, what
// they name: numbers are left out.
func (m mapping) sameArgs(s, l []Arg) bool {
	// Positional arguments in order (pingpong rc B A is not rc A B); keyed
	// ones in any order, a handle whatever its key (mr=mr0 and
	// sge=mr0:0:8 name the same MR).
	key := func(as []Arg, ref bool) (pos, keyed []string) {
		for _, a := range named(as) {
			v := a.Value
			if a.Kind == ArgHandle && ref {
				v = m.learner(v)
			}
			switch {
			case a.Key == "":
				pos = append(pos, fmt.Sprintf("%d %s", a.Kind, v))
			case a.Kind == ArgHandle:
				keyed = append(keyed, "h "+v)
			default:
				keyed = append(keyed, fmt.Sprintf("%d %s=%s", a.Kind, a.Key, v))
			}
		}
		sort.Strings(keyed)
		return pos, keyed
	}
	sp, sk := key(s, true)
	lp, lk := key(l, false)
	return slices.Equal(sp, lp) && slices.Equal(sk, lk)
}

// sameHandles reports whether a reference call's arguments and a
// learner's name the same objects, whatever else they give.
func (m mapping) sameHandles(s, l []Arg) bool {
	hs := func(as []Arg, ref bool) []string {
		var out []string
		for _, a := range as {
			if a.Kind == ArgHandle {
				if ref {
					out = append(out, m.learner(a.Value))
				} else {
					out = append(out, a.Value)
				}
			}
		}
		sort.Strings(out)
		return out
	}
	return slices.Equal(hs(s, true), hs(l, false))
}

// experiments are the commands whose numbers are the experiment: a bench
// with tx_depth=1 measures another thing than tx_depth=512, pp_dest with
// another PSN prints another message. Elsewhere a look's numbers only say
// how much to show (mem, poll_cq n=). A session may record every setting
// such a call ran with, defaults filled in (bench and pingpong do), so
// that one left out compares as its default.
var experiments = map[string]bool{"bench": true, "pingpong": true, "pp_dest": true, "pp_stats": true}

// lookSelectors are the numbers that narrow what a look shows; without
// one it shows the whole (query_gid without index= prints the table).
var lookSelectors = map[string][]string{"query_gid": {"index"}}

// sameSelection reports whether a learner's look shows what the
// reference's does: a selector the reference leaves out (the whole) the
// learner leaves out too; one the reference gives, the learner gives the
// same or leaves out (the whole holds it).
func sameSelection(cmd string, s, l []Arg) bool {
	for _, k := range lookSelectors[cmd] {
		lv, ok := numberArg(l, k)
		if !ok {
			continue
		}
		if sv, ok := numberArg(s, k); !ok || sv != lv {
			return false
		}
	}
	return true
}

// numberArg is the value of the number given as key=.
func numberArg(as []Arg, key string) (uint64, bool) {
	for _, a := range as {
		if a.Kind == ArgNumber && a.Key == key {
			v, err := number.Parse(a.Value, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// sameNumbers reports whether a learner's call gives each number the
// reference's gives (key=NUMBER), the same: bench tx_depth=1 is another
// experiment than tx_depth=512. Numbers only the learner gives, and wr_ids,
// do not count.
func sameNumbers(s, l []Arg) bool {
	for _, a := range s {
		if a.Kind != ArgNumber || a.Key == "wr_id" {
			continue
		}
		if !slices.Contains(l, a) {
			return false
		}
	}
	return true
}

// otherNumbers lists the settings of a learner's call l that differ from
// the reference's s: "max=4096, not 1048576". One the learner's line asked
// for as the reference's, where the call ran with another (bench lowers
// mtu= to the ports' active MTU), says so.
func otherNumbers(s, l []Arg, line string) string {
	asked := map[string]string{}
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, "="); ok {
			k = strings.ToLower(k)
			if a, ok := argAliases[k]; ok {
				k = a
			}
			asked[k] = v
		}
	}
	show := func(k, v string) string {
		n, err := strconv.ParseUint(v, 10, 64)
		switch {
		case err != nil:
		case strings.HasSuffix(k, "_ns"):
			return time.Duration(n).String()
		case hexArgs[k]:
			return fmt.Sprintf("0x%x", n)
		}
		return v
	}
	var out []string
	for _, a := range s {
		if a.Kind != ArgNumber || a.Key == "wr_id" || slices.Contains(l, a) {
			continue
		}
		mine := "none"
		for _, b := range l {
			if b.Kind == ArgNumber && b.Key == a.Key {
				mine = show(b.Key, b.Value)
			}
		}
		if v, ok := asked[a.Key]; ok && mine != "none" {
			if n, err := number.ParseSize(v, 64); err == nil && strconv.FormatUint(n, 10) == a.Value {
				mine += " (asked for " + v + ", lowered by the run)"
			}
		}
		out = append(out, fmt.Sprintf("%s=%s, not %s", strings.TrimSuffix(a.Key, "_ns"), mine, show(a.Key, a.Value)))
	}
	return strings.Join(out, "; ")
}

// argAliases are the other names a learner may give a setting otherNumbers
// reads from the line.
var argAliases = map[string]string{"path_mtu": "mtu"}

// hexArgs are the settings shown in hex, as the programs print them.
var hexArgs = map[string]bool{"psn": true, "sq_psn": true, "rq_psn": true, "qkey": true, "rkey": true, "addr": true, "imm": true}

// named drops the numbers of a call's arguments.
func named(as []Arg) []Arg {
	var out []Arg
	for _, a := range as {
		if a.Kind != ArgNumber {
			out = append(out, a)
		}
	}
	return out
}

// callText prints a reference call in the learner's handles, what it
// names (its numbers are not compared).
func (m mapping) callText(c Call) string {
	parts := []string{c.Cmd}
	for _, a := range named(c.Args) {
		v := a.Value
		switch a.Kind {
		case ArgHandle:
			v = m.learner(v)
		case ArgDevice:
			if n, err := strconv.Atoi(strings.TrimPrefix(v, "dev")); err == nil {
				v = devRole(n)
			}
		}
		if a.Key != "" {
			v = a.Key + "=" + v
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, " ")
}

// settingDiffs compares the session settings, key by key: le's with ref's,
// where the step's cell changes them (from before to final) or its
// commands set them (rulesSet: the fault rules, even where the step's end
// shows them spent; a rule of a kind the cell adds (added) is to be
// spent until it is), and what the fabric holds where both step it by
// hand. One the learner has not touched since the step began (start) is
// work to do; one they set otherwise is a wrong turn. Settings the cell
// leaves alone are the learner's to choose: tracing on while they watch,
// say.
func settingDiffs(before, final, ref, le, start []string, rulesSet bool, added map[string][]string) []Diff {
	group := func(list []string) (map[string]string, []string) {
		out := map[string]string{}
		var keys []string
		for _, s := range list {
			k, v, _ := strings.Cut(s, "=")
			if _, ok := out[k]; !ok {
				keys = append(keys, k)
				out[k] = v
			} else {
				out[k] += "; " + v
			}
		}
		return out, keys
	}
	rv, rk := group(ref)
	lv, lk := group(le)
	sv, _ := group(start)
	bv, _ := group(before)
	fv, _ := group(final)
	keys := rk
	for _, k := range lk {
		if _, ok := rv[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []Diff
	for _, k := range keys {
		_, inL := lv[k]
		_, inR := rv[k]
		compared := bv[k] != fv[k] || k == "fault" && rulesSet || k == "pending" && inL && inR
		if !compared || lv[k] == rv[k] || k == "pending" && timersFired(lv[k], rv[k]) {
			continue
		}
		name, verb := settingName(k)
		d := Diff{Kind: DiffSetting, Pending: lv[k] == sv[k] || k == "fault" && toRetire(lv[k], rv[k], added),
			Text: fmt.Sprintf("%s %s %s; after this step %s %s", name, verb, orNone(lv[k]), them2(verb), orNone(rv[k]))}
		if k == "pending" {
			// What is still on the wire after a step is its outcome.
			d = spoiler(d, fmt.Sprintf("%s %s %s, not what this step leaves", name, verb, orNone(lv[k])))
		}
		out = append(out, d)
	}
	return out
}

// toRetire reports whether the fault rules le holds beyond ref's are all
// rules the step's cell adds (added: by action, the opcode= texts) that
// may yet act and be spent (nth=, count=) on a packet the cell's rule
// could pick: such a rule is listed until it has acted on the packet the
// step loses, and ref (the step's end) shows it no more.
func toRetire(le, ref string, added map[string][]string) bool {
	have := map[string]bool{}
	for _, r := range strings.Split(le, "; ") {
		have[r] = true
	}
	for _, r := range strings.Split(ref, "; ") {
		if r != "" && !have[r] {
			return false
		}
		delete(have, r)
	}
	for r := range have {
		words := strings.Fields(r)
		if len(words) == 0 || !strings.Contains(r, " nth=") && !strings.Contains(r, " count=") {
			return false
		}
		op := ""
		for _, w := range words[1:] {
			if v, ok := strings.CutPrefix(w, "opcode="); ok {
				op = v
			}
		}
		ops, ok := added[words[0]]
		if !ok || !slices.ContainsFunc(ops, func(o string) bool { return sameOpcodes(o, op) }) {
			return false
		}
	}
	return len(have) > 0
}

// sameOpcodes reports whether some packet opcode matches both opcode=
// texts ("" matches any).
func sameOpcodes(a, b string) bool {
	for _, op := range wire.Opcodes() {
		if (a == "" || op.Matches(a)) && (b == "" || op.Matches(b)) {
			return true
		}
	}
	return false
}

// rulesAdded are the fault rules the reference's records add, by action,
// with their opcode= texts, while the learner's (recs) have put fewer
// packets on the wire than the reference's: once as many are out, a rule
// still to act is one too many.
func rulesAdded(ref, recs []Record) map[string][]string {
	count := func(rs []Record) int {
		n := 0
		for _, r := range rs {
			n += len(r.Packets)
		}
		return n
	}
	out := map[string][]string{}
	if want := count(ref); want > 0 && count(recs) >= want {
		return out
	}
	for _, r := range ref {
		for _, c := range ranCalls(r) {
			if c.Cmd != "fault" || len(c.Args) == 0 {
				continue
			}
			op := ""
			for _, a := range c.Args[1:] {
				if a.Key == "opcode" {
					op = a.Value
				}
			}
			out[c.Args[0].Value] = append(out[c.Args[0].Value], op)
		}
	}
	return out
}

// setsRules reports whether a cell's commands add, remove or clear fault
// rules (fault and fault list only look).
func setsRules(recs []Record) bool {
	for _, r := range recs {
		for _, c := range ranCalls(r) {
			if c.Cmd == "fault" && len(c.Args) > 0 && c.Args[0].Value != "list" && c.Args[0].Value != "ls" {
				return true
			}
		}
	}
	return false
}

// timersFired reports whether what the learner's fabric holds differs
// from the reference's only by timers the learner let fire (more time
// passed: advance 1s where the step advances 20 ms). A timer that did
// something on firing shows elsewhere (a packet resent, a completion);
// one that did nothing (rxe's retransmit timer after the ACK) is no
// difference, and time cannot go back to re-arm it.
func timersFired(le, ref string) bool {
	l, r := pendingRe.FindStringSubmatch(le), pendingRe.FindStringSubmatch(ref)
	if l == nil || r == nil {
		return false
	}
	lt, _ := strconv.Atoi(l[2])
	rt, _ := strconv.Atoi(r[2])
	return l[1] == r[1] && lt < rt
}

// pendingRe reads what the fabric holds: "2 packets, 1 timer".
var pendingRe = regexp.MustCompile(`^(\d+) packets?, (\d+) timers?$`)

// them2 is the pronoun for a setting's name: it or they.
func them2(verb string) string {
	if verb == "are" {
		return "they are"
	}
	return "it is"
}

// settingName names a setting, with its verb.
func settingName(k string) (string, string) {
	switch {
	case k == "trace":
		return "tracing", "is"
	case k == "fabric":
		return "the fabric's delivery", "is"
	case k == "pending":
		return "what the fabric holds", "is"
	case k == "fault":
		return "the fault rules", "are"
	case k == "pp_stats":
		return "pp_stats' clock", "is"
	case strings.HasPrefix(k, "link."):
		return "device " + devSettingRole(strings.TrimPrefix(k, "link.")) + "'s link", "is"
	case strings.HasPrefix(k, "group."):
		return "the IP groups device " + devSettingRole(strings.TrimPrefix(k, "group.")) + "'s host joined", "are"
	}
	return k, "is"
}

func devSettingRole(d string) string {
	if n, err := strconv.Atoi(strings.TrimPrefix(d, "dev")); err == nil {
		return devRole(n)
	}
	return d
}

// mappedEnv shows the learner's session under the lesson's handles, so
// that the lesson's expect: lines read the learner's paired objects. The
// learner's own extra objects keep their names, marked "your".
type mappedEnv struct {
	Env
	m   mapping
	ref *snapshot
}

func (e mappedEnv) Object(h string) (any, bool) {
	if l, ok := e.m.s2l[h]; ok {
		return e.Env.Object(l)
	}
	if e.ref != nil && e.ref.by[h] != nil {
		return nil, false
	}
	return e.Env.Object(h)
}

func (e mappedEnv) Handles() []string {
	var out []string
	pos := map[string]int{}
	for i, o := range e.ref.objs {
		pos[o.h] = i
	}
	var extra []string
	for _, h := range e.Env.Handles() {
		if s, ok := e.m.l2s[h]; ok {
			out = append(out, s)
		} else {
			extra = append(extra, "your "+h)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return pos[out[a]] < pos[out[b]] })
	return append(out, extra...)
}

// translateRecords renames the CQs, created handles and calls' handles
// of the learner's records to the lesson's, as name does.
func translateRecords(recs []Record, name func(string) string) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.Completions = append([]Completion(nil), r.Completions...)
		for k := range r.Completions {
			r.Completions[k].CQ = name(r.Completions[k].CQ)
		}
		var created []string
		for _, h := range r.Created {
			created = append(created, name(h))
		}
		r.Created = created
		r.Calls = translateCalls(r.Calls, name)
		out[i] = r
	}
	return out
}

// translateCalls names the handles of calls as name does (commands
// contains [poll_cq cq1] reads them).
func translateCalls(calls []Call, name func(string) string) []Call {
	out := make([]Call, len(calls))
	for i, c := range calls {
		c.Args = append([]Arg(nil), c.Args...)
		for k, a := range c.Args {
			if a.Kind == ArgHandle {
				c.Args[k].Value = name(a.Value)
			}
		}
		out[i] = c
	}
	return out
}

// lessonNames names a learner's handle as the lesson does: by m; a live
// object m leaves unpaired is "your cq1", the learner's own, which no
// name of the lesson's stands for; an object gone by now (the step
// destroyed it) by the pairing at the step's start where its lesson name
// is free, else by its own name (one the step made and destroyed) where
// that names no other object of the learner's, else "your cq1".
func (j *Judge) lessonNames(m mapping) func(string) string {
	dead := j.deadPairs()
	return func(h string) string {
		if s, ok := m.l2s[h]; ok {
			return s
		}
		if !handlePattern.MatchString(h) {
			return h
		}
		if _, live := j.env.Object(h); live {
			return "your " + h
		}
		if s, ok := dead[h]; ok {
			return s
		}
		if s, ok := j.startMap.l2s[h]; ok && m.s2l[s] == "" {
			return s
		}
		if l := m.s2l[h]; l != "" && l != h {
			return "your " + h
		}
		return h
	}
}

// numbersIn matches the numbers of a reason: decimal, or hex with 0x.
var numbersIn = regexp.MustCompile(`0[xX][0-9a-fA-F]+|[0-9]+`)

// reasonShape is a failure's reason with its numbers left out: the same
// reason counts other objects, or names other QP numbers, in another
// session ("2 QPs still use this CQ" is the reason "1 QP" is).
func reasonShape(why string) string { return numbersIn.ReplaceAllString(why, "#") }

// armDiffs compares the limits the step arms its SRQs at (modify_srq
// srq_limit=N), in order, a re-arm before data moves replacing the arm
// before it: a limit disarms itself once reached, so an SRQ armed at 4
// where the step arms it at 3 may end the step as the reference's does.
func (j *Judge) armDiffs(m mapping, recs []Record) []Diff {
	arms := func(recs []Record, ref func(string) string) map[string][]string {
		out := map[string][]string{}
		fresh := map[string]bool{} // armed since data last moved: a re-arm replaces it
		for _, r := range recs {
			for _, c := range ranCalls(r) {
				// Data may have met the SRQ: a command that sends or runs
				// the fabric, or a look that found completions.
				if movesData[c.Cmd] && !looksForData[c.Cmd] || len(r.Completions) > 0 {
					clear(fresh)
				}
				if c.Cmd != "modify_srq" {
					continue
				}
				for _, a := range c.Args {
					if a.Kind == ArgNumber && (a.Key == "srq_limit" || a.Key == "limit") {
						h := ref(firstHandle(c))
						if fresh[h] {
							out[h] = out[h][:len(out[h])-1]
						}
						out[h], fresh[h] = append(out[h], a.Value), true
					}
				}
			}
		}
		return out
	}
	want := arms(j.tg.recs, func(h string) string { return h })
	mine := arms(recs, func(h string) string { return m.l2s[h] })
	var out []Diff
	for _, h := range slices.Sorted(maps.Keys(want)) {
		w, l := want[h], mine[h]
		if slices.Equal(w, l) {
			continue
		}
		d := Diff{Kind: DiffAttr, Handle: m.learner(h), Ref: h}
		switch {
		case len(l) < len(w) && slices.Equal(l, w[:len(l)]):
			d.Pending = true
			d.Text = fmt.Sprintf("this step arms %s's limit at %s; you have not yet", m.learner(h), w[len(l)])
		default:
			d.Text = fmt.Sprintf("%s's limit was armed at %s; this step arms it at %s (an arm data has met stays: lesson reset starts the step over)",
				m.learner(h), strings.Join(l, ", then "), strings.Join(w, ", then "))
		}
		out = append(out, d)
	}
	return out
}
