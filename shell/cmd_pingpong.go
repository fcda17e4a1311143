package shell

import (
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/lessons"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/verbs"
)

// pingpong: rdma-core's ping-pong loop between two local devices, in one
// cell — the long loop a lesson does not make you type.

func pingpongCmd() *command {
	return &command{Name: "pingpong", Group: gData,
		Usage: "pingpong rc|uc|ud|srq|xsrq [A] [B] [size=4096] [iters=1000] [mtu=1024] [rx_depth=500] [num_qp=16] [gid_index=1] " +
			"[sl=0] [check] [events] [timeout=10s]",
		Summary: "Run rdma-core's ping-pong loop (ibv_rc_pingpong and siblings) between two local devices and print its result lines",
		Help: "Runs the whole program on both sides in this session: the server's endpoint on A (its own context: PD, MR, CQ, " +
			"QP; srq: an SRQ and num_qp QPs), the client's on B (or on A again: loopback, as on a single rxe0), the addresses " +
			"handed over as the TCP exchange would, the QPs taken to RTS with rdma-core's values, then the loop: the client " +
			"sends first, and each side answers every message it receives, iters times, keeping rx_depth receives posted. " +
			"It prints what both programs print — local and remote addresses, \"N bytes in S seconds = R Mbit/sec\" and " +
			"\"N iters in S seconds = U usec/iter\" — and the two command lines that run the same thing on two hosts. " +
			"The objects it makes are its own and are gone afterwards; the session's handles are untouched.\n\n" +
			"On the simulator the seconds are virtual time (the fabric's clock, which models the link's latency and " +
			"bandwidth), so the figures are the same at every run; on real hardware they are wall-clock time. check fills the " +
			"client's buffer with a pattern and checks every byte at the end (-c); events sleeps on completion events (-e). " +
			"A run that stops moving ends after timeout= with what is most likely wrong; Ctrl-C stops a long run.\n\n" +
			"xsrq is ibv_xsrq_pingpong: XRC, which kernel rxe has none of and the simulator has once backend xrc=on; " +
			"iters= is its -n (5 by default), it has no rx_depth=, and it prints its address lines and \"success\".",
		Args: []argSpec{
			pos("TRANSPORT", vText, true, "rc, uc, ud, srq or xsrq (ibv_rc_pingpong, ...)"),
			pos("A", vDevice, false, "the server's device: A, a device name; default A"),
			pos("B", vDevice, false, "the client's device; default B (A again where there is one device)"),
			key("size", vSize, "4096 (ud: 1024)", "the message size (-s)"),
			key("iters", vNum, "1000 (xsrq: 5)", "the number of exchanges (-n)", "n"),
			key("mtu", vMTU, "1024", "the path MTU (-m; not ud)", "path_mtu"),
			key("rx_depth", vNum, "500", "the receives kept posted (-r)"),
			key("num_qp", vNum, "16", "srq: the number of QPs (-q)"),
			key("gid_index", vText, "1", "the local GID index (-g), or none", "sgid_index"),
			key("sl", vNum, "0", "the service level (-l)"),
			key("timeout", vDuration, "10s", "give up when no completion comes for this long"),
			flag("check", "write a pattern at the client and check every byte at the end (-c)", "-c"),
			flag("events", "sleep on completion events instead of busy polling (-e)", "-e"),
		},
		run: cmdPingpong, settings: pingpongSettings}
}

// pingpongSettings are the options the programs run with
// (command.settings), their defaults filled in.
func pingpongSettings(c *call) []lessons.Arg {
	t, err := pingpong.ParseTransport(c.a.pos[0].text)
	if err != nil {
		return nil
	}
	o, err := pingpongOptions(c, t)
	if err != nil {
		return nil
	}
	out := []lessons.Arg{numArg("size", int64(o.Size)), numArg("iters", int64(o.Iters)), numArg("sl", int64(o.SL)),
		numArg("gid_index", int64(o.GIDIndex))}
	if t != pingpong.UD {
		out = append(out, lessons.Arg{Key: "mtu", Kind: lessons.ArgWord, Value: o.MTU.Short()})
	}
	if t != pingpong.XSRQ {
		out = append(out, numArg("rx_depth", int64(o.RxDepth)))
	}
	if t == pingpong.SRQ {
		out = append(out, numArg("num_qp", int64(o.NumQP)))
	}
	// The positional words in order: the program, then A and B.
	out = append(out, lessons.Arg{Kind: lessons.ArgWord, Value: strings.ToLower(c.a.pos[0].text)})
	return append(out, c.devicePair(1)...)
}

