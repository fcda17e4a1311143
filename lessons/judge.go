package lessons

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// A Judge decides whether a learner has reached a step's goal, the way
// Learn Git Branching judges a level: it replays the lesson's own cells up
// to and including the step's in a reference session on the simulator (the
// shadow: same seed, as many devices), and compares the learner's session
// with it — what the step's cell did, not what the learner typed:
//
//   - objects, matched by structure rather than handle number (a QP by its
//     PD, CQs and SRQ; an MR by its PD): their types, states and the
//     attributes of the transitions made, access flags exactly, capacities
//     as minimums; an extra object of the learner's is let be;
//   - the work requests the step posted, per queue (opcode, lengths,
//     targets), the completions it polled, per CQ and in order, and those
//     left in each CQ; the bytes it changed;
//   - the commands the step makes fail (its "! " lines), with their errnos;
//     the commands that only show something (query_port, mem), which the
//     learner must run too; the fabric's settings (tracing, faults);
//   - the lesson's expect: lines, read through the pairing of objects.
//
// Values random by nature — QP numbers, PSNs, keys, addresses, wr_ids —
// are never compared; a PSN only as a relation (does each side's rq_psn
// match its peer's sq_psn?), bytes holding a key or address as the key or
// address of the paired object. The tutor, the player and the tests all
// judge through it.
type Judge struct {
	l      *Lesson
	env    Env // the learner's session
	absent []*SkippedSection
	// wrids are the wr_ids the lesson's expectations read, by CQ
	// (Lesson.readWRIDs), which the learner's work requests must give.
	wrids map[string]map[uint64]bool

	gidsL gidTables
	ref   *Reference
	own   bool // the judge made ref, and closes it

	step     int
	tg       *target   // what the differences are being computed against
	ready    bool      // the step has a cell and its reference is built
	start    *snapshot // the learner's session when the step began
	startMap mapping
	inFlight []held                   // work posted before the step the device still holds
	in       *stepStart               // what match keeps from the step's start
	prev     map[string]string        // the last pairing found
	errAt    map[string]errNote       // learner QPs seen in ERR: when
	built    map[string]string        // reference → learner handles made by a replayed cell
	noted    map[string]verbs.QPState // learner QP states last seen
	// last is the learner's session at the last verdict: the state a
	// command that follows was typed in. outOfPlace marks the records
	// of failures the step expects that came in another state than the
	// reference's: placeEarly where that state is the step's start (a
	// probe before the setup it probes), placeElsewhere otherwise.
	last       *snapshot
	lastCount  int // how many of the step's learner records there were at last
	outOfPlace map[int]place
	// err is why the reference could not be built; the judge then judges by
	// the step's expect: lines alone.
	err error
}

// errNote is where a learner's QP was first seen in the error state.
type errNote struct {
	cell int
	line string
}

// NewJudge makes a judge of lesson l for the learner's session env, with
// a reference session of its own (env.Shadow). The steps in absent
// (sections the backend cannot play) are left out of the reference as
// they are out of the lesson.
func NewJudge(env Env, l *Lesson, absent []*SkippedSection) *Judge {
	j := NewJudgeWith(env, NewReference(l, absent, env.Shadow))
	j.own = true
	return j
}

// NewJudgeWith makes a judge of the learner's session env that compares
// it with ref, which other judges may share.
func NewJudgeWith(env Env, ref *Reference) *Judge {
	return &Judge{l: ref.l, env: env, absent: ref.absent, ref: ref, prev: map[string]string{}, errAt: map[string]errNote{},
		noted: map[string]verbs.QPState{}, step: -1, outOfPlace: map[int]place{}, wrids: ref.l.readWRIDs()}
}

// Close ends the reference session, when the judge made it.
func (j *Judge) Close() error {
	if !j.own {
		return nil
	}
	return j.ref.Close()
}

// Err says why the reference session could not be built (the lesson's own
// cell failed in it): the step cannot be judged then.
func (j *Judge) Err() error { return j.err }

// Begin starts judging step i: the reference is brought to the end of the
// step's cell, and the learner's session as it is now is the step's
// start.
func (j *Judge) Begin(i int) error {
	j.step, j.ready, j.err, j.built, j.in = i, false, nil, map[string]string{}, nil
	if i < 0 || i >= len(j.l.Steps) || j.l.Steps[i].Cell == nil || j.absent[i] != nil {
		j.env.RecordPackets(false)
		return nil
	}
	j.env.RecordPackets(wantsPackets(j.l.Steps[i].Cell))
	if err := j.ref.At(i); err != nil {
		j.err = err
		return err
	}
	j.tg = &target{after: j.ref.after, recs: j.ref.cellRecs}
	j.start = takeSnapshot(j.env, &j.gidsL)
	j.start.keepBytes()
	j.inFlight = inFlight(j.start, j.env.Records(0))
	j.startMap = match(j.ref.before, j.start, j.prev, nil)
	j.in = &stepStart{lock: unambiguous(j.ref.before, j.start, j.startMap), ref: j.ref.before, le: j.start}
	for s, l := range j.startMap.s2l {
		j.prev[s] = l
	}
	j.noteStates(j.start)
	j.last, j.lastCount, j.outOfPlace = j.start, 0, map[int]place{}
	j.ready = true
	return nil
}

// wantsPackets reports whether a cell's expectations count packets.
func wantsPackets(c *Cell) bool {
	for _, e := range c.Expects {
		if e.subj.kind == subjPackets {
			return true
		}
	}
	return false
}

