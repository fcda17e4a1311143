package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/shell/render"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// cellTag is the "[7] " that starts a cell's first line.
var cellTag = regexp.MustCompile(`^\[\d+\] `)

// TestGettingStartedFitsWidth is issue #19's acceptance for width: at 80
// columns, a session of docs/getting-started.md has no line over 80
// characters (terminal columns: escape codes none, wide runes two) but the
// lines meant to be typed back, which the shell marks (Cell.TypedBack). It
// runs the commands of the guide's simulator transcripts, plain and in
// colour.
func TestGettingStartedFitsWidth(t *testing.T) {
	_, _, blocks, _ := parseDocs(t)
	const width = 80
	ran := 0
	for _, b := range blocks["docs/getting-started.md"] {
		if b.backend != "sim" {
			continue
		}
		for _, plain := range []bool{true, false} {
			ran++
			t.Run(fmt.Sprintf("%s plain=%v", b, plain), func(t *testing.T) {
				t.Chdir(t.TempDir())
				n, seed := b.devices, b.seed
				sh, err := shell.New(shell.Options{
					Open:  func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: n, Seed: seed}), nil },
					Plain: plain,
					Width: func() int { return width },
				})
				if err != nil {
					t.Fatal(err)
				}
				defer sh.Close()
				for _, line := range b.script {
					before := len(sh.Cells())
					out, err := sh.Exec(line)
					out += sh.FormatError(err)
					var typed []string
					if cells := sh.Cells(); len(cells) > before {
						typed = cells[len(cells)-1].TypedBack
					}
					for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
						if w := render.Width(l); w > width && !typedBack(l, typed) {
							t.Errorf("%s: %q: a line %d columns wide:\n%s", b, line, w, render.StripANSI(l))
						}
					}
				}
			})
		}
	}
	if ran == 0 {
		t.Fatal("docs/getting-started.md has no simulator transcript")
	}
}

// typedBack reports whether l, a line of output, is one of the lines the
// cell marked as typed back, or a clause of its hint.
func typedBack(l string, typed []string) bool {
	l = strings.TrimSpace(render.StripANSI(l))
	l = cellTag.ReplaceAllString(l, "")
	l = strings.TrimSuffix(strings.TrimPrefix(l, "hint: "), ";")
	for _, t := range typed {
		if l == strings.TrimSpace(t) {
			return true
		}
	}
	return false
}
