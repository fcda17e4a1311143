package wire

import (
	"encoding/binary"
	"net/netip"
	"slices"
)

// Packet is a RoCEv2 packet in decoded form: the BTH, the extension headers
// its opcode carries, and the payload. Fields for headers the opcode does
// not carry are ignored by the encoders and zeroed by Decode.
//
// On the wire (the UDP payload) a packet is
//
//	BTH | extension headers | payload | pad (0-3 zero bytes) | ICRC
//
// The encoders (Append, AppendIP, AppendFrame) write all of it, choosing the
// pad count from len(Payload) and computing the ICRC; BTH.PadCount is ignored
// on encode. Decode fills a Packet from those bytes without copying: Payload
// then aliases the decoded buffer.
type Packet struct {
	BTH          BTHFields
	RETH         RETHFields      // RDMA WRITE FIRST/ONLY, READ REQUEST
	AETH         AETHFields      // ACK, ATOMIC ACK, READ RESPONSE FIRST/LAST/ONLY
	ImmDt        uint32          // *_WITH_IMMEDIATE: the four bytes read big-endian (see ImmDt)
	IETH         uint32          // SEND_*_WITH_INVALIDATE: the R_Key to invalidate
	AtomicETH    AtomicETHFields // COMPARE SWAP, FETCH ADD
	AtomicAckETH uint64          // ATOMIC ACK: the original remote value
	DETH         DETHFields      // UD
	XRCETH       uint32          // XRC requests: the target's XRC SRQ number (24 bits)
	Payload      []byte
	// ICRC is the ICRC found by Decode; the encoders ignore it.
	ICRC uint32
}

// PadCount returns the pad the encoders put after the payload:
// (-len(Payload)) & 3 (rxe_req.c).
func (p *Packet) PadCount() int { return -len(p.Payload) & 3 }

// HeaderLen returns the length of the BTH and the extension headers.
func (p *Packet) HeaderLen() int { return p.BTH.Opcode.HeaderLen() }

// Len returns the length of the encoded packet, BTH through ICRC: the UDP
// payload length.
func (p *Packet) Len() int { return p.HeaderLen() + len(p.Payload) + p.PadCount() + ICRCLen }

// IPLen returns the length of the IP datagram AppendIP writes; n must not
// be nil.
func (p *Packet) IPLen(n *Network) int {
	return n.ipHeaderLen() + UDPHeaderLen + p.Len()
}

// check validates what the encoders cannot fix themselves.
func (p *Packet) check() error {
	op := p.BTH.Opcode
	if !op.Valid() {
		return errorf(ErrBadOpcode, "cannot encode opcode 0x%02x (%s)", uint8(op), op)
	}
	if len(p.Payload) > 0 && !op.HasPayload() {
		return errorf(ErrBadLength, "%s carries no payload, but Payload has %d bytes", op, len(p.Payload))
	}
	if l := p.Len(); l > MaxLen {
		return errorf(ErrBadLength, "packet of %d bytes exceeds the %d that fit in one IP datagram", l, MaxLen)
	}
	return nil
}

// putBody writes BTH, extension headers, payload and pad into b, which must
// be p.Len()-ICRCLen bytes long. It returns b.
func (p *Packet) putBody(b []byte) {
	op := p.BTH.Opcode
	info := &opTable[op]
	pad := p.PadCount()
	bth := p.BTH
	bth.PadCount = uint8(pad)
	BTH(b).Encode(&bth)
	h := info.headers
	for k, ho := range headerOrder {
		if h&ho.h == 0 {
			continue
		}
		x := b[info.offset[k]:]
		switch ho.h {
		case HasDETH:
			DETH(x).Encode(&p.DETH)
		case HasXRCETH:
			XRCETH(x).Encode(p.XRCETH)
		case HasRETH:
			RETH(x).Encode(&p.RETH)
		case HasAtomicETH:
			AtomicETH(x).Encode(&p.AtomicETH)
		case HasAETH:
			AETH(x).Encode(&p.AETH)
		case HasAtomicAckETH:
			AtomicAckETH(x).SetOrigData(p.AtomicAckETH)
		case HasImmDt:
			ImmDt(x).SetImm(p.ImmDt)
		case HasIETH:
			IETH(x).SetRKey(p.IETH)
		}
	}
	n := info.hdrLen + copy(b[info.hdrLen:], p.Payload)
	clear(b[n : n+pad])
}

// grow extends b by n bytes and returns the whole slice and the new tail.
// It allocates only when cap(b) is too small.
func grow(b []byte, n int) (all, tail []byte) {
	b = slices.Grow(b, n)
	all = b[:len(b)+n]
	return all, all[len(b):]
}

