package render

import (
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table renders rows under headers, which are printed exactly as given
// (libibverbs field names such as wr_id stay lower case).
func Table(headers []string, rows [][]string) string {
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

// KV renders key/value pairs as two aligned columns, as pyverbs prints
// attributes: "qp_state            IBV_QPS_RTS".
func KV(pairs [][2]string) string {
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