// A Reference is a lesson's reference session: the simulator replaying the
// lesson's own cells, step by step, which judges compare learners with.
// Judges of several learners may share one (grading a class, trying many
// wrong paths), as long as it is at the step they judge.
type Reference struct {
	l      *Lesson
	absent []*SkippedSection
	open   func() (Env, func() error, error)

	sh      Env
	shClose func() error
	shAt    int // it has run the cells of the steps before shAt
	gids    gidTables
	asked   map[string]map[string]string // handle → the capacities its command gave, key → value

	step     int
	before   *snapshot // the reference before step's cell
	after    *snapshot // and after it
	cellRecs []Record  // what the cell's commands returned
	cmdRecs  []Record  // the same, one per command of the cell in order
	inFlight []held    // work posted before the cell the device still holds
	// trail is the reference after each command of the cell but the last:
	// a learner whose session matches one is on the way.
	trail []*target
	// fine is the reference after each single command of the cell, its
	// repeat and do lines unrolled (fineTrail builds it when first asked;
	// fineAt is the step it is of, -1 for none yet).
	fine   []*target
	fineAt int
	// effect is set when the cell changes what a snapshot shows, or posts,
	// polls or fails; a cell that does not (query_port, an empty poll) asks
	// the learner to run its commands.
	effect bool
}

// target is a state of the reference to compare a learner's session
// with: after the step's cell, or after some of its commands.
type target struct {
	after *snapshot
	recs  []Record // what the cell's commands so far returned
}

// maxKept is the largest MR whose bytes the trail keeps a copy of.
const maxKept = 1 << 20

// NewReference makes the reference of lesson l, without the steps absent
// marks; open opens a fresh simulator session for it (Env.Shadow).
func NewReference(l *Lesson, absent []*SkippedSection, open func() (Env, func() error, error)) *Reference {
	if len(absent) < len(l.Steps) {
		absent = append(append([]*SkippedSection(nil), absent...), make([]*SkippedSection, len(l.Steps)-len(absent))...)
	}
	return &Reference{l: l, absent: absent, open: open, step: -1, fineAt: -1}
}

// Close ends the reference session.
func (r *Reference) Close() error {
	if r.shClose == nil {
		return nil
	}
	err := r.shClose()
	r.sh, r.shClose, r.shAt, r.step = nil, nil, 0, -1
	return err
}

// At brings the reference to the end of step i's cell: it replays the
// cells since where it is, or from the start when i is behind it.
func (r *Reference) At(i int) error {
	if r.sh != nil && r.step == i {
		return nil
	}
	if r.sh == nil || r.shAt > i {
		r.Close()
		sh, closeFn, err := r.open()
		if err != nil {
			return fmt.Errorf("the reference session: %w", err)
		}
		if err := switchOn(sh, r.l); err != nil {
			closeFn()
			return fmt.Errorf("the reference session: %w", err)
		}
		r.sh, r.shClose, r.shAt = sh, closeFn, 0
		r.asked = map[string]map[string]string{}
	}
	r.step = -1
	for ; r.shAt < i; r.shAt++ {
		if c := r.l.Steps[r.shAt].Cell; c != nil && r.absent[r.shAt] == nil {
			if _, err := r.run(c); err != nil {
				r.Close()
				return err
			}
		}
	}
	r.before = takeSnapshot(r.sh, &r.gids)
	r.inFlight = inFlight(r.before, r.sh.Records(0)[:r.before.recs])
	r.trail = nil
	// The packets the cell puts on the wire, where its expectations count
	// them: the learner's are recorded too (Judge.Begin).
	r.sh.RecordPackets(wantsPackets(r.l.Steps[i].Cell))
	recs, err := r.runTrail(r.l.Steps[i].Cell)
	r.sh.RecordPackets(false)
	if err != nil {
		r.Close()
		return err
	}
	r.shAt, r.step = i+1, i
	r.cmdRecs = recs
	r.cellRecs = r.sh.Records(r.before.recs)
	r.after = takeSnapshot(r.sh, &r.gids)
	r.after.fillUnpolled(r.sh, nil, 0)
	r.effect = changed(r.before, r.after, r.cellRecs)
	r.after.still = true
	for _, rec := range r.cellRecs {
		r.after.sends = r.after.sends || len(rec.Posts) > 0
		r.after.still = r.after.still && len(rec.Posts) == 0 && len(rec.Completions) == 0
	}
	for _, o := range r.after.objs {
		r.after.still = r.after.still && len(o.wcs) == 0
	}
	for _, sn := range []*snapshot{r.before, r.after} {
		for _, o := range sn.objs {
			o.asked = r.asked[o.h]
		}
	}
	return nil
}

// Handles lists the handles of the reference at its step, those before
// the step's cell and those it made, in creation order.
func (r *Reference) Handles() []string {
	if r.before == nil || r.after == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, sn := range []*snapshot{r.before, r.after} {
		for _, o := range sn.objs {
			if !seen[o.h] {
				seen[o.h] = true
				out = append(out, o.h)
			}
		}
	}
	return out
}

// runTrail runs the step's cell as run does, keeping the reference's state
// after each command but the last in the trail.
func (r *Reference) runTrail(c *Cell) ([]Record, error) {
	var cmds []Command
	for _, cmd := range c.Commands {
		if !isComment(cmd.Text) {
			cmds = append(cmds, cmd)
		}
	}
	var recs []Record
	for k, cmd := range cmds {
		rs, err := r.run(&Cell{Commands: []Command{cmd}})
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
		if k == len(cmds)-1 {
			break
		}
		r.trail = append(r.trail, r.point(r.sh, r.before.recs))
	}
	return recs, nil
}

