package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Exit statuses of rxe-lab itself (the others are the command's own).
const (
	StatusTimeout     = 124 // the run hit its timeout; the guest was stopped
	StatusLabError    = 125 // the lab could not run the command
	StatusInterrupted = 130 // stopped by a signal or Ctrl-] (the CLI uses 128+signal)
)

// Options configure a Lab. Zero values mean the defaults.
type Options struct {
	CacheDir      string        // default DefaultCacheDir()
	Accel         string        // auto (default), kvm, tcg, or a list such as kvm,tcg
	MemoryMiB     int           // guest memory, default 2048
	CPUs          int           // guest CPUs, default min(host CPUs, 4)
	MTU           int           // MTU of rxenet0, default 1500 (rxe active_mtu 1024)
	BootTimeout   time.Duration // the last accelerator's limit to reach init (a first boot that hangs gets half), default 120 s
	FallbackAfter time.Duration // an earlier accelerator's limit before falling back, default 30 s
	Verbose       bool          // stream the guest's console to Log
	Quiet         bool          // no progress lines on Log
	Log           io.Writer     // progress lines, default os.Stderr
	ConsoleLog    string        // also write the guest's console to this file
	QEMU          string        // default qemu-system-x86_64
}

// Lab runs commands in soft-RoCE guests. It is safe for concurrent use;
// every run boots its own guest.
type Lab struct {
	o        Options
	st       *State
	qemu     string
	accels   []string
	accelWhy string
}

// Open checks that the lab is set up in the cache directory, rebuilding the
// initramfs if this rxe-lab needs another one (that needs no root), and
// chooses the accelerators.
func Open(ctx context.Context, o Options) (*Lab, error) {
	if o.CacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		o.CacheDir = d
	}
	if o.Accel == "" {
		o.Accel = os.Getenv(EnvAccel)
	}
	if o.MemoryMiB == 0 {
		o.MemoryMiB = 2048
	}
	if o.CPUs == 0 {
		o.CPUs = min(runtime.NumCPU(), 4)
	}
	if o.MTU == 0 {
		o.MTU = 1500
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = 120 * time.Second
	}
	if o.FallbackAfter == 0 {
		o.FallbackAfter = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.QEMU == "" {
		o.QEMU = "qemu-system-x86_64"
	}
	if o.MTU < 256 || o.MTU > 9000 {
		return nil, fmt.Errorf("--mtu %d: want 256-9000 (1500 gives active_mtu 1024, 4200 or more gives 4096)", o.MTU)
	}
	if o.MemoryMiB < 256 {
		return nil, fmt.Errorf("--mem %d: want at least 256 MiB", o.MemoryMiB)
	}
	l := &Lab{o: o}
	st, err := loadState(o.CacheDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNotSetUp(o.CacheDir, "no lab.json")
	}
	if err != nil {
		return nil, err
	}
	var quiet io.Writer = io.Discard
	if o.Verbose {
		quiet = o.Log
	}
	old := *st
	if err := ensureKernel(ctx, o.CacheDir, st, "", false, nil, quiet); err != nil {
		return nil, err
	}
	if err := ensureInitramfs(o.CacheDir, st, false, quiet); err != nil {
		return nil, err
	}
	if st.InitramfsHash != old.InitramfsHash {
		if err := saveState(o.CacheDir, st); err != nil {
			return nil, err
		}
	}
	l.st = st
	if l.qemu, err = exec.LookPath(o.QEMU); err != nil {
		return nil, fmt.Errorf("%s not found: run rxe-lab setup (it installs qemu-system-x86)", o.QEMU)
	}
	if l.accels, l.accelWhy, err = chooseAccel(o.Accel, probeHost()); err != nil {
		return nil, err
	}
	return l, nil
}

// State returns what setup left in the cache.
func (l *Lab) State() State { return *l.st }

// Accelerators returns the accelerators a run tries, in order, and why.
func (l *Lab) Accelerators() ([]string, string) { return l.accels, l.accelWhy }

// RunSpec is one command to run in a guest.
type RunSpec struct {
	Args    []string  // the command and its arguments; found through the guest's PATH
	Dir     string    // its working directory, shared read-write; default the current directory
	Env     []string  // NAME (pass the host's value) or NAME=VALUE, on top of the defaults
	Shares  []Share   // more host directories to share at the same path
	Stdin   io.Reader // nil: the command reads /dev/null (non-TTY) or nothing (TTY)
	Stdout  io.Writer // the command's output (TTY: the terminal's)
	Stderr  io.Writer
	TTY     bool          // run the command on a terminal (hvc0) as its session leader
	Rows    int           // the terminal's initial size when Stdout is not a terminal
	Cols    int           //
	Timeout time.Duration // 0: none; else the whole run, boot included
	// Escape, with TTY and a terminal on Stdin: Ctrl-] stops the guest.
	Escape bool
	// Peer gives the guest the second wire: PeerDevice (rxe1) on
	// KernelVeth, whose other end, PeerVeth, is in the network namespace
	// PeerNetNS; the command runs in PeerNetNS. Without it the guest has
	// rxe0 only, which is what programs that take the first two devices
	// (vsh's A and B) expect.
	Peer bool
}

// Result says how a run went.
type Result struct {
	Status      int           // the command's exit status, or StatusTimeout, StatusLabError, StatusInterrupted
	Accel       string        // the accelerator of the guest that ran (or last tried)
	Boot        time.Duration // from QEMU's start to the guest's init
	Ready       time.Duration // from QEMU's start to rxe0 ready
	GuestUptime float64       // the guest's uptime at ready, seconds
	Total       time.Duration // the whole run, fallbacks included
}

// ErrTimeout is the cause of a run that hit its timeout.
var ErrTimeout = errors.New("timed out")

// errEscape is the cause of a run stopped with Ctrl-].
var errEscape = errors.New("stopped with Ctrl-]")

// bootError is a guest that did not come up; the next accelerator may.
// hung says that QEMU ran but the guest did not reach its init in time.
type bootError struct {
	msg  string
	hung bool
}

func (e *bootError) Error() string { return e.msg }

func (l *Lab) logf(format string, a ...any) {
	if !l.o.Quiet {
		fmt.Fprintf(l.o.Log, "rxe-lab: "+format+"\n", a...)
	}
}

// Run boots a guest, runs spec.Args in it and returns its exit status. A
// non-nil error means the command did not run to its end (the lab failed,
// the run timed out or ctx was cancelled); Result.Status then says so too.
func (l *Lab) Run(ctx context.Context, spec RunSpec) (Result, error) {
	start := time.Now()
	res := Result{Status: StatusLabError}
	if len(spec.Args) == 0 {
		return res, errors.New("no command to run")
	}
	dir := spec.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return res, fmt.Errorf("current directory: %w", err)
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return res, err
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return res, fmt.Errorf("working directory: %w", err)
	}
	shares, err := planShares(realDir, spec.Shares, spec.Args[0], filepath.EvalSymlinks)
	if err != nil {
		return res, err
	}
	env, err := guestEnv(hostEnviron(), spec.Env, spec.TTY, spec.Peer)
	if err != nil {
		return res, err
	}
	args := spec.Args
	if strings.Contains(args[0], "=") { // env(1) would take it for an assignment
		args = append([]string{"/bin/sh", "-c", `exec "$0" "$@"`}, args...)
	}
	g := GuestSpec{Args: args, Dir: realDir, Env: env, Shares: shares, MTU: l.o.MTU,
		Stdin: spec.Stdin != nil && !spec.TTY, TTY: spec.TTY, Rows: 24, Cols: 80, Peer: spec.Peer}
	if spec.TTY {
		g.Rows, g.Cols = l.initialSize(spec)
	}
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, spec.Timeout, ErrTimeout)
		defer cancel()
	}
	plan := l.bootPlan()
	if len(plan) == 0 {
		return res, errors.New("no accelerator to try")
	}
	l.logf("booting kernel %s with %s (%s)", l.st.KernelRelease, AccelName(plan[0].accel), l.accelWhy)
	for i, try := range plan {
		res, err = l.boot(ctx, g, spec, try.accel, try.limit)
		res.Total = time.Since(start)
		var be *bootError
		if i == len(plan)-1 || !errors.As(err, &be) || ctx.Err() != nil {
			break
		}
		next := plan[i+1]
		if !next.again {
			l.logf("%s guest did not come up (%v); falling back to %s", AccelName(try.accel), err, AccelName(next.accel))
			continue
		}
		if !be.hung {
			break
		}
		// Said even with -q: a run that took a minute longer says why.
		fmt.Fprintf(l.o.Log, "rxe-lab: %v; booting it again\n", err)
	}
	return res, err
}

