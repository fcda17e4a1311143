package pingpong

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// xrcFabric returns a simulator with XRC on and n devices.
func xrcFabric(t testing.TB, n int) *sim.Fabric {
	t.Helper()
	f := sim.New(sim.Config{Devices: n, Seed: 1, XRC: true})
	t.Cleanup(func() { f.Close() })
	return f
}

// runXSRQ runs an xsrq server and its clients as Programs in goroutines on
// one provider, over TCP on 127.0.0.1 (a free port, appended as -p). The
// server's PSNs come from seed 1, client i's from seed 2+i.
func runXSRQ(t testing.TB, prov verbs.Provider, serverArgs string, clientArgs ...string) (srv result, clis []result) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ps := " -p " + strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(string) (verbs.Provider, error) { return prov, nil }
	var wg sync.WaitGroup
	run := func(args string, listen func(int) (net.Listener, error), seed uint64, out *result) {
		defer wg.Done()
		var so, se proctest.Buf
		p := &Program{Stdout: &so, Stderr: &se, Open: open, Listen: listen, Rand: rand.New(rand.NewPCG(seed, 1))}
		out.code = p.Run(ctx, strings.Fields(args))
		out.stdout, out.stderr = so.String(), se.String()
	}
	clis = make([]result, len(clientArgs))
	wg.Add(1 + len(clientArgs))
	go run(serverArgs+ps, func(int) (net.Listener, error) { return ln, nil }, 1, &srv)
	for i, a := range clientArgs {
		// The server accepts its clients in the order they come: let
		// client i come i-th.
		time.Sleep(20 * time.Millisecond)
		go run(a+ps+" 127.0.0.1", nil, uint64(2+i), &clis[i])
	}
	wg.Wait()
	return srv, clis
}

// rdma-core's command lines, parsed as getopt_long parses them with
// xsrq_pingpong's option string "p:d:i:s:m:n:l:eog:c:".
func TestXSRQFlags(t *testing.T) {
	d := Defaults(XSRQ)
	if d.Size != 4096 || d.MTU != verbs.MTU1024 || d.Iters != 5 || d.Clients != 1 || d.Port != 18515 || d.GIDIndex != -1 || d.Check {
		t.Errorf("defaults %+v; want rdma-core's init(): -s 4096, -m 1024 (the code, not the man page's 2048), -n 5, -c 1", d)
	}
	for _, tc := range []struct {
		cmd  string
		want func(o Options) bool
	}{
		{"xsrq -c 2", func(o Options) bool { return o.Clients == 2 && o.Host == "" }},
		{"xsrq --clients=2", func(o Options) bool { return o.Clients == 2 }},
		{"xsrq --clients 3 -n3", func(o Options) bool { return o.Clients == 3 && o.Iters == 3 }},
		{"xsrq -c2 -e", func(o Options) bool { return o.Clients == 2 && o.Events }},
		{"xsrq -n 3", func(o Options) bool { return o.Iters == 3 }},
		{"xsrq --num_tests 3", func(o Options) bool { return o.Iters == 3 }},
		{"xsrq --num=7", func(o Options) bool { return o.Iters == 7 }},
		{"xsrq -m 2048", func(o Options) bool { return o.MTU == verbs.MTU2048 }},
		{"xsrq --mtu=4096 -s 0x10", func(o Options) bool { return o.MTU == verbs.MTU4096 && o.Size == 16 }},
		{"xsrq -g 1 -l 3 -i 1 -d sim1", func(o Options) bool { return o.GIDIndex == 1 && o.SL == 3 && o.IBDev == "sim1" }},
		{"xsrq --verify", func(o Options) bool { return o.Check }},
		{"xsrq -o", func(o Options) bool { return len(o.Unsupported) == 1 }},
		// A client serves one connection, whatever -c says (rdma-core
		// forces num_clients back to 1 when a server name is given).
		{"xsrq -c 4 host", func(o Options) bool { return o.Clients == 1 && o.Host == "host" }},
		{"xsrq host --clients=4", func(o Options) bool { return o.Clients == 1 }},
	} {
		o, err := ParseArgs(strings.Fields(tc.cmd))
		if err != nil || o.Transport != XSRQ || !tc.want(o) {
			t.Errorf("%s: %+v, %v", tc.cmd, o, err)
		}
	}
	for _, tc := range []struct{ cmd, want string }{
		{"xsrq -x", "invalid option -- 'x'"},
		{"xsrq -q 4", "invalid option -- 'q'"},  // srq's, not xsrq's
		{"xsrq -r 10", "invalid option -- 'r'"}, // no rx depth
		{"xsrq --rx-depth=10", "unrecognized option '--rx-depth=10'"},
		{"xsrq --num-tests 3", "unrecognized option '--num-tests'"}, // the man page's spelling
		{"xsrq --iters 3", "unrecognized option '--iters'"},
		{"xsrq --chk", "unrecognized option '--chk'"},
		{"xsrq -c", "option requires an argument -- 'c'"},
		{"xsrq --clients", "option '--clients' requires an argument"},
		{"xsrq -c 0", "-c 0 is out of range"},
		{"xsrq -c two", `-c "two" is not a number`},
		{"xsrq -n 0", "-n 0 is out of range"},
		{"xsrq -m 2000", "the path MTU is one of 256, 512, 1024, 2048, 4096"},
		{"xsrq --verify=yes", "option '--verify' doesn't allow an argument"},
		{"xsrq a b", "one server host at most, got 2"},
	} {
		_, err := ParseArgs(strings.Fields(tc.cmd))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.cmd, err, tc.want)
		}
	}
	o := Defaults(XSRQ)
	o.Clients, o.Iters, o.Check, o.GIDIndex = 2, 3, true, 1
	if got := strings.Join(o.Args(), " "); got != "-c 2 -n 3 -g 1 --verify" {
		t.Errorf("Args = %q", got)
	}
	o.Host = "h"
	if got := strings.Join(o.Args(), " "); got != "-n 3 -g 1 --verify h" {
		t.Errorf("client Args = %q", got)
	}
}

