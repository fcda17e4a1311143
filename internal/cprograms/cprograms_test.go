package cprograms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// envRun is the environment variable that turns the tests on (make test-c).
const envRun = "VSH_TEST_C"

// tally counts the program cases that ran and passed, for TestMain's line.
var tally struct {
	sync.Mutex
	ran, passed int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv(envRun) == "1" {
		tally.Lock()
		fmt.Printf("C programs on the simulator: %d of %d passed\n", tally.passed, tally.ran)
		if tally.passed != tally.ran && code == 0 {
			code = 1
		}
		tally.Unlock()
	}
	os.Exit(code)
}

// programCase makes t one program case: it skips unless VSH_TEST_C=1, and
// when it ends, counts as run (unless skipped) and as passed (unless
// failed).
func programCase(t *testing.T) {
	t.Helper()
	if os.Getenv(envRun) != "1" {
		t.Skipf("%s=1 runs the C programs on the simulator (make test-c)", envRun)
	}
	t.Cleanup(func() {
		if t.Skipped() {
			return
		}
		tally.Lock()
		defer tally.Unlock()
		tally.ran++
		if !t.Failed() {
			tally.passed++
		}
	})
}

// repoRoot is the repository's root: the nearest directory above the
// package's that holds go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s: run the tests inside the repository", dir)
		}
	}
}

// built returns the path of bin/NAME in the repository (make build makes
// it), after checking that it and bin/lib/libibverbs.so.1 are there.
func built(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(repoRoot(t), "bin")
	for _, f := range []string{name, "lib/libibverbs.so.1"} {
		if _, err := os.Stat(filepath.Join(bin, f)); err != nil {
			toolcheck.Missing(t, fmt.Sprintf("%s is not built: run make build (it needs cgo and libibverbs' headers: apt-get install libibverbs-dev)",
				filepath.Join(bin, f)))
		}
	}
	return filepath.Join(bin, name)
}

// debian returns the path of one of Debian's programs, from package pkg.
func debian(t *testing.T, prog, pkg string) string {
	t.Helper()
	return toolcheck.Require(t, prog, "apt-get install "+pkg)
}

// nextAddr numbers the loopback addresses handed out: each process of the
// run gets its own, 127.0.0.100 to 127.0.0.199 (clear of the addresses the
// repository's other tests use).
var nextAddr atomic.Int32

// simAddr returns a loopback address no other process of the run has, for
// --sim-addr.
func simAddr(t *testing.T) string {
	t.Helper()
	n := nextAddr.Add(1) - 1
	if n >= 100 {
		t.Fatalf("the run used up its 100 loopback addresses (127.0.0.100-199): give the cases fewer processes")
	}
	return fmt.Sprintf("127.0.0.%d", 100+n)
}

// nextPort numbers the TCP ports of the pairs' address exchanges.
var nextPort atomic.Int32

// tcpPort returns a TCP port for one pair's exchange (-p): its own, and
// free now.
func tcpPort(t *testing.T) int {
	t.Helper()
	for range 200 {
		p := 24100 + int(nextPort.Add(1))
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err == nil {
			l.Close()
			return p
		}
	}
	t.Fatal("no free TCP port from 24101 on")
	return 0
}

// pairs bounds how many pairs (or single programs) run at once: each
// process runs a simulator, and CI machines have 2 cores.
var pairs = make(chan struct{}, 2)

// parallel runs the rest of t beside other cases, at most cap(pairs) at once.
func parallel(t *testing.T) {
	t.Parallel()
	pairs <- struct{}{}
	t.Cleanup(func() { <-pairs })
}

// vshRun returns the argv of `vsh run --sim-addr addr [extra...] -- prog args...`.
func vshRun(vsh, addr string, extra []string, prog string, args ...string) []string {
	argv := append([]string{vsh, "run", "--sim-addr", addr}, extra...)
	return append(append(argv, "--", prog), args...)
}

// pairLimit is how long one pair may take; then both are killed.
const pairLimit = 2 * time.Minute

// runPair runs server and client (proctest.RunPair: the client once the
// server listens on port) and fails t with both sides' output when either
// fails; it returns both outputs.
func runPair(t *testing.T, server, client []string, port int) (sout, cout string) {
	t.Helper()
	t0 := time.Now()
	sout, cout, err := proctest.RunPair(server, client, port, pairLimit)
	if err != nil {
		t.Errorf("%v after %.1f s\n%s", err, time.Since(t0).Seconds(), sides(server, sout, client, cout))
	} else {
		t.Logf("both exited 0 in %.1f s", time.Since(t0).Seconds())
	}
	return sout, cout
}

// sides shows both sides of a pair: each command line and its output.
func sides(server []string, sout string, client []string, cout string) string {
	return fmt.Sprintf("server: %s\n%s\nclient: %s\n%s", strings.Join(server, " "), indent(sout), strings.Join(client, " "), indent(cout))
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// runOne runs argv to its end (killed after limit) and returns its output
// (standard output and error) and exit status; -1 when it did not exit.
func runOne(t *testing.T, argv []string, limit time.Duration) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("%s: still running after %s: killed\n%s", strings.Join(argv, " "), limit, indent(string(out)))
		return string(out), -1
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(argv, " "), err)
	}
	return string(out), 0
}
