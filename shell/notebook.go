package shell

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell/render"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// A note is a comment line typed between cells: text after cell after.
type note struct {
	after int
	text  string
	// lesson and step are the lesson and step the tutor was at when the
	// comment was typed (nil and -1 outside a lesson): the notebook puts
	// the comment in that step.
	lesson *lessons.Lesson
	step   int
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
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	at := note{after: s.cell, step: -1}
	if st := s.lesson; st != nil && st.tutor != nil && !st.tutor.Quit() {
		if step, over := st.tutor.Step(); !over {
			at.lesson, at.step = st.tutor.Lesson(), step
		}
	}
	if t == "" {
		// An empty comment ends a paragraph of the comments around it.
		if n := len(s.notes); n > 0 && s.notes[n-1].after == s.cell && s.notes[n-1].text != "" {
			s.notes = append(s.notes, at)
		}
		return
	}
	at.text = t
	s.notes = append(s.notes, at)
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
	for _, c := range s.sortedCells() {
		if cmd := s.byKey[c.cmd]; cmd != nil && cmd.skipNotebook {
			continue
		}
		k := 0
		for k < len(notes) && notes[k].after < c.N {
			k++
		}
		nb.cell(c, notes[:k], k < len(notes) && notes[k].after == c.N)
		notes = notes[k:]
	}
	nb.flush()
	nb.text(notes)
	nb.tail()
	return nb.b.String()
}

// notebook writes one Notebook.
type notebook struct {
	s      *Shell
	b      *strings.Builder
	titled *lessons.Lesson // the lesson the title names
	reps   repeatFold      // the repetitions shown, for repeat cells
	l      *lessons.Lesson // the lesson of the last step shown
	step   int
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
			title = noteText(fmt.Sprintf("Lesson %s: %s", c.lesson.ID, c.lesson.Title)) // a lesson file's words
			nb.titled = c.lesson
			break
		}
	}
	if title == "a session" && len(nb.s.notes) > 0 && nb.s.notes[0].after == 0 {
		title, fromNote = noteText(nb.s.notes[0].text), true // a comment before any command
	}
	fmt.Fprintf(nb.b, "# vsh notebook: %s\n\n", title)
	fmt.Fprintf(nb.b, "A session on %s, saved by vsh. Replay it with `vsh -f` and this file: each command after a prompt runs, "+
		"numbered as here, and one marked `! ` must fail.\n", nb.s.backendDesc())
	return fromNote
}

// text writes comments typed one after another as paragraphs of the
// person's own words, as text whatever they hold (noteText): lines typed
// in a row make one paragraph, an empty comment ends it.
func (nb *notebook) text(notes []note) {
	var para []string
	end := func() {
		if len(para) > 0 {
			fmt.Fprintf(nb.b, "\n%s\n", strings.Join(para, " "))
			para = nil
		}
	}
	for i, n := range notes {
		if n.text == "" || (i > 0 && n.after != notes[i-1].after) {
			end()
		}
		if n.text != "" {
			para = append(para, noteText(n.text))
		}
	}
	end()
}

