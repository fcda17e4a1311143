package lessons

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"
)

// ProgressFileName is the progress file's name in vsh's state folder.
const ProgressFileName = "progress.json"

// maxProgressFile bounds the progress file vsh reads.
const maxProgressFile = 4 << 20

// Progress is the lessons of courses a learner solved: every learner
// step solved by the learner, none done by the tutor. It lives in a small
// JSON file in the user's state folder (ProgressPath):
//
//	{
//	  "version": 1,
//	  "solved": {
//	    "/home/ann/verbs-course": {"first-qp": "2026-11-30T10:04:00Z"}
//	  }
//	}
//
// solved maps a course folder (absolute) to its solved lessons' ids, each
// with when it was solved. Removing the file forgets everything.
type Progress struct {
	path string
	data progressData
}

type progressData struct {
	Version int                          `json:"version"`
	Solved  map[string]map[string]string `json:"solved"`
}

// ProgressPath is where the progress file lives: $XDG_STATE_HOME/vsh/,
// else ~/.local/state/vsh/.
func ProgressPath() (string, error) {
	d, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, ProgressFileName), nil
}

// OpenProgress reads the progress file at path; a file that is not there
// is no progress yet.
func OpenProgress(path string) (*Progress, error) {
	p := &Progress{path: path}
	if err := p.read(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Progress) read() error {
	p.data = progressData{Version: 1, Solved: map[string]map[string]string{}}
	d := progressData{Version: 1}
	if err := readStateFile(p.path, maxProgressFile, "lesson progress", &d); err != nil {
		return err
	}
	if d.Version != 1 {
		return fmt.Errorf("lesson progress %s is version %d, not vsh's version 1; remove it to start afresh", p.path, d.Version)
	}
	if d.Solved != nil {
		p.data.Solved = d.Solved
	}
	return nil
}

// Path is the file the progress is kept in.
func (p *Progress) Path() string { return p.path }

// Solved reports whether the learner solved lesson l of a course.
func (p *Progress) Solved(l *Lesson) bool {
	at, ok := p.data.Solved[l.Course][l.ID]
	if !ok || l.Course == "" {
		return false
	}
	_, err := time.Parse(time.RFC3339, at) // vsh writes when; anything else is not its record
	return err == nil
}

// MarkSolved records that the learner solved lesson l at time at, and
// writes the file (read again first, so that two sessions keep both
// their lessons). A lesson of no course is not recorded.
func (p *Progress) MarkSolved(l *Lesson, at time.Time) error {
	if l.Course == "" {
		return nil
	}
	if err := p.read(); err != nil {
		return err
	}
	if p.data.Solved[l.Course] == nil {
		p.data.Solved[l.Course] = map[string]string{}
	}
	p.data.Solved[l.Course][l.ID] = at.UTC().Format(time.RFC3339)
	return writeStateFile(p.path, "lesson progress", p.data)
}

// Next returns the course's first lesson, in its order, that the learner
// has not solved; nil when every one is.
func (p *Progress) Next(c *Course) *Lesson {
	for _, l := range c.Lessons {
		if !p.Solved(l) {
			return l
		}
	}
	return nil
}

// Unsolved lists the lessons l builds on (course.md's requires:) that the
// learner has not solved, sorted.
func (p *Progress) Unsolved(c *Course, l *Lesson) []string {
	var out []string
	for _, id := range c.Prereqs[l.ID] {
		if pl, ok := c.Find(id); ok && !p.Solved(pl) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
