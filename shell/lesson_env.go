package shell

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell/render"
	"github.com/vsh-rdma/vsh/verbs"
)

// LessonEnv returns the session as a lessons.Env: what the lesson player
// and tutor need — run a command, read the structured log of what the
// commands returned, reach the verbs objects behind the handles — and
// nothing that reads printed text.
func (s *Shell) LessonEnv() lessons.Env { return lessonEnv{s} }

// lessonEnv adapts a Shell to lessons.Env. Commands it runs are the
// tutor's own, so the tutor does not observe them.
type lessonEnv struct{ s *Shell }

var _ lessons.Env = lessonEnv{}

func (e lessonEnv) Exec(line string) (string, error) {
	return e.ExecContext(context.Background(), line)
}

// ExecContext runs a lesson's command in a cell that stops when ctx ends
// (lessons.Play's PlayOptions.Context).
func (e lessonEnv) ExecContext(ctx context.Context, line string) (string, error) {
	st := e.s.lessonState()
	st.inTutor++
	defer func() { st.inTutor-- }()
	return e.s.ExecContext(ctx, line)
}

func (e lessonEnv) FormatError(err error) string { return e.s.FormatError(err) }

func (e lessonEnv) Prompt() string { return e.s.Prompt() }

func (e lessonEnv) RecordCount() int { return len(e.s.log) }

func (e lessonEnv) Records(from int) []lessons.Record {
	if from < 0 {
		from = 0
	}
	if from >= len(e.s.log) {
		return nil
	}
	out := make([]lessons.Record, 0, len(e.s.log)-from)
	for _, c := range e.s.log[from:] {
		out = append(out, e.s.cellRecord(c))
	}
	return out
}

// cellRecord turns a cell of the log into a lessons.Record.
func (s *Shell) cellRecord(c Cell) lessons.Record {
	r := lessons.Record{N: c.N, Line: c.Line, Cmd: c.cmd, Err: c.Err, ExpectFail: c.ExpectFail,
		Created: append([]string(nil), c.Created...), Calls: c.calls, Posts: c.posts, Packets: c.packets}
	for i, wc := range c.Completions {
		cq := ""
		if i < len(c.CompletionCQs) {
			cq = c.CompletionCQs[i]
		}
		r.Completions = append(r.Completions, lessons.Completion{CQ: cq, WC: wc})
	}
	if r.Err == nil && c.unexpected != nil {
		r.Err, r.Unexpected = c.unexpected, true
	}
	return r
}

func (e lessonEnv) Object(handle string) (any, bool) { return e.s.Object(handle) }

func (e lessonEnv) Handles() []string {
	var out []string
	for _, o := range e.s.h.all() {
		out = append(out, o.name)
	}
	return out
}

func (e lessonEnv) Provider() verbs.Provider { return e.s.prov }

func (e lessonEnv) Plain() bool { return e.s.st.Plain() }

// Width is the width the session's output must fit, 0 for none: the
// tutor wraps its words to it (lessons.Width at most).
func (e lessonEnv) Width() int { return e.s.width() }

// Light reports whether the session's colours are a light background's;
// lessons render their prose to match (lessons.RenderMarkdownFor).
func (e lessonEnv) Light() bool { return e.s.st.Theme() == render.Light }

// lessonState is the shell's side of a lesson: the tutor, when one runs.
type lessonState struct {
	tutor *lessons.Tutor
	// graded is the lesson a confined session started with, the only one
	// it takes (Options.Confined).
	graded string
	// inTutor counts the commands the tutor (or a player) is running
	// itself, which it must not observe.
	inTutor int
	// pp_stats' clock.
	ppStart   time.Duration
	ppStarted bool
	// marked is the place last bookmarked ("ref step"); bookmarkErr is set
	// once keeping it failed, so that the learner is told once.
	marked      string
	bookmarkErr bool
	// note is said after the tutor's words: progress not saved.
	note string
	// startedAt is the cell that started the running lesson: a learner's
	// script (save FILE.vsh) holds what was typed after it.
	startedAt int
	// starting is the lesson being started, while its tutor is made.
	starting *lessons.Lesson
}

// takeNote returns the note to say, once.
func (st *lessonState) takeNote() string {
	n := st.note
	st.note = ""
	return n
}

