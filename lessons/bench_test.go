package lessons_test

import (
	"io"
	"testing"

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
