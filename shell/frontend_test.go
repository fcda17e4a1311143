package shell

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// TestNotebookLessonsRun runs every shipped lesson as its exported
// notebook does: %lesson, then each step's cell in order, the tutor's and
// the learner's alike, and %check after each learner step, which must
// say the goal is reached.
func TestNotebookLessonsRun(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.ID, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			if _, err := sh.NotebookLesson(l.ID); err != nil {
				t.Fatalf("%%lesson %s: %v", l.ID, err)
			}
			for i, st := range l.Steps {
				if st.Cell == nil {
					continue
				}
				for _, c := range st.Cell.Commands {
					if strings.HasPrefix(strings.TrimSpace(c.Text), "#") {
						continue
					}
					if out, err := sh.Exec(c.Text); err != nil {
						t.Fatalf("step %d: %s: %v\n%s", i+1, c.Text, err, out)
					}
				}
				if st.Interactive() {
					text, met, err := sh.NotebookCheck(i + 1)
					if err != nil || !met {
						t.Fatalf("%%check %d: met=%v err=%v\n%s", i+1, met, err, text)
					}
				}
			}
		})
	}
}

// TestNotebookCheckPaths: %check on a learner who has not done the step,
// on a later step, on one passed already, and out of range.
func TestNotebookCheckPaths(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	if _, _, err := sh.NotebookCheck(1); err == nil || !strings.Contains(err.Error(), "no lesson is running") {
		t.Errorf("%%check with no lesson: %v", err)
	}
	head, err := sh.NotebookLesson("rc-pingpong")
	if err != nil || !strings.Contains(head, "rc_pingpong") {
		t.Fatalf("%%lesson: %v\n%s", err, head)
	}
	l, _ := lessons.Find("rc-pingpong")
	run := func(step int) {
		for _, c := range l.Steps[step-1].Cell.Commands {
			if _, err := sh.Exec(c.Text); err != nil {
				t.Fatalf("step %d: %s: %v", step, c.Text, err)
			}
		}
	}
	check := func(n int, wantMet bool, want string) {
		t.Helper()
		text, met, err := sh.NotebookCheck(n)
		if err != nil || met != wantMet || !strings.Contains(text, want) {
			t.Errorf("%%check %d: met=%v err=%v, want met=%v and %q:\n%s", n, met, err, wantMet, want, text)
		}
	}
	check(2, false, "step 1 is the tutor's: run its cell")
	run(1)
	check(2, false, "✗ step 2: not yet")
	// UC QPs where the step asks for RC: not the goal.
	for _, line := range []string{"create_qp pd0 type=uc send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=4", "create_qp pd1 type=uc send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=4"} {
		if _, err := sh.Exec(line); err != nil {
			t.Fatal(err)
		}
	}
	check(2, false, "✗ step 2: not yet")
	check(5, false, "step 2 comes first")
	if _, err := sh.NotebookLesson("rc-pingpong"); err != nil {
		t.Fatal(err)
	}
	run(1)
	run(2)
	check(2, true, "✓ step 2: goal reached")
	check(2, true, "✓ step 2: goal reached") // run again
	check(1, true, "✓ step 1")
	check(3, false, "✗ step 3: not yet")
	if _, _, err := sh.NotebookCheck(99); err == nil || !strings.Contains(err.Error(), "steps 1 to 18") {
		t.Errorf("%%check 99: %v", err)
	}
}

// TestNotebookPrediction: a notebook's student answers a step's question
// in its cell before the commands, and %check says how it went.
func TestNotebookPrediction(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	if _, err := sh.NotebookLesson("break-it"); err != nil {
		t.Fatal(err)
	}
	l, _ := lessons.Find("break-it")
	for i, st := range l.Steps {
		if st.Cell == nil {
			continue
		}
		if p := st.Cell.Predict; p != nil {
			if _, err := sh.Exec("predict " + p.Choices[0]); err != nil {
				t.Fatalf("step %d: predict: %v", i+1, err)
			}
		}
		for _, c := range st.Cell.Commands {
			sh.Exec(c.Text) // "! " lines fail as the lesson means them to
		}
		if st.Cell.Predict != nil {
			text, met, err := sh.NotebookCheck(i + 1)
			if err != nil || !met || !strings.Contains(text, "» prediction: ") {
				t.Fatalf("%%check %d after a prediction: met=%v err=%v:\n%s", i+1, met, err, text)
			}
			// An answer after the step's commands is for this step, whose
			// goal the tutor has moved on from.
			_, err = sh.Exec("predict " + st.Cell.Predict.Choices[1])
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("step %d's prediction was judged when its goal was reached", i+1)) {
				t.Errorf("a late answer in the notebook: %v", err)
			}
			return
		}
	}
	t.Fatal("break-it asks no prediction")
}

