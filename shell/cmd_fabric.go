package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// notAvailable is the error of a simulator-only command on a backend that
// does not offer it.
func (s *Shell) notAvailable(what, instead string) error {
	return usagef(instead, "%s is not available on this backend (%s): it does not let vsh %s",
		what, s.prov.Name(), map[string]string{
			"stepping":        "hold or move its packets",
			"packet tracing":  "see its wire",
			"fault injection": "break its wire",
		}[what])
}

func (s *Shell) stepper() (verbs.Stepper, error) {
	st, ok := s.prov.(verbs.Stepper)
	if !ok {
		return nil, s.notAvailable("stepping", "packets move by themselves on real hardware; poll_cq wait=... waits for them")
	}
	return st, nil
}

func backendCmd() *command {
	return &command{Name: "backend", Group: gFabric, Usage: "backend [xrc=on|off]",
		Summary: "Say which backend runs the verbs and what it lets you see and do",
		Help: "xrc=on gives the simulator XRC (open_xrcd, create_srq_ex type=xrc, create_qp_ex type=xrc_send|xrc_recv, open_qp), " +
			"as mlx5 has it; xrc=off takes it away again, as kernel rxe has none (every XRC verb fails with EOPNOTSUPP), which is " +
			"the default unless vsh started with --sim-xrc. Turning it off needs every XRC domain closed and every SRQ destroyed (EBUSY). " +
			"reset keeps the choice. A real device has XRC or not, and vsh cannot switch it.",
		Args: []argSpec{key("xrc", vOnOff, "", "the simulator's XRC: on or off")},
		meta: true, run: cmdBackend}
}

func cmdBackend(c *call) error {
	s := c.s
	if c.has("xrc") {
		on, err := c.boolArg("xrc")
		if err != nil {
			return err
		}
		if err := s.setXRC(on); err != nil { // cmd_xrc.go
			return err
		}
		c.line("xrc: %s", s.xrcState())
		return nil
	}
	c.line("backend %s", s.backendDesc())
	var names []string
	for _, d := range s.devs {
		names = append(names, d.Name())
	}
	if len(s.devs) > 0 {
		b := s.devs[0].Name()
		if len(s.devs) > 1 {
			b = s.devs[1].Name()
		}
		c.line("devices: %s (A = %s, B = %s)", strings.Join(names, ", "), s.devs[0].Name(), b)
	} else {
		c.line("devices: none")
	}
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no: this backend does not offer it (real hardware never does)"
	}
	_, step := s.prov.(verbs.Stepper)
	_, obs := s.prov.(verbs.PacketObserver)
	_, flt := s.prov.(verbs.FaultInjector)
	_, insp := s.prov.(verbs.Inspector)
	_, link := s.prov.(verbs.LinkConfigurer)
	groups := "yes"
	if _, ok := s.prov.(verbs.HostGroups); !ok {
		groups = "no: this backend does not let vsh join IP multicast groups"
	}
	c.out.add(render.KV([][2]string{
		{"stepping (fabric, step, run, advance)", yes(step)},
		{"packet trace (trace)", yes(obs)},
		{"fault injection (fault)", yes(flt)},
		{"queue internals (show, live view)", yes(insp)},
		{"link model (bench rate=, delay=)", yes(link)},
		{"IP groups (join_group, leave_group)", groups},
		{"xrc (open_xrcd, create_qp_ex, ...)", s.xrcState()},
	}))
	return nil
}

func fabricCmd() *command {
	return &command{Name: "fabric", Group: gFabric, Usage: "fabric [auto|step]",
		Summary: "Show or set when the simulated fabric moves packets",
		Help: "auto (the default) delivers every packet right after the verb that caused it, so programs just work. " +
			"step holds every packet until step, run or advance moves it, so you can watch a transfer one packet at a time.",
		Args: []argSpec{pos("MODE", vDelivery, false, "auto or step")}, run: cmdFabric}
}

