package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A block is one marked transcript in a Markdown file: the mark (an HTML
// comment), then a fenced block holding what vsh printed.
//
//	<!-- transcript: sim seed=1 -->             the commands are the block's own "vsh>" lines
//	<!-- transcript: sim seed=1 script=above -->  the commands are the nearest ```vsh block above
//	<!-- transcript: rxe0                       the commands are the comment's own lines
//	open_device rxe0
//	-->
//
// Where a block runs: sim (the simulator, with seed= and devices=; make test)
// or rxe0 (vsh --backend ibverbs on kernel soft-RoCE; make test-rxe). In the
// block, a line "..." (optionally followed by a note) stands for any run of
// lines, none included, and «word» in a line stands for any text on that line
// (none included).
type block struct {
	file     string   // as given to parseFile
	markLine int      // 1-based line of the mark
	backend  string   // "sim" or "rxe0"
	seed     int64    // sim only
	devices  int      // sim only
	script   []string // the commands, one per line, as a script file holds them
	from     string   // where the script came from: "block", "above" or "mark"
	body     []string // the lines between the fences
	first    int      // 0-based index in the file's lines of the body's first line
	end      int      // 0-based index of the closing fence
}

func (b *block) String() string { return fmt.Sprintf("%s:%d", b.file, b.markLine) }

// bodyLine returns the 1-based file line of body line i.
func (b *block) bodyLine(i int) int { return b.first + i + 1 }

// fence is a fenced code block of a Markdown file.
type fence struct {
	info        string // the info string: "vsh", "text", ""
	open, close int    // 0-based line indices of the fences
}

var (
	fenceRE  = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	promptRE = regexp.MustCompile(`^\s*(?:\[\d+\] )?vsh> (.*)$`)
	markRE   = regexp.MustCompile(`^<!--\s*transcript:`)
	maskRE   = regexp.MustCompile(`«[^»]*»`)
)

// fences returns the fenced code blocks of a Markdown file's lines, and an
// error for one that is never closed.
func fences(lines []string) ([]fence, error) {
	var fs []fence
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		marker, info := m[1], strings.TrimSpace(m[2])
		if marker[0] == '`' && strings.Contains(info, "`") {
			continue // an inline code span, not a fence
		}
		f := fence{info: info, open: i, close: -1}
		for j := i + 1; j < len(lines); j++ {
			c := strings.TrimRight(lines[j], " \t")
			t := strings.TrimLeft(c, " ")
			if len(c)-len(t) <= 3 && len(t) >= len(marker) && strings.Trim(t, marker[:1]) == "" {
				f.close = j
				break
			}
		}
		if f.close < 0 {
			return nil, fmt.Errorf("line %d: a fenced block that is never closed", i+1)
		}
		fs = append(fs, f)
		i = f.close
	}
	return fs, nil
}

