package lessons

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// Unmet says why an expectation does not hold, in a sentence a learner can
// act on.
type Unmet struct {
	Expect *Expect
	Why    string
	// Handle is the object whose state is wrong (qp1 for qp*.state when
	// qp1 is the one), or "" for completions, errors and the like.
	Handle string
	// Final is set when no later command can meet the expectation: a
	// count that only grows is past what it may be.
	Final bool
	// Order is set for commands contains [A, B] when the step ran them
	// all, but not in that order.
	Order bool
	// Short names the post verb a calls.CMD count below an == or >= goal,
	// or a commands contains [...] goal, still awaits: one more would
	// meet it.
	Short string
}

func (u *Unmet) Error() string { return u.Why }

// evalCtx is what an expectation is checked against: the session and the
// records of the step's commands.
type evalCtx struct {
	env  Env
	recs []Record
	devs []string
	// packets is set when the records hold the packets of the step: the
	// backend shows its trace, and the session recorded it.
	packets bool
	// gone reports whether an object the step started with (a lesson's
	// handle) is no longer in the session; nil where that is not known.
	gone func(h string) bool
}

func newEvalCtx(env Env, recs []Record) *evalCtx {
	x := &evalCtx{env: env}
	for _, r := range recs {
		if !TutorCommand(r.Cmd) {
			x.recs = append(x.recs, r)
			x.packets = x.packets || r.Packets != nil
		}
	}
	return x
}

// deviceName maps A and B to device names, as the shell does: A is the
// first device, B the second, or the first again where there is one.
func (x *evalCtx) deviceName(s string) string {
	if x.devs == nil {
		if p := x.env.Provider(); p != nil {
			if ds, err := p.Devices(); err == nil {
				for _, d := range ds {
					x.devs = append(x.devs, d.Name())
				}
			}
		}
	}
	switch {
	case strings.EqualFold(s, "A") && len(x.devs) > 0:
		return x.devs[0]
	case strings.EqualFold(s, "B") && len(x.devs) > 1:
		return x.devs[1]
	case strings.EqualFold(s, "B") && len(x.devs) > 0:
		return x.devs[0]
	}
	return s
}

// Check reports whether the expectation holds in env, given the records of
// the step's commands: nil when it does, an *Unmet that says why not
// otherwise.
func (e *Expect) Check(env Env, recs []Record) error {
	return e.check(newEvalCtx(env, recs))
}

func (e *Expect) unmet(format string, a ...any) error {
	return &Unmet{Expect: e, Why: fmt.Sprintf(format, a...)}
}

func (e *Expect) check(x *evalCtx) error {
	want, err := e.want(x)
	if err != nil {
		var u *unresolved
		if errors.As(err, &u) {
			return e.unmet("%s, so %s cannot hold yet", u.msg, e.Text)
		}
		return e.unmet("%v", err)
	}
	return e.checkWant(x, want)
}

