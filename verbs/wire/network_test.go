package wire

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"testing"
)

// TestSourcePort checks rxe's per-QP UDP source port,
// 0xC000 + hash_32(qpn, 14), against values computed by hand.
// Reference: rocev2-wire.md §6 (rxe_qp.c, include/linux/hash.h).
func TestSourcePort(t *testing.T) {
	tests := []struct {
		qpn  uint32
		want uint16
	}{
		{0, 0xc000},
		{1, 0xd872},
		{0x11, 0xdf94},
		{0x12, 0xf806},
		{0xd3, 0xe611},
		{0xffffff, 0xf94d},
	}
	for _, tc := range tests {
		if got := SourcePort(tc.qpn); got != tc.want {
			t.Errorf("SourcePort(%#x) = %#04x, want %#04x", tc.qpn, got, tc.want)
		}
	}
}

func TestIPHeaders(t *testing.T) {
	p := Packet{BTH: BTHFields{Opcode: RCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 0x010203}, Payload: pattern(10)}
	t.Run("IPv4", func(t *testing.T) {
		n := testNet4()
		n.TrafficClass = 0x02
		n.HopLimit = 1
		ip, err := p.AppendIP(nil, &n)
		if err != nil {
			t.Fatal(err)
		}
		l := p.Len() // 12 + 10 + 2 + 4
		want := "4502" + hex4(20+8+l) + "0203" + "4000" + "0111" + hex4(int(ipv4Checksum(append(append([]byte{0x45, 0x02}, ip[2:10]...), append([]byte{0, 0}, ip[12:20]...)...)))) +
			"0a000001" + "0a000002" + hex4(int(SourcePort(0x11))) + "12b7" + hex4(8+l) + "0000"
		if got := hex.EncodeToString(ip[:28]); got != want {
			t.Errorf("headers\n got %s\nwant %s", got, want)
		}
		if fold(sum16(0, ip[:20])) != 0xffff {
			t.Errorf("IPv4 header checksum does not verify")
		}
		if l != 28 {
			t.Errorf("Len() = %d, want 28", l)
		}
	})
	t.Run("IPv4 mapped GIDs", func(t *testing.T) {
		n := testNet4()
		a, _ := p.AppendIP(nil, &n)
		n.Src = netip.AddrFrom16(n.Src.As16())
		n.Dst = netip.AddrFrom16(n.Dst.As16())
		if n.Src.Is4() {
			t.Fatal("test setup: address is not 4-in-6")
		}
		b, err := p.AppendIP(nil, &n)
		if err != nil || string(a) != string(b) {
			t.Errorf("::ffff:10.0.0.1 framed differently from 10.0.0.1 (err %v)", err)
		}
	})
	t.Run("IPv6", func(t *testing.T) {
		n := testNet6()
		n.TrafficClass = 0xab
		n.FlowLabel = 0x12345
		n.HopLimit = 3
		ip, err := p.AppendIP(nil, &n)
		if err != nil {
			t.Fatal(err)
		}
		l := p.Len()
		want := "6ab12345" + hex4(8+l) + "1103" + "fe8000000000000002000afffe000001" + "fe8000000000000002000afffe000002" +
			hex4(int(SourcePort(0x11))) + "12b7" + hex4(8+l) + "0000"
		if got := hex.EncodeToString(ip[:48]); got != want {
			t.Errorf("headers\n got %s\nwant %s", got, want)
		}
	})
	t.Run("fixed ID, no DF, port", func(t *testing.T) {
		n := testNet4()
		n.ID, n.FixedID, n.NoDF, n.DstPort = 0xbeef, true, true, 5000
		ip, _ := p.AppendIP(nil, &n)
		if id, frag, port := binary.BigEndian.Uint16(ip[4:]), binary.BigEndian.Uint16(ip[6:]), binary.BigEndian.Uint16(ip[22:]); id != 0xbeef || frag != 0 || port != 5000 {
			t.Errorf("id %#x frag %#x port %d", id, frag, port)
		}
	})
}

func hex4(v int) string {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], uint16(v))
	return hex.EncodeToString(b[:])
}

// TestUDPChecksum checks the optional UDP checksum against scapy's, in
// vector 2 (0xaca2), and that a receiver's sum over it is all ones.
func TestUDPChecksum(t *testing.T) {
	ip := unhex(t, icrcVector2)
	udp := append([]byte(nil), ip[20:]...)
	udp[6], udp[7] = 0, 0
	if got := udpChecksum(ip[:20], udp); got != 0xaca2 {
		t.Errorf("udpChecksum(vector 2) = %#04x, want 0xaca2", got)
	}
	p := samplePacket(RCSendOnly, 9, 33)
	n := testNet6()
	n.UDPChecksum = true
	b, err := p.AppendIP(nil, &n)
	if err != nil {
		t.Fatal(err)
	}
	acc := sum16(0, b[8:40]) + protoUDP + uint32(len(b)-40)
	if got := fold(sum16(acc, b[40:])); got != 0xffff {
		t.Errorf("IPv6 UDP checksum does not verify: sum %#04x", got)
	}
}

