package lessons

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vsh-rdma/vsh/internal/number"
	"github.com/vsh-rdma/vsh/verbs"
)

// Levels are the values front matter's level may take, easiest first.
var Levels = []string{"beginner", "intermediate", "advanced"}

var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// frontKeys are the front matter keys, required first.
var frontKeys = []string{"id", "title", "level", "minutes", "needs", "summary", "mirrors", "order", "author", "lang", "version", "requires"}

var langPattern = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$`)

var requiredKeys = map[string]bool{"id": true, "title": true, "level": true, "minutes": true}

// Parse reads a lesson file. name is used in messages ("tour.md",
// "my/lesson.md"). Every problem found is reported, each with its line, as
// Errors; a lesson with problems is not returned.
func Parse(name string, src []byte) (*Lesson, error) {
	l, errs, err := parsePartial(name, src)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return l, nil
}

// parsePartial parses what it can of a lesson file: the lesson, even with
// problems (for the validator's other checks), and the problems, in line
// order. err is a file that is no lesson at all (too big, binary).
func parsePartial(name string, src []byte) (*Lesson, Errors, error) {
	src = bytes.TrimPrefix(src, []byte("\ufeff")) // a byte order mark, as Notepad writes
	if len(src) > MaxFileSize {
		return nil, nil, fmt.Errorf("%s: %d bytes; a lesson file holds at most %d (lessons.MaxFileSize): split it into lessons", name, len(src), MaxFileSize)
	}
	if !utf8.Valid(src) || bytes.IndexByte(src, 0) >= 0 {
		return nil, nil, fmt.Errorf("%s is not a lesson: it is not UTF-8 text (a lesson is Markdown; see docs/writing-lessons.md)", name)
	}
	p := &parser{l: &Lesson{Name: name, Order: 1000, Hash: fmt.Sprintf("%x", sha256.Sum256(src))}}
	p.parse(strings.ReplaceAll(string(src), "\r\n", "\n"))
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	for _, e := range p.errs {
		e.parse = true
	}
	return p.l, p.errs, nil
}

type parser struct {
	l    *Lesson
	errs Errors
	// strayGoal holds, for a cell, the line of a goal: that a blank line
	// or prose cut off from it.
	strayGoal map[*Cell]int
}

func (p *parser) errorf(line int, format string, a ...any) {
	p.errs = append(p.errs, p.l.errAt(line, format, a...))
}

func (p *parser) parse(src string) {
	lines := strings.Split(src, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	p.controls(lines)
	body := p.frontMatter(lines)
	p.body(lines, body)
	if len(p.errs) == 0 && len(p.l.Steps) == 0 {
		p.errorf(max(1, len(lines)), "no steps: after the front matter a lesson needs prose and at least one ```vsh cell")
	}
}

// controls refuses the characters a terminal acts on rather than shows —
// C0 and C1 controls but tab, DEL, and the bidirectional embeddings,
// overrides and isolates — which would reach the learner's terminal as
// they are.
func (p *parser) controls(lines []string) {
	for i, line := range lines {
		if r, ok := controlIn(line); ok {
			p.errorf(i+1, controlMsg, r)
		}
	}
}

// noTab refuses a tab in a title, heading or goal, which the step tables
// cannot align.
func (p *parser) noTab(ln int, v string) {
	if strings.ContainsRune(v, '\t') {
		p.errorf(ln, "a tab in a title, heading or goal: the step tables cannot align it; use a space")
	}
}

// controlMsg says why a line with a control character is refused.
const controlMsg = "the line holds the control character %U, which would act on the learner's terminal rather than show; a lesson is plain text: remove it"

// controlIn returns the first character of line that a terminal acts on
// rather than shows (see controls), if any.
func controlIn(line string) (rune, bool) {
	for _, r := range line {
		if r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			return r, true
		}
	}
	return 0, false
}

