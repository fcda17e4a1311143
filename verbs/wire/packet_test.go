package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestRoundTrip encodes every opcode with several payload sizes (so every
// pad count occurs), over IPv4 and IPv6, and decodes each form back.
func TestRoundTrip(t *testing.T) {
	for _, op := range Opcodes() {
		sizes := []int{0}
		if op.HasPayload() {
			sizes = []int{0, 1, 2, 3, 4, 1024}
		}
		for _, size := range sizes {
			for _, nw := range []struct {
				name string
				n    Network
			}{{"v4", testNet4()}, {"v6", testNet6()}} {
				p := samplePacket(op, 0xfffffe, size)
				n := nw.n
				t.Run(op.String()+"/"+nw.name, func(t *testing.T) {
					roce, err := p.Append(nil, &n)
					if err != nil {
						t.Fatalf("Append: %v", err)
					}
					if len(roce) != p.Len() || len(roce)%4 != 0 {
						t.Errorf("len = %d, Len() = %d; want equal and a multiple of 4", len(roce), p.Len())
					}
					if pad := BTH(roce).PadCount(); pad != -size&3 {
						t.Errorf("pad count = %d, want %d", pad, -size&3)
					}
					var q Packet
					if err := Decode(roce, &q); err != nil {
						t.Fatalf("Decode: %v", err)
					}
					want := p
					want.BTH.PadCount = uint8(-size & 3)
					want.ICRC = q.ICRC
					if len(want.Payload) == 0 {
						want.Payload = nil // Decode gives nil for no payload
					}
					if !reflect.DeepEqual(q, want) {
						t.Errorf("Decode(Append(p))\n got %+v\nwant %+v", q, want)
					}
					if err := VerifyICRC(roce, &n); err != nil {
						t.Errorf("VerifyICRC: %v", err)
					}

					ip, err := p.AppendIP(nil, &n)
					if err != nil {
						t.Fatalf("AppendIP: %v", err)
					}
					if !bytes.Equal(ip[len(ip)-len(roce):], roce) {
						t.Errorf("AppendIP's RoCE part differs from Append's")
					}
					var q2 Packet
					var n2 Network
					if err := DecodeIP(ip, &q2, &n2); err != nil {
						t.Fatalf("DecodeIP: %v", err)
					}
					if !reflect.DeepEqual(q2, q) {
						t.Errorf("DecodeIP packet differs from Decode's:\n got %+v\nwant %+v", q2, q)
					}
					// The recovered network re-encodes the same datagram.
					ip2, err := q2.AppendIP(nil, &n2)
					if err != nil || !bytes.Equal(ip2, ip) {
						t.Errorf("AppendIP with DecodeIP's network differs (err %v)", err)
					}

					fr, err := p.AppendFrame(nil, &n)
					if err != nil {
						t.Fatalf("AppendFrame: %v", err)
					}
					var q3 Packet
					var n3 Network
					if err := DecodeFrame(fr, &q3, &n3); err != nil {
						t.Fatalf("DecodeFrame: %v", err)
					}
					if n3.SrcMAC != MACFor(n.Src) || n3.DstMAC != MACFor(n.Dst) || n3.Src != n.Src || n3.Dst != n.Dst || n3.SrcPort != n.SrcPort {
						t.Errorf("DecodeFrame network = %+v", n3)
					}
				})
			}
		}
	}
}

// TestXRCBytes pins the exact bytes of XRC packets: the XRCETH (a reserved
// zero byte, then the 24-bit XRC SRQ number) sits right after the BTH of a
// request, before RETH or ImmDt, and a response from the XRC target carries
// only what an RC response carries.
func TestXRCBytes(t *testing.T) {
	n := testNet4()
	tests := []struct {
		name string
		p    Packet
		// want is the packet on the wire, header by header: BTH, extension
		// headers, payload and pad, then the ICRC (least significant byte
		// first, as rxe stores it). The ICRCs were checked against an
		// independent computation: zlib's CRC-32 over eight 0xff bytes and
		// the masked IPv4, UDP and BTH headers, as rxe_icrc.c builds them.
		want []string
	}{
		{
			"SEND ONLY",
			Packet{
				BTH:    BTHFields{Opcode: XRCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 3, AckReq: true},
				XRCETH: 0x123456, Payload: []byte("hello"),
			},
			[]string{"a430ffff0000001180000003", "00123456", "68656c6c6f000000", "7d7a9304"},
		},
		{
			"SEND ONLY, SRQN masked to 24 bits",
			Packet{
				BTH:    BTHFields{Opcode: XRCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 3, AckReq: true},
				XRCETH: 0xff123456, Payload: []byte("hello"),
			},
			[]string{"a430ffff0000001180000003", "00123456", "68656c6c6f000000", "7d7a9304"},
		},
		{
			"RDMA WRITE ONLY",
			Packet{
				BTH:    BTHFields{Opcode: XRCRDMAWriteOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 4, AckReq: true},
				XRCETH: 0x123456, RETH: RETHFields{VA: 0x7f0000001000, RKey: 0x1234, DMALen: 4}, Payload: []byte("abcd"),
			},
			[]string{"aa00ffff0000001180000004", "00123456", "00007f0000001000" + "00001234" + "00000004", "61626364", "b4c201b2"},
		},
		{
			"SEND ONLY WITH IMMEDIATE",
			Packet{
				BTH:    BTHFields{Opcode: XRCSendOnlyImm, SE: true, PKey: DefaultPKey, DestQP: 0x11, PSN: 5},
				XRCETH: 0x123456, ImmDt: 0xdeadbeef, Payload: []byte("hi"),
			},
			[]string{"a5a0ffff0000001100000005", "00123456", "deadbeef", "68690000", "fc152543"},
		},
		{
			"ACKNOWLEDGE: no XRCETH, even if the field is set",
			Packet{
				BTH:    BTHFields{Opcode: XRCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 5},
				XRCETH: 0x123456, AETH: AETHFields{Syndrome: SyndromeACK, MSN: 3},
			},
			[]string{"b100ffff0000001200000005", "1f000003", "800ae75d"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.p.Append(nil, &n)
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			want := strings.Join(tc.want, "")
			if got := hex.EncodeToString(b); got != want {
				t.Errorf("Append =\n %s\nwant\n %s", got, want)
			}
			if err := VerifyICRC(b, &n); err != nil {
				t.Errorf("VerifyICRC: %v", err)
			}
			var q Packet
			if err := Decode(b, &q); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			w := tc.p
			w.BTH.PadCount = uint8(w.PadCount())
			w.ICRC = q.ICRC
			if w.BTH.Opcode.Has(HasXRCETH) {
				w.XRCETH &= 0xffffff
			} else {
				w.XRCETH = 0 // not on the wire, so not decoded
			}
			if len(w.Payload) == 0 {
				w.Payload = nil
			}
			if !reflect.DeepEqual(q, w) {
				t.Errorf("Decode(Append(p))\n got %s\nwant %s", Describe(&q), Describe(&w))
			}
		})
	}
}

func TestAppendAppends(t *testing.T) {
	p := samplePacket(RCSendOnly, 1, 5)
	n := testNet4()
	prefix := []byte("prefix")
	b, err := p.Append(append([]byte(nil), prefix...), &n)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, prefix) || len(b) != len(prefix)+p.Len() {
		t.Fatalf("Append did not append: % x", b)
	}
	alone, _ := p.Append(nil, &n)
	if !bytes.Equal(b[len(prefix):], alone) {
		t.Errorf("appended bytes differ from a fresh encoding")
	}
}

