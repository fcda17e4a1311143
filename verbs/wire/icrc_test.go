package wire

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"net/netip"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// icrcVector1 is a CNP captured from ConnectX-4 Lx hardware (scapy
// test/contrib/roce.uts), IPv4 without Ethernet. Reference: rocev2-wire.md §3.
const icrcVector1 = `45c2003c718c400040119161 0a001101 0a001201 | 000012b700280000 |
	8100ffff 40000118 00000000 | 00000000000000000000000000000000 | 82fd002a`

// icrcVector2 is scapy's UC SEND ONLY with PadCnt 2 (same .uts).
const icrcVector2 = `450100400478400040 11 b4d5 c0a80007 c0a80007 | c000 12b7 002c aca2 |
	24 60 ffff 000000d3 00cf1710 | 4630818be28935d90e9a95505401be885e500000 | 78f353f3`

func TestICRCVectors(t *testing.T) {
	tests := []struct {
		name     string
		pkt      string
		wireICRC []byte // the last four bytes on the wire
	}{
		{"ConnectX-4 Lx CNP", icrcVector1, []byte{0x82, 0xfd, 0x00, 0x2a}},
		{"scapy UC SEND ONLY", icrcVector2, []byte{0x78, 0xf3, 0x53, 0xf3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ip := unhex(t, tc.pkt)
			want := binary.LittleEndian.Uint32(tc.wireICRC)
			got, carried, err := PacketICRC(ip)
			if err != nil {
				t.Fatalf("PacketICRC: %v", err)
			}
			if got != want || carried != want {
				t.Errorf("PacketICRC = computed %#08x, carried %#08x; want both %#08x", got, carried, want)
			}
			// The same through the three-slice form.
			if got := ICRC(ip[:20], ip[20:28], ip[28:len(ip)-4]); got != want {
				t.Errorf("ICRC(ip, udp, body) = %#08x, want %#08x", got, want)
			}
			// PutICRC puts it back in wire order.
			b := make([]byte, 4)
			PutICRC(b, got)
			if string(b) != string(tc.wireICRC) {
				t.Errorf("PutICRC wrote % x, want % x", b, tc.wireICRC)
			}
		})
	}
}

// TestICRCVector1RawSeed checks the seed claim of rxe_icrc.c: the raw CRC of
// eight 0xff bytes from ~0 is 0xdebb20e3 (lrhSeed holds its inverse).
func TestICRCSeed(t *testing.T) {
	if lrhSeed != ^uint32(0xdebb20e3) {
		t.Errorf("lrhSeed = %#08x, want ^0xdebb20e3 = %#08x", lrhSeed, ^uint32(0xdebb20e3))
	}
}

func TestDecodeIPVectors(t *testing.T) {
	// Vector 2 decodes, passes the ICRC check and re-encodes byte for byte,
	// UDP checksum included.
	ip := unhex(t, icrcVector2)
	var p Packet
	var n Network
	if err := DecodeIP(ip, &p, &n); err != nil {
		t.Fatalf("DecodeIP(vector 2): %v", err)
	}
	if p.BTH.Opcode != UCSendOnly || p.BTH.DestQP != 0xd3 || p.BTH.PSN != 0xcf1710 || !p.BTH.MigReq || p.BTH.PadCount != 2 || len(p.Payload) != 18 {
		t.Errorf("DecodeIP(vector 2) = %+v", p.BTH)
	}
	if n.ID != 0x0478 || !n.FixedID || n.TrafficClass != 1 || n.HopLimit != 64 || n.SrcPort != 0xc000 || n.DstPort != UDPPort || !n.UDPChecksum || n.NoDF {
		t.Errorf("DecodeIP(vector 2) network = %+v", n)
	}
	re, err := p.AppendIP(nil, &n)
	if err != nil {
		t.Fatalf("AppendIP: %v", err)
	}
	if hex.EncodeToString(re) != hex.EncodeToString(ip) {
		t.Errorf("re-encoded vector 2\n got %x\nwant %x", re, ip)
	}
	// Vector 1 is a CNP: its ICRC is right, but rxe has no such opcode.
	err = DecodeIP(unhex(t, icrcVector1), &p, &n)
	if !errors.Is(err, ErrBadOpcode) {
		t.Errorf("DecodeIP(vector 1 CNP) = %v, want ErrBadOpcode", err)
	}
}

