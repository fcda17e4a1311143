package lessons

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vsh", ProgressFileName), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("where to keep lesson progress: %v; set XDG_STATE_HOME to a folder", err)
	}
	return filepath.Join(home, ".local", "state", "vsh", ProgressFileName), nil
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
	f, err := os.Open(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading lesson progress: %v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("lesson progress %s is not a regular file; remove it", p.path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProgressFile+1))
	if err != nil {
		return fmt.Errorf("reading lesson progress: %v", err)
	}
	if len(data) > maxProgressFile {
		return fmt.Errorf("lesson progress %s is larger than %d bytes; it is not vsh's: remove it", p.path, maxProgressFile)
	}
	var d progressData
	if err := json.Unmarshal(data, &d); err != nil || d.Version != 1 {
		return fmt.Errorf("lesson progress %s is not a vsh progress file (version 1): %v; remove it to start afresh", p.path, err)
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
	_, ok := p.data.Solved[l.Course][l.ID]
	return ok && l.Course != ""
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
	data, err := json.MarshalIndent(p.data, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
		return fmt.Errorf("saving lesson progress: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".progress-*")
	if err != nil {
		return fmt.Errorf("saving lesson progress: %v", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), p.path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving lesson progress to %s: %v", p.path, werr)
	}
	return nil
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
