package sim

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// The UDP link: the second driver of the pure core. A fabric built with
// NewUDP puts its device sim0 on a UDP socket bound to ADDR:4791, so that
// two processes on one machine (two pingpong runs, vsh and pingpong) talk as
// two hosts do, with genuine RoCEv2 packets, and so that a process on a
// host's real address talks to kernel rxe on another. This file is the only place in
// the simulator with goroutines and I/O; the core calls it through a few
// hooks (xmit, makeRoute, resolveAV, afterVerb, waitFor, idlePoll, Close).
//
// Sending: a packet whose destination GID belongs to no device of this
// fabric goes to a peer, a stand-in device named after the peer's address;
// xmit hands it here, and it leaves as one datagram to PEER:4791 — BTH
// through ICRC, encoded by verbs/wire — before the verb (or whatever
// holds the fabric's lock) returns.
//
// The ICRC covers the IP and UDP headers as they are on the wire
// (reference/rocev2-wire.md §3), and the link computes and checks it over
// the real ones, so that kernel rxe and the link accept each other's
// packets. What it cannot read from its socket it knows from how it sends:
// an unconnected IPv4 socket with DF (IP_PMTUDISC_DO) gets the
// identification 0 from the kernel, so the link frames its own packets
// with ID 0 and DF. Over IPv6, which has no identification, every field
// the ICRC covers is known to both ends. A datagram that comes in over
// IPv4 may carry another ID (rxe hashes one): the link then checks its
// ICRC with the ID it implies (wire.RecoverIPv4: the CRC is linear, so at
// most one does), covering every other bit (DF set), and counts it
// (UDPLinkStats.IPv4IDs). The source port is the socket's, 4791, on every
// packet (rxe derives one per QP; the receiver ignores it); TTL and
// traffic class are the resolved AV's, the IPv6 flow label 0, as rxe
// sends them.
//
// Receiving: whoever holds the fabric's lock reads the socket, a batch of
// datagrams a system call (recvmmsg, without blocking), and turns each
// into a packet from the peer to sim0; the receiver's checks, the ICRC
// among them, are the core's (receive). A program that polls an empty CQ
// reads for itself, on its own goroutine: it spins on the socket for a
// while when a datagram came lately, then waits on the socket itself
// through the runtime's poller, as a program blocked in recvfrom does —
// no other goroutine stands between a datagram and the program that
// waits for it. While the program leaves the fabric alone, one goroutine,
// the keeper, waits on the socket instead, delivers what comes (a peer's
// requests are answered, its ACKs taken) and fires the timers that fall
// due; a program that wants the socket back rings a doorbell (an empty
// datagram to itself). What the fabric sends while the lock is held
// leaves in batches (sendmmsg) before the lock is released.
//
// Peers: the link keeps at most maxPeers stand-ins. A QP's or an AH's
// route makes one (peer); a datagram makes one only when it passes the
// checks the link can make before the core sees it (vouches: a RoCEv2
// header, to a live QP of ours that takes it from that address, with a
// good ICRC). When the table is full, the least recently used stand-in
// that no live QP or AH is aimed at makes room, so strangers, however
// well-formed their packets (an ICRC authenticates nothing), never keep a
// QP from reaching a new peer; only a table full of peers that QPs and AHs
// are aimed at refuses one (ENOBUFS, naming the limit). A datagram that
// earns no place in the table still reaches the core, from a throwaway
// stand-in; the core's checks drop it with their reason (or take it: a UD
// QP hears from anyone).
//
// Time: the virtual clock follows the wall clock (it never runs behind it),
// and whoever waits on the socket wakes when the next timer falls due, so
// rxe's retransmit and RNR timers run in real time and never fire early.
// A datagram arrives at the time the kernel received it (Linux), and a
// timer fires only after what came before its deadline (arrivedBy).
// Waiting for a completion event (GetEvent with a wait, GetAsyncEvent)
// really waits; polling an empty CQ lets no virtual time pass. In step
// mode (verbs.DeliverStep) arriving packets queue up until Step, Run or
// Advance, and only those move the clock; at most udpHeldMax of them
// wait, and the rest are dropped as a full receive queue drops them.

// UDPPort is the port of the UDP link: RoCEv2's, where every peer sends.
const UDPPort = wire.UDPPort

// maxPeers bounds the link's table of peers: the stand-ins, one per
// address, that QPs and AHs of the link's device are aimed at or that
// datagrams the link vouched for came from. A full table evicts its least
// recently used stand-in that no live QP or AH is aimed at; a route to a
// new peer fails (ENOBUFS, as a full neighbour table fails) only when
// every one is aimed at.
const maxPeers = 256

// udpHeldMax bounds the packets the fabric holds in step mode
// (verbs.DeliverStep), where datagrams wait for Step, Run or Advance:
// while it holds that many, an arriving datagram is dropped and counted
// (UDPLinkStats.HeldDrops), as a NIC drops what its full receive queue
// cannot take. At 64 KiB a datagram at most, 64 MiB.
const udpHeldMax = 1024

// udpIdleWait bounds the wait of a poll that found its CQ empty: then
// ibv_poll_cq returns, empty, so that the program can look at its clock
// and its signals.
const udpIdleWait = 50 * time.Millisecond

// udpIdleMin is the shortest wait of an empty poll (idle).
const udpIdleMin = 100 * time.Microsecond

// udpSpin is how long an empty poll looks at the socket before it sleeps,
// when a datagram came in the last udpSpinAfter (spin).
const (
	udpSpin      = 200 * time.Microsecond
	udpSpinAfter = time.Millisecond
)

// udpQuiet is how long the program must not have polled before the
// keeper takes over the socket (keeper).
const udpQuiet = 2 * time.Millisecond

// The socket's batches: udpBatch datagrams a system call (recvmmsg,
// sendmmsg), each read into a slot of udpMaxDatagram bytes (the largest
// UDP datagram); at most udpReadBudget datagrams are delivered a poll, so
// that a flood cannot keep a verb from returning. udpRcvBuf and udpSndBuf
// are the socket buffers the link asks for (beyond net.core.rmem_max and
// wmem_max where it is privileged): the receive buffer holds what arrives
// while the fabric is busy, and drops (and counts) the rest.
const (
	udpBatch       = 32
	udpMaxDatagram = 1 << 16
	udpReadBudget  = 8 * udpBatch
	udpRcvBuf      = 4 << 20
	udpSndBuf      = 4 << 20
)

