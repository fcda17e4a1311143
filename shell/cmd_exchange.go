package shell

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// exchange: the out-of-band address swap of rdma-core's ping-pongs, done by
// hand. The learner's side is a vsh session; the other side is a program
// (ibv_rc_pingpong, vsh's pingpong) on another host or in another process.

const xchgDefaultWait = 30 * time.Second

func exchangeCmd() *command {
	return &command{Name: "exchange", Group: gQP, network: true,
		Usage: "exchange listen QP... [port=18515] [gid_index=1] [wait=30s] | exchange reply [wait=30s] | " +
			"exchange connect HOST QP... [port=18515] [gid_index=1] [wait=30s]",
		Summary: "Swap QP addresses (LID, QPN, PSN, GID) over TCP with a remote ping-pong, in rdma-core's 52-byte format",
		Help: "Before two QPs on two hosts can connect, each side must learn the other's QP number, start PSN and GID. " +
			"rdma-core's ping-pongs swap them over a TCP socket (port 18515), each address a 52-byte text " +
			"\"LLLL:QQQQQQ:PPPPPP:GGGG...\" (sprintf(\"%04x:%06x:%06x:%s\") and a NUL). exchange speaks that protocol, so a " +
			"program can be one side while you drive the other by hand: it prints the bytes sent and received, the remote " +
			"address learned, and the modify_qp commands to type next with the peer's values filled in.\n\n" +
			"\texchange connect HOST qp0     be the client (ibv_rc_pingpong HOST): send our address, read the server's, send \"done\"\n" +
			"\texchange listen qp0           be the server (ibv_rc_pingpong): accept a client and read its address; then RTR/RTS by hand\n" +
			"\texchange reply                the server's second half: send our address, read the client's \"done\"\n\n" +
			"The order matters. rdma-core's server reads the client's address, moves its own QP to RTR and RTS, and only " +
			"then replies; the client connects its QP when the reply comes and sends the first message at once. So the " +
			"server side is two commands: exchange listen, then your modify_qp to RTR and RTS, then exchange reply. " +
			"A server that replied first would let the client's first SEND reach a QP that is not yet in RTR, which drops " +
			"it (RC then retransmits; UC and UD lose it). Post receives while the QP is in INIT, as the programs do.\n\n" +
			"The PSN we announce is the QP's sq_psn when it is in RTS already, else psn= when given, else one drawn at " +
			"random (on the simulator: derived from the QP number, so a transcript is the same at every run); the " +
			"printed RTS command sets sq_psn to it. One QP is one 52-byte message (ibv_rc, uc and ud_pingpong); a list of " +
			"QPs, or QPs on an SRQ, is ibv_srq_pingpong's 256 slots. gid_index=1 is -g 1, on rxe and the simulator the " +
			"RoCEv2 GID of the device's address (IPv4-mapped for IPv4) that RoCE needs (gid_index=none sends zeros, as without -g). Every network wait gives up after wait= (30s); Ctrl-C stops " +
			"it too. vsh's own pingpong gives up on a silent peer after --timeout (10s): give it --timeout 0 (wait as " +
			"rdma-core does) when you drive the other side by hand.",
		Args: []argSpec{
			pos("MODE", vText, true, "listen, reply or connect"),
			pos("HOST", vText, false, "connect: the server's host name or address"),
			pos("QP...", vQP, false, "the local QP(s) whose address is sent"),
			key("port", vNum, "18515", "the TCP port (-p)"),
			key("gid_index", vText, "1", "the local GID index sent (-g), or none", "sgid_index"),
			key("ib_port", vNum, "1", "the device port (-i)"),
			key("psn", vNum, "QP's sq_psn, or drawn", "the start PSN to announce (24 bits; a list of QPs counts up from it)", "sq_psn"),
			key("mtu", vMTU, "1024", "the path_mtu the printed RTR command uses (-m)", "path_mtu"),
			key("wait", vDuration, "30s", "how long any network wait may last"),
		},
		rawArgs: true, run: cmdExchange, complete: completeExchange}
}

