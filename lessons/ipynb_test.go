package lessons_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
	"github.com/vsh-rdma/vsh/lessons"
)

// nbCell is a notebook cell as the tests read it back.
type nbCell struct {
	CellType       string          `json:"cell_type"`
	ID             string          `json:"id"`
	ExecutionCount json.RawMessage `json:"execution_count"`
	Outputs        []any           `json:"outputs"`
	Metadata       struct {
		VSH *struct {
			Role string `json:"role"`
			Step int    `json:"step"`
		} `json:"vsh"`
	} `json:"metadata"`
	Source []string `json:"source"`
}

func (c nbCell) text() string { return strings.Join(c.Source, "") }

type nbFile struct {
	Cells    []nbCell `json:"cells"`
	Metadata struct {
		Kernelspec map[string]string `json:"kernelspec"`
	} `json:"metadata"`
	Nbformat      int `json:"nbformat"`
	NbformatMinor int `json:"nbformat_minor"`
}

func ExampleExportNotebook() {
	l, err := lessons.Parse("two-steps.md", []byte("---\nid: two-steps\ntitle: Two steps\nlevel: beginner\nminutes: 2\n---\n\n"+
		"A lesson in two steps.\n\n## Open\n\nThe tutor opens a device.\n\n```vsh auto\nopen_device A\n```\n\n"+
		"## A PD\n\nNow you.\n\n```vsh\n# the PD of ctx0\nalloc_pd ctx0\n```\ngoal: Allocate a PD on ctx0.\nexpect: handles contains pd0\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	data, err := lessons.ExportNotebook(l, l.ID, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	var nb nbFile
	if err := json.Unmarshal(data, &nb); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range nb.Cells {
		role := ""
		if v := c.Metadata.VSH; v != nil {
			role = fmt.Sprintf(" (%s of step %d)", v.Role, v.Step)
		}
		fmt.Printf("%s %s%s: %q\n", c.CellType, c.ID, role, strings.SplitN(c.text(), "\n", 2)[0])
	}
	// Output:
	// markdown intro: "# Lesson two-steps: Two steps"
	// code lesson: "%lesson two-steps"
	// markdown step-1: "## Step 1 of 2 · Open"
	// code step-1-tutor (tutor of step 1): "open_device A"
	// markdown step-2: "## Step 2 of 2 · A PD"
	// code step-2-learner (learner of step 2): ""
	// code step-2-check (check of step 2): "%check 2"
}

// rewriting reports whether the tests were asked to rewrite their golden
// files: -rewrite, datadriven's flag, the project's one name for it.
func rewriting() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

// TestExportNotebookGolden compares the notebooks of two shipped lessons,
// with and without solutions, with testdata/ipynb/ID[-solutions].ipynb.
// After a change to the export or to the lessons, regenerate them with
//
//	go test ./lessons -run TestExportNotebookGolden -rewrite
//
// and read the diff (the files open in Jupyter): only commit what you
// understand.
func TestExportNotebookGolden(t *testing.T) {
	for _, tc := range []struct {
		id        string
		solutions bool
		file      string
	}{
		{"tour", false, "tour.ipynb"},
		{"tour", true, "tour-solutions.ipynb"},
		{"rc-pingpong", false, "rc-pingpong.ipynb"},
		{"rc-pingpong", true, "rc-pingpong-solutions.ipynb"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			l, ok := lessons.Find(tc.id)
			if !ok {
				t.Fatalf("no lesson %s ships with vsh", tc.id)
			}
			got, err := lessons.ExportNotebook(l, l.ID, tc.solutions)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "ipynb", tc.file)
			if rewriting() {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; create it with go test ./lessons -run TestExportNotebookGolden -rewrite", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("ExportNotebook(%s, solutions=%v) differs from %s; go test ./lessons -run TestExportNotebookGolden -rewrite "+
					"rewrites it (read the diff). Now:\n%s", tc.id, tc.solutions, path, got)
			}
		})
	}
}

