package shell

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/shell/render"
)

// output collects a cell's lines. The first line carries the cell's number,
// "[7] ", and the others are indented under it, so that a transcript reads
// as numbered cells.
type output struct {
	lines []outLine
	size  int  // bytes of text in lines
	cut   bool // lines past MaxCellOutput were dropped
	// last is a command's closing line, shown after the lines even when
	// they were cut (advance: where time got to).
	last string
}

// outLine is a line of a cell's output, or a table, with how it fits a
// width (render.Kind): a front end with a width wraps it there, and never
// wraps a render.Verbatim line, which is meant to be typed back.
type outLine struct {
	text  string
	raw   bool // already a transcript (source's sub-cells): no tag, no indent, not wrapped
	kind  render.Kind
	hang  int               // render.Line.Hang
	join  bool              // fitted to a width, the next line continues this one
	table *render.TableView // a table, whose text is as wide as it is
}

// add appends text, which may hold several lines, as render.Prose.
func (o *output) add(text string) { o.addKind(render.Prose, text) }

// addKind appends text, which may hold several lines, of kind k.
func (o *output) addKind(k render.Kind, text string) {
	text = strings.TrimRight(text, "\n")
	for _, l := range strings.Split(text, "\n") {
		o.push(outLine{text: l, kind: k})
	}
}

// addParagraph appends lines that print as they are without a width and
// as one render.Para fitted to one.
func (o *output) addParagraph(lines ...string) {
	for i, l := range lines {
		o.push(outLine{text: l, kind: render.Para, join: i < len(lines)-1})
	}
}

// addHanging appends one line whose continuation lines hang at column
// hang (help's command list, under the summaries).
func (o *output) addHanging(hang int, text string) {
	o.push(outLine{text: text, hang: hang})
}

// addTable appends a table that leaves out or wraps columns to fit.
func (o *output) addTable(t render.TableView) {
	hs := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		hs[i] = c.Header
	}
	o.push(outLine{text: render.Table(hs, t.Rows), table: &t})
}

// push appends a line while the cell's output is under MaxCellOutput.
func (o *output) push(l outLine) {
	if o.size+len(l.text) > MaxCellOutput {
		o.cut = true
		return
	}
	o.size += len(l.text) + 1
	o.lines = append(o.lines, l)
}

func (o *output) addf(format string, a ...any) { o.add(fmt.Sprintf(format, a...)) }

// addRaw appends text that is already a transcript.
func (o *output) addRaw(text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, l := range strings.Split(text, "\n") {
		o.push(outLine{text: l, raw: true})
	}
}

func (o *output) empty() bool { return len(o.lines) == 0 }

// typedBack returns the lines meant to be typed back (render.Verbatim),
// as added.
func (o *output) typedBack() []string {
	var out []string
	for _, l := range o.lines {
		if l.kind == render.Verbatim && !l.raw && l.table == nil {
			out = append(out, strings.TrimSpace(l.text))
		}
	}
	return out
}

// render returns the lines with the cell's number on the first one, fitted
// to width columns (0: not wrapped at all).
func (o *output) render(st *render.Styles, n, width int) string {
	if len(o.lines) == 0 {
		return ""
	}
	tag := fmt.Sprintf("[%d]", n)
	pad := strings.Repeat(" ", len(tag)+1)
	var b strings.Builder
	tagged := false
	for _, l := range o.fit(width, len(pad)) {
		text := strings.TrimRight(l.text, " ")
		switch {
		case l.raw:
			b.WriteString(text)
		case !tagged:
			b.WriteString(st.Render(st.Cell, tag))
			if text != "" {
				b.WriteString(" ")
				b.WriteString(text)
			}
			tagged = true
		case text != "":
			b.WriteString(pad)
			b.WriteString(text)
		}
		b.WriteString("\n")
	}
	if o.cut {
		fmt.Fprintf(&b, "%s(the rest of this cell's output is cut: a cell shows at most %d MiB, MaxCellOutput)\n", pad, MaxCellOutput>>20)
		if o.last != "" {
			fmt.Fprintf(&b, "%s%s\n", pad, o.last)
		}
	}
	return b.String()
}

// closing adds a command's closing line: after the others, and shown even
// when they were cut.
func (o *output) closing(text string) {
	if o.cut {
		o.last = text
		return
	}
	o.add(text)
}

// fit returns the lines fitted to width columns, of which the first indent
// are the cell's tag: each line broken as its kind allows, each table
// fitted. A width of 0 or less returns the lines as they are.
func (o *output) fit(width, indent int) []outLine {
	if width <= 0 {
		var out []outLine
		for _, l := range o.lines {
			if l.table == nil {
				out = append(out, l)
				continue
			}
			for _, t := range strings.Split(l.text, "\n") {
				out = append(out, outLine{text: t})
			}
		}
		return out
	}
	room := max(width-indent, 1)
	var out []outLine
	wrap := func(rl render.Line) {
		for _, t := range render.Wrap(rl, room) {
			out = append(out, outLine{text: t})
		}
	}
	var joined string // the lines of a paragraph so far
	for _, l := range o.lines {
		if l.join && !l.raw && l.table == nil {
			joined += l.text + " "
			continue
		}
		l.text, joined = joined+l.text, ""
		switch {
		case l.raw:
			out = append(out, l)
		case l.table != nil:
			for _, rl := range l.table.Lines(width, indent) {
				wrap(rl)
			}
		default:
			wrap(render.Line{Text: l.text, Kind: l.kind, Hang: l.hang})
		}
	}
	return out
}

// isAre is "is" for one, "are" otherwise.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
