package wire

import (
	"errors"
	"testing"
)

// TestOpcodeTable checks every opcode against the reference table, written
// out here independently of opTable. Reference: rocev2-wire.md §2
// (include/rdma/ib_pack.h values, rxe_opcode.c headers and masks). The XRC
// rows are the RC rows under transport 0xa0 (Wireshark's packet-infiniband.c
// names 0xa0-0xb4, 0xb6, 0xb7), each request with a 4-byte XRCETH more.
func TestOpcodeTable(t *testing.T) {
	type row struct {
		op        Opcode
		str       string
		hdrs      Headers
		hdrLen    int
		payload   bool
		req       bool
		rwr, comp bool
		first     bool
		last      bool
	}
	const (
		I = HasImmDt
		R = HasRETH
		A = HasAETH
	)
	var want []row
	shared := []struct {
		low       Opcode
		name      string
		hdrs      Headers
		rwr, comp bool
		first     bool
		last      bool
	}{
		{0x00, "SEND_FIRST", 0, true, false, true, false},
		{0x01, "SEND_MIDDLE", 0, false, false, false, false},
		{0x02, "SEND_LAST", 0, false, true, false, true},
		{0x03, "SEND_LAST_WITH_IMMEDIATE", I, false, true, false, true},
		{0x04, "SEND_ONLY", 0, true, true, true, true},
		{0x05, "SEND_ONLY_WITH_IMMEDIATE", I, true, true, true, true},
		{0x06, "RDMA_WRITE_FIRST", R, false, false, true, false},
		{0x07, "RDMA_WRITE_MIDDLE", 0, false, false, false, false},
		{0x08, "RDMA_WRITE_LAST", 0, false, false, false, true},
		{0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", I, true, true, false, true},
		{0x0a, "RDMA_WRITE_ONLY", R, false, false, true, true},
		{0x0b, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", R | I, true, true, true, true},
	}
	size := map[Headers]int{0: 12, I: 16, R: 28, R | I: 32, A: 16, A | HasAtomicAckETH: 24,
		HasAtomicETH: 40, HasIETH: 16, HasDETH: 20, HasDETH | I: 24}
	for _, tr := range []struct {
		base   Opcode
		prefix string
	}{{0x00, "RC_"}, {0x20, "UC_"}} {
		for _, s := range shared {
			want = append(want, row{tr.base | s.low, tr.prefix + s.name, s.hdrs, size[s.hdrs], true, true, s.rwr, s.comp, s.first, s.last})
		}
	}
	rcOnly := []row{
		{0x0c, "RC_RDMA_READ_REQUEST", R, 28, false, true, false, false, true, true},
		{0x0d, "RC_RDMA_READ_RESPONSE_FIRST", A, 16, true, false, false, false, true, false},
		{0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, 12, true, false, false, false, false, false},
		{0x0f, "RC_RDMA_READ_RESPONSE_LAST", A, 16, true, false, false, false, false, true},
		{0x10, "RC_RDMA_READ_RESPONSE_ONLY", A, 16, true, false, false, false, true, true},
		{0x11, "RC_ACKNOWLEDGE", A, 16, false, false, false, false, true, true},
		{0x12, "RC_ATOMIC_ACKNOWLEDGE", A | HasAtomicAckETH, 24, false, false, false, false, true, true},
		{0x13, "RC_COMPARE_SWAP", HasAtomicETH, 40, false, true, false, false, true, true},
		{0x14, "RC_FETCH_ADD", HasAtomicETH, 40, false, true, false, false, true, true},
		{0x16, "RC_SEND_LAST_WITH_INVALIDATE", HasIETH, 16, true, true, false, true, false, true},
		{0x17, "RC_SEND_ONLY_WITH_INVALIDATE", HasIETH, 16, true, true, true, true, true, true},
	}
	want = append(want, rcOnly...)
	rc := append([]row(nil), want[:len(shared)]...)
	rc = append(rc, rcOnly...)
	want = append(want,
		row{0x64, "UD_SEND_ONLY", HasDETH, 20, true, true, true, true, true, true},
		row{0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", HasDETH | I, 24, true, true, true, true, true, true},
	)
	for _, r := range rc {
		x := r
		x.op = 0xa0 | r.op
		x.str = "X" + r.str
		if r.req {
			x.hdrs |= HasXRCETH
			x.hdrLen += XRCETHLen
		}
		want = append(want, x)
	}
	if got := len(Opcodes()); got != len(want) || got != 60 {
		t.Fatalf("len(Opcodes()) = %d, want %d (23 RC + 12 UC + 2 UD + 23 XRC)", got, len(want))
	}
	seen := map[Opcode]bool{}
	for _, w := range want {
		op := w.op
		seen[op] = true
		t.Run(w.str, func(t *testing.T) {
			if !op.Valid() {
				t.Fatalf("%#02x not Valid", uint8(op))
			}
			if got := op.String(); got != w.str {
				t.Errorf("String() = %q, want %q", got, w.str)
			}
			if got := op.Headers(); got != w.hdrs {
				t.Errorf("Headers() = %v, want %v", got, w.hdrs)
			}
			if got := op.HeaderLen(); got != w.hdrLen {
				t.Errorf("HeaderLen() = %d, want %d", got, w.hdrLen)
			}
			if got := op.HasPayload(); got != w.payload {
				t.Errorf("HasPayload() = %v, want %v", got, w.payload)
			}
			if got := op.IsRequest(); got != w.req {
				t.Errorf("IsRequest() = %v, want %v", got, w.req)
			}
			if got := op.IsResponse(); got == w.req {
				t.Errorf("IsResponse() = %v, want %v", got, !w.req)
			}
			if got := op.ConsumesRecvWQE(); got != w.rwr {
				t.Errorf("ConsumesRecvWQE() = %v, want %v", got, w.rwr)
			}
			if got := op.CompletesRecvWQE(); got != w.comp {
				t.Errorf("CompletesRecvWQE() = %v, want %v", got, w.comp)
			}
			if got := op.IsFirst(); got != w.first {
				t.Errorf("IsFirst() = %v, want %v", got, w.first)
			}
			if got := op.IsLast(); got != w.last {
				t.Errorf("IsLast() = %v, want %v", got, w.last)
			}
			if got := op.IsMiddle(); got != (!w.first && !w.last) {
				t.Errorf("IsMiddle() = %v, want %v", got, !w.first && !w.last)
			}
			if p, err := ParseOpcode(w.str); err != nil || p != op {
				t.Errorf("ParseOpcode(%q) = %v, %v", w.str, p, err)
			}
		})
	}
	for i := 0; i < 256; i++ {
		if op := Opcode(i); op.Valid() != seen[op] {
			t.Errorf("Opcode(%#02x).Valid() = %v, want %v", i, op.Valid(), seen[op])
		}
	}
}

// TestHeaderOffsets checks the wire order of extension headers in the
// opcodes that carry two. Reference: rxe_opcode.c offsets.
func TestHeaderOffsets(t *testing.T) {
	tests := []struct {
		op   Opcode
		h    Headers
		want int
	}{
		{RCRDMAWriteOnlyImm, HasRETH, 12},
		{RCRDMAWriteOnlyImm, HasImmDt, 28},
		{UDSendOnlyImm, HasDETH, 12},
		{UDSendOnlyImm, HasImmDt, 20},
		{RCAtomicAcknowledge, HasAETH, 12},
		{RCAtomicAcknowledge, HasAtomicAckETH, 16},
		{RCSendOnlyInvalidate, HasIETH, 12},
		{RCSendOnly, HasRETH, -1},
		{RCRDMAReadResponseMiddle, HasAETH, -1},
		// XRC requests: the XRCETH comes straight after the BTH and
		// pushes every other header back by 4 bytes.
		{XRCSendOnly, HasXRCETH, 12},
		{XRCSendOnlyImm, HasXRCETH, 12},
		{XRCSendOnlyImm, HasImmDt, 16},
		{XRCRDMAWriteOnly, HasXRCETH, 12},
		{XRCRDMAWriteOnly, HasRETH, 16},
		{XRCRDMAWriteOnlyImm, HasRETH, 16},
		{XRCRDMAWriteOnlyImm, HasImmDt, 32},
		{XRCRDMAReadRequest, HasRETH, 16},
		{XRCCompareSwap, HasAtomicETH, 16},
		{XRCSendOnlyInvalidate, HasIETH, 16},
		// XRC responses carry what RC responses carry, and no XRCETH.
		{XRCAcknowledge, HasXRCETH, -1},
		{XRCAcknowledge, HasAETH, 12},
		{XRCAtomicAcknowledge, HasAETH, 12},
		{XRCAtomicAcknowledge, HasAtomicAckETH, 16},
		{XRCRDMAReadResponseFirst, HasAETH, 12},
		{RCSendOnly, HasXRCETH, -1},
		{UDSendOnly, HasXRCETH, -1},
	}
	for _, tc := range tests {
		if got := tc.op.Offset(tc.h); got != tc.want {
			t.Errorf("%v.Offset(%v) = %d, want %d", tc.op, tc.h, got, tc.want)
		}
	}
}

func TestOpcodeNames(t *testing.T) {
	tests := []struct {
		op   Opcode
		want string
	}{
		{0x15, "RC_OPCODE_0x15"},
		{0x55, "RD_RESYNC"},
		{0x2c, "UC_OPCODE_0x2c"},
		{0x1c, "RC_FLUSH"},
		{0x1e, "RC_OPCODE_0x1e"},
		{0x40, "RD_SEND_FIRST"},
		{0x66, "UD_OPCODE_0x66"},
		{0x81, "CNP"},
		{0xb5, "XRC_OPCODE_0xb5"}, // RC's reserved 0x15
		{0xbc, "XRC_OPCODE_0xbc"}, // FLUSH is RC only
		{0xbd, "XRC_OPCODE_0xbd"}, // so is ATOMIC_WRITE
		{0xc0, "RSVD6_OPCODE_0xc0"},
	}
	for _, tc := range tests {
		if got := tc.op.String(); got != tc.want {
			t.Errorf("Opcode(%#02x).String() = %q, want %q", uint8(tc.op), got, tc.want)
		}
		if tc.op.Valid() {
			t.Errorf("Opcode(%#02x).Valid() = true", uint8(tc.op))
		}
	}
	if got, want := (HasRETH | HasImmDt).String(), "RETH+ImmDt"; got != want {
		t.Errorf("Headers.String() = %q, want %q", got, want)
	}
	if got, want := (HasImmDt | HasRETH | HasXRCETH).String(), "XRCETH+RETH+ImmDt"; got != want {
		t.Errorf("Headers.String() = %q, want %q (wire order)", got, want)
	}
}

// TestHeaderBits checks that the bit values of the headers that existed
// before XRC did not move when HasXRCETH was added.
func TestHeaderBits(t *testing.T) {
	for i, h := range []Headers{HasRDETH, HasDETH, HasRETH, HasAtomicETH, HasAETH, HasAtomicAckETH, HasImmDt, HasIETH, HasXRCETH} {
		if h != 1<<i {
			t.Errorf("header %d (%v) = %#x, want %#x", i, h, uint16(h), 1<<i)
		}
	}
}

// TestTransportNames checks the short and long names. Reference: Wireshark's
// packet-infiniband.c opcode names ("Extended Reliable Connection (XRC) -
// SEND First", as tshark -G values lists them).
func TestTransportNames(t *testing.T) {
	tests := []struct {
		t          Transport
		short, lng string
	}{
		{RC, "RC", "Reliable Connection"},
		{UC, "UC", "Unreliable Connection"},
		{RD, "RD", "Reliable Datagram"},
		{UD, "UD", "Unreliable Datagram"},
		{CNP, "CNP", "Congestion Notification"},
		{XRC, "XRC", "Extended Reliable Connection"},
		{6, "RSVD6", "Reserved"},
		{7, "RSVD7", "Reserved"},
	}
	for _, tc := range tests {
		if got := tc.t.String(); got != tc.short {
			t.Errorf("Transport(%d).String() = %q, want %q", uint8(tc.t), got, tc.short)
		}
		if got := tc.t.LongName(); got != tc.lng {
			t.Errorf("Transport(%d).LongName() = %q, want %q", uint8(tc.t), got, tc.lng)
		}
	}
	if got := XRCSendFirst.Transport(); got != XRC {
		t.Errorf("XRCSendFirst.Transport() = %v, want XRC", got)
	}
}

func TestParseOpcode(t *testing.T) {
	tests := []struct {
		in   string
		want Opcode
		err  bool
	}{
		{"RC_SEND_FIRST", RCSendFirst, false},
		{"rc send_first", RCSendFirst, false},
		{"  uc rdma-write-only  ", UCRDMAWriteOnly, false},
		{"IB_OPCODE_UD_SEND_ONLY", UDSendOnly, false},
		{"0x64", UDSendOnly, false},
		{"XRC_SEND_ONLY", XRCSendOnly, false},
		{"xrc rdma-write-only", XRCRDMAWriteOnly, false},
		{"IB_OPCODE_XRC_ACKNOWLEDGE", XRCAcknowledge, false},
		{"0xa4", XRCSendOnly, false},
		{"183", XRCSendOnlyInvalidate, false},
		{"0xb5", 0, true},
		{"XRC_FLUSH", 0, true},
		{"100", UDSendOnly, false},
		{"0100", UDSendOnly, false}, // decimal, not C's octal 0x40
		{"0b1100100", 0, true},
		{"0x15", 0, true},
		{"0x81", 0, true},
		{"RD_SEND_FIRST", 0, true},
		{"send", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseOpcode(tc.in)
		if tc.err {
			if !errors.Is(err, ErrBadOpcode) {
				t.Errorf("ParseOpcode(%q) = %v, %v; want ErrBadOpcode", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseOpcode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
