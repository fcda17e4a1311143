//go:build linux && cgo && ibverbs

package ibverbs

import (
	stdcontext "context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
)

// TestVshExchangeRXE drives one side of an RC ping-pong by hand from the
// shell — the built vsh --backend ibverbs ($VSH_RXE_VSH), fed one line at a
// time as a learner types them — against rdma-core's ibv_rc_pingpong -g 1
// -n 1 on the other side, both on rxe0: vsh as the client (exchange
// connect) and as the server (exchange listen, RTR/RTS, exchange reply). The
// modify_qp lines typed are the ones exchange printed.
func TestVshExchangeRXE(t *testing.T) {
	bin := vshOnRXE(t)
	cPP, err := exec.LookPath("ibv_rc_pingpong")
	if err != nil {
		t.Fatalf("ibv_rc_pingpong: %v (package ibverbs-utils)", err)
	}
	passed := 0
	for i, role := range []string{"client", "server"} {
		t.Run("vsh-"+role, func(t *testing.T) {
			port := 19800 + i
			if role == "client" {
				vshClient(t, bin, cPP, port)
			} else {
				vshServer(t, bin, cPP, port)
			}
			if !t.Failed() {
				passed++
			}
		})
	}
	summary := fmt.Sprintf("vsh exchange by hand against ibv_rc_pingpong on %s: %d of 2 directions passed", rxeDevice(), passed)
	t.Log(summary)
	fmt.Println("RXE " + summary)
}

func vshClient(t *testing.T, bin, cPP string, port int) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 90*time.Second)
	defer cancel()
	srv := proctest.Start(ctx, t, cPP, "-d", rxeDevice(), "-g", "1", "-n", "1", "-p", strconv.Itoa(port))
	for deadline := time.Now().Add(30 * time.Second); !proctest.Listening(0, port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	v := proctest.StartVsh(ctx, t, bin, "--backend", "ibverbs", "--plain")
	for _, l := range proctest.RCSetupLines(rxeDevice()) {
		v.Send(l)
	}
	v.Send(fmt.Sprintf("exchange connect 127.0.0.1 qp0 port=%d wait=30s", port))
	next := v.NextCommands(t, "Then the client sends first")
	for _, l := range next {
		v.Send(l)
	}
	v.Send("fill mr0 0x7b")
	v.Send("post_send qp0 mr=mr0 wr_id=2")
	v.Send("poll_cq cq0 n=2 wait=20s")
	vout, verr := v.Finish()
	sout, serr := srv.Wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (server):\n%s", vout, sout)
	proctest.CheckOneIteration(t, vout, verr, "ibv_rc_pingpong", sout, serr)
}

func vshServer(t *testing.T, bin, cPP string, port int) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 90*time.Second)
	defer cancel()
	v := proctest.StartVsh(ctx, t, bin, "--backend", "ibverbs", "--plain")
	for _, l := range proctest.RCSetupLines(rxeDevice()) {
		v.Send(l)
	}
	v.Send(fmt.Sprintf("exchange listen qp0 port=%d wait=30s", port))
	for deadline := time.Now().Add(30 * time.Second); !proctest.Listening(0, port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cli := proctest.Start(ctx, t, cPP, "-d", rxeDevice(), "-g", "1", "-n", "1", "-p", strconv.Itoa(port), "127.0.0.1")
	next := v.NextCommands(t, "exchange reply")
	for _, l := range next {
		v.Send(l)
	}
	v.Send("exchange reply wait=30s")
	v.Send("poll_cq cq0 n=1 wait=20s")
	v.Send("post_send qp0 mr=mr0 wr_id=2")
	v.Send("poll_cq cq0 n=1 wait=20s")
	vout, verr := v.Finish()
	cout, cerr := cli.Wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (client):\n%s", vout, cout)
	proctest.CheckOneIteration(t, vout, verr, "ibv_rc_pingpong", cout, cerr)
}

// vshOnRXE returns the vsh built with -tags ibverbs ($VSH_RXE_VSH) once
// rxe0 is there; without either the test is skipped, saying why.
func vshOnRXE(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("VSH_RXE_VSH")
	if bin == "" {
		t.Skip("set VSH_RXE_VSH to vsh built with -tags ibverbs (make test-rxe does, inside the lab guest)")
	}
	needRXE(t).Close()
	return bin
}
