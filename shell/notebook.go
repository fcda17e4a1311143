package shell

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell/render"
)

// A note is a comment line typed between cells: text after cell after.
type note struct {
	after int
	text  string
}

// maxNotes bounds the comments a session keeps for its notebook.
const maxNotes = 10000

// keepComment keeps a comment line the person typed (not one of a script
// or of the tutor) for the notebook.
func (s *Shell) keepComment(line string) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "#") || s.depth > 0 || (s.lesson != nil && s.lesson.inTutor > 0) || len(s.notes) >= maxNotes {
		return
	}
	if t = strings.TrimSpace(strings.TrimLeft(t, "#")); t != "" {
		s.notes = append(s.notes, note{after: s.cell, text: t})
	}
}

// Notebook renders the session as a Markdown notebook to hand in or
// publish: a title (the lesson's, or the first comment), then the cells in
// order, each command in a ```vsh block numbered as the session numbered
// it (vsh -f replays them with the same numbers) and its output, plain, in
// a ```text block. Consecutive cells of one lesson step share a block;
// each step opens with its prose and goal; comments typed between cells
// are text; a command that failed is folded into <details>, as a "! "
// line that a replay expects to fail; the tutor's own commands say so.
// The lesson's summary ends it.
func (s *Shell) Notebook() string { return s.notebook(false) }

// notebook writes the notebook's Markdown; with html, the pictures that
// cells drew follow their output as inline SVG (NotebookHTML).
func (s *Shell) notebook(html bool) string {
	nb := &notebook{s: s, b: &strings.Builder{}, html: html}
	notes := s.notes
	if nb.head() && len(notes) > 0 {
		notes = notes[1:] // the title
	}
	cells := s.sortedCells()
	for i := 0; i < len(cells); {
		c := cells[i]
		for len(notes) > 0 && notes[0].after < c.N {
			nb.flush()
			nb.text(notes[0].text)
			notes = notes[1:]
		}
		if cmd := s.byKey[c.cmd]; cmd != nil && cmd.skipNotebook {
			i++
			continue
		}
		nb.cell(c, len(notes) > 0 && notes[0].after == c.N)
		i++
	}
	nb.flush()
	for _, n := range notes {
		nb.text(n.text)
	}
	nb.tail()
	return nb.b.String()
}

// notebook writes one Notebook.
type notebook struct {
	s    *Shell
	b    *strings.Builder
	l    *lessons.Lesson // the lesson of the last step shown
	step int
	// The block being gathered: commands and their output, of cells
	// numbered first, first+1, ...
	first, next int
	kind        string // "typed" or "tutor"
	cmds, outs  []string
	pics        []func() (string, error) // the block's pictures, drawn as SVG
	html        bool                     // write pictures (NotebookHTML)
}

// head writes the title and how to replay; it reports whether the title
// is the first comment.
func (nb *notebook) head() (fromNote bool) {
	title := "a session"
	for _, c := range nb.s.log {
		if c.lesson != nil {
			title = fmt.Sprintf("Lesson %s: %s", c.lesson.ID, c.lesson.Title)
			break
		}
	}
	if title == "a session" && len(nb.s.notes) > 0 && nb.s.notes[0].after == 0 {
		title, fromNote = noteText(nb.s.notes[0].text), true // a comment before any command
	}
	fmt.Fprintf(nb.b, "# vsh notebook: %s\n\n", title)
	fmt.Fprintf(nb.b, "A session on %s, saved by vsh. Replay it with `vsh -f` and this file: each `vsh` block runs as cells "+
		"numbered as here, and a line starting with `! ` must fail.\n", nb.s.backendDesc())
	return fromNote
}

// text writes a paragraph of the person's own words, as text whatever it
// holds (noteText).
func (nb *notebook) text(t string) {
	fmt.Fprintf(nb.b, "\n%s\n", noteText(t))
}

