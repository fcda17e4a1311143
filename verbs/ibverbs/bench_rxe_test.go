//go:build linux && cgo && ibverbs

package ibverbs

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
)

// TestBenchRXE compares the Go ping-pong (cmd/pingpong on this backend)
// with rdma-core's ibv_rc_pingpong on the same rxe device, in the same
// guest: for each message size, rounds of one C pair and one Go pair
// (server and client of the same kind), interleaved so that drift in the
// emulated machine hits both alike, then the medians. It reports the ratios
// and asserts nothing: under TCG the figures are noisy (make bench-rxe).
//
// $VSH_RXE_BENCH names the Go pingpong binary; $VSH_RXE_BENCH_ROUNDS the
// rounds per size (default 5). The sizes are 64 B, 4 KiB and 64 KiB.
func TestBenchRXE(t *testing.T) {
	goPP := os.Getenv("VSH_RXE_BENCH")
	if goPP == "" {
		t.Skip("set VSH_RXE_BENCH to the Go pingpong binary (make bench-rxe does, inside the lab guest)")
	}
	needRXE(t).Close()
	cPP, err := exec.LookPath("ibv_rc_pingpong")
	if err != nil {
		t.Fatalf("ibv_rc_pingpong: %v (package ibverbs-utils)", err)
	}
	rounds := 5
	if v, err := strconv.Atoi(os.Getenv("VSH_RXE_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	type result struct{ usec, mbit []float64 }
	sizes := []struct{ size, iters int }{{64, 5000}, {4096, 3000}, {65536, 500}}
	var report strings.Builder
	cs, _ := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	fmt.Fprintf(&report, "bench-rxe on %s (clocksource %s): rc ping-pong, %d interleaved rounds per size, client's figures: median [min–max]\n",
		rxeDevice(), strings.TrimSpace(string(cs)), rounds)
	fmt.Fprintf(&report, "%6s  %21s %21s %8s  %21s %21s %9s\n", "size", "C usec/iter", "Go usec/iter", "latency", "C Mbit/s", "Go Mbit/s", "bandwidth")
	port := 19000
	for _, sz := range sizes {
		res := map[string]*result{"C": {}, "Go": {}}
		for r := 0; r < rounds; r++ {
			for _, impl := range []string{"C", "Go"} {
				if r%2 == 1 { // alternate which goes first
					impl = map[string]string{"C": "Go", "Go": "C"}[impl]
				}
				bin, args := cPP, []string{}
				if impl == "Go" {
					bin, args = goPP, []string{"rc", "--backend", "ibverbs"}
				}
				args = append(args, "-d", rxeDevice(), "-g", "1", "-s", strconv.Itoa(sz.size), "-n", strconv.Itoa(sz.iters))
				port++
				usec, mbit, err := pingPongPair(bin, args, port)
				if err != nil {
					t.Fatalf("%s pair, size %d: %v", impl, sz.size, err)
				}
				res[impl].usec = append(res[impl].usec, usec)
				res[impl].mbit = append(res[impl].mbit, mbit)
			}
		}
		cu, gu := median(res["C"].usec), median(res["Go"].usec)
		cm, gm := median(res["C"].mbit), median(res["Go"].mbit)
		fmt.Fprintf(&report, "%6d  %21s %21s %7.2fx  %21s %21s %8.2fx\n", sz.size,
			spread(res["C"].usec), spread(res["Go"].usec), gu/cu, spread(res["C"].mbit), spread(res["Go"].mbit), gm/cm)
	}
	report.WriteString("latency = Go usec/iter ÷ C, of the medians (target ≤ 1.05); bandwidth = Go Mbit/s ÷ C (target ≥ 0.95); reported, not asserted\n")
	t.Log(report.String())
	fmt.Print(report.String())
}

var (
	reUsec = regexp.MustCompile(`iters in [0-9.]+ seconds = ([0-9.]+) usec/iter`)
	reMbit = regexp.MustCompile(`bytes in [0-9.]+ seconds = ([0-9.]+) Mbit/sec`)
)

// pingPongPair runs a server and a client of bin on one port and returns
// the client's usec/iter and Mbit/sec.
func pingPongPair(bin string, args []string, port int) (usec, mbit float64, err error) {
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 3*time.Minute)
	defer cancel()
	p := []string{"-p", strconv.Itoa(port)}
	var sout, cout bytes.Buffer
	srv := exec.CommandContext(ctx, bin, append(append([]string{}, args...), p...)...)
	srv.Stdout, srv.Stderr = &sout, &sout
	if err := srv.Start(); err != nil {
		return 0, 0, err
	}
	defer srv.Wait()
	// Wait until the server listens (connecting to find out would be
	// taken for the client).
	for deadline := time.Now().Add(30 * time.Second); !proctest.Listening(0, port) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cli := exec.CommandContext(ctx, bin, append(append(append([]string{}, args...), p...), "localhost")...)
	cli.Stdout, cli.Stderr = &cout, &cout
	if err := cli.Run(); err != nil {
		return 0, 0, fmt.Errorf("client: %v\n%s\nserver:\n%s", err, cout.String(), sout.String())
	}
	if err := srv.Wait(); err != nil {
		return 0, 0, fmt.Errorf("server: %v\n%s", err, sout.String())
	}
	u, m := reUsec.FindStringSubmatch(cout.String()), reMbit.FindStringSubmatch(cout.String())
	if u == nil || m == nil {
		return 0, 0, fmt.Errorf("no result lines in the client's output:\n%s", cout.String())
	}
	usec, _ = strconv.ParseFloat(u[1], 64)
	mbit, _ = strconv.ParseFloat(m[1], 64)
	return usec, mbit, nil
}

// spread is "median [min–max]".
func spread(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f [%.1f–%.1f]", median(v), slices.Min(v), slices.Max(v))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
