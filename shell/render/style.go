package render

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles holds the named styles of the shell's output. When plain, every
// style renders its text unchanged, so no escape code reaches the output.
type Styles struct {
	plain bool
	light bool

	// Prompt is the "[7] vsh> " prompt echoed in transcripts.
	Prompt lipgloss.Style
	// Cell is the "[7]" tag that starts a cell's output.
	Cell lipgloss.Style
	// Verb is the libibverbs call a command made.
	Verb lipgloss.Style
	// Control and Data tag a verb as control path or data path.
	Control lipgloss.Style
	Data    lipgloss.Style
	// Handle is a shell handle: ctx0, pd0, qp1.
	Handle lipgloss.Style
	// Err is an error line; Hint is the "hint:" that follows it.
	Err  lipgloss.Style
	Hint lipgloss.Style
	// OK marks something that went as expected.
	OK lipgloss.Style
	// Lit is the current state of a state ladder; Dim the others.
	Lit lipgloss.Style
	Dim lipgloss.Style
	// Header is a table's header row; Key a two-column table's key.
	Header lipgloss.Style
	Key    lipgloss.Style
	// Wire is a packet line of the trace.
	Wire lipgloss.Style
	// Bad is a completion status other than success.
	Bad lipgloss.Style
}

// A Theme is how output is styled: plain text, or colours chosen for a
// dark or a light terminal background.
type Theme int

// The themes.
const (
	Plain Theme = iota // no escape codes: not a terminal, NO_COLOR, --plain
	Dark               // colours for light text on a dark background
	Light              // colours for dark text on a light background (and most projectors)
)

// String is the theme's name, as --theme takes it.
func (t Theme) String() string {
	return [...]string{"plain", "dark", "light"}[t]
}

// palette is a theme's colours, as 256-colour codes, in the order of the
// Styles fields they colour.
type palette struct {
	prompt, cell, verb, control, data, handle, err, hint, ok, litFg, litBg, dim, key, wire, bad string
}

var (
	darkPalette  = palette{"39", "244", "111", "214", "78", "81", "203", "221", "78", "0", "78", "244", "111", "177", "203"}
	lightPalette = palette{"25", "242", "26", "130", "28", "31", "160", "94", "28", "15", "28", "246", "26", "90", "160"}
)

// New returns the styles for a dark terminal with 256 colours, or plain
// ones.
func New(plain bool) *Styles {
	if plain {
		return NewTheme(Plain)
	}
	return NewTheme(Dark)
}

// NewTheme returns the styles of theme t.
func NewTheme(t Theme) *Styles {
	r := lipgloss.NewRenderer(nil)
	if t == Plain {
		r.SetColorProfile(termenv.Ascii)
	} else {
		r.SetColorProfile(termenv.ANSI256)
	}
	s := &Styles{plain: t == Plain, light: t == Light}
	c := darkPalette
	if t == Light {
		c = lightPalette
	}
	n := r.NewStyle
	col := func(c string) lipgloss.Color { return lipgloss.Color(c) }
	s.Prompt = n().Foreground(col(c.prompt)).Bold(true)
	s.Cell = n().Foreground(col(c.cell))
	s.Verb = n().Foreground(col(c.verb))
	s.Control = n().Foreground(col(c.control))
	s.Data = n().Foreground(col(c.data))
	s.Handle = n().Foreground(col(c.handle)).Bold(true)
	s.Err = n().Foreground(col(c.err)).Bold(true)
	s.Hint = n().Foreground(col(c.hint))
	s.OK = n().Foreground(col(c.ok))
	s.Lit = n().Foreground(col(c.litFg)).Background(col(c.litBg)).Bold(true)
	s.Dim = n().Foreground(col(c.dim))
	s.Header = n().Bold(true)
	s.Key = n().Foreground(col(c.key))
	s.Wire = n().Foreground(col(c.wire))
	s.Bad = n().Foreground(col(c.bad)).Bold(true)
	return s
}

// Theme is the styles' theme.
func (s *Styles) Theme() Theme {
	switch {
	case s.plain:
		return Plain
	case s.light:
		return Light
	}
	return Dark
}

// Plain reports whether the styles leave text unchanged.
func (s *Styles) Plain() bool { return s.plain }

// Render applies st to text unless the styles are plain.
func (s *Styles) Render(st lipgloss.Style, text string) string {
	if s.plain || text == "" {
		return text
	}
	return st.Render(text)
}

// LitState renders the current state of a state ladder: highlighted on a
// terminal, in brackets when plain.
func (s *Styles) LitState(name string) string {
	if s.plain {
		return "[" + name + "]"
	}
	return s.Lit.Render("[" + name + "]") // brackets too: they survive StripANSI
}

// StateLadder draws a state machine's states with cur lit: the main ones in
// order, then the side ones: "RESET → INIT → [RTR] → RTS | SQD SQE ERR".
func (s *Styles) StateLadder(main, side []string, cur string) string {
	name := func(n string) string {
		if n == cur {
			return s.LitState(n)
		}
		return s.Render(s.Dim, n)
	}
	var b strings.Builder
	for i, n := range main {
		if i > 0 {
			b.WriteString(" → ")
		}
		b.WriteString(name(n))
	}
	b.WriteString(" |")
	for _, n := range side {
		b.WriteString(" ")
		b.WriteString(name(n))
	}
	return b.String()
}

// StripANSI removes escape sequences, for width computations.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