// checkWant checks the subject against want, the values of the right-hand
// side.
func (e *Expect) checkWant(x *evalCtx, want []value) error {
	s := e.subj
	switch s.kind {
	case subjField:
		if strings.HasSuffix(s.handle, "*") {
			var n int
			for _, h := range x.env.Handles() {
				m := handlePattern.FindStringSubmatch(h)
				if m == nil || m[1] != s.prefix || m[2] == "*" {
					continue
				}
				n++
				if err := e.checkField(x, h, want); err != nil {
					return err
				}
			}
			if n == 0 {
				return e.unmet("there is no %s yet", kindNouns[s.prefix])
			}
			return nil
		}
		return e.checkField(x, s.handle, want)
	case subjBytes:
		mr, err := e.mr(x)
		if err != nil {
			return err
		}
		b := mr.Bytes()
		if s.hi > len(b) {
			return e.unmet("%s is %d bytes long; it has no bytes %d to %d", s.handle, len(b), s.lo, s.hi)
		}
		got := value{t: tBytes, b: append([]byte(nil), b[s.lo:s.hi]...)}
		err = e.compare(e.subjText(), got, want[0])
		if u, ok := err.(*Unmet); ok {
			u.Handle = s.handle
		}
		return err
	case subjView:
		return e.checkView(x, want[0])
	case subjPackets:
		return e.checkPackets(x, want)
	case subjError:
		return e.checkError(x, want[0])
	case subjCompletions:
		var got []value
		for _, r := range x.recs {
			for _, c := range r.Completions {
				if s.handle == "" || strings.EqualFold(c.CQ, s.handle) {
					got = append(got, wcValue(s.field, c.WC))
				}
			}
		}
		if _, ok := x.env.Object(s.handle); s.handle != "" && !ok && !polled(x.recs, s.handle) {
			// A CQ that is not there polled nothing: cq2 completions == []
			// would hold of a misspelt CQ. One the step polled, then
			// destroyed, holds what the polls found.
			return e.unmet("there is no %s (yet)", s.handle)
		}
		return e.compareList(x, got, want)
	case subjCommands:
		var got []value
		for _, r := range x.recs {
			for _, c := range ranCalls(r) {
				got = append(got, callValue(c, want))
			}
		}
		return e.compareList(x, got, want)
	case subjCalls:
		n := uint64(0)
		call := value{t: tCall, s: s.field, h: s.names}
		for _, r := range x.recs {
			calls := r.Calls
			if r.Err != nil && verbs.ErrnoOf(r.Err) == 0 && len(calls) > 0 {
				calls = calls[:len(calls)-1] // refused before any verb ran: no call
			}
			for _, c := range calls {
				if c.Cmd == s.field && callValue(c, []value{call}).equal(call) {
					n++
				}
			}
		}
		if e.compare(e.subjText(), value{t: tNum, n: n}, want[0]) == nil {
			return nil
		}
		times := "times"
		if n == 1 {
			times = "time"
		}
		err := e.unmet("this step ran %s %d %s; the goal is %s %s", call, n, times, e.op, want[0])
		err.(*Unmet).Final = n > want[0].n && (e.op == "==" || e.op == "<=" || e.op == "<")
		if n < want[0].n && (e.op == "==" || e.op == ">=" || e.op == ">") {
			err.(*Unmet).Short = s.field
		}
		return err
	case subjHandles:
		var got []value
		for _, h := range x.env.Handles() {
			got = append(got, value{t: tName, s: h})
		}
		return e.compareList(x, got, want)
	}
	return e.unmet("cannot check %s", e.Text)
}

func (e *Expect) checkField(x *evalCtx, h string, want []value) error {
	err := e.checkField1(x, h, want)
	if u, ok := err.(*Unmet); ok {
		u.Handle = h
	}
	return err
}

func (e *Expect) checkField1(x *evalCtx, h string, want []value) error {
	s := e.subj
	o, ok := x.env.Object(h)
	if !ok {
		return e.unmet("there is no %s (yet)", h)
	}
	name := h + "." + s.field
	var got value
	if s.prefix == "cq" && s.field == "unpolled" {
		wcs, ok := x.env.Unpolled(h, 0, 0)
		if !ok {
			return e.unmet("%s's completions cannot be seen without polling them on this backend", h)
		}
		return e.compare(name, value{t: tNum, n: uint64(len(wcs))}, want[0])
	}
	if s.field == "gid[N]" {
		name = fmt.Sprintf("%s.gid[%d]", h, s.gidIdx)
		c, ok := o.(verbs.Context)
		if !ok {
			return e.unmet("%s is not a device context", h)
		}
		g, err := c.QueryGID(1, s.gidIdx)
		if err != nil {
			return e.unmet("ibv_query_gid(%s, 1, %d) failed: %v", h, s.gidIdx, err)
		}
		got = value{t: tGID, s: g.String()}
	} else {
		spec := fieldTables[s.prefix][s.field]
		v, err := spec.get(x, o)
		if err != nil {
			return e.unmet("reading %s: %v", name, err)
		}
		got = v
	}
	return e.compare(name, got, want[0])
}

