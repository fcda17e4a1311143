package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/lessons"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ScriptError is a script that failed: it stopped at its first failing
// command, or (keep-going) finished with failures.
type ScriptError struct {
	Name   string // the script's name: a file, or "stdin"
	Line   int    // the line of the first failure
	Err    error  // the first failure
	Failed int    // how many commands failed
	Stop   bool   // the script stopped at the first failure
}

func (e *ScriptError) Error() string {
	if e.Stop {
		return fmt.Sprintf("%s:%d: stopped at the first failing command (-k keeps going): %v", e.Name, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %d command%s failed; the first at line %d: %v", e.Name, e.Failed, plural(e.Failed), e.Line, e.Err)
}

func (e *ScriptError) Unwrap() error { return e.Err }

// IsNotebook reports whether a script of this name is a Markdown notebook,
// whose ```vsh blocks hold the commands.
func IsNotebook(name string) bool {
	l := strings.ToLower(name)
	return strings.HasSuffix(l, ".md") || strings.HasSuffix(l, ".markdown")
}

// RunScript runs the commands read from r, as vsh -f and vsh < FILE do, and
// writes the transcript to w: each command echoed after its prompt
// ("[3] vsh> alloc_pd ctx0"), then its output and error. '#' starts a
// comment; a line ending in '\' continues on the next; a line starting with
// "! " must fail. The first failing command stops the script unless
// keepGoing. A notebook (a name ending in .md, or text starting with a
// Markdown heading or fence) runs only its ```vsh blocks. quit ends the
// script successfully. A line longer than MaxLine fails without being read
// further.
func (s *Shell) RunScript(r io.Reader, w io.Writer, name string, keepGoing bool) error {
	return s.RunScriptContext(context.Background(), r, w, name, keepGoing)
}

// RunScriptContext is RunScript that stops when ctx ends: the command
// running then is stopped as Interrupt stops it, and the script ends with
// an error that wraps ctx's cause.
func (s *Shell) RunScriptContext(ctx context.Context, r io.Reader, w io.Writer, name string, keepGoing bool) error {
	return s.runScript(ctx, r, w, name, keepGoing, IsNotebook(name))
}

func (s *Shell) runScript(ctx context.Context, r io.Reader, w io.Writer, name string, keepGoing, notebook bool) error {
	br := bufio.NewReader(r)
	var first *ScriptError
	failed := 0
	lineno := 0
	nb := &notebookLines{on: notebook, sniffed: notebook}
	if st := s.lesson; st != nil && st.tutor != nil && !st.tutor.Driven() {
		nb.ownTutor = true
	}
	var pending strings.Builder
	pendingLine := 0
	fail := func(line int, err error) *ScriptError {
		failed++
		if first == nil {
			first = &ScriptError{Name: name, Line: line, Err: err}
		}
		if !keepGoing {
			first.Failed, first.Stop = failed, true
			return first
		}
		return nil
	}
	for {
		if ctx.Err() != nil {
			return &ScriptError{Name: name, Line: lineno + 1, Err: context.Cause(ctx), Failed: failed + 1, Stop: true}
		}
		line, long, more, rerr := readLine(br)
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		if !long && line == "" && rerr == io.EOF {
			break
		}
		lineno++
		if lineno == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // a byte order mark, as Notepad writes
		}
		if long {
			if se := fail(lineno, s.scriptLimit(w, name, lineno)); se != nil {
				return se
			}
			if more {
				if err := skipLine(br); err != nil {
					break
				}
			}
			continue
		}
		if strings.TrimSpace(line) == NotebookCellMark {
			if st := s.lesson; st != nil && st.tutor != nil && st.tutor.Driven() {
				s.NotebookCell() // a notebook's hand-in: a cell began here
			}
			continue
		}
		cmd, skip, bad := nb.take(line)
		if skip {
			if bad != "" {
				if se := fail(lineno, usagef("```vsh, or ```vsh cell=N as save writes it", "%s", bad)); se != nil {
					return se
				}
			}
			continue
		}
		line = cmd
		if pending.Len() == 0 {
			pendingLine = lineno
		}
		if pending.Len()+len(line) > MaxLine {
			pending.Reset()
			if se := fail(pendingLine, s.scriptLimit(w, name, pendingLine)); se != nil {
				return se
			}
			continue
		}
		if Continued(line) {
			pending.WriteString(strings.TrimSuffix(line, `\`))
			pending.WriteString(" ")
			if rerr == nil {
				continue
			}
			line = ""
		}
		if pending.Len() > 0 {
			line = pending.String() + line
			pending.Reset()
		}
		s.renumber(w, name, pendingLine-1, nb)
		_, err := s.scriptLine(ctx, w, line)
		if errors.Is(err, ErrExit) {
			return nil
		}
		if err != nil {
			if se := fail(pendingLine, err); se != nil {
				return se
			}
			if ctx.Err() != nil { // stopped: the rest does not run, even with -k
				first.Failed, first.Stop = failed, true
				return first
			}
		}
		if rerr != nil {
			break
		}
	}
	if first != nil {
		first.Failed = failed
		return first
	}
	if nb.on && nb.blocks == 0 && s.depth == 0 && lineno > 0 {
		return &ScriptError{Name: name, Line: 1, Failed: 1, Err: usagef("a notebook's commands go in ```vsh blocks (save FILE.md writes them)",
			"%s has no ```vsh block: nothing ran", name)}
	}
	return nil
}

// vshFence reports whether t opens a vsh code block ("```vsh", or
// "```vsh cell=N" as Notebook writes it), and the fence that closes it.
func vshFence(t string) (string, bool) {
	for _, ch := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n:n+1] == ch {
			n++
		}
		info := strings.Fields(t[n:])
		if n >= 3 && len(info) > 0 && info[0] == "vsh" && (len(info) == 1 || len(info) == 2 && blockCell(info[1]) > 0) {
			return t[:n], true
		}
	}
	return "", false
}

