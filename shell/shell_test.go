package shell

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestCommandsDocUpToDate fails when docs/commands.md no longer matches the
// command table.
func TestCommandsDocUpToDate(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "docs", "commands.md"))
	if err != nil {
		t.Fatalf("reading docs/commands.md: %v; run go generate ./shell", err)
	}
	var got bytes.Buffer
	require.NoError(t, WriteMarkdown(&got))
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("docs/commands.md is stale; run go generate ./shell")
	}
}

// TestShellHasNoCgo keeps the shell, its Jupyter kernel and the lesson
// engine buildable without cgo and away from the cgo backend: no package they depend on may be
// verbs/ibverbs or verbs/sim, or carry cgo
// files of its own. The standard library's net and os/user have cgo
// variants with pure-Go fallbacks, which CGO_ENABLED=0 builds use.
func TestShellHasNoCgo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	for _, cgo := range []string{"0", "1"} {
		cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{join .CgoFiles \",\"}}", ".", "./kernel", "../lessons")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("CGO_ENABLED=%s go list -deps: %v\n%s", cgo, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			parts := strings.SplitN(line, "|", 3)
			if len(parts) != 3 {
				continue
			}
			path, std, cgoFiles := parts[0], parts[1] == "true", parts[2]
			if strings.HasSuffix(path, "verbs/ibverbs") || strings.HasSuffix(path, "verbs/sim") {
				t.Errorf("shell depends on %s; it must reach backends only through package verbs", path)
			}
			if cgoFiles != "" && !std {
				t.Errorf("CGO_ENABLED=%s: shell depends on %s, which has cgo files %s", cgo, path, cgoFiles)
			}
		}
	}
}

// TestShellDirectImports: the shell talks to verbs only. Its own imports
// hold no network package (the ping-pong exchange's TCP is in
// pingpong/exchange) and no backend; transitively everything reaches net
// through gopacket, which is why only direct imports are checked.
func TestShellDirectImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	out, err := exec.Command(goTool, "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		switch {
		case imp == "net", strings.HasPrefix(imp, "net/") && imp != "net/netip",
			strings.HasSuffix(imp, "/verbs/sim"), strings.HasSuffix(imp, "/verbs/ibverbs"):
			t.Errorf("shell imports %s; it must talk to verbs only", imp)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"   ", nil, ""},
		{"# all comment", nil, ""},
		{"alloc_pd ctx0", []string{"alloc_pd", "ctx0"}, ""},
		{"fill mr0 \"a b\\n\" offset=1", []string{"fill", "mr0", "a b\n", "offset=1"}, ""},
		{"fill mr0 'a \\n b'", []string{"fill", "mr0", `a \n b`}, ""},
		{"x key=\"a b\" # trailing", []string{"x", "key=a b"}, ""},
		{"x a#b", []string{"x", "a#b"}, ""},
		{"x \"\\x41\\x42\"", []string{"x", "AB"}, ""},
		{"x \"open", nil, "unterminated"},
		{"x 'open", nil, "unterminated"},
		{"x \"\\q\"", nil, "unknown escape"},
		{"x \"\\x4\"", nil, "two hex digits"},
	}
	for _, tc := range tests {
		toks, err := tokenize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("tokenize(%q) error = %v; want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("tokenize(%q) = %v", tc.in, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			got = append(got, tk.text)
		}
		assert.Equal(t, tc.want, got, "tokenize(%q)", tc.in)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "a\"b", `back\slash`, "new\nline", "\x00\xff", "#x", "k=v", "ünï"} {
		toks, err := tokenize("cmd " + quote(s))
		require.NoError(t, err, "quote(%q) = %s", s, quote(s))
		require.Len(t, toks, 2, "quote(%q) = %s", s, quote(s))
		assert.Equal(t, s, toks[1].text, "quote(%q) = %s", s, quote(s))
	}
}

