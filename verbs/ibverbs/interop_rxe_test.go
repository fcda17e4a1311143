//go:build linux && cgo && ibverbs

package ibverbs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
)

// knownInterop is a transport whose interop with rdma-core's program fails
// on rxe0: why, and a text the failing pair's output must contain, so that
// it fails for that reason and no other.
type knownInterop struct{ why, symptom string }

// rxeKnownInterop lists the ping-pong transports whose interop with
// rdma-core's program fails on rxe0; TestInteropRXE asserts that they still
// fail, in both directions and for the reason given, so that the list
// cannot rot. The goal is an empty list.
var rxeKnownInterop = map[string]knownInterop{}

// TestInteropRXE runs the Go ping-pongs (cmd/pingpong on this backend,
// $VSH_RXE_PINGPONG) against rdma-core's ibv_rc/uc/ud/srq_pingpong on rxe0,
// ours as server and as client, with -g 1 -c, at several sizes.
func TestInteropRXE(t *testing.T) {
	goPP := os.Getenv("VSH_RXE_PINGPONG")
	if goPP == "" {
		t.Skip("set VSH_RXE_PINGPONG to the Go pingpong binary (make test-rxe does, inside the lab guest)")
	}
	needRXE(t).Close()
	iters := "100"
	port := 19500
	pairs, passed, known := 0, 0, 0
	for _, tr := range []struct {
		name  string
		sizes []int
	}{{"rc", []int{64, 4096, 65536}}, {"uc", []int{64, 4096}}, {"ud", []int{64, 1024}}, {"srq", []int{64, 4096}}} {
		cPP, err := exec.LookPath("ibv_" + tr.name + "_pingpong")
		if err != nil {
			t.Fatalf("ibv_%s_pingpong: %v (package ibverbs-utils)", tr.name, err)
		}
		kn, isKnown := rxeKnownInterop[tr.name]
		for _, size := range tr.sizes {
			common := []string{"-d", rxeDevice(), "-g", "1", "-c", "-s", strconv.Itoa(size), "-n", iters}
			goCmd := append([]string{goPP, tr.name, "--backend", "ibverbs"}, common...)
			cCmd := append([]string{cPP}, common...)
			for _, dir := range []struct {
				label          string
				server, client []string
			}{{"Go server, C client", goCmd, cCmd}, {"C server, Go client", cCmd, goCmd}} {
				port++
				pairs++
				name := fmt.Sprintf("%s -s %d, %s", tr.name, size, dir.label)
				out, err := interopPair(dir.server, dir.client, port)
				switch {
				case err == nil && isKnown:
					t.Errorf("%s: passed, but rxeKnownInterop lists %s (%s): remove it from the list", name, tr.name, kn.why)
				case err == nil:
					passed++
					t.Logf("%s: ok: %s", name, proctest.LastLine(out))
				case isKnown && strings.Contains(out, kn.symptom):
					known++
					t.Logf("%s: KNOWN DIFFERENCE (%s): %v", name, kn.why, err)
				default:
					t.Errorf("%s: %v\n%s", name, err, out)
				}
			}
		}
	}
	summary := fmt.Sprintf("interop on %s: %d of %d ping-pong pairs passed, %d known differences (%s)", rxeDevice(), passed, pairs, known, knownInteropNames())
	t.Log(summary)
	fmt.Println("RXE " + summary)
}

func knownInteropNames() string {
	var n []string
	for k := range rxeKnownInterop {
		n = append(n, k)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// interopPair runs server and client (argv without -p and host) on one
// port: on failure it returns both outputs, else the client's.
func interopPair(server, client []string, port int) (string, error) {
	p := []string{"-p", strconv.Itoa(port)}
	sout, cout, err := proctest.RunPair(append(slices.Clone(server), p...), append(append(slices.Clone(client), p...), "localhost"),
		port, 60*time.Second)
	if err != nil {
		return "server:\n" + sout + "client:\n" + cout, err
	}
	return cout, nil
}

// TestXSRQFailsAsRdmaCoreRXE runs pingpong xsrq (on this backend) and
// rdma-core's ibv_xsrq_pingpong on rxe0, which has no XRC: both must stop
// with the same first line, "Couldn't Open the XRC Domain 95", and exit 1;
// ours then says why.
func TestXSRQFailsAsRdmaCoreRXE(t *testing.T) {
	goPP := os.Getenv("VSH_RXE_PINGPONG")
	if goPP == "" {
		t.Skip("set VSH_RXE_PINGPONG to the Go pingpong binary (make test-rxe does, inside the lab guest)")
	}
	needRXE(t).Close()
	cPP, err := exec.LookPath("ibv_xsrq_pingpong")
	if err != nil {
		t.Fatalf("ibv_xsrq_pingpong: %v (package ibverbs-utils)", err)
	}
	const want = "Couldn't Open the XRC Domain 95"
	for _, args := range [][]string{
		{cPP, "-d", rxeDevice(), "-g", "1", "-p", "19600"},
		{goPP, "xsrq", "--backend", "ibverbs", "-d", rxeDevice(), "-g", "1", "-p", "19601"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		done := make(chan struct{})
		timer := time.AfterFunc(20*time.Second, func() {
			select {
			case <-done:
			default:
				_ = cmd.Process.Kill()
			}
		})
		out, err := cmd.CombinedOutput()
		close(done)
		timer.Stop()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: %v; want exit status 1\n%s", strings.Join(args, " "), err, out)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if first != want {
			t.Errorf("%s: first line %q; want %q\n%s", strings.Join(args, " "), first, want, out)
		}
		t.Logf("%s:\n%s", args[0], out)
	}
}
