package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// -rewrite is the project's one name for rewriting golden files.
var rewrite = flag.Bool("rewrite", false, "rewrite the report example in docs/lesson-report.md")

// reportSchema compiles docs/lesson-report.schema.json.
func reportSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join("..", "..", "docs", "lesson-report.schema.json")
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return sch
}

// validReport checks a report against the schema and returns it decoded.
func validReport(t *testing.T, sch *jsonschema.Schema, data []byte) *lessons.Report {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, data)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("the report does not follow docs/lesson-report.schema.json: %v\n%s", err, data)
	}
	var r lessons.Report
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}
	return &r
}

// TestReportSchemaRefuses: the schema is strict, so that the test above
// can fail: a missing field, an unknown one, a wrong outcome.
func TestReportSchemaRefuses(t *testing.T) {
	sch := reportSchema(t)
	status, _, errs := runVsh(t, "", "lesson", "tour", "--report", filepath.Join(t.TempDir(), "r.json"))
	if status != 1 {
		t.Fatalf("vsh lesson tour with no input = %d, %q; want 1 (not finished)", status, errs)
	}
	good := map[string]any{}
	data, err := json.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &good)
	tests := []struct {
		name   string
		change func(m map[string]any)
	}{
		{"no seed", func(m map[string]any) { delete(m, "seed") }},
		{"an unknown field", func(m map[string]any) { m["grade"] = "A" }},
		{"another schema", func(m map[string]any) { m["schema"] = "vsh-lesson-report/2" }},
		{"a bad outcome", func(m map[string]any) { m["steps"].([]any)[0].(map[string]any)["outcome"] = "done" }},
		{"a bad time", func(m map[string]any) { m["started"] = "yesterday" }},
		{"a step without predictions", func(m map[string]any) { delete(m["steps"].([]any)[0].(map[string]any), "predictions") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			json.Unmarshal(data, &m)
			tc.change(m)
			if err := sch.Validate(m); err == nil {
				t.Errorf("the schema accepts a report with %s", tc.name)
			}
		})
	}
	if err := sch.Validate(good); err != nil {
		t.Errorf("the schema refuses a good report: %v", err)
	}
}

func sampleReport() *lessons.Report {
	answer, right := "0", false
	return &lessons.Report{Schema: lessons.ReportSchema, VSH: "devel", Backend: "sim", Seed: 1,
		Started: "2026-01-12T09:00:00Z", Ended: "2026-01-12T09:10:00Z",
		Lesson: lessons.ReportLesson{ID: "x", Title: "X", File: "x.md", SHA256: strings.Repeat("ab", 32)},
		Steps: []lessons.StepReport{{Step: 2, Title: "t", Outcome: lessons.OutcomeSolved, Predictions: []lessons.PredictionReport{
			{Question: "q?", Kind: lessons.PredictNumber, Choices: []string{}, Answer: &answer, Observed: &answer, Right: &right}}}}}
}

