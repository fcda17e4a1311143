package lessons

import (
	"errors"
	"fmt"
	"strings"
)

// Tutor runs a lesson interactively in a session: it shows a step's prose,
// lets the learner type whatever commands they like, and after each one
// checks the step's goal — the expectations of its cell — against the
// session's state and log, never against what the commands typed or
// printed. Any commands that reach the goal will do. The shell's lesson
// command drives it (lesson next, back, hint, skip, reset, goal, quit)
// and calls Observe after every other command.
type Tutor struct {
	env  Env
	l    *Lesson
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
}

// Tutor commands, as the shell's lesson command takes them.
var TutorCommands = []struct{ Name, Doc string }{
	{"next", "go on to the next step (once its goal is reached)"},
	{"back", "go back one step: the session is rebuilt as it was at that step's start"},
	{"hint", "a hint for this step; twice: the lesson's own commands"},
	{"skip", "let the tutor run this step's commands, and go on"},
	{"reset", "rebuild the session as it was at this step's start (replays the earlier steps on a fresh backend)"},
	{"goal", "what this step's goal is, and how far you are"},
	{"quit", "leave the lesson; the session stays as it is"},
}

// NewTutor starts lesson l in env: it checks that the backend has what the
// lesson needs (a *SkipError if not), and returns the tutor and what to
// show first: the title and the first step. The steps of a section whose
// needs the backend lacks are skipped, with the reason, when the lesson
// reaches them.
func NewTutor(env Env, l *Lesson) (*Tutor, string, error) {
	caps := &capChecker{p: env.Provider()}
	if miss := caps.missing(l.Needs); len(miss) > 0 {
		return nil, "", &SkipError{Lesson: l, Reasons: miss}
	}
	t := &Tutor{env: env, l: l, solved: make([]bool, len(l.Steps)), skip: make([]bool, len(l.Steps)),
		absent: stepSkips(l, skippedSections(l, caps))}
	var b strings.Builder
	b.WriteString(Header(l))
	b.WriteString(wrap(fmt.Sprintf("%d step%s. Type the commands yourself: any that reach a step's goal will do. "+
		"lesson hint helps, lesson skip does a step for you, lesson reset starts a step over.", len(l.Steps), plural(len(l.Steps))), Width) + "\n")
	t.enter(0, &b)
	return t, b.String(), nil
}

// Lesson returns the lesson being taught.
func (t *Tutor) Lesson() *Lesson { return t.l }

// Step returns the index of the current step, and whether the lesson is
// over (every step done, or quit).
func (t *Tutor) Step() (int, bool) { return t.step, t.done || t.quit }

// Solved reports how many steps the learner solved and how many the
// tutor did for them (lesson skip). The steps the backend cannot play
// count as neither.
func (t *Tutor) Solved() (byLearner, skipped int) {
	for i := range t.solved {
		switch {
		case t.absent[i] != nil:
		case t.skip[i]:
			skipped++
		case t.solved[i] && t.l.Steps[i].Interactive():
			byLearner++
		}
	}
	return
}

// Quit reports whether the learner left the lesson.
func (t *Tutor) Quit() bool { return t.quit }

func (t *Tutor) plain() bool { return t.env.Plain() }