func TestSplitKeys(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"\r", []string{"\r"}},
		{"\x1b[A", []string{"\x1b[A"}},
		{"alloc_pd ctx0\rquit\r", []string{"alloc_pd ctx0", "\r", "quit", "\r"}},
		{"one\r\ntwo\nthree", []string{"one", "\r", "two", "\r", "three"}},
		{"\r\r", []string{"\r", "\r"}},
	}
	for _, tc := range tests {
		var got []string
		for _, k := range splitKeys([]byte(tc.in)) {
			got = append(got, string(k))
		}
		assert.Equal(t, tc.want, got, "splitKeys(%q)", tc.in)
	}
}

// TestErrorsNameVerbErrnoWhyHint checks the error contract on a verb that
// fails: the command, the errno, why, and a hint; errors.Is sees the errno.
func TestErrorsNameVerbErrnoWhyHint(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, l := range []string{"open_device A", "alloc_pd ctx0", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"} {
		_, err := sh.Exec(l)
		require.NoError(t, err, l)
	}
	_, err := sh.Exec("modify_qp qp0 state=init pkey_index=0 port=1")
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.EINVAL), "errors.Is(%v, EINVAL)", err)
	assert.Equal(t, verbs.EINVAL, verbs.ErrnoOf(err))
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "modify_qp: EINVAL: "), "%q", msg)
	assert.Contains(t, msg, "missing: IBV_QP_ACCESS_FLAGS")
	assert.Contains(t, msg, "; hint: ")
	shown := sh.FormatError(err)
	assert.True(t, strings.HasPrefix(shown, "[5] error: modify_qp: EINVAL:"), "%q", shown)
	assert.Contains(t, shown, "\n    hint: ")

	cells := sh.Cells()
	last := cells[len(cells)-1]
	assert.Equal(t, 5, last.N)
	assert.True(t, last.Failed())
}

// TestDeterministic runs the same script twice on fresh simulators: the
// transcripts must be the same, byte for byte.
func TestDeterministic(t *testing.T) {
	script, err := os.ReadFile("testdata/datapath.txt")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(script), "\n") {
		if l == "----" {
			break
		}
		if l != "vsh" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	run := func() string {
		sh := newTestShell(t, 2, 1, true, nil)
		defer sh.Close()
		var b bytes.Buffer
		_ = sh.RunScript(strings.NewReader(strings.Join(lines, "\n")), &b, "det", true)
		return b.String()
	}
	a, b := run(), run()
	require.NotEmpty(t, a)
	assert.Equal(t, a, b)
}

// TestNotebookRoundTrip saves a session as a notebook, replays the notebook
// on a fresh session, and gets the same transcript.
func TestNotebookRoundTrip(t *testing.T) {
	script := strings.Join([]string{
		"# a session with a failure expected",
		"open_device A",
		"open_device B",
		"alloc_pd ctx0",
		"alloc_pd ctx1",
		"reg_mr pd0 length=64 access=local_write",
		"reg_mr pd1 length=64 access=local_write",
		"create_cq ctx0",
		"create_cq ctx1",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"! modify_qp qp0 state=rtr",
		"connect qp0 qp1",
		"post_recv qp1 mr=mr1",
		`fill mr0 "round trip"`,
		"post_send qp0 mr=mr0 length=10",
		"poll_cq cq0",
		"poll_cq cq1",
		"mem mr1 0 16",
		"explain rts",
	}, "\n")
	files := newMemFiles()
	first := newTestShell(t, 2, 1, true, files)
	var orig bytes.Buffer
	require.NoError(t, first.RunScript(strings.NewReader(script), &orig, "orig.vsh", false))
	out, err := first.Exec("save nb.md")
	require.NoError(t, err, out)
	first.Close()

	nb := files.m["nb.md"]
	require.NotEmpty(t, nb)
	assert.Contains(t, string(nb), "\n[11] vsh> ! modify_qp qp0 state=rtr\n[11] ibv_modify_qp(qp0")
	assert.Contains(t, string(nb), "# vsh notebook: a session with a failure expected\n")

	second := newTestShell(t, 2, 1, true, files)
	defer second.Close()
	var replay bytes.Buffer
	require.NoError(t, second.RunScript(bytes.NewReader(nb), &replay, "nb.md", false))
	assert.Equal(t, orig.String(), replay.String())
}

