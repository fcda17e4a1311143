package shell

import (
	"context"
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"github.com/vsh-rdma/vsh/shell/render/picture"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/pingpong/sweep"
	"github.com/vsh-rdma/vsh/verbs"
)

// bench: perftest's ib_{send,write,read}_{bw,lat} over a range of message
// sizes between two local devices, as a table and a chart (package sweep).

// benchOps writes bench's op= list in one way: sorted, all spelled out.
func benchOps(v string) string {
	var ops []string
	for _, o := range strings.Split(strings.ToLower(v), ",") {
		if o = strings.TrimSpace(o); o == "all" {
			ops = append(ops, "read", "send", "write")
		} else if o != "" {
			ops = append(ops, o)
		}
	}
	sort.Strings(ops)
	return strings.Join(slices.Compact(ops), ",")
}

func withCanon(sp argSpec, f func(string) string) argSpec {
	sp.canon = f
	return sp
}

func benchCmd() *command {
	return &command{Name: "bench", Group: gData,
		Usage: "bench [A] [B] op=send|write|read|all [mode=both] [min=64] [max=1M] [iters=1000] [lat_iters=1000] [tx_depth=128] [mtu=N] " +
			"[clock=virtual|wall] [rate=25G] [delay=1us] [netdev_mtu=1500] [chart=on] [timeout=10s]",
		Summary: "Sweep message sizes and measure the bandwidth and latency of SEND, WRITE and READ, as perftest does",
		Help: "perftest's experiment in one cell: for every message size from min= to max=, doubling, it runs ib_OP_bw " +
			"(iters= messages with tx_depth= of them outstanding; BW average in MiB/s — perftest's MB/sec — and Gb/s, and the " +
			"message rate in Mpps) and ib_OP_lat (lat_iters= round trips one at a time; t_min, t_max, t_typical, t_avg and the " +
			"99% percentile in usec, halved for SEND and WRITE, whose ping-pong is two messages, not for READ, which is a whole " +
			"round trip), then prints a table and a bar chart for each. op= names the programs, as perftest's binary does: " +
			"send, write, read, all, or a list (send,read); mode= is bw, lat or both. Both sides run in this session: an RC QP on A and one on B (or on A again: loopback, as " +
			"on a single rxe0), connected with perftest's values; path MTU the ports' active MTU unless mtu= asks for less. " +
			"The objects are its own and are gone afterwards.\n\n" +
			"On the simulator the default clock is virtual time: the fabric is stepped packet by packet, so the figures follow " +
			"its link model and are the same at every run. rate= (bits/s: 25G, 100G, 1G), delay= (from each device to the " +
			"switch) and netdev_mtu= (which sets the ports' active MTU, as rxe derives it from its netdev) change the link of " +
			"A and B for this run only. clock=wall measures real time instead (on the simulator: how fast it simulates); on " +
			"real hardware it is the only clock. Time moves for the whole fabric: timers of other QPs fire as it passes, " +
			"and fault rules apply to the sweep's packets too. A sweep refuses to run while trace is on. A run that stops " +
			"moving ends after timeout= (wall time, or virtual time with only timers pending) with what it waited for; " +
			"Ctrl-C stops a long run. Progress goes to stderr: one line in place on a terminal, a line per size otherwise " +
			"once a run takes more than a second.",
		Args: []argSpec{
			pos("A", vDevice, false, "A's device (the side that posts first and measures): A, a device name; default A"),
			pos("B", vDevice, false, "B's device; default B (A again where there is one device)"),
			withCanon(reqKey("op", vText, "send, write, read, all, or a comma-separated list: which of perftest's programs"), benchOps),
			key("mode", vText, "both", "bw, lat or both", "test"),
			key("min", vSize, "64", "the smallest message size", "min_size"),
			key("max", vSize, "1M, or min= when larger", "the largest message size (at most 8M)", "max_size"),
			key("iters", vNum, "1000", "bandwidth: messages per size (perftest -n)", "n"),
			key("lat_iters", vNum, "1000", "latency: round trips per size (perftest -n)"),
			key("tx_depth", vNum, "128", "bandwidth: work requests outstanding (perftest -t)", "t"),
			key("mtu", vMTU, "the ports' active MTU", "the path MTU (perftest -m); more than the active MTU is lowered to it", "path_mtu"),
			key("clock", vText, "virtual on the simulator, else wall", "virtual or wall"),
			key("rate", vText, "25G", "the simulator's link rate for A and B, in bits/s: 25G, 100G, 1G, 100M", "bandwidth"),
			key("delay", vDuration, "1us", "the simulator's one-way delay from each of A and B to the switch", "latency"),
			key("netdev_mtu", vNum, "1500", "the simulator's netdev MTU for A and B (9000 gives active MTU 4096)"),
			key("chart", vBool, "on", "draw a bar chart under each table"),
			key("timeout", vDuration, "10s", "give up when nothing moves for this long"),
		},
		run: cmdBench, settings: benchSettings}
}

