package sim

import (
	"runtime"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Benchmarks of the simulator (make bench). Figures are reported, never
// asserted.

// BenchmarkRCSendPingPong64 is rc_pingpong in process: two QPs on two
// devices send 64 bytes back and forth; one op is one round trip (two
// SENDs, two receives, their ACKs and four completions polled).
func BenchmarkRCSendPingPong64(b *testing.B) {
	t := newBed(b, Config{})
	x, y := t.pair(0, 1, qpOpts{cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}, rnrRetry: 7, retry: 7})
	ma, mb := mrOf(t, 0, 4096), mrOf(t, 1, 4096)
	sa, sb := sg(ma, 0, 64), sg(mb, 0, 64)
	ra, rb := sg(ma, 1024, 64), sg(mb, 1024, 64)
	recvA := []verbs.RecvWR{{WRID: 1, SGList: ra}}
	recvB := []verbs.RecvWR{{WRID: 2, SGList: rb}}
	sendA := []verbs.SendWR{{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sa}}
	sendB := []verbs.SendWR{{WRID: 4, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sb}}
	wc := make([]verbs.WC, 4)
	poll := func(cq verbs.CQ, n int) {
		for got := 0; got < n; {
			k, err := cq.Poll(wc[:n-got])
			if err != nil || k == 0 {
				b.Fatalf("poll: %d %v", k, err)
			}
			for _, w := range wc[:k] {
				if w.Status != verbs.WCSuccess {
					b.Fatalf("completion %+v", w)
				}
			}
			got += k
		}
	}
	round := func() {
		_, _ = y.PostRecv(recvB)
		_, _ = x.PostSend(sendA)
		poll(t.cq[1], 1) // B's receive
		poll(t.cq[0], 1) // A's send
		_, _ = x.PostRecv(recvA)
		_, _ = y.PostSend(sendB)
		poll(t.cq[0], 1)
		poll(t.cq[1], 1)
	}
	for i := 0; i < 100; i++ {
		round()
	}
	t0 := t.f.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round()
	}
	b.StopTimer()
	b.ReportMetric(float64(t.f.Now()-t0)/float64(b.N)/1e3, "virtual-µs/rtt")
}

// writeBench runs RDMA WRITEs of size bytes at path MTU mtu between two
// devices with 9000-byte links, and memmove of the same size, and reports
// both bandwidths and their ratio. Each iteration times one WRITE and then
// one memmove, so that both are measured under the same conditions (a
// shared machine's load changes from one moment to the next); ns/op is the
// WRITE's alone. The memmove copies a copy of the WRITE's source into a
// buffer of its own: Go's memmove of 1 MiB streams with non-temporal
// hints, and run on the WRITE's own source it would push that out of the
// caches before every WRITE.
func writeBench(b *testing.B, size int, mtu verbs.MTU) { moveBench(b, verbs.WRRDMAWrite, size, mtu) }

// moveBench is writeBench for op, an RDMA WRITE or a SEND (which finds a
// receive posted before it, outside the time measured).
func moveBench(b *testing.B, op verbs.WROpcode, size int, mtu verbs.MTU) {
	t := newBed(b, Config{Link: LinkConfig{MTU: 9000}})
	x, y := t.pair(0, 1, qpOpts{mtu: mtu, access: verbs.AccessRemote | verbs.AccessLocalWrite, retry: 7})
	src, dst := mrOf(t, 0, size), mrOf(t, 1, size)
	fill(src.Bytes(), 7)
	wr := []verbs.SendWR{{WRID: 1, Opcode: op, Flags: verbs.SendSignaled, SGList: sg(src, 0, size)}}
	if op == verbs.WRRDMAWrite {
		wr[0].RemoteAddr, wr[0].RKey = dst.Addr(), dst.RKey()
	}
	recv := []verbs.RecvWR{{WRID: 2, SGList: sg(dst, 0, size)}}
	wc := make([]verbs.WC, 1)
	write := func() {
		if _, err := x.PostSend(wr); err != nil {
			b.Fatal(err)
		}
		if n, _ := t.cq[0].Poll(wc); n != 1 || wc[0].Status != verbs.WCSuccess {
			b.Fatalf("%v: %d %+v", op, n, wc[0])
		}
		if op == verbs.WRSend {
			if n, _ := t.cq[1].Poll(wc); n != 1 || wc[0].Status != verbs.WCSuccess {
				b.Fatalf("receive: %d %+v", n, wc[0])
			}
		}
	}
	refill := func() { // the next SEND's receive, outside the time measured
		if op == verbs.WRSend {
			if _, err := y.PostRecv(recv); err != nil {
				b.Fatal(err)
			}
		}
	}
	refill()
	a, c := append([]byte(nil), src.Bytes()...), make([]byte, size)
	write()
	refill()
	copy(c, a)
	var writes, memmoves time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		write()
		t1 := time.Now()
		copy(c, a)
		writes += t1.Sub(t0)
		memmoves += time.Since(t1)
		refill()
	}
	b.StopTimer()
	per := float64(writes) / float64(b.N)
	memmove := float64(memmoves) / float64(b.N)
	packets := (size + mtu.Bytes() - 1) / mtu.Bytes()
	b.ReportMetric(per, "ns/op")
	b.ReportMetric(float64(size)/per, "GB/s")
	b.ReportMetric(float64(size)/memmove, "memmove-GB/s")
	b.ReportMetric(memmove/per, "write/memmove")
	b.ReportMetric(per/float64(packets), "ns/packet")
}

// BenchmarkWrite1MiB is a 1 MiB RDMA WRITE at path MTU 4096 against a
// memmove of 1 MiB.
func BenchmarkWrite1MiB(b *testing.B) { writeBench(b, 1<<20, verbs.MTU4096) }

// BenchmarkSend1MiB is a 1 MiB SEND at path MTU 4096 into a posted
// receive, against a memmove of 1 MiB.
func BenchmarkSend1MiB(b *testing.B) { moveBench(b, verbs.WRSend, 1<<20, verbs.MTU4096) }

// BenchmarkWrite1MiBMTU1024 gives the per-packet cost at MTU 1024.
func BenchmarkWrite1MiBMTU1024(b *testing.B) { writeBench(b, 1<<20, verbs.MTU1024) }

// BenchmarkCreateQPs creates 100,000 RC QPs (cap 1/1 as rc_pingpong's
// send side) and reports the time and the heap each idle QP holds.
func BenchmarkCreateQPs(b *testing.B) {
	const n = 100000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		t := newBed(b, Config{Devices: 1})
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		t0 := time.Now()
		qps := make([]verbs.QP, n)
		for k := range qps {
			q, err := t.pd[0].CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: t.cq[0], RecvCQ: t.cq[0],
				Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
			if err != nil {
				b.Fatal(err)
			}
			qps[k] = q
		}
		d := time.Since(t0)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(d.Seconds(), "s/100k-QPs")
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "heap-B/QP")
		runtime.KeepAlive(qps)
		b.StartTimer()
	}
}