// bootTry is one boot in Run's plan: the accelerator and its time limit to
// reach init; again marks the second boot of the same accelerator.
type bootTry struct {
	accel string
	limit time.Duration
	again bool
}

// bootPlan is the boots Run may make, in order: every accelerator but the
// last for FallbackAfter; the last for half of BootTimeout and then, when
// that guest hangs before its init (as a TCG guest now and then does,
// silently), once more for all of it.
func (l *Lab) bootPlan() []bootTry {
	var plan []bootTry
	for i, a := range l.accels {
		if i < len(l.accels)-1 {
			plan = append(plan, bootTry{accel: a, limit: l.o.FallbackAfter})
			continue
		}
		plan = append(plan, bootTry{accel: a, limit: l.o.BootTimeout / 2}, bootTry{accel: a, limit: l.o.BootTimeout, again: true})
	}
	return plan
}

func (l *Lab) initialSize(spec RunSpec) (int, int) {
	rows, cols := spec.Rows, spec.Cols
	for _, x := range []any{spec.Stdout, spec.Stdin} {
		if f, ok := x.(*os.File); ok && rows == 0 {
			if r, c, err := termSize(int(f.Fd())); err == nil && r > 0 && c > 0 {
				rows, cols = r, c
			}
		}
	}
	if rows <= 0 || cols <= 0 {
		rows, cols = 24, 80
	}
	return rows, cols
}