// benchSettings are the settings a sweep runs with (command.settings): the
// sizes, the counts of the tests it runs, and the link's.
func benchSettings(c *call) []lessons.Arg {
	cfg, err := benchConfig(c)
	if err != nil {
		return nil
	}
	if err := benchClock(c, &cfg); err != nil {
		return nil
	}
	mode := "both"
	if len(cfg.Tests) == 1 {
		mode = cfg.Tests[0].String()
	}
	out := []lessons.Arg{{Key: "mode", Kind: lessons.ArgWord, Value: mode},
		numArg("min", int64(cfg.MinSize)), numArg("max", int64(cfg.MaxSize))}
	for _, t := range cfg.Tests {
		switch t {
		case sweep.BW:
			out = append(out, numArg("iters", int64(cfg.Iters)), numArg("tx_depth", int64(cfg.TxDepth)))
		case sweep.Lat:
			out = append(out, numArg("lat_iters", int64(cfg.LatIters)))
		}
	}
	// The link's, where given; else the specs' defaults, which are what
	// the simulator's links have.
	rate, err := value(c, "rate", parseRate)
	if err != nil {
		return nil
	}
	delay, err := c.dur("delay")
	if err != nil {
		return nil
	}
	mtu, err := value(c, "netdev_mtu", parseSize)
	if err != nil {
		return nil
	}
	// The netdev MTU counts through the path MTU it allows, alone: 9000
	// and 9001 run the same sweep, and so do mtu=1024 netdev_mtu=9000 and
	// the defaults.
	out = append(out, numArg("rate", rate), numArg("delay_ns", int64(delay)),
		lessons.Arg{Key: "clock", Kind: lessons.ArgWord, Value: cfg.Clock.String()})
	if path, ok := benchPathMTU(c, cfg.MTU, int(mtu)); ok {
		out = append(out, numArg("mtu", int64(path.Bytes())))
	}
	return append(out, c.devicePair(0)...)
}

// benchPathMTU is the path MTU a sweep runs at: the smaller of A's and B's
// ports' active MTU, or mtu= (asked) where it is less. netdev_mtu= given
// sets the ports' active MTU for the run, as rxe derives it; otherwise
// each port is asked.
func benchPathMTU(c *call, asked verbs.MTU, netdevMTU int) (verbs.MTU, bool) {
	var active verbs.MTU
	a, b := c.pairNames(0)
	for _, name := range []string{a, b} {
		m := verbs.RoCEActiveMTU(netdevMTU)
		if !c.has("netdev_mtu") {
			d, err := c.s.device(name)
			if err != nil {
				return 0, false
			}
			ctx, err := d.Open()
			if err != nil {
				return 0, false
			}
			pa, err := ctx.QueryPort(1)
			ctx.Close()
			if err != nil {
				return 0, false
			}
			m = pa.ActiveMTU
		}
		if active == 0 || m < active {
			active = m
		}
	}
	if asked != 0 && asked < active {
		return asked, true
	}
	return active, true
}

// devicePair is the A and B an experiment runs between, from its
// positional words after the first skip ones (bench A B, pingpong rc A
// B), defaults filled in, as a lesson's judge compares them.
func (c *call) devicePair(skip int) []lessons.Arg {
	a, b := c.pairNames(skip)
	return []lessons.Arg{c.s.deviceArg("", a), c.s.deviceArg("", b)}
}

// pairNames are the device words of an experiment's A and B, from its
// positional words after the first skip ones: "A" and "B" where left out.
func (c *call) pairNames(skip int) (a, b string) {
	devs := []string{"A", "B"}
	for i := range devs {
		if skip+i < len(c.a.pos) {
			devs[i] = c.a.pos[skip+i].text
		}
	}
	return devs[0], devs[1]
}

