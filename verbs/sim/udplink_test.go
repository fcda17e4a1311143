package sim

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// newUDPFabric is a fabric on the UDP link at the first free loopback
// address; the test skips where loopback UDP is not available.
func newUDPFabric(t *testing.T) *Fabric {
	t.Helper()
	f, err := NewUDP(Config{Devices: 1}, "")
	if err != nil {
		t.Skipf("no UDP link here: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// udpEnv is newEnv on a UDP-linked fabric.
func udpEnv(t *testing.T, f *Fabric) *env {
	t.Helper()
	d, err := f.Device(0)
	mustT(t, err)
	ctx, err := d.Open()
	mustT(t, err)
	pd, err := ctx.AllocPD()
	mustT(t, err)
	cq, err := ctx.CreateCQ(verbs.CQInitAttr{CQE: 256})
	mustT(t, err)
	return &env{t: t, f: f, ctx: ctx, pd: pd, cq: cq}
}

// connectRC moves a (on ea) and b (on eb) to RTS, each aimed at the other,
// with timeout 14 (64–68 ms).
func connectRC(t *testing.T, ea, eb *env, a, b verbs.QP, mtu verbs.MTU) {
	t.Helper()
	connectRCTimeout(t, ea, eb, a, b, mtu, 14)
}

// connectRCTimeout is connectRC with the QPs' timeout attribute.
func connectRCTimeout(t *testing.T, ea, eb *env, a, b verbs.QP, mtu verbs.MTU, timeout uint8) {
	t.Helper()
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	for _, x := range []struct {
		e, pe *env
		q, p  verbs.QP
	}{{ea, eb, a, b}, {eb, ea, b, a}} {
		mustT(t, x.q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: all}, initMask))
		av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: x.pe.gid(), SGIDIndex: 1, HopLimit: 1}}
		mustT(t, x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: mtu, DestQPN: x.p.Num(), RQPSN: 100,
			MaxDestRdAtomic: 1, MinRNRTimer: 12}, rtrMask))
		mustT(t, x.q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: timeout, RetryCnt: 7, RNRRetry: 7, SQPSN: 100, MaxRdAtomic: 1}, rtsMask))
	}
}

// waitWC polls e's CQ until n completions came or the deadline passed.
func waitWC(t *testing.T, e *env, n int) []verbs.WC {
	t.Helper()
	var got []verbs.WC
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		got = append(got, e.poll()...)
		if len(got) < n {
			time.Sleep(50 * time.Microsecond)
		}
	}
	if len(got) < n {
		t.Fatalf("%d of %d completions within 10 s: %+v", len(got), n, got)
	}
	return got
}

func TestUDPLinkAddressAndGIDs(t *testing.T) {
	f := newUDPFabric(t)
	ap := f.UDPAddr()
	if !ap.Addr().IsLoopback() || ap.Port() != 4791 || ap.Addr() == netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("bound to %v, want 127.0.0.N:4791 with N ≥ 2", ap)
	}
	e := udpEnv(t, f)
	if g := e.gid(); g != verbs.GIDFromIPv4(ap.Addr()) {
		t.Errorf("GID 1 is %s, want the IPv4-mapped %s", g, ap.Addr())
	}
	g0, _ := e.ctx.QueryGID(1, 0)
	if g0[0] != 0xfe || g0[1] != 0x80 {
		t.Errorf("GID 0 %s is not link-local", g0)
	}
	pa, err := e.ctx.QueryPort(1)
	mustT(t, err)
	if pa.ActiveMTU != verbs.MTU4096 {
		t.Errorf("active MTU %v, want 4096 (the loopback netdev)", pa.ActiveMTU)
	}
	// On the link the clock follows the wall clock; in process it does not.
	if !f.RealTime() || New(Config{}).RealTime() {
		t.Errorf("RealTime() = %v on the UDP link and %v in process; want true, false", f.RealTime(), New(Config{}).RealTime())
	}
	// A second fabric takes the next free address.
	f2 := newUDPFabric(t)
	if f2.UDPAddr() == ap {
		t.Errorf("two fabrics on %v", ap)
	}
	// An explicit address in use says so.
	_, err = NewUDP(Config{}, ap.Addr().String())
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "--sim-addr") {
		t.Errorf("binding %v twice: %v", ap, err)
	}
	// After Close the address is free again.
	f.Close()
	f3, err := NewUDP(Config{}, ap.String())
	if err != nil {
		t.Fatalf("after Close, %v: %v", ap, err)
	}
	f3.Close()
	if (&Fabric{}).UDPAddr().IsValid() {
		t.Error("an in-process fabric has a UDP address")
	}
}

