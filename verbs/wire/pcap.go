package wire

import (
	"io"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// PcapSnapLen is the snapshot length written in the pcap file header; every
// RoCEv2 frame fits.
const PcapSnapLen = 65536

// PcapWriter writes RoCEv2 packets to a pcap file (nanosecond timestamps,
// Ethernet link type), one Ethernet/IP/UDP/RoCEv2 frame per packet, through
// gopacket's pcapgo. Wireshark and tshark decode the frames as InfiniBand
// over UDP port 4791. It is not safe for concurrent use.
//
//	pw, err := wire.NewPcapWriter(f)
//	...
//	err = pw.WritePacket(wire.VirtualTime(fab.Now()), &pkt, &net)
type PcapWriter struct {
	w   *pcapgo.Writer
	buf []byte
}

// NewPcapWriter writes the pcap file header to w and returns a writer for
// the packets.
func NewPcapWriter(w io.Writer) (*PcapWriter, error) {
	pw := &PcapWriter{w: pcapgo.NewWriterNanos(w), buf: make([]byte, 0, 4096+128)}
	if err := pw.w.WriteFileHeader(PcapSnapLen, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	return pw, nil
}

// WritePacket encodes p framed by n as an Ethernet frame and writes it with
// timestamp ts. The simulator passes its virtual clock (see VirtualTime), so
// captures are the same on every run.
func (pw *PcapWriter) WritePacket(ts time.Time, p *Packet, n *Network) error {
	b, err := p.AppendFrame(pw.buf[:0], n)
	if err != nil {
		return err
	}
	pw.buf = b
	return pw.WriteFrame(ts, b)
}

// WriteFrame writes an already encoded Ethernet frame as is; a fault rule
// that corrupted a packet's bytes records them this way.
func (pw *PcapWriter) WriteFrame(ts time.Time, frame []byte) error {
	ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(frame), Length: len(frame)}
	return pw.w.WritePacket(ci, frame)
}

// VirtualTime turns a virtual clock reading (time since the fabric started)
// into a capture timestamp: the Unix epoch plus d, in UTC.
func VirtualTime(d time.Duration) time.Time { return time.Unix(0, 0).UTC().Add(d) }
