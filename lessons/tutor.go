package lessons

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tutor runs a lesson interactively in a session: it shows a step's prose
// and goal, lets the learner type whatever commands they like, and after
// each one asks its Judge whether the learner's session now matches what
// the step's own cell produces in the lesson's reference session — what
// the learner built, never what they typed. Any commands that get there
// will do. The shell's lesson command drives it (lesson next, back, hint,
// skip, reset, goal, quit) and calls Observe after every other command.
type Tutor struct {
	env  Env
	l    *Lesson
	j    *Judge
	step int // the current step
	// start is the record count when the current step began: the step's
	// goal is judged on the commands typed since.
	start  int
	hints  int // lesson hint asked in this step
	solved []bool
	skip   []bool
	// absent marks the steps of the sections this backend cannot play
	// (their needs: line): the tutor says so and goes on without them.
	absent []*SkippedSection
	done   bool // past the last step
	quit   bool
	// broken is the first failure of the lesson's own commands in the
	// reference (Broken).
	broken error
	said   map[string]bool // the differences pointed out in this step
	// onFinish is called when the lesson ends (OnFinish).
	onFinish func(*Tutor)

	// rec is how the learner did at each step (progress.go), timed by
	// now from started; since is when the current step's time last
	// counted.
	rec            []stepRecord
	now            func() time.Time
	started, since time.Time
	progress       func() // OnProgress
	// counted is how many of the session's commands work counts: the
	// step's commands, calls and work requests so far (overCap).
	counted, work int

	// driven is set for a notebook's tutor (NewNotebookTutor): the
	// notebook's cells run the lesson's commands, the tutor runs none,
	// and it speaks when asked (Check).
	driven bool
	// cells is set once the notebook says where its cells start
	// (CellStart); cellGen counts them, and enteredGen is the cell the
	// current step began in: a verb the rest of that cell runs (the cell
	// reached the step before) closes the step's prediction, and a late
	// answer is told so without stopping the notebook.
	cells               bool
	cellGen, enteredGen int
}

// MaxStepCommands and MaxStepWork bound the commands of one step the
// tutor judges, and their calls and work requests (a repeat's count):
// it judges each command against all those before it, so a script of
// thousands in one step would slow down without bound.
const (
	MaxStepCommands = 1000
	MaxStepWork     = 20000
)

// overCap reports whether the step has run more than the tutor judges.
// Past it the step's prediction can no longer be made: the tutor no longer
// sees whether a verb ran first. The count reads each command once.
func (t *Tutor) overCap() bool {
	if n := t.env.RecordCount(); n > t.counted {
		for _, r := range t.env.Records(max(t.counted, t.start)) {
			t.work += 1 + len(r.Calls) + len(r.Posts)
		}
		t.counted = n
	}
	over := t.env.RecordCount()-t.start > MaxStepCommands || t.work > MaxStepWork
	if over && t.step < len(t.rec) {
		t.rec[t.step].pred.closed = true
	}
	return over
}

// Tutor commands, as the shell's lesson command takes them.
var TutorCommands = []struct{ Name, Doc string }{
	{"next", "go on to the next step (once its goal is reached)"},
	{"back", "go back one step: the session is rebuilt with the lesson's own commands up to that step"},
	{"hint", "a hint for this step; twice: the lesson's own commands"},
	{"skip", "let the tutor do this step, and go on"},
	{"reset", "rebuild the session as the lesson has it at this step's start: its own commands of the earlier steps, on a fresh backend, under its handles"},
	{"goal", "this step's goal and what is still missing; goal --detail: everything the tutor compares"},
	{"quit", "leave the lesson; the session stays as it is"},
}

// NewTutor starts lesson l in env: it checks that the backend has what the
// lesson needs (a *SkipError if not), and returns the tutor and what to
// show first: the title and the first step. The steps of a section whose
// needs the backend lacks are skipped, with the reason, when the lesson
// reaches them.
func NewTutor(env Env, l *Lesson) (*Tutor, string, error) {
	t, err := newTutor(env, l, false)
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	b.WriteString(headerAt(l, envWidth(env)))
	b.WriteString(wrap(fmt.Sprintf("%d step%s. Type the commands yourself: the tutor compares what you build with what the lesson builds, "+
		"so any commands that get there will do. lesson hint helps, lesson skip does a step for you, lesson reset starts a step over.",
		len(l.Steps), plural(len(l.Steps))), envWidth(env)) + "\n")
	t.enter(0, &b)
	return t, b.String(), nil
}