// xchgPend is a server's half-done exchange: the client's address is read,
// ours is not yet sent (exchange listen, then exchange reply).
type xchgPend struct {
	conn    *exchange.Conn
	qps     []string // handles
	remote  []exchange.Dest
	psns    []uint32 // the PSNs printed in the RTS commands
	slots   int
	gid     verbs.GID
	lid     uint16
	from    string
	created time.Time
}

// xchgPending holds each session's pending server exchange. The Shell has
// no field for it; a session has at most one.
var xchgPending sync.Map // *Shell → *xchgPend

func (s *Shell) takePending() *xchgPend {
	v, ok := xchgPending.LoadAndDelete(s)
	if !ok {
		return nil
	}
	return v.(*xchgPend)
}

// xchgSpec is the command as parseArgs sees it once the words are counted:
// npos positional QPs (or host and QPs) and the keys.
func (c *call) xchgArgs() (*call, error) {
	spec := *c.cmd
	spec.rawArgs = false
	spec.Args = nil
	npos := 0
	for _, t := range c.a.pos[1:] {
		if t.eq < 0 {
			npos++
		}
	}
	for i := 0; i < npos; i++ {
		spec.Args = append(spec.Args, pos(fmt.Sprintf("ARG%d", i), vText, false, ""))
	}
	for _, sp := range c.cmd.Args {
		if sp.kind == keyArg {
			spec.Args = append(spec.Args, sp)
		}
	}
	a, err := parseArgs(&spec, c.a.pos[1:])
	if err != nil {
		return nil, err
	}
	nc := *c
	nc.cmd, nc.a = &spec, a
	return &nc, nil
}

func cmdExchange(c *call) error {
	if len(c.a.pos) == 0 {
		return usagef(c.cmd.usageHint(), "exchange needs listen, reply or connect")
	}
	mode := strings.ToLower(c.a.pos[0].text)
	switch mode {
	case "listen", "connect", "reply":
	default:
		hint := c.cmd.usageHint()
		if near := nearest(mode, []string{"listen", "connect", "reply"}); near != "" {
			hint = "did you mean exchange " + near + "? " + hint
		}
		return usagef(hint, "unknown mode %q: exchange listen, reply or connect", c.a.pos[0].text)
	}
	cc, err := c.xchgArgs()
	if err != nil {
		return err
	}
	wait, err := cc.durOr("wait", xchgDefaultWait)
	if err != nil {
		return err
	}
	if wait == 0 {
		return usagef("wait=30s, or wait=10m for a slow peer", "wait=0 would give up at once; exchange needs time for the peer")
	}
	words := make([]string, len(cc.a.pos))
	for i, t := range cc.a.pos {
		words[i] = t.text
	}
	switch mode {
	case "reply":
		if len(words) > 0 {
			return usagef("exchange reply [wait=30s]: the QPs are the ones exchange listen was given", "exchange reply takes no QPs; %q is extra", words[0])
		}
		return cc.xchgReply(wait)
	case "connect":
		if len(words) == 0 {
			return usagef("exchange connect HOST qp0: HOST runs the server (ibv_rc_pingpong -g 1 without a host)", "exchange connect needs the server's HOST and a QP")
		}
		if k, isHandle := kindOfName(words[0]); isHandle && k == kQP {
			return usagef("exchange connect HOST "+strings.Join(words, " ")+": the host comes first", "exchange connect needs the server's host before the QPs; %s is a QP", words[0])
		}
		return cc.xchgConnect(words[0], words[1:], wait)
	}
	return cc.xchgListen(words, wait)
}

func (c *call) xchgPort() (uint64, error) {
	port, err := c.numOr("port", exchange.DefaultPort, 16)
	if err == nil && port == 0 {
		return 0, usagef("port=18515 (the programs' -p default), or the -p the peer uses", "port=0 is no port a peer can name")
	}
	return port, err
}

// xchgLocal resolves the QPs and builds the addresses this side sends.
type xchgSide struct {
	qps   []*object
	dests []exchange.Dest
	slots int
	gidIx int // -1: none
	port  uint8
	mtu   verbs.MTU
	drawn bool // some PSN was drawn (not the QP's sq_psn)
}

