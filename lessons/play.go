package lessons

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// PlayOptions configures Play.
type PlayOptions struct {
	// Pace is the pause before each step and each command, so that a class
	// can follow (vsh lesson play ID --pace 2s). Zero plays at full speed.
	Pace time.Duration
	// Sleep waits; nil is time.Sleep. Tests replace it.
	Sleep func(time.Duration)
	// Lacking names capabilities to play as if the backend lacked them,
	// whatever it offers: the sections that need one are skipped. Lesson
	// check uses it to play a lesson as a backend without them would.
	Lacking []string
	// Judge also compares the session after every cell with the lesson's
	// reference session on the simulator, as the tutor judges a learner:
	// on a real device that proves the lesson teaches what the device
	// does; on the simulator with another seed, that nothing random by
	// nature is compared.
	Judge bool
	// From is the step (0-based) the play starts at; the session is first
	// rebuilt by replaying the lesson's cells before it, silently.
	From int
	// Pause, when set, is asked before each step which key the presenter
	// pressed (vsh lesson play --pause): play it, go back one step (the
	// session rebuilt for it), or stop (Play returns ErrPlayQuit).
	Pause func(step int) PlayKey
	// Context stops the play when it ends: the command running then is
	// stopped too where the Env can (an ExecContext method), and Play
	// returns a PlayError that says so. nil never stops.
	Context context.Context

	// goalHeld is told of each learner step whose goal holds before its
	// cell runs, as the tutor judges it: lesson check refuses such a step.
	goalHeld func(i int)
}

// PlayError is a lesson that did not play to its end: a command that
// failed (or a "! " command that succeeded), or an expectation that did not
// hold. Line is the line of the lesson file.
type PlayError struct {
	Name string
	Line int
	Msg  string
}

func (e *PlayError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg) }

// Header is the lesson's title block, as play and the tutor print it.
func Header(l *Lesson) string { return headerAt(l, Width) }

// headerAt is Header wrapped at width columns.
func headerAt(l *Lesson, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Lesson %s: %s\n", l.ID, l.Title)
	meta := fmt.Sprintf("%s, about %d minute%s", l.Level, l.Minutes, plural(l.Minutes))
	if l.Mirrors != "" {
		meta += "; follows " + l.Mirrors
	}
	b.WriteString(wrap(meta, width) + "\n")
	if len(l.Needs) > 0 {
		b.WriteString("needs: " + strings.Join(l.Needs, ", ") + "\n")
	}
	for _, sn := range SectionNeeds(l) {
		b.WriteString(wrap(fmt.Sprintf("section %q needs: %s (skipped without)", sn.Section, strings.Join(sn.Needs, ", ")), width) + "\n")
	}
	return b.String()
}

// stepHeader is the rule above a step: "── step 3 of 14 · Connect ──".
func stepHeader(l *Lesson, i int) string { return stepHeaderAt(l, i, Width) }

// stepHeaderAt is stepHeader as wide as width.
func stepHeaderAt(l *Lesson, i, width int) string {
	s := l.Steps[i]
	t := fmt.Sprintf("── step %d of %d", i+1, len(l.Steps))
	if s.Section != "" {
		t += " · " + s.Section
	}
	t += " "
	if n := width - runeLen(t); n > 2 {
		t += strings.Repeat("─", n)
	}
	return t + "\n"
}

func runeLen(s string) int { return len([]rune(s)) }