// A server of two clients, three Programs on three simulated devices,
// the TCP exchange between them: rdma-core's lines in rdma-core's order
// (a client: local, remote; the server, per client: remote, local), then
// "success", and --verify found every byte of every message right.
func TestXSRQProgram(t *testing.T) {
	f := xrcFabric(t, 3)
	srv, clis := runXSRQ(t, f, "xsrq -g 1 -d sim0 -c 2 --verify -n 20",
		"xsrq -g 1 -d sim1 --verify -n 20", "xsrq --gid-idx=1 --ib-dev=sim2 --verify --num_tests=20 --clients=5")
	want := []string{
		"  remote: LID 0000, QPN RECV 000011 SEND 000012, PSN 040936, SRQN 020001, GID ::ffff:10.0.0.2\n" +
			"   local: LID 0000, QPN RECV 000011 SEND 000012, PSN 4ae39f, SRQN 020001, GID ::ffff:10.0.0.1\n" +
			"  remote: LID 0000, QPN RECV 000011 SEND 000012, PSN f5ad4d, SRQN 020001, GID ::ffff:10.0.0.3\n" +
			"   local: LID 0000, QPN RECV 000013 SEND 000014, PSN 3d1e60, SRQN 020001, GID ::ffff:10.0.0.1\n" +
			"success\n",
		"   local: LID 0000, QPN RECV 000011 SEND 000012, PSN 040936, SRQN 020001, GID ::ffff:10.0.0.2\n" +
			"  remote: LID 0000, QPN RECV 000011 SEND 000012, PSN 4ae39f, SRQN 020001, GID ::ffff:10.0.0.1\n" +
			"success\n",
		"   local: LID 0000, QPN RECV 000011 SEND 000012, PSN f5ad4d, SRQN 020001, GID ::ffff:10.0.0.3\n" +
			"  remote: LID 0000, QPN RECV 000013 SEND 000014, PSN 3d1e60, SRQN 020001, GID ::ffff:10.0.0.1\n" +
			"success\n",
	}
	for i, r := range append([]result{srv}, clis...) {
		if r.code != 0 || r.stderr != "" || r.stdout != want[i] {
			t.Errorf("side %d: %s\nwant stdout:\n%s", i, r, want[i])
		}
	}
}

// The line formats: "%8s: LID %04x, QPN RECV %06x SEND %06x, PSN %06x,
// SRQN %06x, GID %s".
func TestXRCAddrLine(t *testing.T) {
	d := exchange.XRCDest{LID: 0xa, RecvQPN: 0x11, SendQPN: 0x12, PSN: 0xabc, SRQN: 0x20001}
	if got := XRCAddrLine("local", d); got != "   local: LID 000a, QPN RECV 000011 SEND 000012, PSN 000abc, SRQN 020001, GID ::" {
		t.Errorf("local: %q", got)
	}
	if got := XRCAddrLine("remote", d); got != "  remote: LID 000a, QPN RECV 000011 SEND 000012, PSN 000abc, SRQN 020001, GID ::" {
		t.Errorf("remote: %q", got)
	}
}

