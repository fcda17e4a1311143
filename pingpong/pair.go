package pingpong

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// PairHooks adapt RunPair to its caller. Every field is optional.
type PairHooks struct {
	// PSN draws the start PSN of each QP (the server's first); nil draws at
	// random. A seeded source makes the run repeatable.
	PSN func() uint32
	// Now is the clock of the result lines; nil is time.Now. The shell can
	// pass the simulator's virtual clock.
	Now func() time.Time
	// Idle is called when neither side found a completion. It may move the
	// fabric (a stepped simulator: Run or Advance) and returns false when
	// nothing more can happen, which ends the run with a stall error at
	// once. Without it, the run ends after Options.Timeout without progress.
	Idle func() bool
}

// Side is one end of a pair run, with what rdma-core's program would print.
type Side struct {
	Name     string // "server" or "client"
	Local    []exchange.Dest
	Remote   []exchange.Dest
	Stats    Stats
	BadPages []BadPage // -c
	// XLocal and XRemote are xsrq's addresses (Local and Remote stay
	// empty): one connection each way.
	XLocal, XRemote []exchange.XRCDest
}

// Lines returns the side's output as rdma-core's program prints it: the
// local and remote addresses, the two result lines and, with -c, a line
// per bad page. xsrq's are its address lines (the server's remote one
// first, as it reads before it answers) and "success".
func (s Side) Lines(t Transport) []string {
	var out []string
	if t == XSRQ {
		for i := range max(len(s.XLocal), len(s.XRemote)) {
			l, r := "", ""
			if i < len(s.XLocal) {
				l = XRCAddrLine("local", s.XLocal[i])
			}
			if i < len(s.XRemote) {
				r = XRCAddrLine("remote", s.XRemote[i])
			}
			if s.Name == "server" {
				l, r = r, l
			}
			for _, x := range []string{l, r} {
				if x != "" {
					out = append(out, x)
				}
			}
		}
		return append(out, SuccessLine)
	}
	for _, d := range s.Local {
		out = append(out, LocalLine(t, d))
	}
	for _, d := range s.Remote {
		out = append(out, RemoteLine(d))
	}
	out = append(out, s.Stats.Lines()...)
	for _, b := range s.BadPages {
		out = append(out, InvalidPageLine(b.Page))
	}
	return out
}

// PairResult is the outcome of RunPair.
type PairResult struct {
	Transport      Transport
	Server, Client Side
}

// Lines returns both sides' output, the server's first, each line prefixed
// with its side ("server: ", "client: ").
func (r *PairResult) Lines() []string {
	var out []string
	for _, s := range []Side{r.Server, r.Client} {
		for _, l := range s.Lines(r.Transport) {
			out = append(out, s.Name+": "+l)
		}
	}
	return out
}