// frontMatter parses the --- block at the top and returns the index of the
// first body line.
func (p *parser) frontMatter(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		p.errorf(1, "a lesson starts with front matter: a line \"---\", then id:, title:, level:, minutes: (and needs:), then \"---\"")
		return 0
	}
	seen := map[string]int{}
	end := -1
	for i := 1; i < len(lines); i++ {
		ln := i + 1
		t := strings.TrimSpace(lines[i])
		if t == "---" {
			end = i
			break
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			p.errorf(ln, "front matter: %q is not key: value", t)
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if prev, dup := seen[k]; dup {
			p.errorf(ln, "front matter: %s is given twice (first at line %d)", k, prev)
			continue
		}
		seen[k] = ln
		p.frontKey(ln, k, v)
	}
	if end < 0 {
		p.errorf(1, "front matter: no closing \"---\" line")
		return len(lines)
	}
	for _, k := range frontKeys {
		if requiredKeys[k] && seen[k] == 0 {
			p.errorf(end+1, "front matter: %s: is missing", k)
		}
	}
	return end + 1
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

func (p *parser) frontKey(ln int, k, v string) {
	l := p.l
	v = unquote(v)
	switch k {
	case "id":
		if !idPattern.MatchString(v) {
			p.errorf(ln, "front matter: id %q: use lower-case letters, digits and dashes (rc-pingpong)", v)
		}
		l.ID, l.IDLine = v, ln
	case "title":
		if v == "" {
			p.errorf(ln, "front matter: title is empty")
		}
		p.noTab(ln, v)
		l.Title = v
	case "level":
		if !contains(Levels, v) {
			p.errorf(ln, "front matter: level %q: one of %s", v, strings.Join(Levels, ", "))
		}
		l.Level = v
	case "minutes":
		n, err := number.Parse(v, 31)
		if err != nil || n == 0 || n > 600 {
			p.errorf(ln, "front matter: minutes %q: a whole number of minutes, 1 to 600", v)
		}
		l.Minutes = int(n)
	case "needs":
		l.Needs = p.needs(ln, "front matter: needs", v, nil)
	case "summary":
		l.Summary = v
	case "mirrors":
		l.Mirrors = v
	case "order":
		n, err := number.Parse(v, 31)
		if err != nil {
			p.errorf(ln, "front matter: order %q: %v", v, err)
		}
		l.Order = int(n)
	case "author", "version":
		if v == "" {
			p.errorf(ln, "front matter: %s is empty; leave the line out, or fill it in", k)
		}
		if k == "author" {
			l.Author = v
		} else {
			l.Version = v
		}
	case "lang":
		if !langPattern.MatchString(v) {
			p.errorf(ln, "front matter: lang %q: a language tag, such as en, fr or pt-BR", v)
		}
		l.Lang = v
	case "requires":
		c, err := ParseConstraint(v)
		if err != nil {
			p.errorf(ln, "front matter: requires: the vsh version the lesson needs: %v", err)
			return
		}
		l.Requires, l.RequiresLine = &c, ln
	default:
		msg := "front matter: unknown key %q; the keys are %s"
		if near := verbs.Nearest(k, frontKeys); near != "" {
			msg = "front matter: unknown key %q (did you mean " + near + "?); the keys are %s"
		}
		p.errorf(ln, msg, k, strings.Join(frontKeys, ", "))
	}
}

// needs parses a needs: list ("two-devices, stepping", brackets allowed)
// and returns the known capabilities in it, without repeats; what names
// the list in messages. For a section's needs: line, lesson holds the
// lesson's own needs, which the section may not repeat; for the front
// matter it is nil.
func (p *parser) needs(ln int, what, v string, lesson *[]string) []string {
	v = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "["), "]"))
	var out []string
	if v == "" {
		if lesson != nil {
			p.errorf(ln, "%s: is empty; name the capabilities the section needs (known: %s)", what, strings.Join(CapabilityNames(), ", "))
		}
		return out
	}
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(unquote(strings.TrimSpace(c)))
		if _, ok := capabilityByName[c]; !ok {
			msg := "%s: unknown capability %q; known: %s"
			if near := verbs.Nearest(c, CapabilityNames()); near != "" {
				msg = "%s: unknown capability %q (did you mean " + near + "?); known: %s"
			}
			p.errorf(ln, msg, what, c, strings.Join(CapabilityNames(), ", "))
			continue
		}
		if lesson != nil && contains(*lesson, c) {
			p.errorf(ln, "%s: %s is needed by the whole lesson already (its front matter); a section's needs: names what only the section needs", what, c)
			continue
		}
		if !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fence reports whether t opens or closes a code block: its fence run
