package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Environment variables read by rxe-lab.
const (
	EnvCache  = "VSH_LAB_CACHE"  // the cache directory
	EnvAccel  = "VSH_LAB_ACCEL"  // default for --accel
	EnvKernel = "VSH_LAB_KERNEL" // default for setup --kernel-package
)

// DefaultCacheDir is $VSH_LAB_CACHE, else $XDG_CACHE_HOME/vsh-lab, else
// ~/.cache/vsh-lab.
func DefaultCacheDir() (string, error) {
	if v := os.Getenv(EnvCache); v != "" {
		return filepath.Abs(v)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (%v): set %s or use --cache DIR", err, EnvCache)
	}
	return filepath.Join(base, "vsh-lab"), nil
}

// HostPackages are the Debian packages the lab needs on the host. The guest
// runs the host's own binaries, so rdma-core's tools and libraries are
// installed here, not in an image. gcc and libc6-dev are for cgo builds of
// programs that use libibverbs (vsh's real backend), which run in the guest;
// strace counts the system calls of a ping-pong on rxe0 (docs/lab.md).
var HostPackages = []string{
	"qemu-system-x86", "busybox-static", "iproute2",
	"rdma-core", "ibverbs-utils", "ibverbs-providers", "libibverbs-dev", "rdmacm-utils",
	"gcc", "libc6-dev", "strace",
}

// DefaultKernelMeta is the package whose dependency names the guest kernel.
// The generic flavour has rdma_rxe and 9p; -cloud-amd64 has neither.
const DefaultKernelMeta = "linux-image-amd64"

// State is what setup leaves in the cache directory (lab.json). Paths are
// relative to the cache directory.
type State struct {
	Format        int      `json:"format"`
	KernelPackage string   `json:"kernel_package"`
	KernelDeb     string   `json:"kernel_deb"`
	KernelRelease string   `json:"kernel_release"`
	Kernel        string   `json:"kernel"`
	ModuleDir     string   `json:"module_dir"`
	ModuleRoots   []string `json:"module_roots"`
	Modules       []string `json:"modules"` // load order
	Busybox       string   `json:"busybox"`
	Initramfs     string   `json:"initramfs"`
	InitramfsHash string   `json:"initramfs_hash"`
}

const stateFormat = 1

func statePath(cache string) string { return filepath.Join(cache, "lab.json") }

func loadState(cache string) (*State, error) {
	b, err := os.ReadFile(statePath(cache))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): run rxe-lab setup --force", statePath(cache), err)
	}
	if s.Format != stateFormat {
		return nil, fmt.Errorf("%s has format %d, this rxe-lab writes %d: run rxe-lab setup", statePath(cache), s.Format, stateFormat)
	}
	return &s, nil
}

func saveState(cache string, s *State) error {
	s.Format = stateFormat
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(statePath(cache), append(b, '\n'), 0o644)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), perm)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// SetupOptions are the options of Setup.
type SetupOptions struct {
	CacheDir      string
	KernelPackage string // "" = what DefaultKernelMeta depends on (or $VSH_LAB_KERNEL)
	Force         bool   // download, unpack and build again
	NoInstall     bool   // do not run apt-get install; fail naming the missing packages
	Log           io.Writer
	Stdout        io.Writer // apt-get's output
	Stderr        io.Writer
}

// Setup makes the lab ready: host packages, the guest kernel and its modules
// in the cache, the initramfs. Each step is skipped when already done.
func Setup(ctx context.Context, o SetupOptions) (*State, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return nil, fmt.Errorf("rxe-lab setup supports linux/amd64 hosts (Debian 12); this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Stdout == nil {
		o.Stdout = o.Log
	}
	if o.Stderr == nil {
		o.Stderr = o.Log
	}
	if o.KernelPackage == "" {
		o.KernelPackage = os.Getenv(EnvKernel)
	}
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	t0 := time.Now()
	ap := &apt{ctx: ctx, log: o.Log, stdout: o.Stdout, stderr: o.Stderr}
	if err := ap.ensureInstalled(HostPackages, o.NoInstall); err != nil {
		return nil, err
	}
	st, _ := loadState(o.CacheDir)
	if st == nil || o.Force {
		st = &State{}
	}
	if err := ensureKernel(ctx, o.CacheDir, st, o.KernelPackage, o.Force, ap, o.Log); err != nil {
		return nil, err
	}
	if err := ensureInitramfs(o.CacheDir, st, o.Force, o.Log); err != nil {
		return nil, err
	}
	if err := saveState(o.CacheDir, st); err != nil {
		return nil, fmt.Errorf("saving %s: %w", statePath(o.CacheDir), err)
	}
	fmt.Fprintf(o.Log, "rxe-lab: setup done in %.1f s: kernel %s (%s), %d modules, cache %s\n",
		time.Since(t0).Seconds(), st.KernelRelease, st.KernelPackage, len(st.Modules), o.CacheDir)
	return st, nil
}