func cmdFabric(c *call) error {
	st, err := c.s.stepper()
	if err != nil {
		return err
	}
	if len(c.a.pos) > 0 {
		switch strings.ToLower(c.a.pos[0].text) {
		case "auto":
			st.SetDeliveryMode(verbs.DeliverAuto)
		case "step":
			st.SetDeliveryMode(verbs.DeliverStep)
		default:
			return usagef("fabric auto, or fabric step", "unknown mode %q", c.a.pos[0].text)
		}
	}
	packets, timers := st.Pending()
	c.line("fabric: %s delivery; virtual time %s; in flight: %d packet%s, %d timer%s armed",
		st.DeliveryMode(), st.Now(), packets, plural(packets), timers, plural(timers))
	if st.DeliveryMode() == verbs.DeliverStep {
		c.line("packets wait until step, run or advance moves them")
	}
	return nil
}

// fabricEvents prints what step, run or advance delivered and fired, then,
// when tracing, the packets of the wire the events do not show (sent, and
// still in flight): each packet once.
func (s *Shell) fabricEvents(c *call, evs []verbs.FabricEvent) {
	shown := map[uint64]bool{}
	for _, ev := range evs {
		c.line("t=%s %s: %s", ev.Time, ev.Kind, ev.Text)
		if ev.Packet != nil {
			shown[ev.Packet.Seq] = true
		}
	}
	s.flushWire(c, shown)
}

const maxSteps = 100000

func stepCmd() *command {
	return &command{Name: "step", Group: gFabric, Usage: "step [N]",
		Summary: "Deliver one packet or fire one timer (N times)",
		Args:    []argSpec{pos("N", vNum, false, "how many steps, default 1")}, run: cmdStep}
}

func cmdStep(c *call) error {
	st, err := c.s.stepper()
	if err != nil {
		return err
	}
	n, err := c.posNum(0, "N", 1)
	if err != nil {
		return err
	}
	if n > maxSteps {
		return usagef(fmt.Sprintf("step at most %d at a time, or run", maxSteps), "step %d is too many", n)
	}
	done := 0
	for i := uint64(0); i < n; i++ {
		ev, ok := st.Step()
		if !ok {
			break
		}
		done++
		c.s.fabricEvents(c, []verbs.FabricEvent{ev})
	}
	if done == 0 {
		packets, timers := st.Pending()
		msg := "nothing to step: no packet in flight"
		if timers > 0 {
			msg += fmt.Sprintf("; %d timer%s armed for later (advance moves time)", timers, plural(timers))
		}
		c.line("%s", msg)
		_ = packets
	}
	return nil
}

func runCmd() *command {
	return &command{Name: "run", Group: gFabric, Usage: "run",
		Summary: "Deliver packets until none is in flight (timers not yet due stay armed)", run: cmdRun}
}

func cmdRun(c *call) error {
	st, err := c.s.stepper()
	if err != nil {
		return err
	}
	evs := st.Run()
	c.s.fabricEvents(c, evs)
	packets, timers := st.Pending()
	c.line("ran %d step%s; virtual time %s; %d packet%s in flight, %d timer%s armed", len(evs), plural(len(evs)),
		st.Now(), packets, plural(packets), timers, plural(timers))
	return nil
}

func advanceCmd() *command {
	return &command{Name: "advance", Group: gFabric, Usage: "advance DURATION",
		Summary: "Move virtual time forward: due timers fire (retransmits, RNR retries)",
		Help:    "Virtual time ends at 2^62 ns (about 146 years), so that every timer's expiry still fits; advance goes no further.",
		Args:    []argSpec{pos("DURATION", vDuration, true, "how far: 10ms, 1s")}, run: cmdAdvance}
}

