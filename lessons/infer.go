package lessons

import (
	"fmt"
	"strings"
)

// CommandReader is an Env that can say which commands a line runs without
// running it; the shell's session is one. The validator reads a lesson's
// commands through it to infer what they need.
type CommandReader interface {
	// ReadCommand returns the commands line runs (repeat's command, each
	// of a do's), by canonical name, or the error running it would give
	// for a line written wrongly.
	ReadCommand(line string) ([]ParsedCommand, error)
}

// ParsedCommand is one command of a line, as a CommandReader reads it.
type ParsedCommand struct {
	Name string            // canonical: "modify_qp" for mqp
	Pos  []string          // its positional words
	Args map[string]string // its key=value arguments, by canonical key
}

// commandNeed is a capability that a command needs, when its arguments
// say so (when nil: always).
type commandNeed struct {
	cmd, need, what string
	when            func(pc ParsedCommand) bool
}

func argHas(key, sub string) func(ParsedCommand) bool {
	return func(pc ParsedCommand) bool { return strings.Contains(strings.ToLower(pc.Args[key]), sub) }
}

func firstPos(word string) func(ParsedCommand) bool {
	return func(pc ParsedCommand) bool { return len(pc.Pos) > 0 && strings.EqualFold(pc.Pos[0], word) }
}

// commandNeeds are what the shell's commands need of a backend beyond
// plain verbs: the Capabilities a lesson that runs them must name.
var commandNeeds = []commandNeed{
	{"fabric", "stepping", "holds packets for stepping", nil},
	{"step", "stepping", "steps the fabric", nil},
	{"run", "stepping", "runs the fabric", nil},
	{"advance", "stepping", "moves virtual time", nil},
	{"fault", "faults", "injects faults", nil},
	{"trace", "trace", "traces packets", nil},
	{"create_qp", "ud", "creates a UD QP", argHas("type", "ud")},
	{"create_ah", "ud", "creates an address handle", nil},
	{"pingpong", "ud", "runs ud_pingpong", firstPos("ud")},
	{"create_qp", "srq", "puts a QP on an SRQ", func(pc ParsedCommand) bool { return pc.Args["srq"] != "" && !strings.EqualFold(pc.Args["srq"], "none") }},
	{"create_srq", "srq", "creates an SRQ", nil},
	{"post_srq_recv", "srq", "posts to an SRQ", nil},
	{"pingpong", "srq", "runs srq_pingpong", firstPos("srq")},
	{"post_send", "atomics", "posts an atomic", argHas("opcode", "atomic")},
	{"attach_mcast", "multicast", "attaches a QP to a multicast group", nil},
	{"detach_mcast", "multicast", "detaches a QP from a multicast group", nil},
	{"join_group", "ip-groups", "joins a host's IP multicast group", nil},
	{"leave_group", "ip-groups", "leaves a host's IP multicast group", nil},
	{"open_xrcd", "xrc", "opens an XRC domain", nil},
	{"create_srq_ex", "xrc", "creates an XRC SRQ", argHas("type", "xrc")},
	{"create_qp_ex", "xrc", "creates an XRC QP", argHas("type", "xrc")},
	{"create_qp", "xrc", "creates an XRC QP", argHas("type", "xrc")},
	{"open_qp", "xrc", "opens an XRC_RECV QP", nil},
	{"pingpong", "xrc", "runs xsrq_pingpong", firstPos("xsrq")},
}