// parseFile finds the marked transcripts of a Markdown file, and the lines
// outside them that look like a vsh prompt (an unmarked transcript).
func parseFile(name string, text string) (blocks []*block, unmarked []int, err error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	fs, err := fences(lines)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", name, err)
	}
	inFence := make([]int, len(lines)) // index+1 of the fence a line is in (fences included), or 0
	for k, f := range fs {
		for i := f.open; i <= f.close; i++ {
			inFence[i] = k + 1
		}
	}
	marked := map[int]bool{} // fences that a mark claims
	for i := 0; i < len(lines); i++ {
		if inFence[i] != 0 || !markRE.MatchString(lines[i]) {
			continue
		}
		b := &block{file: name, markLine: i + 1, seed: 1, devices: 2}
		// The mark: its first line holds the arguments, any further lines
		// (up to "-->") the script.
		head := strings.TrimSpace(markRE.ReplaceAllString(lines[i], ""))
		var script []string
		j := i
		if k := strings.Index(head, "-->"); k >= 0 {
			head = strings.TrimSpace(head[:k])
		} else {
			for j = i + 1; j < len(lines) && !strings.Contains(lines[j], "-->"); j++ {
				script = append(script, lines[j])
			}
			if j == len(lines) {
				return nil, nil, fmt.Errorf("%s: the mark is never closed with -->", b)
			}
			if rest := strings.TrimSpace(lines[j][:strings.Index(lines[j], "-->")]); rest != "" {
				script = append(script, rest)
			}
		}
		if err := b.parseArgs(strings.Fields(head)); err != nil {
			return nil, nil, err
		}
		// The fenced block must follow the mark at once.
		if j+1 >= len(lines) || inFence[j+1] == 0 || fs[inFence[j+1]-1].open != j+1 {
			return nil, nil, fmt.Errorf("%s: a transcript mark must be followed at once by a fenced block", b)
		}
		f := fs[inFence[j+1]-1]
		marked[inFence[j+1]-1] = true
		b.first, b.end = f.open+1, f.close
		b.body = append([]string(nil), lines[f.open+1:f.close]...)
		switch {
		case len(script) > 0:
			if b.from == "above" {
				return nil, nil, fmt.Errorf("%s: script=above and a script in the mark: give one", b)
			}
			b.from, b.script = "mark", script
		case b.from == "above":
			k := -1
			for n, g := range fs {
				if w := strings.Fields(g.info); g.close < i && len(w) > 0 && w[0] == "vsh" {
					k = n
				}
			}
			if k < 0 {
				return nil, nil, fmt.Errorf("%s: script=above, but no ```vsh block comes before it", b)
			}
			b.script = append([]string(nil), lines[fs[k].open+1:fs[k].close]...)
		default:
			b.from = "block"
			for _, l := range b.body {
				if m := promptRE.FindStringSubmatch(l); m != nil {
					b.script = append(b.script, m[1])
				}
			}
			if len(b.script) == 0 {
				return nil, nil, fmt.Errorf("%s: the block shows no command (a line \"[N] vsh> CMD\"); give script=above or the script in the mark", b)
			}
		}
		blocks = append(blocks, b)
		i = f.close
	}
	for i, l := range lines {
		if k := inFence[i]; (k == 0 || !marked[k-1]) && promptRE.MatchString(l) {
			unmarked = append(unmarked, i+1)
		}
	}
	return blocks, unmarked, nil
}

func (b *block) parseArgs(args []string) error {
	if len(args) == 0 || (args[0] != "sim" && args[0] != "rxe0") {
		return fmt.Errorf("%s: a transcript mark starts with where it runs: sim or rxe0", b)
	}
	b.backend = args[0]
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		var err error
		switch {
		case !ok:
			err = fmt.Errorf("not key=value")
		case k == "seed" && b.backend == "sim":
			b.seed, err = strconv.ParseInt(v, 10, 64)
		case k == "devices" && b.backend == "sim":
			b.devices, err = strconv.Atoi(v)
		case k == "script" && v == "above":
			b.from = "above"
		default:
			err = fmt.Errorf("unknown argument (sim takes seed=N devices=N script=above; rxe0 takes script=above)")
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %v", b, a, err)
		}
	}
	return nil
}

// lastCommand is the 1-based line of the script's last command: the line a
// failing script may stop at.
func (b *block) lastCommand() int {
	last := 0
	for i, l := range b.script {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			last = i + 1
		}
	}
	return last
}

// A pattern line of a block: literal, masked or an elision.
type pattern struct {
	text   string
	elide  bool
	re     *regexp.Regexp // for a line with masks
	masked bool
}

func compile(body []string) []pattern {
	ps := make([]pattern, len(body))
	for i, l := range body {
		l = strings.TrimRight(l, " \t")
		p := pattern{text: l}
		switch {
		case isElision(l):
			p.elide = true
		case maskRE.MatchString(l):
			var re strings.Builder
			re.WriteString("^")
			last := 0
			for _, m := range maskRE.FindAllStringIndex(l, -1) {
				re.WriteString(regexp.QuoteMeta(l[last:m[0]]))
				re.WriteString(".*?")
				last = m[1]
			}
			re.WriteString(regexp.QuoteMeta(l[last:]) + "$")
			p.re, p.masked = regexp.MustCompile(re.String()), true
		}
		ps[i] = p
	}
	return ps
}

// isElision reports whether a block's line is "...", alone or followed by a note.
func isElision(l string) bool {
	t := strings.TrimSpace(l)
	return t == "..." || strings.HasPrefix(t, "... ")
}

func (p pattern) matches(line string) bool {
	if p.masked {
		return p.re.MatchString(line)
	}
	return p.text == line
}

// Alignment costs: first keep as many of the doc's lines as still match
// (a bonus for each), then let an elision take more lines rather than show
// them, keep a changed line where it was (substitution) rather than hide it in
// an elision, and drop a line of the doc only when nothing else fits.
const (
	costMatch  = -10000
	costAbsorb = 1
	costSub    = 100
	costIns    = 100
	costDel    = 1000
)