// apt runs dpkg-query, apt-cache and apt-get.
type apt struct {
	ctx            context.Context
	log            io.Writer
	stdout, stderr io.Writer
	updated        bool
}

func (a *apt) need(tool string) error {
	if _, err := exec.LookPath(tool); err != nil {
		return fmt.Errorf("%s not found: rxe-lab setup needs a Debian-based host (Debian 12 is tested) "+
			"with dpkg and apt; elsewhere install QEMU, static busybox, iproute2 and rdma-core yourself "+
			"and unpack a kernel with rdma_rxe (see docs/lab.md)", tool)
	}
	return nil
}

// root returns the command prefix that runs a command as root.
func (a *apt) root() ([]string, error) {
	if os.Geteuid() == 0 {
		return nil, nil
	}
	if _, err := exec.LookPath("sudo"); err == nil {
		return []string{"sudo"}, nil
	}
	return nil, errors.New("installing packages needs root: run rxe-lab setup as root (sudo is not installed)")
}

func (a *apt) run(dir string, asRoot bool, name string, args ...string) error {
	argv := append([]string{name}, args...)
	if asRoot {
		pre, err := a.root()
		if err != nil {
			return err
		}
		argv = append(pre, argv...)
	}
	fmt.Fprintf(a.log, "rxe-lab: %s\n", strings.Join(argv, " "))
	cmd := exec.CommandContext(a.ctx, argv[0], argv[1:]...)
	// Interrupt apt-get and dpkg as a terminal's Ctrl-C would; killing them
	// could leave dpkg's database half-written.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = a.stdout, a.stderr
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

func (a *apt) update() error {
	if a.updated {
		return nil
	}
	if err := a.run("", true, "apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=120"); err != nil {
		return fmt.Errorf("%w (check the machine's apt sources and network)", err)
	}
	a.updated = true
	return nil
}

// missing returns the packages of pkgs that dpkg does not have installed.
func (a *apt) missing(pkgs []string) ([]string, error) {
	if err := a.need("dpkg-query"); err != nil {
		return nil, err
	}
	out, _ := exec.CommandContext(a.ctx, "dpkg-query", append([]string{"-W", "-f=${Package}\t${db:Status-Abbrev}\n"}, pkgs...)...).Output()
	return missingPackages(pkgs, string(out)), nil
}

// missingPackages reads dpkg-query -W -f='${Package}\t${db:Status-Abbrev}\n'
// output: a package is installed when its status starts with "ii".
func missingPackages(pkgs []string, dpkgQuery string) []string {
	ok := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(dpkgQuery))
	for sc.Scan() {
		name, status, _ := strings.Cut(sc.Text(), "\t")
		name, _, _ = strings.Cut(name, ":") // name:arch
		if strings.HasPrefix(status, "ii") {
			ok[name] = true
		}
	}
	var miss []string
	for _, p := range pkgs {
		if !ok[p] {
			miss = append(miss, p)
		}
	}
	return miss
}

