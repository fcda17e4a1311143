package number

import (
	"fmt"
	"math/bits"
	"strings"
)

// An Error is a number that could not be read. Its message leaves out the
// input, which the caller names in its own words ("bad length=08: ...").
type Error struct {
	Input    string // the text as given
	TooLarge bool   // it is a number, larger than Max
	Negative bool   // it is a number with a minus sign
	Max      uint64 // the largest value allowed here
	size     bool   // a size was expected, so k and m are mentioned
}

func (e *Error) Error() string {
	switch {
	case e.TooLarge:
		return fmt.Sprintf("too large (at most %d)", e.Max)
	case e.Negative:
		return "negative: write 0 or more"
	case e.size:
		return "not a number: write decimal or 0x hex, optionally with k or m (4k is 4096)"
	}
	return "not a number: write decimal or 0x hex"
}

// Parse reads s as an unsigned number of at most bitSize bits (1 to 64):
// decimal or 0x hex. A leading 0 is decimal: 0100 is 100.
func Parse(s string, bitSize int) (uint64, error) {
	return parse(s, bitSize, false)
}

// ParseSize reads a byte count: a number as [Parse] reads it, optionally
// followed by k (KiB) or m (MiB), in either case: 4096, 0x1000, 4k, 1m.
// The result fits in bitSize bits.
func ParseSize(s string, bitSize int) (uint64, error) {
	return parse(s, bitSize, true)
}

func parse(s string, bitSize int, size bool) (uint64, error) {
	if bitSize < 1 || bitSize > 64 {
		panic(fmt.Sprintf("number: bit size %d is not 1 to 64", bitSize))
	}
	max := uint64(1)<<bitSize - 1
	if bitSize == 64 {
		max = ^uint64(0)
	}
	bad := &Error{Input: s, Max: max, size: size}
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "-"); ok {
		if n, err := parse(rest, bitSize, size); err == nil && n > 0 || err != nil && err.(*Error).TooLarge {
			bad.Negative = true
		}
		return 0, bad
	}
	shift := 0
	if size && t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			shift, t = 10, t[:len(t)-1]
		case 'm', 'M':
			shift, t = 20, t[:len(t)-1]
		}
	}
	base, digits := uint64(10), t
	if len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		base, digits = 16, t[2:]
	}
	if digits == "" {
		return 0, bad
	}
	var n uint64
	tooLarge := false
	for i := 0; i < len(digits); i++ {
		d, ok := digit(digits[i], base)
		if !ok {
			return 0, bad
		}
		hi, lo := bits.Mul64(n, base)
		lo, carry := bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			tooLarge = true // keep reading: a stray letter later is the worse mistake
		}
		n = lo
	}
	if tooLarge || n > max>>shift {
		bad.TooLarge = true
		return 0, bad
	}
	return n << shift, nil
}

func digit(c byte, base uint64) (uint64, bool) {
	var d uint64
	switch {
	case '0' <= c && c <= '9':
		d = uint64(c - '0')
	case 'a' <= c && c <= 'f':
		d = uint64(c-'a') + 10
	case 'A' <= c && c <= 'F':
		d = uint64(c-'A') + 10
	default:
		return 0, false
	}
	return d, d < base
}