func TestNetworkErrors(t *testing.T) {
	p := samplePacket(RCSendOnly, 1, 8)
	tests := []struct {
		name string
		n    *Network
	}{
		{"nil", nil},
		{"no addresses", &Network{}},
		{"no destination", &Network{Src: netip.MustParseAddr("10.0.0.1")}},
		{"mixed versions", &Network{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("fe80::1")}},
	}
	for _, tc := range tests {
		for name, f := range map[string]func() error{
			"Append":      func() error { _, err := p.Append(nil, tc.n); return err },
			"AppendIP":    func() error { _, err := p.AppendIP(nil, tc.n); return err },
			"AppendFrame": func() error { _, err := p.AppendFrame(nil, tc.n); return err },
			"VerifyICRC":  func() error { return VerifyICRC(make([]byte, 32), tc.n) },
			"PutGRH":      func() error { return tc.n.PutGRH(make([]byte, 40), &p) },
		} {
			if err := f(); !errors.Is(err, ErrBadNetwork) {
				t.Errorf("%s with %s network = %v, want ErrBadNetwork", name, tc.name, err)
			}
		}
	}
}

func TestMACFor(t *testing.T) {
	tests := []struct {
		addr string
		want string
	}{
		{"10.0.0.1", "02000a000001"},
		{"::ffff:192.168.1.7", "0200c0a80107"},
		{"fe80::200:aff:fe00:1", "00000a000001"}, // EUI-64 of 00:00:0a:00:00:01
		{"fe80::5054:ff:fe12:3456", "525400123456"},
		{"2001:db8::5", "020000000005"},
	}
	for _, tc := range tests {
		m := MACFor(netip.MustParseAddr(tc.addr))
		if got := hex.EncodeToString(m[:]); got != tc.want {
			t.Errorf("MACFor(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

// TestGRH checks the 40 bytes a UD receive buffer starts with.
// Reference: rocev2-wire.md §5 (rxe_resp.c execute, ib_verbs.h
// rdma_network_hdr, core/verbs.c ib_get_rdma_header_version).
func TestGRH(t *testing.T) {
	p := samplePacket(UDSendOnly, 0x42, 64)
	t.Run("IPv4", func(t *testing.T) {
		n := testNet4()
		n.TrafficClass = 0x10
		g := make(GRH, GRHLen)
		for i := range g {
			g[i] = 0xee
		}
		if err := n.PutGRH(g, &p); err != nil {
			t.Fatal(err)
		}
		ip, _ := p.AppendIP(nil, &n)
		if string(g[:20]) != string(make([]byte, 20)) {
			t.Errorf("first 20 bytes = %x, want zeros", g[:20])
		}
		if string(g[20:]) != string(ip[:20]) {
			t.Errorf("IPv4 part = %x, want the header on the wire %x", g[20:], ip[:20])
		}
		if v := g.Version(); v != 4 {
			t.Errorf("Version() = %d, want 4", v)
		}
		if g.Source() != n.Src || g.Dest() != n.Dst || g.TrafficClass() != 0x10 || g.HopLimit() != DefaultHopLimit {
			t.Errorf("Source %v Dest %v TC %#x hop %d", g.Source(), g.Dest(), g.TrafficClass(), g.HopLimit())
		}
		if sg := g.SGID(); sg != netip.MustParseAddr("::ffff:10.0.0.1").As16() {
			t.Errorf("SGID() = %x, want ::ffff:10.0.0.1", sg)
		}
	})
	t.Run("IPv6", func(t *testing.T) {
		n := testNet6()
		n.TrafficClass, n.HopLimit = 0x22, 9
		g := make(GRH, GRHLen)
		if err := n.PutGRH(g, &p); err != nil {
			t.Fatal(err)
		}
		ip, _ := p.AppendIP(nil, &n)
		if string(g) != string(ip[:40]) {
			t.Errorf("GRH = %x, want the IPv6 header %x", g, ip[:40])
		}
		if g.Version() != 6 || g.Source() != n.Src || g.DGID() != n.Dst.As16() || g.TrafficClass() != 0x22 || g.HopLimit() != 9 {
			t.Errorf("Version %d Source %v TC %#x hop %d", g.Version(), g.Source(), g.TrafficClass(), g.HopLimit())
		}
	})
	t.Run("version rule", func(t *testing.T) {
		zero := make(GRH, GRHLen)
		if v := zero.Version(); v != 0 {
			t.Errorf("zeros: Version() = %d, want 0", v)
		}
		// Version nibble 6 but an IPv4-looking tail with a bad checksum: 6.
		n := testNet4()
		g := make(GRH, GRHLen)
		_ = n.PutGRH(g, &p)
		g[0] = 0x60
		if v := g.Version(); v != 4 {
			t.Errorf("6 in byte 0, valid IPv4 tail: Version() = %d, want 4", v)
		}
		g[30] ^= 0xff
		if v := g.Version(); v != 6 {
			t.Errorf("6 in byte 0, bad IPv4 checksum: Version() = %d, want 6", v)
		}
	})
	if err := (&Network{}).PutGRH(nil, &p); err == nil {
		t.Error("PutGRH with bad network succeeded")
	}
	n := testNet4()
	if err := n.PutGRH(make([]byte, 39), &p); !errors.Is(err, ErrShort) {
		t.Errorf("PutGRH(39 bytes) = %v, want ErrShort", err)
	}
}