// TestDeterministicID checks that the IPv4 ID follows the PSN, so the same
// packet encodes to the same bytes and ICRC every time.
func TestDeterministicID(t *testing.T) {
	n := testNet4()
	p := samplePacket(RCSendOnly, 0x12abcd, 16)
	a, _ := p.AppendIP(nil, &n)
	b, _ := p.AppendIP(nil, &n)
	if !bytes.Equal(a, b) {
		t.Fatal("two encodings differ")
	}
	if id := binary.BigEndian.Uint16(a[4:]); id != 0xabcd {
		t.Errorf("IPv4 ID = %#04x, want the PSN's low 16 bits 0xabcd", id)
	}
	p.BTH.PSN++
	c, _ := p.AppendIP(nil, &n)
	if binary.BigEndian.Uint16(c[4:]) != 0xabce {
		t.Errorf("next PSN's ID = %#04x", binary.BigEndian.Uint16(c[4:]))
	}
}

func TestEncodeErrors(t *testing.T) {
	n := testNet4()
	tests := []struct {
		name string
		p    Packet
		want error
	}{
		{"bad opcode", Packet{BTH: BTHFields{Opcode: 0x15}}, ErrBadOpcode},
		{"CNP", Packet{BTH: BTHFields{Opcode: 0x81}}, ErrBadOpcode},
		{"payload on ACK", Packet{BTH: BTHFields{Opcode: RCAcknowledge}, Payload: []byte{1}}, ErrBadLength},
		{"payload on READ REQUEST", Packet{BTH: BTHFields{Opcode: RCRDMAReadRequest}, Payload: []byte{1}}, ErrBadLength},
		{"too long", Packet{BTH: BTHFields{Opcode: RCSendOnly}, Payload: make([]byte, MaxLen)}, ErrBadLength},
	}
	for _, tc := range tests {
		for name, f := range map[string]func(*Packet) error{
			"Append":      func(p *Packet) error { _, err := p.Append(nil, &n); return err },
			"AppendIP":    func(p *Packet) error { _, err := p.AppendIP(nil, &n); return err },
			"AppendFrame": func(p *Packet) error { _, err := p.AppendFrame(nil, &n); return err },
		} {
			if err := f(&tc.p); !errors.Is(err, tc.want) {
				t.Errorf("%s(%s) = %v, want %v", name, tc.name, err, tc.want)
			}
		}
	}
	// The largest packet that fits.
	p := Packet{BTH: BTHFields{Opcode: RCSendOnly}, Payload: make([]byte, (MaxLen-BTHLen-ICRCLen)&^3)}
	if _, err := p.AppendIP(nil, &n); err != nil {
		t.Errorf("largest packet (%d bytes): %v", p.Len(), err)
	}
}

