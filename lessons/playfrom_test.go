package lessons_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

// TestPlayFromAndPause checks projector playback: From starts at a step,
// the session rebuilt for it; Pause's keys play, go back (the session
// rebuilt for the step before) and quit.
func TestPlayFromAndPause(t *testing.T) {
	l, ok := lessons.Find("tour")
	if !ok {
		t.Fatal("no lesson tour")
	}
	tests := []struct {
		name    string
		from    int
		keys    []lessons.PlayKey // what the presenter presses, in order; then Enter
		wantErr error
		want    []string // in this order
		not     []string
	}{
		{"from step 3", 2, nil, nil,
			[]string{"» the session is rebuilt for step 3: a fresh backend, then the lesson's 2 commands before it", "── step 3 of 9", "played to its end"},
			[]string{"── step 2 of 9"}},
		{"back at step 2", 0, []lessons.PlayKey{lessons.PlayNext, lessons.PlayBack}, nil,
			[]string{"── step 1 of 9", "» the session is rebuilt for step 1: a fresh backend, then the lesson's 0 commands before it", "── step 1 of 9", "── step 2 of 9", "played to its end"}, nil},
		{"back at the first step stays", 0, []lessons.PlayKey{lessons.PlayBack, lessons.PlayBack}, nil,
			[]string{"── step 1 of 9", "played to its end"}, []string{"rebuilt"}},
		{"quit", 0, []lessons.PlayKey{lessons.PlayNext, lessons.PlayNext, lessons.PlayQuit}, lessons.ErrPlayQuit,
			[]string{"── step 2 of 9"}, []string{"── step 3 of 9", "played to its end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newShell(t, 2)
			var out strings.Builder
			keys := tt.keys
			o := lessons.PlayOptions{From: tt.from}
			if keys != nil {
				o.Pause = func(int) lessons.PlayKey {
					if len(keys) == 0 {
						return lessons.PlayNext
					}
					k := keys[0]
					keys = keys[1:]
					return k
				}
			}
			err := lessons.Play(sh.LessonEnv(), l, &out, o)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Play = %v, want %v\n%s", err, tt.wantErr, out.String())
			}
			text, at := out.String(), 0
			for _, w := range tt.want {
				k := strings.Index(text[at:], w)
				if k < 0 {
					t.Fatalf("no %q after offset %d:\n%s", w, at, text)
				}
				at += k + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(text, n) {
					t.Errorf("says %q:\n%s", n, text)
				}
			}
		})
	}
	if err := lessons.Play(newShell(t, 2).LessonEnv(), l, &strings.Builder{}, lessons.PlayOptions{From: 99}); err == nil ||
		!strings.Contains(err.Error(), "has steps 1 to 9, not a step 100") {
		t.Errorf("From past the end: %v", err)
	}
}
