//go:build lab

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// pathsScript runs ping-pongs on rxe0 under strace -f -y, which names the
// file behind every descriptor: rdma-core's ibv_rc_pingpong at two iteration
// counts, busy-polling and with completion events, and the vsh built for the
// test (when there is one) with two numbers of sends. docs/lab.md, "Control
// path and data path, counted", shows the same measurement.
const pathsScript = `#!/bin/sh
# paths.sh: system calls of ping-pongs on rxe0, counted by strace.
port=18600
pair() {
	tag=$1; shift
	port=$((port+1))
	strace -f -y -o $tag.server.st "$@" -p $port > $tag.server.out 2>&1 & spid=$!
	h=$(printf ':%04X ' $port)
	i=0
	until grep -q "$h" /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		i=$((i+1)); [ $i -gt 1200 ] && { echo "$tag: server did not listen"; break; }
		sleep 0.05
	done
	timeout 300 strace -f -y -o $tag.client.st "$@" -p $port localhost > $tag.client.out 2>&1; crc=$?
	wait $spid; src=$?
	echo "$tag server=$src client=$crc"
}
pair n50  ibv_rc_pingpong -d rxe0 -g 1 -n 50
pair n200 ibv_rc_pingpong -d rxe0 -g 1 -n 200
pair e200 ibv_rc_pingpong -d rxe0 -g 1 -n 200 -e
for k in 5 20; do
	[ -x ./vsh ] || break
	timeout 300 strace -f -y -o vsh$k.st ./vsh --backend ibverbs -f vsh$k.vsh > vsh$k.out 2>&1
	echo "vsh$k status=$?"
done
`

// vshPathsScript is one side sending k messages to itself on rxe0, then
// paths: k calls of ibv_post_send, k of ibv_post_recv, and polls.
func vshPathsScript(k int) string {
	return fmt.Sprintf(`open_device rxe0
alloc_pd ctx0
reg_mr pd0 length=4096 access=local_write
create_cq ctx0 cqe=256
create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0 max_send_wr=64 max_recv_wr=64
connect qp0 qp0
repeat %[1]d post_recv qp0 mr=mr0 length=64
repeat %[1]d post_send qp0 mr=mr0 length=64
poll_cq cq0 n=%[2]d wait=60s
paths
`, k, 2*k)
}

// sysCounts are the system calls of one strace -f -y file: all of them, and
// those on the uverbs device file and on event files, by name.
type sysCounts struct {
	total  int
	uverbs map[string]int // ioctl, write, ... whose first argument is /dev/infiniband/uverbsN
	events map[string]int // ... whose first argument is anon_inode:[infinibandevent]
}

var (
	straceCall = regexp.MustCompile(`^\d+\s+([a-z0-9_]+)\(`)
	straceFD   = regexp.MustCompile(`^\d+\s+([a-z0-9_]+)\(\d+<([^>]*)>`)
)

