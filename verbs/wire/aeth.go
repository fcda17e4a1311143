package wire

import (
	"fmt"
	"strconv"
	"time"
)

// Syndrome is the AETH syndrome byte, laid out as R(7) | type(6:5) | value(4:0).
//
// Reference: rxe_hdr.h enum aeth_syndrome; Wireshark packet-infiniband.c.
type Syndrome uint8

// SyndromeType is bits 6:5 of a syndrome.
type SyndromeType uint8

// The syndrome types.
const (
	SynACK      SyndromeType = 0 // positive acknowledgement; value is the credit code
	SynRNRNAK   SyndromeType = 1 // receiver not ready; value is the RNR timer code
	SynReserved SyndromeType = 2
	SynNAK      SyndromeType = 3 // negative acknowledgement; value is the NAK code
)

// String returns ACK, RNR_NAK, RESERVED or NAK.
func (t SyndromeType) String() string {
	switch t {
	case SynACK:
		return "ACK"
	case SynRNRNAK:
		return "RNR_NAK"
	case SynNAK:
		return "NAK"
	}
	return "RESERVED"
}

// CreditsUnlimited is the ACK credit code meaning "unlimited or invalid";
// rxe always sends it (AETH_ACK_UNLIMITED).
const CreditsUnlimited = 0x1f

// SyndromeACK is the syndrome of every ACK rxe sends: ACK, unlimited credits (0x1f).
const SyndromeACK Syndrome = CreditsUnlimited

// ACK returns an ACK syndrome with a 5-bit credit code.
func ACK(credits uint8) Syndrome { return Syndrome(credits & 0x1f) }

// RNRNAK returns an RNR NAK syndrome (0x20 | timer), as rxe's responder sends
// with the QP's min_rnr_timer when no receive WQE is available.
func RNRNAK(t RNRTimer) Syndrome { return Syndrome(0x20 | uint8(t)&0x1f) }

// NAK returns a NAK syndrome (0x60 | code).
func NAK(code NAKCode) Syndrome { return Syndrome(0x60 | uint8(code)&0x1f) }

// Type returns the syndrome type.
func (s Syndrome) Type() SyndromeType { return SyndromeType(s>>5) & 3 }

// Value returns the low five bits: credit code, RNR timer code or NAK code.
func (s Syndrome) Value() uint8 { return uint8(s) & 0x1f }

// IsACK reports whether s is a positive ACK.
func (s Syndrome) IsACK() bool { return s.Type() == SynACK }

// IsRNRNAK reports whether s is an RNR NAK.
func (s Syndrome) IsRNRNAK() bool { return s.Type() == SynRNRNAK }

// IsNAK reports whether s is a NAK (not an RNR NAK).
func (s Syndrome) IsNAK() bool { return s.Type() == SynNAK }

// Credits returns the 5-bit credit code of an ACK (CreditsUnlimited = 31).
func (s Syndrome) Credits() uint8 { return s.Value() }

// RNRTimer returns the timer code of an RNR NAK.
func (s Syndrome) RNRTimer() RNRTimer { return RNRTimer(s.Value()) }

// NAKCode returns the code of a NAK.
func (s Syndrome) NAKCode() NAKCode { return NAKCode(s.Value()) }

// String returns a short form: ACK (unlimited credits), ACK(credits=5),
// RNR_NAK(timer=12:0.64ms), NAK(PSN_SEQUENCE_ERROR), RESERVED(0x45).
func (s Syndrome) String() string {
	switch s.Type() {
	case SynACK:
		if s.Credits() == CreditsUnlimited {
			return "ACK"
		}
		return "ACK(credits=" + strconv.Itoa(int(s.Credits())) + ")"
	case SynRNRNAK:
		return "RNR_NAK(timer=" + strconv.Itoa(int(s.Value())) + ":" + s.RNRTimer().String() + ")"
	case SynNAK:
		return "NAK(" + s.NAKCode().String() + ")"
	}
	return fmt.Sprintf("RESERVED(0x%02x)", uint8(s))
}