// noteText makes words typed at the prompt plain Markdown text: no HTML
// (a page that runs a student's <script> in a teacher's browser), no code
// fence (which a replay would run), no heading.
func noteText(t string) string {
	t = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "&#96;").Replace(t)
	if strings.HasPrefix(t, "~") || strings.HasPrefix(t, "#") {
		t = `\` + t
	}
	return t
}

// cell adds cell c, grouping it with the cells before it when it follows
// them in the same lesson step, the same way (typed or the tutor's), and
// did not fail; noteAfter says a comment follows it, which ends the group.
func (nb *notebook) cell(c Cell, noteAfter bool) {
	if c.lesson != nil && (c.lesson != nb.l || c.step != nb.step) {
		nb.flush()
		nb.stepHeading(c.lesson, c.step)
	}
	line, out := nb.s.plainCell(c)
	if c.Failed() && !c.ExpectFail {
		nb.flush()
		fmt.Fprintf(nb.b, "\n<details><summary>A failed attempt: <code>%s</code></summary>\n", html.EscapeString(c.Line))
		nb.pics = c.svgs
		nb.block(c.N, []string{line}, []string{out})
		nb.pics = nil
		nb.b.WriteString("\n</details>\n")
		return
	}
	kind := "typed"
	if c.byTutor {
		kind = "tutor"
	}
	if len(nb.cmds) > 0 && (kind != nb.kind || c.N != nb.next) {
		nb.flush()
	}
	if len(nb.cmds) == 0 {
		nb.first, nb.kind = c.N, kind
	}
	nb.cmds, nb.outs, nb.next = append(nb.cmds, line), append(nb.outs, out), c.N+1
	nb.pics = append(nb.pics, c.svgs...)
	if noteAfter || c.lesson == nil {
		nb.flush() // outside a lesson each command sits above its output
	}
}

// stepHeading writes the heading, prose and goal of step i of l.
func (nb *notebook) stepHeading(l *lessons.Lesson, i int) {
	nb.l, nb.step = l, i
	if i < 0 || i >= len(l.Steps) {
		return
	}
	st := l.Steps[i]
	head := fmt.Sprintf("Step %d of %d", i+1, len(l.Steps))
	if st.Section != "" {
		head += " · " + st.Section
	}
	fmt.Fprintf(nb.b, "\n## %s\n", head)
	if p := stepProse(l, i); p != "" {
		fmt.Fprintf(nb.b, "\n%s\n", p)
	}
	if st.Cell != nil && st.Cell.Goal != "" {
		fmt.Fprintf(nb.b, "\n**Goal:** %s\n", st.Cell.Goal)
	}
}

// flush writes the block gathered so far.
func (nb *notebook) flush() {
	if len(nb.cmds) == 0 {
		return
	}
	if nb.kind == "tutor" {
		nb.b.WriteString("\nThe tutor ran:\n")
	}
	nb.block(nb.first, nb.cmds, nb.outs)
	nb.cmds, nb.outs, nb.pics = nil, nil, nil
}

// block writes commands numbered from first, then their output.
func (nb *notebook) block(first int, cmds, outs []string) {
	code := strings.Join(cmds, "\n")
	f := fenceFor(code)
	fmt.Fprintf(nb.b, "\n%svsh cell=%d\n%s\n%s\n", f, first, code, f)
	out := strings.Join(outs, "")
	if strings.TrimSpace(out) != "" {
		f := fenceFor(out)
		fmt.Fprintf(nb.b, "\n%stext\n%s%s\n", f, out, f)
	}
	if nb.html {
		for _, draw := range nb.pics {
			svg, err := draw()
			if err != nil || len(svg) > maxCellSVG {
				continue // the terminal's picture is in the output above
			}
			// An HTML block ends at a blank line: the picture has none.
			var lines []string
			for _, l := range strings.Split(svg, "\n") {
				if strings.TrimSpace(l) != "" {
					lines = append(lines, l)
				}
			}
			fmt.Fprintf(nb.b, "\n<figure class=\"picture\">\n%s\n</figure>\n", strings.Join(lines, "\n"))
		}
	}
}

// tail writes the lesson's summary, when a lesson ran.
func (nb *notebook) tail() {
	st := nb.s.lesson
	if st == nil || st.tutor == nil {
		return
	}
	if sum := strings.TrimRight(st.tutor.Summary(), "\n"); sum != "" {
		fmt.Fprintf(nb.b, "\n## Summary\n\n```text\n%s\n```\n", render.StripANSI(sum))
	}
}

// plainCell is a cell's command line as a replay takes it ("! " when it
// failed) and its output and error without escape codes.
func (s *Shell) plainCell(c Cell) (line, out string) {
	line = c.Line
	if c.Failed() || c.ExpectFail {
		line = "! " + line
	}
	out = render.StripANSI(c.Out)
	if c.Err != nil {
		out += render.StripANSI(s.formatError(c.Err, c.ExpectFail))
	} else if c.unexpected != nil {
		out += render.StripANSI(s.formatError(c.unexpected, false))
	}
	return line, out
}

// blockCell reads the cell= of a ```vsh block's info string ("vsh
// cell=17"): the number its first command had; 0 for none.
func blockCell(info string) int {
	for _, f := range strings.Fields(info) {
		if v, ok := strings.CutPrefix(f, "cell="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= MaxCells {
				return n
			}
		}
	}
	return 0
}

// stepProse is step i's prose for a notebook, under the notebook's own
// step heading: the heading of the step's section left out, any other
// heading made bold text, so that headings are the notebook's.
func stepProse(l *lessons.Lesson, i int) string {
	var out []string
	for _, line := range strings.Split(lessons.StepProse(l, i), "\n") {
		if t := strings.TrimLeft(line, "#"); t != line && strings.HasPrefix(t, " ") {
			t = strings.TrimSpace(t)
			if t == l.Steps[i].Section {
				continue
			}
			line = "**" + t + "**"
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
