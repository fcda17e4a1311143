package wire

import (
	"testing"
	"time"
)

func TestSyndrome(t *testing.T) {
	tests := []struct {
		s     Syndrome
		byte_ uint8
		typ   SyndromeType
		str   string
	}{
		{SyndromeACK, 0x1f, SynACK, "ACK"},
		{ACK(5), 0x05, SynACK, "ACK(credits=5)"},
		{RNRNAK(12), 0x2c, SynRNRNAK, "RNR_NAK(timer=12:0.64ms)"},
		{RNRNAK(0), 0x20, SynRNRNAK, "RNR_NAK(timer=0:655.36ms)"},
		{NAK(NAKPSNSequenceError), 0x60, SynNAK, "NAK(PSN_SEQUENCE_ERROR)"},
		{NAK(NAKInvalidRequest), 0x61, SynNAK, "NAK(INVALID_REQUEST)"},
		{NAK(NAKRemoteAccessError), 0x62, SynNAK, "NAK(REMOTE_ACCESS_ERROR)"},
		{NAK(NAKRemoteOperationalError), 0x63, SynNAK, "NAK(REMOTE_OPERATIONAL_ERROR)"},
		{NAK(NAKInvalidRDRequest), 0x64, SynNAK, "NAK(INVALID_RD_REQUEST)"},
		{NAK(9), 0x69, SynNAK, "NAK(RESERVED_9)"},
		{Syndrome(0x45), 0x45, SynReserved, "RESERVED(0x45)"},
		{Syndrome(0x9f), 0x9f, SynACK, "ACK"}, // bit 7 is reserved and ignored
	}
	for _, tc := range tests {
		if uint8(tc.s) != tc.byte_ {
			t.Errorf("%v = %#02x, want %#02x", tc.s, uint8(tc.s), tc.byte_)
		}
		if tc.s.Type() != tc.typ {
			t.Errorf("%#02x.Type() = %v, want %v", uint8(tc.s), tc.s.Type(), tc.typ)
		}
		if got := tc.s.String(); got != tc.str {
			t.Errorf("%#02x.String() = %q, want %q", uint8(tc.s), got, tc.str)
		}
		if got := string(appendSyndrome(nil, tc.s)); got != tc.str {
			t.Errorf("appendSyndrome(%#02x) = %q, want %q", uint8(tc.s), got, tc.str)
		}
		if tc.s.IsACK() != (tc.typ == SynACK) || tc.s.IsNAK() != (tc.typ == SynNAK) || tc.s.IsRNRNAK() != (tc.typ == SynRNRNAK) {
			t.Errorf("%#02x: Is* disagree with Type %v", uint8(tc.s), tc.typ)
		}
	}
	if got := RNRNAK(17).RNRTimer(); got != 17 {
		t.Errorf("RNRNAK(17).RNRTimer() = %d", got)
	}
	if got := NAK(NAKRemoteAccessError).NAKCode(); got != NAKRemoteAccessError {
		t.Errorf("NAKCode() = %v", got)
	}
}

// TestRNRTimerTable checks all 32 codes. Reference: rocev2-wire.md §4
// (rxe_comp.c rnrnak_usec, Wireshark aeth_syndrome_timer_code_vals).
func TestRNRTimerTable(t *testing.T) {
	ms := []float64{
		655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12,
		0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
		2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72,
		40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
	}
	for code, m := range ms {
		tm := RNRTimer(code)
		ibta := time.Duration(m*1000+0.5) * time.Microsecond
		if got := tm.IBTADuration(); got != ibta {
			t.Errorf("RNRTimer(%d).IBTADuration() = %v, want %v", code, got, ibta)
		}
		rxe := ibta
		if code == 25 {
			rxe = 61410 * time.Microsecond // rxe's typo, kept on purpose
		}
		if got := tm.Duration(); got != rxe {
			t.Errorf("RNRTimer(%d).Duration() = %v, want %v", code, got, rxe)
		}
	}
	for _, tc := range []struct {
		t    RNRTimer
		want string
	}{{12, "0.64ms"}, {0, "655.36ms"}, {1, "0.01ms"}, {31, "491.52ms"}, {25, "61.44ms"}} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("RNRTimer(%d).String() = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestRNRTimerFor(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want RNRTimer
	}{
		{0, 1},
		{10 * time.Microsecond, 1},
		{11 * time.Microsecond, 2},
		{640 * time.Microsecond, 12},
		{time.Millisecond, 14},
		{491520 * time.Microsecond, 31},
		{500 * time.Millisecond, 0},
	}
	for _, tc := range tests {
		if got := RNRTimerFor(tc.d); got != tc.want {
			t.Errorf("RNRTimerFor(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
