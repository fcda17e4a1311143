package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/shell/kernel"
)

const kernelUsage = `usage: vsh [flags] kernel --connection-file FILE    run as a Jupyter kernel (Jupyter starts it)
       vsh kernel install [--user | --sys-prefix | --prefix DIR] [--name NAME]
                                                     install the kernel spec, so that Jupyter lists vsh

kernel install writes kernel.json and the logos to:
  --user        $JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter (kernels/vsh)
  --sys-prefix  python3's sys.prefix/share/jupyter (a virtualenv's, or /usr)
  --prefix DIR  DIR/share/jupyter
  (none)        /usr/local/share/jupyter, for every user of the machine
--name NAME names the kernel (default vsh): install several, each with its own flags.
The kernel runs this vsh, with the flags given before kernel (--backend, --devices, --seed, --sim-addr, --sim-xrc).
jupyter kernelspec list then shows vsh.
`

// kernelArgs are the flags of vsh given before "kernel": the sessions'.
type kernelArgs struct {
	backend string
	devices int
	seed    int64
	simAddr string
	xrc     bool // --sim-xrc
	catalog *lessons.Catalog
}

// kernelCommand is vsh [flags] kernel ...: the courses loaded, runKernel.
func kernelCommand(args []string, ka kernelArgs, courseDirs []string, stdout, stderr io.Writer) int {
	catalog, err := loadCatalog(courseDirs)
	if err != nil {
		fmt.Fprintf(stderr, "vsh: --lessons: %v\n", err)
		return 2
	}
	ka.catalog = catalog
	return runKernel(args, ka, stdout, stderr)
}

// runKernel is vsh kernel ...: serve one Jupyter kernel, or install the
// kernel spec.
func runKernel(args []string, ka kernelArgs, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "install" {
		return installKernel(args[1:], ka, stdout, stderr)
	}
	fs := flag.NewFlagSet("vsh kernel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conn := fs.String("connection-file", "", "")
	fs.StringVar(conn, "f", "", "")
	help := fs.Bool("help", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (*conn == "" && !*help) {
		why := "it needs --connection-file FILE (Jupyter gives it)"
		if err != nil {
			why = err.Error()
		} else if fs.NArg() > 0 {
			why = fmt.Sprintf("unexpected %q", fs.Arg(0))
		}
		fmt.Fprintf(stderr, "vsh kernel: %s\n\n%s", why, kernelUsage)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, kernelUsage)
		return 0
	}
	ci, err := kernel.ReadConnectionFile(*conn)
	if err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n", err)
		return 1
	}
	k, err := kernel.New(kernel.Config{Conn: ci, Open: ka.open, Version: versionString(), Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n", err)
		return 1
	}
	// Jupyter interrupts a kernel with SIGINT (interrupt_mode "signal");
	// SIGTERM and SIGHUP end it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGINT {
				k.Interrupt()
				continue
			}
			cancel()
			return
		}
	}()
	if err := k.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "vsh: %v\n", err)
		return 1
	}
	return 0
}

// open starts a kernel's session: plain output, no width, the backend and
// seed given before kernel unless %backend or %seed changed them.
func (ka kernelArgs) open(s kernel.Session) (*shell.Shell, error) {
	backend, seed := ka.backend, ka.seed
	if s.Backend != "" {
		backend = s.Backend
	}
	if s.HasSeed {
		seed = s.Seed
	}
	var why bytes.Buffer
	open, desc, status := openBackend(backend, ka.devices, seed, ka.simAddr, ka.xrc && backend == "sim", &why)
	if status != 0 {
		return nil, errors.New(strings.TrimSpace(strings.TrimPrefix(why.String(), "vsh: ")))
	}
	return shell.New(shell.Options{Open: open, Shadow: shadowSim(seed), Plain: true, Backend: desc,
		Version: versionString(), Lessons: ka.catalog})
}

