package wire

import (
	"encoding/binary"
	"net/netip"
)

// Network framing sizes and constants.
const (
	// UDPPort is the RoCEv2 destination port (ROCE_V2_UDP_DPORT); rxe always
	// sends to it and ignores the source port.
	UDPPort = 4791
	// SourcePortBase is the bottom of rxe's per-QP UDP source ports
	// (RXE_ROCE_V2_SPORT).
	SourcePortBase = 0xc000

	IPv4HeaderLen     = 20
	IPv6HeaderLen     = 40
	UDPHeaderLen      = 8
	EthernetHeaderLen = 14
	// GRHLen is the size of the network header rxe writes at the start of
	// a UD receive buffer; the payload follows at this offset.
	GRHLen = 40
	// DefaultHopLimit is the TTL or hop limit used when Network.HopLimit is 0.
	DefaultHopLimit = 64

	// MaxLen is the largest RoCEv2 datagram (BTH through ICRC) the encoders
	// build: what fits a 16-bit IPv4 total length behind IP and UDP headers.
	MaxLen = 0xffff - IPv4HeaderLen - UDPHeaderLen

	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	protoUDP      = 17
	ipv4DF        = 0x4000
)

// Network describes the IP and UDP framing of a RoCEv2 packet: everything
// the ICRC covers besides the packet itself, and what a capture shows.
// rxe builds it from the QP's address vector (rxe_net.c prepare4/prepare6);
// vsh's simulator builds it from the two ports' GIDs.
//
// The zero values of the optional fields give what rxe sends: destination
// port 4791, DF set, UDP checksum 0.
type Network struct {
	// Src and Dst are the IP addresses; both IPv4 or both IPv6. An
	// IPv4-mapped IPv6 address (a RoCEv2 GID such as ::ffff:10.0.0.1)
	// means IPv4, as in rxe, so netip.AddrFrom16(gid) can be used as is.
	Src, Dst netip.Addr
	// SrcPort is the UDP source port; rxe uses SourcePort(qpn) of the
	// sending QP for every packet it sends, requests and ACKs alike.
	SrcPort uint16
	// DstPort is the UDP destination port; 0 means UDPPort (4791).
	DstPort uint16
	// TrafficClass is the IPv4 TOS byte or the IPv6 traffic class (the
	// AV's traffic_class). The ICRC does not cover it.
	TrafficClass uint8
	// HopLimit is the IPv4 TTL or IPv6 hop limit (the AV's hop_limit);
	// 0 means DefaultHopLimit, so a TTL of 0 cannot be encoded. The ICRC
	// does not cover it.
	HopLimit uint8
	// FlowLabel is the IPv6 flow label (20 bits). The ICRC does not cover it.
	FlowLabel uint32
	// ID is the IPv4 identification, used only when FixedID is set. The
	// ICRC covers it.
	//
	// rxe lets the kernel choose it (__ip_select_ident), which nothing
	// outside that kernel can predict. vsh makes it deterministic instead,
	// so that transcripts, captures and ICRCs are the same on every run:
	// unless FixedID is set, the ID of a packet is IPv4ID(its PSN).
	ID      uint16
	FixedID bool
	// NoDF clears the IPv4 don't-fragment bit, which rxe always sets. The
	// ICRC covers it.
	NoDF bool
	// UDPChecksum asks the IP and Ethernet encoders to fill in a real UDP
	// checksum. rxe sends 0 (legal for IPv4; Wireshark flags it for IPv6);
	// a kernel UDP socket, as the UDP link uses, sends a real one. The
	// ICRC does not cover it.
	UDPChecksum bool
	// SrcMAC and DstMAC are used only for Ethernet frames; zero means
	// MACFor(Src) and MACFor(Dst).
	SrcMAC, DstMAC [6]byte
}

// IPv4ID is the deterministic IPv4 identification vsh gives a packet whose
// Network has no FixedID: the low 16 bits of its PSN. A retransmitted
// packet therefore carries the same ID, and so the same ICRC.
func IPv4ID(psn PSN) uint16 { return uint16(psn) }

// SourcePort returns the UDP source port rxe uses for a QP:
// 0xC000 + hash_32(qpn, 14), where hash_32 multiplies by the 32-bit golden
// ratio 0x61C88647 and keeps the top 14 bits (rxe_qp.c rxe_qp_init_req,
// include/linux/hash.h).
func SourcePort(qpn uint32) uint16 {
	return SourcePortBase + uint16((qpn*0x61c88647)>>(32-14))
}

