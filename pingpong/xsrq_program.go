package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// runXSRQ is the xsrq program on an open device context: pp_init_ctx and
// pp_post_recv (NewXSRQEndpoint), the TCP exchange with connect_qps, the
// loop, the last sends, the END handshake, pp_close_ctx and "success".
func (p *Program) runXSRQ(ctx context.Context, prov verbs.Provider, vctx verbs.Context, o Options, prog string) (err error) {
	client := o.Host != ""
	domain := XRCDomainPath
	if prov.Name() != "sim" {
		// xsrq_pingpong opens the file that names the domain (the backend
		// opens it again for ibv_open_xrcd) and, when it cannot, goes on
		// with fd -1: a domain of its own. The simulator needs no file: it
		// knows a domain by the path, per device.
		f, ferr := os.OpenFile(domain, os.O_RDONLY|os.O_CREATE, 0o440)
		if ferr != nil {
			fmt.Fprintf(p.Stderr, "Couldn't create the file for the XRC Domain but not stopping %d\n", errnoOf(ferr))
			domain = ""
		} else {
			f.Close()
		}
	}
	ep, err := NewXSRQEndpoint(vctx, o, domain, p.psn())
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Msg == "Failed to post receive to SRQ" {
			c := *pe
			c.after = "Couldn't post receives"
			return &c
		}
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
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if client {
		c, err := p.xsrqClientConnect(ctx, o, ep)
		if c != nil {
			conns = append(conns, c)
		}
		if err != nil {
			return err
		}
	} else {
		conns, err = p.xsrqServerConnect(ctx, o, ep)
		if err != nil {
			return err
		}
	}
	if _, err := ep.Run(ctx, client, p.Hint); err != nil {
		return err
	}
	if err := ep.DrainSends(ctx, p.Hint); err != nil {
		return err
	}
	if err := xsrqTerminate(ctx, o, conns, client); err != nil {
		return err
	}
	if err := ep.Close(); err != nil {
		return err
	}
	fmt.Fprintln(p.Stdout, SuccessLine)
	return nil
}