// (``` or ~~~, three or more) and info string.
func fence(t string) (string, string, bool) {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == ch {
			n++
		}
		if n >= 3 {
			return t[:n], strings.TrimSpace(t[n:]), true
		}
	}
	return "", "", false
}

// section is the "## " section the parser is in.
type section struct {
	name      string
	line      int      // its heading's line; 0 before the first heading
	needs     []string // its needs: line
	needsLine int
	steps     int // steps whose cell (or closing prose) is in it
}

// body splits the lines after the front matter into steps.
func (p *parser) body(lines []string, from int) {
	var prose []string
	var heads []int // indexes in prose of its "## " heading lines
	proseLine := 0
	var sec section
	underHeading := false // only blank lines since the section's heading
	var last *Cell        // the cell whose expect:/hint: lines may follow
	lastClose := 0        // the line that closed it
	var closed *Cell      // the cell closed there
	inProseCode := ""     // the fence of a non-vsh code block in prose
	for i := from; i < len(lines); i++ {
		ln := i + 1
		raw := lines[i]
		t := strings.TrimSpace(raw)
		if inProseCode != "" {
			prose = append(prose, raw)
			if f, info, ok := fence(t); ok && info == "" && strings.HasPrefix(f, inProseCode[:1]) && len(f) >= len(inProseCode) {
				inProseCode = ""
			}
			continue
		}
		if rest, ok := strings.CutPrefix(t, "needs:"); ok {
			last = nil
			if !underHeading {
				p.errorf(ln, "needs: in the lesson's body goes on the line right under a ## heading, and covers that section's steps "+
					"(a step that alone needs something gets a section of its own); the lesson's own needs go in its front matter")
				continue
			}
			if sec.needsLine != 0 {
				p.errorf(ln, "needs: is given twice for section %q (first at line %d); put every capability on one line", sec.name, sec.needsLine)
				continue
			}
			sec.needs, sec.needsLine = p.needs(ln, "needs", rest, &p.l.Needs), ln
			continue
		}
		if key, rest, ok := expectLine(t); ok {
			var kind DiffKind
			if k, ok := strings.CutPrefix(key, "hint("); ok {
				key, kind = "hint", DiffKind(strings.TrimSuffix(k, ")"))
			}
			underHeading = false
			if last == nil {
				where := "no ```vsh cell comes before it"
				if lastClose > 0 {
					where = "a blank line or prose ends the expect: and hint: lines of the cell closed at line " + strconv.Itoa(lastClose)
					if key == "goal" && closed != nil {
						if p.strayGoal == nil {
							p.strayGoal = map[*Cell]int{}
						}
						p.strayGoal[closed] = ln
					}
				}
				p.errorf(ln, "%s: belongs right after a ```vsh cell's closing fence; %s", key, where)
				continue
			}
			p.cellLine(last, ln, key, kind, rest)
			continue
		}
		if last != nil {
			if near, ok := nearDirective(t); ok {
				p.errorf(ln, "%q is not a line the tutor reads, and as prose it would show the learner what it says; did you mean %s:? "+
					"(the lines after a cell are lower case, the colon right after the word: %s)", firstWord(t), near, strings.Join(directives, ":, ")+":, hint(KIND):")
				continue // the cell's lines go on: one mistake, one error
			}
		}
		last = nil
		if t != "" {
			underHeading = false
		}
		if f, info, ok := fence(t); ok {
			words := strings.Fields(info)
			if len(words) > 0 && words[0] == "vsh" {
				cell, end := p.cell(lines, i, f, words[1:])
				if cell != nil {
					p.addStep(proseLine, &sec, prose, heads, cell)
					prose, heads, proseLine = nil, nil, 0
					last, lastClose, closed = cell, end+1, cell
				}
				i = end
				continue
			}
			inProseCode = f
		}
		if strings.HasPrefix(t, "## ") {
			p.endSection(&sec)
			sec = section{name: strings.TrimSpace(strings.TrimPrefix(t, "## ")), line: ln}
			p.noTab(ln, sec.name)
			underHeading = true
			heads = append(heads, len(prose))
		}
		if t == "" && len(prose) == 0 {
			continue
		}
		if len(prose) == 0 {
			proseLine = ln
		}
		prose = append(prose, raw)
	}
	if inProseCode != "" {
		p.errorf(len(lines), "a %s code block in the prose is never closed", inProseCode)
	}
	if strings.TrimSpace(strings.Join(prose, "\n")) != "" {
		p.addStep(proseLine, &sec, prose, heads, nil)
	}
	p.endSection(&sec)
	p.checkCells()
}

