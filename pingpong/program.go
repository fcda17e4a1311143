package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// Program is the pingpong command: rdma-core's four programs behind one
// name, run on whatever backend Open gives. It never exits the process; Run
// returns the exit status.
type Program struct {
	// Name prefixes messages: "pingpong".
	Name string
	// Stdout gets rdma-core's lines, Stderr the errors and explanations.
	Stdout, Stderr io.Writer
	// Open returns the provider for --backend ("" = the default). The
	// program does not close it: its caller does, after Run.
	Open func(backend string) (verbs.Provider, error)
	// OpenOptions, when set, is used instead of Open and sees every
	// option: --backend and --sim-addr (cmd/pingpong puts the simulator
	// on its UDP link there).
	OpenOptions func(o Options) (verbs.Provider, error)
	// Listen, when set, replaces listening on -p (tests pass a listener
	// they bound already).
	Listen func(port int) (net.Listener, error)
	// Rand, when set, draws the PSNs (rdma-core: lrand48 seeded by pid and time).
	Rand *rand.Rand
	// Hint is added to the explanation of a run that stopped moving (for
	// example what the chosen backend cannot do).
	Hint string
	// Diagnose, when set, is asked once a run has stopped moving; what it
	// says (what the backend saw go wrong, such as datagrams the kernel
	// dropped) leads the explanation. "" adds nothing.
	Diagnose func() string
}

// Run runs the command line args (after the program name: "rc -g 1 host")
// against provider and returns the exit status. --backend, when given,
// must name provider's backend.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, provider verbs.Provider) int {
	p := &Program{Stdout: stdout, Stderr: stderr, Open: func(backend string) (verbs.Provider, error) {
		if backend != "" && backend != provider.Name() {
			return nil, fmt.Errorf("--backend %s: this program runs on the %s backend", backend, provider.Name())
		}
		return provider, nil
	}}
	return p.Run(ctx, args)
}

func (p *Program) name() string {
	if p.Name != "" {
		return p.Name
	}
	return "pingpong"
}

// Run parses args and runs the ping-pong; it returns 0 on success, 1 on any
// failure (including -c finding bad data), as rdma-core does.
func (p *Program) Run(ctx context.Context, args []string) int {
	name := p.name()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 0 {
			UsageAll(p.Stderr, name)
			return 1
		}
		UsageAll(p.Stdout, name)
		return 0
	}
	o, err := ParseArgs(args)
	prog := name
	if t, terr := ParseTransport(args[0]); terr == nil {
		prog = name + " " + t.String()
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "%s: %v\n", prog, err)
		var oe *OptionError
		if errors.As(err, &oe) || strings.HasPrefix(prog, name+" ") {
			fmt.Fprintf(p.Stderr, "Try '%s --help'.\n", prog)
		} else {
			fmt.Fprintf(p.Stderr, "Try '%s --help'.\n", name)
		}
		return 1
	}
	if o.Help {
		Usage(p.Stdout, name, o.Transport)
		return 0
	}
	if len(o.Unsupported) > 0 {
		for _, u := range o.Unsupported {
			fmt.Fprintf(p.Stderr, "%s: %s is not implemented by vsh's pingpong (rxe on Linux 6.1 and the simulator have none of it); run without it\n", prog, u)
		}
		return 1
	}
	if err := p.run(ctx, o, prog); err != nil {
		p.report(prog, err)
		return 1
	}
	return 0
}

// errCheckFailed ends a run whose -c check found bad data (already reported).
var errCheckFailed = errors.New("-c found invalid data")

// report prints err: rdma-core's line first, then vsh's explanation.
func (p *Program) report(prog string, err error) {
	if errors.Is(err, errCheckFailed) {
		return
	}
	var pe *Error
	if errors.As(err, &pe) {
		fmt.Fprintln(p.Stderr, pe.Msg)
		if pe.after != "" {
			fmt.Fprintln(p.Stderr, pe.after)
		}
		if pe.Err != nil && !errors.Is(pe.Err, context.Canceled) { // "Interrupted" said it
			fmt.Fprintf(p.Stderr, "%s: %v\n", prog, pe.Err)
		}
		if pe.Hint != "" {
			fmt.Fprintf(p.Stderr, "%s: likely cause: %s\n", prog, pe.Hint)
		}
		return
	}
	fmt.Fprintf(p.Stderr, "%s: %v\n", prog, err)
}

func (p *Program) psn() func() uint32 {
	if p.Rand != nil {
		return p.Rand.Uint32
	}
	return rand.Uint32
}

