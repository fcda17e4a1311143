package lab

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// guestModule is a kernel module the guest needs. Optional modules are
// loaded where the kernel has them.
type guestModule struct {
	Name     string
	Optional bool
	Why      string
}

// guestModules are the roots of the guest's module set, in load order; their
// dependencies are loaded before them.
var guestModules = []guestModule{
	{Name: "virtio_pci", Why: "the virtio PCI transport"},
	{Name: "virtio_console", Why: "virtio-serial ports and the hvc0 terminal"},
	{Name: "9pnet_virtio", Why: "virtio-9p: the shared filesystems"},
	{Name: "9p", Why: "the 9p filesystem"},
	// rxe asks the crypto API for "crc32" when a link is added; the guest
	// cannot autoload it (no modules tree for this kernel on the host), so
	// without it `rdma link add` fails with ENOENT.
	{Name: "crc32_generic", Why: "rdma_rxe's ICRC (crc32 shash, not a declared dependency)"},
	{Name: "dummy", Why: "the dummy netdev rxe0 is bound to"},
	{Name: "veth", Why: "the second wire's veth pair (rxe-lab run --peer)"},
	{Name: "rdma_rxe", Why: "soft-RoCE"},
	{Name: "ib_uverbs", Why: "/dev/infiniband/uverbs0 for libibverbs"},
	{Name: "rdma_ucm", Optional: true, Why: "librdmacm (rping, rdma_cm) in the guest"},
}

// moduleName normalizes a module or file name the way the kernel does:
// without directory and .ko suffix, '-' read as '_'.
func moduleName(s string) string {
	s = filepath.Base(s)
	for _, suf := range []string{".ko.xz", ".ko.zst", ".ko.gz", ".ko"} {
		if strings.HasSuffix(s, suf) {
			s = strings.TrimSuffix(s, suf)
			break
		}
	}
	return strings.ReplaceAll(s, "-", "_")
}

// kernelModules indexes the modules of an unpacked kernel tree
// (lib/modules/RELEASE): module name -> path of its .ko file, and the set of
// names built into the kernel (modules.builtin).
type kernelModules struct {
	Dir     string
	Files   map[string]string
	Builtin map[string]bool
}

func scanKernelModules(dir string) (*kernelModules, error) {
	km := &kernelModules{Dir: dir, Files: map[string]string{}, Builtin: map[string]bool{}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.Contains(d.Name(), ".ko") {
			km.Files[moduleName(d.Name())] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the kernel's modules in %s: %w", dir, err)
	}
	if len(km.Files) == 0 {
		return nil, fmt.Errorf("no kernel modules (*.ko) under %s: is this an unpacked linux-image package?", dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				km.Builtin[moduleName(l)] = true
			}
		}
	}
	return km, nil
}

// moduleDepends reads the "depends=" field of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	if !strings.HasSuffix(path, ".ko") {
		return nil, fmt.Errorf("%s is compressed; rxe-lab can only use uncompressed modules (Debian 12's kernels are)", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s has no .modinfo section", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("reading .modinfo of %s: %w", path, err)
	}
	return parseModinfoDepends(data), nil
}

// parseModinfoDepends extracts the dependencies from a .modinfo section:
// NUL-separated key=value strings, one of them "depends=a,b,c".
func parseModinfoDepends(modinfo []byte) []string {
	var deps []string
	for _, kv := range bytes.Split(modinfo, []byte{0}) {
		v, ok := bytes.CutPrefix(kv, []byte("depends="))
		if !ok {
			continue
		}
		for _, d := range strings.Split(string(v), ",") {
			if d = strings.TrimSpace(d); d != "" {
				deps = append(deps, moduleName(d))
			}
		}
	}
	return deps
}

// loadOrder returns the modules to insmod, dependencies first, for the given
// roots: built-in modules are left out, a missing optional root is skipped,
// and a missing required module is an error. depends reports a module's
// direct dependencies.
func loadOrder(roots []guestModule, have map[string]bool, builtin map[string]bool,
	depends func(name string) ([]string, error)) ([]string, error) {
	var order []string
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		switch {
		case state[name] == 2 || builtin[name]:
			return nil
		case state[name] == 1:
			return fmt.Errorf("module dependency cycle: %s", strings.Join(append(chain, name), " -> "))
		case !have[name]:
			return fmt.Errorf("module %s (needed by %s) is not in the kernel package",
				name, strings.Join(chain, " -> "))
		}
		state[name] = 1
		deps, err := depends(name)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, append(chain, name)); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, name)
		return nil
	}
	for _, r := range roots {
		if builtin[r.Name] {
			continue
		}
		if !have[r.Name] {
			if r.Optional {
				continue
			}
			return nil, fmt.Errorf("module %s (%s) is neither built in nor in the kernel package; "+
				"use a kernel flavour that has it (Debian's generic linux-image-amd64 does; -cloud-amd64 does not)",
				r.Name, r.Why)
		}
		if err := visit(r.Name, []string{"rxe-lab"}); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// Resolve returns the load order of the guest's modules in this tree.
func (km *kernelModules) Resolve(roots []guestModule) ([]string, error) {
	have := make(map[string]bool, len(km.Files))
	for n := range km.Files {
		have[n] = true
	}
	return loadOrder(roots, have, km.Builtin, func(n string) ([]string, error) {
		return moduleDepends(km.Files[n])
	})
}

// rootNames returns the sorted names of roots, for stamps and messages.
func rootNames(roots []guestModule) []string {
	var s []string
	for _, r := range roots {
		s = append(s, r.Name)
	}
	sort.Strings(s)
	return s
}
