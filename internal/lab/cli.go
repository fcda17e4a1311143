package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const usage = `rxe-lab: kernel soft-RoCE (rdma_rxe) in a throw-away QEMU guest.

Usage:
  rxe-lab setup  [flags]               install what the lab needs and prepare the guest (idempotent)
  rxe-lab run    [flags] [--] CMD...   boot a guest with rxe0, run CMD in it, exit with CMD's status
  rxe-lab shell  [flags] [CMD...]      an interactive session on rxe0 (vsh --backend ibverbs
                                       when bin/vsh has that backend, else bash)
  rxe-lab status [flags]               what is cached and how a guest would boot
  rxe-lab help                         this text

The guest runs the host's own binaries: the host's root filesystem is shared
read-only, the working directory read-write at the same path (also under /tmp).
In the guest: rxe0 on the dummy netdev rxenet0 (192.0.2.1/24); GID index 1 is
::ffff:192.0.2.1. The guest has no network route out.

run --peer and shell --peer give the guest a second wire, for vsh's simulated
RNIC: rxe1 on rxeveth0 (198.51.100.1/24, 2001:db8:4791::1/64, MTU 9000), a
veth pair whose other end, rxeveth1 (198.51.100.2/24, 2001:db8:4791::2/64), is
in the network namespace vshpeer, where UDP port 4791 is free; CMD runs in
vshpeer. rxe1's GID indexes are the kernel's choice: ibv_devinfo -v -d rxe1.

Exit status of run and shell: the command's own; 124 when --timeout hit;
125 when the lab could not run it; 128+N when rxe-lab got signal N.

Environment: VSH_LAB_CACHE (cache directory), VSH_LAB_ACCEL (default --accel).
Run "rxe-lab COMMAND -h" for a command's flags; docs/lab.md has the whole story.
`

// Main is rxe-lab's command line. It returns the process's exit status.
func Main(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "setup":
		return mainSetup(ctx, rest, stdout, stderr)
	case "run", "shell":
		return mainRun(ctx, cmd, rest, stdin, stdout, stderr)
	case "status":
		return mainStatus(ctx, rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "rxe-lab: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// signalError is the cause of a run stopped by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "got " + e.sig.String() }

func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if s, ok := <-ch; ok {
			cancel(signalError{s})
		}
	}()
	return ctx, func() { signal.Stop(ch); close(ch); cancel(nil) }
}

// exitStatusFor maps a failed run to rxe-lab's exit status.
func exitStatusFor(ctx context.Context, res Result) int {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		if s, ok := se.sig.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return res.Status
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// commonFlags are the flags of every command that uses the cache.
func cacheFlag(fs *flag.FlagSet) *string {
	return fs.String("cache", "", "cache directory (default $VSH_LAB_CACHE, else $XDG_CACHE_HOME/vsh-lab or ~/.cache/vsh-lab)")
}

func resolveCache(flagValue string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	return DefaultCacheDir()
}

func mainSetup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rxe-lab setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := cacheFlag(fs)
	force := fs.Bool("force", false, "download, unpack and build again even when cached")
	kpkg := fs.String("kernel-package", "", "Debian kernel package for the guest (default: what "+DefaultKernelMeta+" depends on, or $"+EnvKernel+")")
	noInstall := fs.Bool("no-install", false, "do not run apt-get install; fail naming missing packages")
	quiet := fs.Bool("q", false, "print errors only")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: rxe-lab setup [flags]\n\nInstalls %s with apt-get (as root, or through sudo),\n"+
			"downloads and unpacks (never installs) the guest kernel, and builds the initramfs,\ninto the cache directory. Each step is skipped when done.\n\n",
			strings.Join(HostPackages, " "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "rxe-lab setup: unexpected arguments %q\n", fs.Args())
		return 2
	}
	dir, err := resolveCache(*cache)
	if err != nil {
		fmt.Fprintf(stderr, "rxe-lab: %v\n", err)
		return StatusLabError
	}
	var log io.Writer = stderr
	if *quiet {
		log = io.Discard
	}
	_, err = Setup(ctx, SetupOptions{CacheDir: dir, KernelPackage: *kpkg, Force: *force, NoInstall: *noInstall,
		Log: log, Stdout: log, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "rxe-lab setup: %v\n", err)
		if se := (signalError{}); errors.As(context.Cause(ctx), &se) {
			return exitStatusFor(ctx, Result{})
		}
		return 1
	}
	return 0
}

// runArgs is a parsed run or shell command line.
type runArgs struct {
	Opts    Options
	Spec    RunSpec
	Vsh     string // shell: --vsh
	Shell   bool
	Default bool // shell without a command: pick vsh or bash
}

