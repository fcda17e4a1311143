package wire

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		p    Packet
		want string
	}{
		{
			"issue example",
			Packet{BTH: BTHFields{Opcode: RCSendFirst, PKey: DefaultPKey, DestQP: 0x11, PSN: 0xa3f1, AckReq: true}, Payload: make([]byte, 1024)},
			"RC SEND_FIRST dqpn=0x000011 psn=0x00a3f1 ackreq len=1024",
		},
		{
			"SEND LAST with immediate, solicited",
			Packet{BTH: BTHFields{Opcode: UCSendLastImm, SE: true, PKey: DefaultPKey, DestQP: 0xabcdef, PSN: 0xffffff}, ImmDt: 0x01020304, Payload: make([]byte, 3)},
			"UC SEND_LAST_WITH_IMMEDIATE dqpn=0xabcdef psn=0xffffff se imm=0x01020304 len=3",
		},
		{
			"WRITE FIRST",
			Packet{BTH: BTHFields{Opcode: RCRDMAWriteFirst, PKey: DefaultPKey, DestQP: 0x11, PSN: 2}, RETH: RETHFields{VA: 0x7f0000001000, RKey: 0x1234, DMALen: 4096}, Payload: make([]byte, 1024)},
			"RC RDMA_WRITE_FIRST dqpn=0x000011 psn=0x000002 va=0x7f0000001000 rkey=0x00001234 dlen=4096 len=1024",
		},
		{
			"READ REQUEST zero VA",
			Packet{BTH: BTHFields{Opcode: RCRDMAReadRequest, PKey: DefaultPKey, DestQP: 0x11, PSN: 2, AckReq: true}, RETH: RETHFields{RKey: 0x1234, DMALen: 8}},
			"RC RDMA_READ_REQUEST dqpn=0x000011 psn=0x000002 ackreq va=0x0 rkey=0x00001234 dlen=8",
		},
		{
			"ACK",
			Packet{BTH: BTHFields{Opcode: RCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 2}, AETH: AETHFields{Syndrome: SyndromeACK, MSN: 2}},
			"RC ACKNOWLEDGE dqpn=0x000012 psn=0x000002 aeth=ACK msn=2",
		},
		{
			"RNR NAK",
			Packet{BTH: BTHFields{Opcode: RCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, AETH: AETHFields{Syndrome: RNRNAK(12), MSN: 1}},
			"RC ACKNOWLEDGE dqpn=0x000012 psn=0x000009 aeth=RNR_NAK(timer=12:0.64ms) msn=1",
		},
		{
			"NAK",
			Packet{BTH: BTHFields{Opcode: RCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, AETH: AETHFields{Syndrome: NAK(NAKRemoteAccessError)}},
			"RC ACKNOWLEDGE dqpn=0x000012 psn=0x000009 aeth=NAK(REMOTE_ACCESS_ERROR) msn=0",
		},
		{
			"atomic",
			Packet{BTH: BTHFields{Opcode: RCFetchAdd, PKey: DefaultPKey, DestQP: 0x12, PSN: 9, AckReq: true}, AtomicETH: AtomicETHFields{VA: 0x1000, RKey: 0x99, SwapAdd: 1}},
			"RC FETCH_ADD dqpn=0x000012 psn=0x000009 ackreq va=0x1000 rkey=0x00000099 add=0x1",
		},
		{
			"compare swap",
			Packet{BTH: BTHFields{Opcode: RCCompareSwap, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, AtomicETH: AtomicETHFields{VA: 0x1000, RKey: 0x99, SwapAdd: 2, Compare: 1}},
			"RC COMPARE_SWAP dqpn=0x000012 psn=0x000009 va=0x1000 rkey=0x00000099 swap=0x2 cmp=0x1",
		},
		{
			"atomic ack",
			Packet{BTH: BTHFields{Opcode: RCAtomicAcknowledge, PKey: DefaultPKey, DestQP: 0x11, PSN: 9}, AETH: AETHFields{Syndrome: SyndromeACK, MSN: 3}, AtomicAckETH: 41},
			"RC ATOMIC_ACKNOWLEDGE dqpn=0x000011 psn=0x000009 aeth=ACK msn=3 orig=0x29",
		},
		{
			"UD",
			Packet{BTH: BTHFields{Opcode: UDSendOnly, PKey: DefaultPKey, DestQP: 0x12, PSN: 7}, DETH: DETHFields{QKey: 0x11111111, SrcQP: 0x11}, Payload: make([]byte, 64)},
			"UD SEND_ONLY dqpn=0x000012 psn=0x000007 qkey=0x11111111 sqpn=0x000011 len=64",
		},
		{
			"invalidate, odd flags and pkey",
			Packet{BTH: BTHFields{Opcode: RCSendOnlyInvalidate, MigReq: true, FECN: true, BECN: true, PKey: 0x8001, DestQP: 0x12, PSN: 7}, IETH: 0x4242, Payload: []byte{}},
			"RC SEND_ONLY_WITH_INVALIDATE dqpn=0x000012 psn=0x000007 mig fecn becn pkey=0x8001 inv_rkey=0x00004242 len=0",
		},
		{
			"XRC SEND ONLY",
			Packet{BTH: BTHFields{Opcode: XRCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 3, AckReq: true}, XRCETH: 0x41, Payload: make([]byte, 5)},
			"XRC SEND_ONLY dqpn=0x000011 psn=0x000003 ackreq srqn=0x000041 len=5",
		},
		{
			"XRC WRITE ONLY with immediate: XRCETH, RETH, ImmDt in wire order",
			Packet{BTH: BTHFields{Opcode: XRCRDMAWriteOnlyImm, PKey: DefaultPKey, DestQP: 0x11, PSN: 4}, XRCETH: 0xff123456,
				RETH: RETHFields{VA: 0x1000, RKey: 0x1234, DMALen: 8}, ImmDt: 7, Payload: make([]byte, 8)},
			"XRC RDMA_WRITE_ONLY_WITH_IMMEDIATE dqpn=0x000011 psn=0x000004 srqn=0x123456 va=0x1000 rkey=0x00001234 dlen=8 imm=0x00000007 len=8",
		},
		{
			"XRC ACK carries no XRCETH",
			Packet{BTH: BTHFields{Opcode: XRCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 3}, XRCETH: 0x41, AETH: AETHFields{Syndrome: SyndromeACK, MSN: 1}},
			"XRC ACKNOWLEDGE dqpn=0x000012 psn=0x000003 aeth=ACK msn=1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Describe(&tc.p); got != tc.want {
				t.Errorf("Describe =\n %q\nwant\n %q", got, tc.want)
			}
			if got := string(AppendDescribe([]byte("> "), &tc.p)); got != "> "+tc.want {
				t.Errorf("AppendDescribe = %q", got)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	n4 := testNet4()
	n4.FixedID, n4.ID = true, 0x1234
	tests := []struct {
		name string
		p    Packet
		n    *Network
		want []string
	}{
		{
			"WRITE ONLY IMM over IPv4",
			samplePacket(RCRDMAWriteOnlyImm, 0x10, 5),
			&n4,
			[]string{
				"Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2",
				"Identification: 0x1234, DF",
				"Dst Port: 4791",
				"Opcode:          0x0b  RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE (Reliable Connection, RDMA_WRITE_ONLY_WITH_IMMEDIATE)",
				"Pad Count:       3",
				"PSN:             0x000010 (16)",
				"RDMA Extended Transport Header (RETH), 16 bytes",
				"Virtual Address: 0x00007f0000001000",
				"DMA Length:      15",
				"Immediate Data:  0xdeadbeef",
				"Payload, 5 bytes: 03 0a 11 18 1f",
				"Pad, 3 bytes",
				"computed over the masked IP, UDP and BTH headers",
				"Meaning: the only packet of an RC RDMA WRITE with immediate; it takes a receive WQE and completes it; the sender asks for an ACK (AckReq).",
			},
		},
		{
			"XRC SEND ONLY over IPv4",
			Packet{BTH: BTHFields{Opcode: XRCSendOnly, PKey: DefaultPKey, DestQP: 0x11, PSN: 3, AckReq: true}, XRCETH: 0x123456, Payload: []byte("hello")},
			&n4,
			[]string{
				"InfiniBand over UDP (RoCEv2), 28 bytes",
				"Opcode:          0xa4  XRC_SEND_ONLY (Extended Reliable Connection, SEND_ONLY)",
				"  XRC Extended Transport Header (XRCETH), 4 bytes\n    XRC SRQ:         0x123456\n  Payload, 5 bytes: 68 65 6c 6c 6f\n",
				"Meaning: the only packet of an XRC SEND; its XRCETH names the target's XRC SRQ 0x123456, which must be in the XRC domain of the target QP (dqpn); it takes a receive WQE from that SRQ and completes it; the sender asks for an ACK (AckReq).",
			},
		},
		{
			"NAK without network",
			Packet{BTH: BTHFields{Opcode: RCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, AETH: AETHFields{Syndrome: NAK(NAKPSNSequenceError), MSN: 4}, ICRC: 0x04030201},
			nil,
			[]string{
				"Syndrome:        0x60  NAK(PSN_SEQUENCE_ERROR)",
				"Invariant CRC:   0x04030201 (on the wire 01 02 03 04; as carried)",
				"Meaning: an RC NAK (PSN sequence error): the responder expected PSN 0x000009",
			},
		},
		{
			"RNR NAK code 25 over IPv6",
			Packet{BTH: BTHFields{Opcode: RCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, AETH: AETHFields{Syndrome: RNRNAK(25)}},
			func() *Network { n := testNet6(); return &n }(),
			[]string{
				"Internet Protocol Version 6",
				"retry after 61.44ms (rxe waits 61.41ms, a typo in its table)",
				"Meaning: an RC RNR NAK",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Explain(&tc.p, tc.n)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Explain lacks %q; got:\n%s", w, got)
				}
			}
		})
	}
	xrcACK := Explain(&Packet{BTH: BTHFields{Opcode: XRCAcknowledge, PKey: DefaultPKey, DestQP: 0x12, PSN: 9}, XRCETH: 0x41, AETH: AETHFields{Syndrome: RNRNAK(12)}}, nil)
	if strings.Contains(xrcACK, "XRCETH") || !strings.Contains(xrcACK, "Meaning: an XRC RNR NAK: ") {
		t.Errorf("Explain(XRC RNR NAK) shows an XRCETH or misnames the transport:\n%s", xrcACK)
	}
	if got := Explain(&Packet{BTH: BTHFields{Opcode: 0x81}}, nil); !strings.Contains(got, "rxe drops the packet") {
		t.Errorf("Explain(CNP) = %s", got)
	}
}

func TestExplainOpcode(t *testing.T) {
	tests := []struct {
		op   Opcode
		want []string
	}{
		{RCSendFirst, []string{"RC_SEND_FIRST (0x00)", "BTH, then payload (12 header bytes)", "takes a receive WQE\n", "the first packet of an RC SEND"}},
		{RCRDMAWriteLastImm, []string{"BTH+ImmDt, then payload (16 header bytes)", "takes a receive WQE and completes it"}},
		{UDSendOnlyImm, []string{"BTH+DETH+ImmDt, then payload (24 header bytes)", "the only packet of a UD SEND with immediate"}},
		{RCAtomicAcknowledge, []string{"BTH+AETH+AtomicAckETH (24 header bytes)", "a response, handled by the requester's completer", "recv WQE: none"}},
		{RCSendLast, []string{"completes the receive WQE taken by the FIRST packet"}},
		{0x81, []string{"CNP (0x81)", "not an opcode vsh or rxe carries"}},
		{XRCRDMAWriteOnlyImm, []string{"XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE (0xab): Extended Reliable Connection",
			"BTH+XRCETH+RETH+ImmDt, then payload (36 header bytes)", "the only packet of an XRC RDMA WRITE with immediate",
			"kernel rxe does not implement XRC"}},
		{XRCAcknowledge, []string{"BTH+AETH (16 header bytes)", "an XRC acknowledgement", "a response"}},
		{XRCRDMAReadRequest, []string{"BTH+XRCETH+RETH (32 header bytes)", "an XRC RDMA READ request"}},
		{0xb5, []string{"XRC_OPCODE_0xb5 (0xb5)", "not an opcode vsh or rxe carries"}},
	}
	for _, tc := range tests {
		got := ExplainOpcode(tc.op)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("ExplainOpcode(%v) lacks %q; got:\n%s", tc.op, w, got)
			}
		}
	}
}
