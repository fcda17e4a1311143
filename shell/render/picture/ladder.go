package picture

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/shell/render"
)

// Ladder is a ladder diagram: endpoints side by side, one arrow per packet
// from the sender's column to the receiver's, in time order, top down.
type Ladder struct {
	// Title is the line above the picture.
	Title string
	// TimeTitle heads the time column; "time" when empty.
	TimeTitle string
	Columns   []Column
	Arrows    []Arrow
}

// Column is one endpoint of a ladder: a device, or a QP on one.
type Column struct {
	Name string // sim0
	Sub  string // what is on it: qp0 0x000011
}

// Arrow is one packet.
type Arrow struct {
	// Time is when it was sent, as printed: 2.054µs.
	Time     string
	From, To int // column indexes; equal for a packet to itself
	// Label holds the label's words, most important first (opcode, then
	// PSN, AckReq, AETH syndrome ...): a narrow picture keeps those that fit.
	Label []string
	// Note is said under the arrow: why it was dropped, what a NAK means.
	Note       string
	Dropped    bool // it never arrived: the arrow ends in ✗
	Retransmit bool // it was sent before: the label starts with ↻
	NAK        bool // it says no (a NAK or an RNR NAK)
}

// tag is the arrow's colour: bad news, a second try, or a packet.
func (a Arrow) tag() tag {
	switch {
	case a.Dropped || a.NAK:
		return tagBad
	case a.Retransmit:
		return tagRetry
	}
	return tagWire
}

// Ladder text layout.
const (
	minSpan = 12 // the narrowest gap between two lifelines
)

// timeTitle is the time column's title.
func (l *Ladder) timeTitle() string {
	if l.TimeTitle == "" {
		return "time"
	}
	return l.TimeTitle
}

// errNoColumns is Text's and SVG's error for a ladder without columns.
var errNoColumns = errors.New("a ladder needs at least one column")

// check reports an arrow whose columns do not exist.
func (l *Ladder) check() error {
	if len(l.Columns) == 0 {
		return errNoColumns
	}
	for i, a := range l.Arrows {
		if a.From < 0 || a.From >= len(l.Columns) || a.To < 0 || a.To >= len(l.Columns) {
			return fmt.Errorf("arrow %d goes from column %d to %d; the ladder has %d", i, a.From, a.To, len(l.Columns))
		}
	}
	return nil
}

// MinWidth returns the narrowest width, in columns, that Text accepts.
func (l *Ladder) MinWidth() int {
	left, right := l.margins()
	k := max(len(l.Columns), 1)
	return left + right + (k-1)*minSpan + 1
}

// timeWidth is the width of the time column.
func (l *Ladder) timeWidth() int {
	w := width(l.timeTitle())
	for _, a := range l.Arrows {
		w = max(w, width(a.Time))
	}
	return w
}

// margins returns the cells left of the first lifeline and right of the
// last: the time column, and half a title on either side.
func (l *Ladder) margins() (left, right int) {
	half := func(c Column) int { return (max(width(c.Name), width(c.Sub)) + 1) / 2 }
	left, right = l.timeWidth()+2, 2
	if len(l.Columns) > 0 {
		left += min(half(l.Columns[0]), minSpan/2)
		right = max(right, min(half(l.Columns[len(l.Columns)-1]), minSpan/2)+1)
	}
	return left, right
}

// lifelines returns the x of each column's lifeline in a picture w wide.
func (l *Ladder) lifelines(w int) []int {
	left, right := l.margins()
	k := len(l.Columns)
	xs := make([]int, k)
	if k == 1 {
		xs[0] = left
		return xs
	}
	span := min((w-left-right-1)/(k-1), l.wantSpan())
	for i := range xs {
		xs[i] = left + i*span
	}
	return xs
}

// wantSpan is the gap between lifelines that shows every label and note
// in full: wider is only emptier.
func (l *Ladder) wantSpan() int {
	n := minSpan
	for _, a := range l.Arrows {
		n = max(n, width(strings.Join(a.Label, " "))+2+6, width(a.Note)+4)
	}
	for _, c := range l.Columns {
		n = max(n, width(c.Name)+2, width(c.Sub)+2)
	}
	return n
}