// IsIPv6 reports whether n frames packets in IPv6 (false for IPv4).
func (n *Network) IsIPv6() bool { return !n.Src.Unmap().Is4() }

func (n *Network) check() error {
	if n == nil {
		return errorf(ErrBadNetwork, "no network given")
	}
	s, d := n.Src.Unmap(), n.Dst.Unmap()
	if !s.IsValid() || !d.IsValid() {
		return errorf(ErrBadNetwork, "source or destination address missing (src %v, dst %v)", n.Src, n.Dst)
	}
	if s.Is4() != d.Is4() {
		return errorf(ErrBadNetwork, "source %v and destination %v are not the same IP version", n.Src, n.Dst)
	}
	return nil
}

// ipHeaderLen returns 20 or 40; n must have passed check.
func (n *Network) ipHeaderLen() int {
	if n.IsIPv6() {
		return IPv6HeaderLen
	}
	return IPv4HeaderLen
}

func (n *Network) dstPort() uint16 {
	if n.DstPort == 0 {
		return UDPPort
	}
	return n.DstPort
}

func (n *Network) hopLimit() uint8 {
	if n.HopLimit == 0 {
		return DefaultHopLimit
	}
	return n.HopLimit
}

// putIPHeader writes the IP header for a RoCEv2 datagram of roceLen bytes
// into b and returns its length. n must have passed check.
func (n *Network) putIPHeader(b []byte, roceLen int, psn PSN) int {
	if n.IsIPv6() {
		h := b[:IPv6HeaderLen]
		binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(n.TrafficClass)<<20|n.FlowLabel&0xfffff)
		binary.BigEndian.PutUint16(h[4:], uint16(UDPHeaderLen+roceLen))
		h[6] = protoUDP
		h[7] = n.hopLimit()
		s, d := n.Src.As16(), n.Dst.As16()
		copy(h[8:24], s[:])
		copy(h[24:40], d[:])
		return IPv6HeaderLen
	}
	h := b[:IPv4HeaderLen]
	h[0] = 0x45
	h[1] = n.TrafficClass
	binary.BigEndian.PutUint16(h[2:], uint16(IPv4HeaderLen+UDPHeaderLen+roceLen))
	id := IPv4ID(psn)
	if n.FixedID {
		id = n.ID
	}
	binary.BigEndian.PutUint16(h[4:], id)
	var frag uint16 = ipv4DF
	if n.NoDF {
		frag = 0
	}
	binary.BigEndian.PutUint16(h[6:], frag)
	h[8] = n.hopLimit()
	h[9] = protoUDP
	h[10], h[11] = 0, 0
	s, d := n.Src.Unmap().As4(), n.Dst.Unmap().As4()
	copy(h[12:16], s[:])
	copy(h[16:20], d[:])
	binary.BigEndian.PutUint16(h[10:], ipv4Checksum(h))
	return IPv4HeaderLen
}

// putUDPHeader writes the UDP header with a zero checksum.
func (n *Network) putUDPHeader(b []byte, roceLen int) {
	binary.BigEndian.PutUint16(b[0:], n.SrcPort)
	binary.BigEndian.PutUint16(b[2:], n.dstPort())
	binary.BigEndian.PutUint16(b[4:], uint16(UDPHeaderLen+roceLen))
	b[6], b[7] = 0, 0
}

// ipv4Checksum returns the Internet checksum of an IPv4 header whose
// checksum field is zero.
func ipv4Checksum(h []byte) uint16 {
	return ^fold(sum16(0, h))
}

func sum16(acc uint32, b []byte) uint32 {
	for len(b) >= 2 {
		acc += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint32(b[0]) << 8
	}
	return acc
}

func fold(acc uint32) uint16 {
	for acc > 0xffff {
		acc = acc&0xffff + acc>>16
	}
	return uint16(acc)
}

// udpChecksum computes the UDP checksum of udp (header with a zero checksum
// field, then payload) under the given IP header.
func udpChecksum(ip, udp []byte) uint16 {
	var acc uint32
	if ip[0]>>4 == 6 {
		acc = sum16(acc, ip[8:40])
	} else {
		acc = sum16(acc, ip[12:20])
	}
	acc += protoUDP + uint32(len(udp))
	acc = sum16(acc, udp)
	c := ^fold(acc)
	if c == 0 {
		c = 0xffff // 0 means "no checksum"
	}
	return c
}

