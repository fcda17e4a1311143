package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs/ibverbs"
)

// runVsh runs main's run with argv, stdin from a file holding in.
func runVsh(t *testing.T, in string, argv ...string) (status int, stdout, stderr string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(in)
	f.Seek(0, 0)
	defer f.Close()
	var out, errb bytes.Buffer
	status = run(argv, f, &out, &errb)
	return status, out.String(), errb.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFlags(t *testing.T) {
	tests := []struct {
		argv       []string
		status     int
		out, errms string
	}{
		{[]string{"--help"}, 0, "usage: vsh", ""},
		{[]string{"-h"}, 0, "--keep-going", ""},
		{[]string{"--version"}, 0, "vsh ", ""},
		{[]string{"--bogus"}, 2, "", "flag provided but not defined"},
		{[]string{"stray"}, 2, "", "unexpected argument"},
		{[]string{"--backend", "carrier-pigeon"}, 2, "", `unknown backend "carrier-pigeon"`},
		{[]string{"--devices", "0"}, 2, "", "--devices 0"},
		{[]string{"-f", "/nonexistent/x.vsh"}, 1, "", "no such file"},
		{[]string{"--width", "19"}, 2, "", "--width 19: give 20 to 1000 columns"},
		{[]string{"--width", "1001"}, 2, "", "--width 1001: give 20 to 1000 columns"},
		{[]string{"--width", "-1"}, 2, "", "--width -1"},
		{[]string{"--width", "0"}, 2, "", "--width 0"},
		{[]string{"--backend", "ibverbs", "--sim-xrc"}, 2, "", "--sim-xrc gives the simulator XRC; with --backend ibverbs the device has XRC or not"},
		{[]string{"--help"}, 0, "--sim-xrc", ""},
	}
	for _, tc := range tests {
		status, out, errs := runVsh(t, "", tc.argv...)
		if status != tc.status || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errms) {
			t.Errorf("vsh %v = %d, stdout %q, stderr %q; want %d, %q, %q", tc.argv, status, out, errs, tc.status, tc.out, tc.errms)
		}
	}
}

// TestIBVerbsBackend checks what --backend ibverbs says in this build:
// how to build it (no cgo or no ibverbs tag), how to make a device (built,
// but no device), or a session on the device.
func TestIBVerbsBackend(t *testing.T) {
	p, err := ibverbs.New()
	status, out, errs := runVsh(t, "devices\n", "--backend", "ibverbs")
	switch {
	case errors.Is(err, ibverbs.ErrBackendDisabled):
		if status != 2 || !strings.Contains(errs, "libibverbs-dev") || !strings.Contains(errs, "-tags ibverbs") {
			t.Errorf("without the backend: status %d, stderr %q", status, errs)
		}
	case errors.Is(err, ibverbs.ErrNoDevices):
		if status != 1 || !strings.Contains(errs, "rdma link add rxe0") {
			t.Errorf("with no device: status %d, stderr %q", status, errs)
		}
	case err != nil:
		t.Skipf("ibverbs.New: %v", err)
	default:
		p.Close()
		if status != 0 || !strings.Contains(out, "ibv_get_device_list()") {
			t.Errorf("on a device: status %d, stdout %q, stderr %q", status, out, errs)
		}
	}
}

func TestScriptFromStdin(t *testing.T) {
	status, out, errs := runVsh(t, "open_device A\nalloc_pd ctx0\n", "--plain")
	if status != 0 || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	want := "[1] vsh> open_device A\n[1] ibv_open_device(A = sim0) → ctx0  [control path]\n" +
		"[2] vsh> alloc_pd ctx0\n[2] ibv_alloc_pd(ctx0) → pd0  [control path]\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("escape codes in output that is not a terminal: %q", out)
	}
}

func TestScriptStopsAtFirstFailure(t *testing.T) {
	script := writeFile(t, "s.vsh", "# a comment\nopen_device A\nalloc_pd ctx9\nalloc_pd ctx0\n")
	status, out, errs := runVsh(t, "", "-f", script)
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if strings.Contains(out, "[3] vsh> alloc_pd ctx0") {
		t.Errorf("the script went on after its failure:\n%s", out)
	}
	if !strings.Contains(errs, "s.vsh:3: stopped at the first failing command") {
		t.Errorf("stderr %q", errs)
	}

	status, out, _ = runVsh(t, "", "-k", "-f", script)
	if status != 1 || !strings.Contains(out, "[3] vsh> alloc_pd ctx0\n[3] ibv_alloc_pd") {
		t.Errorf("-k: status %d, stdout:\n%s", status, out)
	}
	status, _, _ = runVsh(t, "", "--keep-going", "-f", script)
	if status != 1 {
		t.Errorf("--keep-going: status %d", status)
	}
}