var cellIDPattern = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,64}$`)

// TestExportNotebookEveryLesson exports every shipped lesson, with and
// without solutions, and reads each notebook back: it parses, its cell
// ids are unique and well formed, every step the learner does has one
// learner cell and one check cell, no line of the lessons' prose is left
// out, the tutor's cells and (with solutions)
// the learner's hold exactly the lesson's commands, in order, and the
// bytes are the same every time.
func TestExportNotebookEveryLesson(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		for _, solutions := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/solutions=%v", l.ID, solutions), func(t *testing.T) {
				data, err := lessons.ExportNotebook(l, l.ID, solutions)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := lessons.ExportNotebook(l, l.ID, solutions)
				if !bytes.Equal(data, again) {
					t.Error("two exports of the lesson differ")
				}
				if !bytes.HasSuffix(data, []byte("}\n")) {
					t.Error("the notebook does not end with a newline")
				}
				var nb nbFile
				if err := json.Unmarshal(data, &nb); err != nil {
					t.Fatalf("the notebook is not JSON: %v", err)
				}
				checkNotebook(t, l, nb, solutions)
			})
		}
	}
}

func checkNotebook(t *testing.T, l *lessons.Lesson, nb nbFile, solutions bool) {
	t.Helper()
	if nb.Nbformat != 4 || nb.NbformatMinor != 5 || nb.Metadata.Kernelspec["name"] != "vsh" {
		t.Errorf("nbformat %d.%d, kernel %q; want 4.5 and vsh", nb.Nbformat, nb.NbformatMinor, nb.Metadata.Kernelspec["name"])
	}
	if len(nb.Cells) < 2 || nb.Cells[1].text() != "%lesson "+l.ID {
		t.Fatalf("the first code cell is not %%lesson %s", l.ID)
	}
	ids := map[string]bool{}
	learner := map[int]int{}
	check := map[int]int{}
	var commands []string    // the tutor's and, with solutions, the learner's
	asked, questions := 0, 0 // predictions the notebook asks; the lesson's
	for _, st := range l.Steps {
		if st.Cell != nil && st.Cell.Predict != nil {
			questions++
		}
	}
	defer func() {
		if asked != questions {
			t.Errorf("the notebook asks %d predictions; the lesson has %d", asked, questions)
		}
	}()
	for _, c := range nb.Cells {
		if !cellIDPattern.MatchString(c.ID) || ids[c.ID] {
			t.Errorf("cell id %q is repeated or not 1-64 of [a-zA-Z0-9-_]", c.ID)
		}
		ids[c.ID] = true
		for i, s := range c.Source {
			if last := i == len(c.Source)-1; strings.HasSuffix(s, "\n") == last || strings.Contains(strings.TrimSuffix(s, "\n"), "\n") {
				t.Errorf("cell %s: source line %d %q: each line but the last ends in one newline", c.ID, i, s)
			}
		}
		switch c.CellType {
		case "markdown":
			if c.ExecutionCount != nil || c.Outputs != nil || c.Metadata.VSH != nil {
				t.Errorf("markdown cell %s has a code cell's fields", c.ID)
			}
			if strings.Contains(c.text(), "**Predict first:**") {
				asked++
			}
			continue
		case "code":
			if string(c.ExecutionCount) != "null" || c.Outputs == nil || len(c.Outputs) != 0 {
				t.Errorf("code cell %s: execution_count %s, outputs %v; want null and []", c.ID, c.ExecutionCount, c.Outputs)
			}
		default:
			t.Errorf("cell %s is a %q cell", c.ID, c.CellType)
		}
		v := c.Metadata.VSH
		if v == nil {
			continue
		}
		if v.Step < 1 || v.Step > len(l.Steps) {
			t.Errorf("cell %s: step %d of %d", c.ID, v.Step, len(l.Steps))
			continue
		}
		s := l.Steps[v.Step-1]
		switch v.Role {
		case lessons.NotebookTutor:
			if s.Cell == nil || !s.Cell.Auto {
				t.Errorf("cell %s is the tutor's, but step %d has no ```vsh auto cell", c.ID, v.Step)
			}
			commands = append(commands, c.text())
		case lessons.NotebookLearner:
			learner[v.Step]++
			if solutions {
				commands = append(commands, c.text())
			} else if c.text() != "" {
				t.Errorf("learner cell %s holds %q; without solutions it is empty", c.ID, c.text())
			}
		case lessons.NotebookCheck:
			check[v.Step]++
			want := fmt.Sprintf("%%check %d", v.Step)
			if solutions {
				want = fmt.Sprintf("%%check --strict %d", v.Step)
			}
			if c.text() != want {
				t.Errorf("check cell %s is %q, want %q", c.ID, c.text(), want)
			}
		default:
			t.Errorf("cell %s: role %q", c.ID, v.Role)
		}
	}
	for i, s := range l.Steps {
		want := 0
		if s.Interactive() {
			want = 1
		}
		if learner[i+1] != want || check[i+1] != want {
			t.Errorf("step %d: %d learner cells and %d check cells, want %d of each", i+1, learner[i+1], check[i+1], want)
		}
		if !ids[fmt.Sprintf("step-%d", i+1)] {
			t.Errorf("step %d has no Markdown cell step-%d", i+1, i+1)
		}
	}
	var md strings.Builder
	for _, c := range nb.Cells {
		if c.CellType == "markdown" {
			md.WriteString(c.text() + "\n")
		}
	}
	for i, s := range l.Steps {
		for _, line := range strings.Split(s.Prose, "\n") {
			if line = strings.TrimSpace(line); line != "" && line != "## "+s.Section && !strings.Contains(md.String(), line) {
				t.Errorf("step %d: the notebook leaves out the line %q of its prose", i+1, line)
			}
		}
	}
	var want []string
	for _, s := range l.Steps {
		if c := s.Cell; c != nil && (c.Auto || solutions) {
			for _, cmd := range c.Commands {
				want = append(want, cmd.Text)
			}
		}
	}
	if got := strings.Split(strings.Join(commands, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the notebook's commands differ from the lesson's:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExportNotebookRef checks how %lesson names a lesson file: as given,
// quoted as vsh's command line reads words where it must be.
func TestExportNotebookRef(t *testing.T) {
	l, _ := lessons.Find("tour")
	for _, tc := range []struct{ ref, want string }{
		{"tour", "%lesson tour"},
		{"course/first-qp.md", "%lesson course/first-qp.md"},
		{"my lessons/a.md", "%lesson 'my lessons/a.md'"},
		{"it's/a.md", `%lesson "it's/a.md"`},
		{`a "b"\c.md`, `%lesson 'a "b"\c.md'`},
	} {
		data, err := lessons.ExportNotebook(l, tc.ref, false)
		if err != nil {
			t.Fatalf("ExportNotebook(tour, %q): %v", tc.ref, err)
		}
		var nb nbFile
		if err := json.Unmarshal(data, &nb); err != nil {
			t.Fatal(err)
		}
		if got := nb.Cells[1].text(); got != tc.want {
			t.Errorf("ExportNotebook(tour, %q): %s, want %s", tc.ref, got, tc.want)
		}
	}
	for _, ref := range []string{"", " ", "a\nb.md"} {
		if _, err := lessons.ExportNotebook(l, ref, false); err == nil {
			t.Errorf("ExportNotebook(tour, %q) = nil error, want one", ref)
		}
	}
}

// validateScript validates each notebook named on its command line with
// nbformat, then checks that nbformat writes it back byte for byte: the
// export is laid out as Jupyter saves a notebook.
const validateScript = `
import sys, nbformat
for f in sys.argv[1:]:
    with open(f, encoding="utf-8") as fp:
        text = fp.read()
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    again = nbformat.writes(nb)
    if not again.endswith("\n"):
        again += "\n"
    if again != text:
        sys.exit(f + ": nbformat writes it back differently")
`

// TestExportNotebookValidates validates every shipped lesson's notebook,
// with and without solutions, against nbformat's own schema, where
// /usr/bin/python3 has the nbformat module (Debian: python3-nbformat).
func TestExportNotebookValidates(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		toolcheck.Missing(t, python+" not found (install: apt-get install -y python3-nbformat)")
	}
	if out, err := exec.Command(python, "-c", "import nbformat").CombinedOutput(); err != nil {
		toolcheck.Missing(t, fmt.Sprintf("%s has no nbformat module (install: apt-get install -y python3-nbformat): %v %s", python, err, out))
	}
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{"-c", validateScript}
	for _, l := range all {
		for _, solutions := range []bool{false, true} {
			data, err := lessons.ExportNotebook(l, l.ID, solutions)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(dir, fmt.Sprintf("%s-%v.ipynb", l.ID, solutions))
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, name)
		}
	}
	if out, err := exec.Command(python, args...).CombinedOutput(); err != nil {
		t.Fatalf("nbformat refuses an exported notebook: %v\n%s", err, out)
	}
}
