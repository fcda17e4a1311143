package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
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

// udpSetupLines make an RC QP in INIT with a receive posted, as pingpong
// has before the exchange (its defaults: -s 4096, pkey 0, port 1, access
// 0); mr0 sends, mr1 receives.
func udpSetupLines() []string {
	return []string{
		"open_device A",
		"alloc_pd ctx0",
		"reg_mr pd0 length=4096 access=local_write",
		"reg_mr pd0 length=4096 access=local_write",
		"create_cq ctx0 cqe=16",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"modify_qp qp0 state=init pkey_index=0 port=1 access=0",
		"post_recv qp0 mr=mr1 wr_id=1",
	}
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
	srv := startUDPProg(ctx, t, b.pingpong, "rc", "-g", "1", "-n", "1", "-c", "--sim-addr", ppAddr, "-p", strconv.Itoa(port))
	v := startUDPVsh(ctx, t, b.vsh, vshAddr)
	v.send(udpSetupLines()...)
	v.send(patternLines()...)
	// exchange connect retries while the server is not listening yet.
	v.send(fmt.Sprintf("exchange connect 127.0.0.1 qp0 port=%d gid_index=1 wait=20s", port))
	v.send(v.nextCommands(t, "Then the client sends first")...)
	v.send("post_send qp0 mr=mr0 wr_id=2")
	v.pollBoth(t)
	sout, serr := srv.wait() // before vsh goes: its device ACKs the server's answer
	vout, verr := v.finish()
	t.Logf("%s; vsh:\n%s\npingpong (server):\n%s", time.Since(t0).Round(time.Millisecond), vout, sout)
	udpCheck(t, vout, verr, sout, serr)
}

func udpVshServer(t *testing.T, b udpBins, ppAddr, vshAddr string) {
	ctx, cancel := context.WithTimeout(context.Background(), udpDeadline)
	defer cancel()
	port := freeTCPPort(t)
	t0 := time.Now()
	v := startUDPVsh(ctx, t, b.vsh, vshAddr)
	v.send(udpSetupLines()...)
	v.send(patternLines()...) // the answer, as the client's -c expects it
	v.send(fmt.Sprintf("exchange listen qp0 port=%d gid_index=1 wait=20s", port))
	args := []string{"rc", "-g", "1", "-n", "1", "-c", "--sim-addr", ppAddr, "-p", strconv.Itoa(port), "127.0.0.1"}
	var cli *udpProg
	for {
		// vsh may not listen yet: start the client again while refused.
		cli = startUDPProg(ctx, t, b.pingpong, args...)
		if cli.waitUntil(func() bool { return strings.Contains(v.out.String(), "a client connected") }) {
			break
		}
		if out, _ := cli.wait(); !strings.Contains(out, "connection refused") || ctx.Err() != nil {
			t.Fatalf("pingpong (client):\n%s\nvsh:\n%s", out, v.out.String())
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	v.send(v.nextCommands(t, "exchange reply")...)
	v.send("exchange reply wait=20s")
	v.pollFor(t, "IBV_WC_RECV")
	v.send("post_send qp0 mr=mr0 wr_id=2")
	v.pollFor(t, "IBV_WC_SEND")
	cout, cerr := cli.wait()
	vout, verr := v.finish()
	t.Logf("%s; vsh:\n%s\npingpong (client):\n%s", time.Since(t0).Round(time.Millisecond), vout, cout)
	udpCheck(t, vout, verr, cout, cerr)
}

func udpCheck(t *testing.T, vout string, verr error, pout string, perr error) {
	t.Helper()
	if verr != nil {
		t.Errorf("vsh: %v", verr)
	}
	if perr != nil {
		t.Errorf("pingpong: %v", perr)
	}
	for _, want := range []string{"IBV_WC_SEND", "IBV_WC_RECV"} {
		if !regexp.MustCompile(`(?m)^\s+\d+\s+IBV_WC_SUCCESS\s+` + want + `\s`).MatchString(vout) {
			t.Errorf("vsh polled no successful %s", want)
		}
	}
	if !regexp.MustCompile(`(?m)^1 iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter$`).MatchString(pout) {
		t.Errorf("pingpong did not finish its iteration")
	}
}

// udpBuf is a strings.Builder a process writes while the test reads it.
type udpBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *udpBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *udpBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// udpProg is pingpong running in the background, stdout and stderr
// collected together.
type udpProg struct {
	cmd  *exec.Cmd
	out  *udpBuf
	done chan error
}

func startUDPProg(ctx context.Context, t *testing.T, bin string, args ...string) *udpProg {
	t.Helper()
	p := &udpProg{out: &udpBuf{}, done: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.WaitDelay = time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done; p.done <- nil })
	return p
}

// wait waits for the program to exit (it is killed at the deadline).
func (p *udpProg) wait() (string, error) {
	err := <-p.done
	p.done <- err
	return p.out.String(), err
}

// waitUntil waits until cond holds (true) or the program exited (false);
// it is checked every 10ms, and at the deadline the program is killed.
func (p *udpProg) waitUntil(cond func() bool) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case err := <-p.done:
			p.done <- err
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// udpVsh is vsh reading commands from a pipe, as from a learner.
type udpVsh struct {
	ctx   context.Context
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	out   *udpBuf
	done  chan error
}

func startUDPVsh(ctx context.Context, t *testing.T, bin, addr string) *udpVsh {
	t.Helper()
	v := &udpVsh{ctx: ctx, lines: make(chan string, 4096), out: &udpBuf{}, done: make(chan error, 1)}
	v.cmd = exec.CommandContext(ctx, bin, "--plain", "--sim-addr", addr)
	v.cmd.WaitDelay = time.Second
	var err error
	if v.in, err = v.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	v.cmd.Stderr = v.out
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l := sc.Text()
			v.out.Write([]byte(l + "\n"))
			select {
			case v.lines <- l:
			default: // nobody reads any more
			}
		}
		close(v.lines)
		v.done <- v.cmd.Wait()
	}()
	t.Cleanup(func() { v.cmd.Process.Kill(); v.finish() })
	return v
}

