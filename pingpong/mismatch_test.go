package pingpong

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// Options that differ between the two sides, a stalled peer, or two
// different programs: where rdma-core hangs forever, every run here ends
// within the timeout (or at once), and says what is likely wrong.
func TestMismatchedSides(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	const to = " --timeout 1s"
	tests := []struct {
		name             string
		srv, cli         string
		srvCode, cliCode int
		srvWant, cliWant []string // substrings of stderr
	}{
		{name: "server -n larger",
			srv: "rc -g 1 -n 20" + to, cli: "rc -g 1 -n 10 -d sim1" + to, srvCode: 1, cliCode: 0,
			srvWant: []string{"No completion for 1s: 10 of 20 messages received, 10 sent", "stopped answering after 10 messages", "smaller -n"}},
		{name: "client -n larger",
			srv: "rc -g 1 -n 10" + to, cli: "rc -g 1 -n 20 -d sim1" + to, srvCode: 0, cliCode: 1,
			// rxe takes retry_cnt 7 as "retry forever": rdma-core hangs here.
			// The client's 11th send completes when it reaches the server
			// before the server destroys its QP (10 or 11 sent).
			cliWant: []string{"No completion for 1s: 10 of 20 messages received, 1", "stopped answering after 10 messages", "smaller -n"}},
		{name: "uc -n differs",
			srv: "uc -g 1 -n 10" + to, cli: "uc -g 1 -n 20" + to, srvCode: 0, cliCode: 1,
			cliWant: []string{"10 of 20 messages received", "smaller -n"}},
		{name: "rc client -s larger",
			srv: "rc -g 1 -s 1024" + to, cli: "rc -g 1 -s 2048" + to, srvCode: 1, cliCode: 1,
			// rxe 6.1 fails the receive (LOC_QP_OP_ERR) and NAKs the send (REM_OP_ERR).
			cliWant: []string{"Failed status remote operation error (11) for wr_id 2", "started with a smaller -s"},
			srvWant: []string{"Failed status local QP operation error (2) for wr_id 1", "the peer uses a larger -s"}},
		{name: "rc client -s smaller",
			srv: "rc -g 1 -s 2048" + to, cli: "rc -g 1 -s 1024" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Received a 1024-byte message, expected 2048", "use the same -s on both sides"},
			cliWant: []string{"No completion for 1s: 0 of 1000 messages received, 1 sent", "acknowledged the first message but never answered", "different -s"}},
		{name: "uc client -s larger",
			srv: "uc -g 1 -s 1024" + to, cli: "uc -g 1 -s 2048" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed status local QP operation error (2) for wr_id 1", "the peer uses a larger -s"},
			cliWant: []string{"nothing came back", "differ in -s"}},
		{name: "ud client -s larger",
			srv: "ud -g 1 -s 512" + to, cli: "ud -g 1 -s 1024" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed status local QP operation error (2) for wr_id 1", "the peer uses a larger -s"},
			cliWant: []string{"nothing came back", "differ in -s"}},
		// A path MTU above the link's: rxe accepts it, then cannot send the
		// packets (rdma-core hangs, retrying forever).
		{name: "rc -m above the link MTU",
			srv: "rc -g 1 -m 4096" + to, cli: "rc -g 1 -m 4096 -d sim1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"warning: -m 4096 is larger than the port's active MTU (1024)", "No completion for 1s: 0 of 1000"},
			cliWant: []string{"warning: -m 4096", "use -m 1024 or less", "the first message was never acknowledged"}},
		{name: "uc -m above the link MTU on one side",
			srv: "uc -g 1 -m 1024" + to, cli: "uc -g 1 -m 2048 -d sim1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"differ in -s or -m"}, cliWant: []string{"warning: -m 2048", "-m 2048 is larger than the port's active MTU (1024)"}},
		// rxe (6.1) does not hold a responder to its own path MTU: two sides
		// on one device (no link) with different -m work, as on rxe0.
		{name: "rc -m differs on one device",
			srv: "rc -g 1 -m 1024 -n 50" + to, cli: "rc -g 1 -m 256 -n 50" + to, srvCode: 0, cliCode: 0},
		{name: "-g on the server only",
			srv: "rc -g 1" + to, cli: "rc" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Couldn't connect to remote QP", "Failed to modify QP to RTR", "the peer sent no GID"},
			cliWant: []string{"Couldn't read/write remote address", "closed the connection without answering"}},
		{name: "-g on the client only",
			srv: "rc" + to, cli: "rc -g 1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed to modify QP to RTR", "this side has no -g"}},
		{name: "no -g on RoCE",
			srv: "uc" + to, cli: "uc" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed to modify QP to RTR", "neither side passed -g"}},
		{name: "ud without -g",
			srv: "ud" + to, cli: "ud" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed to create AH", "neither side passed -g"}},
		{name: "srq -q differs",
			srv: "srq -g 1 -q 4" + to, cli: "srq -g 1 -q 8" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"the peer sent 8 QP addresses but this side has 4 QPs", "same -q"},
			cliWant: []string{"closed the connection without answering"}},
		{name: "rc server, srq client",
			srv: "rc -g 1" + to, cli: "srq -g 1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"it runs srq, this side runs rc"},
			cliWant: []string{"the peer sent 1 address(es) where srq sends 256"}},
		{name: "srq server, rc client",
			srv: "srq -g 1" + to, cli: "rc -g 1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"the peer sent 1 address(es) where srq sends 256"},
			cliWant: []string{"run the same program on both sides"}},
		{name: "rc server, ud client",
			srv: "rc -g 1 -s 1024" + to, cli: "ud -g 1" + to, srvCode: 1, cliCode: 1,
			srvWant: []string{"No completion for 1s", "run different programs"},
			cliWant: []string{"No completion for 1s"}},
		{name: "-e on one side only is fine",
			srv: "rc -g 1 -e -n 50" + to, cli: "rc -g 1 -n 50" + to, srvCode: 0, cliCode: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			srv, cli := runBoth(t, f, tc.srv, tc.cli)
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %s", d)
			}
			if srv.code != tc.srvCode || cli.code != tc.cliCode {
				t.Fatalf("exit codes %d and %d, want %d and %d\nserver: %s\nclient: %s", srv.code, cli.code, tc.srvCode, tc.cliCode, srv, cli)
			}
			for _, w := range tc.srvWant {
				if !strings.Contains(srv.stderr, w) {
					t.Errorf("server stderr lacks %q:\n%s", w, srv.stderr)
				}
			}
			for _, w := range tc.cliWant {
				if !strings.Contains(cli.stderr, w) {
					t.Errorf("client stderr lacks %q:\n%s", w, cli.stderr)
				}
			}
		})
	}
}