func (c *call) xchgLocal(mode string, names []string) (*xchgSide, error) {
	if len(names) == 0 {
		return nil, usagef(c.cmd.usageHint(), "exchange %s needs a QP: the local QP whose address the peer must learn", mode)
	}
	if len(names) > exchange.MaxQP {
		return nil, usagef(fmt.Sprintf("give at most %d QPs", exchange.MaxQP), "%d QPs do not fit ibv_srq_pingpong's %d slots", len(names), exchange.MaxQP)
	}
	sd := &xchgSide{slots: 1, gidIx: 1}
	seen := map[*object]bool{}
	for _, n := range names {
		o, err := c.s.h.lookup(n, kQP)
		if err != nil {
			return nil, err
		}
		if seen[o] {
			return nil, usagef("name each QP once", "%s is given twice", o.name)
		}
		seen[o] = true
		if len(sd.qps) > 0 && ctxOf(o) != ctxOf(sd.qps[0]) {
			return nil, usagef("give QPs of one context: a ping-pong's QPs share a device", "%s and %s are on different contexts", sd.qps[0].name, o.name)
		}
		if len(sd.qps) > 0 && o.qpType != sd.qps[0].qpType {
			return nil, usagef("give QPs of one type", "%s is %s but %s is %s", sd.qps[0].name, sd.qps[0].qpType, o.name, o.qpType)
		}
		switch o.qpType {
		case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD:
		default:
			return nil, usagef("the ping-pongs use RC, UC and UD QPs", "%s is %s", o.name, o.qpType)
		}
		sd.qps = append(sd.qps, o)
	}
	if len(sd.qps) > 1 || sd.qps[0].srqObj != nil {
		sd.slots = exchange.MaxQP
	}
	if sd.slots > 1 && sd.qps[0].qpType != verbs.QPTypeRC {
		return nil, usagef("one QP for ibv_uc_pingpong and ibv_ud_pingpong; several RC QPs (on an SRQ) for ibv_srq_pingpong",
			"%d %s QPs: only ibv_srq_pingpong sends several addresses, and its QPs are RC", len(sd.qps), sd.qps[0].qpType)
	}
	if v := strings.ToLower(c.raw("gid_index")); v == "none" || v == "-1" {
		sd.gidIx = -1
	} else if c.has("gid_index") {
		n, err := parseUint(v, 8)
		if err != nil {
			return nil, c.bad("gid_index", err)
		}
		sd.gidIx = int(n)
	}
	p, err := c.u8Or("ib_port", 1)
	if err != nil {
		return nil, err
	}
	sd.port = p
	sd.mtu = verbs.MTU1024
	if c.has("mtu") {
		m, err := verbs.ParseMTU(c.raw("mtu"))
		if err != nil {
			return nil, c.bad("mtu", err)
		}
		sd.mtu = m
	}
	ctx := ctxOf(sd.qps[0])
	ctxName := "ctx"
	for o := sd.qps[0]; o != nil; o = o.parent {
		if o.kind == kCtx {
			ctxName = o.name
		}
	}
	pa, err := ctx.QueryPort(p)
	if err != nil {
		return nil, err
	}
	calls := []VerbCall{{Name: "ibv_query_port", Args: fmt.Sprintf("%s, %d", ctxName, p), Result: fmt.Sprintf("= 0: lid %d", pa.LID)}}
	var gid verbs.GID
	if sd.gidIx >= 0 {
		if gid, err = ctx.QueryGID(p, sd.gidIx); err != nil {
			return nil, err
		}
		calls = append(calls, VerbCall{Name: "ibv_query_gid", Args: fmt.Sprintf("%s, %d, %d", ctxName, p, sd.gidIx), Result: "= 0: " + gid.String()})
	}
	c.verbsJoined("; ", calls...)
	var base uint64
	hasPSN := c.has("psn")
	if hasPSN {
		if base, err = c.numOr("psn", 0, 24); err != nil {
			return nil, err
		}
	}
	for i, o := range sd.qps {
		a, _, err := o.qp.Query(verbs.AttrState | verbs.AttrSQPSN)
		if err != nil {
			return nil, err
		}
		var psn uint32
		switch {
		case a.State == verbs.QPSRTS || a.State == verbs.QPSSQD:
			psn = a.SQPSN & 0xffffff
			c.line("%s is in %s: its sq_psn 0x%06x is the PSN announced", o.name, a.State, psn)
		case hasPSN:
			psn = uint32(base+uint64(i)) & 0xffffff
		default:
			psn = c.s.drawPSN(o)
			sd.drawn = true
		}
		sd.dests = append(sd.dests, exchange.Dest{LID: pa.LID, QPN: o.qp.Num(), PSN: psn, GID: gid})
	}
	return sd, nil
}

