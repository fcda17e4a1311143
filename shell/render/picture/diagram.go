package picture

import (
	"fmt"

	"github.com/vsh-rdma/vsh/shell/render"
)

// Diagram is a state diagram laid out on a grid: a box per state, and
// arrows between boxes in one row or one column with no box between them.
// Moves that fit no such arrow ("any state → ERR") go in Notes.
type Diagram struct {
	// Title is the line above the picture.
	Title string
	Nodes []Node
	Edges []Edge
	// Notes are the lines under the picture: a legend, the moves not drawn.
	Notes []string
}

// Node is one state, at a cell of the grid.
type Node struct {
	Name     string
	Col, Row int
	Current  bool // the state now: lit, or [RTS] when plain
	Visited  bool // on the path taken: a heavy box
}

// Edge is a legal move from one state to another.
type Edge struct {
	From, To string
	Taken    bool // the path went along it: a heavy arrow
	Auto     bool // the device makes it (an error), not a call: dotted
}

// Diagram text layout.
const (
	boxH    = 3 // top border, label, bottom border
	rowGap  = 2 // rows between two rows of boxes: room for a vertical arrow
	minGap  = 3 // the narrowest gap between two columns of boxes
	maxGap  = 8
	padText = 2 // cells of the box around the label, on either side
)

// grid is a diagram's nodes by position, and its size.
type grid struct {
	cols, rows int
	at         map[[2]int]int // (col, row) → node index
	byName     map[string]int
}

// layout indexes the nodes and checks the edges.
func (d *Diagram) layout() (*grid, error) {
	g := &grid{at: map[[2]int]int{}, byName: map[string]int{}}
	for i, n := range d.Nodes {
		if n.Col < 0 || n.Row < 0 {
			return nil, fmt.Errorf("state %s is at (%d, %d); the grid starts at (0, 0)", n.Name, n.Col, n.Row)
		}
		if j, dup := g.at[[2]int{n.Col, n.Row}]; dup {
			return nil, fmt.Errorf("states %s and %s are both at (%d, %d)", d.Nodes[j].Name, n.Name, n.Col, n.Row)
		}
		g.at[[2]int{n.Col, n.Row}] = i
		g.byName[n.Name] = i
		g.cols, g.rows = max(g.cols, n.Col+1), max(g.rows, n.Row+1)
	}
	if len(d.Nodes) == 0 {
		return nil, fmt.Errorf("a diagram needs at least one state")
	}
	for _, e := range d.Edges {
		a, okA := g.byName[e.From]
		b, okB := g.byName[e.To]
		if !okA || !okB || a == b {
			return nil, fmt.Errorf("edge %s → %s: both ends must be states of the diagram, and differ", e.From, e.To)
		}
		na, nb := d.Nodes[a], d.Nodes[b]
		if na.Row != nb.Row && na.Col != nb.Col {
			return nil, fmt.Errorf("edge %s → %s: the states share neither a row nor a column", e.From, e.To)
		}
		for k, n := range d.Nodes {
			if k != a && k != b && between(na, nb, n) {
				return nil, fmt.Errorf("edge %s → %s would cross state %s", e.From, e.To, n.Name)
			}
		}
	}
	return g, nil
}

// between reports whether n lies strictly between a and b on their row or
// column.
func between(a, b, n Node) bool {
	if a.Row == b.Row && n.Row == a.Row {
		return n.Col > min(a.Col, b.Col) && n.Col < max(a.Col, b.Col)
	}
	if a.Col == b.Col && n.Col == a.Col {
		return n.Row > min(a.Row, b.Row) && n.Row < max(a.Row, b.Row)
	}
	return false
}

// boxWidths returns each grid column's box width: the longest label in it
// with room for [brackets] and padding.
func (d *Diagram) boxWidths(g *grid) []int {
	ws := make([]int, g.cols)
	for _, n := range d.Nodes {
		ws[n.Col] = max(ws[n.Col], width(n.Name)+2+2*padText)
	}
	return ws
}

// MinWidth returns the narrowest width, in columns, that Text accepts, or
// 0 when the diagram is malformed.
func (d *Diagram) MinWidth() int {
	g, err := d.layout()
	if err != nil {
		return 0
	}
	total := (g.cols - 1) * minGap
	for _, w := range d.boxWidths(g) {
		total += w
	}
	return total
}