// parseRunArgs parses the flags of run and shell. getenv reads defaults.
func parseRunArgs(cmd string, args []string, stderr io.Writer) (*runArgs, error) {
	fs := flag.NewFlagSet("rxe-lab "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	r := &runArgs{Shell: cmd == "shell"}
	cache := cacheFlag(fs)
	fs.StringVar(&r.Opts.Accel, "accel", "", "accelerators to try: auto, kvm, tcg or a list like kvm,tcg (default $"+EnvAccel+", else auto)")
	fs.IntVar(&r.Opts.MemoryMiB, "mem", 2048, "guest memory in MiB")
	fs.IntVar(&r.Opts.CPUs, "cpus", 0, "guest CPUs (default min(host CPUs, 4))")
	fs.IntVar(&r.Opts.MTU, "mtu", 1500, "MTU of rxenet0 (1500: active_mtu 1024; 4200 or more: 4096)")
	fs.DurationVar(&r.Spec.Timeout, "timeout", 0, "stop the guest after this long, boot included, and exit 124 (0: never)")
	fs.DurationVar(&r.Opts.BootTimeout, "boot-timeout", 120*time.Second, "how long a guest may take to reach its init (the last accelerator's gets a second boot after half of it)")
	fs.DurationVar(&r.Opts.FallbackAfter, "fallback-after", 30*time.Second, "how long a KVM guest may take to boot before TCG is tried")
	fs.StringVar(&r.Opts.ConsoleLog, "console-log", "", "write the guest's console (kernel and init messages) to this file")
	fs.BoolVar(&r.Opts.Verbose, "v", false, "show the guest's console as it boots")
	fs.BoolVar(&r.Opts.Quiet, "q", false, "no progress lines, only errors")
	var env, shares listFlag
	fs.Var(&env, "e", "NAME or NAME=VALUE: pass a host variable, or set one, in the guest (repeatable)")
	fs.Var(&shares, "share", "DIR or DIR:ro: share another host directory at the same path (repeatable)")
	fs.StringVar(&r.Spec.Dir, "C", "", "working directory of the command, shared read-write (default: the current directory)")
	interactive := fs.Bool("i", false, "pass standard input to the command (default: it reads /dev/null)")
	tty := fs.Bool("t", false, "run the command on a terminal in the guest, as shell does")
	fs.BoolVar(&r.Spec.Peer, "peer", false, "add a second wire, "+PeerDevice+" on the veth "+KernelVeth+
		", and run the command in the network namespace "+PeerNetNS+" at its other end ("+PeerVeth+")")
	if r.Shell {
		fs.StringVar(&r.Vsh, "vsh", "", "the vsh binary to start (default: bin/vsh, else vsh on PATH)")
	}
	fs.Usage = func() {
		if r.Shell {
			fmt.Fprintf(stderr, "Usage: rxe-lab shell [flags] [CMD...]\n\nBoots a guest with rxe0 and gives CMD your terminal there: its size, Ctrl-C for the\n"+
				"guest's program, Ctrl-] to stop the guest. Without CMD: vsh --backend ibverbs when\nthe vsh binary has the ibverbs backend, else bash.\n\n")
		} else {
			fmt.Fprintf(stderr, "Usage: rxe-lab run [flags] [--] CMD [ARG...]\n\nBoots a guest with rxe0, runs CMD in the working directory (shared read-write at the same\n"+
				"path), streams its standard output and error, and exits with its status.\n\n")
		}
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if r.Opts.CacheDir, err = resolveCache(*cache); err != nil {
		return nil, err
	}
	r.Spec.Args = fs.Args()
	r.Spec.Env = env
	for _, s := range shares {
		p, ro := s, false
		if strings.HasSuffix(s, ":ro") {
			p, ro = strings.TrimSuffix(s, ":ro"), true
		} else if strings.HasSuffix(s, ":rw") {
			p = strings.TrimSuffix(s, ":rw")
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		r.Spec.Shares = append(r.Spec.Shares, Share{Path: abs, ReadOnly: ro})
	}
	if r.Spec.Dir != "" {
		if r.Spec.Dir, err = filepath.Abs(r.Spec.Dir); err != nil {
			return nil, err
		}
	}
	if r.Spec.Timeout < 0 || r.Opts.BootTimeout <= 0 || r.Opts.FallbackAfter <= 0 {
		return nil, fmt.Errorf("timeouts must be positive")
	}
	if r.Opts.CPUs < 0 {
		return nil, fmt.Errorf("-cpus %d: want a positive number", r.Opts.CPUs)
	}
	r.Spec.TTY = *tty || r.Shell
	r.Spec.Escape = r.Spec.TTY
	if r.Shell {
		*interactive = true
		if len(r.Spec.Args) == 0 {
			r.Default = true
		}
	} else if len(r.Spec.Args) == 0 {
		return nil, fmt.Errorf("run: no command given (rxe-lab run [flags] [--] CMD [ARG...])")
	}
	if *interactive {
		r.Spec.Stdin = os.Stdin // replaced by Main's stdin
	}
	return r, nil
}

// defaultShellCommand is what shell runs without a command.
func defaultShellCommand(dir, vshFlag string) ([]string, string, error) {
	v, err := FindVsh(dir, vshFlag)
	if err != nil {
		return nil, "", err
	}
	if v.Path != "" && v.Ibverbs {
		return []string{v.Path, "--backend", "ibverbs"}, "starting " + v.Path + " --backend ibverbs", nil
	}
	// Without the host's ~/.bashrc: it may do slow things (under TCG) or
	// write to the read-only host filesystem. "rxe-lab shell bash" has it.
	sh := []string{"/bin/bash", "--norc"}
	if !fileExists("/bin/bash") {
		sh = []string{"/bin/sh"}
	}
	why := "no vsh binary (looked in " + v.Searched + ")"
	if v.Path != "" {
		why = v.Path + " has no ibverbs backend (it does not link libibverbs; make build builds vsh " +
			"with cgo and -tags ibverbs where libibverbs-dev is installed)"
	}
	return sh, "starting " + sh[0] + ": " + why, nil
}

func mainRun(ctx context.Context, cmd string, args []string, stdin *os.File, stdout, stderr io.Writer) int {
	r, err := parseRunArgs(cmd, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if !strings.Contains(err.Error(), "flag provided but not defined") {
			fmt.Fprintf(stderr, "rxe-lab %s: %v\n", cmd, err)
		}
		return 2
	}
	if r.Spec.Stdin != nil {
		r.Spec.Stdin = stdin
	}
	r.Spec.Stdout, r.Spec.Stderr = stdout, stderr
	r.Opts.Log = stderr
	l, err := Open(ctx, r.Opts)
	if err != nil {
		fmt.Fprintf(stderr, "rxe-lab %s: %v\n", cmd, err)
		return StatusLabError
	}
	if r.Default {
		dir := r.Spec.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		argv, why, err := defaultShellCommand(dir, r.Vsh)
		if err != nil {
			fmt.Fprintf(stderr, "rxe-lab shell: %v\n", err)
			return 2
		}
		r.Spec.Args = argv
		if filepath.Base(argv[0]) != "vsh" {
			r.Spec.Env = append([]string{"HISTFILE=/tmp/.bash_history", `PS1=\u@\h:\w\$ `}, r.Spec.Env...)
		}
		if !r.Opts.Quiet {
			fmt.Fprintf(stderr, "rxe-lab: %s\n", why)
		}
	}
	if r.Shell && !r.Opts.Quiet {
		where := ""
		if r.Spec.Peer {
			where = fmt.Sprintf("; the shell runs in the namespace %s (%s: %s, %s), facing %s on %s (%s, %s)",
				PeerNetNS, PeerVeth, PeerAddr4, PeerAddr6, PeerDevice, KernelVeth, KernelAddr4, KernelAddr6)
		}
		fmt.Fprintf(stderr, "rxe-lab: in the guest: %s on %s (%s), GID index %d = %s%s. Exit the shell or press Ctrl-] to stop the guest.\n",
			GuestDevice, GuestNetdev, GuestAddr, GuestGIDIndex, GuestGID, where)
	}
	res, err := l.Run(ctx, r.Spec)
	if err != nil {
		if r.Spec.TTY {
			fmt.Fprintln(stderr) // the guest's prompt may be on this line
		}
		fmt.Fprintf(stderr, "rxe-lab %s: %v\n", cmd, err)
		return exitStatusFor(ctx, res)
	}
	if !r.Opts.Quiet {
		fmt.Fprintf(stderr, "rxe-lab: %s exited with status %d; guest stopped after %.1f s\n",
			filepath.Base(r.Spec.Args[0]), res.Status, res.Total.Seconds())
	}
	return res.Status
}

func mainStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rxe-lab status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := cacheFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dir, err := resolveCache(*cache)
	if err != nil {
		fmt.Fprintf(stderr, "rxe-lab: %v\n", err)
		return StatusLabError
	}
	fmt.Fprintf(stdout, "cache:        %s\n", dir)
	l, err := Open(ctx, Options{CacheDir: dir, Log: stderr, Quiet: true})
	if err != nil {
		fmt.Fprintf(stdout, "state:        not ready: %v\n", err)
		return 1
	}
	st := l.State()
	fmt.Fprintf(stdout, "kernel:       %s (%s, unpacked from %s)\n", st.KernelRelease, st.KernelPackage, filepath.Base(st.KernelDeb))
	fmt.Fprintf(stdout, "modules:      %s\n", strings.Join(st.Modules, " "))
	fmt.Fprintf(stdout, "initramfs:    %s (busybox %s)\n", st.Initramfs, st.Busybox)
	ver := "?"
	if out, err := exec.CommandContext(ctx, l.qemu, "--version").Output(); err == nil {
		ver = strings.SplitN(string(out), "\n", 2)[0]
	}
	fmt.Fprintf(stdout, "qemu:         %s (%s)\n", l.qemu, ver)
	acc, why := l.Accelerators()
	fmt.Fprintf(stdout, "accelerators: %s: %s\n", strings.Join(acc, ","), why)
	wd, _ := os.Getwd()
	if argv, why, err := defaultShellCommand(wd, ""); err == nil {
		fmt.Fprintf(stdout, "shell:        %s (%s)\n", strings.Join(argv, " "), why)
	}
	return 0
}
