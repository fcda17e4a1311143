package wire_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"time"

	"github.com/vsh-rdma/vsh/verbs/wire"
)

// Build an RC SEND, encode it as RoCEv2 bytes with its ICRC, decode it
// back and describe it.
func Example() {
	net := wire.Network{
		Src:     netip.MustParseAddr("::ffff:10.0.0.1"), // IPv4-mapped GIDs mean IPv4
		Dst:     netip.MustParseAddr("::ffff:10.0.0.2"),
		SrcPort: wire.SourcePort(0x11),
	}
	p := wire.Packet{
		BTH: wire.BTHFields{
			Opcode: wire.RCSendOnly,
			PKey:   wire.DefaultPKey,
			DestQP: 0x12,
			PSN:    0xa3f1,
			AckReq: true,
		},
		Payload: []byte("hello"),
	}
	buf := make([]byte, 0, 2048) // reused for every packet: no allocation
	buf, err := p.Append(buf[:0], &net)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", buf)

	var q wire.Packet
	if err := wire.Decode(buf, &q); err != nil {
		panic(err)
	}
	fmt.Println(wire.Describe(&q))
	fmt.Println("ICRC ok:", wire.VerifyICRC(buf, &net) == nil)
	// Output:
	// 04 30 ff ff 00 00 00 12 80 00 a3 f1 68 65 6c 6c 6f 00 00 00 23 64 fe b9
	// RC SEND_ONLY dqpn=0x000012 psn=0x00a3f1 ackreq len=5
	// ICRC ok: true
}

// Describe gives one line per packet, for traces.
func ExampleDescribe() {
	pkts := []wire.Packet{
		{BTH: wire.BTHFields{Opcode: wire.RCSendFirst, PKey: wire.DefaultPKey, DestQP: 0x11, PSN: 0xa3f1, AckReq: true}, Payload: make([]byte, 1024)},
		{BTH: wire.BTHFields{Opcode: wire.RCAcknowledge, PKey: wire.DefaultPKey, DestQP: 0x12, PSN: 0xa3f1},
			AETH: wire.AETHFields{Syndrome: wire.RNRNAK(12), MSN: 3}},
		{BTH: wire.BTHFields{Opcode: wire.UDSendOnlyImm, PKey: wire.DefaultPKey, DestQP: 0x13, PSN: 7},
			DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x14}, ImmDt: 0xcafe, Payload: make([]byte, 64)},
		{BTH: wire.BTHFields{Opcode: wire.XRCSendOnly, PKey: wire.DefaultPKey, DestQP: 0x11, PSN: 3, AckReq: true},
			XRCETH: 0x41, Payload: []byte("hello")},
	}
	for i := range pkts {
		fmt.Println(wire.Describe(&pkts[i]))
	}
	// Output:
	// RC SEND_FIRST dqpn=0x000011 psn=0x00a3f1 ackreq len=1024
	// RC ACKNOWLEDGE dqpn=0x000012 psn=0x00a3f1 aeth=RNR_NAK(timer=12:0.64ms) msn=3
	// UD SEND_ONLY_WITH_IMMEDIATE dqpn=0x000013 psn=0x000007 qkey=0x11111111 sqpn=0x000014 imm=0x0000cafe len=64
	// XRC SEND_ONLY dqpn=0x000011 psn=0x000003 ackreq srqn=0x000041 len=5
}

// Explain breaks a packet down field by field, as the shell's explain
// command shows it.
func ExampleExplain() {
	net := wire.Network{
		Src:     netip.MustParseAddr("10.0.0.1"),
		Dst:     netip.MustParseAddr("10.0.0.2"),
		SrcPort: wire.SourcePort(0x11),
	}
	p := wire.Packet{
		BTH:     wire.BTHFields{Opcode: wire.RCRDMAWriteOnly, PKey: wire.DefaultPKey, DestQP: 0x12, PSN: 5, AckReq: true},
		RETH:    wire.RETHFields{VA: 0x7f0000001000, RKey: 0x1234, DMALen: 6},
		Payload: []byte("abcdef"),
	}
	fmt.Print(wire.Explain(&p, &net))
	// Output:
	// Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2
	//     Total Length: 68, Identification: 0x0005, DF, TOS: 0x00, TTL: 64
	// User Datagram Protocol, Src Port: 57236, Dst Port: 4791, Length: 48
	// InfiniBand over UDP (RoCEv2), 40 bytes
	//   Base Transport Header (BTH), 12 bytes
	//     Opcode:          0x0a  RC_RDMA_WRITE_ONLY (Reliable Connection, RDMA_WRITE_ONLY)
	//     Solicited Event: 0
	//     MigReq:          0
	//     Pad Count:       2
	//     Header Version:  0
	//     Partition Key:   0xffff
	//     FECN, BECN:      0, 0
	//     Destination QP:  0x000012
	//     Acknowledge Req: 1
	//     PSN:             0x000005 (5)
	//   RDMA Extended Transport Header (RETH), 16 bytes
	//     Virtual Address: 0x00007f0000001000
	//     Remote Key:      0x00001234
	//     DMA Length:      6
	//   Payload, 6 bytes: 61 62 63 64 65 66
	//   Pad, 2 bytes (zeros, so that payload and pad fill whole 4-byte words)
	//   Invariant CRC:   0x5a771906 (on the wire 06 19 77 5a; computed over the masked IP, UDP and BTH headers)
	// Meaning: the only packet of an RC RDMA WRITE; the sender asks for an ACK (AckReq).
}

// A capture of two packets, timestamped by a virtual clock.
func ExamplePcapWriter() {
	net := wire.Network{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), SrcPort: wire.SourcePort(0x11)}
	var f bytes.Buffer // a file, in real use
	pw, err := wire.NewPcapWriter(&f)
	if err != nil {
		panic(err)
	}
	send := wire.Packet{BTH: wire.BTHFields{Opcode: wire.RCSendOnly, PKey: wire.DefaultPKey, DestQP: 0x12, PSN: 1, AckReq: true}, Payload: []byte("ping")}
	ack := wire.Packet{BTH: wire.BTHFields{Opcode: wire.RCAcknowledge, PKey: wire.DefaultPKey, DestQP: 0x11, PSN: 1}, AETH: wire.AETHFields{Syndrome: wire.SyndromeACK, MSN: 1}}
	back := wire.Network{Src: net.Dst, Dst: net.Src, SrcPort: wire.SourcePort(0x12)}
	_ = pw.WritePacket(wire.VirtualTime(0), &send, &net)
	_ = pw.WritePacket(wire.VirtualTime(3*time.Microsecond), &ack, &back)
	fmt.Println(f.Len(), "bytes of pcap")
	// Output:
	// 180 bytes of pcap
}

// ExampleOpcode_Matches: opcode= in a fault rule is any part of the full
// name, in any case.
func ExampleOpcode_Matches() {
	for _, text := range []string{"send_middle", "middle", "RC SEND", "uc_send", "ack"} {
		fmt.Println(text, wire.RCSendMiddle.Matches(text))
	}
	// Output:
	// send_middle true
	// middle true
	// RC SEND true
	// uc_send false
	// ack false
}
