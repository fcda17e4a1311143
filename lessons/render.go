package lessons

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/muesli/termenv"
)

// Width is the column at which prose is wrapped.
const Width = 78

// A ProseStyle is how lesson prose is rendered: plain text, or styled for
// a dark or a light terminal background.
type ProseStyle int

// The prose styles.
const (
	ProsePlain ProseStyle = iota
	ProseDark
	ProseLight
)

// renderers caches one glamour renderer per style: building one parses a
// style sheet, rendering with it is cheap.
var renderers struct {
	sync.Mutex
	m map[ProseStyle]*glamour.TermRenderer
}

// RenderMarkdown renders lesson prose for a terminal with glamour: styled
// for a dark background on a terminal, plain when plain is set
// (RenderMarkdownStyle).
func RenderMarkdown(md string, plain bool) string {
	if plain {
		return RenderMarkdownStyle(md, ProsePlain)
	}
	return RenderMarkdownStyle(md, ProseDark)
}

// proseStyle is how env wants prose: plain, or for its terminal's
// background (an Env with a Light method says which).
func proseStyle(env Env) ProseStyle {
	if env.Plain() {
		return ProsePlain
	}
	if l, ok := env.(interface{ Light() bool }); ok && l.Light() {
		return ProseLight
	}
	return ProseDark
}

// RenderMarkdownStyle renders lesson prose with glamour in style st:
// glamour's "dark" or "light" style, or, plain (not a terminal, NO_COLOR,
// golden files), its "notty" style without emphasis marks and with no
// ANSI escapes. In every style headings show as their words (a step's
// prose is not a Markdown source) and inline code is not padded.
// Trailing blanks are trimmed from every line.
func RenderMarkdownStyle(md string, st ProseStyle) string { return RenderMarkdownWidth(md, st, Width) }

// RenderMarkdownWidth is RenderMarkdownStyle wrapped at width columns.
func RenderMarkdownWidth(md string, st ProseStyle, width int) string {
	if strings.TrimSpace(md) == "" {
		return ""
	}
	renderers.Lock()
	defer renderers.Unlock()
	if renderers.m == nil {
		renderers.m = map[ProseStyle]*glamour.TermRenderer{}
	}
	r := renderers.m[st]
	if r == nil {
		// glamour wraps before it decorates (the notty style keeps
		// inline code's marks), so its lines can overflow and break
		// mid-word; it renders unwrapped and rewrap wraps.
		opts := []glamour.TermRendererOption{glamour.WithWordWrap(0), glamour.WithEmoji()}
		switch st {
		case ProsePlain:
			opts = append(opts, glamour.WithStyles(plainStyle()), glamour.WithColorProfile(termenv.Ascii))
		case ProseLight:
			opts = append(opts, glamour.WithStyles(proseStyleConfig(styles.LightStyleConfig)), glamour.WithColorProfile(termenv.ANSI256))
		default:
			opts = append(opts, glamour.WithStyles(proseStyleConfig(styles.DarkStyleConfig)), glamour.WithColorProfile(termenv.ANSI256))
		}
		var err error
		r, err = glamour.NewTermRenderer(opts...)
		if err != nil {
			return md + "\n"
		}
		renderers.m[st] = r
	}
	out, err := r.Render(unwrap(md))
	if err != nil {
		return md + "\n"
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, rewrap(strings.TrimRight(l, " "), width)...)
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n") + "\n"
}

// plainStyle is glamour's notty style less the ** and * it wraps strong and
// emphasised words in: plain text reads as prose, not as Markdown source.
// Inline code keeps its backquotes, which tell a command from the words
// around it.
func plainStyle() ansi.StyleConfig {
	st := proseStyleConfig(styles.NoTTYStyleConfig)
	st.Strong.BlockPrefix, st.Strong.BlockSuffix = "", ""
	st.Emph.BlockPrefix, st.Emph.BlockSuffix = "", ""
	st.Code.Prefix, st.Code.Suffix = "`", "`"
	return st
}