func cmdBench(c *call) error {
	s := c.s
	cfg, err := benchConfig(c)
	if err != nil {
		return err
	}
	chart, err := c.boolArg("chart")
	if err != nil {
		return err
	}
	if s.tr != nil {
		return usagef("trace off, then bench (a sweep sends hundreds of thousands of packets)",
			"bench does not run while trace is on")
	}
	devA, devB := c.pairNames(0)
	da, err := s.device(devA)
	if err != nil {
		return err
	}
	db, err := s.device(devB)
	if err != nil {
		return err
	}
	if err := benchClock(c, &cfg); err != nil {
		return err
	}
	restore, err := benchLink(c, da.Name(), db.Name())
	if err != nil {
		return err
	}
	defer restore()
	a, err := da.Open()
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := db.Open()
	if err != nil {
		return err
	}
	defer b.Close()
	c.verbs(VerbCall{Name: "ibv_open_device", Args: da.Name(), Result: "for A"}, VerbCall{Name: "ibv_open_device", Args: db.Name(), Result: "for B"})

	ctx := s.ctx
	pr := s.startBenchProgress()
	cfg.Progress = pr.point
	wallStart := time.Now()
	res, runErr := sweep.Run(ctx, a, b, cfg)
	pr.end()
	if res != nil && res.QPNA != 0 {
		benchHeader(c, res, time.Since(wallStart))
		full := 0.0
		if lc, ok := s.prov.(verbs.LinkConfigurer); ok && cfg.Clock == sweep.Virtual {
			if p, err := lc.LinkParams(da.Name()); err == nil {
				full = float64(p.Bandwidth) / 1e9
			}
		}
		for _, sr := range res.Series {
			if len(sr.Points) == 0 {
				continue
			}
			c.line("%s", benchTitle(res, sr))
			c.out.add(render.Table(sr.Table()))
			if chart {
				c.out.add(sr.Chart(50, full))
			}
			if err := c.picture(benchChart(res, sr, full).SVG); err != nil {
				return err
			}
		}
	}
	if runErr != nil {
		return benchErr(c, runErr)
	}
	return nil
}

// benchConfig reads the options that do not depend on the backend.
func benchConfig(c *call) (sweep.Config, error) {
	var cfg sweep.Config
	ops := strings.ToLower(c.raw("op"))
	switch ops {
	case "all":
		cfg.Ops = sweep.Ops()
	default:
		seen := map[sweep.Op]bool{}
		for _, w := range strings.Split(ops, ",") {
			o, err := sweep.ParseOp(strings.TrimSpace(w))
			if err != nil {
				return cfg, c.bad("op", err)
			}
			if !seen[o] {
				seen[o] = true
				cfg.Ops = append(cfg.Ops, o)
			}
		}
	}
	switch m := strings.ToLower(c.raw("mode")); m {
	case "", "both":
		cfg.Tests = []sweep.Test{sweep.BW, sweep.Lat}
	default:
		t, err := sweep.ParseTest(m)
		if err != nil {
			return cfg, c.bad("mode", fmt.Errorf("%q is not bw, lat or both", m))
		}
		cfg.Tests = []sweep.Test{t}
	}
	minSize, err := c.sizeOr("min", sweep.DefaultMinSize)
	if err != nil {
		return cfg, err
	}
	maxSize, err := c.sizeOr("max", max(sweep.DefaultMaxSize, minSize))
	if err != nil {
		return cfg, err
	}
	if minSize < 1 || minSize > sweep.MaxSize {
		return cfg, usagef("min=64, min=2 (perftest -a starts at 2)", "min=%d: a message has 1 byte to 8M here", minSize)
	}
	if maxSize < minSize || maxSize > sweep.MaxSize {
		return cfg, usagef("max=1M, up to max=8M (perftest's largest)", "max=%d: it must be between min=%d and 8M", maxSize, minSize)
	}
	cfg.MinSize, cfg.MaxSize = int(minSize), int(maxSize)
	if cfg.Iters, err = c.countOr("iters", sweep.DefaultIters, 100_000_000); err != nil {
		return cfg, err
	}
	if cfg.LatIters, err = c.countOr("lat_iters", sweep.DefaultLatIters, 10_000_000); err != nil {
		return cfg, err
	}
	if cfg.TxDepth, err = c.countOr("tx_depth", sweep.DefaultTxDepth, 1<<15); err != nil {
		return cfg, err
	}
	for _, k := range []struct {
		key string
		n   int
	}{{"iters", cfg.Iters}, {"lat_iters", cfg.LatIters}} {
		if c.has(k.key) && k.n < sweep.MinIters {
			return cfg, usagef(fmt.Sprintf("%s=%d or more (perftest's minimum)", k.key, sweep.MinIters),
				"%s=%d is too few: perftest needs at least %d", k.key, k.n, sweep.MinIters)
		}
	}
	if c.has("tx_depth") && cfg.TxDepth < 1 {
		return cfg, usagef("tx_depth=1 or more", "tx_depth=0 would post nothing")
	}
	if c.has("mtu") {
		if cfg.MTU, err = verbs.ParseMTU(c.raw("mtu")); err != nil {
			return cfg, c.bad("mtu", err)
		}
	}
	if cfg.Timeout, err = c.durOr("timeout", sweep.DefaultTimeout); err != nil {
		return cfg, err
	}
	if cfg.Timeout == 0 {
		return cfg, usagef("timeout=10s, or longer", "timeout=0 would give up at once; give a duration")
	}
	return cfg, nil
}

