package verbs

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/internal/number"
)

// A nameTable maps the values of one libibverbs enum to their names. Each
// entry has the full libibverbs name (prefix + suffix, e.g. IBV_QPS_RTS) and a
// short form (the suffix in lower case, e.g. rts), plus optional aliases.
// Parsing is case-insensitive and accepts the full name, the suffix, the short
// form, an alias, or a number (decimal or 0x hex).
type enumValue interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64 | ~int
}

type nameTable[T enumValue] struct {
	kind    string // "QP state", for messages
	prefix  string // "IBV_QPS_"
	entries []nameEntry[T]
}

type nameEntry[T any] struct {
	v       T
	suffix  string   // "RTS"
	aliases []string // extra accepted spellings, lower case
}

func (t *nameTable[T]) lookup(v T) (nameEntry[T], bool) {
	for _, e := range t.entries {
		if e.v == v {
			return e, true
		}
	}
	return nameEntry[T]{}, false
}

// name returns the full libibverbs name, or kind(number) when unknown.
func (t *nameTable[T]) name(v T) string {
	if e, ok := t.lookup(v); ok {
		return t.prefix + e.suffix
	}
	return fmt.Sprintf("%s(%d)", strings.TrimSuffix(t.prefix, "_"), uint64(v))
}

// short returns the short form (lower-case suffix), or the number when unknown.
func (t *nameTable[T]) short(v T) string {
	if e, ok := t.lookup(v); ok {
		return strings.ToLower(e.suffix)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// shorts lists every short form, in table order.
func (t *nameTable[T]) shorts() []string {
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		out[i] = strings.ToLower(e.suffix)
	}
	return out
}

func (t *nameTable[T]) parse(s string) (T, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty %s; one of: %s", t.kind, strings.Join(t.shorts(), ", "))
	}
	if n, isNum, err := parseNumber(in, bitSize[T]()); isNum {
		return T(n), err
	}
	up := strings.ToUpper(in)
	for _, e := range t.entries {
		if up == e.suffix || up == t.prefix+e.suffix {
			return e.v, nil
		}
		for _, a := range e.aliases {
			if strings.EqualFold(in, a) {
				return e.v, nil
			}
		}
	}
	msg := fmt.Sprintf("unknown %s %q", t.kind, s)
	if near := Nearest(strings.ToLower(strings.TrimPrefix(up, t.prefix)), t.shorts()); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return 0, fmt.Errorf("%s (one of: %s)", msg, strings.Join(t.shorts(), ", "))
}

// parseNumber reads s as the shell reads every number (package number):
// decimal or 0x hex, a leading 0 being decimal, of at most bitSize bits.
// isNum says s starts with a digit: it was meant as a number, not a name,
// and err says why it is not one.
func parseNumber(s string, bitSize int) (n uint64, isNum bool, err error) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false, nil
	}
	n, err = number.Parse(s, bitSize)
	return n, true, err
}

// bitSize is how many bits a T holds: 8 to 64, or a positive int's.
func bitSize[T enumValue]() int {
	if m := ^T(0); m > 0 {
		return bits.Len64(uint64(m))
	}
	return strconv.IntSize - 1
}

// A flagTable is a nameTable whose values are single bits that combine.
type flagTable[T ~uint32 | ~uint64] struct {
	nameTable[T]
}

// format prints the set bits as IBV_A|IBV_B, unknown bits as a hex number, 0 as "0".
func (t *flagTable[T]) format(v T, short bool) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	rest := v
	for _, e := range t.entries {
		if e.v != 0 && v&e.v == e.v {
			if short {
				parts = append(parts, strings.ToLower(e.suffix))
			} else {
				parts = append(parts, t.prefix+e.suffix)
			}
			rest &^= e.v
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint64(rest)))
	}
	sep := "|"
	if short {
		sep = ","
	}
	return strings.Join(parts, sep)
}

// parseFlags accepts a list separated by commas, pipes or plus signs, each
// item a name in any accepted form or a number; "0" and "" (with none) is 0.
func (t *flagTable[T]) parseFlags(s string) (T, error) {
	var v T
	s = strings.TrimSpace(s)
	if s == "" || s == "0" || strings.EqualFold(s, "none") {
		return 0, nil
	}
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == '+' }) {
		f, err := t.parse(item)
		if err != nil {
			return 0, err
		}
		v |= f
	}
	return v, nil
}

// bitsOf lists the single bits set in v, lowest first.
func bitsOf[T ~uint32 | ~uint64](v T) []T {
	var out []T
	for x := uint64(v); x != 0; x &= x - 1 {
		out = append(out, T(uint64(1)<<bits.TrailingZeros64(x)))
	}
	return out
}

// MaxSuggestWord is the longest word Nearest looks for a near name for:
// no name is longer, and a longer word is no typo of one. It bounds the
// cost of a suggestion (an edit distance is quadratic).
const MaxSuggestWord = 64

// Nearest returns the candidate closest to s by edit distance, when it is
// close enough to be a plausible typo (or s is a prefix of it); "" otherwise,
// and for a word longer than MaxSuggestWord. The shell uses it to suggest
// commands and argument names.
func Nearest(s string, candidates []string) string {
	if len(s) > MaxSuggestWord {
		return ""
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if s != "" && strings.HasPrefix(c, s) {
			return c
		}
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) > 6 {
		limit = 3
	}
	if bestD <= limit {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sortedKeys is a small helper for deterministic output of maps.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