// TestLessonReport is issue 18's acceptance: the repository's complete
// learner path for rc-pingpong exits 0 with every step solved; the same
// lesson with one step skipped exits 1 and names the step skipped.
func TestLessonReport(t *testing.T) {
	sch := reportSchema(t)
	path, err := os.ReadFile(filepath.Join("..", "..", "lessons", "testdata", "learner", "rc-pingpong.vsh"))
	if err != nil {
		t.Fatal(err)
	}
	skipped := "lesson next\nlesson skip\nmqp qp1 state=IBV_QPS_INIT port=1 pkey_index=0 access=0\nmqp qp0 state=init port=1 pkey_index=0 access=0\n"
	tests := []struct {
		name     string
		script   string
		status   int
		complete bool
		outcomes map[int]string // step → outcome
	}{
		{"complete", string(path), 0, true, map[int]string{2: "solved", 7: "solved", 15: "solved"}},
		{"one skipped", skipped, 1, false, map[int]string{2: "skipped", 3: "solved", 4: "not reached"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			status, stdout, errs := runVsh(t, tc.script, "lesson", "rc-pingpong", "--report", out)
			if status != tc.status {
				t.Fatalf("vsh lesson rc-pingpong --report = %d, want %d; stderr %q\n%s", status, tc.status, errs, lastLines(stdout, 30))
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			r := validReport(t, sch, data)
			if r.Complete != tc.complete || !r.Finished || r.Lesson.ID != "rc-pingpong" || len(r.Lesson.SHA256) != 64 {
				t.Errorf("report: complete %v finished %v lesson %+v; want complete %v, finished", r.Complete, r.Finished, r.Lesson, tc.complete)
			}
			got := map[int]string{}
			for _, s := range r.Steps {
				got[s.Step] = s.Outcome
			}
			for step, want := range tc.outcomes {
				if got[step] != want {
					t.Errorf("step %d: outcome %q, want %q", step, got[step], want)
				}
			}
			if !strings.Contains(stdout, "  step  title") {
				t.Errorf("the session shows no summary table:\n%s", lastLines(stdout, 20))
			}
		})
	}
}

// TestReportUsage: --report is for taking one lesson, and a report that
// cannot be written stops the lesson before it starts.
func TestReportUsage(t *testing.T) {
	tests := []struct {
		argv   []string
		status int
		errms  string
	}{
		{[]string{"lesson", "play", "tour", "--report", "r.json"}, 2, "--report is for taking one lesson"},
		{[]string{"lesson", "list", "--report", "r.json"}, 2, "--report is for taking one lesson"},
		{[]string{"lesson", "check", "x.md", "--report", "r.json"}, 2, "--report is for taking one lesson"},
		{[]string{"lesson", "tour", "--report", "/nonexistent/dir/r.json"}, 2, "cannot write /nonexistent/dir/r.json"},
		{[]string{"lesson", "nosuch", "--report", "r.json"}, 2, `no lesson "nosuch"`},
	}
	for _, tc := range tests {
		status, _, errs := runVsh(t, "", tc.argv...)
		if status != tc.status || !strings.Contains(errs, tc.errms) {
			t.Errorf("vsh %v = %d, stderr %q; want %d, %q", tc.argv, status, errs, tc.status, tc.errms)
		}
	}
}

var exampleRE = regexp.MustCompile("(?s)(<!-- report example: [^\n]*-->\n```json\n)(.*?)(```)")

// TestReportExample plays the script of docs/lesson-report.md's example,
// with a clock that moves 1.5 s a reading, and requires the report to be
// the one the page shows, and valid. -rewrite puts the new one in.
func TestReportExample(t *testing.T) {
	sch := reportSchema(t)
	page := filepath.Join("..", "..", "docs", "lesson-report.md")
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte("## An example"))
	script, ok := []byte(nil), false
	if i >= 0 {
		_, after, _ := bytes.Cut(doc[i:], []byte("```vsh\n"))
		script, _, ok = bytes.Cut(after, []byte("```"))
	}
	m := exampleRE.FindSubmatchIndex(doc)
	if !ok || m == nil {
		t.Fatalf("%s has no example: a ```vsh block after \"## An example\", then the marked ```json block", page)
	}
	in := filepath.Join(t.TempDir(), "script.vsh")
	if err := os.WriteFile(in, script, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(1500 * time.Millisecond); return at }
	out := filepath.Join(t.TempDir(), "r.json")
	sim := shadowSim(1)
	var stdout, stderr bytes.Buffer
	r := &lessonRun{open: func() (verbs.Provider, error) { return sim(2) }, desc: "sim (2 devices, seed 1)", plain: true, devices: 2, seed: 1,
		report: out, clock: clock, stdin: f, stdout: &stdout, stderr: &stderr}
	if status := runLesson([]string{"write-imm"}, r); status != 1 {
		t.Fatalf("the example = %d, want 1; stderr %q\n%s", status, stderr.String(), lastLines(stdout.String(), 40))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	validReport(t, sch, data)
	if got, want := string(data), string(doc[m[4]:m[5]]); got != want {
		if *rewrite {
			doc = append(append(append([]byte(nil), doc[:m[4]]...), data...), doc[m[5]:]...)
			if err := os.WriteFile(page, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's example report is stale (go test ./cmd/vsh -run TestReportExample -rewrite); the report is now:\n%s", page, got)
	}
}

// TestReportSkipThenBack: a step the tutor did (lesson skip), then redone
// after lesson back, is the tutor's, not the learner's: exit 1.
func TestReportSkipThenBack(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	status, stdout, errs := runVsh(t, "lesson skip\nlesson back\ndevices\n", "lesson", "tour", "--report", out)
	data, _ := os.ReadFile(out)
	if status != 1 || !strings.Contains(string(data), `"outcome": "tutor"`) {
		t.Errorf("skip, back, redo = %d (want 1), stderr %q, report:\n%s\n%s", status, errs, data, lastLines(stdout, 10))
	}
}

// TestReportRefusesItsInputs: --report never overwrites the lesson's file
// or the script read on standard input, nor takes a folder or a second
// --report; each exits 2 and says why.
func TestReportRefusesItsInputs(t *testing.T) {
	dir := t.TempDir()
	lesson := filepath.Join(dir, "first-qp.md")
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "testdata", "class", "verbs-course", "first-qp.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lesson, src, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "ann.vsh")
	if err := os.WriteFile(script, []byte("open_device A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		argv  []string
		stdin string
		errs  string
	}{
		{"the lesson's file", []string{"lesson", lesson, "--report", lesson}, "", "it is the lesson's own file"},
		{"a folder", []string{"lesson", lesson, "--report", dir}, "", "it is a folder"},
		{"twice", []string{"lesson", lesson, "--report", "a.json", "--report", "b.json"}, "", "--report is given twice"},
		{"the script read", []string{"lesson", lesson, "--report", script}, script, "it is the script vsh reads on standard input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := os.Stdin
			if tt.stdin != "" {
				f, err := os.Open(tt.stdin)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				in = f
			}
			var out, errs bytes.Buffer
			status := run(tt.argv, in, &out, &errs)
			if status != 2 || !strings.Contains(errs.String(), tt.errs) {
				t.Errorf("= %d, stderr %q; want 2 and %q", status, errs.String(), tt.errs)
			}
		})
	}
	if got, _ := os.ReadFile(lesson); !bytes.Equal(got, src) {
		t.Error("the lesson file was changed")
	}
	if got, _ := os.ReadFile(script); string(got) != "open_device A\n" {
		t.Error("the script was changed")
	}
}

// TestReportBrokenLesson: a lesson whose own commands fail cannot be
// graded: exit 2, and its report is not complete, whatever the learner
// typed.
func TestReportBrokenLesson(t *testing.T) {
	lesson, report := lessonFile(t, "broken.md",
		"---\nid: broken\ntitle: Broken\nlevel: beginner\nminutes: 1\n---\n\n```vsh\nopen_device A\nalloc_pd ctx9\n```\ngoal: Open device A and allocate a PD on it.\n")
	status, _, errs := runVsh(t, "open_device A\nalloc_pd ctx0\n", "lesson", lesson, "--report", report)
	if status != 2 || !strings.Contains(errs, "lesson broken is broken: its own commands failed") {
		t.Errorf("status %d, stderr %q; want 2 and the lesson called broken", status, errs)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"complete": false`) {
		t.Errorf("the report says the lesson is complete:\n%s", data)
	}
}

// TestReportStaleRemoved: a run that cannot start the lesson leaves no
// report of an earlier run behind.
func TestReportStaleRemoved(t *testing.T) {
	good := "---\nid: mine\ntitle: Mine\nlevel: beginner\nminutes: 1\n---\n\n```vsh\nopen_device A\n```\ngoal: Open device A.\n"
	lesson, report := lessonFile(t, "mine.md", good)
	if status, _, errs := runVsh(t, "open_device A\n", "lesson", lesson, "--report", report); status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	if err := os.WriteFile(lesson, []byte(strings.Replace(good, "id: mine\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errs := runVsh(t, "open_device A\n", "lesson", lesson, "--report", report)
	if status != 2 || !strings.Contains(errs, "removed "+report) {
		t.Errorf("status %d, stderr %q; want 2 and the old report removed", status, errs)
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("the earlier report is still there (%v)", err)
	}
	// What is not a report stays, whatever --report names.
	script := filepath.Join(filepath.Dir(lesson), "student.vsh")
	if err := os.WriteFile(script, []byte("open_device A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{script, lesson, filepath.Dir(lesson)} {
		if status, _, _ := runVsh(t, "open_device A\n", "lesson", "nosuchlesson", "--report", target); status != 2 {
			t.Errorf("--report %s: status %d, want 2", target, status)
		}
		if _, err := os.Stat(target); err != nil {
			t.Errorf("--report %s of a run that did not start removed it: %v", target, err)
		}
	}
}

// lessonFile writes a lesson file in a new folder and returns its path and
// that of a report beside it.
func lessonFile(t *testing.T, name, src string) (lesson, report string) {
	t.Helper()
	dir := t.TempDir()
	lesson = filepath.Join(dir, name)
	if err := os.WriteFile(lesson, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return lesson, filepath.Join(dir, "r.json")
}

// TestReportNotebookHandIn: a script saved in a notebook's lesson (Jupyter:
// its cells did the tutor's setup too) is graded as the notebook's tutor
// judged it, and a Markdown notebook on stdin is refused, not misgraded.
func TestReportNotebookHandIn(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	var l *lessons.Lesson
	for _, x := range all {
		if x.ID == "write-imm" {
			l = x
		}
	}
	if l == nil {
		t.Fatal("no lesson write-imm")
	}
	sh, err := shell.New(shell.Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil }, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if _, err := sh.NotebookLesson("write-imm"); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Steps {
		if s.Cell == nil {
			continue
		}
		for _, c := range s.Cell.Commands {
			line := c.Bare()
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			sh.Exec(line) // a step's failure (! lines) fails here too
		}
	}
	script := saveHandIn(t, sh)
	if !strings.HasPrefix(string(script), shell.NotebookHandIn) {
		t.Fatalf("the notebook's script does not say where it comes from:\n%s", script)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	status, stdout, errs := runVsh(t, string(script), "lesson", "write-imm", "--report", out)
	if status != 0 || !strings.Contains(stdout, "graded as a notebook's cells") {
		t.Errorf("vsh lesson write-imm --report < notebook's script = %d, want 0; stderr %q\n%s", status, errs, lastLines(stdout, 20))
	}
	var rep lessons.Report
	if data, err := os.ReadFile(out); err != nil || json.Unmarshal(data, &rep) != nil || !rep.Notebook || !rep.Complete {
		t.Errorf("the notebook's report does not say it was graded as a notebook, complete (%v):\n%s", err, data)
	}
	// As Notepad may save it: a byte order mark, a blank line, CRLF.
	crlf := "\ufeff\r\n" + strings.ReplaceAll(string(script), "\n", "\r\n")
	if status, stdout, errs := runVsh(t, crlf, "lesson", "write-imm", "--report", out); status != 0 || !strings.Contains(stdout, "graded as a notebook's cells") {
		t.Errorf("the notebook's script with a BOM, a blank line and CRLF = %d; stderr %q\n%s", status, errs, lastLines(stdout, 20))
	}
	if status, _, errs := runVsh(t, string(script), "lesson", "tour", "--report", out); status != 2 || !strings.Contains(errs, "saved in a notebook of lesson write-imm, not of lesson tour") {
		t.Errorf("a notebook's script of write-imm graded against tour: status %d, stderr %q; want 2 and the refusal", status, errs)
	}
	status, _, errs = runVsh(t, "# vsh notebook: Lesson write-imm\n\n```vsh cell=1\n[1] tutor> open_device A\n```\n", "lesson", "write-imm", "--report", out)
	if status != 2 || !strings.Contains(errs, "stdin is a Markdown notebook") {
		t.Errorf("a Markdown notebook on stdin: status %d, stderr %q; want 2 and the refusal", status, errs)
	}
}

// TestReportNotebookCells: a notebook's hand-in marks its cells, so that
// its grading judges the rest of the cell that reached a goal as the
// notebook did: a command left there closes no prediction of the next
// step, answered on its own cell's first line.
func TestReportNotebookCells(t *testing.T) {
	l, ok := lessons.Find("write-imm")
	if !ok {
		t.Fatal("no lesson write-imm")
	}
	first := -1 // the first step that asks a number
	for i, s := range l.Steps {
		if s.Cell != nil && s.Cell.Predict != nil && s.Cell.Predict.Kind == lessons.PredictNumber {
			first = i
			break
		}
	}
	if first < 1 || !l.Steps[first-1].Interactive() {
		t.Fatal("write-imm asks no number right after a learner step")
	}
	// inLesson: the steps before it run in the %lesson cell, not each in
	// a cell of its own. trailing: each learner step's cell ends with a
	// verb after its goal (advance 1ms), the next step's, which shows its
	// outcome: the next prediction is too late, in the notebook and in
	// the graded hand-in alike.
	for _, trailing := range []bool{false, true} {
		for _, inLesson := range []bool{false, true} {
			sh, err := shell.New(shell.Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil }, Plain: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			sh.NotebookCell()
			if _, err := sh.NotebookLesson("write-imm"); err != nil {
				t.Fatal(err)
			}
			for i, s := range l.Steps {
				if s.Cell == nil {
					continue
				}
				if !inLesson || i >= first {
					sh.NotebookCell()
				}
				if p := s.Cell.Predict; p != nil && p.Kind == lessons.PredictNumber {
					if _, err := sh.Exec("predict 1"); err != nil {
						t.Fatalf("trailing=%v inLesson=%v: step %d: predict on the cell's first line: %v", trailing, inLesson, i+1, err)
					}
				}
				for _, c := range s.Cell.Commands {
					sh.Exec(c.Bare())
				}
				if trailing && i+1 < len(l.Steps) && s.Interactive() {
					sh.Exec("advance 1ms") // left at the end of the cell
				}
			}
			want := "» prediction: you said 1"
			if trailing {
				want = "» prediction: none made"
			}
			if text, _, err := sh.NotebookCheck(first + 1); err != nil || !strings.Contains(text, want) {
				t.Errorf("trailing=%v inLesson=%v: %%check %d, want %q: %v\n%s", trailing, inLesson, first+1, want, err, text)
			}
			script := saveHandIn(t, sh)
			out := filepath.Join(t.TempDir(), "r.json")
			if status, stdout, errs := runVsh(t, string(script), "lesson", "write-imm", "--report", out); status != 0 {
				t.Errorf("trailing=%v inLesson=%v: grading the hand-in = %d, want 0; stderr %q\n%s", trailing, inLesson, status, errs, lastLines(stdout, 20))
			}
			var rep lessons.Report
			data, err := os.ReadFile(out)
			if err != nil || json.Unmarshal(data, &rep) != nil {
				t.Fatalf("no report (%v):\n%s", err, data)
			}
			for _, st := range rep.Steps {
				if st.Step != first+1 {
					continue
				}
				answered := len(st.Predictions) == 1 && st.Predictions[0].Answer != nil
				if answered != (want == "» prediction: you said 1") {
					t.Errorf("trailing=%v inLesson=%v: step %d's prediction in the report is not as in the notebook (%s):\n%s\nthe hand-in:\n%s", trailing, inLesson, first+1, want, data, script)
				}
			}
		}
	}
}

// saveHandIn is save hand-in.vsh in sh, and what it wrote.
func saveHandIn(t *testing.T, sh *shell.Shell) []byte {
	t.Helper()
	hand := filepath.Join(t.TempDir(), "hand-in.vsh")
	if out, err := sh.Exec("save " + hand); err != nil {
		t.Fatalf("save: %s%s", out, sh.FormatError(err))
	}
	script, err := os.ReadFile(hand)
	if err != nil {
		t.Fatal(err)
	}
	return script
}
