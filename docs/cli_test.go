package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Command-line transcripts: a block marked
//
//	<!-- cli: in=docs/testdata/class -->
//	```console                 (or ````console, when the output holds ``` lines)
//	$ vsh lesson list verbs-course/
//	...what it prints...
//	```
//
// is run as a shell runs it: each "$ " line by sh -c, in a fresh copy of the
// folder in= names (relative to the repository's root), with the vsh built
// from this tree first on PATH, NO_COLOR set, and HOME and XDG_STATE_HOME in
// folders of the test's own, so that progress and reports start empty. The
// commands of one block share the copy and the state, in order. What they
// print (stdout and stderr) must be the block's other lines; the copy's
// path reads as ~/class and the state folder's as ~/.local/state in them.
// -rewrite puts what they print now into the block.

var cliMarkRE = regexp.MustCompile(`^<!--\s*cli:\s*in=(\S+)\s*-->\s*$`)

// cliBlock is one marked console block.
type cliBlock struct {
	file       string
	mark       int // line of the mark, 1-based
	in         string
	first, end int      // the block's lines: [first, end), 0-based
	commands   []string // the "$ " lines, without "$ "
	body       []string // the block as written
	transcript []string // what running it printed, with the commands
}

func (b *cliBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.mark) }

// parseCLI finds the cli marks of a Markdown file.
func parseCLI(name, text string) ([]*cliBlock, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out []*cliBlock
	for i, l := range lines {
		m := cliMarkRE.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(strings.TrimSpace(l), "<!-- cli") {
				return nil, fmt.Errorf("%s:%d: a cli mark is <!-- cli: in=FOLDER -->", name, i+1)
			}
			continue
		}
		b := &cliBlock{file: name, mark: i + 1, in: m[1]}
		fence, ok := "", false
		if i+1 < len(lines) {
			fence, ok = strings.CutSuffix(lines[i+1], "console")
		}
		if !ok || len(fence) < 3 || strings.Trim(fence, "`") != "" {
			return nil, fmt.Errorf("%s: a cli mark must be followed at once by a ```console block", b)
		}
		b.first = i + 2
		for b.end = b.first; b.end < len(lines) && lines[b.end] != fence; b.end++ {
			if c, ok := strings.CutPrefix(lines[b.end], "$ "); ok {
				b.commands = append(b.commands, c)
			}
		}
		if b.end == len(lines) {
			return nil, fmt.Errorf("%s: the console block is never closed", b)
		}
		b.body = lines[b.first:b.end]
		if len(b.commands) == 0 || !strings.HasPrefix(b.body[0], "$ ") {
			return nil, fmt.Errorf("%s: a cli block starts with a \"$ \" command line", b)
		}
		out = append(out, b)
	}
	return out, nil
}

// run plays the block's commands with the vsh binary bin.
func (b *cliBlock) run(t *testing.T, root, bin string) {
	t.Helper()
	tmp := t.TempDir()
	work, state, home := filepath.Join(tmp, "class"), filepath.Join(tmp, "state"), filepath.Join(tmp, "home")
	if err := os.CopyFS(work, os.DirFS(filepath.Join(root, b.in))); err != nil {
		t.Fatalf("%s: copying %s: %v", b, b.in, err)
	}
	for _, d := range []string{state, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + home, "XDG_STATE_HOME=" + state,
		"NO_COLOR=1", "TERM=dumb", "LC_ALL=C.UTF-8"}
	for _, c := range b.commands {
		cmd := exec.Command("sh", "-c", c)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %s: %v", b, c, err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case <-done: // a failing command is part of the transcript
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("%s: %s did not end within 2 minutes", b, c)
		}
		text := strings.ReplaceAll(out.String(), work, "~/class")
		text = strings.ReplaceAll(text, state, "~/.local/state")
		b.transcript = append(b.transcript, "$ "+c)
		if text = strings.TrimRight(text, "\n"); text != "" {
			for _, l := range strings.Split(text, "\n") {
				b.transcript = append(b.transcript, strings.TrimRight(l, " "))
			}
		}
	}
}

// TestCLITranscripts runs every cli block of README.md and docs/ and
// compares what it prints with the block.
func TestCLITranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the command-line transcripts build vsh")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var all []*cliBlock
	texts := map[string]string{}
	for _, f := range docFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseCLI(f, string(data))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(data)
		all = append(all, bs...)
	}
	if len(all) == 0 {
		t.Fatal("no cli transcript in the docs: the instructor's guide has some")
	}
	bin := filepath.Join(t.TempDir(), "bin", "vsh")
	build := exec.Command("go", "build", "-o", bin, "./cmd/vsh")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	changed := map[string][]*cliBlock{}
	for _, b := range all {
		b.run(t, root, bin)
		if strings.Join(b.transcript, "\n") == strings.Join(b.body, "\n") {
			continue
		}
		if *rewrite {
			changed[b.file] = append(changed[b.file], b)
			continue
		}
		t.Errorf("%s: the transcript is stale (go test ./docs -run TestCLITranscripts -rewrite); vsh now prints:\n%s",
			b, strings.Join(b.transcript, "\n"))
	}
	for f, bs := range changed {
		lines := strings.Split(strings.TrimSuffix(texts[f], "\n"), "\n")
		for i := len(bs) - 1; i >= 0; i-- { // from the end, so that earlier indices hold
			b := bs[i]
			lines = append(lines[:b.first], append(append([]string(nil), b.transcript...), lines[b.end:]...)...)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestParseCLI checks the marks' grammar, so that a broken mark fails
// rather than being skipped.
func TestParseCLI(t *testing.T) {
	tests := []struct {
		name, doc, err string
		commands       int
	}{
		{"ok", "<!-- cli: in=docs/testdata/class -->\n```console\n$ vsh lesson list\nout\n$ echo hi\nhi\n```\n", "", 2},
		{"no folder", "<!-- cli: -->\n```console\n$ x\n```\n", "a cli mark is <!-- cli: in=FOLDER -->", 0},
		{"not console", "<!-- cli: in=x -->\n```sh\n$ x\n```\n", "followed at once by a ```console block", 0},
		{"never closed", "<!-- cli: in=x -->\n```console\n$ x\n", "never closed", 0},
		{"no command", "<!-- cli: in=x -->\n```console\noutput\n```\n", "starts with a \"$ \" command line", 0},
		{"four backticks", "<!-- cli: in=x -->\n````console\n$ cat x.md\n```vsh\nx\n```\n````\n", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs, err := parseCLI("x.md", tt.doc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(bs) != 1 || len(bs[0].commands) != tt.commands {
				t.Errorf("%v, %d blocks", err, len(bs))
			}
		})
	}
}
