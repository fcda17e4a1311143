//go:build linux && cgo && ibverbs

package ibverbs

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"os"
	"os/exec"
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
					t.Logf("%s: ok: %s", name, lastLine(out))
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

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// interopPair runs server and client (argv without -p and host) on one
// port; the client is stopped soon after a failed server.
func interopPair(server, client []string, port int) (string, error) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 60*time.Second)
	defer cancel()
	p := []string{"-p", strconv.Itoa(port)}
	var sout, cout bytes.Buffer
	srv := exec.CommandContext(ctx, server[0], append(append([]string{}, server[1:]...), p...)...)
	srv.Stdout, srv.Stderr = &sout, &sout
	if err := srv.Start(); err != nil {
		return "", err
	}
	for deadline := time.Now().Add(30 * time.Second); !proctest.Listening(0, port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cctx, ccancel := stdcontext.WithCancel(ctx)
	defer ccancel()
	cli := exec.CommandContext(cctx, client[0], append(append(append([]string{}, client[1:]...), p...), "localhost")...)
	cli.Stdout, cli.Stderr = &cout, &cout
	if err := cli.Start(); err != nil {
		srv.Process.Kill()
		srv.Wait()
		return "", err
	}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Wait() }()
	cliErr := make(chan error, 1)
	go func() { cliErr <- cli.Wait() }()
	var serr, cerr error
	select {
	case serr = <-srvErr:
		if serr != nil {
			// A failed server leaves the client waiting for an answer.
			select {
			case cerr = <-cliErr:
			case <-time.After(2 * time.Second):
				ccancel()
				cerr = <-cliErr
			}
		} else {
			cerr = <-cliErr
		}
	case cerr = <-cliErr:
		if cerr != nil {
			select {
			case serr = <-srvErr:
			case <-time.After(2 * time.Second):
				srv.Process.Kill()
				serr = <-srvErr
			}
		} else {
			serr = <-srvErr
		}
	}
	out := "server:\n" + sout.String() + "client:\n" + cout.String()
	if serr != nil || cerr != nil {
		return out, fmt.Errorf("server: %v, client: %v", serr, cerr)
	}
	return cout.String(), nil
}
