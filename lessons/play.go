package lessons

import (
	"fmt"
	"io"
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
func Header(l *Lesson) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Lesson %s: %s\n", l.ID, l.Title)
	meta := fmt.Sprintf("%s, about %d minute%s", l.Level, l.Minutes, plural(l.Minutes))
	if l.Mirrors != "" {
		meta += "; follows rdma-core's " + l.Mirrors
	}
	b.WriteString(wrap(meta, Width) + "\n")
	if len(l.Needs) > 0 {
		b.WriteString("needs: " + strings.Join(l.Needs, ", ") + "\n")
	}
	return b.String()
}

// stepHeader is the rule above a step: "── step 3 of 14 · Connect ──".
func stepHeader(l *Lesson, i int) string {
	s := l.Steps[i]
	t := fmt.Sprintf("── step %d of %d", i+1, len(l.Steps))
	if s.Section != "" {
		t += " · " + s.Section
	}
	t += " "
	if n := Width - runeLen(t); n > 2 {
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
// nothing. Play needs no terminal.
func Play(env Env, l *Lesson, w io.Writer, o PlayOptions) error {
	if miss := Missing(l, env.Provider()); len(miss) > 0 {
		return &SkipError{Lesson: l, Reasons: miss}
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	pause := func() {
		if o.Pace > 0 {
			sleep(o.Pace)
		}
	}
	io.WriteString(w, Header(l))
	for i, s := range l.Steps {
		pause()
		io.WriteString(w, "\n"+stepHeader(l, i))
		if p := RenderMarkdown(s.Prose, env.Plain()); p != "" {
			io.WriteString(w, p)
		}
		if s.Cell == nil {
			continue
		}
		io.WriteString(w, "\n")
		if err := playCell(env, l, s.Cell, w, pause); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nLesson %s played to its end: %d step%s, every expectation met.\n", l.ID, len(l.Steps), plural(len(l.Steps)))
	return nil
}

// playCell runs a cell's commands and checks its expectations.
func playCell(env Env, l *Lesson, c *Cell, w io.Writer, pause func()) error {
	start := env.RecordCount()
	for _, cmd := range c.Commands {
		if isComment(cmd.Text) {
			continue
		}
		pause()
		if err := runCommand(env, w, cmd); err != nil {
			return &PlayError{Name: l.Name, Line: cmd.Line, Msg: err.Error()}
		}
	}
	return checkCell(env, l, c, start, w)
}

// runCommand runs one command as a script would, writing its transcript:
// the prompt and the command, its output, its error.
func runCommand(env Env, w io.Writer, cmd Command) error {
	io.WriteString(w, env.Prompt()+cmd.Text+"\n")
	out, err := env.Exec(cmd.Text)
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
