package sim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// timerLateness measures rxe's retransmit timer (rnr false: the peer's QP
// stays in INIT and never acknowledges) or its RNR timer (rnr true: the
// peer has no receive posted and answers RNR NAK) on the UDP link: n
// times, how long after its deadline (on the wall clock) the timer's
// retry left. The retries go on without end, as rxe makes them with
// retry_cnt and rnr_retry 7.
func timerLateness(tb testing.TB, rnr bool, n int) []time.Duration {
	fa, err := NewUDP(Config{Devices: 1}, "")
	if err != nil {
		tb.Skipf("no UDP link here: %v", err)
	}
	defer fa.Close()
	fb, err := NewUDP(Config{Devices: 1}, "")
	if err != nil {
		tb.Skipf("no UDP link here: %v", err)
	}
	defer fb.Close()
	open := func(f *Fabric) *writeSide {
		ctx := benchContext(tb, f)
		tb.Cleanup(func() { ctx.Close() })
		w, err := newWriteSide(ctx, 64, 1)
		if err != nil {
			tb.Fatal(err)
		}
		return w
	}
	a, b := open(fa), open(fb)
	timeout := uint8(10) // 4.2 ms: one jiffy at HZ 250, rounded up
	if err := a.connectTimeout(b.qp.Num(), b.gid, timeout); err != nil {
		tb.Fatal(err)
	}
	name := "retransmit"
	if rnr {
		name = "rnr"
		if err := b.connectTimeout(a.qp.Num(), a.gid, timeout); err != nil {
			tb.Fatal(err)
		}
	}
	sent := make(chan time.Time, n+8)
	cancel := fa.ObservePackets(func(ev verbs.PacketEvent) {
		if ev.Verdict == "sent" && ev.From == "sim0" {
			select {
			case sent <- time.Now():
			default:
			}
		}
	})
	defer cancel()
	l := fa.carrier.(*udpLink)
	wall := func(v time.Duration) time.Time { return l.start.Add(v - l.base) }
	if _, err := a.qp.PostSend([]verbs.SendWR{{Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: a.mr.Addr(), Length: 64, LKey: a.mr.LKey()}}}}); err != nil {
		tb.Fatal(err)
	}
	var late []time.Duration
	var due time.Time
	for len(late) < n {
		select {
		case at := <-sent:
			if len(sent) > 0 {
				// This loop fell behind the retries (a descheduled
				// goroutine, a collection): the deadline it read is
				// not the one of the retries queued; measure afresh.
				for len(sent) > 0 {
					<-sent
				}
			} else if !due.IsZero() {
				late = append(late, at.Sub(due))
			}
		case <-time.After(10 * time.Second):
			tb.Fatalf("no %s retry within 10 s, after %d", name, len(late))
		}
		due = nextDeadline(tb, fa, a, name, wall)
		if len(sent) > 0 {
			// Another retry left while the deadline was read: which
			// retry it belongs to is not known, so measure afresh.
			due = time.Time{}
		}
	}
	return late
}

// nextDeadline is, on the wall clock, the deadline of q's timer name,
// once it is armed.
func nextDeadline(tb testing.TB, f *Fabric, w *writeSide, name string, wall func(time.Duration) time.Time) time.Time {
	for i := 0; i < 1000; i++ {
		in, err := f.InspectQP(w.qp)
		if err != nil {
			tb.Fatal(err)
		}
		for _, t := range in.Timers {
			if t.Name == name {
				return wall(t.Deadline)
			}
		}
		time.Sleep(50 * time.Microsecond)
	}
	tb.Fatalf("no %s timer armed after a retry", name)
	return time.Time{}
}

// connectTimeout is connect with the retransmit timeout given (4.096 µs ×
// 2^timeout) and the shortest RNR timer (0.01 ms) asked of the peer.
func (w *writeSide) connectTimeout(qpn uint32, gid verbs.GID, timeout uint8) error {
	av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: gid, SGIDIndex: 1, HopLimit: 64}}
	if err := w.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: verbs.MTU1024, DestQPN: qpn,
		MaxDestRdAtomic: 1, MinRNRTimer: 1}, rtrMask); err != nil {
		return err
	}
	return w.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: timeout, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}, rtsMask)
}

// On the UDP link the clock follows the wall clock, so no timer fires
// before its deadline; how late they fire is BenchmarkUDPLinkTimers'.
func TestUDPLinkTimersNeverEarly(t *testing.T) {
	for _, rnr := range []bool{false, true} {
		t.Run(fmt.Sprintf("rnr=%v", rnr), func(t *testing.T) {
			late := timerLateness(t, rnr, 20)
			if m := slices.Min(late); m < 0 {
				t.Errorf("a timer fired %v early (lateness of 20 retries: %v)", -m, late)
			}
		})
	}
}

// BenchmarkUDPLinkTimers: 100 retries of each timer on the UDP link; the
// median and the largest lateness, and the smallest (never below 0). The
// work is the same whatever b.N is.
func BenchmarkUDPLinkTimers(b *testing.B) {
	for _, rnr := range []bool{false, true} {
		name := "retransmit"
		if rnr {
			name = "rnr"
		}
		b.Run(name, func(b *testing.B) {
			late := timerLateness(b, rnr, 100)
			slices.Sort(late)
			med := late[len(late)/2]
			b.ReportMetric(float64(med.Microseconds())/1000, "median-late-ms")
			b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "max-late-ms")
			b.ReportMetric(float64(late[0].Microseconds())/1000, "min-late-ms")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s timer, 100 retries: lateness median %v, min %v, max %v (target: median ≤ 2 ms, never early)",
				name, med.Round(time.Microsecond), late[0].Round(time.Microsecond), late[len(late)-1].Round(time.Microsecond))
		})
	}
}