// benchClock picks the clock: virtual time where the backend steps its
// fabric in virtual time, the wall clock everywhere else.
func benchClock(c *call, cfg *sweep.Config) error {
	st, stepper := c.s.prov.(verbs.Stepper)
	if rt, ok := c.s.prov.(verbs.RealTimeClock); ok && rt.RealTime() {
		stepper = false // the UDP link: packets from other processes come in real time
	}
	cfg.Clock = sweep.Wall
	if stepper {
		cfg.Clock = sweep.Virtual
		cfg.Fabric = st
		if packets, _ := st.Pending(); packets > 0 && st.DeliveryMode() == verbs.DeliverStep {
			return usagef("run delivers them (or fabric auto), then bench",
				"the fabric holds %d packet%s (fabric step), which a sweep would deliver", packets, plural(packets))
		}
	}
	if !c.has("clock") {
		return nil
	}
	clk, err := sweep.ParseClock(c.raw("clock"))
	if err != nil {
		return c.bad("clock", err)
	}
	if clk == sweep.Virtual && !stepper {
		return usagef("clock=wall (or leave clock= out)",
			"clock=virtual needs the simulator's in-process fabric; on this backend (%s) time is the wall clock's", c.s.prov.Name())
	}
	cfg.Clock = clk
	return nil
}

// benchLink applies rate=, delay= and netdev_mtu= to the links of A's and
// B's devices and returns what puts them back.
func benchLink(c *call, devs ...string) (func(), error) {
	none := func() {}
	var keys []string
	for _, k := range []string{"rate", "delay", "netdev_mtu"} {
		if c.has(k) {
			keys = append(keys, k+"=")
		}
	}
	if len(keys) == 0 {
		return none, nil
	}
	lc, ok := c.s.prov.(verbs.LinkConfigurer)
	if !ok {
		return nil, usagef("on a real device the link is a cable, a switch and the netdev: ip link set dev IF mtu 9000 changes the MTU",
			"%s: not available on this backend (%s): it does not let vsh change its link", strings.Join(keys, ", "), c.s.prov.Name())
	}
	var rate int64
	if c.has("rate") {
		r, err := parseRate(c.raw("rate"))
		if err != nil {
			return nil, c.bad("rate", err)
		}
		rate = r
	}
	// delay= and netdev_mtu= change the link only when given; their specs'
	// defaults are what the simulator's links have.
	var err error
	var delay time.Duration
	if c.has("delay") {
		if delay, err = c.dur("delay"); err != nil {
			return nil, err
		}
		if delay == 0 {
			return nil, usagef("delay=100ns or more", "delay=0: light takes time too; give a duration")
		}
	}
	var mtu uint64
	if c.has("netdev_mtu") {
		if mtu, err = c.num("netdev_mtu", 31); err != nil {
			return nil, err
		}
	}
	if c.has("netdev_mtu") && (mtu < 68 || mtu > 65535) {
		return nil, usagef("netdev_mtu=1500 (Ethernet) or netdev_mtu=9000 (jumbo frames)", "netdev_mtu=%d is not an IP MTU (68 to 65535)", mtu)
	}
	saved := map[string]verbs.LinkParams{}
	restore := func() {
		for name, p := range saved {
			lc.SetLinkParams(name, p)
		}
	}
	for _, name := range devs {
		if _, done := saved[name]; done {
			continue
		}
		p, err := lc.LinkParams(name)
		if err != nil {
			restore()
			return nil, err
		}
		saved[name] = p
		if rate > 0 {
			p.Bandwidth = rate
		}
		if delay > 0 {
			p.Latency = delay
		}
		if mtu > 0 {
			p.MTU = int(mtu)
		}
		if err := lc.SetLinkParams(name, p); err != nil {
			restore()
			return nil, err
		}
	}
	return restore, nil
}