func (s *Shell) lessonState() *lessonState {
	if s.lesson == nil {
		s.lesson = &lessonState{}
	}
	return s.lesson
}

// afterCell is deferred by Exec: when a lesson is running and the learner
// typed a command (not lesson itself, not one the tutor runs, not one a
// script sourced), the tutor looks at the new cell. Its words come after
// the command's output and error; a failure is then part of the output (a
// mistake is part of a lesson, not the end of a script).
func (s *Shell) afterCell(before int, out *string, err *error) {
	st := s.lesson
	if st == nil || st.tutor == nil || st.inTutor > 0 || s.depth > 0 || s.cell == before || len(s.log) == 0 {
		return
	}
	last := s.log[len(s.log)-1]
	if lessons.TutorCommand(last.cmd) || errors.Is(*err, ErrExit) {
		return
	}
	if _, over := st.tutor.Step(); over {
		return
	}
	var words string
	if perr := s.protect("lesson", func() error { words = st.tutor.Observe(); return nil }); perr != nil {
		words = s.FormatError(&CmdError{Cell: last.N, Cmd: "lesson", Err: perr})
	}
	words += st.takeNote() + s.keepPlace()
	if words == "" {
		return
	}
	if *err != nil {
		*out += s.FormatError(*err)
		*err = nil
	}
	*out += strings.TrimRight(words, "\n") + "\n"
}

// Tutor returns the lesson running in the session, or nil.
func (s *Shell) Tutor() *lessons.Tutor {
	if s.lesson == nil {
		return nil
	}
	return s.lesson.tutor
}

func (e lessonEnv) RecordPackets(on bool) bool { return e.s.recordPackets(on) }

func (e lessonEnv) Expand(line string) []string {
	body, bang := splitBang(line)
	out, ok := repeatBodies(body, maxRepeat)
	if !ok || !strings.Contains(body, "{i") {
		return []string{line}
	}
	if bang {
		for i := range out {
			out[i] = "! " + out[i]
		}
	}
	return out
}

// repeatBodies returns the commands repeat N CMD runs, {i} counted out; it
// reports false for another line, or for more than max.
func repeatBodies(line string, max uint64) ([]string, bool) {
	toks, err := tokenize(line)
	if err != nil || len(toks) < 3 || !strings.EqualFold(toks[0].text, "repeat") {
		return nil, false
	}
	n, err := parseUint(toks[1].text, 31)
	if err != nil || n > max {
		return nil, false
	}
	out := make([]string, 0, n)
	for i := 0; i < int(n); i++ {
		out = append(out, substituteIndex(line[toks[2].start:], i))
	}
	return out, true
}

func (e lessonEnv) Unroll(line string) []string {
	out, ok := e.s.unroll(line, 0)
	if !ok || len(out) < 2 {
		return nil
	}
	return out
}

// maxUnrolled bounds the commands Unroll lists.
const maxUnrolled = 256

// unroll lists the single commands line runs: repeat N CMD N times, {i}
// counted out; do A; B each of its parts; any other line itself. It
// reports false past maxUnrolled commands, or for a line it cannot read.
func (s *Shell) unroll(line string, depth int) ([]string, bool) {
	toks, err := tokenize(line)
	if err != nil || len(toks) == 0 || depth > 3 {
		return nil, false
	}
	parts, ok := repeatBodies(line, maxUnrolled)
	if !ok && strings.EqualFold(toks[0].text, "do") && len(toks) >= 2 {
		if parts, err = splitSemicolons(line[toks[1].start:]); err != nil {
			return nil, false
		}
		ok = true
	}
	if !ok {
		return []string{strings.TrimSpace(line)}, true
	}
	var out []string
	for _, p := range parts {
		part, ok := s.unroll(p, depth+1)
		if !ok || len(out)+len(part) > maxUnrolled {
			return nil, false
		}
		out = append(out, part...)
	}
	return out, true
}

