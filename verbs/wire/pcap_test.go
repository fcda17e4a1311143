package wire

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// capturedPacket is one packet of a test capture, with what it was built from.
type capturedPacket struct {
	p  Packet
	n  Network
	ts time.Time
}

// allOpcodesCapture returns every opcode of every transport, over IPv4 as
// rxe frames it (UDP checksum 0) and over IPv6 with a UDP checksum, with
// distinct QPNs, PSNs around the 24-bit wrap, and payload sizes that give
// every pad count.
func allOpcodesCapture() []capturedPacket {
	var out []capturedPacket
	i := 0
	n6 := testNet6()
	n6.UDPChecksum = true
	for _, n := range []Network{testNet4(), n6} {
		for _, op := range Opcodes() {
			p := samplePacket(op, PSN(0xfffff0).Add(i), 33+i%4)
			p.BTH.DestQP = 0x100 + uint32(i)
			p.BTH.SE = op.CompletesRecvWQE() && i%2 == 0
			out = append(out, capturedPacket{p: p, n: n, ts: VirtualTime(time.Duration(i) * 1500 * time.Nanosecond)})
			i++
		}
	}
	return out
}

func writeCapture(t testing.TB, pkts []capturedPacket) []byte {
	t.Helper()
	var buf bytes.Buffer
	pw, err := NewPcapWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pkts {
		if err := pw.WritePacket(c.ts, &c.p, &c.n); err != nil {
			t.Fatalf("WritePacket(%s): %v", Describe(&c.p), err)
		}
	}
	return buf.Bytes()
}

// TestPcapReadBack writes a capture and reads it back with pcapgo's reader:
// link type, nanosecond timestamps and every frame must survive.
func TestPcapReadBack(t *testing.T) {
	pkts := allOpcodesCapture()
	r, err := pcapgo.NewReader(bytes.NewReader(writeCapture(t, pkts)))
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Errorf("link type %v, want Ethernet", r.LinkType())
	}
	if r.Snaplen() != PcapSnapLen {
		t.Errorf("snaplen %d, want %d", r.Snaplen(), PcapSnapLen)
	}
	for i, c := range pkts {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !ci.Timestamp.Equal(c.ts) || ci.CaptureLength != len(data) || ci.Length != len(data) {
			t.Errorf("frame %d: capture info %+v, want timestamp %v", i, ci, c.ts)
		}
		var p Packet
		var n Network
		if err := DecodeFrame(data, &p, &n); err != nil {
			t.Fatalf("frame %d (%s): DecodeFrame: %v", i, Describe(&c.p), err)
		}
		want := c.p
		want.BTH.PadCount = uint8(want.PadCount())
		want.ICRC = p.ICRC
		if len(want.Payload) == 0 {
			want.Payload = nil
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("frame %d:\n got %s\nwant %s", i, Describe(&p), Describe(&want))
		}
	}
	if _, _, err := r.ReadPacketData(); err == nil {
		t.Errorf("more frames than written")
	}
}

func TestPcapWriteFrameAndErrors(t *testing.T) {
	var buf bytes.Buffer
	pw, err := NewPcapWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	bad := Packet{BTH: BTHFields{Opcode: 0x15}}
	n := testNet4()
	if err := pw.WritePacket(VirtualTime(0), &bad, &n); err == nil {
		t.Error("WritePacket of a bad opcode succeeded")
	}
	p := samplePacket(RCSendOnly, 1, 4)
	fr, _ := p.AppendFrame(nil, &n)
	fr[len(fr)-1] ^= 0xff // a corrupted frame, recorded as is
	if err := pw.WriteFrame(VirtualTime(time.Second), fr); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	data, ci, err := r.ReadPacketData()
	if err != nil || !bytes.Equal(data, fr) || ci.Timestamp.Unix() != 1 {
		t.Errorf("read back %x at %v (%v)", data, ci.Timestamp, err)
	}
	if got := VirtualTime(1500 * time.Millisecond); got.UnixNano() != 1_500_000_000 || got.Location() != time.UTC {
		t.Errorf("VirtualTime = %v", got)
	}
}
