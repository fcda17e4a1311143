package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// The transcripts in testdata-exchange/*.txt drive one side of a ping-pong
// by hand through exchange, against a pingpong.Endpoint on the other side:
// the same simulated fabric (device sim1), a goroutine, real TCP on
// 127.0.0.1. They live outside testdata/ because they need a peer, which
// TestGolden's sessions do not have. Directives:
//
//	peer server|client TRANSPORT [FLAGS...]   make the peer's endpoint (on sim1) and start its half of the exchange
//	port               choose a free $PORT, no peer
//	vsh [keep-going]   run the input as a script; $PORT is the peer's (or our listening) TCP port
//	peer-start         the exchange is over: the peer connects and starts its loop (a client sends first)
//	peer-run           the peer polls until its loop is done and prints what rdma-core's program prints
//
// The peer polls only in peer-start and peer-run, so a transcript is the
// same at every run. go test ./shell -run TestExchangeGolden -rewrite
// regenerates them.
func TestExchangeGolden(t *testing.T) {
	datadriven.Walk(t, "testdata-exchange", func(t *testing.T, path string) {
		g := &xchgSession{t: t}
		g.sh = newTestShell(t, 2, 1, true, nil)
		defer g.sh.Close()
		defer g.stop()
		datadriven.RunTest(t, path, g.handle)
	})
}

type xchgSession struct {
	t    *testing.T
	sh   *Shell
	port int
	peer *xchgPeer
}

type xchgPeer struct {
	ep                 *pingpong.Endpoint
	vctx               verbs.Context
	client             bool
	ln                 net.Listener
	done               chan error // the exchange goroutine's result
	remote             []exchange.Dest
	cancel             context.CancelFunc
	exchanged, started bool
}

func (g *xchgSession) stop() {
	if p := g.peer; p != nil {
		p.cancel()
		if p.ln != nil {
			p.ln.Close()
		}
		if !p.exchanged {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
		p.ep.Close()
		p.vctx.Close()
		g.peer = nil
	}
}

// freePort returns a TCP port nobody listens on now.
func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (g *xchgSession) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "peer":
		g.stop()
		if len(d.CmdArgs) < 2 {
			d.Fatalf(t, "peer server|client TRANSPORT [FLAGS...]")
		}
		var flags []string
		for _, a := range d.CmdArgs[2:] {
			flags = append(flags, a.String())
		}
		return g.startPeer(t, d.CmdArgs[0].Key == "client", d.CmdArgs[1].Key, flags)
	case "port":
		g.stop()
		g.port = freePort(t)
		return "a free port: $PORT"
	case "vsh":
		in := strings.ReplaceAll(d.Input, "$PORT", strconv.Itoa(g.port))
		var b bytes.Buffer
		err := g.sh.RunScript(strings.NewReader(in), &b, "script", d.HasArg("keep-going"))
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) {
				d.Fatalf(t, "script: %v", err)
			}
			fmt.Fprintf(&b, "script failed: %v\n", firstLines(se.Error(), 1))
		}
		return g.unport(b.String())
	case "peer-start", "peer-run":
		p := g.peer
		if p == nil {
			d.Fatalf(t, "no peer")
		}
		var out strings.Builder
		if !p.exchanged {
			p.exchanged = true
			select {
			case err := <-p.done:
				if err != nil {
					return g.unport(fmt.Sprintf("peer: exchange failed: %v\n", err))
				}
			case <-time.After(20 * time.Second):
				return "peer: the exchange did not end within 20s\n"
			}
			for _, r := range p.remote {
				fmt.Fprintln(&out, pingpong.RemoteLine(r))
			}
		}
		if !p.started {
			p.started = true
			if err := p.ep.Start(p.client); err != nil {
				return out.String() + fmt.Sprintf("peer: %v\n", err)
			}
			if p.client {
				out.WriteString("peer: posted the first send\n")
			} else {
				out.WriteString("peer: waits for the first message\n")
			}
		}
		if d.Cmd == "peer-start" {
			return out.String()
		}
		deadline := time.Now().Add(20 * time.Second)
		for !p.ep.Done() && time.Now().Before(deadline) {
			if _, err := p.ep.Poll(); err != nil {
				return out.String() + fmt.Sprintf("peer: %v\n", err)
			}
		}
		rcv, snt := p.ep.Progress()
		if !p.ep.Done() {
			fmt.Fprintf(&out, "peer: stalled: %d received, %d sent\n", rcv, snt)
			return out.String()
		}
		fmt.Fprintf(&out, "peer: done: %d received, %d sent\n", rcv, snt)
		return out.String()
	}
	d.Fatalf(t, "unknown directive %s", d.Cmd)
	return ""
}

