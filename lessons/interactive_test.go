package lessons_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
)

// TestInteractive takes every lesson as a learner would, with commands of
// its own: testdata/learner/ID.vsh holds what the learner types, one line
// each, and differs from the lesson's own commands: other forms of the same
// work (aliases, libibverbs names, sge= for mr=, remote_addr= for remote=,
// other orders of independent commands, by hand where the lesson loops, a
// loop where it goes by hand), capacities above the lesson's, extra
// objects, objects made again. Each step's goal must be reached by the
// learner, none skipped. In those files:
//
//	# text          a comment
//	#! hint         the command before got a hint of its step (after "not
//	                yet" and the difference it made, where it worked)
//	#! refused      the command before did not reach the step's goal (the
//	                judge's verdict is not met)
//	#! lost         the tutor said the step's goal is out of reach (lesson reset)
//	#! quiet        the tutor said nothing after the command before (it is
//	                on the way to the goal)
//	#! step N       the tutor is now at step N (1-based)
//	#! predict A    the tutor asks a prediction here, and A is the answer
//
// (shell.CheckLearnerPath, which vsh lesson check --learner runs too.)
// Every learner file has at least one wrong command that gets the hint.
func TestInteractive(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.ID, func(t *testing.T) {
			path := filepath.Join("testdata", "learner", l.ID+".vsh")
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("lesson %s has no learner script: %v", l.ID, err)
			}
			defer f.Close()
			sh := newShell(t, 2)
			res, err := sh.CheckLearnerPath(l.ID, f, path)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range res.Problems {
				t.Error(p)
			}
			if len(res.Problems) > 0 {
				t.Logf("the session's end:\n%s", tail(res.Transcript, 80))
			}
			if !res.Complete() {
				t.Errorf("%s: at the end the tutor is at step %d of %d (over: %v); %d of %d steps solved by the learner, %d skipped\n%s",
					path, res.Step, len(l.Steps), res.Over, res.Solved, res.Interactive, res.Skipped, tail(res.Transcript, 80))
			}
			if res.Hints == 0 {
				t.Errorf("%s has no wrong command checked with #! hint", path)
			}
			// Every prediction is answered (#! predict), and the answers,
			// written from the lesson's prose, are judged right: the
			// answer: lines read what the lesson teaches.
			if n := predictions(l); res.Predicted != n || res.Right != n {
				t.Errorf("%s: the lesson asks %d predictions; the path answered %d, %d judged right", path, n, res.Predicted, res.Right)
			}
			// A different sequence: at least a third of what the learner types
			// is not a line of the lesson.
			if res.Own*3 < res.Typed {
				t.Errorf("%s: only %d of the %d commands typed differ from the lesson's own; the learner script should take other paths", path, res.Own, res.Typed)
			}
		})
	}
}

// predictions counts the steps of l that ask a prediction.
func predictions(l *lessons.Lesson) int {
	n := 0
	for _, s := range l.Steps {
		if s.Cell != nil && s.Cell.Predict != nil {
			n++
		}
	}
	return n
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestInteractiveReset checks lesson reset and lesson back in the middle of
// a lesson: the session is rebuilt as it was at the step's start.
func TestInteractiveReset(t *testing.T) {
	sh := newShell(t, 2)
	run := func(line string) string {
		t.Helper()
		out, err := sh.Exec(line)
		if err != nil {
			out += sh.FormatError(err)
		}
		return out
	}
	run("lesson lifecycle")
	for _, c := range []string{"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1"} {
		run(c)
	}
	if step, _ := sh.Tutor().Step(); step != 2 {
		t.Fatalf("after two steps the tutor is at step %d", step+1)
	}
	// A wrong turn that succeeds: three MRs instead of two.
	run("reg_mr pd0 length=64 access=local_write")
	run("reg_mr pd0 length=64 access=local_write")
	out := run("lesson reset")
	if !strings.Contains(out, "the session is rebuilt") {
		t.Errorf("lesson reset said:\n%s", out)
	}
	if got := strings.Join(sh.LessonEnv().Handles(), " "); got != "ctx0 ctx1 pd0 pd1" {
		t.Errorf("after lesson reset the handles are %s; want ctx0 ctx1 pd0 pd1", got)
	}
	run("lesson back")
	if got := strings.Join(sh.LessonEnv().Handles(), " "); got != "ctx0 ctx1" {
		t.Errorf("after lesson back the handles are %s; want ctx0 ctx1", got)
	}
	if step, _ := sh.Tutor().Step(); step != 1 {
		t.Errorf("after lesson back the tutor is at step %d; want 2", step+1)
	}
	out = run("lesson next")
	if !strings.Contains(out, "not reached yet") {
		t.Errorf("lesson next before the goal said:\n%s", out)
	}
	out = run("lesson skip")
	if !strings.Contains(out, "the tutor does this step for you") || !strings.Contains(out, "alloc_pd ctx1") {
		t.Errorf("lesson skip said:\n%s", out)
	}
	if _, skipped := sh.Tutor().Solved(); skipped != 1 {
		t.Errorf("skipped = %d; want 1", skipped)
	}
}

// TestLearnerScriptsAreShellScripts keeps the learner files runnable by
// hand: vsh lesson ID < testdata/learner/ID.vsh replays one.
func TestLearnerScriptsAreShellScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/learner/*.vsh")
	if len(files) == 0 {
		t.Fatal("no learner scripts")
	}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".vsh")
		if _, ok := lessons.Find(id); !ok {
			t.Errorf("%s: no lesson %q", f, id)
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sh := newShell(t, 2)
		if _, err := sh.Exec("lesson " + id); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		// keep-going: a learner's mistakes do not stop a lesson.
		if err := sh.RunScript(bytes.NewReader(data), &b, f, true); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if _, over := sh.Tutor().Step(); !over {
			t.Errorf("%s run as a script did not finish the lesson", f)
		}
	}
}

var _ = shell.ErrExit

// TestWrongTurn: a command that works but leaves the object it made short
// of the goal gets the hint too; one that makes progress on a goal of
// several parts does not.
func TestWrongTurn(t *testing.T) {
	sh := newShell(t, 2)
	run := func(line string) string {
		t.Helper()
		out, err := sh.Exec(line)
		if err != nil {
			out += sh.FormatError(err)
		}
		return out
	}
	run("lesson lifecycle")
	if out := run("open_device A"); strings.Contains(out, "not yet") {
		t.Errorf("half of a two-part goal got a hint:\n%s", out)
	}
	run("open_device B")
	run("alloc_pd ctx0")
	run("alloc_pd ctx1")
	out := run("reg_mr pd0 length=64 access=local_write")
	if !strings.Contains(out, "» not yet: mr0 is 64 bytes long; this step's MR is 4096 bytes long") || !strings.Contains(out, "hint: reg_mr pd0 length=4096") {
		t.Errorf("an MR of the wrong size got no hint:\n%s", out)
	}
}