// boot runs one guest with one accelerator: it prepares the run directory
// and QEMU's channels, starts QEMU, and follows the control protocol until
// the command's exit status, a failure, the boot limit or ctx's end.
func (l *Lab) boot(ctx context.Context, g GuestSpec, spec RunSpec, accel string, bootLimit time.Duration) (Result, error) {
	r := &guestRun{l: l, g: g, spec: spec, accel: accel, res: Result{Status: StatusLabError, Accel: accel}}
	if err := r.makeRunDir(); err != nil {
		return r.res, err
	}
	defer os.RemoveAll(r.runDir)
	defer r.closeListeners()
	if err := r.listen(); err != nil {
		return r.res, err
	}
	closeLog, err := r.openConsole()
	if err != nil {
		return r.res, err
	}
	defer closeLog()
	if err := r.startQEMU(); err != nil {
		return r.res, err
	}
	defer r.stopQEMU()
	defer r.closeConns()
	if err := r.connect(ctx); err != nil {
		return r.res, err
	}
	r.closeListeners()
	r.startOutputs()
	return r.follow(ctx, bootLimit)
}

// guestRun is the state of one boot: the run directory, QEMU and its
// channels, the terminal, and what the control protocol has said so far.
type guestRun struct {
	l     *Lab
	g     GuestSpec
	spec  RunSpec
	accel string
	res   Result

	runDir   string
	channels []string // the vsh.* channels, as QEMU is told
	all      []string // "console" and channels
	lns      map[string]*net.UnixListener
	conns    map[string]net.Conn

	console    *ring     // the guest's console, for error messages
	consoleOut io.Writer // where the console is copied
	qemuOut    *ring     // QEMU's own output

	cmd      *exec.Cmd
	t0       time.Time     // QEMU's start
	qemuDone chan struct{} // closed once QEMU has exited
	qemuErr  error         // QEMU's exit; read after qemuDone

	outputs   sync.WaitGroup // the output copies
	msgs      chan Msg       // the control channel's messages; nil once it ended
	inFile    *os.File       // spec.Stdin when a file
	onTerm    bool           // a TTY run on a terminal
	raw       *termState     // the terminal's state before raw mode, while raw
	winch     chan os.Signal
	stopInput chan struct{}
	inputDone sync.WaitGroup
	escape    context.CancelCauseFunc

	status  int // the command's exit status; -1 until MsgExit
	up      bool
	ready   bool
	failMsg string
	phase   *time.Timer      // the boot limit, then 60 s to ready
	exited  <-chan time.Time // after MsgExit: the limit to power off
}

