package pingpong

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// fakeClock advances by a fixed step each time it is read.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(step); return t }
}

func openBoth(t *testing.T, f interface {
	Device(int) (verbs.Device, error)
}) (verbs.Context, verbs.Context) {
	t.Helper()
	var ctxs [2]verbs.Context
	for i := range ctxs {
		d, err := f.Device(i)
		if err != nil {
			t.Fatal(err)
		}
		if ctxs[i], err = d.Open(); err != nil {
			t.Fatal(err)
		}
		c := ctxs[i]
		t.Cleanup(func() { c.Close() })
	}
	return ctxs[0], ctxs[1]
}

// RunPair is deterministic on the simulator: the same seed and clock give
// the same lines, for every transport, with -c and -e.
func TestRunPairDeterministic(t *testing.T) {
	requireDataPath(t)
	for _, tr := range []Transport{RC, UC, UD, SRQ} {
		for _, events := range []bool{false, true} {
			run := func() []string {
				f := newFabric(t)
				a, b := openBoth(t, f)
				o := Defaults(tr)
				o.GIDIndex, o.Iters, o.Check, o.Events = 1, 64, true, events
				if tr == SRQ {
					o.NumQP = 3
				}
				rng := rand.New(rand.NewPCG(9, 9))
				r, err := RunPair(context.Background(), a, b, o, PairHooks{PSN: rng.Uint32, Now: fakeClock(time.Millisecond)})
				if err != nil {
					t.Fatalf("%s: %v", tr, err)
				}
				if r.Server.BadPages != nil || r.Client.BadPages != nil {
					t.Errorf("%s: -c: %v %v", tr, r.Server.BadPages, r.Client.BadPages)
				}
				if events && (r.Server.Stats.CQEvents == 0 || r.Client.Stats.CQEvents == 0) {
					t.Errorf("%s -e: no completion events: %+v %+v", tr, r.Server.Stats, r.Client.Stats)
				}
				return r.Lines()
			}
			first, second := run(), run()
			if !reflect.DeepEqual(first, second) {
				t.Errorf("%s: two runs differ:\n%s\n--\n%s", tr, strings.Join(first, "\n"), strings.Join(second, "\n"))
			}
			nqp := 1
			if tr == SRQ {
				nqp = 3
			}
			if len(first) != 2*(2*nqp+2) {
				t.Fatalf("%s: %d lines:\n%s", tr, len(first), strings.Join(first, "\n"))
			}
			// The fake clock reads 1ms per call: the server's clock is read
			// once more than the client's between start and end.
			last := first[len(first)-1]
			if !strings.HasPrefix(last, "client: 64 iters in 0.00 seconds = ") {
				t.Errorf("%s: %q", tr, last)
			}
		}
	}
}

// Both ends on one device, as the shell's lessons do on a single rxe0.
func TestRunPairLoopback(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	a, _ := openBoth(t, f)
	o := Defaults(RC)
	o.GIDIndex, o.Iters, o.Size, o.MTU = 1, 10, 65536/2, verbs.MTU4096
	r, err := RunPair(context.Background(), a, a, o, PairHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Server.Stats.Bytes(); got != int64(o.Size)*2*10 {
		t.Errorf("bytes %d", got)
	}
	if r.Server.Remote[0] != r.Client.Local[0] || r.Client.Remote[0] != r.Server.Local[0] {
		t.Errorf("addresses do not cross: %+v", r)
	}
}

// With the fabric stepped by hand (the shell's step mode), Idle moves it.
func TestRunPairStepped(t *testing.T) {
	requireDataPath(t)
	f := newFabric(t)
	a, b := openBoth(t, f)
	f.SetDeliveryMode(verbs.DeliverStep)
	idle := func() bool {
		if len(f.Run()) > 0 {
			return true
		}
		return len(f.Advance(time.Millisecond)) > 0
	}
	for _, tr := range []Transport{RC, UD} {
		o := Defaults(tr)
		o.GIDIndex, o.Iters = 1, 20
		if _, err := RunPair(context.Background(), a, b, o, PairHooks{Idle: idle}); err != nil {
			t.Errorf("%s: %v", tr, err)
		}
	}
}

// A pair that cannot move — here the two sides are on two different
// simulated fabrics, as two processes without a link are — ends at once
// when Idle says nothing more can happen, with the stall explanation.
func TestRunPairStall(t *testing.T) {
	requireDataPath(t)
	f, g := newFabric(t), newFabric(t)
	a, _ := openBoth(t, f)
	_, b := openBoth(t, g)
	o := Defaults(UC)
	o.GIDIndex, o.Iters = 1, 5
	start := time.Now()
	idle := func() bool {
		p1, t1 := f.Pending()
		p2, t2 := g.Pending()
		return p1+t1+p2+t2 > 0
	}
	_, err := RunPair(context.Background(), a, b, o, PairHooks{Idle: idle})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "No completion: 0 of 5 messages received") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("Idle returning false did not end the run at once")
	}
	// Without Idle, the timeout ends it.
	o.Timeout = 200 * time.Millisecond
	_, err = RunPair(context.Background(), a, b, o, PairHooks{})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "No completion for 200ms") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunPairRefuses(t *testing.T) {
	f := newFabric(t)
	a, b := openBoth(t, f)
	o := Defaults(RC)
	o.Iters = 0
	if _, err := RunPair(context.Background(), a, b, o, PairHooks{}); err == nil || !strings.Contains(err.Error(), "at least 1 exchange") {
		t.Errorf("iters 0: %v", err)
	}
	o = Defaults(UD)
	o.GIDIndex, o.Size = 1, 2048
	_, err := RunPair(context.Background(), a, b, o, PairHooks{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Msg != "server: Requested size larger than port MTU (1024)" {
		t.Errorf("ud -s 2048: %v", err)
	}
	o = Defaults(RC)
	if _, err := RunPair(context.Background(), a, b, o, PairHooks{}); err == nil || !strings.Contains(err.Error(), "Failed to modify QP to RTR") ||
		!strings.Contains(err.Error(), "neither side passed -g") {
		t.Errorf("no -g: %v", err)
	}
}
