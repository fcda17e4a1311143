// Command vsh is the verbs shell: type the verbs of an RDMA program one at a
// time and see every object's state, every completion and every packet.
//
//	vsh                       interactive, on the simulator (two devices, seed 1)
//	vsh -f lesson.vsh         run a script (or a notebook.md's vsh blocks)
//	vsh < lesson.vsh          the same, from stdin
//	vsh --backend ibverbs     real verbs (rxe, ConnectX) through libibverbs
//
// main is the only place that names the backends (verbs/sim and
// verbs/ibverbs, whose stub without cgo says how to build the real one).
// main only wires: flags, the backend, then the shell. Nothing below it
// exits the process.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/vsh-rdma/vsh/internal/safefile"
	"io"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"

	"golang.org/x/term"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/ibverbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// version is set with -ldflags "-X main.version=v1.2.3"; otherwise the
// module version from the build info, or "devel".
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage: vsh [flags]            interactive on a terminal; otherwise reads a script from stdin
       vsh [flags] -f FILE    run a script (.vsh) or a notebook's vsh blocks (.md)
       vsh [flags] lesson ... take a lesson, play one, list or check them (vsh lesson help)
       vsh [flags] kernel ... run as a Jupyter kernel, or install its spec (vsh kernel --help)
       vsh [flags] run ...    run a C verbs program on the simulator, vsh's libibverbs in its place (vsh run --help)

Flags:
  --backend sim|ibverbs  where the verbs run: the simulator (default) or libibverbs
  --devices N            simulated devices sim0..simN-1 (default 2)
  --seed N               the simulator's seed: same script + same seed = same transcript (default 1)
  --sim-addr ADDR        put the simulated device sim0 on the simulator's UDP link at ADDR, port 4791
                         (127.0.0.2, 127.0.0.3, ...; or this host's own IPv4 or IPv6 address,
                         a link-local one with its interface as zone; GID 1 is its RoCEv2 GID), to talk to a
                         pingpong or vsh in another process, or to kernel soft-RoCE on the same link
  --sim-xrc              give the simulated devices XRC (open_xrcd, create_srq_ex, create_qp_ex, open_qp),
                         as mlx5 has it; by default they have none, as kernel rxe (backend xrc=on turns it on later)
  --lessons DIR          add the lessons of course folder DIR to the shipped ones (lesson list, lesson ID);
                         give it again for more courses
  --plain                no colour (also when not on a terminal, or NO_COLOR is set)
  --theme auto|dark|light  colours for a dark or a light terminal background; auto (the default) asks
                         the terminal (COLORFGBG, or its answer to OSC 11 within 100 ms), else dark
  --width N              fit the output to N columns (20 to 1000); on a terminal it fits the
                         terminal's width, elsewhere nothing is wrapped
  -k, --keep-going       do not stop a script at its first failing command
  -f FILE                run FILE instead of reading commands interactively
  --version              print the version
  --help                 print this help

