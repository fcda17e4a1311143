package shell

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// notebookSession is a session that draws both pictures and fails once.
var notebookSession = []string{
	"# Two QPs, a SEND, its packets",
	"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
	"reg_mr pd0 length=4096 access=local_write", "reg_mr pd1 length=4096 access=local_write",
	"create_cq ctx0", "create_cq ctx1",
	"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
	"connect qp0 qp1", "trace on", "post_recv qp1 mr=mr1", "post_send qp0 mr=mr0 length=100",
	"trace ladder", "show qp0 --diagram", "trace off", "bench op=write iters=100 min=64 max=256", "modify_qp qp0 state=init",
}

// TestNotebookHTML checks save FILE.html without a browser: one page, the
// pictures inline as SVG, nothing loaded from elsewhere.
func TestNotebookHTML(t *testing.T) {
	page := savedNotebook(t)
	for _, want := range []string{"<!DOCTYPE html>", "<title>vsh notebook: Two QPs, a SEND, its packets</title>",
		`<details class="failed">`, "open_device A", "ibv_open_device(A = sim0)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d SVG pictures, want 4 (the ladder, the diagram, bench's two charts)", n)
	}
	own := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "") // a name, not a load
	for _, bad := range []string{"<script", "<link", " src=", "http://", "https://", "@import", "url("} {
		if strings.Contains(own, bad) {
			t.Errorf("the page loads something from elsewhere: %q", bad)
		}
	}
}

// savedNotebook plays notebookSession and returns its HTML notebook.
func savedNotebook(t *testing.T) string {
	t.Helper()
	sh := newTestShell(t, 2, 1, true, newMemFiles())
	defer sh.Close()
	for _, l := range notebookSession {
		sh.Exec(l) // the last one fails, on purpose
	}
	page, err := sh.NotebookHTML()
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestNotebookInBrowser opens a saved HTML notebook in headless Chromium
// (Debian's package), with no network: the DOM it builds shows every
// cell's command and output and the ladder's SVG, and its screenshot is
// not blank. The screenshot is kept in the temporary directory.
func TestNotebookInBrowser(t *testing.T) {
	chromium := toolcheck.Require(t, "chromium", "apt-get install chromium")
	if testing.Short() {
		t.Skip("-short: the browser takes seconds")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "notebook.html")
	if err := os.WriteFile(file, []byte(savedNotebook(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browse(t, chromium, "--dump-dom", "file://"+file)
	for _, l := range notebookSession[1:] {
		if !strings.Contains(dom, l) {
			t.Errorf("the page shows no command %q", l)
		}
	}
	for _, want := range []string{"ibv_open_device(A = sim0)", "qp0 and qp1 are connected", "SEND_ONLY", "<svg", "RESET", "ib_write_bw"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page shows no %q", want)
		}
	}
	shot := filepath.Join(os.TempDir(), "vsh-notebook-screenshot.png")
	browse(t, chromium, "--screenshot="+shot, "--window-size=1200,1600", "file://"+file)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	colours, ink := map[[3]uint32]bool{}, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r>>8 < 128 && g>>8 < 128 && bl>>8 < 128 {
				ink++
			}
		}
	}
	if len(colours) < 16 || ink < 1000 {
		t.Errorf("the screenshot %s looks blank: %d colours, %d dark pixels", shot, len(colours), ink)
	}
	t.Logf("screenshot: %s", shot)
}

// browse runs headless Chromium on args with the network unreachable (a
// network namespace of its own when vsh runs as root, and no proxy that
// answers otherwise) and returns what it prints.
func browse(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + t.TempDir()}, args...)
	name := chromium
	if unshare, err := exec.LookPath("unshare"); err == nil && os.Geteuid() == 0 {
		name, argv = unshare, append([]string{"-n", chromium}, argv...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", chromium, err, lastLinesOf(errs.String(), 20))
	}
	return out.String()
}

func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestNotebookComments: what a learner types as a comment stays text in
// the notebook — no HTML in the page, no code fence the replay would run.
func TestNotebookComments(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"# <script>alert(1)</script> & more", "devices", "# ```vsh", "open_device A", "# ~~~", "# # heading?", "save nb.md"} {
		sh.Exec(l)
	}
	nb := string(files.m["nb.md"])
	for _, bad := range []string{"<script>", "\n```vsh\n", "\n~~~", "\n# heading"} {
		if strings.Contains(nb, bad) {
			t.Errorf("the notebook holds %q:\n%s", bad, nb)
		}
	}
	page, err := sh.NotebookHTML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page, "<script") {
		t.Errorf("a comment put a script in the page:\n%s", page)
	}
	replay := newTestShell(t, 2, 1, true, files)
	defer replay.Close()
	var out bytes.Buffer
	if err := replay.RunScript(strings.NewReader(nb), &out, "nb.md", false); err != nil {
		t.Errorf("the replay failed: %v\n%s", err, out.String())
	}
	if got := strings.Count(out.String(), "vsh> "); got != 2 {
		t.Errorf("the replay ran %d commands, want 2:\n%s", got, out.String())
	}
}