// point is a state of the trail: session sh now, with the records of the
// cell since record start, the MR bytes kept (up to maxKept).
func (r *Reference) point(sh Env, start int) *target {
	sn := takeSnapshot(sh, &r.gids)
	sn.fillUnpolled(sh, nil, 0)
	for _, o := range sn.objs {
		o.asked = r.asked[o.h]
		if o.kind != "mr" || o.mrBytes == nil {
			continue
		}
		if o.length <= maxKept {
			kept := append([]byte(nil), o.mrBytes()...)
			o.mrBytes = func() []byte { return kept }
		} else {
			o.mrBytes = nil
		}
	}
	recs := sh.Records(start)
	for _, rec := range recs {
		sn.sends = sn.sends || len(rec.Posts) > 0
	}
	return &target{after: sn, recs: recs}
}

// fineTrail returns the reference after each single command a repeat or
// do line of the step's cell runs (a learner typing a loop's rounds one by
// one is on the way after each), or nil where the cell has none. It
// replays the lesson to the step in a session of its own, once per step.
func (r *Reference) fineTrail() []*target {
	if r.step < 0 {
		return nil
	}
	if r.fineAt == r.step {
		return r.fine
	}
	r.fine, r.fineAt = nil, r.step
	c := r.l.Steps[r.step].Cell
	var lines [][]string
	compound := false
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		sub := r.sh.Unroll(cmd.Text)
		if sub == nil || strings.HasPrefix(strings.TrimSpace(cmd.Text), "!") {
			sub = []string{cmd.Text}
		} else {
			compound = true
		}
		lines = append(lines, sub)
	}
	if !compound {
		return nil
	}
	sh, closeFn, err := r.open()
	if err != nil {
		return nil
	}
	defer closeFn()
	if switchOn(sh, r.l) != nil {
		return nil
	}
	for k := 0; k < r.step; k++ {
		if kc := r.l.Steps[k].Cell; kc != nil && r.absent[k] == nil {
			if _, err := r.runOn(sh, kc); err != nil {
				return nil
			}
		}
	}
	start := sh.RecordCount()
	var out []*target
	for _, sub := range lines {
		for _, l := range sub {
			if _, err := sh.Exec(l); err != nil && !strings.HasPrefix(strings.TrimSpace(l), "!") {
				return nil
			}
			out = append(out, r.point(sh, start))
		}
	}
	r.fine = out
	return out
}

// changed reports whether a cell did anything a judge compares: made,
// destroyed or changed an object, changed bytes or settings, posted,
// polled, failed.
func changed(before, after *snapshot, recs []Record) bool {
	for _, rec := range recs {
		if len(rec.Posts) > 0 || len(rec.Completions) > 0 || rec.Err != nil || len(rec.Created) > 0 {
			return true
		}
	}
	if len(before.objs) != len(after.objs) || strings.Join(before.settings, "\n") != strings.Join(after.settings, "\n") {
		return true
	}
	m := newMapping()
	for _, o := range after.objs {
		if before.by[o.h] == nil {
			return true
		}
		m.pair(o.h, o.h)
	}
	for _, a := range after.objs {
		b := before.by[a.h]
		if len(objDiffs(after, before, a, b, m, true, false)) > 0 || !slices.Equal(a.pages, b.pages) ||
			a.sends != b.sends || a.recvs != b.recvs || len(a.wcs) != len(b.wcs) {
			return true
		}
	}
	return false
}

// run runs a cell in the reference session and returns each command's
// record.
func (r *Reference) run(c *Cell) ([]Record, error) { return r.runOn(r.sh, c) }

// runOn runs a cell's commands in session sh.
func (r *Reference) runOn(sh Env, c *Cell) ([]Record, error) {
	var recs []Record
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		n := sh.RecordCount()
		_, err := sh.Exec(cmd.Text)
		rs := sh.Records(n)
		if err != nil {
			return nil, fmt.Errorf("line %d of %s, in the reference session: %s", cmd.Line, r.l.Name, firstLine(err.Error()))
		}
		if len(rs) > 0 {
			recs = append(recs, rs[len(rs)-1])
			r.noteAsked(rs[len(rs)-1])
		} else {
			recs = append(recs, Record{})
		}
	}
	return recs, nil
}

// creating are the commands that make an object: a record's Created lists
// what they made, in order. sizing change an object's capacity.
var (
	creating = map[string]bool{"open_device": true, "alloc_pd": true, "reg_mr": true, "create_comp_channel": true,
		"create_cq": true, "create_qp": true, "create_srq": true, "create_ah": true,
		"open_xrcd": true, "create_srq_ex": true, "create_qp_ex": true, "open_qp": true}
	sizing = map[string]bool{"resize_cq": true, "modify_srq": true}
)

// noteAsked remembers which capacities a reference command gave.
func (r *Reference) noteAsked(rec Record) {
	k := 0
	for _, c := range rec.Calls {
		h := ""
		switch {
		case creating[c.Cmd]:
			if k < len(rec.Created) {
				h = rec.Created[k]
				k++
			}
		case sizing[c.Cmd]:
			for _, a := range c.Args {
				if a.Kind == ArgHandle && a.Key == "" {
					h = a.Value
					break
				}
			}
		}
		if h == "" {
			continue
		}
		for _, a := range c.Args {
			if a.Kind == ArgNumber {
				if r.asked[h] == nil {
					r.asked[h] = map[string]string{}
				}
				r.asked[h][a.Key] = a.Value
			}
		}
	}
}

// noteStates remembers which learner QPs are in ERR, and since when.
func (j *Judge) noteStates(le *snapshot) {
	var last Record
	if n := j.env.RecordCount(); n > 0 {
		if rs := j.env.Records(n - 1); len(rs) > 0 {
			last = rs[0]
		}
	}
	for _, o := range le.objs {
		if o.kind != "qp" || o.queryErr != nil {
			continue
		}
		st := o.attr.State
		if st == verbs.QPSErr && j.noted[o.h] != verbs.QPSErr {
			j.errAt[o.h] = errNote{cell: last.N, line: last.Line}
		}
		j.noted[o.h] = st
	}
}