func (a *apt) ensureInstalled(pkgs []string, noInstall bool) error {
	miss, err := a.missing(pkgs)
	if err != nil {
		return err
	}
	if len(miss) == 0 {
		fmt.Fprintf(a.log, "rxe-lab: host packages present (%s)\n", strings.Join(pkgs, " "))
		return nil
	}
	if noInstall {
		return fmt.Errorf("host packages missing: %s (install them: apt-get install %s)",
			strings.Join(miss, " "), strings.Join(miss, " "))
	}
	if err := a.need("apt-get"); err != nil {
		return err
	}
	if err := a.update(); err != nil {
		return err
	}
	args := append([]string{"install", "-y", "-q", "--no-install-recommends",
		"-o", "DPkg::Lock::Timeout=120", "-o", "Dpkg::Use-Pty=0"}, miss...)
	if err := a.run("", true, "apt-get", args...); err != nil {
		return err
	}
	if still, _ := a.missing(pkgs); len(still) > 0 {
		return fmt.Errorf("apt-get install finished but these packages are still not installed: %s", strings.Join(still, " "))
	}
	return nil
}

// kernelPackage finds the versioned kernel package DefaultKernelMeta
// depends on.
func (a *apt) kernelPackage() (string, error) {
	if err := a.need("apt-cache"); err != nil {
		return "", err
	}
	for attempt := 0; attempt < 2; attempt++ {
		out, _ := exec.CommandContext(a.ctx, "apt-cache", "depends", DefaultKernelMeta).Output()
		if p := parseKernelDepends(string(out)); p != "" {
			return p, nil
		}
		if attempt == 0 {
			if err := a.update(); err != nil {
				return "", err
			}
		}
	}
	return "", fmt.Errorf("apt-cache depends %s names no linux-image-* package: "+
		"is this Debian with its main archive in the apt sources? (or set %s to a kernel package)", DefaultKernelMeta, EnvKernel)
}

// parseKernelDepends reads apt-cache depends output for the first
// "Depends: linux-image-<version>" line.
func parseKernelDepends(out string) string {
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "|")
		if p, ok := strings.CutPrefix(l, "Depends: "); ok {
			p = strings.Trim(strings.TrimSpace(p), "<>")
			if strings.HasPrefix(p, "linux-image-") && len(p) > len("linux-image-") &&
				p[len("linux-image-")] >= '0' && p[len("linux-image-")] <= '9' {
				return p
			}
		}
	}
	return ""
}