// TestDecodeErrors feeds malformed datagrams to Decode and checks each is
// rejected with the right sentinel.
func TestDecodeErrors(t *testing.T) {
	n := testNet4()
	good := func(op Opcode, payload int) []byte {
		p := samplePacket(op, 7, payload)
		b, err := p.Append(nil, &n)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"BTH only", good(RCSendOnly, 0)[:12], ErrShort},
		{"15 bytes", good(RCSendOnly, 0)[:15], ErrShort},
		{"RETH cut", good(RCRDMAWriteOnly, 0)[:20], ErrShort},
		{"AtomicETH cut", good(RCCompareSwap, 0)[:43], ErrShort},
		{"UD DETH cut", good(UDSendOnly, 0)[:23], ErrShort},
		{"XRCETH cut", good(XRCSendOnly, 0)[:19], ErrShort},
		{"XRC RETH cut", good(XRCRDMAWriteOnly, 0)[:35], ErrShort},
		{"TVer 1", func() []byte { b := good(RCSendOnly, 4); b[1] |= 1; return b }(), ErrBadTVer},
		{"TVer 15", func() []byte { b := good(RCSendOnly, 4); b[1] |= 0xf; return b }(), ErrBadTVer},
		{"reserved RC 0x15", func() []byte { b := good(RCSendOnly, 4); b[0] = 0x15; return b }(), ErrBadOpcode},
		{"RD SEND ONLY", func() []byte { b := good(RCSendOnly, 4); b[0] = 0x44; return b }(), ErrBadOpcode},
		{"UC READ", func() []byte { b := good(RCSendOnly, 4); b[0] = 0x2c; return b }(), ErrBadOpcode},
		{"CNP", func() []byte { b := good(RCSendOnly, 4); b[0] = 0x81; return b }(), ErrBadOpcode},
		{"FLUSH", func() []byte { b := good(RCSendOnly, 4); b[0] = 0x1c; return b }(), ErrBadOpcode},
		{"reserved XRC 0xb5", func() []byte { b := good(XRCSendOnly, 4); b[0] = 0xb5; return b }(), ErrBadOpcode},
		{"XRC FLUSH", func() []byte { b := good(XRCSendOnly, 4); b[0] = 0xbc; return b }(), ErrBadOpcode},
		{"transport 6", func() []byte { b := good(RCSendOnly, 4); b[0] = 0xc4; return b }(), ErrBadOpcode},
		{"pad 3 no payload", func() []byte { b := good(RCSendOnly, 0); BTH(b).SetPadCount(3); return b }(), ErrBadPad},
		{"pad 1 on ACK", func() []byte { b := good(RCAcknowledge, 0); BTH(b).SetPadCount(1); return b }(), ErrBadPad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Packet{Payload: []byte("untouched")}
			err := Decode(tc.b, &p)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Detail == "" {
				t.Errorf("error %v is not a *wire.Error with a reason", err)
			}
			if string(p.Payload) != "untouched" {
				t.Errorf("Decode modified p on failure")
			}
		})
	}
}