type opKind int

const (
	opMatch  opKind = iota // the doc line matches the output line
	opAbsorb               // an elision takes the output line
	opSkip                 // an elision ends
	opSub                  // the doc line is replaced by the output line
	opIns                  // the output line is new
	opDel                  // the doc line is gone
)

type op struct {
	kind opKind
	d, a int // indices into the pattern and the output lines (-1 when none)
}

// align returns the cheapest way to turn the block's patterns into the
// output's lines; it is all opMatch, opAbsorb and opSkip exactly when the
// block matches.
func align(ps []pattern, out []string) []op {
	m, n := len(ps), len(out)
	cost := make([][]int, m+1)
	for i := range cost {
		cost[i] = make([]int, n+1)
	}
	for i := m; i >= 0; i-- {
		for j := n; j >= 0; j-- {
			switch {
			case i == m:
				cost[i][j] = (n - j) * costIns
			case ps[i].elide:
				c := cost[i+1][j]
				if j < n {
					c = min(c, costAbsorb+cost[i][j+1])
				}
				cost[i][j] = c
			default:
				c := costDel + cost[i+1][j]
				if j < n {
					if ps[i].matches(out[j]) {
						c = min(c, costMatch+cost[i+1][j+1])
					}
					c = min(c, costSub+cost[i+1][j+1], costIns+cost[i][j+1])
				}
				cost[i][j] = c
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < m || j < n {
		switch {
		case i == m:
			ops = append(ops, op{opIns, -1, j})
			j++
		case ps[i].elide:
			if j < n && cost[i][j] == costAbsorb+cost[i][j+1] {
				ops = append(ops, op{opAbsorb, i, j})
				j++
			} else {
				ops = append(ops, op{opSkip, i, -1})
				i++
			}
		case j < n && ps[i].matches(out[j]) && cost[i][j] == costMatch+cost[i+1][j+1]:
			ops = append(ops, op{opMatch, i, j})
			i, j = i+1, j+1
		case j < n && cost[i][j] == costSub+cost[i+1][j+1]:
			ops = append(ops, op{opSub, i, j})
			i, j = i+1, j+1
		case j < n && cost[i][j] == costIns+cost[i][j+1]:
			ops = append(ops, op{opIns, -1, j})
			j++
		default:
			ops = append(ops, op{opDel, i, -1})
			i++
		}
	}
	return ops
}

func matched(ops []op) bool {
	for _, o := range ops {
		if o.kind > opSkip {
			return false
		}
	}
	return true
}

// rewritten is the block's body made to match out, keeping its elisions and
// the lines (masked ones included) that still match.
func rewritten(body []string, ops []op, out []string) []string {
	var r []string
	for _, o := range ops {
		switch o.kind {
		case opMatch, opSkip:
			r = append(r, strings.TrimRight(body[o.d], " \t"))
		case opSub, opIns:
			r = append(r, out[o.a])
		}
	}
	return r
}

// diff describes where the block and the output differ, in hunks: the
// file's line, then "- " the doc's lines and "+ " what vsh prints now.
func diff(b *block, ops []op, out []string) string {
	var s strings.Builder
	in := false
	for k, o := range ops {
		if o.kind <= opSkip {
			in = false
			continue
		}
		if !in {
			at := b.end + 1 // the closing fence
			for _, p := range ops[k:] {
				if p.d >= 0 {
					at = b.bodyLine(p.d)
					break
				}
			}
			fmt.Fprintf(&s, "%s:%d:\n", b.file, at)
			in = true
		}
		if o.d >= 0 {
			fmt.Fprintf(&s, "  - %s\n", b.body[o.d])
		}
		if o.a >= 0 {
			fmt.Fprintf(&s, "  + %s\n", out[o.a])
		}
	}
	return s.String()
}

// outputLines splits a transcript into lines without trailing blanks.
func outputLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return lines
}

// replaceBodies writes the file with the given blocks' bodies replaced.
func replaceBodies(path string, blocks []*block, bodies map[*block][]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var out []string
	next := 0
	for _, b := range blocks { // in file order
		nb, ok := bodies[b]
		if !ok {
			continue
		}
		out = append(out, lines[next:b.first]...)
		out = append(out, nb...)
		next = b.end
	}
	out = append(out, lines[next:]...)
	return os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644)
}

// repoRoot finds the module's root from the working directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}