// notebookLines picks a notebook's ```vsh blocks out of its lines. A
// script is one when its name says so (on), or when its first line that
// is not blank opens a vsh block or is a notebook's title.
type notebookLines struct {
	on, sniffed, inBlock bool
	fence                string
	jump                 int // the cell number the next command had (cell=N, or its prompt's)
	blocks               int
	// started is set once the block's first line that is not blank is
	// read; transcript, when that line is a prompt ("[7] vsh> CMD"): then
	// the block is a transcript, whose prompts are its commands and whose
	// other lines are their output.
	started, transcript bool
	// ownTutor is set in a lesson whose tutor runs the lesson's cells
	// itself: a saved lesson's "[7] tutor> " commands are not run again.
	ownTutor bool
}

// take returns the command line holds: line itself in a script or a
// block of commands, the command after the prompt in a transcript. skip
// says line holds none (prose, a fence, output), and bad what is wrong
// with a fence meant for vsh that would not run.
func (n *notebookLines) take(line string) (cmd string, skip bool, bad string) {
	if skip, bad := n.skip(line); skip {
		return "", true, bad
	}
	if !n.on || !n.inBlock {
		return line, false, ""
	}
	if !n.started && strings.TrimSpace(line) != "" {
		n.started, n.transcript = true, promptLine.MatchString(line)
	}
	if !n.transcript {
		return line, false, ""
	}
	m := promptLine.FindStringSubmatch(line)
	if m == nil {
		return "", true, "" // the output of the command above
	}
	if m[2] == "tutor" && n.ownTutor {
		return "", true, "" // this session's tutor runs its own cells
	}
	if num, err := strconv.Atoi(m[1]); err == nil && num > 0 && num <= MaxCells {
		n.jump = num
	}
	return m[3], false, ""
}

// skip reports whether line is no command to run (prose, a fence), and
// what is wrong with a fence meant for vsh that would not run.
func (n *notebookLines) skip(line string) (skip bool, bad string) {
	t := strings.TrimSpace(line)
	if !n.sniffed && t != "" {
		n.sniffed = true
		f, ok := vshFence(t)
		n.on = ok || strings.HasPrefix(t, "# vsh notebook")
		if ok {
			n.open(f, t)
			return true, ""
		}
	}
	switch {
	case !n.on:
		return false, ""
	case !n.inBlock:
		if f, ok := vshFence(t); ok {
			n.open(f, t)
			return true, ""
		}
		return true, badVshFence(t)
	case t == n.fence:
		n.inBlock = false
		return true, ""
	}
	return false, ""
}

func (n *notebookLines) open(fence, t string) {
	n.inBlock, n.fence, n.jump = true, fence, blockCell(t)
	n.started, n.transcript = false, false
	n.blocks++
}

// renumber gives the next cell the number its notebook block says, when
// it says one; numbers only grow, and a block that says less is told.
func (s *Shell) renumber(w io.Writer, name string, line int, nb *notebookLines) {
	jump := nb.jump
	nb.jump = 0
	if jump == 0 || s.depth > 0 {
		return
	}
	if jump <= s.cell {
		fmt.Fprintf(w, "note: %s:%d: the block says cell=%d, but cell %d ran already: numbers only grow, so it is cell %d\n",
			name, line, jump, s.cell, s.cell+1)
	}
	s.cell = max(s.cell, jump-1)
}

