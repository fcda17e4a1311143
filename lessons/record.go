package lessons

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rivo/uniseg"
)

// stepRecord is what the tutor keeps of how the learner did at one step,
// for the summary and the report.
type stepRecord struct {
	attempts int           // commands typed at the step
	hints    int           // hints shown: lesson hint, and those given after a wrong turn
	solution bool          // the lesson's own commands were shown: lesson hint twice, or lesson skip (then back)
	resets   int           // lesson reset at the step, lesson back to it
	time     time.Duration // spent at the step
	pred     predictionRecord
}

// predictionRecord is the learner's answer to a step's prediction and,
// once the step is done, what happened.
type predictionRecord struct {
	answer   string // as the learner's answer reads, canonical
	given    value
	answered bool
	// closed is set once a command of the step ran a verb: from then on
	// the answer is kept as it is. closedBy is that command's line;
	// leftover, that it ran in a notebook's cell after the step before
	// it reached its goal.
	closed   bool
	closedBy string
	leftover bool
	judged   bool
	right    bool
	// observed is the right answer; why says why it could not be read.
	observed, why string
}

// Step outcomes, as the summary and the report name them.
const (
	OutcomeSolved     = "solved"      // the learner reached the goal
	OutcomeTutor      = "tutor"       // reached after lesson hint showed the lesson's commands
	OutcomeSkipped    = "skipped"     // lesson skip: the tutor did it
	OutcomeNotReached = "not reached" // the lesson ended or was left before the goal
	OutcomeNotPlayed  = "not played"  // its section needs what the backend lacks
)

// SetClock sets the tutor's clock (time.Now by default), which times the
// steps for the report and nothing else: nothing timed is ever shown in
// the session. The time so far starts over.
func (t *Tutor) SetClock(now func() time.Time) {
	t.now = now
	t.started, t.since = now(), now()
	for i := range t.rec {
		t.rec[i].time = 0
	}
}

// OnProgress sets f to be called after every command the tutor sees or
// runs (lesson ..., predict, a learner's command during a step): vsh
// lesson --report rewrites its report then.
func (t *Tutor) OnProgress(f func()) { t.progress = f }

func (t *Tutor) changed() {
	if t.progress != nil {
		t.progress()
	}
}

// tick adds the time since the last tick to the current step.
func (t *Tutor) tick() {
	now := t.now()
	if !t.done && !t.quit && t.step < len(t.rec) {
		t.rec[t.step].time += now.Sub(t.since)
	}
	t.since = now
}

// outcome is step i's outcome.
func (t *Tutor) outcome(i int) string {
	r := &t.rec[i]
	switch {
	case t.absent[i] != nil:
		return OutcomeNotPlayed
	case t.skip[i]:
		return OutcomeSkipped
	case t.solved[i] && r.solution:
		return OutcomeTutor
	case t.solved[i]:
		return OutcomeSolved
	}
	return OutcomeNotReached
}

// Complete reports whether the lesson is over (not left) with every
// learner step the backend plays solved by the learner, none skipped and
// none after the tutor showed the lesson's commands: vsh lesson's exit
// status 0.
func (t *Tutor) Complete() bool {
	if !t.done || t.quit {
		return false
	}
	for i, s := range t.l.Steps {
		if o := t.outcome(i); s.Interactive() && o != OutcomeSolved && o != OutcomeNotPlayed {
			return false
		}
	}
	return true
}

