package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

// TestLessonExport writes a shipped lesson's notebook: what vsh writes is
// lessons.ExportNotebook's, it says so on stderr alone, it does not
// overwrite without -f, and --solutions fills in the learner's cells.
func TestLessonExport(t *testing.T) {
	l, _ := lessons.Find("tour")
	want, err := lessons.ExportNotebook(l, "tour", false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tour.ipynb")
	status, stdout, errs := runVsh(t, "", "lesson", "export", "tour", "--ipynb", out)
	if status != 0 || stdout != "" || !strings.HasPrefix(errs, "wrote "+out+": ") || !strings.HasSuffix(errs, " cells (lesson tour)\n") {
		t.Fatalf("vsh lesson export tour --ipynb OUT = %d, stdout %q, stderr %q; want 0, nothing, one line", status, stdout, errs)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the notebook written is not lessons.ExportNotebook's (%v)", err)
	}

	// An existing notebook stays as it is without -f.
	if err := os.WriteFile(out, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errs = runVsh(t, "", "lesson", "export", "tour", "--ipynb", out, "--solutions")
	if status != 1 || !strings.Contains(errs, out+" exists; add -f to overwrite it") {
		t.Errorf("over an existing file = %d, %q; want 1 and how to overwrite it", status, errs)
	}
	if got, _ := os.ReadFile(out); string(got) != "mine" {
		t.Errorf("without -f the file was overwritten: %.40q", got)
	}

	// -f (or --force) overwrites it; flags may come before the lesson.
	solutions, _ := lessons.ExportNotebook(l, "tour", true)
	for _, force := range []string{"-f", "--force"} {
		status, _, errs = runVsh(t, "", "lesson", "export", force, "--solutions", "tour", "--ipynb", out)
		if got, _ := os.ReadFile(out); status != 0 || !bytes.Equal(got, solutions) {
			t.Errorf("%s --solutions = %d, %q; want the solutions notebook written", force, status, errs)
		}
	}

	// --ipynb - writes to stdout.
	status, stdout, errs = runVsh(t, "", "lesson", "export", "tour", "--ipynb", "-")
	if status != 0 || stdout != string(want) || !strings.HasPrefix(errs, "wrote standard output: ") {
		t.Errorf("--ipynb - = %d, stderr %q; stdout is the notebook: %v", status, errs, stdout == string(want))
	}
}

// TestLessonExportFile exports a lesson file: %lesson names it by the
// path given, and the lesson's own file is never written over.
func TestLessonExportFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "lessons", "tour.md"))
	if err != nil {
		t.Fatal(err)
	}
	lesson := writeFile(t, "my-tour.md", strings.Replace(string(src), "id: tour", "id: my-tour", 1))
	out := filepath.Join(filepath.Dir(lesson), "my-tour.ipynb")
	if status, _, errs := runVsh(t, "", "lesson", "export", lesson, "--ipynb", out); status != 0 {
		t.Fatalf("vsh lesson export FILE = %d, %q", status, errs)
	}
	// The kernel runs in the notebook's folder: the path is from there.
	if data, _ := os.ReadFile(out); !strings.Contains(string(data), `"%lesson my-tour.md"`) {
		t.Errorf("the notebook does not start lesson %s by its path from the notebook's folder", lesson)
	}
	sub := filepath.Join(filepath.Dir(lesson), "nb", "in.ipynb")
	os.MkdirAll(filepath.Dir(sub), 0o755)
	if status, _, errs := runVsh(t, "", "lesson", "export", lesson, "--ipynb", sub); status != 0 {
		t.Fatalf("vsh lesson export FILE --ipynb nb/in.ipynb = %d, %q", status, errs)
	}
	if data, _ := os.ReadFile(sub); !strings.Contains(string(data), `"%lesson ../my-tour.md"`) {
		t.Errorf("a notebook in a subfolder does not start ../my-tour.md:\n%.400s", data)
	}
	status, _, errs := runVsh(t, "", "lesson", "export", lesson, "--ipynb", lesson, "-f")
	if status != 1 || !strings.Contains(errs, "is the lesson's own file") {
		t.Errorf("over the lesson's own file = %d, %q; want 1", status, errs)
	}
	if data, _ := os.ReadFile(lesson); !strings.HasPrefix(string(data), "---\n") {
		t.Error("the lesson file was overwritten")
	}
}

// TestLessonExportUsage: command lines export refuses, and how.
func TestLessonExportUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.ipynb")
	tests := []struct {
		argv   []string
		status int
		errms  string
	}{
		{[]string{"lesson", "export", "tour"}, 2, "lesson export needs --ipynb OUT"},
		{[]string{"lesson", "export", "--ipynb", out}, 2, "lesson export needs a lesson"},
		{[]string{"lesson", "export", "tour", "rpc", "--ipynb", out}, 2, `writes one lesson's notebook, not "tour" and "rpc"`},
		{[]string{"lesson", "export", "all", "--ipynb", out}, 2, "all is not one lesson"},
		{[]string{"lesson", "export", "tour", "--ipynb", out, "--ipynb", out}, 2, "--ipynb is given twice"},
		{[]string{"lesson", "export", "tour", "--ipynb", out, "--pace", "1s"}, 2, "lesson export: flag provided but not defined: -pace"},
		{[]string{"--pace", "1s", "lesson", "export", "tour", "--ipynb", out}, 2, "--pace is for vsh lesson play"},
		{[]string{"lesson", "export", "nosuch", "--ipynb", out}, 1, `no lesson "nosuch"`},
		{[]string{"lesson", "export", "tuor", "--ipynb", out}, 1, "did you mean tour?"},
		{[]string{"lesson", "export", "tour", "--ipynb", dir, "-f"}, 1, "is a folder; give the notebook's file name"},
		{[]string{"lesson", "export", "tour", "--ipynb", filepath.Join(dir, "none", "x.ipynb")}, 1, "give a file in a folder you can write to"},
		{[]string{"lesson", "export", "tour", "--ipynb", out, "--md", out}, 2, "--ipynb " + out + " or --md " + out + ", not both"},
		{[]string{"lesson", "export", "tour", "--md", out, "--solutions"}, 2, "--solutions is for --ipynb"},
		{[]string{"lesson", "export", "tour", "--md", dir, "-f"}, 1, "is a folder; give the lesson's file name, e.g. --md"},
	}
	for _, tc := range tests {
		status, stdout, errs := runVsh(t, "", tc.argv...)
		if status != tc.status || !strings.Contains(errs, tc.errms) || stdout != "" {
			t.Errorf("vsh %v = %d, stderr %q; want %d, %q", tc.argv, status, errs, tc.status, tc.errms)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused export wrote %s", out)
	}
	if status, out, _ := runVsh(t, "", "lesson", "export", "--help"); status != 0 || !strings.Contains(out, "vsh [flags] lesson export ID|FILE --ipynb OUT.ipynb") {
		t.Errorf("vsh lesson export --help = %d\n%s", status, out)
	}
}

// TestLessonExportSource: --md writes a shipped lesson's source as vsh
// holds it, and says to give the copy an id of its own.
func TestLessonExportSource(t *testing.T) {
	out := filepath.Join(t.TempDir(), "copy.md")
	status, _, errs := runVsh(t, "", "lesson", "export", "rc-pingpong", "--md", out)
	want, err := os.ReadFile(filepath.Join("..", "..", "lessons", "rc-pingpong.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if status != 0 || string(got) != string(want) || !strings.Contains(errs, "give it an id: of its own") {
		t.Errorf("vsh lesson export rc-pingpong --md = %d, stderr %q; the file is the source: %v", status, errs, string(got) == string(want))
	}
}