// A Verdict is what the judge found for the current step.
type Verdict struct {
	Step int
	// Met is set when the learner's session matches the step's reference
	// and every expect: line of the step holds.
	Met bool
	// Diffs are the differences, the most telling first.
	Diffs []Diff
	// Mapping pairs the lesson's handles with the learner's.
	Mapping map[string]string
}

// Lost returns the first difference that cannot be closed from here, if
// any: the learner needs lesson reset.
func (v *Verdict) Lost() *Diff {
	for i := range v.Diffs {
		if v.Diffs[i].Lost {
			return &v.Diffs[i]
		}
	}
	return nil
}

// Wrong returns the first difference that is not work left to do: where a
// command led away from the goal.
func (v *Verdict) Wrong() *Diff {
	for i := range v.Diffs {
		if !v.Diffs[i].Pending {
			return &v.Diffs[i]
		}
	}
	return nil
}

// waitReal is how long the judge waits for completions the reference
// produced where they arrive in real time.
const waitReal = time.Second

// Verdict compares the learner's session now with the step's reference.
func (j *Judge) Verdict() *Verdict {
	v := &Verdict{Step: j.step, Mapping: map[string]string{}}
	if j.step < 0 || j.step >= len(j.l.Steps) || j.l.Steps[j.step].Cell == nil {
		v.Met = true
		return v
	}
	recs := j.learnerRecords()
	if !j.ready && j.err != nil {
		// The lesson's own commands failed: nothing can be judged.
		v.Diffs = append(v.Diffs, Diff{Kind: DiffExpect, Lost: true, Text: fmt.Sprintf(
			"this step cannot be judged: the lesson's own commands failed on the simulator (%v); the lesson is broken here (vsh lesson check FILE says where)", j.err)})
		return v
	}
	if !j.ready {
		// A section this backend cannot play: the expect: lines alone.
		for _, err := range expectsUnmet(j.l.Steps[j.step].Cell, newEvalCtx(j.env, recs)) {
			v.Diffs = append(v.Diffs, Diff{Kind: DiffExpect, Pending: true, Text: err.Error()})
		}
		v.Met = len(v.Diffs) == 0
		return v
	}
	le := takeSnapshot(j.env, &j.gidsL)
	m := match(j.ref.after, le, j.prev, j.in)
	want := map[string]int{}
	for s, l := range m.s2l {
		if o := j.ref.after.by[s]; o != nil && o.kind == "cq" {
			want[l] = len(o.wcs)
		}
	}
	le.fillUnpolled(j.env, want, waitReal)
	j.noteStates(le)
	for s, l := range m.s2l {
		j.prev[s] = l
		v.Mapping[s] = l
	}
	j.placeFailure(le, recs)
	j.last, j.lastCount = le, len(recs)
	j.tg = &target{after: j.ref.after, recs: j.ref.cellRecs}
	if !j.l.Steps[j.step].Cell.ByExpect {
		v.Diffs = j.diffs(le, m, recs)
	}
	if _, on := j.onTheWay(le, recs); j.astray(v.Diffs) && on {
		// The learner's session is the reference's after some of the
		// cell's commands: nothing is wrong, the rest is to do.
		for i := range v.Diffs {
			v.Diffs[i].Pending, v.Diffs[i].Lost = true, false
		}
	}
	x := newEvalCtx(mappedEnv{Env: j.env, m: m, ref: j.ref.after}, translateRecords(recs, j.lessonNames(m)))
	x.gone = j.goneSinceStart
	// An expect: line that does not hold is work to do while other work
	// is; once the rest matches, it is what the learner did otherwise.
	pending := false
	for _, d := range v.Diffs {
		pending = pending || d.Pending
	}
	for _, err := range expectsUnmet(j.l.Steps[j.step].Cell, x) {
		full := j.translateMsg(err.Error())
		finding, text := full, full // finding: without what the goal is
		for _, cut := range []string{"; the goal is ", ", without "} {
			if head, _, ok := strings.Cut(full, cut); ok {
				// What the goal wants is what the learner is to find.
				finding, text = head, head+", not what this step's goal asks for"
				if u, ok := err.(*Unmet); ok && u.Order {
					text = head + ", not in the order this step's goal asks for; where more commands cannot mend that, lesson reset starts the step over"
				}
				break
			}
		}
		if text == full {
			full = ""
		}
		d := Diff{Kind: DiffExpect, Pending: pending, Text: text, Detail: full}
		if u, ok := err.(*Unmet); ok && u.Final {
			d.Pending, d.Lost = false, true
		}
		if u, ok := err.(*Unmet); ok && !j.l.Steps[j.step].Cell.ByExpect && postsDone(u.Short, v.Diffs) && !j.refFails(u.Short) {
			// More posts would post more than the step does.
			d.Pending, d.Lost = false, true
			d.Text = finding + ", and every work request this step posts is posted: one more " + u.Short + " would post more"
			if u.Expect != nil && u.Expect.subj.kind == subjCommands {
				// Said once: not with the command list, which grows.
				d.Text = "every work request this step posts is posted, but not in the order this step's goal asks for: only one more " +
					u.Short + " could mend that, and it would post more"
			}
		}
		v.Diffs = append(v.Diffs, d)
	}
	v.Met = len(v.Diffs) == 0
	return v
}

// postsDone reports whether cmd is a post verb and the learner's session
// posted as many work requests as the step does: no difference about what
// is posted is left.
func postsDone(cmd string, diffs []Diff) bool {
	if cmd != "post_send" && cmd != "post_recv" && cmd != "post_srq_recv" {
		return false
	}
	for _, d := range diffs {
		if d.Kind == DiffPosted || d.Kind == DiffWR {
			return false
		}
	}
	return true
}