// udpSlots is what every platform's udpIO has: the socket's descriptor
// and raw connection, and the receive slots — datagram i of the last
// batch read is bufs[i][:n[i]], from from[i], received by the kernel at
// at[i] (Unix nanoseconds; 0 where the platform does not say) — and the
// socket's drop count, as the last datagram read carried it.
type udpSlots struct {
	fd    int
	raw   syscall.RawConn
	bufs  [udpBatch][]byte
	n     [udpBatch]int
	from  [udpBatch]netip.AddrPort
	at    [udpBatch]int64
	drops uint32
}

// init takes c's descriptor and allocates the slots; on takes it under
// the runtime's control, for socket options.
func (s *udpSlots) init(c *net.UDPConn, on func(fd int)) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	s.raw = raw
	if err := raw.Control(func(fd uintptr) {
		s.fd = int(fd)
		on(s.fd)
	}); err != nil {
		return err
	}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, udpMaxDatagram)
	}
	return nil
}

// udpLink is the UDP driver of a fabric.
type udpLink struct {
	quiet    time.Duration // udpQuiet, or SetUDPQuiet's
	idleWait time.Duration // udpIdleWait, or SetUDPIdleWait's
	f        *Fabric
	conn     *net.UDPConn
	local    netip.AddrPort // the bound address, ADDR:4791 (with its zone)
	addr     netip.Addr     // the address without zone: the device's GID
	dev      *device        // the device on the link (sim0)

	// The TTL (hop limit) and TOS (traffic class) the socket now sends
	// with: set from each packet's framing when it differs (ttlTOS).
	ttl, tos int

	// peers is the table of stand-ins (at most maxPeers), used counts
	// their uses (each stand-in keeps the count of its last), and
	// strangers holds the throwaway stand-ins of the datagrams of one
	// batch that earned no place in the table.
	peers     map[netip.Addr]*standIn
	used      uint64
	strangers map[netip.Addr]*device
	evicted   uint64 // stand-ins evicted to make room
	heldDrops uint64 // datagrams dropped in step mode: the fabric held udpHeldMax

	start time.Time     // wall time when the link started
	base  time.Duration // the virtual time then

	io    *udpIO // the socket's batched I/O, used under the fabric's lock
	scope uint32 // the interface index of a link-local address, else 0

	// out holds the datagrams batched for sending (flushLocked), msgs
	// and dsts the batch handed to the socket.
	out  []outDatagram
	msgs [][]byte
	dsts []netip.AddrPort
	more bool // the last read stopped at udpReadBudget: datagrams may wait

	// waiters counts goroutines waiting in sleepLocked; wake is closed
	// (and replaced) when something happens that they may wait for.
	waiters int
	wake    chan struct{}

	// One goroutine at a time waits on the socket (holdSocket): a
	// program's, in idle or wait, or the keeper. sockUntil is its
	// deadline (zero: none); rung says the doorbell rang for it.
	sockHeld, sockKeeper, rung bool
	sockUntil                  time.Time
	waitFirst                  bool
	waitFn                     func(uintptr) bool
	// wantSock: a program's goroutine waits for the keeper to leave the
	// socket. quietAt is when the program will have left the fabric
	// alone for udpQuiet, if it does not poll again; keeperAt is when
	// the sleeping keeper wakes (zero: it is not asleep) on keeperT.
	wantSock bool
	quietAt  time.Time
	keeperAt time.Time
	keeperT  *time.Timer
	// rxAt is when a datagram last came, actAt when the program last
	// did anything but poll (a verb).
	rxAt, actAt time.Time
	// spinMisses counts the spins in a row that saw no datagram;
	// spinSkips the spins skipped since.
	spinMisses, spinSkips int

	done chan struct{}
	wg   sync.WaitGroup
}

// standIn is a peer in the link's table.
type standIn struct {
	dev  *device
	used uint64 // udpLink.used at its last use
}

// NewUDP builds a fabric (as New does) whose device sim0 is on the UDP
// link: bound to addr on UDP port 4791, with the GID table a kernel
// device on that address has: index 0 the default GID, fe80::/64 with the
// EUI-64 of its MAC (the MAC of the interface that holds addr; for a
// loopback address, which has none, one derived from addr), index 1 the
// RoCEv2 GID of addr (IPv4-mapped for IPv4). Its netdev MTU is that
// interface's (65536 for loopback, so the active MTU is 4096; 1500 gives
// 1024, as on rxe) unless cfg.Link.MTU says otherwise. The other
// devices, if cfg.Devices asks for more than one, stay inside this
// process.
//
// addr is a unicast IP address of this host, IPv4 or IPv6, optionally
// with ":4791"; a link-local IPv6 address takes its zone (fe80::2%eth1).
// "" picks the first free loopback address from 127.0.0.2 up. QPs of sim0
// reach any address of the same IP version and scope (a loopback addr
// only loopback addresses, a link-local one only link-local addresses on
// its zone): another process's UDP link, or a kernel RoCEv2 device such
// as rxe. Close stops the link and frees the port.
func NewUDP(cfg Config, addr string) (*Fabric, error) {
	conn, local, err := bindUDP(addr)
	if err != nil {
		return nil, err
	}
	mtu := cfg.Link.MTU
	f := New(cfg)
	l := &udpLink{
		quiet: udpQuiet, idleWait: udpIdleWait,
		f: f, conn: conn, local: local, addr: local.Addr().WithZone(""), dev: f.devs[0],
		ttl: -1, tos: -1,
		peers:     map[netip.Addr]*standIn{},
		strangers: map[netip.Addr]*device{},
		start:     time.Now(),
		wake:      make(chan struct{}),
		keeperT:   time.NewTimer(time.Hour),
		done:      make(chan struct{}),
	}
	l.waitFn = l.waitCheck
	_ = conn.SetReadBuffer(udpRcvBuf) // as much as net.core.rmem_max allows
	_ = conn.SetWriteBuffer(udpSndBuf)
	err = rocev2Socket(conn, local.Addr().Is4())
	if err == nil {
		l.io, err = newUDPIO(conn)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("the simulator's UDP link cannot set up its socket on %s: %w", local, err)
	}
	if z := local.Addr().Zone(); z != "" {
		if ifc, err := net.InterfaceByName(z); err == nil {
			l.scope = uint32(ifc.Index)
		}
	}
	d := l.dev
	ip := l.addr
	d.ip = ip
	var ifMTU int
	d.mac, ifMTU = interfaceOf(local.Addr())
	e := eui64(d.mac)
	d.guid = uint64(e[0])<<56 | uint64(e[1])<<48 | uint64(e[2])<<40 | uint64(e[3])<<32 |
		uint64(e[4])<<24 | uint64(e[5])<<16 | uint64(e[6])<<8 | uint64(e[7])
	d.gids[0] = verbs.GID{0: 0xfe, 1: 0x80}
	copy(d.gids[0][8:], e[:])
	d.gids[1] = verbs.GID(ip.As16())
	if mtu == 0 {
		// The interface's MTU, as rxe takes its netdev's: the link sends
		// with DF, so a datagram larger than it is refused, not fragmented.
		d.link.cfg.MTU = min(max(ifMTU, minLinkMTU), maxLinkMTU)
	}
	f.mu.Lock()
	l.base = f.clock.now()
	f.carrier = l
	f.mu.flush = l.flushLocked
	f.mu.Unlock()
	l.wg.Add(1)
	go l.keeper()
	return f, nil
}