// cellLine applies one expect:, judge:, goal: or hint: line (hint(KIND):
// with kind set) at line ln to last, the cell it follows; rest is what
// follows the colon. Errors are reported, not returned.
func (p *parser) cellLine(last *Cell, ln int, key string, kind DiffKind, rest string) {
	switch key {
	case "expect":
		e, err := ParseExpect(rest)
		if err != nil {
			p.errorf(ln, "expect: %v", err)
			last.badExpect = true
			return
		}
		e.Line = ln
		last.Expects = append(last.Expects, e)
	case "judge":
		switch rest {
		case "expect":
			last.ByExpect = true
		case "state":
			last.ByExpect = false
		default:
			p.errorf(ln, "judge: %q: judge: expect judges the step by its expect: lines alone; judge: state (the default) compares with the lesson's reference", rest)
		}
		if last.Auto {
			p.errorf(ln, "judge: belongs to a cell the learner performs; the tutor runs a ```vsh auto cell itself")
		}
	case "goal-holds":
		if rest != "ok" {
			p.errorf(ln, "goal-holds: %q: goal-holds: ok says the step's goal may hold before the learner types anything (lesson check refuses that otherwise)", rest)
		}
		if last.Auto {
			p.errorf(ln, "goal-holds: belongs to a cell the learner performs; the tutor runs a ```vsh auto cell itself")
		}
		last.GoalHolds = true
	case "goal":
		if rest == "" {
			p.errorf(ln, "goal: is empty")
			return
		}
		p.noTab(ln, rest)
		if last.Auto {
			p.errorf(ln, "goal: belongs to a cell the learner performs; the tutor runs a ```vsh auto cell itself")
			return
		}
		addLine(&last.Goal, &last.GoalLine, ln, rest, " ")
	case "hint":
		if rest == "" {
			p.errorf(ln, "hint: is empty")
			return
		}
		if kind != "" {
			if !knownDiffKind(kind) {
				var names []string
				for _, k := range DiffKinds {
					names = append(names, string(k))
				}
				p.errorf(ln, "hint(%s): unknown kind of difference%s; the kinds are %s", kind, didYouMean(string(kind), names), strings.Join(names, ", "))
				return
			}
			if last.Hints == nil {
				last.Hints = map[DiffKind]string{}
			}
			if last.Hints[kind] != "" {
				last.Hints[kind] += "\n"
			}
			last.Hints[kind] += rest
			return
		}
		addLine(&last.Hint, &last.HintLine, ln, rest, "\n")
	case "predict", "answer":
		if err := predictLine(last, ln, key, rest); err != nil {
			p.errorf(ln, "%v", err)
		}
	}
}

