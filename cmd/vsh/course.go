package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/vsh-rdma/vsh/lessons"
)

// loadCatalog reads the course folders of --lessons and adds their
// lessons to the shipped ones.
func loadCatalog(dirs []string) (*lessons.Catalog, error) {
	var courses []*lessons.Course
	for _, d := range dirs {
		c, err := lessons.LoadCourse(d)
		if err != nil {
			return nil, courseError(d, err)
		}
		courses = append(courses, c)
	}
	return lessons.NewCatalog(courses...)
}

// courseError says what is wrong with a course folder, each problem on a
// line, and how to see them all.
func courseError(dir string, err error) error {
	var es lessons.Errors
	if errors.As(err, &es) {
		return fmt.Errorf("course %s has %d problem%s (vsh lesson check %s checks it all):\n%v", dir, len(es), plural(len(es)), dir, err)
	}
	return err
}

// isDir reports whether path names a folder (a course).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// progress opens the learner's progress file, once.
func (r *lessonRun) progress() (*lessons.Progress, error) {
	if r.solved != nil {
		return r.solved, nil
	}
	path, err := lessons.ProgressPath()
	if err != nil {
		return nil, err
	}
	p, err := lessons.OpenProgress(path)
	if err != nil {
		return nil, err
	}
	r.solved = p
	return p, nil
}

// course loads course folder dir and adds it to the catalog, for the
// sessions of this run.
func (r *lessonRun) course(dir string) (*lessons.Course, error) {
	for _, c := range r.catalog.Courses() {
		if abs, err := absDir(dir); err == nil && abs == c.Dir {
			return c, nil
		}
	}
	c, err := lessons.LoadCourse(dir)
	if err != nil {
		return nil, courseError(dir, err)
	}
	cat, err := lessons.NewCatalog(append(r.catalog.Courses(), c)...)
	if err != nil {
		return nil, err
	}
	r.catalog = cat
	return c, nil
}

// courseAndProgress loads course folder dir and the learner's progress;
// without progress it says why and, when need, fails. status is vsh's exit
// status on a failure (2: the course or the state folder is wrong, not a
// learner's work), else 0.
func (r *lessonRun) courseAndProgress(dir string, need bool) (*lessons.Course, *lessons.Progress, int) {
	c, err := r.course(dir)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return nil, nil, 2
	}
	prog, err := r.progress()
	switch {
	case err != nil && need:
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return nil, nil, 2
	case err != nil:
		fmt.Fprintf(r.stderr, "vsh: %v (the list shows no progress)\n", err)
	}
	return c, prog, 0
}

