package shell

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	ghtml "github.com/yuin/goldmark/renderer/html"
)

// NotebookHTML renders the notebook (Notebook) as one self-contained HTML
// page: its Markdown as HTML, with the pictures cells drew (trace ladder,
// show QP --diagram) inline as SVG after their output, and a style sheet
// of its own. It loads nothing: no script, font, image or style from
// elsewhere, and its Content-Security-Policy runs no script at all, so a
// lesson file's or a comment's words can never act in a reader's browser.
func (s *Shell) NotebookHTML() (string, error) {
	md := s.notebook(true)
	var body bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(ghtml.WithUnsafe()))
	if err := gm.Convert([]byte(md), &body); err != nil {
		return "", fmt.Errorf("save: rendering the notebook as HTML: %v", err)
	}
	page := promptHTML.ReplaceAllString(body.String(), `$1<span class="prompt">$2</span><span class="cmd">$3</span>`)
	body.Reset()
	body.WriteString(page)
	title, _, _ := strings.Cut(md, "\n")
	title = html.UnescapeString(strings.TrimPrefix(title, "# ")) // the title is Markdown text
	return fmt.Sprintf(notebookPage, html.EscapeString(title), notebookCSS, body.String()), nil
}

// promptHTML finds a transcript's prompts in the page's vsh blocks, to
// set the commands apart from their output.
var promptHTML = regexp.MustCompile(`(?m)(^|<code class="language-vsh">)(\[[0-9]+\] (?:vsh|tutor)&gt; )(.*)$`)

const notebookPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="vsh">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>%s</title>
<style>
%s</style>
</head>
<body>
<main>
%s</main>
</body>
</html>
`

// notebookCSS is the page's style: readable on paper and on a projector,
// light or dark as the reader's system prefers.
const notebookCSS = `:root { color-scheme: light dark; --fg: #1d1f21; --bg: #ffffff; --code: #f3f4f6; --rule: #d0d4da; --accent: #1f5fa8; --muted: #5f6670; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --bg: #16181b; --code: #23262b; --rule: #3a3f46; --accent: #7fb4ff; --muted: #9aa1ab; } }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, sans-serif; }
main { max-width: 64rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid var(--rule); padding-bottom: .2rem; margin-top: 2rem; }
pre { background: var(--code); padding: .6rem .8rem; overflow-x: auto; border-radius: 4px; font: 13px/1.4 ui-monospace, monospace; }
pre code.language-vsh .prompt { color: var(--muted); } pre code.language-vsh .cmd { color: var(--accent); font-weight: 600; }
code { font-family: ui-monospace, monospace; }
details { margin: .6rem 0; } summary { cursor: pointer; }
details.failed { border-left: 3px solid #c0392b; padding-left: .8rem; margin: 1rem 0; }
details.failed > summary { color: #c0392b; }
details.lesson > summary { color: var(--accent); }
details.lesson[open] { border-left: 3px solid var(--rule); padding-left: .8rem; }
details.tutor > summary { color: var(--muted); }
figure.picture { margin: 1rem 0; overflow-x: auto; }
figure.picture svg { max-width: 100%; height: auto; background: #ffffff; }
table { border-collapse: collapse; } td, th { border: 1px solid var(--rule); padding: .2rem .5rem; }
`
