package shell

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

func doCmd() *command {
	return &command{Name: "do", Group: gSession, Usage: "do COMMAND; COMMAND; ...",
		Summary: "Run several commands, separated by ;, in one cell; with repeat, the body of a loop",
		Help: "Runs the commands in order and stops at the first that fails. With repeat it makes a loop of several steps, " +
			"as a ping-pong's round: repeat 8 do post_send qp0 mr=mr0 wr_id=2; poll_cq cq1 n=1; post_send qp1 mr=mr1 wr_id=2; " +
			"poll_cq cq0 n=2; poll_cq cq1 n=1. A ; inside quotes is text, not a separator. do cannot run source, save, quit, " +
			"reset, repeat, lesson or another do.",
		rawArgs: true, run: cmdDo, complete: completeDo}
}

// noDo are the commands do refuses: they act on the session itself, or
// nest loops.
var noDo = map[string]bool{"source": true, "save": true, "quit": true, "reset": true, "repeat": true, "do": true, "lesson": true}

func cmdDo(c *call) error {
	if len(c.a.pos) == 0 {
		return usagef("do post_send qp0 mr=mr0; poll_cq cq0", "do needs commands, separated by ;")
	}
	parts, err := splitSemicolons(c.src[c.a.pos[0].start:])
	if err != nil {
		return err
	}
	type sub struct {
		cmd  *command
		a    *args
		text string // as shown
		raw  string // as tokenized
	}
	// Check every command before running any, so that a typo in the last
	// does not leave the first half done.
	var subs []sub
	for _, p := range parts {
		toks, err := tokenize(p)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			continue
		}
		cmd, ok := c.s.byKey[strings.ToLower(toks[0].text)]
		if !ok {
			return c.s.unknownCommand(toks[0].text)
		}
		if noDo[cmd.Name] {
			return usagef("run it on its own line", "do cannot run %s", cmd.Name)
		}
		a, err := parseArgs(cmd, toks[1:])
		if err != nil {
			return fmt.Errorf("%s: %w", cmd.Name, err)
		}
		subs = append(subs, sub{cmd, a, strings.TrimSpace(p), p})
	}
	if len(subs) == 0 {
		return usagef("do post_send qp0 mr=mr0; poll_cq cq0", "do needs commands, separated by ;")
	}
	for i, sb := range subs {
		if c.s.interrupted() {
			return c.s.stopped("do ran %d of its %d commands", i, len(subs))
		}
		if len(subs) > 1 {
			c.line("; %s", sb.text)
		}
		sc := &call{s: c.s, cmd: sb.cmd, a: sb.a, out: c.out, cell: c.cell, src: sb.raw} // the tokens' offsets are raw's
		c.s.recordCall(c.cell, sb.cmd, sb.a)
		if err := sb.cmd.run(sc); err != nil {
			return err
		}
	}
	return nil
}

// splitSemicolons splits a line at the ; outside quotes, as tokenize reads
// quotes.
func splitSemicolons(line string) ([]string, error) {
	var parts []string
	start := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
			}
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				i = len(line)
				break
			}
			i += j + 1
		case ';':
			parts = append(parts, line[start:i])
			start = i + 1
		}
	}
	return append(parts, line[start:]), nil
}

// completeDo completes the command after the last ;.
func completeDo(s *Shell, done []token, word string) []Suggestion {
	var words []string
	for _, t := range done {
		words = append(words, quoteIfNeeded(t))
	}
	words = append(words, word)
	line := strings.Join(words, " ")
	if i := strings.LastIndexByte(line, ';'); i >= 0 {
		line = line[i+1:]
	}
	line = strings.TrimLeft(line, " ")
	if line == "" {
		return nil
	}
	return s.Complete(line)
}

// substituteIndex replaces repeat's counters in text: {i} by i, and
// {i+N}, {i-N}, {i*N}, {i*N+M} by the arithmetic. Braces holding anything
// else stay as they are.
func substituteIndex(text string, i int) string {
	var b strings.Builder
	for {
		open := strings.Index(text, "{i")
		if open < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := strings.IndexByte(text[open:], '}')
		if end < 0 {
			b.WriteString(text)
			return b.String()
		}
		expr := text[open+2 : open+end]
		b.WriteString(text[:open])
		if v, ok := indexExpr(expr, i); ok {
			b.WriteString(strconv.Itoa(v))
		} else {
			b.WriteString(text[open : open+end+1])
		}
		text = text[open+end+1:]
	}
}

// indexExpr evaluates what follows i in {i...}: "", "+N", "-N", "*N",
// "*N+M" or "*N-M", for i >= 0; false where N or the value would not
// fit an int (the braces then stay as written, and the command refuses
// them as it refuses any word that is not its value).
func indexExpr(expr string, i int) (int, bool) {
	v := i
	if strings.HasPrefix(expr, "*") {
		j := 1
		for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(expr[1:j])
		if err != nil || n > 0 && v > math.MaxInt/n {
			return 0, false
		}
		v, expr = v*n, expr[j:]
	}
	if expr == "" {
		return v, true
	}
	if expr[0] != '+' && expr[0] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(expr[1:])
	if err != nil || n < 0 {
		return 0, false
	}
	if expr[0] == '-' {
		return v - n, true // v >= 0: no wrap
	}
	if v > math.MaxInt-n {
		return 0, false
	}
	return v + n, true
}