// refFails reports whether the step's own commands include a call of cmd
// that fails: a refused post counts as a call and posts nothing, so more
// calls need not post more.
func (j *Judge) refFails(cmd string) bool {
	for _, r := range j.ref.cellRecs {
		if r.Err != nil && lastCall(r).Cmd == cmd {
			return true
		}
	}
	return false
}

// wireWritten marks lost the bytes the wire brought otherwise than the
// step does, where nothing more can come: every work request the step
// posts is posted and retired, the fabric holds nothing, and the step's
// commands wrote none of that MR with the CPU. Another post would post
// more, and a CPU write where the wire's bytes belong is no mend
// (cpuDiffs).
func wireWritten(mem, posted []Diff, le *snapshot, recs []Record) []Diff {
	// Only a fabric that shows what it holds says nothing more comes
	// (the simulator's; on a real device bytes land in real time).
	if !postsDone("post_send", posted) || !le.fabric || le.onWire > 0 || sendsUnfinished(le) {
		return mem
	}
	for i, d := range mem {
		if d.Pending || cpuWrote(recs, d.Handle) {
			continue
		}
		mem[i].Lost = true
		mem[i].Text += "; they came over the wire, and every work request this step posts is posted"
	}
	return mem
}

// sendsUnfinished reports whether a QP of the session has a send whose
// completion is neither polled nor waiting in a CQ: work that may still
// bring bytes or complete (a retransmission after a timer).
func sendsUnfinished(le *snapshot) bool {
	type qpOf struct {
		dev int
		qpn uint32
	}
	done := map[qpOf]int{}
	for _, o := range le.objs {
		for _, wc := range o.wcs {
			if o.kind == "cq" && !wc.Opcode.IsRecv() {
				done[qpOf{o.dev, wc.QPNum}]++
			}
		}
	}
	for _, o := range le.objs {
		if o.kind == "qp" && o.sends > done[qpOf{o.dev, o.qpn}] {
			return true
		}
	}
	return false
}

// cpuWrote reports whether the records wrote MR h with the CPU.
func cpuWrote(recs []Record, h string) bool {
	for _, r := range recs {
		for _, c := range ranCalls(r) {
			if cpuWrites[c.Cmd] && c.Wrote != nil && firstHandle(c) == h {
				return true
			}
		}
	}
	return false
}

// goneSinceStart reports whether the learner's object paired at the
// step's start with the lesson's handle h is no longer in the session.
func (j *Judge) goneSinceStart(h string) bool {
	if j.ref.before == nil || j.ref.before.by[h] == nil {
		return false
	}
	l := j.startMap.s2l[h]
	if l == "" {
		return false
	}
	_, ok := j.env.Object(l)
	return !ok
}

// placeFailure checks the learner's last command, when it failed as one of
// the step's "! " lines does and was the only command since the last
// verdict: the session it was typed in must match the reference's just
// before its own failing command, or just after it, with the failure's
// effect (a post that took some of its WRs). A probe made before the setup
// it probes (get_cq_event before req_notify_cq) fails the same way for
// another reason: it is marked out of place.
func (j *Judge) placeFailure(le *snapshot, recs []Record) {
	defer func() { j.tg = &target{after: j.ref.after, recs: j.ref.cellRecs} }()
	if j.last == nil || len(recs) != j.lastCount+1 {
		return
	}
	r := recs[len(recs)-1]
	if r.Err == nil {
		return
	}
	m := j.lastMapping()
	for c, ref := range j.ref.cmdRecs {
		if ok, _ := j.sameFailure(m, ref, r); !ok {
			continue
		}
		at := &target{after: j.ref.before}
		if c > 0 && c-1 < len(j.ref.trail) {
			at = j.ref.trail[c-1]
		}
		if j.misplaced(at, j.last, r, recs[:len(recs)-1]) {
			after := &target{after: j.ref.after, recs: j.ref.cellRecs}
			if c < len(j.ref.trail) {
				after = j.ref.trail[c]
			}
			switch {
			case !j.misplaced(after, le, r, recs):
			case c > 0 && !j.misplaced(&target{after: j.ref.before}, j.last, r, recs[:len(recs)-1]):
				j.outOfPlace[r.N] = placeEarly
			default:
				j.outOfPlace[r.N] = placeElsewhere
			}
		}
		return
	}
}

// place says where a failure the step expects came, when not where the
// step's does.
type place int

const (
	placeEarly     place = iota + 1 // at the step's start, before the setup it needs
	placeElsewhere                  // in a state the step never has there
)

// misplaced reports whether the learner's session sn differs from the
// reference's target at where the failed call r is about.
func (j *Judge) misplaced(at *target, sn *snapshot, r Record, recs []Record) bool {
	j.tg = at
	pm := match(at.after, sn, j.prev, j.in)
	c := lastCall(r)
	near := related(at.after, c, pm)
	for _, d := range j.diffs(sn, pm, recs) {
		// Events acknowledged or not matter to a destroy alone
		// (ibv_get_cq_event fails as well after ibv_ack_cq_events).
		if d.acks && !strings.HasPrefix(c.Cmd, "destroy_") {
			continue
		}
		if near[d.Ref] || near[pm.l2s[d.Handle]] {
			return true
		}
	}
	return false
}