// step bounds one TCP step by the timeout, and by ctx.
func step(ctx context.Context, c net.Conn, timeout time.Duration, fn func() error) error {
	if timeout > 0 {
		c.SetDeadline(time.Now().Add(timeout))
	} else {
		c.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	err := fn()
	if err != nil && ctx.Err() != nil {
		return fail("Interrupted", ctx.Err(), "")
	}
	return err
}

// xsrqClientConnect is pp_client_connect: connect, send this side's
// address (printing it), read the server's (printing it), connect_qps(0).
// The connection stays open for the END handshake.
func (p *Program) xsrqClientConnect(ctx context.Context, o Options, ep *XSRQEndpoint) (net.Conn, error) {
	addr := net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	d := net.Dialer{Timeout: o.Timeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fail(fmt.Sprintf("Couldn't connect to %s:%d", o.Host, o.Port), err,
			"start the server first (the same command without a host), and use the same -p on both sides")
	}
	local, err := ep.Local(0)
	if err != nil {
		return c, err
	}
	fmt.Fprintln(p.Stdout, XRCAddrLine("local", local))
	if err := step(ctx, c, o.Timeout, func() error { return exchange.WriteXRC(c, local) }); err != nil {
		return c, xsrqExchangeError(ctx, "Couldn't send local address", err, 0, o, true)
	}
	var remote exchange.XRCDest
	var n int
	err = step(ctx, c, o.Timeout, func() error {
		var err error
		remote, n, err = exchange.ReadXRC(c)
		return err
	})
	if err != nil {
		return c, xsrqExchangeError(ctx, fmt.Sprintf("%d/%d: Couldn't read remote address [%d]", n, exchange.XRCMsgSize, 0), err, n, o, true)
	}
	fmt.Fprintln(p.Stdout, XRCAddrLine("remote", remote))
	return c, ep.Connect(0, remote)
}

// xsrqServerConnect is pp_server_connect: listen, then for each client in
// turn accept, read its address (printing it), send this side's (printing
// it) and connect_qps(i); then the first message to every client. The
// first client may take as long as it takes; each next one must come
// within the timeout, since the clients already connected are waiting for
// their first message.
func (p *Program) xsrqServerConnect(ctx context.Context, o Options, ep *XSRQEndpoint) ([]net.Conn, error) {
	listen := p.Listen
	if listen == nil {
		listen = func(port int) (net.Listener, error) { return net.Listen("tcp", ":"+strconv.Itoa(port)) }
	}
	ln, err := listen(o.Port)
	if err != nil {
		return nil, fail(fmt.Sprintf("Couldn't listen to port %d", o.Port), err,
			"another program (an earlier server?) holds the port: stop it, or use another -p on all sides")
	}
	defer ln.Close()
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopLn()
	var conns []net.Conn
	for i := 0; i < ep.Clients(); i++ {
		if i > 0 && o.Timeout > 0 {
			if dl, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
				dl.SetDeadline(time.Now().Add(o.Timeout))
			}
		}
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return conns, fail("Interrupted while waiting for a client", ctx.Err(), "")
			}
			hint := ""
			if errors.Is(err, os.ErrDeadlineExceeded) {
				hint = fmt.Sprintf("only %d of the %d clients of -c %d connected, and no other came within %s while the first waits for its first message: start every client, each within --timeout of the one before, or start the server with -c %d",
					i, ep.Clients(), ep.Clients(), o.Timeout, i)
			}
			return conns, &Error{Msg: fmt.Sprintf("accept() failed for client %d", i), Err: err, Hint: hint, Timeout: hint != ""}
		}
		conns = append(conns, c)
		var remote exchange.XRCDest
		var n int
		err = step(ctx, c, o.Timeout, func() error {
			var err error
			remote, n, err = exchange.ReadXRC(c)
			return err
		})
		if err != nil {
			return conns, xsrqExchangeError(ctx, fmt.Sprintf("%d/%d: Couldn't read remote address [%d]", n, exchange.XRCMsgSize, i), err, n, o, false)
		}
		fmt.Fprintln(p.Stdout, XRCAddrLine("remote", remote))
		local, err := ep.Local(i)
		if err != nil {
			return conns, err
		}
		fmt.Fprintln(p.Stdout, XRCAddrLine("local", local))
		if err := step(ctx, c, o.Timeout, func() error { return exchange.WriteXRC(c, local) }); err != nil {
			return conns, xsrqExchangeError(ctx, "Couldn't send local address", err, n, o, false)
		}
		if err := ep.Connect(i, remote); err != nil {
			return conns, err
		}
	}
	return conns, nil
}

// xsrqExchangeError explains an exchange step that failed: read is how
// many bytes of the peer's 66 came.
func xsrqExchangeError(ctx context.Context, msg string, err error, read int, o Options, client bool) *Error {
	if ctx.Err() != nil {
		return fail("Interrupted during the address exchange", ctx.Err(), "")
	}
	timeout := errors.Is(err, os.ErrDeadlineExceeded)
	closed := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
	var hint string
	switch {
	case errors.Is(err, exchange.ErrMalformed):
		hint = "the peer is not an xsrq ping-pong: its message is not LID:RECV_QPN:SEND_QPN:PSN:SRQN:GID (rc, uc, ud and srq send 52-byte LID:QPN:PSN:GID); run xsrq on both sides"
	case client && read == 0 && timeout:
		hint = fmt.Sprintf("the server took this side's address but did not answer within %s: it is serving another client, or it runs another program (rc, uc and ud servers wait for 52 bytes, srq for 256 × 52); run xsrq on both sides", o.Timeout)
	case client && read == 0 && closed:
		hint = "the server closed the connection without answering: it failed (its output says why), or it runs another program; run xsrq on both sides"
	case client && read > 0 && timeout:
		hint = fmt.Sprintf("the server sent %d bytes where xsrq sends %d: it runs another program (rc, uc, ud or srq); run xsrq on both sides", read, exchange.XRCMsgSize)
	case !client && read == 0 && timeout:
		hint = fmt.Sprintf("the client connected but sent nothing within %s: is it a ping-pong client using the same -p?", o.Timeout)
	case !client && read > 0 && read < exchange.XRCMsgSize:
		hint = fmt.Sprintf("the client sent %d bytes where xsrq sends %d: it runs another program (rc, uc or ud send 52); run xsrq on both sides", read, exchange.XRCMsgSize)
	case timeout:
		hint = fmt.Sprintf("the peer stopped in the middle of the exchange for %s: it is stuck, or it is not xsrq", o.Timeout)
	case closed:
		hint = "the peer closed the connection in the middle of the exchange: see its output"
	}
	return &Error{Msg: msg, Err: err, Hint: hint, Timeout: timeout}
}