func TestParseUDPAddr(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"", "invalid IP", ""},
		{"127.0.0.2", "127.0.0.2", ""},
		{" 127.0.0.9:4791 ", "127.0.0.9", ""},
		{"::ffff:127.0.0.3", "127.0.0.3", ""},
		{"[::1]:4791", "::1", ""},
		{"127.0.0.2:5000", "", "uses port 4791"},
		{"localhost", "", "not an IP address"},
		{"fe80::1%lo", "fe80::1%lo", ""},
		{"[fe80::2%veth1]:4791", "fe80::2%veth1", ""},
		{"fe80::1", "", "needs its interface as a zone"},
		{"2001:db8::2%eth0", "", "only a link-local IPv6 address"},
		{"2001:db8::2", "2001:db8::2", ""},
		{"192.0.2.7", "192.0.2.7", ""},
		{"::ffff:127.0.0.5%eth0", "", "only a link-local IPv6 address"},
		{strings.Repeat("1", 5000), "", "5000 bytes"},
		{"300.1.1.1", "", "not an IP address"},
	} {
		a, err := ParseUDPAddr(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || a.String() != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, a, err, tc.want)
		}
	}
	for _, tc := range []struct{ addr, want string }{
		{"0.0.0.0", "unicast"}, {"224.0.0.1", "unicast"}, {"255.255.255.255", "unicast"},
		{"fe80::1%nosuchif0", `no interface "nosuchif0"`},
	} {
		f, err := NewUDP(Config{}, tc.addr)
		if err == nil {
			f.Close()
			t.Errorf("NewUDP(%s) worked", tc.addr)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewUDP(%s): %v, want an error with %q", tc.addr, err, tc.want)
		}
	}
}

