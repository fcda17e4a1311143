package sim

import (
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// LinkConfig describes the Ethernet link that attaches one simulated device
// to the fabric's switch: the device's netdev, its cable and its switch port.
// Zero fields take the defaults.
//
// The link model works in virtual time. A packet from device A to device B
// is serialized onto A's link at A's bandwidth (after the packets already
// queued there), crosses it in A's latency, is stored and forwarded by the
// switch onto B's link, serialized again at B's bandwidth and crosses B's
// latency. A frame on the wire is the IP datagram plus 38 bytes of
// Ethernet (header, FCS, preamble and inter-frame gap), at least 84.
//
// Two QPs on one device do not use the link at all: rxe hands a packet for
// its own GID straight to its receive path (rxe_net.c rxe_loopback), with
// no MTU check. The simulator gives such a packet Config.LoopbackLatency and
// serializes it at the device's bandwidth on a path of its own.
type LinkConfig struct {
	// Latency is the one-way propagation delay between the device and the
	// switch. Default 1 µs, so a packet takes about 2 µs plus its
	// serialization from one device to another.
	Latency time.Duration
	// Bandwidth is the link rate in bits per second. Default 25 Gb/s.
	Bandwidth int64
	// MTU is the netdev MTU: the largest IP datagram the device sends or
	// receives. Default 1500. It sets the port's active MTU as rxe does
	// (rxe_set_mtu: the MTU minus 80 bytes of headers, rounded down to an
	// IB MTU, so 1500 gives 1024 and 9000 gives 4096). A datagram larger
	// than the sender's MTU is refused by the sender's IP layer
	// (ip_fragment: DF is set, EMSGSIZE) and rxe keeps the WQE to try again;
	// one larger than the receiver's MTU is dropped by the receiving NIC.
	MTU int
}

// Link defaults.
const (
	DefaultLinkLatency     = time.Microsecond
	DefaultLinkBandwidth   = 25_000_000_000
	DefaultLinkMTU         = 1500
	DefaultLoopbackLatency = time.Microsecond
	DefaultHZ              = 250

	ethernetOverhead = 14 + 4 + 8 + 12 // header, FCS, preamble, inter-frame gap
	ethernetMinFrame = 64 + 8 + 12
	minLinkMTU       = 68 // the smallest IPv4 MTU (RFC 791)
	maxLinkMTU       = 65535
)

func (l LinkConfig) withDefaults() LinkConfig {
	if l.Latency <= 0 {
		l.Latency = DefaultLinkLatency
	}
	if l.Bandwidth <= 0 {
		l.Bandwidth = DefaultLinkBandwidth
	}
	if l.MTU <= 0 {
		l.MTU = DefaultLinkMTU
	}
	return l
}

// link is a device's attachment: its configuration and when its two
// directions (device→switch, switch→device) and its loopback path are
// next free.
type link struct {
	cfg                  LinkConfig
	upBusy, downBusy     time.Duration
	loopBusy             time.Duration
	txPackets, rxPackets uint64
	txBytes, rxBytes     uint64
	// The last serialization time computed, for the frame size and
	// bandwidth it was computed for: a stream of equal packets costs one
	// 64-bit division, not one per packet and direction.
	lastFrame int
	lastBW    int64
	lastSer   time.Duration
}

// serialize returns how long a datagram of n bytes occupies a link.
func (l *link) serialize(n int) time.Duration {
	frame := n + ethernetOverhead
	if frame < ethernetMinFrame {
		frame = ethernetMinFrame
	}
	if bw := l.cfg.Bandwidth; frame != l.lastFrame || bw != l.lastBW || bw == 0 {
		l.lastFrame, l.lastBW = frame, bw
		l.lastSer = time.Duration(int64(frame) * 8 * int64(time.Second) / bw)
	}
	return l.lastSer
}

// setLink does SetLink's work.
func (f *Fabric) setLink(i int, l LinkConfig) error {
	if i < 0 || i >= len(f.devs) {
		return verbs.Errorf("set_link", verbs.ENODEV, "", "no device sim%d; this fabric has %d", i, len(f.devs))
	}
	if l.MTU != 0 && (l.MTU < minLinkMTU || l.MTU > maxLinkMTU) {
		return verbs.Errorf("set_link", verbs.EINVAL, "use an MTU between 68 and 65535 (1500 is Ethernet's, 9000 a jumbo frame)",
			"MTU %d is not an IP MTU", l.MTU)
	}
	f.devs[i].link.cfg = l.withDefaults()
	return nil
}

// linkConfig does Link's work.
func (f *Fabric) linkConfig(i int) (LinkConfig, error) {
	if i < 0 || i >= len(f.devs) {
		return LinkConfig{}, verbs.Errorf("link", verbs.ENODEV, "", "no device sim%d; this fabric has %d", i, len(f.devs))
	}
	return f.devs[i].link.cfg, nil
}

var _ verbs.LinkConfigurer = (*Fabric)(nil)

// linkParams does LinkParams's work.
func (f *Fabric) linkParams(name string) (verbs.LinkParams, error) {
	i, err := f.deviceIndex("link", name)
	if err != nil {
		return verbs.LinkParams{}, err
	}
	l, err := f.linkConfig(i)
	return verbs.LinkParams{Latency: l.Latency, Bandwidth: l.Bandwidth, MTU: l.MTU}, err
}

// setLinkParams does SetLinkParams's work.
func (f *Fabric) setLinkParams(name string, p verbs.LinkParams) error {
	i, err := f.deviceIndex("set_link", name)
	if err != nil {
		return err
	}
	if p.Latency < 0 || p.Bandwidth < 0 {
		return verbs.Errorf("set_link", verbs.EINVAL, "give a positive latency and bandwidth, or zero for the default",
			"latency %v and bandwidth %d b/s: neither may be negative", p.Latency, p.Bandwidth)
	}
	return f.setLink(i, LinkConfig{Latency: p.Latency, Bandwidth: p.Bandwidth, MTU: p.MTU})
}

// deviceIndex finds a local device by name.
func (f *Fabric) deviceIndex(op, name string) (int, error) {
	for i, d := range f.devs {
		if d.name == name && !d.peer {
			return i, nil
		}
	}
	return 0, verbs.Errorf(op, verbs.ENODEV, "name one of this fabric's devices (sim0, sim1, ...)", "no device %s on this fabric", name)
}

// LinkStats counts what crossed a device's link.
type LinkStats struct {
	TxPackets, RxPackets uint64
	TxBytes, RxBytes     uint64 // IP datagram bytes
}

// linkStats does LinkStats's work.
func (f *Fabric) linkStats(i int) (LinkStats, error) {
	if i < 0 || i >= len(f.devs) {
		return LinkStats{}, verbs.Errorf("link_stats", verbs.ENODEV, "", "no device sim%d; this fabric has %d", i, len(f.devs))
	}
	l := &f.devs[i].link
	return LinkStats{TxPackets: l.txPackets, RxPackets: l.rxPackets, TxBytes: l.txBytes, RxBytes: l.rxBytes}, nil
}
