package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeVsh makes dir/bin/vsh with dir/bin/lib/libibverbs.so.1 beside it
// (when withLib) and dir/link/vsh, a symlink to it; it returns the link.
func fakeVsh(t *testing.T, withLib bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"bin/lib", "link"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"bin/vsh"}
	if withLib {
		files = append(files, "bin/lib/"+libName)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link/vsh")
	if err := os.Symlink(filepath.Join(dir, "bin/vsh"), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// execCall records what runCommand would have executed.
type execCall struct {
	path string
	argv []string
	env  []string
}

// fakeRunSys is a runSys whose vsh is exe and whose exec records the call.
func fakeRunSys(exe string, environ []string, call *execCall) runSys {
	return runSys{
		executable: func() (string, error) { return exe, nil },
		environ:    func() []string { return environ },
		exec: func(path string, argv, env []string) error {
			*call = execCall{path, argv, env}
			return nil
		},
	}
}

// envValue returns the value of the last key=... in env, and whether it is there.
func envValue(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestRunEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		o       runOptions
		want    map[string]string // "" for absent
	}{
		{"defaults", []string{"PATH=/bin", "HOME=/h"}, runOptions{libDir: "/v/lib"},
			map[string]string{"LD_LIBRARY_PATH": "/v/lib", "GODEBUG": "asyncpreemptoff=1", "PATH": "/bin", "HOME": "/h",
				"VSH_SIM_ADDR": "", "VSH_SIM_XRC": "", "VSH_TRACE": ""}},
		{"old values kept after ours", []string{"LD_LIBRARY_PATH=/opt/lib:/x", "GODEBUG=gctrace=1"}, runOptions{libDir: "/v/lib"},
			map[string]string{"LD_LIBRARY_PATH": "/v/lib:/opt/lib:/x", "GODEBUG": "gctrace=1,asyncpreemptoff=1"}},
		{"flags set", []string{"PATH=/bin"}, runOptions{libDir: "/v/lib", simAddr: "127.0.0.7", xrc: true, trace: "-"},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.7", "VSH_SIM_XRC": "1", "VSH_TRACE": "-"}},
		{"flags replace the environment's", []string{"VSH_SIM_ADDR=127.0.0.3", "VSH_TRACE=/old"}, runOptions{libDir: "/l", simAddr: "127.0.0.9", trace: "/t/f"},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.9", "VSH_TRACE": "/t/f"}},
		{"no flag leaves the environment's", []string{"VSH_SIM_ADDR=127.0.0.3", "VSH_SIM_XRC=1", "VSH_TRACE=-"}, runOptions{libDir: "/l"},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.3", "VSH_SIM_XRC": "1", "VSH_TRACE": "-"}},
		{"empty old LD_LIBRARY_PATH", []string{"LD_LIBRARY_PATH=", "GODEBUG="}, runOptions{libDir: "/l"},
			map[string]string{"LD_LIBRARY_PATH": "/l", "GODEBUG": "asyncpreemptoff=1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := runEnv(tc.environ, tc.o)
			for k, want := range tc.want {
				got, ok := envValue(env, k)
				if got != want || ok != (want != "") {
					t.Errorf("runEnv(%q, %+v): %s=%q (set %v), want %q", tc.environ, tc.o, k, got, ok, want)
				}
			}
			seen := map[string]bool{}
			for _, kv := range env {
				k, _, _ := strings.Cut(kv, "=")
				if seen[k] {
					t.Errorf("runEnv(%q, %+v): %s twice in %q", tc.environ, tc.o, k, env)
				}
				seen[k] = true
			}
		})
	}
}

func TestRunFlags(t *testing.T) {
	t.Chdir(t.TempDir()) // --trace=FILE creates FILE
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		defaults runOptions
		want     map[string]string // "" for absent
		argv     []string
	}{
		{"no flags", []string{"true"}, runOptions{},
			map[string]string{"VSH_TRACE": "", "VSH_SIM_ADDR": "", "VSH_SIM_XRC": ""}, []string{"true"}},
		{"--trace alone is stderr", []string{"--trace", "true", "-x"}, runOptions{},
			map[string]string{"VSH_TRACE": "-"}, []string{"true", "-x"}},
		{"--trace=FILE made absolute", []string{"--trace=t.log", "--", "true"}, runOptions{},
			map[string]string{"VSH_TRACE": filepath.Join(cwd, "t.log")}, []string{"true"}},
		{"--trace=- is stderr", []string{"--trace=-", "true"}, runOptions{},
			map[string]string{"VSH_TRACE": "-"}, []string{"true"}},
		{"--trace=/abs", []string{"--trace=/tmp/x.log", "true"}, runOptions{},
			map[string]string{"VSH_TRACE": "/tmp/x.log"}, []string{"true"}},
		{"--sim-addr and --sim-xrc", []string{"--sim-addr", "127.0.0.5", "--sim-xrc", "true", "--sim-xrc"}, runOptions{},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.5", "VSH_SIM_XRC": "1"}, []string{"true", "--sim-xrc"}},
		{"vsh's flags before run", []string{"true"}, runOptions{simAddr: "127.0.0.6", xrc: true},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.6", "VSH_SIM_XRC": "1"}, []string{"true"}},
		{"run's flag wins", []string{"--sim-addr=127.0.0.8", "true"}, runOptions{simAddr: "127.0.0.6"},
			map[string]string{"VSH_SIM_ADDR": "127.0.0.8"}, []string{"true"}},
	}
	exe := fakeVsh(t, true)
	lib, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(exe), "../bin/lib"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var call execCall
			var out, errb bytes.Buffer
			status := runCommand(tc.args, "sim", tc.defaults, fakeRunSys(exe, []string{"PATH=" + os.Getenv("PATH")}, &call), &out, &errb)
			if status != 0 {
				t.Fatalf("vsh run %q = %d, stderr %q", tc.args, status, errb.String())
			}
			if !slices.Equal(call.argv, tc.argv) || filepath.Base(call.path) != "true" {
				t.Errorf("vsh run %q executed %s %q, want true %q", tc.args, call.path, call.argv, tc.argv)
			}
			if v, _ := envValue(call.env, "LD_LIBRARY_PATH"); !strings.HasPrefix(v, lib) {
				t.Errorf("vsh run %q: LD_LIBRARY_PATH=%q, want it to start with %s", tc.args, v, lib)
			}
			for k, want := range tc.want {
				if got, ok := envValue(call.env, k); got != want || ok != (want != "") {
					t.Errorf("vsh run %q: %s=%q (set %v), want %q", tc.args, k, got, ok, want)
				}
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		backend string
		withLib bool
		status  int
		out     string
		errs    []string
	}{
		{"help", []string{"--help"}, "sim", false, 0, "--trace[=FILE]", nil},
		{"-h", []string{"-h"}, "sim", false, 0, "VSH_SIM_ADDR", nil},
		{"no program", nil, "sim", true, 2, "", []string{"which program?", "usage: vsh run"}},
		{"unknown flag", []string{"--bogus", "true"}, "sim", true, 2, "", []string{"flag provided but not defined: -bogus"}},
		{"bad --sim-addr", []string{"--sim-addr", "nowhere", "true"}, "sim", true, 2, "", []string{`--sim-addr "nowhere" is not an IP address`}},
		{"empty --trace=", []string{"--trace=", "true"}, "sim", true, 2, "", []string{"--trace= needs a file name"}},
		{"not the simulator", []string{"true"}, "ibverbs", true, 2, "", []string{"--backend ibverbs has no meaning"}},
		{"library missing", []string{"true"}, "sim", false, 2, "",
			[]string{"libibverbs is not built", "lib/libibverbs.so.1", "make build", "apt-get install libibverbs-dev"}},
		{"program not found", []string{"no-such-program-vsh", "-x"}, "sim", true, 127, "",
			[]string{"vsh run: no-such-program-vsh: not found in $PATH"}},
		{"program not found, library missing", []string{"no-such-program-vsh"}, "sim", false, 2, "",
			[]string{"libibverbs is not built"}},
		{"trace file unwritable", []string{"--trace=/proc/vsh-no-such/t.txt", "true"}, "sim", true, 2, "",
			[]string{"vsh run: --trace=/proc/vsh-no-such/t.txt:"}},
		{"trace file given with a space", []string{"--trace", "/tmp/vsh-trace-x.txt", "true"}, "sim", true, 127, "",
			[]string{"/tmp/vsh-trace-x.txt: ", "write --trace=/tmp/vsh-trace-x.txt"}},
		{"a directory", []string{"/tmp"}, "sim", true, 127, "", []string{"vsh run: /tmp: is a directory"}},
		{"not executable", []string{"/etc/passwd"}, "sim", true, 127, "", []string{"/etc/passwd: not executable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var call execCall
			var out, errb bytes.Buffer
			status := runCommand(tc.args, tc.backend, runOptions{}, fakeRunSys(fakeVsh(t, tc.withLib), os.Environ(), &call), &out, &errb)
			if status != tc.status || !strings.Contains(out.String(), tc.out) {
				t.Errorf("vsh run %q = %d, stdout %q; want %d, %q", tc.args, status, out.String(), tc.status, tc.out)
			}
			for _, e := range tc.errs {
				if !strings.Contains(errb.String(), e) {
					t.Errorf("vsh run %q: stderr %q, want %q in it", tc.args, errb.String(), e)
				}
			}
			if call.path != "" {
				t.Errorf("vsh run %q executed %s", tc.args, call.path)
			}
		})
	}
}

// TestRunExecs builds vsh with a stand-in library beside it and runs a
// shell through vsh run: the shell sees the environment, and its exit
// status is vsh's.
func TestRunExecs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds vsh")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "vsh")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Mkdir(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", libName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		env    []string
		want   string
		status int
	}{
		{"defaults", []string{"run", "--"}, []string{"LD_LIBRARY_PATH=", "GODEBUG=", "VSH_SIM_ADDR="},
			dir + "/lib||asyncpreemptoff=1\n", 7},
		{"with flags and old values", []string{"--sim-addr", "127.0.0.4", "run", "--sim-addr", "127.0.0.9", "--"},
			[]string{"LD_LIBRARY_PATH=/old", "GODEBUG=madvdontneed=1"},
			dir + "/lib:/old|127.0.0.9|madvdontneed=1,asyncpreemptoff=1\n", 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "/bin/sh", "-c", `echo "$LD_LIBRARY_PATH|$VSH_SIM_ADDR|$GODEBUG"; exit 7`)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), tc.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.status {
				t.Errorf("vsh %q: %v, want exit status %d; stderr %q", args, err, tc.status, stderr.String())
			}
			if string(out) != tc.want {
				t.Errorf("vsh %q printed %q, want %q", args, out, tc.want)
			}
		})
	}
}
