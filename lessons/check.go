package lessons

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/internal/number"
)

// Check validates a lesson file and plays it in the sessions open returns,
// as CheckLesson does with only Open and Transcript set.
func Check(name string, src []byte, open func() (Env, func() error, error), w io.Writer) (*Lesson, error) {
	return CheckLesson(name, src, CheckOptions{Open: open, Transcript: w})
}

// CheckOptions configures CheckLesson.
type CheckOptions struct {
	// Open opens a fresh session on the simulator (vsh lesson check: with
	// --devices, two by default); close ends it.
	Open func() (env Env, close func() error, err error)
	// OpenOne opens one on a simulator with a single device, where A and B
	// are one device: a lesson that does not need two-devices must play
	// there too. nil skips that play.
	OpenOne func() (env Env, close func() error, err error)
	// Version is the running vsh's, checked against the lesson's
	// requires: line; "" skips that check.
	Version string
	// Transcript receives the transcript of the play (nil: dropped).
	Transcript io.Writer
}

// CheckLesson validates a lesson file — its front matter, its cells,
// every expectation's grammar, a goal: line on every step the learner
// performs, fences that look like a misspelled ```vsh, the capabilities
// its commands use against its needs: — and plays it on the simulator,
// judging each learner step as the tutor does: a step whose goal holds
// before the learner types anything is refused unless marked goal-holds:
// ok. A lesson with sections that need more than it does is played again,
// in a fresh session, without each such capability, as a backend that
// lacks it would; one that does not need two-devices is played on one
// device too. The steps after a skipped section must not depend on it.
//
// Every problem found comes back, each with its line, as Errors, in line
// order; a failure while playing is an *Error that wraps a *PlayError
// (errors.As finds it). A play stops at its first failure, the checks
// before it do not.
func CheckLesson(name string, src []byte, o CheckOptions) (*Lesson, error) {
	return checkLesson(name, src, o, true)
}

// checkLesson is CheckLesson; alone is unset for a lesson of a course,
// whose ids the course check judges.
func checkLesson(name string, src []byte, o CheckOptions, alone bool) (*Lesson, error) {
	l, errs, err := parsePartial(name, src)
	if err != nil {
		return nil, err
	}
	env, closeEnv, err := o.Open()
	if err != nil {
		return nil, err
	}
	rd, _ := env.(CommandReader)
	closeEnv()
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	errs = append(errs, lintFences(name, lines, verbLine(rd))...)
	errs = append(errs, inferNeeds(l, rd)...)
	errs = append(errs, lintWRIDGoals(name, l)...)
	errs = append(errs, lintPSNGoals(name, l)...)
	if sh, ok := Find(l.ID); alone && ok && sh.Hash != fmt.Sprintf("%x", sha256.Sum256(bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n")))) {
		// The shipped file itself checks clean (with CRLF line ends too);
		// a copy needs its own id.
		errs = append(errs, &Error{Name: name, Line: l.IDLine, Msg: fmt.Sprintf(
			"id %s is the id of a lesson that ships with vsh (lessons/%s): lesson %s runs that one, and a course refuses this one; give it another id",
			l.ID, sh.Name, l.ID)})
	}
	if o.Version != "" && l.Requires != nil {
		if err := CheckVersion(l, o.Version); err != nil {
			errs = append(errs, err.(*Error))
		}
	}
	if len(l.Steps) > 0 && !hasParseErrors(errs) {
		errs = append(errs, checkPlays(l, o)...)
	}
	if len(errs) == 0 {
		return l, nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	if hasParseErrors(errs) {
		return nil, errs
	}
	return l, errs
}

// hasParseErrors reports whether l did not parse: then it is not played.
func hasParseErrors(errs Errors) bool {
	for _, e := range errs {
		if e.parse {
			return true
		}
	}
	return false
}

// verbLine reports whether a line runs a verb (a command with _ in its
// name: open_device, post_send, ...), as rd reads it.
func verbLine(rd CommandReader) func(string) bool {
	if rd == nil {
		return nil
	}
	return func(line string) bool {
		pcs, err := rd.ReadCommand(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "$")))
		return err == nil && len(pcs) > 0 && strings.Contains(pcs[0].Name, "_")
	}
}