// badVshFence says what is wrong with a fence that looks meant to open a
// vsh block but does not ("```vsh cell=0", "```VSH", "```vsh garbage"),
// or returns "" (another language, or "```vsh auto", a lesson's cell that
// a notebook's replay leaves to the tutor).
func badVshFence(t string) string {
	n := 0
	for n < len(t) && (t[n] == '`' || t[n] == '~') {
		n++
	}
	info := strings.Fields(t[n:])
	if n < 3 || len(info) == 0 || !strings.EqualFold(info[0], "vsh") {
		return ""
	}
	switch {
	case info[0] != "vsh":
		return fmt.Sprintf("%q opens a block that is not run: the language is vsh, in lower case", t)
	case len(info) == 2 && info[1] == "auto":
		return ""
	}
	return fmt.Sprintf("%q opens a block that is not run: after vsh comes nothing, or cell=N with N from 1 to %d (the number its first command had)", t, MaxCells)
}

// scriptLimit writes and returns the error for a line longer than MaxLine,
// which runs as no cell.
func (s *Shell) scriptLimit(w io.Writer, name string, line int) error {
	err := lineTooLong(0)
	ce := &CmdError{Cell: s.cell, Err: err}
	first, hint := ce.parts()
	fmt.Fprintf(w, "%s%s:%d: %s\n", s.st.Render(s.st.Err, "error: "), name, line, first)
	fmt.Fprintf(w, "       %s%s\n", s.st.Render(s.st.Hint, "hint: "), hint)
	return err
}

// scriptLine runs one line of a script and writes its transcript.
func (s *Shell) scriptLine(ctx context.Context, w io.Writer, line string) (bool, error) {
	body, _ := splitBang(line)
	toks, terr := tokenize(body)
	if terr == nil && len(toks) == 0 && strings.TrimSpace(line) != "!" {
		s.keepComment(line) // a script's comments are text in its notebook
		return false, nil
	}
	echo := escapeControls(strings.TrimSpace(line))
	io.WriteString(w, s.st.Render(s.st.Prompt, s.Prompt())+echo+"\n")
	out, err := s.ExecContext(ctx, line)
	io.WriteString(w, out)
	if errors.Is(err, ErrExit) {
		return true, err
	}
	if err != nil {
		io.WriteString(w, s.FormatError(err))
	}
	return false, err
}

// sortedCells returns the log ordered by cell number (source's cells finish
// before the source cell itself).
func (s *Shell) sortedCells() []Cell {
	cells := append([]Cell(nil), s.log...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].N < cells[j].N })
	return cells
}