// RealTime reports whether the fabric is on the UDP link, where its clock
// follows the wall clock and peers' packets arrive in real time
// (verbs.RealTimeClock).
func (f *Fabric) RealTime() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.carrier.(*udpLink)
	return ok
}

var _ verbs.RealTimeClock = (*Fabric)(nil)

// UDPAddr returns the address the fabric's UDP link is bound to
// (ADDR:4791), or the zero AddrPort for an in-process fabric.
func (f *Fabric) UDPAddr() netip.AddrPort {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.carrier.(*udpLink)
	if !ok {
		return netip.AddrPort{}
	}
	return l.local
}

// UDPLinkStats is what the UDP link counts (Fabric.UDPStats).
type UDPLinkStats struct {
	Peers   int    // stand-ins in the table of peers, at most maxPeers (256)
	Evicted uint64 // idle stand-ins evicted to make room for another peer
	// QueueDrops counts the datagrams the kernel dropped on the link's
	// socket (SO_RXQ_OVFL; Linux only): mostly because its receive
	// buffer was full, the fabric busy longer than the buffer lasts.
	QueueDrops uint64
	HeldDrops  uint64 // datagrams dropped in step mode: the fabric held udpHeldMax (1024) packets
	// Malformed, BadICRC and Refused count the datagrams from peers that
	// the receiver dropped, each with its reason in the trace: not RoCEv2
	// as rxe knows it (too short, an opcode rxe has no handler for, such
	// as a CNP), a wrong ICRC, or refused by the header checks (no such
	// QP, a QP of another type or state, another peer's address, a wrong
	// key).
	Malformed, BadICRC, Refused uint64
	// IPv4IDs counts IPv4 datagrams whose sender did not use the link's
	// own identification 0 with DF (kernel rxe hashes one): a UDP socket
	// does not show it, so their ICRC was checked with the ID it implies
	// (wire.RecoverIPv4), all else covered as usual.
	IPv4IDs uint64
}

// UDPStats returns the UDP link's counters; all zero for an in-process
// fabric.
func (f *Fabric) UDPStats() UDPLinkStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.carrier.(*udpLink)
	if !ok {
		return UDPLinkStats{}
	}
	return UDPLinkStats{Peers: len(l.peers), Evicted: l.evicted, QueueDrops: uint64(l.io.drops), HeldDrops: l.heldDrops, IPv4IDs: l.f.net.ipv4IDs,
		Malformed: l.f.net.linkDrops.malformed, BadICRC: l.f.net.linkDrops.badICRC, Refused: l.f.net.linkDrops.refused}
}

// ParseUDPAddr checks a --sim-addr value: an IP address, optionally with
// ":4791" ("[::1]:4791" for IPv6). "" is valid and means "choose".
func ParseUDPAddr(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.Addr{}, nil
	}
	if len(s) > 80 { // the longest address with a zone and port is far shorter
		return netip.Addr{}, fmt.Errorf("--sim-addr %.40q... (%d bytes) is not an IP address: give one such as 127.0.0.2", s, len(s))
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("--sim-addr %q is not an IP address: give one such as 127.0.0.2, 2001:db8::2 or fe80::2%%eth1 (each process its own)", s)
		}
		if ap.Port() != UDPPort {
			return netip.Addr{}, fmt.Errorf("--sim-addr %s: the UDP link uses port %d, where every RoCEv2 peer sends; give the address alone (127.0.0.2)", s, UDPPort)
		}
		a = ap.Addr()
	}
	switch {
	case a.Zone() != "" && !a.IsLinkLocalUnicast(): // an IPv4-mapped address is not link-local either
		return netip.Addr{}, fmt.Errorf("--sim-addr %s: only a link-local IPv6 address (fe80::/10) takes a zone; give %s alone", s, a.Unmap().WithZone(""))
	case a.IsLinkLocalUnicast() && a.Is6() && !a.Is4In6() && a.Zone() == "":
		return netip.Addr{}, fmt.Errorf("--sim-addr %s: a link-local address needs its interface as a zone, as in %s%%eth1 (ip -6 addr shows which interface has it)", s, a)
	}
	return a.Unmap(), nil
}

