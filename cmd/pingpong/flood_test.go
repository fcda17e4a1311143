package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs/wire"
)

// floodSources is how many hosts flood the links in
// TestTwoProcessesUnderFlood: more than the 256 peers a link keeps.
const floodSources = 300

// flooder is floodSources UDP sockets, each on a loopback address of its
// own (127.0.0.1 to 127.0.0.254, then 127.0.1.x), sending to the UDP
// links at the given addresses until stopped.
type flooder struct {
	conns  []*net.UDPConn
	to     []netip.AddrPort
	rounds chan struct{} // receives after every round
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newFlooder(t *testing.T, to ...netip.AddrPort) *flooder {
	t.Helper()
	fl := &flooder{to: to, rounds: make(chan struct{}), stop: make(chan struct{})}
	for i := 0; i < floodSources; i++ {
		ip := netip.AddrFrom4([4]byte{127, 0, byte(i / 254), byte(1 + i%254)})
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
		if err != nil {
			t.Skipf("no loopback address %s here: %v", ip, err)
		}
		t.Cleanup(func() { c.Close() })
		fl.conns = append(fl.conns, c)
	}
	return fl
}

// datagrams is what one host sends to the link at to in a round: bytes
// that are not RoCE, and, with a good ICRC, an RC SEND and a UD SEND to
// the first QP numbers a simulator hands out (pingpong's QPs have them).
func datagrams(from, to netip.AddrPort, round int) [][]byte {
	out := [][]byte{[]byte("not RoCE")}
	n := wire.Network{Src: from.Addr(), Dst: to.Addr(), SrcPort: from.Port()}
	for _, qpn := range []uint32{0x11, 0x12} {
		for _, p := range []wire.Packet{
			{BTH: wire.BTHFields{Opcode: wire.RCSendOnly, PKey: wire.DefaultPKey, DestQP: qpn, PSN: wire.PSN(round)},
				Payload: []byte("flood")},
			{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: qpn, PSN: wire.PSN(round)},
				DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}, Payload: []byte("flood")},
		} {
			if b, err := p.Append(nil, &n); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}

// run floods in rounds, every host sending its datagrams to every link
// once a round, until stop is closed.
func (fl *flooder) run() {
	fl.wg.Add(1)
	go func() {
		defer fl.wg.Done()
		for round := 0; ; round++ {
			for _, c := range fl.conns {
				from := c.LocalAddr().(*net.UDPAddr).AddrPort()
				for _, to := range fl.to {
					for _, b := range datagrams(from, to, round) {
						c.WriteToUDPAddrPort(b, to) // a link not bound yet loses them
					}
				}
			}
			select {
			case <-fl.stop:
				return
			case fl.rounds <- struct{}{}:
			default:
			}
			// Leave the links' processes some CPU: the flood is to be
			// heard, not to starve them.
			time.Sleep(2 * time.Millisecond)
		}
	}()
}

func (fl *flooder) halt() {
	close(fl.stop)
	fl.wg.Wait()
}

// Two pingpong processes connect and finish while 300 hosts flood both
// UDP links with datagrams that are not RoCE and with RC and UD SENDs to
// pingpong's QP numbers, each with a good ICRC. The server hears the
// flood before it connects its QP: a link that kept a peer for every
// source it heard from (at most 256) refused its RTR with ENETUNREACH.
func TestTwoProcessesUnderFlood(t *testing.T) {
	requireUDP(t)
	srvAddr, cliAddr := netip.MustParseAddr("127.0.2.2"), netip.MustParseAddr("127.0.2.3")
	fl := newFlooder(t, netip.AddrPortFrom(srvAddr, 4791), netip.AddrPortFrom(cliAddr, 4791))
	fl.run()
	defer fl.halt()

	ctx, cancel := context.WithTimeout(context.Background(), procDeadline)
	defer cancel()
	port := freePort(t)
	args := "rc --backend sim -g 1 -c -n 100 --timeout 10s -p " + port
	srv := start(t, ctx, strings.Fields(args+" --sim-addr "+srvAddr.String())...)
	if !srv.waitOutput("local address", 10*time.Second) {
		srv.cmd.Process.Kill()
		t.Fatalf("the server did not start: %s", srv.wait())
	}
	// The server's link is bound: let it hear two whole rounds of the
	// flood before the client comes.
	for i := 0; i < 2; i++ {
		<-fl.rounds
	}
	var cli proc
	for i := 0; ; i++ {
		c := start(t, ctx, strings.Fields(args+" --sim-addr "+cliAddr.String()+" 127.0.0.1")...)
		cli = c.wait()
		if !strings.Contains(cli.stderr, "connection refused") || i >= 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(cli.stderr, "Couldn't connect") {
		srv.cmd.Process.Kill()
	}
	s := srv.wait()
	t.Logf("server %s, client %s", s.took.Round(time.Millisecond), cli.took.Round(time.Millisecond))
	for _, x := range []struct {
		side string
		p    proc
		peer netip.Addr
	}{{"server", s, cliAddr}, {"client", cli, srvAddr}} {
		if x.p.code != 0 || x.p.stderr != "" || !strings.Contains(x.p.stdout, "remote address: LID 0x0000, QPN 0x000011, PSN ") ||
			!strings.Contains(x.p.stdout, "GID ::ffff:"+x.peer.String()+"\n") || !strings.Contains(x.p.stdout, "\n100 iters in ") {
			t.Errorf("%s under the flood: %s", x.side, x.p)
		}
	}
}
