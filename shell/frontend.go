package shell

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell/render"
	"github.com/vsh-rdma/vsh/verbs"
)

// A Display is what one line showed, for a front end that shows more than
// text (the Jupyter kernel): the text Exec returns, the same as HTML with
// tables as HTML tables, and the pictures the command drew as SVG.
type Display struct {
	Text string
	HTML string
	SVG  []string
}

// ExecDisplay runs one line as ExecContext does and returns what it
// showed as a Display; the error is ExecContext's.
func (s *Shell) ExecDisplay(ctx context.Context, line string) (Display, error) {
	before := s.cell
	s.lastOut = nil
	text, err := s.ExecContext(ctx, line)
	d := Display{Text: text}
	if s.cell == before || len(s.log) == 0 {
		return d, err
	}
	c := s.log[len(s.log)-1]
	// text is the rendered output, then what followed it (ExecContext).
	d.HTML = s.lastOut.html(c.N, strings.TrimPrefix(text, s.lastPlain))
	for _, draw := range c.svgs {
		if svg, derr := draw(); derr == nil && len(svg) <= maxCellSVG {
			d.SVG = append(d.SVG, svg)
		}
	}
	return d, err
}

// ErrorParts splits an error Exec returned into a name (the errno, as
// EINVAL, or the kind of failure: UsageError, Interrupted,
// UnexpectedSuccess, Error), why, and the hint, for a front end that
// shows errors as fields (a Jupyter error's ename, evalue and traceback).
func ErrorParts(err error) (name, why, hint string) {
	if err == nil {
		return "", "", ""
	}
	why, hint = errorParts(err)
	var ue *usageError
	var se *syntaxError
	switch n := verbs.ErrnoOf(err); {
	case errors.Is(err, ErrInterrupted):
		name = "Interrupted"
	case n != 0:
		name = verbs.ErrnoName(n)
	case errors.As(err, &ue), errors.As(err, &se):
		name = "UsageError"
	case strings.Contains(why, "expected to fail, but it succeeded"):
		name = "UnexpectedSuccess"
	default:
		name = "Error"
	}
	return name, why, hint
}

// Help returns the help of the command named (or aliased) name, as help
// NAME prints it without a cell, and whether there is such a command.
func (s *Shell) Help(name string) (string, bool) {
	cmd, ok := s.byKey[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return "", false
	}
	o := &output{}
	writeCommandHelp(o, cmd)
	var b strings.Builder
	for _, l := range o.lines {
		b.WriteString(strings.TrimRight(l.text, " ") + "\n")
	}
	return b.String(), true
}

// html renders the output of cell n as HTML: its lines preformatted as
// plain renders them, each table as an HTML table, then extra (what the
// cell showed after its output: the error, the tutor's words),
// preformatted.
func (o *output) html(n int, extra string) string {
	var b strings.Builder
	b.WriteString(`<div class="vsh-output">`)
	var pre []string
	flush := func() {
		if len(pre) > 0 {
			b.WriteString("<pre>" + html.EscapeString(strings.Join(pre, "\n")) + "</pre>")
			pre = nil
		}
	}
	tag := fmt.Sprintf("[%d] ", n)
	pad := strings.Repeat(" ", len(tag))
	for i, l := range o.lines {
		lead := pad
		if i == 0 {
			lead = tag
		}
		switch {
		case l.table != nil:
			if i == 0 {
				pre = append(pre, strings.TrimSpace(tag))
			}
			flush()
			b.WriteString(tableHTML(l.table.Columns, l.table.Rows))
		case l.raw:
			pre = append(pre, l.text)
		default:
			pre = append(pre, strings.TrimRight(lead+l.text, " "))
		}
	}
	if o.cut {
		pre = append(pre, pad+"(the rest of this cell's output is cut)")
	}
	if extra = strings.TrimRight(extra, "\n"); strings.TrimSpace(extra) != "" {
		pre = append(pre, extra)
	}
	flush()
	b.WriteString("</div>")
	return b.String()
}

// tableHTML renders a table as an HTML table.
func tableHTML(cols []render.Column, rows [][]string) string {
	var b strings.Builder
	b.WriteString(`<table class="vsh-table"><thead><tr>`)
	for _, c := range cols {
		b.WriteString("<th>" + html.EscapeString(c.Header) + "</th>")
	}
	b.WriteString("</tr></thead><tbody>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, v := range r {
			b.WriteString("<td>" + html.EscapeString(v) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// NotebookLesson starts lesson ref (a shipped lesson's ID, a lesson file,
// or a course's lesson) for a notebook: the session is reset to a fresh
// backend, and the lesson's tutor follows the notebook's cells rather
// than running the lesson's own (lessons.NewNotebookTutor). It returns the
// lesson's header. A lesson in progress is left without asking.
func (s *Shell) NotebookLesson(ref string) (string, error) {
	l, err := s.opts.Lessons.Load(ref, s.files.ReadFile)
	if err != nil {
		return "", usagef(s.loadHint(ref, "vsh lesson list shows the lessons"), "%s", firstLines(err.Error(), 12))
	}
	if err := s.canTake(l); err != nil {
		return "", err
	}
	st := s.lessonState()
	if s.opts.Confined && st.graded != "" {
		return "", usagef("grade one lesson a session", "refused: this session is confined to lesson %s (a script being graded with vsh lesson --report) and starts no other lesson, nor that one again", st.graded)
	}
	if _, err := s.freshForLesson(); err != nil {
		return "", err
	}
	said, err := s.PrepareLesson(l)
	if err != nil {
		return "", err
	}
	t, head, err := lessons.NewNotebookTutor(s.LessonEnv(), l)
	if err != nil {
		return "", err
	}
	if s.nbCells > 0 {
		t.CellStart() // the cell %lesson runs in, which its hand-in marks too
	}
	head = said + head
	st.tutor, st.marked, st.startedAt = t, "", s.cell
	if s.opts.Confined {
		st.graded = l.ID
	}
	return head, nil
}

// NotebookCell says a notebook's cell begins (the kernel, at each
// execute_request): the tutor of a notebook's lesson tells a prediction
// closed by the rest of the cell that reached a goal from one closed by
// the step's own cell (Tutor.CellStart), and save FILE.vsh marks where
// cells began, which the graded hand-in replays (NotebookCellMark).
func (s *Shell) NotebookCell() {
	s.nbCells++
	if st := s.lesson; st != nil && st.tutor != nil {
		st.tutor.CellStart()
	}
}

// NotebookCheck judges step n (from 1) of the notebook's lesson
// (lessons.Tutor.Check): the verdict as text, and whether the step is
// reached.
func (s *Shell) NotebookCheck(n int) (string, bool, error) {
	st := s.lesson
	if st == nil || st.tutor == nil {
		return "", false, usagef("%lesson NAME starts one, in the notebook's first cell", "no lesson is running")
	}
	return st.tutor.Check(n)
}

// Words splits a line into words as the shell reads a command line:
// blanks separate words, quotes keep them together, and # outside quotes
// starts a comment, which is left out. A quote left open is an error.
func Words(line string) ([]string, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.text
	}
	return words, nil
}
