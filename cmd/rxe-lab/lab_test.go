//go:build lab

// The soft-RoCE lab's own tests: they boot real guests, so they run with
// `make test-lab` (go test -tags lab), never with `make test`. Each test runs
// the rxe-lab binary as a user would and checks, after every run, that no
// QEMU process of that run is left.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	setupOnce sync.Once
	setupErr  error
	setupOut  string
)

// rxeLab builds rxe-lab once (or uses $RXE_LAB_BIN, as make test-lab sets it)
// and makes sure the lab is set up in the default cache directory.
func rxeLab(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("RXE_LAB_BIN"); p != "" {
			if !filepath.IsAbs(p) {
				buildErr = fmt.Errorf("RXE_LAB_BIN=%s: want an absolute path", p)
			} else if _, err := os.Stat(p); err != nil {
				buildErr = fmt.Errorf("RXE_LAB_BIN: %v (make rxe-lab builds it)", err)
			}
			binPath = p
			return
		}
		dir, err := os.MkdirTemp("", "rxe-lab-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "rxe-lab")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building rxe-lab: %v", buildErr)
	}
	setupOnce.Do(func() {
		out, err := exec.Command(binPath, "setup").CombinedOutput()
		setupOut = string(out)
		if err != nil {
			setupErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if setupErr != nil {
		toolcheck.Missing(t, "rxe-lab setup failed (it needs root for apt-get and Debian's archive): "+setupErr.Error())
	}
	return binPath
}

type runResult struct {
	stdout, stderr string
	status         int
	elapsed        time.Duration
	pid            int
}

// runLab runs rxe-lab with args in dir, with stdin (may be nil), and checks
// that no QEMU of that run is left once it has returned.
func runLab(t *testing.T, dir string, stdin string, args ...string) runResult {
	t.Helper()
	bin := rxeLab(t)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("rxe-lab %q did not return within 10 minutes", args)
	}
	r := runResult{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start), pid: cmd.Process.Pid}
	r.status = cmd.ProcessState.ExitCode()
	if err != nil && r.status < 0 {
		t.Fatalf("rxe-lab %q: %v", args, err)
	}
	logBoot(t, r.stderr)
	assertNoQemu(t, r.pid)
	return r
}

var bootLine = regexp.MustCompile(`(TCG|KVM) guest up in [0-9.]+ s, rxe0 ready in [0-9.]+ s`)

// logBoot shows how the guest booted and how long it took.
func logBoot(t *testing.T, stderr string) {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "rxe-lab: ") {
			t.Log(l)
		}
	}
}

// testMark is in the environment of everything these tests start, so QEMU
// inherits it: the leak checks then see this test run's guests only, never
// another user's, even once a QEMU has lost its parent.
const testMarkVar = "RXE_LAB_TEST_MARK"

var testMark = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())

func init() { os.Setenv(testMarkVar, testMark) }