// MACFor returns the Ethernet address vsh gives an IP address in captures:
// for an IPv6 address with a modified EUI-64 interface ID (rxe's default
// GID fe80::/64 + EUI-64(MAC)), the MAC it was made from; otherwise the
// locally administered 02:00 followed by the last four bytes of the address.
func MACFor(a netip.Addr) [6]byte {
	b := a.As16()
	if !a.Unmap().Is4() && b[11] == 0xff && b[12] == 0xfe {
		return [6]byte{b[8] ^ 0x02, b[9], b[10], b[13], b[14], b[15]}
	}
	return [6]byte{0x02, 0x00, b[12], b[13], b[14], b[15]}
}

func (n *Network) macs() (src, dst [6]byte) {
	src, dst = n.SrcMAC, n.DstMAC
	if src == [6]byte{} {
		src = MACFor(n.Src)
	}
	if dst == [6]byte{} {
		dst = MACFor(n.Dst)
	}
	return src, dst
}

// GRH is a view of the 40-byte network header rxe writes at the start of
// a UD receive buffer (rxe_resp.c execute): for IPv6 the received IPv6
// header as is; for IPv4 union rdma_network_hdr, 20 zero bytes followed by
// the received IPv4 header (include/rdma/ib_verbs.h).
type GRH []byte

// PutGRH writes into dst (at least GRHLen bytes) the GRH a UD receiver finds
// in its receive buffer when p arrives framed by n. The IPv4 header it holds
// has a valid checksum, which is how consumers tell the two forms apart
// (ib_get_rdma_header_version).
func (n *Network) PutGRH(dst []byte, p *Packet) error {
	if err := n.check(); err != nil {
		return err
	}
	if len(dst) < GRHLen {
		return errorf(ErrShort, "GRH needs %d bytes, buffer has %d", GRHLen, len(dst))
	}
	g := dst[:GRHLen]
	if n.IsIPv6() {
		n.putIPHeader(g, p.Len(), p.BTH.PSN)
		return nil
	}
	clear(g[:20])
	n.putIPHeader(g[20:], p.Len(), p.BTH.PSN)
	return nil
}

// Version tells the two forms apart as the kernel's
// ib_get_rdma_header_version does: 6 for an IPv6 header, 4 for 20 bytes
// followed by an IPv4 header (version 4, IHL 5, valid checksum), 0 for
// neither. g must be at least GRHLen bytes.
func (g GRH) Version() int {
	_ = g[GRHLen-1]
	v4 := g[20:40]
	if g[0]>>4 != 6 {
		if v4[0]>>4 == 4 {
			return 4
		}
		return 0
	}
	if v4[0]&0x0f != 5 {
		return 6
	}
	if fold(sum16(0, v4)) == 0xffff {
		return 4
	}
	return 6
}

// Source returns the sender's address: an IPv4 address for an IPv4 GRH.
func (g GRH) Source() netip.Addr {
	if g.Version() == 4 {
		return netip.AddrFrom4([4]byte(g[32:36]))
	}
	return netip.AddrFrom16([16]byte(g[8:24]))
}

// Dest returns the receiver's address.
func (g GRH) Dest() netip.Addr {
	if g.Version() == 4 {
		return netip.AddrFrom4([4]byte(g[36:40]))
	}
	return netip.AddrFrom16([16]byte(g[24:40]))
}

// SGID returns the source GID: the IPv6 address, or the IPv4-mapped form
// ::ffff:a.b.c.d of an IPv4 source, as ibv_wc's GRH gives it.
func (g GRH) SGID() [16]byte { return g.Source().As16() }

// DGID returns the destination GID, in the same form as SGID.
func (g GRH) DGID() [16]byte { return g.Dest().As16() }

// TrafficClass returns the IPv4 TOS or IPv6 traffic class.
func (g GRH) TrafficClass() uint8 {
	if g.Version() == 4 {
		return g[21]
	}
	return uint8(binary.BigEndian.Uint32(g[0:]) >> 20)
}

// HopLimit returns the IPv4 TTL or IPv6 hop limit.
func (g GRH) HopLimit() uint8 {
	if g.Version() == 4 {
		return g[28]
	}
	return g[7]
}
