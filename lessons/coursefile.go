package lessons

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// courseKeys are the front matter keys of course.md.
var courseKeys = []string{"title", "author", "lang", "requires"}

var listItem = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(.*)$`)

// courseParser reads course.md.
type courseParser struct {
	c       *Course
	name    string
	byID    map[string]*Lesson
	placed  map[string]int // lesson id → the line that lists it
	order   []*Lesson
	listEnd int // the last line of the list
	errs    Errors
}

func (cp *courseParser) errorf(line int, format string, a ...any) {
	cp.errs = append(cp.errs, &Error{Name: cp.name, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (cp *courseParser) parse(lines []string) {
	for i, line := range lines {
		if r, ok := controlIn(line); ok {
			cp.errorf(i+1, controlMsg, r)
		}
	}
	from := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		from = cp.frontMatter(lines)
	}
	inCode := ""
	for i := from; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if f, _, ok := fence(t); ok {
			switch {
			case inCode == "":
				inCode = f
			case strings.HasPrefix(f, inCode[:1]) && len(f) >= len(inCode):
				inCode = ""
			}
			continue
		}
		if inCode != "" {
			continue
		}
		if m := listItem.FindStringSubmatch(lines[i]); m != nil {
			cp.item(i+1, m[1])
		}
	}
	if len(cp.order) == 0 && len(cp.errs) == 0 {
		cp.errorf(max(1, len(lines)), "%s lists no lesson; list them in order, one a line: - first-qp", CourseFile)
	}
}

// frontMatter reads course.md's --- block and returns the first line after it.
func (cp *courseParser) frontMatter(lines []string) int {
	seen := map[string]bool{}
	for i := 1; i < len(lines); i++ {
		ln, t := i+1, strings.TrimSpace(lines[i])
		if t == "---" {
			return i + 1
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		k, v = strings.ToLower(strings.TrimSpace(k)), unquote(strings.TrimSpace(v))
		switch {
		case !ok:
			cp.errorf(ln, "front matter: %q is not key: value", t)
		case seen[k]:
			cp.errorf(ln, "front matter: %s is given twice", k)
		case k == "title":
			cp.c.Title = v
		case k == "author":
			cp.c.Author = v
		case k == "lang":
			if !langPattern.MatchString(v) {
				cp.errorf(ln, "front matter: lang %q: a language tag, such as en, fr or pt-BR", v)
			}
		case k == "requires":
			c, err := ParseConstraint(v)
			if err != nil {
				cp.errorf(ln, "front matter: requires: the vsh version the course needs: %v", err)
			} else {
				cp.c.Requires = &c
			}
		default:
			cp.errorf(ln, "front matter: unknown key %q%s; the keys of %s are %s", k, didYouMean(k, courseKeys), CourseFile, strings.Join(courseKeys, ", "))
		}
		seen[k] = true
	}
	cp.errorf(1, "front matter: no closing \"---\" line")
	return len(lines)
}

// item reads one list item: a lesson, by id or file, and what it requires.
func (cp *courseParser) item(ln int, text string) {
	name, reqs, _ := strings.Cut(text, "requires:")
	name = strings.Trim(strings.TrimSpace(name), "`*_")
	l := cp.lookup(name)
	if l == nil {
		shipped := ""
		if _, ok := Find(strings.TrimSuffix(name, ".md")); ok {
			id := strings.TrimSuffix(name, ".md")
			shipped = fmt.Sprintf(" (%s ships with vsh: a course holds files of its own; vsh lesson export %s --md FILE writes its source, to put in the folder under an id of its own)", id, id)
		}
		cp.errorf(ln, "%s lists %q, which is no lesson of the folder%s%s; the lessons are %s",
			CourseFile, name, didYouMean(name, cp.lessonNames()), shipped, strings.Join(cp.lessonNames(), ", "))
		return
	}
	if prev, dup := cp.placed[l.ID]; dup {
		cp.errorf(ln, "%s lists lesson %s twice (first at line %d); list each lesson once", CourseFile, l.ID, prev)
		return
	}
	cp.placed[l.ID], cp.listEnd = ln, ln
	cp.order = append(cp.order, l)
	if strings.TrimSpace(reqs) == "" {
		return
	}
	for _, r := range strings.Split(reqs, ",") {
		r = strings.Trim(strings.TrimSpace(r), "`")
		p := cp.lookup(r)
		switch {
		case p == nil:
			cp.errorf(ln, "lesson %s requires %q, which is no lesson of the folder%s", l.ID, r, didYouMean(r, cp.lessonNames()))
		case p == l:
			cp.errorf(ln, "lesson %s requires itself; requires: names the lessons it builds on", l.ID)
		case cp.placed[p.ID] == 0:
			cp.errorf(ln, "lesson %s requires %s, which the list puts after it; list the lessons a lesson builds on before it", l.ID, p.ID)
		case !contains(cp.c.Prereqs[l.ID], p.ID):
			cp.c.Prereqs[l.ID] = append(cp.c.Prereqs[l.ID], p.ID)
		}
	}
}

// lookup finds a lesson of the folder by id or file name.
func (cp *courseParser) lookup(name string) *Lesson {
	if l, ok := cp.byID[name]; ok {
		return l
	}
	for _, l := range cp.byID {
		if filepath.Base(l.Name) == name {
			return l
		}
	}
	return nil
}

// lessonNames lists the folder's lesson ids, in catalog order.
func (cp *courseParser) lessonNames() []string {
	var out []string
	for _, l := range cp.c.Lessons {
		out = append(out, l.ID)
	}
	return out
}
