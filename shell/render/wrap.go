package render

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// A Kind says how a line of output may be fitted to a width: where it may
// break, and how far its continuation lines hang.
type Kind uint8

// The kinds of line.
const (
	// Prose breaks at spaces and after commas; its continuation lines
	// hang two columns under its own indent, so that they read as one
	// line's.
	Prose Kind = iota
	// Para is a paragraph: it breaks as Prose does and its continuation
	// lines keep its indent.
	Para
	// Call is a verb call or its attributes: "ibv_modify_qp(qp0, &attr,
	// IBV_QP_STATE|IBV_QP_AV) = 0", "attr: qp_state=IBV_QPS_RTR ...". It
	// breaks after ", " and "|" and at spaces, and hangs under its "(" or
	// its "label: ".
	Call
	// Clauses breaks only between clauses ("; ") and before a remark in
	// parentheses, never inside a command, since each clause may hold one:
	// a hint, "add rq_psn=0 (the peer's first PSN); then run modify_qp qp0
	// state=rts". A clause wider than the line stays whole.
	Clauses
	// Verbatim is never broken: a line meant to be typed back ("same as:
	// modify_qp ...", an example in help).
	Verbatim
	// Figure is never broken either: a line of a picture, drawn to fit
	// the width already (trace ladder, show QP --diagram).
	Figure
)

// Line is a line of output and how it may be fitted.
type Line struct {
	Text string
	Kind Kind
	// Hang, when above 0, is the indent of the continuation lines,
	// whatever Kind would choose.
	Hang int
}

// cells measures runes as a terminal shows them, the same wherever vsh runs
// (not from the locale): East Asian wide runes take two columns, combining
// marks none.
var cells = &runewidth.Condition{EastAsianWidth: false}

// Width returns how many terminal columns s takes: escape sequences take
// none, wide runes two.
func Width(s string) int {
	w := 0
	for _, u := range units(s) {
		w += u.w
	}
	return w
}

// unit is what a line is cut into: one rune, or one escape sequence.
type unit struct {
	s   string
	w   int
	esc bool
}

// units cuts s into runes and escape sequences (CSI "ESC [ ... final", and
// a lone ESC with the byte after it).
func units(s string) []unit {
	us := make([]unit, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
			}
			j = min(j+1, len(s))
			us = append(us, unit{s: s[i:j], esc: true})
			i = j
			continue
		}
		r, n := rune(s[i]), 1
		if r >= 0x80 {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		us = append(us, unit{s: s[i : i+n], w: max(cells.RuneWidth(r), 0)})
		i += n
	}
	return us
}

// Wrap fits l to width columns and returns its lines: it breaks where l's
// Kind allows, and mid-word only where a word alone is wider than a line.
// A width of 0 or less, a Verbatim line and a line that fits are returned
// as they are. Styles that span a break are closed at the end of the line
// and opened again on the next.
func Wrap(l Line, width int) []string {
	if width <= 0 || l.Kind == Verbatim || l.Kind == Figure || Width(l.Text) <= width {
		return []string{l.Text}
	}
	us := units(l.Text)
	hang := min(hangOf(l, us), width/2)
	var out []string
	var sgr []string // the style in force at the start of the next line
	pos := 0
	for first := true; pos < len(us); first = false {
		var b strings.Builder
		w := 0
		if !first {
			for pos < len(us) && us[pos].s == " " {
				pos++
			}
			if pos == len(us) {
				break
			}
			b.WriteString(strings.Repeat(" ", hang))
			w = hang
		}
		end := lineEnd(us, pos, width-w, l.Kind)
		for _, s := range sgr {
			b.WriteString(s)
		}
		line := trimSpaces(us[pos:end])
		for _, u := range line {
			b.WriteString(u.s)
			if u.esc {
				sgr = styleAfter(sgr, u.s)
			}
		}
		for _, u := range us[len(line)+pos : end] { // escapes among the dropped spaces
			if u.esc {
				b.WriteString(u.s)
				sgr = styleAfter(sgr, u.s)
			}
		}
		if end < len(us) && len(sgr) > 0 {
			b.WriteString("\x1b[0m")
		}
		out = append(out, b.String())
		pos = end
	}
	return out
}

// lineEnd returns where a line that starts at us[pos] and has room for
// room columns ends: at the last break that fits, else as many units as
// fit (at least one rune, so that every line makes progress). A Call does
// not break inside brackets: "[control path]" is one tag. Clauses break
// only after "; ", and where none fits at the first one after the room.
// Where breaksAt allows it, a line breaks before a space; it also breaks
// after a comma and after a | that joins flags.
func lineEnd(us []unit, pos, room int, k Kind) int {
	w, brk, seen, tag := 0, -1, false, false
	for i := pos; i < len(us); i++ {
		u := us[i]
		if k == Call && (u.s == "[" || u.s == "]") {
			tag = u.s == "["
		}
		if !u.esc && u.s == " " && seen && !tag && breaksAt(us, i, k) {
			brk = i // break before a space
		}
		if !u.esc && w+u.w > room && seen && (k != Clauses || brk > pos) {
			if brk > pos {
				return brk
			}
			return i
		}
		w += u.w
		if !u.esc && u.s != " " {
			seen = true
		}
		if k != Clauses && !tag && i+1 < len(us) && (u.s == "," || u.s == "|" && i > 0 && us[i-1].s != " ") {
			brk = i + 1 // break after a comma, or a | that joins flags
		}
	}
	return len(us)
}

// breaksAt reports whether a line of kind k may break at the space us[i]:
// clauses only after their ";" and before a remark in parentheses, a call
// not inside its result ("= 0", "→ qp0").
func breaksAt(us []unit, i int, k Kind) bool {
	prev, next := "", ""
	if i > 0 {
		prev = us[i-1].s
	}
	if i+1 < len(us) {
		next = us[i+1].s
	}
	switch k {
	case Clauses:
		return prev == ";" || next == "("
	case Call:
		return prev != "=" && prev != "→"
	}
	return true
}

// trimSpaces drops the spaces at the end of a line's units, leaving the
// escapes among them for the caller.
func trimSpaces(us []unit) []unit {
	end := len(us)
	for end > 0 && (us[end-1].esc || us[end-1].s == " ") {
		end--
	}
	return us[:end]
}

// styleAfter returns the SGR sequences in force after esc: a reset clears
// them, another SGR adds to them, other sequences change nothing.
func styleAfter(sgr []string, esc string) []string {
	if !strings.HasPrefix(esc, "\x1b[") || !strings.HasSuffix(esc, "m") {
		return sgr
	}
	if esc == "\x1b[0m" || esc == "\x1b[m" {
		return nil
	}
	return append(sgr, esc)
}

// hangOf is the indent of l's continuation lines.
func hangOf(l Line, us []unit) int {
	if l.Hang > 0 {
		return l.Hang
	}
	lead := 0
	for _, u := range us {
		if u.esc {
			continue
		}
		if u.s != " " {
			break
		}
		lead++
	}
	switch l.Kind {
	case Para:
		return lead
	case Call:
		// Under the "(" or the "label: " of the first word.
		col := 0
		for i, u := range us {
			if u.esc {
				continue
			}
			col += u.w
			if col <= lead {
				continue
			}
			if u.s == " " {
				break
			}
			if u.s == "(" || (u.s == ":" && i+1 < len(us) && us[i+1].s == " ") {
				if u.s == ":" {
					col++ // and its space
				}
				return col
			}
		}
		return lead + 4
	}
	return lead + 2
}