func (p *Program) run(ctx context.Context, o Options, prog string) (err error) {
	var prov verbs.Provider
	switch {
	case p.OpenOptions != nil:
		prov, err = p.OpenOptions(o)
	case p.Open != nil:
		prov, err = p.Open(o.Backend)
	default:
		return errors.New("no backend: Program.Open is not set")
	}
	if err != nil {
		return err
	}
	devs, err := prov.Devices()
	if err != nil {
		return fail("Failed to get IB devices list", err, "")
	}
	var names []string
	var dev verbs.Device
	for _, d := range devs {
		names = append(names, d.Name())
		if dev == nil && (o.IBDev == "" || d.Name() == o.IBDev) {
			dev = d
		}
	}
	// xsrq_pingpong's open_device says "IB device %s not found" for no
	// device too, and main adds "Failed to open device".
	devFail := func(e *Error) error {
		if o.Transport == XSRQ {
			if len(devs) == 0 {
				e.Msg = fmt.Sprintf("IB device %s not found", o.IBDev)
			}
			e.after = "Failed to open device"
		}
		return e
	}
	switch {
	case len(devs) == 0:
		return devFail(fail("No IB devices found", nil, fmt.Sprintf("the %s backend sees no RDMA device: create one (rdma link add rxe0 type rxe netdev eth0), or run on the simulator with --backend sim", prov.Name())))
	case dev == nil:
		return devFail(fail(fmt.Sprintf("IB device %s not found", o.IBDev), nil, fmt.Sprintf("the %s backend has: %s", prov.Name(), strings.Join(names, ", "))))
	}
	vctx, err := dev.Open()
	if err != nil {
		return devFail(fail(fmt.Sprintf("Couldn't get context for %s", dev.Name()), err, ""))
	}
	defer func() {
		if cerr := vctx.Close(); cerr != nil && err == nil {
			err = fail("Couldn't release context", cerr, "")
		}
	}()
	if o.Transport == XSRQ {
		return p.runXSRQ(ctx, prov, vctx, o, prog)
	}
	ep, err := NewEndpoint(vctx, o, p.psn())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := ep.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if w := ep.MTUWarning(); w != "" {
		fmt.Fprintf(p.Stderr, "%s: warning: %s\n", prog, w)
	}
	for _, d := range ep.Local() {
		fmt.Fprintln(p.Stdout, LocalLine(o.Transport, d))
	}
	client := o.Host != ""
	remote, err := p.exchange(ctx, o, ep, client)
	if err != nil {
		return err
	}
	for _, d := range remote {
		fmt.Fprintln(p.Stdout, RemoteLine(d))
	}
	if client {
		if err := ep.Connect(remote); err != nil {
			return err
		}
	}
	stats, err := ep.Run(ctx, client, p.Hint)
	if err != nil {
		var pe *Error
		if p.Diagnose != nil && errors.As(err, &pe) && pe.Timeout {
			if d := p.Diagnose(); d != "" {
				pe.Hint = d + "; " + pe.Hint
			}
		}
		return err
	}
	for _, l := range stats.Lines() {
		fmt.Fprintln(p.Stdout, l)
	}
	if o.Check {
		// The peer may still be sending (srq's last round): stop the
		// QPs before reading the buffer.
		if err := ep.Stop(); err != nil {
			return err
		}
		bad := ep.CheckData()
		for _, b := range bad {
			fmt.Fprintln(p.Stdout, InvalidPageLine(b.Page))
			fmt.Fprintf(p.Stderr, "%s: -c: %s\n", prog, b)
		}
		if len(bad) > 0 {
			pages := (o.Size + o.pageSize() - 1) / o.pageSize()
			fmt.Fprintf(p.Stderr, "%s: -c: %d of %d pages differ from the client's pattern (each byte 0x%02x, the first of each %d-byte page 0x00)\n",
				prog, len(bad), pages, ep.fill(), o.pageSize())
			if h := checkHint(bad, ep.fill(), o.pageSize(), client); h != "" {
				fmt.Fprintf(p.Stderr, "%s: -c: likely cause: %s\n", prog, h)
			}
			return errCheckFailed
		}
	}
	return nil
}

// checkHint explains a -c failure whose only bad bytes are the pattern's
// page starts still holding the fill: nobody wrote the pattern.
func checkHint(bad []BadPage, fill byte, page int, client bool) string {
	for _, b := range bad {
		if b.Bad != 1 || b.Got != fill || b.Want != 0 || b.First != b.Page*page {
			return ""
		}
	}
	if client {
		return "only the first byte of each page is wrong: the pattern this side wrote did not come back"
	}
	return "only the first byte of each page is wrong, as if the pattern was never written: the client writes it only when started with -c, so pass -c on both sides"
}

// countConn counts the bytes read, to explain an exchange that stopped.
type countConn struct {
	net.Conn
	read int
}

func (c *countConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read += n
	return n, err
}

