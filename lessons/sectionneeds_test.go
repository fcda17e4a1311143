package lessons_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// partial is a lesson whose middle section needs two devices; the prose
// that ends the section ("It was B.") explains its cell.
const partial = "---\nid: partial\ntitle: Partial\nlevel: beginner\nminutes: 2\n---\n" +
	"Open A.\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n\n" +
	"Done with A.\n\n" +
	"## Two\nneeds: two-devices\n\nOpen B.\n\n```vsh\nopen_device B\n```\nexpect: ctx1.device == B\n\n" +
	"It was B.\n\n" +
	"## After\n\nMake a PD.\n\n```vsh\nalloc_pd ctx0\n```\nexpect: handles contains pd0\n\nThe end.\n"

func parsePartial(t *testing.T, src string) *lessons.Lesson {
	t.Helper()
	l, err := lessons.Parse("partial.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func oneDevice(t *testing.T) func() (verbs.Provider, error) {
	return func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 1, Seed: 1}), nil }
}

func TestSectionNeedsParse(t *testing.T) {
	l := parsePartial(t, partial)
	if len(l.Needs) != 0 {
		t.Errorf("the lesson needs %v; want nothing (only its section does)", l.Needs)
	}
	var got []string
	for _, s := range l.Steps {
		got = append(got, s.Section+":"+strings.Join(s.Needs, ","))
	}
	if want := ":|Two:two-devices|After:|After:"; strings.Join(got, "|") != want {
		t.Errorf("steps' sections and needs = %s; want %s", strings.Join(got, "|"), want)
	}
	for _, s := range l.Steps {
		if strings.Contains(s.Prose, "needs:") {
			t.Errorf("the needs: line is left in the prose: %q", s.Prose)
		}
	}
	if sn := lessons.SectionNeeds(l); len(sn) != 1 || sn[0].Section != "Two" || sn[0].Line != 17 {
		t.Errorf("SectionNeeds = %+v; want section Two, line 17", sn)
	}
	if h := lessons.Header(l); !strings.Contains(h, `section "Two" needs: two-devices (skipped without)`) {
		t.Errorf("the header does not name the section's needs:\n%s", h)
	}
}