// fenceFor returns a backtick fence longer than any run of backticks in text.
func fenceFor(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func saveCmd() *command {
	return &command{Name: "save", Group: gSession, Usage: "save [-f] FILE.md | FILE.html | FILE.vsh",
		Summary: "Save the session as a Markdown notebook (vsh -f FILE.md replays it), or what you typed as a script",
		Help: "save FILE.md: the session as the terminal showed it, in ```vsh blocks: each command after its prompt ([7] vsh> ), then its output; " +
			"a command that failed is saved as a \"! \" line, which a replay expects to fail. A repeat's repetitions that printed the same are shown once; " +
			"in a lesson each step's goal heads its commands, with the lesson's prose folded under it, and the tutor's commands have tutor> prompts " +
			"and their output folded. vsh -f FILE.md runs the prompts' commands. save, source and quit are left out (the commands source ran are saved instead).\n\n" +
			"save FILE.html: the same notebook as one self-contained web page, the pictures drawn (trace ladder, show QP --diagram) inline as SVG.\n\n" +
			"save FILE.vsh: the lines you typed, as you typed them, one a line — in a lesson, those since it started, " +
			"lesson and predict commands included, not what the tutor ran. It is what an instructor grades: " +
			"vsh lesson ID --report r.json < FILE.vsh takes the lesson again with it, and the tutor judges every step anew. " +
			"In a notebook's lesson (Jupyter), where the cells ran the tutor's setup too, its first line says so, and vsh lesson " +
			"grades it as %check judged it.",
		Args: []argSpec{pos("FILE", vFile, true, "the notebook (.md) or script (.vsh) to write"),
			flag("-f", "replace FILE if it exists (save refuses otherwise)", "--force")}, meta: true, skipNotebook: true, run: cmdSave}
}

func cmdSave(c *call) error {
	name := c.a.pos[0].text
	if ext := strings.ToLower(filepath.Ext(name)); ext == ".ipynb" || ext == ".json" {
		return usagef("save "+strings.TrimSuffix(name, filepath.Ext(name))+".md; in Jupyter the vsh kernel's own notebook is the .ipynb (docs/jupyter.md)",
			"save writes a Markdown notebook (.md), a web page (.html) or a script (.vsh), not %s: Jupyter could not open it", ext)
	}
	if !c.a.flags["-f"] && c.s.files.Exists(name) {
		return usagef("save -f "+name+" replaces it; or give another name",
			"%s exists already, and save does not overwrite a file unless told to", name)
	}
	if strings.HasSuffix(strings.ToLower(name), ".vsh") {
		return saveScript(c, name)
	}
	if l := strings.ToLower(name); strings.HasSuffix(l, ".html") || strings.HasSuffix(l, ".htm") {
		page, err := c.s.NotebookHTML()
		if err != nil {
			return err
		}
		if err := c.s.files.WriteFile(name, []byte(page)); err != nil {
			return err
		}
		c.line("saved the notebook as one HTML page to %s (%d bytes; it loads nothing from elsewhere)", name, len(page))
		return nil
	}
	nb := c.s.Notebook()
	if err := c.s.files.WriteFile(name, []byte(nb)); err != nil {
		return err
	}
	n := 0
	for _, cell := range c.s.log {
		if cmd := c.s.byKey[cell.cmd]; cmd == nil || !cmd.skipNotebook {
			n++
		}
	}
	c.line("saved %d cell%s to %s; vsh -f %s replays them", n, plural(n), name, name)
	if !IsNotebook(name) {
		c.line("note: name it .md so that vsh -f reads it as a notebook")
	}
	return nil
}

const maxSourceDepth = 8

func sourceCmd() *command {
	return &command{Name: "source", Group: gSession, Usage: "source FILE",
		Summary: "Run the commands of a script or notebook, each as a cell",
		Help:    "As vsh -f: # starts a comment, a line starting with \"! \" must fail, and the first other failure stops it. A .md file runs its ```vsh blocks.",
		Args:    []argSpec{pos("FILE", vFile, true, "a script (.vsh) or notebook (.md)")}, skipNotebook: true, run: cmdSource}
}

// cappedWriter keeps what is written to it up to most bytes and counts
// the rest (cut).
type cappedWriter struct {
	b    strings.Builder
	most int
	cut  int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if room := w.most - w.b.Len(); len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.cut += len(p) - max(room, 0)
		return len(p), nil
	}
	return w.b.Write(p)
}

func cmdSource(c *call) error {
	name := c.a.pos[0].text
	if c.s.opts.Confined {
		// A graded script is graded on the commands it holds: a lesson's
		// own cells, or another learner's script, are not its work.
		return usagef("type the commands into the script itself",
			"refused: this session is confined (a script being graded with vsh lesson --report, or a lesson being checked) and runs no other file")
	}
	if c.s.depth >= maxSourceDepth {
		return usagef("a script that sources itself never ends", "source is nested %d deep", c.s.depth)
	}
	data, err := c.s.files.ReadFile(name)
	if err != nil {
		return err
	}
	c.line("running %s", name)
	b := &cappedWriter{most: MaxCellOutput}
	c.s.depth++
	err = c.s.runScript(c.s.ctx, strings.NewReader(string(data)), b, name, false, IsNotebook(name))
	c.s.depth--
	c.out.addRaw(b.b.String())
	if b.cut > 0 {
		c.line("(the rest of %s's output, %d bytes, is cut: a cell shows at most %d MiB, MaxCellOutput)", name, b.cut, MaxCellOutput>>20)
	}
	if err != nil {
		var se *ScriptError
		if errors.As(err, &se) && c.s.interrupted() {
			return c.s.stopped("source %s stopped at line %d; the rest did not run", name, se.Line)
		}
		if errors.As(err, &se) {
			return usagef("fix the command at "+fmt.Sprintf("%s:%d", se.Name, se.Line)+" and source it again",
				"%s:%d failed; the rest of %s did not run", se.Name, se.Line, name)
		}
		return err
	}
	return nil
}

func historyCmd() *command {
	return &command{Name: "history", Group: gSession, Usage: "history [n=N]",
		Summary: "List the cells of this session (! marks the ones that failed)",
		Args:    []argSpec{key("n", vNum, "all", "only the last N")}, meta: true, run: cmdHistory}
}