// TestNotebookCellLeftover: a verb left at the end of the cell that
// reached a step's goal is the next step's and closes its prediction (it
// shows the outcome); the answer on the next cell's first line is told
// it is too late without an error, so Run All goes on. A hand-in saved
// there marks the cells, so that its replay judges the same.
func TestNotebookCellLeftover(t *testing.T) {
	l, _ := lessons.Find("write-imm")
	k := -1
	for i, st := range l.Steps {
		if i > 0 && st.Cell != nil && st.Cell.Predict != nil && l.Steps[i-1].Interactive() {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatal("write-imm has no predicted step after a learner step")
	}
	play := func(sh *Shell, cell func(), upto int) {
		for i, st := range l.Steps[:upto+1] {
			if st.Cell == nil {
				continue
			}
			cell()
			if i == k {
				answer := "1"
				switch p := st.Cell.Predict; {
				case len(p.Choices) > 0:
					answer = p.Choices[0]
				case p.Kind == lessons.PredictBytes:
					answer = `"x"`
				}
				// The rest of the cell before ran a verb of this step
				// and showed its outcome: the answer is too late, said
				// without an error that would stop Run All.
				out, err := sh.Exec("predict " + answer)
				if err != nil || !strings.Contains(out, fmt.Sprintf("too late for step %d's prediction: advance 1ms ran after step %d's goal, in that step's cell", i+1, i)) {
					t.Fatalf("step %d: predict after the cell before ran on: err=%v\n%s", i+1, err, out)
				}
			}
			for _, c := range st.Cell.Commands {
				sh.Exec(c.Text)
			}
			if i == k-1 {
				sh.Exec("advance 1ms") // left at the end of the cell
			}
		}
	}
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	sh.NotebookCell()
	if _, err := sh.NotebookLesson("write-imm"); err != nil {
		t.Fatal(err)
	}
	play(sh, sh.NotebookCell, k)
	text, met, err := sh.NotebookCheck(k + 1)
	if err != nil || !met || !strings.Contains(text, "» prediction: none made") {
		t.Fatalf("%%check %d: met=%v err=%v:\n%s", k+1, met, err, text)
	}
	if _, err := sh.Exec("save hand-in.vsh"); err != nil {
		t.Fatal(err)
	}
	data, err := files.ReadFile("hand-in.vsh")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), NotebookCellMark+"\n"); n < k {
		t.Errorf("the hand-in marks %d cells; the notebook ran at least %d:\n%s", n, k, data)
	}
}

// TestExecDisplay: a poll's completions come as an HTML table, a ladder
// as SVG, and an error as its parts.
func TestExecDisplay(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, l := range []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=64 access=local_write", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "connect qp0 qp1", "trace on", "post_recv qp1 mr=mr0", "post_send qp0 mr=mr0"} {
		if _, err := sh.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	d, err := sh.ExecDisplay(context.Background(), "poll_cq cq0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table class="vsh-table"><thead><tr><th>wr_id</th>`, "<td>IBV_WC_SUCCESS</td>", "<pre>[11] ibv_poll_cq(cq0, 16) = 2"} {
		if !strings.Contains(d.HTML, want) {
			t.Errorf("no %q in\n%s", want, d.HTML)
		}
	}
	if !strings.Contains(d.Text, "IBV_WC_SUCCESS") || len(d.SVG) != 0 {
		t.Errorf("text %q, %d SVGs", d.Text, len(d.SVG))
	}
	d, err = sh.ExecDisplay(context.Background(), "trace ladder")
	if err != nil || len(d.SVG) != 1 || !strings.HasPrefix(strings.TrimSpace(d.SVG[0]), "<svg") {
		t.Errorf("trace ladder: %v, %d SVGs", err, len(d.SVG))
	}
	_, err = sh.ExecDisplay(context.Background(), "modify_qp qp0 state=init")
	name, why, hint := ErrorParts(err)
	if name != "EINVAL" || !strings.Contains(why, "modify_qp") || hint == "" {
		t.Errorf("ErrorParts = %q, %q, %q", name, why, hint)
	}
	_, err = sh.ExecDisplay(context.Background(), "frobnicate")
	if name, _, _ := ErrorParts(err); name != "UsageError" {
		t.Errorf("unknown command: %q (%v)", name, err)
	}
	if h, ok := sh.Help("mqp"); !ok || !strings.HasPrefix(h, "usage: modify_qp") {
		t.Errorf("Help(mqp) = %q, %v", h, ok)
	}
}

