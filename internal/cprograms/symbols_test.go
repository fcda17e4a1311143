package cprograms

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// symOurLib is the library make build (make lib) builds.
func symOurLib(t *testing.T) string {
	return filepath.Join(repoRoot(t), "bin", "lib", "libibverbs.so.1")
}

// symSystemDefault is where Debian puts the system's libibverbs.so.1.
const symSystemDefault = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"

// TestSymbolsMatchSystem: bin/lib/libibverbs.so.1 defines exactly the
// symbols the system's libibverbs.so.1 defines at a default version, each at
// the same version, and nothing else (cgo's and Go's exports stay local).
func TestSymbolsMatchSystem(t *testing.T) {
	programCase(t)
	ours, sys := symOpenBoth(t)
	want, got := symDefault(t, sys), symDefault(t, ours)
	var missing, extra []string
	for s := range want {
		if !got[s] {
			missing = append(missing, s)
		}
	}
	for s := range got {
		if !want[s] {
			extra = append(extra, s)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("%s against %s: %d missing, %d extra (fix verbs/libibverbs/libibverbs.map or stubs.c)\nmissing:\n\t%s\nextra:\n\t%s",
			symOurLib(t), sys.path, len(missing), len(extra),
			strings.Join(missing, "\n\t"), strings.Join(extra, "\n\t"))
	}
	if len(want) == 0 {
		t.Errorf("%s: no versioned symbols read", sys.path)
	}
}

// TestSymbolVersionsMatchSystem: the same version definitions, each
// depending on the same ones (the IBVERBS_1.x chain; IBVERBS_PRIVATE_34 alone).
func TestSymbolVersionsMatchSystem(t *testing.T) {
	programCase(t)
	ours, sys := symOpenBoth(t)
	want, got := symVersions(t, sys), symVersions(t, ours)
	if !slices.Equal(want, got) {
		t.Errorf("version definitions differ\n%s:\n\t%s\n%s:\n\t%s",
			sys.path, strings.Join(want, "\n\t"), symOurLib(t), strings.Join(got, "\n\t"))
	}
}

// TestSymbolsSoname: the library names itself libibverbs.so.1, the name programs
// were linked against.
func TestSymbolsSoname(t *testing.T) {
	programCase(t)
	ours := symOpen(t, symOurLib(t), "not built (make build or make lib builds it where cgo and libibverbs' headers exist)")
	names, err := ours.DynString(elf.DT_SONAME)
	if err != nil {
		t.Fatalf("%s: DT_SONAME: %v", symOurLib(t), err)
	}
	if !slices.Equal(names, []string{"libibverbs.so.1"}) {
		t.Errorf("%s: SONAME %q, want [libibverbs.so.1]", symOurLib(t), names)
	}
}

type symLib struct {
	*elf.File
	path string
}

// symOpenBoth opens our library and the system's of the same machine.
func symOpenBoth(t *testing.T) (ours, sys symLib) {
	t.Helper()
	ours = symOpen(t, symOurLib(t), "not built (make build or make lib builds it where cgo and libibverbs' headers exist)")
	path := symSystemPath(ours.Machine)
	if path == "" {
		toolcheck.Missing(t, fmt.Sprintf("the system's libibverbs.so.1 (%v) not found at %s nor by ldconfig -p (install: apt-get install libibverbs1)",
			ours.Machine, symSystemDefault))
	}
	return ours, symOpen(t, path, "unreadable")
}

// symOpen opens the ELF file at path, skipping (or failing) where it is missing.
func symOpen(t *testing.T, path, why string) symLib {
	t.Helper()
	f, err := elf.Open(path)
	if os.IsNotExist(err) {
		toolcheck.Missing(t, path+" "+why)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { f.Close() })
	return symLib{f, path}
}

// symSystemPath finds the system's libibverbs.so.1 for machine: Debian's
// path, else the first ldconfig -p lists; "" if none.
func symSystemPath(machine elf.Machine) string {
	paths := []string{symSystemDefault}
	if out, err := exec.Command("ldconfig", "-p").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			name, path, ok := strings.Cut(strings.TrimSpace(line), " => ")
			if ok && strings.HasPrefix(name, "libibverbs.so.1 ") {
				paths = append(paths, path)
			}
		}
	}
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		ok := f.Machine == machine
		f.Close()
		if ok {
			return p
		}
	}
	return ""
}

// symDefault is the set of "VERSION name" of the symbols lib defines at
// their default version (objdump -T's entries without parentheses), less
// the markers naming the versions themselves. A defined symbol with no
// version shows as "(base) name".
func symDefault(t *testing.T, lib symLib) map[string]bool {
	t.Helper()
	syms, err := lib.DynamicSymbols()
	if err != nil {
		t.Fatalf("%s: dynamic symbols: %v", lib.path, err)
	}
	set := map[string]bool{}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || s.Library != "" {
			continue
		}
		if s.HasVersion && (s.VersionIndex.Index() == 0 || s.VersionIndex.IsHidden()) {
			continue
		}
		if s.Section == elf.SHN_ABS && s.Name == s.Version {
			continue
		}
		v := s.Version
		if !s.HasVersion || v == "" || s.VersionIndex.Index() == 1 {
			v = "(base)"
		}
		set[v+" "+s.Name] = true
	}
	return set
}

// symVersions lists lib's version definitions as "NAME <- DEPS", in order,
// without the base one (the file's own name).
func symVersions(t *testing.T, lib symLib) []string {
	t.Helper()
	vs, err := lib.DynamicVersions()
	if err != nil {
		t.Fatalf("%s: version definitions: %v", lib.path, err)
	}
	var out []string
	for _, v := range vs {
		if v.Flags&elf.VER_FLG_BASE != 0 {
			continue
		}
		out = append(out, v.Name+" <- "+strings.Join(v.Deps, ","))
	}
	return out
}