// drawPSN chooses a start PSN as rdma-core does (lrand48() & 0xffffff); on
// the simulator it is derived from the QP, so that transcripts repeat.
func (s *Shell) drawPSN(o *object) uint32 {
	if _, sim := s.prov.(verbs.Stepper); sim {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s/%d", o.dev, o.qp.Num())
		return h.Sum32() & 0xffffff
	}
	return rand.Uint32() & 0xffffff
}

func (sd *xchgSide) program() pingpong.Transport {
	switch {
	case sd.slots > 1:
		return pingpong.SRQ
	case sd.qps[0].qpType == verbs.QPTypeUC:
		return pingpong.UC
	case sd.qps[0].qpType == verbs.QPTypeUD:
		return pingpong.UD
	}
	return pingpong.RC
}

// message renders the bytes of the local addresses: each used slot quoted,
// the empty ones counted.
func (c *call) xchgShowSent(dests []exchange.Dest, slots int, to string) {
	c.line("sent %d bytes to %s (%d address%s):", slots*exchange.MsgSize, to, slots, plural2(slots, "es"))
	for _, d := range dests {
		m := d.Marshal()
		c.line("  %s", strconv.Quote(string(m[:])))
	}
	if n := slots - len(dests); n > 0 {
		m := exchange.Dest{}.Marshal()
		c.line("  and %d empty slots, each %s (ibv_srq_pingpong always sends %d)", n, strconv.Quote(string(m[:])), exchange.MaxQP)
	}
}

func plural2(n int, suffix string) string {
	if n == 1 {
		return ""
	}
	return suffix
}

// readRemote reads slots messages and parses the used ones.
func (c *call) xchgRead(conn *exchange.Conn, slots int, wait time.Duration, from string) ([]exchange.Dest, error) {
	buf := make([]byte, slots*exchange.MsgSize)
	if err := c.netStep(conn.ReadFull(c.s.ctx, buf, wait)); err != nil {
		return nil, c.netErr(err, fmt.Sprintf("reading the peer's address (%d bytes) from %s", len(buf), from), wait,
			"the peer must be the same program: one address for ibv_rc/uc/ud_pingpong, 256 for ibv_srq_pingpong (give exchange a list of QPs, or a QP on an SRQ)")
	}
	var out []exchange.Dest
	empty := 0
	for i := 0; i < slots; i++ {
		m := buf[i*exchange.MsgSize : (i+1)*exchange.MsgSize]
		if m[0] == 0 {
			empty = slots - i
			break
		}
		d, err := exchange.Parse(m)
		if err != nil {
			return nil, usagef("the peer must be one of rdma-core's ping-pongs, or vsh's pingpong or exchange",
				"the peer's message %d is not a ping-pong address: %v", i, err)
		}
		if d.QPN == 0 && len(out) > 0 {
			empty = slots - i
			break
		}
		out = append(out, d)
	}
	c.line("received %d bytes from %s:", len(buf), from)
	for _, d := range out {
		m := d.Marshal()
		c.line("  %s", strconv.Quote(string(m[:])))
	}
	if empty > 0 {
		c.line("  and %d empty slots", empty)
	}
	if len(out) == 0 {
		return nil, usagef("start the peer with -g 1 and the same program", "the peer sent no address")
	}
	return out, nil
}

// netStep turns a network step's error into errInterrupted when the cell
// was interrupted.
func (c *call) netStep(err error) error {
	if err != nil && c.s.interrupted() {
		return errInterrupted
	}
	return err
}

var errInterrupted = errors.New("interrupted")