func cmdAdvance(c *call) error {
	st, err := c.s.stepper()
	if err != nil {
		return err
	}
	d, err := parseDuration(c.a.pos[0].text)
	if err != nil {
		return usagef("advance 10ms", "bad duration %q: %v", c.a.pos[0].text, err)
	}
	start := st.Now()
	if left := max(verbs.MaxVirtualTime-start, 0); d > left {
		more := fmt.Sprintf("advance at most %s", left)
		if left == 0 {
			more = "it can go no further (reset, or lesson reset in a lesson, starts again at 0)"
		}
		return usagef("advance 10ms", "virtual time ends at %s (2^62 ns, about 146 years) and is %s now: %s",
			verbs.MaxVirtualTime, start, more)
	}
	target := start + d
	// Time moves a slice at a time, so that one call holds a bounded
	// number of events and Ctrl-C is looked at between slices; the slice
	// grows while little happens and shrinks in a storm of retries.
	slice := time.Millisecond
	events := 0
	for st.Now() < target {
		if c.s.interrupted() {
			return c.s.stopped("advance moved virtual time from %s to %s of %s", start, st.Now(), target)
		}
		if events >= maxAdvanceEvents {
			c.out.closing(fmt.Sprintf("advance stopped after %d events at virtual time %s, %s short of %s: the fabric never settles (a retry that never ends, such as RNR with rnr_retry 7); "+
				"advance less far, or end what retries (modify_qp QP state=err)", events, st.Now(), target-st.Now(), target))
			return nil
		}
		step := min(slice, target-st.Now())
		if packets, timers := st.Pending(); packets == 0 && timers == 0 {
			step = target - st.Now() // nothing can happen: straight there
		}
		evs := st.Advance(step)
		events += len(evs)
		c.s.fabricEvents(c, evs)
		switch {
		case len(evs) < advanceFew:
			slice = min(2*slice, time.Hour)
		case len(evs) > advanceMany:
			slice = max(slice/2, time.Microsecond)
		}
	}
	c.out.closing(fmt.Sprintf("virtual time is now %s", st.Now()))
	return nil
}

// advance's slices: fewer events than advanceFew double the next slice,
// more than advanceMany halve it; maxAdvanceEvents bounds one advance's
// work, as the simulator bounds one call's.
const advanceFew, advanceMany = 256, 4096

var maxAdvanceEvents = 1 << 22 // a variable for tests

// faultRule parses a fault rule's arguments with the common machinery.
var faultRule = &command{Name: "fault", Usage: "fault ACTION [opcode=NAME] [psn=N] [from=DEV] [to=DEV] [nth=N] [count=N] [prob=P] [delay=D]",
	Args: []argSpec{
		pos("ACTION", vFaultAction, true, "drop, duplicate, reorder, delay, corrupt or cut"),
		key("opcode", vText, "any", "matches when the packet's opcode name contains it (send_only, acknowledge)"),
		key("psn", vNum, "any", "matches one PSN"),
		key("from", vDevice, "any", "the sending device (on the UDP link, also a peer's address)"),
		key("to", vDevice, "any", "the receiving device (on the UDP link, also a peer's address)"),
		key("nth", vNum, "every", "act on the nth matching packet only, counting from 1"),
		key("count", vNum, "no limit", "retire the rule after this many hits"),
		key("prob", vText, "1", "act with this probability, drawn from the seed", "probability"),
		key("delay", vDuration, "0", "how long delay holds a packet"),
	}}

func faultCmd() *command {
	return &command{Name: "fault", Group: gFabric,
		Usage:   "fault [list] | fault ACTION [opcode=NAME] [psn=N] [from=DEV] [to=DEV] [nth=N] [count=N] [prob=P] [delay=D] | fault del ID | fault clear",
		Summary: "Break the wire on purpose: drop, duplicate, reorder, delay, corrupt or cut packets",
		Help: "ACTION is drop, duplicate, reorder, delay, corrupt or cut. opcode= matches the packet's opcode name " +
			"(send_only, rdma_write_first, acknowledge: any part of it); nth=2 acts on the second matching packet only; " +
			"count=N retires the rule after N hits; prob=0.1 acts at random, from the seed. " +
			"On the UDP link (--sim-addr), from= or to= may name a peer by its address: a rule from a peer acts on its packets " +
			"as they arrive, so the peer (another vsh, or kernel rxe) sees the loss. " +
			"Example: fault drop opcode=acknowledge nth=1, then watch the requester retransmit.",
		rawArgs: true, run: cmdFault, complete: completeFault}
}