func TestPlainAndStyled(t *testing.T) {
	for _, plain := range []bool{true, false} {
		sh := newTestShell(t, 2, 1, plain, nil)
		out, err := sh.Exec("open_device A")
		require.NoError(t, err)
		_, err = sh.Exec("frobnicate")
		shown := sh.FormatError(err)
		hasEsc := strings.Contains(out+shown, "\x1b[")
		assert.Equal(t, !plain, hasEsc, "plain=%v: escape codes in %q", plain, out+shown)
		sh.Close()
	}
}

// TestUserInputNeverPanics runs odd lines through every command with the
// recover turned off.
func TestUserInputNeverPanics(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, newMemFiles())
	defer sh.Close()
	setup := []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=64 access=local_write", "create_cq ctx0",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_srq pd0", "create_comp_channel ctx0",
		"create_ah pd0 dgid=A sgid_index=1"}
	for _, l := range setup {
		_, err := sh.Exec(l)
		require.NoError(t, err, l)
	}
	odd := []string{"", "=", "==", "x=", "=x", "\"\"", "''", "qp0", "ctx0", "mr0+", "mr0:", "0", "-1", "0x", "99999999999999999999",
		"a=b=c", "state=", "length=0", "offset=99999", "sge=", "sge=,", "sge=mr0:x", "sge=mr0:1:2:3", "remote=mr0+x", "{i}", "-v", "all"}
	for _, c := range sh.cmds {
		if c.Name == "quit" || c.Name == "reset" {
			continue
		}
		for _, a := range odd {
			for _, b := range []string{"", " " + a, " qp0 " + a, " mr0 " + a, " ctx0 " + a, " cq0 " + a} {
				line := c.Name + " " + a + b
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("Exec(%q) panicked: %v", line, r)
						}
					}()
					sh.Exec(line)
					sh.Complete(line)
				}()
			}
		}
	}
}

// FuzzExec feeds arbitrary lines to a session on the simulator: nothing may
// panic (the recover is off), whatever the line. make test runs the seeds;
// make fuzz explores.
func FuzzExec(f *testing.F) {
	for _, s := range []string{
		"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=4096 access=local_write,remote_write",
		"create_cq ctx0 cqe=16", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "connect qp0 qp0",
		"modify_qp qp0 state=rtr dest_qpn=qp0 dgid=qp0 sgid_index=1", "post_send qp0 opcode=rdma_write mr=mr0 remote=mr0+8 length=8",
		"post_recv qp0 sge=mr0:0:8,mr0:8:8", "poll_cq cq0 n=4 wait=1ms", "fill mr0 \"\\x00\\xff\" offset=4", "mem mr0 0 16",
		"explain 13", "explain rdma_write_first", "repeat 2 alloc_pd ctx0", "! alloc_pd", "help modify_qp", "show", "watch qp0",
		"fault drop nth=1", "step 3", "advance 1ms", "fabric step", "history", "trace on",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sh := newTestShell(t, 2, 1, true, newMemFiles())
		defer sh.Close()
		for _, l := range []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=4096 access=local_write", "create_cq ctx0",
			"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"} {
			if _, err := sh.Exec(l); err != nil {
				t.Fatal(err)
			}
		}
		sh.Exec(line)
		sh.Complete(line)
		if strings.Contains(line, "\n") {
			return
		}
		sh.Exec("repeat 2 " + line)
	})
}