// netErr explains a failed network step.
func (c *call) netErr(err error, what string, wait time.Duration, hint string) error {
	switch {
	case errors.Is(err, errInterrupted):
		return c.s.stopped("%s stopped; run the command again when the peer is ready", what)
	case exchange.IsTimeout(err):
		return usagef(hint+"; or give the peer more time with wait=", "%s: nothing came for %s", what, wait)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return usagef(hint, "%s: the peer closed the connection (%v); its own output says why", what, err)
	}
	return usagef(hint, "%s: %v", what, err)
}

func (c *call) xchgConnect(host string, names []string, wait time.Duration) error {
	host, err := connectHost(host, names)
	if err != nil {
		return err
	}
	port, err := c.xchgPort()
	if err != nil {
		return err
	}
	sd, err := c.xchgLocal("connect", names)
	if err != nil {
		return err
	}
	if c.s.takePending() != nil {
		c.line("(the exchange listen that waited for exchange reply is abandoned)")
	}
	prog := sd.program()
	for _, d := range sd.dests {
		c.line("%s", pingpong.LocalLine(prog, d))
	}
	addr := exchange.Addr(host, port)
	conn, err := exchange.Dial(c.s.ctx, addr, wait)
	if err != nil {
		var noHost *exchange.NoHostError
		if errors.As(err, &noHost) {
			return usagef("give the server's host name or address: localhost, 192.168.1.2", "no host %q: %v", host, noHost.Why)
		}
		if c.s.interrupted() {
			return c.s.stopped("exchange connect stopped trying %s; start the server, then run it again", addr)
		}
		why := err.Error()
		return usagef(fmt.Sprintf("start the server first (%s -g 1, without a host), on the same port: port=%d is its -p %d", prog.Program(), port, port),
			"couldn't connect to %s within %s: %s", addr, wait, why)
	}
	defer conn.Close()
	c.line("connected to %s (TCP)", addr)
	buf := make([]byte, 0, sd.slots*exchange.MsgSize)
	for _, d := range sd.dests {
		m := d.Marshal()
		buf = append(buf, m[:]...)
	}
	for i := len(sd.dests); i < sd.slots; i++ {
		m := exchange.Dest{}.Marshal()
		buf = append(buf, m[:]...)
	}
	if err := c.netStep(conn.Write(c.s.ctx, buf, wait)); err != nil {
		return c.netErr(err, "sending our address", wait, "the server went away; start it again")
	}
	c.xchgShowSent(sd.dests, sd.slots, addr)
	remote, err := c.xchgRead(conn, sd.slots, wait, addr)
	if err != nil {
		return err
	}
	done := []byte("done\x00")
	if err := c.netStep(conn.Write(c.s.ctx, done, wait)); err != nil {
		return c.netErr(err, "sending \"done\"", wait, "the server went away; its own output says why")
	}
	c.line("sent %q (5 bytes): the exchange is over, the TCP connection closes", string(done))
	for _, d := range remote {
		c.line("%s", pingpong.RemoteLine(d))
	}
	c.xchgMismatch(sd, remote)
	c.line("")
	c.line("The server has connected its QP already (it does so before it replies). Now connect yours, as the client's pp_connect_ctx does:")
	c.xchgNext(sd, remote)
	switch prog {
	case pingpong.UD:
		c.line("Then the client sends first: post_send with ah=, remote_qpn= and remote_qkey= above (the server's receives are posted), and poll_cq wait=5s for both completions.")
	default:
		c.line("Then the client sends first: post_recv for the server's answer (if not posted yet), post_send, and poll_cq wait=5s for both completions.")
	}
	return nil
}

