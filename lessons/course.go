package lessons

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CourseFile is the optional file of a course folder that names the
// course and orders its lessons.
const CourseFile = "course.md"

// MaxCourseLessons is the most lesson files a course folder may hold.
const MaxCourseLessons = 500

// Course is a folder of lesson files: an instructor's own lessons, taken
// in order (vsh lesson DIR), listed (vsh lesson list DIR), played or
// checked together, or added to the shell's catalog (vsh --lessons DIR).
//
// The folder's *.md files are its lessons; course.md, when there is one,
// is not a lesson but says the course's title and the lessons' order:
//
//	---
//	title: Verbs in a week
//	author: A. Teacher
//	requires: >= 0.4
//	---
//
//	Prose for the instructor; only the list counts.
//
//	- first-qp
//	- connect.md
//	- send-recv    requires: first-qp, connect
//
// Each list item names a lesson by its id or its file; requires: names the
// lessons it builds on, each listed before it. Every lesson file of the
// folder must be listed. Without course.md the lessons come in catalog
// order (their order: lines, then ids), and the title is the folder's name.
type Course struct {
	// Dir is the folder, as an absolute path: where progress is kept.
	Dir    string
	Title  string
	Author string
	// Requires is the vsh versions every lesson runs on (nil for any);
	// a lesson's own requires: line adds to it.
	Requires *Constraint
	// Lessons are in the course's order.
	Lessons []*Lesson
	// Prereqs maps a lesson's id to the ids of the lessons it builds on
	// (requires: in course.md's list).
	Prereqs map[string][]string
}

// Find returns the course's lesson with this id.
func (c *Course) Find(id string) (*Lesson, bool) {
	for _, l := range c.Lessons {
		if l.ID == id {
			return l, true
		}
	}
	return nil, false
}

// LoadCourse reads the course in folder dir: every *.md file in it (not
// in its subfolders), in order, and course.md. Every problem found is
// returned as Errors, each with its file and line: a file that does not
// parse, two lessons with one id (naming both files), an id that a lesson
// shipped with vsh has, a course.md that lists what is not there or leaves
// a lesson out.
func LoadCourse(dir string) (*Course, error) {
	c, fileErrs, courseErrs, err := loadCourse(dir)
	if err != nil {
		return nil, err
	}
	errs := append(fileErrs, courseErrs...)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Name < errs[j].Name })
		return nil, errs
	}
	if len(c.Lessons) == 0 {
		return nil, fmt.Errorf("course folder %s holds no lesson: a course is a folder of lesson files, *.md (docs/writing-lessons.md)", dir)
	}
	return c, nil
}

