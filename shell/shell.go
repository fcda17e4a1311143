package shell

import (
	"context"
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// ErrExit is returned by Exec for quit: the front end should end the session.
var ErrExit = errors.New("quit")

// Options configures a Shell.
type Options struct {
	// Open returns the backend. The shell calls it once in New and again on
	// reset, so that a reset session starts from the same state (on the
	// simulator: the same seed, the same QPNs and keys).
	Open func() (verbs.Provider, error)
	// Plain turns styling off: no ANSI escape codes. Front ends set it when
	// the output is not a terminal, NO_COLOR is set, or --plain is given.
	Plain bool
	// Light picks colours for a light terminal background (and most
	// projectors) rather than a dark one, when not Plain.
	Light bool
	// TypedAhead is what the person typed before the session started
	// (while TerminalTheme asked the terminal): RunTTY reads it first.
	TypedAhead []byte
	// Backend describes the backend in one line for banners and notebooks,
	// e.g. "sim (2 devices, seed 1)". When empty the provider's name is used.
	Backend string
	// Version is printed by the banner.
	Version string
	// Shadow opens the simulator a lesson's judge replays the lesson's
	// own cells on, with the given number of devices (Env.Shadow); nil
	// uses Open, which must then be the simulator.
	Shadow func(devices int) (verbs.Provider, error)
	// TestPanic makes the shell panic where it names, for tests of what a
	// crash leaves behind (vsh reads it from VSH_TEST_PANIC): a command's
	// name (the command panics; its cell fails), "executor" (the TTY's
	// executor panics outside any command) or "complete" (completion does).
	TestPanic string
	// Progress, when set, is told how a long command (pingpong, bench) is
	// getting on while its cell runs, since a cell's output appears only
	// when it ends. status replaces the status shown before (at most every
	// 100 ms); "" means the command ended: clear it. step is set for a
	// status that marks a step done (bench: one message size), which a
	// front end that cannot rewrite a line in place logs as a line.
	Progress func(status string, step bool)
	// Width, when set, is the width in columns the output must fit, asked
	// before each cell is shown (a terminal may be resized): tables leave
	// out or wrap columns, verb calls break between arguments, prose
	// between words, and lines meant to be typed back not at all. nil, or
	// a width of 0 or less, wraps nothing: what scripts, pipes and golden
	// files get.
	Width func() int
	// StateDir, when set, is where the shell keeps the learner's place in
	// each lesson left unfinished, for lesson resume (lessons.StateDir:
	// $XDG_STATE_HOME/vsh). Front ends set it for a person at a terminal;
	// scripts and tests leave it empty, and nothing is kept.
	StateDir string
	// Lessons is the catalog the lesson command starts lessons from and
	// lists: the shipped lessons and the courses added (vsh --lessons
	// DIR). nil: the shipped lessons alone.
	Lessons *lessons.Catalog
	// Solved records the course lessons the learner solves, every learner
	// step by themselves; nil records nothing.
	Solved *lessons.Progress
	// Confined keeps the session to itself: no command writes a file
	// (save, trace pcap, an svg=) or reaches the network (exchange), and
	// it takes no lesson after its first. vsh lesson sets it where it
	// grades a script on stdin (--report) or checks a lesson, so that
	// what runs there changes nothing outside.
	Confined bool
}

// Cell is one command of the session, numbered as the prompt showed it.
type Cell struct {
	N    int
	Line string // the command as typed, without a leading "! "
	// ExpectFail is set when the line started with "! ": the command was
	// expected to fail.
	ExpectFail bool
	// Out is the command's output, without the error.
	Out string
	// Err is what the command returned: nil, or a *CmdError that keeps the
	// errno (errors.Is(err, syscall.EINVAL) holds for a verb that failed so).
	Err error
	// Completions are the work completions that poll_cq returned in this cell.
	Completions []verbs.WC
	// CompletionCQs names the CQ each of Completions came from.
	CompletionCQs []string
	// Created names the handles the cell created.
	Created []string
	// Verbs are the libibverbs calls the cell's verb lines show.
	Verbs []VerbCall
	// TypedBack are the lines of Out meant to be typed back ("same as:
	// modify_qp ...", the help's example commands), without their indent,
	// and the clauses of the error's hint: a front end that fits the
	// output to a width never breaks them.
	TypedBack []string

	cmd        string // canonical command name, "" when unknown
	typed      bool   // typed by the person: not run by a script, the tutor or a player
	byTutor    bool   // run by the lesson's tutor (an auto cell, lesson skip)
	lesson     *lessons.Lesson
	step       int                      // the lesson's step when the cell ran, or -1
	unexpected *CmdError                // a "! " command that succeeded
	svgs       []func() (string, error) // the pictures it drew, as SVG when asked (trace ladder, show --diagram, bench)
	calls      []lessons.Call
	posts      []lessons.Post
	packets    []lessons.Packet
	nbCell     int // the notebook cell it ran in (NotebookCell), 0 outside one
}

// Failed reports whether the command itself failed.
func (c Cell) Failed() bool { return c.Err != nil }

// stopped reports whether the cell was stopped before its end (Ctrl-C, a
// signal): a replay would run it whole.
func (c Cell) stopped() bool {
	var se *stopError
	return errors.As(c.Err, &se)
}

// Shell is a vsh session: a backend, the objects the session made under
// their handles, and the numbered cells typed so far. It has no terminal:
// front ends (the go-prompt adapter, the script runner, tests) call Exec and
// Complete. A Shell is not safe for concurrent use.
type Shell struct {
	opts  Options
	prov  verbs.Provider
	devs  []verbs.Device
	st    *render.Styles
	h     *handles
	cmds  []*command
	byKey map[string]*command

	cell    int
	nbCells int // notebook cells begun (NotebookCell)
	log     []Cell
	depth   int // source nesting
	watched []string
	snap    *snapshot
	tr      *tracer
	wire    *wireLog // wirelog.go: the packets trace saw, for trace ladder
	wrid    uint64

	files     fileSystem
	noRecover bool // tests: let panics through
	// ctx is the running cell's context, nil between cells; cancel ends
	// it (Interrupt), under mu, since front ends call it from another
	// goroutine.
	ctx    context.Context
	mu     sync.Mutex
	cancel context.CancelCauseFunc
	logOut int // bytes of output the log keeps (MaxLogOutput)
	// posts and calls bound the work requests and the calls the cells
	// keep for the lesson judge (MaxLogPosts, MaxLogCalls); verbs and wcs
	// the verb calls and completions they keep (MaxLogVerbs).
	posts, calls, verbs, wcs keptRecords
	lesson                   *lessonState // lesson_env.go: the tutor, when a lesson runs
	pkts                     *packetLog   // packets.go: the packets of each cell, while recorded
	vc                       *verbCounts  // verbcall.go: the verbs called, for paths
	// notes are the comment lines typed between cells, for notebooks.
	notes []note
	// ask puts a question to the person at the front end and returns the
	// line they answer, or false when no one can answer (Ctrl-C, end of
	// input). nil off a terminal: a command that would ask refuses.
	ask func(question string) (string, bool)
	// lastOut is the last cell's output and lastPlain it rendered, for
	// ExecDisplay.
	lastOut   *output
	lastPlain string
	// xrcWant is the XRC the session chose (backend xrc=, a lesson that
	// needs it), which every backend it opens gets; nil: the backend's own.
	xrcWant *bool
	// xrcLesson is set once a lesson that needs XRC started: the shadow
	// sessions of its judge (Env.Shadow) get XRC whatever the backend.
	xrcLesson bool
}

// New starts a session on the backend opts.Open returns.
func New(opts Options) (*Shell, error) {
	if opts.Open == nil {
		return nil, errors.New("shell: Options.Open is nil; the shell needs a backend")
	}
	theme := render.Dark
	switch {
	case opts.Plain:
		theme = render.Plain
	case opts.Light:
		theme = render.Light
	}
	s := &Shell{opts: opts, st: render.NewTheme(theme), files: osFiles{}}
	if opts.Confined {
		s.files = confinedFiles{osFiles{}}
	}
	s.cmds = commandTable()
	s.byKey = map[string]*command{}
	for _, c := range s.cmds {
		s.byKey[c.Name] = c
		for _, a := range c.Aliases {
			s.byKey[a] = c
		}
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// open (re)starts the backend and clears the session's objects.
func (s *Shell) open() error {
	p, err := s.opts.Open()
	if err != nil {
		return err
	}
	devs, err := p.Devices()
	if err != nil {
		p.Close()
		return fmt.Errorf("listing devices: %w", err)
	}
	s.prov, s.devs = p, devs
	// reset keeps the XRC that backend xrc= chose (cmd_xrc.go).
	s.applyXRC()
	if s.pkts != nil { // recording the packets goes on, on the new backend
		s.pkts.cancel()
		s.pkts = nil
		s.recordPackets(true)
	}
	s.h = newHandles()
	s.snap = newSnapshot()
	s.wire = nil // a new backend numbers its packets from 1 again
	s.watched = nil
	s.wrid = 1
	return nil
}

// Close destroys every object the session still holds, in the reverse order
// of creation, and closes the backend.
func (s *Shell) Close() error {
	var errs []error
	if s.lesson != nil && s.lesson.tutor != nil {
		if err := s.lesson.tutor.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.tr != nil {
		if err := s.tr.stop(); err != nil {
			errs = append(errs, err)
		}
		s.tr = nil
	}
	if s.h != nil {
		_, err := s.destroyAll()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if s.prov != nil {
		if err := s.prov.Close(); err != nil {
			errs = append(errs, err)
		}
		s.prov = nil
	}
	return errors.Join(errs...)
}

// Provider returns the backend the session runs on.
func (s *Shell) Provider() verbs.Provider { return s.prov }

// Cells returns the cells run so far, in order.
func (s *Shell) Cells() []Cell { return append([]Cell(nil), s.log...) }

// Object returns the verbs object a handle names (a verbs.Context, PD, MR,
// CompChannel, CQ, SRQ, QP, AH or XRCD), so that lessons can check state through
// the verbs API rather than by reading output.
func (s *Shell) Object(handle string) (any, bool) {
	o, ok := s.h.byName[strings.ToLower(handle)]
	if !ok {
		return nil, false
	}
	switch o.kind {
	case kCtx:
		return o.ctx, true
	case kPD:
		return o.pd, true
	case kMR:
		return o.mr, true
	case kChan:
		return o.ch, true
	case kCQ:
		return o.cq, true
	case kSRQ:
		return o.srq, true
	case kQP:
		return o.qp, true
	case kAH:
		return o.ah, true
	case kXRCD:
		return o.xd, true
	}
	return nil, false
}

// Prompt returns the prompt of the next cell: "[7] vsh> ".
func (s *Shell) Prompt() string { return fmt.Sprintf("[%d] vsh> ", s.cell+1) }

// Banner is what an interactive session prints first.
func (s *Shell) Banner() string {
	v := s.opts.Version
	if v == "" {
		v = "devel"
	}
	var names []string
	for _, d := range s.devs {
		names = append(names, d.Name())
	}
	return fmt.Sprintf("vsh %s: the verbs shell on %s; devices: %s\n"+
		"Type help for the commands, explain X for any error, state or opcode, quit or Ctrl-D to leave.\n",
		v, s.backendDesc(), strings.Join(names, ", "))
}

func (s *Shell) backendDesc() string {
	if s.opts.Backend != "" {
		return s.opts.Backend
	}
	return s.prov.Name()
}

// splitBang removes a leading "! " (the command is expected to fail).
func splitBang(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	if t == "!" {
		return "", true
	}
	if strings.HasPrefix(t, "! ") || strings.HasPrefix(t, "!\t") {
		return t[2:], true
	}
	return line, false
}

// Exec runs one line as a numbered cell, as ExecContext does with a
// context that is never cancelled: only Interrupt stops it.
func (s *Shell) Exec(line string) (cellOut string, cellErr error) {
	return s.ExecContext(context.Background(), line)
}

// ExecContext runs one line as a numbered cell and returns its output: what the
// verbs did, then what changed (QP states, queue occupancy, packets when
// tracing, watched objects). The error is the command's failure, a *CmdError
// that names the verb, the errno, why and how to fix it; print it with
// FormatError. A line that starts with "! " expects its command to fail:
// then the failure is part of the output and Exec returns nil, and a success
// is the error. An empty or comment-only line is no cell: ("", nil).
// Exec returns ErrExit for quit. When ctx ends, or Interrupt is called,
// the cell's long command stops and returns an error that wraps
// ErrInterrupted (or ctx's cause). A line run by a running cell (source,
// a lesson's commands) runs in that cell's context.
func (s *Shell) ExecContext(ctx context.Context, line string) (cellOut string, cellErr error) {
	if s.ctx == nil {
		cctx, cancel := context.WithCancelCause(ctx)
		s.mu.Lock()
		s.ctx, s.cancel = cctx, cancel
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.ctx, s.cancel = nil, nil
			s.mu.Unlock()
			cancel(nil)
		}()
	}
	defer s.afterCell(s.cell, &cellOut, &cellErr)
	body, expect := splitBang(line)
	var toks []token
	var terr error
	if len(body) > MaxLine {
		body, terr = body[:64]+" …", lineTooLong(len(body)) // not read further
	} else {
		toks, terr = tokenize(body)
	}
	if terr == nil && len(toks) == 0 {
		if expect {
			s.cell++
			return "", &CmdError{Cell: s.cell, Err: usagef("write the command after it: ! modify_qp qp0 state=rts", "\"!\" needs a command")}
		}
		s.keepComment(line)
		return "", nil
	}
	if s.cell >= MaxCells {
		return "", &CmdError{Cell: s.cell, Err: usagef("save the session (save FILE.md) and start vsh again",
			"the session has run %d cells, the most one session keeps (MaxCells)", MaxCells)}
	}
	s.cell++
	c := &Cell{N: s.cell, Line: strings.TrimSpace(body), ExpectFail: expect,
		typed: s.depth == 0 && (s.lesson == nil || s.lesson.inTutor == 0), step: -1, nbCell: s.nbCells}
	if st := s.lesson; st != nil {
		c.byTutor = st.inTutor > 0
		switch {
		case st.starting != nil: // the tutor runs the first steps' auto cells
			c.lesson, c.step = st.starting, 0
		case st.tutor != nil && !st.tutor.Quit():
			c.lesson = st.tutor.Lesson()
			c.step, _ = st.tutor.Step()
		}
	}
	o, err := s.runCell(c, body, toks, terr)
	out := o.render(s.st, c.N, s.width())
	s.lastOut, s.lastPlain = o, out
	c.Out, c.Err, c.TypedBack = s.keepOutput(o.render(s.st, c.N, 0)), err, o.typedBack()
	if _, hint := errorParts(err); hint != "" {
		c.TypedBack = append(c.TypedBack, strings.Split(hint, "; ")...)
	}
	if errors.Is(err, ErrExit) {
		c.Err = nil
	}
	s.log = append(s.log, *c)
	s.posts.logged(len(s.log)-1, len(c.posts))
	s.calls.logged(len(s.log)-1, len(c.calls))
	s.verbs.logged(len(s.log)-1, len(c.Verbs))
	s.wcs.logged(len(s.log)-1, len(c.Completions))
	if errors.Is(err, ErrExit) {
		return out, ErrExit
	}
	if expect {
		if err != nil {
			return out + s.formatError(err, true), nil
		}
		s.log[len(s.log)-1].unexpected = &CmdError{Cell: c.N, Cmd: c.cmd, Err: usagef("drop the \"! \" if it should succeed; a script line that starts with \"! \" must fail",
			"expected to fail, but it succeeded")}
		return out, s.log[len(s.log)-1].unexpected
	}
	return out, err
}

// runCell finds the command, parses its arguments, runs it and adds the live
// view of what changed.
func (s *Shell) runCell(c *Cell, src string, toks []token, terr error) (*output, error) {
	if terr != nil {
		name := ""
		if len(toks) > 0 {
			name = strings.ToLower(toks[0].text)
		}
		return &output{}, &CmdError{Cell: c.N, Cmd: name, Err: terr}
	}
	name := strings.ToLower(toks[0].text)
	cmd, ok := s.byKey[name]
	if !ok {
		return &output{}, &CmdError{Cell: c.N, Err: s.unknownCommand(toks[0].text)}
	}
	c.cmd = cmd.Name
	a, err := parseArgs(cmd, toks[1:])
	if err != nil {
		return &output{}, &CmdError{Cell: c.N, Cmd: cmd.Name, Err: err}
	}
	if s.opts.Confined && cmd.network {
		return &output{}, &CmdError{Cell: c.N, Cmd: cmd.Name, Err: errConfined}
	}
	cl := &call{s: s, cmd: cmd, a: a, out: &output{}, cell: c, src: src}
	s.recordCall(c, cmd, a)
	err = s.protect(cmd.Name, func() error {
		s.testPanic(cmd.Name)
		return cmd.run(cl)
	})
	if err != nil && !errors.Is(err, ErrExit) {
		err = &CmdError{Cell: c.N, Cmd: cmd.Name, Err: err}
	}
	if !cmd.meta {
		if perr := s.protect(cmd.Name, func() error { s.liveView(cl); return nil }); perr != nil && err == nil {
			err = &CmdError{Cell: c.N, Cmd: cmd.Name, Err: perr}
		}
	}
	if s.pkts != nil {
		c.packets = s.pkts.drain()
	}
	return cl.out, err
}

// protect runs fn, turning a panic into an error: bad input must never crash
// a learner's session. Tests and fuzzing set noRecover to see the panic.
func (s *Shell) protect(name string, fn func() error) (err error) {
	if s.noRecover {
		return fn()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in %s: %v (this is a bug in vsh; please report it with the command that caused it)\n%s",
				name, r, firstLines(string(debug.Stack()), 12))
		}
	}()
	return fn()
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func (s *Shell) unknownCommand(word string) error {
	var names []string
	for _, c := range s.cmds {
		names = append(names, c.Name)
		names = append(names, c.Aliases...)
	}
	low := strings.ToLower(word)
	hint := "help lists every command"
	if k, ok := kindOfName(low); ok {
		return usagef("show "+low+" draws it; help lists every command",
			"%q is a %s handle, not a command", word, kindInfo[k].noun)
	}
	if near := nearest(low, names); near != "" {
		c := s.byKey[near]
		return usagef(hint+"; "+c.Name+": "+c.Summary, "unknown command %q; did you mean %s?", word, c.Name)
	}
	if strings.HasPrefix(low, "ibv_") {
		if c, ok := s.byKey[strings.TrimPrefix(low, "ibv_")]; ok {
			return usagef("commands are named after the verbs without ibv_", "unknown command %q; did you mean %s?", word, c.Name)
		}
	}
	return usagef(hint, "unknown command %q", word)
}

// CmdError is a command that failed. It wraps the verb's *verbs.Error (or a
// usage error, when no verb ran), so errors.Is and verbs.ErrnoOf see the
// errno.
type CmdError struct {
	Cell int    // the cell's number
	Cmd  string // the command: "modify_qp"; "" for an unknown command
	Err  error
}

// Unwrap returns the underlying error.
func (e *CmdError) Unwrap() error { return e.Err }

// Error prints "modify_qp: EINVAL: why; hint: how to fix". When the
// command ran a verb of another name (connect runs ibv_modify_qp), the verb
// is named too: "connect: ibv_modify_qp: EINVAL: ...".
func (e *CmdError) Error() string {
	first, hint := e.parts()
	if hint != "" {
		return first + "; hint: " + hint
	}
	return first
}

// parts returns the error line and its hint.
func (e *CmdError) parts() (string, string) {
	var b strings.Builder
	if e.Cmd != "" {
		b.WriteString(escapeControls(e.Cmd)) // as typed, when no command has that name
		b.WriteString(": ")
	}
	var hint string
	if ve, ok := verbs.AsError(e.Err); ok {
		if ve.Op != "" && ve.Op != "ibv_"+e.Cmd {
			b.WriteString(ve.Op)
			b.WriteString(": ")
		}
		b.WriteString(verbs.ErrnoName(ve.Errno))
		if ve.Why != "" {
			b.WriteString(": ")
			b.WriteString(ve.Why)
		}
		hint = ve.Hint
		if hint == "" {
			hint = fallbackHint(ve.Op, ve.Errno)
		}
		return b.String(), hint
	}
	var ue *usageError
	var se *syntaxError
	switch {
	case errors.As(e.Err, &ue):
		b.WriteString(ue.msg)
		hint = ue.hint
	case errors.As(e.Err, &se):
		b.WriteString(se.msg)
		hint = se.hint
	default:
		if n := verbs.ErrnoOf(e.Err); n != 0 && !strings.Contains(e.Err.Error(), verbs.ErrnoName(n)) {
			b.WriteString(verbs.ErrnoName(n))
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
		hint = fileHint(e.Err)
	}
	return b.String(), hint
}

// fileHint says how to mend a failed file operation (save, source, trace
// pcap, svg=), or "" for another error.
func fileHint(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return ""
	}
	switch {
	case pe.Path == "":
		return "give a file name"
	case errors.Is(err, syscall.EISDIR):
		return pe.Path + " is a folder: give a file in it (" + filepath.Join(pe.Path, "name") + ")"
	case errors.Is(err, fs.ErrNotExist) && pe.Op == "open" && filepath.Dir(pe.Path) != ".":
		return "give a file in a folder that exists, or create " + filepath.Dir(pe.Path) + " first"
	case errors.Is(err, fs.ErrNotExist):
		return "check the name: no such file here (" + pe.Path + ")"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return "give a file in a folder you can write to"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full: free some space, or write elsewhere"
	}
	return "check the file name and that its folder is one you can use"
}

// width is the width the output must fit, 0 for none (Options.Width).
func (s *Shell) width() int {
	if s.opts.Width == nil {
		return 0
	}
	return max(s.opts.Width(), 0)
}

// errorParts returns err's line and hint, as FormatError shows them.
func errorParts(err error) (first, hint string) {
	var ce *CmdError
	if errors.As(err, &ce) {
		return ce.parts()
	}
	if err == nil {
		return "", ""
	}
	return err.Error(), ""
}

// FormatError renders an error from Exec as the session shows it:
// "[7] error: modify_qp: EINVAL: ...", the hint on its own line.
func (s *Shell) FormatError(err error) string {
	if err == nil || errors.Is(err, ErrExit) {
		return ""
	}
	return s.formatError(err, false)
}

func (s *Shell) formatError(err error, expected bool) string {
	n := s.cell
	var ce *CmdError
	if errors.As(err, &ce) {
		n = ce.Cell
	}
	first, hint := errorParts(err)
	// An error may quote what was typed, or a script's line: its control
	// characters are shown, not sent to the terminal.
	first, hint = escapeLines(first), escapeLines(hint)
	tag := fmt.Sprintf("[%d] ", n)
	label := "error: "
	if expected {
		label = "error (expected): "
	}
	pad := strings.Repeat(" ", len(tag))
	var b strings.Builder
	// The error wraps at words under its text; the hint, whose clauses
	// mostly hold a command to type, only between clauses.
	for i, l := range strings.Split(first, "\n") {
		if i == 0 {
			l = s.st.Render(s.st.Cell, strings.TrimSpace(tag)) + " " + s.st.Render(s.st.Err, label) + l
		} else {
			l = pad + l
		}
		for _, w := range render.Wrap(render.Line{Text: l, Hang: len(tag) + len(label)}, s.width()) {
			b.WriteString(w)
			b.WriteString("\n")
		}
	}
	if hint != "" {
		l := pad + s.st.Render(s.st.Hint, "hint: ") + indentRest(hint, len(tag))
		for _, w := range render.Wrap(render.Line{Text: l, Kind: render.Clauses, Hang: len(tag) + len("hint: ")}, s.width()) {
			b.WriteString(w)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// escapeLines is escapeControls for each line of s.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escapeControls(l)
	}
	return strings.Join(lines, "\n")
}

func indentRest(s string, n int) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(s, "\n", "\n"+strings.Repeat(" ", n))
}

// fileSystem is how the shell reads scripts and writes notebooks and pcaps;
// tests replace it.
type fileSystem interface {
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte) error
	Create(name string) (writeCloser, error)
	// Exists reports whether something is at name already.
	Exists(name string) bool
}

type writeCloser interface {
	Write([]byte) (int, error)
	Close() error
}

type osFiles struct{}

// confinedFiles reads as fs does and writes nothing (Options.Confined).
type confinedFiles struct{ fs fileSystem }

// errConfined is a write refused in a confined session.
var errConfined = usagef("run it in a session of your own (vsh, vsh -f SCRIPT), not in a graded script or a lesson's cell",
	"refused: this session is confined (a script being graded with vsh lesson --report, or a lesson being checked) and changes nothing outside itself")

func (f confinedFiles) ReadFile(name string) ([]byte, error) { return f.fs.ReadFile(name) }
func (f confinedFiles) WriteFile(string, []byte) error       { return errConfined }
func (f confinedFiles) Create(string) (writeCloser, error)   { return nil, errConfined }
func (f confinedFiles) Exists(name string) bool              { return f.fs.Exists(name) }

func (osFiles) ReadFile(name string) ([]byte, error) {
	return readFileLimit(name, MaxScriptFile, "MaxScriptFile", "script or lesson file")
}
func (osFiles) WriteFile(name string, data []byte) error { return os.WriteFile(name, data, 0o644) }
func (osFiles) Create(name string) (writeCloser, error)  { return os.Create(name) }
func (osFiles) Exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}