// TestDecodeLenient checks what rxe accepts and so Decode accepts too.
func TestDecodeLenient(t *testing.T) {
	n := testNet4()
	p := samplePacket(RCAcknowledge, 3, 0)
	b, _ := p.Append(nil, &n)
	// Extra bytes after an ACK's AETH become payload.
	b = append(b[:16], 1, 2, 3, 4, 0, 0, 0, 0)
	var q Packet
	if err := Decode(b, &q); err != nil || len(q.Payload) != 4 {
		t.Errorf("ACK with trailing bytes: %v, payload %d", err, len(q.Payload))
	}
	// Non-zero pad bytes.
	p = samplePacket(RCSendOnly, 3, 1)
	b, _ = p.Append(nil, &n)
	b[len(b)-5] = 0xff
	if err := Decode(b, &q); err != nil || len(q.Payload) != 1 {
		t.Errorf("non-zero pad: %v", err)
	}
	// A non-zero reserved byte in the XRCETH is ignored, as the reserved
	// bits of BTH and DETH are, and re-encoded as zero.
	p = samplePacket(XRCSendOnly, 3, 4)
	p.XRCETH = 0x123456
	b, _ = p.Append(nil, &n)
	b[BTHLen] = 0xa5
	if err := Decode(b, &q); err != nil || q.XRCETH != 0x123456 {
		t.Errorf("XRCETH with reserved byte 0xa5: %v, SRQN %#x, want 0x123456", err, q.XRCETH)
	}
	if c, _ := q.Append(nil, &n); c[BTHLen] != 0 || XRCETH(c[BTHLen:]).SRQN() != 0x123456 {
		t.Errorf("re-encoded XRCETH = % x, want 00 12 34 56", c[BTHLen:BTHLen+XRCETHLen])
	}
}

func TestDecodeReuseClearsFields(t *testing.T) {
	n := testNet4()
	a := samplePacket(RCRDMAWriteOnlyImm, 1, 8)
	ab, _ := a.Append(nil, &n)
	s := samplePacket(RCSendOnly, 2, 8)
	sb, _ := s.Append(nil, &n)
	var p Packet
	if err := Decode(ab, &p); err != nil {
		t.Fatal(err)
	}
	if err := Decode(sb, &p); err != nil {
		t.Fatal(err)
	}
	if p.RETH != (RETHFields{}) || p.ImmDt != 0 {
		t.Errorf("stale RETH/ImmDt after decoding a SEND: %+v %#x", p.RETH, p.ImmDt)
	}
	x := samplePacket(XRCSendOnly, 3, 8)
	xb, _ := x.Append(nil, &n)
	if err := Decode(xb, &p); err != nil || p.XRCETH != x.XRCETH {
		t.Fatalf("Decode(XRC SEND ONLY) = %v, XRCETH %#x", err, p.XRCETH)
	}
	if err := Decode(sb, &p); err != nil {
		t.Fatal(err)
	}
	if p.XRCETH != 0 {
		t.Errorf("stale XRCETH %#x after decoding an RC SEND", p.XRCETH)
	}
}