// bindUDP binds the link's socket: to addr, or to the first free address
// 127.0.0.N (N from 2 to 254) when addr is "".
func bindUDP(addr string) (*net.UDPConn, netip.AddrPort, error) {
	a, err := ParseUDPAddr(addr)
	if err != nil {
		return nil, netip.AddrPort{}, err
	}
	if a.IsValid() {
		if z := a.Zone(); z != "" {
			if _, err := net.InterfaceByName(z); err != nil {
				return nil, netip.AddrPort{}, fmt.Errorf("--sim-addr %s: this host has no interface %q (ip link lists them)", a, z)
			}
		}
		if a.IsUnspecified() || a.IsMulticast() || a.Is4() && a.As4()[0] == 255 {
			return nil, netip.AddrPort{}, fmt.Errorf("--sim-addr %s: the link needs a unicast address of its own, which becomes the device's GID; use a loopback address such as 127.0.0.2, or an address of this host (ip addr)", a)
		}
		ap := netip.AddrPortFrom(a, UDPPort)
		c, err := net.ListenUDP(udpNet(a), net.UDPAddrFromAddrPort(ap))
		if err != nil {
			return nil, ap, bindError(ap, err)
		}
		return c, ap, nil
	}
	var last error
	for n := 2; n < 255; n++ {
		ap := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(n)}), UDPPort)
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(ap))
		if err == nil {
			return c, ap, nil
		}
		last = err
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, ap, bindError(ap, err)
		}
	}
	return nil, netip.AddrPort{}, fmt.Errorf("the simulator's UDP link found no free address from 127.0.0.2 to 127.0.0.254 on port %d (%v): stop some of the processes that hold them, or give one with --sim-addr", UDPPort, last)
}

// interfaceOf returns the MAC and MTU of the interface that holds address
// a, as a kernel device bound to it would have them. Without a MAC (a
// loopback address, a point-to-point link) the MAC is wire.MACFor(a);
// without an interface the MTU is the loopback interface's, 65535.
func interfaceOf(a netip.Addr) (mac [6]byte, mtu int) {
	mac, mtu = wire.MACFor(a.WithZone("")), maxLinkMTU
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if a.Zone() != "" && a.Zone() != ifc.Name {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, ia := range addrs {
			if n, ok := ia.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a.WithZone("") {
					if len(ifc.HardwareAddr) == 6 {
						mac = [6]byte(ifc.HardwareAddr)
					}
					return mac, ifc.MTU
				}
			}
		}
	}
	return mac, mtu
}

// ttlTOSChanges reports whether nw's hop limit (TTL) and traffic class
// (TOS), which rxe takes from the AH (rxe_prepare), differ from those the
// socket sends with, and makes them the ones setTTLTOS sets.
func (l *udpLink) ttlTOSChanges(nw *wire.Network) bool {
	ttl, tos := int(nw.HopLimit), int(nw.TrafficClass)
	if ttl == 0 {
		ttl = wire.DefaultHopLimit
	}
	if ttl == l.ttl && tos == l.tos {
		return false
	}
	l.ttl, l.tos = ttl, tos
	return true
}

// setTTLTOS makes the socket send with the TTL and TOS ttlTOSChanges
// recorded.
func (l *udpLink) setTTLTOS() {
	if l.addr.Is4() {
		c := ipv4.NewConn(l.conn)
		_ = c.SetTTL(l.ttl)
		_ = c.SetTOS(l.tos)
		return
	}
	c := ipv6.NewConn(l.conn)
	_ = c.SetHopLimit(l.ttl)
	_ = c.SetTrafficClass(l.tos)
}

func udpNet(a netip.Addr) string {
	if a.Is4() {
		return "udp4"
	}
	return "udp6"
}

func bindError(ap netip.AddrPort, err error) error {
	why := ""
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = ": another process (another vsh or pingpong, or the kernel's rdma_rxe, which holds 0.0.0.0:4791) has it; " +
			"give each process its own address (--sim-addr 127.0.0.3), or leave --sim-addr out to take the first free one"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = ": no interface of this host has that address (ip addr lists them); give one it has, " +
			"or a loopback address (127.0.0.2, 127.0.0.3, ...), which every Linux host has"
	case errors.Is(err, syscall.EACCES):
		why = ": binding a port below 1024 needs privilege here; 4791 does not, so this is a firewall or security module's refusal"
	}
	return fmt.Errorf("the simulator's UDP link cannot bind %s: %w%s", ap, err, why)
}

// ---------------------------------------------------------------- hooks

// peer returns the stand-in device for the host with GID g, reached
// from device d over the link, or nil when g is not reachable that way or
// the table of peers is full of live ones (peerErr says so).
func (l *udpLink) peer(d *device, g verbs.GID) *device {
	a, ok := l.peerAddr(d, g)
	if !ok {
		return nil
	}
	if p := l.lookup(a); p != nil {
		return p
	}
	return l.admit(a)
}

// peerAddr returns the address of GID g when the link can reach it from
// device d.
func (l *udpLink) peerAddr(d *device, g verbs.GID) (netip.Addr, bool) {
	if d != l.dev || g.IsMulticast() {
		return netip.Addr{}, false
	}
	a := netip.AddrFrom16(g).Unmap()
	return a, l.reaches(a)
}

// peerName returns the canonical form of name when it is an address the
// link reaches (a fault rule's From or To naming a peer), or why the link
// cannot reach that address.
func (l *udpLink) peerName(name string) (string, string) {
	a, err := netip.ParseAddr(strings.TrimSpace(name))
	if err != nil {
		return "", ""
	}
	a = a.Unmap().WithZone("")
	if why := l.unreachable(a); why != "" {
		return "", why
	}
	return a.String(), ""
}

// unreachable says why the link cannot send to address a, or "" when it
// can.
func (l *udpLink) unreachable(a netip.Addr) string {
	why := l.unreachableWhy(a)
	if why == "" {
		return ""
	}
	return "the UDP link at " + l.addr.String() + " cannot reach " + a.String() + ": " + why
}

// unreachableWhy is the rule of reach: a peer is a unicast address other
// than the link's own, of its IP version and scope — loopback from a
// loopback address (the kernel routes 127.0.0.0/8 nowhere else) and only
// from one, link-local from a link-local address (on its zone) and only
// from one. It returns which part a breaks, or "".
func (l *udpLink) unreachableWhy(a netip.Addr) string {
	own := l.addr
	switch {
	case !a.IsValid() || a.IsMulticast() || a.IsUnspecified() || a.Is4() && a.As4()[0] == 255:
		return "it is not a unicast address"
	case a == own:
		return "it is this device's own address (name it sim0)"
	case a.Is4() != own.Is4():
		return "the link speaks one IP version, that of its own address"
	case own.IsLoopback() != a.IsLoopback():
		return "a loopback address reaches only loopback addresses, and only a loopback one reaches them"
	case own.IsLinkLocalUnicast() != a.IsLinkLocalUnicast():
		return "a link-local address reaches only link-local addresses, and only a link-local one reaches them"
	}
	return ""
}