// RunPair runs a whole ping-pong inside one process between two device
// contexts (they may be the same device: loopback), with no TCP: the
// server's endpoint on server, the client's on client, the addresses handed
// over directly, the server connected first as in the exchange. Both loops
// run in the calling goroutine, interleaved, so a deterministic backend
// gives a deterministic run. Options.Host and Port are ignored.
//
// This is the loop of the shell's "pingpong rc A B size=.. iters=..": its
// output is Lines(); a failure is an *Error that says which side failed
// and why.
func RunPair(ctx context.Context, server, client verbs.Context, o Options, h PairHooks) (*PairResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(o.Unsupported) > 0 {
		return nil, usageErrorf("%s is not available", o.Unsupported[0])
	}
	if o.Transport == XSRQ {
		return runPairXSRQ(ctx, server, client, o, h)
	}
	now := h.Now
	if now == nil {
		now = time.Now
	}
	res := &PairResult{Transport: o.Transport, Server: Side{Name: "server"}, Client: Side{Name: "client"}}
	srv, err := NewEndpoint(server, o, h.PSN)
	if err != nil {
		return nil, sideError("server", err)
	}
	defer srv.Close()
	cli, err := NewEndpoint(client, o, h.PSN)
	if err != nil {
		return nil, sideError("client", err)
	}
	defer cli.Close()
	res.Server.Local, res.Client.Local = srv.Local(), cli.Local()
	if err := srv.Connect(cli.Local()); err != nil {
		return res, sideError("server", err)
	}
	if err := cli.Connect(srv.Local()); err != nil {
		return res, sideError("client", err)
	}
	res.Server.Remote, res.Client.Remote = srv.Remote(), cli.Remote()

	sides := []*Endpoint{srv, cli}
	names := []string{"server", "client"}
	starts := make([]time.Time, 2)
	ends := make([]time.Time, 2)
	if err := srv.Start(false); err != nil {
		return res, sideError("server", err)
	}
	starts[0] = now()
	if err := cli.Start(true); err != nil {
		return res, sideError("client", err)
	}
	starts[1] = now()
	last := time.Now()
	for spins := 0; !srv.Done() || !cli.Done(); spins++ {
		// At every spin, whether it moved or not: on the simulator every
		// spin moves, and Ctrl-C must still stop the pair.
		if err := ctx.Err(); err != nil {
			return res, fail("Interrupted", err, "")
		}
		progress := false
		for i, e := range sides {
			if e.Done() {
				continue
			}
			if e.o.Events {
				got, err := e.pollEvent()
				if err != nil {
					return res, sideError(names[i], err)
				}
				if !got {
					continue
				}
			}
			n, err := e.Poll()
			if err != nil {
				return res, sideError(names[i], err)
			}
			if n > 0 {
				progress = true
			}
			if e.Done() {
				ends[i] = now()
			}
		}
		if progress {
			last = time.Now()
			continue
		}
		if h.Idle != nil && !h.Idle() {
			return res, pairStall(sides, names, 0)
		}
		if spins%256 == 0 {
			runtime.Gosched()
			if o.Timeout > 0 && time.Since(last) >= o.Timeout {
				return res, pairStall(sides, names, o.Timeout) // as Run says it: the timeout, not the overshoot
			}
		}
	}
	if o.Check {
		// As Program does before -c: stop both sides first, so that no late
		// SEND (srq's last round sends up to num_qp-1 extra messages) is
		// still being written while the buffers are read.
		for _, e := range sides {
			if err := e.Stop(); err != nil {
				return res, err
			}
		}
	}
	for i, e := range sides {
		s := &res.Server
		if i == 1 {
			s = &res.Client
		}
		s.Stats = e.stats(ends[i].Sub(starts[i]))
		if o.Check {
			s.BadPages = e.CheckData()
		}
	}
	return res, nil
}

// pollEvent takes a completion event without waiting (for RunPair's -e):
// it reports whether there was one, acknowledged later and re-armed.
func (e *Endpoint) pollEvent() (bool, error) {
	cq, err := e.channel.GetEvent(0)
	if err != nil {
		if errors.Is(err, verbs.EAGAIN) {
			return false, nil
		}
		return false, fail("Failed to get cq_event", err, "")
	}
	e.cqEvents++
	if cq != e.cq {
		return false, fail("CQ event for unknown CQ", nil, "")
	}
	if err := e.cq.ReqNotify(false); err != nil {
		return false, fail("Couldn't request CQ notification", err, "")
	}
	return true, nil
}

// sideError names the side in an *Error.
func sideError(side string, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		c := *pe
		c.Msg = side + ": " + c.Msg
		return &c
	}
	return fmt.Errorf("%s: %w", side, err)
}

// pairStall explains a pair run that stopped moving, from the side that
// is behind.
func pairStall(sides []*Endpoint, names []string, waited time.Duration) error {
	i := 0
	if sides[0].Done() || (!sides[1].Done() && sides[1].rcnt < sides[0].rcnt) {
		i = 1
	}
	e := sides[i]
	msg := fmt.Sprintf("No completion: %d of %d messages received, %d sent", e.rcnt, e.o.Iters, e.scnt)
	if waited > 0 {
		msg = fmt.Sprintf("No completion for %s: %d of %d messages received, %d sent", waited.Round(time.Millisecond), e.rcnt, e.o.Iters, e.scnt)
	}
	return &Error{Msg: names[i] + ": " + msg, Hint: e.stallHint(), Timeout: true}
}