// related lists the reference objects a learner's call is about: those it
// names and those one step away from them (a channel's CQs, a CQ's QPs and
// channel, a QP's CQs, SRQ and peer, an object's parent and children).
func related(sn *snapshot, c Call, m mapping) map[string]bool {
	out := map[string]bool{}
	for _, a := range c.Args {
		if a.Kind == ArgHandle {
			if s := m.l2s[a.Value]; s != "" {
				out[s] = true
			}
		}
	}
	named := maps.Clone(out)
	for _, o := range sn.objs {
		links := []string{o.parent, o.channel, o.sendCQ, o.recvCQ, o.srq, o.peer}
		if named[o.h] {
			for _, h := range links {
				if h != "" {
					out[h] = true
				}
			}
		}
		for _, h := range links {
			if h != "" && named[h] {
				out[o.h] = true
			}
		}
	}
	return out
}

// astray reports whether a difference says a command led away.
func (j *Judge) astray(diffs []Diff) bool {
	for _, d := range diffs {
		if !d.Pending || d.Lost {
			return true
		}
	}
	return false
}

// onTheWay reports how many of the step's cell's commands the learner's
// session is as far as — it matches the reference after them: no
// difference, and no object the learner made for one of the cell's that is
// not there yet (a wrong MR is not an extra object of the learner's own) —
// or -1. The state before the cell counts as 0, the end as them all. on
// reports whether the session is on the way at all: also inside a repeat
// or do line, after some of its single commands (-1, true).
func (j *Judge) onTheWay(le *snapshot, recs []Record) (k int, on bool) {
	defer func() { j.tg = &target{after: j.ref.after, recs: j.ref.cellRecs} }()
	final := match(j.ref.after, le, j.prev, j.in)
	at := func(tg *target) bool {
		m := match(tg.after, le, j.prev, j.in)
		for l := range final.l2s {
			if m.l2s[l] == "" {
				return false // stands for an object the cell makes later, or is wrong
			}
		}
		j.tg = tg
		return len(j.diffs(le, m, recs)) == 0
	}
	points := append([]*target{{after: j.ref.before}}, j.ref.trail...)
	for k := len(points) - 1; k >= 0; k-- {
		if at(points[k]) {
			return k, true
		}
	}
	// Inside a repeat or do line: on the way, after no whole command.
	fine := j.ref.fineTrail()
	for k := len(fine) - 1; k >= 0; k-- {
		if at(fine[k]) {
			return -1, true
		}
	}
	return -1, false
}

// Done reports how many of the step's cell's commands the learner's
// session is as far as: all of them when the goal is reached, k when it
// matches the reference after the first k, -1 when it matches none of
// those states (another order, a wrong turn).
func (j *Judge) Done() int {
	if v := j.Verdict(); v.Met {
		return len(j.ref.cmdRecs)
	}
	if !j.ready {
		return -1
	}
	le := takeSnapshot(j.env, &j.gidsL)
	le.fillUnpolled(j.env, nil, 0)
	k, _ := j.onTheWay(le, j.learnerRecords())
	return k
}

func expectsUnmet(c *Cell, x *evalCtx) []error {
	var out []error
	for _, e := range c.Expects {
		if err := e.check(x); err != nil {
			out = append(out, err)
		}
	}
	return out
}

// learnerRecords are the learner's records of the step, lesson commands
// left out.
func (j *Judge) learnerRecords() []Record {
	from := 0
	if j.start != nil {
		from = j.start.recs
	}
	var out []Record
	for _, r := range j.env.Records(from) {
		if !TutorCommand(r.Cmd) {
			out = append(out, r)
		}
	}
	return out
}

// diffs lists every difference, the most telling first.
func (j *Judge) diffs(le *snapshot, m mapping, recs []Record) []Diff {
	ref := j.tg.after
	var out []Diff
	// Objects, in the lesson's order.
	for _, s := range ref.objs {
		created := j.ref.before.by[s.h] == nil
		l := le.by[m.s2l[s.h]]
		if l == nil {
			d := Diff{Kind: DiffMissing, Pending: true, Ref: s.h}
			was := j.startMap.s2l[s.h]
			switch {
			case created:
				d.Text = "this step makes " + describe(s, m) + "; there is none yet"
			case was != "" && le.by[was] == nil:
				d.Pending, d.Handle = false, was
				d.Text = fmt.Sprintf("%s is gone; the lesson still needs it (%s): make it again, or lesson reset", was, describe(s, m))
			default:
				d.Text = "the lesson has " + describe(s, m) + "; there is none here"
			}
			out = append(out, d)
			continue
		}
		for _, d := range objDiffs(ref, le, s, l, m, true, created) {
			if d.Kind == DiffState && l.kind == "qp" && l.attr.State == verbs.QPSErr && s.attr.State != verbs.QPSErr {
				d.Text = j.errText(le, l)
			}
			out = append(out, d)
		}
	}
	// What the step destroys.
	for _, s := range j.ref.before.objs {
		if ref.by[s.h] != nil {
			continue
		}
		if l := j.startMap.s2l[s.h]; l != "" && le.by[l] != nil && m.l2s[l] == "" {
			out = append(out, Diff{Kind: DiffDestroy, Pending: true, Handle: l, Ref: s.h,
				Text: fmt.Sprintf("%s still exists; this step destroys it", l)})
		}
	}
	posted, outstanding := j.postDiffs(le, m, recs)
	out = append(out, posted...)
	out = append(out, j.completionDiffs(le, m, recs)...)
	out = append(out, wireWritten(j.memoryDiffs(le, m, recs), posted, le, recs)...)
	out = append(out, j.cpuDiffs(le, m, recs)...)
	out = append(out, outstanding...)
	out = append(out, j.failureDiffs(m, recs)...)
	out = append(out, j.lookDiffs(m, recs)...)
	// An SRQ armed at another limit says so before its end state does.
	out = append(j.armDiffs(m, recs), out...)
	out = append(settingDiffs(j.ref.before.settings, j.ref.after.settings, ref.settings, le.settings, j.start.settings,
		setsRules(j.ref.cellRecs), rulesAdded(j.ref.cellRecs, recs)), out...)
	return out
}

