package shell

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"

	"github.com/vsh-rdma/vsh/verbs"
)

// tracer collects the packets a PacketObserver reports, to print them after
// the command that caused them and, optionally, to write them to a pcap file.
type traced struct {
	seq  uint64
	line string
}

type tracer struct {
	mu     sync.Mutex // the observer may call from a driver's goroutine
	events []traced
	// dropped counts the packet events past maxTraceEvents since the
	// last drain, which a long cell (a wait of hours in a storm of
	// retries) would otherwise keep without bound.
	dropped int
	maxSeq  uint64 // the highest sequence number seen
	cancel  func()
	pcap    *pcapWriter
	seen    map[uint64]bool
	addrs   map[string]netip.Addr
	wire    *wireLog // what trace ladder draws
}

func startTrace(s *Shell, obs verbs.PacketObserver, file string) (*tracer, error) {
	if s.wire == nil {
		s.wire = newWireLog()
	}
	t := &tracer{seen: map[uint64]bool{}, addrs: map[string]netip.Addr{}, wire: s.wire}
	if file != "" {
		f, err := s.files.Create(file)
		if err != nil {
			return nil, err
		}
		t.pcap = newPcapWriter(f)
		if err := t.pcap.header(); err != nil {
			f.Close()
			return nil, err
		}
		for i, d := range s.devs {
			t.addrs[d.Name()] = deviceAddr(d, i)
		}
	}
	t.cancel = obs.ObservePackets(t.observe)
	return t, nil
}

// deviceAddr is the IP address a device's packets carry in the pcap: the
// first IPv4-mapped GID of port 1, or the first GID, or 10.0.0.(i+1).
func deviceAddr(d verbs.Device, i int) netip.Addr {
	fallback := netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})
	ctx, err := d.Open()
	if err != nil {
		return fallback
	}
	defer ctx.Close()
	pa, err := ctx.QueryPort(1)
	if err != nil {
		return fallback
	}
	var first netip.Addr
	for idx := 0; idx < pa.GIDTblLen && idx < 16; idx++ {
		g, err := ctx.QueryGID(1, idx)
		if err != nil || g.IsZero() {
			continue
		}
		if v4, ok := g.IPv4(); ok {
			return v4
		}
		if !first.IsValid() {
			first = netip.AddrFrom16(g)
		}
	}
	if first.IsValid() {
		return first
	}
	return fallback
}

func (t *tracer) observe(p verbs.PacketEvent) {
	t.wire.observe(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.events) < maxTraceEvents {
		t.events = append(t.events, traced{p.Seq, fmt.Sprintf("wire #%d t=%s %s → %s %s: %s", p.Seq, p.Time, p.From, p.To, p.Summary, p.Verdict)})
	} else {
		t.dropped++
	}
	t.maxSeq = max(t.maxSeq, p.Seq)
	if t.pcap != nil && !t.seen[p.Seq] && len(p.Bytes) > 0 {
		t.seen[p.Seq] = true
		t.pcap.packet(p, t.addrs[p.From], t.addrs[p.To])
		if len(t.seen) > 2*pcapSeenWindow {
			// A packet's events come close together: forget old ones.
			for q := range t.seen {
				if q+pcapSeenWindow < t.maxSeq {
					delete(t.seen, q)
				}
			}
		}
	}
}

// maxTraceEvents is how many packet events one cell's trace keeps to
// print; pcapSeenWindow how many recent packets the pcap writer remembers
// having written.
const (
	maxTraceEvents = 1 << 16
	pcapSeenWindow = 4096
)

// drain returns the packet lines since the last drain: one per packet,
// its latest event (sent, then delivered or dropped), so a packet that was
// sent and delivered during one command shows once, as delivered. The
// packets in shown (by their sequence number) are left out: the command
// printed them already.
func (t *tracer) drain(shown map[uint64]bool) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	last := map[uint64]int{}
	for i, e := range t.events {
		last[e.seq] = i
	}
	var out []string
	for i, e := range t.events {
		if last[e.seq] == i && !shown[e.seq] {
			out = append(out, e.line)
		}
	}
	if t.dropped > 0 {
		out = append(out, fmt.Sprintf("(%d more packet events in this cell are not shown: a cell's trace keeps %d; trace pcap FILE keeps every packet)", t.dropped, maxTraceEvents))
	}
	t.events, t.dropped = nil, 0
	return out
}

func (t *tracer) stop() error {
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
	if t.pcap != nil {
		err := t.pcap.close()
		t.pcap = nil
		return err
	}
	return nil
}

// pcapWriter writes a classic pcap file with nanosecond timestamps and raw
// IP packets (LINKTYPE_RAW), so the virtual time of each packet survives and
// Wireshark decodes UDP port 4791 as RoCEv2.
type pcapWriter struct {
	w   writeCloser
	err error
}

const (
	pcapMagicNano = 0xa1b23c4d
	linkTypeRaw   = 101
	roceV2Port    = 4791
)

func newPcapWriter(w writeCloser) *pcapWriter { return &pcapWriter{w: w} }

func (p *pcapWriter) write(b []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
}

func (p *pcapWriter) header() error {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNano)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], linkTypeRaw)
	p.write(h)
	return p.err
}

func (p *pcapWriter) packet(ev verbs.PacketEvent, src, dst netip.Addr) {
	if !src.IsValid() {
		src = netip.AddrFrom4([4]byte{10, 0, 0, 1})
	}
	if !dst.IsValid() {
		dst = netip.AddrFrom4([4]byte{10, 0, 0, 2})
	}
	frame := ipUDP(src, dst, ev.Bytes)
	rec := make([]byte, 16)
	ns := ev.Time.Nanoseconds()
	binary.LittleEndian.PutUint32(rec[0:], uint32(ns/1e9))
	binary.LittleEndian.PutUint32(rec[4:], uint32(ns%1e9))
	binary.LittleEndian.PutUint32(rec[8:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(rec[12:], uint32(len(frame)))
	p.write(rec)
	p.write(frame)
}

func (p *pcapWriter) close() error {
	err := p.err
	if cerr := p.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// ipUDP wraps a RoCEv2 UDP payload in UDP and IPv4 (or IPv6) headers.
func ipUDP(src, dst netip.Addr, payload []byte) []byte {
	udp := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint16(udp[0:], 0xc000)
	binary.BigEndian.PutUint16(udp[2:], roceV2Port)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	copy(udp[8:], payload)
	if src.Is4() && dst.Is4() {
		ip := make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)))
		binary.BigEndian.PutUint16(ip[6:], 0x4000) // don't fragment, as rxe sends
		ip[8] = 64
		ip[9] = 17
		s4, d4 := src.As4(), dst.As4()
		copy(ip[12:], s4[:])
		copy(ip[16:], d4[:])
		binary.BigEndian.PutUint16(ip[10:], checksum(ip, 0))
		return append(ip, udp...)
	}
	ip := make([]byte, 40)
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
	ip[6] = 17
	ip[7] = 64
	s16, d16 := src.As16(), dst.As16()
	copy(ip[8:], s16[:])
	copy(ip[24:], d16[:])
	// The UDP checksum is mandatory over IPv6: pseudo-header + datagram.
	var sum uint32
	for _, b := range [][]byte{s16[:], d16[:]} {
		sum = partialSum(b, sum)
	}
	sum += uint32(len(udp)) + 17
	c := checksum(udp, sum)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], c)
	return append(ip, udp...)
}

func partialSum(b []byte, sum uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	return sum
}

func checksum(b []byte, sum uint32) uint16 {
	sum = partialSum(b, sum)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