func (l *udpLink) peerHint() string {
	return ", or a peer's address beyond the UDP link (" + l.addr.String() + "'s peers, e.g. the address of the other side's GID)"
}

// peerErr is resolveAV's error for a GID the link reaches but has no room
// for: the table holds maxPeers stand-ins, and a live QP or AH is aimed
// at each. It is nil otherwise.
func (l *udpLink) peerErr(op, field string, d *device, g verbs.GID) error {
	a, ok := l.peerAddr(d, g)
	if !ok || l.peers[a] != nil || len(l.peers) < maxPeers {
		return nil
	}
	return verbs.Errorf(op, syscall.ENOBUFS,
		"destroy the QPs and AHs aimed at peers this program no longer talks to (each distinct peer address holds one entry)",
		"%s.grh.dgid %s would be one peer too many: the simulator's UDP link keeps at most %d peers (maxPeers), "+
			"and a live QP or AH of %s is aimed at each of them, so none can be evicted "+
			"(the kernel's neighbour table fails the same way when full: ENOBUFS)", field, g, maxPeers, l.dev.name)
}

// reaches reports whether the link can send to address a (unreachableWhy).
func (l *udpLink) reaches(a netip.Addr) bool { return l.unreachableWhy(a) == "" }

// newStandIn makes a stand-in device for the host at address a.
func (l *udpLink) newStandIn(a netip.Addr) *device {
	p := &device{f: l.f, idx: -1, name: a.String(), ip: a, peer: true, portState: verbs.PortActive}
	p.gids[1] = verbs.GID(a.As16())
	p.link.cfg = LinkConfig{MTU: maxLinkMTU}.withDefaults()
	return p
}

// lookup returns the stand-in in the table for address a, marking it
// used, or nil.
func (l *udpLink) lookup(a netip.Addr) *device {
	s := l.peers[a]
	if s == nil {
		return nil
	}
	l.used++
	s.used = l.used
	return s.dev
}

// admit puts a new stand-in for address a in the table, evicting one to
// make room when it is full, and returns it; nil when every stand-in in
// the full table is live.
func (l *udpLink) admit(a netip.Addr) *device {
	if len(l.peers) >= maxPeers && !l.evict() {
		return nil
	}
	d := l.newStandIn(a)
	l.used++
	l.peers[a] = &standIn{dev: d, used: l.used}
	return d
}

// evict removes from the table the least recently used stand-in that no
// live QP or AH of the link's device is aimed at, and reports whether
// there was one. Packets still in flight from it keep it as their source.
func (l *udpLink) evict() bool {
	live := l.liveTargets()
	var victim netip.Addr
	var oldest *standIn
	for a, s := range l.peers {
		if !live[s.dev] && (oldest == nil || s.used < oldest.used) {
			victim, oldest = a, s
		}
	}
	if oldest == nil {
		return false
	}
	delete(l.peers, victim)
	l.evicted++
	return true
}

// liveTargets returns the stand-ins that the routes of the live QPs and
// AHs of the link's device go to.
func (l *udpLink) liveTargets() map[*device]bool {
	live := map[*device]bool{}
	mark := func(rt *route) {
		if rt != nil && rt.to != nil && rt.to.peer {
			live[rt.to] = true
		}
	}
	for _, c := range l.dev.ctxs {
		for _, pd := range c.pds {
			for _, q := range pd.qps {
				if q.dead == "" {
					mark(q.route)
				}
			}
			for _, a := range pd.ahs {
				if a.dead == "" {
					mark(&a.route)
				}
			}
		}
	}
	return live
}

// vouches reports whether datagram p from address a passes the checks the
// link can make before the core sees it, so that its source may have a
// stand-in in the table: a peer's address, a RoCEv2 header (wire.Decode),
// for a live QP of the link's device that takes this opcode in its state
// from this address (check_type_state, check_addr), with a good ICRC. The
// keys are left to the core, whose check counts their violations. None of
// this authenticates the source: it only keeps stray and malformed traffic
// from taking a place.
func (l *udpLink) vouches(a netip.Addr, p *packet) bool {
	if !l.reaches(a) || wire.Decode(p.enc, &p.hdr) != nil || p.hdr.BTH.TVer != 0 {
		return false
	}
	q := l.dev.qp(p.hdr.BTH.DestQP)
	return q != nil && q.dead == "" && q.checkTypeState(p) == "" && q.checkAddr(p) == "" && l.f.icrcOK(p)
}

// source returns the device datagram p from address a comes from: its
// stand-in in the table, a new one when p vouches for it and there is
// room, or else a throwaway one (the same for every datagram from a in
// this batch) that the table never holds.
func (l *udpLink) source(a netip.Addr, p *packet) *device {
	if d := l.lookup(a); d != nil {
		return d
	}
	if l.vouches(a, p) {
		if d := l.admit(a); d != nil {
			return d
		}
	}
	d := l.strangers[a]
	if d == nil {
		d = l.newStandIn(a)
		l.strangers[a] = d
	}
	return d
}

