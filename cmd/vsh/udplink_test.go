package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// TestVshAgainstPingpongUDP drives one side of an RC ping-pong by hand
// from the shell — the built vsh --sim-addr, fed one line at a time through
// a pipe as a learner types them — against the built pingpong rc -g 1 -n 1
// -c on the other side, each process's simulated device on its own
// loopback address of the simulator's UDP link: vsh as the client
// (exchange connect) and as the server (exchange listen, RTR/RTS, exchange
// reply). The modify_qp lines typed are the ones exchange printed. It is
// TestVshExchangeRXE (verbs/ibverbs) without the kernel: every process runs
// under a deadline and every wait is bounded, so nothing here can hang.
func TestVshAgainstPingpongUDP(t *testing.T) {
	dir := t.TempDir()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", dir+string(filepath.Separator),
		"github.com/vsh-rdma/vsh/cmd/vsh", "github.com/vsh-rdma/vsh/cmd/pingpong")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // the simulator is pure Go
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bins := udpBins{vsh: filepath.Join(dir, "vsh"), pingpong: filepath.Join(dir, "pingpong")}
	addrs := freeSimAddrs(t, 4)
	t.Run("vsh-client", func(t *testing.T) { udpVshClient(t, bins, addrs[0], addrs[1]) })
	t.Run("vsh-server", func(t *testing.T) { udpVshServer(t, bins, addrs[2], addrs[3]) })
}

type udpBins struct{ vsh, pingpong string }

// udpDeadline bounds each direction: every process is killed by then.
const udpDeadline = 30 * time.Second

// freeSimAddrs returns n loopback addresses whose UDP port 4791 is free,
// from 127.0.0.200 up (pingpong and vsh without --sim-addr take the first
// free one from 127.0.0.2, and TestTwoProcessesDefaultsAndAddresses in
// cmd/pingpong uses .250 and .251). It skips the test where no loopback
// address other than 127.0.0.1 can be bound.
func freeSimAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for i := 200; i < 250 && len(addrs) < n; i++ {
		ap := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(i)}), sim.UDPPort)
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(ap))
		if err != nil {
			if !errors.Is(err, syscall.EADDRINUSE) {
				t.Skipf("no UDP link here: %v", err)
			}
			continue
		}
		c.Close()
		addrs = append(addrs, ap.Addr().String())
	}
	if len(addrs) < n {
		t.Skipf("only %d free addresses from 127.0.0.200 to 127.0.0.249 on UDP port %d", len(addrs), sim.UDPPort)
	}
	return addrs
}

// freeTCPPort returns a TCP port nobody listens on (for the exchange).
func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// patternLines write -c's pattern into mr0: 0x7b everywhere but the first
// byte of each page, which is 0 (docs/pingpong.md, "-c").
func patternLines() []string {
	lines := []string{"fill mr0 0x7b"}
	for off := 0; off < 4096; off += os.Getpagesize() {
		lines = append(lines, fmt.Sprintf("fill mr0 0x00 offset=%d length=1", off))
	}
	return lines
}

func udpVshClient(t *testing.T, b udpBins, ppAddr, vshAddr string) {
	ctx, cancel := context.WithTimeout(context.Background(), udpDeadline)
	defer cancel()
	port := freeTCPPort(t)
	t0 := time.Now()
	srv := proctest.Start(ctx, t, b.pingpong, "rc", "-g", "1", "-n", "1", "-c", "--sim-addr", ppAddr, "-p", strconv.Itoa(port))
	v := proctest.StartVsh(ctx, t, b.vsh, "--plain", "--sim-addr", vshAddr)
	v.Send(proctest.RCSetupLines("A")...)
	v.Send(patternLines()...)
	// exchange connect retries while the server is not listening yet.
	v.Send(fmt.Sprintf("exchange connect 127.0.0.1 qp0 port=%d gid_index=1 wait=20s", port))
	v.Send(v.NextCommands(t, "Then the client sends first")...)
	v.Send("post_send qp0 mr=mr0 wr_id=2")
	udpPollBoth(ctx, t, v)
	sout, serr := srv.Wait() // before vsh goes: its device ACKs the server's answer
	vout, verr := v.Finish()
	t.Logf("%s; vsh:\n%s\npingpong (server):\n%s", time.Since(t0).Round(time.Millisecond), vout, sout)
	proctest.CheckOneIteration(t, vout, verr, "pingpong", sout, serr)
}

