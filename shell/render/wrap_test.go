package render

import (
	"fmt"
	"strings"
	"testing"
)

func TestWidth(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"qp0", 3},
		{"RESET → INIT", 12},
		{"4.096 µs", 8},
		{"日本語", 6},                      // wide runes take two columns
		{"e\u0301", 1},                  // a combining mark takes none
		{"\x1b[38;5;111mqp0\x1b[0m", 3}, // escapes take none
		{"\xff", 1},                     // an invalid byte shows as one
	} {
		if got := Width(tt.in); got != tt.want {
			t.Errorf("Width(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		name  string
		line  Line
		width int
		want  []string
	}{
		{"no width", Line{Text: "a b c d"}, 0, []string{"a b c d"}},
		{"fits", Line{Text: "a b c d"}, 7, []string{"a b c d"}},
		{"prose hangs two under its indent", Line{Text: "  one two three four"}, 12,
			[]string{"  one two", "    three", "    four"}},
		{"para keeps its indent", Line{Text: "  one two three four", Kind: Para}, 12,
			[]string{"  one two", "  three four"}},
		{"explicit hang", Line{Text: "error: one two three", Hang: 7}, 14,
			[]string{"error: one two", "       three"}},
		{"a word wider than the line is cut", Line{Text: "abcdefghij"}, 4,
			[]string{"abcd", "  ef", "  gh", "  ij"}},
		{"call hangs under its paren, breaks after , and |",
			Line{Text: "ibv_modify_qp(qp0, &attr, IBV_QP_STATE|IBV_QP_AV) = 0  [control path]", Kind: Call}, 40,
			[]string{"ibv_modify_qp(qp0, &attr, IBV_QP_STATE|", "              IBV_QP_AV) = 0", "              [control path]"}},
		{"attr hangs under its label", Line{Text: "attr: qp_state=IBV_QPS_RTR path_mtu=IBV_MTU_1024", Kind: Call}, 30,
			[]string{"attr: qp_state=IBV_QPS_RTR", "      path_mtu=IBV_MTU_1024"}},
		{"a call without a label hangs four", Line{Text: "wire #3 t=1µs sim0 → sim1 RC SEND_ONLY", Kind: Call}, 20,
			[]string{"wire #3 t=1µs sim0", "    → sim1 RC", "    SEND_ONLY"}},
		{"clauses break only between clauses",
			Line{Text: "hint: open_device A first; then alloc_pd ctx0", Kind: Clauses, Hang: 6}, 30,
			[]string{"hint: open_device A first;", "      then alloc_pd ctx0"}},
		{"clauses break before a remark", Line{Text: "hint: add dgid=qp1 sgid_index=1 (RoCE needs a GRH); x", Kind: Clauses, Hang: 6}, 40,
			[]string{"hint: add dgid=qp1 sgid_index=1", "      (RoCE needs a GRH); x"}},
		{"a clause wider than the line stays whole",
			Line{Text: "hint: modify_qp qp0 state=init port=1; x", Kind: Clauses, Hang: 6}, 10,
			[]string{"hint: modify_qp qp0 state=init port=1;", "     x"}}, // a hang is at most half the width
		{"verbatim is never broken", Line{Text: "same as: modify_qp qp0 state=rts", Kind: Verbatim}, 10,
			[]string{"same as: modify_qp qp0 state=rts"}},
		{"a hex dump's ascii column stays whole", Line{Text: "00  70 69  |pi|"}, 12,
			[]string{"00  70 69", "  |pi|"}},
		{"wide runes", Line{Text: "日本語 日本語"}, 7, []string{"日本語", "  日本", "  語"}},
		{"a style that spans a break is closed and opened again",
			Line{Text: "\x1b[31mred red red\x1b[0m plain"}, 8,
			[]string{"\x1b[31mred red\x1b[0m", "  \x1b[31mred\x1b[0m", "  plain"}},
		{"a hang wider than half the line is cut", Line{Text: "aaaa bbbb cccc", Hang: 9}, 10,
			[]string{"aaaa bbbb", "     cccc"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Wrap(tt.line, tt.width)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Wrap(%q, %d) =\n%q\nwant\n%q", tt.line.Text, tt.width, got, tt.want)
			}
		})
	}
}

// TestWrapAnyWidth wraps awkward lines at every width from 1: each returns,
// loses no visible text, and (but for a word or clause that cannot fit, or a
// verbatim line) keeps within the width.
func TestWrapAnyWidth(t *testing.T) {
	texts := []string{
		"ibv_modify_qp(qp0, &attr, IBV_QP_STATE|IBV_QP_ACCESS_FLAGS|IBV_QP_PKEY_INDEX|IBV_QP_PORT) = 0  [control path]",
		"    日本語のテキスト, and 4.096 µs × 2^timeout e\u0301e\u0301",
		"\x1b[1m\x1b[38;5;203merror: \x1b[0mmodify_qp: EINVAL: RTR|needs|IBV_QP_AV",
		"                                        far indent",
		"",
		"\xff\xfe broken utf-8",
	}
	for _, text := range texts {
		for _, k := range []Kind{Prose, Para, Call, Clauses} {
			for width := 1; width <= 120; width++ {
				got := Wrap(Line{Text: text, Kind: k}, width)
				var visible strings.Builder
				for _, l := range got {
					visible.WriteString(strings.ReplaceAll(StripANSI(l), " ", ""))
					if k != Clauses && Width(l) > max(width, 2) && !strings.HasPrefix(text, "    ") {
						t.Errorf("Wrap(%q, kind %d, %d): %q is %d wide", text, k, width, l, Width(l))
					}
				}
				if want := strings.ReplaceAll(StripANSI(text), " ", ""); visible.String() != want {
					t.Errorf("Wrap(%q, kind %d, %d) lost text: %q", text, k, width, got)
				}
			}
		}
	}
}

func ExampleWrap() {
	line := Line{Text: "ibv_modify_qp(qp0, &attr, IBV_QP_STATE|IBV_QP_PATH_MTU|IBV_QP_DEST_QPN) = 0  [control path]", Kind: Call}
	for _, l := range Wrap(line, 48) {
		fmt.Println(l)
	}
	// Output:
	// ibv_modify_qp(qp0, &attr, IBV_QP_STATE|
	//               IBV_QP_PATH_MTU|IBV_QP_DEST_QPN)
	//               = 0  [control path]
}
