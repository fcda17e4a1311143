package picture

import (
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vsh-rdma/vsh/shell/render"
)

var twoHosts = []Column{{Name: "sim0", Sub: "qp0 0x000011"}, {Name: "sim1", Sub: "qp1 0x000011"}}

func send(from, to int, label ...string) Arrow {
	return Arrow{Time: "2.054µs", From: from, To: to, Label: label}
}

// checkLines fails when a line is wider than w, or the text holds an
// escape code.
func checkLines(t *testing.T, text string, w int) {
	t.Helper()
	if strings.Contains(text, "\x1b") {
		t.Errorf("plain text holds an escape code:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("line of %d cells in a %d-cell picture: %q", n, w, l)
		}
	}
}

// checkSVG fails unless doc is one well-formed <svg> element.
func checkSVG(t *testing.T, doc string) {
	t.Helper()
	if !strings.HasPrefix(doc, "<svg ") || !strings.HasSuffix(doc, "</svg>\n") {
		t.Errorf("not one <svg> element: %.60q ... %q", doc, doc[max(0, len(doc)-20):])
	}
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, doc)
		}
	}
	for _, bad := range []string{"<?xml", "<style", " id=", "href"} {
		if strings.Contains(doc, bad) {
			t.Errorf("SVG holds %q, which does not belong inline in a page", bad)
		}
	}
}

func TestLadderText(t *testing.T) {
	long := strings.Repeat("RDMA_WRITE_MIDDLE_", 10)
	tests := []struct {
		name  string
		l     Ladder
		width int
		want  []string // substrings, in order
		not   []string
	}{
		{"one packet and its ACK", Ladder{Title: "2 packets", Columns: twoHosts, Arrows: []Arrow{
			send(0, 1, "SEND_ONLY", "psn=0x000000", "AckReq"), send(1, 0, "ACKNOWLEDGE", "psn=0x000000")}}, 80,
			[]string{"2 packets", "sim0", "sim1", "qp0 0x000011", "│─", "SEND_ONLY psn=0x000000 AckReq", "─▶│", "│◀─", "ACKNOWLEDGE"},
			[]string{"↻", "✗"}},
		{"a long label loses words, then letters", Ladder{Columns: twoHosts, Arrows: []Arrow{
			send(0, 1, long, "psn=0x000001")}}, 40, []string{"RDMA_WRITE…", " ─▶│"}, []string{"psn="}},
		{"a drop ends in ✗ with its reason under it", Ladder{Columns: twoHosts, Arrows: []Arrow{
			{Time: "1µs", From: 1, To: 0, Label: []string{"ACKNOWLEDGE"}, Dropped: true, Note: "dropped: fault rule 1 (drop)"}}}, 80,
			[]string{"✗─", "ACKNOWLEDGE", "dropped: fault rule 1 (drop)", "✗ dropped on the way"}, []string{"◀"}},
		{"a retransmission is marked", Ladder{Columns: twoHosts, Arrows: []Arrow{
			{Time: "68ms", From: 0, To: 1, Label: []string{"RDMA_WRITE_ONLY"}, Retransmit: true}}}, 80,
			[]string{"↻ RDMA_WRITE_ONLY", "▶│", "↻ sent again"}, nil},
		{"an RNR NAK carries its note", Ladder{Columns: twoHosts, Arrows: []Arrow{
			{Time: "4µs", From: 1, To: 0, Label: []string{"ACKNOWLEDGE", "RNR_NAK"}, NAK: true, Note: "no receive WR: retry after 0.64ms"}}}, 80,
			[]string{"│◀", "ACKNOWLEDGE RNR_NAK", "no receive WR"}, nil},
		{"loopback: one column, a hook", Ladder{Columns: []Column{{Name: "sim0"}}, Arrows: []Arrow{
			send(0, 0, "SEND_ONLY", "psn=0x000000")}}, 80, []string{"sim0", "├─╮ SEND_ONLY", "│◀╯"}, nil},
		{"no packets: the columns alone", Ladder{Title: "nothing", Columns: twoHosts}, 80,
			[]string{"nothing", "sim0", "sim1"}, []string{"│"}},
		{"three columns", Ladder{Columns: append(twoHosts, Column{Name: "sim2"}), Arrows: []Arrow{
			send(0, 2, "SEND_ONLY"), send(2, 1, "ACKNOWLEDGE")}}, 80, []string{"sim2", "SEND_ONLY", "─▶│", "│◀"}, nil},
		{"a wide picture keeps every word", Ladder{Columns: twoHosts, Arrows: []Arrow{
			send(0, 1, "RDMA_WRITE_FIRST", "psn=0x000001", "len=1024", "va=0x555530ce1000", "rkey=0x15f")}}, 160,
			[]string{"RDMA_WRITE_FIRST psn=0x000001 len=1024 va=0x555530ce1000 rkey=0x15f"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.l.Text(tc.width, nil)
			if err != nil {
				t.Fatalf("Text(%d) = %v", tc.width, err)
			}
			checkLines(t, got, tc.width)
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("Text(%d) lacks %q (in order):\n%s", tc.width, w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("Text(%d) holds %q:\n%s", tc.width, w, got)
				}
			}
			again, _ := tc.l.Text(tc.width, nil)
			if again != got {
				t.Error("Text is not deterministic")
			}
			svg, err := tc.l.SVG()
			if err != nil {
				t.Fatalf("SVG() = %v", err)
			}
			checkSVG(t, svg)
		})
	}
}