// inferNeeds reports each command of l that needs a capability neither
// the lesson's needs: nor its section's names, at the command's line.
// Commands the reader cannot read are left to the play to report.
func inferNeeds(l *Lesson, rd CommandReader) Errors {
	if rd == nil {
		return nil
	}
	var errs Errors
	for _, s := range l.Steps {
		if s.Cell == nil {
			continue
		}
		for _, c := range s.Cell.Commands {
			if isComment(c.Text) {
				continue
			}
			pcs, err := rd.ReadCommand(c.Bare())
			if err != nil {
				continue
			}
			said := map[string]bool{}
			for _, pc := range pcs {
				for _, cn := range commandNeeds {
					if cn.cmd != pc.Name || (cn.when != nil && !cn.when(pc)) || said[cn.need] ||
						contains(l.Needs, cn.need) || contains(s.Needs, cn.need) {
						continue
					}
					said[cn.need] = true
					errs = append(errs, l.errAt(c.Line, "%q %s: it needs a backend with %s (%s), which the lesson's needs: does not name; "+
						"add %s to the front matter's needs:%s", c.Bare(), cn.what, cn.need, capabilityByName[cn.need].Doc, cn.need, sectionHint(s)))
				}
			}
		}
	}
	return errs
}

// sectionHint is how a step's section could name a need instead of the
// lesson, when the step has a section.
func sectionHint(s *Step) string {
	switch {
	case s.NeedsLine != 0:
		return fmt.Sprintf(", or to section %q's needs: line (line %d)", s.Section, s.NeedsLine)
	case s.SectionLine != 0:
		return fmt.Sprintf(", or a needs: line under section %q's heading (line %d) when only that section needs it", s.Section, s.SectionLine)
	}
	return ""
}

// otherLangs are code block languages an edit away from vsh that are
// their own; a block in one is a misspelled cell only if it holds verbs.
var otherLangs = map[string]bool{"sh": true, "bash": true, "zsh": true, "csh": true, "ksh": true, "fish": true, "ash": true,
	"js": true, "ts": true, "cs": true, "rs": true, "hs": true, "vb": true, "c": true, "go": true, "py": true, "shell": true, "console": true}

// lintFences reports the code blocks of a lesson's prose whose fence looks
// like a misspelled ```vsh cell, each at its line: an info string within
// an edit distance of 2 of vsh (```vhs, ```Vsh, ```vsh-auto), or a shell
// language (```sh, ```bash) whose block holds verbs. isVerb reports
// whether a line runs a verb (nil: never).
func lintFences(name string, lines []string, isVerb func(string) bool) Errors {
	var errs Errors
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				start = i + 1
				break
			}
		}
	}
	open, info, at, verbsIn := "", "", 0, 0
	for i := start; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		f, inf, ok := fence(t)
		switch {
		case open == "" && ok:
			open, info, at, verbsIn = f, inf, i+1, 0
		case open != "" && ok && inf == "" && f[0] == open[0] && len(f) >= len(open):
			if msg := misspelledFence(open, info, verbsIn); msg != "" {
				errs = append(errs, &Error{Name: name, Line: at, Msg: msg})
			}
			open = ""
		case open != "" && t != "" && isVerb != nil && isVerb(t):
			verbsIn++
		}
	}
	if open != "" {
		if msg := misspelledFence(open, info, verbsIn); msg != "" {
			errs = append(errs, &Error{Name: name, Line: at, Msg: msg})
		}
	}
	return errs
}

// misspelledFence says why a code block's fence looks like a misspelled
// ```vsh, or "".
func misspelledFence(f, info string, verbsIn int) string {
	words := strings.Fields(info)
	if len(words) == 0 || words[0] == "vsh" {
		return ""
	}
	w := words[0]
	lw := strings.ToLower(w)
	near := strings.HasPrefix(lw, "vsh") || editDistance(lw, "vsh") <= 2
	switch {
	case !near && !(otherLangs[lw] && verbsIn > 0):
		return ""
	case otherLangs[lw] && verbsIn == 0:
		return ""
	}
	why := "its info string is an edit or two from vsh"
	if otherLangs[lw] {
		why = fmt.Sprintf("it holds %d line%s of vsh commands", verbsIn, plural(verbsIn))
	}
	meant := "vsh"
	if strings.Contains(lw, "auto") {
		meant = "vsh auto"
	}
	return fmt.Sprintf("%s%s opens a code block the lesson shows as prose, never runs, and never checks, yet %s: "+
		"did you mean %s%s? A cell's fence is exactly %svsh (the learner types it) or %svsh auto (the tutor runs it)",
		f, info, why, f, meant, f, f)
}