// parseRate reads a link rate in bits per second: 25G, 100g, 1.5G, 100M,
// 25Gb/s, 25000000000.
func parseRate(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "bps"), "b")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'g':
			mult = 1e9
		case 't':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a link rate (write 25G, 100G, 1G or 100M, in bits per second)", s)
	}
	r := v * mult
	if r < 1e6 || r > 1e13 {
		return 0, fmt.Errorf("%s: a link rate here is 1M to 10T bits per second", s)
	}
	return int64(r), nil
}

// benchHeader prints what was connected, over what, and with which clock.
func benchHeader(c *call, res *sweep.Result, wall time.Duration) {
	mtu := fmt.Sprintf("path MTU %d (the ports' active MTU)", res.PathMTU.Bytes())
	if res.PathMTU < res.ActiveMTU {
		mtu = fmt.Sprintf("path MTU %d (mtu=; the ports' active MTU is %d)", res.PathMTU.Bytes(), res.ActiveMTU.Bytes())
	}
	c.line("A: RC QP %#06x on %s, B: RC QP %#06x on %s; %s", res.QPNA, res.A, res.QPNB, res.B, mtu)
	if cfg := res.Config; cfg.MTU > res.PathMTU {
		hint := "raise the netdev MTU"
		if _, ok := c.s.prov.(verbs.LinkConfigurer); ok {
			hint = "netdev_mtu=9000 gives 4096"
		}
		c.line("mtu=%d is more than the ports' active MTU: lowered to %d, as perftest does (%s)", cfg.MTU.Bytes(), res.ActiveMTU.Bytes(), hint)
	}
	if res.Loopback {
		c.line("A and B are both %s: its packets loop back inside the device (rxe_loopback) and never reach the wire", res.A)
	}
	if lc, ok := c.s.prov.(verbs.LinkConfigurer); ok {
		pa, erra := lc.LinkParams(res.A)
		pb, errb := lc.LinkParams(res.B)
		link := func(p verbs.LinkParams) string {
			return fmt.Sprintf("%s, %s to the switch, netdev MTU %d", rateString(p.Bandwidth), p.Latency, p.MTU)
		}
		switch {
		case erra != nil || errb != nil:
		case res.Loopback:
			c.line("%s's link: %s (a looped-back packet is serialized at its rate and takes the fabric's loopback latency)", res.A, link(pa))
		case pa == pb:
			c.line("links of %s and %s: %s each", res.A, res.B, link(pa))
		default:
			c.line("%s's link: %s; %s's: %s", res.A, link(pa), res.B, link(pb))
		}
	}
	if res.Config.HasOp(sweep.Read) {
		c.line("READs outstanding: up to %d (max_rd_atomic: the devices' max_qp_rd_atom, as perftest sets it)", res.OutReads)
	}
	switch {
	case res.Config.Clock == sweep.Virtual:
		c.line("time: virtual (the simulator's clock, stepped packet by packet: the same at every run)")
	case c.s.prov.Name() == "sim":
		c.line("time: wall clock, %s in all: on the simulator that is how fast it simulates, not its link model", wall.Round(time.Millisecond))
	default:
		c.line("time: wall clock, %s in all", wall.Round(time.Millisecond))
	}
}

func rateString(bps int64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(float64(bps)/1e9, 'f', -1, 64) + " Gb/s"
	case bps >= 1e6:
		return strconv.FormatFloat(float64(bps)/1e6, 'f', -1, 64) + " Mb/s"
	}
	return strconv.FormatInt(bps, 10) + " b/s"
}

