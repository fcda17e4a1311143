package pingpong

import (
	"fmt"
	"strings"
)

// A small getopt_long, written to behave as glibc's does for the
// rdma-core ping-pong programs (which call getopt_long with a short option
// string and a table of long options, no optional arguments, no "W;"):
//
//   - Options and operands may be mixed; the operands are collected in order
//     (glibc permutes argv unless POSIXLY_CORRECT is set or the option
//     string starts with '+'), so "pingpong rc host -n 5" works.
//   - "--" ends the options: everything after it is an operand. A lone "-"
//     is an operand.
//   - Short options bundle ("-ec"); an option that takes an argument takes
//     the rest of its word ("-p18515") or, when that is empty, the next word
//     whatever it looks like ("-p 18515", "-g -1").
//   - Long options take "--port=18515" or "--port 18515"; any unambiguous
//     prefix of a name is accepted ("--it 5"), an exact name wins over the
//     names it is a prefix of.
//   - Errors read as glibc writes them: "invalid option -- 'x'", "option
//     requires an argument -- 'p'", "unrecognized option '--foo'", "option
//     '--po' is ambiguous; possibilities: '--port' '--prefetch'", "option
//     '--events' doesn't allow an argument", "option '--port' requires an
//     argument". rdma-core's programs stop at the first one.

// longOpt is one entry of a long option table (struct option).
type longOpt struct {
	name   string
	hasArg bool
	val    rune // the short option it stands for, or a code >= 0x100 for long-only options
}

// optSpec is what getopt_long is called with.
type optSpec struct {
	short string // the short option string, e.g. "p:d:i:s:m:r:n:l:eg:c"
	long  []longOpt
}

// parsedOpt is one option found on the command line.
type parsedOpt struct {
	val  rune   // the short option letter or the long-only code
	name string // as it resolved, for messages: "-p" or "--port"
	arg  string // the argument, when the option takes one
}

// OptionError is a command-line error, worded as glibc's getopt_long words it.
type OptionError struct {
	Msg string // e.g. "invalid option -- 'x'"
}

func (e *OptionError) Error() string { return e.Msg }

// shortTakesArg reports whether c is a short option of s and whether it
// takes an argument.
func (s optSpec) shortOpt(c byte) (known, takesArg bool) {
	if c == ':' || c == '+' || c == '-' {
		return false, false
	}
	i := strings.IndexByte(s.short, c)
	if i < 0 {
		return false, false
	}
	return true, i+1 < len(s.short) && s.short[i+1] == ':'
}

// parse runs getopt_long over args (without the program name) and returns
// the options in order and the operands. It stops at the first error.
func (s optSpec) parse(args []string) (opts []parsedOpt, operands []string, err error) {
	posix := strings.HasPrefix(s.short, "+")
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), nil
		case len(a) < 2 || a[0] != '-':
			if posix {
				return opts, append(operands, args[i:]...), nil
			}
			operands = append(operands, a)
		case strings.HasPrefix(a, "--"):
			o, used, err := s.parseLong(a[2:], args[i+1:])
			if err != nil {
				return opts, operands, err
			}
			i += used
			opts = append(opts, o)
		default:
			cluster := a[1:]
			for j := 0; j < len(cluster); j++ {
				c := cluster[j]
				known, takesArg := s.shortOpt(c)
				if !known {
					return opts, operands, &OptionError{fmt.Sprintf("invalid option -- '%s'", string(rune(c)))}
				}
				o := parsedOpt{val: rune(c), name: "-" + string(rune(c))}
				if takesArg {
					switch {
					case j+1 < len(cluster):
						o.arg = cluster[j+1:]
					case i+1 < len(args):
						i++
						o.arg = args[i]
					default:
						return opts, operands, &OptionError{fmt.Sprintf("option requires an argument -- '%s'", string(rune(c)))}
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, operands, nil
}

// parseLong resolves "name[=value]" (the word after "--"); rest is what
// follows on the command line, for an argument given as the next word. It
// returns how many words of rest it used.
func (s optSpec) parseLong(word string, rest []string) (parsedOpt, int, error) {
	name, value, hasValue := strings.Cut(word, "=")
	var match *longOpt
	var prefixed []*longOpt
	for i := range s.long {
		l := &s.long[i]
		if l.name == name {
			match = l
			break
		}
		if strings.HasPrefix(l.name, name) {
			prefixed = append(prefixed, l)
		}
	}
	if match == nil {
		switch len(prefixed) {
		case 0:
			return parsedOpt{}, 0, &OptionError{fmt.Sprintf("unrecognized option '--%s'", word)}
		case 1:
			match = prefixed[0]
		default:
			var b strings.Builder
			fmt.Fprintf(&b, "option '--%s' is ambiguous; possibilities:", word)
			for _, l := range prefixed {
				fmt.Fprintf(&b, " '--%s'", l.name)
			}
			return parsedOpt{}, 0, &OptionError{b.String()}
		}
	}
	o := parsedOpt{val: match.val, name: "--" + match.name}
	switch {
	case !match.hasArg && hasValue:
		return parsedOpt{}, 0, &OptionError{fmt.Sprintf("option '--%s' doesn't allow an argument", match.name)}
	case !match.hasArg:
		return o, 0, nil
	case hasValue:
		o.arg = value
		return o, 0, nil
	case len(rest) > 0:
		o.arg = rest[0]
		return o, 1, nil
	}
	return parsedOpt{}, 0, &OptionError{fmt.Sprintf("option '--%s' requires an argument", match.name)}
}