// TestICRCMask flips every byte of an IPv4 and an IPv6 packet in turn and
// checks that the ICRC changes exactly when the byte is not masked.
// Reference: rxe_icrc.c rxe_icrc_hdr.
func TestICRCMask(t *testing.T) {
	p := Packet{BTH: BTHFields{Opcode: RCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 5}, Payload: []byte("hello, world")}
	tests := []struct {
		name   string
		net    Network
		masked []int // byte offsets in the IP datagram
	}{
		{"IPv4", testNet4(), []int{1, 8, 10, 11, 26, 27, 28 + 4}},
		// Byte 0 of IPv6: the flip hits the traffic class's high nibble.
		{"IPv6", testNet6(), []int{0, 1, 2, 3, 7, 46, 47, 48 + 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ip, err := p.AppendIP(nil, &tc.net)
			if err != nil {
				t.Fatal(err)
			}
			hl := tc.net.ipHeaderLen() + UDPHeaderLen
			base, _, _ := PacketICRC(ip)
			masked := map[int]bool{}
			for _, m := range tc.masked {
				masked[m] = true
			}
			// Lengths, version, protocol and next header would make the
			// datagram unparsable, so only the ICRC over a copy is checked.
			for i := 0; i < hl+BTHLen+len(p.Payload); i++ {
				c := append([]byte(nil), ip...)
				c[i] ^= 0x01
				got := ICRC(c[:hl-UDPHeaderLen], c[hl-UDPHeaderLen:hl], c[hl:len(c)-ICRCLen])
				if changed := got != base; changed == masked[i] {
					t.Errorf("flipping byte %d: ICRC changed = %v, want %v", i, changed, !masked[i])
				}
			}
		})
	}
}

// TestUpdateSmall checks the slicing-by-8 loop against hash/crc32 for every
// length it is used with and a few more.
func TestUpdateSmall(t *testing.T) {
	data := pattern(70)
	for n := 0; n <= len(data); n++ {
		for _, seed := range []uint32{0, lrhSeed, 0x12345678} {
			if got, want := updateSmall(seed, data[:n]), crc32.Update(seed, crc32.IEEETable, data[:n]); got != want {
				t.Errorf("updateSmall(%#x, %d bytes) = %#x, want %#x", seed, n, got, want)
			}
		}
	}
}

