package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

func TestLessonList(t *testing.T) {
	status, out, errs := runVsh(t, "", "lesson", "list")
	if status != 0 || errs != "" {
		t.Fatalf("vsh lesson list = %d, stderr %q", status, errs)
	}
	for _, id := range lessons.IDs() {
		if !strings.Contains(out, id) {
			t.Errorf("vsh lesson list does not list %s:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "0 skipped") {
		t.Errorf("vsh lesson list on the simulator skips some:\n%s", out)
	}
	// On one simulated device A and B share it; only the lessons that need
	// two devices are skipped.
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	two := 0
	for _, l := range all {
		if slices.Contains(l.Needs, "two-devices") {
			two++
		}
	}
	status, out, _ = runVsh(t, "", "--devices", "1", "lesson", "list")
	if status != 0 || !strings.Contains(out, fmt.Sprintf("%d skipped", two)) {
		t.Errorf("on one device: %d, want %d skipped (the lessons that need two devices)\n%s", status, two, out)
	}
	// A lesson with a section that needs two devices plays without it.
	for _, l := range all {
		for _, sn := range lessons.SectionNeeds(l) {
			if slices.Contains(sn.Needs, "two-devices") && !strings.Contains(out, l.ID+" plays without ") {
				t.Errorf("on one device vsh lesson list does not say %s plays without its section %q:\n%s", l.ID, sn.Section, out)
			}
		}
	}
}

func TestLessonPlay(t *testing.T) {
	status, out, errs := runVsh(t, "", "lesson", "play", "tour")
	if status != 0 || errs != "" {
		t.Fatalf("vsh lesson play tour = %d, stderr %q", status, errs)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "lessons", "testdata", "tour.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The golden file is "play", "----", "----", the transcript, "----", "----".
	golden := string(want)
	golden = strings.TrimPrefix(golden, "play\n----\n----\n")
	golden = strings.TrimSuffix(golden, "----\n----\n")
	if strings.TrimSpace(out) != strings.TrimSpace(golden) {
		t.Errorf("vsh lesson play tour differs from lessons/testdata/tour.txt")
	}
	// Flags may come after the words, and --pace is only for play.
	if status, _, errs := runVsh(t, "", "lesson", "play", "tour", "--pace", "1ns"); status != 0 {
		t.Errorf("--pace after the id: %d %s", status, errs)
	}
	if status, _, errs := runVsh(t, "", "lesson", "list", "--pace", "1s"); status != 2 || !strings.Contains(errs, "--pace is for vsh lesson play") {
		t.Errorf("--pace with list: %d %q", status, errs)
	}
}

func TestLessonPlayAll(t *testing.T) {
	status, out, errs := runVsh(t, "", "lesson", "play", "all")
	n := len(lessons.IDs())
	if status != 0 || errs != "" || !strings.Contains(out, strings.Join([]string{itoa(n), " lessons on sim (2 devices, seed 1): ", itoa(n), " played, 0 skipped, 0 failed"}, "")) {
		t.Errorf("vsh lesson play all = %d, stderr %q, end:\n%s", status, errs, out[max(0, len(out)-300):])
	}
}

func itoa(n int) string {
	s := ""
	for n >= 10 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return string(rune('0'+n)) + s
}

const needyLesson = `---
id: needy
title: Needs two devices
level: beginner
minutes: 1
needs: two-devices
---

Open both.

` + "```vsh" + `
open_device A
open_device B
` + "```" + `
goal: Open a context on each of A and B.
expect: ctx1.device == B
`

func TestLessonSkip(t *testing.T) {
	f := writeFile(t, "needy.md", needyLesson)
	status, out, errs := runVsh(t, "", "--devices", "1", "lesson", "play", f)
	if status != 0 || !strings.Contains(out, "skipped needy: it needs two-devices: the backend has 1 device") ||
		!strings.Contains(out, "1 lesson on sim (1 device, seed 1): 0 played, 1 skipped, 0 failed") {
		t.Errorf("a lesson needing two devices on one: %d, stderr %q\n%s", status, errs, out)
	}
	if status, out, _ := runVsh(t, "", "lesson", "play", f); status != 0 || !strings.Contains(out, "played to its end") {
		t.Errorf("on two devices: %d\n%s", status, out)
	}
	// Interactive, it refuses to start: a lesson error, status 2.
	if status, _, errs := runVsh(t, "", "--devices", "1", "lesson", f); status != 2 || !strings.Contains(errs, "needs what this backend lacks") {
		t.Errorf("interactive on one device: %d %q", status, errs)
	}
}

func TestLessonPlayFails(t *testing.T) {
	bad := strings.Replace(needyLesson, "expect: ctx1.device == B", "expect: ctx1.device == A", 1)
	f := writeFile(t, "bad.md", bad)
	status, out, errs := runVsh(t, "", "lesson", "play", f)
	if status != 1 || !strings.Contains(errs, "bad.md:16: expect: ctx1.device == A: ctx1.device is sim1; the goal is sim0") ||
		!strings.Contains(out, "✗ expect: ctx1.device == A") {
		t.Errorf("a failing expectation: %d, stderr %q\n%s", status, errs, out)
	}
}

func TestLessonCheck(t *testing.T) {
	good := writeFile(t, "good.md", needyLesson)
	status, out, errs := runVsh(t, "", "lesson", "check", good)
	if status != 0 || !strings.Contains(out, "good.md: ok: lesson needy, 1 step (1 for the learner)") {
		t.Errorf("check of a good lesson: %d %q %q", status, out, errs)
	}
	// check plays on the simulator whatever --backend says, and lists every
	// problem with its line.
	broken := strings.Replace(needyLesson, "level: beginner", "level: expert", 1)
	broken = strings.Replace(broken, "expect: ctx1.device == B", "expect: ctx1.devise == B", 1)
	f := writeFile(t, "broken.md", broken)
	status, _, errs = runVsh(t, "", "lesson", "check", good, f)
	for _, w := range []string{
		`broken.md:4: front matter: level "expert"`,
		`broken.md:16: expect: a device context has no field "devise" (did you mean device?)`,
		"broken.md: 2 problems",
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("check of a broken lesson: stderr lacks %q:\n%s", w, errs)
		}
	}
	if status != 1 {
		t.Errorf("check of a broken lesson = %d; want 1", status)
	}
	if status, _, errs := runVsh(t, "", "lesson", "check", "/nonexistent/x.md"); status != 1 || !strings.Contains(errs, "no such file") {
		t.Errorf("check of a missing file: %d %q", status, errs)
	}
	// Every shipped lesson passes its own check.
	files, _ := filepath.Glob(filepath.Join("..", "..", "lessons", "*.md"))
	args := append([]string{"lesson", "check"}, files...)
	if status, out, errs := runVsh(t, "", args...); status != 0 || strings.Count(out, ": ok:") != len(files) {
		t.Errorf("check of the shipped lessons: %d %q\n%s", status, errs, out)
	}
}

// TestLessonCheckAnyBackend: lesson check plays on the simulator whatever
// --backend says (docs/writing-lessons.md), so it works with --backend
// ibverbs where that backend is not built in or has no device.
func TestLessonCheckAnyBackend(t *testing.T) {
	good := writeFile(t, "good.md", needyLesson)
	status, out, errs := runVsh(t, "", "--backend", "ibverbs", "lesson", "check", good)
	if status != 0 || !strings.Contains(out, "good.md: ok: lesson needy, 1 step (1 for the learner), played on the simulator") {
		t.Errorf("vsh --backend ibverbs lesson check = %d, stdout %q, stderr %q; want 0 and ok", status, out, errs)
	}
	if status, _, errs := runVsh(t, "", "--backend", "bogus", "lesson", "check", good); status != 2 || !strings.Contains(errs, `unknown backend "bogus"`) {
		t.Errorf("vsh --backend bogus lesson check = %d, stderr %q; want 2 and the unknown backend", status, errs)
	}
}

// TestLessonInteractive takes a lesson with no terminal: the learner's
// commands come from stdin, mistakes and all. The step is solved after
// lesson hint showed the lesson's commands: the tutor's, status 1.
func TestLessonInteractive(t *testing.T) {
	f := writeFile(t, "needy.md", needyLesson)
	in := "open_device A\nopen_device Z\nlesson hint\nlesson hint\nopen B\n"
	status, out, errs := runVsh(t, in, "lesson", f)
	if status != 1 || errs != "" {
		t.Fatalf("vsh lesson FILE < input = %d, stderr %q; want 1 (solved after the lesson's commands were shown)\n%s", status, errs, out)
	}
	for _, w := range []string{
		"Lesson needy: Needs two devices",
		"» your turn: Open a context on each of A and B.",
		"vsh> open_device Z",
		"» not yet: this step makes a context of device B; there is none yet",
		"» the lesson's commands for this step:",
		"✓ goal reached",
		"» lesson needy complete: 1 step, 0 solved by you, 1 after the tutor showed its commands, 0 done by the tutor.",
		"  1     Open a context on each of A and B  tutor    3         2",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the session lacks %q:\n%s", w, out)
		}
	}
}

func TestLessonUsage(t *testing.T) {
	tests := []struct {
		argv   []string
		status int
		errms  string
	}{
		{[]string{"lesson"}, 2, "lesson needs a word"},
		{[]string{"lesson", "play"}, 2, "lesson play takes lessons"},
		{[]string{"lesson", "check"}, 2, "lesson check needs a lesson file"},
		{[]string{"lesson", "tour", "extra"}, 2, `lesson tour takes nothing more, not "extra"`},
		{[]string{"lesson", "play", "nosuch"}, 1, `no lesson "nosuch"`},
		{[]string{"lesson", "play", "tuor"}, 1, "did you mean tour?"},
		{[]string{"lesson", "--bogus"}, 2, "flag provided but not defined"},
	}
	for _, tc := range tests {
		status, _, errs := runVsh(t, "", tc.argv...)
		if status != tc.status || !strings.Contains(errs, tc.errms) {
			t.Errorf("vsh %v = %d, stderr %q; want %d, %q", tc.argv, status, errs, tc.status, tc.errms)
		}
	}
	if status, out, _ := runVsh(t, "", "lesson", "help"); status != 0 || !strings.Contains(out, "vsh [flags] lesson check FILE") {
		t.Errorf("vsh lesson help = %d\n%s", status, out)
	}
}

// TestLessonCheckLearner plays an instructor's learner paths through the
// tutor of a lesson outside the repository: the repository's own path for
// the tour passes; a right command marked #! refused, a wrong step number
// and an unknown marker fail with their lines.
func TestLessonCheckLearner(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "lessons", "tour.md"))
	if err != nil {
		t.Fatal(err)
	}
	lesson := writeFile(t, "my-tour.md", strings.Replace(string(src), "id: tour", "id: my-tour", 1))
	good, err := os.ReadFile(filepath.Join("..", "..", "lessons", "testdata", "learner", "tour.vsh"))
	if err != nil {
		t.Fatal(err)
	}
	goodPath := writeFile(t, "good.vsh", string(good)+"#! done\n")
	status, out, errs := runVsh(t, "", "lesson", "check", lesson, "--learner", goodPath)
	if status != 0 || !strings.Contains(out, "good.vsh: ok: every marker held; the lesson ended") {
		t.Errorf("the tour's own learner path: %d\nstdout %q\nstderr %q", status, out, errs)
	}
	bad := writeFile(t, "bad.vsh", "devices\n#! step 2\nopen_device A\n#! refused\n#! step 9\n#! predict 3\n#! done\n")
	status, _, errs = runVsh(t, "", "lesson", "check", lesson, "--learner", goodPath, "--learner", bad)
	for _, w := range []string{
		`bad.vsh:4: "open_device A" reached the goal of step 2; it should not have`,
		"bad.vsh:5: the tutor is at step 3, not at step 9",
		"bad.vsh:6: the tutor asks no prediction here: step 3 asks none",
		"bad.vsh:7: the lesson is not done by the learner",
		"bad.vsh: 4 problems (the learner stopped at step 3",
	} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}
	if status != 1 {
		t.Errorf("a path with failing markers: status %d; want 1", status)
	}
	if status, _, errs := runVsh(t, "", "lesson", "play", lesson, "--learner", bad); status != 2 || !strings.Contains(errs, "--learner is for vsh lesson check") {
		t.Errorf("--learner outside check: %d %q; want 2", status, errs)
	}
}