// send puts p on the wire to its peer: one datagram, BTH through ICRC,
// batched until the fabric's lock is released (flushLocked) or a batch is
// full. The fault rules apply (drop, duplicate and corrupt; delay and
// reorder act in-process only). The packet is freed once sent.
func (l *udpLink) send(p *packet) error {
	f := l.f
	n := &f.net
	n.seq++
	p.seq = n.seq
	// The framing the kernel gives the datagram: this socket's address
	// and port, and over IPv4 the identification 0 with DF, which an
	// unconnected socket with IP_PMTUDISC_DO gets (ip_select_ident_segs).
	nw := p.network()
	nw.SrcPort = l.local.Port()
	nw.DstPort = UDPPort
	nw.FixedID, nw.ID, nw.NoDF = true, 0, false
	nw.FlowLabel = 0
	f.uplink(p.from, p.size())
	drop, dup := "", false
	if len(n.faults) > 0 {
		drop, dup = f.applyFaults(p, false)
	}
	p.encoded = false
	if err := p.encode(); err != nil {
		f.observe(p, "dropped", "cannot be framed: "+err.Error())
		n.pool.put(p)
		return nil
	}
	if p.corrupt {
		flipBit(p)
	}
	f.observe(p, "sent", "")
	if drop != "" {
		f.observe(p, "dropped", drop)
		n.pool.put(p)
		return nil
	}
	l.lookup(p.to.ip) // the peer is in use
	if l.ttlTOSChanges(nw) {
		l.flushLocked() // what is batched leaves with the socket's old TTL and TOS
		l.setTTLTOS()
	}
	dst := netip.AddrPortFrom(p.to.ip, UDPPort)
	if dup {
		l.out = append(l.out, outDatagram{p: p, to: dst})
	}
	l.out = append(l.out, outDatagram{p: p, to: dst, owner: true})
	if len(l.out) >= udpBatch {
		l.flushLocked()
	}
	return nil
}

// outDatagram is a datagram batched for sending: packet p's bytes (none
// for the doorbell) to to; owner frees p once sent.
type outDatagram struct {
	p     *packet
	to    netip.AddrPort
	owner bool
}

// flushLocked sends the batched datagrams, udpBatch a system call
// (sendmmsg), and frees their packets. A datagram the socket refuses is
// dropped, and the trace says why.
func (l *udpLink) flushLocked() {
	f := l.f
	for len(l.out) > 0 {
		k := min(len(l.out), udpBatch)
		l.msgs, l.dsts = l.msgs[:0], l.dsts[:0]
		for _, o := range l.out[:k] {
			var b []byte
			if o.p != nil {
				b = o.p.enc
			}
			l.msgs = append(l.msgs, b)
			l.dsts = append(l.dsts, o.to)
		}
		sent, err := l.io.send(l.msgs, l.dsts, l.scope)
		// Short of an error, sendmmsg stops early only when the socket's
		// send buffer filled: the rest goes in the next call, which
		// waits for room. A datagram the socket refuses is dropped.
		if sent < k && (err != nil || sent == 0) {
			if o := l.out[sent]; o.p != nil {
				why := "sendmmsg sent nothing"
				if err != nil {
					why = err.Error()
				}
				f.observe(o.p, "dropped", "the UDP link could not send it: "+why)
			}
			sent++
		}
		for i := range l.out[:sent] {
			if o := &l.out[i]; o.owner {
				f.net.pool.put(o.p)
			}
			l.out[i] = outDatagram{}
		}
		l.out = l.out[:copy(l.out, l.out[sent:])]
	}
}

// ring sends the doorbell: an empty datagram to the link's own socket,
// which wakes the goroutine that waits on it (holdSocket).
func (l *udpLink) ring() {
	l.rung = true
	l.out = append(l.out, outDatagram{to: netip.AddrPortFrom(l.addr, l.local.Port())})
}

// doorbell reports whether datagram b from from is the doorbell.
func (l *udpLink) doorbell(b []byte, from netip.AddrPort) bool {
	return len(b) == 0 && from.Port() == l.local.Port() && from.Addr().Unmap().WithZone("") == l.addr
}

// elapsed is the wall clock's time in the fabric's terms in automatic
// delivery mode; in step mode time moves only when the program says.
func (l *udpLink) elapsed() time.Duration {
	if l.f.mode != verbs.DeliverAuto {
		return 0
	}
	return l.base + time.Since(l.start)
}

// syncLocked moves the fabric's clock up to the wall clock.
func (l *udpLink) syncLocked() {
	l.f.clock.advance(l.elapsed())
}

// timerWall returns the wall time when the next timer falls due, in
// automatic delivery mode.
func (l *udpLink) timerWall() (time.Time, bool) {
	if l.f.mode != verbs.DeliverAuto {
		return time.Time{}, false
	}
	t, ok := l.f.nextTimer()
	if !ok {
		return time.Time{}, false
	}
	return l.start.Add(t.at - l.base), true
}

// settled follows every verb: the waiters learn that something happened,
// and whoever waits on the socket or sleeps wakes in time for a timer the
// verb armed.
func (l *udpLink) settled() {
	l.actAt = time.Now()
	l.notifyLocked()
	l.rearm()
}

// rearm brings the deadline of whoever waits on the socket, and the
// sleeping keeper's wake-up, forward to the next timer, which a verb or a
// delivery may have armed.
func (l *udpLink) rearm() {
	if !l.sockHeld && l.keeperAt.IsZero() {
		return
	}
	at, ok := l.timerWall()
	if !ok {
		return
	}
	if l.sockHeld && (l.sockUntil.IsZero() || at.Before(l.sockUntil)) {
		l.sockUntil = at
		_ = l.conn.SetReadDeadline(at)
	}
	if !l.keeperAt.IsZero() && at.Before(l.keeperAt) {
		l.wakeKeeperAt(at)
	}
}

// wakeKeeperAt makes the sleeping keeper wake at t.
func (l *udpLink) wakeKeeperAt(t time.Time) {
	if l.keeperAt.IsZero() || t.Equal(l.keeperAt) {
		return
	}
	l.keeperAt = t
	l.keeperT.Reset(time.Until(t))
}

// polled records that the program polls the fabric until t (now, or the
// deadline of the wait on the socket it starts: holding): the keeper
// stays asleep until udpQuiet after it, or, unless the program holds the
// socket (and fires the timers itself), the next timer.
func (l *udpLink) polled(t time.Time, holding bool) {
	l.quietAt = t.Add(l.quiet)
	if l.keeperAt.IsZero() {
		return
	}
	wake := l.quietAt
	if at, ok := l.timerWall(); ok && at.Before(wake) && !holding {
		wake = at
	}
	// Pushing the keeper's timer costs; while the program polls
	// busily, the keeper may as well wake once a udpQuiet and sleep on.
	if wake.Before(l.keeperAt) || wake.Sub(l.keeperAt) > l.quiet {
		l.wakeKeeperAt(wake)
	}
}