func TestExpectedFailures(t *testing.T) {
	ok := writeFile(t, "ok.vsh", "open_device A\n! alloc_pd ctx9\n")
	if status, out, errs := runVsh(t, "", "-f", ok); status != 0 {
		t.Errorf("a \"! \" line that fails: status %d\n%s%s", status, out, errs)
	}
	bad := writeFile(t, "bad.vsh", "! open_device A\n")
	if status, _, errs := runVsh(t, "", "-f", bad); status != 1 || !strings.Contains(errs, "expected to fail") {
		t.Errorf("a \"! \" line that succeeds: status %d, stderr %q", status, errs)
	}
}

func TestSeedAndDevices(t *testing.T) {
	script := "devices\nopen_device B\nalloc_pd ctx0\nreg_mr pd0 length=64 access=local_write\n"
	_, a, _ := runVsh(t, script, "--seed", "3")
	_, b, _ := runVsh(t, script, "--seed", "3")
	_, c, _ := runVsh(t, script, "--seed", "4")
	if a != b {
		t.Errorf("the same seed gave two transcripts:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 3 and 4 gave the same transcript")
	}
	_, one, _ := runVsh(t, script, "--devices", "1")
	if !strings.Contains(one, "A = sim0, B = sim0") || !strings.Contains(one, "ibv_open_device(B = sim0)") {
		t.Errorf("--devices 1: B should be sim0:\n%s", one)
	}
}

func TestNotebookReplay(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "nb.md")
	script := "open_device A\nalloc_pd ctx0\n! alloc_pd ctx7\nsave " + nb + "\n"
	status, first, errs := runVsh(t, script)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	status, replay, errs := runVsh(t, "", "-f", nb)
	if status != 0 {
		t.Fatalf("replay: status %d: %s\n%s", status, errs, replay)
	}
	if !strings.HasPrefix(first, replay) {
		t.Errorf("replay:\n%s\nis not the start of the original:\n%s", replay, first)
	}
}

func TestQuitEndsScript(t *testing.T) {
	status, out, _ := runVsh(t, "open_device A\nquit\nalloc_pd ctx0\n")
	if status != 0 || strings.Contains(out, "alloc_pd") {
		t.Errorf("status %d, stdout:\n%s", status, out)
	}
}

func TestThemeFlag(t *testing.T) {
	if status, _, errs := runVsh(t, "", "--theme", "blue"); status != 2 || !strings.Contains(errs, `--theme "blue": auto, dark or light`) {
		t.Errorf("--theme blue = %d, %q", status, errs)
	}
	// Off a terminal output is plain whatever the theme.
	for _, th := range []string{"auto", "dark", "light"} {
		if status, out, _ := runVsh(t, "devices\n", "--theme", th); status != 0 || strings.Contains(out, "\x1b[") {
			t.Errorf("--theme %s off a terminal = %d:\n%q", th, status, out)
		}
	}
}

// TestWidthFlag: --width fits a script's output, which is otherwise not
// wrapped off a terminal.
func TestWidthFlag(t *testing.T) {
	script := "open_device A\nalloc_pd ctx0\ncreate_cq ctx0 cqe=16\n"
	widest := func(out string) int {
		w := 0
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, "vsh> ") { // the commands, echoed
				w = max(w, len([]rune(l)))
			}
		}
		return w
	}
	for _, tt := range []struct {
		argv []string
		want int // the widest line of output
	}{
		{nil, 82},
		{[]string{"--width", "1000"}, 82},
		{[]string{"--width", "80"}, 66},
		{[]string{"--width", "20"}, 20},
	} {
		status, out, errs := runVsh(t, script, tt.argv...)
		if status != 0 || widest(out) != tt.want {
			t.Errorf("vsh %v = %d, widest line %d, want %d:\n%s%s", tt.argv, status, widest(out), tt.want, out, errs)
		}
	}
}

// TestSimXRC: vsh --sim-xrc starts the simulator with XRC, as mlx5 has it;
// without it the XRC verbs fail with EOPNOTSUPP, as on kernel rxe.
func TestSimXRC(t *testing.T) {
	script := "open_device B\nopen_xrcd ctx0\nbackend\n"
	status, out, errs := runVsh(t, script, "--sim-xrc", "--plain")
	if status != 0 || !strings.Contains(out, "ibv_open_xrcd(ctx0, fd=-1, oflags=O_CREAT) → xrcd0") ||
		!strings.Contains(out, "on — beyond rxe: XRC as mlx5 implements it") || !strings.Contains(out, "seed 1, XRC on") {
		t.Errorf("vsh --sim-xrc = %d, stdout:\n%s\nstderr: %s", status, out, errs)
	}
	status, out, errs = runVsh(t, script, "--plain")
	if status != 1 || !strings.Contains(out, "open_xrcd: EOPNOTSUPP") {
		t.Errorf("vsh without --sim-xrc = %d, stdout:\n%s\nstderr: %s", status, out, errs)
	}
}