// newTutor makes the tutor of lesson l in env, for a terminal or, driven,
// for a notebook; a *SkipError when the backend lacks what l needs.
func newTutor(env Env, l *Lesson, driven bool) (*Tutor, error) {
	if err := switchOn(env, l); err != nil {
		return nil, err
	}
	caps := &capChecker{p: env.Provider()}
	if miss := caps.missing(l.Needs); len(miss) > 0 {
		return nil, &SkipError{Lesson: l, Reasons: miss}
	}
	t := &Tutor{env: env, l: l, solved: make([]bool, len(l.Steps)), skip: make([]bool, len(l.Steps)),
		absent: stepSkips(l, skippedSections(l, caps)), rec: make([]stepRecord, len(l.Steps)), now: time.Now, driven: driven}
	t.started, t.since = t.now(), t.now()
	t.j = NewJudge(env, l, t.absent)
	return t, nil
}

// Lesson returns the lesson being taught.
func (t *Tutor) Lesson() *Lesson { return t.l }

// Judge returns the tutor's judge.
func (t *Tutor) Judge() *Judge { return t.j }

// Close ends the tutor's reference session.
func (t *Tutor) Close() error { return t.j.Close() }

// Step returns the index of the current step, and whether the lesson is
// over (every step done, or quit).
func (t *Tutor) Step() (int, bool) { return t.step, t.done || t.quit }

// Solved reports how many steps the learner solved and how many the
// tutor did for them (lesson skip). The steps the backend cannot play
// count as neither, nor do those solved after lesson hint showed the
// lesson's own commands (Shown counts them).
func (t *Tutor) Solved() (byLearner, skipped int) {
	for i := range t.solved {
		switch t.outcome(i) {
		case OutcomeSkipped:
			skipped++
		case OutcomeSolved:
			if t.l.Steps[i].Interactive() {
				byLearner++
			}
		}
	}
	return
}

// OnFinish has f called each time the lesson reaches its end, and at once
// if it has already: vsh records a course's solved lessons so (see
// Complete).
func (t *Tutor) OnFinish(f func(*Tutor)) {
	t.onFinish = f
	if t.done && f != nil {
		f(t)
	}
}

// Shown counts the steps solved after lesson hint showed the lesson's own
// commands.
func (t *Tutor) Shown() int {
	n := 0
	for i := range t.solved {
		if t.outcome(i) == OutcomeTutor {
			n++
		}
	}
	return n
}

// solvedText is "2 solved by you, 1 done by the tutor", with the steps
// solved after the tutor showed its commands where there are some.
func (t *Tutor) solvedText() string {
	mine, skipped := t.Solved()
	shown := ""
	if n := t.Shown(); n > 0 {
		shown = fmt.Sprintf(", %d after the tutor showed its commands", n)
	}
	return fmt.Sprintf("%d solved by you%s, %d done by the tutor", mine, shown, skipped)
}

// Quit reports whether the learner left the lesson.
func (t *Tutor) Quit() bool { return t.quit }

func (t *Tutor) plain() bool { return t.env.Plain() }

// enter shows step i and, for an auto cell, runs it.
func (t *Tutor) enter(i int, b *strings.Builder) {
	t.tick()
	for i < len(t.l.Steps) {
		t.step, t.hints, t.said = i, 0, map[string]bool{}
		t.start = t.env.RecordCount()
		t.counted, t.work = t.start, 0
		s := t.l.Steps[i]
		if !t.driven { // a notebook shows the prose in its own cells
			b.WriteString("\n" + stepHeaderAt(t.l, i, t.width()))
			b.WriteString(RenderMarkdownWidth(visibleProse(t.l, i, t.absent), proseStyle(t.env), t.width()))
		}
		switch {
		case t.absent[i] != nil:
			sec := t.absent[i]
			if visibleProse(t.l, i, t.absent) != "" {
				b.WriteString("\n")
			}
			b.WriteString(skipNote(sec))
			i = sec.Last + 1
			continue
		case t.driven:
			if !t.enterDriven(i, b) {
				return
			}
			i++
			continue
		case s.Cell == nil:
			t.solved[i] = true
			if i == len(t.l.Steps)-1 {
				t.finish(b)
				return
			}
			b.WriteString("» lesson next to go on\n")
			return
		case s.Cell.Auto:
			b.WriteString("» the tutor runs this for you:\n")
			if err := t.doCell(b); err != nil {
				fmt.Fprintf(b, "» %v\n» lesson reset tries again; lesson skip goes on\n", err)
				return
			}
			t.solved[i] = true
			if i == len(t.l.Steps)-1 {
				t.finish(b)
				return
			}
			b.WriteString("» lesson next to go on\n")
			return
		default:
			if err := t.j.Begin(i); err != nil {
				t.noteBroken(err)
				fmt.Fprintf(b, "» the tutor could not build this step's reference (%v): the lesson is broken here and the step cannot be judged (vsh lesson check FILE says where); lesson skip goes on\n", err)
			}
			b.WriteString(t.goalLine())
			if v := t.j.Verdict(); v.Met && t.j.ready {
				// Done before the step began (typed ahead, during the one
				// before): on to the next.
				t.solved[i] = true
				b.WriteString("✓ goal reached: you did this already\n")
				t.judgePrediction(b)
				i++
				continue
			}
			t.askPrediction(b)
			return
		}
	}
	// Past the last step: the lesson is over.
	t.step = len(t.l.Steps) - 1
	t.finish(b)
}