// wrap breaks text into lines of at most w columns, at blanks.
func wrap(text string, w int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && runeLen(line)+1+runeLen(word) > w {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Play runs a whole lesson in env, as a narrated demonstration: each step's
// prose, then its commands and their output, then its expectations, each
// marked ✓ or ✗. It stops at the first command that fails unexpectedly or
// expectation that does not hold, and returns a *PlayError with the line.
// A lesson whose needs the backend lacks returns a *SkipError and plays
// nothing; a section whose needs it lacks is skipped, saying why, and the
// lesson goes on after it. Play needs no terminal.
func Play(env Env, l *Lesson, w io.Writer, o PlayOptions) error {
	if err := switchOn(env, l); err != nil {
		return err
	}
	caps := &capChecker{p: env.Provider(), lacking: o.Lacking}
	if miss := caps.missing(l.Needs); len(miss) > 0 {
		return &SkipError{Lesson: l, Reasons: miss}
	}
	if o.From < 0 || o.From >= len(l.Steps) {
		return &PlayError{Name: l.Name, Line: 1, Msg: fmt.Sprintf("lesson %s has steps 1 to %d, not a step %d", l.ID, len(l.Steps), o.From+1)}
	}
	secs := skippedSections(l, caps)
	p := &player{env: env, l: l, w: w, o: o, skips: stepSkips(l, secs), ctx: o.Context}
	if p.ctx == nil {
		p.ctx = context.Background()
	}
	if o.Judge || o.goalHeld != nil {
		p.j = NewJudge(env, l, p.skips)
		defer p.j.Close()
	}
	io.WriteString(w, Header(l))
	if o.From > 0 {
		if err := p.jump(o.From); err != nil {
			return err
		}
	}
	for i := o.From; i < len(l.Steps); {
		s := l.Steps[i]
		if p.skips[i] != nil && i > o.From && p.skips[i-1] == p.skips[i] {
			i++
			continue // said at the section's first step
		}
		next, err := p.between(i)
		if err != nil || next != i {
			if err == nil {
				err = p.jump(next)
			}
			if err != nil {
				return err
			}
			i = next
			continue
		}
		if err := p.step(i, s); err != nil {
			return err
		}
		i++
	}
	steps := fmt.Sprintf("%d step%s", len(l.Steps), plural(len(l.Steps)))
	if n := skippedSteps(secs); n > 0 {
		steps += fmt.Sprintf(" (%d skipped on this backend)", n)
	}
	fmt.Fprintf(w, "\nLesson %s played to its end: %s, every expectation met.\n", l.ID, steps)
	return nil
}

// PlayKey is what a presenter pressed before a step (PlayOptions.Pause).
type PlayKey int

// The keys of PlayOptions.Pause.
const (
	PlayNext PlayKey = iota // Enter or space: play the step
	PlayBack                // b: back to the step before
	PlayQuit                // q: stop the play
)

// ErrPlayQuit is what Play returns when the presenter pressed q.
var ErrPlayQuit = errors.New("the presenter stopped the play")

// player is one Play.
type player struct {
	env   Env
	l     *Lesson
	w     io.Writer
	o     PlayOptions
	skips []*SkippedSection
	ctx   context.Context
	j     *Judge
}

// sleep waits d, or until the play's context ends.
func (p *player) sleep(d time.Duration) {
	if p.o.Sleep != nil {
		p.o.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.ctx.Done():
	}
}

// pause waits the pace before a step or a command, and says whether the
// play was stopped meanwhile.
func (p *player) pause() error {
	if p.o.Pace > 0 {
		p.sleep(p.o.Pace)
	}
	if p.ctx.Err() != nil {
		return fmt.Errorf("stopped (%v)", context.Cause(p.ctx))
	}
	return nil
}

// between runs before step i: the pace, or the presenter's key. It
// returns the step to play next: i, or the one before it for b.
func (p *player) between(i int) (int, error) {
	line := 1
	if c := p.l.Steps[i].Cell; c != nil {
		line = c.Line
	}
	if err := p.pause(); err != nil {
		return i, &PlayError{Name: p.l.Name, Line: line, Msg: err.Error()}
	}
	if p.o.Pause == nil {
		return i, nil
	}
	for {
		switch p.o.Pause(i) {
		case PlayQuit:
			return i, ErrPlayQuit
		case PlayBack:
			back := i - 1
			for back > 0 && p.skips[back] != nil {
				back-- // over a section this backend skips
			}
			if back < 0 {
				continue // at the first step already
			}
			return back, nil
		default:
			if p.ctx.Err() != nil {
				return i, &PlayError{Name: p.l.Name, Line: line, Msg: fmt.Sprintf("stopped (%v)", context.Cause(p.ctx))}
			}
			return i, nil
		}
	}
}

// jump rebuilds the session as at the start of step to, replaying the
// lesson's cells before it silently.
func (p *player) jump(to int) error {
	n, err := Rebuild(p.env, p.l, p.skips, to)
	if err != nil {
		return &PlayError{Name: p.l.Name, Line: 1, Msg: fmt.Sprintf("rebuilding the session for step %d: %v", to+1, err)}
	}
	if p.j != nil {
		p.j.forget()
	}
	fmt.Fprintf(p.w, "\n» the session is rebuilt for step %d: a fresh backend, then the lesson's %d command%s before it\n", to+1, n, plural(n))
	return nil
}

// step plays step i: its prose, its cell, its expectations.
func (p *player) step(i int, s *Step) error {
	l, w := p.l, p.w
	io.WriteString(w, "\n"+stepHeader(l, i))
	prose := RenderMarkdownWidth(visibleProse(l, i, p.skips), proseStyle(p.env), envWidth(p.env))
	io.WriteString(w, prose)
	if p.skips[i] != nil {
		if prose != "" {
			io.WriteString(w, "\n")
		}
		io.WriteString(w, skipNote(p.skips[i]))
		return nil
	}
	if s.Cell == nil {
		return nil
	}
	io.WriteString(w, "\n")
	if s.Cell.Goal != "" {
		io.WriteString(w, wrapPrefixedAt("» goal: ", s.Cell.Goal, envWidth(p.env)))
	}
	if pr := s.Cell.Predict; pr != nil {
		io.WriteString(w, wrapPrefixedAt("» predict: ", pr.Ask(), envWidth(p.env)))
	}
	if j := p.j; j != nil {
		if err := j.Begin(i); err != nil && p.o.Judge {
			return &PlayError{Name: l.Name, Line: s.Cell.Line, Msg: err.Error()}
		}
		if p.o.goalHeld != nil && s.Interactive() && j.ready && j.Verdict().Met {
			p.o.goalHeld(i)
		}
	}
	if err := playCell(p.ctx, p.env, l, s.Cell, w, p.pause); err != nil {
		return err
	}
	if p.o.Judge {
		if v := p.j.Verdict(); !v.Met {
			d := v.Diffs[0]
			text := d.Text
			if d.Detail != "" {
				text = d.Detail
			}
			fmt.Fprintf(w, "✗ the session differs from the lesson's reference: %s\n", text)
			return &PlayError{Name: l.Name, Line: s.Cell.Line, Msg: "the session differs from the lesson's reference on the simulator: " + text}
		}
	}
	return nil
}

// visibleProse is what of step i's prose is shown where the steps skips
// marks are skipped. After a skipped section, the prose that ends it (it
// explains the section's last cell) is left out; of a skipped step, only
// the prose that ends the section before it is shown.
func visibleProse(l *Lesson, i int, skips []*SkippedSection) string {
	s := l.Steps[i]
	from, to := 0, len(s.Prose)
	if i > 0 && skips[i-1] != nil {
		from = s.lead
	}
	if skips[i] != nil {
		to = s.own
	}
	if from >= to {
		return ""
	}
	return dropHeading(s.Prose[from:to], s.Section)
}

// dropHeading removes the "## " heading that opens a step's prose when it
// is the step's own section: the rule above the step already names it
// ("step 3 of 14 · Connect"). A heading after other prose stays: it marks
// where the previous section's closing words end.
func dropHeading(prose, section string) string {
	rest := strings.TrimLeft(prose, " \t\n")
	first, after, _ := strings.Cut(rest, "\n")
	if t := strings.TrimSpace(first); section == "" || !strings.HasPrefix(t, "## ") || strings.TrimSpace(t[3:]) != section {
		return prose
	}
	return after
}

// skipNote says that a section is skipped, and why.
func skipNote(s *SkippedSection) string {
	var caps, whys []string
	for _, r := range s.Reasons {
		c, why, _ := strings.Cut(r, ": ")
		caps, whys = append(caps, c), append(whys, why)
	}
	verb, them := "need", "them"
	if s.First == s.Last {
		verb, them = "needs", "it"
	}
	return fmt.Sprintf("» skipped on this backend: %s %s %s (%s); the lesson goes on without %s\n",
		s.Steps(), verb, strings.Join(caps, " and "), strings.Join(whys, "; "), them)
}

// skippedSteps counts the steps of the sections.
func skippedSteps(secs []*SkippedSection) int {
	n := 0
	for _, s := range secs {
		n += s.StepCount()
	}
	return n
}

// playCell runs a cell's commands and checks its expectations.
func playCell(ctx context.Context, env Env, l *Lesson, c *Cell, w io.Writer, pause func() error) error {
	if wantsPackets(c) {
		env.RecordPackets(true)
		defer env.RecordPackets(false)
	}
	start := env.RecordCount()
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		if err := pause(); err != nil {
			return &PlayError{Name: l.Name, Line: cmd.Line, Msg: err.Error()}
		}
		if err := runCommandContext(ctx, env, w, cmd); err != nil {
			return &PlayError{Name: l.Name, Line: cmd.Line, Msg: err.Error()}
		}
	}
	if err := checkCell(env, l, c, start, w); err != nil {
		return err
	}
	return showAnswer(env, l, c, start, w)
}

// showAnswer shows the answer to a cell's prediction, read after the
// cell; one that cannot be read, or is none of the choices, is the
// lesson's mistake.
func showAnswer(env Env, l *Lesson, c *Cell, start int, w io.Writer) error {
	p := c.Predict
	if p == nil {
		return nil
	}
	v, err := p.observe(newEvalCtx(env, env.Records(start)))
	if err != nil {
		return &PlayError{Name: l.Name, Line: p.AnswerLine, Msg: fmt.Sprintf("answer: %s cannot be read after the cell: %v", p.Answer, err)}
	}
	got := p.show(v)
	io.WriteString(w, wrapPrefixedAt("» the answer: ", got, envWidth(env)))
	if p.Kind == PredictChoice && !slices.Contains(p.Choices, got) {
		return &PlayError{Name: l.Name, Line: p.Line, Msg: fmt.Sprintf("predict: the answer after the cell is %s, which is none of the choices (%s); add it, or read another answer:",
			got, strings.Join(p.Choices, " | "))}
	}
	return nil
}

// runCommand runs one command as a script would, writing its transcript:
// the prompt and the command, its output, its error.
func runCommand(env Env, w io.Writer, cmd Command) error {
	return runCommandContext(context.Background(), env, w, cmd)
}

// contextExec is an Env whose commands stop when a context ends.
type contextExec interface {
	ExecContext(ctx context.Context, line string) (string, error)
}

// runCommandContext is runCommand that stops the command when ctx ends,
// where the Env can.
func runCommandContext(ctx context.Context, env Env, w io.Writer, cmd Command) error {
	io.WriteString(w, env.Prompt()+cmd.Text+"\n")
	var out string
	var err error
	if ce, ok := env.(contextExec); ok {
		out, err = ce.ExecContext(ctx, cmd.Text)
	} else {
		out, err = env.Exec(cmd.Text)
	}
	io.WriteString(w, out)
	if err != nil {
		io.WriteString(w, env.FormatError(err))
		if cmd.ExpectsFailure() {
			return fmt.Errorf("%s was expected to fail, but it succeeded", cmd.Bare())
		}
		return fmt.Errorf("%s failed (%s); a lesson's command must succeed unless it is marked \"! \"",
			cmd.Bare(), firstLine(err.Error()))
	}
	return nil
}

// checkCell checks a cell's expectations against the records since start,
// printing each.
func checkCell(env Env, l *Lesson, c *Cell, start int, w io.Writer) error {
	recs := env.Records(start)
	for _, e := range c.Expects {
		if err := e.Check(env, recs); err != nil {
			fmt.Fprintf(w, "✗ expect: %s\n  %s\n", e.Text, err)
			return &PlayError{Name: l.Name, Line: e.Line, Msg: "expect: " + e.Text + ": " + err.Error()}
		}
		fmt.Fprintf(w, "✓ expect: %s\n", e.Text)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// StepProse is the Markdown of step i's prose as the tutor shows it: the
// heading of the step's own section left out when it opens the prose.
func StepProse(l *Lesson, i int) string {
	if i < 0 || i >= len(l.Steps) {
		return ""
	}
	return strings.TrimSpace(dropHeading(l.Steps[i].Prose, l.Steps[i].Section))
}