// xsrqTerminate is the END handshake: the client sends END and waits for
// the server's; the server reads END from every client, then sends it to
// every client. It makes sure that no side tears down its QPs while a
// message to it may still be on the way.
func xsrqTerminate(ctx context.Context, o Options, conns []net.Conn, client bool) error {
	send := func(c net.Conn) error {
		if err := step(ctx, c, o.Timeout, func() error { return exchange.WriteEnd(c) }); err != nil {
			return fail("Couldn't send termination ack", err, "the peer closed the connection before the end: see its output")
		}
		return nil
	}
	recv := func(i int, c net.Conn) error {
		var n int
		err := step(ctx, c, o.Timeout, func() error {
			var err error
			n, err = exchange.ReadEnd(c)
			return err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, exchange.ErrNotEnd):
			return fail("Invalid termination ack was accepted", err, "the peer is not xsrq, or not of this version")
		case ctx.Err() != nil:
			return fail("Interrupted while waiting for the peer's END", ctx.Err(), "")
		}
		hint := "the peer closed the connection without END: it failed after its loop (see its output)"
		timeout := errors.Is(err, os.ErrDeadlineExceeded)
		if timeout {
			who := "the server"
			if !client {
				who = fmt.Sprintf("client %d", i)
			}
			hint = fmt.Sprintf("%s sent no END within %s: ", who, o.Timeout)
			if client {
				hint += "the server sends END only once every client has sent it, so another client of the server is behind, or stuck"
			} else {
				hint += "it is still in its loop (a larger -n than this side?) or stuck"
			}
		}
		return &Error{Msg: fmt.Sprintf("%d/%d: Couldn't read remote termination ack", n, exchange.EndSize), Err: err, Hint: hint, Timeout: timeout}
	}
	if client {
		if err := send(conns[0]); err != nil {
			return err
		}
		return recv(0, conns[0])
	}
	for i, c := range conns {
		if err := recv(i, c); err != nil {
			return err
		}
	}
	for _, c := range conns {
		if err := send(c); err != nil {
			return err
		}
	}
	return nil
}

