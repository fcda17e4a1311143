package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
)

// LearnerCheck is what playing a learner's path through the tutor found.
type LearnerCheck struct {
	// Problems are the markers that did not hold, each "FILE:LINE: what".
	Problems []string
	// Step is the tutor's step at the end (1-based); Over is set when the
	// lesson ended.
	Step int
	Over bool
	// Solved counts the learner steps the learner solved, Skipped those
	// skipped, of Interactive.
	Solved, Skipped, Interactive int
	// Hints counts the #! hint markers checked.
	Hints int
	// Typed counts the commands typed (not lesson commands); Own those
	// that are no line of the lesson's own.
	Typed, Own int
	// Transcript is the session as a terminal shows it.
	Transcript string
}

// Complete reports whether the learner solved every learner step.
func (c *LearnerCheck) Complete() bool {
	return c.Over && c.Skipped == 0 && c.Solved == c.Interactive
}

// CheckLearnerPath starts a lesson (an id or a file, as the lesson command
// takes it) and types the lines of a learner's path, read from r (name is
// its file, for the problems' positions), checking the instructor's
// markers after the command before them:
//
//	#! hint      it got a hint of its step
//	#! refused   it did not reach the step's goal
//	#! lost      the tutor said the goal is out of reach (lesson reset)
//	#! quiet     the tutor said nothing: it is on the way to the goal
//	#! step N    the tutor is now at step N (1-based)
//	#! done      the lesson is over, every learner step solved by the learner
//
// Other lines starting with # are comments. The shell should be fresh.
func (s *Shell) CheckLearnerPath(lesson string, r io.Reader, name string) (*LearnerCheck, error) {
	out, err := s.Exec("lesson " + quote(lesson))
	if err != nil {
		return nil, fmt.Errorf("lesson %s: %s", lesson, strings.TrimSpace(s.FormatError(err)))
	}
	tu := s.Tutor()
	if tu == nil {
		return nil, fmt.Errorf("lesson %s did not start", lesson)
	}
	l := tu.Lesson()
	res := &LearnerCheck{Interactive: l.Interactive()}
	markers, commands := 0, 0
	var transcript strings.Builder
	transcript.WriteString(out)
	own := map[string]bool{}
	for _, c := range l.Commands() {
		own[strings.Join(strings.Fields(c.Bare()), " ")] = true
	}
	last, lastLine := "", ""
	lastStep := 0 // the tutor's step when the command before ran
	problem := func(n int, format string, a ...any) {
		res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: ", name, n)+fmt.Sprintf(format, a...))
	}
	lr := &io.LimitedReader{R: r, N: MaxScriptFile + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#!") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			prompt := s.Prompt()
			if tu := s.Tutor(); tu != nil {
				lastStep, _ = tu.Step()
			}
			o, err := s.Exec(line)
			last, lastLine = o, line
			commands++
			if errors.Is(err, ErrExit) {
				problem(n, "%q leaves vsh: the rest of the path is not played", line)
				break
			}
			if err != nil {
				last += s.FormatError(err)
			}
			fmt.Fprintf(&transcript, "%s%s\n%s", prompt, line, last)
			if !strings.HasPrefix(line, "lesson") {
				res.Typed++
				if !own[strings.Join(strings.Fields(line), " ")] {
					res.Own++
				}
			}
			continue
		}
		markers++
		if commands == 0 {
			problem(n, "a marker checks the command before it, and there is none yet")
			continue
		}
		tu := s.Tutor()
		if tu == nil {
			problem(n, "no lesson is running (it was left before %q)", lastLine)
			continue
		}
		if tu.Lesson() != l {
			problem(n, "the tutor now runs lesson %s, which the path started; its markers check lesson %s", tu.Lesson().ID, l.ID)
			continue
		}
		step, over := tu.Step()
		marker := strings.Fields(strings.TrimPrefix(line, "#!"))
		switch {
		case len(marker) == 1 && marker[0] == "hint":
			res.Hints++
			switch {
			case over:
				problem(n, "%q got no hint: the lesson is over", lastLine)
			case !hasStepHint(l, step, last):
				problem(n, "%q did not get a hint of step %d (%q); the tutor said:\n%s", lastLine, step+1, firstHintLine(l, step), last)
			}
		case len(marker) == 1 && marker[0] == "refused":
			if v := tu.Judge().Verdict(); v.Met || strings.Contains(last, "✓ goal reached") {
				problem(n, "%q reached the goal of step %d; it should not have", lastLine, lastStep+1)
			}
		case len(marker) == 1 && marker[0] == "lost":
			if !strings.Contains(last, "» this step's goal is out of reach") {
				problem(n, "the tutor did not say the goal is out of reach after %q; it said:\n%s", lastLine, last)
			}
		case len(marker) == 1 && marker[0] == "quiet":
			if strings.Contains(last, "»") || strings.Contains(last, "hint:") {
				problem(n, "the tutor spoke after %q, which should be on the way to the goal:\n%s", lastLine, last)
			}
		case len(marker) == 2 && marker[0] == "step":
			want, err := strconv.Atoi(marker[1])
			if err != nil || want < 1 {
				problem(n, "#! step takes a step number from 1, not %q", marker[1])
				continue
			}
			if step+1 != want {
				problem(n, "the tutor is at step %d, not at step %d (the lesson has %d)", step+1, want, len(l.Steps))
			}
		case len(marker) == 1 && marker[0] == "done":
			if mine, skipped := tu.Solved(); !over || skipped > 0 || mine != l.Interactive() {
				problem(n, "the lesson is not done by the learner: at step %d of %d (over: %v), %d of %d learner steps solved, %d skipped",
					step+1, len(l.Steps), over, mine, l.Interactive(), skipped)
			}
		default:
			problem(n, "unknown marker %q: one of #! hint, #! refused, #! lost, #! quiet, #! step N, #! done", line)
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("%s:%d: the line is longer than %d KiB (MaxLine)", name, n+1, MaxLine>>10)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case lr.N == 0:
		return nil, fmt.Errorf("%s is larger than %d MiB (MaxScriptFile): a learner's path is a script", name, MaxScriptFile>>20)
	}
	if markers == 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%s: no #! marker: nothing was checked", name))
	}
	res.Transcript = transcript.String()
	if tu := s.Tutor(); tu != nil {
		step, over := tu.Step()
		res.Step, res.Over = step+1, over
		res.Solved, res.Skipped = tu.Solved()
	}
	return res, nil
}

// hasStepHint reports whether out shows the first line of one of the
// step's hints: its own, or one of a kind of mistake.
func hasStepHint(l *lessons.Lesson, step int, out string) bool {
	if step >= len(l.Steps) {
		return false
	}
	c := l.Steps[step].Cell
	if c == nil {
		return strings.Contains(out, "hint:")
	}
	if strings.Contains(out, firstHintLine(l, step)) {
		return true
	}
	for _, h := range c.Hints {
		if strings.Contains(out, "hint: "+strings.SplitN(h, "\n", 2)[0]) {
			return true
		}
	}
	return strings.Contains(out, "hint: ") && strings.Contains(out, "» lesson hint again shows the lesson's own commands")
}

func firstHintLine(l *lessons.Lesson, step int) string {
	if step >= len(l.Steps) {
		return "hint:"
	}
	c := l.Steps[step].Cell
	if c == nil || c.Hint == "" {
		return "hint:"
	}
	return "hint: " + strings.SplitN(c.Hint, "\n", 2)[0]
}