// proseStyleConfig is a glamour style as lesson prose wants it: headings
// without their "#" marks, and inline code without the blanks some styles
// pad it with (which read as "( -s )").
func proseStyleConfig(st ansi.StyleConfig) ansi.StyleConfig {
	for _, h := range []*ansi.StyleBlock{&st.H1, &st.H2, &st.H3, &st.H4, &st.H5, &st.H6} {
		h.Prefix, h.Suffix = "", ""
	}
	if st.Code.Prefix == " " {
		st.Code.Prefix = ""
	}
	if st.Code.Suffix == " " {
		st.Code.Suffix = ""
	}
	return st
}

// rewrap breaks a rendered line longer than width at blanks. Continuation
// lines keep the line's indent, and hang under the text of a list item or
// a quote. Code (indented four or more, no bullet) is left alone. ANSI
// escapes (styled output) take no columns and stay with their words.
func rewrap(line string, width int) []string {
	if visibleLen(line) <= width {
		return []string{line}
	}
	i, indent := 0, 0
	for i < len(line) {
		if line[i] == 0x1b {
			i = skipEscape(line, i)
			continue
		}
		if line[i] != ' ' {
			break
		}
		indent++
		i++
	}
	prefix, body := line[:i], line[i:]
	plain := stripEscapes(body)
	hang := indent
	switch {
	case strings.HasPrefix(plain, "• "), strings.HasPrefix(plain, "| "):
		hang += 2
	case startsBlock(plain) && plain[0] >= '0' && plain[0] <= '9':
		hang += strings.IndexByte(plain, ' ') + 1
	case indent >= 4:
		return []string{line}
	}
	// Words are split at blanks; a piece that shows nothing (an escape
	// alone) joins the word before it.
	var words []string
	for _, w := range strings.Split(body, " ") {
		switch {
		case visibleLen(w) == 0 && len(words) > 0:
			words[len(words)-1] += w
		case w == "":
		default:
			words = append(words, w)
		}
	}
	var out []string
	cur, curLen, empty := prefix, indent, true
	for _, w := range words {
		wl := visibleLen(w)
		if !empty && curLen+1+wl > width {
			out = append(out, cur)
			cur, curLen, empty = strings.Repeat(" ", hang), hang, true
		}
		if !empty {
			cur += " "
			curLen++
		}
		cur += w
		curLen += wl
		empty = false
	}
	return append(out, cur)
}

// skipEscape returns the index just past the ANSI escape sequence at i.
func skipEscape(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '[' {
		j++
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
	}
	return min(j+1, len(s))
}

func stripEscapes(s string) string {
	if strings.IndexByte(s, 0x1b) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// visibleLen counts the columns of s, skipping ANSI escape sequences.
func visibleLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			i = skipEscape(s, i)
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}

// unwrap joins the lines of each paragraph and list item, so that the
// renderer wraps them to the terminal's width: glamour keeps a list item's
// soft line breaks. Code blocks, headings, tables, quotes and list markers
// start blocks of their own and are left alone.
func unwrap(md string) string {
	lines := strings.Split(md, "\n")
	var out []string
	inCode := ""
	joinable := false // the last output line is text a continuation may join
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if inCode != "" {
			out = append(out, l)
			if strings.HasPrefix(t, inCode) {
				inCode = ""
			}
			continue
		}
		if f, _, ok := fence(t); ok {
			inCode = f
			out = append(out, l)
			joinable = false
			continue
		}
		if t == "" {
			out = append(out, l)
			joinable = false
			continue
		}
		if joinable && !startsBlock(t) {
			out[len(out)-1] += " " + t
			continue
		}
		out = append(out, l)
		joinable = !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "|") && !strings.HasPrefix(l, "    ")
	}
	return strings.Join(out, "\n")
}

// startsBlock reports whether a trimmed line opens a Markdown block of its
// own: a heading, a list item, a quote, a table row.
func startsBlock(t string) bool {
	switch {
	case strings.HasPrefix(t, "#"), strings.HasPrefix(t, ">"), strings.HasPrefix(t, "|"):
		return true
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "):
		return true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')')
}