var portRe = regexp.MustCompile(`\b\d{4,5}\b`)

func (g *xchgSession) unport(s string) string {
	p := strconv.Itoa(g.port)
	return portRe.ReplaceAllStringFunc(s, func(m string) string {
		if m == p {
			return "$PORT"
		}
		return m
	})
}

// startPeer makes the peer's endpoint on sim1 (so its QP numbers come in a
// fixed order) and runs its half of the exchange in a goroutine.
func (g *xchgSession) startPeer(t *testing.T, client bool, transport string, flags []string) string {
	tr, err := pingpong.ParseTransport(transport)
	if err != nil {
		t.Fatal(err)
	}
	o, err := pingpong.ParseFlags(tr, flags)
	if err != nil {
		t.Fatal(err)
	}
	o.Timeout = 20 * time.Second
	devs, err := g.sh.Provider().Devices()
	if err != nil || len(devs) < 2 {
		t.Fatalf("devices: %v", err)
	}
	vctx, err := devs[1].Open()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	ep, err := pingpong.NewEndpoint(vctx, o, rng.Uint32)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &xchgPeer{ep: ep, vctx: vctx, client: client, done: make(chan error, 1), cancel: cancel}
	g.peer = p
	slots := 1
	if tr == pingpong.SRQ {
		slots = exchange.MaxQP
	}
	var out strings.Builder
	for _, l := range ep.Local() {
		fmt.Fprintln(&out, pingpong.LocalLine(tr, l))
	}
	if client {
		g.port = freePort(t)
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(g.port))
		go func() {
			var conn net.Conn
			var err error
			for conn == nil {
				var dl net.Dialer
				conn, err = dl.DialContext(ctx, "tcp", addr)
				if err != nil {
					if !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
						p.done <- err
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(20 * time.Second))
			remote, err := exchange.Client(conn, ep.Local(), slots)
			if err == nil {
				p.remote = remote
				err = ep.Connect(remote)
			}
			p.done <- err
		}()
		fmt.Fprintf(&out, "peer: %s client on sim1, connecting to 127.0.0.1:$PORT until someone listens\n", tr)
		return out.String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.ln = ln
	g.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		conn, err := ln.Accept()
		ln.Close()
		if err != nil {
			p.done <- err
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		_, err = exchange.Server(conn, ep.Local(), slots, func(r []exchange.Dest) error {
			p.remote = r
			return ep.Connect(r)
		})
		p.done <- err
	}()
	fmt.Fprintf(&out, "peer: %s server on sim1, listening on 127.0.0.1:$PORT\n", tr)
	return out.String()
}

// TestConnectHost: exchange connect takes an IPv6 address with or without
// brackets, and a host with a port is refused with the port= to use.
func TestConnectHost(t *testing.T) {
	for _, tt := range []struct{ in, host, err string }{
		{"localhost", "localhost", ""},
		{"::1", "::1", ""},
		{"[::1]", "::1", ""},
		{"fe80::1%eth0", "fe80::1%eth0", ""},
		{"127.0.0.1:5", "", `"127.0.0.1:5" holds a port: give the host alone, and the port as port=5`},
		{"[::1]:18515", "", `"[::1]:18515" holds a port`},
		{"server:18515", "", `"server:18515" holds a port: give the host alone, and the port as port=18515`},
	} {
		h, err := connectHost(tt.in, []string{"qp0"})
		switch {
		case tt.err == "" && (err != nil || h != tt.host):
			t.Errorf("%s: %q, %v; want %q", tt.in, h, err, tt.host)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: %v; want an error saying %q", tt.in, err, tt.err)
		}
	}
}