// runPairXSRQ is RunPair for xsrq: one server of one client, the two
// endpoints in one process, the addresses handed over as the exchange
// hands them (the client's first), then both loops interleaved and the
// last sends drained. Both sides open XRCDomainPath: on one simulated
// device the two share the domain, as two processes on one host share it
// through the file; on two devices each has its own.
func runPairXSRQ(ctx context.Context, server, client verbs.Context, o Options, h PairHooks) (*PairResult, error) {
	o.Clients = 1
	o.Host = ""
	now := h.Now
	if now == nil {
		now = time.Now
	}
	res := &PairResult{Transport: XSRQ, Server: Side{Name: "server"}, Client: Side{Name: "client"}}
	srv, err := NewXSRQEndpoint(server, o, XRCDomainPath, h.PSN)
	if err != nil {
		return nil, sideError("server", err)
	}
	defer srv.Close()
	co := o
	co.Host = "server"
	cli, err := NewXSRQEndpoint(client, co, XRCDomainPath, h.PSN)
	if err != nil {
		return nil, sideError("client", err)
	}
	defer cli.Close()
	cl, err := cli.Local(0)
	if err != nil {
		return res, sideError("client", err)
	}
	res.Client.XLocal = []exchange.XRCDest{cl}
	sl, err := srv.Local(0)
	if err != nil {
		return res, sideError("server", err)
	}
	res.Server.XLocal = []exchange.XRCDest{sl}
	if err := srv.Connect(0, cl); err != nil {
		return res, sideError("server", err)
	}
	res.Server.XRemote = []exchange.XRCDest{cl}
	if err := cli.Connect(0, sl); err != nil {
		return res, sideError("client", err)
	}
	res.Client.XRemote = []exchange.XRCDest{sl}

	sides := []*XSRQEndpoint{srv, cli}
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
	done := func(e *XSRQEndpoint) bool { return e.Done() && e.SendsDone() }
	last := time.Now()
	for spins := 0; !done(srv) || !done(cli); spins++ {
		if err := ctx.Err(); err != nil {
			return res, fail("Interrupted", err, "")
		}
		progress := false
		for i, e := range sides {
			if done(e) {
				continue
			}
			var n int
			var err error
			if !e.Done() {
				if e.o.Events {
					got, err := e.takeEvent(0)
					if err != nil {
						return res, sideError(names[i], err)
					}
					if !got {
						continue
					}
				}
				n, err = e.pollAll()
			} else {
				n, err = e.pollSends()
			}
			if err != nil {
				return res, sideError(names[i], err)
			}
			if n > 0 {
				progress = true
			}
			if done(e) {
				ends[i] = now()
			}
		}
		if progress {
			last = time.Now()
			continue
		}
		if h.Idle != nil && !h.Idle() {
			return res, xsrqPairStall(sides, names, 0)
		}
		if spins%256 == 0 {
			runtime.Gosched()
			if o.Timeout > 0 && time.Since(last) >= o.Timeout {
				return res, xsrqPairStall(sides, names, o.Timeout)
			}
		}
	}
	for i, e := range sides {
		s := &res.Server
		if i == 1 {
			s = &res.Client
		}
		s.Stats = e.stats(ends[i].Sub(starts[i]))
	}
	return res, nil
}

// xsrqPairStall explains a pair run that stopped moving, from the side
// that is behind.
func xsrqPairStall(sides []*XSRQEndpoint, names []string, waited time.Duration) error {
	i := 0
	if sides[0].Done() || (!sides[1].Done() && sides[1].cnt < sides[0].cnt) {
		i = 1
	}
	e := sides[i]
	if f := e.sendFailure(); f != nil {
		f.Msg = names[i] + ": " + f.Msg
		return f
	}
	rcvd, sent := e.Progress()
	msg := fmt.Sprintf("No completion: %d of %d messages received, %d sent", rcvd, e.total(), sent)
	if waited > 0 {
		msg = fmt.Sprintf("No completion for %s: %d of %d messages received, %d sent", waited.Round(time.Millisecond), rcvd, e.total(), sent)
	}
	return &Error{Msg: names[i] + ": " + msg, Hint: e.stallHint(), Timeout: true}
}