// makeRunDir creates the run directory, short enough for Unix socket paths,
// with the guest's stage2.sh, and lists the channels the run needs. On error
// no directory is left.
func (r *guestRun) makeRunDir() error {
	base := os.TempDir()
	if len(base) > 60 { // Unix socket paths must stay under 108 bytes
		base = "/tmp"
	}
	runDir, err := os.MkdirTemp(base, "rxe-lab-")
	if err != nil {
		return fmt.Errorf("creating the run directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "stage2.sh"), []byte(stage2Script(r.g)), 0o644); err != nil {
		os.RemoveAll(runDir)
		return err
	}
	r.runDir = runDir
	r.channels = []string{"vsh.ctl"}
	if r.g.TTY {
		r.channels = append(r.channels, "vsh.tty")
	} else {
		r.channels = append(r.channels, "vsh.out", "vsh.err")
		if r.g.Stdin {
			r.channels = append(r.channels, "vsh.in")
		}
	}
	r.all = append([]string{"console"}, r.channels...)
	return nil
}

// listen opens a Unix socket in the run directory for every channel.
func (r *guestRun) listen() error {
	r.lns = map[string]*net.UnixListener{}
	for _, ch := range r.all {
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sockPath(r.runDir, ch), Net: "unix"})
		if err != nil {
			return fmt.Errorf("listening for QEMU's %s channel: %w", ch, err)
		}
		r.lns[ch] = ln
	}
	return nil
}

// closeListeners closes the channels' listeners; it may be called again.
func (r *guestRun) closeListeners() {
	for _, ln := range r.lns {
		ln.Close()
	}
}

// openConsole sets where the guest's console goes: a ring for error
// messages, Options.ConsoleLog and, when verbose, Options.Log. The returned
// func closes the log file.
func (r *guestRun) openConsole() (func(), error) {
	r.console = newRing(256 << 10)
	r.consoleOut = r.console
	closeLog := func() {}
	if r.l.o.ConsoleLog != "" {
		f, err := os.Create(r.l.o.ConsoleLog)
		if err != nil {
			return nil, fmt.Errorf("--console-log: %w", err)
		}
		closeLog = func() { f.Close() }
		r.consoleOut = io.MultiWriter(r.consoleOut, f)
	}
	if r.l.o.Verbose {
		r.consoleOut = io.MultiWriter(r.consoleOut, r.l.o.Log)
	}
	return closeLog, nil
}