// noteText makes words typed at the prompt plain Markdown text: no HTML
// (a page that runs a student's <script> in a teacher's browser), no code
// fence (which a replay would run), no heading.
//
// HTML's characters become entities; a backslash keeps each of Markdown's
// inline marks as itself (a link, an image, emphasis, a table's bar); and
// at the start, where Markdown would read a block (a heading, a quote, a
// list, a rule, a fence, a link definition), the first mark is escaped.
func noteText(t string) string {
	t = noteMarks.Replace(escapeControls(t))
	if listNumber.MatchString(t) {
		i := strings.IndexAny(t, ".)")
		return t[:i] + `\` + t[i:]
	}
	if t != "" && strings.ContainsRune("~#>-+=_", rune(t[0])) {
		t = `\` + t
	}
	return t
}

// noteMarks escapes what noteText escapes anywhere in a line.
var noteMarks = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "&#96;",
	`\`, `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "|", `\|`)

// listNumber is an ordered list item's start: "1. " or "1) ".
var listNumber = regexp.MustCompile(`^[0-9]{1,9}[.)](\s|$)`)

// cell adds cell c, after the comments typed before it, grouping it with
// the cells before it when it follows them in the same lesson step, the
// same way (typed or the tutor's), and did not fail; noteAfter says a
// comment follows it, which ends the group. Comments come under the
// heading of the step their cell is in: they say what comes next.
func (nb *notebook) cell(c Cell, before []note, noteAfter bool) {
	// Comments typed in the step this cell is in come under its heading;
	// those typed before (in an earlier step, before the lesson, after it)
	// end what came before.
	k := len(before)
	for k > 0 && before[k-1].lesson == c.lesson && before[k-1].step == c.step && c.lesson != nil {
		k--
	}
	if k > 0 {
		nb.flush()
		nb.text(before[:k])
	}
	switch {
	case c.lesson != nil && (c.lesson != nb.l || c.step != nb.step):
		nb.flush()
		nb.stepHeading(c.lesson, c.step)
	case c.lesson == nil && nb.l != nil:
		nb.flush()
		fmt.Fprintf(nb.b, "\n## After lesson %s\n", noteText(nb.l.ID))
		nb.l, nb.step = nil, -1
	}
	if k < len(before) {
		nb.flush()
		nb.text(before[k:])
	}
	line, out := nb.s.plainCell(c)
	if c.cmd == "repeat" {
		out = nb.reps.fold(c.N, out)
	}
	if c.Failed() && !c.ExpectFail {
		nb.flush()
		fmt.Fprintf(nb.b, "\n<details class=\"failed\"><summary>A failed attempt: <code>%s</code></summary>\n", html.EscapeString(escapeControls(c.Line)))
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

// stepHeading writes the heading of step i of l, or none when the step
// is the next of the section the last heading named, then the step's goal
// with the lesson's prose folded under it (the lesson's words, the same
// for every learner, are not what a reader of the notebook came for).
func (nb *notebook) stepHeading(l *lessons.Lesson, i int) {
	prev := -1
	if nb.l == l {
		prev = nb.step
	}
	nb.l, nb.step = l, i
	if i < 0 || i >= len(l.Steps) {
		return
	}
	st := l.Steps[i]
	first, last := i, i // the steps of the section
	for first > 0 && st.Section != "" && l.Steps[first-1].Section == st.Section {
		first--
	}
	for last+1 < len(l.Steps) && st.Section != "" && l.Steps[last+1].Section == st.Section {
		last++
	}
	label := ""
	if first != last {
		label = fmt.Sprintf("Step %d. ", i+1)
	}
	if prev < first || prev > i {
		head := fmt.Sprintf("Step %d of %d", i+1, len(l.Steps))
		if first != last {
			head = fmt.Sprintf("Steps %d to %d of %d", first+1, last+1, len(l.Steps))
		}
		if st.Section != "" {
			head += " · " + st.Section
		}
		if l != nb.titled {
			head = "Lesson " + l.ID + " · " + head // a second lesson in the session
		}
		fmt.Fprintf(nb.b, "\n## %s\n", noteText(head))
	} else {
		nb.b.WriteString("\n")
	}
	goal := ""
	if st.Cell != nil && st.Cell.Goal != "" {
		goal = "Goal: " + html.EscapeString(st.Cell.Goal)
	}
	switch p := stepProse(l, i); {
	case p != "" && goal != "":
		fmt.Fprintf(nb.b, "<details class=\"lesson\"><summary><b>%s%s</b></summary>%s</details>\n", label, goal, proseHTML(p))
	case p != "":
		fmt.Fprintf(nb.b, "<details class=\"lesson\"><summary>%sThe lesson's text</summary>%s</details>\n", label, proseHTML(p))
	case goal != "":
		fmt.Fprintf(nb.b, "\n**%s%s**\n", label, noteText("Goal: "+st.Cell.Goal))
	}
}

// flush writes the block gathered so far.
func (nb *notebook) flush() {
	if len(nb.cmds) == 0 {
		return
	}
	if nb.kind == "tutor" {
		nb.tutorBlock()
		nb.cmds, nb.outs, nb.pics = nil, nil, nil
		return
	}
	nb.block(nb.first, nb.cmds, nb.outs)
	nb.cmds, nb.outs, nb.pics = nil, nil, nil
}

// block writes cells numbered from first as the terminal showed them: each
// command after its prompt, "[7] vsh> ", then its output.
func (nb *notebook) block(first int, cmds, outs []string) {
	nb.transcript("vsh", first, cmds, outs)
	nb.pictures()
}

// transcript writes a vsh block of the commands numbered from first,
// each after a "[7] who> " prompt and followed by its output (none when
// outs is nil).
func (nb *notebook) transcript(who string, first int, cmds, outs []string) {
	var b strings.Builder
	for i, cmd := range cmds {
		fmt.Fprintf(&b, "[%d] %s> %s\n", first+i, who, cmd)
		if i < len(outs) {
			b.WriteString(notPrompt(outs[i]))
		}
	}
	body := strings.TrimRight(b.String(), "\n")
	f := fenceFor(body)
	fmt.Fprintf(nb.b, "\n%svsh cell=%d\n%s\n%s\n", f, first, body, f)
}

// promptLine is a transcript's command line, "[7] vsh> COMMAND", or
// "[7] tutor> COMMAND" for one the tutor ran: what a replay runs of a
// notebook's block.
var promptLine = regexp.MustCompile(`^\[([0-9]+)\] (vsh|tutor)> (.*)$`)

// notPrompt keeps output from reading as a command to a replay: a line
// that looks like a prompt gets a blank in front.
func notPrompt(out string) string {
	if !strings.Contains(out, "> ") {
		return out
	}
	lines := strings.SplitAfter(out, "\n")
	for i, l := range lines {
		if promptLine.MatchString(strings.TrimRight(l, "\n")) {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "")
}

// pictures writes the block's pictures as SVG, in an HTML notebook.
func (nb *notebook) pictures() {
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

// tutorBlock writes the tutor's commands gathered, each after a
// "[7] tutor> " prompt, and their output folded on one line: it is the
// lesson's, the same for every learner.
func (nb *notebook) tutorBlock() {
	nb.transcript("tutor", nb.first, nb.cmds, nil)
	if out := strings.Join(nb.outs, ""); strings.TrimSpace(out) != "" {
		out = strings.ReplaceAll(html.EscapeString(strings.TrimRight(out, "\n")), "\n", "&#10;")
		fmt.Fprintf(nb.b, "<details class=\"tutor\"><summary>The tutor's output</summary><pre><code>%s</code></pre></details>\n", out)
	}
	nb.pictures()
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
	line = escapeControls(c.Line)
	switch {
	case c.stopped():
		// A replay would run it to its end (a wait of hours): a comment.
		line = "# stopped before its end, not replayed: " + line
	case c.Failed() || c.ExpectFail:
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
	fence := ""
	for _, line := range strings.Split(lessons.StepProse(l, i), "\n") {
		if f, open := fenceLine(line, fence); f != "" || open {
			fence = f
			out = append(out, line)
			continue
		}
		if t := strings.TrimLeft(line, "#"); fence == "" && t != line && strings.HasPrefix(t, " ") {
			t = strings.TrimSpace(t)
			if t == l.Steps[i].Section {
				continue
			}
			line = "**" + t + "**"
		}
		out = append(out, line)
	}
	return strings.TrimSpace(unwrapParagraphs(strings.Join(out, "\n")))
}

// fenceLine follows code fences: given the fence open before line ("" for
// none), it returns the fence open after it, and whether line is a fence
// line (one that opens or closes). A fence closes on a line of at least
// as many of its character and nothing else, as CommonMark says.
func fenceLine(line, open string) (string, bool) {
	t := strings.TrimSpace(line)
	if open != "" {
		if strings.HasPrefix(t, open) && strings.Trim(t, open[:1]) == "" {
			return "", true
		}
		return open, false
	}
	for _, ch := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n] == ch[0] {
			n++
		}
		if n >= 3 && (ch == "~" || !strings.Contains(t[n:], "`")) {
			return t[:n], true
		}
	}
	return "", false
}

// proseHTML renders a step's prose as HTML on one line, to fold into a
// <details> element of a notebook: a Markdown HTML block ends at a blank
// line, so none may be left. A newline in code becomes &#10;, elsewhere a
// blank, as HTML reads it. Raw HTML in the prose is left out and risky
// links are not linked (goldmark's safe rendering).
func proseHTML(md string) string {
	var b bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert([]byte(md), &b); err != nil {
		return html.EscapeString(md)
	}
	h := strings.TrimSpace(b.String())
	var out strings.Builder
	pre := 0
	for len(h) > 0 {
		i := strings.IndexAny(h, "<\n")
		if i < 0 {
			out.WriteString(h)
			break
		}
		out.WriteString(h[:i])
		h = h[i:]
		switch {
		case h[0] == '\n':
			if pre > 0 {
				out.WriteString("&#10;")
			} else {
				out.WriteByte(' ')
			}
			h = h[1:]
			continue
		case strings.HasPrefix(h, "<pre"):
			pre++
		case strings.HasPrefix(h, "</pre"):
			pre--
		}
		out.WriteByte('<')
		h = h[1:]
	}
	return out.String()
}

// unwrapParagraphs joins the lines of each Markdown paragraph and list
// item of s into one line, and blank-line runs into one blank line: the
// same Markdown, which a reader's viewer wraps to its own width. Fenced
// and indented code, tables, headings, quotes and HTML stay line for
// line, as does a line that ends in a hard break.
func unwrapParagraphs(s string) string {
	lines := strings.Split(s, "\n")
	table := tableLines(lines)
	var out []string
	fence := ""
	join := false // the last line is paragraph text the next may continue
	code := false // in an indented code block
	item := false // the text being continued is a list item's
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if f, isFence := fenceLine(line, fence); fence != "" || isFence {
			fence = f
			out, join = append(out, line), false
			continue
		}
		switch {
		case t == "":
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			join = false
			continue
		case table[i]:
			out, join = append(out, line), false
			continue
		case (code || !join) && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")):
			out, join, code = append(out, line), false, true
			continue
		}
		code = false
		number := listNumber.MatchString(t)
		block := atxHeading.MatchString(t) || strings.HasPrefix(t, ">") || htmlStart.MatchString(t) || bullet.MatchString(t) ||
			(join && setextLine.MatchString(t)) || (join && interruptsParagraph.MatchString(t)) || ((!join || item) && number)
		if join && !block {
			out[len(out)-1] += " " + strings.TrimLeft(line, " \t")
		} else {
			out = append(out, line)
			item = bullet.MatchString(t) || number
		}
		hard := strings.HasSuffix(line, "  ") || strings.HasSuffix(line, `\`)
		join = !hard && !atxHeading.MatchString(t) && !htmlStart.MatchString(t) && !(join && setextLine.MatchString(t))
	}
	return strings.Join(out, "\n")
}

// The starts of Markdown blocks that unwrapParagraphs keeps on lines of
// their own.
var (
	atxHeading = regexp.MustCompile(`^#{1,6}(\s|$)`)
	htmlStart  = regexp.MustCompile(`^</?[A-Za-z][A-Za-z0-9-]*(\s|/?>|$)|^<!--`)
	bullet     = regexp.MustCompile(`^[-*+](\s|$)`)
	setextLine = regexp.MustCompile(`^(=+|-+)$`)
	// An ordered list interrupts a paragraph only when it starts at 1.
	interruptsParagraph = regexp.MustCompile(`^1[.)]\s`)
	tableDelimiter      = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)
)

// tableLines marks the lines of GFM tables: a header row, its delimiter
// row, and the rows up to a blank line.
func tableLines(lines []string) []bool {
	in := make([]bool, len(lines))
	for i := 1; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if !strings.Contains(t, "-") || !tableDelimiter.MatchString(t) || !strings.Contains(lines[i-1], "|") {
			continue
		}
		in[i-1], in[i] = true, true
		for j := i + 1; j < len(lines) && strings.TrimSpace(lines[j]) != ""; j++ {
			in[j] = true
		}
	}
	return in
}

// A repeatFold shortens the repeat cells' output of one notebook: a run
// of repetitions that printed the same as one shown before becomes one
// line ("#1 to #3: the same output as #0", or "as [34] #0" for an earlier
// cell's). Repetitions that differ, and what follows the last (the
// states, an error), stay as they were.
type repeatFold struct {
	shown []shownRep
}

// shownRep is a repetition shown whole: its command, its lines, and how
// to name it.
type shownRep struct {
	cmd   string
	body  []string
	label string
}

// sameAs reports whether repetition (cmd, body) printed what r did; the
// last repetition of a cell may print more after it (the states).
func (r *shownRep) sameAs(cmd string, body []string, last bool) bool {
	if r.cmd != cmd || len(body) < len(r.body) || !last && len(body) != len(r.body) {
		return false
	}
	for i := range r.body {
		if r.body[i] != body[i] {
			return false
		}
	}
	return true
}

// fold folds the output of cell n (0: names no cell).
func (f *repeatFold) fold(n int, out string) string {
	lines := strings.SplitAfter(out, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "[") {
		return out
	}
	w := strings.Index(lines[0], "] ") + 2
	if w < 3 {
		return out
	}
	body := func(l string) string {
		if len(l) < w || strings.TrimSpace(l[:w]) != "" && l != lines[0] {
			return ""
		}
		return l[w:]
	}
	// Cut the output at the "#k " lines that begin repetitions 0, 1, ...
	var starts []int
	for i, l := range lines {
		if b := body(l); strings.HasPrefix(b, "#"+strconv.Itoa(len(starts))+" ") {
			starts = append(starts, i)
		}
	}
	if len(starts) < 2 || starts[0] != 0 {
		return out
	}
	type rep struct {
		cmd  string
		body []string
	}
	reps := make([]rep, len(starts))
	for k, st := range starts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		reps[k] = rep{cmd: strings.TrimPrefix(body(lines[st]), "#"+strconv.Itoa(k)+" "), body: lines[st+1 : end]}
	}
	var b strings.Builder
	tag, indent := lines[0][:w], strings.Repeat(" ", w)
	var cur *shownRep // what the run being folded repeats
	from := -1        // the run's first repetition
	run := func(to int) {
		if from < 0 || from > to {
			return
		}
		lead := indent
		if from == 0 {
			lead = tag
		}
		if from == to {
			fmt.Fprintf(&b, "%s#%d: the same output as %s\n", lead, from, cur.label)
		} else {
			fmt.Fprintf(&b, "%s#%d to #%d: the same output as %s\n", lead, from, to, cur.label)
		}
		from = -1
	}
	for k, r := range reps {
		last := k == len(reps)-1
		folded := cur != nil && cur.sameAs(r.cmd, r.body, last)
		if !folded {
			run(k - 1)
			for i := range f.shown {
				if f.shown[i].sameAs(r.cmd, r.body, last) {
					cur, folded = &f.shown[i], true
					break
				}
			}
		}
		if folded {
			if from < 0 {
				from = k
			}
			if last {
				run(k)
				for _, l := range r.body[len(cur.body):] {
					b.WriteString(l) // what follows the repetitions
				}
			}
			continue
		}
		b.WriteString(lines[starts[k]])
		for _, l := range r.body {
			b.WriteString(l)
		}
		cur = &shownRep{cmd: r.cmd, body: r.body, label: "#" + strconv.Itoa(k)}
		if n > 0 && !last && len(f.shown) < maxShownReps {
			f.shown = append(f.shown, shownRep{cmd: r.cmd, body: r.body, label: fmt.Sprintf("[%d] #%d", n, k)})
		}
	}
	return b.String()
}

// maxShownReps bounds the repetitions a notebook remembers.
const maxShownReps = 1000