func (c *call) xchgListen(names []string, wait time.Duration) error {
	port, err := c.xchgPort()
	if err != nil {
		return err
	}
	sd, err := c.xchgLocal("listen", names)
	if err != nil {
		return err
	}
	if c.s.takePending() != nil {
		c.line("(the earlier exchange listen that waited for exchange reply is abandoned)")
	}
	prog := sd.program()
	ln, err := exchange.Listen(port)
	if err != nil {
		hint := "another program holds the port (an earlier server?): stop it, or use another port= here and the same -p on the client"
		return usagef(hint, "couldn't listen on TCP port %d: %v", port, err)
	}
	defer ln.Close()
	pflag := ""
	if port != exchange.DefaultPort {
		pflag = fmt.Sprintf(" -p %d", port)
	}
	c.line("listening on TCP port %d; run the client now: %s -g 1%s THIS_HOST (waiting up to %s)", port, prog.Program(), pflag, wait)
	// The cell's output shows when it ends: say now that it waits.
	if show := c.s.opts.Progress; show != nil {
		show(fmt.Sprintf("exchange: listening on TCP port %d for up to %s; run the client now (Ctrl-C stops it)", port, wait), false)
		defer show("", false)
	}
	conn, err := ln.Accept(c.s.ctx, wait)
	switch {
	case err == nil:
	case c.s.interrupted():
		return c.s.stopped("exchange listen stopped waiting for a client on port %d; run it again, then start the client", port)
	case exchange.IsTimeout(err):
		return usagef(fmt.Sprintf("start the client within wait= (now %s): %s -g 1%s THIS_HOST, or give a longer wait=", wait, prog.Program(), pflag),
			"no client connected to port %d within %s", port, wait)
	default:
		return usagef("try again", "accept on port %d failed: %v", port, err)
	}
	from := conn.Peer()
	c.line("a client connected from %s", from)
	remote, err := c.xchgRead(conn, sd.slots, wait, from)
	if err != nil {
		conn.Close()
		return err
	}
	for _, d := range remote {
		c.line("%s", pingpong.RemoteLine(d))
	}
	c.xchgMismatch(sd, remote)
	p := &xchgPend{conn: conn, remote: remote, slots: sd.slots, from: from, created: time.Now()}
	for i, o := range sd.qps {
		p.qps = append(p.qps, o.name)
		p.psns = append(p.psns, sd.dests[i].PSN)
	}
	p.gid, p.lid = sd.dests[0].GID, sd.dests[0].LID
	xchgPending.Store(c.s, p)
	c.line("")
	c.line("The client now waits for our address. rdma-core's server first connects its QP (pp_connect_ctx between reading and")
	c.line("writing), so that the client's first message finds it ready. Do the same, then reply:")
	c.xchgNext(sd, remote)
	c.line("  exchange reply")
	return nil
}

func (c *call) xchgReply(wait time.Duration) error {
	if c.has("port") || c.has("gid_index") || c.has("psn") || c.has("mtu") || c.has("ib_port") {
		return usagef("exchange reply [wait=30s]", "exchange reply only takes wait=; the rest was given to exchange listen")
	}
	p := c.s.takePending()
	if p == nil {
		return usagef("exchange listen qp0 first: it accepts the client and reads its address; exchange reply answers it",
			"no exchange listen is waiting for a reply")
	}
	defer p.conn.Close()
	var local []exchange.Dest
	for i, n := range p.qps {
		o, err := c.s.h.lookup(n, kQP)
		if err != nil {
			return usagef("run exchange listen again", "%s was destroyed since exchange listen", n)
		}
		a, _, err := o.qp.Query(verbs.AttrState | verbs.AttrSQPSN)
		if err != nil {
			return err
		}
		c.verbs(VerbCall{Name: "ibv_query_qp", Args: fmt.Sprintf("%s, IBV_QP_STATE|IBV_QP_SQ_PSN", c.s.hn(o)), Result: fmt.Sprintf("= 0: %s, sq_psn 0x%06x", a.State, a.SQPSN&0xffffff)})
		psn := p.psns[i]
		switch {
		case a.State == verbs.QPSRTS || a.State == verbs.QPSSQD:
			if a.SQPSN&0xffffff != psn {
				c.line("%s's sq_psn is 0x%06x, not the 0x%06x suggested: announcing 0x%06x, which the client will expect", o.name, a.SQPSN&0xffffff, psn, a.SQPSN&0xffffff)
			}
			psn = a.SQPSN & 0xffffff
		case a.State == verbs.QPSRTR:
			c.line("warning: %s is in RTR, not RTS: it can receive, but cannot answer until modify_qp %s state=rts", o.name, o.name)
		default:
			c.line("warning: %s is in %s, not RTR: the client's first message will find it not ready and be dropped", o.name, a.State)
			c.line("  (rdma-core's server connects before it replies; RC retries a few times, then fails with IBV_WC_RETRY_EXC_ERR)")
		}
		local = append(local, exchange.Dest{LID: p.lid, QPN: o.qp.Num(), PSN: psn, GID: p.gid})
	}
	buf := make([]byte, 0, p.slots*exchange.MsgSize)
	for _, d := range local {
		m := d.Marshal()
		buf = append(buf, m[:]...)
	}
	for i := len(local); i < p.slots; i++ {
		m := exchange.Dest{}.Marshal()
		buf = append(buf, m[:]...)
	}
	if err := c.netStep(p.conn.Write(c.s.ctx, buf, wait)); err != nil {
		return c.netErr(err, "sending our address", wait, "the client went away (did it time out? vsh's pingpong takes --timeout 0 to wait like rdma-core); run exchange listen again")
	}
	prog := pingpong.RC
	if o, err := c.s.h.lookup(p.qps[0], kQP); err == nil {
		prog = (&xchgSide{qps: []*object{o}, slots: p.slots}).program()
	}
	for _, d := range local {
		c.line("%s", pingpong.LocalLine(prog, d))
	}
	c.xchgShowSent(local, p.slots, p.from)
	var done [5]byte
	if err := c.netStep(p.conn.ReadFull(c.s.ctx, done[:], wait)); err != nil {
		return c.netErr(err, "reading the client's \"done\"", wait, "the client went away; its own output says why")
	}
	if string(done[:]) != "done\x00" {
		return usagef("the client must be the same program (an srq client sends 256 addresses)", "the client sent %q where \"done\" belongs", done[:])
	}
	c.line("received %q (5 bytes): the exchange is over, the TCP connection closes", string(done[:]))
	c.line("")
	c.line("The client connects its QP now and sends the first message; the server's loop polls for it:")
	c.line("  poll_cq CQ wait=5s, then post_send the answer (and post_recv again for a longer loop)")
	return nil
}

