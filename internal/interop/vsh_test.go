package interop

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
)

// TestVshByHand drives one side of an RC ping-pong by hand from vsh on the
// simulator (vsh --sim-addr), fed one line at a
// time as a learner types them, against rdma-core's ibv_rc_pingpong -n 1
// on kernel rxe1: vsh as the client (exchange connect) and as the server
// (exchange listen, RTR/RTS, exchange reply), over IPv6 and IPv4 GIDs. The
// modify_qp lines typed are the ones exchange printed.
func TestVshByHand(t *testing.T) {
	w := needWire(t)
	if w.vsh == "" {
		t.Fatal("set VSH_RXE_SIM_VSH to cmd/vsh (make test-interop does)")
	}
	passed, n := 0, 0
	for i, fam := range w.families() {
		for j, role := range []string{"client", "server"} {
			n++
			t.Run(fam.name+"/vsh-"+role, func(t *testing.T) {
				port := 19900 + 2*i + j
				if role == "client" {
					w.vshClient(t, fam, port)
				} else {
					w.vshServer(t, fam, port)
				}
				if !t.Failed() {
					passed++
				}
			})
		}
	}
	fmt.Printf("RXE↔SIM vsh by hand against ibv_rc_pingpong on %s: %d of %d passed\n", w.dev, passed, n)
}

func (w *labWire) startVsh(ctx context.Context, t *testing.T, fam family) *proctest.Vsh {
	return proctest.StartVsh(ctx, t, w.vsh, "--sim-addr", fam.simAddr.String(), "--plain")
}

func (w *labWire) vshClient(t *testing.T, fam family, port int) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := proctest.Start(ctx, t, "ibv_rc_pingpong", "-d", w.dev, "-g", strconv.Itoa(fam.kernelGID), "-n", "1", "-p", strconv.Itoa(port))
	waitListen(t, srv.Cmd.Process.Pid, port)
	v := w.startVsh(ctx, t, fam)
	v.Send(proctest.RCSetupLines("sim0")...)
	v.Send(fmt.Sprintf("exchange connect %s qp0 port=%d wait=30s", w.sim4, port)) // the server is in this namespace too
	v.Send(v.NextCommands(t, "Then the client sends first")...)
	v.Send("fill mr0 0x7b", "post_send qp0 mr=mr0 wr_id=2", "poll_cq cq0 n=2 wait=20s")
	vout, verr := v.Finish()
	sout, serr := srv.Wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (server):\n%s", vout, sout)
	proctest.CheckOneIteration(t, vout, verr, "ibv_rc_pingpong", sout, serr)
}

func (w *labWire) vshServer(t *testing.T, fam family, port int) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	v := w.startVsh(ctx, t, fam)
	v.Send(proctest.RCSetupLines("sim0")...)
	v.Send(fmt.Sprintf("exchange listen qp0 port=%d wait=30s", port))
	waitListen(t, v.Pid(), port)
	cli := proctest.Start(ctx, t, "ibv_rc_pingpong", "-d", w.dev, "-g", strconv.Itoa(fam.kernelGID), "-n", "1", "-p", strconv.Itoa(port), w.sim4.String())
	v.Send(v.NextCommands(t, "exchange reply")...)
	v.Send("exchange reply wait=30s", "poll_cq cq0 n=1 wait=20s", "post_send qp0 mr=mr0 wr_id=2", "poll_cq cq0 n=1 wait=20s")
	vout, verr := v.Finish()
	cout, cerr := cli.Wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (client):\n%s", vout, cout)
	proctest.CheckOneIteration(t, vout, verr, "ibv_rc_pingpong", cout, cerr)
}

func waitListen(t *testing.T, pid, port int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !proctest.Listening(pid, port); {
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on TCP %d after 30 s", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
