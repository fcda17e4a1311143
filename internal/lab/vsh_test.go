package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestFindVsh(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A vsh without the ibverbs backend: this test binary does not link libibverbs.
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	data, _ := os.ReadFile(self)
	os.WriteFile(filepath.Join(dir, "bin", "vsh"), data, 0o755)
	t.Setenv("PATH", t.TempDir()) // no vsh on PATH
	v, err := FindVsh(dir, "")
	if err != nil || v.Path != filepath.Join(dir, "bin", "vsh") || v.Ibverbs {
		t.Errorf("FindVsh = %+v, %v; want bin/vsh without ibverbs", v, err)
	}
	argv, why, err := defaultShellCommand(dir, "")
	if err != nil || filepath.Base(argv[0]) == "vsh" || why == "" {
		t.Errorf("without the ibverbs backend, shell starts %q (%s), want a shell", argv, why)
	}

	// Any binary that links libibverbs counts as having the backend.
	ibv, err := exec.LookPath("ibv_devinfo")
	if err != nil {
		t.Logf("ibv_devinfo not installed: skipping the positive case")
		return
	}
	v, err = FindVsh(dir, ibv)
	if err != nil || !v.Ibverbs {
		t.Errorf("FindVsh(%s) = %+v, %v; want the ibverbs backend found", ibv, v, err)
	}
	argv, _, _ = defaultShellCommand(dir, ibv)
	if len(argv) != 3 || argv[1] != "--backend" || argv[2] != "ibverbs" {
		t.Errorf("with the ibverbs backend, shell starts %q, want vsh --backend ibverbs", argv)
	}
}
