package lessons_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// newShell is a session on a fresh simulator: two devices, seed 1, plain
// output — what vsh lesson play runs on, and what the golden transcripts
// were made on.
func newShell(t testing.TB, devices int) *shell.Shell {
	t.Helper()
	return newShellOn(t, func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: devices, Seed: 1}), nil })
}

func newShellOn(t testing.TB, open func() (verbs.Provider, error)) *shell.Shell {
	t.Helper()
	sh, err := shell.New(shell.Options{Open: open, Plain: true, Backend: "sim (test)", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh
}

// TestGolden plays every lesson that ships with vsh on the simulator and
// compares the transcript with testdata/ID.txt, a datadriven file:
//
//	play
//	----
//	the transcript
//
// The transcripts are plain (no ANSI codes) and in virtual time, so they
// are the same on every machine. After a change to a lesson, the shell or
// the simulator, regenerate them with
//
//	go test ./lessons -run TestGolden -rewrite
//
// (-rewrite is datadriven's flag, the project's one name for rewriting
// golden files) and read the diff: only commit what you understand.
func TestGolden(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.ID, func(t *testing.T) {
			path := filepath.Join("testdata", l.ID+".txt")
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("lesson %s has no golden transcript %s; create it with a line \"play\", a line \"----\", and run go test ./lessons -run TestGolden -rewrite", l.ID, path)
			}
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				if d.Cmd != "play" {
					d.Fatalf(t, "unknown directive %s; the golden files hold one: play", d.Cmd)
				}
				sh := newShell(t, 2)
				var b bytes.Buffer
				if err := lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
					fmt.Fprintf(&b, "play failed: %v\n", err)
					t.Errorf("lesson %s does not play green: %v", l.ID, err)
				}
				return b.String()
			})
		})
	}
}

// TestGoldenFilesHaveLessons catches a transcript left behind by a lesson
// that was renamed or removed.
func TestGoldenFilesHaveLessons(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".txt")
		if _, ok := lessons.Find(id); !ok {
			t.Errorf("%s: no lesson %q ships with vsh; remove the file or the lesson's id changed", f, id)
		}
	}
}

// TestGoldenIsPlain checks that no transcript carries an escape sequence.
func TestGoldenIsPlain(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.IndexByte(data, 0x1b); i >= 0 {
			t.Errorf("%s: an ANSI escape at byte %d; golden files are plain", f, i)
		}
	}
}

// TestEveryLessonPlaysOnOneDevice plays each lesson with A and B on one
// device, as on a single rxe0: loopback. Only the expectations are checked.
func TestEveryLessonPlaysOnOneDevice(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		t.Run(l.ID, func(t *testing.T) {
			sh := newShell(t, 1)
			err := lessons.Play(sh.LessonEnv(), l, &bytes.Buffer{}, lessons.PlayOptions{})
			var skip *lessons.SkipError
			if errors.As(err, &skip) {
				t.Skip(skip)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPlayJudged plays every lesson on a simulator seeded differently from
// the judge's reference session, and judges every cell as the tutor
// judges a learner: QP numbers, PSNs, keys and addresses all differ, and
// nothing random by nature may count as a difference.
func TestPlayJudged(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, devices := range []int{2, 1} {
		for _, l := range all {
			t.Run(fmt.Sprintf("%s/%d", l.ID, devices), func(t *testing.T) {
				sh, err := shell.New(shell.Options{Plain: true, Backend: "sim (seed 7)",
					Open:   func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: devices, Seed: 7}), nil },
					Shadow: func(n int) (verbs.Provider, error) { return sim.New(sim.Config{Devices: n, Seed: 1}), nil }})
				if err != nil {
					t.Fatal(err)
				}
				defer sh.Close()
				var b bytes.Buffer
				err = lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{Judge: true})
				var skip *lessons.SkipError
				if errors.As(err, &skip) {
					t.Skip(skip)
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, tail(b.String(), 30))
				}
			})
		}
	}
}
