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
}

type outLine struct {
	text string
	raw  bool // already a transcript (source's sub-cells): no tag, no indent
}

// add appends text, which may hold several lines.
func (o *output) add(text string) {
	text = strings.TrimRight(text, "\n")
	for _, l := range strings.Split(text, "\n") {
		o.push(outLine{text: l})
	}
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

// render returns the lines with the cell's number on the first one.
func (o *output) render(st *render.Styles, n int) string {
	if len(o.lines) == 0 {
		return ""
	}
	tag := fmt.Sprintf("[%d]", n)
	pad := strings.Repeat(" ", len(tag)+1)
	var b strings.Builder
	tagged := false
	for _, l := range o.lines {
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
	}
	return b.String()
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
