package lessons

import (
	"fmt"
	"strconv"
	"strings"
)

// Constraint is the vsh versions a lesson runs on, as its front matter's
// requires: line gives them: one or more comparisons joined by commas,
// all of which must hold (">= 0.4", ">= 0.4, < 2").
type Constraint struct {
	Text  string // as written
	terms []versionTerm
}

type versionTerm struct {
	op string // >=, >, <=, <, ==
	v  [3]int
}

var constraintOps = []string{">=", "<=", "==", ">", "<", "="}

// ParseConstraint reads a version constraint: comparisons (>=, >, <=, <,
// ==) with a version of one to three numbers (0.4, v0.4.1), joined by
// commas.
func ParseConstraint(s string) (Constraint, error) {
	c := Constraint{Text: strings.TrimSpace(s)}
	if c.Text == "" {
		return c, fmt.Errorf("is empty; write the oldest vsh the lesson runs on: >= 0.4")
	}
	for _, part := range strings.Split(c.Text, ",") {
		part = strings.TrimSpace(part)
		op := ""
		for _, o := range constraintOps {
			if strings.HasPrefix(part, o) {
				op = o
				break
			}
		}
		if op == "" {
			return c, fmt.Errorf("%q has no comparison; write >= 0.4 (also >, <=, <, ==)", part)
		}
		v, ok := parseVersion(strings.TrimSpace(part[len(op):]))
		if !ok {
			return c, fmt.Errorf("%q: %q is not a version; write one to three numbers: 0.4, 0.4.1", part, strings.TrimSpace(part[len(op):]))
		}
		if op == "=" {
			op = "=="
		}
		c.terms = append(c.terms, versionTerm{op, v})
	}
	return c, nil
}

// parseVersion reads "0.4", "v0.4.1" or "0.4.1-rc1" (what follows - or +
// is ignored).
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1e6 || strings.HasPrefix(p, "+") {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Allows reports whether vsh version running satisfies c. A development
// build ("devel", "", or a v0.0.0 pseudo-version: no release to compare)
// satisfies every constraint.
func (c Constraint) Allows(running string) bool {
	v, ok := parseVersion(running)
	if !ok || v == [3]int{} {
		return true
	}
	for _, t := range c.terms {
		d := compareVersions(v, t.v)
		var hold bool
		switch t.op {
		case ">=":
			hold = d >= 0
		case ">":
			hold = d > 0
		case "<=":
			hold = d <= 0
		case "<":
			hold = d < 0
		default:
			hold = d == 0
		}
		if !hold {
			return false
		}
	}
	return true
}

// CheckVersion returns an error when vsh version running does not
// satisfy the lesson's requires: line, nil when it does or the lesson
// has none.
func CheckVersion(l *Lesson, running string) error {
	if l.Requires == nil || l.Requires.Allows(running) {
		return nil
	}
	fix := "install a newer vsh (go install github.com/vsh-rdma/vsh/cmd/vsh@latest) to take it"
	if l.Requires.tooNew(running) {
		fix = "take it with an older vsh, or ask its author to update the lesson's requires: line"
	}
	return l.errAt(l.RequiresLine, "lesson %s requires vsh %s, and this vsh is %s; %s", l.ID, l.Requires.Text, running, fix)
}

// tooNew reports whether version v fails c for being above a bound (<,
// <=, or == an older version) rather than below one.
func (c *Constraint) tooNew(v string) bool {
	have, ok := parseVersion(v)
	if !ok {
		return false
	}
	for _, t := range c.terms {
		cmp := compareVersions(have, t.v)
		switch t.op {
		case "<":
			if cmp >= 0 {
				return true
			}
		case "<=", "==":
			if cmp > 0 {
				return true
			}
		}
	}
	return false
}
