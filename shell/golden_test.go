package shell

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// The golden transcripts in testdata/*.txt are datadriven files: a
// directive, its input, "----", then the output. Each file is one session on
// the simulator (two devices, seed 1, unless "new" says otherwise).
//
//	vsh [keep-going]   run the input as a script; the output is its transcript
//	complete           one line per input line: the line, then its completions
//	new [devices=N] [seed=N] [plain=false] [light=true] [width=N] [xrc=true]
//	                   start a fresh session; width= fits its output to N
//	                   columns, as a terminal N wide (0, the default: no wrapping);
//	                   xrc=true gives the simulator XRC, as vsh --sim-xrc does
//	write FILE         put the input in the session's in-memory files (for source)
//	cat FILE           print a file the session wrote (save, trace pcap)
//
// They are always plain (no ANSI codes). To regenerate them after a change,
// run
//
//	go test ./shell -run TestGolden -rewrite
//
// (-rewrite is datadriven's flag, and the project's one name for rewriting
// golden files). Only commit the new files if you understand every change.
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		g := &goldenSession{t: t}
		g.start(sim.Config{Devices: 2, Seed: 1}, true, 0)
		defer g.sh.Close()
		datadriven.RunTest(t, path, g.handle)
	})
}

type goldenSession struct {
	t     *testing.T
	sh    *Shell
	files *memFiles
}

func (g *goldenSession) start(cfg sim.Config, plain bool, width int) {
	if g.sh != nil {
		g.sh.Close()
	}
	g.files = newMemFiles()
	g.sh = newTestShellConfig(g.t, cfg, plain, g.files)
	g.sh.opts.Width = func() int { return width }
}

// newTestShell is a session on a fresh simulator, with in-memory files and
// panics let through.
func newTestShell(t testing.TB, devices int, seed int64, plain bool, files fileSystem) *Shell {
	t.Helper()
	return newTestShellConfig(t, sim.Config{Devices: devices, Seed: seed}, plain, files)
}

// newTestShellConfig is newTestShell on a simulator made with cfg, described
// as cmd/vsh describes it.
func newTestShellConfig(t testing.TB, cfg sim.Config, plain bool, files fileSystem) *Shell {
	t.Helper()
	xrc := ""
	if cfg.XRC {
		xrc = ", XRC on"
	}
	sh, err := New(Options{
		Open: func() (verbs.Provider, error) {
			return sim.New(cfg), nil
		},
		Plain:   plain,
		Backend: fmt.Sprintf("sim (%d device%s, seed %d%s)", cfg.Devices, plural(cfg.Devices), cfg.Seed, xrc),
		Version: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	sh.noRecover = true
	if files != nil {
		sh.files = files
	}
	return sh
}

func (g *goldenSession) handle(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "new":
		devices, seed, plain, light, width, xrc := 2, int64(1), true, false, 0, false
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "width":
				d.ScanArgs(t, "width", &width)
			case "light":
				d.ScanArgs(t, "light", &light)
			case "devices":
				d.ScanArgs(t, "devices", &devices)
			case "seed":
				d.ScanArgs(t, "seed", &seed)
			case "plain":
				d.ScanArgs(t, "plain", &plain)
			case "xrc":
				d.ScanArgs(t, "xrc", &xrc)
			default:
				d.Fatalf(t, "unknown argument %s", a.Key)
			}
		}
		g.start(sim.Config{Devices: devices, Seed: seed, XRC: xrc}, plain, width)
		if light {
			g.sh.st = render.NewTheme(render.Light)
		}
		if width > 0 {
			return fmt.Sprintf("session on %s, %d columns wide", g.sh.backendDesc(), width)
		}
		return fmt.Sprintf("session on %s", g.sh.backendDesc())
	case "vsh":
		var b bytes.Buffer
		err := g.sh.RunScript(strings.NewReader(d.Input), &b, "script", d.HasArg("keep-going"))
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) {
				d.Fatalf(t, "script: %v", err)
			}
			fmt.Fprintf(&b, "script failed: %v\n", firstLines(se.Error(), 1))
		}
		return b.String()
	case "complete":
		var b strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			in := strings.TrimSuffix(line, "|")
			var texts []string
			for _, sg := range g.sh.Complete(in) {
				texts = append(texts, sg.Text)
			}
			fmt.Fprintf(&b, "%q → %s\n", in, strings.Join(texts, " "))
		}
		return b.String()
	case "write":
		g.files.m[d.CmdArgs[0].Key] = []byte(d.Input + "\n")
		return "ok"
	case "cat":
		data, ok := g.files.m[d.CmdArgs[0].Key]
		if !ok {
			return "no such file"
		}
		if bytes.IndexByte(data, 0) >= 0 || !utf8Printable(data) {
			return fmt.Sprintf("%d bytes (binary)", len(data))
		}
		return string(data)
	}
	d.Fatalf(t, "unknown directive %s", d.Cmd)
	return ""
}

func utf8Printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}

// memFiles is an in-memory fileSystem.
type memFiles struct{ m map[string][]byte }

func newMemFiles() *memFiles { return &memFiles{m: map[string][]byte{}} }

func (f *memFiles) ReadFile(name string) ([]byte, error) {
	b, ok := f.m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return b, nil
}

func (f *memFiles) Exists(name string) bool { _, ok := f.m[name]; return ok }

func (f *memFiles) WriteFile(name string, data []byte) error {
	f.m[name] = append([]byte(nil), data...)
	return nil
}

func (f *memFiles) Create(name string) (writeCloser, error) {
	return &memFile{fs: f, name: name}, nil
}

type memFile struct {
	fs   *memFiles
	name string
	buf  bytes.Buffer
}

func (m *memFile) Write(p []byte) (int, error) { return m.buf.Write(p) }
func (m *memFile) Close() error {
	m.fs.m[m.name] = m.buf.Bytes()
	return nil
}

// TestGoldenCoversEveryCommand checks that the golden transcripts run every
// command of the table at least once.
func TestGoldenCoversEveryCommand(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.Index(line, "vsh> "); i >= 0 {
				body, _ := splitBang(line[i+len("vsh> "):])
				w := strings.Fields(body)
				if len(w) > 0 {
					used[w[0]] = true
					if w[0] == "repeat" && len(w) > 2 {
						used[w[2]] = true
					}
				}
			}
		}
	}
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	var missing []string
	for _, c := range sh.cmds {
		ok := used[c.Name]
		for _, a := range c.Aliases {
			ok = ok || used[a]
		}
		if !ok {
			missing = append(missing, c.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no golden transcript runs %s; add them to testdata/*.txt", strings.Join(missing, ", "))
	}
}
