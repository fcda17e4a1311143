package proctest

import (
	"bufio"
	"context"
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

// NextTimeout bounds how long Vsh.Next waits for one line when the
// context has no earlier deadline.
const NextTimeout = 60 * time.Second

// Buf is a strings.Builder a process writes while the test reads it.
type Buf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Prog is a program running in the background, its stdout and stderr
// collected together in Out.
type Prog struct {
	Cmd  *exec.Cmd
	Out  *Buf
	done chan error
}

// Start starts name with args. It is killed when ctx ends or the test
// finishes.
func Start(ctx context.Context, t testing.TB, name string, args ...string) *Prog {
	t.Helper()
	p := &Prog{Out: &Buf{}, done: make(chan error, 1)}
	p.Cmd = exec.CommandContext(ctx, name, args...)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	p.Cmd.WaitDelay = time.Second
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.Cmd.Wait() }()
	t.Cleanup(func() { p.Cmd.Process.Kill(); p.Wait() })
	return p
}

// Wait waits for the program to exit and returns its output; it may be
// called again.
func (p *Prog) Wait() (string, error) {
	err := <-p.done
	p.done <- err
	return p.Out.String(), err
}

// WaitUntil waits until cond holds (true) or the program exited (false);
// cond is checked every 10ms.
func (p *Prog) WaitUntil(cond func() bool) bool {
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

// Vsh is vsh reading commands from a pipe, as from a learner: the test
// sends lines and reads vsh's output line by line. Out holds all of it,
// stdout and stderr.
type Vsh struct {
	Out   *Buf
	ctx   context.Context
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	done  chan error
}

// StartVsh starts the vsh binary bin with args. It is killed when ctx ends
// or the test finishes.
func StartVsh(ctx context.Context, t testing.TB, bin string, args ...string) *Vsh {
	t.Helper()
	v := &Vsh{ctx: ctx, lines: make(chan string, 4096), Out: &Buf{}, done: make(chan error, 1)}
	v.cmd = exec.CommandContext(ctx, bin, args...)
	v.cmd.WaitDelay = time.Second
	var err error
	if v.in, err = v.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	v.cmd.Stderr = v.Out
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l := sc.Text()
			v.Out.Write([]byte(l + "\n"))
			select {
			case v.lines <- l:
			default: // nobody reads any more
			}
		}
		close(v.lines)
		v.done <- v.cmd.Wait()
	}()
	t.Cleanup(func() { v.cmd.Process.Kill(); v.Finish() })
	return v
}

// Pid returns vsh's process ID.
func (v *Vsh) Pid() int { return v.cmd.Process.Pid }

// Send types lines into vsh.
func (v *Vsh) Send(lines ...string) {
	for _, l := range lines {
		io.WriteString(v.in, l+"\n")
	}
}

// Next returns vsh's next line of output. It fails the test when vsh ends,
// or prints nothing more before the context ends or NextTimeout passes;
// waitingFor says what the test waits for.
func (v *Vsh) Next(t testing.TB, waitingFor string) string {
	t.Helper()
	timer := time.NewTimer(NextTimeout)
	defer timer.Stop()
	select {
	case l, ok := <-v.lines:
		if !ok {
			t.Fatalf("vsh ended before printing %s:\n%s", waitingFor, v.Out.String())
		}
		return l
	case <-v.ctx.Done():
		t.Fatalf("vsh printed no %s before the test's deadline:\n%s", waitingFor, v.Out.String())
	case <-timer.C:
		t.Fatalf("vsh printed no %s within %s:\n%s", waitingFor, NextTimeout, v.Out.String())
	}
	return ""
}

var modifyRe = regexp.MustCompile(`^\s+(modify_qp qp0 state=rt[rs] .*)$`)

// NextCommands reads vsh's output up to the line containing until and
// returns the two modify_qp commands (RTR, RTS) that exchange printed for
// the learner to type.
func (v *Vsh) NextCommands(t testing.TB, until string) []string {
	t.Helper()
	var cmds []string
	for {
		l := v.Next(t, strconv.Quote(until))
		if m := modifyRe.FindStringSubmatch(l); m != nil {
			cmds = append(cmds, strings.TrimSpace(m[1]))
		}
		if strings.Contains(l, until) {
			if len(cmds) != 2 {
				t.Fatalf("exchange printed %d modify_qp lines, want RTR and RTS:\n%s", len(cmds), v.Out.String())
			}
			return cmds
		}
	}
}

// Finish ends vsh's input, waits for it to run the rest and exit, and
// returns all it printed; it may be called again.
func (v *Vsh) Finish() (string, error) {
	v.in.Close()
	go func() {
		for range v.lines {
		}
	}()
	err := <-v.done
	v.done <- err
	return v.Out.String(), err
}

var (
	wcRe    = map[string]*regexp.Regexp{}
	itersRe = regexp.MustCompile(`(?m)^1 iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter$`)
)

func init() {
	for _, op := range []string{"IBV_WC_SEND", "IBV_WC_RECV"} {
		wcRe[op] = regexp.MustCompile(`(?m)^\s+\d+\s+IBV_WC_SUCCESS\s+` + op + `\s`)
	}
}

// CheckOneIteration checks one RC ping-pong iteration of vsh, driven by
// hand, against a ping-pong program (peer names it): both exited cleanly,
// vsh polled a successful send and receive, and the peer printed rdma-core's
// "1 iters in ... usec/iter" line.
func CheckOneIteration(t testing.TB, vout string, verr error, peer, pout string, perr error) {
	t.Helper()
	if verr != nil {
		t.Errorf("vsh: %v", verr)
	}
	if perr != nil {
		t.Errorf("%s: %v", peer, perr)
	}
	for _, op := range []string{"IBV_WC_SEND", "IBV_WC_RECV"} {
		if !wcRe[op].MatchString(vout) {
			t.Errorf("vsh polled no successful %s", op)
		}
	}
	if !itersRe.MatchString(pout) {
		t.Errorf("%s did not finish its iteration", peer)
	}
}

// RCSetupLines are the vsh commands that make an RC QP in INIT on device
// with a receive posted, as rdma-core's ping-pongs have before the
// exchange (-s 4096, pkey 0, port 1, access 0): mr0 sends, mr1 receives.
func RCSetupLines(device string) []string {
	return []string{
		"open_device " + device,
		"alloc_pd ctx0",
		"reg_mr pd0 length=4096 access=local_write",
		"reg_mr pd0 length=4096 access=local_write",
		"create_cq ctx0 cqe=16",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"modify_qp qp0 state=init pkey_index=0 port=1 access=0",
		"post_recv qp0 mr=mr1 wr_id=1",
	}
}

// Listening reports whether TCP port is in the LISTEN state in the network
// namespace of process pid (0: this process's).
func Listening(pid, port int) bool {
	dir := "/proc/net"
	if pid != 0 {
		dir = fmt.Sprintf("/proc/%d/net", pid)
	}
	want := fmt.Sprintf(":%04X ", port)
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(dir + "/" + f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			// local_address is field 1, st (0A = LISTEN) field 3.
			if len(fields) > 3 && strings.HasSuffix(fields[1]+" ", want) && fields[3] == "0A" {
				return true
			}
		}
	}
	return false
}