// FuzzTokenize checks that tokenize never panics and that quoting what it
// returns reads back the same.
//
// It reads at most fuzzTokenizeMax bytes of each input. Every state of the
// tokenizer (blanks, bare words, "..." with escapes, '...', #) is reached in
// a short line; a longer one only adds loop counts, which the engine's 8-bit
// coverage counters take for new coverage. The engine then minimizes each such
// input, trying about n*n/2 candidates for n bytes, each costing a snapshot of
// the whole shell test binary's counters (~0.3 ms): a 431-byte input kept the
// only worker busy for the 60 s of -fuzzminimizetime with no execs counted,
// the "stall at 0 execs/s". Long lines are TestTokenizeLinear's job.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"a b", `fill mr0 "x\ny"`, "k='v w'", "# c", `"\x41"`, "a=\"b\"c", "'",
		"0" + strings.Repeat("\x15", 430)} { // the input being minimized during the stall
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > fuzzTokenizeMax {
			line = line[:fuzzTokenizeMax]
		}
		toks, err := tokenize(line)
		if err != nil {
			return
		}
		var parts []string
		for _, tk := range toks {
			parts = append(parts, quote(tk.text))
		}
		again, err := tokenize(strings.Join(parts, " "))
		if err != nil {
			t.Fatalf("re-tokenizing %q: %v", parts, err)
		}
		if len(again) != len(toks) {
			t.Fatalf("tokenize(%q) = %d words, re-quoted %d", line, len(toks), len(again))
		}
		for i := range toks {
			if again[i].text != toks[i].text {
				t.Fatalf("word %d: %q re-read as %q", i, toks[i].text, again[i].text)
			}
		}
	})
}

// fuzzTokenizeMax bounds FuzzTokenize's inputs (see there).
const fuzzTokenizeMax = 128