// qemuOf returns the PIDs of this test run's QEMU processes started by the
// rxe-lab process pid (their -name is rxe-lab-PID-...); pid 0 means by any
// rxe-lab this test run started.
func qemuOf(pid int) []int {
	marker := "rxe-lab-"
	if pid > 0 {
		marker = fmt.Sprintf("rxe-lab-%d-", pid)
	}
	mark := []byte(testMarkVar + "=" + testMark + "\x00")
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 2 && strings.Contains(filepath.Base(args[0]), "qemu-system") && args[1] == "-name" && strings.HasPrefix(args[2], marker) {
			if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, mark) {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

func assertNoQemu(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := qemuOf(pid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("QEMU processes %v of rxe-lab %d are still running after it returned", left, pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSetupFromScratch(t *testing.T) {
	bin := rxeLab(t) // installs the host packages on a new machine
	t.Logf("setup of the default cache:\n%s", setupOut)
	cache := t.TempDir()
	start := time.Now()
	out, err := exec.Command(bin, "setup", "-cache", cache).CombinedOutput()
	if err != nil {
		t.Fatalf("setup into an empty cache: %v\n%s", err, out)
	}
	t.Logf("setup into an empty cache took %.1f s:\n%s", time.Since(start).Seconds(), out)
	for _, want := range []string{"unpacking linux-image-", "(not installing it)", "rdma_rxe", "built initramfs-"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("setup output lacks %q", want)
		}
	}
	start = time.Now()
	out, err = exec.Command(bin, "setup", "-cache", cache).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "guest kernel 6") || !strings.Contains(string(out), "cached") ||
		strings.Contains(string(out), "apt-get") || time.Since(start) > 10*time.Second {
		t.Errorf("a second setup must reuse the cache without apt-get, quickly (%.1f s): %v\n%s", time.Since(start).Seconds(), err, out)
	}
	if _, err := os.Stat(filepath.Join(cache, "kernel")); err != nil {
		t.Errorf("no kernel in the new cache: %v", err)
	}
	// The kernel package was unpacked, never installed.
	if b, _ := exec.Command("dpkg-query", "-W", "-f=${db:Status-Abbrev}", "linux-image-6*").CombinedOutput(); strings.HasPrefix(string(b), "ii") {
		t.Logf("note: a linux-image package is installed on this host (not by rxe-lab): %s", b)
	}
	status, err := exec.Command(bin, "status", "-cache", cache).CombinedOutput()
	if err != nil || !strings.Contains(string(status), "kernel:") || !strings.Contains(string(status), "accelerators:") {
		t.Errorf("status: %v\n%s", err, status)
	}
	t.Logf("status:\n%s", status)
	r := runLab(t, t.TempDir(), "", "run", "-cache", cache, "-timeout", "3m", "--", "rdma", "link", "show")
	if r.status != 0 || !strings.Contains(r.stdout, "link rxe0/1 state ACTIVE") || !strings.Contains(r.stdout, "netdev rxenet0") {
		t.Errorf("rdma link show from the new cache: status %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
}

func TestDevinfo(t *testing.T) {
	r := runLab(t, t.TempDir(), "", "run", "-timeout", "3m", "--", "ibv_devinfo", "-v", "-d", "rxe0")
	if r.status != 0 {
		t.Fatalf("ibv_devinfo: status %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
	for _, re := range []string{
		`hca_id:\s+rxe0`,
		`state:\s+PORT_ACTIVE \(4\)`,
		`active_mtu:\s+1024 \(3\)`,
		`link_layer:\s+Ethernet`,
		`GID\[\s*1\]:\s+::ffff:192\.0\.2\.1, RoCE v2`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("ibv_devinfo output does not match %s:\n%s", re, r.stdout)
		}
	}
	if !bootLine.MatchString(r.stderr) {
		t.Errorf("rxe-lab did not say how the guest booted and how long it took:\n%s", r.stderr)
	}
}

// pairScript runs an rdma-core pingpong server and client on rxe0 in one
// guest, for each transport, and reports each pair's statuses and output.
const pairScript = `#!/bin/sh
# pairs.sh: rdma-core's pingpong examples, server and client on rxe0.
port=18515
fail=0
pair() {
	name=$1; shift
	port=$((port+1))
	"$@" -p $port > $name.server 2>&1 & spid=$!
	h=$(printf ':%04X ' $port)
	i=0
	until grep -q "$h" /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		i=$((i+1)); [ $i -gt 1200 ] && { echo "$name: server did not listen"; break; }
		sleep 0.05
	done
	timeout 120 "$@" -p $port localhost > $name.client 2>&1; crc=$?
	wait $spid; src=$?
	echo "== $name server=$src client=$crc: $*"
	sed 's/^/   server| /' $name.server
	sed 's/^/   client| /' $name.client
	[ $src = 0 ] && [ $crc = 0 ] || fail=$((fail+1))
}
pair rc  ibv_rc_pingpong  -d rxe0 -g 1 -n 100
pair uc  ibv_uc_pingpong  -d rxe0 -g 1 -n 100
pair ud  ibv_ud_pingpong  -d rxe0 -g 1 -n 100 -s 1024
pair srq ibv_srq_pingpong -d rxe0 -g 1 -n 100
exit $fail
`

func TestPingpongs(t *testing.T) {
	dir := t.TempDir() // under /tmp: the guest's own /tmp must not hide it
	if err := os.WriteFile(filepath.Join(dir, "pairs.sh"), []byte(pairScript), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runLab(t, dir, "", "run", "-timeout", "8m", "--", "./pairs.sh")
	t.Logf("guest output:\n%s", r.stdout)
	if r.status != 0 {
		t.Errorf("pairs.sh: status %d (failed pairs)\nstderr: %s", r.status, r.stderr)
	}
	iters := regexp.MustCompile(`(?m)^   (server|client)\| 100 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$`)
	sections := strings.Split(r.stdout, "== ")
	for _, tr := range []string{"rc", "uc", "ud", "srq"} {
		t.Run(tr, func(t *testing.T) {
			var sec string
			for _, s := range sections {
				if strings.HasPrefix(s, tr+" ") {
					sec = s
				}
			}
			if !strings.HasPrefix(sec, tr+" server=0 client=0:") {
				t.Fatalf("ibv_%s_pingpong pair did not pass:\n%s", tr, sec)
			}
			if n := len(iters.FindAllString(sec, -1)); n != 2 {
				t.Errorf("want a result line from the server and the client, got %d:\n%s", n, sec)
			}
			if !strings.Contains(sec, "GID ::ffff:192.0.2.1") {
				t.Errorf("the pair did not use GID index 1 (::ffff:192.0.2.1):\n%s", sec)
			}
		})
	}
	// The outputs were written into the shared directory, and the host sees them.
	if b, err := os.ReadFile(filepath.Join(dir, "rc.client")); err != nil || !strings.Contains(string(b), "iters in") {
		t.Errorf("rc.client on the host: %v %q", err, b)
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"failing command", []string{"sh", "-c", "echo to-stderr >&2; exit 7"}, 7, "to-stderr"},
		{"command not found", []string{"no-such-command-in-the-guest"}, 127, "No such file or directory"},
		{"killed by a signal", []string{"sh", "-c", "kill -KILL $$"}, 128 + 9, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runLab(t, t.TempDir(), "", append([]string{"run", "-timeout", "3m", "--"}, tt.args...)...)
			if r.status != tt.status || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("status %d, want %d; stderr:\n%s", r.status, tt.status, r.stderr)
			}
		})
	}
}

// TestRunEnvironment runs a host-built binary that lives outside the working
// directory, under /tmp as go test builds them, by its path; it reads stdin
// (-i), writes stdout and stderr (kept apart), reads the environment (-e,
// VSH_*), and writes into the working directory, read-write at the same path.
func TestRunEnvironment(t *testing.T) {
	work := t.TempDir()
	bindir := t.TempDir()
	src := filepath.Join(bindir, "probe.go")
	os.WriteFile(src, []byte(`package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	wd, _ := os.Getwd()
	_, err := os.Stat("/sys/class/infiniband/rxe0")
	fmt.Printf("stdin:%s", line)
	fmt.Printf("env:%s:%s:%s\n", os.Getenv("FOO"), os.Getenv("VSH_TEST_PASSED"), os.Getenv("FOO_NOT_PASSED"))
	fmt.Printf("pwd:%s\n", wd)
	fmt.Printf("rxe0:%v guest:%s args:%q\n", err == nil, os.Getenv("VSH_LAB_GUEST"), os.Args[1:])
	fmt.Fprintln(os.Stderr, "to-stderr")
	if err := os.WriteFile("made.txt", []byte("written-in-guest\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`), 0o644)
	probe := filepath.Join(bindir, "probe")
	build := exec.Command("go", "build", "-o", probe, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("VSH_TEST_PASSED", "through") // VSH_* reach the guest
	t.Setenv("FOO_NOT_PASSED", "x")        // others do not
	r := runLab(t, work, "line-from-host\n", "run", "-i", "-e", "FOO=bar", "-timeout", "3m", "--", probe, "two words", "-x")
	if r.status != 0 {
		t.Fatalf("status %d\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
	for _, want := range []string{"stdin:line-from-host\n", "env:bar:through:\n", "pwd:" + work + "\n",
		`rxe0:true guest:1 args:["two words" "-x"]` + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "to-stderr") || !strings.Contains(r.stderr, "to-stderr") {
		t.Errorf("stderr did not come back apart from stdout:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "written-in-guest\n" {
		t.Errorf("a file written in the guest's working directory: %v %q", err, b)
	}
}

// TestGoTestExec runs a Go package's tests inside the guest through
// go test -exec, the way make test-rxe runs the real backend's tests.
func TestGoTestExec(t *testing.T) {
	bin := rxeLab(t)
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/rxeprobe\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "probe_test.go"), []byte(`package rxeprobe

import (
	"os"
	"testing"
)

func TestInGuest(t *testing.T) {
	if os.Getenv("VSH_LAB_GUEST") != "1" {
		t.Fatal("not in the rxe-lab guest")
	}
	gid, err := os.ReadFile("/sys/class/infiniband/" + os.Getenv("VSH_LAB_DEVICE") + "/ports/1/gids/" + os.Getenv("VSH_LAB_GID_INDEX"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GID: %s", gid)
	if err := os.WriteFile("written-by-test", []byte("ok"), 0o644); err != nil {
		t.Fatal(err) // the package directory is the working directory, read-write
	}
}
`), 0o644)
	cmd := exec.Command("go", "test", "-count=1", "-v", "-exec", bin+" run -q --", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("go test -exec 'rxe-lab run -q --' took %.1f s:\n%s", time.Since(start).Seconds(), out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestInGuest") ||
		!strings.Contains(string(out), "GID: 0000:0000:0000:0000:0000:ffff:c000:0201") {
		t.Errorf("go test -exec: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mod, "written-by-test")); err != nil {
		t.Errorf("the test's file is not in the package directory on the host: %v", err)
	}
	assertNoQemu(t, 0)
}

func TestTimeoutKillsHungCommand(t *testing.T) {
	const limit = 30 * time.Second
	r := runLab(t, t.TempDir(), "", "run", "-timeout", limit.String(), "--", "sleep", "3600")
	if r.status != 124 || !strings.Contains(r.stderr, "timed out") {
		t.Errorf("status %d, want 124 and a message that the run timed out; stderr:\n%s", r.status, r.stderr)
	}
	if r.elapsed < limit || r.elapsed > limit+20*time.Second {
		t.Errorf("rxe-lab returned after %s, want just after %s", r.elapsed, limit)
	}
	if !bootLine.MatchString(r.stderr) {
		t.Logf("note: the guest did not get to the command within %s on this machine", limit)
	}
}

// TestSignalStopsGuest: however rxe-lab ends, its QEMU ends with it.
func TestSignalStopsGuest(t *testing.T) {
	bin := rxeLab(t)
	tests := []struct {
		sig        syscall.Signal
		wantStatus int // -1: killed
	}{
		{syscall.SIGTERM, 128 + 15},
		{syscall.SIGINT, 128 + 2},
		{syscall.SIGKILL, -1}, // QEMU's parent-death signal must stop it
	}
	for _, tt := range tests {
		t.Run(tt.sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "run", "-timeout", "5m", "--", "sleep", "3600")
			cmd.Dir = t.TempDir()
			var errb syncBuffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Minute)
			for !bootLine.MatchString(errb.String()) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the guest did not come up:\n%s", errb.String())
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(qemuOf(cmd.Process.Pid)) == 0 {
				t.Errorf("no QEMU found for rxe-lab %d while it runs: the leak check would prove nothing", cmd.Process.Pid)
			}
			time.Sleep(time.Second) // the command runs
			start := time.Now()
			cmd.Process.Signal(tt.sig)
			cmd.Wait()
			if got := cmd.ProcessState.ExitCode(); got != tt.wantStatus {
				t.Errorf("after %v: status %d, want %d\n%s", tt.sig, got, tt.wantStatus, errb.String())
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("rxe-lab took %s to stop after %v", el, tt.sig)
			}
			logBoot(t, errb.String())
			assertNoQemu(t, cmd.Process.Pid)
		})
	}
}

// TestKVMFallback: when KVM is tried first and its guest does not come up
// in time (here: a /dev/kvm that cannot run a stock kernel, or none), the run
// falls back to TCG and still passes. On a host with hardware KVM the KVM
// guest boots and there is nothing to fall back from.
func TestKVMFallback(t *testing.T) {
	r := runLab(t, t.TempDir(), "", "run", "-accel", "kvm,tcg", "-fallback-after", "10s", "-timeout", "4m", "--", "true")
	if r.status != 0 {
		t.Fatalf("status %d\n%s", r.status, r.stderr)
	}
	switch {
	case strings.Contains(r.stderr, "falling back to TCG") && strings.Contains(r.stderr, "TCG guest up"):
		t.Log("KVM did not boot here; fell back to TCG")
	case strings.Contains(r.stderr, "KVM guest up"):
		t.Log("KVM booted the guest")
	default:
		t.Errorf("neither a KVM boot nor a fallback to TCG:\n%s", r.stderr)
	}
}

// TestBootTimeout: a guest that does not come up in time is stopped and the
// run fails as a lab failure (125) that says so; this is also what stops a
// KVM guest that hangs before TCG is tried. The last accelerator's guest
// is booted a second time first, even with -q: half the timeout, then all.
func TestBootTimeout(t *testing.T) {
	r := runLab(t, t.TempDir(), "", "run", "-q", "-accel", "tcg", "-boot-timeout", "1s", "--", "true")
	if r.status != 125 || !strings.Contains(r.stderr, "did not reach its init within 1s") {
		t.Errorf("status %d, want 125 and a message about the boot timeout:\n%s", r.status, r.stderr)
	}
	if !strings.Contains(r.stderr, "did not reach its init within 500ms; booting it again") {
		t.Errorf("no second boot after the first hung for half the timeout:\n%s", r.stderr)
	}
	if r.elapsed > 15*time.Second {
		t.Errorf("rxe-lab took %s to give up on a 1 s boot timeout", r.elapsed)
	}
}

// TestShellUnderTmux drives rxe-lab shell on a real terminal: a command and
// its output, the terminal's size and a resize, Ctrl-C reaching the guest's
// program (not QEMU), the exit status, and a sane terminal afterwards.
func TestShellUnderTmux(t *testing.T) {
	tmux := toolcheck.Require(t, "tmux", "apt-get install tmux")
	bin := rxeLab(t)
	sock := fmt.Sprintf("rxe-lab-test-%d", os.Getpid())
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %q: %v: %s", args, err, out)
		}
		return string(out)
	}
	dir := t.TempDir()
	tm("new-session", "-d", "-s", "lab", "-x", "100", "-y", "30", "-c", dir, "env", "PS1=host$ ", "bash", "--norc", "--noprofile")
	defer exec.Command(tmux, "-L", sock, "kill-server").Run()
	screen := func() string { return tm("capture-pane", "-p", "-J", "-S", "-500", "-t", "lab") }
	waitFor := func(what string, timeout time.Duration) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !strings.Contains(screen(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q on the terminal within %s; it shows:\n%s", what, timeout, screen())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	send := func(keys ...string) { tm(append([]string{"send-keys", "-t", "lab"}, keys...)...) }

	waitFor("host$", 10*time.Second)
	send(bin+" shell", "Enter")
	waitFor("root@rxe-lab:"+dir+"#", 3*time.Minute)
	send("echo $((6*7)) from-$(hostname)", "Enter")
	waitFor("42 from-rxe-lab", 30*time.Second)
	send("stty size", "Enter")
	waitFor("\n30 100\n", 30*time.Second)
	tm("resize-window", "-t", "lab", "-x", "90", "-y", "25")
	time.Sleep(time.Second)
	send("stty size", "Enter")
	waitFor("\n25 90\n", 30*time.Second)
	send("ibv_devices | grep -c rxe0", "Enter")
	waitFor("\n1\n", 30*time.Second)
	send("sleep 600", "Enter")
	time.Sleep(2 * time.Second)
	send("C-c")
	send("echo after-$((1+1))-interrupt", "Enter")
	waitFor("after-2-interrupt", 30*time.Second)
	if len(qemuOf(0)) == 0 {
		t.Fatalf("Ctrl-C stopped the guest:\n%s", screen())
	}
	send("exit 3", "Enter")
	waitFor("bash exited with status 3", 60*time.Second)
	send("echo host-status=$?", "Enter")
	waitFor("host-status=3", 10*time.Second)
	// The marker END-5 is in the output only, not in the typed line.
	send("stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(isig|icanon|echo)' | tr '\\n' ' '; echo END-$((2+3))", "Enter")
	waitFor("END-5", 10*time.Second)
	s := screen()
	if !strings.Contains(s, "isig icanon echo END-5") {
		t.Errorf("the terminal is not sane after rxe-lab shell (want isig icanon echo):\n%s", s)
	}
	assertNoQemu(t, 0)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// peerScript looks at the second wire from the namespace vshpeer, where
// rxe-lab run --peer runs it, and at the kernel's end from the root
// namespace (PID 1's, through nsenter).
const peerScript = `#!/bin/sh
# peer.sh: the second wire, from the simulator's namespace and from the kernel's.
root() { nsenter -t 1 -n "$@"; }
echo "netns: $(ip netns identify)"
echo "env: $VSH_LAB_PEER_NETNS $VSH_LAB_PEER_DEVICE $VSH_LAB_PEER_ADDR4 $VSH_LAB_PEER_ADDR6 $VSH_LAB_KERNEL_ADDR4 $VSH_LAB_KERNEL_ADDR6"
ip -o link show dev rxeveth1
ip -o addr show dev rxeveth1
busybox ping -c1 -W5 198.51.100.1 >/dev/null && echo "ping 198.51.100.1: ok"
busybox ping -c1 -W5 2001:db8:4791::1 >/dev/null && echo "ping 2001:db8:4791::1: ok"
./wire bind 198.51.100.2:4791 '[2001:db8:4791::2]:4791'
root ./wire bind 198.51.100.1:4791 | sed 's/^/root /'
root rdma link show
root ip -o link show dev rxeveth0
grep -H -v -x 0000:0000:0000:0000:0000:0000:0000:0000 /sys/class/infiniband/rxe1/ports/1/gids/* | sed 's/^/sysfs /'
ibv_devinfo -v -d rxe1
echo "rxe0 GID 1: $(cat /sys/class/infiniband/rxe0/ports/1/gids/1)"
# rxe1's GID index of an address: the sysfs entry that holds its GID.
g4=$(grep -lx 0000:0000:0000:0000:0000:ffff:c633:6401 /sys/class/infiniband/rxe1/ports/1/gids/*)
g6=$(grep -lx 2001:0db8:4791:0000:0000:0000:0000:0001 /sys/class/infiniband/rxe1/ports/1/gids/*)
./wire ud "${g4##*/}" 198.51.100.2
./wire ud "${g6##*/}" 2001:db8:4791::2
./wire ud "${g6##*/}" 2001:db8:4791::2 plain
# A capture on each end: dumpcap (tshark's capture engine) starts in about a
# second, where tshark itself takes 20 s under TCG.
command -v dumpcap >/dev/null || exit 0
timeout 120 dumpcap -q -i rxeveth1 -f icmp -c 2 -w peer.pcapng 2>dumpcap1.err & p1=$!
timeout 120 nsenter -t 1 -n dumpcap -q -i rxeveth0 -f icmp -c 2 -w kernel.pcapng 2>dumpcap0.err & p0=$!
i=0
until [ -e peer.pcapng ] && [ -e kernel.pcapng ] || [ $i -gt 1200 ]; do i=$((i+1)); sleep 0.05; done
sleep 0.5
busybox ping -c1 -W5 198.51.100.1 >/dev/null
wait $p1; s1=$?
wait $p0; s0=$?
echo "dumpcap: $s1 $s0"
`

// wireSource is a stand-in for the simulator in vshpeer. "wire bind
// ADDR..." binds UDP sockets on the addresses, all at once, as the simulator
// will on port 4791. "wire ud GIDINDEX ADDR [plain]" listens on ADDR:4791,
// plays ibv_ud_pingpong's server for its client on rxe1 (-g GIDINDEX) over
// TCP, and says what the client's first packet looked like when it arrived.
// Over IPv6 rxe sends a UDP checksum of 0, which a socket accepts only with
// UDP_NO_CHECK6_RX; with plain, the socket does not set it, and the kernel
// counts the packet in Udp6InCsumErrors instead.
const wireSource = `package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const udpNoCheck6Rx = 102 // UDP_NO_CHECK6_RX, linux/udp.h

func main() {
	switch os.Args[1] {
	case "bind":
		for _, a := range os.Args[2:] {
			c, err := net.ListenPacket("udp", a)
			if err != nil {
				fmt.Printf("bind %s: %v\n", a, err)
				continue
			}
			defer c.Close()
			fmt.Printf("bind %s: ok\n", a)
		}
	case "ud":
		plain := len(os.Args) > 4 && os.Args[4] == "plain"
		if err := ud(os.Args[2], os.Args[3], plain); err != nil {
			fmt.Printf("ud %s: %v\n", strings.Join(os.Args[3:], " "), err)
		}
	}
}

func ud(gidIndex, local string, plain bool) error {
	ip := net.ParseIP(local)
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		var err error
		if ip.To4() == nil && !plain {
			c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_UDP, udpNoCheck6Rx, 1) })
		}
		return err
	}}
	u, err := lc.ListenPacket(context.Background(), "udp", net.JoinHostPort(local, "4791"))
	if err != nil {
		return err
	}
	defer u.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command("ibv_ud_pingpong", "-d", "rxe1", "-g", gidIndex, "-s", "64", "-n", "1", "-p", port, "localhost")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(60 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	msg := make([]byte, 52)
	if _, err := io.ReadFull(c, msg); err != nil {
		return err
	}
	before := csumErrors()
	// LID:QPN:PSN:GID, as rdma-core's pingpongs exchange them.
	if _, err := fmt.Fprintf(c, "0000:000099:000000:%s\x00", hex.EncodeToString(ip.To16())); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	buf := make([]byte, 9000)
	for time.Now().Before(deadline) {
		u.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, from, err := u.ReadFrom(buf)
		if err == nil && n >= 12 {
			fmt.Printf("ud %s: %d bytes from %s, opcode %#02x, dest QP %#06x\n", local, n, from,
				buf[0], int(buf[5])<<16|int(buf[6])<<8|int(buf[7]))
			return nil
		}
		if after := csumErrors(); plain && after > before {
			fmt.Printf("ud %s plain: dropped, Udp6InCsumErrors +%d\n", local, after-before)
			return nil
		}
	}
	return fmt.Errorf("nothing arrived in 60 s (client said %q)", strings.TrimRight(string(msg), "\x00"))
}

// csumErrors reads Udp6InCsumErrors from /proc/net/snmp6.
func csumErrors() int {
	f, err := os.Open("/proc/net/snmp6")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "\t"); ok && strings.TrimSpace(k) == "Udp6InCsumErrors" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}
`

// TestPeerWire boots one guest and runs a script in the namespace vshpeer
// (rxe-lab run --peer): rxe1 is ACTIVE on rxeveth0 with the GIDs of both its
// addresses (found by value: their indexes are the kernel's) and active_mtu
// 4096; vshpeer reaches both addresses and can bind UDP port 4791 on its own,
// which kernel rxe holds in the root namespace; packets rxe1 sends arrive at
// such a socket over IPv4 and over IPv6 (with UDP_NO_CHECK6_RX: rxe sends a
// zero UDP checksum); both ends can be captured; and rxe0 is as it was.
func TestPeerWire(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "peer.sh"), []byte(peerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wire.go"), []byte(wireSource), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "wire", "wire.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := runLab(t, dir, "", "run", "--peer", "-timeout", "8m", "--", "./peer.sh")
	t.Logf("guest output:\n%s", r.stdout)
	if r.status != 0 {
		t.Fatalf("peer.sh: status %d\nstderr: %s", r.status, r.stderr)
	}
	for _, re := range []string{
		`(?m)^netns: vshpeer$`,
		`(?m)^env: vshpeer rxe1 198\.51\.100\.2 2001:db8:4791::2 198\.51\.100\.1 2001:db8:4791::1$`,
		`rxeveth1@\S+: <[^>]*\bUP\b[^>]*> mtu 9000 `,
		`rxeveth1\s+inet 198\.51\.100\.2/24 `,
		`rxeveth1\s+inet6 2001:db8:4791::2/64 scope global nodad`,
		`(?m)^ping 198\.51\.100\.1: ok$`,
		`(?m)^ping 2001:db8:4791::1: ok$`,
		`(?m)^bind 198\.51\.100\.2:4791: ok$`,
		`(?m)^bind \[2001:db8:4791::2\]:4791: ok$`,
		`(?m)^root bind 198\.51\.100\.1:4791: .*address already in use$`,
		`link rxe0/1 state ACTIVE physical_state LINK_UP netdev rxenet0`,
		`link rxe1/1 state ACTIVE physical_state LINK_UP netdev rxeveth0`,
		`rxeveth0@\S+: <[^>]*\bUP\b[^>]*> mtu 9000 `,
		`hca_id:\s+rxe1`,
		`state:\s+PORT_ACTIVE \(4\)`,
		`active_mtu:\s+4096 \(5\)`,
		`(?m)^rxe0 GID 1: 0000:0000:0000:0000:0000:ffff:c000:0201$`,
		// 88 bytes: BTH, DETH, 64 bytes of payload, ICRC; 0x64 is UD SEND ONLY.
		`(?m)^ud 198\.51\.100\.2: 88 bytes from 198\.51\.100\.1:\d+, opcode 0x64, dest QP 0x000099$`,
		`(?m)^ud 2001:db8:4791::2: 88 bytes from \[2001:db8:4791::1\]:\d+, opcode 0x64, dest QP 0x000099$`,
		`(?m)^ud 2001:db8:4791::2 plain: dropped, Udp6InCsumErrors \+1$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("the guest's output does not match %s", re)
		}
	}
	// How a test finds rxe1's GID index for an address: the sysfs entry
	// that holds it. ibv_devinfo -v must say the same.
	index := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^sysfs /sys/class/infiniband/rxe1/ports/1/gids/(\d+):(\S+)$`).FindAllStringSubmatch(r.stdout, -1) {
		index[m[2]] = m[1]
	}
	for _, g := range []struct{ sysfs, devinfo string }{
		{"0000:0000:0000:0000:0000:ffff:c633:6401", "::ffff:198.51.100.1"},
		{"2001:0db8:4791:0000:0000:0000:0000:0001", "2001:db8:4791::1"},
	} {
		i, ok := index[g.sysfs]
		if !ok {
			t.Errorf("rxe1's GID table has no %s (%s): %v", g.devinfo, g.sysfs, index)
			continue
		}
		t.Logf("rxe1: GID index %s = %s", i, g.devinfo)
		if re := `GID\[\s*` + i + `\]:\s+` + regexp.QuoteMeta(g.devinfo) + `, RoCE v2`; !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("ibv_devinfo -v -d rxe1 does not match %s", re)
		}
	}
	t.Run("capture", func(t *testing.T) {
		toolcheck.Require(t, "dumpcap", "apt-get install tshark")
		tshark := toolcheck.Require(t, "tshark", "apt-get install tshark")
		if !strings.Contains(r.stdout, "dumpcap: 0 0") {
			t.Fatalf("dumpcap in the guest did not capture two packets on each end:\n%s", r.stdout)
		}
		for _, f := range []string{"peer.pcapng", "kernel.pcapng"} {
			out, err := exec.Command(tshark, "-r", filepath.Join(dir, f)).CombinedOutput()
			if err != nil || !regexp.MustCompile(`198\.51\.100\.2 \S+ 198\.51\.100\.1 +ICMP .*Echo \(ping\) request`).Match(out) ||
				!regexp.MustCompile(`198\.51\.100\.1 \S+ 198\.51\.100\.2 +ICMP .*Echo \(ping\) reply`).Match(out) {
				t.Errorf("%s: %v\n%s", f, err, out)
			}
		}
	})
}

// TestNoPeerWireByDefault: without --peer the guest has rxe0 alone, so that
// a program's first two devices (vsh's A and B) are rxe0 in loopback.
func TestNoPeerWireByDefault(t *testing.T) {
	r := runLab(t, t.TempDir(), "", "run", "-timeout", "3m", "--", "sh", "-c",
		`ibv_devices; ls /sys/class/infiniband; ip -o link; ip netns list; env | grep -c '^VSH_LAB_PEER_'`)
	if r.status != 1 { // grep -c found no VSH_LAB_PEER_* variable
		t.Errorf("status %d, want 1 (no VSH_LAB_PEER_* variable)\nstdout: %s\nstderr: %s", r.status, r.stdout, r.stderr)
	}
	for _, no := range []string{"rxe1", "rxeveth", "vshpeer"} {
		if strings.Contains(r.stdout, no) {
			t.Errorf("the guest has %s without --peer:\n%s", no, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "rxe0") {
		t.Errorf("no rxe0:\n%s", r.stdout)
	}
}
