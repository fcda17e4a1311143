package shell

import (
	"os"
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
