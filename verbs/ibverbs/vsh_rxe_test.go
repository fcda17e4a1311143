//go:build linux && cgo && ibverbs

package ibverbs

import (
	"bufio"
	stdcontext "context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestVshExchangeRXE drives one side of an RC ping-pong by hand from the
// shell — the built vsh --backend ibverbs ($VSH_RXE_VSH), fed one line at a
// time as a learner types them — against rdma-core's ibv_rc_pingpong -g 1
// -n 1 on the other side, both on rxe0: vsh as the client (exchange
// connect) and as the server (exchange listen, RTR/RTS, exchange reply). The
// modify_qp lines typed are the ones exchange printed.
func TestVshExchangeRXE(t *testing.T) {
	bin := os.Getenv("VSH_RXE_VSH")
	if bin == "" {
		t.Skip("set VSH_RXE_VSH to vsh built with -tags ibverbs (make test-rxe does, inside the lab guest)")
	}
	needRXE(t).Close()
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

// setupLines make an RC QP in INIT with a receive posted, as the programs
// have before the exchange.
func setupLines() []string {
	return []string{
		"open_device " + rxeDevice(),
		"alloc_pd ctx0",
		"reg_mr pd0 length=4096 access=local_write",
		"reg_mr pd0 length=4096 access=local_write",
		"create_cq ctx0 cqe=16",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"modify_qp qp0 state=init pkey_index=0 port=1 access=0",
		"post_recv qp0 mr=mr1 wr_id=1",
	}
}

func vshClient(t *testing.T, bin, cPP string, port int) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 90*time.Second)
	defer cancel()
	srv := startProg(ctx, t, cPP, "-d", rxeDevice(), "-g", "1", "-n", "1", "-p", strconv.Itoa(port))
	for deadline := time.Now().Add(30 * time.Second); !listening(port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	v := startVsh(ctx, t, bin)
	for _, l := range setupLines() {
		v.send(l)
	}
	v.send(fmt.Sprintf("exchange connect 127.0.0.1 qp0 port=%d wait=30s", port))
	next := v.nextCommands(t, "Then the client sends first")
	for _, l := range next {
		v.send(l)
	}
	v.send("fill mr0 0x7b")
	v.send("post_send qp0 mr=mr0 wr_id=2")
	v.send("poll_cq cq0 n=2 wait=20s")
	vout, verr := v.finish()
	sout, serr := srv.wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (server):\n%s", vout, sout)
	checkRun(t, vout, verr, sout, serr)
}

func vshServer(t *testing.T, bin, cPP string, port int) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 90*time.Second)
	defer cancel()
	v := startVsh(ctx, t, bin)
	for _, l := range setupLines() {
		v.send(l)
	}
	v.send(fmt.Sprintf("exchange listen qp0 port=%d wait=30s", port))
	for deadline := time.Now().Add(30 * time.Second); !listening(port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cli := startProg(ctx, t, cPP, "-d", rxeDevice(), "-g", "1", "-n", "1", "-p", strconv.Itoa(port), "127.0.0.1")
	next := v.nextCommands(t, "exchange reply")
	for _, l := range next {
		v.send(l)
	}
	v.send("exchange reply wait=30s")
	v.send("poll_cq cq0 n=1 wait=20s")
	v.send("post_send qp0 mr=mr0 wr_id=2")
	v.send("poll_cq cq0 n=1 wait=20s")
	vout, verr := v.finish()
	cout, cerr := cli.wait()
	t.Logf("vsh:\n%s\nibv_rc_pingpong (client):\n%s", vout, cout)
	checkRun(t, vout, verr, cout, cerr)
}

func checkRun(t *testing.T, vout string, verr error, pout string, perr error) {
	t.Helper()
	if verr != nil {
		t.Errorf("vsh: %v", verr)
	}
	if perr != nil {
		t.Errorf("ibv_rc_pingpong: %v", perr)
	}
	for _, want := range []string{"IBV_WC_SEND", "IBV_WC_RECV"} {
		if !regexp.MustCompile(`IBV_WC_SUCCESS\s+` + want).MatchString(vout) {
			t.Errorf("vsh polled no successful %s", want)
		}
	}
	if !strings.Contains(pout, "1 iters in") {
		t.Errorf("ibv_rc_pingpong did not finish its iteration")
	}
}

// prog is a program running in the background with its output collected.
type prog struct {
	cmd  *exec.Cmd
	out  *lockedBuf
	done chan error
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startProg(ctx stdcontext.Context, t *testing.T, name string, args ...string) *prog {
	t.Helper()
	p := &prog{out: &lockedBuf{}, done: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, name, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p
}

func (p *prog) wait() (string, error) {
	err := <-p.done
	return p.out.String(), err
}

// vshProc is vsh reading commands from a pipe, as from a learner.
type vshProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	out   *lockedBuf
	done  chan error
}

func startVsh(ctx stdcontext.Context, t *testing.T, bin string) *vshProc {
	t.Helper()
	v := &vshProc{t: t, lines: make(chan string, 1024), out: &lockedBuf{}, done: make(chan error, 1)}
	v.cmd = exec.CommandContext(ctx, bin, "--backend", "ibverbs", "--plain")
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
			default:
			}
		}
		close(v.lines)
		v.done <- v.cmd.Wait()
	}()
	return v
}

func (v *vshProc) send(line string) {
	io.WriteString(v.in, line+"\n")
}

var nextRe = regexp.MustCompile(`^\s+(modify_qp qp0 state=rt[rs] .*)$`)

// nextCommands reads vsh's output up to the line containing until and
// returns the modify_qp commands exchange printed for RTR and RTS.
func (v *vshProc) nextCommands(t *testing.T, until string) []string {
	t.Helper()
	var cmds []string
	timer := time.NewTimer(60 * time.Second)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-v.lines:
			if !ok {
				t.Fatalf("vsh ended before printing %q:\n%s", until, v.out.String())
			}
			if m := nextRe.FindStringSubmatch(l); m != nil {
				cmds = append(cmds, strings.TrimSpace(m[1]))
			}
			if strings.Contains(l, until) {
				if len(cmds) != 2 {
					t.Fatalf("exchange printed %d modify_qp lines, want RTR and RTS:\n%s", len(cmds), v.out.String())
				}
				return cmds
			}
		case <-timer.C:
			t.Fatalf("vsh printed no %q within 60s:\n%s", until, v.out.String())
		}
	}
}

// finish ends vsh's input and waits for it to run the rest and exit.
func (v *vshProc) finish() (string, error) {
	v.in.Close()
	go func() {
		for range v.lines {
		}
	}()
	err := <-v.done
	return v.out.String(), err
}