// A front end that shows HTML gets the output as HTML: the text
// preformatted, each table an HTML table.
func ExampleShell_ExecDisplay() {
	sh, _ := New(Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil }, Plain: true})
	defer sh.Close()
	d, _ := sh.ExecDisplay(context.Background(), "open_device A")
	fmt.Println(d.Text)
	fmt.Println(d.HTML)
	// Output:
	// [1] ibv_open_device(A = sim0) → ctx0  [control path]
	//
	// <div class="vsh-output"><pre>[1] ibv_open_device(A = sim0) → ctx0  [control path]</pre></div>
}

// TestNotebookTutorRefusesTerminalMoves: lesson skip, next, back and reset
// are the terminal tutor's; in a notebook they would pass a step nobody
// did, or rebuild the session behind the notebook's back.
func TestNotebookTutorRefusesTerminalMoves(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	if _, err := sh.NotebookLesson("rc-pingpong"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"skip", "next", "back", "reset"} {
		if _, err := sh.Exec("lesson " + w); err == nil || !strings.Contains(err.Error(), "in a notebook the tutor follows the notebook's cells") {
			t.Errorf("lesson %s: %v", w, err)
		}
	}
	if text, met, _ := sh.NotebookCheck(2); met {
		t.Errorf("%%check 2 after lesson skip: %s", text)
	}
	if out, err := sh.Exec("lesson hint"); err != nil || !strings.Contains(out, "hint") {
		t.Errorf("lesson hint: %v\n%s", err, out)
	}
}

// TestQuoteRefReadsBack: a lesson path quoted for a command line is read
// back whole by the shell's words.
func TestQuoteRefReadsBack(t *testing.T) {
	for _, p := range []string{"tour", "my lessons/rc pp.md", "it's.md", `we#ird\path "x".md`, "a'b \"c\".md"} {
		if got, err := Words("lesson " + lessons.QuoteRef(p)); err != nil || len(got) != 2 || got[1] != p {
			t.Errorf("%q quoted as %s reads back as %q (%v)", p, lessons.QuoteRef(p), got, err)
		}
	}
}

// TestNotebookCheckHintsUncounted: a %check of a later step shows the
// current step's hint, and Run All checks every step: those hints are not
// counted (a graded hand-in replays no %check).
func TestNotebookCheckHintsUncounted(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, newMemFiles())
	defer sh.Close()
	sh.NotebookCell()
	if _, err := sh.NotebookLesson("write-imm"); err != nil {
		t.Fatal(err)
	}
	l, _ := lessons.Find("write-imm")
	first := -1
	for i, st := range l.Steps {
		if st.Cell == nil {
			continue
		}
		if st.Interactive() {
			first = i
			break
		}
		sh.NotebookCell()
		for _, c := range st.Cell.Commands {
			sh.Exec(c.Text)
		}
	}
	if first < 0 {
		t.Fatal("write-imm has no learner step")
	}
	sh.NotebookCell()
	sh.Exec("devices") // one command at the learner step: one attempt, whatever %check says
	for k := first + 1; k <= len(l.Steps); k++ {
		text, _, _ := sh.NotebookCheck(k)
		if k == first+2 && !strings.Contains(text, "hint: ") {
			t.Fatalf("%%check %d shows no hint of step %d:\n%s", k, first+1, text)
		}
	}
	sh.Tutor().Settle()
	for _, st := range sh.Tutor().Report().Steps {
		if st.Hints != 0 {
			t.Errorf("step %d: %d hints counted from %%check alone", st.Step, st.Hints)
		}
		if want := map[bool]int{true: 1}[st.Step == first+1]; st.Attempts != want {
			t.Errorf("step %d: %d attempts; want %d (the commands run at it, not the %%checks)", st.Step, st.Attempts, want)
		}
	}
}