// endSection checks a section as the next one begins, or the lesson ends.
func (p *parser) endSection(sec *section) {
	if sec.needsLine != 0 && sec.steps == 0 {
		p.errorf(sec.needsLine, "needs: section %q has no step to skip: no ```vsh cell, and its prose runs into the next section's first step; "+
			"put the needs: line under the heading of the section with the cells that need it", sec.name)
	}
}

// directives are the keys of the lines that follow a cell.
var directives = []string{"expect", "hint", "goal", "judge", "goal-holds", "predict", "answer"}

// nearDirective reports whether t, a line right after a cell that
// expectLine does not take, starts like one that would be ("Expect:",
// "expects:", "expect :", "hnit:"), and which it is near.
func nearDirective(t string) (string, bool) {
	word, _, ok := strings.Cut(t, ":")
	if !ok {
		return "", false
	}
	w := strings.ToLower(strings.TrimSpace(word))
	if i := strings.IndexAny(w, "(["); i > 0 && strings.TrimSpace(w[:i]) == "hint" &&
		knownDiffKind(DiffKind(strings.Trim(strings.TrimSpace(w[i+1:]), ")]"))) {
		w = "hint" // hint (type), hint[type]; not "Answer (spoiler)" or "Hint (for the curious)"
	}
	if strings.ContainsAny(w, " \t") {
		return "", false
	}
	for _, k := range directives {
		if w == k || w == k+"s" {
			return k, true
		}
	}
	if len(w) < 4 { // "Go:", "A:": too short to be a typo of one
		return "", false
	}
	if near := verbs.Nearest(w, directives); near != "" {
		return near, true
	}
	return "", false
}

// firstWord is t up to its first colon.
func firstWord(t string) string {
	w, _, _ := strings.Cut(t, ":")
	return w + ":"
}

// expectLine recognizes "expect: ...", "goal: ...", "hint: ...",
// "hint(KIND): ...", "judge: ...", "predict: ..." and "answer: ...".
func expectLine(t string) (string, string, bool) {
	for _, k := range directives {
		if strings.HasPrefix(t, k+":") {
			return k, strings.TrimSpace(t[len(k)+1:]), true
		}
	}
	if strings.HasPrefix(t, "hint(") {
		if i := strings.Index(t, "):"); i > 0 && !strings.ContainsAny(t[5:i], " ()") {
			return t[:i+1], strings.TrimSpace(t[i+2:]), true
		}
	}
	return "", "", false
}

// addLine adds a line to a text of several (a goal, a hint), noting the
// line the text starts at.
func addLine(text *string, at *int, ln int, line, sep string) {
	if *text == "" {
		*at, *text = ln, line
		return
	}
	*text += sep + line
}

func knownDiffKind(k DiffKind) bool {
	for _, x := range DiffKinds {
		if x == k {
			return true
		}
	}
	return false
}

