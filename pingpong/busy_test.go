package pingpong

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// selfDriven makes a simulator context say what the ibverbs backend's
// says, so that Run takes runBusy, the loop it runs on a real device.
type selfDriven struct{ verbs.Context }

func (selfDriven) SelfDriven() bool { return true }

// busyPair returns two connected endpoints on a two-device simulator whose
// contexts say they are self-driven.
func busyPair(t *testing.T, o Options) (srv, cli *Endpoint) {
	t.Helper()
	f := newFabric(t)
	var eps [2]*Endpoint
	for i := range eps {
		d, err := f.Device(i)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ep, err := NewEndpoint(selfDriven{c}, o, nil)
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
	return eps[0], eps[1]
}

// TestRunBusy: the busy loop finishes every program, both sides in their
// own goroutines, and counts a poll for every CQ poll and a post for each
// send (and each receive batch).
func TestRunBusy(t *testing.T) {
	requireDataPath(t)
	for _, tr := range []Transport{RC, UC, UD, SRQ} {
		t.Run(tr.String(), func(t *testing.T) {
			o := Defaults(tr)
			o.GIDIndex, o.Iters, o.Size, o.Timeout = 1, 200, 64, 20*time.Second
			srv, cli := busyPair(t, o)
			var wg sync.WaitGroup
			var ss Stats
			var serr error
			wg.Add(1)
			go func() {
				defer wg.Done()
				ss, serr = srv.Run(context.Background(), false, "")
			}()
			cs, cerr := cli.Run(context.Background(), true, "")
			wg.Wait()
			if serr != nil || cerr != nil {
				t.Fatalf("server: %v; client: %v", serr, cerr)
			}
			for _, s := range []Stats{ss, cs} {
				if s.Polls < 1 || s.Posts < o.Iters || s.Elapsed <= 0 {
					t.Errorf("stats %+v: want polls, at least %d posts and a duration", s, o.Iters)
				}
			}
		})
	}
}

// TestRunBusyTimeout: a server whose client never sends gives up after
// --timeout, never before, and not much after.
func TestRunBusyTimeout(t *testing.T) {
	requireDataPath(t)
	o := Defaults(RC)
	o.GIDIndex, o.Iters, o.Timeout = 1, 10, 300*time.Millisecond
	srv, _ := busyPair(t, o)
	start := time.Now()
	_, err := srv.Run(context.Background(), false, "")
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Run = %v; want a timeout", err)
	}
	if took < o.Timeout || took > o.Timeout+2*time.Second {
		t.Errorf("gave up after %v; want %v or a little more", took, o.Timeout)
	}
	if !strings.Contains(err.Error(), "No completion for 300ms") {
		t.Errorf("error: %v", err)
	}
}

// TestRunBusyInterrupt: cancelling the context (Ctrl-C) ends a waiting
// busy loop at once.
func TestRunBusyInterrupt(t *testing.T) {
	requireDataPath(t)
	o := Defaults(RC)
	o.GIDIndex, o.Iters, o.Timeout = 1, 10, 10*time.Second // a loop deaf to ctx still ends
	srv, _ := busyPair(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := srv.Run(ctx, false, "")
	if err == nil || !strings.Contains(err.Error(), "Interrupted") || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v; want Interrupted", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopped %v after the start; want about 100ms", took)
	}
}