// Text draws the diagram in at most w columns. st lights the current
// state on a terminal; nil or plain styles write it [RTS].
func (d *Diagram) Text(w int, st *render.Styles) (string, error) {
	g, err := d.layout()
	if err != nil {
		return "", err
	}
	ws := d.boxWidths(g)
	total := 0
	for _, bw := range ws {
		total += bw
	}
	if g.cols > 1 && total+(g.cols-1)*minGap > w {
		return "", fmt.Errorf("%d columns are too narrow for this diagram; it needs %d", w, total+(g.cols-1)*minGap)
	}
	if total > w {
		return "", fmt.Errorf("%d columns are too narrow for this diagram; it needs %d", w, total)
	}
	gap := maxGap
	if g.cols > 1 {
		gap = min(maxGap, (w-total)/(g.cols-1))
	}
	xs := make([]int, g.cols) // each column's left edge
	for i := 1; i < g.cols; i++ {
		xs[i] = xs[i-1] + ws[i-1] + gap
	}
	c := newCanvas(w, 0)
	for _, line := range wrap(d.Title, w) {
		c.text(0, c.addRow(), line, tagNone)
	}
	top := len(c.rows) + 1
	for range g.rows*(boxH+rowGap) - rowGap + 1 {
		c.addRow()
	}
	plain := st == nil || st.Plain()
	for _, n := range d.Nodes {
		drawBox(c, xs[n.Col], top+n.Row*(boxH+rowGap), ws[n.Col], n, plain)
	}
	for _, e := range d.Edges {
		a, b := d.Nodes[g.byName[e.From]], d.Nodes[g.byName[e.To]]
		back := d.hasEdge(e.To, e.From)
		if a.Row == b.Row {
			drawHEdge(c, xs, ws, top, a, b, e, back)
		} else {
			drawVEdge(c, xs, ws, top, a, b, e, back)
		}
	}
	c.addRow()
	for _, note := range d.Notes {
		for _, line := range wrap(note, w) {
			c.text(0, c.addRow(), line, tagDim)
		}
	}
	return c.String(st), nil
}

func (d *Diagram) hasEdge(from, to string) bool {
	for _, e := range d.Edges {
		if e.From == from && e.To == to {
			return true
		}
	}
	return false
}

// Box and line characters: light, heavy (the path), double (the current
// state) and dotted (the device's moves).
var (
	lightBox  = [6]rune{'┌', '┐', '└', '┘', '─', '│'}
	heavyBox  = [6]rune{'┏', '┓', '┗', '┛', '━', '┃'}
	doubleBox = [6]rune{'╔', '╗', '╚', '╝', '═', '║'}
)

// drawBox draws a node's box with its top-left corner at (x, y).
func drawBox(c *canvas, x, y, w int, n Node, plain bool) {
	chars, t := lightBox, tagDim
	switch {
	case n.Current:
		chars, t = doubleBox, tagPath
	case n.Visited:
		chars, t = heavyBox, tagPath
	}
	c.set(x, y, chars[0], t)
	c.hline(x+1, x+w-2, y, chars[4], t)
	c.set(x+w-1, y, chars[1], t)
	c.set(x, y+1, chars[5], t)
	c.set(x+w-1, y+1, chars[5], t)
	c.set(x, y+2, chars[2], t)
	c.hline(x+1, x+w-2, y+2, chars[4], t)
	c.set(x+w-1, y+2, chars[3], t)
	label, lt := " "+n.Name+" ", tagNone
	switch {
	case n.Current && plain:
		label = "[" + n.Name + "]"
	case n.Current:
		lt = tagLit
	case !n.Visited:
		lt = tagDim
	}
	c.text(x+(w-width(label))/2, y+1, label, lt)
}

// edgeStyle is an edge's line character (horizontal or vertical) and tag.
func edgeStyle(e Edge, vertical bool) (rune, tag) {
	switch {
	case e.Taken && vertical:
		return '┃', tagPath
	case e.Taken:
		return '━', tagPath
	case e.Auto && vertical:
		return '┆', tagDim
	case e.Auto:
		return '┄', tagDim
	case vertical:
		return '│', tagDim
	}
	return '─', tagDim
}

// drawHEdge draws an arrow between two boxes of one row: on the label's
// line, or, for the second of a pair, on the line under it.
func drawHEdge(c *canvas, xs, ws []int, top int, a, b Node, e Edge, back bool) {
	y := top + a.Row*(boxH+rowGap) + 1
	if back && a.Col > b.Col {
		y++ // the pair's right-to-left arrow runs along the bottom borders
	}
	r, t := edgeStyle(e, false)
	if a.Col < b.Col {
		x0, x1 := xs[a.Col]+ws[a.Col], xs[b.Col]-1
		c.hline(x0, x1-1, y, r, t)
		c.set(x1, y, '▶', t)
		return
	}
	x0, x1 := xs[b.Col]+ws[b.Col], xs[a.Col]-1
	c.set(x0, y, '◀', t)
	c.hline(x0+1, x1, y, r, t)
}

