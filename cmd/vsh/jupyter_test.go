package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
