package wire

import (
	"encoding/binary"
	"hash/crc32"
)

// lrhSeed is the CRC state after eight 0xff bytes, the masked LRH that a
// RoCEv2 packet does not carry. rxe starts its CRC from the raw value
// 0xdebb20e3 = crc32_le(~0, ff×8); in hash/crc32's inverted convention
// that is ^0xdebb20e3.
var lrhSeed = crc32.ChecksumIEEE([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})

// ICRC returns the invariant CRC of a RoCEv2 packet exactly as rxe computes
// it (rxe_icrc.c):
//
//   - the IP header (IPv4: its first 20 bytes; IPv6: 40), the UDP header (8)
//     and the BTH (12) are copied, and the fields that may change in flight
//     are set to all ones: IPv4 TOS, TTL and header checksum; IPv6 traffic
//     class, flow label and hop limit; the UDP checksum; BTH byte 4 (FECN,
//     BECN and the reserved bits);
//   - CRC-32 (IEEE 802.3, reflected) runs from the seed of eight 0xff bytes
//     over those masked headers, then over the rest of body;
//   - the result, inverted as for any CRC-32, is the returned value.
//
// body is the UDP payload from the BTH up to, not including, the ICRC field:
// BTH, extension headers, payload and pad. It must hold at least a BTH.
// ipHeader's version nibble picks IPv4 or IPv6.
//
// The ICRC goes on the wire least-significant byte first, as an Ethernet FCS
// does and as rxe's little-endian store puts it: use PutICRC, and read it
// back with CarriedICRC (Decode puts it in Packet.ICRC).
func ICRC(ipHeader, udpHeader, body []byte) uint32 {
	var s [IPv6HeaderLen + UDPHeaderLen + BTHLen]byte
	var n int
	if ipHeader[0]>>4 == 6 {
		n = copy(s[:], ipHeader[:IPv6HeaderLen])
		s[0] |= 0x0f                        // traffic class, high nibble
		s[1], s[2], s[3] = 0xff, 0xff, 0xff // traffic class, low nibble, and flow label
		s[7] = 0xff                         // hop limit
	} else {
		n = copy(s[:], ipHeader[:IPv4HeaderLen])
		s[1] = 0xff               // TOS
		s[8] = 0xff               // TTL
		s[10], s[11] = 0xff, 0xff // header checksum
	}
	n += copy(s[n:], udpHeader[:UDPHeaderLen])
	s[n-2], s[n-1] = 0xff, 0xff // UDP checksum
	n += copy(s[n:], body[:BTHLen])
	s[n-8] = 0xff // BTH byte 4: FECN, BECN, resv6a
	crc := updateSmall(lrhSeed, s[:n])
	return crc32.Update(crc, crc32.IEEETable, body[BTHLen:])
}

// updateSmall is crc32.Update for the masked headers (at most 60 bytes).
// hash/crc32 dispatches through function values, so a stack buffer handed
// to it escapes to the heap; this slicing-by-8 loop over the same IEEE
// polynomial keeps the scratch copy on the stack and the encoders
// allocation-free.
func updateSmall(crc uint32, p []byte) uint32 {
	crc = ^crc
	for len(p) >= 8 {
		crc ^= uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
		crc = slicing8[0][p[7]] ^ slicing8[1][p[6]] ^ slicing8[2][p[5]] ^ slicing8[3][p[4]] ^
			slicing8[4][crc>>24] ^ slicing8[5][crc>>16&0xff] ^ slicing8[6][crc>>8&0xff] ^ slicing8[7][crc&0xff]
		p = p[8:]
	}
	for _, v := range p {
		crc = slicing8[0][byte(crc)^v] ^ crc>>8
	}
	return ^crc
}

// slicing8 holds the slicing-by-8 tables of the IEEE polynomial: row 0 is
// crc32.IEEETable, row k advances a byte through k more zero bytes.
var slicing8 = func() *[8][256]uint32 {
	var t [8][256]uint32
	t[0] = *crc32.IEEETable
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return &t
}()

// PutICRC stores an ICRC in the last four bytes of a RoCEv2 datagram, in
// wire order (least-significant byte first).
func PutICRC(roce []byte, icrc uint32) {
	binary.LittleEndian.PutUint32(roce[len(roce)-ICRCLen:], icrc)
}

// CarriedICRC returns the ICRC stored in the last four bytes of an encoded
// packet (BTH through ICRC), read in wire order (least-significant byte
// first). It returns 0 for a buffer shorter than an ICRC.
func CarriedICRC(roce []byte) uint32 {
	if len(roce) < ICRCLen {
		return 0
	}
	t := roce[len(roce)-ICRCLen:]
	return uint32(t[0]) | uint32(t[1])<<8 | uint32(t[2])<<16 | uint32(t[3])<<24
}

// VerifyICRC checks the ICRC of roce, a whole RoCEv2 datagram (the UDP
// payload, BTH through ICRC), against the IP and UDP headers that n implies.
// This is how a receiver on a UDP socket checks packets: over IPv6 every
// field the ICRC covers is known; over IPv4 the identification and DF bit
// must also match what n says, which a kernel socket does not reveal.
func VerifyICRC(roce []byte, n *Network) error {
	if err := n.check(); err != nil {
		return err
	}
	if len(roce) < BTHLen+ICRCLen {
		return errorf(ErrShort, "%d bytes cannot hold a BTH and an ICRC", len(roce))
	}
	var hdr [IPv6HeaderLen + UDPHeaderLen]byte
	ipl := n.putIPHeader(hdr[:], len(roce), BTH(roce).PSN())
	n.putUDPHeader(hdr[ipl:], len(roce))
	body := roce[:len(roce)-ICRCLen]
	want := ICRC(hdr[:ipl], hdr[ipl:ipl+UDPHeaderLen], body)
	got := binary.LittleEndian.Uint32(roce[len(roce)-ICRCLen:])
	if got != want {
		return errorf(ErrBadICRC, "packet has 0x%08x, computed 0x%08x", got, want)
	}
	return nil
}