func (t *Tutor) goalLine() string {
	c := t.l.Steps[t.step].Cell
	if c.Goal != "" {
		return t.wrapPrefixed("» your turn: ", t.j.translateText(c.Goal))
	}
	return "» your turn: do what the text above says (lesson goal shows what is still missing)\n"
}

// wrapPrefixed wraps text after a prefix, continuing lines under it (two
// columns in, after a long prefix).
func wrapPrefixed(prefix, text string) string { return wrapPrefixedAt(prefix, text, Width) }

// wrapPrefixedAt is wrapPrefixed at width columns.
func wrapPrefixedAt(prefix, text string, width int) string {
	lead := prefix[:len(prefix)-len(strings.TrimLeft(prefix, " "))]
	indent := runeLen(prefix)
	if indent > 12 {
		indent = len(lead) + 2
	}
	first := lead + wrap(prefix[len(lead):]+text, width-len(lead))
	head, rest, _ := strings.Cut(first, "\n")
	if rest == "" {
		return head + "\n"
	}
	rest = wrap(strings.Join(strings.Fields(rest), " "), width-indent)
	pad := strings.Repeat(" ", indent)
	return head + "\n" + pad + strings.ReplaceAll(rest, "\n", "\n"+pad) + "\n"
}

func (t *Tutor) finish(b *strings.Builder) {
	t.tick()
	t.done = true
	if t.onFinish != nil {
		defer t.onFinish(t)
	}
	absent := ""
	if n := t.absentCount(); n > 0 {
		absent = fmt.Sprintf(", %d skipped on this backend", n)
	}
	fmt.Fprintf(b, "» lesson %s complete: %d step%s, %s%s.\n",
		t.l.ID, len(t.l.Steps), plural(len(t.l.Steps)), t.solvedText(), absent)
	b.WriteString(t.Summary())
}

// absentCount is how many steps the backend cannot play.
func (t *Tutor) absentCount() int {
	n := 0
	for _, a := range t.absent {
		if a != nil {
			n++
		}
	}
	return n
}

// noteBroken keeps the first failure of the lesson's own commands.
func (t *Tutor) noteBroken(err error) {
	if t.broken == nil {
		t.broken = err
	}
}

// Broken returns the first failure of the lesson's own commands in its
// reference session, nil while they all ran: a step it breaks cannot be
// judged, so the lesson cannot be graded.
func (t *Tutor) Broken() error { return t.broken }

// doCell does the current step's cell for the learner: the lesson's
// commands, each handle the learner's object paired with the lesson's, the
// transcript shown. When they cannot be replayed as they are, or do not
// get there (the session drifted from the lesson's), the session is
// rebuilt to the end of the step from the lesson's own commands.
func (t *Tutor) doCell(b *strings.Builder) error {
	i := t.step
	c := t.l.Steps[i].Cell
	if c.Auto {
		if err := t.j.Begin(i); err != nil {
			t.noteBroken(err)
			return fmt.Errorf("the lesson's own cell failed: %v", err)
		}
	}
	// From where the learner is: none of the cell's commands done, some,
	// or all of them.
	if done := t.j.Done(); done >= 0 {
		var transcript strings.Builder
		if err := t.replayCell(c, done, &transcript); err == nil {
			if v := t.j.Verdict(); v.Met {
				b.WriteString(transcript.String())
				return nil
			}
		}
		b.WriteString(transcript.String())
	}
	why := ""
	if v := t.j.Verdict(); len(v.Diffs) > 0 {
		why = " (" + v.Diffs[0].Text + ")"
	}
	n, err := t.rebuildSession(i + 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "» your session had drifted from the lesson's%s; the tutor rebuilt it: a fresh backend, then the lesson's %d command%s up to the end of step %d\n",
		why, n, plural(n), i+1)
	return nil
}