func TestDecodeAliasesPayload(t *testing.T) {
	n := testNet4()
	p := samplePacket(RCSendOnly, 1, 5)
	b, _ := p.Append(nil, &n)
	var q Packet
	if err := Decode(b, &q); err != nil {
		t.Fatal(err)
	}
	b[BTHLen] = 0x99
	if q.Payload[0] != 0x99 {
		t.Errorf("Payload does not alias the buffer")
	}
	if cap(q.Payload) != len(q.Payload) {
		t.Errorf("cap(Payload) = %d > len %d: appending would overwrite pad and ICRC", cap(q.Payload), len(q.Payload))
	}
}

func TestDecodeIPErrors(t *testing.T) {
	n4, n6 := testNet4(), testNet6()
	p := samplePacket(RCSendOnly, 7, 20)
	v4, _ := p.AppendIP(nil, &n4)
	v6, _ := p.AppendIP(nil, &n6)
	mut := func(b []byte, f func([]byte)) []byte {
		c := append([]byte(nil), b...)
		f(c)
		return c
	}
	fixCsum := func(b []byte) {
		b[10], b[11] = 0, 0
		binary.BigEndian.PutUint16(b[10:], ipv4Checksum(b[:20]))
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"version 5", mut(v4, func(b []byte) { b[0] = 0x55 }), ErrBadIP},
		{"v4 short", v4[:19], ErrShort},
		{"v4 IHL 4", mut(v4, func(b []byte) { b[0] = 0x44; fixCsum(b) }), ErrBadIP},
		{"v4 total length beyond buffer", mut(v4, func(b []byte) { binary.BigEndian.PutUint16(b[2:], 2000); fixCsum(b) }), ErrShort},
		{"v4 total length too small", mut(v4, func(b []byte) { binary.BigEndian.PutUint16(b[2:], 27); fixCsum(b) }), ErrBadLength},
		{"v4 TCP", mut(v4, func(b []byte) { b[9] = 6; fixCsum(b) }), ErrNotRoCE},
		{"v4 fragment", mut(v4, func(b []byte) { b[6] |= 0x20; fixCsum(b) }), ErrNotRoCE},
		{"v4 bad header checksum", mut(v4, func(b []byte) { b[11] ^= 1 }), ErrBadIP},
		{"v6 short", v6[:39], ErrShort},
		{"v6 payload length beyond buffer", mut(v6, func(b []byte) { binary.BigEndian.PutUint16(b[4:], 2000) }), ErrShort},
		{"v6 hop-by-hop", mut(v6, func(b []byte) { b[6] = 0 }), ErrNotRoCE},
		{"UDP cut", mut(v6[:44], func(b []byte) { binary.BigEndian.PutUint16(b[4:], 4) }), ErrShort},
		{"UDP length too big", mut(v4, func(b []byte) { binary.BigEndian.PutUint16(b[24:], 2000) }), ErrBadLength},
		{"UDP length 7", mut(v4, func(b []byte) { binary.BigEndian.PutUint16(b[24:], 7) }), ErrBadLength},
		{"UDP payload too short for RoCE", mut(v4, func(b []byte) { binary.BigEndian.PutUint16(b[24:], 8+15) }), ErrShort},
		{"payload bit flipped", mut(v4, func(b []byte) { b[28+BTHLen+3] ^= 0x10 }), ErrBadICRC},
		{"ICRC flipped", mut(v6, func(b []byte) { b[len(b)-1] ^= 0x80 }), ErrBadICRC},
		{"QPN changed", mut(v4, func(b []byte) { b[28+7] ^= 1 }), ErrBadICRC},
		{"IPv4 ID changed", mut(v4, func(b []byte) { b[5] ^= 1; fixCsum(b) }), ErrBadICRC},
		{"UDP source port changed", mut(v6, func(b []byte) { b[41] ^= 1 }), ErrBadICRC},
		{"TVer", mut(v4, func(b []byte) { b[28+1] |= 2 }), ErrBadTVer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q Packet
			var nn Network
			if err := DecodeIP(tc.b, &q, &nn); !errors.Is(err, tc.want) {
				t.Errorf("DecodeIP = %v, want %v", err, tc.want)
			}
		})
	}
	// Masked fields may change in flight without breaking the ICRC; the
	// IPv4 header checksum must then be fixed, as a router does.
	ok := []struct {
		name string
		b    []byte
	}{
		{"v4 TTL and TOS", mut(v4, func(b []byte) { b[1] = 0xb8; b[8] = 3; fixCsum(b) })},
		{"v6 traffic class, flow label, hop limit", mut(v6, func(b []byte) { b[0] = 0x6f; b[1] = 0xf1; b[3] = 9; b[7] = 1 })},
		{"FECN and BECN", mut(v4, func(b []byte) { b[28+4] |= 0xc0 })},
		{"UDP checksum", mut(v4, func(b []byte) { b[26] = 0x12 })},
		{"Ethernet padding", append(append([]byte(nil), v4...), 0, 0, 0, 0)},
	}
	for _, tc := range ok {
		var q Packet
		if err := DecodeIP(tc.b, &q, nil); err != nil {
			t.Errorf("%s: DecodeIP = %v, want success", tc.name, err)
		}
	}
	if err := DecodeFrame(make([]byte, 13), &Packet{}, nil); !errors.Is(err, ErrShort) {
		t.Errorf("DecodeFrame(13 bytes) = %v", err)
	}
	fr, _ := p.AppendFrame(nil, &n4)
	fr[12] = 0x81 // 802.1Q
	if err := DecodeFrame(fr, &Packet{}, nil); !errors.Is(err, ErrNotRoCE) {
		t.Errorf("DecodeFrame(VLAN) = %v", err)
	}
}