// Two fabrics, as two processes would have them: RC SEND, WRITE and READ
// of several packets, UC SEND and UD SEND go over real UDP and arrive
// intact; the packets are genuine RoCEv2 with a good ICRC.
func TestUDPLinkDataPath(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	var mu sync.Mutex
	var seen []verbs.PacketEvent
	cancel := fb.ObservePackets(func(ev verbs.PacketEvent) {
		mu.Lock()
		ev.Bytes = append([]byte(nil), ev.Bytes...)
		seen = append(seen, ev)
		mu.Unlock()
	})
	defer cancel()

	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	ma, err := ea.pd.AllocMR(1<<16, all)
	mustT(t, err)
	mb, err := eb.pd.AllocMR(1<<16, all)
	mustT(t, err)
	fill(ma.Bytes(), 3)

	// SEND of 5000 bytes: five packets.
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 7, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 8192, LKey: mb.LKey()}}}})
	mustT(t, err)
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 5000, LKey: ma.LKey()}}}})
	mustT(t, err)
	wa := waitWC(t, ea, 1)
	wb := waitWC(t, eb, 1)
	if wa[0].Status != verbs.WCSuccess || wb[0].Status != verbs.WCSuccess || wb[0].ByteLen != 5000 {
		t.Fatalf("send %+v, recv %+v", wa, wb)
	}
	if !bytes.Equal(mb.Bytes()[:5000], ma.Bytes()[:5000]) {
		t.Error("SEND: the data differ")
	}
	// WRITE 20000 bytes to B, READ them back into A at 32 KiB.
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
		SGList:     []verbs.SGE{{Addr: ma.Addr(), Length: 20000, LKey: ma.LKey()}},
		RemoteAddr: mb.Addr() + 8192, RKey: mb.RKey()}})
	mustT(t, err)
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 3, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled,
		SGList:     []verbs.SGE{{Addr: ma.Addr() + 32768, Length: 20000, LKey: ma.LKey()}},
		RemoteAddr: mb.Addr() + 8192, RKey: mb.RKey()}})
	mustT(t, err)
	wa = waitWC(t, ea, 2)
	for _, w := range wa {
		if w.Status != verbs.WCSuccess {
			t.Fatalf("WRITE/READ: %+v", wa)
		}
	}
	if !bytes.Equal(ma.Bytes()[32768:32768+20000], ma.Bytes()[:20000]) {
		t.Error("WRITE then READ: the data differ")
	}
	mu.Lock()
	delivered := 0
	for _, ev := range seen {
		if ev.Verdict == "delivered" {
			delivered++
			// The framing the kernel gave it: ID 0 with DF.
			n := wire.Network{Src: fa.UDPAddr().Addr(), Dst: fb.UDPAddr().Addr(), SrcPort: 4791, FixedID: true}
			if err := wire.VerifyICRC(ev.Bytes, &n); err != nil && ev.From == fa.UDPAddr().Addr().String() {
				t.Errorf("#%d from %s: %v", ev.Seq, ev.From, err)
			}
		}
		if strings.HasPrefix(ev.Verdict, "dropped") {
			t.Errorf("dropped: %s %s", ev.Summary, ev.Verdict)
		}
	}
	mu.Unlock()
	if delivered < 5+20 {
		t.Errorf("B saw %d packets delivered", delivered)
	}

	// UD: one SEND with a GRH.
	ua, ub := ea.qp(verbs.QPTypeUD, verbs.QPCap{}), eb.qp(verbs.QPTypeUD, verbs.QPCap{})
	for _, q := range []verbs.QP{ua, ub} {
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
			verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, SQPSN: 5}, verbs.AttrState|verbs.AttrSQPSN))
	}
	ah, err := ea.pd.CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: eb.gid(), SGIDIndex: 1, HopLimit: 64}})
	mustT(t, err)
	_, err = ub.PostRecv([]verbs.RecvWR{{WRID: 9, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 40 + 1000, LKey: mb.LKey()}}}})
	mustT(t, err)
	_, err = ua.PostSend([]verbs.SendWR{{WRID: 4, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 1000, LKey: ma.LKey()}},
		AH:     ah, RemoteQPN: ub.Num(), RemoteQKey: 0x11111111}})
	mustT(t, err)
	waitWC(t, ea, 1)
	wb = waitWC(t, eb, 1)
	if wb[0].Status != verbs.WCSuccess || wb[0].ByteLen != 1040 || wb[0].Flags&verbs.WCGRH == 0 {
		t.Fatalf("UD recv %+v", wb)
	}
	if g := wire.GRH(mb.Bytes()[:40]); g.Source() != fa.UDPAddr().Addr() || g.Dest() != fb.UDPAddr().Addr() {
		t.Errorf("UD GRH from %v to %v", g.Source(), g.Dest())
	}
	if !bytes.Equal(mb.Bytes()[40:1040], ma.Bytes()[:1000]) {
		t.Error("UD: the data differ")
	}
}

// A datagram with a bad ICRC, or not RoCE at all, is dropped by the
// receiver's checks, and the link goes on.
func TestUDPLinkDropsBadDatagrams(t *testing.T) {
	fb := newUDPFabric(t)
	eb := udpEnv(t, fb)
	qb := eb.qp(verbs.QPTypeUD, verbs.QPCap{})
	mustT(t, qb.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
	mustT(t, qb.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
	mb, err := eb.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 4096, LKey: mb.LKey()}}}})
	mustT(t, err)
	var mu sync.Mutex
	var verdicts []string
	defer fb.ObservePackets(func(ev verbs.PacketEvent) {
		mu.Lock()
		verdicts = append(verdicts, ev.Verdict)
		mu.Unlock()
	})()

	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Skip(err)
	}
	defer c.Close()
	to := net.UDPAddrFromAddrPort(fb.UDPAddr())
	src := c.LocalAddr().(*net.UDPAddr).AddrPort()
	p := wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: qb.Num(), PSN: 1},
		DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}, Payload: []byte("hello")}
	n := wire.Network{Src: src.Addr(), Dst: fb.UDPAddr().Addr(), SrcPort: src.Port()}
	good, err := p.Append(nil, &n)
	mustT(t, err)
	bad := append([]byte(nil), good...)
	bad[len(bad)-6] ^= 1
	// A CNP (congestion notification, opcode 0x81), which rxe does not
	// handle, and an opcode no one defines, both with a good ICRC; a UD
	// SEND to no QP.
	cnp := append([]byte{0x81, 0, 0xff, 0xff, 0, 0, 0, byte(qb.Num()), 0, 0, 0, 0}, make([]byte, 16+4)...)
	wire.PutICRC(cnp, icrcOf(t, cnp, &n))
	unknown := append([]byte(nil), good...)
	unknown[0] = 0x1f // RC, no such operation
	wire.PutICRC(unknown, icrcOf(t, unknown, &n))
	noQP := wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: 0x4242, PSN: 1},
		DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}}
	toNoQP, err := noQP.Append(nil, &n)
	mustT(t, err)
	for _, b := range [][]byte{{1, 2, 3}, bad, cnp, unknown, toNoQP, good} {
		if _, err := c.WriteToUDP(b, to); err != nil {
			t.Fatal(err)
		}
	}
	w := waitWC(t, eb, 1)
	if w[0].Status != verbs.WCSuccess || w[0].ByteLen != 40+5 || string(mb.Bytes()[40:45]) != "hello" {
		t.Fatalf("recv %+v %q", w, mb.Bytes()[40:45])
	}
	mu.Lock()
	got := strings.Join(verdicts, "\n")
	mu.Unlock()
	for _, want := range []string{"malformed", "bad ICRC", "0x81", "0x1f", "no QP 0x4242", "delivered"} {
		if !strings.Contains(got, want) {
			t.Errorf("no verdict says %q:\n%s", want, got)
		}
	}
	if st := fb.UDPStats(); st.Malformed != 3 || st.BadICRC != 1 || st.Refused != 1 {
		t.Errorf("UDPStats %+v, want 3 malformed (short, CNP, unknown opcode), 1 bad ICRC, 1 refused (no QP)", st)
	}
}

