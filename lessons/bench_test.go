package lessons_test

import (
	"io"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
)

// BenchmarkPlay plays each lesson on a fresh simulator, prose rendering
// included, as vsh lesson play does (target: 300 ms each; make bench
// reports it, no test asserts it).
func BenchmarkPlay(b *testing.B) {
	all, err := lessons.All()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range all {
		b.Run(l.ID, func(b *testing.B) {
			for b.Loop() {
				sh := newShell(b, 2)
				if err := lessons.Play(sh.LessonEnv(), l, io.Discard, lessons.PlayOptions{}); err != nil {
					b.Fatal(err)
				}
				sh.Close()
			}
		})
	}
}

// BenchmarkParse parses every shipped lesson.
func BenchmarkParse(b *testing.B) {
	var srcs [][]byte
	all, _ := lessons.All()
	for _, l := range all {
		data, err := lessons.Source(l.Name)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, data)
	}
	for b.Loop() {
		for i, s := range srcs {
			if _, err := lessons.Parse(all[i].Name, s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkJudgeStep judges rc-pingpong's longest step (the one whose
// reference replays the most commands) as the tutor does when a learner
// reaches it: a fresh reference session replaying the lesson's cells up to
// and including the step's, the learner's snapshot at the step's start,
// and, after the learner's commands, the verdict. Target: at most 20 ms a
// judgement, reported as ms/judgement; ms/verdict is the cost of the
// verdict alone, which the tutor pays after every command. make bench
// reports them; no test asserts them.
func BenchmarkJudgeStep(b *testing.B) {
	l, _ := lessons.Find("rc-pingpong")
	step, most := 0, 0
	for i, s := range l.Steps {
		if !s.Interactive() {
			continue
		}
		n := 0
		for _, t := range l.Steps[:i+1] {
			if t.Cell != nil {
				n += len(t.Cell.Commands)
			}
		}
		if n > most {
			step, most = i, n
		}
	}
	var judging, verdict time.Duration
	for b.Loop() {
		b.StopTimer()
		sh := newShell(b, 2)
		env := sh.LessonEnv()
		if _, err := lessons.Rebuild(env, l, nil, step); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		j := lessons.NewJudge(env, l, nil)
		if err := j.Begin(step); err != nil {
			b.Fatal(err)
		}
		judging += time.Since(t0)
		b.StopTimer()
		for _, c := range l.Steps[step].Cell.Commands {
			if _, err := sh.Exec(c.Text); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t1 := time.Now()
		if v := j.Verdict(); !v.Met {
			b.Fatalf("the lesson's own commands did not reach step %d's goal: %v", step+1, v.Diffs)
		}
		verdict += time.Since(t1)
		judging += time.Since(t1)
		b.StopTimer()
		j.Close()
		sh.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(judging.Microseconds())/1000/float64(b.N), "ms/judgement")
	b.ReportMetric(float64(verdict.Microseconds())/1000/float64(b.N), "ms/verdict")
}