// Text draws the ladder in at most w columns: a title, the column names,
// then one row per arrow (and one under it for its note), the time on the
// left. st colours it on a terminal; nil or plain styles give plain text.
func (l *Ladder) Text(w int, st *render.Styles) (string, error) {
	if err := l.check(); err != nil {
		return "", err
	}
	if minW := l.MinWidth(); w < minW {
		return "", fmt.Errorf("%d columns are too narrow for a ladder of %d endpoints; it needs %d", w, len(l.Columns), minW)
	}
	xs := l.lifelines(w)
	w = min(w, xs[len(xs)-1]+l.wantSpan()) // room right of the last lifeline for a self arrow
	c := newCanvas(w, 0)
	for _, line := range wrap(l.Title, w) {
		c.text(0, c.addRow(), line, tagNone)
	}
	l.header(c, xs)
	retries, drops := false, false
	for _, a := range l.Arrows {
		l.arrowRow(c, xs, a)
		retries, drops = retries || a.Retransmit, drops || a.Dropped
	}
	for _, item := range ladderLegend(retries, drops) {
		for _, line := range wrap(item, w) {
			c.text(0, c.addRow(), line, tagDim)
		}
	}
	return c.String(st), nil
}

// header writes the column names and what is on each, centred on the
// lifelines, and the title of the time column.
func (l *Ladder) header(c *canvas, xs []int) {
	names, subs := c.addRow(), -1
	for _, col := range l.Columns {
		if col.Sub != "" {
			subs = c.addRow()
			break
		}
	}
	room := minSpan - 1
	if len(xs) > 1 {
		room = xs[1] - xs[0] - 1
	}
	tw := l.timeWidth()
	c.text(tw-width(l.timeTitle()), names, l.timeTitle(), tagDim)
	for i, col := range l.Columns {
		name := cut(col.Name, room)
		c.text(xs[i]-width(name)/2, names, name, tagHead)
		if subs >= 0 {
			sub := cut(col.Sub, room)
			c.text(xs[i]-width(sub)/2, subs, sub, tagDim)
		}
	}
}

// lifelineRow adds a row with every lifeline drawn.
func lifelineRow(c *canvas, xs []int) int {
	y := c.addRow()
	for _, x := range xs {
		c.set(x, y, '│', tagDim)
	}
	return y
}

// arrowRow draws one arrow, and its note on the row under it.
func (l *Ladder) arrowRow(c *canvas, xs []int, a Arrow) {
	y := lifelineRow(c, xs)
	tw := l.timeWidth()
	c.text(tw-width(a.Time), y, a.Time, tagDim)
	t := a.tag()
	words := a.Label
	if a.Retransmit && len(words) > 0 {
		words = append([]string{"↻ " + words[0]}, words[1:]...)
	}
	x0, x1 := xs[a.From], xs[a.To]
	if x0 == x1 {
		selfArrow(c, xs, x0, y, words, t)
	} else {
		straightArrow(c, x0, x1, y, words, a.Dropped, t)
	}
	if a.Note == "" {
		return
	}
	ny := lifelineRow(c, xs)
	lo, hi := min(x0, x1), max(x0, x1)
	if hi-lo < minSpan { // a self arrow, or the last column: the note runs right
		hi = c.w
	}
	note := cut(a.Note, hi-lo-3)
	c.text(lo+2, ny, note, t)
}

// straightArrow draws an arrow from lifeline x0 to lifeline x1 on row y,
// its label centred on it; a dropped one stops three quarters of the way,
// at a ✗.
func straightArrow(c *canvas, x0, x1, y int, words []string, dropped bool, t tag) {
	dir := 1
	if x1 < x0 {
		dir = -1
	}
	start, end := x0+dir, x1-dir // the cells between the lifelines
	if dropped {
		end = x0 + dir*((x1-x0)*dir*3/4)
	}
	c.hline(start, end, y, '─', t)
	if dropped {
		c.set(end, y, '✗', tagBad)
	} else if dir > 0 {
		c.set(end, y, '▶', t)
	} else {
		c.set(end, y, '◀', t)
	}
	b0, b1 := start, end-dir // the body: the cells but the head
	if b0 > b1 {
		b0, b1 = b1, b0
	}
	room := b1 - b0 - 3 // a dash and a space on either side
	label := fitWords(words, room)
	if label == "" {
		return
	}
	x := b0 + 2 + (room-width(label))/2
	c.set(x-1, y, ' ', t)
	c.text(x, y, label, t)
	c.set(x+width(label), y, ' ', t)
}

// selfArrow draws a packet a column sends to itself: a hook out of the
// lifeline and back, the label beside it.
func selfArrow(c *canvas, xs []int, x, y int, words []string, t tag) {
	c.text(x, y, "├─╮", t)
	y2 := lifelineRow(c, xs)
	c.text(x, y2, "│◀╯", t)
	right := c.w
	for _, o := range xs {
		if o > x {
			right = o
			break
		}
	}
	c.text(x+4, y, fitWords(words, right-x-5), t)
}