func (v *udpVsh) send(lines ...string) {
	for _, l := range lines {
		io.WriteString(v.in, l+"\n")
	}
}

// next returns vsh's next line of output; it fails the test when vsh ends
// or prints nothing more before the deadline.
func (v *udpVsh) next(t *testing.T, waitingFor string) string {
	t.Helper()
	select {
	case l, ok := <-v.lines:
		if !ok {
			t.Fatalf("vsh ended before printing %s:\n%s", waitingFor, v.out.String())
		}
		return l
	case <-v.ctx.Done():
		t.Fatalf("vsh printed no %s within %s:\n%s", waitingFor, udpDeadline, v.out.String())
	}
	return ""
}

var udpNextRe = regexp.MustCompile(`^\s+(modify_qp qp0 state=rt[rs] .*)$`)

// nextCommands reads vsh's output up to the line containing until and
// returns the modify_qp commands exchange printed for RTR and RTS.
func (v *udpVsh) nextCommands(t *testing.T, until string) []string {
	t.Helper()
	var cmds []string
	for {
		l := v.next(t, strconv.Quote(until))
		if m := udpNextRe.FindStringSubmatch(l); m != nil {
			cmds = append(cmds, strings.TrimSpace(m[1]))
		}
		if strings.Contains(l, until) {
			if len(cmds) != 2 {
				t.Fatalf("exchange printed %d modify_qp lines, want RTR and RTS:\n%s", len(cmds), v.out.String())
			}
			return cmds
		}
	}
}

var (
	udpPollRe = regexp.MustCompile(`^\[\d+\] ibv_poll_cq\(cq0, \d+\) = (\d+)`)
	udpWCRe   = regexp.MustCompile(`^\s+\d+\s+(IBV_WC_\w+)\s+(IBV_WC_\w+)\s`)
)

// poll runs poll_cq cq0 n=N wait=10s once and returns the completions it
// printed, as "STATUS OPCODE". On the UDP link wait= waits in real time for
// the peer's packets (verbs.RealTimeClock), so one poll must see them.
func (v *udpVsh) poll(t *testing.T, n int) []string {
	t.Helper()
	v.send(fmt.Sprintf("poll_cq cq0 n=%d wait=10s", n))
	var k int
	for {
		m := udpPollRe.FindStringSubmatch(v.next(t, "ibv_poll_cq's result"))
		if m != nil {
			k, _ = strconv.Atoi(m[1])
			break
		}
	}
	var wcs []string
	for len(wcs) < k {
		if m := udpWCRe.FindStringSubmatch(v.next(t, "a completion")); m != nil {
			wcs = append(wcs, m[1]+" "+m[2])
		}
	}
	return wcs
}

// pollBoth polls until both the send and the receive completed; a poll
// whose wait= runs out with nothing fails the test.
func (v *udpVsh) pollBoth(t *testing.T) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < 2 && v.ctx.Err() == nil {
		wcs := v.poll(t, 2-len(seen))
		if len(wcs) == 0 {
			t.Fatalf("poll_cq wait=10s came back empty on the UDP link:\n%s", v.out.String())
		}
		for _, wc := range wcs {
			if !strings.HasPrefix(wc, "IBV_WC_SUCCESS ") {
				t.Fatalf("vsh polled %s:\n%s", wc, v.out.String())
			}
			seen[wc] = true
		}
	}
}

// pollFor polls once for a completion of opcode; poll_cq wait= must wait
// in real time for the peer's packet.
func (v *udpVsh) pollFor(t *testing.T, opcode string) {
	t.Helper()
	for v.ctx.Err() == nil {
		wcs := v.poll(t, 1)
		if len(wcs) == 0 {
			t.Fatalf("poll_cq wait=10s came back empty on the UDP link:\n%s", v.out.String())
		}
		for _, wc := range wcs {
			if wc != "IBV_WC_SUCCESS "+opcode {
				t.Fatalf("vsh polled %s, want IBV_WC_SUCCESS %s:\n%s", wc, opcode, v.out.String())
			}
			return
		}
	}
}

// finish ends vsh's input and waits for it to run the rest and exit (it
// is killed at the deadline).
func (v *udpVsh) finish() (string, error) {
	v.in.Close()
	go func() {
		for range v.lines {
		}
	}()
	err := <-v.done
	v.done <- err
	return v.out.String(), err
}
