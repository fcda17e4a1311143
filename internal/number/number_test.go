package number_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/number"
)

const (
	notNumber = "not a number: write decimal or 0x hex"
	notSize   = "not a number: write decimal or 0x hex, optionally with k or m (4k is 4096)"
)

// A parseTest is one input and what Parse or ParseSize makes of it: want,
// or the error err when it is not "".
type parseTest struct {
	in   string
	bits int
	want uint64
	err  string
}

func runParseTests(t *testing.T, name string, parse func(string, int) (uint64, error), tests []parseTest) {
	t.Helper()
	for _, tc := range tests {
		got, err := parse(tc.in, tc.bits)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s(%q, %d) = %d, %v; want %d", name, tc.in, tc.bits, got, err, tc.want)
			}
			continue
		}
		if err == nil || err.Error() != tc.err {
			t.Errorf("%s(%q, %d) = %d, %v; want error %q", name, tc.in, tc.bits, got, err, tc.err)
		}
	}
}

func TestParse(t *testing.T) {
	runParseTests(t, "Parse", number.Parse, []parseTest{
		// Decimal, and a leading 0 changes nothing.
		{"0", 64, 0, ""},
		{"42", 64, 42, ""},
		{"0100", 64, 100, ""},
		{"08", 64, 8, ""},
		{"014", 8, 14, ""},
		{"000", 8, 0, ""},
		{" 7 ", 8, 7, ""},
		// Hex.
		{"0x2a", 64, 42, ""},
		{"0X2A", 64, 42, ""},
		{"0xDeadBeef", 32, 0xdeadbeef, ""},
		{"0x0100", 64, 256, ""},
		// Limits.
		{"255", 8, 255, ""},
		{"256", 8, 0, "too large (at most 255)"},
		{"0xffffff", 24, 0xffffff, ""},
		{"0x1000000", 24, 0, "too large (at most 16777215)"},
		{"18446744073709551615", 64, 1<<64 - 1, ""},
		{"18446744073709551616", 64, 0, "too large (at most 18446744073709551615)"},
		{"0x10000000000000000", 64, 0, "too large (at most 18446744073709551615)"},
		{"99999999999999999999999999", 32, 0, "too large (at most 4294967295)"},
		// Everything else.
		{"", 64, 0, notNumber},
		{"  ", 64, 0, notNumber},
		{"0x", 64, 0, notNumber},
		{"0b101", 64, 0, notNumber},
		{"0o17", 64, 0, notNumber},
		{"1_000", 64, 0, notNumber},
		{"0x_1", 64, 0, notNumber},
		{"-1", 64, 0, "negative: write 0 or more"},
		{"-0x10", 8, 0, "negative: write 0 or more"},
		{"--1", 64, 0, notNumber},
		{"-0", 64, 0, notNumber},
		{"-", 64, 0, notNumber},
		{"+1", 64, 0, notNumber},
		{"1.5", 64, 0, notNumber},
		{"12ab", 64, 0, notNumber},
		{"0xfg", 64, 0, notNumber},
		{"4k", 64, 0, notNumber},
		{"99999999999999999999x", 64, 0, notNumber},
		{"٣", 64, 0, notNumber},
	})
}

func TestParseSize(t *testing.T) {
	runParseTests(t, "ParseSize", number.ParseSize, []parseTest{
		{"4096", 63, 4096, ""},
		{"0x1000", 63, 4096, ""},
		{"0100", 63, 100, ""},
		{"4k", 63, 4096, ""},
		{"4K", 63, 4096, ""},
		{"1m", 63, 1 << 20, ""},
		{"1M", 63, 1 << 20, ""},
		{"0x10k", 63, 16 << 10, ""},
		{"0k", 63, 0, ""},
		{"4194304k", 32, 0, "too large (at most 4294967295)"},
		{"4194303k", 32, 4194303 << 10, ""},
		{"4096m", 32, 0, "too large (at most 4294967295)"},
		{"18446744073709551615", 63, 0, "too large (at most 9223372036854775807)"},
		{"18446744073709551615", 64, 1<<64 - 1, ""},
		{"2g", 63, 0, notSize},
		{"4kb", 63, 0, notSize},
		{"k", 63, 0, notSize},
		{"", 63, 0, notSize},
		{"0b1k", 63, 0, notSize},
		{"1_024", 63, 0, notSize},
		{"-1", 63, 0, "negative: write 0 or more"},
	})
}

// TestError: callers can tell "too large" from "not a number" and name the input.
func TestError(t *testing.T) {
	_, err := number.Parse("300", 8)
	var ne *number.Error
	if !errors.As(err, &ne) || !ne.TooLarge || ne.Max != 255 || ne.Input != "300" {
		t.Errorf("Parse(300, 8) = %#v; want a *number.Error, TooLarge, Max 255, Input 300", err)
	}
	_, err = number.Parse("0b1", 8)
	if !errors.As(err, &ne) || ne.TooLarge || ne.Input != "0b1" {
		t.Errorf("Parse(0b1, 8) = %#v; want a *number.Error, not TooLarge", err)
	}
}

// FuzzParse: Parse never panics, and it reads decimal and 0x hex as strconv
// does with base 10 and 16.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "0100", "0x1f", "18446744073709551616", "0b1", "4k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := number.Parse(s, 64)
		t0 := strings.TrimSpace(s)
		base := 10
		if strings.HasPrefix(t0, "0x") || strings.HasPrefix(t0, "0X") {
			t0, base = t0[2:], 16
		}
		m, serr := strconv.ParseUint(t0, base, 64)
		if (err == nil) != (serr == nil) || (err == nil && n != m) {
			t.Errorf("Parse(%q) = %d, %v; strconv reads %d, %v", s, n, err, m, serr)
		}
	})
}
