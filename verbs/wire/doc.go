// Package wire implements RoCEv2 packets as they travel on the wire: the
// InfiniBand transport headers (BTH, RETH, AETH, ImmDt, IETH, AtomicETH,
// AtomicAckETH, DETH, XRCETH), the opcode table of RC, UC, UD and XRC,
// 24-bit PSN arithmetic, the RNR timer table, the invariant CRC, IPv4/IPv6
// and UDP framing, the 40-byte GRH of UD receive buffers, and pcap captures
// that Wireshark decodes. Everything follows Linux soft-RoCE (rxe): the same
// bit layouts, the same ICRC, the same header checks on receive.
// Reference: ../shared/reference/rocev2-wire.md, which cites the rxe,
// ib_pack.h, Wireshark and scapy sources each fact comes from.
//
// vsh carries RC, UC, UD and XRC; rxe does not implement XRC. The XRC
// opcodes (the RC operations under transport 0xa0, with a 4-byte XRCETH
// naming the target's XRC SRQ after the BTH of every request) are here for
// vsh's simulator, which sends them when its XRC capability is on; a kernel
// rxe peer drops them (its check_type_state accepts only its QP's
// transport). Wireshark 4.0 names the XRC opcodes but shows everything
// after their BTH as undissected data.
//
// # Two levels
//
// Header views, in the manner of gVisor's pkg/tcpip/header, read and write
// fields in place: BTH(b).PSN(), BTH(b).SetAckReq(true), RETH(b).Encode(&f).
//
// A Packet holds a whole packet in decoded form (BTHFields plus the
// extension header fields its opcode carries, plus a Payload slice). This
// is what the simulator's transport builds and inspects:
//
//	// Build and send: one reused buffer, no allocation.
//	p := wire.Packet{
//		BTH:     wire.BTHFields{Opcode: wire.RCSendOnly, PKey: wire.DefaultPKey, DestQP: dqpn, PSN: psn, AckReq: true},
//		Payload: data,
//	}
//	net := wire.Network{Src: srcGID, Dst: dstGID, SrcPort: wire.SourcePort(sqpn)}
//	buf, err := p.Append(buf[:0], &net)     // BTH..ICRC: what a UDP socket sends
//	ipb, err := p.AppendIP(ipb[:0], &net)   // IPv4/IPv6 + UDP + the above
//
//	// Receive and parse: p.Payload aliases buf.
//	err = wire.Decode(buf, &p)              // checks lengths, TVer, opcode, pad
//	err = wire.VerifyICRC(buf, &net)        // the ICRC, given the framing
//	err = wire.DecodeIP(ipb, &p, &net)      // both at once, from an IP datagram
//
//	// Look at it.
//	fmt.Println(wire.Describe(&p))         // RC SEND_ONLY dqpn=0x000012 psn=0x000001 ackreq len=5
//	fmt.Print(wire.Explain(&p, &net))      // Wireshark-like breakdown
//
// Encoders choose the pad count and compute the ICRC themselves. Decoders
// never panic; they reject malformed packets with an *Error that wraps one
// of the sentinel errors (ErrShort, ErrBadOpcode, ErrBadTVer, ErrBadPad,
// ErrBadICRC, ...) and says why.
//
// # Determinism
//
// The ICRC of an IPv4 packet covers the IP identification, which rxe leaves
// to the kernel. Here it is the PSN's low 16 bits (IPv4ID) unless the
// Network fixes it, so the same script gives the same bytes, ICRCs and
// captures on every run. Capture timestamps come from the caller, normally
// the fabric's virtual clock (VirtualTime).
//
// # Captures
//
//	pw, err := wire.NewPcapWriter(f)
//	err = pw.WritePacket(wire.VirtualTime(now), &p, &net)
//
// writes Ethernet/IP/UDP/RoCEv2 frames through gopacket's pcapgo. tshark
// decodes them as InfiniBand over UDP port 4791; pass
// --disable-heuristic rpcrdma_infiniband so that SEND payloads are not
// taken for RPC-over-RDMA.
package wire
