package lab

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestMissingPackages(t *testing.T) {
	out := "qemu-system-x86\tii \nbusybox-static\tun \nrdma-core\tiU \nlibibverbs-dev:amd64\tii \n"
	got := missingPackages([]string{"qemu-system-x86", "busybox-static", "rdma-core", "libibverbs-dev", "gcc"}, out)
	want := []string{"busybox-static", "rdma-core", "gcc"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("missingPackages = %q, want %q", got, want)
	}
	if got := missingPackages([]string{"a"}, "a\tii \n"); got != nil {
		t.Errorf("an installed package reported missing: %q", got)
	}
}

func TestParseKernelDepends(t *testing.T) {
	tests := []struct{ out, want string }{
		{"linux-image-amd64\n  Depends: linux-image-6.1.0-56-amd64\n", "linux-image-6.1.0-56-amd64"},
		{"linux-image-amd64\n  Depends: initramfs-tools\n |Depends: linux-image-6.12.9-amd64\n  Depends: linux-image-6.12.10-amd64\n", "linux-image-6.12.9-amd64"},
		{"linux-image-amd64\n  Depends: <linux-image-6.1.0-57-amd64>\n", "linux-image-6.1.0-57-amd64"},
		{"linux-image-amd64\n  Depends: linux-image-amd64-signed-template\n", ""},
		{"", ""},
		{"E: No packages found\n", ""},
	}
	for _, tt := range tests {
		if got := parseKernelDepends(tt.out); got != tt.want {
			t.Errorf("parseKernelDepends(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	st := &State{KernelPackage: "linux-image-6.1.0-56-amd64", KernelRelease: "6.1.0-56-amd64",
		Kernel: "kernel/6.1.0-56-amd64/vmlinuz", Modules: []string{"a", "b"}, Initramfs: "initramfs-x.img"}
	if err := saveState(dir, st); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(dir)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("loadState = %+v, %v; want %+v", got, err, st)
	}
	os.WriteFile(statePath(dir), []byte(`{"format": 99}`), 0o644)
	if _, err := loadState(dir); err == nil || !strings.Contains(err.Error(), "rxe-lab setup") {
		t.Errorf("a state of another format: %v, want an error that says to run setup", err)
	}
	os.WriteFile(statePath(dir), []byte(`{`), 0o644)
	if _, err := loadState(dir); err == nil || !strings.Contains(err.Error(), "setup --force") {
		t.Errorf("a damaged state: %v, want an error that says to run setup --force", err)
	}
}

func TestInitramfsContent(t *testing.T) {
	dir := t.TempDir()
	mods := []string{"virtio_ring", "9p", "rdma_rxe"}
	for _, m := range mods {
		os.WriteFile(filepath.Join(dir, m+".ko"), []byte("module "+m), 0o644)
	}
	in := &initramfsInput{Init: initScript(), Busybox: []byte("BUSYBOX"), Modules: mods, ModuleDir: dir}
	var buf bytes.Buffer
	if err := in.write(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]cpioEntry{}
	for _, e := range readCpio(t, raw) {
		files[e.name] = e
	}
	check := func(name string, mode uint32, data string) {
		t.Helper()
		e, ok := files[name]
		if !ok {
			t.Errorf("initramfs lacks %s", name)
			return
		}
		if e.mode != mode || data != "" && e.data != data {
			t.Errorf("%s: mode %o data %.40q, want mode %o data %.40q", name, e.mode, e.data, mode, data)
		}
	}
	check("init", 0o100755, initScript())
	check("bin/busybox", 0o100755, "BUSYBOX")
	check("bin/sh", 0o120777, "busybox")
	check("dev/console", 0o020600, "")
	check("modules/9p.ko", 0o100644, "module 9p")
	check("modules/load.list", 0o100644, "virtio_ring\n9p\nrdma_rxe\n")
	for _, d := range []string{"proc", "sys", "dev", "newroot", "vshrun"} {
		check(d, 0o040755, "")
	}
	if c := files["dev/console"]; c.rmajor != 5 || c.rmin != 1 {
		t.Errorf("dev/console is %d,%d, want 5,1", c.rmajor, c.rmin)
	}

	h1, err := in.hash()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "9p.ko"), []byte("module 9p, rebuilt"), 0o644)
	h2, _ := in.hash()
	in.Init += "# changed\n"
	h3, _ := in.hash()
	if h1 == h2 || h2 == h3 {
		t.Errorf("the initramfs hash must change with a module and with /init: %s %s %s", h1, h2, h3)
	}
	os.Remove(filepath.Join(dir, "9p.ko"))
	if _, err := in.hash(); err == nil {
		t.Errorf("hash with a module missing: no error")
	}
}

