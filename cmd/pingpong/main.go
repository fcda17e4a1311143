// Command pingpong is rdma-core's ibv_rc_pingpong, ibv_uc_pingpong,
// ibv_ud_pingpong, ibv_srq_pingpong and ibv_xsrq_pingpong in one program,
// flag- and wire-compatible with them, on real verbs (libibverbs) or on
// vsh's simulated RNIC:
//
//	pingpong rc -g 1 -c            # server
//	pingpong rc -g 1 -c server     # client
//
// On the simulator (--backend sim, or no RDMA device), each process's
// simulated RNIC is on the simulator's UDP link, bound to an address of its
// own (--sim-addr 127.0.0.2; by default the first free loopback one), so
// two pingpong processes on one host run against each other, and one on a
// host's real address runs against kernel soft-RoCE on another host:
//
//	pingpong rc -g 1 --sim-addr 127.0.0.2               # server
//	pingpong rc -g 1 --sim-addr 127.0.0.3 127.0.0.1     # client
//
// The simulator has XRC for xsrq (sim.Config.XRC), as a NIC that has it;
// kernel rxe has none, so on rxe xsrq stops as rdma-core's program does,
// with "Couldn't Open the XRC Domain 95".
//
// Started under one of rdma-core's names (a link named ibv_rc_pingpong), it
// is that program. See docs/pingpong.md. This file only wires the library
// (package pingpong) to the process: arguments, streams, signals, backend.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/ibverbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: argv (with the program name),
// streams, and the exit status.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	name, args := "pingpong", argv[1:]
	if t, ok := pingpong.TransportFromProgramName(argv[0]); ok {
		name = filepath.Base(argv[0])
		args = append([]string{t.String()}, args...)
	}
	var opened verbs.Provider
	p := &pingpong.Program{Name: name, Stdout: stdout, Stderr: stderr}
	p.OpenOptions = func(o pingpong.Options) (verbs.Provider, error) {
		prov, err := openBackend(o.Backend, o.SimAddr, o.Transport == pingpong.XSRQ)
		if err != nil {
			return nil, err
		}
		opened = prov
		if f, ok := prov.(*sim.Fabric); ok {
			p.Hint = fmt.Sprintf("this side is on the simulator's UDP link at %s: the peer must reach it over RoCEv2 "+
				"from an address of the same kind (a pingpong on the simulator at another loopback address, "+
				"or kernel soft-RoCE or a RoCE NIC on the same link, with -g naming its GID of that family)", f.UDPAddr())
			p.Diagnose = func() string { return linkDiagnosis(f.UDPStats()) }
		}
		return prov, nil
	}
	code := p.Run(ctx, args)
	if opened != nil {
		opened.Close()
	}
	return code
}

// linkDiagnosis says what the simulator's UDP link dropped, for a run that
// stopped moving; "" when it dropped nothing.
func linkDiagnosis(st sim.UDPLinkStats) string {
	var s []string
	if st.QueueDrops > 0 {
		s = append(s, fmt.Sprintf("the kernel dropped %d datagram(s) arriving at this side's UDP socket, its receive buffer full while the machine was busy: "+
			"RC sends them again, UC and UD lose those messages for good (run again, on a less busy machine or with a smaller -s or -n)", st.QueueDrops))
	}
	var why []string
	for _, c := range []struct {
		n    uint64
		what string
	}{
		{st.Malformed, "not RoCEv2 as rxe knows it"},
		{st.BadICRC, "with a wrong ICRC"},
		{st.Refused, "refused by the header checks (no such QP, a QP of another type or state, or a wrong key)"},
	} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(why) > 0 {
		s = append(s, fmt.Sprintf("this side dropped datagrams from the peer: %s", strings.Join(why, ", ")))
	}
	return strings.Join(s, "; ")
}

// openBackend picks the backend of --backend; with none, libibverbs when it
// is built in and sees a device (and --sim-addr is not given), else the
// simulator. The simulator's one device, sim0, is on its UDP link at
// simAddr ("": the first free 127.0.0.N, N ≥ 2), so that two processes
// reach each other; with xrc, it has XRC (for xsrq).
func openBackend(name, simAddr string, xrc bool) (verbs.Provider, error) {
	switch {
	case name == "sim" || (name == "" && simAddr != ""):
		return openSim(simAddr, xrc)
	case name == "ibverbs":
		return ibverbs.New()
	}
	if p, err := ibverbs.New(); err == nil {
		if devs, err := p.Devices(); err == nil && len(devs) > 0 {
			return p, nil
		}
		p.Close()
	}
	return openSim(simAddr, xrc)
}

func openSim(addr string, xrc bool) (verbs.Provider, error) {
	f, err := sim.NewUDP(sim.Config{Devices: 1, Seed: 1, XRC: xrc}, addr)
	if err != nil {
		return nil, err
	}
	return f, nil
}
