package lessons

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestWritingLessonsGuide keeps docs/writing-lessons.md honest: it names
// every capability and every field an expectation may read, and its
// example lesson parses.
func TestWritingLessonsGuide(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "writing-lessons.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, c := range Capabilities {
		if !strings.Contains(doc, "`"+c.Name+"`") {
			t.Errorf("docs/writing-lessons.md does not document the capability %s", c.Name)
		}
	}
	for kind, fields := range fieldTables {
		for f := range fields {
			name := f
			if f == "gid[N]" {
				name = "gid[INDEX]"
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/writing-lessons.md does not document the %s field %s", kind, f)
			}
		}
	}
	for f := range wcFields {
		if !strings.Contains(doc, "`"+f+"`") {
			t.Errorf("docs/writing-lessons.md does not document the completion field %s", f)
		}
	}
	m := regexp.MustCompile("(?s)````markdown\n(.*?)\n````").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/writing-lessons.md has no ````markdown example")
	}
	if _, err := Parse("writing-lessons.md example", []byte(m[1])); err != nil {
		t.Errorf("the example lesson of docs/writing-lessons.md: %v", err)
	}
}
