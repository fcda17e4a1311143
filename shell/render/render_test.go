package render

import (
	"fmt"
	"strings"
	"testing"
)

func TestStateLadder(t *testing.T) {
	main, side := []string{"RESET", "INIT", "RTR", "RTS"}, []string{"SQD", "SQE", "ERR"}
	for _, tt := range []struct {
		cur, want string
	}{
		{"RESET", "[RESET] → INIT → RTR → RTS | SQD SQE ERR"},
		{"RTR", "RESET → INIT → [RTR] → RTS | SQD SQE ERR"},
		{"ERR", "RESET → INIT → RTR → RTS | SQD SQE [ERR]"},
		{"?", "RESET → INIT → RTR → RTS | SQD SQE ERR"},
	} {
		if got := New(true).StateLadder(main, side, tt.cur); got != tt.want {
			t.Errorf("%s: %q; want %q", tt.cur, got, tt.want)
		}
	}
	colour := New(false).StateLadder(main, side, "RTR")
	if !strings.Contains(colour, "\x1b[") || !strings.Contains(colour, "[RTR]") {
		t.Errorf("on a terminal the lit state is highlighted, and bracketed: %q", colour)
	}
	// Saved without colour (a notebook), the current state still shows.
	if got := StripANSI(colour); got != "RESET → INIT → [RTR] → RTS | SQD SQE ERR" {
		t.Errorf("StripANSI: %q", got)
	}
}

func TestPlainRendersNothing(t *testing.T) {
	s := New(true)
	for _, text := range []string{"", "qp0", "ibv_post_send(qp0, 1 WR) = 0"} {
		if got := s.Render(s.Verb, text); got != text {
			t.Errorf("plain Render(%q) = %q", text, got)
		}
	}
	if !s.Plain() || New(false).Plain() {
		t.Error("Plain() does not say which styles are plain")
	}
}

func TestTable(t *testing.T) {
	for _, tt := range []struct {
		name    string
		headers []string
		rows    [][]string
		want    string
	}{
		{"headers kept as given", []string{"wr_id", "status"}, [][]string{{"1", "IBV_WC_SUCCESS"}, {"22", ""}},
			"wr_id  status\n-----------------------\n1      IBV_WC_SUCCESS\n22"},
		{"no headers", nil, [][]string{{"a", "b"}}, "a  b"},
	} {
		if got := Table(tt.headers, tt.rows); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

func ExampleKV() {
	fmt.Println(KV([][2]string{{"qp_state", "IBV_QPS_RTS"}, {"path_mtu", "IBV_MTU_1024"}, {"(no value)", ""}}))
	// Output:
	// qp_state    IBV_QPS_RTS
	// path_mtu    IBV_MTU_1024
	// (no value)
}

func ExampleStyles_StateLadder() {
	s := New(true) // plain: what a file or a notebook gets
	fmt.Println(s.StateLadder([]string{"RESET", "INIT", "RTR", "RTS"}, []string{"SQD", "SQE", "ERR"}, "INIT"))
	// Output: RESET → [INIT] → RTR → RTS | SQD SQE ERR
}
