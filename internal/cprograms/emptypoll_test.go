package cprograms

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEmptyPollReturns: a program that gives up after 20,000 empty polls
// of sim0 (a timeout loop) ends within a minute; with the UDP link's
// idle wait (up to 50 ms a poll) it would take a quarter of an hour.
func TestEmptyPollReturns(t *testing.T) {
	programCase(t)
	vsh, gcc := built(t, "vsh"), debian(t, "gcc", "gcc")
	parallel(t)
	prog := filepath.Join(t.TempDir(), "emptypoll")
	src := filepath.Join(repoRoot(t), "internal/cprograms/testdata/emptypoll.c")
	if out, err := exec.Command(gcc, "-O0", "-Wall", "-o", prog, src, "-libverbs").CombinedOutput(); err != nil {
		t.Fatalf("gcc testdata/emptypoll.c: %v\n%s", err, out)
	}
	out, status := runOne(t, vshRun(vsh, simAddr(t), nil, prog, "20000"), time.Minute)
	if status != 0 || !strings.Contains(out, "20000 empty polls") {
		t.Errorf("emptypoll: exit status %d, want 0 and \"20000 empty polls\"\n%s", status, indent(out))
	}
}
