package lessons

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// Check validates a lesson file — its front matter, its cells, every
// expectation's grammar, a goal: line on every step the learner performs
// — and then plays it in the session open returns (vsh lesson check plays
// it on the simulator). Every problem carries its line: validation
// problems come back together as Errors; a failure while playing as a
// *PlayError. The transcript of the play goes to w (io.Discard to drop it).
//
// A lesson with sections that need more than it does (a needs: line under
// a heading) is played again, in a fresh session, without each such
// capability, as a backend that lacks it would play it: the steps after a
// skipped section must not depend on it (its handles, the state it leaves).
func Check(name string, src []byte, open func() (Env, func() error, error), w io.Writer) (*Lesson, error) {
	l, err := Parse(name, src)
	if err != nil {
		return nil, err
	}
	if w == nil {
		w = io.Discard
	}
	if err := checkPlay(l, open, w, nil); err != nil {
		return l, err
	}
	for _, c := range sectionCapabilities(l) {
		if err := checkPlay(l, open, io.Discard, []string{c}); err != nil {
			var pe *PlayError
			if errors.As(err, &pe) {
				pe.Msg = fmt.Sprintf("played without %s, as on a backend that lacks it (the sections that need it skipped): %s; "+
					"the steps after a skipped section must not use the handles it makes, nor count on the state it leaves", c, pe.Msg)
				return l, pe
			}
			return l, err
		}
	}
	return l, nil
}

// checkPlay plays l in a fresh session, as if the backend lacked lacking.
func checkPlay(l *Lesson, open func() (Env, func() error, error), w io.Writer, lacking []string) error {
	env, closeEnv, err := open()
	if err != nil {
		return err
	}
	defer closeEnv()
	err = Play(env, l, w, PlayOptions{Lacking: lacking})
	var skip *SkipError
	if errors.As(err, &skip) {
		return &Error{Name: l.Name, Line: 0, Msg: skip.Error()}
	}
	return err
}

// sectionCapabilities lists the capabilities l's sections need, sorted.
func sectionCapabilities(l *Lesson) []string {
	var out []string
	for _, sn := range SectionNeeds(l) {
		for _, c := range sn.Needs {
			if !contains(out, c) {
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}