func udpVshServer(t *testing.T, b udpBins, ppAddr, vshAddr string) {
	ctx, cancel := context.WithTimeout(context.Background(), udpDeadline)
	defer cancel()
	port := freeTCPPort(t)
	t0 := time.Now()
	v := proctest.StartVsh(ctx, t, b.vsh, "--plain", "--sim-addr", vshAddr)
	v.Send(proctest.RCSetupLines("A")...)
	v.Send(patternLines()...) // the answer, as the client's -c expects it
	v.Send(fmt.Sprintf("exchange listen qp0 port=%d gid_index=1 wait=20s", port))
	args := []string{"rc", "-g", "1", "-n", "1", "-c", "--sim-addr", ppAddr, "-p", strconv.Itoa(port), "127.0.0.1"}
	var cli *proctest.Prog
	for {
		// vsh may not listen yet: start the client again while refused.
		cli = proctest.Start(ctx, t, b.pingpong, args...)
		if cli.WaitUntil(func() bool { return strings.Contains(v.Out.String(), "a client connected") }) {
			break
		}
		if out, _ := cli.Wait(); !strings.Contains(out, "connection refused") || ctx.Err() != nil {
			t.Fatalf("pingpong (client):\n%s\nvsh:\n%s", out, v.Out.String())
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	v.Send(v.NextCommands(t, "exchange reply")...)
	v.Send("exchange reply wait=20s")
	udpPollFor(ctx, t, v, "IBV_WC_RECV")
	v.Send("post_send qp0 mr=mr0 wr_id=2")
	udpPollFor(ctx, t, v, "IBV_WC_SEND")
	cout, cerr := cli.Wait()
	vout, verr := v.Finish()
	t.Logf("%s; vsh:\n%s\npingpong (client):\n%s", time.Since(t0).Round(time.Millisecond), vout, cout)
	proctest.CheckOneIteration(t, vout, verr, "pingpong", cout, cerr)
}

var (
	udpPollRe = regexp.MustCompile(`^\[\d+\] ibv_poll_cq\(cq0, \d+\) = (\d+)`)
	udpWCRe   = regexp.MustCompile(`^\s+\d+\s+(IBV_WC_\w+)\s+(IBV_WC_\w+)\s`)
)

// poll runs poll_cq cq0 n=N wait=10s once and returns the completions it
// printed, as "STATUS OPCODE". On the UDP link wait= waits in real time for
// the peer's packets (verbs.RealTimeClock), so one poll must see them.
func udpPoll(t *testing.T, v *proctest.Vsh, n int) []string {
	t.Helper()
	v.Send(fmt.Sprintf("poll_cq cq0 n=%d wait=10s", n))
	var k int
	for {
		m := udpPollRe.FindStringSubmatch(v.Next(t, "ibv_poll_cq's result"))
		if m != nil {
			k, _ = strconv.Atoi(m[1])
			break
		}
	}
	var wcs []string
	for len(wcs) < k {
		if m := udpWCRe.FindStringSubmatch(v.Next(t, "a completion")); m != nil {
			wcs = append(wcs, m[1]+" "+m[2])
		}
	}
	return wcs
}

// pollBoth polls until both the send and the receive completed; a poll
// whose wait= runs out with nothing fails the test.
func udpPollBoth(ctx context.Context, t *testing.T, v *proctest.Vsh) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < 2 && ctx.Err() == nil {
		wcs := udpPoll(t, v, 2-len(seen))
		if len(wcs) == 0 {
			t.Fatalf("poll_cq wait=10s came back empty on the UDP link:\n%s", v.Out.String())
		}
		for _, wc := range wcs {
			if !strings.HasPrefix(wc, "IBV_WC_SUCCESS ") {
				t.Fatalf("vsh polled %s:\n%s", wc, v.Out.String())
			}
			seen[wc] = true
		}
	}
}

// pollFor polls once for a completion of opcode; poll_cq wait= must wait
// in real time for the peer's packet.
func udpPollFor(ctx context.Context, t *testing.T, v *proctest.Vsh, opcode string) {
	t.Helper()
	for ctx.Err() == nil {
		wcs := udpPoll(t, v, 1)
		if len(wcs) == 0 {
			t.Fatalf("poll_cq wait=10s came back empty on the UDP link:\n%s", v.Out.String())
		}
		for _, wc := range wcs {
			if wc != "IBV_WC_SUCCESS "+opcode {
				t.Fatalf("vsh polled %s, want IBV_WC_SUCCESS %s:\n%s", wc, opcode, v.Out.String())
			}
			return
		}
	}
}
