package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vsh-rdma/vsh/internal/safefile"
	"github.com/vsh-rdma/vsh/lessons"
)

// exportFlags are the flags of vsh lesson export. They are parsed on a
// flag set of their own, since its -f (--force) is not vsh's -f FILE.
type exportFlags struct {
	ipynb     string // the notebook to write; "-" for stdout
	md        string // the lesson's source to write; "-" for stdout
	solutions bool
	force     bool // overwrite ipynb
	help      bool
}

// parseExportArgs reads the words and flags after "lesson export". It
// takes --lessons DIR too, as vsh does before "lesson": addCourse adds it.
func parseExportArgs(args []string, addCourse func(string) error) ([]string, exportFlags, error) {
	var e exportFlags
	fs := flag.NewFlagSet("vsh lesson export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// once takes a flag's file name, given once.
	once := func(to *string, flag, what string) func(string) error {
		return func(v string) error {
			if *to != "" {
				return fmt.Errorf("--%s is given twice (%s and %s): lesson export writes one %s", flag, *to, v, what)
			}
			if v == "" {
				return fmt.Errorf("--%s needs the %s's file name (- for standard output)", flag, what)
			}
			*to = v
			return nil
		}
	}
	fs.Func("ipynb", "", once(&e.ipynb, "ipynb", "notebook"))
	fs.Func("md", "", once(&e.md, "md", "file"))
	fs.BoolVar(&e.solutions, "solutions", false, "")
	fs.BoolVar(&e.force, "f", false, "")
	fs.BoolVar(&e.force, "force", false, "")
	fs.BoolVar(&e.help, "help", false, "")
	fs.BoolVar(&e.help, "h", false, "")
	fs.Func("lessons", "", addCourse)
	words, err := parseWords(fs, args)
	if err != nil {
		return nil, e, fmt.Errorf("lesson export: %v (its flags are --ipynb OUT, --md OUT, --solutions, -f and --lessons DIR; "+
			"give vsh's other flags before lesson)", err)
	}
	return append([]string{"export"}, words...), e, nil
}

// exportNotebook is vsh lesson export ID|FILE --ipynb OUT: it writes the
// lesson as a Jupyter notebook (lessons.ExportNotebook) and says so on
// stderr. It returns 2 for a command line that is wrong, 1 when the
// lesson cannot be read or OUT cannot be written.
func (r *lessonRun) exportNotebook(words []string) int {
	e := r.export
	switch {
	case len(words) == 0:
		fmt.Fprint(r.stderr, "vsh: lesson export needs a lesson: vsh lesson export ID|FILE --ipynb OUT.ipynb\n\n"+lessonUsage)
		return 2
	case len(words) > 1:
		fmt.Fprintf(r.stderr, "vsh: lesson export writes one lesson's notebook, not %q and %q; run it once for each\n\n%s", words[0], words[1], lessonUsage)
		return 2
	case words[0] == "all" || isDir(words[0]):
		fmt.Fprintf(r.stderr, "vsh: lesson export writes one lesson's notebook, and %s is not one lesson; give a lesson's id or file "+
			"(vsh lesson list DIR lists a course's)\n", words[0])
		return 2
	case e.ipynb != "" && e.md != "":
		fmt.Fprintf(r.stderr, "vsh: lesson export writes one file: --ipynb %s or --md %s, not both; run it once for each\n", e.ipynb, e.md)
		return 2
	case e.md != "" && e.solutions:
		fmt.Fprintf(r.stderr, "vsh: lesson export: --solutions is for --ipynb (the lesson's source holds its commands already)\n")
		return 2
	case e.md != "":
		return r.exportSource(words[0])
	case e.ipynb == "":
		fmt.Fprintf(r.stderr, "vsh: lesson export needs --ipynb OUT: the notebook to write, e.g. --ipynb %s.ipynb (--ipynb - writes it to standard output); or --md OUT for the lesson's source\n\n%s",
			strings.TrimSuffix(filepath.Base(words[0]), ".md"), lessonUsage)
		return 2
	}
	list, err := r.expand(words)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	l := list[0]
	data, err := lessons.ExportNotebook(l, exportRef(l, words[0], e.ipynb), e.solutions)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	var nb struct{ Cells []json.RawMessage }
	if err := json.Unmarshal(data, &nb); err != nil {
		fmt.Fprintf(r.stderr, "vsh: lesson export made a notebook that is not JSON (a bug in vsh): %v\n", err)
		return 1
	}
	name := e.ipynb
	if name == "-" {
		name = "standard output"
		if _, err := r.stdout.Write(data); err != nil {
			fmt.Fprintf(r.stderr, "vsh: lesson export: writing to standard output: %v\n", err)
			return 1
		}
	} else if err := writeNotebook(e.ipynb, l, data, e.force); err != nil {
		fmt.Fprintf(r.stderr, "vsh: lesson export: %v\n", err)
		return 1
	}
	fmt.Fprintf(r.stderr, "wrote %s: %d cells (lesson %s)\n", name, len(nb.Cells), l.ID)
	return 0
}

// exportSource is vsh lesson export ID|FILE --md OUT: the lesson's source,
// a shipped lesson's as vsh holds it, for an instructor to copy and adapt.
func (r *lessonRun) exportSource(word string) int {
	list, err := r.expand([]string{word})
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	l := list[0]
	var data []byte
	if s, ok := lessons.Find(l.ID); ok && s == l {
		data, err = lessons.Source(l.Name)
	} else {
		data, err = os.ReadFile(l.Name)
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: lesson export: reading lesson %s: %v\n", l.ID, err)
		return 1
	}
	name := r.export.md
	if name == "-" {
		name = "standard output"
		if _, err := r.stdout.Write(data); err != nil {
			fmt.Fprintf(r.stderr, "vsh: lesson export: writing to standard output: %v\n", err)
			return 1
		}
	} else if err := writeExport(r.export.md, "--md", ".md", "lesson", l, data, r.export.force); err != nil {
		fmt.Fprintf(r.stderr, "vsh: lesson export: %v\n", err)
		return 1
	}
	fmt.Fprintf(r.stderr, "wrote %s: the source of lesson %s; give it an id: of its own (and a title) before a course takes it: a copy keeping a shipped lesson's id is refused\n", name, l.ID)
	return 0
}

// exportRef is how the notebook's %lesson line names lesson l, given on
// the command line as word: a shipped lesson by its id; a lesson file by
// the path given; a course lesson (vsh --lessons DIR) given by its id by
// its file, which the kernel finds without the --lessons.
func exportRef(l *lessons.Lesson, word, out string) string {
	if lessons.Ref(l) == l.ID {
		return l.ID
	}
	file := word
	if word == l.ID {
		file = l.Name
	}
	// A kernel runs in its notebook's folder: name the lesson's file from
	// there, or whole when the notebook goes to standard output.
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	if out == "-" {
		return abs
	}
	dir, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(dir, abs); err == nil {
		return rel
	}
	return abs
}

// writeNotebook writes data to path whole or not at all: a temporary file
// in the same folder, renamed over path. An existing path is replaced
// only with force, and never when it is a folder, not a regular file, or
// the lesson's own file.
func writeNotebook(path string, l *lessons.Lesson, data []byte, force bool) error {
	return writeExport(path, "--ipynb", ".ipynb", "notebook", l, data, force)
}

// writeExport writes what lesson export made of lesson l to path, given
// as flag (--ipynb, --md), a file named ext by default: the noun's.
func writeExport(path, flag, ext, noun string, l *lessons.Lesson, data []byte, force bool) error {
	if st, err := os.Stat(path); err == nil {
		example := l.ID + ext
		switch ls, lerr := os.Stat(l.Name); {
		case st.IsDir():
			return fmt.Errorf("%s is a folder; give the %s's file name, e.g. %s %s", path, noun, flag, filepath.Join(path, example))
		case lerr == nil && os.SameFile(st, ls):
			return fmt.Errorf("%s is the lesson's own file; give the %s another name, e.g. %s %s", path, noun, flag, example)
		case !st.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file; give the %s's file name, e.g. %s %s", path, noun, flag, example)
		case !force:
			return fmt.Errorf("%s exists; add -f to overwrite it, or give another name", path)
		}
	}
	if err := safefile.WriteAtomic(path, data, 0o644); err != nil { // a notebook is handed out: readable
		return fmt.Errorf("cannot write %s: %v; give a file in a folder you can write to", path, err)
	}
	return nil
}