// exchange swaps addresses with the peer over TCP; the server connects
// its QPs in the middle.
func (p *Program) exchange(ctx context.Context, o Options, ep *Endpoint, client bool) (remote []exchange.Dest, err error) {
	slots := 1
	if o.Transport == SRQ {
		slots = exchange.MaxQP
	}
	var conn net.Conn
	if client {
		addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
		d := net.Dialer{Timeout: o.Timeout}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, fail(fmt.Sprintf("Couldn't connect to %s:%d", o.Host, o.Port), err,
				"start the server first (the same command without a host), and use the same -p on both sides")
		}
		conn = c
	} else {
		listen := p.Listen
		if listen == nil {
			listen = func(port int) (net.Listener, error) { return net.Listen("tcp", ":"+strconv.Itoa(port)) }
		}
		ln, err := listen(o.Port)
		if err != nil {
			return nil, fail(fmt.Sprintf("Couldn't listen to port %d", o.Port), err,
				"another program (an earlier server?) holds the port: stop it, or use another -p on both sides")
		}
		// A server waits for its client as long as it takes.
		stop := context.AfterFunc(ctx, func() { ln.Close() })
		c, err := ln.Accept()
		stop()
		ln.Close()
		if err != nil {
			if ctx.Err() != nil {
				return nil, fail("Interrupted while waiting for a client", ctx.Err(), "")
			}
			return nil, fail("accept() failed", err, "")
		}
		conn = c
	}
	defer conn.Close()
	if o.Timeout > 0 {
		conn.SetDeadline(time.Now().Add(o.Timeout))
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	cc := &countConn{Conn: conn}
	if client {
		remote, err := exchange.Client(cc, ep.Local(), slots)
		if err != nil {
			e := exchangeError(ctx, "Couldn't read/write remote address", err, cc.read, o, true)
			if cc.read == 0 && o.GIDIndex < 0 && ep.Port().LinkLayer == verbs.LinkLayerEthernet && !e.Timeout {
				e.Hint += "; this side has no -g, which RoCE needs: if the server has one, its RTR failed for that reason (pass -g on both sides)"
			}
			return nil, e
		}
		return remote, nil
	}
	// The server connects its QPs before it answers, as rdma-core's does.
	var connErr error
	remote, err = exchange.Server(cc, ep.Local(), slots, func(r []exchange.Dest) error {
		connErr = ep.Connect(r)
		return connErr
	})
	if connErr != nil {
		var pe *Error
		if errors.As(connErr, &pe) {
			c := *pe
			c.after = "Couldn't connect to remote QP"
			return nil, &c
		}
		return nil, connErr
	}
	if err != nil {
		// rdma-core's server says "Couldn't read remote address" when the
		// client's message does not come whole, and "Couldn't send/recv
		// local address" when its own write or the read of "done" fails. A
		// message that came whole but does not parse (rdma-core's sscanf
		// does not check) is a remote address this side could not read.
		msg := "Couldn't read remote address"
		if cc.read >= slots*exchange.MsgSize && !errors.Is(err, exchange.ErrMalformed) {
			msg = "Couldn't send/recv local address"
		}
		return nil, exchangeError(ctx, msg, err, cc.read, o, false)
	}
	return remote, nil
}

// exchangeError explains an address exchange that failed, from how far it
// got: read is how many bytes came from the peer.
func exchangeError(ctx context.Context, msg string, err error, read int, o Options, client bool) *Error {
	if ctx.Err() != nil {
		return fail("Interrupted during the address exchange", ctx.Err(), "")
	}
	want := exchange.MsgSize
	if o.Transport == SRQ {
		want *= exchange.MaxQP
	}
	timeout := errors.Is(err, os.ErrDeadlineExceeded)
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	var hint string
	switch {
	case errors.Is(err, exchange.ErrNotDone):
		hint = fmt.Sprintf("the client sent more than one address: it runs srq, this side runs %s; run the same program on both sides", o.Transport)
	case errors.Is(err, exchange.ErrMalformed):
		hint = "the peer is not a ping-pong of rdma-core's kind (or of another version): its message is not LID:QPN:PSN:GID"
	case read > 0 && read < want && read%exchange.MsgSize == 0 && o.Transport == SRQ:
		hint = fmt.Sprintf("the peer sent %d address(es) where srq sends %d: it runs rc, uc or ud; run srq on both sides", read/exchange.MsgSize, exchange.MaxQP)
	case client && read == 0 && timeout:
		hint = fmt.Sprintf("the server took this side's address but did not answer within %s: a server running srq waits for %d addresses (run the same program on both sides), or it is stuck (see its output)", o.Timeout, exchange.MaxQP)
	case client && read == 0 && closed:
		hint = fmt.Sprintf("the server closed the connection without answering: it could not connect its QP to this one (its output says why), or it runs another program (a server running srq waits for %d addresses); run the same program on both sides", exchange.MaxQP)
	case !client && read == 0 && timeout:
		hint = fmt.Sprintf("the client connected but sent nothing within %s: is it a ping-pong client using the same -p?", o.Timeout)
	case !client && read >= want && (timeout || closed):
		hint = "the client never confirmed with \"done\": it failed after reading this side's address (its output says why)"
	case timeout:
		hint = fmt.Sprintf("the peer stopped in the middle of the exchange for %s: it is stuck, or it is not a ping-pong of the same kind", o.Timeout)
	case closed:
		hint = "the peer closed the connection in the middle of the exchange: see its output"
	}
	return &Error{Msg: msg, Err: err, Hint: hint, Timeout: timeout}
}
