package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// TestConfined: a confined session (a graded script, a lesson checked)
// writes no file and reaches no network, and works otherwise.
func TestConfined(t *testing.T) {
	sh := newConfinedShell(t)
	defer sh.Close()
	dir := t.TempDir()
	other := filepath.Join(t.TempDir(), "answers.vsh")
	os.WriteFile(other, []byte("open_device B\n"), 0o644)
	for _, line := range []string{"open_device A", "alloc_pd ctx0", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"} {
		if out, err := sh.Exec(line); err != nil {
			t.Fatalf("%s: %s%s", line, out, sh.FormatError(err))
		}
	}
	for _, line := range []string{
		"save " + dir + "/notebook.md",
		"save -f " + dir + "/script.vsh",
		"trace pcap " + dir + "/wire.pcap",
		"show qp0 --diagram svg=" + dir + "/qp.svg",
		"exchange connect 127.0.0.1 qp0 port=1",
		"source " + other, // a graded script is its own commands
	} {
		_, err := sh.Exec(line)
		if err == nil || !strings.Contains(sh.FormatError(err), "refused: this session is confined") {
			t.Errorf("%s: want the confinement refusal, got %v", line, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a confined session wrote %d file(s) in %s", len(ents), dir)
	}
	if out, err := sh.Exec("show qp0"); err != nil {
		t.Errorf("show qp0: %s%s", out, sh.FormatError(err))
	}
}

// TestConfinedLesson: a confined session takes the lesson it started with
// and no other, nor that one again (its report would follow the first).
func TestConfinedLesson(t *testing.T) {
	sh := newConfinedShell(t)
	defer sh.Close()
	if out, err := sh.Exec("lesson tour"); err != nil {
		t.Fatalf("lesson tour: %s%s", out, sh.FormatError(err))
	}
	for _, line := range []string{"lesson lifecycle --force", "lesson quit", "lesson tour"} {
		_, err := sh.Exec(line)
		if line == "lesson quit" {
			continue
		}
		if err == nil || !strings.Contains(sh.FormatError(err), "refused: this session is confined to lesson tour") {
			t.Errorf("%s: want the refusal, got %v", line, err)
		}
	}
}

// newConfinedShell is a confined session on two simulated devices.
func newConfinedShell(t *testing.T) *Shell {
	t.Helper()
	sh, err := New(Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil },
		Plain: true, Confined: true})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// TestErrorsShowControls: an error that quotes what was typed (a word no
// command has, in the syntax error of its line) shows its control
// characters escaped, so a graded script cannot retitle or recolour the
// grader's terminal.
func TestErrorsShowControls(t *testing.T) {
	sh := newConfinedShell(t)
	defer sh.Close()
	for _, line := range []string{"\x1b]0;graded\a\x1b[32mall \"\\q\"", "\x1b[8mhidden"} {
		_, err := sh.Exec(line)
		if err == nil {
			t.Fatalf("%q ran", line)
		}
		for _, s := range []string{sh.FormatError(err), err.Error()} {
			if strings.ContainsAny(s, "\x1b\a") {
				t.Errorf("%q: the error holds raw control characters: %q", line, s)
			}
		}
	}
}

// TestLessonSkipsTutorPrompts: in a lesson, a saved lesson notebook's
// "[N] tutor> " commands are the tutor's to run: sourcing it runs the
// learner's alone.
func TestLessonSkipsTutorPrompts(t *testing.T) {
	sh, err := New(Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil }, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if out, err := sh.Exec("lesson tour"); err != nil {
		t.Fatalf("lesson tour: %s%s", out, sh.FormatError(err))
	}
	nb := filepath.Join(t.TempDir(), "saved.md")
	os.WriteFile(nb, []byte("# vsh notebook: Lesson tour\n\n```vsh cell=2\n[2] tutor> open_device A\n[3] vsh> devices\n```\n"), 0o644)
	out, err := sh.Exec("source " + nb)
	if err != nil {
		t.Fatalf("source: %s%s", out, sh.FormatError(err))
	}
	if strings.Contains(out, "ibv_open_device(A") || !strings.Contains(out, "sim0") {
		t.Errorf("sourcing a lesson notebook in a lesson ran the tutor's command, or not the learner's:\n%s", out)
	}
}
