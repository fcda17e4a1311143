package sim

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The simulator's core is every non-test file of the package but these: the
// API boundary, which holds the one lock, and the UDP carrier, which has
// goroutines, sockets and the wall clock.
var boundary = map[string]string{
	"api.go":                   "the lock at the API boundary",
	"udplink.go":               "the UDP carrier: goroutines, sockets, wall clock",
	"udplink_sockopt_linux.go": "the UDP carrier's socket options",
	"udplink_sockopt_other.go": "the UDP carrier's socket options",
	"udplink_io_linux.go":      "the UDP carrier's batched socket I/O",
	"udplink_io_other.go":      "the UDP carrier's socket I/O",
	"udplink_io_windows.go":    "the UDP carrier's socket I/O",
}

// impureImports are packages the core must not import.
var impureImports = map[string]string{
	"sync":        "locking belongs in api.go",
	"sync/atomic": "locking belongs in api.go",
	"net":         "sockets belong to a carrier (udplink.go)",
	"os":          "the core does no I/O",
	"io/fs":       "the core does no I/O",
}

// wallClock are the time package's functions that read or wait for the
// wall clock; the core's time is its clock, moved by a carrier.
var wallClock = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

// impurities lists what file (named name) does that the simulator's core
// must not: lock, start goroutines, use channels, import I/O, read the wall
// clock, branch on which carrier it has, or set the clock's time outside
// the clock. Files in boundary may lock, start goroutines and do I/O, but
// they too leave the clock to its methods.
func impurities(fset *token.FileSet, name string, file *ast.File) []string {
	var out []string
	bad := func(n ast.Node, format string, args ...any) {
		p := fset.Position(n.Pos())
		out = append(out, name+":"+strconv.Itoa(p.Line)+": "+fmt.Sprintf(format, args...))
	}
	_, edge := boundary[name]
	if !edge {
		for _, im := range file.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if why, ok := impureImports[path]; ok {
				bad(im, "imports %s: %s", path, why)
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.SelectorExpr); ok && x.Sel.Name == "clock" && n.Sel.Name == "t" && name != "carrier.go" {
				bad(n, "touches the clock's time directly: use clock.now and clock.advance")
			}
			if edge {
				return true
			}
			if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name == "time" && wallClock[n.Sel.Name] {
				bad(n, "reads the wall clock (time.%s): time comes from the carrier", n.Sel.Name)
			}
		case *ast.CallExpr:
			if s, ok := n.Fun.(*ast.SelectorExpr); ok && !edge {
				switch s.Sel.Name {
				case "Lock", "Unlock", "RLock", "RUnlock", "TryLock":
					bad(n, "calls %s: the core runs under api.go's lock and never locks", s.Sel.Name)
				}
			}
		case *ast.GoStmt:
			if !edge {
				bad(n, "starts a goroutine: the core runs on its caller's")
			}
		case *ast.SendStmt, *ast.SelectStmt, *ast.ChanType:
			if !edge {
				bad(n, "uses a channel: the core does not wait")
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW && !edge {
				bad(n, "receives from a channel: the core does not wait")
			}
		case *ast.BinaryExpr:
			if !edge && (isCarrier(n.X) || isCarrier(n.Y)) {
				bad(n, "compares the carrier: call its methods instead of branching on which it is")
			}
		case *ast.TypeAssertExpr:
			if !edge && isCarrier(n.X) {
				bad(n, "asserts the carrier's type: call its methods instead of branching on which it is")
			}
		case *ast.TypeSwitchStmt:
			if !edge {
				ast.Inspect(n.Assign, func(m ast.Node) bool {
					if ta, ok := m.(*ast.TypeAssertExpr); ok && isCarrier(ta.X) {
						bad(n, "switches on the carrier's type: call its methods instead")
					}
					return true
				})
			}
		}
		return true
	})
	return out
}

// isCarrier reports whether e reads a field named carrier.
func isCarrier(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "carrier"
}

// TestCorePurity holds the simulator's core to what doc.go promises: no
// goroutines, no I/O, no locking outside api.go, no wall clock, no branch
// on the carrier, and a clock moved only by its methods.
func TestCorePurity(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	core := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := boundary[name]; !ok {
			core++
		}
		for _, p := range impurities(fset, name, f) {
			t.Error(p)
		}
	}
	for name := range boundary {
		if !slices.Contains(files, name) {
			t.Errorf("boundary file %s is gone: update boundary", name)
		}
	}
	if core < 20 {
		t.Errorf("only %d core files found: is the test running in verbs/sim?", core)
	}
}

// TestImpuritiesFound checks that each rule can fail.
func TestImpuritiesFound(t *testing.T) {
	tests := []struct {
		name, file, src, want string
	}{
		{"lock", "qp.go", "func (f *Fabric) x() { f.mu.Lock() }", "calls Lock"},
		{"sync", "qp.go", "import \"sync\"\nvar m sync.Mutex", "imports sync"},
		{"net", "objects.go", "import \"net\"\nvar c net.Conn", "imports net"},
		{"goroutine", "engine.go", "func x() { go x() }", "starts a goroutine"},
		{"channel", "engine.go", "func x(c chan int) { c <- 1 }", "uses a channel"},
		{"receive", "engine.go", "func x(c func() chan int) { <-c() }", "receives from a channel"},
		{"wall clock", "timer.go", "import \"time\"\nvar t = time.Now()", "reads the wall clock (time.Now)"},
		{"carrier nil", "objects.go", "func (f *Fabric) x() bool { return f.carrier != nil }", "compares the carrier"},
		{"carrier type", "net.go", "func (f *Fabric) x() { _, _ = f.carrier.(*udpLink) }", "asserts the carrier's type"},
		{"carrier switch", "net.go", "func (f *Fabric) x() { switch f.carrier.(type) {} }", "switches on the carrier's type"},
		{"clock write", "net.go", "func (f *Fabric) x() { f.clock.t = 5 }", "touches the clock's time directly"},
		{"clock write at the edge", "udplink.go", "func (l *udpLink) x() { l.f.clock.t = 5 }", "touches the clock's time directly"},
		{"edge may lock", "api.go", "func (f *Fabric) x() { f.mu.Lock() }", ""},
		{"edge may run goroutines", "udplink.go", "import \"net\"\nfunc x(c net.Conn) { go x(c) }", ""},
		{"clock may set itself", "carrier.go", "func (c *clock) x() { c.t = 5 }", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, tt.file, "package sim\n"+tt.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(impurities(fset, tt.file, f), "\n")
			if tt.want == "" {
				if got != "" {
					t.Errorf("found %q, want nothing", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("found %q, want %q", got, tt.want)
			}
		})
	}
}