// Summary is the table of the learner steps — step, title, outcome,
// commands typed, hints shown — as the end of a lesson shows it. Times
// are left out: a session's transcript is the same on every run. Columns
// are aligned by terminal cells (a wide rune takes two), titles cut at
// summaryTitle cells.
func (t *Tutor) Summary() string {
	rows := [][]string{{"step", "title", "outcome", "commands", "hints"}}
	for i, s := range t.l.Steps {
		if !s.Interactive() {
			continue
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), cellsCut(stepTitle(s), summaryTitle), string(t.outcome(i)),
			strconv.Itoa(t.rec[i].attempts), strconv.Itoa(t.rec[i].hints)})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for j, c := range r {
			widths[j] = max(widths[j], uniseg.StringWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("  ")
		for j, c := range r {
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-uniseg.StringWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// summaryTitle is how many terminal cells of a step's title Summary shows.
const summaryTitle = 34

// cellsCut shortens s to at most n terminal cells, whole grapheme
// clusters (an emoji with its joiners, a letter with its marks) at a
// time, ending in … where it cut. Cells are counted as uniseg counts
// them: wide East Asian runes and emoji two, whatever the locale.
func cellsCut(s string, n int) string {
	if uniseg.StringWidth(s) <= n {
		return s
	}
	var b strings.Builder
	w, state := 0, -1
	for rest := s; rest != ""; {
		var cluster string
		var cw int
		cluster, rest, cw, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if w+cw > n-1 {
			break
		}
		b.WriteString(cluster)
		w += cw
	}
	return b.String() + "…"
}

// stepTitle names a step: its section's heading, or else the start of
// its goal.
func stepTitle(s *Step) string {
	if s.Section != "" {
		return s.Section
	}
	if s.Cell != nil && s.Cell.Goal != "" {
		g := s.Cell.Goal
		if i := strings.IndexAny(g, ".:;?"); i > 0 {
			g = g[:i]
		}
		return g
	}
	return ""
}

// closePrediction closes the current step's prediction once a learner's
// command of the step ran a verb that worked (not only looked: help,
// show, query_*; a command that failed shows no outcome either). In a
// notebook that includes the rest of the cell that reached the step
// before: what it runs is this step's, and it shows its outcome.
func (t *Tutor) closePrediction(recs []Record) {
	p := &t.rec[t.step].pred
	if p.closed {
		return
	}
	for _, r := range recs {
		if ranVerb(r) {
			p.closed, p.closedBy = true, cmp.Or(r.Line, r.Cmd)
			p.leftover = t.cells && t.cellGen == t.enteredGen
			return
		}
	}
}

// ranVerb reports whether a record's command ran a verb that worked, not
// only a look (help, show, query_*, mem).
func ranVerb(r Record) bool {
	for _, c := range ranCalls(r) {
		if !c.Look && c.Cmd != "repeat" && c.Cmd != "do" {
			return true
		}
	}
	return false
}

// Predict takes the learner's answer to the current step's prediction:
// the predict command. An answer may be changed until a command of the
// step runs a verb; then it is kept as it is.
func (t *Tutor) Predict(answer string) (string, error) {
	defer t.changed()
	if t.done || t.quit {
		return "", ErrNoStep
	}
	s := t.l.Steps[t.step]
	if !s.Interactive() || s.Cell.Predict == nil || t.absent[t.step] != nil {
		if k := t.lastAsked(); t.driven && k >= 0 {
			// A notebook moves on silently: the answer is for the step
			// whose cell it sits in, done already.
			return "", fmt.Errorf("step %d's prediction was judged when its goal was reached (%s); a prediction goes on the first line of the step's cell, before its commands",
				k+1, predictionOutcome(&t.rec[k].pred))
		}
		return "", fmt.Errorf("step %d asks for no prediction; predict answers the question a step asks before you run it (lesson shows the step)", t.step+1)
	}
	p, r := s.Cell.Predict, &t.rec[t.step].pred
	switch {
	case r.judged:
		return "", fmt.Errorf("step %d's prediction was judged when the step was done (%s); a step done again asks no question", t.step+1, predictionOutcome(r))
	case t.solved[t.step]:
		return "", fmt.Errorf("step %d is done: a step done again asks no question", t.step+1)
	case r.closed && r.leftover:
		// Not an error, so that Run All goes on: the cell before ran on
		// past its goal.
		return fmt.Sprintf("» too late for step %d's prediction: %s ran after step %d's goal, in that step's cell, so it was this step's first command; "+
			"the prediction stays as it was (%s). End a step's cell where its goal is reached\n", t.step+1, r.closedBy, t.prevInteractive()+1, answerText(r)), nil
	case r.closed:
		return "", fmt.Errorf("too late: a prediction is made before the step's commands run, and %s of step %d has run; "+
			"the prediction stays as it was (%s)", r.closedBy, t.step+1, answerText(r))
	}
	v, text, err := p.read(answer)
	if err != nil {
		return "", err
	}
	again := ""
	if r.answered {
		again = fmt.Sprintf(" (was %s)", r.answer)
	}
	r.answer, r.given, r.answered = text, v, true
	return fmt.Sprintf("» your prediction: %s%s; now run the step and see\n", text, again), nil
}

// prevInteractive is the learner step before the current one; -1 when
// there is none.
func (t *Tutor) prevInteractive() int {
	for k := t.step - 1; k >= 0; k-- {
		if t.l.Steps[k].Interactive() {
			return k
		}
	}
	return -1
}

// lastAsked is the step before the current one, with no learner step
// between, whose prediction was judged; -1 when there is none.
func (t *Tutor) lastAsked() int {
	for k := t.step - 1; k >= 0; k-- {
		if s := t.l.Steps[k]; s.Interactive() {
			if s.Cell.Predict != nil && t.rec[k].pred.judged {
				return k
			}
			return -1
		}
	}
	return -1
}

func answerText(r *predictionRecord) string {
	if !r.answered {
		return "unanswered"
	}
	return "your answer: " + r.answer
}

// askPrediction asks the current step's question, if it has one.
func (t *Tutor) askPrediction(b *strings.Builder) {
	p := t.l.Steps[t.step].Cell.Predict
	if p == nil {
		return
	}
	r := &t.rec[t.step].pred
	if r.judged {
		// Back at a step done before: its answer was shown then.
		b.WriteString(t.wrapPrefixed("» prediction (judged before): ", predictionOutcome(r)))
		return
	}
	b.WriteString(t.wrapPrefixed("» predict first: ", t.j.translateText(p.Ask())))
	if r.answered {
		fmt.Fprintf(b, "  (you predicted %s)\n", r.answer)
		return
	}
	b.WriteString(t.wrapPrefixed("  ", "answer with predict ANSWER before you run the step; the tutor tells you after it whether you were right"))
}

// judgePrediction judges the current step's prediction, now that the step
// is done, and says how it went.
func (t *Tutor) judgePrediction(b *strings.Builder) {
	p := t.l.Steps[t.step].Cell.Predict
	r := &t.rec[t.step].pred
	if p == nil || r.judged {
		return
	}
	r.judged, r.closed = true, true
	v, err := t.j.observePrediction(p)
	if err != nil {
		r.why = err.Error()
		fmt.Fprintf(b, "» the prediction could not be checked: %s\n", err)
		return
	}
	r.observed = p.show(v)
	r.right = r.answered && r.given.equal(v) && v.equal(r.given)
	b.WriteString(t.wrapPrefixed("» prediction: ", predictionOutcome(r)))
}

// predictionOutcome says how a judged prediction went.
func predictionOutcome(r *predictionRecord) string {
	switch {
	case r.why != "":
		return "could not be checked: " + r.why
	case !r.answered:
		return "none made; what happened: " + r.observed
	case r.right:
		return r.observed + " — right"
	}
	return fmt.Sprintf("you said %s; what happened: %s", r.answer, r.observed)
}

// observePrediction reads a prediction's right answer in the reference
// session after the step's cell: what the lesson's commands produce,
// which the learner's session holds too once the goal is reached. Where
// the reference could not be built, it reads the learner's session.
func (j *Judge) observePrediction(p *Prediction) (value, error) {
	if j.ready && j.ref.sh != nil && j.ref.step == j.step {
		return p.observe(newEvalCtx(j.ref.sh, j.ref.cellRecs))
	}
	return p.observe(newEvalCtx(j.env, j.learnerRecords()))
}

// Prediction returns the current step's prediction while the learner may
// still answer it, or nil.
func (t *Tutor) Prediction() *Prediction {
	if t.done || t.quit || !t.l.Steps[t.step].Interactive() || t.solved[t.step] || t.absent[t.step] != nil {
		return nil
	}
	if r := &t.rec[t.step].pred; r.closed || r.judged {
		return nil
	}
	return t.l.Steps[t.step].Cell.Predict
}

// lockPrediction keeps the current step's prediction as it is before
// lesson goal --detail shows what the step checks, which may give the
// answer away, and says so.
func (t *Tutor) lockPrediction(b *strings.Builder) {
	s := t.l.Steps[t.step]
	if s.Cell == nil || s.Cell.Predict == nil || t.absent[t.step] != nil {
		return
	}
	r := &t.rec[t.step].pred
	if r.closed || r.judged || t.solved[t.step] {
		return
	}
	r.closed = true
	fmt.Fprintf(b, "» the detail may give away this step's prediction, so it is kept as it is (%s)\n", answerText(r))
}