// checkPlays plays l: judged, then without each section's capability,
// then on one device.
func checkPlays(l *Lesson, o CheckOptions) Errors {
	w := o.Transcript
	if w == nil {
		w = io.Discard
	}
	var errs Errors
	var held []int
	playErr := checkPlay(l, o.Open, w, PlayOptions{goalHeld: func(i int) { held = append(held, i) }})
	// The steps played before a failure are checked too: every problem
	// found, not only the first.
	for _, i := range held {
		if c := l.Steps[i].Cell; !c.GoalHolds {
			errs = append(errs, l.errAt(c.Line, "the step's goal already holds when it starts: the session matches what its cell builds "+
				"before the learner types anything, so the tutor passes the step by (\"goal reached: you did this already\"); give it "+
				"something to do, or, if that is the point, put goal-holds: ok among the lines after its closing fence"))
		}
	}
	if playErr != nil {
		return append(errs, playProblem(l, playErr, ""))
	}
	for _, c := range sectionCapabilities(l) {
		if err := checkPlay(l, o.Open, io.Discard, PlayOptions{Lacking: []string{c}}); err != nil {
			errs = append(errs, playProblem(l, err, fmt.Sprintf("played without %s, as on a backend that lacks it (the sections that need it skipped): ", c)))
		}
	}
	if o.OpenOne != nil && !contains(l.Needs, "two-devices") {
		if err := checkPlay(l, o.OpenOne, io.Discard, PlayOptions{}); err != nil {
			e := playProblem(l, err, "played on one device, where A and B are the same device (as on a single rxe0): ")
			e.Msg += "; the lesson needs two devices: add two-devices to its needs: (or to the needs: line of the section that needs them)"
			errs = append(errs, e)
		}
	}
	return errs
}

// playProblem is a failed play as an *Error that wraps it.
func playProblem(l *Lesson, err error, prefix string) *Error {
	var le *Error
	if errors.As(err, &le) {
		return &Error{Name: le.Name, Line: le.Line, Msg: prefix + le.Msg, err: le.err}
	}
	var pe *PlayError
	if errors.As(err, &pe) {
		msg := prefix + pe.Msg
		if prefix != "" && strings.HasPrefix(prefix, "played without") {
			msg += "; the steps after a skipped section must not use the handles it makes, nor count on the state it leaves"
		}
		pe.Msg = msg
		return &Error{Name: l.Name, Line: pe.Line, Msg: msg, err: pe}
	}
	return &Error{Name: l.Name, Msg: prefix + err.Error(), err: err}
}

// checkPlay plays l in a fresh session.
func checkPlay(l *Lesson, open func() (Env, func() error, error), w io.Writer, o PlayOptions) error {
	env, closeEnv, err := open()
	if err != nil {
		return err
	}
	defer closeEnv()
	err = Play(env, l, w, o)
	var skip *SkipError
	if errors.As(err, &skip) {
		return &Error{Name: l.Name, Line: 0, Msg: skip.Error()}
	}
	return err
}