In a script '#' starts a comment, and a line starting with "! " must fail.
Inside vsh, help lists the commands and explain X explains any error, state or opcode.
`

// run is main without the exit: it returns the exit status.
func run(argv []string, stdin *os.File, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vsh", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	backend := fs.String("backend", "sim", "")
	devices := fs.Int("devices", 2, "")
	seed := fs.Int64("seed", 1, "")
	simAddr := fs.String("sim-addr", "", "")
	simXRC := fs.Bool("sim-xrc", false, "")
	plain := fs.Bool("plain", false, "")
	theme := fs.String("theme", "auto", "")
	widthFlag := fs.Int("width", 0, "")
	var keep bool
	fs.BoolVar(&keep, "k", false, "")
	fs.BoolVar(&keep, "keep-going", false, "")
	file := fs.String("f", "", "")
	showVersion := fs.Bool("version", false, "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	lf := addLessonFlags(fs) // lesson.go
	var courseDirs []string
	addCourse := func(v string) error { courseDirs = append(courseDirs, v); return nil }
	fs.Func("lessons", "", addCourse)
	if err := fs.Parse(argv); err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n\n%s", err, usage)
		return 2
	}
	if fs.NArg() > 0 && fs.Arg(0) == "kernel" { // kernel.go
		return kernelCommand(fs.Args()[1:], kernelArgs{backend: *backend, devices: *devices, seed: *seed, simAddr: *simAddr, xrc: *simXRC}, courseDirs, stdout, stderr)
	}
	if fs.NArg() > 0 && fs.Arg(0) == "run" { // run.go
		return runCommand(fs.Args()[1:], *backend, runOptions{simAddr: *simAddr, xrc: *simXRC}, realRunSys, stdout, stderr)
	}
	lessonArgs, export, err := lessonCommandArgs(fs, addCourse) // vsh lesson ...: lesson.go, export.go
	if err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n\n%s", err, lessonUsage)
		return 2
	}
	if status, done := answered(fs, lessonArgs, *help || export.help, *showVersion, *devices, *backend, *simAddr, *simXRC, stdout, stderr); done {
		return status
	}

	catalog, err := loadCatalog(courseDirs) // course.go
	if err != nil {
		fmt.Fprintf(stderr, "vsh: --lessons: %v\n", err)
		return 2
	}
	if len(lessonArgs) > 0 && lessonArgs[0] == "export" {
		// Writing a notebook opens no backend: the kernel does.
		return runLesson(lessonArgs, &lessonRun{pace: *lf.pace, learner: *lf.learner, report: *lf.report, step: *lf.step, pause: *lf.pause,
			stdin: stdin, stdout: stdout, stderr: stderr, catalog: catalog, export: export})
	}
	noColor := noColorSet()
	width, err := outputWidth(fs, *widthFlag, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n", err)
		return 2
	}
	light, ahead, ok := lightTheme(*theme, *plain || noColor || !isTerminal(stdout), stdin, stdout)
	if !ok {
		fmt.Fprintf(stderr, "vsh: --theme %q: auto, dark or light\n", *theme)
		return 2
	}
	if len(lessonArgs) > 0 && lessonArgs[0] == "check" {
		// lesson check plays on the simulator whatever --backend says
		// (docs/writing-lessons.md), so it needs no other backend, nor
		// even one that could open.
		if *backend != "sim" && *backend != "ibverbs" {
			fmt.Fprintf(stderr, "vsh: unknown backend %q: sim or ibverbs\n", *backend)
			return 2
		}
		return runLesson(lessonArgs, &lessonRun{desc: "sim", plain: *plain || noColor || !isTerminal(stdout),
			devices: *devices, seed: *seed, xrc: *simXRC, pace: *lf.pace, learner: *lf.learner, report: *lf.report, step: *lf.step, pause: *lf.pause, light: light, stdin: stdin, stdout: stdout, stderr: stderr,
			catalog: catalog, width: width})
	}

	open, desc, status := openBackend(*backend, *devices, *seed, *simAddr, *simXRC, stderr)
	if status != 0 {
		return status
	}

	interactive := *file == "" && isTerminal(stdin) && isTerminal(stdout)
	if lessonArgs != nil {
		return runLesson(lessonArgs, &lessonRun{open: open, desc: desc, plain: *plain || noColor || !isTerminal(stdout),
			devices: *devices, seed: *seed, pace: *lf.pace, learner: *lf.learner, report: *lf.report, step: *lf.step, pause: *lf.pause, light: light, stdin: stdin, stdout: stdout, stderr: stderr, judge: *backend != "sim",
			terminal: isTerminal(stdin) && isTerminal(stdout), catalog: catalog, solved: courseProgress(catalog, stderr), width: width})
	}
	sh, err := shell.New(shell.Options{
		Open:       open,
		Shadow:     shadowSim(*seed),
		Plain:      *plain || noColor || !isTerminal(stdout),
		Light:      light,
		TypedAhead: ahead,
		Backend:    desc,
		Version:    versionString(),
		TestPanic:  os.Getenv("VSH_TEST_PANIC"),
		Progress:   shell.Progress(os.Stderr),
		StateDir:   stateDir(interactive),
		Lessons:    catalog,
		Solved:     courseProgress(catalog, stderr),
		Width:      width,
	})
	if err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n", err)
		return 1
	}
	defer sh.Close()

	if interactive {
		status, err := sh.RunTTY(stdin, stdout.(*os.File), "")
		if err != nil {
			fmt.Fprintf(stderr, "vsh: %v\n", err)
			return max(status, 1)
		}
		return status
	}

	return runScript(sh, *file, keep, stdin, stdout, stderr)
}

// lessonCommandArgs reads vsh lesson ...'s words, and lesson export's
// flags; nil when the command is not lesson.
func lessonCommandArgs(fs *flag.FlagSet, addCourse func(string) error) ([]string, exportFlags, error) {
	if fs.NArg() == 0 || fs.Arg(0) != "lesson" {
		return nil, exportFlags{}, nil
	}
	if fs.NArg() > 1 && fs.Arg(1) == "export" {
		return parseExportArgs(fs.Args()[2:], addCourse)
	}
	args, err := parseLessonArgs(fs)
	return args, exportFlags{}, err
}

// noColorSet reports whether NO_COLOR asks for no colour: set and not
// empty, as no-color.org says.
func noColorSet() bool { return os.Getenv("NO_COLOR") != "" }

// openBackend returns how to open the backend named backend and its
// description for the banner. When it cannot run (unknown, not built in,
// no device) it says why on stderr and returns vsh's exit status, else 0.
// xrc (--sim-xrc) gives the simulator XRC.
func openBackend(backend string, devices int, seed int64, simAddr string, xrc bool, stderr io.Writer) (open func() (verbs.Provider, error), desc string, status int) {
	switch backend {
	case "sim":
		n, s := devices, seed
		cfg := sim.Config{Devices: n, Seed: s, XRC: xrc}
		withXRC := map[bool]string{true: ", XRC on"}[xrc]
		open = func() (verbs.Provider, error) { return sim.New(cfg), nil }
		desc = fmt.Sprintf("sim (%d device%s, seed %d%s)", n, map[bool]string{true: "", false: "s"}[n == 1], s, withXRC)
		if simAddr != "" { // the UDP link (verbs/sim/udplink.go)
			a, err := sim.ParseUDPAddr(simAddr)
			if err != nil {
				fmt.Fprintf(stderr, "vsh: %v\n", err)
				return nil, "", 2
			}
			open = func() (verbs.Provider, error) { return sim.NewUDP(cfg, a.String()) }
			desc = fmt.Sprintf("sim (%d device%s, seed %d%s; sim0 on the UDP link at %s)", n,
				map[bool]string{true: "", false: "s"}[n == 1], s, withXRC, netip.AddrPortFrom(a, sim.UDPPort))
		}
	case "ibverbs":
		// Try it once here, to explain the two ways it fails before a session.
		p, err := ibverbs.New()
		switch {
		case errors.Is(err, ibverbs.ErrBackendDisabled):
			fmt.Fprint(stderr, "vsh: the ibverbs backend is not built into this vsh.\n"+
				"It talks to real RDMA devices (soft-RoCE rxe, ConnectX) through libibverbs, so it needs Linux, cgo and\n"+
				"libibverbs' headers. On Debian or Ubuntu: sudo apt-get install libibverbs-dev rdma-core ibverbs-providers,\n"+
				"then build with the ibverbs tag: make build (adds it when the headers are there), or\n"+
				"CGO_ENABLED=1 go build -tags ibverbs ./cmd/vsh. Until then, --backend sim runs everything on the simulator.\n")
			return nil, "", 2
		case errors.Is(err, ibverbs.ErrNoDevices):
			fmt.Fprint(stderr, "vsh: libibverbs lists no RDMA device.\n"+
				"Create a soft-RoCE one on a network interface: sudo modprobe rdma_rxe; sudo rdma link add rxe0 type rxe netdev eth0\n"+
				"(ibv_devices should then list rxe0), or run make lab for a VM that has one.\n")
			return nil, "", 1
		case err != nil:
			fmt.Fprintf(stderr, "vsh: %v\n", err)
			return nil, "", 1
		}
		first := true
		open = func() (verbs.Provider, error) {
			if first {
				first = false
				return p, nil
			}
			return ibverbs.New()
		}
		desc = "ibverbs (libibverbs)"
	default:
		fmt.Fprintf(stderr, "vsh: unknown backend %q: sim or ibverbs\n", backend)
		return nil, "", 2
	}
	return open, desc, 0
}

// runScript runs the script in file, or stdin when file is "", on sh and
// returns vsh's exit status: 0, 1 on an error (its first line on stderr),
// or 128+N when signal N stopped it.
func runScript(sh *shell.Shell, file string, keep bool, stdin *os.File, stdout, stderr io.Writer) int {
	in, name := io.Reader(stdin), "stdin"
	if file != "" {
		f, err := safefile.Open(file)
		if err != nil {
			fmt.Fprintf(stderr, "vsh: %v\n", err)
			return 1
		}
		defer f.Close()
		in, name = f, file
	}
	ctx, caught, stop := stopOnSignals()
	err := sh.RunScriptContext(ctx, in, stdout, name, keep)
	stop()
	if sig := caught(); sig != nil {
		fmt.Fprintf(stderr, "vsh: %v: %s stopped\n", sig, name)
		return signalStatus(sig)
	}
	if err != nil {
		var se *shell.ScriptError
		if errors.As(err, &se) {
			fmt.Fprintf(stderr, "vsh: %v\n", firstLine(se.Error()))
		} else {
			fmt.Fprintf(stderr, "vsh: %v\n", err)
		}
		return 1
	}
	return 0
}

// shadowSim opens the simulator a lesson's judge replays the lesson on,
// whatever the backend: with the session's seed and as many devices as it
// has, so that A and B stand for the same devices as in the session.
func shadowSim(seed int64) func(int) (verbs.Provider, error) {
	return func(n int) (verbs.Provider, error) { return sim.New(sim.Config{Devices: n, Seed: seed}), nil }
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func isTerminal(f any) bool {
	x, ok := f.(*os.File)
	return ok && term.IsTerminal(int(x.Fd()))
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// stateDir is where a session at a terminal keeps the learner's place in
// lessons (lessons.StateDir), or "" for none: off a terminal, or when
// there is no home to keep it in.
func stateDir(terminal bool) string {
	if !terminal {
		return ""
	}
	d, err := lessons.StateDir()
	if err != nil {
		return ""
	}
	return d
}

// Widths --width takes.
const (
	minWidth = 20
	maxWidth = 1000
)

// outputWidth is Options.Width: --width N where given, else the width of
// stdout when it is a terminal, read each time (the terminal may be
// resized), else nil: nothing is wrapped.
func outputWidth(fs *flag.FlagSet, width int, stdout io.Writer) (func() int, error) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "width" })
	if given {
		if width < minWidth || width > maxWidth {
			return nil, fmt.Errorf("--width %d: give %d to %d columns", width, minWidth, maxWidth)
		}
		return func() int { return width }, nil
	}
	f, ok := stdout.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, nil
	}
	fd := int(f.Fd())
	return func() int {
		w, _, err := term.GetSize(fd)
		if err != nil || w <= 0 {
			return 0
		}
		return w
	}, nil
}

// lightTheme is --theme: whether colours are for a light background. auto
// asks the terminal when both ends are one and colours are on at all, and
// returns what was typed meanwhile. ok is false for a theme that is none
// of auto, dark and light.
func lightTheme(theme string, plain bool, stdin *os.File, stdout io.Writer) (light bool, ahead []byte, ok bool) {
	switch theme {
	case "dark":
		return false, nil, true
	case "light":
		return true, nil, true
	case "auto":
		out, isFile := stdout.(*os.File)
		if plain || !isFile || !isTerminal(stdin) {
			return false, nil, true
		}
		light, _, ahead = shell.TerminalTheme(stdin, out)
		return light, ahead, true
	}
	return false, nil, false
}

// answered handles what needs no session: help, the version, arguments
// that cannot work together. done says run is over, with status.
func answered(fs *flag.FlagSet, lessonArgs []string, help, showVersion bool, devices int, backend, simAddr string, simXRC bool,
	stdout, stderr io.Writer) (status int, done bool) {
	if help && lessonArgs != nil {
		fmt.Fprint(stdout, lessonUsage)
		return 0, true
	}
	if help || (fs.NArg() == 1 && fs.Arg(0) == "help") {
		fmt.Fprint(stdout, usage)
		return 0, true
	}
	if fs.NArg() == 2 && fs.Arg(0) == "help" && fs.Arg(1) == "lesson" {
		fmt.Fprint(stdout, lessonUsage)
		return 0, true
	}
	if showVersion {
		fmt.Fprintf(stdout, "vsh %s\n", versionString())
		return 0, true
	}
	if fs.NArg() > 0 && lessonArgs == nil {
		fmt.Fprintf(stderr, "vsh: unexpected argument %q (a script is given with -f FILE)\n\n%s", fs.Arg(0), usage)
		return 2, true
	}
	if devices < 1 || devices > 250 {
		fmt.Fprintf(stderr, "vsh: --devices %d: give 1 to 250\n", devices)
		return 2, true
	}

	if simAddr != "" && backend != "sim" {
		fmt.Fprintf(stderr, "vsh: --sim-addr puts the simulator on its UDP link; it has no meaning with --backend %s\n", backend)
		return 2, true
	}
	if simXRC && backend != "sim" {
		fmt.Fprintf(stderr, "vsh: --sim-xrc gives the simulator XRC; with --backend %s the device has XRC or not (mlx5 has, rxe has not)\n", backend)
		return 2, true
	}
	return 0, false
}
