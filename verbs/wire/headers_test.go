package wire

import (
	"encoding/hex"
	"testing"
)

// TestBTHBits sets one field at a time and checks the exact bytes, so each
// field's bit position is pinned. Reference: rxe_hdr.h BTH_*_MASK.
func TestBTHBits(t *testing.T) {
	tests := []struct {
		name string
		set  func(BTH)
		want string // 12 bytes, hex
		get  func(BTH) bool
	}{
		{"opcode", func(b BTH) { b.SetOpcode(UDSendOnly) }, "640000000000000000000000", func(b BTH) bool { return b.Opcode() == UDSendOnly }},
		{"se", func(b BTH) { b.SetSE(true) }, "008000000000000000000000", func(b BTH) bool { return b.SE() }},
		{"migreq", func(b BTH) { b.SetMigReq(true) }, "004000000000000000000000", func(b BTH) bool { return b.MigReq() }},
		{"pad 3", func(b BTH) { b.SetPadCount(3) }, "003000000000000000000000", func(b BTH) bool { return b.PadCount() == 3 }},
		{"pad 2", func(b BTH) { b.SetPadCount(2) }, "002000000000000000000000", func(b BTH) bool { return b.PadCount() == 2 }},
		{"tver", func(b BTH) { b.SetTVer(0xf) }, "000f00000000000000000000", func(b BTH) bool { return b.TVer() == 0xf }},
		{"pkey", func(b BTH) { b.SetPKey(0xffff) }, "0000ffff0000000000000000", func(b BTH) bool { return b.PKey() == 0xffff }},
		{"fecn", func(b BTH) { b.SetFECN(true) }, "000000008000000000000000", func(b BTH) bool { return b.FECN() }},
		{"becn", func(b BTH) { b.SetBECN(true) }, "000000004000000000000000", func(b BTH) bool { return b.BECN() }},
		{"dqpn", func(b BTH) { b.SetDestQP(0xff123456) }, "000000000012345600000000", func(b BTH) bool { return b.DestQP() == 0x123456 }},
		{"ackreq", func(b BTH) { b.SetAckReq(true) }, "000000000000000080000000", func(b BTH) bool { return b.AckReq() }},
		{"psn", func(b BTH) { b.SetPSN(0xffabcdef) }, "000000000000000000abcdef", func(b BTH) bool { return b.PSN() == 0xabcdef }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := make(BTH, BTHLen)
			tc.set(b)
			if got := hex.EncodeToString(b); got != tc.want {
				t.Errorf("bytes = %s, want %s", got, tc.want)
			}
			if !tc.get(b) {
				t.Errorf("getter does not read back the value")
			}
		})
	}
}

// TestBTHSettersKeepNeighbours checks that setters leave the other bits of
// a shared byte alone.
func TestBTHSettersKeepNeighbours(t *testing.T) {
	b := BTH(unhex(t, "ffffffffffffffffffffffff"))
	b.SetSE(false)
	b.SetPadCount(0)
	b.SetTVer(0)
	b.SetAckReq(false)
	b.SetFECN(false)
	b.SetDestQP(0)
	b.SetPSN(0)
	if got, want := hex.EncodeToString(b), "ff40ffff7f0000007f000000"; got != want {
		t.Errorf("bytes = %s, want %s", got, want)
	}
}

func TestBTHEncode(t *testing.T) {
	f := BTHFields{Opcode: UCSendOnly, MigReq: true, PadCount: 2, PKey: DefaultPKey, DestQP: 0xd3, PSN: 0xcf1710}
	b := make(BTH, BTHLen)
	for i := range b {
		b[i] = 0xee // reserved bits must come out zero
	}
	b.Encode(&f)
	// The BTH of the scapy vector (rocev2-wire.md §3, vector 2).
	if got, want := hex.EncodeToString(b), "2460ffff000000d300cf1710"; got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	if got := b.Fields(); got != f {
		t.Errorf("Fields() = %+v, want %+v", got, f)
	}
	all := BTHFields{Opcode: 0xff, SE: true, MigReq: true, PadCount: 3, TVer: 0xf, PKey: 0xffff, FECN: true, BECN: true, DestQP: 0xffffff, AckReq: true, PSN: 0xffffff}
	b.Encode(&all)
	if got, want := hex.EncodeToString(b), "ffffffffc0ffffff80ffffff"; got != want {
		t.Errorf("Encode(all ones) = %s, want %s", got, want)
	}
	if got := b.Fields(); got != all {
		t.Errorf("Fields() = %+v, want %+v", got, all)
	}
}