// cell reads a ```vsh block opening at lines[i]; it returns the cell and
// the index of its closing fence.
func (p *parser) cell(lines []string, i int, f string, opts []string) (*Cell, int) {
	c := &Cell{Line: i + 1}
	bad := false
	for _, o := range opts {
		switch o {
		case "auto":
			c.Auto = true
		default:
			p.errorf(i+1, "```vsh %s: unknown cell option %q; a cell is ```vsh (the learner types it) or ```vsh auto (the tutor runs it)", strings.Join(opts, " "), o)
			bad = true
		}
	}
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if cf, info, ok := fence(t); ok && info == "" && cf[0] == f[0] && len(cf) >= len(f) {
			if len(c.Commands) == 0 {
				p.errorf(i+1, "the ```vsh cell is empty; put at least one command in it")
				return nil, j
			}
			if bad {
				return nil, j
			}
			return c, j
		}
		if t == "" || isComment(t) {
			if t != "" {
				c.Commands = append(c.Commands, Command{Line: j + 1, Text: t})
			}
			continue
		}
		if strings.HasSuffix(t, `\`) {
			p.errorf(j+1, "a lesson's command fits on one line (no \\ continuation)")
		}
		c.Commands = append(c.Commands, Command{Line: j + 1, Text: t})
	}
	p.errorf(i+1, "the ```vsh cell opened here is never closed (no %s line)", f)
	return nil, len(lines)
}

func (p *parser) addStep(line int, sec *section, prose []string, heads []int, c *Cell) {
	if line == 0 && c != nil {
		line = c.Line
	}
	text := strings.TrimRight(strings.Join(prose, "\n"), "\n ")
	st := &Step{Line: line, Section: sec.name, Prose: text, Cell: c,
		Needs: sec.needs, SectionLine: sec.line, NeedsLine: sec.needsLine}
	if len(heads) > 0 {
		offset := func(k int) int {
			n := 0
			for _, l := range prose[:k] {
				n += len(l) + 1
			}
			return min(n, len(text))
		}
		st.lead, st.own = offset(heads[0]), offset(heads[len(heads)-1])
	}
	sec.steps++
	p.l.Steps = append(p.l.Steps, st)
}

// checkCells applies the rules that span a whole cell.
func (p *parser) checkCells() {
	for _, s := range p.l.Steps {
		c := s.Cell
		if c == nil {
			continue
		}
		real := 0
		marked := 0
		for _, cmd := range c.Commands {
			if isComment(cmd.Text) {
				continue
			}
			real++
			if cmd.ExpectsFailure() {
				marked++
				if cmd.Bare() == "" {
					p.errorf(cmd.Line, "\"!\" needs a command after it")
				}
			}
		}
		if real == 0 {
			p.errorf(c.Line, "the ```vsh cell holds only comments; put at least one command in it")
		}
		if c.ByExpect && len(c.Expects) == 0 && !c.badExpect {
			p.errorf(c.Line, "judge: expect judges the step by its expect: lines alone, and the cell has none; add one, or drop judge: expect")
		}
		switch gl := p.strayGoal[c]; {
		case c.Auto || len(c.Expects) > 0 || c.Goal != "" || c.badExpect:
		case gl > 0:
			p.errorf(c.Line, "the learner's cell has no goal: line: the goal: at line %d is cut off from it by the blank line or prose before it; "+
				"move it up to the line right after the closing fence", gl)
		default:
			p.errorf(c.Line, "the learner's cell has no goal: line, so the learner is not told what to do; "+
				"add one right after the closing fence (goal: what the learner is to do), or make it ```vsh auto")
		}
		for _, e := range c.Expects {
			if e.subj.kind == subjPackets && !contains(p.l.Needs, "trace") && !contains(s.Needs, "trace") {
				p.errorf(e.Line, "expect: %s counts packets, which only a backend with a trace shows; add trace to the lesson's needs: (or the section's)", e.Text)
			}
			if e.subj.kind == subjError && marked == 0 && !e.noFailure() {
				p.errorf(e.Line, "expect: %s, but no command of the cell is marked \"! \" (expected to fail); mark the one that fails", e.Text)
			}
		}
		if c.Predict != nil && c.Predict.AnswerLine == 0 && !c.Predict.bad {
			p.errorf(c.Predict.Line, "predict: has no answer: line after it, so the tutor cannot tell whether the prediction was right; "+
				"add one that names what to read after the step: answer: cq0 completions.status")
		}
		if marked > 0 && !c.Auto && !hasErrorExpect(c) {
			p.errorf(c.Line, "a command of this cell is marked \"! \" but no expect: says which error it gives; add expect: error == EINVAL (or the errno it gives)")
		}
	}
}

func hasErrorExpect(c *Cell) bool {
	for _, e := range c.Expects {
		if e.subj.kind == subjError {
			return true
		}
	}
	return false
}
