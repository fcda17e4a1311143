package sim

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The limits of the UDP link: its table of peers (maxPeers) and the
// packets it lets wait in step mode (udpHeldMax). Every wait below is
// bounded (waitFor) and asserts an outcome, never a duration.

// strangers opens n UDP sockets, each on a loopback address of its own
// from 127.0.1.1 up, as n hosts that send to the link; the test skips
// where they cannot be had.
func strangers(t *testing.T, n int) []*net.UDPConn {
	t.Helper()
	cs := make([]*net.UDPConn, n)
	for i := range cs {
		ip := netip.AddrFrom4([4]byte{127, 0, byte(1 + i/250), byte(1 + i%250)})
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
		if err != nil {
			t.Skipf("no loopback address %s here: %v", ip, err)
		}
		t.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs
}

// sendFrom sends p from c to the link at to, with the ICRC of the header
// the kernel gives it (c's address and port, ID 0 with DF): a well-formed
// datagram that any host could send.
func sendFrom(t *testing.T, c *net.UDPConn, to netip.AddrPort, p wire.Packet) {
	t.Helper()
	src := c.LocalAddr().(*net.UDPAddr).AddrPort()
	b, err := p.Append(nil, &wire.Network{Src: src.Addr(), Dst: to.Addr(), SrcPort: src.Port(), FixedID: true})
	mustT(t, err)
	sendRaw(t, c, to, b)
}

func sendRaw(t *testing.T, c *net.UDPConn, to netip.AddrPort, b []byte) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(b, to); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, or fails after 10 s saying what.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// verdictCounter counts, by verdict ("sent", "delivered", "dropped"), the
// packets a fabric's observer saw from some source addresses.
type verdictCounter struct {
	mu   sync.Mutex
	from map[string]bool
	n    map[string]int
}

// countVerdicts observes f for the rest of the test, counting the packets
// from the addresses of cs.
func countVerdicts(t *testing.T, f *Fabric, cs []*net.UDPConn) *verdictCounter {
	v := &verdictCounter{from: map[string]bool{}, n: map[string]int{}}
	for _, c := range cs {
		v.from[c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().String()] = true
	}
	t.Cleanup(f.ObservePackets(func(ev verbs.PacketEvent) {
		if !v.from[ev.From] {
			return
		}
		k, _, _ := strings.Cut(ev.Verdict, ":")
		v.mu.Lock()
		v.n[k]++
		v.mu.Unlock()
	}))
	return v
}

func (v *verdictCounter) get(k string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n[k]
}

// peerCount is the number of stand-ins in f's table.
func peerCount(f *Fabric) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.carrier.(*udpLink).peers)
}

// udQP is a UD QP in RTS on e with Q_Key 0x11111111, its own CQ of cqe
// entries and n receives of 2048 bytes posted.
func udQP(t *testing.T, e *env, cqe, n int) (verbs.QP, verbs.CQ) {
	t.Helper()
	cq, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: cqe})
	mustT(t, err)
	q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: n, MaxSendSGE: 1, MaxRecvSGE: 1}})
	mustT(t, err)
	mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
	mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
	mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, SQPSN: 1}, verbs.AttrState|verbs.AttrSQPSN))
	mr, err := e.pd.AllocMR(2048, verbs.AccessLocalWrite)
	mustT(t, err)
	for i := 0; i < n; i++ {
		_, err := q.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 2048, LKey: mr.LKey()}}}})
		mustT(t, err)
	}
	return q, cq
}

// udSend is a UD SEND ONLY to QP qpn with Q_Key 0x11111111.
func udSend(qpn uint32, payload string) wire.Packet {
	return wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: qpn, PSN: 1},
		DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}, Payload: []byte(payload)}
}

// pollAll polls cq until it has given n successful completions.
func pollAll(t *testing.T, cq verbs.CQ, n int) {
	t.Helper()
	got := 0
	wc := make([]verbs.WC, 64)
	waitFor(t, fmt.Sprintf("%d receives completed", n), func() bool {
		k, err := cq.Poll(wc)
		mustT(t, err)
		for _, w := range wc[:k] {
			if w.Status != verbs.WCSuccess {
				t.Fatalf("completion %+v", w)
			}
		}
		got += k
		return got >= n
	})
}

