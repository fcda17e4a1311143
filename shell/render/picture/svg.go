package picture

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// Colours and fonts of the SVG pictures, as presentation attributes.
const (
	svgFont    = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
	svgInk     = "#222222"
	svgDim     = "#888888"
	svgWire    = "#5a3ea8"
	svgBad     = "#c62828"
	svgRetry   = "#b26a00"
	svgPath    = "#2e7d32"
	svgLitFill = "#c8e6c9"
	svgPaper   = "#ffffff"
	// svgCharW is the advance of one character of the 12px monospace
	// font, for sizing boxes and columns.
	svgCharW = 7.3
)

// svgWriter writes one <svg> element.
type svgWriter struct {
	b strings.Builder
}

// open starts the element, w by h pixels, with a <title> for screen readers.
func (s *svgWriter) open(w, h int, title string) {
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="12">`+"\n",
		w, h, w, h, svgFont)
	s.elem("rect", "x", "0", "y", "0", "width", fmt.Sprint(w), "height", fmt.Sprint(h), "fill", svgPaper)
	s.b.WriteString("<title>")
	s.escape(title)
	s.b.WriteString("</title>\n")
}

func (s *svgWriter) close() string {
	s.b.WriteString("</svg>\n")
	return s.b.String()
}

func (s *svgWriter) escape(t string) {
	_ = xml.EscapeText(&s.b, []byte(t)) // a strings.Builder does not fail
}

// attrs writes name="value" pairs, the values escaped.
func (s *svgWriter) attrs(kv []string) {
	for i := 0; i+1 < len(kv); i += 2 {
		s.b.WriteString(" ")
		s.b.WriteString(kv[i])
		s.b.WriteString(`="`)
		s.escape(kv[i+1])
		s.b.WriteString(`"`)
	}
}

// elem writes an empty element.
func (s *svgWriter) elem(name string, kv ...string) {
	s.b.WriteString("<" + name)
	s.attrs(kv)
	s.b.WriteString("/>\n")
}

// text writes a <text> at (x, y) with the given anchor (start, middle, end).
func (s *svgWriter) text(x, y float64, anchor, fill, t string, kv ...string) {
	s.b.WriteString("<text")
	s.attrs(append([]string{"x", num(x), "y", num(y), "text-anchor", anchor, "fill", fill}, kv...))
	s.b.WriteString(">")
	s.escape(t)
	s.b.WriteString("</text>\n")
}

func (s *svgWriter) line(x1, y1, x2, y2 float64, stroke string, w float64, kv ...string) {
	s.elem("line", append([]string{"x1", num(x1), "y1", num(y1), "x2", num(x2), "y2", num(y2),
		"stroke", stroke, "stroke-width", num(w)}, kv...)...)
}

// head draws an arrowhead with its tip at (x, y), pointing along (dx, dy),
// a unit vector of one of the four directions.
func (s *svgWriter) head(x, y, dx, dy float64, fill string) {
	const l, hw = 9, 4.5
	bx, by := x-dx*l, y-dy*l
	px, py := -dy*hw, dx*hw
	s.elem("polygon", "points", fmt.Sprintf("%s,%s %s,%s %s,%s", num(x), num(y), num(bx+px), num(by+py), num(bx-px), num(by-py)),
		"fill", fill)
}

// num prints a coordinate: an integer, or one decimal.
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	if s == "-0" {
		s = "0"
	}
	return s
}
