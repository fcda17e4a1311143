package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// fuzzSeeds returns encoded packets of every opcode (UDP payloads, IP
// datagrams and Ethernet frames) plus the reference vectors and a few
// malformed ones.
func fuzzSeeds(t testing.TB) (roce, ip, frames [][]byte) {
	n4, n6 := testNet4(), testNet6()
	for i, op := range Opcodes() {
		p := samplePacket(op, PSN(i*0x1111), i%5)
		r, _ := p.Append(nil, &n4)
		roce = append(roce, r)
		n := n4
		if i%2 == 1 {
			n = n6
		}
		d, _ := p.AppendIP(nil, &n)
		ip = append(ip, d)
		fr, _ := p.AppendFrame(nil, &n)
		frames = append(frames, fr)
	}
	for _, v := range []string{icrcVector1, icrcVector2} {
		d := unhex(t, v)
		ip = append(ip, d)
		roce = append(roce, d[28:])
	}
	roce = append(roce, nil, make([]byte, 16), []byte{0x04, 0x30, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0})
	ip = append(ip, nil, []byte{0x45}, []byte{0x60, 0, 0, 0, 0, 0, 17, 64})
	return roce, ip, frames
}

// checkErr fails unless err is nil or a *wire.Error wrapping a sentinel.
func checkErr(t *testing.T, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var e *Error
	if !errors.As(err, &e) || e.Detail == "" {
		t.Fatalf("error %v is not a *wire.Error with a reason", err)
	}
	return false
}

// FuzzDecode checks that Decode never panics, rejects with a reason, and
// that what it accepts re-encodes to a packet that decodes the same.
func FuzzDecode(f *testing.F) {
	roce, _, _ := fuzzSeeds(f)
	for _, s := range roce {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		if !checkErr(t, Decode(b, &p)) {
			return
		}
		if got := p.HeaderLen() + len(p.Payload) + int(p.BTH.PadCount) + ICRCLen; got != len(b) {
			t.Fatalf("decoded lengths add up to %d, packet has %d", got, len(b))
		}
		_ = Describe(&p)
		_ = Explain(&p, nil)
		if p.check() != nil { // e.g. payload after an ACK: rxe accepts it, the encoder will not
			return
		}
		n := testNet6()
		enc, err := p.Append(nil, &n)
		if err != nil {
			t.Fatalf("Append of a decoded packet: %v", err)
		}
		var q Packet
		if err := Decode(enc, &q); err != nil {
			t.Fatalf("Decode(Append(Decode(b))): %v", err)
		}
		if err := VerifyICRC(enc, &n); err != nil {
			t.Fatalf("VerifyICRC of our own encoding: %v", err)
		}
		want := p
		want.BTH.PadCount = uint8(p.PadCount())
		want.ICRC = q.ICRC
		if !reflect.DeepEqual(q, want) {
			t.Fatalf("round trip changed the packet:\n got %+v\nwant %+v", q, want)
		}
	})
}

// FuzzDecodeIP checks DecodeIP and PacketICRC on arbitrary datagrams: no
// panics, reasons for rejections, and a faithful re-encoding of what passes.
func FuzzDecodeIP(f *testing.F) {
	_, ip, _ := fuzzSeeds(f)
	for _, s := range ip {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, err := PacketICRC(b)
		checkErr(t, err)
		var p Packet
		var n Network
		if !checkErr(t, DecodeIP(b, &p, &n)) {
			return
		}
		_ = Explain(&p, &n)
		if p.check() != nil {
			return
		}
		enc, err := p.AppendIP(nil, &n)
		if err != nil {
			t.Fatalf("AppendIP of a decoded datagram: %v", err)
		}
		var q Packet
		var m Network
		if err := DecodeIP(enc, &q, &m); err != nil {
			t.Fatalf("DecodeIP(AppendIP(DecodeIP(b))): %v", err)
		}
		wantNet := n
		if n.HopLimit == 0 { // a TTL of 0 cannot be expressed: 0 means DefaultHopLimit
			wantNet.HopLimit = DefaultHopLimit
		}
		if m != wantNet {
			t.Fatalf("network changed: %+v, want %+v", m, wantNet)
		}
		// Without IPv4 options and with canonical padding, the bytes are the
		// same, except for what the encoder rewrites: the UDP checksum (a
		// real one or 0) and the reserved bits of BTH, DETH and XRCETH (0).
		if (b[0] == 0x45 || b[0]>>4 == 6) && int(p.BTH.PadCount) == p.PadCount() && len(enc) <= len(b) && n.HopLimit != 0 {
			a, w := normalise(enc), normalise(b[:len(enc)])
			if !bytes.Equal(a, w) {
				t.Fatalf("re-encoding differs:\n got %x\nwant %x", a, w)
			}
		}
		g := make([]byte, GRHLen)
		if err := n.PutGRH(g, &p); err != nil {
			t.Fatal(err)
		}
		if v := GRH(g).Version(); v != 4 && v != 6 {
			t.Fatalf("GRH version %d", v)
		}
	})
}