// icrcOf computes the ICRC of an encoded packet b (its last four bytes
// aside) under n, whatever its opcode.
func icrcOf(t *testing.T, b []byte, n *wire.Network) uint32 {
	t.Helper()
	ip, err := (&wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly}, Payload: b[12 : len(b)-4-8]}).AppendIP(nil, n)
	mustT(t, err)
	copy(ip[len(ip)-len(b):], b) // the same length: replace the RoCE part
	c, _, err := wire.PacketICRC(ip)
	mustT(t, err)
	return c
}

// Retransmission in real time: B's QP is not ready when A's SEND arrives
// (it is dropped), and A's retransmit timer (timeout 14: ~67 ms) sends it
// again once B is.
func TestUDPLinkRetransmitsInRealTime(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	ma, _ := ea.pd.AllocMR(4096, all)
	mb, _ := eb.pd.AllocMR(4096, all)
	if _, err := fb.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, Count: 1, Opcode: "ACKNOWLEDGE"}); err != nil {
		t.Fatal(err)
	}
	_, err := qb.PostRecv([]verbs.RecvWR{{WRID: 7, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 4096, LKey: mb.LKey()}}}})
	mustT(t, err)
	start := time.Now()
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 100, LKey: ma.LKey()}}}})
	mustT(t, err)
	w := waitWC(t, ea, 1)
	if w[0].Status != verbs.WCSuccess {
		t.Fatalf("%+v", w)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("completed after %v: the lost ACK should have cost a retransmit timeout (~67 ms)", d)
	}
	if got := waitWC(t, eb, 1); got[0].Status != verbs.WCSuccess {
		t.Errorf("B: %+v", got)
	}
}

