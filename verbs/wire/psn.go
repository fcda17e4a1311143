package wire

import "fmt"

// PSN is a 24-bit packet sequence number. Arithmetic wraps modulo 2^24, and
// comparison is by the shortest way round the circle, as rxe's psn_compare
// does: (s32)((a - b) << 8).
type PSN uint32

// PSNMask keeps the 24 bits of a PSN (BTH_PSN_MASK).
const PSNMask = 0xffffff

// Add returns p + n modulo 2^24; n may be negative.
func (p PSN) Add(n int) PSN { return PSN(uint32(p)+uint32(n)) & PSNMask }

// Next returns p + 1 modulo 2^24.
func (p PSN) Next() PSN { return p.Add(1) }

// Diff returns the signed distance p - q, in [-2^23, 2^23). It is positive
// when p is later than q.
func (p PSN) Diff(q PSN) int32 { return int32(uint32(p-q)<<8) >> 8 }

// Compare returns -1, 0 or +1 as p is earlier than, equal to or later than q.
func (p PSN) Compare(q PSN) int {
	switch d := p.Diff(q); {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// Before reports whether p is earlier than q.
func (p PSN) Before(q PSN) bool { return p.Diff(q) < 0 }

// After reports whether p is later than q.
func (p PSN) After(q PSN) bool { return p.Diff(q) > 0 }

// Between reports whether first <= p <= last, going forward from first; an
// RDMA READ's responses, for example, use the PSNs first..last.
func (p PSN) Between(first, last PSN) bool {
	return p.Diff(first) >= 0 && last.Diff(p) >= 0
}

// String formats the PSN as six hex digits: 0x00a3f1.
func (p PSN) String() string { return fmt.Sprintf("0x%06x", uint32(p)&PSNMask) }