// TestNotebookReplayFences: a block a replay would not run is an error
// naming its line, a notebook with no block is one, and numbers that go
// down are said.
func TestNotebookReplayFences(t *testing.T) {
	tests := []struct {
		name, nb, errWant, outWant string
	}{
		{"cell=0", "```vsh cell=0\ndevices\n```\n", "the first at line 1: \"```vsh cell=0\" opens a block that is not run", ""},
		{"upper case", "```VSH\ndevices\n```\n", "the language is vsh, in lower case", ""},
		{"garbage", "```vsh please\ndevices\n```\n", "after vsh comes nothing, or cell=N", ""},
		{"no block", "# vsh notebook: nothing\n\nProse only.\n", "nb.md has no ```vsh block: nothing ran", ""},
		{"numbers go down", "```vsh cell=3\ndevices\n```\n\n```vsh cell=2\ndevices\n```\n", "",
			"note: nb.md:5: the block says cell=2, but cell 3 ran already: numbers only grow, so it is cell 4"},
		{"auto cells are the tutor's", "```vsh auto\ndevices\n```\n\n```vsh\ndevices\n```\n", "", "[1] vsh> devices"},
		{"a transcript runs its prompts' commands, numbered by them",
			"```vsh cell=4\n[4] vsh> open_device A\n[4] ibv_open_device(A = sim0) → ctx0\n    [5] vsh> devices\n[6] tutor> alloc_pd ctx0\n```\n\n```vsh\ndevices\n```\n", "",
			"[4] vsh> open_device A\n[4] ibv_open_device(A = sim0) → ctx0  [control path]\n[6] vsh> alloc_pd ctx0\n[6] ibv_alloc_pd(ctx0) → pd0  [control path]\n[7] vsh> devices"},
		{"a transcript's ! line", "```vsh cell=2\n[2] vsh> ! open_device Z\n[2] error: no device\n```\n", "", "[2] vsh> ! open_device Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			var out bytes.Buffer
			err := sh.RunScript(strings.NewReader(tt.nb), &out, "nb.md", true)
			if tt.errWant == "" && err != nil || tt.errWant != "" && (err == nil || !strings.Contains(err.Error(), tt.errWant)) {
				t.Errorf("error %v, want %q", err, tt.errWant)
			}
			if !strings.Contains(out.String(), tt.outWant) {
				t.Errorf("output does not say %q:\n%s", tt.outWant, out.String())
			}
		})
	}
}

// TestNotebookUntrustedWords: a lesson file's title, section and prose and
// a learner's comment are words, never markup that acts: in the page they
// are escaped, risky links are not links, and the page's policy runs no
// script — checked in Chromium too, where one would change the title.
func TestNotebookUntrustedWords(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "lessons", "tour.md"))
	if err != nil {
		t.Fatal(err)
	}
	evil := strings.Replace(string(src), "title: A tour of an RDMA device", `title: T <img src=x onerror="document.title='PWNED'">`, 1)
	evil = strings.Replace(evil, "\n## Devices\n", "\n## Devices <img src=y onerror=\"document.title='PWNED'\">\n\nSee [this](javascript:document.title='PWNED').\n", 1)
	files := newMemFiles()
	files.m["evil.md"] = []byte(evil)
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"lesson evil.md", "# see [notes](javascript:document.title='PWNED') <script>document.title='PWNED'</script>", "devices", "save x.html"} {
		if out, err := sh.Exec(l); err != nil {
			t.Fatalf("%s: %v\n%s", l, err, out)
		}
	}
	page := string(files.m["x.html"])
	for _, bad := range []string{"<img", `href="javascript:`, "<script>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Error("the page has no policy against scripts")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil || testing.Short() {
		return // TestNotebookInBrowser says why the browser is missing
	}
	file := filepath.Join(t.TempDir(), "x.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if dom := browse(t, chromium, "--dump-dom", "file://"+file); strings.Contains(dom, "<title>PWNED") || !strings.Contains(dom, "onerror") {
		t.Errorf("in the browser: a script ran, or the words are gone:\n%.600s", dom)
	}
}
