package picture

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"

	"github.com/vsh-rdma/vsh/shell/render"
)

// tag is what a cell of a text picture shows, which decides its colour on
// a terminal.
type tag uint8

const (
	tagNone  tag = iota
	tagDim       // lifelines, boxes off the path, time
	tagHead      // column titles
	tagWire      // a packet's arrow
	tagBad       // a drop, a NAK
	tagRetry     // a retransmission
	tagPath      // the path a QP took
	tagLit       // the current state
)

// canvas is a grid of runes, each with a tag.
type canvas struct {
	w    int
	rows [][]rune
	tags [][]tag
}

func newCanvas(w, h int) *canvas {
	c := &canvas{w: w}
	for range h {
		c.addRow()
	}
	return c
}

// addRow appends a blank row and returns its index.
func (c *canvas) addRow() int {
	r := make([]rune, c.w)
	for i := range r {
		r[i] = ' '
	}
	c.rows = append(c.rows, r)
	c.tags = append(c.tags, make([]tag, c.w))
	return len(c.rows) - 1
}

// set puts r at (x, y); what falls outside is dropped.
func (c *canvas) set(x, y int, r rune, t tag) {
	if y < 0 || y >= len(c.rows) || x < 0 || x >= c.w {
		return
	}
	c.rows[y][x] = r
	c.tags[y][x] = t
}

// text writes s from (x, y) on, one rune a cell.
func (c *canvas) text(x, y int, s string, t tag) {
	for _, r := range s {
		c.set(x, y, r, t)
		x++
	}
}

// hline draws r from x0 to x1 inclusive.
func (c *canvas) hline(x0, x1, y int, r rune, t tag) {
	if x0 > x1 {
		x0, x1 = x1, x0
	}
	for x := x0; x <= x1; x++ {
		c.set(x, y, r, t)
	}
}

// String returns the rows, right-trimmed, styled run by run unless st is
// nil or plain.
func (c *canvas) String(st *render.Styles) string {
	var b strings.Builder
	for y, row := range c.rows {
		end := len(row)
		for end > 0 && row[end-1] == ' ' {
			end--
		}
		for x := 0; x < end; {
			j := x
			for j < end && c.tags[y][j] == c.tags[y][x] {
				j++
			}
			b.WriteString(paint(st, c.tags[y][x], string(row[x:j])))
			x = j
		}
		if y < len(c.rows)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// paint colours s as tag t asks, unless st is nil or plain.
func paint(st *render.Styles, t tag, s string) string {
	if st == nil || st.Plain() || strings.TrimSpace(s) == "" {
		return s
	}
	styles := [...]*lipgloss.Style{tagDim: &st.Dim, tagHead: &st.Header, tagWire: &st.Wire, tagBad: &st.Bad,
		tagRetry: &st.Hint, tagPath: &st.OK, tagLit: &st.Lit}
	if int(t) < len(styles) && styles[t] != nil {
		return st.Render(*styles[t], s)
	}
	return s
}

// width is the number of cells s takes: one a rune, as every rune the
// pictures use is one cell wide.
func width(s string) int { return utf8.RuneCountInString(s) }

// cut shortens s to at most n cells, ending in "…" when it had to cut.
func cut(s string, n int) string {
	if width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// fitWords joins the words, most important first, keeping as many as fit
// in n cells; when not even the first fits, it is cut.
func fitWords(words []string, n int) string {
	out := ""
	for i, w := range words {
		next := w
		if i > 0 {
			next = out + " " + w
		}
		if width(next) > n {
			if i == 0 {
				return cut(w, n)
			}
			break
		}
		out = next
	}
	return out
}

// wrap breaks text into lines of at most n cells at spaces; a word longer
// than n is cut.
func wrap(text string, n int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = cut(w, n)
		case width(cur)+1+width(w) <= n:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = cut(w, n)
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
