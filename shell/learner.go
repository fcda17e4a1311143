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
	// Predicted counts the predictions the path answered whose step was
	// done, so that they were judged; Right those judged right; Unjudged
	// the answered ones whose step the path did not finish.
	Predicted, Right, Unjudged int
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
//	#! predict A the tutor asks a prediction here; A is the learner's answer
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
	p := &learnerPath{s: s, l: tu.Lesson(), name: name, own: map[string]bool{}}
	p.res = &LearnerCheck{Interactive: p.l.Interactive()}
	p.transcript.WriteString(out)
	for _, c := range p.l.Commands() {
		p.own[strings.Join(strings.Fields(c.Bare()), " ")] = true
	}
	lr := &io.LimitedReader{R: r, N: MaxScriptFile + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // a byte order mark
		}
		switch {
		case strings.HasPrefix(line, "#!"):
			p.marker(n, line)
			continue
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		}
		if !p.command(n, line) {
			break
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
	res := p.res
	if p.markers == 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%s: no #! marker: nothing was checked", name))
	}
	res.Transcript = p.transcript.String()
	if tu := s.Tutor(); tu != nil {
		step, over := tu.Step()
		res.Step, res.Over = step+1, over
		res.Solved, res.Skipped = tu.Solved()
		for _, st := range tu.Report().Steps {
			for _, pr := range st.Predictions {
				switch {
				case pr.Right != nil:
					res.Predicted++
					if *pr.Right {
						res.Right++
					}
				case pr.Answer != nil && st.Outcome == lessons.OutcomeNotReached:
					res.Unjudged++
				}
			}
		}
	}
	return res, nil
}

// learnerPath is one CheckLearnerPath as it goes.
type learnerPath struct {
	s          *Shell
	l          *lessons.Lesson
	name       string
	res        *LearnerCheck
	own        map[string]bool // the lesson's own command lines
	transcript strings.Builder
	// last is the output of the command before, lastLine the command, and
	// lastStep the tutor's step when it ran.
	last, lastLine    string
	lastStep          int
	commands, markers int
}

func (p *learnerPath) problem(n int, format string, a ...any) {
	p.res.Problems = append(p.res.Problems, fmt.Sprintf("%s:%d: ", p.name, n)+fmt.Sprintf(format, a...))
}

// command types line; false when it leaves vsh.
func (p *learnerPath) command(n int, line string) bool {
	s := p.s
	prompt := s.Prompt()
	if tu := s.Tutor(); tu != nil {
		p.lastStep, _ = tu.Step()
	}
	o, err := s.Exec(line)
	p.last, p.lastLine = o, line
	p.commands++
	if errors.Is(err, ErrExit) {
		p.problem(n, "%q leaves vsh: the rest of the path is not played", line)
		return false
	}
	if err != nil {
		p.last += s.FormatError(err)
	}
	fmt.Fprintf(&p.transcript, "%s%s\n%s", prompt, line, p.last)
	if w := strings.Fields(line); len(w) > 0 && !lessons.TutorCommand(strings.ToLower(w[0])) {
		p.res.Typed++
		if !p.own[strings.Join(strings.Fields(line), " ")] {
			p.res.Own++
		}
	}
	return true
}