// Arbitrary datagrams from a "peer" the QPs are connected to, with a good
// ICRC, so that they reach the engines: random opcodes, PSNs, keys,
// addresses and payloads. Nothing panics, and the link still works.
func TestUDPLinkRandomDatagrams(t *testing.T) {
	fb := newUDPFabric(t)
	eb := udpEnv(t, fb)
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Skip(err)
	}
	defer c.Close()
	src := c.LocalAddr().(*net.UDPAddr).AddrPort()
	peer := verbs.GIDFromIPv4(src.Addr())
	all := verbs.AccessLocalWrite | verbs.AccessRemote | verbs.AccessRemoteAtomic
	mb, err := eb.pd.AllocMR(1<<16, all)
	mustT(t, err)
	var qpns []uint32
	for _, typ := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD} {
		q := eb.qp(typ, verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1})
		qpns = append(qpns, q.Num())
		if typ == verbs.QPTypeUD {
			mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
				verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
			mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
		} else {
			mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: all}, initMask))
			av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: peer, SGIDIndex: 1, HopLimit: 1}}
			m := verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
			if typ == verbs.QPTypeRC {
				m |= verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
			}
			mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: verbs.MTU1024, DestQPN: 0x99, RQPSN: 100,
				MaxDestRdAtomic: 4, MinRNRTimer: 12}, m))
		}
		for i := 0; i < 32; i++ {
			_, err := q.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 2048, LKey: mb.LKey()}}}})
			mustT(t, err)
		}
	}
	ops := wire.Opcodes()
	rng := uint64(12345)
	next := func() uint64 { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng }
	to := net.UDPAddrFromAddrPort(fb.UDPAddr())
	n := wire.Network{Src: src.Addr(), Dst: fb.UDPAddr().Addr(), SrcPort: src.Port()}
	for i := 0; i < 3000; i++ {
		p := wire.Packet{BTH: wire.BTHFields{Opcode: ops[next()%uint64(len(ops))], PKey: wire.DefaultPKey,
			DestQP: qpns[next()%3], PSN: wire.PSN(100 + next()%8), AckReq: next()%2 == 0}}
		p.RETH = wire.RETHFields{VA: mb.Addr() + next()%70000, RKey: mb.RKey() ^ uint32(next()%2), DMALen: uint32(next() % 5000)}
		p.DETH = wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}
		p.AtomicETH = wire.AtomicETHFields{VA: mb.Addr() + 8*(next()%16), RKey: mb.RKey(), SwapAdd: next(), Compare: next()}
		if p.BTH.Opcode.HasPayload() {
			p.Payload = make([]byte, next()%1500)
		}
		b, err := p.Append(nil, &n)
		if err != nil {
			continue
		}
		if next()%10 == 0 {
			b = b[:next()%uint64(len(b))] // truncated
		}
		if _, err := c.WriteToUDP(b, to); err != nil {
			t.Fatal(err)
		}
		if i%64 == 0 {
			eb.poll() // let the fabric take them, and empty the CQ
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	eb.poll()
	// The link still delivers: a fresh UD QP takes a good datagram (the
	// random ones may have used up or failed the others' receives).
	ud := eb.qp(verbs.QPTypeUD, verbs.QPCap{})
	mustT(t, ud.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
	mustT(t, ud.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
	_, err = ud.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 2048, LKey: mb.LKey()}}}})
	mustT(t, err)
	p := wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: ud.Num(), PSN: 1},
		DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}, Payload: []byte("still here")}
	b, err := p.Append(nil, &n)
	mustT(t, err)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.WriteToUDP(b, to); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		for _, w := range eb.poll() {
			if w.QPNum == ud.Num() && w.Status == verbs.WCSuccess && w.ByteLen == 40+10 {
				return
			}
		}
	}
	t.Error("after the random datagrams, a good UD datagram was not received")
}

// Fault rules act on what a peer sends too, on arrival: a rule naming the
// peer by its address drops its first SEND, which the peer then
// retransmits, and the message still arrives once.
func TestUDPLinkFaultOnArrival(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	peer := fa.UDPAddr().Addr().String()
	if _, err := fb.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, From: "nosuch"}); err == nil || !strings.Contains(err.Error(), "peer's address") {
		t.Errorf("a rule from an unknown device: %v, want an error that names peers' addresses", err)
	}
	if _, err := fb.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, From: peer, To: "sim0", Opcode: "SEND_ONLY", Count: 1}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var verdicts []string
	cancel := fb.ObservePackets(func(ev verbs.PacketEvent) {
		mu.Lock()
		verdicts = append(verdicts, ev.Verdict)
		mu.Unlock()
	})
	defer cancel()
	mb, err := eb.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	ma, err := ea.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 4096, LKey: mb.LKey()}}}})
	mustT(t, err)
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 100, LKey: ma.LKey()}}}})
	mustT(t, err)
	if wc := waitWC(t, ea, 1); wc[0].Status != verbs.WCSuccess {
		t.Fatalf("sender: %+v", wc)
	}
	if wc := waitWC(t, eb, 1); wc[0].Status != verbs.WCSuccess || wc[0].ByteLen != 100 {
		t.Fatalf("receiver: %+v", wc)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(verdicts, "; ")
	if !strings.Contains(got, "fault rule 1 (drop), on arrival") || strings.Count(got, "delivered") < 1 {
		t.Errorf("B's trace: %s; want the first SEND dropped on arrival, then the retransmission delivered", got)
	}
	if rules := fb.Faults(); len(rules) != 0 {
		t.Errorf("the rule with count=1 is still there: %+v", rules)
	}
}

