package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// allowed lists the functions whose bodies may be longer than MaxLines, by
// "path:name" (name as in a stack trace: commandTable, (*qp).respSteps),
// each with why. An entry whose function is no longer long fails the test,
// so that the list cannot rot.
var allowed = map[string]string{
	// Transcriptions of one rxe function: split they would no longer read
	// line by line against it.
	"verbs/sim/responder.go:(*qp).respSteps": "transcribes rxe_resp.c rxe_responder's state machine",
}

// TestFunctionLength parses every non-test Go file outside third_party/ and
// testdata/ and fails on each function (declared or literal) whose body,
// the lines between its braces, is longer than MaxLines.
func TestFunctionLength(t *testing.T) {
	long, err := longFunctions(repoRoot(t), MaxLines)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range long {
		if _, ok := allowed[f.key]; ok {
			seen[f.key] = true
			continue
		}
		t.Errorf("%s:%d: %s has a %d-line body; split it to at most %d lines by concern (or, if it transcribes one rxe function, allow it in codeshape_test.go naming that function)",
			f.path, f.line, f.name, f.lines, MaxLines)
	}
	for key := range allowed {
		if !seen[key] {
			t.Errorf("%s is allowed a long body but is no longer longer than %d lines (or is gone): remove it from allowed", key, MaxLines)
		}
	}
}

// TestFunctionLengthFails checks that the check can fail: at a limit of 60
// lines it finds long functions that are not in the allow-list.
func TestFunctionLengthFails(t *testing.T) {
	long, err := longFunctions(repoRoot(t), 60)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range long {
		if _, ok := allowed[f.key]; !ok {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no function outside the allow-list is longer than 60 lines; the check finds nothing")
	}
}

// longFunc is a function whose body is longer than the limit.
type longFunc struct {
	path  string // slash-separated, from the repository's root
	line  int    // of the func keyword
	name  string // commandTable, (*qp).respSteps, or "func literal"
	key   string // path:name, the allow-list's key
	lines int    // of the body, between its braces
}

// longFunctions returns the functions under root whose bodies are longer
// than limit lines, in file order.
func longFunctions(root string, limit int) ([]longFunc, error) {
	fset := token.NewFileSet()
	var out []longFunc
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "third_party" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "func literal"
			switch x := n.(type) {
			case *ast.FuncDecl:
				body, name = x.Body, funcName(x)
			case *ast.FuncLit:
				body = x.Body
			}
			if body == nil {
				return true
			}
			lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1
			if lines > limit {
				out = append(out, longFunc{path: rel, line: fset.Position(n.Pos()).Line, name: name,
					key: rel + ":" + name, lines: lines})
			}
			return true
		})
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// funcName names a declared function as a stack trace does: f, T.m or (*T).m.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "(*" + recvName(x.X) + ")"
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr: // T[P]
		return recvName(x.X)
	case *ast.IndexListExpr: // T[P, Q]
		return recvName(x.X)
	case *ast.ParenExpr:
		return recvName(x.X)
	}
	return fmt.Sprintf("%T", e)
}

// repoRoot returns the directory of go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