// checkView reads a typed view of an MR's bytes: a number (u32[2]) or the
// text at an offset (str[16]).
func (e *Expect) checkView(x *evalCtx, want value) error {
	s := e.subj
	mr, err := e.mr(x)
	if err != nil {
		return err
	}
	b := mr.Bytes()
	name := e.subjText()
	var got value
	if s.view == "str" {
		if s.lo >= len(b) {
			return e.unmet("%s is %d bytes long; it has no byte %d", s.handle, len(b), s.lo)
		}
		end := s.lo
		for end < len(b) && end-s.lo < 4096 && b[end] != 0 {
			end++
		}
		got = value{t: tBytes, b: append([]byte(nil), b[s.lo:end]...)}
	} else {
		w := viewSize(s.view)
		at := s.lo * w
		if at+w > len(b) {
			return e.unmet("%s is %d bytes long; %s would read bytes %d to %d", s.handle, len(b), name, at, at+w)
		}
		var buf [8]byte
		if strings.HasPrefix(s.view, "be") {
			copy(buf[8-w:], b[at:at+w])
			got = value{t: tNum, n: binary.BigEndian.Uint64(buf[:])}
		} else {
			copy(buf[:w], b[at:at+w])
			got = value{t: tNum, n: binary.LittleEndian.Uint64(buf[:])}
		}
	}
	err = e.compare(name, got, want)
	if u, ok := err.(*Unmet); ok {
		u.Handle = s.handle
	}
	return err
}

// mr is the memory region the subject names.
func (e *Expect) mr(x *evalCtx) (verbs.MR, error) {
	o, ok := x.env.Object(e.subj.handle)
	if !ok {
		return nil, e.unmet("there is no %s (yet)", e.subj.handle)
	}
	mr, ok := o.(verbs.MR)
	if !ok {
		return nil, e.unmet("%s is not a memory region", e.subj.handle)
	}
	return mr, nil
}

// handleOf names a verbs object by its handle in the session, "none" for
// nil, "an object of no handle" for one the session did not make.
func (x *evalCtx) handleOf(o any) string {
	if o == nil {
		return "none"
	}
	for _, h := range x.env.Handles() {
		if obj, ok := x.env.Object(h); ok && obj == o {
			return h
		}
	}
	return "an object of no handle"
}

// compare checks one value.
func (e *Expect) compare(name string, got, want value) error {
	e.saw(got)
	ok := false
	switch e.op {
	case "==":
		ok = got.equal(want)
	case "!=":
		ok = !got.equal(want)
	case "<":
		ok = got.n < want.n
	case "<=":
		ok = got.n <= want.n
	case ">":
		ok = got.n > want.n
	case ">=":
		ok = got.n >= want.n
	case "contains":
		switch got.t {
		case tAccess:
			ok = got.n&want.n == want.n
		case tBytes:
			ok = bytes.Contains(got.b, want.b)
		}
	}
	if ok {
		return nil
	}
	if got.t == tErrno {
		switch {
		case got.n == 0 && !got.fail && e.op == "==":
			return e.unmet("no command failed in this step; the goal is a command that fails with %s", want)
		case e.op == "==":
			return e.unmet("the step's last failure was %s; the goal is %s", got, want)
		}
		return e.unmet("the step's last failure was %s, which the goal rules out", got)
	}
	switch e.op {
	case "==":
		return e.unmet("%s is %s; the goal is %s", name, got, want)
	case "!=":
		return e.unmet("%s is %s, which the goal rules out", name, got)
	case "contains":
		return e.unmet("%s is %s, without %s", name, got, want)
	}
	return e.unmet("%s is %s; the goal is %s %s", name, got, e.op, want)
}

// checkPackets checks an expectation about the packets the step's commands
// put on the wire: their opcodes, how many, how many resent or dropped.
func (e *Expect) checkPackets(x *evalCtx, want []value) error {
	var got []value
	n := uint64(0)
	for _, r := range x.recs {
		for _, p := range r.Packets {
			switch {
			case e.subj.field == "retransmissions" && p.Retransmitted:
				n++
			case e.subj.field == "drops" && p.Dropped:
				n++
			}
			got = append(got, value{t: tWireOp, s: p.Opcode})
		}
	}
	if !x.packets {
		return e.unmet("the packets of this step are not known: the backend shows no trace (the lesson needs: trace)")
	}
	if e.subj.field == "opcode" && !e.subj.count && e.op == "==" {
		err := e.compareList(x, got, want)
		if u, ok := err.(*Unmet); ok {
			// Packets are only added: a list that does not begin the
			// goal's never will.
			u.Final = !prefixOf(got, want)
		}
		return err
	}
	if e.subj.field == "retransmissions" || e.subj.field == "drops" {
		err := e.compare(e.subjText(), value{t: tNum, n: n}, want[0])
		if u, ok := err.(*Unmet); ok {
			// The step's packets only grow in number.
			u.Final = n > want[0].n && (e.op == "==" || e.op == "<=" || e.op == "<")
		}
		return err
	}
	return e.compareList(x, got, want)
}