func TestInitScript(t *testing.T) {
	s := initScript()
	for _, want := range []string{
		"#!/bin/busybox sh",
		"mount -t devtmpfs devtmpfs /dev",
		`insmod "/modules/$m.ko"`,
		"exec 3<>\"$ctl\"",
		`echo "up $(cut -d' ' -f1 /proc/uptime)" >&3`,
		"mount -t 9p -o trans=virtio,version=9p2000.L,ro vshrun /vshrun",
		". /vshrun/stage2.sh",
		"poweroff -f",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("/init lacks %q", want)
		}
	}
	if i, j := strings.Index(s, "exec 3<>"), strings.Index(s, `echo "up`); i < 0 || j < i {
		t.Errorf("/init says up before it opens the control port")
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv(EnvCache, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := DefaultCacheDir(); err != nil || d != "/xdg/vsh-lab" {
		t.Errorf("with XDG_CACHE_HOME: %q, %v", d, err)
	}
	t.Setenv(EnvCache, "/explicit")
	if d, err := DefaultCacheDir(); err != nil || d != "/explicit" {
		t.Errorf("with %s: %q, %v", EnvCache, d, err)
	}
}

// TestKernelCacheFollowsModuleRoots: a cache made for another module list
// (one from before veth joined it, say) is not reused as it is; the kernel's
// modules are taken again from the cached .deb, and that resets the
// initramfs hash, so that the initramfs is rebuilt with the new modules.
func TestKernelCacheFollowsModuleRoots(t *testing.T) {
	cache := t.TempDir()
	mods := filepath.Join(cache, "kernel", "6.1.0-56-amd64", "modules")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cache, "kernel", "6.1.0-56-amd64", "vmlinuz"), []byte("kernel"), 0o644)
	os.WriteFile(filepath.Join(mods, "dummy.ko"), []byte("module"), 0o644)
	var before []string
	for _, r := range rootNames(guestModules) {
		if r != "veth" {
			before = append(before, r)
		}
	}
	tests := []struct {
		name   string
		roots  []string
		cached bool
	}{
		{"this rxe-lab's module list", rootNames(guestModules), true},
		{"a module list without veth", before, false},
	}
	for _, tt := range tests {
		st := &State{KernelPackage: "linux-image-6.1.0-56-amd64", KernelRelease: "6.1.0-56-amd64",
			Kernel: "kernel/6.1.0-56-amd64/vmlinuz", ModuleDir: "kernel/6.1.0-56-amd64/modules",
			ModuleRoots: tt.roots, Modules: []string{"dummy"}, InitramfsHash: "abc"}
		var log bytes.Buffer
		// Without apt (as Open calls it) and without a .deb in this cache,
		// anything but the cached kernel is an error.
		err := ensureKernel(t.Context(), cache, st, "", false, nil, &log)
		if tt.cached && (err != nil || !strings.Contains(log.String(), "cached")) {
			t.Errorf("%s: %v, %q; want the cached kernel", tt.name, err, log.String())
		}
		if !tt.cached && (err == nil || !strings.Contains(err.Error(), "rxe-lab setup")) {
			t.Errorf("%s: %v, %q; want the kernel's modules taken again (here: not set up)", tt.name, err, log.String())
		}
	}
	if !slices.Contains(rootNames(guestModules), "veth") {
		t.Errorf("guestModules lacks veth")
	}
}
