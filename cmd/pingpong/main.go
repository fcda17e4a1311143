// Command pingpong is rdma-core's ibv_rc_pingpong, ibv_uc_pingpong,
// ibv_ud_pingpong and ibv_srq_pingpong in one program, flag- and
// wire-compatible with them, on real verbs (libibverbs) or on vsh's
// simulated RNIC:
//
//	pingpong rc -g 1 -c            # server
//	pingpong rc -g 1 -c server     # client
//
// Started under one of rdma-core's names (a link named ibv_rc_pingpong), it
// is that program. See docs/pingpong.md. This file only wires the library
// (package pingpong) to the process: arguments, streams, signals, backend.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
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
	p.Open = func(backend string) (verbs.Provider, error) {
		prov, standaloneSim, err := openBackend(backend)
		if err != nil {
			return nil, err
		}
		opened = prov
		if standaloneSim {
			p.CheckPeer = simPeerUnreachable
		}
		return prov, nil
	}
	code := p.Run(ctx, args)
	if opened != nil {
		opened.Close()
	}
	return code
}

// openBackend picks the backend of --backend; with none, libibverbs when it
// is built in and sees a device, else the simulator. It reports whether the
// result is a simulator of this process alone.
func openBackend(name string) (verbs.Provider, bool, error) {
	switch name {
	case "sim":
		return sim.New(sim.Config{Devices: 2, Seed: 1}), true, nil
	case "ibverbs":
		p, err := ibverbs.New()
		return p, false, err
	}
	if p, err := ibverbs.New(); err == nil {
		if devs, err := p.Devices(); err == nil && len(devs) > 0 {
			return p, false, nil
		}
		p.Close()
	}
	return sim.New(sim.Config{Devices: 2, Seed: 1}), true, nil
}

// simPeerUnreachable stops a run whose peer is in another process: this
// process's simulated fabric has no link to the outside yet.
func simPeerUnreachable([]exchange.Dest) error {
	return &pingpong.Error{
		Msg: "The peer is out of reach of this process's simulated RNIC",
		Hint: "the address exchange worked, but --backend sim simulates its devices inside this process only, " +
			"and the simulator's UDP link between processes is not available yet: run the two sides on real verbs " +
			"(--backend ibverbs, e.g. on rxe), or in one process (the shell's pingpong command, or go test ./pingpong)",
	}
}
