package wire

import (
	"strconv"
	"testing"
)

// The benchmarks report ns per packet and, through SetBytes, the rate over
// the bytes each call handles. Figures are reported by make bench, never
// asserted.

func BenchmarkEncode(b *testing.B) {
	n := testNet4()
	cases := []struct {
		name string
		p    Packet
	}{
		{"ACK", samplePacket(RCAcknowledge, 1, 0)},
		{"SEND_ONLY_1024", samplePacket(RCSendOnly, 1, 1024)},
		{"WRITE_FIRST_4096", samplePacket(RCRDMAWriteFirst, 1, 4096)},
	}
	for _, c := range cases {
		p := c.p
		buf := make([]byte, 0, 8192)
		b.Run(c.name+"/Append", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(p.Len()))
			for b.Loop() {
				if _, err := p.Append(buf[:0], &n); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/AppendIP", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(p.IPLen(&n)))
			for b.Loop() {
				if _, err := p.AppendIP(buf[:0], &n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	n := testNet4()
	for _, c := range []struct {
		name string
		p    Packet
	}{
		{"ACK", samplePacket(RCAcknowledge, 1, 0)},
		{"SEND_ONLY_1024", samplePacket(RCSendOnly, 1, 1024)},
		{"WRITE_FIRST_4096", samplePacket(RCRDMAWriteFirst, 1, 4096)},
	} {
		roce, _ := c.p.Append(nil, &n)
		ip, _ := c.p.AppendIP(nil, &n)
		var p Packet
		var nn Network
		b.Run(c.name+"/Decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(roce)))
			for b.Loop() {
				if err := Decode(roce, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/DecodeIP", func(b *testing.B) { // includes the ICRC check
			b.ReportAllocs()
			b.SetBytes(int64(len(ip)))
			for b.Loop() {
				if err := DecodeIP(ip, &p, &nn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkICRC(b *testing.B) {
	n := testNet4()
	for _, size := range []int{64, 1024, 4096} {
		p := samplePacket(RCSendOnly, 1, size)
		ip, _ := p.AppendIP(nil, &n)
		hdr, udp, body := ip[:20], ip[20:28], ip[28:len(ip)-ICRCLen]
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			var sink uint32
			for b.Loop() {
				sink += ICRC(hdr, udp, body)
			}
			_ = sink
		})
	}
}

func BenchmarkDescribe(b *testing.B) {
	p := samplePacket(RCRDMAWriteOnlyImm, 0xa3f1, 1024)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDescribe(buf[:0], &p)
	}
}
