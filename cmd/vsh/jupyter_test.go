package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// python3 is Debian's: another python3 on the PATH may lack Jupyter.
const python3 = "/usr/bin/python3"

// jupyterKernels builds vsh, installs its kernel specs under a temporary
// prefix — vsh on the simulator, vsh-udp on the simulator's UDP link at
// 127.0.0.79 — and returns the environment that makes Jupyter find them,
// and the binary. Without Debian's Jupyter packages the test is skipped
// loudly (a failure under VSH_REQUIRE_TOOLS).
func jupyterKernels(t *testing.T, modules ...string) (env []string, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Jupyter tests start Python")
	}
	if _, err := os.Stat(python3); err != nil {
		toolcheck.Missing(t, python3+" not found (install: apt-get install jupyter-client jupyter-nbconvert python3-nbclient jupyter-notebook)")
	}
	imp := "import " + strings.Join(modules, ", ")
	if out, err := exec.Command(python3, "-c", imp).CombinedOutput(); err != nil {
		toolcheck.Missing(t, "Debian's Jupyter packages: "+strings.TrimSpace(string(out))+
			" (install: apt-get install jupyter-client jupyter-nbconvert python3-nbclient jupyter-notebook)")
	}
	dir := t.TempDir()
	bin = builtVsh(t)
	prefix := filepath.Join(dir, "prefix")
	for _, args := range [][]string{
		{"kernel", "install", "--prefix", prefix},
		{"--sim-addr", "127.0.0.79", "--devices", "1", "kernel", "install", "--prefix", prefix, "--name", "vsh-udp"},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("vsh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	env = append(os.Environ(), "JUPYTER_PATH="+filepath.Join(prefix, "share", "jupyter"), "HOME="+home,
		"JUPYTER_RUNTIME_DIR="+filepath.Join(dir, "runtime"), "JUPYTER_CONFIG_DIR="+filepath.Join(dir, "config"),
		"JUPYTER_PLATFORM_DIRS=1", "PYDEVD_DISABLE_FILE_VALIDATION=1")
	return env, bin
}