func TestLadderErrors(t *testing.T) {
	tests := []struct {
		name  string
		l     Ladder
		width int
		want  string
	}{
		{"no columns", Ladder{}, 80, "at least one column"},
		{"an arrow to no column", Ladder{Columns: twoHosts, Arrows: []Arrow{send(0, 2, "X")}}, 80, "from column 0 to 2"},
		{"too narrow", Ladder{Columns: twoHosts, Arrows: []Arrow{send(0, 1, "X")}}, 10, "too narrow"},
	}
	for _, tc := range tests {
		if _, err := tc.l.Text(tc.width, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Text = %v; want %q", tc.name, err, tc.want)
		}
	}
	if _, err := (&Ladder{}).SVG(); err == nil {
		t.Error("SVG of a ladder without columns: no error")
	}
}

// TestLadderFitsEveryWidth: from the narrowest width up, no line is wider
// than asked and every arrow keeps its head.
func TestLadderFitsEveryWidth(t *testing.T) {
	l := &Ladder{Title: strings.Repeat("a long title ", 10), Columns: twoHosts, Arrows: []Arrow{
		send(0, 1, "RDMA_WRITE_LAST_WITH_IMMEDIATE", "psn=0x000003", "AckReq", "len=952"),
		{Time: "68.004126ms", From: 1, To: 0, Label: []string{"ACKNOWLEDGE", "NAK(PSN_SEQUENCE_ERROR)"}, NAK: true,
			Note: strings.Repeat("the responder saw a gap in PSNs ", 4)},
		{Time: "1s", From: 0, To: 1, Label: []string{"SEND_ONLY"}, Dropped: true, Note: "dropped: fault rule 1 (drop)"},
	}}
	for w := l.MinWidth(); w <= 200; w++ {
		got, err := l.Text(w, nil)
		if err != nil {
			t.Fatalf("Text(%d) = %v (MinWidth %d)", w, err, l.MinWidth())
		}
		checkLines(t, got, w)
		if strings.Count(got, "▶│") != 1 || strings.Count(got, "│◀") != 1 || !strings.Contains(got, "✗") {
			t.Fatalf("Text(%d) lost an arrow's head:\n%s", w, got)
		}
	}
}

func TestLadderColour(t *testing.T) {
	l := &Ladder{Columns: twoHosts, Arrows: []Arrow{send(0, 1, "SEND_ONLY")}}
	plain, _ := l.Text(80, render.New(true))
	colour, _ := l.Text(80, render.New(false))
	if !strings.Contains(colour, "\x1b[") {
		t.Error("no colour on a terminal")
	}
	if render.StripANSI(colour) != plain {
		t.Errorf("colour and plain differ in more than colour:\n%s\n%s", render.StripANSI(colour), plain)
	}
}

// rcDiagram is the QP state diagram's shape, as the shell builds it.
func rcDiagram() *Diagram {
	return &Diagram{Title: "qp0", Nodes: []Node{
		{Name: "RESET", Visited: true}, {Name: "INIT", Col: 1, Visited: true}, {Name: "RTR", Col: 2, Visited: true},
		{Name: "RTS", Col: 3, Current: true, Visited: true}, {Name: "SQD", Col: 4},
		{Name: "ERR", Row: 1}, {Name: "SQE", Col: 3, Row: 1}},
		Edges: []Edge{{From: "RESET", To: "INIT", Taken: true}, {From: "INIT", To: "RTR", Taken: true},
			{From: "RTR", To: "RTS", Taken: true}, {From: "RTS", To: "SQD"}, {From: "SQD", To: "RTS"},
			{From: "SQE", To: "RTS"}, {From: "RTS", To: "SQE", Auto: true}, {From: "ERR", To: "RESET"}},
		Notes: []string{"any state → ERR"}}
}