// Append appends the encoded packet (BTH through ICRC, the UDP payload that
// a UDP socket sends) to b and returns the extended slice. The ICRC is
// computed over the IP and UDP headers that n implies. With
// cap(b)-len(b) >= p.Len() it does not allocate: the simulator keeps one
// buffer per port and calls p.Append(buf[:0], &net).
func (p *Packet) Append(b []byte, n *Network) ([]byte, error) {
	if err := n.check(); err != nil {
		return b, err
	}
	if err := p.check(); err != nil {
		return b, err
	}
	l := p.Len()
	var hdr [IPv6HeaderLen + UDPHeaderLen]byte
	ipl := n.putIPHeader(hdr[:], l, p.BTH.PSN)
	n.putUDPHeader(hdr[ipl:], l)
	all, out := grow(b, l)
	p.putBody(out[:l-ICRCLen])
	PutICRC(out, ICRC(hdr[:ipl], hdr[ipl:ipl+UDPHeaderLen], out[:l-ICRCLen]))
	return all, nil
}

// AppendIP appends the whole IP datagram (IPv4 or IPv6 header, UDP header,
// packet) to b. It allocates only when cap(b)-len(b) < p.IPLen(n).
func (p *Packet) AppendIP(b []byte, n *Network) ([]byte, error) {
	if err := n.check(); err != nil {
		return b, err
	}
	if err := p.check(); err != nil {
		return b, err
	}
	all, out := grow(b, p.IPLen(n))
	p.putIP(out, n)
	return all, nil
}

// AppendFrame appends an Ethernet frame (Ethernet II header, IP, UDP,
// packet; no FCS) to b, as captures hold it.
func (p *Packet) AppendFrame(b []byte, n *Network) ([]byte, error) {
	if err := n.check(); err != nil {
		return b, err
	}
	if err := p.check(); err != nil {
		return b, err
	}
	all, out := grow(b, EthernetHeaderLen+p.IPLen(n))
	src, dst := n.macs()
	copy(out[0:6], dst[:])
	copy(out[6:12], src[:])
	et := uint16(etherTypeIPv4)
	if n.IsIPv6() {
		et = etherTypeIPv6
	}
	binary.BigEndian.PutUint16(out[12:], et)
	p.putIP(out[EthernetHeaderLen:], n)
	return all, nil
}

// putIP writes the IP datagram into out, which is exactly p.IPLen(n) long.
func (p *Packet) putIP(out []byte, n *Network) {
	l := p.Len()
	ipl := n.putIPHeader(out, l, p.BTH.PSN)
	udp := out[ipl:]
	n.putUDPHeader(udp, l)
	roce := udp[UDPHeaderLen:]
	p.putBody(roce[:l-ICRCLen])
	PutICRC(roce, ICRC(out[:ipl], udp[:UDPHeaderLen], roce[:l-ICRCLen]))
	if n.UDPChecksum {
		binary.BigEndian.PutUint16(udp[6:], udpChecksum(out[:ipl], udp))
	}
}