// installKernel writes the kernel spec: kernel.json, whose argv runs this
// vsh as a kernel, and the logos.
func installKernel(args []string, ka kernelArgs, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vsh kernel install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	user := fs.Bool("user", false, "")
	sysPrefix := fs.Bool("sys-prefix", false, "")
	prefix := fs.String("prefix", "", "")
	name := fs.String("name", "vsh", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || !kernelName.MatchString(*name) {
		why := fmt.Sprint(err)
		switch {
		case err != nil:
		case fs.NArg() > 0:
			why = fmt.Sprintf("unexpected %q", fs.Arg(0))
		default:
			why = fmt.Sprintf("--name %q: a kernel's name starts with a letter or digit, then letters, digits, '.', '_' and '-'", *name)
		}
		fmt.Fprintf(stderr, "vsh kernel install: %s\n\n%s", why, kernelUsage)
		return 2
	}
	n := 0
	for _, b := range []bool{*user, *sysPrefix, *prefix != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintf(stderr, "vsh kernel install: --user, --sys-prefix and --prefix DIR are three places; give one\n")
		return 2
	}
	data, err := jupyterDataDir(*user, *sysPrefix, *prefix)
	if err != nil {
		fmt.Fprintf(stderr, "vsh kernel install: %v\n", err)
		return 1
	}
	dir := filepath.Join(data, "kernels", *name)
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vsh kernel install: where this vsh is: %v\n", err)
		return 1
	}
	argv := []string{exe}
	if ka.backend != "sim" {
		argv = append(argv, "--backend", ka.backend)
	}
	if ka.devices != 2 {
		argv = append(argv, "--devices", fmt.Sprint(ka.devices))
	}
	if ka.seed != 1 {
		argv = append(argv, "--seed", fmt.Sprint(ka.seed))
	}
	if ka.simAddr != "" {
		argv = append(argv, "--sim-addr", ka.simAddr)
	}
	if ka.xrc {
		argv = append(argv, "--sim-xrc")
	}
	argv = append(argv, "kernel", "--connection-file", "{connection_file}")
	display := "vsh"
	if *name != "vsh" {
		display = "vsh (" + *name + ")"
	}
	spec, _ := json.MarshalIndent(map[string]any{
		"argv": argv, "display_name": display, "language": "vsh", "interrupt_mode": "signal",
		"metadata": map[string]any{"debugger": false},
	}, "", " ")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "vsh kernel install: %v\n", err)
		return 1
	}
	files := map[string][]byte{"kernel.json": append(spec, '\n'), "logo-svg.svg": []byte(logoSVG), "logo-64x64.png": logoPNG(64), "logo-32x32.png": logoPNG(32)}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			fmt.Fprintf(stderr, "vsh kernel install: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "installed the vsh kernel spec in %s\n", dir)
	return 0
}

// kernelName is what Jupyter takes as a kernel's name.
var kernelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// jupyterDataDir is the Jupyter data directory the kernel spec goes in.
func jupyterDataDir(user, sysPrefix bool, prefix string) (string, error) {
	switch {
	case prefix != "":
		return filepath.Join(prefix, "share", "jupyter"), nil
	case sysPrefix:
		py, err := exec.LookPath("python3") // a virtualenv's comes first on PATH
		if err != nil {
			py = "/usr/bin/python3"
		}
		out, err := exec.Command(py, "-c", "import sys; print(sys.prefix)").Output()
		if err != nil {
			return "", fmt.Errorf("--sys-prefix asks python3 for its sys.prefix, and it could not say: %v (--prefix DIR names one)", err)
		}
		return filepath.Join(strings.TrimSpace(string(out)), "share", "jupyter"), nil
	case user:
		if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
			return d, nil
		}
		if d := os.Getenv("XDG_DATA_HOME"); d != "" {
			return filepath.Join(d, "jupyter"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("--user: no home directory (%v); --prefix DIR names a place", err)
		}
		return filepath.Join(home, ".local", "share", "jupyter"), nil
	}
	return "/usr/local/share/jupyter", nil
}

// logoSVG is the kernel's logo: a queue pair's two queues.
const logoSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="10" fill="#1f5fa8"/>
<rect x="12" y="16" width="40" height="10" rx="3" fill="#ffffff"/>
<rect x="12" y="38" width="40" height="10" rx="3" fill="#ffffff"/>
<path d="M20 30 L44 30 L40 26 M44 34 L20 34 L24 38" stroke="#ffd23f" stroke-width="3" fill="none"/>
</svg>
`

// logoPNG draws the logo's shapes at size×size pixels.
func logoPNG(size int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	blue, white := color.RGBA{0x1f, 0x5f, 0xa8, 0xff}, color.RGBA{0xff, 0xff, 0xff, 0xff}
	s := func(v int) int { return v * size / 64 }
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			c := blue
			if x >= s(12) && x < s(52) && ((y >= s(16) && y < s(26)) || (y >= s(38) && y < s(48))) {
				c = white
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}
