package render

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Column is a column of a [TableView]: its header, printed as given, and
// how it gives way when the table is wider than the output.
type Column struct {
	Header string
	// Drop orders the columns a narrow table leaves out: 1 first, then
	// 2, and so on; 0 is never left out.
	Drop int
	// Wrap lets the column's cells break at spaces, narrowing it to fit
	// once every column that may be left out is.
	Wrap bool
}

// TableView is a table that fits itself to the width of the output: it
// leaves out columns in their Drop order, then narrows the Wrap ones, and
// says in a line which columns it left out and how to see them.
type TableView struct {
	Columns []Column
	Rows    [][]string
	// More names another way to see the columns left out ("show cq0");
	// a wider output always shows them.
	More string
}

// Lines renders the table for an output width columns wide, of which the
// table starts indent columns in (a cell's "[7] "). A width of 0 or less, or
// one the table fits in, gives exactly what [Table] prints.
func (t TableView) Lines(width, indent int) []Line {
	headers := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		headers[i] = c.Header
	}
	natural := strings.Split(Table(headers, t.Rows), "\n")
	need := 0
	for _, l := range natural {
		need = max(need, Width(l))
	}
	room := width - indent
	if width <= 0 || need <= room {
		return lines(natural, Prose)
	}
	keep := make([]int, len(t.Columns)) // the columns kept, by index
	for i := range keep {
		keep[i] = i
	}
	widths := t.naturalWidths()
	var left []string
	for _, c := range t.dropOrder() {
		if spanOf(keep, widths) <= room {
			break
		}
		keep = without(keep, c)
	}
	for i, c := range t.Columns { // named in the table's order
		if !slices.Contains(keep, i) {
			left = append(left, c.Header)
		}
	}
	t.narrow(keep, widths, room)
	out := lines(t.layout(keep, widths), Prose)
	if len(left) > 0 {
		note := fmt.Sprintf("(%s left out to fit %d columns; --width %d shows them", strings.Join(left, ", "), width, need+indent)
		if t.More != "" {
			note += ", as does " + t.More
		}
		out = append(out, Line{Text: note + ")", Kind: Prose})
	}
	return out
}

func lines(ls []string, k Kind) []Line {
	out := make([]Line, len(ls))
	for i, l := range ls {
		out[i] = Line{Text: l, Kind: k}
	}
	return out
}

// naturalWidths are the columns' widths with nothing wrapped.
func (t TableView) naturalWidths() []int {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = Width(c.Header)
	}
	for _, r := range t.Rows {
		for i := range min(len(r), len(w)) {
			w[i] = max(w[i], Width(r[i]))
		}
	}
	return w
}

// dropOrder lists the columns that may be left out, first to go first.
func (t TableView) dropOrder() []int {
	var cs []int
	for i, c := range t.Columns {
		if c.Drop > 0 {
			cs = append(cs, i)
		}
	}
	sort.SliceStable(cs, func(a, b int) bool { return t.Columns[cs[a]].Drop < t.Columns[cs[b]].Drop })
	return cs
}

// spanOf is how wide the kept columns are, two spaces apart.
func spanOf(keep, widths []int) int {
	w := 0
	for i, c := range keep {
		if i > 0 {
			w += 2
		}
		w += widths[c]
	}
	return w
}

func without(keep []int, c int) []int {
	out := keep[:0:0]
	for _, k := range keep {
		if k != c {
			out = append(out, k)
		}
	}
	return out
}

// A wrapping column gets no narrower than its header, minWrap, and its
// longest word up to maxWord.
const (
	minWrap = 8
	maxWord = 20
)

// narrow takes the excess width off the wrapping columns, a column at a
// time off the widest, so that they end about as wide as each other.
func (t TableView) narrow(keep, widths []int, room int) {
	excess := spanOf(keep, widths) - room
	floor := map[int]int{}
	for _, c := range keep {
		if !t.Columns[c].Wrap {
			continue
		}
		f := max(minWrap, Width(t.Columns[c].Header))
		for _, r := range t.Rows {
			if c < len(r) {
				for _, w := range strings.FieldsFunc(r[c], func(r rune) bool { return r == ' ' || r == ',' }) {
					f = max(f, min(Width(w)+1, maxWord))
				}
			}
		}
		floor[c] = min(f, widths[c])
	}
	for ; excess > 0; excess-- {
		widest := -1
		for c, f := range floor {
			if widths[c] > f && (widest < 0 || widths[c] > widths[widest] || (widths[c] == widths[widest] && c < widest)) {
				widest = c
			}
		}
		if widest < 0 {
			return
		}
		widths[widest]--
	}
}

// layout draws the kept columns at the given widths, as Table draws a
// table: headers, a rule, then the rows, a wrapped cell on several lines.
func (t TableView) layout(keep, widths []int) []string {
	row := func(cells []string) []string {
		parts := make([][]string, len(keep))
		height := 1
		for i, c := range keep {
			text := ""
			if c < len(cells) {
				text = cells[c]
			}
			parts[i] = Wrap(Line{Text: text, Kind: Para}, widths[c])
			height = max(height, len(parts[i]))
		}
		out := make([]string, height)
		for h := range height {
			var b strings.Builder
			for i, c := range keep {
				if i > 0 {
					b.WriteString("  ")
				}
				p := ""
				if h < len(parts[i]) {
					p = parts[i][h]
				}
				b.WriteString(p)
				b.WriteString(strings.Repeat(" ", max(widths[c]-Width(p), 0)))
			}
			out[h] = strings.TrimRight(b.String(), " ")
		}
		return out
	}
	headers := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		headers[i] = c.Header
	}
	out := row(headers)
	out = append(out, strings.Repeat("-", spanOf(keep, widths)))
	for _, r := range t.Rows {
		out = append(out, row(r)...)
	}
	return out
}
