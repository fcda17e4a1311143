package lessons_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
)

// courseLesson is a small lesson file with this id.
func courseLesson(id string) string {
	return "---\nid: " + id + "\ntitle: Lesson " + id + "\nlevel: beginner\nminutes: 5\n---\n\n```vsh\nopen_device A\n```\ngoal: Open A.\n"
}

// writeCourse writes files (name → text) into a new folder.
func writeCourse(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadCourse(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		order string   // the ids in order, when it loads
		want  []string // what the error says, file names relative to the folder
	}{
		{"catalog order", map[string]string{"b.md": courseLesson("b"), "a.md": courseLesson("a"), "notes.txt": "x"}, "a b", nil},
		{"course.md order", map[string]string{"b.md": courseLesson("b"), "a.md": courseLesson("a"),
			"course.md": "---\ntitle: T\n---\n\n- b\n- a.md  requires: b\n"}, "b a", nil},
		{"duplicate id", map[string]string{"a.md": courseLesson("x"), "b.md": courseLesson("x")}, "",
			[]string{"b.md:2: id x is also the id of DIR/a.md"}},
		{"shipped id", map[string]string{"a.md": courseLesson("tour")}, "",
			[]string{"a.md:2: id tour is the id of a lesson that ships with vsh (lessons/tour.md)"}},
		{"course.md unknown lesson", map[string]string{"a.md": courseLesson("a"), "course.md": "- a\n- b\n"}, "",
			[]string{"course.md:2: course.md lists \"b\", which is no lesson of the folder"}},
		{"course.md lists a shipped lesson", map[string]string{"a.md": courseLesson("a"), "course.md": "- a\n- rc-pingpong\n"}, "",
			[]string{"rc-pingpong ships with vsh: a course holds files of its own; vsh lesson export rc-pingpong --md FILE"}},
		{"course.md leaves one out", map[string]string{"a.md": courseLesson("a"), "b.md": courseLesson("b"), "course.md": "- a\n"}, "",
			[]string{"course.md:1: course.md leaves out b.md"}},
		{"requires a later lesson", map[string]string{"a.md": courseLesson("a"), "b.md": courseLesson("b"),
			"course.md": "- a  requires: b\n- b\n"}, "", []string{"course.md:1: lesson a requires b, which the list puts after it"}},
		{"course.md listed twice", map[string]string{"a.md": courseLesson("a"), "course.md": "- a\n- a.md\n"}, "",
			[]string{"course.md:2: course.md lists lesson a twice (first at line 1)"}},
		{"course.md with a terminal control", map[string]string{"a.md": courseLesson("a"), "course.md": "---\ntitle: \x1b[31mRed\n---\n- a\n"}, "",
			[]string{"course.md:2: the line holds the control character U+001B"}},
		{"course.md bad key", map[string]string{"a.md": courseLesson("a"), "course.md": "---\ntitel: T\n---\n- a\n"}, "",
			[]string{`course.md:2: front matter: unknown key "titel" (did you mean title?)`}},
		{"binary file", map[string]string{"a.md": "\x00\x01\x02"}, "", []string{"a.md is not a lesson: it is not UTF-8 text"}},
		{"too big", map[string]string{"a.md": strings.Repeat("x", lessons.MaxFileSize+1)}, "",
			[]string{"a.md is larger than 1048576 bytes"}},
		{"empty", map[string]string{"notes.txt": "x"}, "", []string{"holds no lesson"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeCourse(t, tc.files)
			c, err := lessons.LoadCourse(dir)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("LoadCourse = %v", err)
				}
				var ids []string
				for _, l := range c.Lessons {
					ids = append(ids, l.ID)
				}
				if got := strings.Join(ids, " "); got != tc.order {
					t.Errorf("lessons in order %q, want %q", got, tc.order)
				}
				return
			}
			got := strings.ReplaceAll(fmt.Sprint(err), dir, "DIR")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("LoadCourse = %s\nwant one containing %q", got, w)
				}
			}
		})
	}
}