// TestLessonHelp: vsh lesson --help, vsh lesson play --help and vsh help
// lesson print the lesson usage; vsh help and vsh --help the general one.
func TestLessonHelp(t *testing.T) {
	for _, args := range [][]string{{"lesson", "--help"}, {"lesson", "play", "-h"}, {"help", "lesson"}, {"lesson", "help"}} {
		if status, out, errs := runVsh(t, "", args...); status != 0 || !strings.HasPrefix(out, "usage: vsh [flags] lesson list") {
			t.Errorf("vsh %s = %d, stdout %q, stderr %q; want the lesson usage", strings.Join(args, " "), status, out, errs)
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}} {
		if status, out, _ := runVsh(t, "", args...); status != 0 || !strings.HasPrefix(out, "usage: vsh [flags]            interactive") {
			t.Errorf("vsh %s = %d, %q; want the general usage", strings.Join(args, " "), status, out)
		}
	}
}

// TestLessonPlayStep checks lesson play's projector flags off a terminal:
// --step N starts at step N; --pause needs a terminal; both are refused
// where they do not apply.
func TestLessonPlayStep(t *testing.T) {
	tests := []struct {
		args      []string
		status    int
		out, errs string
		notOut    string
	}{
		{[]string{"lesson", "play", "tour", "--step", "3"}, 0, "» the session is rebuilt for step 3: a fresh backend, then the lesson's 2 commands before it", "", "── step 2 of 9"},
		{[]string{"lesson", "play", "tour", "--step", "1"}, 0, "── step 1 of 9", "", "rebuilt"},
		{[]string{"lesson", "play", "tour", "--step", "10"}, 2, "", "lesson tour has steps 1 to 9, not a step 10", ""},
		{[]string{"lesson", "play", "tour", "--step", "-1"}, 2, "", "--step -1: a step number, counted from 1", ""},
		{[]string{"lesson", "play", "tour", "--step", "0"}, 2, "", "--step 0: a step number, counted from 1", ""},
		{[]string{"lesson", "play", "tour", "rpc", "--step", "2"}, 2, "", "--step N starts one lesson at step N", ""},
		{[]string{"lesson", "play", "all", "--step", "2"}, 2, "", "--step N starts one lesson at step N", ""},
		{[]string{"lesson", "tour", "--step", "2"}, 2, "", "--step and --pause are for vsh lesson play ID", ""},
		{[]string{"lesson", "play", "tour", "--pause"}, 2, "", "--pause reads the presenter's keys from a terminal, and this is not one", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			status, out, errs := runVsh(t, "", tt.args...)
			if status != tt.status || !strings.Contains(out, tt.out) || !strings.Contains(errs, tt.errs) ||
				tt.notOut != "" && strings.Contains(out, tt.notOut) {
				t.Errorf("status %d (want %d), stderr %q (want %q)\n%s", status, tt.status, errs, tt.errs, lastLines(out, 20))
			}
		})
	}
}
