package shell

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// styles holds the named lipgloss styles of the shell's output. In plain
// mode (not a terminal, NO_COLOR, --plain, and always in golden files) every
// style renders its text unchanged, so no escape code reaches the output.
type styles struct {
	plain bool
	r     *lipgloss.Renderer

	// prompt is the "[7] vsh> " prompt echoed in transcripts.
	prompt lipgloss.Style
	// cell is the "[7]" tag that starts a cell's output.
	cell lipgloss.Style
	// verb is the libibverbs call a command made.
	verb lipgloss.Style
	// control and data tag a verb as control path (enters the kernel) or
	// data path (no kernel).
	control lipgloss.Style
	data    lipgloss.Style
	// handle is a shell handle: ctx0, pd0, qp1.
	handle lipgloss.Style
	// errText is an error line; hint is the "hint:" that follows it.
	errText lipgloss.Style
	hint    lipgloss.Style
	// ok marks something that went as expected.
	ok lipgloss.Style
	// lit is the current state in a QP state diagram; dim the others.
	lit lipgloss.Style
	dim lipgloss.Style
	// header is a table's header row; key a two-column table's key.
	header lipgloss.Style
	key    lipgloss.Style
	// wire is a packet line of the trace.
	wire lipgloss.Style
	// bad is a completion status other than success.
	bad lipgloss.Style
}

func newStyles(plain bool) *styles {
	r := lipgloss.NewRenderer(nil)
	if plain {
		r.SetColorProfile(termenv.Ascii)
	} else {
		r.SetColorProfile(termenv.ANSI256)
	}
	s := &styles{plain: plain, r: r}
	n := r.NewStyle
	s.prompt = n().Foreground(lipgloss.Color("39")).Bold(true)
	s.cell = n().Foreground(lipgloss.Color("244"))
	s.verb = n().Foreground(lipgloss.Color("111"))
	s.control = n().Foreground(lipgloss.Color("214"))
	s.data = n().Foreground(lipgloss.Color("78"))
	s.handle = n().Foreground(lipgloss.Color("81")).Bold(true)
	s.errText = n().Foreground(lipgloss.Color("203")).Bold(true)
	s.hint = n().Foreground(lipgloss.Color("221"))
	s.ok = n().Foreground(lipgloss.Color("78"))
	s.lit = n().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("78")).Bold(true)
	s.dim = n().Foreground(lipgloss.Color("244"))
	s.header = n().Bold(true)
	s.key = n().Foreground(lipgloss.Color("111"))
	s.wire = n().Foreground(lipgloss.Color("177"))
	s.bad = n().Foreground(lipgloss.Color("203")).Bold(true)
	return s
}

// render applies st to text unless the output is plain.
func (s *styles) render(st lipgloss.Style, text string) string {
	if s.plain || text == "" {
		return text
	}
	return st.Render(text)
}

// litState renders the current state of a state diagram: highlighted on a
// terminal, in brackets when plain.
func (s *styles) litState(name string) string {
	if s.plain {
		return "[" + name + "]"
	}
	return s.lit.Render(" " + name + " ")
}

// stripANSI removes escape sequences, for width computations.
func stripANSI(s string) string {
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
