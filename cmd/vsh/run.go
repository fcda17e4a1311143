package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs/sim"
)

const runUsage = `usage: vsh run [--sim-addr ADDR] [--sim-xrc] [--trace[=FILE]] [--] PROGRAM ARGS...

Runs PROGRAM, an unmodified libibverbs program (ibv_rc_pingpong, perftest, your own),
on the simulator: vsh's libibverbs.so.1 (lib/ next to vsh, made by make build) comes
first in LD_LIBRARY_PATH, and the simulated RNIC runs inside the program's own process.
vsh then becomes PROGRAM (exec): its exit status, signals and pid are the program's.
The program sees sim0, on the simulator's UDP link, and sim1; GID 1 is sim0's RoCEv2 GID.

  --sim-addr ADDR   sim0's UDP link address, port 4791 (VSH_SIM_ADDR); each process its own,
                    default the first free loopback address from 127.0.0.2
  --sim-xrc         give the simulated devices XRC (VSH_SIM_XRC=1), as vsh --sim-xrc
  --trace[=FILE]    print every verb call, completion and packet as vsh shows them, with
                    why a call failed (VSH_TRACE): to standard error, or to FILE
`

// traceFlag is --trace: alone it means standard error ("-"), --trace=FILE
// a file.
type traceFlag struct{ dest string }

func (f *traceFlag) String() string   { return f.dest }
func (f *traceFlag) IsBoolFlag() bool { return true }

// Set takes what follows --trace=; the flag package passes "true" for
// --trace alone (a file named true is ./true).
func (f *traceFlag) Set(v string) error {
	switch v {
	case "true":
		f.dest = "-"
	case "false":
		f.dest = ""
	case "":
		return errors.New("--trace= needs a file name (or --trace alone, for standard error)")
	default:
		f.dest = v
	}
	return nil
}

// runOptions are vsh run's settings: the environment the program gets.
type runOptions struct {
	libDir  string // holds our libibverbs.so.1
	simAddr string // VSH_SIM_ADDR, "" to leave as it is
	xrc     bool   // VSH_SIM_XRC=1
	trace   string // VSH_TRACE: "-" or an absolute file; "" to leave as it is
}

// runSys is what vsh run needs from the system; tests replace it.
type runSys struct {
	executable func() (string, error)
	environ    func() []string
	exec       func(argv0 string, argv, env []string) error // returns only on failure
}

var realRunSys = runSys{executable: os.Executable, environ: os.Environ, exec: syscall.Exec}

// runCommand is vsh [flags] run ...: vsh's own --sim-addr and --sim-xrc
// are defaults for run's. It returns only when the program could not be
// started, with vsh's exit status.
func runCommand(args []string, backend string, defaults runOptions, sys runSys, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vsh run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&defaults.simAddr, "sim-addr", defaults.simAddr, "")
	fs.BoolVar(&defaults.xrc, "sim-xrc", defaults.xrc, "")
	var tr traceFlag
	fs.Var(&tr, "trace", "")
	help := fs.Bool("help", false, "")
	fs.BoolVar(help, "h", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "vsh run: %v\n\n%s", err, runUsage)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, runUsage)
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "vsh run: which program? give it after run (and its arguments after it)\n\n%s", runUsage)
		return 2
	}
	if backend != "sim" {
		fmt.Fprintf(stderr, "vsh run puts the simulator in place of libibverbs; --backend %s has no meaning with it (run the program without vsh for the real libibverbs)\n", backend)
		return 2
	}
	if _, err := sim.ParseUDPAddr(defaults.simAddr); err != nil {
		fmt.Fprintf(stderr, "vsh run: %v\n", err)
		return 2
	}
	if tr.dest != "" && tr.dest != "-" {
		abs, err := filepath.Abs(tr.dest)
		if err != nil {
			fmt.Fprintf(stderr, "vsh run: --trace=%s: %v\n", tr.dest, err)
			return 2
		}
		tr.dest = abs
		// Made here, so that an unwritable path stops before the program
		// runs, and an empty file afterwards says the library never
		// loaded (a program linked with an RPATH to the system's).
		f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "vsh run: --trace=%s: %v\n", tr.dest, err)
			return 2
		}
		f.Close()
	}
	defaults.trace = tr.dest
	dir, err := libDir(sys.executable)
	if err != nil {
		fmt.Fprintf(stderr, "vsh run: %v\n", err)
		return 2
	}
	defaults.libDir = dir
	prog := fs.Arg(0)
	path, err := exec.LookPath(prog)
	if err != nil {
		fmt.Fprintf(stderr, "vsh run: %s: %s\n", prog, lookErr(prog, err))
		if tr.dest == "-" && strings.ContainsRune(prog, '/') {
			fmt.Fprintf(stderr, "(is %s the trace file? write --trace=%s: --trace alone traces to standard error)\n", prog, prog)
		}
		return 127
	}
	err = sys.exec(path, fs.Args(), runEnv(sys.environ(), defaults))
	if err != nil {
		fmt.Fprintf(stderr, "vsh run: %s: %v\n", path, err)
		return 126
	}
	return 0
}

// lookErr says why prog cannot be run, as a shell would: not found, or
// found and not a program.
func lookErr(prog string, err error) string {
	if !strings.ContainsRune(prog, '/') {
		return "not found in $PATH"
	}
	if fi, serr := os.Stat(prog); serr == nil {
		if fi.IsDir() {
			return "is a directory"
		}
		return "not executable (chmod +x " + prog + ")"
	}
	return err.Error()
}

// libName is the library vsh run puts in place of the system's.
const libName = "libibverbs.so.1"

// libDir returns the directory of our libibverbs.so.1: lib/ next to vsh's
// own executable (symlinks resolved), as make build leaves it.
func libDir(executable func() (string, error)) (string, error) {
	exe, err := executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find vsh's own executable, next to which lib/%s is: %v", libName, err)
	}
	dir := filepath.Join(filepath.Dir(exe), "lib")
	if _, err := os.Stat(filepath.Join(dir, libName)); err != nil {
		return "", fmt.Errorf("the simulator's libibverbs is not built: no %s.\n"+
			"Build it with make build in vsh's checkout (it needs cgo and libibverbs' headers:\n"+
			"sudo apt-get install libibverbs-dev); it goes to bin/lib/ next to bin/vsh", filepath.Join(dir, libName))
	}
	return dir, nil
}

// runEnv returns environ with o applied: LD_LIBRARY_PATH starting with
// o.libDir, VSH_SIM_ADDR, VSH_SIM_XRC and VSH_TRACE where o sets them, and
// asyncpreemptoff=1 appended to GODEBUG, so that the Go runtime inside
// the program does not interrupt its poll or nanosleep with preemption
// signals.
func runEnv(environ []string, o runOptions) []string {
	set := map[string]string{}
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	set["LD_LIBRARY_PATH"] = o.libDir
	if old := get("LD_LIBRARY_PATH"); old != "" {
		set["LD_LIBRARY_PATH"] += ":" + old
	}
	set["GODEBUG"] = "asyncpreemptoff=1"
	if old := get("GODEBUG"); old != "" {
		set["GODEBUG"] = old + ",asyncpreemptoff=1"
	}
	if o.simAddr != "" {
		set["VSH_SIM_ADDR"] = o.simAddr
	}
	if o.xrc {
		set["VSH_SIM_XRC"] = "1"
	}
	if o.trace != "" {
		set["VSH_TRACE"] = o.trace
	}
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range []string{"LD_LIBRARY_PATH", "GODEBUG", "VSH_SIM_ADDR", "VSH_SIM_XRC", "VSH_TRACE"} {
		if v, ok := set[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