// ladderLegend explains the marks the picture uses.
func ladderLegend(retries, drops bool) []string {
	var items []string
	if retries {
		items = append(items, "↻ sent again: a retransmission")
	}
	if drops {
		items = append(items, "✗ dropped on the way")
	}
	return items
}

// Ladder SVG geometry, in pixels.
const (
	ladTop    = 58 // the first arrow's row
	ladRow    = 30 // one arrow
	ladNote   = 16 // its note
	ladMargin = 20
)

// SVG draws the ladder as one self-contained <svg> element. Labels are
// never cut: the columns are as wide as the longest label needs.
func (l *Ladder) SVG() (string, error) {
	if err := l.check(); err != nil {
		return "", err
	}
	longest := 0
	for _, a := range l.Arrows {
		longest = max(longest, width(strings.Join(a.Label, " "))+2)
	}
	for _, c := range l.Columns {
		longest = max(longest, width(c.Name), width(c.Sub))
	}
	span := max(180, float64(longest)*svgCharW+40)
	// Notes wrap at words to the span, in their smaller type, rather than
	// widening the picture: a sentence under one arrow made every column
	// as wide as it.
	noteChars := int((span - 20) / (svgCharW * 10 / 12))
	notes := make([][]string, len(l.Arrows))
	for i, a := range l.Arrows {
		notes[i] = wrapWords(a.Note, noteChars)
	}
	left := ladMargin + float64(l.timeWidth())*svgCharW + 30
	xs := make([]float64, len(l.Columns))
	for i := range xs {
		xs[i] = left + float64(i)*span
	}
	h := float64(ladTop)
	for i := range l.Arrows {
		h += ladRow + float64(len(notes[i]))*ladNote
	}
	bottom := h
	h += ladMargin
	wpx := xs[len(xs)-1] + span/2 + ladMargin
	if len(xs) == 1 {
		wpx = xs[0] + span + ladMargin
	}
	var s svgWriter
	s.open(int(wpx), int(h), l.Title)
	s.text(ladMargin, 18, "start", svgInk, l.Title, "font-weight", "bold")
	s.text(left-40, 38, "end", svgDim, l.timeTitle())
	for i, c := range l.Columns {
		s.text(xs[i], 38, "middle", svgInk, c.Name, "font-weight", "bold")
		if c.Sub != "" {
			s.text(xs[i], 50, "middle", svgDim, c.Sub, "font-size", "10")
		}
		s.line(xs[i], ladTop-4, xs[i], bottom, svgDim, 1)
	}
	y := float64(ladTop)
	for i, a := range l.Arrows {
		y += ladRow
		svgArrow(&s, xs, y, left-30, a, notes[i])
		y += float64(len(notes[i])) * ladNote
	}
	return s.close(), nil
}

// wrapWords breaks s at blanks into lines of at most n runes (a longer
// word stays whole on its own line); "" is no line.
func wrapWords(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case width(line)+1+width(w) <= n:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// svgArrow draws one arrow whose line is at y, its label above it and its
// note's lines under it; the time is right-aligned at tx.
func svgArrow(s *svgWriter, xs []float64, y, tx float64, a Arrow, note []string) {
	colour := map[tag]string{tagWire: svgWire, tagBad: svgBad, tagRetry: svgRetry}[a.tag()]
	label := strings.Join(a.Label, " ")
	if a.Retransmit {
		label = "↻ " + label
	}
	s.text(tx, y+4, "end", svgDim, a.Time)
	x0, x1 := xs[a.From], xs[a.To]
	switch {
	case x0 == x1:
		s.elem("path", "d", fmt.Sprintf("M%s,%s h24 v10 h-20", num(x0), num(y-6)), "fill", "none", "stroke", colour, "stroke-width", "1.5")
		s.head(x0, y+4, -1, 0, colour)
		s.text(x0+30, y+3, "start", colour, label)
	case a.Dropped:
		end := x0 + (x1-x0)*0.75
		s.line(x0, y, end, y, colour, 1.5)
		s.text(end, y+5, "middle", svgBad, "✗", "font-size", "16", "font-weight", "bold")
		s.text((x0+end)/2, y-5, "middle", colour, label)
	default:
		dir := 1.0
		if x1 < x0 {
			dir = -1
		}
		s.line(x0, y, x1-dir*8, y, colour, 1.5)
		s.head(x1, y, dir, 0, colour)
		s.text((x0+x1)/2, y-5, "middle", colour, label)
	}
	for i, line := range note {
		s.text(min(x0, x1)+10, y+14+float64(i)*ladNote, "start", colour, line, "font-size", "10", "font-style", "italic")
	}
}