func readStrace(t *testing.T, path string) sysCounts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the guest left no strace output: %v", err)
	}
	defer f.Close()
	c := sysCounts{uverbs: map[string]int{}, events: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !straceCall.MatchString(l) { // "<... ioctl resumed>", "+++ exited with 0 +++"
			continue
		}
		c.total++
		m := straceFD.FindStringSubmatch(l)
		switch {
		case m == nil:
		case strings.HasPrefix(m[2], "/dev/infiniband/uverbs"):
			c.uverbs[m[1]]++
		case m[2] == "anon_inode:[infinibandevent]":
			c.events[m[1]]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPathsStrace proves what docs/lab.md and the lesson paths say about
// the control path and the data path on soft-RoCE (rdma-core 44,
// providers/rxe/rxe.c; Linux 6.1), by counting system calls on rxe0:
//
//   - each ibv_post_send is one write() on the uverbs device file (rxe's
//     doorbell, post_send_db), so those writes are exactly the iterations;
//   - the control path (open, alloc_pd, reg_mr, create_cq/qp, modify_qp, ...)
//     is ioctl() on the same file, and its count does not grow with the
//     iterations;
//   - ibv_post_recv and ibv_poll_cq make no system call: apart from the
//     doorbell writes, 200 iterations make as many system calls as 50;
//   - with completion events (-e) each ibv_get_cq_event is a read() on the
//     channel's event file and each re-arm (ibv_req_notify_cq) one more ioctl;
//   - vsh on the real backend rings the same doorbell, once per post_send,
//     and its paths command counts the calls that strace sees.
func TestPathsStrace(t *testing.T) {
	toolcheck.Require(t, "strace", "apt-get install strace (rxe-lab setup installs it)")
	dir := t.TempDir() // under /tmp: the guest's own /tmp must not hide it
	if err := os.WriteFile(filepath.Join(dir, "paths.sh"), []byte(pathsScript), 0o755); err != nil {
		t.Fatal(err)
	}
	vsh, why := buildVSH(dir)
	for _, k := range []int{5, 20} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("vsh%d.vsh", k)), []byte(vshPathsScript(k)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runLab(t, dir, "", "run", "-timeout", "15m", "--", "./paths.sh")
	t.Logf("guest output:\n%s", r.stdout)
	if r.status != 0 {
		t.Fatalf("paths.sh: status %d\nstderr: %s", r.status, r.stderr)
	}

	t.Run("ibv_rc_pingpong", func(t *testing.T) {
		for _, tag := range []string{"n50", "n200", "e200"} {
			if !strings.Contains(r.stdout, tag+" server=0 client=0") {
				t.Fatalf("ibv_rc_pingpong %s did not pass:\n%s", tag, r.stdout)
			}
		}
		for _, side := range []string{"server", "client"} {
			n50 := readStrace(t, filepath.Join(dir, "n50."+side+".st"))
			n200 := readStrace(t, filepath.Join(dir, "n200."+side+".st"))
			e200 := readStrace(t, filepath.Join(dir, "e200."+side+".st"))
			t.Logf("%s: -n 50: %d system calls, uverbs %v; -n 200: %d, uverbs %v; -n 200 -e: %d, uverbs %v, event file %v",
				side, n50.total, n50.uverbs, n200.total, n200.uverbs, e200.total, e200.uverbs, e200.events)
			for _, c := range []struct {
				name  string
				n     int
				count sysCounts
			}{{"-n 50", 50, n50}, {"-n 200", 200, n200}, {"-n 200 -e", 200, e200}} {
				if got := c.count.uverbs["write"]; got != c.n {
					t.Errorf("%s %s: %d write() on the uverbs file; want %d, one doorbell per ibv_post_send", side, c.name, got, c.n)
				}
				if got := c.count.uverbs["read"]; got != 0 {
					t.Errorf("%s %s: %d read() on the uverbs file; want none", side, c.name, got)
				}
			}
			if n50.uverbs["ioctl"] < 10 || n50.uverbs["ioctl"] != n200.uverbs["ioctl"] {
				t.Errorf("%s: %d ioctl() at -n 50, %d at -n 200; want the same control path (ten commands or more) at both",
					side, n50.uverbs["ioctl"], n200.uverbs["ioctl"])
			}
			// Apart from the doorbells, the loop makes no system call: post_recv and poll_cq stay in user space.
			rest50, rest200 := n50.total-n50.uverbs["write"], n200.total-n200.uverbs["write"]
			if d := rest200 - rest50; d < -20 || d > 20 {
				t.Errorf("%s: %d system calls besides the doorbells at -n 50, %d at -n 200; want about the same (polling makes none)",
					side, rest50, rest200)
			}
			reads := e200.events["read"]
			extra := e200.uverbs["ioctl"] - n200.uverbs["ioctl"]
			if reads == 0 || extra < reads || extra > reads+4 {
				t.Errorf("%s -e: %d read() on the event file and %d more ioctl() than without -e; "+
					"want one get_cq_event read per re-arm ioctl (plus creating the channel and the first arm)", side, reads, extra)
			}
		}
	})

	t.Run("vsh", func(t *testing.T) {
		if vsh == "" {
			toolcheck.Missing(t, why)
		}
		var ioctls []int
		for _, k := range []int{5, 20} {
			out, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("vsh%d.out", k)))
			if !strings.Contains(r.stdout, fmt.Sprintf("vsh%d status=0", k)) {
				t.Fatalf("vsh with %d sends failed:\n%s", k, out)
			}
			c := readStrace(t, filepath.Join(dir, fmt.Sprintf("vsh%d.st", k)))
			t.Logf("vsh, %d sends: %d system calls; uverbs %v", k, c.total, c.uverbs)
			if got := c.uverbs["write"]; got != k {
				t.Errorf("vsh, %d sends: %d write() on the uverbs file; want %d", k, got, k)
			}
			ioctls = append(ioctls, c.uverbs["ioctl"])
			// paths counted what strace saw.
			for _, want := range []string{
				fmt.Sprintf(`(?m)^\s+ibv_post_send\s+%d\s+%d\s+doorbell: write\(\)\s+doorbell: MMIO store$`, k, k),
				fmt.Sprintf(`(?m)^\s+ibv_post_recv\s+%d\s+%d\s+user space\s+user space$`, k, k),
				`(?m)^\s+ibv_poll_cq\s+\d+\s+-\s+user space\s+user space$`,
			} {
				if !regexp.MustCompile(want).Match(out) {
					t.Errorf("vsh, %d sends: paths does not match %s:\n%s", k, want, out)
				}
			}
		}
		if ioctls[0] != ioctls[1] {
			t.Errorf("vsh: %d ioctl() with 5 sends, %d with 20; want the same (post_recv and poll_cq make none)", ioctls[0], ioctls[1])
		}
	})
}

// buildVSH builds vsh with the ibverbs backend into dir. When it cannot (no
// cgo compiler or no libibverbs-dev: rxe-lab setup installs both) it returns
// "" and why.
func buildVSH(dir string) (path, why string) {
	bin := filepath.Join(dir, "vsh")
	cmd := exec.Command("go", "build", "-tags", "ibverbs", "-o", bin, "github.com/vsh-rdma/vsh/cmd/vsh")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("building vsh with the ibverbs backend: %v\n%s", err, out)
	}
	return bin, ""
}