// pingRC sends one RC SEND from qa to qb and waits for both completions.
func pingRC(t *testing.T, ea, eb *env, qa, qb verbs.QP) {
	t.Helper()
	mr, err := ea.pd.AllocMR(64, verbs.AccessLocalWrite)
	mustT(t, err)
	mb, err := eb.pd.AllocMR(64, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 64, LKey: mb.LKey()}}}})
	mustT(t, err)
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}})
	mustT(t, err)
	if w := waitWC(t, ea, 1); w[0].Status != verbs.WCSuccess {
		t.Fatalf("send: %+v", w)
	}
	if w := waitWC(t, eb, 1); w[0].Status != verbs.WCSuccess {
		t.Fatalf("recv: %+v", w)
	}
}

// Strangers cannot lock the link out. 300 hosts send it, first, datagrams
// that are not RoCE, RC packets with a good ICRC that no QP takes from
// them, and UD packets to a QP that does not exist: none of them gets a
// stand-in. Then each sends a UD SEND that B's UD QP takes: they fill the
// table, which stays at maxPeers, the idle ones evicted. Yet B's RC QP
// connects to A, a peer new to it, and once it has, another flood does
// not evict A.
func TestUDPLinkStrangersDoNotLockOut(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	cs := strangers(t, 300)
	to := fb.UDPAddr()
	ud, udCQ := udQP(t, eb, 1024, 700)
	qb := eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	mustT(t, qb.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: verbs.AccessLocalWrite}, initMask))
	v := countVerdicts(t, fb, cs)

	for i, c := range cs {
		sendRaw(t, c, to, []byte("not RoCE"))
		sendFrom(t, c, to, wire.Packet{BTH: wire.BTHFields{Opcode: wire.RCSendOnly, PKey: wire.DefaultPKey, DestQP: qb.Num(), PSN: 100},
			Payload: []byte("hello")})
		sendFrom(t, c, to, udSend(0x7fff00+uint32(i), "nobody"))
		if i%50 == 49 {
			// The link takes them before more come, so the kernel's
			// socket buffer drops none.
			waitFor(t, fmt.Sprintf("%d datagrams from strangers dropped", 3*(i+1)), func() bool { return v.get("dropped") >= 3*(i+1) })
		}
	}
	if n := peerCount(fb); n != 0 {
		t.Fatalf("%d stand-ins for strangers whose datagrams were all dropped, want none", n)
	}

	flood := func(tag string) {
		t.Helper()
		for i, c := range cs {
			sendFrom(t, c, to, udSend(ud.Num(), tag))
			if i%50 == 49 {
				pollAll(t, udCQ, 50)
			}
		}
		if n := peerCount(fb); n != maxPeers {
			t.Errorf("%d stand-ins after 300 strangers, want the table full (%d)", n, maxPeers)
		}
	}
	flood("first")

	qa := ea.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	pingRC(t, ea, eb, qa, qb)

	flood("second")
	fb.mu.Lock()
	s := fb.carrier.(*udpLink).peers[fa.UDPAddr().Addr()]
	kept := s != nil && qb.(*qp).route.to == s.dev
	fb.mu.Unlock()
	if !kept {
		t.Errorf("the stand-in for %s, which B's QP is connected to, was evicted", fa.UDPAddr().Addr())
	}
	pingRC(t, ea, eb, qa, qb)
	if st := fb.UDPStats(); st.Peers != maxPeers || st.Evicted < 300 {
		t.Errorf("stats %+v, want %d peers and at least 300 evicted", st, maxPeers)
	}
}