// prefixOf reports whether got is the start of want, element by element.
func prefixOf(got, want []value) bool {
	if len(got) > len(want) {
		return false
	}
	for i := range got {
		if !got[i].equal(want[i]) {
			return false
		}
	}
	return true
}

// compareList checks a list subject: its elements, or its .count.
func (e *Expect) compareList(x *evalCtx, got, want []value) error {
	name := e.subjText()
	if e.subj.count {
		return e.compare(name, value{t: tNum, n: uint64(len(got))}, want[0])
	}
	e.saw(got...)
	ok := false
	switch e.op {
	case "==", "!=":
		eq := len(got) == len(want)
		for i := 0; eq && i < len(got); i++ {
			eq = got[i].equal(want[i])
		}
		ok = eq == (e.op == "==")
	case "contains":
		if e.subj.kind == subjCommands {
			ok = subsequence(got, want)
			break
		}
		ok = containsAll(got, want)
	}
	if ok {
		return nil
	}
	got, want = x.nameQPNs(got), x.nameQPNs(want)
	gotText := listText(got)
	if len(got) == 0 {
		switch e.subj.kind {
		case subjCompletions:
			from := "any CQ"
			if e.subj.handle != "" {
				from = e.subj.handle
			}
			return e.unmet("no completion was polled from %s in this step; the goal is %s", from, e.goalText(want))
		case subjCommands:
			if e.op == "contains" {
				if err := x.destroyedTooSoon(e, got, want); err != nil {
					return err
				}
			}
			return e.unmet("no command succeeded in this step yet; the goal is %s", e.goalText(want))
		}
	}
	switch e.op {
	case "!=":
		return e.unmet("%s is %s, which the goal rules out", name, gotText)
	case "contains":
		if e.subj.kind == subjCommands && len(want) > 1 {
			if err := x.destroyedTooSoon(e, got, want); err != nil {
				return err
			}
			err := e.unmet("%s is %s, without %s in that order", name, gotText, listText(want))
			err.(*Unmet).Order = containsAll(got, want)
			err.(*Unmet).Short = postAwaited(got, want)
			return err
		}
		if e.subj.kind == subjCommands {
			if err := x.destroyedTooSoon(e, got, want); err != nil {
				return err
			}
		}
		return e.unmet("%s is %s, without %s", name, gotText, listText(want))
	}
	return e.unmet("%s is %s; the goal is %s", name, gotText, listText(want))
}

// callValue is a call as commands lists it: its name, with the handles it
// names where some command of want names one (else the name alone, which
// is all the comparison reads); repeat and do by name, their commands
// follow them.
func callValue(c Call, want []value) value {
	v := value{t: tCall, s: c.Cmd}
	if c.Cmd == "repeat" || c.Cmd == "do" || !slices.ContainsFunc(want, func(w value) bool { return len(w.h) > 0 }) {
		return v // a repeat's handles are its commands'
	}
	for _, a := range c.Args {
		if a.Kind == ArgHandle && !slices.Contains(v.h, a.Value) {
			v.h = append(v.h, a.Value)
		}
	}
	return v
}

// containsAll reports whether got holds every value of want, each of
// got's values standing for one of want's at most.
func containsAll(got, want []value) bool {
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && g.equal(w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// destroys are the commands that end the object they name first.
var destroys = map[string]bool{"destroy_qp": true, "destroy_cq": true, "destroy_srq": true, "destroy_ah": true,
	"destroy_comp_channel": true, "dereg_mr": true, "dealloc_pd": true, "close_xrcd": true, "close_device": true}

// destroyedTooSoon is the final *Unmet of commands contains want when it
// can no longer hold: a call of want not yet matched in its order ends an
// object the step started with that is gone already (freed by another
// command, or ended out of order), and an object ends only once. Nil
// otherwise.
func (x *evalCtx) destroyedTooSoon(e *Expect, got, want []value) error {
	if x.gone == nil {
		return nil
	}
	i := 0
	for _, g := range got {
		if i < len(want) && g.equal(want[i]) {
			i++
		}
	}
	for _, w := range want[i:] {
		if w.t == tCall && destroys[w.s] && len(w.h) > 0 && x.gone(w.h[0]) {
			err := e.unmet("%s is gone already, so %s can no longer come where this step's goal puts it: %s in that order",
				w.h[0], w, listText(want))
			err.(*Unmet).Final = true
			return err
		}
	}
	return nil
}

// postAwaited is the first post verb of want that got, matched in order
// as far as it goes, still lacks ("" for none): a commands goal that
// only another post could meet.
func postAwaited(got, want []value) string {
	i := 0
	for _, g := range got {
		if i < len(want) && g.equal(want[i]) {
			i++
		}
	}
	for _, w := range want[i:] {
		if w.t == tCall && (w.s == "post_send" || w.s == "post_recv" || w.s == "post_srq_recv") {
			return w.s
		}
	}
	return ""
}

// subsequence reports whether want's values occur in got in their order,
// others between them allowed.
func subsequence(got, want []value) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g.equal(want[i]) {
			i++
		}
	}
	return i == len(want)
}