// replayCell runs the cell's commands after the first from in the
// learner's session, through the judge's pairing of handles.
func (t *Tutor) replayCell(c *Cell, from int, w *strings.Builder) error {
	k := 0
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		if k < from {
			k++
			continue
		}
		n := t.env.RecordCount()
		for _, line := range t.j.TranslateLines(cmd.Text) {
			if err := runCommand(t.env, w, Command{Line: cmd.Line, Text: line}); err != nil {
				return err
			}
		}
		var made []string
		for _, r := range t.env.Records(n) {
			made = append(made, r.Created...)
		}
		t.j.Built(k, made)
		k++
	}
	return nil
}

// learnerRecords are the records of the step that the learner typed (not
// lesson commands).
func (t *Tutor) learnerRecords() []Record {
	var out []Record
	for _, r := range t.env.Records(t.start) {
		if !TutorCommand(r.Cmd) {
			out = append(out, r)
		}
	}
	return out
}

// typed reports whether the session's last command is the learner's, run
// at this step: an attempt, judged or not (past overCap).
func (t *Tutor) typed() bool {
	n := t.env.RecordCount()
	if n <= t.start {
		return false
	}
	last := t.env.Records(n - 1)
	return len(last) == 1 && !TutorCommand(last[0].Cmd)
}

// idleNote says, once a step, that lesson next comes before the next
// step's commands, when the learner ran a verb at a step of the tutor's:
// pasted commands that skipped lesson next would otherwise go unjudged
// without a word.
func (t *Tutor) idleNote() string {
	const note = "» step %d is the tutor's and done: lesson next goes on to step %d; run its commands after it\n"
	recs := t.env.Records(t.start)
	if len(recs) == 0 || t.said[note] {
		return ""
	}
	if r := recs[len(recs)-1]; TutorCommand(r.Cmd) || r.Err != nil || !ranVerb(r) {
		return ""
	}
	t.said[note] = true
	return fmt.Sprintf(note, t.step+1, t.step+2)
}

// Observe is called after each command the learner typed (not the lesson
// command, nor the commands the tutor itself runs). When the step's goal
// is reached it says so and shows the next step. Otherwise it speaks only
// when something went wrong: a command failed, the session can no longer
// reach the goal (lesson reset), or a command led away from it — naming
// the first difference, with the hint for that kind of mistake. A command
// on the way to the goal gets no comment.
func (t *Tutor) Observe() string {
	if t.driven {
		t.observeDriven()
		return ""
	}
	if t.done || t.quit {
		return ""
	}
	if !t.l.Steps[t.step].Interactive() {
		return t.idleNote()
	}
	if t.solved[t.step] {
		return ""
	}
	if t.typed() {
		t.rec[t.step].attempts++
	}
	if t.overCap() {
		const capped = "» this step has run more than %d commands (or %d calls); the tutor judges no more of them: lesson reset starts the step over, lesson skip does it for you\n"
		if !t.said[capped] {
			t.said[capped] = true
			return fmt.Sprintf(capped, MaxStepCommands, MaxStepWork)
		}
		return ""
	}
	defer t.changed()
	recs := t.learnerRecords()
	if len(recs) == 0 {
		return ""
	}
	t.closePrediction(recs)
	v := t.j.Verdict()
	var b strings.Builder
	if v.Met {
		t.solved[t.step] = true
		b.WriteString("✓ goal reached\n")
		t.judgePrediction(&b)
		t.enter(t.step+1, &b)
		return b.String()
	}
	last := recs[len(recs)-1]
	var astray *Diff
	if last.Err == nil {
		astray = t.madeAstray(v, last)
	}
	switch d := v.Lost(); {
	case d != nil:
		if !t.said[d.Text] {
			t.said[d.Text] = true
			b.WriteString(t.wrapPrefixed("» this step's goal is out of reach from here: ", d.Text))
			b.WriteString(t.wrapPrefixed("» ", "lesson reset rebuilds the session with the lesson's own commands up to this step; lesson skip does the step for you"))
		}
	case last.Err != nil && asksForHelp[lastCall(last).Cmd]:
		// explain or help of a word it does not know: the shell said so,
		// and it is no try at the step.
	case last.Err != nil && !last.ExpectFail && !t.expectedFailure(last):
		// The shell said what failed; the tutor adds the difference about
		// what the command was for, if any, and the step's hint.
		kind := DiffKind("")
		if d := aboutCommand(v, last); d != nil {
			t.said[d.Text] = true
			b.WriteString(t.wrapPrefixed("» not yet: ", d.Text))
			kind = d.Kind
		}
		b.WriteString(t.givenHint(kind))
	case astray != nil:
		// An object the step does not make, where it makes one of that
		// kind: the learner's attempt at it, made otherwise.
		text := fmt.Sprintf("your %s is not what this step makes: %s", last.Created[len(last.Created)-1], astray.Text)
		if !t.said[text] {
			t.said[text] = true
			b.WriteString(t.wrapPrefixed("» not yet: ", text))
			b.WriteString(t.givenHint(astray.Kind))
		}
	default:
		// A wrong turn the tutor has not pointed out yet: this command's,
		// or this command is the step's experiment with other settings.
		for _, d := range v.Diffs {
			if (!d.Pending || d.near == last.N) && !t.said[d.Text] {
				t.said[d.Text] = true
				b.WriteString(t.wrapPrefixed("» not yet: ", d.Text))
				b.WriteString(t.givenHint(d.Kind))
				break
			}
		}
	}
	return b.String()
}