// plainContext is a device context without the extended verbs: a provider
// whose verbs_context ops are libibverbs' dummies.
type plainContext struct{ verbs.Context }

// Without XRC (kernel rxe; the simulator as it starts) the program stops
// where rdma-core's does, with its line, then says why.
func TestXSRQWithoutXRC(t *testing.T) {
	f := newFabric(t) // XRC off, as rxe
	var so, se proctest.Buf
	p := &Program{Stdout: &so, Stderr: &se, Open: func(string) (verbs.Provider, error) { return f, nil }}
	if code := p.Run(context.Background(), []string{"xsrq", "-g", "1"}); code != 1 {
		t.Errorf("exit %d; want 1", code)
	}
	lines := strings.Split(se.String(), "\n")
	if len(lines) != 4 || lines[0] != "Couldn't Open the XRC Domain 95" ||
		!strings.HasPrefix(lines[1], "pingpong xsrq: ibv_open_xrcd: EOPNOTSUPP: sim0 has no XRC") ||
		lines[2] != "pingpong xsrq: likely cause: "+xsrqNoXRCHint || so.String() != "" {
		t.Errorf("stdout %q\nstderr:\n%s", so.String(), se.String())
	}
	d, _ := f.Device(0)
	vctx, err := d.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer vctx.Close()
	_, err = NewXSRQEndpoint(plainContext{vctx}, Defaults(XSRQ), XRCDomainPath, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "Couldn't Open the XRC Domain 95: ibv_open_xrcd: EOPNOTSUPP:") {
		t.Errorf("a context without extended verbs: %v", err)
	}
}