// listCourse is vsh lesson list DIR: the course's lessons in order.
func (r *lessonRun) listCourse(dir string) int {
	c, prog, status := r.courseAndProgress(dir, false)
	if status != 0 {
		return status
	}
	p, err := r.open()
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	defer p.Close()
	title := c.Title
	if c.Author != "" {
		title += ", by " + c.Author
	}
	fmt.Fprintf(r.stdout, "course %s (%s)\n", title, dir)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tlesson\ttitle\tsteps\tneeds\trequires\t")
	solved := 0
	for i, l := range c.Lessons {
		needs := strings.Join(l.Needs, ", ")
		for _, sn := range lessons.SectionNeeds(l) {
			needs = strings.TrimPrefix(needs+"; "+strings.Join(sn.Needs, ", ")+" for a section", "; ")
		}
		var notes []string
		if prog != nil && prog.Solved(l) {
			solved++
			notes = append(notes, "solved")
		}
		if miss := lessons.Missing(l, p); len(miss) > 0 {
			notes = append(notes, "skipped here: needs "+strings.Join(miss, "; "))
		}
		if err := lessons.CheckVersion(l, versionString()); err != nil {
			notes = append(notes, "needs vsh "+l.Requires.Text)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d (%d yours)\t%s\t%s\t%s\n", i+1, l.ID, l.Title, len(l.Steps), l.Interactive(),
			dash(needs), dash(strings.Join(c.Prereqs[l.ID], ", ")), strings.Join(notes, "; "))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(r.stdout, strings.TrimRight(line, " \n")+strings.Repeat("\n", strings.Count(line, "\n")))
	}
	fmt.Fprintf(r.stdout, "%d lesson%s, %d solved. vsh lesson %s takes the next; vsh lesson play %s plays them all.\n",
		len(c.Lessons), plural(len(c.Lessons)), solved, dir, dir)
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// expand turns lesson play's words into lessons, in order: all, course
// folders (their lessons in order), ids and files.
func (r *lessonRun) expand(words []string) ([]*lessons.Lesson, error) {
	var out []*lessons.Lesson
	for _, w := range words {
		switch {
		case w == "all":
			all, err := r.catalog.All()
			if err != nil {
				return nil, err
			}
			out = append(out, all...)
		case isDir(w):
			c, err := r.course(w)
			if err != nil {
				return nil, err
			}
			out = append(out, c.Lessons...)
		default:
			l, err := r.catalog.Load(w, nil)
			if err != nil {
				return nil, err
			}
			out = append(out, l)
		}
	}
	for _, l := range out {
		if err := lessons.CheckVersion(l, versionString()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nextInCourse is vsh lesson DIR: the course's first lesson the learner
// has not solved, taken as vsh lesson ID takes one.
func (r *lessonRun) nextInCourse(dir string) int {
	if r.report != "" && !r.terminal {
		// Which lesson is next depends on the progress of whoever runs
		// this: grading takes a lesson by its file.
		fmt.Fprintf(r.stderr, "vsh: to grade, name the lesson: vsh lesson %s/ID.md --report r.json < student.vsh "+
			"(vsh lesson DIR takes the next lesson of the progress kept on this machine, which is not the student's)\n", strings.TrimRight(dir, "/"))
		return 2
	}
	c, prog, status := r.courseAndProgress(dir, true)
	if status != 0 {
		return status
	}
	l := prog.Next(c)
	if l == nil {
		fmt.Fprintf(r.stdout, "You have solved every lesson of course %s (%d). vsh lesson list %s lists them; vsh lesson ID takes one again "+
			"(with --lessons %s); removing %s forgets your progress.\n", c.Title, len(c.Lessons), dir, dir, prog.Path())
		return 0
	}
	done := 0
	for _, x := range c.Lessons {
		if prog.Solved(x) {
			done++
		}
	}
	fmt.Fprintf(r.stdout, "» course %s: lesson %d of %d, %s (%d solved)\n", c.Title, indexOf(c.Lessons, l)+1, len(c.Lessons), l.ID, done)
	if r.report != "" {
		// --report names a folder: one report per lesson, by its id.
		if err := os.MkdirAll(r.report, 0o755); err != nil {
			fmt.Fprintf(r.stderr, "vsh: --report: a course's reports go into a folder: %v\n", err)
			return 2
		}
		r.report = filepath.Join(r.report, l.ID+".json")
	}
	return r.interactive(l.ID)
}

func indexOf(list []*lessons.Lesson, l *lessons.Lesson) int {
	for i, x := range list {
		if x == l {
			return i
		}
	}
	return -1
}

// checkCourse is vsh lesson check DIR: every lesson of the course, and
// the course itself.
func (r *lessonRun) checkCourse(dir string, o lessons.CheckOptions) int {
	passed, err := lessons.CheckCourse(dir, o)
	var es lessons.Errors
	switch {
	case errors.As(err, &es):
		for _, e := range es {
			fmt.Fprintln(r.stderr, e)
		}
		files := map[string]bool{}
		for _, e := range es {
			files[e.Name] = true
		}
		fmt.Fprintf(r.stderr, "%s: %d problem%s in %d file%s; %d lesson%s passed\n", dir, len(es), plural(len(es)),
			len(files), plural(len(files)), len(passed), plural(len(passed)))
		return 1
	case err != nil:
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	for _, l := range passed {
		fmt.Fprintf(r.stdout, "%s: ok: lesson %s, %d step%s (%d for the learner)\n", l.Name, l.ID, len(l.Steps), plural(len(l.Steps)), l.Interactive())
	}
	fmt.Fprintf(r.stdout, "%s: ok: %d lesson%s, each played on the simulator with every expectation met\n", dir, len(passed), plural(len(passed)))
	return 0
}

func absDir(dir string) (string, error) { return filepath.Abs(dir) }

// courseProgress opens the learner's progress file where --lessons added
// courses, saying on stderr when it cannot (progress is then not kept).
func courseProgress(c *lessons.Catalog, stderr io.Writer) *lessons.Progress {
	if len(c.Courses()) == 0 {
		return nil
	}
	path, err := lessons.ProgressPath()
	if err == nil {
		var p *lessons.Progress
		if p, err = lessons.OpenProgress(path); err == nil {
			return p
		}
	}
	fmt.Fprintf(stderr, "vsh: %v; the lessons you solve are not recorded\n", err)
	return nil
}