// marker checks a #! line against the tutor after the command before.
func (p *learnerPath) marker(n int, line string) {
	p.markers++
	if m := strings.Fields(strings.TrimPrefix(line, "#!")); len(m) > 0 && m[0] == "predict" {
		p.predict(n, line)
		return
	}
	if p.commands == 0 {
		p.problem(n, "a marker checks the command before it, and there is none yet")
		return
	}
	tu := p.s.Tutor()
	if tu == nil {
		p.problem(n, "no lesson is running (it was left before %q)", p.lastLine)
		return
	}
	l, last, lastLine := p.l, p.last, p.lastLine
	if tu.Lesson() != l {
		p.problem(n, "the tutor now runs lesson %s, which the path started; its markers check lesson %s", tu.Lesson().ID, l.ID)
		return
	}
	step, over := tu.Step()
	m := strings.Fields(strings.TrimPrefix(line, "#!"))
	switch {
	case len(m) == 1 && m[0] == "hint":
		p.res.Hints++
		switch {
		case over:
			p.problem(n, "%q got no hint: the lesson is over", lastLine)
		case !hasStepHint(l, step, last):
			p.problem(n, "%q did not get a hint of step %d (%q); the tutor said:\n%s", lastLine, step+1, firstHintLine(l, step), last)
		}
	case len(m) == 1 && m[0] == "refused":
		if p.lastStep < len(l.Steps) && !l.Steps[p.lastStep].Interactive() {
			p.problem(n, "%q was typed at step %d, which is the tutor's, with no goal to refuse it by: lesson next goes on to the next learner step", lastLine, p.lastStep+1)
		} else if v := tu.Judge().Verdict(); v.Met || strings.Contains(last, "✓ goal reached") {
			p.problem(n, "%q reached the goal of step %d; it should not have", lastLine, p.lastStep+1)
		}
	case len(m) == 1 && m[0] == "lost":
		if !strings.Contains(last, "» this step's goal is out of reach") {
			p.problem(n, "the tutor did not say the goal is out of reach after %q; it said:\n%s", lastLine, last)
		}
	case len(m) == 1 && m[0] == "quiet":
		if strings.Contains(last, "»") || strings.Contains(last, "hint:") {
			p.problem(n, "the tutor spoke after %q, which should be on the way to the goal:\n%s", lastLine, last)
		}
	case len(m) == 2 && m[0] == "step":
		want, err := strconv.Atoi(m[1])
		switch {
		case err != nil || want < 1:
			p.problem(n, "#! step takes a step number from 1, not %q", m[1])
		case step+1 != want:
			p.problem(n, "the tutor is at step %d, not at step %d (the lesson has %d)", step+1, want, len(l.Steps))
		}
	case len(m) == 1 && m[0] == "done":
		if mine, skipped := tu.Solved(); !over || skipped > 0 || mine != l.Interactive() {
			p.problem(n, "the lesson is not done by the learner: at step %d of %d (over: %v), %d of %d learner steps solved, %d skipped",
				step+1, len(l.Steps), over, mine, l.Interactive(), skipped)
		}
	default:
		p.problem(n, "unknown marker %q: one of #! hint, #! refused, #! lost, #! quiet, #! step N, #! done, #! predict ANSWER", line)
	}
}

// predict checks a #! predict ANSWER marker: the tutor asks a prediction
// at this point, and ANSWER, typed as predict ANSWER, is taken.
func (p *learnerPath) predict(n int, line string) {
	answer := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, "#!")), "predict"))
	tu := p.s.Tutor()
	switch {
	case answer == "":
		p.problem(n, "#! predict takes the learner's answer: #! predict IBV_WC_RNR_RETRY_EXC_ERR")
		return
	case tu == nil:
		p.problem(n, "no lesson is running, so no prediction is asked")
		return
	case tu.Prediction() == nil:
		step, over := tu.Step()
		why := fmt.Sprintf("step %d asks none", step+1)
		switch {
		case over:
			why = "the lesson is over"
		case tu.Lesson().Steps[step].Interactive() && tu.Lesson().Steps[step].Cell.Predict != nil:
			// Closed or judged before: the tutor says which.
			why = fmt.Sprintf("step %d's prediction is closed", step+1)
			if _, err := tu.Predict(answer); err != nil {
				why += ": " + err.Error()
			}
		}
		p.problem(n, "the tutor asks no prediction here: %s", why)
		return
	}
	p.command(n, "predict "+answer)
	if !strings.HasPrefix(p.last, "» your prediction: ") {
		p.problem(n, "the tutor did not take the prediction %q:\n%s", answer, p.last)
	}
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
	return strings.Contains(out, "hint: ") &&
		(strings.Contains(out, "» lesson hint again: the lesson's own commands") || strings.Contains(out, "» lesson hint twice: the lesson's own commands"))
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