// aboutCommand finds the first difference about what a failed command was
// for: an object it names, one of the kind it makes that is missing, or
// the step's expected failure it might have been.
func aboutCommand(v *Verdict, r Record) *Diff {
	named := map[string]bool{}
	for _, c := range r.Calls {
		for _, a := range c.Args {
			if a.Kind == ArgHandle {
				named[a.Value] = true
			}
		}
	}
	cmd := lastCall(r).Cmd
	makes := map[string]string{"open_device": "ctx", "alloc_pd": "pd", "reg_mr": "mr", "create_comp_channel": "ch",
		"create_cq": "cq", "create_qp": "qp", "create_srq": "srq", "create_ah": "ah",
		"open_xrcd": "xrcd", "create_srq_ex": "srq", "create_qp_ex": "qp", "open_qp": "qp"}[cmd]
	for i := range v.Diffs {
		d := &v.Diffs[i]
		switch {
		case d.Handle != "" && named[d.Handle],
			d.Handle == "" && d.Ref != "" && named[d.Ref],
			d.Kind == DiffMissing && makes != "" && strings.HasPrefix(d.Ref, makes) && strings.TrimLeft(d.Ref[len(makes):], "0123456789") == "",
			d.Kind == DiffError && strings.Contains(d.Text, " "+cmd+" "):
			return d
		}
	}
	return nil
}

// madeAstray returns the step's missing object of the kind r made, when
// r made an object the judge pairs with none of the lesson's.
func (t *Tutor) madeAstray(v *Verdict, r Record) *Diff {
	if len(r.Created) == 0 {
		return nil
	}
	for _, l := range v.Mapping {
		if slices.Contains(r.Created, l) {
			return nil
		}
	}
	if d := aboutCommand(v, r); d != nil && d.Kind == DiffMissing {
		return d
	}
	return nil
}

// expectedFailure reports whether a learner's failed command is one the
// step's cell makes fail ("! " lines): part of the step, not a mistake.
func (t *Tutor) expectedFailure(r Record) bool { return t.j.expectedFailure(r) }

// givenHint is the step's hint as the tutor gives it unasked, after a
// wrong turn: the report counts the lesson's hint with those lesson hint
// showed, as the learner read it all the same.
func (t *Tutor) givenHint(kind DiffKind) string {
	if c := t.l.Steps[t.step].Cell; c != nil && (c.Hint != "" || c.Hints[kind] != "") {
		t.rec[t.step].hints++
	}
	return t.hintText(false, kind)
}

