package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// courseLesson is a lesson with one learner step: open A.
func courseLesson(id string) string {
	return "---\nid: " + id + "\ntitle: Lesson " + id + "\nlevel: beginner\nminutes: 5\n---\n\nOpen A.\n\n```vsh\nopen_device A\n```\ngoal: Open device A.\n"
}

// newCourse writes a course of two lessons, second after first, and
// points the progress file at a folder of the test's own.
func newCourse(t *testing.T) string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{"one.md": courseLesson("day-one"), "day-two.md": courseLesson("day-two"),
		"course.md": "---\ntitle: Verbs in a week\nauthor: A. Teacher\n---\n\n- day-two.md\n- day-one requires: day-two\n"}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLessonCourse(t *testing.T) {
	dir := newCourse(t)
	status, out, errs := runVsh(t, "", "lesson", "list", dir)
	if status != 0 || errs != "" || !strings.Contains(out, "course Verbs in a week, by A. Teacher") ||
		!regexpMatch(`(?s)1 +day-two +Lesson day-two +1 \(1 yours\) +- +-\n2 +day-one +Lesson day-one +1 \(1 yours\) +- +day-two\n2 lessons, 0 solved`, out) {
		t.Fatalf("vsh lesson list DIR = %d, stderr %q\n%s", status, errs, out)
	}
	// Skipped by the tutor, a lesson is not solved (and vsh exits 1).
	status, out, _ = runVsh(t, "lesson skip\n", "lesson", dir)
	if status != 1 || !strings.Contains(out, "» course Verbs in a week: lesson 1 of 2, day-two (0 solved)") || strings.Contains(out, "is solved") {
		t.Fatalf("vsh lesson DIR, skipped = %d\n%s", status, out)
	}
	status, out, _ = runVsh(t, "open_device A\n", "lesson", dir)
	if status != 0 || !strings.Contains(out, "» lesson day-two is solved; your progress is kept in "+os.Getenv("XDG_STATE_HOME")) {
		t.Fatalf("vsh lesson DIR = %d\n%s", status, out)
	}
	status, out, _ = runVsh(t, "", "lesson", "list", dir)
	if status != 0 || !regexpMatch(`day-two .* solved\n`, out) || !strings.Contains(out, "2 lessons, 1 solved") {
		t.Errorf("after day-two: %d\n%s", status, out)
	}
	status, out, _ = runVsh(t, "open_device A\n", "lesson", dir)
	if status != 0 || !strings.Contains(out, "lesson 2 of 2, day-one (1 solved)") || !strings.Contains(out, "day-one is solved") {
		t.Errorf("the next lesson = %d\n%s", status, out)
	}
	status, out, _ = runVsh(t, "", "lesson", dir)
	if status != 0 || !strings.Contains(out, "You have solved every lesson of course Verbs in a week (2)") {
		t.Errorf("every lesson solved = %d\n%s", status, out)
	}
}

func TestLessonCourseInShell(t *testing.T) {
	dir := newCourse(t)
	status, out, errs := runVsh(t, "lesson list\nlesson day-one\n", "--lessons", dir)
	if status != 0 || !strings.Contains(out, "day-two") || !strings.Contains(out, "tour") {
		t.Fatalf("vsh --lessons DIR, lesson list = %d, %s\n%s", status, errs, out)
	}
	if !strings.Contains(out, "» lesson day-one builds on day-two, which you have not solved yet; lesson day-two takes it") {
		t.Errorf("no word of the prerequisite:\n%s", out)
	}
	// A duplicate id names both files.
	if err := os.WriteFile(filepath.Join(dir, "three.md"), []byte(courseLesson("day-one")), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errs = runVsh(t, "", "--lessons", dir)
	want := filepath.Join(dir, "three.md") + ":2: id day-one is also the id of " + filepath.Join(dir, "one.md")
	if status != 2 || !strings.Contains(errs, want) {
		t.Errorf("a duplicate id = %d, %q; want %q", status, errs, want)
	}
}

func TestLessonPlayFiles(t *testing.T) {
	dir := newCourse(t)
	status, out, errs := runVsh(t, "", "lesson", "play", filepath.Join(dir, "one.md"), "tour", dir)
	if status != 0 || errs != "" {
		t.Fatalf("vsh lesson play FILE ID DIR = %d, %s", status, errs)
	}
	var order []string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "Lesson "); ok {
			if id, _, _ := strings.Cut(rest, " "); strings.HasSuffix(id, ":") {
				order = append(order, strings.TrimSuffix(id, ":"))
			}
		}
	}
	if got := strings.Join(order, " "); got != "day-one tour day-two day-one" || !strings.Contains(out, "4 lessons on sim") {
		t.Errorf("played %q, want day-one tour day-two day-one\n%s", got, out)
	}
}

func TestLessonCheckCourse(t *testing.T) {
	dir := newCourse(t)
	status, out, errs := runVsh(t, "", "lesson", "check", dir)
	if status != 0 || errs != "" || !strings.Contains(out, dir+": ok: 2 lessons") {
		t.Fatalf("vsh lesson check DIR = %d, %s\n%s", status, errs, out)
	}
	bad := strings.Replace(courseLesson("day-three"), "```vsh\nopen_device A", "```vhs\nalloc_pd ctx0\n```\n\n```vsh\nopen_device A\ntrace on", 1)
	if err := os.WriteFile(filepath.Join(dir, "three.md"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, errs = runVsh(t, "", "lesson", "check", dir)
	for _, w := range []string{filepath.Join(dir, "three.md") + ":10: ```vhs opens", filepath.Join(dir, "three.md") + ":16: \"trace on\" traces packets",
		filepath.Join(dir, "course.md") + ":7: course.md leaves out three.md", dir + ": 3 problems in 2 files; 2 lessons passed"} {
		if !strings.Contains(errs, w) {
			t.Errorf("vsh lesson check DIR = %d, stderr\n%s\nwant %q", status, errs, w)
		}
	}
}

// TestLessonCourseReport: grading takes a lesson by its file; vsh lesson
// DIR --report off a terminal (a student's script on stdin) is refused,
// since which lesson is next depends on the progress of whoever runs it.
func TestLessonCourseReport(t *testing.T) {
	dir := newCourse(t)
	reports := filepath.Join(t.TempDir(), "reports")
	status, _, errs := runVsh(t, "open_device A\n", "lesson", dir, "--report", reports)
	if status != 2 || !strings.Contains(errs, "to grade, name the lesson: vsh lesson "+dir+"/ID.md --report r.json < student.vsh") {
		t.Errorf("vsh lesson DIR --report < script = %d, stderr %q", status, errs)
	}
	if _, err := os.Stat(reports); err == nil {
		t.Errorf("a report folder was made")
	}
	// Graded, a course lesson solved leaves the grader's
	// progress alone: the session is confined.
	report := filepath.Join(t.TempDir(), "r.json")
	status, out, errs := runVsh(t, "open_device A\n", "--lessons", dir, "lesson", "day-two", "--report", report)
	if status != 0 || strings.Contains(out, "your progress is kept") {
		t.Errorf("vsh lesson FILE --report < script = %d, stderr %q\n%s", status, errs, out)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_STATE_HOME"), "vsh", "progress.json")); err == nil {
		t.Errorf("a graded run wrote the progress file")
	}
}
