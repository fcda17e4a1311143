package wire

import "net/netip"

func testNet4() Network {
	return Network{
		Src:     netip.MustParseAddr("10.0.0.1"),
		Dst:     netip.MustParseAddr("10.0.0.2"),
		SrcPort: SourcePort(0x11),
	}
}

func testNet6() Network {
	return Network{
		Src:     netip.MustParseAddr("fe80::200:aff:fe00:1"),
		Dst:     netip.MustParseAddr("fe80::200:aff:fe00:2"),
		SrcPort: SourcePort(0x11),
	}
}

// pattern returns n bytes of a recognisable, deterministic payload.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// samplePacket returns a packet with opcode op and every header field the
// opcode carries set to a distinct value.
func samplePacket(op Opcode, psn PSN, payload int) Packet {
	p := Packet{
		BTH: BTHFields{Opcode: op, PKey: DefaultPKey, DestQP: 0x000011 + uint32(op), PSN: psn},
	}
	if op.IsRequest() && op.IsLast() && (op.Transport() == RC || op.Transport() == XRC) {
		p.BTH.AckReq = true
	}
	if op.Has(HasDETH) {
		p.DETH = DETHFields{QKey: 0x11111111, SrcQP: 0x000012}
	}
	if op.Has(HasXRCETH) {
		p.XRCETH = 0x123456
	}
	if op.Has(HasRETH) {
		p.RETH = RETHFields{VA: 0x00007f0000001000, RKey: 0x00001234, DMALen: uint32(payload) * 3}
	}
	if op.Has(HasAtomicETH) {
		p.AtomicETH = AtomicETHFields{VA: 0x7f0000002000, RKey: 0x5678, SwapAdd: 0x0102030405060708, Compare: 0x1112131415161718}
	}
	if op.Has(HasAETH) {
		p.AETH = AETHFields{Syndrome: SyndromeACK, MSN: 7}
	}
	if op.Has(HasAtomicAckETH) {
		p.AtomicAckETH = 0x2a
	}
	if op.Has(HasImmDt) {
		p.ImmDt = 0xdeadbeef
	}
	if op.Has(HasIETH) {
		p.IETH = 0x00abcdef
	}
	if op.HasPayload() {
		p.Payload = pattern(payload)
	}
	return p
}