// errText says when a learner's QP went to ERR and what it reported there.
func (j *Judge) errText(le *snapshot, l *objSnap) string {
	t := fmt.Sprintf("%s is in IBV_QPS_ERR, which this step does not expect", l.h)
	if n, ok := j.errAt[l.h]; ok && n.cell > 0 {
		t = fmt.Sprintf("%s went to IBV_QPS_ERR at cell [%d] (%s), which this step does not expect", l.h, n.cell, n.line)
	}
	if wc, cq, ok := j.firstError(le, l); ok {
		t += fmt.Sprintf(": %s got %s for wr_id %d", cq, wc.Status, wc.WRID)
		if e := j.env.Explain(wc.Status.String()); e != "" {
			t += " — " + e
		}
	}
	return t
}

// firstError finds the first error completion of QP l: one polled since
// it went to ERR, or one still in its CQs.
func (j *Judge) firstError(le *snapshot, l *objSnap) (verbs.WC, string, bool) {
	for _, r := range j.env.Records(max(0, j.start.recs)) {
		for _, c := range r.Completions {
			if c.WC.QPNum == l.qpn && c.WC.Status != verbs.WCSuccess && c.WC.Status != verbs.WCWRFlushErr {
				if o := le.by[c.CQ]; o != nil && o.dev == l.dev {
					return c.WC, c.CQ, true
				}
			}
		}
	}
	for _, cq := range []string{l.sendCQ, l.recvCQ} {
		o := le.by[cq]
		if o == nil {
			continue
		}
		for _, wc := range o.wcs {
			if wc.QPNum == l.qpn && wc.Status != verbs.WCSuccess && wc.Status != verbs.WCWRFlushErr {
				return wc, cq, true
			}
		}
	}
	return verbs.WC{}, "", false
}

// Mapping returns the pairing of the lesson's handles with the learner's
// as last found.
func (j *Judge) Mapping() map[string]string {
	out := map[string]string{}
	for s, l := range j.prev {
		if _, ok := j.env.Object(l); ok {
			out[s] = l
		}
	}
	for s, l := range j.built {
		out[s] = l
	}
	return out
}

// renamedCounted returns a kind of handle that text counts out with {i}
// (qp{i}) and that the learner's session names otherwise than the lesson
// (its qp1 is the learner's qp16): the text cannot be translated, only its
// commands expanded. "" when there is none.
func (j *Judge) renamedCounted(text string) string {
	m := j.shownMapping()
	for _, sub := range countedHandle.FindAllStringSubmatch(text, -1) {
		for s, l := range m {
			if s != l && strings.HasPrefix(s, sub[1]) && handleWord.MatchString(s) && strings.TrimLeft(s[len(sub[1]):], "0123456789") == "" {
				return sub[1]
			}
		}
	}
	return ""
}

// countedHandle finds a handle counted out with {i}: qp{i}, qp{i+16}.
var countedHandle = regexp.MustCompile(`\b(ctx|pd|mr|ch|cq|srq|qp|ah|xrcd)\{i`)

// handleWord finds handles in a command line.
var handleWord = regexp.MustCompile(`\b(ctx|pd|mr|ch|cq|srq|qp|ah|xrcd)[0-9]+\b`)

// Translate rewrites a command of the lesson for the learner's session:
// every handle of the lesson becomes the learner's object paired with it.
// Quoted text is left as it is.
func (j *Judge) Translate(line string) string {
	return translate(line, j.Mapping(), false)
}

// translateText is Translate for lesson text the learner reads (a goal,
// a hint, an expectation): an object the step destroyed is named as the
// learner's it was paired with at the step's start, not left under the
// lesson's name, which may be another live object of the learner's.
func (j *Judge) translateText(line string) string {
	return translate(line, j.shownMapping(), false)
}

// translateMsg is translateText for what the judge says, which names the
// learner's unpaired objects "your cq1" already: those stay as they are.
func (j *Judge) translateMsg(line string) string {
	return translate(line, j.shownMapping(), true)
}

// shownMapping is Mapping with the step's destroyed objects added.
func (j *Judge) shownMapping() map[string]string {
	m := j.Mapping()
	for l, s := range j.deadPairs() {
		if m[s] == "" {
			m[s] = l
		}
	}
	return m
}

// deadPairs pairs the learner's objects the step destroyed (live at its
// start, gone now) with the lesson's the step's cell destroys: as they
// were paired at the step's start where both went, else in order, kind
// by kind, of those the start left open (unambiguous). Of two CQs alike,
// the one destroyed is the one the cell destroys, whichever it was. It
// maps the learner's handle to the lesson's.
func (j *Judge) deadPairs() map[string]string {
	out := map[string]string{}
	if !j.ready || j.start == nil || j.ref.before == nil {
		return out
	}
	used := map[string]bool{}
	var dead []*objSnap
	for _, o := range j.start.objs {
		if _, live := j.env.Object(o.h); !live {
			dead = append(dead, o)
		}
	}
	gone := func(s string) bool {
		return j.ref.before.by[s] != nil && j.ref.after != nil && j.ref.after.by[s] == nil
	}
	for _, o := range dead {
		if s := j.startMap.l2s[o.h]; s != "" && gone(s) {
			out[o.h], used[s] = s, true
		}
	}
	for _, o := range dead {
		if out[o.h] != "" || j.in.lock.l2s[o.h] != "" {
			continue // paired, or bound to a lesson object the cell keeps
		}
		for _, s := range j.ref.before.objs {
			if s.kind == o.kind && !used[s.h] && gone(s.h) {
				out[o.h], used[s.h] = s.h, true
				break
			}
		}
	}
	return out
}