// drawVEdge draws an arrow between two boxes of one column, through the
// rows between them; a pair runs side by side.
func drawVEdge(c *canvas, xs, ws []int, top int, a, b Node, e Edge, back bool) {
	x := xs[a.Col] + ws[a.Col]/2
	if back {
		if a.Row < b.Row {
			x--
		} else {
			x++
		}
	}
	r, t := edgeStyle(e, true)
	upper, lower := min(a.Row, b.Row), max(a.Row, b.Row)
	y0 := top + upper*(boxH+rowGap) + boxH // the row under the upper box
	y1 := top + lower*(boxH+rowGap) - 1    // the row over the lower box
	for y := y0; y <= y1; y++ {
		c.set(x, y, r, t)
	}
	if a.Row < b.Row {
		c.set(x, y1, '▼', t)
	} else {
		c.set(x, y0, '▲', t)
	}
}

// Diagram SVG geometry, in pixels.
const (
	dgBoxH   = 30
	dgRowGap = 44
	dgColGap = 56
	dgMargin = 20
	dgTop    = 40
	dgNote   = 16
)

// SVG draws the diagram as one self-contained <svg> element.
func (d *Diagram) SVG() (string, error) {
	g, err := d.layout()
	if err != nil {
		return "", err
	}
	ws := d.boxWidths(g)
	xs := make([]float64, g.cols)
	bw := make([]float64, g.cols)
	for i := range ws {
		bw[i] = float64(ws[i]) * svgCharW
		if i > 0 {
			xs[i] = xs[i-1] + bw[i-1] + dgColGap
		} else {
			xs[i] = dgMargin
		}
	}
	wpx := xs[g.cols-1] + bw[g.cols-1] + dgMargin
	for _, n := range d.Notes {
		wpx = max(wpx, dgMargin*2+float64(width(n))*svgCharW)
	}
	rowY := func(r int) float64 { return dgTop + float64(r)*(dgBoxH+dgRowGap) }
	bottom := rowY(g.rows-1) + dgBoxH
	h := bottom + dgMargin + float64(len(d.Notes))*dgNote
	var s svgWriter
	s.open(int(wpx), int(h), d.Title)
	s.text(dgMargin, 20, "start", svgInk, d.Title, "font-weight", "bold")
	for _, e := range d.Edges {
		a, b := d.Nodes[g.byName[e.From]], d.Nodes[g.byName[e.To]]
		svgEdge(&s, xs, bw, rowY, a, b, e, d.hasEdge(e.To, e.From))
	}
	for _, n := range d.Nodes {
		svgBox(&s, xs[n.Col], rowY(n.Row), bw[n.Col], n)
	}
	for i, n := range d.Notes {
		s.text(dgMargin, bottom+dgMargin+float64(i)*dgNote+4, "start", svgDim, n)
	}
	return s.close(), nil
}

func svgBox(s *svgWriter, x, y, w float64, n Node) {
	stroke, sw, fill, weight := svgDim, "1", svgPaper, "normal"
	switch {
	case n.Current:
		stroke, sw, fill, weight = svgPath, "3", svgLitFill, "bold"
	case n.Visited:
		stroke, sw, weight = svgPath, "2", "bold"
	}
	s.elem("rect", "x", num(x), "y", num(y), "width", num(w), "height", num(dgBoxH), "rx", "6",
		"fill", fill, "stroke", stroke, "stroke-width", sw)
	ink := svgInk
	if !n.Current && !n.Visited {
		ink = svgDim
	}
	s.text(x+w/2, y+dgBoxH/2+4, "middle", ink, n.Name, "font-weight", weight)
}

// svgEdge draws one edge; the two arrows of a pair are drawn apart.
func svgEdge(s *svgWriter, xs, bw []float64, rowY func(int) float64, a, b Node, e Edge, pair bool) {
	stroke, sw, dash := svgDim, 1.2, ""
	switch {
	case e.Taken:
		stroke, sw = svgPath, 2.5
	case e.Auto:
		dash = "4 3"
	}
	extra := []string{}
	if dash != "" {
		extra = append(extra, "stroke-dasharray", dash)
	}
	if a.Row == b.Row {
		y := rowY(a.Row) + dgBoxH/2
		if pair {
			y += map[bool]float64{true: -6, false: 6}[a.Col < b.Col]
		}
		dir, x0, x1 := 1.0, xs[a.Col]+bw[a.Col], xs[b.Col]
		if a.Col > b.Col {
			dir, x0, x1 = -1, xs[a.Col], xs[b.Col]+bw[b.Col]
		}
		s.line(x0, y, x1-dir*8, y, stroke, sw, extra...)
		s.head(x1, y, dir, 0, stroke)
		return
	}
	x := xs[a.Col] + bw[a.Col]/2
	if pair {
		x += map[bool]float64{true: -6, false: 6}[a.Row < b.Row]
	}
	dir, y0, y1 := 1.0, rowY(a.Row)+dgBoxH, rowY(b.Row)
	if a.Row > b.Row {
		dir, y0, y1 = -1, rowY(a.Row), rowY(b.Row)+dgBoxH
	}
	s.line(x, y0, x, y1-dir*8, stroke, sw, extra...)
	s.head(x, y1, 0, dir, stroke)
}
