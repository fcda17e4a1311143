//go:build linux && cgo && ibverbs

package ibverbs

import (
	stdcontext "context"
	"runtime"
	"slices"
	"testing"

	"github.com/vsh-rdma/vsh/pingpong"
	"github.com/vsh-rdma/vsh/verbs"
)

// TestRXEPingPongStructure: the loop cmd/pingpong runs on rxe0
// (pingpong.Endpoint.Run) has rdma-core's shape: one call into C per verb
// call (ibv_poll_cq, ibv_post_send, ibv_post_recv) and nothing else that
// crosses, and no allocation per iteration. Both sides run in this process,
// each on its own device context, each in its own goroutine as each program
// runs in its own process.
func TestRXEPingPongStructure(t *testing.T) {
	p := needRXE(t)
	t.Cleanup(func() { p.Close() })
	open := func() verbs.Context {
		devs, err := p.Devices()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			if d.Name() == rxeDevice() {
				c, err := d.Open()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
		}
		t.Fatalf("no %s", rxeDevice())
		return nil
	}
	srvCtx, cliCtx := open(), open()
	if sd, ok := srvCtx.(verbs.SelfDriven); !ok || !sd.SelfDriven() {
		t.Fatal("the ibverbs context does not say it is self-driven: Run would not busy-poll as rdma-core does")
	}

	type result struct {
		stats     [2]pingpong.Stats
		crossings int64
		mallocs   uint64
	}
	run := func(iters int) result {
		t.Helper()
		o := pingpong.Defaults(pingpong.RC)
		o.Size, o.Iters, o.GIDIndex = 64, iters, 1
		var eps [2]*pingpong.Endpoint
		for i, c := range []verbs.Context{srvCtx, cliCtx} {
			ep, err := pingpong.NewEndpoint(c, o, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ep.Close() })
			eps[i] = ep
		}
		if err := eps[0].Connect(eps[1].Local()); err != nil {
			t.Fatal(err)
		}
		if err := eps[1].Connect(eps[0].Local()); err != nil {
			t.Fatal(err)
		}
		var r result
		var errs [2]error
		done := make(chan int, 2)
		var m0, m1 runtime.MemStats
		// No collection in progress when the count starts: one that ran
		// on while the loop did would allocate its workers' stacks.
		runtime.GC()
		runtime.ReadMemStats(&m0)
		c0 := runtime.NumCgoCall()
		for i := range eps {
			go func() {
				r.stats[i], errs[i] = eps[i].Run(stdcontext.Background(), i == 1, "")
				done <- i
			}()
		}
		<-done
		<-done
		r.crossings = runtime.NumCgoCall() - c0
		runtime.ReadMemStats(&m1)
		r.mallocs = m1.Mallocs - m0.Mallocs
		for i, err := range errs {
			if err != nil {
				t.Fatalf("side %d: %v", i, err)
			}
		}
		return r
	}

	run(200) // the first run starts the threads the others reuse
	short, long := run(200), run(2200)
	calls := func(r result) int64 {
		n := 0
		for _, s := range r.stats {
			n += s.Polls + s.Posts
		}
		return int64(n)
	}
	// Each run grows the new QPs' and CQs' C buffers once (a few mallocs
	// and reallocs): the same in both runs, so the difference is the
	// loop's own.
	if d, want := long.crossings-short.crossings, calls(long)-calls(short); d != want {
		t.Errorf("%d calls into C more in %d iterations more, for %d verb calls more (polls, posts); want one crossing per verb call",
			d, long.stats[0].Iters-short.stats[0].Iters, want)
	}
	if setup := long.crossings - calls(long); setup < 0 || setup > 16 {
		t.Errorf("%d calls into C besides the verb calls; want the few that grow the buffers", setup)
	}
	// Posts per iteration and side: one send, and ibv_post_recv of
	// rx_depth-1 receives every rx_depth-1 iterations.
	for i, s := range long.stats {
		if want := s.Iters + s.Iters/(499); s.Posts < s.Iters || s.Posts > want+1 {
			t.Errorf("side %d: %d posts in %d iterations; want %d sends and a receive batch per 499", i, s.Posts, s.Iters, s.Iters)
		}
	}
	n := float64(long.stats[0].Iters - short.stats[0].Iters)
	polls := long.stats[0].Polls + long.stats[1].Polls - short.stats[0].Polls - short.stats[1].Polls
	posts := long.stats[0].Posts + long.stats[1].Posts - short.stats[0].Posts - short.stats[1].Posts
	t.Logf("per iteration, both sides: %.2f calls into C for %.2f polls and %.3f posts",
		float64(long.crossings-short.crossings)/n, float64(polls)/n, float64(posts)/n)
	// MemStats counts the whole process's mallocs, and a run that starts
	// a thread (the scheduler's choice, not the loop's) counts its
	// allocations too: a few, never fewer. So each length runs three
	// times and the fewest count, with two to spare: a loop that
	// allocates per iteration does so in every long run (2000 more; one
	// that allocates every 500 receives, 11 to 14 more).
	shorts, longs := []uint64{short.mallocs}, []uint64{long.mallocs}
	for range 2 {
		shorts = append(shorts, run(200).mallocs)
		longs = append(longs, run(2200).mallocs)
	}
	extra := int64(slices.Min(longs)) - int64(slices.Min(shorts))
	t.Logf("allocations: %v in runs of 200 iterations, %v in runs of 2200", shorts, longs)
	if extra > 2 {
		t.Errorf("%d allocations more in %d iterations more (the fewest of three runs each): the loop allocates per iteration",
			extra, long.stats[0].Iters-short.stats[0].Iters)
	}
}
