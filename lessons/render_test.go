package lessons

import (
	"strings"
	"testing"
)

func TestRewrap(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"  short", []string{"  short"}},
		{"  aaaa bbbb cccc dddd", []string{"  aaaa bbbb", "  cccc dddd"}},
		{"  • aaaa bbbb cccc dddd", []string{"  • aaaa bbbb", "    cccc dddd"}},
		{"  1. aaaa bbbb cccc dd", []string{"  1. aaaa bbbb", "     cccc dd"}},
		{"      code code code code code", []string{"      code code code code code"}},
		{"\x1b[1m  \x1b[0m\x1b[1maaaa\x1b[0m\x1b[1m \x1b[0mbbbb cccc dddd", []string{"\x1b[1m  \x1b[0m\x1b[1maaaa\x1b[0m\x1b[1m \x1b[0mbbbb", "  cccc dddd"}},
	}
	for _, tc := range tests {
		got := rewrap(tc.in, 14)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("rewrap(%q, 14) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderStyled(t *testing.T) {
	md := "A paragraph with `code` and **bold** words that is long enough to need wrapping at least once or twice, surely.\n\n- a list item that is long enough to wrap around the right margin of the terminal, and then some\n"
	for _, plain := range []bool{true, false} {
		out := RenderMarkdown(md, plain)
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if n := visibleLen(l); n > Width {
				t.Errorf("plain=%v: a line of %d columns: %q", plain, n, l)
			}
		}
		if plain && strings.Contains(out, "\x1b") {
			t.Errorf("plain output has escapes: %q", out)
		}
		if !plain && !strings.Contains(out, "\x1b") {
			t.Errorf("styled output has no escapes")
		}
	}
}
