package lab

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// VshBinary is what FindVsh found.
type VshBinary struct {
	Path     string // "" when there is no vsh
	Ibverbs  bool   // it has the real backend (it links libibverbs)
	Searched string // where it looked, for messages
}

// FindVsh looks for the vsh binary that rxe-lab shell starts: explicit (if
// not empty), else DIR/bin/vsh (what make build leaves), else vsh on PATH.
// vsh has its real backend when it was built with cgo and the ibverbs tag,
// and then it links libibverbs: that is the test, so that rxe-lab does not
// depend on vsh's flags.
func FindVsh(dir, explicit string) (VshBinary, error) {
	var cands []string
	if explicit != "" {
		cands = []string{explicit}
	} else {
		cands = append(cands, filepath.Join(dir, "bin", "vsh"))
		if p, err := exec.LookPath("vsh"); err == nil {
			cands = append(cands, p)
		}
	}
	v := VshBinary{Searched: strings.Join(cands, ", ")}
	if explicit == "" {
		v.Searched = filepath.Join(dir, "bin", "vsh") + " and PATH"
	}
	for _, c := range cands {
		if !fileExists(c) {
			continue
		}
		abs, err := filepath.Abs(c)
		if err != nil {
			return v, err
		}
		v.Path = abs
		v.Ibverbs, err = linksLibrary(abs, "libibverbs.so")
		if err != nil {
			return v, fmt.Errorf("checking %s for the ibverbs backend: %w", abs, err)
		}
		if v.Ibverbs {
			return v, nil
		}
	}
	if explicit != "" && v.Path == "" {
		return v, fmt.Errorf("--vsh %s: no such file", explicit)
	}
	return v, nil
}

// linksLibrary reports whether the ELF executable p needs a shared library
// whose name starts with lib.
func linksLibrary(p, lib string) (bool, error) {
	f, err := elf.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return false, nil // static: no libibverbs
	}
	for _, l := range libs {
		if strings.HasPrefix(l, lib) {
			return true, nil
		}
	}
	return false, nil
}