// FuzzDecodeFrame checks DecodeFrame and GRH parsing never panic.
func FuzzDecodeFrame(f *testing.F) {
	_, _, frames := fuzzSeeds(f)
	for _, s := range frames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Packet
		var n Network
		checkErr(t, DecodeFrame(b, &p, &n))
		if len(b) >= GRHLen {
			g := GRH(b[:GRHLen])
			_ = g.Version()
			_, _, _, _ = g.Source(), g.Dest(), g.TrafficClass(), g.HopLimit()
		}
	})
}

// normalise copies an IP datagram holding a RoCEv2 packet and zeroes the
// UDP checksum and the reserved bits of the BTH, DETH and XRCETH.
func normalise(d []byte) []byte {
	c := append([]byte(nil), d...)
	ipl := IPv4HeaderLen
	if c[0]>>4 == 6 {
		ipl = IPv6HeaderLen
	}
	c[ipl+6], c[ipl+7] = 0, 0
	bth := c[ipl+UDPHeaderLen:]
	bth[4] &= 0xc0
	bth[8] &= 0x80
	if BTH(bth).Opcode().Has(HasDETH) {
		bth[BTHLen+4] = 0
	}
	if op := BTH(bth).Opcode(); op.Has(HasXRCETH) {
		bth[op.Offset(HasXRCETH)] = 0
	}
	return c
}

// FuzzRecoverIPv4 feeds RecoverIPv4 any datagram under an IPv4 network
// with any assumed identification and DF bit: it never panics; what it
// accepts verifies with the network it returns; and a datagram framed with
// some ID is always recovered, with that ID.
func FuzzRecoverIPv4(f *testing.F) {
	roce, _, _ := fuzzSeeds(f)
	for i, s := range roce {
		f.Add(s, uint16(i*0x1111), i%3 == 0)
	}
	f.Fuzz(func(t *testing.T, b []byte, id uint16, noDF bool) {
		n := testNet4()
		n.FixedID, n.ID, n.NoDF = true, id, noDF
		got, err := RecoverIPv4(b, &n)
		if err == nil {
			if err := VerifyICRC(b, &got); err != nil {
				t.Fatalf("RecoverIPv4 accepted ID %#04x NoDF %v, which VerifyICRC refuses: %v", got.ID, got.NoDF, err)
			}
		} else if !errors.Is(err, ErrBadICRC) && !errors.Is(err, ErrShort) {
			t.Fatalf("RecoverIPv4: %v", err)
		}
		if len(b) < BTHLen+ICRCLen {
			return
		}
		// Frame b's body with ID id; an assumption of ID 0 (and the
		// same DF bit) must find it.
		c := append([]byte(nil), b...)
		var hdr [IPv4HeaderLen + UDPHeaderLen]byte
		n.putIPHeader(hdr[:], len(c), BTH(c).PSN())
		n.putUDPHeader(hdr[IPv4HeaderLen:], len(c))
		PutICRC(c, ICRC(hdr[:IPv4HeaderLen], hdr[IPv4HeaderLen:], c[:len(c)-ICRCLen]))
		assumed := testNet4()
		assumed.FixedID, assumed.NoDF = true, noDF
		r, err := RecoverIPv4(c, &assumed)
		if err != nil || r.ID != id || r.NoDF != noDF {
			t.Fatalf("framed with ID %#04x NoDF %v, RecoverIPv4 found ID %#04x NoDF %v, %v", id, noDF, r.ID, r.NoDF, err)
		}
	})
}