// A table full of live peers — each the destination of an AH — refuses a
// new one with ENOBUFS, naming the limit, for an AH and for an RC QP's
// RTR alike; a datagram from a new host still reaches a UD QP; once an AH
// is destroyed, its peer makes room.
func TestUDPLinkPeerTableFullOfLivePeers(t *testing.T) {
	fb := newUDPFabric(t)
	eb := udpEnv(t, fb)
	gid := func(i int) verbs.GID {
		return verbs.GIDFromIPv4(netip.AddrFrom4([4]byte{127, 0, byte(3 + i/250), byte(1 + i%250)}))
	}
	av := func(i int) verbs.AHAttr {
		return verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: gid(i), SGIDIndex: 1, HopLimit: 64}}
	}
	ahs := make([]verbs.AH, maxPeers)
	for i := range ahs {
		a, err := eb.pd.CreateAH(av(i))
		mustT(t, err)
		ahs[i] = a
	}
	_, err := eb.pd.CreateAH(av(maxPeers))
	wantFull := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, syscall.ENOBUFS) || !strings.Contains(err.Error(), fmt.Sprintf("at most %d peers", maxPeers)) ||
			!strings.Contains(err.Error(), "maxPeers") {
			t.Errorf("%s with the table full of live peers: %v, want ENOBUFS naming the limit", call, err)
		}
	}
	wantFull("create_ah", err)
	q := eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: verbs.AccessLocalWrite}, initMask))
	rtr := &verbs.QPAttr{State: verbs.QPSRTR, AH: av(maxPeers), PathMTU: verbs.MTU1024, DestQPN: 0x11, RQPSN: 1,
		MaxDestRdAtomic: 1, MinRNRTimer: 12}
	wantFull("modify_qp to RTR", q.Modify(rtr, rtrMask))

	// A new host's datagram is still delivered, from a stand-in that
	// takes no place in the table.
	ud, udCQ := udQP(t, eb, 64, 4)
	c := strangers(t, 1)[0]
	sendFrom(t, c, fb.UDPAddr(), udSend(ud.Num(), "still heard"))
	pollAll(t, udCQ, 1)
	if n := peerCount(fb); n != maxPeers {
		t.Errorf("%d stand-ins, want %d", n, maxPeers)
	}

	mustT(t, ahs[7].Destroy())
	mustT(t, q.Modify(rtr, rtrMask))
	if _, err := eb.pd.CreateAH(av(maxPeers + 1)); err == nil {
		t.Error("create_ah for a second new peer worked with the table full of live peers again")
	}
}

// In step mode arriving datagrams wait in the fabric for Step; at most
// udpHeldMax of them: the rest are dropped and counted.
func TestUDPLinkStepModeBound(t *testing.T) {
	fb := newUDPFabric(t)
	eb := udpEnv(t, fb)
	ud, _ := udQP(t, eb, 64, 4)
	fb.SetDeliveryMode(verbs.DeliverStep)
	c := strangers(t, 1)[0]
	const extra = 200
	sent := 0
	for sent < udpHeldMax+extra {
		for k := 0; k < 64; k++ {
			sendFrom(t, c, fb.UDPAddr(), udSend(ud.Num(), "wait for step"))
			sent++
		}
		// The link takes them before more come, so the kernel's socket
		// buffer drops none.
		waitFor(t, fmt.Sprintf("%d datagrams held or dropped", sent), func() bool {
			held, _ := fb.Pending()
			return held+int(fb.UDPStats().HeldDrops) >= sent
		})
	}
	held, _ := fb.Pending()
	st := fb.UDPStats()
	if held != udpHeldMax || st.HeldDrops != uint64(sent-udpHeldMax) {
		t.Fatalf("%d datagrams sent in step mode: %d held, %d dropped; want %d held, %d dropped",
			sent, held, st.HeldDrops, udpHeldMax, sent-udpHeldMax)
	}
	// Stepping frees room: the next datagram waits again.
	if _, ok := fb.Step(); !ok {
		t.Fatal("Step delivered nothing")
	}
	sendFrom(t, c, fb.UDPAddr(), udSend(ud.Num(), "room again"))
	waitFor(t, "a datagram held after a Step", func() bool { held, _ := fb.Pending(); return held == udpHeldMax })
}

// TestUDPLinkSocketDrops: while the fabric is busy nothing reads the
// socket, whose receive buffer then holds what it can; what it cannot
// hold is dropped by the kernel and counted (QueueDrops), and the link
// goes on with the rest.
func TestUDPLinkSocketDrops(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the socket's drops are counted on Linux only (SO_RXQ_OVFL)")
	}
	fb := newUDPFabric(t)
	c := strangers(t, 1)[0]
	const size, sent = 60000, 600 // 36 MB: more than any receive buffer holds
	big := make([]byte, size)
	to := fb.UDPAddr()
	fb.mu.Lock() // nothing reads the socket
	for i := 0; i < sent; i++ {
		sendRaw(t, c, to, big)
	}
	fb.mu.Unlock()
	seen := func() (uint64, uint64) {
		st := fb.UDPStats()
		return st.QueueDrops, st.Malformed + st.BadICRC + st.Refused
	}
	// The count comes with the next datagram the socket takes (the
	// kernel stamps each with the drops before it), once the link has
	// made room by reading what the buffer held.
	total := sent
	waitFor(t, "the drops counted", func() bool {
		sendRaw(t, c, to, big)
		total++
		time.Sleep(time.Millisecond)
		d, r := seen()
		return d+r == uint64(total)
	})
	if d, r := seen(); d == 0 || r < 2 {
		t.Fatalf("%d datagrams of %d bytes sent while the fabric was busy: %d dropped by the socket, %d read; want some of each", sent, size, d, r)
	}
}
