package lab

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// busyboxCandidates are where busybox-static puts its binary.
var busyboxCandidates = []string{"/bin/busybox", "/usr/bin/busybox"}

// findBusybox returns a statically linked busybox: the initramfs has no
// libraries.
func findBusybox() (string, error) {
	var dynamic []string
	for _, p := range busyboxCandidates {
		if !fileExists(p) {
			continue
		}
		static, err := isStatic(p)
		if err != nil {
			return "", err
		}
		if static {
			return p, nil
		}
		dynamic = append(dynamic, p)
	}
	if len(dynamic) > 0 {
		return "", fmt.Errorf("%s is dynamically linked; the initramfs needs a static busybox: apt-get install busybox-static",
			strings.Join(dynamic, ", "))
	}
	return "", fmt.Errorf("busybox not found (%s): apt-get install busybox-static, or run rxe-lab setup",
		strings.Join(busyboxCandidates, ", "))
}

// isStatic reports whether an ELF executable has no program interpreter.
func isStatic(p string) (bool, error) {
	f, err := elf.Open(p)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// initramfsInput is everything that goes into the initramfs.
type initramfsInput struct {
	Init      string
	Busybox   []byte
	Modules   []string // load order
	ModuleDir string
}

func readInitramfsInput(cache string, st *State) (*initramfsInput, string, error) {
	bb, err := findBusybox()
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return nil, "", err
	}
	return &initramfsInput{Init: initScript(), Busybox: data, Modules: st.Modules,
		ModuleDir: filepath.Join(cache, st.ModuleDir)}, bb, nil
}

// hash identifies an initramfs by its content: init, busybox, modules.
func (in *initramfsInput) hash() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "init %d\n%s\nbusybox %d\n", initFormat, in.Init, len(in.Busybox))
	h.Write(in.Busybox)
	for _, m := range in.Modules {
		b, err := os.ReadFile(filepath.Join(in.ModuleDir, m+".ko"))
		if err != nil {
			return "", fmt.Errorf("module %s: %w", m, err)
		}
		fmt.Fprintf(h, "\nmodule %s %d\n", m, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// write writes the gzip-compressed cpio archive.
func (in *initramfsInput) write(w io.Writer) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	c := newCpioWriter(zw)
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot", "vshrun", "modules"} {
		if err := c.Dir(d, 0o755); err != nil {
			return err
		}
	}
	if err := c.CharDev("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := c.File("init", 0o755, []byte(in.Init)); err != nil {
		return err
	}
	if err := c.File("bin/busybox", 0o755, in.Busybox); err != nil {
		return err
	}
	if err := c.Symlink("bin/sh", "busybox"); err != nil {
		return err
	}
	var list bytes.Buffer
	for _, m := range in.Modules {
		b, err := os.ReadFile(filepath.Join(in.ModuleDir, m+".ko"))
		if err != nil {
			return fmt.Errorf("module %s: %w", m, err)
		}
		if err := c.File("modules/"+m+".ko", 0o644, b); err != nil {
			return err
		}
		list.WriteString(m + "\n")
	}
	if err := c.File("modules/load.list", 0o644, list.Bytes()); err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ensureInitramfs (re)builds CACHE/initramfs-HASH.img when its inputs
// changed: a new rxe-lab (init script), busybox or kernel.
func ensureInitramfs(cache string, st *State, force bool, log io.Writer) error {
	in, bb, err := readInitramfsInput(cache, st)
	if err != nil {
		return err
	}
	h, err := in.hash()
	if err != nil {
		return fmt.Errorf("%w: run rxe-lab setup --force", err)
	}
	if !force && h == st.InitramfsHash && fileExists(filepath.Join(cache, st.Initramfs)) {
		fmt.Fprintf(log, "rxe-lab: initramfs cached (%s)\n", st.Initramfs)
		return nil
	}
	var buf bytes.Buffer
	if err := in.write(&buf); err != nil {
		return fmt.Errorf("building the initramfs: %w", err)
	}
	name := "initramfs-" + h[:16] + ".img"
	if err := writeFileAtomic(filepath.Join(cache, name), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the initramfs: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(cache, "initramfs-*.img"))
	for _, o := range old {
		if filepath.Base(o) != name {
			os.Remove(o)
		}
	}
	st.Initramfs, st.InitramfsHash, st.Busybox = name, h, bb
	fmt.Fprintf(log, "rxe-lab: built %s (%d KiB: busybox, %d modules, /init)\n", name, buf.Len()/1024, len(in.Modules))
	return nil
}