func TestVerifyICRC(t *testing.T) {
	n := testNet6()
	p := samplePacket(RCRDMAReadResponseOnly, 100, 77)
	b, _ := p.Append(nil, &n)
	if err := VerifyICRC(b, &n); err != nil {
		t.Fatalf("VerifyICRC: %v", err)
	}
	other := n
	other.SrcPort++
	if err := VerifyICRC(b, &other); !errors.Is(err, ErrBadICRC) {
		t.Errorf("VerifyICRC with another source port = %v, want ErrBadICRC", err)
	}
	masked := n
	masked.HopLimit, masked.TrafficClass, masked.FlowLabel = 1, 0xff, 0xabcde
	if err := VerifyICRC(b, &masked); err != nil {
		t.Errorf("VerifyICRC with other masked fields = %v", err)
	}
	if err := VerifyICRC(b[:15], &n); !errors.Is(err, ErrShort) {
		t.Errorf("VerifyICRC(15 bytes) = %v", err)
	}
	if got, want := CarriedICRC(b), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		t.Errorf("CarriedICRC = %#x, want %#x", got, want)
	}
}

// TestZeroAllocs checks the data path: encoding into a buffer with room,
// decoding, and describing into a buffer with room allocate nothing.
func TestZeroAllocs(t *testing.T) {
	n := testNet4()
	p := samplePacket(RCRDMAWriteFirst, 5, 1024)
	buf := make([]byte, 0, 2048)
	ip, _ := p.AppendIP(nil, &n)
	roce, _ := p.Append(nil, &n)
	var q Packet
	var nn Network
	line := make([]byte, 0, 256)
	g := make([]byte, GRHLen)
	tests := []struct {
		name string
		f    func()
	}{
		{"Append", func() { _, _ = p.Append(buf[:0], &n) }},
		{"AppendIP", func() { _, _ = p.AppendIP(buf[:0], &n) }},
		{"AppendFrame", func() { _, _ = p.AppendFrame(buf[:0], &n) }},
		{"Decode", func() { _ = Decode(roce, &q) }},
		{"DecodeIP", func() { _ = DecodeIP(ip, &q, &nn) }},
		{"VerifyICRC", func() { _ = VerifyICRC(roce, &n) }},
		{"AppendDescribe", func() { _ = AppendDescribe(line[:0], &p) }},
		{"PutGRH", func() { _ = n.PutGRH(g, &p) }},
	}
	for _, tc := range tests {
		if a := testing.AllocsPerRun(100, tc.f); a != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tc.name, a)
		}
	}
}