// PacketICRC computes the ICRC of a whole IP datagram (IPv4 or IPv6, UDP,
// RoCEv2) and returns it with the ICRC the datagram carries. It trusts the
// IP and UDP length fields only as far as the buffer goes, and reads the
// IPv4 part as rxe does: the 28 bytes from the start of the IP header (so
// an IPv4 header with options gives what rxe would compute, not the IBTA
// value). It does not require a known opcode, so it works on any RoCEv2
// packet, CNPs included. It never panics.
func PacketICRC(ip []byte) (computed, carried uint32, err error) {
	ipHdr, udp, roce, err := splitIP(ip)
	if err != nil {
		return 0, 0, err
	}
	if len(roce) < BTHLen+ICRCLen {
		return 0, 0, errorf(ErrShort, "UDP payload of %d bytes cannot hold a BTH and an ICRC", len(roce))
	}
	if ipHdr[0]>>4 == 4 {
		// rxe copies 28 contiguous bytes from the IP header's start.
		udp = ip[IPv4HeaderLen : IPv4HeaderLen+UDPHeaderLen]
	}
	computed = ICRC(ipHdr, udp, roce[:len(roce)-ICRCLen])
	carried = binary.LittleEndian.Uint32(roce[len(roce)-ICRCLen:])
	return computed, carried, nil
}

// RecoverIPv4 checks the ICRC of roce, a whole RoCEv2 datagram received
// over IPv4 on a UDP socket, when the sender's IPv4 identification is
// unknown: the ICRC covers it, and a kernel UDP socket does not reveal it
// (rxe fills it with __ip_select_ident). The CRC is linear, so the 16
// unknown bits change it by a linear map, one to one (CRC-32 detects every
// error within 32 bits): at most one identification makes the ICRC right.
// RecoverIPv4 returns a copy of n with FixedID set and ID that one, or
// ErrBadICRC when none does. Every other bit the ICRC covers is checked,
// the DF bit as n says (rxe always sets it); a corrupted datagram passes
// only when its error happens to equal an ID change, one chance in 2^16.
//
// n's ID is tried first, so a sender that uses it (vsh's UDP link sends
// ID 0) costs one ICRC. n must describe IPv4.
func RecoverIPv4(roce []byte, n *Network) (Network, error) {
	if err := n.check(); err != nil {
		return Network{}, err
	}
	out := *n
	out.FixedID = true
	if n.IsIPv6() {
		return out, errorf(ErrBadNetwork, "RecoverIPv4 needs an IPv4 network, not %v", n.Src)
	}
	if len(roce) < BTHLen+ICRCLen {
		return out, errorf(ErrShort, "%d bytes cannot hold a BTH and an ICRC", len(roce))
	}
	var hdr [IPv4HeaderLen + UDPHeaderLen]byte
	n.putIPHeader(hdr[:], len(roce), BTH(roce).PSN())
	n.putUDPHeader(hdr[IPv4HeaderLen:], len(roce))
	id := binary.BigEndian.Uint16(hdr[4:])
	body := roce[:len(roce)-ICRCLen]
	want := ICRC(hdr[:IPv4HeaderLen], hdr[IPv4HeaderLen:], body)
	got := binary.LittleEndian.Uint32(roce[len(roce)-ICRCLen:])
	diff := got ^ want
	if diff == 0 {
		out.ID = id
		return out, nil
	}
	// The effect of flipping bit k of the ID on the CRC register right
	// after the BTH, carried through the rest of body as through zero
	// bytes (multiplying by x^(8m)); then Gaussian elimination over GF(2).
	shift := xPow8(len(body) - BTHLen)
	base := ICRC(hdr[:IPv4HeaderLen], hdr[IPv4HeaderLen:], body[:BTHLen])
	var basis [32]struct {
		v    uint32
		bits uint16
	}
	for k := range 16 {
		h := hdr
		bit := uint16(1) << k
		binary.BigEndian.PutUint16(h[4:], id^bit)
		v := gfMul(ICRC(h[:IPv4HeaderLen], h[IPv4HeaderLen:], body[:BTHLen])^base, shift)
		for p := 31; p >= 0 && v != 0; p-- {
			if v>>p&1 == 0 {
				continue
			}
			if basis[p].v == 0 {
				basis[p].v, basis[p].bits = v, bit
				break
			}
			v ^= basis[p].v
			bit ^= basis[p].bits
		}
	}
	var flips uint16
	for p := 31; p >= 0 && diff != 0; p-- {
		if diff>>p&1 == 0 {
			continue
		}
		if basis[p].v == 0 {
			break
		}
		diff ^= basis[p].v
		flips ^= basis[p].bits
	}
	if diff != 0 {
		return out, errorf(ErrBadICRC, "packet has 0x%08x; no IPv4 identification gives it (with ID 0x%04x: 0x%08x)", got, id, want)
	}
	out.ID = id ^ flips
	return out, nil
}

// gfMul multiplies a and b as polynomials over GF(2) modulo the CRC-32
// polynomial, both in the reflected form hash/crc32 uses (bit 31 is x^0).
func gfMul(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8 returns x^(8n) modulo the CRC-32 polynomial (reflected): what n
// zero bytes do to a CRC register's difference.
func xPow8(n int) uint32 {
	r := uint32(1) << 31  // 1
	sq := uint32(1) << 23 // x^8
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			r = gfMul(r, sq)
		}
		sq = gfMul(sq, sq)
	}
	return r
}