// usageXSRQ writes xsrq's help.
func usageXSRQ(w io.Writer, prog string) {
	d := Defaults(XSRQ)
	p := prog + " xsrq"
	b := &strings.Builder{}
	fmt.Fprintf(b, "Usage:\n")
	fmt.Fprintf(b, "  %s [options]          be the server: wait for -c clients, one after the other\n", p)
	fmt.Fprintf(b, "  %s [options] <host>   be a client of the server on <host>\n", p)
	fmt.Fprintf(b, "\nThe same ping-pong as rdma-core's ibv_xsrq_pingpong (XRC, eXtended Reliable Connection),\n")
	fmt.Fprintf(b, "flag- and wire-compatible with it. Each side opens the XRC domain of %s, makes\n", XRCDomainPath)
	fmt.Fprintf(b, "one XRC SRQ and, per client, an XRC_RECV QP and an XRC_SEND QP; the server sends each\n")
	fmt.Fprintf(b, "client a first message, and every side answers each message it receives until -n went\n")
	fmt.Fprintf(b, "each way per client. It prints its address lines and \"success\".\n")
	fmt.Fprintf(b, "Options go anywhere on the line; long ones take --opt=V or --opt V, short ones -oV or -o V.\n\n")
	fmt.Fprintf(b, "Options (the same on all sides, except -d, -i, -g's index, -e and -c):\n")
	row := func(flags, text string) { fmt.Fprintf(b, "  %-24s %s\n", flags, text) }
	row("-p, --port=<port>", fmt.Sprintf("TCP port of the address exchange (default %d)", d.Port))
	row("-d, --ib-dev=<dev>", "RDMA device to use (default: the first one)")
	row("-i, --ib-port=<port>", fmt.Sprintf("port of the device (default %d)", d.IBPort))
	row("-s, --size=<size>", fmt.Sprintf("message size in bytes (default %d)", d.Size))
	row("-m, --mtu=<size>", "path MTU: 256, 512, 1024, 2048 or 4096 (default 1024, as rdma-core's")
	row("", "code has it; its man page says 2048)")
	row("-c, --clients=<n>", fmt.Sprintf("the server's number of clients (default %d); a client serves one", d.Clients))
	row("-n, --num_tests=<n>", fmt.Sprintf("messages each way per client (default %d)", d.Iters))
	row("-l, --sl=<sl>", "service level (default 0)")
	row("-e, --events", "sleep on completion events instead of busy-polling")
	row("-g, --gid-idx=<index>", "local GID index; needed on RoCE (rxe, the simulator): try -g 1")
	row("-o, --odp", "on-demand paging: refused (rxe and the simulator have none)")
	fmt.Fprintf(b, "\nvsh's own options:\n")
	row("--verify", "every message carries a pattern that names it (its connection and")
	row("", "its number) and every byte of every message received is checked;")
	row("", "a bad one stops the run (rdma-core checks nothing). Give it to all sides")
	row("--backend=sim|ibverbs", "the simulated RNIC or libibverbs (default: ibverbs when built")
	row("", "in and a device exists, else sim)")
	row("--timeout=<duration>", "once a client is connected, give up after this long without progress")
	row("", "(each next client, each message, the END handshake) and say what is")
	row("", fmt.Sprintf("likely wrong (default %s; 0 waits forever, as rdma-core)", DefaultTimeout))
	row("--sim-addr=<addr>", "the simulator's UDP link: bind this address, port 4791 (a loopback")
	row("", "one, 127.0.0.2, ..., each process its own, default the first free one;")
	row("", "or this host's address); its RoCEv2 GID is GID 1. Implies --backend sim")
	row("-h, --help", "this help")
	fmt.Fprintf(b, "\nXRC needs a device that has it (mlx5). Kernel rxe has none: there, as rdma-core's program\n")
	fmt.Fprintf(b, "does, it stops with \"Couldn't Open the XRC Domain 95\" (EOPNOTSUPP), then says why. The\n")
	fmt.Fprintf(b, "%s command turns XRC on in its simulator for xsrq (--backend sim).\n", prog)
	fmt.Fprintf(b, "\nOne difference from rdma-core: its server sends client i's message k (from 0) through\n")
	fmt.Fprintf(b, "XRC_SEND QP (i + k) mod clients, so it may arrive through another client's XRC_RECV QP. The\n")
	fmt.Fprintf(b, "target ")
	fmt.Fprintf(b, "looks the SRQ up in the XRC domain of the QP it came through, so that works only\n")
	fmt.Fprintf(b, "because rdma-core's clients on one host share one domain through %s. vsh's\n", XRCDomainPath)
	fmt.Fprintf(b, "server sends each client's messages through that client's own connection. What is shared: on real\n")
	fmt.Fprintf(b, "verbs, the processes of one host that open %s share its domain; on the simulator,\n", XRCDomainPath)
	fmt.Fprintf(b, "the contexts of one process on one simulated device that open the path share one. What is\n")
	fmt.Fprintf(b, "not: simulator processes, each with its own simulated device (the simulator never opens the\n")
	fmt.Fprintf(b, "file). With one client the two ways are the same.\n")
	io.WriteString(w, b.String())
}
