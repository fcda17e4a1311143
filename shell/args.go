package shell

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vsh-rdma/vsh/internal/number"
	"github.com/vsh-rdma/vsh/verbs"
)

// A token is one word of a command line, after quotes and escapes.
type token struct {
	text   string
	quoted bool // some part of it was quoted
	eq     int  // index in text of the first '=' outside quotes, or -1
	start  int  // byte offset of the token in the line
	end    int  // byte offset just past it
}

// syntaxError is a malformed line: a quote left open or a bad escape.
type syntaxError struct {
	msg  string
	hint string
}

func (e *syntaxError) Error() string { return e.msg }

// tokenize splits a line into words. Words are separated by blanks; "double"
// quotes allow \" \\ \n \t \r \0 and \xNN escapes, 'single' quotes take their
// text as it is; quotes may start anywhere in a word (key="a b"). A '#' that
// starts a word, outside quotes, comments out the rest of the line.
func tokenize(line string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i >= len(line) || line[i] == '#' {
			return toks, nil
		}
		t := token{start: i, eq: -1}
		var b strings.Builder
		for i < len(line) && !isBlank(line[i]) {
			c := line[i]
			switch c {
			case '"':
				t.quoted = true
				i++
				closed := false
				for i < len(line) {
					c = line[i]
					if c == '"' {
						closed = true
						i++
						break
					}
					if c == '\\' {
						if i+1 >= len(line) {
							break
						}
						n, r, err := unescape(line[i+1:])
						if err != nil {
							return toks, err
						}
						b.WriteString(r)
						i += 1 + n
						continue
					}
					b.WriteByte(c)
					i++
				}
				if !closed {
					return toks, &syntaxError{msg: fmt.Sprintf("unterminated \" quote in %q", line[t.start:]),
						hint: "close the quote: fill mr0 \"hello\""}
				}
			case '\'':
				t.quoted = true
				j := strings.IndexByte(line[i+1:], '\'')
				if j < 0 {
					return toks, &syntaxError{msg: fmt.Sprintf("unterminated ' quote in %q", line[t.start:]),
						hint: "close the quote: fill mr0 'hello'"}
				}
				b.WriteString(line[i+1 : i+1+j])
				i += j + 2
			default:
				if c == '=' && t.eq < 0 {
					t.eq = b.Len()
				}
				b.WriteByte(c)
				i++
			}
		}
		t.text = b.String()
		t.end = i
		toks = append(toks, t)
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// unescape decodes the escape after a backslash, returning how many bytes it
// used and what it stands for.
func unescape(s string) (int, string, error) {
	switch s[0] {
	case '"', '\\', '\'':
		return 1, s[:1], nil
	case 'n':
		return 1, "\n", nil
	case 't':
		return 1, "\t", nil
	case 'r':
		return 1, "\r", nil
	case '0':
		return 1, "\x00", nil
	case 'x':
		if len(s) >= 3 {
			if v, err := strconv.ParseUint(s[1:3], 16, 8); err == nil {
				return 3, string([]byte{byte(v)}), nil
			}
		}
		return 0, "", &syntaxError{msg: fmt.Sprintf("bad escape \\%s: \\x needs two hex digits", clip(s, 3)),
			hint: `write a byte as \x41`}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return 0, "", &syntaxError{msg: fmt.Sprintf("unknown escape \\%c", r),
		hint: `the escapes are \" \\ \n \t \r \0 and \xNN`}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// quote returns s as a word tokenize reads back as s.
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\r\n\v\f\"'\\#=") && utf8.ValidString(s) && isPrintable(s) {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

const hexDigits = "0123456789abcdef"

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// Argument specifications.

// argKind says how an argument is written.
type argKind int

const (
	posArg  argKind = iota // a positional word: qp0
	keyArg                 // key=value
	flagArg                // a bare word that switches something on: sq_sig_all, -v
)

// valueKind says what an argument's value is, for parsing, completion and docs.
type valueKind int

const (
	vText valueKind = iota
	vCtx
	vPD
	vMR
	vChan
	vCQ
	vSRQ
	vQP
	vAH
	vXRCD
	vPDOrCtx // a PD, or a context (create_qp_ex of an XRC_RECV QP)
	vAnyHandle
	vDevice
	vState
	vQPType
	vQPTypeEx // every QP type create_qp_ex makes, XRC's too
	vSRQType
	vOFlags
	vSRQN // an SRQ number, or an SRQ handle (remote_srqn=srq1)
	vOnOff
	vAccess
	vSendFlags
	vWROpcode
	vMTU
	vMigState
	vNum
	vSize
	vDuration
	vGID
	vQPN
	vRemote
	vAddr
	vRKey
	vSGE
	vFile
	vCommand
	vTopic
	vFaultAction
	vDelivery
	vTrace
	vBool
)

// argSpec describes one argument of a command.
type argSpec struct {
	name    string
	aliases []string
	kind    argKind
	value   valueKind
	req     bool
	def     string // default, shown in help ("" for none)
	help    string
	// canon writes a value the one way a lesson's judge compares it
	// (op=all and op=send,write,read are one); nil: as typed, lower case.
	canon func(string) string
}

func pos(name string, v valueKind, req bool, help string) argSpec {
	return argSpec{name: name, kind: posArg, value: v, req: req, help: help}
}

func key(name string, v valueKind, def, help string, aliases ...string) argSpec {
	return argSpec{name: name, kind: keyArg, value: v, def: def, help: help, aliases: aliases}
}

func reqKey(name string, v valueKind, help string, aliases ...string) argSpec {
	return argSpec{name: name, kind: keyArg, value: v, req: true, help: help, aliases: aliases}
}

func flag(name, help string, aliases ...string) argSpec {
	return argSpec{name: name, kind: flagArg, help: help, aliases: aliases}
}

// args is a parsed command line.
type args struct {
	pos   []token
	kv    map[string]string // by canonical key name
	keys  []string          // canonical key names, in the order given
	flags map[string]bool
}

// usageError is a command written wrongly: no verb ran.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(hint, format string, a ...any) *usageError {
	return &usageError{msg: fmt.Sprintf(format, a...), hint: hint}
}

// parseArgs checks the words after the command name against its spec.
func parseArgs(cmd *command, toks []token) (*args, error) {
	a := &args{kv: map[string]string{}, flags: map[string]bool{}}
	if cmd.rawArgs {
		a.pos = toks
		return a, nil
	}
	var npos int
	for _, sp := range cmd.Args {
		if sp.kind == posArg {
			npos++
		}
	}
	for _, t := range toks {
		if t.eq >= 0 {
			k := strings.ToLower(t.text[:t.eq])
			v := t.text[t.eq+1:]
			sp := cmd.findSpec(k, keyArg)
			if sp == nil {
				if fs := cmd.findSpec(k, flagArg); fs != nil {
					return nil, usagef(cmd.usageHint(), "%s is a flag; write it alone, without =%s", fs.name, v)
				}
				return nil, usagef(cmd.usageHint(), "%s", unknownArg(cmd, k))
			}
			if _, dup := a.kv[sp.name]; dup {
				return nil, usagef("give each argument once", "%s is given twice", sp.name)
			}
			a.kv[sp.name] = v
			a.keys = append(a.keys, sp.name)
			continue
		}
		if !t.quoted {
			if sp := cmd.findSpec(strings.ToLower(t.text), flagArg); sp != nil {
				a.flags[sp.name] = true
				continue
			}
		}
		if len(a.pos) >= npos {
			w := strings.ToLower(t.text)
			if !t.quoted && cmd.findSpec(w, keyArg) != nil {
				return nil, usagef(cmd.usageHint(), "%s needs a value: %s=...", t.text, cmd.findSpec(w, keyArg).name)
			}
			if near := nearestArg(cmd, w); !t.quoted && near != "" {
				return nil, usagef(cmd.usageHint(), "unexpected %q; did you mean %s?", t.text, near)
			}
			return nil, usagef(cmd.usageHint(), "unexpected %q: %s takes %s", t.text, cmd.Name, posCount(npos))
		}
		a.pos = append(a.pos, t)
	}
	for i, sp := range cmd.positionals() {
		if sp.req && i >= len(a.pos) {
			return nil, usagef(cmd.usageHint(), "missing %s", sp.name)
		}
	}
	for _, sp := range cmd.Args {
		if sp.kind == keyArg && sp.req {
			if _, ok := a.kv[sp.name]; !ok {
				return nil, usagef(cmd.usageHint(), "missing %s=", sp.name)
			}
		}
	}
	return a, nil
}

func posCount(n int) string {
	switch n {
	case 0:
		return "no positional arguments"
	case 1:
		return "one positional argument"
	}
	return fmt.Sprintf("%d positional arguments", n)
}

// unknownArg explains an unknown key and suggests the nearest one.
func unknownArg(cmd *command, k string) string {
	msg := fmt.Sprintf("unknown argument %q", k)
	if near := nearestArg(cmd, k); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return msg
}

func nearestArg(cmd *command, k string) string {
	var names []string
	forms := map[string]string{}
	for _, sp := range cmd.Args {
		if sp.kind == posArg {
			continue
		}
		form := sp.name
		if sp.kind == keyArg {
			form += "="
		}
		for _, n := range append([]string{sp.name}, sp.aliases...) {
			names = append(names, n)
			forms[n] = form
		}
	}
	if near := verbs.Nearest(k, names); near != "" {
		return forms[near]
	}
	return ""
}

// Value parsers. Each returns an error a learner can act on.

// numberSyntax is how numbers are written, in Markdown for docs/commands.md;
// help prints it without the backticks.
const numberSyntax = "a number is decimal or `0x` hex (a leading 0 changes nothing: `010` is 10), and a size may end in `k` or `m` (`4k` is 4096)"

// parseUint reads a number of at most bits bits: decimal or 0x hex, a
// leading 0 being decimal (package number has the grammar).
func parseUint(s string, bits int) (uint64, error) { return number.Parse(s, bits) }

// parseSize reads a byte count: 4096, 0x1000, 4k, 1m. It fits in an int.
func parseSize(s string) (uint64, error) { return number.ParseSize(s, 63) }

// durationShape is what time.ParseDuration reads, whatever its size.
var durationShape = regexp.MustCompile(`^\+?(\d+(\.\d*)?(ns|us|ms|s|m|h))+$`)

// parseDuration reads a duration with its unit: 500ms, 2s, 10us.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	t = strings.ReplaceAll(t, "µs", "us")
	d, err := time.ParseDuration(t)
	if err != nil {
		if _, nerr := strconv.ParseFloat(t, 64); nerr == nil {
			if strings.HasPrefix(t, "-") {
				return 0, fmt.Errorf("%q is negative: write 0 or more, with a unit (500ms, 2s or 10us)", s)
			}
			return 0, fmt.Errorf("%q needs a unit: %sms, %ss or %sus", s, t, t, t)
		}
		if strings.Contains(err.Error(), "invalid duration") && durationShape.MatchString(t) {
			return 0, fmt.Errorf("%q is too long: a duration is at most 2562047h (292 years)", s)
		}
		return 0, fmt.Errorf("%q is not a duration (write 500ms, 2s or 10us)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative: write 0 or more (500ms, 2s or 10us)", s)
	}
	return d, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on", "y":
		return true, nil
	case "0", "false", "no", "off", "n":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (write 1 or 0, on or off)", s)
}