// TestTokenizeLinear checks that tokenizing a line and quoting its words
// back allocate bytes in proportion to the line's length, for lines made of
// one repeated piece (the shapes the fuzzer grows). A quadratic path costs 64
// times the bytes for eight times the line; a linear one about 8 times, up to
// 20 where append's growth steps change from 2x to 1.25x, so the bound is 32.
// Bytes are counted, not time, so the test is deterministic.
func TestTokenizeLinear(t *testing.T) {
	roundTrip := func(line string) {
		toks, _ := tokenize(line)
		for _, tk := range toks {
			quote(tk.text)
		}
	}
	allocated := func(line string) uint64 { // the least of three, against other goroutines' allocations
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			roundTrip(line)
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	for _, piece := range []string{"\x15", "0", "a ", "k=v ", `"\x41"`, `"\\`, "'", "''", `"`, `""`, "=", "#", "\xff\xfe", "x'y z'\"w\" "} {
		const n = 4096 // bytes in the short line
		short := strings.Repeat(piece, n/len(piece))
		long := strings.Repeat(piece, 8*n/len(piece))
		roundTrip(short) // warm up
		s, l := allocated(short), allocated(long)
		if l > 32*s+4096 {
			t.Errorf("tokenize+quote of %d×%q: %d bytes allocated, of 8 times as much: %d (%.1f×; quadratic is 64×)",
				n/len(piece), piece, s, l, float64(l)/float64(max(s, 1)))
		}
	}
}

// TestTerminalTheme reads the two ways a terminal says its background, and
// checks that its late answers are not taken for keys.
func TestTerminalTheme(t *testing.T) {
	for _, tt := range []struct {
		in           string
		light, known bool
	}{
		{"15;0", false, true}, {"0;15", true, true}, {"0;7", true, true}, {"7;8", false, true},
		{"0;default;15", true, true}, {"", false, false}, {"15", false, false}, {"0;x", false, false}, {"0;99", false, false},
	} {
		if light, known := colorFGBG(tt.in); light != tt.light || known != tt.known {
			t.Errorf("COLORFGBG=%q: light %v known %v", tt.in, light, known)
		}
	}
	for _, tt := range []struct {
		in           string
		light, known bool
	}{
		{"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?62;22c", true, true},
		{"\x1b]11;rgb:1c1c/1c1c/1c1c\x07", false, true},
		{"\x1b]11;rgb:fd/f6/e3\x1b\\", true, true}, // two digits: Solarized light
		{"\x1b[?1;2c", false, false},               // no OSC 11: only the device attributes
		{"", false, false},
	} {
		if light, known := backgroundReply([]byte(tt.in)); light != tt.light || known != tt.known {
			t.Errorf("reply %q: light %v known %v", tt.in, light, known)
		}
	}
	late := "ls\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[?62;22c\r"
	if got := string(terminalReply.ReplaceAll([]byte(late), nil)); got != "ls\r" {
		t.Errorf("late answers left %q of %q", got, late)
	}
}

// TestNotebookLesson saves a lesson session as a notebook: the lesson's
// title, each step's heading, prose and goal, the learner's comments, a
// failed attempt folded, the tutor's commands said so, the summary; a
// replay numbers every command as the notebook does; save does not
// overwrite without -f.
func TestNotebookLesson(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"lesson tour", "# first, the list of devices", "devices", "open_device Z", "open_device A", "lesson skip", "save nb.md"} {
		sh.Exec(l)
	}
	nb := string(files.m["nb.md"])
	for _, want := range []string{
		"# vsh notebook: Lesson tour: A tour of an RDMA device\n",
		"\n## Step 1 of 9 · Devices\n<details class=\"lesson\"><summary><b>Goal: List the RDMA devices of this host",
		"</b></summary><p>Before a program can move a byte with RDMA it must find a device",
		"\nfirst, the list of devices\n",
		"<details class=\"failed\"><summary>A failed attempt: <code>open_device Z</code></summary>",
		"\n```vsh cell=6\n[6] tutor> query_device ctx0\n```\n<details class=\"tutor\"><summary>The tutor's output</summary><pre><code>[6] ibv_query_device(ctx0) = 0",
		"&#10;    max_inline_data            512</code></pre></details>\n", "\n## Summary\n",
	} {
		if !strings.Contains(nb, want) {
			t.Errorf("the notebook has no %q:\n%s", want, nb)
		}
	}
	if strings.Contains(nb, "## Devices") {
		t.Errorf("the step's own heading is in its prose:\n%s", nb)
	}
	// A replay numbers each command as the notebook's prompts say.
	prompts := regexp.MustCompile(`(?m)^\[\d+\] vsh> .*$`)
	numbers := prompts.FindAllString(strings.ReplaceAll(nb, "] tutor> ", "] vsh> "), -1) // the replay runs the tutor's too
	replay := newTestShell(t, 2, 1, true, files)
	defer replay.Close()
	var out bytes.Buffer
	replay.RunScript(strings.NewReader(nb), &out, "nb.md", true)
	got := prompts.FindAllString(out.String(), -1)
	if len(numbers) < 4 || strings.Join(got, "\n") != strings.Join(numbers, "\n") {
		t.Errorf("replayed as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(numbers, "\n"))
	}
	// In a lesson a failure is part of the output.
	if out, err := sh.Exec("save nb.md"); !strings.Contains(fmt.Sprint(out, err), "nb.md exists already") {
		t.Errorf("save over a file: %v\n%s", err, out)
	}
	if out, err := sh.Exec("save -f nb.md"); err != nil {
		t.Errorf("save -f: %v\n%s", err, out)
	}
}

// TestTTYBound: the line handed to go-prompt stops one byte past MaxLine
// (which the shell then refuses whole), and its length follows Enter,
// Ctrl-U and backspace.
func TestTTYBound(t *testing.T) {
	p := &ttyParser{}
	chunk := []byte(strings.Repeat("x", 4096))
	handed := 0
	for i := 0; i < 100; i++ { // a 400 KB paste, in 4 KB reads
		if k := p.bound(chunk); k[0] != 0 {
			handed += len(k)
		}
	}
	assert.Equal(t, MaxLine+1, handed)
	assert.Equal(t, []byte{0}, p.bound([]byte("y")))
	p.bound([]byte("\r"))
	assert.Equal(t, []byte("ab"), p.bound([]byte("ab")))
	p.bound([]byte{0x15})
	assert.Equal(t, 0, p.lineLen)
	p.bound([]byte("abc"))
	p.bound([]byte{0x7f})
	assert.Equal(t, 2, p.lineLen)
	assert.Equal(t, []byte("\x1b[D"), p.bound([]byte("\x1b[D")))
	assert.Equal(t, 2, p.lineLen)
}