// The verbs of pp_init_ctx and connect_qps, seen from the objects: an XRC
// SRQ of num_clients receives, per client an XRC_RECV QP (remote read and
// write) and an XRC_SEND QP (max_send_wr num_clients × num_tests), each
// in RTS toward the peer's other QP with rdma-core's values. (The GRH's
// hop limit, 5, is not seen here: on RoCE the kernel replaces it with the
// route's when the QP moves to RTR, and the simulator does the same.)
func TestXSRQObjects(t *testing.T) {
	f := xrcFabric(t, 2)
	ctxs := make([]verbs.Context, 2)
	for i := range ctxs {
		d, _ := f.Device(i)
		c, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctxs[i] = c
	}
	o := Defaults(XSRQ)
	o.GIDIndex, o.Clients, o.Iters, o.MTU, o.SL = 1, 3, 4, verbs.MTU2048, 2
	srv, err := NewXSRQEndpoint(ctxs[0], o, XRCDomainPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	co := o
	co.Host = "server"
	cli, err := NewXSRQEndpoint(ctxs[1], co, XRCDomainPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if srv.Clients() != 3 || cli.Clients() != 1 {
		t.Fatalf("clients %d and %d; want 3 and 1", srv.Clients(), cli.Clients())
	}
	if a, err := srv.srq.Query(); err != nil || a.MaxWR < 3 {
		t.Errorf("SRQ %+v, %v; want max_wr 3", a, err)
	}
	cl, _ := cli.Local(0)
	sl, _ := srv.Local(0)
	if err := srv.Connect(0, cl); err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(0, sl); err != nil {
		t.Fatal(err)
	}
	all := verbs.AttrState | verbs.AttrAccessFlags | verbs.AttrDestQPN | verbs.AttrPathMTU | verbs.AttrRQPSN |
		verbs.AttrSQPSN | verbs.AttrTimeout | verbs.AttrAV | verbs.AttrCap | verbs.AttrMinRNRTimer | verbs.AttrRetryCnt | verbs.AttrRNRRetry
	r, _, err := srv.recvQPs[0].Query(all)
	if err != nil {
		t.Fatal(err)
	}
	if srv.recvQPs[0].Type() != verbs.QPTypeXRCRecv || r.State != verbs.QPSRTS || r.AccessFlags != verbs.AccessRemoteWrite|verbs.AccessRemoteRead ||
		r.DestQPN != cl.SendQPN || r.RQPSN != cl.PSN || r.SQPSN != sl.PSN || r.PathMTU != verbs.MTU2048 || r.Timeout != 14 ||
		r.MinRNRTimer != 12 || !r.AH.IsGlobal || r.AH.GRH.SGIDIndex != 1 || r.AH.GRH.DGID != cl.GID {
		t.Errorf("the server's XRC_RECV QP: %+v", r)
	}
	s, init, err := srv.sendQPs[0].Query(all)
	if err != nil {
		t.Fatal(err)
	}
	if srv.sendQPs[0].Type() != verbs.QPTypeXRCSend || s.State != verbs.QPSRTS || s.AccessFlags != 0 || s.DestQPN != cl.RecvQPN ||
		s.RQPSN != cl.PSN || s.SQPSN != sl.PSN || s.Timeout != 14 || s.RetryCnt != 7 || s.RNRRetry != 7 || s.AH.GRH.DGID != cl.GID ||
		init.Cap.MaxSendWR < 12 || init.Cap.MaxRecvWR != 0 {
		t.Errorf("the server's XRC_SEND QP: %+v, %+v", s, init)
	}
	if srv.sendWRs[0].RemoteSRQN != cl.SRQN || cli.sendWRs[0].RemoteSRQN != sl.SRQN || sl.SRQN == 0 {
		t.Errorf("remote SRQNs %#x and %#x; want the peers' %#x and %#x", srv.sendWRs[0].RemoteSRQN, cli.sendWRs[0].RemoteSRQN, cl.SRQN, sl.SRQN)
	}
	if srv.recvQPs[1].Num() == srv.recvQPs[0].Num() || sl.RecvQPN != srv.recvQPs[0].Num() || sl.SendQPN != srv.sendQPs[0].Num() {
		t.Errorf("QP numbers: %+v", sl)
	}
}

// --verify's pattern names the message: the connection (both PSNs, in
// the direction it travels) and its number; every byte counts.
func TestXSRQVerify(t *testing.T) {
	o := Defaults(XSRQ)
	o.Size, o.Check, o.Iters = 100, true, 5
	e := &XSRQEndpoint{o: o, n: 2, scratch: make([]byte, o.Size), connected: []bool{true, true},
		local:  []exchange.XRCDest{{PSN: 0x111111}, {PSN: 0x222222}},
		remote: []exchange.XRCDest{{PSN: 0x333333}, {PSN: 0x444444}}}
	msg := func(from, to uint32, k int) []byte {
		b := make([]byte, o.Size)
		xsrqPattern(b, from, to, k)
		return b
	}
	good := msg(0x333333, 0x111111, 3)
	if err := e.verify(0, 3, good); err != nil {
		t.Fatalf("the right message: %v", err)
	}
	for _, at := range []int{0, 1, 50, 99} {
		b := append([]byte(nil), good...)
		b[at] ^= 0x01
		err := e.verify(0, 3, b)
		want := fmt.Sprintf("--verify: message 3 of 5 from client 0 differs from its pattern: 1 of 100 bytes, the first at byte %d", at)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "damaged on the way") {
			t.Errorf("byte %d flipped: %v", at, err)
		}
	}
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"zeros", make([]byte, o.Size), "without --verify"},
		{"echo", msg(0x111111, 0x333333, 3), "this side's own message to that peer, sent back"},
		{"next", msg(0x333333, 0x111111, 4), "it is message 4 of the same peer"},
		{"other client", msg(0x444444, 0x222222, 3), "it is message 3 from client 1, counted as client 0's"},
		{"other direction", msg(0x222222, 0x444444, 3), "no message of this run"},
	} {
		if err := e.verify(0, 3, tc.got); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if string(msg(1, 2, 1)) == string(msg(2, 1, 1)) || string(msg(1, 2, 1)) == string(msg(1, 2, 2)) {
		t.Error("the pattern does not tell the direction or the number apart")
	}
}