// Decode parses b, a whole RoCEv2 datagram (the UDP payload: BTH, extension
// headers, payload, pad, ICRC), into p without copying; p.Payload aliases b.
//
// It rejects, with an *Error wrapping the sentinel named, what rxe drops
// whatever QP the packet is for: a buffer too short for the BTH, the opcode's
// headers and the ICRC (ErrShort); a transport header version other than 0
// (ErrBadTVer); an opcode vsh does not carry (ErrBadOpcode); a pad count
// larger than what follows the headers (ErrBadPad). XRC opcodes pass, as
// vsh carries them, though rxe, which has no XRC, would drop them. It does
// not check the ICRC, which needs the IP and UDP headers: use DecodeIP, or
// VerifyICRC with the Network the datagram came from. Like rxe it accepts
// payload bytes after an opcode that carries none, non-zero pad bytes, and
// non-zero reserved bits in the BTH, DETH and XRCETH, which it ignores.
//
// Decode never panics and does not allocate unless it fails.
func Decode(b []byte, p *Packet) error {
	if len(b) < BTHLen+ICRCLen {
		return errorf(ErrShort, "%d bytes cannot hold a BTH (%d) and an ICRC (%d)", len(b), BTHLen, ICRCLen)
	}
	bth := BTH(b)
	if v := bth.TVer(); v != 0 {
		return errorf(ErrBadTVer, "TVer is %d; rxe accepts only 0", v)
	}
	op := bth.Opcode()
	info := &opTable[op]
	if !info.valid {
		return errorf(ErrBadOpcode, "opcode 0x%02x (%s) is not one vsh carries (the RC, UC and UD opcodes rxe implements, and XRC)", uint8(op), op)
	}
	if len(b) < info.hdrLen+ICRCLen {
		return errorf(ErrShort, "%s needs %d header bytes and a %d-byte ICRC, packet has %d bytes", op, info.hdrLen, ICRCLen, len(b))
	}
	body := b[info.hdrLen : len(b)-ICRCLen]
	pad := bth.PadCount()
	if pad > len(body) {
		return errorf(ErrBadPad, "pad count %d but only %d bytes follow the headers of %s", pad, len(body), op)
	}
	*p = Packet{
		BTH:  bth.Fields(),
		ICRC: binary.LittleEndian.Uint32(b[len(b)-ICRCLen:]),
	}
	if n := len(body) - pad; n > 0 {
		p.Payload = body[:n:n]
	}
	h := info.headers
	if h == 0 {
		return nil
	}
	for k, ho := range headerOrder {
		if h&ho.h == 0 {
			continue
		}
		x := b[info.offset[k]:]
		switch ho.h {
		case HasDETH:
			p.DETH = DETH(x).Fields()
		case HasXRCETH:
			p.XRCETH = XRCETH(x).SRQN()
		case HasRETH:
			p.RETH = RETH(x).Fields()
		case HasAtomicETH:
			p.AtomicETH = AtomicETH(x).Fields()
		case HasAETH:
			p.AETH = AETH(x).Fields()
		case HasAtomicAckETH:
			p.AtomicAckETH = AtomicAckETH(x).OrigData()
		case HasImmDt:
			p.ImmDt = ImmDt(x).Imm()
		case HasIETH:
			p.IETH = IETH(x).RKey()
		}
	}
	return nil
}

// splitIP parses an IPv4 or IPv6 header and the UDP header after it. It
// returns the IP header (with any IPv4 options), the UDP header and the UDP
// payload, trimmed to the lengths the headers give (so Ethernet padding is
// dropped). It never panics.
func splitIP(b []byte) (ipHdr, udp, payload []byte, err error) {
	if len(b) < 1 {
		return nil, nil, nil, errorf(ErrShort, "empty IP datagram")
	}
	switch b[0] >> 4 {
	case 4:
		if len(b) < IPv4HeaderLen {
			return nil, nil, nil, errorf(ErrShort, "%d bytes cannot hold an IPv4 header", len(b))
		}
		ihl := int(b[0]&0x0f) * 4
		if ihl < IPv4HeaderLen {
			return nil, nil, nil, errorf(ErrBadIP, "IPv4 header length %d is below 20", ihl)
		}
		tl := int(binary.BigEndian.Uint16(b[2:]))
		if tl < ihl+UDPHeaderLen {
			return nil, nil, nil, errorf(ErrBadLength, "IPv4 total length %d cannot hold a %d-byte header and UDP", tl, ihl)
		}
		if tl > len(b) {
			return nil, nil, nil, errorf(ErrShort, "IPv4 total length %d but only %d bytes captured", tl, len(b))
		}
		if b[9] != protoUDP {
			return nil, nil, nil, errorf(ErrNotRoCE, "IPv4 protocol %d is not UDP", b[9])
		}
		if binary.BigEndian.Uint16(b[6:])&0x3fff != 0 {
			return nil, nil, nil, errorf(ErrNotRoCE, "IPv4 fragment (flags/offset 0x%04x)", binary.BigEndian.Uint16(b[6:]))
		}
		if fold(sum16(0, b[:ihl])) != 0xffff {
			return nil, nil, nil, errorf(ErrBadIP, "IPv4 header checksum 0x%04x is wrong", binary.BigEndian.Uint16(b[10:]))
		}
		ipHdr, b = b[:ihl], b[ihl:tl]
	case 6:
		if len(b) < IPv6HeaderLen {
			return nil, nil, nil, errorf(ErrShort, "%d bytes cannot hold an IPv6 header", len(b))
		}
		pl := int(binary.BigEndian.Uint16(b[4:]))
		if IPv6HeaderLen+pl > len(b) {
			return nil, nil, nil, errorf(ErrShort, "IPv6 payload length %d but only %d bytes captured", pl, len(b)-IPv6HeaderLen)
		}
		if b[6] != protoUDP {
			return nil, nil, nil, errorf(ErrNotRoCE, "IPv6 next header %d is not UDP (extension headers are not supported, as in rxe)", b[6])
		}
		ipHdr, b = b[:IPv6HeaderLen], b[IPv6HeaderLen:IPv6HeaderLen+pl]
	default:
		return nil, nil, nil, errorf(ErrBadIP, "IP version %d", b[0]>>4)
	}
	if len(b) < UDPHeaderLen {
		return nil, nil, nil, errorf(ErrShort, "%d bytes cannot hold a UDP header", len(b))
	}
	ul := int(binary.BigEndian.Uint16(b[4:]))
	if ul < UDPHeaderLen || ul > len(b) {
		return nil, nil, nil, errorf(ErrBadLength, "UDP length %d does not fit the %d bytes the IP header leaves", ul, len(b))
	}
	return ipHdr, b[:UDPHeaderLen], b[UDPHeaderLen:ul], nil
}