// startQEMU starts QEMU on a thread of its own; qemuDone closes when it has
// exited.
func (r *guestRun) startQEMU() error {
	l := r.l
	name := fmt.Sprintf("rxe-lab-%d-%s", os.Getpid(), filepath.Base(r.runDir))
	argv := qemuArgs(qemuConfig{Accel: r.accel, MemoryMiB: l.o.MemoryMiB, CPUs: l.o.CPUs,
		Kernel: filepath.Join(l.o.CacheDir, l.st.Kernel), Initrd: filepath.Join(l.o.CacheDir, l.st.Initramfs),
		Append: kernelAppend(l.o.Verbose), Name: name, SockDir: r.runDir, Channels: r.channels,
		RunDir: r.runDir, Shares: r.g.Shares})
	cmd := exec.Command(l.qemu, argv...)
	r.qemuOut = newRing(64 << 10)
	cmd.Stdout, cmd.Stderr = r.qemuOut, r.qemuOut
	cmd.SysProcAttr = qemuProcAttr()
	r.cmd = cmd
	r.t0 = time.Now()
	// Linux sends the parent-death signal when the thread that started the
	// child ends, not the process: start and wait for QEMU on a locked
	// thread, which the runtime keeps until QEMU is gone.
	r.qemuDone = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			r.qemuErr = cmd.Wait()
		}
		close(r.qemuDone)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("starting %s: %w", l.qemu, err)
	}
	return nil
}

// stopQEMU kills QEMU unless it has exited, and waits for it.
func (r *guestRun) stopQEMU() {
	select {
	case <-r.qemuDone:
	default:
		killQemu(r.cmd)
		<-r.qemuDone
	}
}

// tail returns what QEMU said and the console's last lines, for errors.
func (r *guestRun) tail() string {
	var b strings.Builder
	if s := strings.TrimSpace(r.qemuOut.String()); s != "" {
		fmt.Fprintf(&b, "\nQEMU said:\n%s", indent(s))
	}
	if s := r.console.Tail(25); s != "" {
		fmt.Fprintf(&b, "\nlast lines of the guest console:\n%s", indent(s))
	}
	return b.String()
}

// connect accepts QEMU's connection on every channel (QEMU connects as it
// starts). A QEMU that exits first is a bootError; on ctx's end r.res says
// why.
func (r *guestRun) connect(ctx context.Context) error {
	r.conns = map[string]net.Conn{}
	type accepted struct {
		ch  string
		c   net.Conn
		err error
	}
	acc := make(chan accepted, len(r.all))
	for ch, ln := range r.lns {
		go func() { c, err := ln.Accept(); acc <- accepted{ch, c, err} }()
	}
	connectLimit := time.NewTimer(30 * time.Second)
	defer connectLimit.Stop()
	for len(r.conns) < len(r.all) {
		select {
		case a := <-acc:
			if a.err != nil {
				return fmt.Errorf("accepting QEMU's %s channel: %w", a.ch, a.err)
			}
			r.conns[a.ch] = a.c
		case <-r.qemuDone:
			return &bootError{msg: fmt.Sprintf("QEMU (%s) exited at start: %v%s", AccelName(r.accel), r.qemuErr, r.tail())}
		case <-connectLimit.C:
			return fmt.Errorf("QEMU did not connect its channels within 30 s%s", r.tail())
		case <-ctx.Done():
			var err error
			r.res, err = r.l.cancelled(ctx, r.res)
			return err
		}
	}
	return nil
}

// closeConns closes the channels QEMU connected.
func (r *guestRun) closeConns() {
	for _, c := range r.conns {
		c.Close()
	}
}

// startOutputs copies the console and the command's output channels to
// their writers, and parses the control channel into r.msgs.
func (r *guestRun) startOutputs() {
	copyOut := func(w io.Writer, c net.Conn) {
		if w == nil {
			w = io.Discard
		}
		r.outputs.Add(1)
		go func() {
			defer r.outputs.Done()
			if _, err := io.Copy(w, c); err != nil {
				io.Copy(io.Discard, c) // keep the guest from blocking on a full port
			}
		}()
	}
	copyOut(r.consoleOut, r.conns["console"])
	if r.g.TTY {
		copyOut(r.spec.Stdout, r.conns["vsh.tty"])
	} else {
		copyOut(r.spec.Stdout, r.conns["vsh.out"])
		copyOut(r.spec.Stderr, r.conns["vsh.err"])
	}
	msgs := make(chan Msg, 16)
	go func() {
		defer close(msgs)
		sc := bufio.NewScanner(r.conns["vsh.ctl"])
		for sc.Scan() {
			if m, err := ParseMsg(sc.Text()); err == nil {
				msgs <- m
			}
		}
	}()
	r.msgs = msgs
}