// benchTitle names a series the way perftest would be run for it.
func benchTitle(res *sweep.Result, sr sweep.Series) string {
	cfg := res.Config
	if sr.Test == sweep.BW {
		return fmt.Sprintf("%s: %d messages per size, %d outstanding (tx_depth), one in %d signaled", sr.Program(), cfg.Iters, cfg.TxDepth, cfg.CQMod)
	}
	if sr.Op == sweep.Read {
		return fmt.Sprintf("%s: %d READs per size, one at a time; each is a whole round trip", sr.Program(), cfg.LatIters)
	}
	return fmt.Sprintf("%s: %d round trips per size; latency is half a round trip, as perftest reports it", sr.Program(), cfg.LatIters)
}

// benchErr turns a sweep's error into the shell's: a verb's error keeps
// its errno, with where the sweep was.
func benchErr(c *call, err error) error {
	var se *sweep.Error
	if !errors.As(err, &se) {
		return err
	}
	where := se.Msg
	if se.Program != "" {
		where = fmt.Sprintf("%s, %d bytes: %s", se.Program, se.Size, se.Msg)
	}
	if errors.Is(se.Err, context.Canceled) {
		return c.s.stopped("%s stopped at %d bytes; run it again with a smaller max= or fewer iters=", se.Program, se.Size)
	}
	if ve, ok := verbs.AsError(se.Err); ok {
		// The sweep's hint names the option that made the verb fail;
		// the verb's own names the verb's arguments, which bench chose.
		hint := se.Hint
		if hint == "" {
			hint = ve.Hint
		}
		return &verbs.Error{Op: ve.Op, Errno: ve.Errno, Why: where + ": " + ve.Why, Hint: hint}
	}
	hint := se.Hint
	if hint == "" {
		hint = c.cmd.usageHint()
	}
	return usagef(hint, "%s", se.Error())
}

// benchProgress reports a sweep's progress through Options.Progress: the
// status with the time so far, every 100 ms once the run has taken 300 ms,
// and a step for each size done once it has taken a second.
type benchProgress struct {
	mu     sync.Mutex
	show   func(status string, step bool)
	start  time.Time
	status string
	shown  bool
	stop   func()
}

func (s *Shell) startBenchProgress() *benchProgress {
	p := &benchProgress{show: s.opts.Progress, start: time.Now()}
	if p.show == nil {
		p.show = func(string, bool) {}
	}
	p.stop = s.ticker(100*time.Millisecond, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.status != "" && time.Since(p.start) >= 300*time.Millisecond {
			p.show(fmt.Sprintf("%s, %s (Ctrl-C stops it)", p.status, time.Since(p.start).Round(100*time.Millisecond)), false)
			p.shown = true
		}
	})
	return p
}

// point is the sweep's Progress callback.
func (p *benchProgress) point(pr sweep.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = fmt.Sprintf("bench: %s %d bytes done (%d of %d)", sweep.Program(pr.Op, pr.Test), pr.Point.Size, pr.Done, pr.Total)
	if time.Since(p.start) >= time.Second {
		p.show(fmt.Sprintf("%s, %s", p.status, time.Since(p.start).Round(100*time.Millisecond)), true)
		p.shown = true
	}
}

func (p *benchProgress) end() {
	p.stop()
	if p.shown {
		p.show("", false)
	}
}

// benchChart is a series as an SVG bar chart, for HTML notebooks: Gb/s on
// a linear scale to the link's rate (full; 0: the largest), or t_typical
// in microseconds on a logarithmic one.
func benchChart(res *sweep.Result, sr sweep.Series, full float64) picture.BarChart {
	ch := picture.BarChart{Title: benchTitle(res, sr), Unit: "Gb/s", Full: full}
	if sr.Test != sweep.BW {
		ch.Unit, ch.Log = "t_typical [usec]", true
	}
	for _, p := range sr.Points {
		b := picture.Bar{Label: sweep.SizeLabel(p.Size)}
		if sr.Test == sweep.BW {
			b.Value, b.Text = p.Gbps(), fmt.Sprintf("%.2f", p.Gbps())
		} else {
			b.Value, b.Text = p.TTypical, fmt.Sprintf("%.2f", p.TTypical)
		}
		ch.Bars = append(ch.Bars, b)
	}
	return ch
}
