package sim

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Config configures a simulated fabric. The zero value gives two devices
// and seed 1.
type Config struct {
	Devices int   // number of devices sim0..simN-1; default 2
	Seed    int64 // seed of every random choice (keys, MACs, addresses); default 1
	// CapNetRaw makes the simulated process privileged, as root (or a
	// process with CAP_NET_RAW) is on Linux: it may set a privileged
	// Q_Key (high bit set, uverbs_cmd.c modify_qp and
	// rdma_nl_get_privileged_qkey) and asking for a RAW_PACKET QP gets
	// past uverbs to rxe, which refuses it with EOPNOTSUPP. The default
	// models an unprivileged learner: both are EPERM.
	CapNetRaw bool
	// Link is the link of every device (latency, bandwidth, netdev MTU);
	// zero fields take the defaults (1 µs, 25 Gb/s, 1500 bytes). Fabric.SetLink
	// changes one device's link later.
	Link LinkConfig
	// LoopbackLatency is how long a packet between two QPs of one device
	// takes (rxe delivers it inline, rxe_loopback); default 1 µs, so that a
	// trace has an order in time.
	LoopbackLatency time.Duration
	// HZ is the kernel tick rate that rxe's timers count in; default 250,
	// Debian's CONFIG_HZ. A jiffy is 1s/HZ.
	HZ int
	// XRC gives the devices XRC (XRC domains, XRC SRQs, XRC_SEND and
	// XRC_RECV QPs), as mlx5 has it. Kernel rxe has none, so the default
	// is off and every XRC verb fails with EOPNOTSUPP, as on rxe.
	XRC bool
}

// Fabric is the simulated RoCEv2 network: devices sim0, sim1, ... on one
// Ethernet segment, a virtual clock, and the packets and timers in flight.
// It implements verbs.Provider and the optional simulator interfaces.
//
// A Fabric is safe for use by several goroutines: every call takes one lock
// (api.go), so the simulation itself stays single-threaded and
// deterministic.
type Fabric struct {
	guard  // the one lock (api.go)
	cfg    Config
	rng    *rand.Rand
	devs   []*device
	closed bool

	// Virtual clock and the event machinery (see engine.go).
	clock clock
	mode  verbs.DeliveryMode
	net   network

	// Registered memory: a simple bump allocator of virtual addresses.
	nextAddr uint64
	memUsed  int64

	inlineScratch []byte // gathers inline data at post time

	// carrier reaches beyond the fabric: inProcess, or the UDP link to
	// other processes (udplink.go, NewUDP).
	carrier carrier
}

var (
	_ verbs.Provider = (*Fabric)(nil)
	_ verbs.Stepper  = (*Fabric)(nil)
)

// Simulator limits that have no rxe counterpart: memory the simulator
// will allocate for MRs (a real system is limited by ulimit -l).
const (
	maxMRBytes    = 1 << 30
	maxTotalBytes = 2 << 30
)

// New builds a fabric. Devices default to 2, the seed to 1; the same
// configuration and the same calls always give the same results.
func New(cfg Config) *Fabric {
	if cfg.Devices <= 0 {
		cfg.Devices = 2
	}
	if cfg.Devices > 250 {
		cfg.Devices = 250
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	cfg.Link = cfg.Link.withDefaults()
	if cfg.LoopbackLatency <= 0 {
		cfg.LoopbackLatency = DefaultLoopbackLatency
	}
	if cfg.HZ <= 0 || cfg.HZ > 1000000 {
		cfg.HZ = DefaultHZ
	}
	f := &Fabric{cfg: cfg}
	f.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), 0x7673682d73696d)) // "vsh-sim"
	// User-space addresses as memalign would hand them out: page aligned,
	// somewhere in the heap region, the start chosen by the seed.
	f.nextAddr = 0x5555_0000_0000 + uint64(f.rng.IntN(1<<20))<<12
	f.carrier = inProcess{f}
	f.net.init(f)
	for i := 0; i < cfg.Devices; i++ {
		f.devs = append(f.devs, newDevice(f, i))
	}
	return f
}

// Name implements verbs.Provider: "sim".
func (f *Fabric) Name() string { return "sim" }

// devices does Devices's work.
func (f *Fabric) devices() ([]verbs.Device, error) {
	if f.closed {
		return nil, verbs.Errorf("ibv_get_device_list", verbs.ENODEV, "create a new simulator with sim.New",
			"the simulator was closed")
	}
	out := make([]verbs.Device, len(f.devs))
	for i, d := range f.devs {
		out[i] = d
	}
	return out, nil
}

// shutdown does Close's work but for stopping the carrier; it reports
// whether the fabric was open.
func (f *Fabric) shutdown() bool {
	if f.closed {
		return false
	}
	for _, d := range f.devs {
		for _, c := range append([]*context(nil), d.ctxs...) {
			c.closeLocked("the simulator was closed")
		}
	}
	f.closed = true
	f.net.reset()
	return true
}

// device does Device's work.
func (f *Fabric) device(i int) (verbs.Device, error) {
	if i < 0 || i >= len(f.devs) {
		return nil, verbs.Errorf("ibv_get_device_list", verbs.ENODEV, "", "no device sim%d; this fabric has %d", i, len(f.devs))
	}
	return f.devs[i], nil
}

// allocAddr returns a page-aligned virtual address for n bytes, leaving a
// guard page after each region.
func (f *Fabric) allocAddr(n int) uint64 {
	a := f.nextAddr
	pages := (uint64(n) + 4095) >> 12
	f.nextAddr += (pages + 1) << 12
	return a
}

// random8 returns 8 random bits, as rxe_get_next_key does.
func (f *Fabric) random8() uint32 { return uint32(f.rng.Uint32() & 0xff) }

// eui64 turns a MAC into the modified EUI-64 interface identifier
// (addrconf_addr_eui48: flip the universal/local bit, insert ff:fe).
func eui64(mac [6]byte) [8]byte {
	return [8]byte{mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]}
}

func newDevice(f *Fabric, i int) *device {
	d := &device{f: f, idx: i, name: fmt.Sprintf("sim%d", i)}
	// A locally administered unicast MAC, from the seed.
	var mac [6]byte
	binary.BigEndian.PutUint32(mac[2:], f.rng.Uint32())
	mac[0] = 0x02
	mac[1] = byte(f.rng.Uint32())
	d.mac = mac
	e := eui64(mac)
	d.guid = binary.BigEndian.Uint64(e[:])
	d.ip = netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})
	// GID table (core/cache.c make_default_gid, then the netdev's
	// addresses): index 0 the link-local fe80::/64 + EUI-64 of the MAC,
	// index 1 the IPv4-mapped GID of the device's address. Both RoCE v2:
	// rxe advertises only RoCE UDP encapsulation.
	d.gids[0][0], d.gids[0][1] = 0xfe, 0x80
	copy(d.gids[0][8:], e[:])
	d.gids[1] = verbs.GIDFromIPv4(d.ip)
	d.portState = verbs.PortActive
	d.link.cfg = f.cfg.Link
	d.mcgs = map[verbs.GID]*mcastGroup{}
	d.nextQPN = rxeMinQPIndex + 1 // index 16 is held by the GSI QP (QP1)
	d.nextMRIdx = rxeMinMRIndex
	d.mrs = map[uint32]*mr{}
	return d
}