// follow handles the control protocol until QEMU exits (or the guest, having
// said its status, does not power off), then returns the run's outcome. It
// stops the guest at the boot limit, on Ctrl-] and at ctx's end.
func (r *guestRun) follow(ctx context.Context, bootLimit time.Duration) (Result, error) {
	// The terminal, for TTY runs on a terminal.
	if f, ok := r.spec.Stdin.(*os.File); ok {
		r.inFile = f
	}
	r.onTerm = r.g.TTY && r.inFile != nil && isTerminal(int(r.inFile.Fd()))
	defer r.restoreTerminal()
	r.winch = make(chan os.Signal, 1)
	if r.onTerm {
		notifyWinch(r.winch)
		defer signalStop(r.winch)
	}
	r.stopInput = make(chan struct{})
	defer func() { close(r.stopInput); r.inputDone.Wait() }()
	escCtx, escape := context.WithCancelCause(ctx)
	r.escape = escape
	defer escape(nil)

	r.status = -1
	r.phase = time.NewTimer(bootLimit)
	defer r.phase.Stop()
loop:
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				r.msgs = nil
				continue
			}
			r.handle(m)
		case <-r.qemuDone:
			break loop
		case <-r.exited:
			break loop // it said its status but did not power off
		case <-r.phase.C:
			r.stopQEMU()
			if !r.up {
				return r.res, &bootError{msg: fmt.Sprintf("the %s guest did not reach its init within %s%s",
					AccelName(r.accel), bootLimit, r.tail()), hung: true}
			}
			return r.res, fmt.Errorf("the guest's init ran but %s was not ready within 60 s%s", GuestDevice, r.tail())
		case <-r.winch:
			if rows, cols, err := termSize(int(r.inFile.Fd())); err == nil && r.ready {
				fmt.Fprintf(r.conns["vsh.ctl"], "%s\n", Msg{Kind: MsgWinsize, Rows: rows, Cols: cols})
			}
		case <-escCtx.Done():
			r.stopQEMU()
			r.restoreTerminal()
			return r.l.cancelled(escCtx, r.res)
		}
	}
	r.stopQEMU()
	r.restoreTerminal()
	r.drain()
	r.outputs.Wait()
	return r.outcome()
}

// restoreTerminal leaves raw mode, if the run entered it.
func (r *guestRun) restoreTerminal() {
	if r.raw != nil {
		r.raw.restore()
		r.raw = nil
	}
}

// drain handles the control messages left once QEMU is gone (every channel
// then ends), waiting at most 5 s.
func (r *guestRun) drain() {
	if r.msgs == nil {
		return
	}
	drain := time.After(5 * time.Second)
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				return
			}
			r.handle(m)
		case <-drain:
			return
		}
	}
}

// outcome is the run's result once QEMU is gone: the command's status, or
// why there is none (a bootError if the guest never reached its init).
func (r *guestRun) outcome() (Result, error) {
	res := r.res
	switch {
	case r.status >= 0:
		res.Status = r.status
		return res, nil
	case r.failMsg != "":
		return res, fmt.Errorf("the guest could not set up the lab: %s%s", r.failMsg, r.tail())
	case !r.up:
		return res, &bootError{msg: fmt.Sprintf("the %s guest stopped before its init ran (QEMU: %v)%s", AccelName(r.accel), exitText(r.qemuErr), r.tail())}
	}
	return res, fmt.Errorf("the guest stopped without reporting the command's exit status (QEMU: %s)%s", exitText(r.qemuErr), r.tail())
}

