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
		{argv: []string{"pingpong", "--help"}, code: 0, out: "Usage: pingpong rc|uc|ud|srq [options] [host]"},
		{argv: []string{"pingpong"}, code: 1, errs: "Usage: pingpong rc|uc|ud|srq"},
		{argv: []string{"pingpong", "srq", "--help"}, code: 0, out: "-q, --num-qp=<num>"},
		{argv: []string{"pingpong", "ud", "-h"}, code: 0, out: "default 1024"},
		{argv: []string{"pingpong", "rc", "-h"}, code: 0, out: "exit status is 1"},
		{argv: []string{"pingpong", "rc", "-x"}, code: 1, errs: "pingpong rc: invalid option -- 'x'\nTry 'pingpong rc --help'."},
		{argv: []string{"/usr/bin/ibv_uc_pingpong", "-q", "3"}, code: 1, errs: "ibv_uc_pingpong uc: invalid option -- 'q'"},
		{argv: []string{"ibv_ud_pingpong", "--help"}, code: 0, out: "rdma-core's ibv_ud_pingpong"},
		{argv: []string{"pingpong", "rc", "-t"}, code: 1, errs: "-t (--ts): completion timestamps is not implemented"},
		{argv: []string{"pingpong", "rc", "--backend", "sim", "-d", "mlx5_0"}, code: 1, errs: "IB device mlx5_0 not found\npingpong rc: likely cause: the sim backend has: sim0, sim1"},
	}
	for _, tc := range tests {
		code, out, errs := runArgs(tc.argv...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.errs) {
			t.Errorf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", tc.argv, code, out, errs)
		}
	}
}

func TestBackendChoice(t *testing.T) {
	p, standalone, err := openBackend("sim")
	if err != nil || p.Name() != "sim" || !standalone {
		t.Fatalf("sim: %v %v %v", p, standalone, err)
	}
	p.Close()
	p, _, err = openBackend("")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "sim" && p.Name() != "ibverbs" {
		t.Errorf("default backend %q", p.Name())
	}
	p.Close()
	if _, _, err := openBackend("ibverbs"); err != nil {
		code, _, errs := runArgs("pingpong", "rc", "--backend", "ibverbs")
		if code != 1 || !strings.Contains(errs, err.Error()) {
			t.Errorf("--backend ibverbs without the backend: exit %d, %s", code, errs)
		}
	}
}

// Two pingpong programs, each with its own simulator (two processes, as
// far as the simulator knows): the exchange works, then both say why the
// run cannot go on, instead of hanging. This changes when the simulator's
// UDP link lets two processes reach each other.
func TestTwoStandaloneSimulators(t *testing.T) {
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
		sc, sout, serr = runArgs("pingpong", "rc", "--backend=sim", "-g", "1", "-p", port)
	}()
	for i := 0; ; i++ {
		time.Sleep(50 * time.Millisecond)
		cc, cout, cerr = runArgs("pingpong", "rc", "--backend=sim", "-g", "1", "-p", port, "127.0.0.1")
		if !strings.Contains(cerr, "connection refused") || i > 100 {
			break
		}
	}
	wg.Wait()
	for _, r := range []struct {
		code      int
		out, errs string
	}{{sc, sout, serr}, {cc, cout, cerr}} {
		if r.code != 1 || !strings.Contains(r.out, "  remote address: LID 0x0000, QPN 0x") ||
			!strings.Contains(r.errs, "The peer is out of reach of this process's simulated RNIC") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
		}
	}
}
