//go:build linux && cgo && ibverbs

package ibverbs

import (
	stdcontext "context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/sweep"
	"github.com/vsh-rdma/vsh/verbs"
)

// TestSweepRXE runs bench's engine, package sweep, on rxe0 in wall time:
// SEND, WRITE and READ, bandwidth and latency, 64 B to 4 KiB, A and B on
// one device (loopback). The figures are reported, not asserted (the lab's
// guest is emulated and shared); what must hold is that every point measured
// a time, that virtual time is refused on real verbs, and that the sweep
// leaves no PD, CQ, QP or MR behind in the kernel (rdma resource show).
// With VSH_RXE_VSH it also runs the shell's bench command in the built vsh.
func TestSweepRXE(t *testing.T) {
	p := needRXE(t)
	defer p.Close()
	devs, err := p.Devices()
	if err != nil {
		t.Fatal(err)
	}
	var dev verbs.Device
	for _, d := range devs {
		if d.Name() == rxeDevice() {
			dev = d
		}
	}
	a, err := dev.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := dev.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	if _, err := sweep.Run(stdcontext.Background(), a, b, sweep.Config{MaxSize: 64}); err == nil ||
		!strings.Contains(err.Error(), "virtual time needs the simulator") {
		t.Errorf("a virtual-time sweep on real verbs = %v, want it refused", err)
	}

	before := rdmaResources(t)
	start := time.Now()
	res, err := sweep.Run(stdcontext.Background(), a, b, sweep.Config{Ops: sweep.Ops(), MinSize: 64, MaxSize: 4096,
		Iters: 200, LatIters: 50, Clock: sweep.Wall, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("sweep on %s: %v", rxeDevice(), err)
	}
	t.Logf("rdma resource show, %s, before and after the sweep: %s", rxeDevice(), before)
	if after := rdmaResources(t); after != before {
		t.Errorf("rdma resource show before the sweep: %q, after: %q; the sweep left objects behind", before, after)
	}
	if !res.Loopback || len(res.Series) != 6 {
		t.Errorf("loopback %v, %d series; want true, 6", res.Loopback, len(res.Series))
	}
	for _, s := range res.Series {
		var line []string
		for _, pt := range s.Points {
			if (s.Test == sweep.BW && pt.Elapsed <= 0) || (s.Test == sweep.Lat && pt.TMin <= 0) {
				t.Errorf("%s %d B: no time measured: %+v", s.Program(), pt.Size, pt)
			}
			if s.Test == sweep.BW {
				line = append(line, fmt.Sprintf("%s %.2f MiB/s %.4f Mpps", sweep.SizeLabel(pt.Size), pt.MiBps(), pt.Mpps()))
			} else {
				line = append(line, fmt.Sprintf("%s %.2f us", sweep.SizeLabel(pt.Size), pt.TTypical))
			}
		}
		t.Logf("%s on %s: %s", s.Program(), rxeDevice(), strings.Join(line, ", "))
	}
	summary := fmt.Sprintf("sweep (bench's engine) on %s: 6 programs, 64 B to 4 KiB, in %s", rxeDevice(), time.Since(start).Round(time.Millisecond))
	t.Log(summary)
	fmt.Println("RXE " + summary)

	bin := os.Getenv("VSH_RXE_VSH")
	if bin == "" {
		t.Log("VSH_RXE_VSH not set: the shell's bench command not run")
		return
	}
	script := t.TempDir() + "/bench.vsh"
	if err := os.WriteFile(script, []byte("bench op=write max=1k iters=100 lat_iters=20\n! bench op=write clock=virtual\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--backend", "ibverbs", "-f", script).CombinedOutput()
	if err != nil {
		t.Fatalf("vsh bench on %s: %v\n%s", rxeDevice(), err, out)
	}
	for _, want := range []string{"ib_write_bw:", "ib_write_lat:", "time: wall clock", "A and B are both " + rxeDevice(),
		"clock=virtual needs the simulator"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("vsh bench on %s: no %q in its output:\n%s", rxeDevice(), want, out)
		}
	}
}

// rdmaResources is the summary line of rdma resource show for the device:
// "pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 2 srq 0".
func rdmaResources(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("rdma", "resource", "show").CombinedOutput()
	if err != nil {
		t.Fatalf("rdma resource show: %v\n%s (package iproute2)", err, out)
	}
	re := regexp.MustCompile(`(?m)^\d+: ` + regexp.QuoteMeta(rxeDevice()) + `: (.*)$`)
	m := re.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("rdma resource show lists no %s:\n%s", rxeDevice(), out)
	}
	return strings.TrimSpace(m[1])
}