func TestSectionSkippedInPlay(t *testing.T) {
	l := parsePartial(t, partial)
	sh := newShellOn(t, oneDevice(t))
	secs := lessons.SkippedSections(l, sh.LessonEnv().Provider())
	if len(secs) != 1 || secs[0].First != 1 || secs[0].Last != 1 || secs[0].Section != "Two" ||
		strings.Join(secs[0].Reasons, ";") != "two-devices: the backend has 1 device" {
		t.Fatalf("SkippedSections on one device = %+v", secs)
	}
	var b bytes.Buffer
	if err := lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
		t.Fatalf("Play on one device: %v\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{
		"Done with A.\n\n» skipped on this backend: step 2 needs two-devices (the backend has 1 device); the lesson goes on without it\n",
		"Make a PD.", "The end.",
		"Lesson partial played to its end: 4 steps (1 skipped on this backend), every expectation met.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play on one device lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"Open B.", "It was B.", "open_device B"} {
		if strings.Contains(out, not) {
			t.Errorf("play on one device shows %q of the skipped section:\n%s", not, out)
		}
	}
	// Where the backend has what the section needs, nothing is skipped.
	b.Reset()
	if err := lessons.Play(newShell(t, 2).LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if !strings.Contains(out, "Open B.") || !strings.Contains(out, "It was B.") || strings.Contains(out, "» skipped") {
		t.Errorf("play on two devices:\n%s", out)
	}
	// As if the backend lacked it: what lesson check plays too.
	b.Reset()
	if err := lessons.Play(newShell(t, 2).LessonEnv(), l, &b, lessons.PlayOptions{Lacking: []string{"two-devices"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "step 2 needs two-devices (lesson check plays the lesson without it too)") {
		t.Errorf("play with Lacking two-devices:\n%s", b.String())
	}
}

func TestSectionSkippedByTutor(t *testing.T) {
	l := parsePartial(t, partial)
	sh := newShellOn(t, oneDevice(t))
	env := sh.LessonEnv()
	tu, intro, err := lessons.NewTutor(env, l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(intro, "Open A.") {
		t.Errorf("intro:\n%s", intro)
	}
	if _, err := env.Exec("open_device A"); err != nil {
		t.Fatal(err)
	}
	out := tu.Observe()
	if !strings.Contains(out, "✓ goal reached") || !strings.Contains(out, "» skipped on this backend: step 2 needs two-devices") ||
		!strings.Contains(out, "Make a PD.") || strings.Contains(out, "Open B.") || strings.Contains(out, "It was B.") {
		t.Errorf("after step 1 the tutor said:\n%s", out)
	}
	if step, _ := tu.Step(); step != 2 {
		t.Fatalf("the tutor is at step %d; want 3", step+1)
	}
	if out, err := tu.Do(""); err != nil || strings.Contains(out, "It was B.") || !strings.Contains(out, "Make a PD.") {
		t.Errorf("lesson shows step 3 as:\n%s (%v)", out, err)
	}
	// Back goes over the skipped step, to step 1.
	if out, err := tu.Do("back"); err != nil || !strings.Contains(out, "Open A.") {
		t.Fatalf("lesson back: %v\n%s", err, out)
	}
	if step, _ := tu.Step(); step != 0 {
		t.Fatalf("after lesson back the tutor is at step %d; want 1", step+1)
	}
	env.Exec("open_device A")
	tu.Observe()
	env.Exec("alloc_pd ctx0")
	out = tu.Observe()
	if !strings.Contains(out, "» lesson partial complete: 4 steps, 2 solved by you, 0 done by the tutor, 1 skipped on this backend.") {
		t.Errorf("the end:\n%s", out)
	}
	if mine, skipped := tu.Solved(); mine != 2 || skipped != 0 {
		t.Errorf("Solved = %d, %d; want 2, 0", mine, skipped)
	}
}

// A lesson whose last section is skipped ends there.
func TestSectionSkippedAtTheEnd(t *testing.T) {
	src := "---\nid: tail\ntitle: Tail\nlevel: beginner\nminutes: 1\n---\nOpen A.\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n\n" +
		"## Two\nneeds: two-devices\n\n```vsh\nopen_device B\n```\nexpect: ctx1.device == B\n\nThat was B.\n"
	l := parsePartial(t, src)
	sh := newShellOn(t, oneDevice(t))
	var b bytes.Buffer
	if err := lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "steps 2 to 3 need two-devices") || strings.Contains(out, "That was B.") ||
		!strings.Contains(out, "3 steps (2 skipped on this backend)") {
		t.Errorf("play:\n%s", out)
	}
	sh = newShellOn(t, oneDevice(t))
	tu, _, err := lessons.NewTutor(sh.LessonEnv(), l)
	if err != nil {
		t.Fatal(err)
	}
	sh.LessonEnv().Exec("open_device A")
	out := tu.Observe()
	if _, over := tu.Step(); !over || !strings.Contains(out, "complete: 3 steps, 1 solved by you, 0 done by the tutor, 2 skipped on this backend") {
		t.Errorf("over: %v\n%s", over, out)
	}
	if out, err := tu.Do("back"); err != nil || !strings.Contains(out, "Open A.") {
		t.Errorf("lesson back from the end: %v\n%s", err, out)
	}
}

// Check plays a lesson again without each capability its sections need
// (TestCheckPlays has the lessons it rejects so).
func TestCheckPlaysWithoutSectionNeeds(t *testing.T) {
	if _, err := lessons.Check("partial.md", []byte(partial), simEnv(t), io.Discard); err != nil {
		t.Errorf("Check(partial) = %v", err)
	}
}