// TestLoadCourseHostile: what is not a lesson file in a course folder is
// refused with a clear error, never a hang.
func TestLoadCourseHostile(t *testing.T) {
	dir := writeCourse(t, map[string]string{"a.md": courseLesson("a")})
	if err := os.Symlink("loop.md", filepath.Join(dir, "loop.md")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := lessons.LoadCourse(dir); done <- err }()
	select {
	case err := <-done:
		for _, w := range []string{"loop.md: stat", "too many levels of symbolic links", "pipe.md is not a regular file", "sub.md is not a regular file"} {
			if !strings.Contains(fmt.Sprint(err), w) {
				t.Errorf("LoadCourse = %v; want one containing %q", err, w)
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadCourse hangs on a named pipe")
	}
}

func TestCatalogDuplicates(t *testing.T) {
	c1, err := lessons.LoadCourse(writeCourse(t, map[string]string{"a.md": courseLesson("same")}))
	if err != nil {
		t.Fatal(err)
	}
	dir2 := writeCourse(t, map[string]string{"b.md": courseLesson("same"), "c.md": courseLesson("other")})
	c2, err := lessons.LoadCourse(dir2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lessons.NewCatalog(c1, c2); !strings.Contains(fmt.Sprint(err), filepath.Join(dir2, "b.md")+":2: id same is also the id of "+c1.Lessons[0].Name) {
		t.Errorf("NewCatalog = %v; want the duplicate id named with both files", err)
	}
	cat, err := lessons.NewCatalog(c2)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := cat.Find("other"); !ok || cat.Course(l) != c2 {
		t.Errorf("Find(other) = %v, %v; want c2's lesson", l, ok)
	}
	if _, ok := cat.Find("tour"); !ok {
		t.Error("the catalog lost the shipped lessons")
	}
	if _, err := cat.Load("othr", nil); !strings.Contains(fmt.Sprint(err), "did you mean other?") {
		t.Errorf("Load(othr) = %v; want a suggestion", err)
	}
}

func TestProgress(t *testing.T) {
	dir := writeCourse(t, map[string]string{"a.md": courseLesson("a"), "b.md": courseLesson("b"), "course.md": "- a\n- b requires: a\n"})
	c, err := lessons.LoadCourse(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state", "vsh", lessons.ProgressFileName)
	p, err := lessons.OpenProgress(path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Lessons[0], c.Lessons[1]
	if p.Next(c) != a || strings.Join(p.Unsolved(c, b), ",") != "a" {
		t.Fatalf("fresh progress: next %v, b needs %v; want a, [a]", p.Next(c).ID, p.Unsolved(c, b))
	}
	if err := p.MarkSolved(a, time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	again, err := lessons.OpenProgress(path)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Solved(a) || again.Solved(b) || again.Next(c) != b || len(again.Unsolved(c, b)) != 0 {
		t.Errorf("after a is solved: next %v; want b", again.Next(c))
	}
	if err := again.MarkSolved(b, time.Now()); err != nil || again.Next(c) != nil {
		t.Errorf("after b: %v, next %v; want none", err, again.Next(c))
	}
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lessons.OpenProgress(path); err == nil || !strings.Contains(err.Error(), "is not vsh's") {
		t.Errorf("OpenProgress of garbage = %v", err)
	}
}

func TestProgressPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, err := lessons.ProgressPath(); err != nil || p != "/x/state/vsh/progress.json" {
		t.Errorf("ProgressPath = %q, %v", p, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/ann")
	if p, err := lessons.ProgressPath(); err != nil || p != "/home/ann/.local/state/vsh/progress.json" {
		t.Errorf("ProgressPath = %q, %v", p, err)
	}
}

// TestCheckCourse: lesson check DIR reports the problems of every file
// and of the course, each with its file and line.
func TestCheckCourse(t *testing.T) {
	bad := strings.Replace(courseLesson("b"), "```vsh\n", "```vhs\nx\n```\n\n```vsh\n", 1)
	dir := writeCourse(t, map[string]string{"a.md": courseLesson("a"), "b.md": bad, "c.md": courseLesson("a")})
	passed, err := lessons.CheckCourse(dir, lessons.CheckOptions{Open: simEnv(t)})
	var es lessons.Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("CheckCourse = %v; want 2 problems", err)
	}
	if !strings.HasPrefix(es[0].Error(), filepath.Join(dir, "b.md")+":8: ```vhs opens") ||
		!strings.HasPrefix(es[1].Error(), filepath.Join(dir, "c.md")+":2: id a is also the id of") {
		t.Errorf("CheckCourse = %v", err)
	}
	if len(passed) != 1 || passed[0].ID != "a" {
		t.Errorf("passed %v; want lesson a", passed)
	}
}

func ExampleLoadCourse() {
	dir, err := os.MkdirTemp("", "course")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	lesson := func(id string) []byte {
		return []byte("---\nid: " + id + "\ntitle: " + id + "\nlevel: beginner\nminutes: 5\n---\n\n```vsh\nopen_device A\n```\ngoal: Open A.\n")
	}
	os.WriteFile(filepath.Join(dir, "one.md"), lesson("first-qp"), 0o644)
	os.WriteFile(filepath.Join(dir, "two.md"), lesson("qp-walk"), 0o644)
	os.WriteFile(filepath.Join(dir, "course.md"), []byte("---\ntitle: Verbs in a week\n---\n- qp-walk\n- first-qp requires: qp-walk\n"), 0o644)
	c, err := lessons.LoadCourse(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Title)
	for _, l := range c.Lessons {
		fmt.Println(l.ID, c.Prereqs[l.ID])
	}
	// Output:
	// Verbs in a week
	// qp-walk []
	// first-qp [qp-walk]
}