func TestExtensionHeaders(t *testing.T) {
	t.Run("RETH", func(t *testing.T) {
		f := RETHFields{VA: 0x0102030405060708, RKey: 0x090a0b0c, DMALen: 0x0d0e0f10}
		b := make(RETH, RETHLen)
		b.Encode(&f)
		if got, want := hex.EncodeToString(b), "0102030405060708090a0b0c0d0e0f10"; got != want {
			t.Errorf("bytes = %s, want %s", got, want)
		}
		if b.Fields() != f {
			t.Errorf("Fields() = %+v, want %+v", b.Fields(), f)
		}
	})
	t.Run("AETH", func(t *testing.T) {
		f := AETHFields{Syndrome: RNRNAK(12), MSN: 0x123456}
		b := make(AETH, AETHLen)
		b.Encode(&f)
		if got, want := hex.EncodeToString(b), "2c123456"; got != want {
			t.Errorf("bytes = %s, want %s", got, want)
		}
		if b.Fields() != f {
			t.Errorf("Fields() = %+v, want %+v", b.Fields(), f)
		}
	})
	t.Run("AtomicETH", func(t *testing.T) {
		f := AtomicETHFields{VA: 0x0102030405060708, RKey: 0x090a0b0c, SwapAdd: 0x1112131415161718, Compare: 0x2122232425262728}
		b := make(AtomicETH, AtomicETHLen)
		b.Encode(&f)
		// Packed: no padding after the 32-bit R_Key.
		if got, want := hex.EncodeToString(b), "0102030405060708090a0b0c11121314151617182122232425262728"; got != want {
			t.Errorf("bytes = %s, want %s", got, want)
		}
		if b.Fields() != f {
			t.Errorf("Fields() = %+v, want %+v", b.Fields(), f)
		}
	})
	t.Run("DETH", func(t *testing.T) {
		f := DETHFields{QKey: 0x80010000, SrcQP: 0xabcdef}
		b := DETH(unhex(t, "ffffffffffffffff"))
		b.Encode(&f)
		if got, want := hex.EncodeToString(b), "8001000000abcdef"; got != want {
			t.Errorf("bytes = %s, want %s", got, want)
		}
		if b.Fields() != f {
			t.Errorf("Fields() = %+v, want %+v", b.Fields(), f)
		}
	})
	t.Run("XRCETH", func(t *testing.T) {
		// Byte 0 reserved, bytes 1-3 the XRC SRQ number.
		b := XRCETH(unhex(t, "ffffffff"))
		b.Encode(0xff123456)
		if got, want := hex.EncodeToString(b), "00123456"; got != want {
			t.Errorf("Encode: bytes = %s, want %s", got, want)
		}
		if got := b.SRQN(); got != 0x123456 {
			t.Errorf("SRQN() = %#x, want 0x123456", got)
		}
		b = XRCETH(unhex(t, "ab000000"))
		b.SetSRQN(0xabcdef)
		if got, want := hex.EncodeToString(b), "ababcdef"; got != want {
			t.Errorf("SetSRQN: bytes = %s, want %s (reserved byte kept)", got, want)
		}
		if got := b.SRQN(); got != 0xabcdef {
			t.Errorf("SRQN() = %#x with a non-zero reserved byte, want 0xabcdef", got)
		}
	})
	t.Run("ImmDt IETH AtomicAckETH", func(t *testing.T) {
		i := make(ImmDt, ImmDtLen)
		i.SetImm(0x01020304)
		v := make(IETH, IETHLen)
		v.SetRKey(0x0a0b0c0d)
		a := make(AtomicAckETH, AtomicAckETHLen)
		a.SetOrigData(0x1122334455667788)
		if got := hex.EncodeToString(i) + hex.EncodeToString(v) + hex.EncodeToString(a); got != "010203040a0b0c0d1122334455667788" {
			t.Errorf("bytes = %s", got)
		}
		if i.Imm() != 0x01020304 || v.RKey() != 0x0a0b0c0d || a.OrigData() != 0x1122334455667788 {
			t.Errorf("getters do not read back")
		}
	})
}