func cmdPingpong(c *call) error {
	t, err := pingpong.ParseTransport(c.a.pos[0].text)
	if err != nil {
		return usagef(c.cmd.usageHint(), "%v", err)
	}
	o, err := pingpongOptions(c, t)
	if err != nil {
		return err
	}
	devA, devB := "A", "B"
	if len(c.a.pos) > 1 {
		devA = c.a.pos[1].text
	}
	if len(c.a.pos) > 2 {
		devB = c.a.pos[2].text
	}
	da, err := c.s.device(devA)
	if err != nil {
		return err
	}
	db, err := c.s.device(devB)
	if err != nil {
		return err
	}
	server, err := da.Open()
	if err != nil {
		return err
	}
	defer server.Close()
	client, err := db.Open()
	if err != nil {
		return err
	}
	defer client.Close()
	c.verbs(VerbCall{Name: "ibv_open_device", Args: da.Name(), Result: "for the server"}, VerbCall{Name: "ibv_open_device", Args: db.Name(), Result: "for the client"})

	so, co := o, o
	so.IBDev, co.IBDev = da.Name(), db.Name()
	co.Host = "SERVER_HOST"
	c.line("as two programs on two hosts:  %s", strings.Join(append([]string{t.Program()}, so.Args()...), " "))
	c.line("                               %s", strings.Join(append([]string{t.Program()}, co.Args()...), " "))

	hooks, clock, isSim := pingpongHooks(c, t)
	stopProgress := c.s.ppProgress(t, o.Iters)
	wallStart := time.Now()
	res, err := pingpong.RunPair(c.s.ctx, server, client, o, hooks)
	stopProgress()
	if err != nil {
		return pingpongFailed(c, t, o, res, err)
	}
	for _, l := range res.Lines() {
		c.line("%s", l)
	}
	if t != pingpong.XSRQ {
		c.line("(seconds are %s; bytes = size × iters × 2, a message each way per iteration)", clock)
	}
	if !isSim {
		if w := time.Since(wallStart); w > 2*time.Second {
			c.line("(the whole run took %s)", w.Round(time.Millisecond))
		}
	}
	return nil
}

// pingpongOptions reads pingpong's arguments into the options of
// rdma-core's program for transport t.
func pingpongOptions(c *call, t pingpong.Transport) (pingpong.Options, error) {
	o := pingpong.Defaults(t)
	o.GIDIndex = 1
	if v := strings.ToLower(c.raw("gid_index")); v == "none" || v == "-1" {
		o.GIDIndex = -1
	} else if c.has("gid_index") {
		n, err := parseUint(v, 8)
		if err != nil {
			return pingpong.Options{}, c.bad("gid_index", err)
		}
		o.GIDIndex = int(n)
	}
	size, err := c.sizeOr("size", uint64(o.Size))
	if err != nil {
		return pingpong.Options{}, err
	}
	const maxSize = 64 << 20
	if size < 1 || size > maxSize {
		return pingpong.Options{}, usagef("size=64, size=4k, up to size=64m", "size=%d: a message has 1 byte to 64 MiB here", size)
	}
	o.Size = int(size)
	if o.Iters, err = c.countOr("iters", o.Iters, 100_000_000); err != nil {
		return pingpong.Options{}, err
	}
	if o.RxDepth, err = c.countOr("rx_depth", o.RxDepth, 1<<16); err != nil {
		return pingpong.Options{}, err
	}
	if o.NumQP, err = c.countOr("num_qp", o.NumQP, 255); err != nil {
		return pingpong.Options{}, err
	}
	sl, err := c.num("sl", 4)
	if err != nil {
		return pingpong.Options{}, err
	}
	o.SL = int(sl)
	if c.has("mtu") {
		if t == pingpong.UD {
			return pingpong.Options{}, usagef("drop mtu=: ibv_ud_pingpong has no -m (a UD message must fit the port's MTU)", "mtu= is not a ud option")
		}
		if o.MTU, err = verbs.ParseMTU(c.raw("mtu")); err != nil {
			return pingpong.Options{}, c.bad("mtu", err)
		}
	}
	if c.has("rx_depth") && t == pingpong.XSRQ {
		return pingpong.Options{}, usagef("drop rx_depth=: ibv_xsrq_pingpong has no -r (it posts one receive per client, and one more per message)", "rx_depth= is not an xsrq option")
	}
	if c.has("num_qp") && t != pingpong.SRQ {
		return pingpong.Options{}, usagef("num_qp= is for pingpong srq", "num_qp= is not a %s option", t)
	}
	if o.Timeout, err = c.durOr("timeout", pingpong.DefaultTimeout); err != nil {
		return pingpong.Options{}, err
	}
	if o.Timeout == 0 {
		return pingpong.Options{}, usagef("timeout=10s, or longer", "timeout=0 would wait forever on a stalled run; give a duration")
	}
	o.Check, o.Events = c.a.flags["check"], c.a.flags["events"]
	if err := o.Validate(); err != nil {
		return pingpong.Options{}, usagef(c.cmd.usageHint(), "%v", err)
	}
	return o, nil
}

