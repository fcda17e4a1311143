package shell

import (
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
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
func (o *output) render(st *styles, n int) string {
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
			b.WriteString(st.render(st.cell, tag))
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

// table renders rows under headers, which are printed exactly as given
// (libibverbs field names such as wr_id stay lower case).
func table(headers []string, rows [][]string) string {
	var b strings.Builder
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off, ShowHeader: tw.On},
			},
		})),
	}
	t := tablewriter.NewTable(&b, opts...)
	if len(headers) > 0 {
		hs := make([]any, len(headers))
		for i, h := range headers {
			hs[i] = h
		}
		t.Header(hs...)
	}
	for _, r := range rows {
		cells := make([]any, len(r))
		for i, c := range r {
			if c == "" {
				c = " "
			}
			cells[i] = c
		}
		if err := t.Append(cells...); err != nil {
			return fmt.Sprintf("(table: %v)", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Sprintf("(table: %v)", err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return strings.Join(out, "\n")
}

// kvTable renders key/value pairs as two aligned columns, as pyverbs prints
// attributes: "qp_state            IBV_QPS_RTS".
func kvTable(pairs [][2]string) string {
	w := 0
	for _, p := range pairs {
		w = max(w, len(p[0]))
	}
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p[1] == "" {
			b.WriteString(p[0])
			continue
		}
		b.WriteString(p[0])
		b.WriteString(strings.Repeat(" ", w-len(p[0])+2))
		b.WriteString(p[1])
	}
	return b.String()
}