// A peer that completes the exchange and then does nothing: the server
// gives up after --timeout and says what it waited for, after what the
// backend saw (Program.Diagnose).
func TestStalledPeer(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	done := make(chan result, 1)
	go func() {
		var so, se proctest.Buf
		p := &Program{Stdout: &so, Stderr: &se, Open: func(string) (verbs.Provider, error) { return f, nil },
			Listen:   func(int) (net.Listener, error) { return ln, nil },
			Diagnose: func() string { return "the link dropped 3 datagrams" }}
		code := p.Run(context.Background(), strings.Fields("rc -g 1 --timeout 500ms -p "+strconv.Itoa(port)))
		done <- result{code, so.String(), se.String()}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g, _ := verbs.ParseGID("10.0.0.2")
	// A QPN nobody has: the server's RTR accepts it, nothing ever arrives.
	if _, err := exchange.Client(c, []exchange.Dest{{QPN: 0xabcd, PSN: 1, GID: g}}, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.stderr, "No completion for 500ms: 0 of 1000 messages received, 0 sent") ||
			!strings.Contains(r.stderr, "likely cause: the link dropped 3 datagrams; the client's first message never arrived") {
			t.Errorf("%s", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not give up")
	}
}

// A client that connects and sends nothing, or only half a message.
func TestStalledExchange(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	for _, send := range []string{"", "0000:0000", "0000:000011:000001:00000000000000000000ffff0a000002\x00"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan result, 1)
		go func() {
			var so, se proctest.Buf
			p := &Program{Stdout: &so, Stderr: &se, Open: func(string) (verbs.Provider, error) { return f, nil },
				Listen: func(int) (net.Listener, error) { return ln, nil }}
			code := p.Run(context.Background(), strings.Fields("srq -g 1 --timeout 300ms"))
			done <- result{code, so.String(), se.String()}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(send))
		r := <-done
		c.Close()
		want := map[string]string{
			"":          "the client connected but sent nothing within 300ms",
			"0000:0000": "the peer stopped in the middle of the exchange",
		}[send]
		if send != "" && send != "0000:0000" {
			want = "the peer sent 1 address(es) where srq sends 256"
		}
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "Couldn't read remote address") {
			t.Errorf("client sent %q: want %q in\n%s", send, want, r)
		}
	}
}

func TestClientWithoutServer(t *testing.T) {
	f := newFabric(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	var so, se proctest.Buf
	code := Run(context.Background(), strings.Fields("rc -g 1 -p "+port+" 127.0.0.1"), &so, &se, f)
	if code != 1 || !strings.Contains(se.String(), "Couldn't connect to 127.0.0.1:"+port) || !strings.Contains(se.String(), "start the server first") {
		t.Errorf("exit %d\n%s", code, se.String())
	}
	if !strings.HasPrefix(so.String(), "  local address:  LID 0x0000, QPN 0x") {
		t.Errorf("stdout %q", so.String())
	}
}

// The server waits for its client as long as it takes; a cancelled
// context (Ctrl-C) ends the wait.
func TestServerWaitsUntilCancelled(t *testing.T) {
	f := newFabric(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var se proctest.Buf
	go func() {
		p := &Program{Stdout: &proctest.Buf{}, Stderr: &se, Open: func(string) (verbs.Provider, error) { return f, nil },
			Listen: func(int) (net.Listener, error) { return ln, nil }}
		done <- p.Run(ctx, strings.Fields("rc -g 1 --timeout 100ms"))
	}()
	select {
	case code := <-done:
		t.Fatalf("the server returned %d before any client came:\n%s", code, se.String())
	case <-time.After(500 * time.Millisecond): // five timeouts: still waiting
	}
	cancel()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(se.String(), "Interrupted while waiting for a client") {
			t.Errorf("exit %d\n%s", code, se.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not stop the server")
	}
}