// pingpongHooks makes a run on the simulator repeatable: PSNs drawn from a
// fixed seed, the simulator's clock, and the fabric run while both sides
// wait. It returns the hooks and what the seconds printed are.
func pingpongHooks(c *call, t pingpong.Transport) (pingpong.PairHooks, string, bool) {
	hooks := pingpong.PairHooks{}
	clock := "wall-clock time"
	st, isSim := c.s.prov.(verbs.Stepper)
	if isSim {
		clock = "virtual time (the simulator's clock: the same at every run)"
		rng := rand.New(rand.NewPCG(1, uint64(t)))
		hooks.PSN = rng.Uint32
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		hooks.Now = func() time.Time { return base.Add(st.Now()) }
		hooks.Idle = func() bool {
			packets, timers := st.Pending()
			switch {
			case packets > 0:
				st.Run()
			case timers > 0:
				st.Advance(time.Millisecond)
			default:
				return false // nothing in flight: no completion can come
			}
			return true
		}
	}
	return hooks, clock, isSim
}

// pingpongFailed shows how far a failed run got (the addresses, not
// figures of a loop that did not finish) and explains its error.
func pingpongFailed(c *call, t pingpong.Transport, o pingpong.Options, res *pingpong.PairResult, err error) error {
	if res != nil {
		for _, sd := range []pingpong.Side{res.Server, res.Client} {
			for _, d := range sd.Local {
				c.line("%s: %s", sd.Name, pingpong.LocalLine(t, d))
			}
			for _, d := range sd.Remote {
				c.line("%s: %s", sd.Name, pingpong.RemoteLine(d))
			}
		}
	}
	var pe *pingpong.Error
	if errors.As(err, &pe) {
		msg := pe.Msg
		if pe.Err != nil {
			msg += ": " + pe.Err.Error()
		}
		hint := pe.Hint
		if hint == "" {
			hint = "explain the status or errno above; help pingpong lists the options"
		}
		if _, sw := c.s.prov.(verbs.XRCSwitch); sw && t == pingpong.XSRQ && errors.Is(err, verbs.EOPNOTSUPP) {
			hint = "backend xrc=on gives the simulator XRC, as mlx5 has it; then pingpong xsrq again"
			var ve *verbs.Error
			if errors.As(err, &ve) { // the verb's error without its own hint
				msg = fmt.Sprintf("%s: %s: %s: %s", pe.Msg, ve.Op, verbs.ErrnoName(ve.Errno), ve.Why)
			}
		}
		if c.s.interrupted() {
			return c.s.stopped("pingpong %s stopped before its %d iterations; run it again with fewer iters=", t, o.Iters)
		}
		return usagef(hint, "%s %s", t, msg)
	}
	return usagef("help pingpong lists the options", "%s: %v", t, err)
}

// ppProgress reports that a long run is alive through Options.Progress,
// every 100 ms once it has taken a second. It returns the function that
// stops it.
func (s *Shell) ppProgress(t pingpong.Transport, iters int) func() {
	show := s.opts.Progress
	if show == nil {
		return func() {}
	}
	start := time.Now()
	shown := false
	stop := s.ticker(100*time.Millisecond, func() {
		if el := time.Since(start); el >= time.Second {
			show(fmt.Sprintf("pingpong %s: %d iterations, running for %s (Ctrl-C stops it)", t, iters, el.Round(time.Second)), false)
			shown = true
		}
	})
	return func() {
		stop()
		if shown {
			show("", false)
		}
	}
}
