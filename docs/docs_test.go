// Package docs is vsh's user documentation. Its test keeps the transcripts in
// README.md and docs/**/*.md true: each block marked
//
//	<!-- transcript: sim seed=1 -->
//
// is run in a fresh session and compared with what vsh prints, as the goldens
// in shell/testdata and lessons/testdata are. The marks are defined in
// docs/getting-started.md ("Transcripts in these docs") and in
// transcript_test.go. After a change that alters the output, run
//
//	go test ./docs -rewrite
//
// and read the diff before you commit: -rewrite puts what vsh prints now into
// each block, keeping its elisions ("...") and the masked lines («...») that
// still match.
//
// Blocks marked sim run on the simulator in make test. Blocks marked rxe0 run
// only where VSH_RXE=1 (make test-rxe, in the lab guest next to rxe0), with
// the vsh binary VSH_RXE_VSH names (built with -tags ibverbs); elsewhere they
// are not selected, and the test says how many it left. To rewrite them:
//
//	make rxe-binaries
//	bin/rxe-lab run -e VSH_RXE=1 -e VSH_RXE_VSH=./bin/vsh -- ./bin/docs.test -test.run TestTranscripts -rewrite
package docs

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// -rewrite is the project's one name for rewriting golden files (datadriven's).
var rewrite = flag.Bool("rewrite", false, "rewrite the transcripts in README.md and docs/*.md with what vsh prints now")

// generated are docs that go generate writes; their tests live with their
// sources (shell's command table, the lessons).
var generated = map[string]bool{"docs/commands.md": true, "docs/lessons.md": true}

// docFiles returns README.md and every Markdown file under docs/, relative to
// the repository's root, but the generated ones.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir // the docs' fixtures, not docs
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err == nil && !generated[filepath.ToSlash(rel)] {
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func parseDocs(t *testing.T) (root string, files []string, blocks map[string][]*block, unmarked map[string][]int) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files = docFiles(t, root)
	blocks, unmarked = map[string][]*block{}, map[string][]int{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		bs, um, err := parseFile(f, string(data))
		if err != nil {
			t.Fatal(err)
		}
		blocks[f], unmarked[f] = bs, um
	}
	return root, files, blocks, unmarked
}

// TestTranscripts runs every marked transcript of the selected backend (sim,
// or rxe0 where VSH_RXE=1) and compares it with the block.
func TestTranscripts(t *testing.T) {
	root, files, blocks, _ := parseDocs(t)
	want, other := "sim", "rxe0"
	if os.Getenv("VSH_RXE") != "" {
		want, other = "rxe0", "sim"
	}
	ran, left := 0, 0
	for _, f := range files {
		bodies := map[*block][]string{}
		for _, b := range blocks[f] {
			if b.backend != want {
				left++
				continue
			}
			ran++
			t.Run(b.String(), func(t *testing.T) {
				out := runBlock(t, root, b)
				ps := compile(b.body)
				ops := align(ps, out)
				if matched(ops) {
					return
				}
				if *rewrite {
					bodies[b] = rewritten(b.body, ops, out)
					t.Logf("%s: rewritten", b)
					return
				}
				how := "go test ./docs -rewrite"
				if b.backend == "rxe0" {
					how = "bin/docs.test -rewrite in the lab guest (docs/docs_test.go says how)"
				}
				t.Errorf("%s: the transcript is not what vsh prints now; %s puts the new one in:\n%s", b, how, diff(b, ops, out))
			})
		}
		if len(bodies) > 0 {
			if err := replaceBodies(filepath.Join(root, f), blocks[f], bodies); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ran == 0 && want == "rxe0" {
		t.Errorf("VSH_RXE is set but no transcript is marked rxe0")
	}
	t.Logf("transcripts: %d ran on %s; %d marked %s are left to %s", ran, want, left, other,
		map[string]string{"sim": "make test", "rxe0": "make test-rxe"}[other])
}

// TestEveryTranscriptIsMarked fails on a vsh prompt line outside a marked
// block: a transcript that no test would keep true.
func TestEveryTranscriptIsMarked(t *testing.T) {
	_, files, _, unmarked := parseDocs(t)
	for _, f := range files {
		for _, l := range unmarked[f] {
			t.Errorf("%s:%d: a vsh transcript without a mark; put <!-- transcript: sim seed=1 --> (or rxe0) on the line before its fence", f, l)
		}
	}
}

// runBlock runs the block's script in a fresh session, in an empty working
// directory, and returns the transcript's lines. A script may fail only at
// its last command (a transcript that shows an error).
func runBlock(t *testing.T, root string, b *block) []string {
	t.Helper()
	script := strings.Join(b.script, "\n") + "\n"
	switch b.backend {
	case "sim":
		t.Chdir(t.TempDir()) // a block that saves a file leaves nothing behind
		n, seed := b.devices, b.seed
		sh, err := shell.New(shell.Options{
			Open:    func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: n, Seed: seed}), nil },
			Plain:   true,
			Backend: fmt.Sprintf("sim (%d device%s, seed %d)", n, map[bool]string{true: "", false: "s"}[n == 1], seed),
			Version: "docs",
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sh.Close()
		var out bytes.Buffer
		err = sh.RunScript(strings.NewReader(script), &out, "script", false)
		var se *shell.ScriptError
		if err != nil && (!errors.As(err, &se) || se.Line != b.lastCommand()) {
			t.Fatalf("%s: the script failed before its last command (%s script): %v\n%s", b, b.from, err, out.String())
		}
		return outputLines(out.String())
	case "rxe0":
		bin := os.Getenv("VSH_RXE_VSH")
		if bin == "" {
			t.Fatalf("VSH_RXE is set but VSH_RXE_VSH is not: the vsh built with -tags ibverbs (make test-rxe sets both)")
		}
		if !filepath.IsAbs(bin) {
			bin = filepath.Join(root, bin)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "script.vsh")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--backend", "ibverbs", "--plain", "-f", path)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil && !strings.Contains(errb.String(), fmt.Sprintf("script.vsh:%d: stopped", b.lastCommand())) {
			t.Fatalf("%s: %s --backend ibverbs: %v; it failed before its last command:\n%s%s", b, bin, err, out.String(), errb.String())
		}
		return outputLines(out.String())
	}
	t.Fatalf("%s: unknown backend %q", b, b.backend)
	return nil
}