// nameQPNs shows QP numbers with the handles of the QPs that have them
// (0x000012 (qp2)): the numbers alone say nothing to a learner.
func (x *evalCtx) nameQPNs(vs []value) []value {
	out := make([]value, len(vs))
	for i, v := range vs {
		out[i] = v
		if v.t != tQPN {
			continue
		}
		var names []string
		for _, h := range x.env.Handles() {
			if o, ok := x.env.Object(h); ok {
				if q, isQP := o.(verbs.QP); isQP && uint64(q.Num()) == v.n {
					names = append(names, h)
				}
			}
		}
		if len(names) > 0 {
			out[i].s = fmt.Sprintf("0x%06x (%s)", v.n, strings.Join(names, " or "))
		}
	}
	return out
}

// goalText says what a list expectation wants: "one that contains X" or
// the list itself.
func (e *Expect) goalText(want []value) string {
	if e.op == "contains" {
		return "one that contains " + listText(want)
	}
	return listText(want)
}

// listText prints a list, runs of one value as VALUE*N.
func listText(vs []value) string {
	var parts []string
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j].equal(vs[i]) && vs[j].t == vs[i].t {
			j++
		}
		if j-i > 3 {
			parts = append(parts, fmt.Sprintf("%s*%d", vs[i], j-i))
		} else {
			for k := i; k < j; k++ {
				parts = append(parts, vs[k].String())
			}
		}
		i = j
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkError checks error == X: some command of the step failed with errno
// X; error == none: no verb failed (a mistyped command, which no verb ran,
// does not count); error == any: some command failed; != the opposite.
// So a typo along the way does not spoil a step's goal.
func (e *Expect) checkError(x *evalCtx, want value) error {
	var failed []value
	verbFailed := false
	for _, r := range x.recs {
		if r.Err == nil {
			continue
		}
		if n := verbs.ErrnoOf(r.Err); n != 0 {
			failed = append(failed, value{t: tErrno, n: uint64(n)})
			verbFailed = true
		} else {
			msg := firstLine(r.Err.Error())
			msg, _, _ = strings.Cut(msg, "; hint:")
			failed = append(failed, value{t: tErrno, fail: true, s: msg})
		}
	}
	if len(failed) > 0 {
		e.saw(failed[len(failed)-1])
	} else {
		e.saw(value{t: tErrno})
	}
	holds := false
	switch {
	case want.any:
		holds = len(failed) > 0
	case want.n == 0:
		holds = !verbFailed
	default:
		for _, f := range failed {
			holds = holds || f.equal(want)
		}
	}
	if e.op == "!=" {
		holds = !holds
	}
	if holds {
		return nil
	}
	last := value{t: tErrno}
	if len(failed) > 0 {
		last = failed[len(failed)-1]
	}
	switch {
	case e.op == "!=":
		return e.unmet("a command of the step failed with %s, which the goal rules out", want)
	case len(failed) == 0:
		return e.unmet("no command failed in this step; the goal is a command that fails with %s", want)
	case want.n == 0 && !want.any:
		return e.unmet("a command of the step failed with %s; the goal is none", last)
	}
	return e.unmet("the step's last failure was %s; the goal is %s", last, want)
}

// polled reports whether a poll_cq of recs polled CQ h.
func polled(recs []Record, h string) bool {
	for _, r := range recs {
		for _, c := range ranCalls(r) {
			if c.Cmd == "poll_cq" && strings.EqualFold(firstHandle(c), h) {
				return true
			}
		}
	}
	return false
}