// ensureKernel leaves the guest kernel and its modules in CACHE/kernel/RELEASE:
// the package is downloaded (apt-get download) and unpacked (dpkg-deb -x)
// into a scratch directory, never installed. Only the kernel image and the
// modules the guest loads are kept, with the .deb for offline rebuilds.
func ensureKernel(ctx context.Context, cache string, st *State, pkg string, force bool, ap *apt, log io.Writer) error {
	roots := rootNames(guestModules)
	if !force && st.Kernel != "" && slices.Equal(st.ModuleRoots, roots) && (pkg == "" || pkg == st.KernelPackage) &&
		fileExists(filepath.Join(cache, st.Kernel)) && modulesPresent(filepath.Join(cache, st.ModuleDir), st.Modules) {
		fmt.Fprintf(log, "rxe-lab: guest kernel %s cached (%s)\n", st.KernelRelease, st.KernelPackage)
		return nil
	}
	kdir := filepath.Join(cache, "kernel")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return err
	}
	deb, pkg, err := kernelDeb(cache, kdir, st, pkg, force, ap)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return fmt.Errorf("dpkg-deb not found: it unpacks the guest kernel (install dpkg)")
	}
	scratch, err := os.MkdirTemp(kdir, ".unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	fmt.Fprintf(log, "rxe-lab: unpacking %s (not installing it)\n", filepath.Base(deb))
	cmd := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, scratch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x %s: %v: %s", deb, err, bytes.TrimSpace(out))
	}
	rels, _ := os.ReadDir(filepath.Join(scratch, "lib", "modules"))
	if len(rels) != 1 {
		return fmt.Errorf("%s has %d directories in lib/modules, want 1: is it a linux-image package?", deb, len(rels))
	}
	rel := rels[0].Name()
	vmlinuz := filepath.Join(scratch, "boot", "vmlinuz-"+rel)
	if !fileExists(vmlinuz) {
		return fmt.Errorf("%s has no boot/vmlinuz-%s", deb, rel)
	}
	km, err := scanKernelModules(filepath.Join(scratch, "lib", "modules", rel))
	if err != nil {
		return err
	}
	order, err := km.Resolve(guestModules)
	if err != nil {
		return fmt.Errorf("kernel %s: %w", rel, err)
	}
	// Copy into a fresh directory, then swap it in.
	final := filepath.Join(kdir, rel)
	tmp, err := os.MkdirTemp(kdir, ".kernel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyFile(vmlinuz, filepath.Join(tmp, "vmlinuz"), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(tmp, "modules"), 0o755); err != nil {
		return err
	}
	for _, m := range order {
		if err := copyFile(km.Files[m], filepath.Join(tmp, "modules", m+".ko"), 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	os.RemoveAll(final)
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	st.KernelPackage, st.KernelRelease = pkg, rel
	st.KernelDeb = mustRel(cache, deb)
	st.Kernel = mustRel(cache, filepath.Join(final, "vmlinuz"))
	st.ModuleDir = mustRel(cache, filepath.Join(final, "modules"))
	st.ModuleRoots, st.Modules = roots, order
	st.InitramfsHash = "" // rebuild
	fmt.Fprintf(log, "rxe-lab: guest kernel %s: %d modules: %s\n", rel, len(order), strings.Join(order, " "))
	return nil
}

// kernelDeb returns the guest kernel's .deb and its package: the cached one
// unless force or another pkg is asked for, else one apt-get downloads into
// kdir (pkg "" is the host's kernel package). Without ap it only looks in
// the cache.
func kernelDeb(cache, kdir string, st *State, pkg string, force bool, ap *apt) (string, string, error) {
	if !force && st.KernelDeb != "" && (pkg == "" || pkg == st.KernelPackage) && fileExists(filepath.Join(cache, st.KernelDeb)) {
		return filepath.Join(cache, st.KernelDeb), st.KernelPackage, nil
	}
	if ap == nil {
		return "", "", errNotSetUp(cache, "no guest kernel in the cache")
	}
	if pkg == "" {
		var err error
		if pkg, err = ap.kernelPackage(); err != nil {
			return "", "", err
		}
	}
	if err := ap.need("dpkg-deb"); err != nil {
		return "", "", err
	}
	old, _ := filepath.Glob(filepath.Join(kdir, pkg+"_*.deb"))
	if len(old) == 1 && !force {
		return old[0], pkg, nil
	}
	deb, err := downloadKernelDeb(kdir, pkg, old, ap)
	return deb, pkg, err
}

// downloadKernelDeb downloads pkg's .deb with apt-get (updating the lists
// once if that fails) into kdir, replacing the .deb files in old, and
// returns its path.
func downloadKernelDeb(kdir, pkg string, old []string, ap *apt) (string, error) {
	dl, err := os.MkdirTemp(kdir, ".download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dl)
	args := []string{"download", "-q"}
	if os.Geteuid() == 0 {
		// apt's sandbox user _apt cannot write into a root-owned cache.
		args = append(args, "-o", "APT::Sandbox::User=root")
	}
	args = append(args, pkg)
	if err := ap.run(dl, false, "apt-get", args...); err != nil {
		if err2 := ap.update(); err2 == nil {
			err = ap.run(dl, false, "apt-get", args...)
		}
		if err != nil {
			return "", fmt.Errorf("downloading the guest kernel: %w", err)
		}
	}
	got, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(got) != 1 {
		return "", fmt.Errorf("apt-get download %s left %d .deb files in %s, want 1", pkg, len(got), dl)
	}
	for _, o := range old {
		os.Remove(o)
	}
	deb := filepath.Join(kdir, filepath.Base(got[0]))
	if err := os.Rename(got[0], deb); err != nil {
		return "", err
	}
	return deb, nil
}

func errNotSetUp(cache, why string) error {
	return fmt.Errorf("the lab is not set up in %s (%s): run `rxe-lab setup` (needs root for apt-get), or `make lab`", cache, why)
}

func mustRel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func modulesPresent(dir string, mods []string) bool {
	if len(mods) == 0 {
		return false
	}
	for _, m := range mods {
		if !fileExists(filepath.Join(dir, m+".ko")) {
			return false
		}
	}
	return true
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return out.Close()
}