func cmdFault(c *call) error {
	fi, ok := c.s.prov.(verbs.FaultInjector)
	if !ok {
		return c.s.notAvailable("fault injection", "on a real network, use tc netem on the RoCE interface")
	}
	words := c.a.pos
	sub := "list"
	if len(words) > 0 {
		sub = strings.ToLower(words[0].text)
	}
	switch sub {
	case "list", "ls":
		if len(words) > 1 {
			return usagef("fault list", "fault list takes no arguments")
		}
		return faultList(c, fi)
	case "clear":
		fi.ClearFaults()
		c.line("all fault rules removed")
		return nil
	case "del", "rm", "delete", "remove":
		if len(words) != 2 {
			return usagef("fault del 1 (fault list shows the ids)", "fault del needs one rule id")
		}
		id, err := parseUint(words[1].text, 31)
		if err != nil {
			return usagef("fault del 1 (fault list shows the ids)", "bad rule id %s: %v", words[1].text, err)
		}
		if err := fi.RemoveFault(int(id)); err != nil {
			return faultErr(err, "fault list shows the rules and their ids")
		}
		c.line("fault rule %d removed", id)
		return nil
	}
	a, err := parseArgs(faultRule, words)
	if err != nil {
		return err
	}
	fc := &call{s: c.s, cmd: faultRule, a: a, out: c.out, cell: c.cell}
	act, err := verbs.ParseFaultAction(strings.ToLower(a.pos[0].text))
	if err != nil {
		return usagef("fault drop opcode=acknowledge nth=1; "+c.cmd.usageHint(), "%v", err)
	}
	r := verbs.FaultRule{Action: act, Opcode: fc.raw("opcode")}
	if fc.has("psn") {
		n, err := fc.numOr("psn", 0, 24)
		if err != nil {
			return err
		}
		r.PSN, r.HasPSN = uint32(n), true
	}
	for _, k := range []string{"from", "to"} {
		if !fc.has(k) {
			continue
		}
		name := fc.raw(k)
		if d, err := c.s.device(name); err == nil {
			name = d.Name()
		} else if _, perr := netip.ParseAddr(name); perr != nil {
			return err // an address is a peer beyond the UDP link: AddFault decides
		}
		if k == "from" {
			r.From = name
		} else {
			r.To = name
		}
	}
	if r.Nth, err = fc.intOr("nth", 0); err != nil {
		return err
	}
	if fc.has("nth") && r.Nth == 0 {
		return fc.bad("nth", fmt.Errorf("nth counts from 1 (nth=1 is the first match); leave it out to act on every match"))
	}
	if r.Count, err = fc.intOr("count", 0); err != nil {
		return err
	}
	if fc.has("count") && r.Count == 0 {
		return fc.bad("count", fmt.Errorf("count retires the rule after that many hits, at least 1; leave it out for no limit"))
	}
	if fc.has("prob") {
		p, err := strconv.ParseFloat(fc.raw("prob"), 64)
		if err != nil || p < 0 || p > 1 {
			return fc.bad("prob", fmt.Errorf("a probability is between 0 and 1: 0.1"))
		}
		if p == 0 {
			// The rule's zero Probability means "always".
			return fc.bad("prob", fmt.Errorf("a rule that never acts does nothing: give a probability above 0 (0.1), or no rule"))
		}
		r.Probability = p
	}
	if r.Delay, err = fc.dur("delay"); err != nil {
		return err
	}
	if act == verbs.FaultDelay && r.Delay == 0 {
		return usagef("fault delay delay=10us opcode=...", "a delay rule needs delay=")
	}
	id, err := fi.AddFault(r)
	if err != nil {
		return faultErr(err, "")
	}
	r.ID = id
	for _, stored := range fi.Faults() {
		if stored.ID == id {
			r = stored // as the fabric keeps it: a peer's address in its canonical form
		}
	}
	c.line("fault rule %d: %s", id, describeFault(r))
	return nil
}

// faultErr is an error of the fabric's fault rules as the fault command
// reports it: the command already names itself, so the fabric's Op
// ("fault") is dropped; hint, when given, replaces the fabric's.
func faultErr(err error, hint string) error {
	ve, ok := verbs.AsError(err)
	if !ok {
		return err
	}
	e := *ve
	if e.Op == "fault" {
		e.Op = ""
	}
	if hint != "" {
		e.Hint = hint
	}
	return &e
}

func describeFault(r verbs.FaultRule) string {
	parts := []string{r.Action.String()}
	if r.Opcode != "" {
		parts = append(parts, "opcode~"+r.Opcode)
	}
	if r.HasPSN {
		parts = append(parts, "psn="+psnHex(r.PSN))
	}
	if r.From != "" {
		parts = append(parts, "from="+r.From)
	}
	if r.To != "" {
		parts = append(parts, "to="+r.To)
	}
	if r.Nth > 0 {
		parts = append(parts, fmt.Sprintf("nth=%d", r.Nth))
	}
	if r.Count > 0 {
		parts = append(parts, fmt.Sprintf("count=%d", r.Count))
	}
	if r.Probability > 0 && r.Probability < 1 {
		parts = append(parts, fmt.Sprintf("prob=%g", r.Probability))
	}
	if r.Delay > 0 {
		parts = append(parts, "delay="+r.Delay.String())
	}
	if len(parts) == 1 {
		parts = append(parts, "every packet")
	}
	return strings.Join(parts, " ")
}