// sectionCapabilities lists the capabilities l's sections need, sorted.
func sectionCapabilities(l *Lesson) []string {
	var out []string
	for _, sn := range SectionNeeds(l) {
		for _, c := range sn.Needs {
			if !contains(out, c) {
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// goalWRID finds where a goal names wr_ids: "wr_id 2", "wr_id=2", "wr_ids
// 10 and 20", "work request ids 1, 2 or 3" (goalNumbers reads them).
var goalWRID = regexp.MustCompile(`(?i)\b(?:wr_ids?|work request ids?)\s*(?:[=:]|(\bis\b|\bare\b))?\s*`)

// proseNumber is a number as a goal writes one: hex with 0x, else decimal.
var proseNumber = regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|\d+)\b`)

// listGlue joins a list's numbers; listEnd may follow a list's later
// number ("wr_ids 7 and 3 on B"), where another word says the number was
// not the list's ("wr_id 1 and 4096 bytes").
var (
	listGlue = regexp.MustCompile(`^\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|-|–|to\s+|through\s+)`)
	listEnd  = regexp.MustCompile(`^(?:\s*$|\s*[,.;:!?)]|\s+(?:and|or|on|in|at|to|from|for|then|each|both)\b)`)
)

// goalNumbers reads the numbers after each place re finds in goal: the
// first always (after "is" or "are", its first group, only in hex: "a
// PSN is 24 bits" is no PSN), each later one joined by a comma, "and",
// "or" or a range's "-", "to", "through" (its end) where what follows it
// ends the list.
func goalNumbers(re *regexp.Regexp, goal string) []string {
	var out []string
	for _, loc := range re.FindAllStringSubmatchIndex(goal, -1) {
		rest := goal[loc[1]:]
		v := proseNumber.FindString(rest)
		if v == "" || len(loc) > 2 && loc[2] >= 0 && !strings.HasPrefix(strings.ToLower(v), "0x") {
			continue
		}
		out = append(out, v)
		rest = rest[len(v):]
		for {
			g := listGlue.FindString(rest)
			if g == "" {
				break
			}
			w := proseNumber.FindString(rest[len(g):])
			if w == "" || !listEnd.MatchString(rest[len(g)+len(w):]) {
				break
			}
			out = append(out, w)
			rest = rest[len(g)+len(w):]
		}
	}
	return out
}

// lintWRIDGoals finds a goal that names a wr_id no expect: line of the
// lesson reads: the tutor compares a work request's wr_id only where the
// lesson's expectations read it, so the goal promises what nothing checks.
func lintWRIDGoals(name string, l *Lesson) Errors {
	read := l.readWRIDs()
	return unreadGoals(name, l, goalWRID, func(n uint64) bool {
		for _, ids := range read {
			if ids[n] {
				return true
			}
		}
		return false
	}, func(v string, n uint64) string {
		return fmt.Sprintf("goal: names wr_id %d, but no expect: line of the lesson reads a completion's wr_id %d, so the tutor does not compare it (a learner's wr_id %d passes): add expect: CQ completions.wr_id == [...] where the completion is polled, or leave the wr_id out of the goal",
			n, n, n+1)
	})
}

// unreadGoals finds, in each goal a learner meets, the first number
// named where re finds (goalNumbers) that read does not know, and says
// so with msg.
func unreadGoals(name string, l *Lesson, re *regexp.Regexp, read func(uint64) bool, msg func(v string, n uint64) string) Errors {
	var errs Errors
	for _, s := range l.Steps {
		if s.Cell == nil || s.Cell.Auto {
			continue
		}
		for _, v := range goalNumbers(re, s.Cell.Goal) {
			if n, err := number.Parse(v, 64); err == nil && !read(n) {
				errs = append(errs, &Error{Name: name, Line: s.Cell.GoalLine, Msg: msg(v, n)})
				break
			}
		}
	}
	return errs
}

// goalPSN finds a PSN a goal names: "PSN 0x1a2b3c", "with PSN 0".
var goalPSN = regexp.MustCompile(`(?i)\bPSNs?\s*(?:[=:]|(\bis\b|\bare\b))?\s*`)

// cellPSN finds a PSN a command gives pp_dest, which the tutor compares.
var cellPSN = regexp.MustCompile(`^\s*pp_dest\b.*\bpsn=(0[xX][0-9a-fA-F]+|\d+)\b`)

// lintPSNGoals finds a goal that names a PSN nothing of the lesson
// compares: the tutor compares a QP's sq_psn and rq_psn only where an
// expect: line reads them (a program draws its PSNs at random), and the
// PSN pp_dest is given.
func lintPSNGoals(name string, l *Lesson) Errors {
	read := map[uint64]bool{}
	for _, s := range l.Steps {
		if s.Cell == nil {
			continue
		}
		for _, e := range s.Cell.Expects {
			if e.subj.kind != subjField || e.subj.count || (e.subj.field != "sq_psn" && e.subj.field != "rq_psn") {
				continue
			}
			if vals, err := e.want(nil); err == nil {
				for _, v := range vals {
					read[v.n] = true
				}
			}
		}
		for _, c := range s.Cell.Commands {
			if m := cellPSN.FindStringSubmatch(c.Text); m != nil {
				if n, err := number.Parse(m[1], 64); err == nil {
					read[n] = true
				}
			}
		}
	}
	return unreadGoals(name, l, goalPSN, func(n uint64) bool { return read[n] }, func(v string, n uint64) string {
		return fmt.Sprintf("goal: names PSN %s, but no expect: line of the lesson reads a QP's PSN %s, so the tutor does not compare it (a learner's PSN %s passes): add expect: QP.sq_psn == %s (or rq_psn) where the QP is connected, or leave the PSN out of the goal",
			v, v, sameBase(v, n+1), v)
	})
}

// sameBase writes n as v is written: hex after 0x, else decimal.
func sameBase(v string, n uint64) string {
	if strings.HasPrefix(strings.ToLower(v), "0x") {
		return fmt.Sprintf("%#x", n)
	}
	return strconv.FormatUint(n, 10)
}