// notifyLocked wakes the goroutines waiting in wait and idle: those on
// the channel, and one on the socket by the doorbell.
func (l *udpLink) notifyLocked() {
	if l.waiters == 0 {
		return
	}
	close(l.wake)
	l.wake = make(chan struct{})
	if l.sockHeld && !l.sockKeeper && !l.rung {
		l.ring()
	}
}

// pollLocked is idlePoll in real time: the clock catches up, the
// datagrams that came are delivered, what is due runs, and no virtual time
// passes beyond now. A program that spins on its CQ thus does the
// receiving itself, on its own goroutine.
func (l *udpLink) pollLocked() bool {
	f := l.f
	l.syncLocked()
	due := false
	if t, ok := f.nextTimer(); ok && t.at <= f.clock.now() {
		due = true
	}
	got := l.readLocked()
	if f.mode == verbs.DeliverAuto {
		f.runLocked()
	}
	if got || due {
		l.notifyLocked()
		l.rearm()
	}
	return got
}

// readLocked delivers the datagrams waiting on the socket, at most
// udpReadBudget (more then says that some may be left), and reports
// whether there were any.
func (l *udpLink) readLocked() bool {
	if l.f.closed {
		return false
	}
	got := false
	l.more = false
	for r := 0; r < udpReadBudget/udpBatch; r++ {
		k, _ := l.io.recv() // an error (none is expected from UDP) reads as nothing
		if k == 0 {
			break
		}
		upTo := l.readAt() // one clock read a batch
		for i := 0; i < k; i++ {
			b, from := l.io.bufs[i][:l.io.n[i]], l.io.from[i]
			if l.doorbell(b, from) {
				continue
			}
			l.injectLocked(b, from, l.arrival(l.io.at[i], upTo))
			got = true
		}
		if k < udpBatch {
			break
		}
		l.more = r == udpReadBudget/udpBatch-1
	}
	if got {
		l.rxAt = time.Now()
	}
	clear(l.strangers)
	return got
}

// readAt is the fabric's time of a batch just read: the latest any of
// its datagrams can have arrived.
func (l *udpLink) readAt() time.Duration { return max(l.elapsed(), l.f.clock.now()) }

// arrival is when a datagram the kernel received at ns (Unix
// nanoseconds) reached the device, in the fabric's time: at most upTo
// (readAt), and the clock's now when the kernel did not say or in step
// mode, where the program moves the clock.
func (l *udpLink) arrival(ns int64, upTo time.Duration) time.Duration {
	if ns == 0 || l.f.mode != verbs.DeliverAuto {
		return l.f.clock.now()
	}
	return min(l.base+time.Duration(ns-l.start.UnixNano()), upTo)
}

// arrivedBy reads the socket before a timer due at t fires, so that the
// datagrams that came first are delivered first, as rxe takes each packet
// when it comes: a timer that falls due while the program is busy would
// otherwise fire before the ACKs waiting on the socket are seen, and
// resend what they acknowledge. It reports whether a datagram so read
// came by t. Only in automatic delivery mode, where the clock follows the
// wall clock.
func (l *udpLink) arrivedBy(t time.Duration) bool {
	if l.f.mode != verbs.DeliverAuto || !l.readLocked() {
		return false
	}
	p := l.f.net.pkts.peek()
	return p != nil && p.at <= t
}

// wait is waitFor in real time: it waits up to d of wall time, with
// the fabric unlocked, until ready reports true.
func (l *udpLink) wait(d time.Duration, ready func() bool) {
	f := l.f
	defer func() { l.polled(time.Now(), false) }()
	l.pollLocked()
	if d <= 0 || ready() {
		return
	}
	deadline := time.Now().Add(d)
	for !ready() && !f.closed {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		if t, ok := f.nextTimer(); ok {
			left = min(left, max(t.at-f.clock.now(), 0))
		}
		l.sleepLocked(left)
		l.pollLocked()
	}
}

// idle is idlePoll in real time. ibv_poll_cq does not wait, but a
// program spinning on an empty CQ must not keep a CPU from the other
// process, which on a small machine brings what it waits for: so an
// empty poll waits until a datagram comes, something happens on the
// fabric or the next timer falls due, with the fabric unlocked — at most
// as long as the fabric has been still (since the program's last verb or
// the last datagram), between udpIdleMin and udpIdleWait, so that a
// program that waits for itself (two sides polled in turn) goes on soon.
// The program sees an empty CQ a little later, as if it had spun.
func (l *udpLink) idle(ready func() bool) {
	defer func() { l.polled(time.Now(), false) }()
	if l.pollLocked() || ready() {
		return
	}
	if l.spin() || ready() {
		return
	}
	now := time.Now()
	d := min(max(min(now.Sub(l.rxAt), now.Sub(l.actAt)), udpIdleMin), l.idleWait)
	if t, ok := l.f.nextTimer(); ok {
		d = min(d, max(t.at-l.f.clock.now(), 0))
	}
	if d > 0 {
		l.sleepLocked(d)
		l.pollLocked()
	}
}

// spin polls the socket for up to udpSpin without sleeping, when a
// datagram came in the last udpSpinAfter: a peer in the middle of an
// exchange answers sooner than the poller could wake a sleeping thread.
// Between reads the fabric is unlocked. It reports whether a datagram
// came.
func (l *udpLink) spin() bool {
	f := l.f
	now := time.Now()
	if l.more || f.closed || now.Sub(l.rxAt) > udpSpinAfter || l.sockHeld {
		return false
	}
	// A peer slower than the spin (kernel rxe in an emulated guest) would
	// only lose the CPU it needs to the spinning: after two spins in a
	// row that saw nothing, one in 16 tries again.
	if l.spinMisses >= 2 {
		if l.spinSkips++; l.spinSkips%16 != 0 {
			return false
		}
	}
	for end := now.Add(udpSpin); ; {
		if l.pollLocked() {
			l.spinMisses = 0
			return true
		}
		if f.closed || l.sockHeld || !time.Now().Before(end) {
			l.spinMisses++
			return false
		}
		f.settle()
		f.mu.Unlock()
		f.mu.Lock()
	}
}