// A fault rule names a peer by an address the link reaches; any other
// address is refused, saying why.
func TestUDPLinkFaultPeerNames(t *testing.T) {
	f := newUDPFabric(t) // 127.0.0.N
	own := f.UDPAddr().Addr().String()
	for _, tc := range []struct{ from, want string }{
		{"127.0.0.250", ""},
		{"::ffff:127.0.0.251", ""},
		{own, "own address"},
		{"::1", "one IP version"},
		{"10.1.2.3", "loopback address reaches only loopback"},
		{"255.255.255.255", "not a unicast address"},
		{"nosuch", "there is no device"},
	} {
		_, err := f.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, From: tc.from})
		if tc.want == "" {
			if err != nil {
				t.Errorf("from %s: %v", tc.from, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("from %s: %v, want an error with %q", tc.from, err, tc.want)
		}
	}
	for _, r := range f.Faults() {
		if r.From != "127.0.0.250" && r.From != "127.0.0.251" {
			t.Errorf("rule from %q: want the canonical address", r.From)
		}
	}
	inproc := New(Config{Devices: 2})
	defer inproc.Close()
	if _, err := inproc.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, From: "127.0.0.3"}); err == nil || !strings.Contains(err.Error(), "--sim-addr") {
		t.Errorf("an address on an in-process fabric: %v, want an error that points at --sim-addr", err)
	}
}

// The link takes the MAC and MTU of the interface that holds its address,
// as rxe takes its netdev's: every address of every interface of this
// host gives that interface's (no socket is opened).
func TestUDPLinkInterfaceOf(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	checked := 0
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, ia := range addrs {
			n, ok := ia.(*net.IPNet)
			if !ok {
				continue
			}
			a, _ := netip.AddrFromSlice(n.IP)
			a = a.Unmap()
			if a.Is6() && a.IsLinkLocalUnicast() {
				a = a.WithZone(ifc.Name)
			}
			mac, mtu := interfaceOf(a)
			if mtu != ifc.MTU {
				t.Errorf("%s on %s: MTU %d, want the interface's %d", a, ifc.Name, mtu, ifc.MTU)
			}
			if len(ifc.HardwareAddr) == 6 && mac != [6]byte(ifc.HardwareAddr) {
				t.Errorf("%s on %s: MAC %x, want the interface's %s", a, ifc.Name, mac, ifc.HardwareAddr)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Skip("no interface has an address")
	}
	if _, mtu := interfaceOf(netip.MustParseAddr("192.0.2.254")); mtu != maxLinkMTU {
		t.Errorf("an address of no interface: MTU %d, want %d", mtu, maxLinkMTU)
	}
}

// Delay and reorder rules cannot act on a peer's packets, which arrive in
// real time: a rule from a peer is refused, and a rule for every packet
// passes the peer's by (a 2 s delay would otherwise hold nothing back and
// stop the clock for 2 s).
func TestUDPLinkNoDelayOnArrival(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	peer := fa.UDPAddr().Addr().String()
	for _, act := range []verbs.FaultAction{verbs.FaultDelay, verbs.FaultReorder} {
		r := verbs.FaultRule{Action: act, From: peer}
		if act == verbs.FaultDelay {
			r.Delay = time.Second
		}
		if _, err := fb.AddFault(r); err == nil || !strings.Contains(err.Error(), "real time") {
			t.Errorf("%v from a peer: %v, want a refusal", act, err)
		}
	}
	if _, err := fb.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, From: "ff0e::1"}); err == nil {
		t.Error("a rule from a multicast group: accepted; only To may name one")
	}
	if _, err := fb.AddFault(verbs.FaultRule{Action: verbs.FaultDelay, Delay: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	mb, err := eb.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	ma, err := ea.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 4096, LKey: mb.LKey()}}}})
	mustT(t, err)
	start := time.Now()
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 100, LKey: ma.LKey()}}}})
	mustT(t, err)
	waitWC(t, eb, 1)
	waitWC(t, ea, 1)
	if d := time.Since(start); d > time.Second {
		t.Errorf("the receive took %v: the delay rule held a peer's packet", d)
	}
	// The rule acted on B's ACK (which the link sends at once: delay acts
	// in process only), not on A's SEND as it arrived.
	if rules := fb.Faults(); len(rules) != 1 || rules[0].Hits != 1 {
		t.Errorf("rules %+v: want the delay rule hit once, by B's ACK", rules)
	}
}