// loadCourse reads a course: the problems of its files one by one
// (fileErrs), and those of the course (courseErrs: ids, course.md).
func loadCourse(dir string) (c *Course, fileErrs, courseErrs Errors, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("course folder %s: %v", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("course folder %s: %v", dir, err)
	}
	if !st.IsDir() {
		return nil, nil, nil, fmt.Errorf("%s is not a folder; a course is a folder of lesson files (vsh lesson FILE takes one file)", dir)
	}
	files, err := courseFiles(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	c = &Course{Dir: abs, Title: filepath.Base(abs), Prereqs: map[string][]string{}}
	byID := map[string]*Lesson{}
	for _, f := range files {
		l, err := readLesson(f)
		if err != nil {
			fileErrs = append(fileErrs, asErrors(err, f)...)
			continue
		}
		if prev, dup := byID[l.ID]; dup {
			courseErrs = append(courseErrs, &Error{Name: f, Line: l.IDLine, Msg: fmt.Sprintf(
				"id %s is also the id of %s; the lessons of a course need ids of their own: change one", l.ID, prev.Name)})
			continue
		}
		if sh, ok := Find(l.ID); ok {
			courseErrs = append(courseErrs, &Error{Name: f, Line: l.IDLine, Msg: fmt.Sprintf(
				"id %s is the id of a lesson that ships with vsh (lessons/%s); give this one another id", l.ID, sh.Name)})
			continue
		}
		l.Course = abs
		byID[l.ID] = l
		c.Lessons = append(c.Lessons, l)
	}
	sort.SliceStable(c.Lessons, func(i, j int) bool {
		a, b := c.Lessons[i], c.Lessons[j]
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.ID < b.ID
	})
	cf := filepath.Join(dir, CourseFile)
	if _, err := os.Lstat(cf); err == nil && len(fileErrs) == 0 {
		courseErrs = append(courseErrs, c.readCourseFile(cf, byID)...)
	}
	if c.Requires != nil {
		for _, l := range c.Lessons {
			if l.Requires == nil {
				l.Requires = c.Requires // the course's, from its course.md
			}
		}
	}
	return c, fileErrs, courseErrs, nil
}

// CheckCourse checks course folder dir: each lesson file as CheckLesson
// does, then the course as LoadCourse reads it (ids, course.md). It
// returns the course's lessons that passed, in order, and every problem
// as Errors; a folder that cannot be read is another error.
func CheckCourse(dir string, o CheckOptions) ([]*Lesson, error) {
	files, err := courseFiles(dir)
	if err != nil {
		return nil, err
	}
	c, _, courseErrs, err := loadCourse(dir)
	if err != nil {
		return nil, err
	}
	var errs Errors
	ok := map[string]bool{}
	for _, f := range files {
		data, err := readRegular(f)
		if err == nil {
			_, err = checkLesson(f, data, o, false)
		}
		if err != nil {
			errs = append(errs, asErrors(err, f)...)
			continue
		}
		ok[f] = true
	}
	errs = append(errs, courseErrs...)
	var passed []*Lesson
	for _, l := range c.Lessons {
		if ok[l.Name] {
			passed = append(passed, l)
		}
	}
	if len(files) == 0 {
		errs = append(errs, &Error{Name: dir, Msg: "holds no lesson: a course is a folder of lesson files, *.md (docs/writing-lessons.md)"})
	}
	if len(errs) > 0 {
		return passed, errs
	}
	return passed, nil
}

// courseFiles lists the lesson files of dir, sorted: the regular *.md
// files but course.md. A file that is not regular (a folder named x.md, a
// pipe, a device) is skipped; a symbolic link is followed to a regular file
// only.
func courseFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("course folder %s: %v", dir, err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(strings.ToLower(n), ".md") || strings.EqualFold(n, CourseFile) || strings.HasPrefix(n, ".") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	sort.Strings(out)
	if len(out) > MaxCourseLessons {
		return nil, fmt.Errorf("course folder %s holds %d *.md files; a course holds at most %d (lessons.MaxCourseLessons): split it",
			dir, len(out), MaxCourseLessons)
	}
	return out, nil
}

// readLesson reads and parses one lesson file of a course, refusing what
// is not a regular file before opening it (a pipe would block).
func readLesson(f string) (*Lesson, error) {
	data, err := readRegular(f)
	if err != nil {
		return nil, err
	}
	return Parse(f, data)
}

// readRegular reads f if it is a regular file (after symbolic links) of
// at most MaxFileSize bytes.
func readRegular(f string) ([]byte, error) {
	st, err := os.Stat(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file but %s; a lesson is a Markdown file: move it out of the course folder", f, fileKind(st.Mode()))
	}
	return ReadFile(f)
}

// asErrors turns a parse failure into Errors, one for the file when it is
// no list of problems.
func asErrors(err error, name string) Errors {
	if es, ok := err.(Errors); ok {
		return es
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, name+": "); ok {
		return Errors{{Name: name, Msg: rest}}
	}
	return Errors{{Name: name, Msg: msg, named: strings.HasPrefix(msg, name)}}
}

// idLine is the line of a lesson's id: in its front matter.
func idLine(l *Lesson) int { return l.IDLine }

// readCourseFile reads course.md into c: its title, the lessons' order and
// their prerequisites.
func (c *Course) readCourseFile(name string, byID map[string]*Lesson) Errors {
	data, err := readRegular(name)
	if err != nil {
		return asErrors(err, name)
	}
	cp := &courseParser{c: c, name: name, byID: byID, placed: map[string]int{}}
	cp.parse(strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"))
	if len(cp.errs) == 0 {
		var missing []string
		for _, l := range c.Lessons {
			if _, ok := cp.placed[l.ID]; !ok {
				missing = append(missing, filepath.Base(l.Name))
			}
		}
		if len(missing) > 0 {
			cp.errorf(cp.listEnd, "%s leaves out %s; list every lesson of the folder (drafts go in a subfolder, which a course does not read)",
				CourseFile, strings.Join(missing, ", "))
		}
		c.Lessons = cp.order
	}
	return cp.errs
}

// fileKind names what a file that is not regular is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