func cmdHistory(c *call) error {
	cells := c.s.sortedCells()
	if len(cells) > 0 && cells[len(cells)-1].N == c.cell.N {
		cells = cells[:len(cells)-1]
	}
	if c.has("n") {
		n, err := c.countOr("n", 0, 1<<20)
		if err != nil {
			return err
		}
		if n == 0 {
			return c.bad("n", fmt.Errorf("history n=N shows the last N cells, at least 1; history alone shows them all"))
		}
		if n < len(cells) {
			cells = cells[len(cells)-n:]
		}
	}
	if len(cells) == 0 {
		c.line("no cells yet")
		return nil
	}
	w := len(fmt.Sprint(cells[len(cells)-1].N)) + 2
	for _, cell := range cells {
		mark := " "
		if cell.Failed() || cell.ExpectFail {
			mark = "!"
		}
		c.line("%-*s %s %s", w, fmt.Sprintf("[%d]", cell.N), mark, escapeControls(cell.Line))
	}
	return nil
}

// Continued reports whether a line of a script (or of a notebook's cell)
// continues on the next: it ends in '\' (not "\\"), and not in a comment
// ("# see below \" continues nothing, as in sh).
func Continued(line string) bool {
	if !strings.HasSuffix(line, `\`) || strings.HasSuffix(line, `\\`) {
		return false
	}
	toks, err := tokenize(line)
	if err != nil {
		return true // the '\' is inside a quote left open
	}
	// Otherwise it ends the last word, or the comment after it.
	return len(toks) > 0 && toks[len(toks)-1].end == len(line)
}

// NotebookHandIn starts the first line of a script saved in a notebook's
// lesson (save FILE.vsh in Jupyter): its cells did the tutor's setup too,
// so vsh lesson grades it with a notebook's tutor, which runs none of the
// lesson's own cells (Shell.NotebookLesson).
const NotebookHandIn = "# the cells run in a notebook of lesson "

// NotebookCellMark is the line save FILE.vsh writes in a notebook's
// hand-in where a cell began; a script run for a notebook's tutor takes
// it as the start of a cell (Shell.NotebookCell), any other as a comment.
const NotebookCellMark = "# %% a notebook cell"

// saveScript is save FILE.vsh: the lines typed in this session (in a
// lesson, since it started), but save and quit themselves.
func saveScript(c *call, name string) error {
	var b strings.Builder
	since, driven, nbCell := 0, false, 0
	if st := c.s.lesson; st != nil && st.tutor != nil {
		driven = st.tutor.Driven()
		l := st.tutor.Lesson()
		ref := l.ID // a shipped lesson's id, else its file as it was named
		if lessons.Ref(l) != l.ID {
			ref = lessons.QuoteRef(l.Name)
		}
		since = st.startedAt
		if st.tutor.Driven() {
			fmt.Fprintf(&b, "%s%s; vsh lesson %s --report OUT.json < %s grades them as the notebook's tutor judged them\n",
				NotebookHandIn, l.ID, ref, filepath.Base(name))
		} else {
			fmt.Fprintf(&b, "# the commands typed in lesson %s; vsh lesson %s < %s takes the lesson again with them\n", l.ID, ref, filepath.Base(name))
		}
	} else {
		fmt.Fprintf(&b, "# the commands typed in this vsh session; vsh -k -f %s runs them again (-k: past the ones that failed)\n", filepath.Base(name))
	}
	n := 0
	notes := c.s.notes
	for _, cell := range c.s.log {
		for len(notes) > 0 && notes[0].after < cell.N {
			if notes[0].after >= since {
				b.WriteString(strings.TrimSpace("# "+notes[0].text) + "\n") // a comment stays one
			}
			notes = notes[1:]
		}
		if !cell.typed || cell.N <= since || cell.cmd == "save" || cell.cmd == "quit" {
			continue
		}
		if driven && cell.nbCell != nbCell {
			b.WriteString(NotebookCellMark + "\n")
			nbCell = cell.nbCell
		}
		switch {
		case cell.stopped():
			b.WriteString("# stopped before its end, not replayed: ")
		case cell.ExpectFail:
			b.WriteString("! ")
		}
		b.WriteString(cell.Line + "\n") // as typed: a script replays it
		n++
	}
	if err := c.s.files.WriteFile(name, []byte(b.String())); err != nil {
		return err
	}
	c.line("saved the %d command%s you typed to %s", n, plural(n), name)
	return nil
}
