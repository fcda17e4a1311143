package shell

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sessionWithCQs starts a session on the simulator holding n CQs on one
// context, made through the shell as a learner's script would (repeat
// runs up to 10,000 commands a cell).
func sessionWithCQs(tb testing.TB, n int) *Shell {
	tb.Helper()
	sh := newTestShell(tb, 1, 1, true, nil)
	if _, err := sh.Exec("open_device A"); err != nil {
		tb.Fatal(err)
	}
	for made := 0; made < n; made += maxRepeat {
		k := min(maxRepeat, n-made)
		if _, err := sh.Exec(fmt.Sprintf("repeat %d create_cq ctx0 cqe=1", k)); err != nil {
			tb.Fatal(err)
		}
	}
	return sh
}

// teardown measures one teardown of a session holding n CQs, exit (Close,
// what quit leads to) or reset: the time it takes and the CPU time.
func teardown(tb testing.TB, how string, n int) (wall, cpu time.Duration) {
	sh := sessionWithCQs(tb, n)
	runtime.GC() // the garbage of making them is not teardown's
	c0, t0 := cpuTime(), time.Now()
	switch how {
	case "exit":
		if err := sh.Close(); err != nil {
			tb.Fatal(err)
		}
	case "reset":
		if _, err := sh.Exec("reset"); err != nil {
			tb.Fatal(err)
		}
	}
	wall, cpu = time.Since(t0), cpuTime()-c0
	if how == "reset" {
		sh.Close()
	}
	return wall, cpu
}

// TestTeardownLinear checks that the shell's bookkeeping is linear in the
// number of objects when they go: one by one (destroy_cq, in any order)
// and all at once (exit, reset, with QPs and a watch list too). The
// simulator's tests count its side. Work is counted, not timed:
// BenchmarkTeardown times it.
func TestTeardownLinear(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	for _, how := range []string{"exit", "reset"} {
		t.Run(how, func(t *testing.T) {
			sh := sessionWithCQs(t, n)
			cmds := []string{"alloc_pd ctx0", "repeat 1000 create_qp pd0 type=ud send_cq=cq{i} recv_cq=cq{i}", "watch cq0 qp0"}
			for i := n / 2; i < n; i += maxRepeat { // the newer half, oldest first
				cmds = append(cmds, fmt.Sprintf("repeat %d destroy_cq cq{i+%d}", min(maxRepeat, n-i), i))
			}
			for _, cmd := range cmds {
				if _, err := sh.Exec(cmd); err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
			}
			h, objects := sh.h, len(sh.h.byName)
			if want := n/2 + 1 + 1000 + 1; objects != want {
				t.Fatalf("%d objects before %s, want %d", objects, how, want)
			}
			switch how {
			case "exit":
				if err := sh.Close(); err != nil {
					t.Fatal(err)
				}
			case "reset":
				out, err := sh.Exec("reset")
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Count(out, ") = 0"); got != objects {
					t.Errorf("reset reported %d objects destroyed, want %d", got, objects)
				}
				defer sh.Close()
			}
			if len(h.byName) != 0 || len(h.all()) != 0 {
				t.Errorf("%d handles left after %s", len(h.byName), how)
			}
			if total := n + 1 + 1000 + 1; h.walked > 2*total {
				t.Errorf("%d objects made and gone walked %d handle slots, want at most %d: not linear", total, h.walked, 2*total)
			}
		})
	}
}

// BenchmarkTeardown measures exit and reset of sessions holding 100k and
// 200k CQs and reports the times, the CPU times and their ratios: about 2
// when teardown is linear in the number of objects, 4 when it is
// quadratic. Figures are reported, never asserted.
func BenchmarkTeardown(b *testing.B) {
	for _, how := range []string{"exit", "reset"} {
		b.Run(how, func(b *testing.B) {
			var w1, w2, c1, c2 time.Duration
			for b.Loop() {
				w, c := teardown(b, how, 100_000)
				w1, c1 = w1+w, c1+c
				w, c = teardown(b, how, 200_000)
				w2, c2 = w2+w, c2+c
			}
			b.ReportMetric(w1.Seconds()/float64(b.N), "s/100k-CQs")
			b.ReportMetric(w2.Seconds()/float64(b.N), "s/200k-CQs")
			b.ReportMetric(float64(w2)/float64(w1), "200k/100k")
			if c1 > 0 {
				b.ReportMetric(c1.Seconds()/float64(b.N), "cpu-s/100k-CQs")
				b.ReportMetric(c2.Seconds()/float64(b.N), "cpu-s/200k-CQs")
				b.ReportMetric(float64(c2)/float64(c1), "cpu-200k/100k")
			}
		})
	}
}

// BenchmarkTeardown1M is BenchmarkTeardown's exit and reset at a million
// CQs, the largest case (run it alone: -bench Teardown1M).
func BenchmarkTeardown1M(b *testing.B) {
	for _, how := range []string{"exit", "reset"} {
		b.Run(how, func(b *testing.B) {
			var wall, cpu time.Duration
			for b.Loop() {
				w, c := teardown(b, how, 1_000_000)
				wall, cpu = wall+w, cpu+c
			}
			b.ReportMetric(wall.Seconds()/float64(b.N), "s/1M-CQs")
			if cpu > 0 {
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/1M-CQs")
			}
		})
	}
}
