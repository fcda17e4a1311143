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

// New returns the styles for a terminal with 256 colours, or plain ones.
func New(plain bool) *Styles {
	r := lipgloss.NewRenderer(nil)
	if plain {
		r.SetColorProfile(termenv.Ascii)
	} else {
		r.SetColorProfile(termenv.ANSI256)
	}
	s := &Styles{plain: plain}
	n := r.NewStyle
	s.Prompt = n().Foreground(lipgloss.Color("39")).Bold(true)
	s.Cell = n().Foreground(lipgloss.Color("244"))
	s.Verb = n().Foreground(lipgloss.Color("111"))
	s.Control = n().Foreground(lipgloss.Color("214"))
	s.Data = n().Foreground(lipgloss.Color("78"))
	s.Handle = n().Foreground(lipgloss.Color("81")).Bold(true)
	s.Err = n().Foreground(lipgloss.Color("203")).Bold(true)
	s.Hint = n().Foreground(lipgloss.Color("221"))
	s.OK = n().Foreground(lipgloss.Color("78"))
	s.Lit = n().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("78")).Bold(true)
	s.Dim = n().Foreground(lipgloss.Color("244"))
	s.Header = n().Bold(true)
	s.Key = n().Foreground(lipgloss.Color("111"))
	s.Wire = n().Foreground(lipgloss.Color("177"))
	s.Bad = n().Foreground(lipgloss.Color("203")).Bold(true)
	return s
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
	return s.Lit.Render(" " + name + " ")
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