// NAKCode is the value of a NAK syndrome.
type NAKCode uint8

// The NAK codes. rxe sends the first four; InvalidRDRequest is listed only by
// Wireshark (RD is not implemented).
const (
	NAKPSNSequenceError       NAKCode = 0 // syndrome 0x60
	NAKInvalidRequest         NAKCode = 1 // syndrome 0x61
	NAKRemoteAccessError      NAKCode = 2 // syndrome 0x62
	NAKRemoteOperationalError NAKCode = 3 // syndrome 0x63
	NAKInvalidRDRequest       NAKCode = 4 // syndrome 0x64
)

var nakNames = [...]string{
	"PSN_SEQUENCE_ERROR",
	"INVALID_REQUEST",
	"REMOTE_ACCESS_ERROR",
	"REMOTE_OPERATIONAL_ERROR",
	"INVALID_RD_REQUEST",
}

// String returns the code's name, e.g. REMOTE_ACCESS_ERROR.
func (c NAKCode) String() string {
	if int(c) < len(nakNames) {
		return nakNames[c]
	}
	return "RESERVED_" + strconv.Itoa(int(c))
}

// Meaning explains, for a learner, what the requester does with the NAK.
// Reference: rxe_comp.c check_ack; the status names are enum ibv_wc_status.
func (c NAKCode) Meaning() string {
	switch c {
	case NAKPSNSequenceError:
		return "the responder saw a gap in PSNs; the requester goes back to the NAK's PSN and resends (Go-Back-N), and fails with IBV_WC_RETRY_EXC_ERR when retry_cnt runs out"
	case NAKInvalidRequest:
		return "the request was invalid (bad opcode sequence, unsupported operation, length error); the WQE completes with IBV_WC_REM_INV_REQ_ERR"
	case NAKRemoteAccessError:
		return "the R_Key, address range or access rights were refused; the WQE completes with IBV_WC_REM_ACCESS_ERR"
	case NAKRemoteOperationalError:
		return "the responder could not carry out the request; the WQE completes with IBV_WC_REM_OP_ERR"
	}
	return "an unknown NAK; rxe completes the WQE with IBV_WC_REM_OP_ERR"
}

// RNRTimer is the 5-bit RNR NAK timer code: how long the requester waits
// before it retries after an RNR NAK. Code 0 is the longest, 655.36 ms.
type RNRTimer uint8

// ibtaRNRMicros is the IBTA table (and Wireshark's), in microseconds.
var ibtaRNRMicros = [32]int64{
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// Duration returns the wait that rxe uses for the code (rxe_comp.c
// rnrnak_usec). It equals IBTADuration except for code 25, where rxe has
// 61410 µs instead of 61.44 ms; vsh keeps rxe's value.
func (t RNRTimer) Duration() time.Duration {
	if t&0x1f == 25 {
		return 61410 * time.Microsecond
	}
	return t.IBTADuration()
}

// IBTADuration returns the wait the specification (and Wireshark) gives.
func (t RNRTimer) IBTADuration() time.Duration {
	return time.Duration(ibtaRNRMicros[t&0x1f]) * time.Microsecond
}

// String returns the IBTA duration in milliseconds, as Wireshark prints it:
// "0.64ms", "655.36ms".
func (t RNRTimer) String() string {
	us := ibtaRNRMicros[t&0x1f]
	return fmt.Sprintf("%d.%02dms", us/1000, us%1000/10)
}

// RNRTimerFor returns the code with the shortest wait that is at least d
// (by the IBTA table), as a learner picks min_rnr_timer. Waits longer than
// 491.52 ms give code 0 (655.36 ms).
func RNRTimerFor(d time.Duration) RNRTimer {
	for c := 1; c < 32; c++ {
		if time.Duration(ibtaRNRMicros[c])*time.Microsecond >= d {
			return RNRTimer(c)
		}
	}
	return 0
}