// translate renames the handles of line by m, outside quotes; mine
// leaves a handle after "your " as it is.
func translate(line string, m map[string]string, mine bool) string {
	var b strings.Builder
	quote := byte(0)
	start := 0
	flush := func(end int) {
		at := start
		for _, loc := range handleWord.FindAllStringIndex(line[start:end], -1) {
			i, k := start+loc[0], start+loc[1]
			b.WriteString(line[at:i])
			// "your cq1" names the learner's own object already.
			if l, ok := m[line[i:k]]; ok && !(mine && strings.HasSuffix(line[:i], "your ")) {
				b.WriteString(l)
			} else {
				b.WriteString(line[i:k])
			}
			at = k
		}
		b.WriteString(line[at:end])
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
				b.WriteString(line[start : i+1])
				start = i + 1
			}
		case (c == '"' || c == '\'') && (i == 0 || line[i-1] == ' ' || line[i-1] == '='):
			// A quote opens at a word's start: the ' of "B's" is prose.
			flush(i)
			start = i
			quote = c
		}
	}
	if quote != 0 {
		b.WriteString(line[start:])
	} else {
		flush(len(line))
	}
	return b.String()
}

// TranslateLines rewrites a command of the lesson for the learner's
// session as Translate does, as the commands it runs one by one where a
// {i} in a repeat names handles that differ in the learner's session.
func (j *Judge) TranslateLines(line string) []string {
	return j.translateLines(line, j.Mapping())
}

// shownLines is TranslateLines for commands the learner reads (lesson
// hint): an object the step destroyed is named as translateText names it.
func (j *Judge) shownLines(line string) []string {
	return j.translateLines(line, j.shownMapping())
}

func (j *Judge) translateLines(line string, m map[string]string) []string {
	t := translate(line, m, false)
	if !strings.Contains(line, "{i") {
		return []string{t}
	}
	identity := true
	for s, l := range m {
		identity = identity && s == l
	}
	if identity {
		return []string{t}
	}
	var out []string
	for _, l := range j.env.Expand(line) {
		out = append(out, translate(l, m, false))
	}
	return out
}

// Built pairs the handles a replayed command made in the learner's
// session with those the same command of the lesson made in the
// reference: the k-th command of the step's cell.
func (j *Judge) Built(k int, learner []string) {
	if k < 0 || k >= len(j.ref.cmdRecs) {
		return
	}
	ref := j.ref.cmdRecs[k].Created
	for i := 0; i < len(ref) && i < len(learner); i++ {
		j.built[ref[i]] = learner[i]
		j.prev[ref[i]] = learner[i]
	}
}

// Class is what a learner's session is, compared with the step's
// reference without the judge's tolerances.
type Class int

// The classes, from the closest.
const (
	// Equivalent: every field of every object equals the reference's,
	// but for values random by nature and handle names.
	Equivalent Class = iota
	// Tolerated: it differs only by what the judge lets be — capacities
	// above those asked for (or not asked for at all), objects of the
	// learner's own, the order of independent commands.
	Tolerated
	// Wrong: anything else.
	Wrong
)

func (c Class) String() string {
	return [...]string{"equivalent", "tolerated", "wrong"}[c]
}

// Classify compares the learner's session with the step's reference
// without the judge's tolerances, and says what the session is: the
// differences the judge counts make it Wrong; the tolerated ones, which it
// also returns, make it Tolerated.
func (j *Judge) Classify() (Class, []string) {
	v := j.Verdict()
	if len(v.Diffs) > 0 {
		var out []string
		for _, d := range v.Diffs {
			out = append(out, d.Text)
		}
		return Wrong, out
	}
	if !j.ready {
		return Equivalent, nil
	}
	le := takeSnapshot(j.env, &j.gidsL)
	var tol []string
	m := j.lastMapping()
	for _, l := range le.objs {
		sh := m.l2s[l.h]
		if sh == "" {
			tol = append(tol, "your "+l.h+" is an object of your own")
			continue
		}
		s := j.ref.after.by[sh]
		if s == nil {
			continue
		}
		switch l.kind {
		case "qp":
			if l.cap != s.cap {
				tol = append(tol, fmt.Sprintf("%s's capacities are %+v; the lesson's %+v", l.h, l.cap, s.cap))
			}
		case "cq":
			if l.cqe != s.cqe {
				tol = append(tol, fmt.Sprintf("%s has room for %d completions; the lesson's for %d", l.h, l.cqe, s.cqe))
			}
		case "srq":
			if l.srqAttr.MaxWR != s.srqAttr.MaxWR || l.srqAttr.MaxSGE != s.srqAttr.MaxSGE {
				tol = append(tol, fmt.Sprintf("%s's capacities are %d/%d; the lesson's %d/%d", l.h, l.srqAttr.MaxWR, l.srqAttr.MaxSGE, s.srqAttr.MaxWR, s.srqAttr.MaxSGE))
			}
		}
	}
	if len(tol) > 0 {
		return Tolerated, tol
	}
	return Equivalent, nil
}

// forget drops what the judge knows of the learner's handles: the
// session was rebuilt, and its handles count from 0 again.
func (j *Judge) forget() {
	j.prev, j.errAt, j.noted, j.built = map[string]string{}, map[string]errNote{}, map[string]verbs.QPState{}, map[string]string{}
	j.ready = false
}

// lastMapping is the pairing last found, as a mapping.
func (j *Judge) lastMapping() mapping {
	m := newMapping()
	for s, l := range j.Mapping() {
		m.pair(s, l)
	}
	return m
}

// refAfter is the reference after the step's cell.
func (j *Judge) refAfter() *snapshot {
	if j.ref.after == nil {
		return &snapshot{by: map[string]*objSnap{}}
	}
	return j.ref.after
}
