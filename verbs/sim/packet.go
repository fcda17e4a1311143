package sim

import (
	"net/netip"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// A packet is one RoCEv2 packet on the simulated network.
//
// In process it travels in decoded form: hdr holds the BTH and extension
// headers as verbs/wire fields, and hdr.Payload is the payload. That payload
// may be borrowed — a slice of the sending MR, of a WQE's inline data or of
// the responder's MR for a READ response — so that a transfer costs one copy,
// into the receiver's memory, as DMA does. A borrowed payload is copied into
// the packet's own buffer (materialized) before the verb that sent it
// returns, if the packet is still in flight then, so that memory the
// program changes afterwards does not change a packet already sent.
//
// Whenever something looks at a packet — a PacketObserver, a fault that
// flips a bit, or the test knob that encodes everything — the packet is
// encoded through verbs/wire into enc (BTH through ICRC, with the ICRC
// computed over the IP and UDP framing netw), and the receiver decodes those
// bytes, checks the ICRC, and works from what it decoded. Both paths go
// through the same engines.
type packet struct {
	packetState // what a packet returned to the pool forgets

	// Kept from one use of the packet to the next: the buffers, and the
	// framing, which is valid only while netwSet is.
	netw wire.Network // IP and UDP framing (rxe_prepare)
	own  []byte       // payload storage owned by the packet
	enc  []byte       // the encoded packet when encoded is set
}

// packetState is the part of a packet that the pool zeroes: the headers,
// the addresses and the packet's journey.
type packetState struct {
	hdr  wire.Packet // decoded headers; hdr.Payload is the payload
	sgid verbs.GID   // source and destination IP addresses as GIDs
	dgid verbs.GID
	// The framing is the route's with the sender's UDP source port;
	// network() fills netw from them the first time it is needed (to
	// encode the packet), so that a packet nobody looks at does not copy
	// it. A packet from the UDP link comes with its own.
	rt      *route
	srcPort uint16
	netwSet bool

	from, to *device
	sender   *qp // the QP that sent it (for the trace and the inspector)

	seq uint64        // 1, 2, 3 ... in the order packets were sent
	at  time.Duration // arrival time at the destination
	// atSwitch is when a multicast packet reached the switch, which
	// replicates it to every device.
	atSwitch time.Duration
	ord      uint64 // tie-break among equal arrival times
	hix      int    // index in the fabric's packet heap, -1 when not queued

	encoded  bool
	borrowed bool // hdr.Payload aliases memory the packet does not own
	ipv6     bool // framed in IPv6
	loopback bool // sent to the sending device itself (rxe_loopback)
	mcast    bool // addressed to a multicast GID
	corrupt  bool // a fault flipped a bit of enc
	held     bool // held back by a reorder fault
	dup      bool // a copy made by a duplicate fault
	linked   bool // came in over the UDP link: netw is what its socket saw

	tr *train // the packets that follow this one as a train (train.go)
}

// packetPool keeps freed packets and their buffers for reuse, so that the
// steady path does not allocate.
type packetPool struct {
	free []*packet
}

func (pp *packetPool) get() *packet {
	if n := len(pp.free); n > 0 {
		p := pp.free[n-1]
		pp.free[n-1] = nil
		pp.free = pp.free[:n-1]
		return p
	}
	p := &packet{}
	p.hix = -1
	return p
}

// put returns p to the pool. Its buffers are kept.
func (pp *packetPool) put(p *packet) {
	p.packetState = packetState{} // zeroed in place: a literal with fields is built on the stack and copied
	p.hix = -1
	p.own, p.enc = p.own[:0], p.enc[:0]
	pp.free = append(pp.free, p)
}

// setPayload makes b the packet's payload, borrowed.
func (f *Fabric) setPayload(p *packet, b []byte) {
	if len(b) == 0 {
		p.hdr.Payload = nil
		return
	}
	p.hdr.Payload = b
	p.borrowed = true
	f.net.borrowed = append(f.net.borrowed, p)
}

// ownPayload returns a buffer of n bytes owned by p, to gather a payload
// into; it becomes hdr.Payload.
func (p *packet) ownPayload(n int) []byte {
	if cap(p.own) < n {
		c := 4096
		for c < n {
			c <<= 1
		}
		p.own = make([]byte, n, c)
	}
	p.own = p.own[:n]
	p.hdr.Payload = p.own
	p.borrowed = false
	return p.own
}

// materialize copies a borrowed payload into the packet's own buffer.
func (p *packet) materialize() {
	if !p.borrowed {
		return
	}
	src := p.hdr.Payload
	dst := p.ownPayload(len(src))
	copy(dst, src)
}

// encode writes the packet's wire bytes into enc (BTH through ICRC). A
// packet that cannot be framed (the two addresses are not the same IP
// version) is reported; the caller drops it.
func (p *packet) encode() error {
	if p.encoded {
		return nil
	}
	b, err := p.hdr.Append(p.enc[:0], p.network())
	if err != nil {
		return err
	}
	p.enc = b
	p.encoded = true
	return nil
}

// decodeInto parses the packet's wire bytes as a receiver does, checks the
// ICRC against the framing and fills p.hdr from the bytes (the payload then
// aliases enc). It returns why the receiver drops the packet, or "".
func (p *packet) decodeInto() string {
	if err := wire.VerifyICRC(p.enc, p.network()); err != nil {
		return whyBadICRC + ": " + err.Error()
	}
	if err := wire.Decode(p.enc, &p.hdr); err != nil {
		return whyMalformed + err.Error()
	}
	p.borrowed = false
	return ""
}

// size is the length of the IP datagram the packet travels in: IP and UDP
// headers, BTH through ICRC.
func (p *packet) size() int {
	ip := wire.IPv4HeaderLen
	if p.ipv6 {
		ip = wire.IPv6HeaderLen
	}
	return ip + wire.UDPHeaderLen + p.hdr.Len()
}

// route is an address vector as the data path uses it, worked out once
// when the AV is set (rxe_av_from_attr, rxe_av_fill_ip_info): the source
// GID from the table, the framing, and which device owns the destination.
type route struct {
	set   bool
	err   string // why no packet can be built on it ("" when one can)
	sgid  verbs.GID
	dgid  verbs.GID
	netw  wire.Network // SrcPort is the sending QP's, filled per packet
	ipv6  bool
	mcast bool
	to    *device // the device that owns dgid; nil for none or multicast
}

// makeRoute builds the route of av from device d.
func (f *Fabric) makeRoute(d *device, av *verbs.AHAttr) route {
	rt := route{set: true, dgid: av.GRH.DGID}
	sgid, ok := d.gid(int(av.GRH.SGIDIndex))
	if !ok {
		rt.err = "the source GID slot is empty (rxe_init_packet)"
		return rt
	}
	rt.sgid = sgid
	if isV4Mapped(sgid) != isV4Mapped(av.GRH.DGID) {
		rt.err = "source GID " + sgid.String() + " and destination " + av.GRH.DGID.String() +
			" are not the same IP version: no route (rxe_prepare)"
		return rt
	}
	rt.netw = framing(sgid, av.GRH.DGID, 0, av.GRH.HopLimit, av.GRH.TrafficClass, av.GRH.FlowLabel)
	rt.ipv6 = !isV4Mapped(sgid)
	rt.mcast = av.GRH.DGID.IsMulticast()
	if !rt.mcast {
		rt.to = f.deviceByGID(av.GRH.DGID)
		if rt.to == nil {
			rt.to = f.carrier.peer(d, av.GRH.DGID)
		}
	}
	return rt
}

// setRoute addresses the packet along rt, from the QP whose UDP source
// port is srcPort.
func (p *packet) setRoute(rt *route, srcPort uint16) {
	p.sgid, p.dgid = rt.sgid, rt.dgid
	p.rt, p.srcPort = rt, srcPort
	p.ipv6 = rt.ipv6
	p.mcast = rt.mcast
	p.to = rt.to
}

// network returns the packet's IP and UDP framing.
func (p *packet) network() *wire.Network {
	if !p.netwSet {
		p.netw = wire.Network{}
		if p.rt != nil {
			p.netw = p.rt.netw
			p.netw.SrcPort = p.srcPort
		}
		p.netwSet = true
	}
	return &p.netw
}

// isV4Mapped reports whether g is ::ffff:a.b.c.d.
func isV4Mapped(g verbs.GID) bool {
	return g[10] == 0xff && g[11] == 0xff && g[0]|g[1]|g[2]|g[3]|g[4]|g[5]|g[6]|g[7]|g[8]|g[9] == 0
}

// framing builds the IP and UDP framing of a packet from source GID s to
// destination GID d sent by QP qpn with the AV's hop limit and traffic
// class (rxe_prepare; the UDP source port is the sending QP's, rxe_qp.c).
func framing(s, d verbs.GID, qpn uint32, hop, tclass uint8, flow uint32) wire.Network {
	return wire.Network{
		Src:          netip.AddrFrom16(s),
		Dst:          netip.AddrFrom16(d),
		SrcPort:      wire.SourcePort(qpn),
		HopLimit:     hop,
		TrafficClass: tclass,
		FlowLabel:    flow,
	}
}
