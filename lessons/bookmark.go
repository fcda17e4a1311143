package lessons

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// BookmarksFileName is the bookmarks file's name in vsh's state folder.
const BookmarksFileName = "bookmarks.json"

// Bounds on the bookmarks file: what vsh reads, and how many lessons it
// remembers (the oldest are forgotten first).
const (
	maxBookmarksFile = 1 << 20
	maxBookmarks     = 256
)

// Bookmark is where a learner left a lesson: the step they were at.
type Bookmark struct {
	// Ref names the lesson as lesson ID takes it: a shipped lesson's id,
	// or the absolute path of a lesson file.
	Ref   string    `json:"ref"`
	ID    string    `json:"id"`
	Title string    `json:"title"`
	Step  int       `json:"step"` // 0-based
	Steps int       `json:"steps"`
	At    time.Time `json:"at"`
}

// Bookmarks is the file of bookmarks, one per lesson left unfinished:
//
//	{"version": 1, "bookmarks": [{"ref": "rc-pingpong", "id": "rc-pingpong",
//	  "title": "...", "step": 6, "steps": 18, "at": "2026-11-25T23:10:00Z"}]}
//
// The newest comes first. Finishing a lesson removes its bookmark;
// removing the file forgets them all.
type Bookmarks struct {
	path string
	data bookmarksData
}

type bookmarksData struct {
	Version   int        `json:"version"`
	Bookmarks []Bookmark `json:"bookmarks"`
}

// OpenBookmarks reads the bookmarks file in folder dir; a file that is
// not there holds no bookmarks yet.
func OpenBookmarks(dir string) (*Bookmarks, error) {
	b := &Bookmarks{path: filepath.Join(dir, BookmarksFileName)}
	if err := b.read(); err != nil {
		return nil, err
	}
	return b, nil
}

// Path is the file the bookmarks are kept in.
func (b *Bookmarks) Path() string { return b.path }

func (b *Bookmarks) read() error {
	d := bookmarksData{Version: 1}
	if err := readStateFile(b.path, maxBookmarksFile, "lesson bookmarks", &d); err != nil {
		return err
	}
	if d.Version != 1 {
		return fmt.Errorf("lesson bookmarks %s is version %d, not vsh's version 1; remove it to start afresh", b.path, d.Version)
	}
	b.data = bookmarksData{Version: 1, Bookmarks: d.Bookmarks}
	return nil
}

// Last returns the newest bookmark.
func (b *Bookmarks) Last() (Bookmark, bool) {
	if len(b.data.Bookmarks) == 0 {
		return Bookmark{}, false
	}
	return b.data.Bookmarks[0], true
}

// Find returns the bookmark of the lesson that ref (an id, a file's path
// as given, or its absolute path) names.
func (b *Bookmarks) Find(ref string) (Bookmark, bool) {
	abs := ref
	if strings.ContainsAny(ref, `/\`) || filepath.Ext(ref) != "" {
		if a, err := filepath.Abs(ref); err == nil {
			abs = a
		}
	}
	for _, m := range b.data.Bookmarks {
		if m.Ref == ref || m.Ref == abs || m.ID == ref {
			return m, true
		}
	}
	return Bookmark{}, false
}

// All returns the bookmarks, newest first.
func (b *Bookmarks) All() []Bookmark { return append([]Bookmark(nil), b.data.Bookmarks...) }

// Set records m, replacing the lesson's earlier bookmark, and writes the
// file (read again first, so that two sessions keep both their lessons).
func (b *Bookmarks) Set(m Bookmark) error {
	return b.update(func(list []Bookmark) []Bookmark {
		list = append([]Bookmark{m}, without(list, m.Ref)...)
		sort.SliceStable(list, func(i, j int) bool { return list[i].At.After(list[j].At) })
		if len(list) > maxBookmarks {
			list = list[:maxBookmarks]
		}
		return list
	})
}

// Remove forgets the bookmark of the lesson ref names (a finished lesson).
func (b *Bookmarks) Remove(ref string) error {
	if _, ok := b.Find(ref); !ok {
		return nil
	}
	return b.update(func(list []Bookmark) []Bookmark { return without(list, ref) })
}

func without(list []Bookmark, ref string) []Bookmark {
	var out []Bookmark
	for _, m := range list {
		if m.Ref != ref {
			out = append(out, m)
		}
	}
	return out
}

// update reads the file again, changes its list with f and writes it.
func (b *Bookmarks) update(f func([]Bookmark) []Bookmark) error {
	if err := b.read(); err != nil {
		return err
	}
	b.data.Bookmarks = f(b.data.Bookmarks)
	return writeStateFile(b.path, "lesson bookmarks", b.data)
}

// Ref is how a bookmark names lesson l: its id when it ships with vsh,
// else the absolute path of its file.
func Ref(l *Lesson) string {
	if s, ok := Find(l.ID); ok && s == l {
		return l.ID
	}
	if a, err := filepath.Abs(l.Name); err == nil {
		return a
	}
	return l.Name
}

// Resume moves the tutor to step i of its lesson, as lesson back does:
// the session is rebuilt by replaying the lesson's commands of the steps
// before it.
func (t *Tutor) Resume(i int) (string, error) {
	if i < 0 || i >= len(t.l.Steps) {
		return "", fmt.Errorf("lesson %s has %d steps, not a step %d; lesson %s starts it from the beginning", t.l.ID, len(t.l.Steps), i+1, t.l.ID)
	}
	var b strings.Builder
	err := t.rebuild(i, &b)
	return b.String(), err
}