func (e lessonEnv) Info(handle string) (lessons.ObjectInfo, bool) {
	o, ok := e.s.h.byName[strings.ToLower(handle)]
	if !ok {
		return lessons.ObjectInfo{}, false
	}
	in := lessons.ObjectInfo{Device: -1, Sends: len(o.sent), Recvs: o.recvs, Groups: append([]verbs.GID(nil), o.groups...), File: o.xrcdPath}
	for i, d := range e.s.devs {
		if d.Name() == o.dev {
			in.Device = i
			break
		}
	}
	return in, true
}

// Unpolled shows a CQ's completions through the simulator's inspector.
// Elsewhere it takes them off the device into the CQ's stash, from which
// the learner's next poll_cq returns them first, waiting up to wait for
// want of them.
func (e lessonEnv) Unpolled(cq string, want int, wait time.Duration) ([]verbs.WC, bool) {
	o, ok := e.s.h.byName[strings.ToLower(cq)]
	if !ok || o.kind != kCQ {
		return nil, false
	}
	if insp, ok := e.s.prov.(verbs.Inspector); ok {
		in, err := insp.InspectCQ(o.cq)
		if err != nil {
			return nil, false
		}
		return in.Entries, true
	}
	deadline := time.Now().Add(wait)
	buf := make([]verbs.WC, 64)
	for {
		n, err := o.cq.Poll(buf)
		if err != nil {
			return nil, false
		}
		o.stash = append(o.stash, buf[:n]...)
		if n == len(buf) && len(o.stash) < 1<<16 {
			continue
		}
		if len(o.stash) >= want || !time.Now().Before(deadline) || e.s.interrupted() {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return append([]verbs.WC(nil), o.stash...), true
}

func (e lessonEnv) Settings() []string {
	s := e.s
	var out []string
	devName := func(name string) string {
		for i, d := range s.devs {
			if d.Name() == name {
				return devIndexName(i)
			}
		}
		return name
	}
	trace := "off"
	if s.tr != nil {
		trace = "on"
	}
	out = append(out, "trace="+trace)
	if s.xrcOn() {
		out = append(out, "xrc=on") // backend xrc=on; off, the default, goes unsaid
	}
	if st, ok := s.prov.(verbs.Stepper); ok {
		out = append(out, "fabric="+st.DeliveryMode().String())
		if st.DeliveryMode() == verbs.DeliverStep {
			p, t := st.Pending()
			out = append(out, fmt.Sprintf("pending=%d packet%s, %d timer%s", p, plural(p), t, plural(t)))
		}
	}
	if fi, ok := s.prov.(verbs.FaultInjector); ok {
		for _, r := range fi.Faults() {
			if r.Nth > 0 && r.Hits > 0 {
				continue // spent on its one packet, as a rule with count=1 is retired
			}
			rule := r.Action.String()
			if r.Opcode != "" {
				rule += " opcode=" + strings.ToLower(r.Opcode)
			}
			if r.From != "" {
				rule += " from=" + devName(r.From)
			}
			if r.To != "" {
				rule += " to=" + devName(r.To)
			}
			if r.HasPSN {
				rule += " psn=(one PSN)" // which one differs from session to session
			}
			if r.Nth > 0 {
				rule += fmt.Sprintf(" nth=%d", r.Nth)
			}
			if r.Count > 0 {
				rule += fmt.Sprintf(" count=%d left=%d", r.Count, r.Count-r.Hits)
			}
			if r.Probability > 0 {
				rule += fmt.Sprintf(" prob=%g", r.Probability)
			}
			if r.Delay > 0 {
				rule += " delay=" + r.Delay.String()
			}
			out = append(out, "fault="+rule)
		}
	}
	if lc, ok := s.prov.(verbs.LinkConfigurer); ok {
		for i, d := range s.devs {
			if p, err := lc.LinkParams(d.Name()); err == nil {
				out = append(out, fmt.Sprintf("link.%s=mtu %d", devIndexName(i), p.MTU))
			}
		}
	}
	if hg, ok := s.prov.(verbs.HostGroups); ok {
		for i, d := range s.devs {
			if i > 0 && len(s.devs) > 1 && d == s.devs[0] {
				continue
			}
			if gs, err := hg.IPGroups(d.Name()); err == nil {
				for _, g := range gs {
					out = append(out, fmt.Sprintf("group.%s=%s", devIndexName(i), g))
				}
			}
		}
	}
	if st := s.lesson; st != nil && st.ppStarted {
		out = append(out, "pp_stats=started")
	}
	return out
}

func (e lessonEnv) Explain(topic string) string {
	t := strings.TrimSpace(topic)
	if st, err := verbs.ParseWCStatus(t); err == nil && !isWCOpcodeName(strings.ToUpper(t)) {
		return firstSentence(st.Explain())
	}
	if n, err := verbs.ParseErrno(t); err == nil {
		return firstSentence(errnoText[n])
	}
	if st, err := verbs.ParseQPState(t); err == nil {
		return firstSentence(stateText[st])
	}
	return ""
}

func (e lessonEnv) Shadow() (lessons.Env, func() error, error) {
	s := e.s
	n := max(1, len(s.devs))
	open := s.opts.Open
	if s.opts.Shadow != nil {
		open = func() (verbs.Provider, error) { return s.opts.Shadow(n) }
	}
	sh, err := New(Options{Open: open, Plain: true, Backend: "sim (the lesson's reference)", Version: s.opts.Version})
	if err != nil {
		return nil, nil, err
	}
	sh.noRecover = s.noRecover
	if s.xrcOn() || s.xrcLesson {
		// The reference plays the lesson's XRC verbs too: a simulator
		// with XRC on, as the session's is (or its device has XRC).
		if err := sh.setXRC(true); err != nil {
			sh.Close()
			return nil, nil, err
		}
	}
	return sh.LessonEnv(), sh.Close, nil
}

// keepPlace bookmarks the learner's place in the running lesson when it
// changed (Options.StateDir): the step, or, once the lesson is finished,
// nothing. It returns what the learner must know: "" unless keeping it
// failed, which is said once.
func (s *Shell) keepPlace() string {
	st := s.lesson
	if s.opts.StateDir == "" || st == nil || st.tutor == nil || st.bookmarkErr {
		return ""
	}
	t := st.tutor
	l := t.Lesson()
	ref := lessons.Ref(l)
	step, over := t.Step()
	finished := over && !t.Quit()
	mark := fmt.Sprintf("%s %d %v", ref, step, finished)
	if mark == st.marked {
		return ""
	}
	st.marked = mark
	b, err := lessons.OpenBookmarks(s.opts.StateDir)
	if err == nil {
		if finished {
			err = b.Remove(ref)
		} else {
			err = b.Set(lessons.Bookmark{Ref: ref, ID: l.ID, Title: l.Title, Step: step, Steps: len(l.Steps), At: time.Now().UTC()})
		}
	}
	if err != nil {
		st.bookmarkErr = true
		return fmt.Sprintf("» vsh cannot keep your place for lesson resume: %v\n", err)
	}
	return ""
}

// ReadCommand implements lessons.CommandReader: the commands a line runs,
// by their canonical names, with their arguments by canonical key, read
// without running anything; repeat's command and each of a do's.
func (e lessonEnv) ReadCommand(line string) ([]lessons.ParsedCommand, error) {
	body, _ := splitBang(line)
	return e.s.readCommand(body, 0)
}

func (s *Shell) readCommand(line string, depth int) ([]lessons.ParsedCommand, error) {
	toks, err := tokenize(line)
	if err != nil || len(toks) == 0 {
		return nil, err
	}
	cmd, ok := s.byKey[strings.ToLower(toks[0].text)]
	if !ok {
		return nil, s.unknownCommand(toks[0].text)
	}
	switch {
	case depth > 2:
	case cmd.Name == "repeat" && len(toks) >= 3:
		return s.readCommand(line[toks[2].start:], depth+1)
	case cmd.Name == "do" && len(toks) >= 2:
		parts, err := splitSemicolons(line[toks[1].start:])
		if err != nil {
			return nil, err
		}
		var out []lessons.ParsedCommand
		for _, p := range parts {
			pcs, err := s.readCommand(p, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, pcs...)
		}
		return out, nil
	}
	a, err := parseArgs(cmd, toks[1:])
	if err != nil {
		return nil, err
	}
	pc := lessons.ParsedCommand{Name: cmd.Name, Args: a.kv}
	for _, t := range a.pos {
		pc.Pos = append(pc.Pos, t.text)
	}
	return []lessons.ParsedCommand{pc}, nil
}