// handle acts on one control message.
func (r *guestRun) handle(m Msg) {
	switch m.Kind {
	case MsgUp:
		r.up = true
		r.res.Boot = time.Since(r.t0)
		r.phase.Reset(60 * time.Second)
	case MsgReady:
		r.ready = true
		r.res.Ready = time.Since(r.t0)
		r.res.GuestUptime = m.Uptime
		r.phase.Stop()
		r.l.logf("%s guest up in %.1f s, %s ready in %.1f s (guest uptime %.2f s)",
			AccelName(r.accel), r.res.Boot.Seconds(), GuestDevice, r.res.Ready.Seconds(), m.Uptime)
		r.startInput()
	case MsgFail:
		r.failMsg = m.Text
	case MsgExit:
		r.status = m.Status
		r.exited = time.After(15 * time.Second) // powering off
	}
}

// startInput, once rxe0 is ready, puts a terminal in raw mode (sending its
// size if it changed during the boot) and starts forwarding the command's
// input.
func (r *guestRun) startInput() {
	g, spec := r.g, r.spec
	if r.onTerm {
		if raw, err := makeRaw(int(r.inFile.Fd())); err == nil {
			r.raw = raw
		}
		// The terminal may have been resized while the guest booted.
		if rows, cols, err := termSize(int(r.inFile.Fd())); err == nil && rows > 0 && cols > 0 && (rows != g.Rows || cols != g.Cols) {
			fmt.Fprintf(r.conns["vsh.ctl"], "%s\n", Msg{Kind: MsgWinsize, Rows: rows, Cols: cols})
		}
	}
	var in net.Conn
	switch {
	case g.TTY && spec.Stdin != nil:
		in = r.conns["vsh.tty"]
	case g.Stdin:
		in = r.conns["vsh.in"]
	}
	if in != nil {
		r.inputDone.Add(1)
		go func() {
			defer r.inputDone.Done()
			forwardInput(spec.Stdin, in, r.stopInput, !g.TTY, r.onTerm && spec.Escape, func() { r.escape(errEscape) })
		}()
	}
}

func (l *Lab) cancelled(ctx context.Context, res Result) (Result, error) {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrTimeout) {
		res.Status = StatusTimeout
		return res, fmt.Errorf("the run timed out; the guest was stopped")
	}
	res.Status = StatusInterrupted
	return res, fmt.Errorf("%v; the guest was stopped", cause)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// forwardInput copies src to the guest until src ends or stop closes. A
// file is polled, so that the copy stops without waiting for a keystroke.
// At the end of src, closeWrite half-closes the channel: the guest reads EOF.
// With escape, a Ctrl-] byte calls onEscape instead of being sent.
func forwardInput(src io.Reader, dst net.Conn, stop <-chan struct{}, closeWrite, escape bool, onEscape func()) {
	buf := make([]byte, 32<<10)
	f, isFile := src.(*os.File)
	for {
		select {
		case <-stop:
			return
		default:
		}
		if isFile {
			ok, err := waitReadable(int(f.Fd()), 100*time.Millisecond)
			if err != nil {
				return
			}
			if !ok {
				continue
			}
		}
		n, err := src.Read(buf)
		if n > 0 {
			data := buf[:n]
			if escape {
				if i := strings.IndexByte(string(data), 0x1d); i >= 0 {
					dst.Write(data[:i])
					onEscape()
					return
				}
			}
			if _, werr := dst.Write(data); werr != nil {
				return
			}
		}
		if err != nil {
			if closeWrite {
				if uc, ok := dst.(*net.UnixConn); ok {
					uc.CloseWrite()
				}
			}
			return
		}
	}
}

// ring keeps the last bytes written to it.
type ring struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newRing(max int) *ring { return &ring{max: max} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - r.max; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	return len(p), nil
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}

// Tail returns the last n lines, without carriage returns.
func (r *ring) Tail(n int) string {
	s := strings.TrimRight(strings.ReplaceAll(r.String(), "\r", ""), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