var built struct {
	sync.Mutex
	bin string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// builtVsh builds vsh once for the package's tests that run it as a
// program.
func builtVsh(t *testing.T) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.bin != "" {
		return built.bin
	}
	dir, err := os.MkdirTemp("", "vsh-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "vsh")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built.bin = bin
	return bin
}

// TestKernelSpec: jupyter kernelspec list shows the installed kernel.
func TestKernelSpec(t *testing.T) {
	env, _ := jupyterKernels(t, "jupyter_client")
	cmd := exec.Command(python3, "-m", "jupyter_client.kernelspecapp", "list", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jupyter kernelspec list: %v\n%s", err, out)
	}
	var specs struct {
		Kernelspecs map[string]struct {
			Spec struct {
				Argv     []string `json:"argv"`
				Language string   `json:"language"`
			} `json:"spec"`
		} `json:"kernelspecs"`
	}
	if err := json.Unmarshal(out, &specs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	vsh, ok := specs.Kernelspecs["vsh"]
	if !ok || vsh.Spec.Language != "vsh" || !strings.HasSuffix(strings.Join(vsh.Spec.Argv, " "), "kernel --connection-file {connection_file}") {
		t.Errorf("kernelspec list: %s", out)
	}
}

// TestJupyterClient drives the kernel with jupyter_client, as Jupyter's
// front ends do (testdata/jupyter_client_check.py).
func TestJupyterClient(t *testing.T) {
	env, _ := jupyterKernels(t, "jupyter_client")
	cmd := exec.Command(python3, "testdata/jupyter_client_check.py")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "all checks passed") {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestNotebooksExecute exports every shipped lesson with its solutions and
// executes the notebooks with jupyter nbconvert --execute on the vsh
// kernel: no cell may have an error, and every %check --strict says its
// step is reached. The same lessons without solutions run too: there
// every %check says "not yet", as plain output, so Run All goes on.
func TestNotebooksExecute(t *testing.T) {
	env, bin := jupyterKernels(t, "nbconvert", "nbclient")
	ids, err := exec.Command(bin, "lesson", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var books []string
	for _, line := range strings.Split(string(ids), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !lessonID.MatchString(f[0]) || f[0] == "lesson" {
			continue
		}
		for _, sol := range []bool{true, false} {
			name := filepath.Join(dir, f[0]+".ipynb")
			args := []string{"lesson", "export", f[0], "--ipynb", name}
			if sol {
				args = append(args, "--solutions")
			} else {
				if f[0] != "tour" && f[0] != "rc-pingpong" {
					continue // two lessons without solutions are enough
				}
				name = filepath.Join(dir, f[0]+"-blank.ipynb")
				args[4] = name
			}
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Fatalf("vsh %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			books = append(books, name)
		}
	}
	if len(books) < 15 {
		t.Fatalf("only %d notebooks from vsh lesson list:\n%s", len(books), ids)
	}
	out := filepath.Join(dir, "out")
	var solved, blanks []string
	for _, b := range books {
		if strings.HasSuffix(b, "-blank.ipynb") {
			blanks = append(blanks, b)
		} else {
			solved = append(solved, b)
		}
	}
	// Without solutions a tutor's cell fails where it needs what the
	// learner did not do; --allow-errors runs every cell all the same.
	for _, run := range []struct {
		books []string
		flags []string
	}{{solved, nil}, {blanks, []string{"--allow-errors"}}} {
		args := append([]string{"nbconvert", "--to", "notebook", "--execute", "--output-dir", out, "--ExecutePreprocessor.timeout=120"}, run.flags...)
		cmd := exec.Command("/usr/bin/jupyter", append(args, run.books...)...)
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("jupyter nbconvert --execute: %v\n%s", err, b)
		}
	}
	for _, book := range books {
		b, err := os.ReadFile(filepath.Join(out, filepath.Base(book)))
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type    string          `json:"cell_type"`
				Source  json.RawMessage `json:"source"`
				Outputs []struct {
					Type  string          `json:"output_type"`
					Text  json.RawMessage `json:"text"`
					EName string          `json:"ename"`
				} `json:"outputs"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(b, &nb); err != nil {
			t.Fatalf("%s: %v", book, err)
		}
		blank := strings.HasSuffix(book, "-blank.ipynb")
		checks := 0
		for i, c := range nb.Cells {
			src := joinSource(c.Source)
			var text strings.Builder
			for _, o := range c.Outputs {
				if o.Type == "error" && (!blank || strings.HasPrefix(src, "%")) {
					t.Errorf("%s: cell %d (%q) has an error output: %s", filepath.Base(book), i, src, o.EName)
				}
				text.WriteString(joinSource(o.Text))
			}
			if !strings.HasPrefix(src, "%check") {
				continue
			}
			checks++
			if want := "✓ step"; !blank && !strings.HasPrefix(text.String(), want) {
				t.Errorf("%s: %s says %q", filepath.Base(book), src, text.String())
			}
			if want := "✗ step"; blank && !strings.HasPrefix(text.String(), want) {
				t.Errorf("%s (no solutions): %s says %q", filepath.Base(book), src, text.String())
			}
		}
		if checks == 0 {
			t.Errorf("%s: no %%check cell", filepath.Base(book))
		}
	}
}

// lessonID is how vsh lesson list starts a lesson's line.
var lessonID = regexp.MustCompile(`^[a-z][a-z0-9-]+$`)

// joinSource reads a notebook's multi-line string: a string or a list of
// strings.
func joinSource(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l []string
	json.Unmarshal(raw, &l)
	return strings.Join(l, "")
}

// TestNotebookInJupyter serves an exported lesson (wire, with its
// solutions) with Jupyter's classic Notebook on the vsh kernel, opens it
// in Debian's headless Chromium (playwright-core from npm drives it:
// testdata/notebook_browser.cjs), runs Cell → Run All, and reads the
// page: every code cell has output, none is an error, and the packet
// ladder is an SVG picture. The screenshot is left in the system's
// temporary directory, as vsh-notebook-in-jupyter.png.
func TestNotebookInJupyter(t *testing.T) {
	env, bin := jupyterKernels(t, "notebook", "jupyter_client")
	chrome := toolcheck.Require(t, "chromium", "apt-get install chromium")
	node := toolcheck.Require(t, "node", "apt-get install nodejs npm")
	modules := os.Getenv("VSH_NODE_MODULES")
	if modules == "" {
		home, _ := os.UserHomeDir()
		modules = filepath.Join(home, ".cache", "vsh-npm", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(modules, "playwright-core")); err != nil {
		toolcheck.Missing(t, "playwright-core not in "+modules+" (install: npm install --prefix ~/.cache/vsh-npm playwright-core; .ci/run does)")
	}
	dir := t.TempDir()
	book := filepath.Join(dir, "wire.ipynb")
	if out, err := exec.Command(bin, "lesson", "export", "wire", "--ipynb", book, "--solutions").CombinedOutput(); err != nil {
		t.Fatalf("lesson export: %v\n%s", err, out)
	}
	port := freePort(t)
	token := "vsh-test-token"
	server := exec.Command("/usr/bin/python3", "-m", "notebook", "--no-browser", "--ip=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--NotebookApp.token="+token, "--NotebookApp.notebook_dir="+dir, "--NotebookApp.open_browser=False", "--allow-root")
	server.Env = env
	var log strings.Builder
	server.Stdout, server.Stderr = &log, &log
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		server.Process.Signal(os.Interrupt)
		time.Sleep(200 * time.Millisecond)
		server.Process.Kill()
		server.Wait()
	}()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/api/status?token=" + token)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Notebook server did not come up: %v\n%s", err, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	shot := filepath.Join(os.TempDir(), "vsh-notebook-in-jupyter.png") // CI output, outside the checkout
	cmd := exec.Command(node, "testdata/notebook_browser.cjs", base+"/notebooks/wire.ipynb?token="+token, chrome, shot)
	cmd.Env = append(env, "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the browser: %v\n%s\n%s\nthe server:\n%s", err, out, stderr, log.String())
	}
	var seen struct {
		CodeCells     int      `json:"code_cells"`
		WithOutput    int      `json:"with_output"`
		WithoutOutput []string `json:"without_output"`
		Errors        []string `json:"errors"`
		SVGs          int      `json:"svgs"`
		Ladder        bool     `json:"ladder"`
		Tables        int      `json:"tables"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("the page: %+v; its screenshot: %s", seen, shot)
	if seen.CodeCells < 10 || seen.WithOutput != seen.CodeCells || len(seen.Errors) > 0 || !seen.Ladder || seen.Tables == 0 {
		t.Errorf("the page after Run All: %+v", seen)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("the screenshot: %v", err)
	}
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestKernelInstall writes the kernel spec under a prefix, with the flags
// given before kernel, and refuses names and places that are not.
func TestKernelInstall(t *testing.T) {
	prefix := t.TempDir()
	status, out, errs := runVsh(t, "", "--seed", "7", "kernel", "install", "--prefix", prefix, "--name", "vsh-7")
	dir := filepath.Join(prefix, "share", "jupyter", "kernels", "vsh-7")
	if status != 0 || !strings.Contains(out, dir) {
		t.Fatalf("kernel install = %d, %q, %q", status, out, errs)
	}
	var spec struct {
		Argv          []string `json:"argv"`
		DisplayName   string   `json:"display_name"`
		InterruptMode string   `json:"interrupt_mode"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil || json.Unmarshal(b, &spec) != nil {
		t.Fatalf("kernel.json: %v\n%s", err, b)
	}
	if got := strings.Join(spec.Argv[1:], " "); got != "--seed 7 kernel --connection-file {connection_file}" || spec.DisplayName != "vsh (vsh-7)" || spec.InterruptMode != "signal" {
		t.Errorf("kernel.json: %s", b)
	}
	for _, logo := range []string{"logo-svg.svg", "logo-64x64.png", "logo-32x32.png"} {
		if fi, err := os.Stat(filepath.Join(dir, logo)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", logo, err)
		}
	}
	for _, args := range [][]string{
		{"kernel", "install", "--prefix", prefix, "--name", ".."},
		{"kernel", "install", "--prefix", prefix, "--user"},
		{"kernel", "install", "extra"},
		{"kernel"},
		{"kernel", "--connection-file"},
	} {
		if status, _, errs := runVsh(t, "", args...); status != 2 || errs == "" {
			t.Errorf("vsh %s = %d, %q; want a usage error", strings.Join(args, " "), status, errs)
		}
	}
	if status, _, errs := runVsh(t, "", "kernel", "--connection-file", filepath.Join(prefix, "none.json")); status != 1 || !strings.Contains(errs, "connection file") {
		t.Errorf("a missing connection file = %d, %q", status, errs)
	}
}