// hintText is the step's hint, the one for a kind of difference where the
// lesson has one; with solution, the lesson's own commands.
func (t *Tutor) hintText(solution bool, kind DiffKind) string {
	c := t.l.Steps[t.step].Cell
	if c == nil {
		return "» this step has nothing to do: lesson next\n"
	}
	var b strings.Builder
	if !solution {
		hint := c.Hint
		if h := c.Hints[kind]; h != "" {
			hint = h
		}
		goal, again := "lesson goal", "» lesson hint again: the lesson's own commands\n"
		if t.hints == 0 { // given unasked, after a wrong turn
			again = "» lesson hint twice: the lesson's own commands\n"
		}
		if t.driven { // a notebook asks %check; lesson hint is the terminal's
			goal, again = "%check", ""
		}
		if hint != "" {
			for _, l := range strings.Split(t.j.translateText(hint), "\n") {
				b.WriteString("hint: " + l + "\n")
			}
			if k := t.j.renamedCounted(hint); k != "" {
				// qp{i} counts the lesson's QPs, which are not the learner's.
				b.WriteString("» {i} in the hint counts the lesson's " + kindPlural(k) + ", numbered otherwise than yours: put yours in their places (lesson hint again gives the lesson's commands in your handles, as the step's solution)\n")
				again = ""
			}
		} else {
			b.WriteString("hint: this step has no hint of its own; " + goal + " shows what is still missing\n")
		}
		b.WriteString(again)
		return b.String()
	}
	b.WriteString("» the lesson's commands for this step:\n")
	for _, cmd := range c.Commands {
		for _, l := range t.j.shownLines(cmd.Bare()) {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// kindPlural names the objects of a handle's kind: QPs, CQs, XRC domains.
func kindPlural(k string) string {
	switch k {
	case "ctx":
		return "device contexts"
	case "ch":
		return "completion channels"
	case "xrcd":
		return "XRC domains"
	}
	return strings.ToUpper(k) + "s"
}

// ErrNoStep is returned by a tutor command that needs a step when the
// lesson is over.
var ErrNoStep = errors.New("the lesson is over; lesson back returns to its last step, lesson quit leaves it")

// wrapPrefixed is wrapPrefixedAt at the session's width (envWidth).
func (t *Tutor) wrapPrefixed(prefix, text string) string {
	return wrapPrefixedAt(prefix, text, t.width())
}

// width is the column the tutor's words wrap at (envWidth).
func (t *Tutor) width() int { return envWidth(t.env) }

// envWidth is the column a session's prose wraps at: Width, or less when
// the session's output must fit a narrower width (an Env with a Width
// method says which; 0 or less: no width).
func envWidth(env Env) int {
	if w, ok := env.(interface{ Width() int }); ok {
		if n := w.Width(); n > 0 && n < Width {
			return max(n, 20)
		}
	}
	return Width
}

// doWords splits a tutor command into its word and argument, refusing
// an argument where none goes, and the terminal's moves in a notebook.
func (t *Tutor) doWords(cmd string) (word, arg string, err error) {
	word, arg, _ = strings.Cut(strings.TrimSpace(cmd), " ")
	arg = strings.TrimSpace(arg)
	if arg != "" && !(word == "goal" && (arg == "--detail" || arg == "detail" || arg == "-d")) {
		return "", "", fmt.Errorf("lesson %s takes nothing more, not %q (lesson goal --detail is the one that takes a word)", word, arg)
	}
	if t.driven && (word == "next" || word == "back" || word == "skip" || word == "reset") {
		return "", "", fmt.Errorf("in a notebook the tutor follows the notebook's cells: run the step's cells, and %%check N says whether it is reached; Kernel → Restart starts over (lesson %s is for the terminal)", word)
	}
	return word, arg, nil
}

// Do runs a tutor command: next, back, hint, skip, reset, goal (with
// "goal --detail"), quit, or "" to show the current step again.
func (t *Tutor) Do(cmd string) (string, error) {
	defer t.changed()
	var b strings.Builder
	word, arg, err := t.doWords(cmd)
	if err != nil {
		return "", err
	}
	switch word {
	case "", "show":
		if t.done {
			t.finish(&b)
			return b.String(), nil
		}
		b.WriteString("\n" + stepHeaderAt(t.l, t.step, t.width()))
		b.WriteString(RenderMarkdownWidth(visibleProse(t.l, t.step, t.absent), proseStyle(t.env), t.width()))
		if t.l.Steps[t.step].Interactive() && !t.solved[t.step] {
			b.WriteString(t.goalLine())
			t.askPrediction(&b)
		}
	case "next":
		if t.done {
			return "", ErrNoStep
		}
		s := t.l.Steps[t.step]
		if s.Interactive() && !t.solved[t.step] {
			v := t.j.Verdict()
			if !v.Met {
				if w := v.Lost(); w != nil {
					return "", fmt.Errorf("the goal of step %d is out of reach from here: %s; lesson reset starts the step over, lesson skip has the tutor do it", t.step+1, w.Text)
				}
				return "", fmt.Errorf("the goal of step %d is not reached yet: %s; lesson hint helps, lesson skip has the tutor do it", t.step+1, v.Diffs[0].Text)
			}
			t.solved[t.step] = true
			b.WriteString("✓ goal reached\n")
			t.judgePrediction(&b)
		}
		t.enter(t.step+1, &b)
	case "back":
		to := t.step - 1
		if t.done {
			// Back from the end: the last step with something to do.
			to = len(t.l.Steps) - 1
			for to > 0 && (t.l.Steps[to].Cell == nil || t.absent[to] != nil) {
				to--
			}
		}
		for to >= 0 && t.absent[to] != nil {
			to-- // over a section this backend skips
		}
		if to < 0 {
			return "", errors.New("this is the first step; lesson reset starts it over")
		}
		t.rec[to].resets++
		if err := t.rebuild(to, &b); err != nil {
			return b.String(), err
		}
	case "reset":
		if t.done {
			return "", ErrNoStep
		}
		t.rec[t.step].resets++
		if err := t.rebuild(t.step, &b); err != nil {
			return b.String(), err
		}
	case "hint":
		if t.done {
			return "", ErrNoStep
		}
		t.hints++
		t.rec[t.step].hints++
		t.rec[t.step].solution = t.rec[t.step].solution || t.hints > 1 && t.l.Steps[t.step].Cell != nil
		kind := DiffKind("")
		if t.l.Steps[t.step].Interactive() {
			if v := t.j.Verdict(); len(v.Diffs) > 0 {
				kind = v.Diffs[0].Kind
				if d := v.Wrong(); d != nil {
					kind = d.Kind
				}
			}
		}
		b.WriteString(t.hintText(t.hints > 1, kind))
	case "goal":
		if t.done {
			return "", ErrNoStep
		}
		if arg != "" {
			t.lockPrediction(&b)
		}
		t.goal(&b, arg != "")
	case "skip":
		if t.done {
			return "", ErrNoStep
		}
		s := t.l.Steps[t.step]
		if s.Interactive() && !t.solved[t.step] {
			b.WriteString("» the tutor does this step for you:\n")
			if err := t.doCell(&b); err != nil {
				return b.String(), fmt.Errorf("%v; lesson reset rebuilds the step and tries again", err)
			}
			t.solved[t.step], t.skip[t.step] = true, true
			t.judgePrediction(&b)
		}
		t.enter(t.step+1, &b)
	case "quit":
		t.tick()
		t.quit = true
		fmt.Fprintf(&b, "» you left lesson %s at step %d of %d (%s); the session stays as it is.\n",
			t.l.ID, t.step+1, len(t.l.Steps), t.solvedText())
		b.WriteString(t.Summary())
		t.j.Close()
	default:
		var names []string
		for _, c := range TutorCommands {
			names = append(names, c.Name)
		}
		return "", fmt.Errorf("unknown lesson command %q; one of: %s", word, strings.Join(names, ", "))
	}
	return b.String(), nil
}

// goal writes lesson goal: the step's goal and how far the learner is;
// with detail, every expect: line and every difference the judge found.
func (t *Tutor) goal(b *strings.Builder, detail bool) {
	s := t.l.Steps[t.step]
	fmt.Fprintf(b, "» step %d of %d", t.step+1, len(t.l.Steps))
	if s.Section != "" {
		b.WriteString(" · " + s.Section)
	}
	b.WriteString("\n")
	if !s.Interactive() {
		b.WriteString("» nothing to do here: lesson next goes on\n")
		return
	}
	if s.Cell.Goal != "" {
		b.WriteString(t.wrapPrefixed("goal: ", t.j.translateText(s.Cell.Goal)))
	}
	if t.solved[t.step] {
		b.WriteString("✓ reached\n")
		return
	}
	v := t.j.Verdict()
	switch {
	case v.Met:
		b.WriteString("✓ reached: lesson next goes on\n")
	case !detail:
		d := v.Diffs[0]
		label := "✗ not yet: "
		if w := v.Lost(); w != nil {
			d, label = *w, "✗ out of reach from here (lesson reset): "
		}
		b.WriteString(t.wrapPrefixed(label, d.Text))
		if n := len(v.Diffs) - 1; n > 0 {
			fmt.Fprintf(b, "  (and %d more; lesson goal --detail lists them)\n", n)
		}
	}
	if !detail {
		return
	}
	if len(s.Cell.Expects) > 0 {
		b.WriteString("the lesson's expectations:\n")
		m := t.j.lastMapping()
		x := newEvalCtx(mappedEnv{Env: t.env, m: m, ref: t.j.refAfter()}, translateRecords(t.j.learnerRecords(), t.j.lessonNames(m)))
		if !t.j.ready {
			x = newEvalCtx(t.env, t.j.learnerRecords())
		}
		for _, e := range s.Cell.Expects {
			if err := e.check(x); err != nil {
				fmt.Fprintf(b, "  ✗ %s: %s\n", t.j.translateText(e.Text), t.j.translateMsg(err.Error()))
			} else {
				fmt.Fprintf(b, "  ✓ %s\n", t.j.translateText(e.Text))
			}
		}
	}
	if !t.j.ready {
		return
	}
	var other []Diff
	for _, d := range v.Diffs {
		if d.Kind != DiffExpect {
			other = append(other, d)
		}
	}
	if len(other) == 0 {
		b.WriteString("your session matches what the lesson's commands build in this step\n")
		return
	}
	b.WriteString("where your session differs from what the lesson's commands build:\n")
	for _, d := range other {
		mark := "to do"
		switch {
		case d.Lost:
			mark = "lost"
		case !d.Pending:
			mark = "wrong"
		}
		text := d.Text
		if d.Detail != "" {
			text = d.Detail
		}
		b.WriteString(t.wrapPrefixed(fmt.Sprintf("  [%s] %s: ", mark, d.Kind), text))
	}
}

// rebuild resets the session and replays the lesson's commands of the
// steps before step to, silently, then shows step to.
func (t *Tutor) rebuild(to int, b *strings.Builder) error {
	t.step = to // the replayed cells rebuild step to's start: they are its
	n, err := t.rebuildSession(to)
	if err != nil {
		return err
	}
	t.done = false
	for i := to; i < len(t.l.Steps); i++ {
		if t.skip[i] && i < len(t.rec) {
			// The tutor did it once: redone, it is at best the tutor's.
			t.rec[i].solution = true
		}
		t.solved[i], t.skip[i] = false, false
	}
	fmt.Fprintf(b, "» the session is rebuilt: a fresh backend, then the lesson's %d command%s before step %d (its objects, under its handles)\n", n, plural(n), to+1)
	t.enter(to, b)
	return nil
}

// rebuildSession resets the session and replays, silently, the lesson's
// cells of the steps before step to; it returns how many commands ran.
func (t *Tutor) rebuildSession(to int) (int, error) {
	n, err := Rebuild(t.env, t.l, t.absent, to)
	t.j.forget()
	return n, err
}

// Rebuild resets the session env and replays, silently, the cells of the
// steps of l before step to, but those absent marks; it returns how many
// commands ran. The session is then as at the start of step to.
func Rebuild(env Env, l *Lesson, absent []*SkippedSection, to int) (int, error) {
	if _, err := env.Exec("reset"); err != nil {
		return 0, fmt.Errorf("reset: %s", firstLine(err.Error()))
	}
	if err := switchOn(env, l); err != nil { // reset opened a new backend
		return 0, err
	}
	n := 0
	for i := 0; i < to && i < len(l.Steps); i++ {
		c := l.Steps[i].Cell
		if c == nil || i < len(absent) && absent[i] != nil {
			continue
		}
		for _, cmd := range c.Commands {
			if isComment(cmd.Text) {
				continue
			}
			var sink strings.Builder
			if err := runCommand(env, &sink, cmd); err != nil {
				return n, fmt.Errorf("replaying line %d of %s: %v", cmd.Line, l.Name, err)
			}
			n++
		}
	}
	return n, nil
}

// asksForHelp are the commands that only explain vsh itself: one that
// fails is no try at the step.
var asksForHelp = map[string]bool{"help": true, "explain": true, "history": true}

// TutorCommand reports whether a command talks to the tutor rather than to
// the verbs (lesson, predict): the judge leaves it out of what the learner
// did.
func TutorCommand(cmd string) bool { return cmd == "lesson" || cmd == "predict" }