func TestDiagramText(t *testing.T) {
	d := rcDiagram()
	for _, w := range []int{d.MinWidth(), 75, 80, 160} {
		got, err := d.Text(w, nil)
		if err != nil {
			t.Fatalf("Text(%d) = %v", w, err)
		}
		checkLines(t, got, w)
		for _, want := range []string{"[RTS]", "╔", "┏", "━▶", "◀─", "┆", "▲", "▼", "any state → ERR"} {
			if !strings.Contains(got, want) {
				t.Errorf("Text(%d) lacks %q:\n%s", w, want, got)
			}
		}
		if strings.Contains(got, "[RESET]") {
			t.Errorf("Text(%d) lights a state that is not current:\n%s", w, got)
		}
	}
	colour, _ := d.Text(80, render.New(false))
	if strings.Contains(colour, "[RTS]") || !strings.Contains(render.StripANSI(colour), " RTS ") {
		t.Errorf("on a terminal the current state is lit, not bracketed:\n%s", colour)
	}
	if _, err := d.Text(d.MinWidth()-1, nil); err == nil {
		t.Errorf("Text(%d) below MinWidth: no error", d.MinWidth()-1)
	}
	svg, err := d.SVG()
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg)
}

func TestDiagramLayoutErrors(t *testing.T) {
	tests := []struct {
		name string
		d    Diagram
		want string
	}{
		{"empty", Diagram{}, "at least one state"},
		{"two in one cell", Diagram{Nodes: []Node{{Name: "A"}, {Name: "B"}}}, "both at"},
		{"negative cell", Diagram{Nodes: []Node{{Name: "A", Col: -1}}}, "grid starts"},
		{"diagonal edge", Diagram{Nodes: []Node{{Name: "A"}, {Name: "B", Col: 1, Row: 1}},
			Edges: []Edge{{From: "A", To: "B"}}}, "neither a row nor a column"},
		{"crossing a box", Diagram{Nodes: []Node{{Name: "A"}, {Name: "B", Col: 1}, {Name: "C", Col: 2}},
			Edges: []Edge{{From: "A", To: "C"}}}, "cross state B"},
		{"unknown state", Diagram{Nodes: []Node{{Name: "A"}}, Edges: []Edge{{From: "A", To: "Z"}}}, "both ends"},
	}
	for _, tc := range tests {
		_, err := tc.d.Text(200, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Text = %v; want %q", tc.name, err, tc.want)
		}
		if _, err := tc.d.SVG(); err == nil {
			t.Errorf("%s: SVG: no error", tc.name)
		}
	}
}

func TestSVGEscapes(t *testing.T) {
	l := &Ladder{Title: `<script>alert("x")</script> & co`, Columns: []Column{{Name: "a<b"}, {Name: "c&d"}},
		Arrows: []Arrow{send(0, 1, `"quoted"`, "<tag>")}}
	svg, err := l.SVG()
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, svg)
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<tag>") {
		t.Errorf("text not escaped:\n%s", svg)
	}
}

func TestCutAndWrap(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{{"abcdef", 6, "abcdef"}, {"abcdef", 4, "abc…"}, {"abcdef", 1, "…"}, {"abcdef", 0, ""}, {"é✗é✗", 3, "é✗…"}} {
		if got := cut(tc.s, tc.n); got != tc.want {
			t.Errorf("cut(%q, %d) = %q; want %q", tc.s, tc.n, got, tc.want)
		}
	}
	if got := wrap("one two three four", 9); strings.Join(got, "|") != "one two|three|four" {
		t.Errorf("wrap = %q", got)
	}
	if got := fitWords([]string{"SEND_ONLY", "psn=0x000000", "AckReq"}, 22); got != "SEND_ONLY psn=0x000000" {
		t.Errorf("fitWords = %q", got)
	}
}

// TestLadderSVGWrapsNotes: a long note wraps under its arrow, in lines no
// wider than the lane, instead of widening the picture.
func TestLadderSVGWrapsNotes(t *testing.T) {
	note := strings.Repeat("the responder saw a gap in PSNs ", 6)
	nak := Arrow{Time: "1µs", From: 1, To: 0, Label: []string{"ACKNOWLEDGE", "NAK(PSN_SEQUENCE_ERROR)"}, NAK: true}
	short, _ := (&Ladder{Columns: twoHosts, Arrows: []Arrow{nak}}).SVG()
	nak.Note = note
	long, err := (&Ladder{Columns: twoHosts, Arrows: []Arrow{nak}}).SVG()
	if err != nil {
		t.Fatal(err)
	}
	widthOf := func(svg string) string { return regexp.MustCompile(`width="(\d+)"`).FindStringSubmatch(svg)[1] }
	if widthOf(long) != widthOf(short) {
		t.Errorf("a long note widened the picture: %s px, %s px without it", widthOf(long), widthOf(short))
	}
	if n := strings.Count(long, `font-style="italic"`); n < 3 {
		t.Errorf("the note is on %d lines, want it wrapped on 3 or more", n)
	}
	var all []string
	for _, m := range regexp.MustCompile(`font-style="italic">([^<]*)<`).FindAllStringSubmatch(long, -1) {
		all = append(all, m[1])
	}
	if strings.Join(all, " ") != strings.TrimSpace(note) {
		t.Errorf("the wrapped note reads %q", strings.Join(all, " "))
	}
}