// enter shows step i and, for an auto cell, runs it.
func (t *Tutor) enter(i int, b *strings.Builder) {
	if i >= len(t.l.Steps) {
		t.step = len(t.l.Steps) - 1
		t.finish(b)
		return
	}
	for i < len(t.l.Steps) {
		t.step, t.hints = i, 0
		t.start = t.env.RecordCount()
		s := t.l.Steps[i]
		b.WriteString("\n" + stepHeader(t.l, i))
		b.WriteString(RenderMarkdown(visibleProse(t.l, i, t.absent), t.plain()))
		switch {
		case t.absent[i] != nil:
			sec := t.absent[i]
			if visibleProse(t.l, i, t.absent) != "" {
				b.WriteString("\n")
			}
			b.WriteString(skipNote(sec))
			i = sec.Last + 1
			if i == len(t.l.Steps) {
				t.step = len(t.l.Steps) - 1
				t.finish(b)
				return
			}
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
			if err := t.runCell(s.Cell, b); err != nil {
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
			b.WriteString(t.goalLine())
			return
		}
	}
}

func (t *Tutor) goalLine() string {
	s := t.l.Steps[t.step]
	var goals []string
	for _, e := range s.Cell.Expects {
		goals = append(goals, e.Text)
	}
	return "» your turn. goal: " + strings.Join(goals, "; ") + "\n"
}

func (t *Tutor) finish(b *strings.Builder) {
	t.done = true
	mine, skipped := t.Solved()
	absent := ""
	if n := t.absentCount(); n > 0 {
		absent = fmt.Sprintf(", %d skipped on this backend", n)
	}
	fmt.Fprintf(b, "» lesson %s complete: %d step%s, %d solved by you, %d done by the tutor%s.\n",
		t.l.ID, len(t.l.Steps), plural(len(t.l.Steps)), mine, skipped, absent)
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

// runCell runs a cell's commands for the learner, showing the transcript,
// and checks its expectations.
func (t *Tutor) runCell(c *Cell, b *strings.Builder) error {
	start := t.env.RecordCount()
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		if err := runCommand(t.env, b, cmd); err != nil {
			return fmt.Errorf("line %d: %v", cmd.Line, err)
		}
	}
	recs := t.env.Records(start)
	for _, e := range c.Expects {
		if err := e.Check(t.env, recs); err != nil {
			return fmt.Errorf("line %d: expect: %s: %v", e.Line, e.Text, err)
		}
	}
	return nil
}

// unmet checks the current step's goal against the commands since the
// step began; it returns the expectations that do not hold.
func (t *Tutor) unmet() []error {
	s := t.l.Steps[t.step]
	if s.Cell == nil {
		return nil
	}
	recs := t.env.Records(t.start)
	x := newEvalCtx(t.env, recs)
	var out []error
	for _, e := range s.Cell.Expects {
		if err := e.check(x); err != nil {
			out = append(out, err)
		}
	}
	return out
}

// learnerRecords are the records of the step that the learner typed (not
// lesson commands).
func (t *Tutor) learnerRecords() []Record {
	var out []Record
	for _, r := range t.env.Records(t.start) {
		if r.Cmd != "lesson" {
			out = append(out, r)
		}
	}
	return out
}

// Observe is called after each command the learner typed (not the lesson
// command, nor the commands the tutor itself runs). When the step's goal
// is reached it says so and shows the next step; when the command failed
// it offers the step's hint; otherwise it says nothing.
func (t *Tutor) Observe() string {
	if t.done || t.quit || !t.l.Steps[t.step].Interactive() || t.solved[t.step] {
		return ""
	}
	recs := t.learnerRecords()
	if len(recs) == 0 {
		return ""
	}
	unmet := t.unmet()
	var b strings.Builder
	if len(unmet) == 0 {
		t.solved[t.step] = true
		b.WriteString("✓ goal reached\n")
		t.enter(t.step+1, &b)
		return b.String()
	}
	last := recs[len(recs)-1]
	switch {
	case last.Err != nil && !last.ExpectFail:
		// A mistake: say what is missing, and give the hint.
		b.WriteString("» not yet: " + unmet[0].Error() + "\n")
		b.WriteString(t.hintText(false))
	case last.Err == nil:
		// A command that worked but left the object it made or acted on
		// short of the goal (an MR without the access the step asks for):
		// a wrong turn, though no error says so.
		if u := wrongTurn(last, unmet); u != nil {
			b.WriteString("» not yet: " + u.Error() + "\n")
			b.WriteString(t.hintText(false))
		}
	}
	return b.String()
}

// wrongTurn returns the unmet expectation about an object the command made
// or acted on (its first word after the command name), if any.
func wrongTurn(r Record, unmet []error) *Unmet {
	touched := map[string]bool{}
	for _, h := range r.Created {
		touched[h] = true
	}
	if f := strings.Fields(r.Line); len(f) > 1 && handlePattern.MatchString(strings.ToLower(f[1])) {
		touched[strings.ToLower(f[1])] = true
	}
	for _, err := range unmet {
		if u, ok := err.(*Unmet); ok && u.Handle != "" && touched[u.Handle] {
			return u
		}
	}
	return nil
}

// hintText is the step's hint; with solution, the lesson's own commands.
func (t *Tutor) hintText(solution bool) string {
	c := t.l.Steps[t.step].Cell
	if c == nil {
		return "» this step has nothing to do: lesson next\n"
	}
	var b strings.Builder
	if !solution {
		if c.Hint != "" {
			for _, l := range strings.Split(c.Hint, "\n") {
				b.WriteString("hint: " + l + "\n")
			}
		} else {
			b.WriteString("hint: this step has no hint of its own; lesson goal shows what is still missing\n")
		}
		b.WriteString("» lesson hint again shows the lesson's own commands\n")
		return b.String()
	}
	b.WriteString("» the lesson's commands for this step:\n")
	for _, cmd := range c.Commands {
		b.WriteString("    " + cmd.Bare() + "\n")
	}
	return b.String()
}

// ErrNoStep is returned by a tutor command that needs a step when the
// lesson is over.
var ErrNoStep = errors.New("the lesson is over; lesson back returns to its last step, lesson quit leaves it")

// Do runs a tutor command: next, back, hint, skip, reset, goal, quit, or
// "" to show the current step again.
func (t *Tutor) Do(cmd string) (string, error) {
	var b strings.Builder
	switch cmd {
	case "", "show":
		if t.done {
			t.finish(&b)
			return b.String(), nil
		}
		b.WriteString("\n" + stepHeader(t.l, t.step))
		b.WriteString(RenderMarkdown(visibleProse(t.l, t.step, t.absent), t.plain()))
		if t.l.Steps[t.step].Interactive() && !t.solved[t.step] {
			b.WriteString(t.goalLine())
		}
	case "next":
		if t.done {
			return "", ErrNoStep
		}
		s := t.l.Steps[t.step]
		if s.Interactive() && !t.solved[t.step] {
			unmet := t.unmet()
			if len(unmet) > 0 || len(t.learnerRecords()) == 0 {
				why := "you have not run a command in this step yet"
				if len(unmet) > 0 {
					why = unmet[0].Error()
				}
				return "", fmt.Errorf("the goal of step %d is not reached yet: %s; lesson hint helps, lesson skip has the tutor do it", t.step+1, why)
			}
			t.solved[t.step] = true
			b.WriteString("✓ goal reached\n")
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
		if err := t.rebuild(to, &b); err != nil {
			return b.String(), err
		}
	case "reset":
		if t.done {
			return "", ErrNoStep
		}
		if err := t.rebuild(t.step, &b); err != nil {
			return b.String(), err
		}
	case "hint":
		if t.done {
			return "", ErrNoStep
		}
		t.hints++
		b.WriteString(t.hintText(t.hints > 1))
	case "goal":
		if t.done {
			return "", ErrNoStep
		}
		s := t.l.Steps[t.step]
		fmt.Fprintf(&b, "» step %d of %d", t.step+1, len(t.l.Steps))
		if s.Section != "" {
			b.WriteString(" · " + s.Section)
		}
		b.WriteString("\n")
		if !s.Interactive() {
			b.WriteString("» nothing to do here: lesson next goes on\n")
			break
		}
		x := newEvalCtx(t.env, t.env.Records(t.start))
		for _, e := range s.Cell.Expects {
			if err := e.check(x); err != nil {
				fmt.Fprintf(&b, "✗ %s: %v\n", e.Text, err)
			} else {
				fmt.Fprintf(&b, "✓ %s\n", e.Text)
			}
		}
	case "skip":
		if t.done {
			return "", ErrNoStep
		}
		s := t.l.Steps[t.step]
		if s.Interactive() && !t.solved[t.step] {
			b.WriteString("» the tutor does this step for you:\n")
			if err := t.runCell(s.Cell, &b); err != nil {
				return b.String(), fmt.Errorf("%v; lesson reset rebuilds the step and tries again", err)
			}
			t.solved[t.step], t.skip[t.step] = true, true
		}
		t.enter(t.step+1, &b)
	case "quit":
		t.quit = true
		mine, skipped := t.Solved()
		fmt.Fprintf(&b, "» you left lesson %s at step %d of %d (%d solved by you, %d done by the tutor); the session stays as it is.\n",
			t.l.ID, t.step+1, len(t.l.Steps), mine, skipped)
	default:
		var names []string
		for _, c := range TutorCommands {
			names = append(names, c.Name)
		}
		return "", fmt.Errorf("unknown lesson command %q; one of: %s", cmd, strings.Join(names, ", "))
	}
	return b.String(), nil
}

// rebuild resets the session and replays the lesson's commands of the
// steps before step to, silently, then shows step to.
func (t *Tutor) rebuild(to int, b *strings.Builder) error {
	if _, err := t.env.Exec("reset"); err != nil {
		return fmt.Errorf("reset: %s", firstLine(err.Error()))
	}
	n := 0
	for i := 0; i < to; i++ {
		c := t.l.Steps[i].Cell
		if c == nil || t.absent[i] != nil {
			continue
		}
		for _, cmd := range c.Commands {
			if isComment(cmd.Text) {
				continue
			}
			var sink strings.Builder
			if err := runCommand(t.env, &sink, cmd); err != nil {
				return fmt.Errorf("replaying line %d of %s: %v", cmd.Line, t.l.Name, err)
			}
			n++
		}
	}
	t.done = false
	for i := to; i < len(t.l.Steps); i++ {
		t.solved[i], t.skip[i] = false, false
	}
	fmt.Fprintf(b, "» the session is rebuilt: a fresh backend, then the lesson's %d command%s before step %d\n", n, plural(n), to+1)
	t.enter(to, b)
	return nil
}