// DecodeIP parses an IP datagram (IPv4 or IPv6, then UDP, then RoCEv2),
// decodes the packet into p as Decode does and checks its ICRC against the
// headers (ErrBadICRC). If n is not nil it receives the framing, with
// FixedID set, so that p.AppendIP(nil, n) rebuilds the same datagram (IPv4
// options aside). Any UDP destination port is accepted; n.DstPort tells
// which one it was.
//
// Besides Decode's checks it rejects what the kernel's IP and UDP layers
// would drop before rxe sees the packet: short or inconsistent lengths, a
// bad IPv4 header checksum, fragments, and protocols other than UDP. It
// never panics and does not allocate unless it fails.
func DecodeIP(b []byte, p *Packet, n *Network) error {
	ipHdr, udp, roce, err := splitIP(b)
	if err != nil {
		return err
	}
	if err := Decode(roce, p); err != nil {
		return err
	}
	u := udp
	if ipHdr[0]>>4 == 4 {
		u = b[IPv4HeaderLen : IPv4HeaderLen+UDPHeaderLen] // rxe's 28 contiguous bytes
	}
	if want := ICRC(ipHdr, u, roce[:len(roce)-ICRCLen]); want != p.ICRC {
		return errorf(ErrBadICRC, "%s psn %s carries ICRC 0x%08x, computed 0x%08x", p.BTH.Opcode, p.BTH.PSN, p.ICRC, want)
	}
	if n != nil {
		*n = Network{
			SrcPort:     binary.BigEndian.Uint16(udp[0:]),
			DstPort:     binary.BigEndian.Uint16(udp[2:]),
			UDPChecksum: binary.BigEndian.Uint16(udp[6:]) != 0,
		}
		if ipHdr[0]>>4 == 4 {
			n.Src = netip.AddrFrom4([4]byte(ipHdr[12:16]))
			n.Dst = netip.AddrFrom4([4]byte(ipHdr[16:20]))
			n.TrafficClass = ipHdr[1]
			n.HopLimit = ipHdr[8]
			n.ID = binary.BigEndian.Uint16(ipHdr[4:])
			n.FixedID = true
			n.NoDF = binary.BigEndian.Uint16(ipHdr[6:])&ipv4DF == 0
		} else {
			w := binary.BigEndian.Uint32(ipHdr[0:])
			n.Src = netip.AddrFrom16([16]byte(ipHdr[8:24]))
			n.Dst = netip.AddrFrom16([16]byte(ipHdr[24:40]))
			n.TrafficClass = uint8(w >> 20)
			n.FlowLabel = w & 0xfffff
			n.HopLimit = ipHdr[7]
		}
	}
	return nil
}

// DecodeFrame parses an Ethernet II frame holding IPv4 or IPv6 and decodes
// the datagram with DecodeIP; n also receives the MAC addresses. It accepts
// any frame a capture of RoCEv2 traffic holds (802.1Q tags are not
// supported) and never panics.
func DecodeFrame(b []byte, p *Packet, n *Network) error {
	if len(b) < EthernetHeaderLen {
		return errorf(ErrShort, "%d bytes cannot hold an Ethernet header", len(b))
	}
	switch et := binary.BigEndian.Uint16(b[12:]); et {
	case etherTypeIPv4, etherTypeIPv6:
	default:
		return errorf(ErrNotRoCE, "EtherType 0x%04x is not IPv4 or IPv6", et)
	}
	if err := DecodeIP(b[EthernetHeaderLen:], p, n); err != nil {
		return err
	}
	if n != nil {
		n.DstMAC = [6]byte(b[0:6])
		n.SrcMAC = [6]byte(b[6:12])
	}
	return nil
}
