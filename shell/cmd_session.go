package shell

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

func helpCmd() *command {
	return &command{Name: "help", Aliases: []string{"?"}, Group: gSession, Usage: "help [CMD]",
		Summary: "List the commands, or explain one",
		Args:    []argSpec{pos("CMD", vCommand, false, "a command")}, meta: true, run: cmdHelp}
}

func cmdHelp(c *call) error {
	if len(c.a.pos) == 0 {
		c.s.writeHelp(c.out)
		return nil
	}
	w := strings.ToLower(c.a.pos[0].text)
	cmd, ok := c.s.byKey[w]
	if !ok {
		return c.s.unknownCommand(c.a.pos[0].text)
	}
	writeCommandHelp(c.out, cmd)
	return nil
}

func quitCmd() *command {
	return &command{Name: "quit", Aliases: []string{"exit", "q"}, Group: gSession, Usage: "quit",
		Summary: "Leave vsh (Ctrl-D does too)", meta: true, skipNotebook: true, run: cmdQuit}
}

func cmdQuit(c *call) error { return ErrExit }

// noRepeat are the commands repeat refuses: they act on the session itself.
var noRepeat = map[string]bool{"source": true, "save": true, "quit": true, "reset": true, "repeat": true}

const maxRepeat = 10000

func repeatCmd() *command {
	return &command{Name: "repeat", Group: gSession, Usage: "repeat N COMMAND...",
		Summary: "Run a command N times in one cell; {i} in it counts 0, 1, 2, ...",
		Help: "Stops at the first failure. Example: repeat 4 post_recv qp1 mr=mr1 offset={i}00 length=64 wr_id={i}. " +
			"{i+16}, {i*2} and {i*2+1} count from elsewhere: repeat 16 connect qp{i} qp{i+16}. do makes a loop body of several commands.",
		rawArgs: true, run: cmdRepeat, complete: completeRepeat}
}

func cmdRepeat(c *call) error {
	if len(c.a.pos) < 2 {
		return usagef("repeat 4 post_recv qp1 mr=mr1 wr_id={i}", "repeat needs a count and a command")
	}
	u, err := parseUint(c.a.pos[0].text, 31)
	if err != nil && strings.HasPrefix(c.a.pos[0].text, "-") {
		err = errors.New("a count is 0 or more")
	}
	if err != nil {
		return usagef("repeat 4 post_recv qp1 mr=mr1", "bad count %s: %v", c.a.pos[0].text, err)
	}
	n := int(u)
	if n > maxRepeat {
		return usagef(fmt.Sprintf("repeat at most %d times", maxRepeat), "repeat %d is too many", n)
	}
	text := c.src[c.a.pos[1].start:]
	name := strings.ToLower(c.a.pos[1].text)
	cmd, ok := c.s.byKey[name]
	if !ok {
		return c.s.unknownCommand(c.a.pos[1].text)
	}
	if noRepeat[cmd.Name] {
		return usagef("run it once, on its own line", "repeat cannot run %s", cmd.Name)
	}
	for i := 0; i < n; i++ {
		if c.s.interrupted() {
			return c.s.stopped("repeat ran %d of its %d repetitions", i, n)
		}
		line := substituteIndex(text, i) // cmd_do.go: {i}, {i+16}, {i*2+1}
		toks, err := tokenize(line)
		if err != nil {
			return err
		}
		a, err := parseArgs(cmd, toks[1:])
		if err != nil {
			return err
		}
		if n > 1 {
			c.line("#%d %s", i, line)
		}
		sub := &call{s: c.s, cmd: cmd, a: a, out: c.out, cell: c.cell, src: line}
		c.s.recordCall(c.cell, cmd, a)
		if err := cmd.run(sub); err != nil {
			if n > 1 {
				return fmt.Errorf("repetition #%d: %w", i, err)
			}
			return err
		}
	}
	return nil
}

func resetCmd() *command {
	return &command{Name: "reset", Group: gSession, Usage: "reset",
		Summary: "Destroy every object and restart the backend, as at the start of the session",
		run:     cmdReset}
}

func cmdReset(c *call) error {
	s := c.s
	if s.tr != nil {
		if err := s.tr.stop(); err != nil {
			c.line("trace: %v", err)
		}
		s.tr = nil
	}
	calls, err := s.destroyAll()
	for _, v := range calls {
		c.verbs(v)
	}
	if err != nil {
		c.line("some objects would not go: %v", err)
	}
	if cerr := s.prov.Close(); cerr != nil {
		c.line("closing the backend: %v", cerr)
	}
	s.prov = nil
	if err := s.open(); err != nil {
		return err
	}
	kept := ""
	if s.xrcWant != nil { // cmd_xrc.go
		kept = map[bool]string{true: "; XRC stays on, as backend xrc=on set it", false: "; XRC stays off, as backend xrc=off set it"}[*s.xrcWant]
	}
	c.line("the backend is restarted: %s; handles count from 0 again%s", s.backendDesc(), kept)
	return nil
}

// destroyAll destroys every object, newest first, so that each goes before
// what it was made from, returns the calls it made, and forgets them all. Its cost
// is linear in the number of objects: exit and reset with a million of them
// take seconds.
func (s *Shell) destroyAll() ([]VerbCall, error) {
	all := s.h.all()
	calls := make([]VerbCall, 0, len(all))
	var errs []error
	for i := len(all) - 1; i >= 0; i-- {
		o := all[i]
		var err error
		var verb string
		switch o.kind {
		case kAH:
			verb, err = "ibv_destroy_ah", o.ah.Destroy()
		case kQP:
			verb, err = "ibv_destroy_qp", o.qp.Destroy()
		case kSRQ:
			verb, err = "ibv_destroy_srq", o.srq.Destroy()
		case kMR:
			verb, err = "ibv_dereg_mr", o.mr.Dereg()
		case kCQ:
			verb, err = "ibv_destroy_cq", o.cq.Destroy()
		case kChan:
			verb, err = "ibv_destroy_comp_channel", o.ch.Destroy()
		case kPD:
			verb, err = "ibv_dealloc_pd", o.pd.Dealloc()
		case kXRCD:
			verb, err = "ibv_close_xrcd", o.xd.Close()
		case kCtx:
			verb, err = "ibv_close_device", o.ctx.Close()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s(%s): %w", verb, o.name, err))
			calls = append(calls, VerbCall{Name: verb, Args: o.name, Result: "= " + verbs.ErrnoName(verbs.ErrnoOf(err))})
		} else {
			calls = append(calls, VerbCall{Name: verb, Args: o.name, Result: "= 0"})
		}
	}
	// What forget does for one object, for all at once: a million map
	// deletions cost more than the destroys.
	s.h.clear()
	s.snap = newSnapshot()
	s.watched = nil
	return calls, errors.Join(errs...)
}