// RunPair runs xsrq too: one server of one client, in one goroutine, on
// one simulated device (the two contexts share the domain of
// /tmp/xrc_domain, as two processes on one host do) or on two.
func TestXSRQPair(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices []int
		events  bool
	}{{"two devices", []int{0, 1}, false}, {"loopback", []int{0, 0}, false}, {"events", []int{0, 1}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := xrcFabric(t, 2)
			var ctxs []verbs.Context
			for _, i := range tc.devices {
				d, _ := f.Device(i)
				c, err := d.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctxs = append(ctxs, c)
			}
			o := Defaults(XSRQ)
			o.GIDIndex, o.Iters, o.Size, o.Check, o.Events = 1, 50, 5000, true, tc.events
			rng := rand.New(rand.NewPCG(1, 1))
			r, err := RunPair(context.Background(), ctxs[0], ctxs[1], o, PairHooks{PSN: rng.Uint32})
			if err != nil {
				t.Fatal(err)
			}
			lines := r.Lines()
			if len(lines) != 6 || !strings.HasPrefix(lines[0], "server:   remote: LID 0000, QPN RECV ") ||
				!strings.HasPrefix(lines[1], "server:    local: ") || lines[2] != "server: success" ||
				!strings.HasPrefix(lines[3], "client:    local: ") || !strings.HasPrefix(lines[4], "client:   remote: ") || lines[5] != "client: success" {
				t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
			}
			if r.Server.XRemote[0] != r.Client.XLocal[0] || r.Client.XRemote[0] != r.Server.XLocal[0] || r.Server.Stats.Iters != 50 {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// RunPair between two simulators on the UDP link, as two processes have
// them: every message a real datagram, --verify on.
func TestXSRQPairOverUDPLink(t *testing.T) {
	var ctxs [2]verbs.Context
	for i := range ctxs {
		f, err := sim.NewUDP(sim.Config{Devices: 1, Seed: 1, XRC: true}, "")
		if err != nil {
			t.Skipf("no UDP link here: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		d, _ := f.Device(0)
		if ctxs[i], err = d.Open(); err != nil {
			t.Fatal(err)
		}
	}
	o := Defaults(XSRQ)
	o.GIDIndex, o.Iters, o.Size, o.MTU, o.Check = 1, 30, 4097, verbs.MTU256, true
	r, err := RunPair(context.Background(), ctxs[0], ctxs[1], o, PairHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if out := strings.Join(r.Lines(), "\n"); !strings.Contains(out, "GID ::ffff:127.0.0.") || !strings.HasSuffix(out, "client: success") {
		t.Errorf("lines:\n%s", out)
	}
}

// Options that differ between the sides end within the timeout, with what
// is likely wrong.
func TestXSRQMistakes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		srv, cli         string
		srvCode, cliCode int
		srvWant, cliWant []string
	}{
		// The client waits longer, so that the server's wait for its END
		// ends first.
		{name: "-n differs", srv: "xsrq -g 1 -d sim0 -n 5", cli: "xsrq -g 1 -d sim1 -n 8 --timeout 3s", srvCode: 1, cliCode: 1,
			srvWant: []string{"0/4: Couldn't read remote termination ack", "client 0 sent no END within 1s"},
			cliWant: []string{"No completion for 3s: 5 of 8 messages received, 5 sent", "the server stopped answering after 5 message(s)", "smaller -n"}},
		{name: "--verify on the server only", srv: "xsrq -g 1 -d sim0 --verify", cli: "xsrq -g 1 -d sim1", srvCode: 1, cliCode: 1,
			srvWant: []string{"--verify: message 1 of 5 from client 0 differs from its pattern", "sent back", "pass --verify on both sides"}},
		{name: "--verify on the client only", srv: "xsrq -g 1 -d sim0", cli: "xsrq -g 1 -d sim1 --verify", srvCode: 1, cliCode: 1,
			cliWant: []string{"--verify: message 1 of 5 from the server differs from its pattern", "all zeros", "pass --verify on both sides"}},
		{name: "-s differs", srv: "xsrq -g 1 -d sim0 -s 4096", cli: "xsrq -g 1 -d sim1 -s 8192", srvCode: 1, cliCode: 1,
			cliWant: []string{"Received a 4096-byte message, expected 8192", "use the same -s"},
			srvWant: []string{"No completion for 1s", "no client answered its first message", "a different -s"}},
		{name: "-g on one side", srv: "xsrq -g 1 -d sim0", cli: "xsrq -d sim1", srvCode: 1, cliCode: 1,
			srvWant: []string{"Failed to modify recv QP[0] to RTR", "the peer sent no GID"}},
		{name: "rc client", srv: "xsrq -g 1 -d sim0", cli: "rc -g 1 -d sim1", srvCode: 1, cliCode: 1,
			srvWant: []string{"52/66: Couldn't read remote address [0]", "rc, uc or ud send 52"}},
		{name: "-c 2, one client", srv: "xsrq -g 1 -d sim0 -c 2", cli: "xsrq -g 1 -d sim1", srvCode: 1, cliCode: 1,
			srvWant: []string{"accept() failed for client 1", "only 1 of the 2 clients of -c 2 connected"},
			cliWant: []string{"No completion for 1s: 0 of 5 messages received, 0 sent", "start the other clients"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := xrcFabric(t, 2)
			timeout := func(args string) string {
				if strings.Contains(args, "--timeout") {
					return args
				}
				return args + " --timeout 1s"
			}
			srv, clis := runXSRQ(t, f, timeout(tc.srv), timeout(tc.cli))
			cli := clis[0]
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