// TestRecoverIPv4 receives IPv4 packets as a UDP socket does, without the
// sender's identification, and checks that RecoverIPv4 finds it from the
// ICRC, and that a corrupted packet is refused: every single-bit error in
// packets up to 16 KiB.
func TestRecoverIPv4(t *testing.T) {
	// scapy's vector: ID 0x0478, DF; the UDP socket knows addresses and
	// ports only.
	ip := unhex(t, icrcVector2)
	got := Network{Src: netip.MustParseAddr("192.168.0.7"), Dst: netip.MustParseAddr("192.168.0.7"), SrcPort: 0xc000, FixedID: true}
	n, err := RecoverIPv4(ip[28:], &got)
	if err != nil || n.ID != 0x0478 || n.NoDF {
		t.Fatalf("RecoverIPv4(scapy vector) = ID %#04x NoDF %v, %v; want ID 0x0478 with DF", n.ID, n.NoDF, err)
	}
	// The DF bit is not among the unknowns: rxe always sets it.
	noDF := got
	noDF.NoDF = true
	if _, err := RecoverIPv4(ip[28:], &noDF); !errors.Is(err, ErrBadICRC) {
		t.Errorf("RecoverIPv4(scapy vector, assuming no DF) = %v, want ErrBadICRC", err)
	}
	tests := []struct {
		name    string
		id      uint16
		noDF    bool
		payload int
	}{
		{"ID 0 with DF: the link's own", 0, false, 64},
		{"rxe's hashed ID", 0xb7e1, false, 4096},
		{"all ones", 0xffff, false, 1},
		{"no DF", 0x1234, true, 0},
		{"16 KiB", 0x8001, false, 16 << 10},
		{"64 KiB", 0x7ffe, false, 65536 - 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := samplePacket(RCSendOnly, 0x123456, tc.payload)
			sent := testNet4()
			sent.FixedID, sent.ID, sent.NoDF = true, tc.id, tc.noDF
			b, err := p.Append(nil, &sent)
			if err != nil {
				t.Fatal(err)
			}
			recv := testNet4()
			recv.FixedID = true // ID 0: what the socket assumes
			recv.NoDF = tc.noDF
			n, err := RecoverIPv4(b, &recv)
			if err != nil || n.ID != tc.id || n.NoDF != tc.noDF || !n.FixedID {
				t.Fatalf("RecoverIPv4 = ID %#04x NoDF %v, %v; want ID %#04x NoDF %v", n.ID, n.NoDF, err, tc.id, tc.noDF)
			}
			if err := VerifyICRC(b, &n); err != nil {
				t.Errorf("VerifyICRC with the recovered network: %v", err)
			}
			// Every single-bit error the ICRC covers outside the ID is
			// refused in a packet up to 16 KiB (a RoCE packet carries at
			// most 4 KiB); in a larger one a few bits out of 2^16 alias an
			// ID change, as RecoverIPv4 says.
			step := 1
			if len(b) > 17<<10 {
				step = len(b) // the first byte only
			}
			for i := 0; i < len(b)-ICRCLen; i += step {
				for _, bit := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80} {
					if i == 4 { // BTH byte 4 is masked
						continue
					}
					c := append([]byte(nil), b...)
					c[i] ^= bit
					if _, err := RecoverIPv4(c, &recv); !errors.Is(err, ErrBadICRC) {
						t.Fatalf("byte %d ^ %#02x: RecoverIPv4 = %v, want ErrBadICRC", i, bit, err)
					}
				}
			}
			// A wrong address is an error too: it is not among the unknowns.
			wrong := recv
			wrong.Src = netip.MustParseAddr("10.0.0.9")
			if _, err := RecoverIPv4(b, &wrong); !errors.Is(err, ErrBadICRC) {
				t.Errorf("wrong source: RecoverIPv4 = %v, want ErrBadICRC", err)
			}
		})
	}
	if _, err := RecoverIPv4(make([]byte, 20), &Network{Src: netip.MustParseAddr("::1"), Dst: netip.MustParseAddr("::2")}); !errors.Is(err, ErrBadNetwork) {
		t.Errorf("IPv6: %v, want ErrBadNetwork", err)
	}
	if _, err := RecoverIPv4(make([]byte, 3), &got); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v, want ErrShort", err)
	}
	if _, err := RecoverIPv4(make([]byte, 20), nil); !errors.Is(err, ErrBadNetwork) {
		t.Errorf("no network: %v, want ErrBadNetwork", err)
	}
}

// TestXPow8 checks the GF(2) shift against the CRC register run over zeros.
func TestXPow8(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 4096, 65000} {
		for _, d := range []uint32{1, 0x80000000, 0xdeadbeef} {
			// The raw register difference d after n zero bytes, two ways.
			zeros := make([]byte, n)
			want := ^crc32.Update(^d, crc32.IEEETable, zeros) ^ ^crc32.Update(^uint32(0), crc32.IEEETable, zeros)
			if got := gfMul(d, xPow8(n)); got != want {
				t.Errorf("n=%d d=%#x: gfMul(d, xPow8) = %#x, want %#x", n, d, got, want)
			}
		}
	}
}