func faultList(c *call, fi verbs.FaultInjector) error {
	rules := fi.Faults()
	if len(rules) == 0 {
		c.line("no fault rules; fault drop opcode=acknowledge nth=1 adds one")
		return nil
	}
	var rows [][]string
	for _, r := range rules {
		rows = append(rows, []string{fmt.Sprint(r.ID), describeFault(r), fmt.Sprint(r.Hits)})
	}
	c.out.add(render.Table([]string{"id", "rule", "hits"}, rows))
	return nil
}

func traceCmd() *command {
	return &command{Name: "trace", Group: gFabric, Usage: "trace on|off|pcap FILE|ladder [N] [width=W] [svg=FILE]",
		Summary: "Print every packet on the wire after each command, write them to a pcap file, or draw them as a ladder",
		Help: "trace ladder draws the packets trace saw as a ladder diagram (Wireshark's flow graph): a column per device " +
			"(per QP when a device sends to itself), an arrow per packet with its opcode, PSN, AckReq and AETH syndrome, " +
			"✗ where one was dropped and why, ↻ on a retransmission, and the virtual time each was sent down the left. " +
			"Without N it draws the packets of the last command that sent any; trace ladder 20 draws the last 20 " +
			fmt.Sprintf("(vsh keeps the last %d). ", maxLadderPackets) +
			"width= fits it to a narrower or wider terminal; svg=ladder.svg also writes it as an SVG picture for a web page. " +
			"trace off stops recording but keeps what was recorded; reset forgets it.",
		Args: []argSpec{pos("MODE", vTrace, true, "on, off, pcap or ladder"),
			pos("FILE/N", vText, false, "pcap: the file to write; ladder: how many packets to draw"),
			key("width", vNum, fmt.Sprint(defaultPictureWidth), "ladder: the widest line, in columns, the cell's [N] included"),
			key("svg", vFile, "", "ladder: also write the picture to this file as SVG")},
		run: cmdTrace}
}

func cmdTrace(c *call) error {
	s := c.s
	mode := strings.ToLower(c.a.pos[0].text)
	switch mode {
	case "off":
		if len(c.a.pos) > 1 || c.has("width") || c.has("svg") {
			return usagef("trace off", "trace off takes no arguments")
		}
		if s.tr == nil {
			c.line("tracing is already off")
			return nil
		}
		err := s.tr.stop()
		s.tr = nil
		c.line("tracing off")
		return err
	case "ladder":
		return traceLadder(c)
	case "on", "pcap":
	default:
		return usagef("trace on, trace off, trace pcap FILE or trace ladder", "unknown trace mode %q", c.a.pos[0].text)
	}
	for _, k := range []string{"width", "svg"} {
		if c.has(k) {
			return usagef("trace ladder "+k+"=...", "%s= is for trace ladder, not trace %s", k, mode)
		}
	}
	obs, ok := s.prov.(verbs.PacketObserver)
	if !ok {
		return s.notAvailable("packet tracing", "capture the RoCE interface instead: tcpdump -i eth0 -w roce.pcap udp port 4791")
	}
	var file string
	if mode == "pcap" {
		if len(c.a.pos) < 2 {
			return usagef("trace pcap roce.pcap", "trace pcap needs a file")
		}
		file = c.a.pos[1].text
	} else if len(c.a.pos) > 1 {
		return usagef("trace pcap FILE writes a file; trace on prints", "trace on takes no file")
	}
	if s.tr != nil {
		if err := s.tr.stop(); err != nil {
			return err
		}
		s.tr = nil
	}
	tr, err := startTrace(s, obs, file)
	if err != nil {
		return err
	}
	s.tr = tr
	if file != "" {
		c.line("tracing on; packets also go to %s (open it in Wireshark: RoCEv2 is UDP port 4791)", file)
	} else {
		c.line("tracing on: every packet on the wire is printed after the command that caused it")
	}
	return nil
}