// xchgMismatch warns about addresses that will not connect.
func (c *call) xchgMismatch(sd *xchgSide, remote []exchange.Dest) {
	if sd.slots > 1 && len(remote) != len(sd.qps) {
		c.line("warning: the peer sent %d addresses for our %d QPs: ibv_srq_pingpong needs the same -q on both sides (-q %d)", len(remote), len(sd.qps), len(sd.qps))
	}
	if remote[0].GID.InterfaceID() == 0 && sd.gidIx >= 0 {
		c.line("warning: the peer sent no GID (it runs without -g): RoCE needs a GRH; start it with -g 1")
	}
	if remote[0].GID.InterfaceID() != 0 && sd.gidIx < 0 {
		c.line("warning: the peer sent a GID but we sent none: its RTR builds no GRH toward us; use gid_index=1 (its -g 1)")
	}
}

// xchgNext prints the commands that connect the local QPs to the remote
// addresses, with rdma-core's values (pp_connect_ctx).
func (c *call) xchgNext(sd *xchgSide, remote []exchange.Dest) {
	for i, o := range sd.qps {
		if i >= len(remote) {
			break
		}
		r := remote[i]
		a, _, err := o.qp.Query(verbs.AttrState)
		if err != nil {
			continue
		}
		if a.State == verbs.QPSRTS || a.State == verbs.QPSSQD {
			c.line("  (%s is in %s already; its peer is QPN 0x%06x, PSN 0x%06x)", o.name, a.State, r.QPN, r.PSN)
			continue
		}
		if a.State == verbs.QPSReset {
			switch o.qpType {
			case verbs.QPTypeUD:
				c.line("  modify_qp %s state=init pkey_index=0 port=%d qkey=0x11111111", o.name, sd.port)
			default:
				c.line("  modify_qp %s state=init pkey_index=0 port=%d access=0", o.name, sd.port)
			}
			switch {
			case o.srqObj == nil:
				c.line("  post_recv %s mr=MR count=N     # the programs post their receives in INIT, before the peer can send", o.name)
			case i == 0:
				c.line("  post_srq_recv %s mr=MR count=N     # ibv_srq_pingpong posts its receives to the SRQ before the peer can send", o.srqObj.name)
			}
		}
		grh := ""
		if r.GID.InterfaceID() != 0 {
			gidIx := sd.gidIx
			if gidIx < 0 {
				gidIx = 1
			}
			grh = fmt.Sprintf(" dgid=%s sgid_index=%d hop_limit=1", r.GID, gidIx)
		}
		av := grh
		if r.LID != 0 {
			av += fmt.Sprintf(" dlid=0x%04x", r.LID)
		}
		psn := sd.dests[i].PSN
		switch o.qpType {
		case verbs.QPTypeRC:
			c.line("  modify_qp %s state=rtr path_mtu=%d dest_qpn=0x%06x rq_psn=0x%06x max_dest_rd_atomic=1 min_rnr_timer=12%s",
				o.name, sd.mtu.Bytes(), r.QPN, r.PSN, av)
			c.line("  modify_qp %s state=rts sq_psn=0x%06x timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1", o.name, psn)
		case verbs.QPTypeUC:
			c.line("  modify_qp %s state=rtr path_mtu=%d dest_qpn=0x%06x rq_psn=0x%06x%s", o.name, sd.mtu.Bytes(), r.QPN, r.PSN, av)
			c.line("  modify_qp %s state=rts sq_psn=0x%06x", o.name, psn)
		case verbs.QPTypeUD:
			c.line("  modify_qp %s state=rtr", o.name)
			c.line("  modify_qp %s state=rts sq_psn=0x%06x", o.name, psn)
			pd := o.parent
			ah := fmt.Sprintf("ah%d", c.s.h.next[kAH])
			if grh == "" {
				grh = " dgid=GID sgid_index=1 hop_limit=1"
			}
			c.line("  create_ah %s%s     # will be %s", pd.name, grh, ah)
			c.line("  post_send %s mr=MR ah=%s remote_qpn=0x%06x remote_qkey=0x11111111     # UD names the peer in every send", o.name, ah, r.QPN)
		}
	}
}

