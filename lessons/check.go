package lessons

import (
	"errors"
	"io"
)

// Check validates a lesson file — its front matter, its cells, every
// expectation's grammar, an expectation on every step the learner performs
// — and then plays it in the session open returns (vsh lesson check plays
// it on the simulator). Every problem carries its line: validation
// problems come back together as Errors; a failure while playing as a
// *PlayError. The transcript of the play goes to w (io.Discard to drop it).
func Check(name string, src []byte, open func() (Env, func() error, error), w io.Writer) (*Lesson, error) {
	l, err := Parse(name, src)
	if err != nil {
		return nil, err
	}
	env, closeEnv, err := open()
	if err != nil {
		return l, err
	}
	defer closeEnv()
	if w == nil {
		w = io.Discard
	}
	err = Play(env, l, w, PlayOptions{})
	var skip *SkipError
	if errors.As(err, &skip) {
		return l, &Error{Name: name, Line: 0, Msg: skip.Error()}
	}
	return l, err
}