// sleepLocked releases the fabric for up to d, until a datagram arrives
// or something happens on the fabric (notifyLocked). The first goroutine
// to sleep waits on the socket itself, as a program blocked in recvfrom
// does; the others wait to be told. A program's goroutine that finds the
// keeper on the socket rings the doorbell, so that the keeper leaves it.
func (l *udpLink) sleepLocked(d time.Duration) {
	f := l.f
	if f.closed {
		return
	}
	if l.more { // datagrams wait: let the others have the fabric, then read on
		l.yieldLocked()
		return
	}
	l.waiters++
	defer func() { l.waiters-- }()
	until := time.Now().Add(d)
	l.polled(until, true) // the keeper leaves the socket to this goroutine
	if !l.sockHeld {
		l.holdSocket(false, until)
		// The other waiters wait on the channel: one of them takes the
		// socket now.
		if l.waiters > 1 {
			close(l.wake)
			l.wake = make(chan struct{})
		}
		return
	}
	if l.sockKeeper {
		l.wantSock = true
		if !l.rung {
			l.ring()
		}
	}
	ch := l.wake
	f.settle()
	f.mu.Unlock()
	t := time.NewTimer(d)
	select {
	case <-ch:
	case <-t.C:
	case <-l.done:
	}
	t.Stop()
	f.mu.Lock()
}

// yieldLocked releases the fabric for a moment, so that a goroutine
// waiting for it gets it while a flood keeps the link busy.
func (l *udpLink) yieldLocked() {
	f := l.f
	f.settle()
	f.mu.Unlock()
	runtime.Gosched()
	f.mu.Lock()
}

// holdSocket releases the fabric and waits until the socket has a
// datagram, the deadline until passes (none when zero), the doorbell
// rings or the link stops.
func (l *udpLink) holdSocket(keeper bool, until time.Time) {
	f := l.f
	l.sockHeld, l.sockKeeper, l.sockUntil, l.rung = true, keeper, until, false
	_ = l.conn.SetReadDeadline(until)
	wait := l.waitFn
	f.settle()
	f.mu.Unlock()
	l.waitFirst = true
	_ = l.io.raw.Read(wait)
	f.mu.Lock()
	l.sockHeld = false
}

// waitCheck is the function holdSocket hands the runtime's poller,
// which forgets what it saw before the call: on the first call it looks
// whether a datagram waits (the poller waits when none does), then it
// says "done".
func (l *udpLink) waitCheck(fd uintptr) bool {
	if l.waitFirst {
		l.waitFirst = false
		return l.io.pending(fd)
	}
	return true
}

// ---------------------------------------------------------------- goroutines

// keeper does the link's work while the program does not: once the
// program has left the fabric alone for udpQuiet (it polls no empty CQ
// and waits for no event), the keeper waits on the socket, delivers what
// comes and fires the timers that fall due. While the program polls, the
// keeper sleeps (the program pushes its wake-up on: polled).
func (l *udpLink) keeper() {
	defer l.wg.Done()
	f := l.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for !f.closed {
		if l.wantSock {
			// A program's goroutine rang for the socket the keeper just
			// left: it takes it once told.
			l.wantSock = false
			l.pollLocked()
			l.notifyLocked()
		}
		now := time.Now()
		wake := l.quietAt
		if l.sockHeld || l.waiters > 0 { // the program's, which does the work meanwhile
			wake = later(wake, l.sockUntil.Add(l.quiet), now.Add(l.quiet))
		} else if at, ok := l.timerWall(); ok && at.Before(wake) {
			wake = at
		}
		if wake.After(now) && !l.more {
			l.keeperAt = wake
			l.keeperT.Reset(wake.Sub(now))
			f.mu.Unlock()
			select {
			case <-l.keeperT.C:
			case <-l.done:
			}
			f.mu.Lock()
			l.keeperAt = time.Time{}
			continue
		}
		if l.pollLocked(); l.more || l.wantSock {
			l.yieldLocked()
			continue
		}
		until, _ := l.timerWall()
		l.holdSocket(true, until)
	}
}

// later returns the latest of ts.
func later(ts ...time.Time) time.Time {
	l := ts[0]
	for _, t := range ts[1:] {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// injectLocked queues datagram b from the peer at from for delivery to
// the link's device at time at (its arrival), as a packet of its own (b
// is copied). In step mode, while the fabric holds udpHeldMax packets, it
// drops b instead.
func (l *udpLink) injectLocked(b []byte, from netip.AddrPort, at time.Duration) {
	f := l.f
	n := &f.net
	if f.mode != verbs.DeliverAuto && n.pkts.len()+len(n.held) >= udpHeldMax {
		l.heldDrops++
		return
	}
	src := from.Addr().Unmap().WithZone("")
	p := n.pool.get()
	p.enc, p.encoded = append(p.enc[:0], b...), true
	p.to = l.dev
	p.sgid, p.dgid = verbs.GID(src.As16()), verbs.GID(l.addr.As16())
	// What the socket knows of the framing; over IPv4 DF, as rxe sends,
	// and the ID the link's own, 0, until the ICRC says otherwise (icrcOK).
	p.netw = wire.Network{Src: src, Dst: l.addr, SrcPort: from.Port(), DstPort: l.local.Port(), FixedID: true}
	p.netwSet = true
	p.linked = true
	p.ipv6 = !src.Is4()
	p.from = l.source(src, p)
	n.seq++
	p.seq = n.seq
	p.at = at
	if len(n.faults) > 0 && wire.Decode(p.enc, &p.hdr) == nil {
		// The fault rules act on arrival too, on what the peer sent.
		drop, dup := f.applyFaults(p, true)
		if drop != "" {
			f.observe(p, "dropped", drop+", on arrival")
			n.pool.put(p)
			return
		}
		if p.corrupt {
			flipBit(p)
		}
		if dup {
			c := f.clonePacket(p)
			c.dup = true
			f.enqueue(c)
		}
	}
	f.enqueue(p)
}

// stop stops the goroutines and frees the port; the fabric must not be
// locked.
func (l *udpLink) stop() {
	select {
	case <-l.done:
		return
	default:
	}
	close(l.done)
	l.conn.Close()
	l.wg.Wait()
}