// completeExchange completes the mode, then QPs and keys.
func completeExchange(s *Shell, words []token, word string) []Suggestion {
	if len(words) == 0 {
		return filter([]Suggestion{
			{"listen", "be the server: accept a client and read its address"},
			{"reply", "the server's second half: send our address, read \"done\""},
			{"connect", "be the client: send our address to HOST, read the server's"},
		}, word)
	}
	cmd := exchangeCmd()
	spec := *cmd
	spec.rawArgs = false
	spec.Args = nil
	mode := strings.ToLower(words[0].text)
	if mode == "reply" {
		spec.Args = append(spec.Args, key("wait", vDuration, "30s", "how long any network wait may last"))
		return s.completeArgs(&spec, words[1:], word)
	}
	npos := 0
	for _, t := range words[1:] {
		if t.eq < 0 {
			npos++
		}
	}
	if mode == "connect" && npos == 0 {
		if strings.Contains(word, "=") {
			return nil
		}
		return filter([]Suggestion{{"localhost", "the server's host"}}, word)
	}
	// Any number of QPs: one more positional than given so far.
	for i := 0; i <= npos; i++ {
		spec.Args = append(spec.Args, pos("QP", vQP, false, "a queue pair"))
	}
	for _, sp := range cmd.Args {
		if sp.kind == keyArg {
			spec.Args = append(spec.Args, sp)
		}
	}
	return s.completeArgs(&spec, words[1:], word)
}

// connectHost reads exchange connect's HOST: a name or an address, an IPv6
// one with or without brackets ([::1]), never with a port, which port= gives.
func connectHost(host string, names []string) (string, error) {
	if h, ok := strings.CutPrefix(host, "["); ok {
		if h, ok := strings.CutSuffix(h, "]"); ok {
			return h, nil
		}
	}
	withPort := func(h string, port uint16) error {
		return usagef(fmt.Sprintf("exchange connect %s %s port=%d", h, strings.Join(names, " "), port),
			"%q holds a port: give the host alone, and the port as port=%d", host, port)
	}
	if ap, err := netip.ParseAddrPort(host); err == nil {
		return "", withPort(ap.Addr().String(), ap.Port())
	}
	if h, p, ok := strings.Cut(host, ":"); ok && !strings.Contains(p, ":") {
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			return "", withPort(h, uint16(n))
		}
	}
	return host, nil
}
