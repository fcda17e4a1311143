package lessons

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBookmarks(t *testing.T) {
	dir := t.TempDir()
	b, err := OpenBookmarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Last(); ok {
		t.Fatal("a new file has a bookmark")
	}
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i, m := range []Bookmark{
		{Ref: "tour", ID: "tour", Step: 2, Steps: 9, At: t0},
		{Ref: "/c/first.md", ID: "first", Step: 4, Steps: 7, At: t0.Add(time.Minute)},
		{Ref: "tour", ID: "tour", Step: 5, Steps: 9, At: t0.Add(2 * time.Minute)},
	} {
		if err := b.Set(m); err != nil {
			t.Fatalf("set %d: %v", i, err)
		}
	}
	// Another session reads what this one wrote.
	b2, err := OpenBookmarks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref  string
		step int
		ok   bool
	}{
		{"tour", 5, true}, // the later Set replaced the earlier
		{"first", 4, true},
		{"/c/first.md", 4, true},
		{"rc-pingpong", 0, false},
	}
	for _, tt := range tests {
		m, ok := b2.Find(tt.ref)
		if ok != tt.ok || m.Step != tt.step {
			t.Errorf("Find(%q) = step %d, %v; want %d, %v", tt.ref, m.Step, ok, tt.step, tt.ok)
		}
	}
	if last, _ := b2.Last(); last.Ref != "tour" || len(b2.All()) != 2 {
		t.Errorf("last %q of %d bookmarks; want tour of 2", last.Ref, len(b2.All()))
	}
	if err := b2.Remove("tour"); err != nil {
		t.Fatal(err)
	}
	if last, _ := b2.Last(); last.Ref != "/c/first.md" {
		t.Errorf("after Remove(tour), last is %q", last.Ref)
	}
}

// TestBookmarksBounded: the file keeps maxBookmarks, the newest.
func TestBookmarksBounded(t *testing.T) {
	b, err := OpenBookmarks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxBookmarks + 10 {
		if err := b.Set(Bookmark{Ref: filepath.Join("/l", strings.Repeat("x", i%7), string(rune('a'+i%26)), strconv.Itoa(i)), At: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.All()); n != maxBookmarks {
		t.Errorf("%d bookmarks kept, want %d", n, maxBookmarks)
	}
	if last, _ := b.Last(); !strings.HasSuffix(last.Ref, strconv.Itoa(maxBookmarks+9)) {
		t.Errorf("the newest is %q", last.Ref)
	}
}

// TestBookmarksBadFile: a file that is not vsh's is an error that says to
// remove it, never a crash.
func TestBookmarksBadFile(t *testing.T) {
	tests := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte("{oops"), 0o644) }, "is not vsh's"},
		{"other version", func(p string) error { return os.WriteFile(p, []byte(`{"version": 7}`), 0o644) }, "version 7"},
		{"a folder", func(p string) error { return os.Mkdir(p, 0o755) }, "not a regular file"},
		{"too large", func(p string) error { return os.WriteFile(p, make([]byte, maxBookmarksFile+1), 0o644) }, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.make(filepath.Join(dir, BookmarksFileName)); err != nil {
				t.Fatal(err)
			}
			_, err := OpenBookmarks(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d, _ := StateDir(); d != "/x/state/vsh" {
		t.Errorf("with XDG_STATE_HOME: %q", d)
	}
	t.Setenv("XDG_STATE_HOME", "relative") // ignored, as the XDG spec says
	t.Setenv("HOME", "/home/ann")
	if d, _ := StateDir(); d != "/home/ann/.local/state/vsh" {
		t.Errorf("without XDG_STATE_HOME: %q", d)
	}
}

// TestParseBOM: a lesson saved with a byte order mark parses.
func TestParseBOM(t *testing.T) {
	src := "\ufeff---\nid: bom\ntitle: A BOM\nlevel: beginner\nminutes: 1\n---\n\nText.\n\n```vsh\ndevices\n```\ngoal: List them.\n"
	if _, err := Parse("bom.md", []byte(src)); err != nil {
		t.Errorf("a lesson with a BOM: %v", err)
	}
}
