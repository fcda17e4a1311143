package lessons

import (
	"fmt"
	"path"
	"strings"
)

// Catalog is the lessons a session can start by id: those that ship with
// vsh, then the lessons of the courses added to them (vsh --lessons DIR).
// Ids are unique across it. The zero Catalog, and a nil one, hold the
// shipped lessons alone.
type Catalog struct {
	courses []*Course
}

// NewCatalog returns the shipped lessons with the courses' added. A
// course lesson whose id another course's lesson has is an error naming
// both files (LoadCourse already refuses a shipped lesson's id).
func NewCatalog(courses ...*Course) (*Catalog, error) {
	seen := map[string]*Lesson{}
	var errs Errors
	for _, c := range courses {
		for _, l := range c.Lessons {
			if prev, dup := seen[l.ID]; dup {
				errs = append(errs, &Error{Name: l.Name, Line: l.IDLine, Msg: fmt.Sprintf(
					"id %s is also the id of %s, in another course; lessons in one catalog need ids of their own: change one", l.ID, prev.Name)})
				continue
			}
			seen[l.ID] = l
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &Catalog{courses: courses}, nil
}

// Courses returns the courses added to the shipped lessons.
func (c *Catalog) Courses() []*Course {
	if c == nil {
		return nil
	}
	return c.courses
}

// All returns every lesson: the shipped ones in catalog order, then each
// course's in its order.
func (c *Catalog) All() ([]*Lesson, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	if c == nil || len(c.courses) == 0 {
		return all, nil
	}
	out := append([]*Lesson(nil), all...)
	for _, co := range c.courses {
		out = append(out, co.Lessons...)
	}
	return out, nil
}

// Find returns the lesson with this id.
func (c *Catalog) Find(id string) (*Lesson, bool) {
	if l, ok := Find(id); ok {
		return l, true
	}
	for _, co := range c.Courses() {
		if l, ok := co.Find(id); ok {
			return l, true
		}
	}
	return nil, false
}

// IDs lists the lessons' ids, in the order All gives them.
func (c *Catalog) IDs() []string {
	all, _ := c.All()
	var out []string
	for _, l := range all {
		out = append(out, l.ID)
	}
	return out
}

// Course returns the course a lesson of the catalog is part of, or nil.
func (c *Catalog) Course(l *Lesson) *Course {
	for _, co := range c.Courses() {
		if co.Dir == l.Course {
			return co
		}
	}
	return nil
}

// Load finds a lesson by its id in the catalog, or else reads it from a
// file, as the package's Load does.
func (c *Catalog) Load(idOrPath string, read func(string) ([]byte, error)) (*Lesson, error) {
	if l, ok := c.Find(idOrPath); ok {
		return l, nil
	}
	if read == nil {
		read = ReadFile
	}
	looksLikeFile := strings.ContainsAny(idOrPath, `/\`) || path.Ext(idOrPath) != ""
	data, err := read(idOrPath)
	if err != nil {
		if !looksLikeFile {
			ids := c.IDs()
			msg := fmt.Sprintf("no lesson %q; the lessons are %s (or give a lesson file's path)", idOrPath, strings.Join(ids, ", "))
			if near := nearest(idOrPath, ids); near != "" {
				msg = fmt.Sprintf("no lesson %q; did you mean %s? The lessons are %s (or give a lesson file's path)",
					idOrPath, near, strings.Join(ids, ", "))
			}
			return nil, fmt.Errorf("%s", msg)
		}
		return nil, err
	}
	return Parse(idOrPath, data)
}
