package lessons

import (
	"fmt"
	"strings"
)

// Lesson is one lesson file, parsed: its front matter and its steps.
type Lesson struct {
	// Name is where the lesson came from, for messages: "tour.md" for an
	// embedded lesson, the path for an instructor's file.
	Name string

	ID      string   // front matter id: "rc-pingpong"
	IDLine  int      // the line of id:
	Title   string   // front matter title
	Level   string   // beginner, intermediate or advanced
	Minutes int      // how long it takes a learner, roughly
	Needs   []string // capabilities the backend must offer (see Capabilities)
	// Summary is one sentence for the catalog (optional).
	Summary string
	// Mirrors names the program or source the lesson follows, with whose
	// it is (optional): "rdma-core's libibverbs/examples/rc_pingpong.c".
	Mirrors string
	// Order places the lesson in the catalog; lower first (default 1000).
	Order int
	// Author, Lang (a language tag: en, pt-BR) and Version (the lesson's
	// own) are optional front matter, shown by vsh lesson list DIR; a
	// grading report names Version.
	Author, Lang, Version string
	// Requires is the vsh versions the lesson runs on (requires: >= 0.4),
	// nil for any; RequiresLine is its line. See CheckVersion.
	Requires     *Constraint
	RequiresLine int
	// Course is the absolute path of the course folder the lesson came
	// from (LoadCourse), "" for a lesson that ships with vsh or a file of
	// its own. Progress is kept per course.
	Course string
	// Hash is the SHA-256 of the lesson file, in hex: a report names the
	// exact text a learner took.
	Hash string

	Steps []*Step
}

// Step is a stretch of prose followed by at most one command cell. The
// prose says what to do and why; the cell says how, and its expectations
// say when it is done.
type Step struct {
	Line    int    // where the step starts in the file
	Section string // the nearest "## " heading above it, if any
	Prose   string // Markdown
	Cell    *Cell  // nil for prose alone (the lesson's last words, say)

	// Needs are the capabilities the step's section needs beyond the
	// lesson's own: the needs: line right under its "## " heading. On a
	// backend that lacks one, every step of the section is skipped, and
	// the lesson goes on after it.
	Needs []string
	// SectionLine is the line of the step's "## " heading (0 before the
	// first heading): the steps of one section share it.
	SectionLine int
	// NeedsLine is the line of the section's needs: line (0 without one).
	NeedsLine int

	// lead and own cut Prose where it crosses "## " headings: Prose[:lead]
	// follows the previous step's cell in the previous step's section (it
	// explains what that cell did), and Prose[own:] is the step's own
	// section. Both are 0 when the prose crosses no heading.
	lead, own int
}

// Interactive reports whether the learner must reach the step's goal
// themselves: it has a ```vsh cell that is not auto.
func (s *Step) Interactive() bool { return s.Cell != nil && !s.Cell.Auto }

// Cell is a ```vsh block: the commands that reach the step's goal, the
// expectations that define the goal, and a hint.
type Cell struct {
	Line int // the opening fence
	// Auto is set for ```vsh auto: the tutor runs it for the learner
	// (boilerplate, or a demonstration), so it needs no expectation.
	Auto     bool
	Commands []Command
	Expects  []*Expect
	Hint     string
	HintLine int
	// Hints are hints for one kind of difference from the lesson's
	// reference (hint(type): ...): the tutor shows the one for the
	// mistake made, and Hint otherwise.
	Hints map[DiffKind]string
	// Goal is what the learner reads as the step's goal (goal: ...), in
	// prose; the expectations are shown only when asked for.
	Goal     string
	GoalLine int
	// ByExpect is set by judge: expect — the step is judged by its
	// expect: lines alone, not by comparing with the reference.
	ByExpect bool
	// GoalHolds is set by goal-holds: ok — the step's goal may already
	// hold when it starts (lesson check refuses that otherwise).
	GoalHolds bool
	// Predict is the question the tutor asks before the learner runs the
	// step (predict: and answer: lines), or nil.
	Predict *Prediction

	badExpect bool // an expect: line did not parse (reported already)
}

// Command is one line of a cell. A line starting with "! " must fail.
type Command struct {
	Line int
	Text string
}

// ExpectsFailure reports whether the command is marked "! ".
func (c Command) ExpectsFailure() bool {
	t := strings.TrimSpace(c.Text)
	return t == "!" || strings.HasPrefix(t, "! ") || strings.HasPrefix(t, "!\t")
}

// Bare returns the command without its "! " mark: what a learner types.
func (c Command) Bare() string {
	t := strings.TrimSpace(c.Text)
	if c.ExpectsFailure() {
		return strings.TrimSpace(t[1:])
	}
	return t
}

// isComment reports whether a cell line is only a comment.
func isComment(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "#") }

// Error is a problem in a lesson file, at a line.
type Error struct {
	Name string // the file
	Line int    // 1-based; 0 when it concerns the whole file
	Msg  string

	err   error // what it stands for (a *PlayError), for errors.As
	parse bool  // the file does not parse: it cannot be played
	named bool  // Msg names the file itself
}

// Unwrap returns the error e stands for, if any.
func (e *Error) Unwrap() error { return e.err }

func (e *Error) Error() string {
	if e.named {
		return e.Msg
	}
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Name, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// Errors is every problem found in one file, in line order.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns each problem, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// errAt makes an *Error for lesson l.
func (l *Lesson) errAt(line int, format string, a ...any) *Error {
	return &Error{Name: l.Name, Line: line, Msg: fmt.Sprintf(format, a...)}
}

// Interactive counts the steps the learner performs.
func (l *Lesson) Interactive() int {
	n := 0
	for _, s := range l.Steps {
		if s.Interactive() {
			n++
		}
	}
	return n
}

// readWRIDs returns the wr_ids an expectation of the lesson reads from
// completions, by CQ (the lesson's handles; "" for those read from every
// CQ). The work requests the lesson gives those wr_ids are told apart by
// them, as rc_pingpong's are, so a learner must give the same.
func (l *Lesson) readWRIDs() map[string]map[uint64]bool {
	var out map[string]map[uint64]bool
	for _, s := range l.Steps {
		if s.Cell == nil {
			continue
		}
		for _, e := range s.Cell.Expects {
			if e.subj.kind != subjCompletions || e.subj.field != "wr_id" || e.subj.count {
				continue
			}
			vals, err := e.want(nil)
			if err != nil {
				continue
			}
			if out == nil {
				out = map[string]map[uint64]bool{}
			}
			if out[e.subj.handle] == nil {
				out[e.subj.handle] = map[uint64]bool{}
			}
			for _, v := range vals {
				out[e.subj.handle][v.n] = true
			}
		}
	}
	return out
}

// Commands returns every command of the lesson, in order: what play runs.
func (l *Lesson) Commands() []Command {
	var out []Command
	for _, s := range l.Steps {
		if s.Cell != nil {
			out = append(out, s.Cell.Commands...)
		}
	}
	return out
}
