package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs/sim"
)

func runArgs(argv ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), argv, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpAndErrors(t *testing.T) {
	tests := []struct {
		argv      []string
		code      int
		out, errs string
	}{
		{argv: []string{"pingpong", "--help"}, code: 0, out: "Usage: pingpong rc|uc|ud|srq|xsrq [options] [host]"},
		{argv: []string{"pingpong"}, code: 1, errs: "Usage: pingpong rc|uc|ud|srq|xsrq"},
		{argv: []string{"pingpong", "srq", "--help"}, code: 0, out: "-q, --num-qp=<num>"},
		{argv: []string{"pingpong", "ud", "-h"}, code: 0, out: "default 1024"},
		{argv: []string{"pingpong", "rc", "-h"}, code: 0, out: "exit status is 1"},
		{argv: []string{"pingpong", "rc", "-x"}, code: 1, errs: "pingpong rc: invalid option -- 'x'\nTry 'pingpong rc --help'."},
		{argv: []string{"/usr/bin/ibv_uc_pingpong", "-q", "3"}, code: 1, errs: "ibv_uc_pingpong uc: invalid option -- 'q'"},
		{argv: []string{"ibv_ud_pingpong", "--help"}, code: 0, out: "rdma-core's ibv_ud_pingpong"},
		{argv: []string{"pingpong", "rc", "-t"}, code: 1, errs: "-t (--ts): completion timestamps is not implemented"},
		{argv: []string{"pingpong", "rc", "--backend", "sim", "-d", "mlx5_0"}, code: 1, errs: "IB device mlx5_0 not found\npingpong rc: likely cause: the sim backend has: sim0"},
		{argv: []string{"pingpong", "rc", "--sim-addr", "localhost"}, code: 1, errs: "--sim-addr \"localhost\" is not an IP address"},
		{argv: []string{"pingpong", "rc", "--sim-addr=127.0.0.2:99"}, code: 1, errs: "uses port 4791"},
		{argv: []string{"pingpong", "rc", "--sim-addr", "127.0.0.2", "--backend", "ibverbs"}, code: 1, errs: "no meaning with --backend ibverbs"},
		{argv: []string{"pingpong", "rc", "--sim-addr", "10.254.254.254", "-p", "1"}, code: 1, errs: "cannot bind 10.254.254.254:4791"},
		{argv: []string{"pingpong", "rc", "--help"}, code: 0, out: "--sim-addr=<addr>"},
		{argv: []string{"pingpong", "xsrq", "--help"}, code: 0, out: "The\npingpong command turns XRC on in its simulator for xsrq (--backend sim)."},
		{argv: []string{"ibv_xsrq_pingpong", "-h"}, code: 0, out: "-c, --clients=<n>"},
		{argv: []string{"pingpong", "xsrq", "--backend", "sim", "-d", "mlx5_0"}, code: 1, errs: "IB device mlx5_0 not found\nFailed to open device\npingpong xsrq: likely cause: the sim backend has: sim0"},
		{argv: []string{"pingpong", "xsrq", "-c"}, code: 1, errs: "pingpong xsrq: option requires an argument -- 'c'\nTry 'pingpong xsrq --help'."},
	}
	for _, tc := range tests {
		code, out, errs := runArgs(tc.argv...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errs) {
			t.Errorf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", tc.argv, code, out, errs)
		}
	}
}

func TestBackendChoice(t *testing.T) {
	p, err := openBackend("sim", "", false)
	if err != nil {
		t.Skipf("no UDP link here: %v", err)
	}
	f, ok := p.(*sim.Fabric)
	if !ok || !f.UDPAddr().Addr().IsLoopback() {
		t.Fatalf("sim: %T on %v", p, f.UDPAddr())
	}
	p.Close()
	p, err = openBackend("", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "sim" && p.Name() != "ibverbs" {
		t.Errorf("default backend %q", p.Name())
	}
	p.Close()
	// --sim-addr alone means the simulator.
	if p, err = openBackend("", "127.0.0.77", false); err != nil || p.Name() != "sim" || p.(*sim.Fabric).UDPAddr().String() != "127.0.0.77:4791" {
		t.Errorf("--sim-addr 127.0.0.77: %v %v", p, err)
	}
	if p != nil {
		p.Close()
	}
	if _, err := openBackend("ibverbs", "", false); err != nil {
		code, _, errs := runArgs("pingpong", "rc", "--backend", "ibverbs")
		if code != 1 || !strings.Contains(errs, err.Error()) {
			t.Errorf("--backend ibverbs without the backend: exit %d, %s", code, errs)
		}
	}
}

// Two pingpong programs in one process, each with its own simulator on the
// UDP link (two processes, as far as the simulators know): they run
// against each other. The tests with the built binary are in
// twoproc_test.go.
func TestTwoSimulatorsOverUDP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	var wg sync.WaitGroup
	var sc, cc int
	var sout, serr, cout, cerr string
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc, sout, serr = runArgs("pingpong", "rc", "--backend=sim", "-g", "1", "-c", "-n", "50", "-p", port, "--timeout", "5s")
	}()
	for i := 0; ; i++ {
		time.Sleep(50 * time.Millisecond)
		cc, cout, cerr = runArgs("pingpong", "rc", "--backend=sim", "-g", "1", "-c", "-n", "50", "-p", port, "--timeout", "5s", "127.0.0.1")
		if !strings.Contains(cerr, "connection refused") || i > 100 {
			break
		}
	}
	wg.Wait()
	if strings.Contains(serr+cerr, "no UDP link here") || strings.Contains(serr+cerr, "cannot bind") {
		t.Skipf("no UDP link here: %s %s", serr, cerr)
	}
	for _, r := range []struct {
		code      int
		out, errs string
	}{{sc, sout, serr}, {cc, cout, cerr}} {
		if r.code != 0 || !strings.Contains(r.out, "  remote address: LID 0x0000, QPN 0x") ||
			!strings.Contains(r.out, "409600 bytes in ") || !strings.Contains(r.out, "50 iters in ") || r.errs != "" {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
		}
	}
}

// A run that stopped moving on the simulator says what its UDP link
// dropped first.
func TestLinkDiagnosis(t *testing.T) {
	tests := []struct {
		name string
		st   sim.UDPLinkStats
		want []string // substrings; none: ""
	}{
		{name: "nothing dropped", st: sim.UDPLinkStats{Peers: 1, Evicted: 2, IPv4IDs: 5}},
		{name: "socket overflow", st: sim.UDPLinkStats{QueueDrops: 7},
			want: []string{"the kernel dropped 7 datagram(s)", "UC and UD lose those messages"}},
		{name: "refused", st: sim.UDPLinkStats{Malformed: 1, BadICRC: 2, Refused: 3},
			want: []string{"dropped datagrams from the peer: 1 not RoCEv2 as rxe knows it, 2 with a wrong ICRC, 3 refused by the header checks"}},
		{name: "refused only", st: sim.UDPLinkStats{Refused: 1},
			want: []string{"from the peer: 1 refused by the header checks (no such QP"}},
		{name: "both", st: sim.UDPLinkStats{QueueDrops: 1, Refused: 1},
			want: []string{"the kernel dropped 1 datagram(s)", "; this side dropped datagrams from the peer: 1 refused"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := linkDiagnosis(tc.st)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("linkDiagnosis = %q, want \"\"", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("linkDiagnosis = %q, lacks %q", got, w)
				}
			}
		})
	}
}
