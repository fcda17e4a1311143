package pingpong

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// The four programs on the simulator, in one process, rdma-core's default
// sizes (4096 bytes; ud 1024), -g 1, b.N exchanges. Reported: usec/iter and
// Mbit/sec as the programs compute them (the client's figures).
//
// BenchmarkPingPongPair runs both loops in one goroutine (RunPair, the
// shell's command); BenchmarkPingPongSides runs each side's loop in its own
// goroutine, busy-polling, as two processes would.

func benchOptions(tr Transport, n int) Options {
	o := Defaults(tr)
	o.GIDIndex, o.Iters = 1, max(n, 1)
	return o
}

func benchContexts(b *testing.B) (*sim.Fabric, verbs.Context, verbs.Context) {
	f := sim.New(sim.Config{Devices: 2, Seed: 1})
	b.Cleanup(func() { f.Close() })
	d0, _ := f.Device(0)
	d1, _ := f.Device(1)
	a, err := d0.Open()
	if err != nil {
		b.Fatal(err)
	}
	c, err := d1.Open()
	if err != nil {
		b.Fatal(err)
	}
	return f, a, c
}

func report(b *testing.B, s Stats) {
	b.ReportMetric(s.UsecPerIter(), "usec/iter")
	b.ReportMetric(s.MbitPerSec(), "Mbit/sec")
}

func BenchmarkPingPongPair(b *testing.B) {
	requireDataPath(b)
	for _, tr := range []Transport{RC, UC, UD, SRQ} {
		b.Run(tr.String(), func(b *testing.B) {
			_, srv, cli := benchContexts(b)
			b.ResetTimer()
			r, err := RunPair(context.Background(), srv, cli, benchOptions(tr, b.N), PairHooks{})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			report(b, r.Client.Stats)
		})
	}
}

func BenchmarkPingPongSides(b *testing.B) {
	requireDataPath(b)
	benchSides(b, func(b *testing.B) (verbs.Context, verbs.Context) {
		_, a, c := benchContexts(b)
		return a, c
	})
}

// BenchmarkPingPongUDPLink is BenchmarkPingPongSides between two
// simulators on the UDP link, as two processes have them: every packet a
// real RoCEv2 datagram on loopback, timers in real time. cmd/pingpong's
// BenchmarkTwoProcesses runs the same between two processes.
func BenchmarkPingPongUDPLink(b *testing.B) {
	requireDataPath(b)
	benchSides(b, func(b *testing.B) (verbs.Context, verbs.Context) { return udpContexts(b) })
}

// benchSides runs each side's loop in its own goroutine between the two
// contexts open returns.
func benchSides(b *testing.B, open func(b *testing.B) (verbs.Context, verbs.Context)) {
	for _, tr := range []Transport{RC, UC, UD, SRQ} {
		b.Run(tr.String(), func(b *testing.B) {
			a, c := open(b)
			o := benchOptions(tr, b.N)
			o.Timeout = 30 * time.Second
			srv, err := NewEndpoint(a, o, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			cli, err := NewEndpoint(c, o, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cli.Close()
			if err := srv.Connect(cli.Local()); err != nil {
				b.Fatal(err)
			}
			if err := cli.Connect(srv.Local()); err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			var srvErr error
			wg.Add(1)
			b.ResetTimer()
			go func() {
				defer wg.Done()
				_, srvErr = srv.Run(context.Background(), false, "")
			}()
			st, err := cli.Run(context.Background(), true, "")
			wg.Wait()
			b.StopTimer()
			if err != nil || srvErr != nil {
				b.Fatal(err, srvErr)
			}
			report(b, st)
		})
	}
}
