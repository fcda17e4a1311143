package lessons

import (
	"fmt"
	"strings"
)

// NewNotebookTutor starts lesson l in env for a notebook (the Jupyter
// kernel's %lesson): the notebook's own cells run the lesson's commands —
// the tutor's cells as well as the learner's — so the tutor runs none. It
// judges after every command, as the terminal's tutor does, and moves on
// from a step as soon as its goal is reached, silently: it speaks when
// the notebook asks, through Check. It returns the tutor and the lesson's
// header.
func NewNotebookTutor(env Env, l *Lesson) (*Tutor, string, error) {
	t, err := newTutor(env, l, true)
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	b.WriteString(headerAt(l, envWidth(env)))
	fmt.Fprintf(&b, "%d step%s. Run the cells in order; %%check N says whether step N's goal is reached.\n",
		len(l.Steps), plural(len(l.Steps)))
	var quiet strings.Builder
	t.enter(0, &quiet)
	return t, b.String(), nil
}

// enterDriven makes step i the current step of a notebook's tutor and
// reports whether it is reached already (a step with nothing to do, one
// this backend cannot play, or one whose goal the session meets).
func (t *Tutor) enterDriven(i int, b *strings.Builder) bool {
	s := t.l.Steps[i]
	switch {
	case t.absent[i] != nil:
		return true
	case s.Cell == nil:
		t.solved[i] = true
		return true
	}
	if err := t.j.Begin(i); err != nil {
		t.noteBroken(err)
		fmt.Fprintf(b, "» the tutor could not build step %d's reference (%v): the lesson is broken there and the step cannot be judged (vsh lesson check FILE says where)\n", i+1, err)
	}
	if v := t.j.Verdict(); v.Met && t.j.ready {
		t.solved[i] = true
		return true
	}
	return false
}

// Driven reports whether the tutor follows a notebook's cells
// (NewNotebookTutor) rather than running the lesson's own.
func (t *Tutor) Driven() bool { return t.driven }

// observeDriven judges the current step after a command the notebook ran,
// and moves on when its goal is reached.
func (t *Tutor) observeDriven() { t.judgeDriven(false) }

// judgeDriven is observeDriven; asked (%check), it judges a step past the
// commands the tutor judges as they come (overCap), which a notebook
// cannot reset.
func (t *Tutor) judgeDriven(asked bool) {
	if t.done || t.quit || t.solved[t.step] {
		return
	}
	if !asked && t.typed() && t.l.Steps[t.step].Interactive() {
		t.rec[t.step].attempts++ // a command the notebook ran, judged or not
	}
	if t.overCap() && !asked {
		return
	}
	recs := t.learnerRecords()
	if len(recs) == 0 {
		return
	}
	if t.l.Steps[t.step].Interactive() {
		t.closePrediction(recs)
	}
	if v := t.j.Verdict(); v.Met {
		t.solved[t.step] = true
		var quiet strings.Builder
		if t.l.Steps[t.step].Interactive() {
			t.judgePrediction(&quiet)
		}
		t.enteredGen = t.cellGen
		t.enter(t.step+1, &quiet)
	}
}

// CellStart tells a notebook's tutor that a cell begins: a verb left in
// the cell that reached a step's goal closes the next step's prediction,
// and the answer given later is told why, without an error.
func (t *Tutor) CellStart() {
	if t.driven {
		t.cells = true
		t.cellGen++
	}
}

// Settle judges a notebook's current step once more, whatever its number
// of commands: what a graded notebook's script left at its end.
func (t *Tutor) Settle() {
	if t.driven {
		defer t.changed()
		t.judgeDriven(true)
	}
}

// Check is a notebook's %check n: whether step n (counted from 1) is
// reached. It judges the session as it is now, whatever cells ran before
// and in whatever order: a step the session passed is reached (the tutor
// moved on from it when its goal was first met, and re-running cells does
// not take that back); the current step is judged; a later step is not
// reached while an earlier one is not, and Check names the earlier one.
// The text says so in one line, then, when not reached, the first thing
// missing and the step's hint; after the last step, the lesson's summary.
func (t *Tutor) Check(n int) (text string, met bool, err error) {
	if !t.driven {
		return "", false, fmt.Errorf("check is for a notebook's tutor; in the terminal the tutor checks after every command")
	}
	if n < 1 || n > len(t.l.Steps) {
		return "", false, fmt.Errorf("lesson %s has steps 1 to %d, not %d", t.l.ID, len(t.l.Steps), n)
	}
	defer t.changed()
	i := n - 1
	if !t.done && i >= t.step && !t.solved[t.step] {
		t.judgeDriven(true) // a command typed since, that the tutor has not judged
	}
	var b strings.Builder
	switch {
	case t.absent[i] != nil:
		fmt.Fprintf(&b, "✓ step %d: skipped on this backend (%s)\n", n, strings.Join(t.absent[i].Reasons, "; "))
		return b.String(), true, nil
	case t.solved[i] || i < t.step || t.done:
		if t.l.Steps[i].Cell == nil {
			fmt.Fprintf(&b, "✓ step %d: nothing to do\n", n)
		} else {
			fmt.Fprintf(&b, "✓ step %d: goal reached\n", n)
		}
		if r := &t.rec[i].pred; r.judged {
			b.WriteString(t.wrapPrefixed("» prediction: ", predictionOutcome(r)))
		}
		if t.done && i == len(t.l.Steps)-1 {
			t.finish(&b)
		}
		return b.String(), true, nil
	}
	cur := t.step
	c := t.l.Steps[cur].Cell
	if i > cur {
		fmt.Fprintf(&b, "✗ step %d: not yet: step %d comes first, and its goal is not reached; run the cells above in order\n", n, cur+1)
	} else {
		fmt.Fprintf(&b, "✗ step %d: not yet\n", n)
	}
	v := t.j.Verdict()
	lost := v.Lost()
	d := lost
	if d == nil && len(v.Diffs) > 0 {
		d = &v.Diffs[0]
	}
	if d != nil {
		b.WriteString(t.wrapPrefixed("» ", d.Text))
	}
	switch {
	case lost != nil:
		fmt.Fprintf(&b, "» step %d is out of reach from this session: mend its cell (or one before it, skipped or run out of order), then Kernel → Restart and run the cells again, in order\n", cur+1)
	case c != nil && c.Auto:
		fmt.Fprintf(&b, "» step %d is the tutor's: run its cell, above the goal of step %d\n", cur+1, cur+2)
	default:
		kind := DiffKind("")
		if d != nil {
			kind = d.Kind
		}
		// Not counted: %check repeats it for each later step's check, and
		// a hand-in replays no %check.
		b.WriteString(t.hintText(false, kind))
	}
	return b.String(), false, nil
}
