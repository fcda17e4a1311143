package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestTrainsAgree runs traffic made to stress packet trains (train.go) —
// three devices whose links differ in rate and latency, two senders
// sharing a receiver's link, a loopback pair, messages started together
// (posted in single-step mode, then run in automatic mode), a slow link
// on which retransmit timers fall due in the middle of a train and the
// fabric stops with trains in flight, PSNs that wrap inside a train, and
// WRITEs, SENDs (some meeting no receive) and READs at once, the program
// changing its buffers after every post — with the shortcuts and with
// the general steps, and wants the same completions, memory, PSNs,
// counts, and every packet delivered, in the same order, at the same
// time.
func TestTrainsAgree(t *testing.T) {
	for _, mtu := range []verbs.MTU{verbs.MTU1024, verbs.MTU4096} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%d/%d", mtu.Bytes(), seed), func(t *testing.T) {
				var stats trainCounts
				fast, general := trainTraffic(t, mtu, seed, false, &stats), trainTraffic(t, mtu, seed, true, nil)
				if fast != general {
					t.Errorf("trains change the outcome:\n%s", firstDiff(fast, general))
				}
				if stats.made == 0 || stats.split == 0 || stats.inPlace == 0 {
					t.Errorf("trains: %+v", stats)
				}
			})
		}
	}
}

func trainTraffic(t *testing.T, mtu verbs.MTU, seed uint64, general bool, stats *trainCounts) string {
	b := newBed(t, Config{Devices: 3, Seed: int64(seed), Link: LinkConfig{MTU: 9000}})
	b.f.net.general = general
	b.must(b.f.SetLink(1, LinkConfig{MTU: 9000, Bandwidth: 40e9, Latency: 3 * time.Microsecond}))
	b.must(b.f.SetLink(2, LinkConfig{MTU: 9000, Bandwidth: 1e9, Latency: 2 * time.Microsecond}))
	trace := tapDeliveries(b.f)
	if stats != nil {
		defer func() { *stats = b.f.net.trainStats }()
	}
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	// timeout 1: the retransmit timer's shortest, one jiffy (4 ms), which
	// a window of packets on the 1 Gb/s link outlasts.
	o := qpOpts{mtu: mtu, access: all, retry: 7, rnrRetry: 7, minRNR: 1, timeout: 1, rdAtomic: 4,
		cap: verbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 2, MaxRecvSGE: 2}}
	ends := [][2]int{{0, 1}, {2, 1}, {1, 0}, {0, 2}, {1, 1}}
	var xs, ys []verbs.QP
	for i, e := range ends {
		// Some QPs start just below the PSN wrap, so that trains cross it.
		o.startPSN = 0
		if i%2 == 1 {
			o.startPSN = psnMask - uint32(40*i)
		}
		x, y := b.pair(e[0], e[1], o)
		xs, ys = append(xs, x), append(ys, y)
	}
	const msz = 1 << 20
	rng := rand.New(rand.NewPCG(seed, uint64(mtu)))
	mrs := make([]verbs.MR, 3)
	for d := range mrs {
		m, err := b.pd[d].AllocMR(msz, all)
		b.must(err)
		for i := range m.Bytes() {
			m.Bytes()[i] = byte(rng.Uint32())
		}
		mrs[d] = m
	}
	sge := func(m verbs.MR, off, n int) []verbs.SGE {
		return []verbs.SGE{{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}}
	}
	var sb strings.Builder
	var late []func()
	post := func(i int) {
		k := rng.IntN(len(xs))
		x, y := xs[k], ys[k]
		mx, my := mrs[ends[k][0]], mrs[ends[k][1]]
		size := 1 + rng.IntN(200000)
		// Each QP has its own stretch of memory at both ends, so that
		// what one message writes no other reads or writes meanwhile.
		off := k*(msz/len(xs)) + rng.IntN(msz/len(xs)/2-size/2)
		size = min(size, msz/len(xs)/2)
		roff := k*(msz/len(xs)) + msz/len(xs)/2
		wr := verbs.SendWR{WRID: uint64(i), Flags: verbs.SendSignaled, SGList: sge(mx, off, size)}
		switch op := rng.IntN(6); op {
		case 0, 1:
			wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMAWrite, my.Addr()+uint64(roff), my.RKey()
			if op == 1 {
				wr.Opcode, wr.Imm = verbs.WRRDMAWriteWithImm, uint32(i)
				b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(i)}})))
			}
		case 2:
			wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMARead, my.Addr()+uint64(roff), my.RKey()
		case 3:
			// Two SGEs: a train stops where the first ends.
			h := size / 2
			wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMAWrite, my.Addr()+uint64(roff), my.RKey()
			wr.SGList = append(sge(mx, off, h), sge(mx, off+h+8, size-h)...)
		default:
			wr.Opcode = verbs.WRSend
			recv := []verbs.RecvWR{{WRID: uint64(i), SGList: sge(my, roff, size)}}
			if h := size / 3; i%2 == 0 && size > 64 {
				// Two SGEs, the first ending inside a packet: a train
				// taken in place stops there.
				recv[0].SGList = append(sge(my, roff, h), sge(my, roff+h+16, size-h-16)...)
				wr.SGList = sge(mx, off, size-16)
			}
			if op == 5 {
				late = append(late, func() { b.must(first(y.PostRecv(recv))) })
			} else {
				b.must(first(y.PostRecv(recv)))
			}
		}
		b.must(first(x.PostSend([]verbs.SendWR{wr})))
		// The program changes its buffers once the verb returned: what is
		// still in flight must carry what they held then.
		for _, m := range mrs {
			for j := i; j < msz; j += 4093 {
				m.Bytes()[j]++
			}
		}
	}
	for i := 0; i < 40; {
		if rng.IntN(3) == 0 {
			// Several messages start together.
			b.f.SetDeliveryMode(verbs.DeliverStep)
			for j := 0; j < 3; j++ {
				post(i)
				i++
			}
			b.f.SetDeliveryMode(verbs.DeliverAuto)
		} else {
			post(i)
			i++
		}
		if len(late) > 0 && rng.IntN(3) == 0 {
			late[0]()
			late = late[1:]
		}
		if i%5 == 0 {
			for d := range b.cq {
				record(&sb, d, b.drain(b.cq[d], 0))
			}
		}
	}
	return finish(&sb, b, late, append(xs, ys...), mrs) + trace.String()
}

// TestNoTrainOutlivesAVerb: a WRITE on a 100 Mb/s link outlasts its run (the
// retransmit timer falls due before the next packet arrives), and every
// packet still in flight when PostSend returns is a packet of its own,
// its payload its own copy (settle), as the program may change the
// buffer it came from.
func TestNoTrainOutlivesAVerb(t *testing.T) {
	b := newBed(t, Config{Link: LinkConfig{MTU: 9000, Bandwidth: 1e8}})
	x, _ := b.pair(0, 1, qpOpts{mtu: verbs.MTU4096, access: verbs.AccessRemote, retry: 7, timeout: 1})
	src, dst := mrOf(b, 0, 1<<20), mrOf(b, 1, 1<<20)
	fill(src.Bytes(), 3)
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
		SGList: sg(src, 0, 1<<20), RemoteAddr: dst.Addr(), RKey: dst.RKey()}})))
	n := &b.f.net
	if n.trainStats.made == 0 {
		t.Fatalf("no train was made: %+v", n.trainStats)
	}
	pkts, _ := b.f.Pending()
	if pkts < 2 {
		t.Fatalf("%d packets in flight after PostSend; the test wants the WRITE to outlast it", pkts)
	}
	inFlight := append(append([]*packet(nil), n.pkts.fifo[n.pkts.head:]...), n.pkts.heap...)
	if len(inFlight) != pkts {
		t.Fatalf("Pending says %d packets, the queue holds %d", pkts, len(inFlight))
	}
	for _, p := range inFlight {
		if p.tr != nil || p.borrowed {
			t.Fatalf("packet #%d in flight after the verb: train %v, borrowed payload %v", p.seq, p.tr != nil, p.borrowed)
		}
	}
	if n.trains != 0 {
		t.Errorf("%d trains counted in flight", n.trains)
	}
}

// TestGatheredCarrierAgrees: a WRITE whose second packet straddles its
// two SGEs (gathered into the packet's own buffer) on a 100 Mb/s link
// that outlasts the verb; the program then rewrites its buffer. The
// packets still in flight must carry what the buffer held when the verb
// returned, with trains as on the general steps. (A train carried by the
// gathered packet once left one packet aliasing the buffer.)
func TestGatheredCarrierAgrees(t *testing.T) {
	run := func(general bool) string {
		b := newBed(t, Config{Link: LinkConfig{MTU: 9000, Bandwidth: 1e8}})
		b.f.net.general = general
		trace := tapDeliveries(b.f)
		x, y := b.pair(0, 1, qpOpts{mtu: verbs.MTU4096, access: verbs.AccessRemote | verbs.AccessLocalWrite, retry: 7, timeout: 1})
		src, dst := mrOf(b, 0, 1<<20), mrOf(b, 1, 1<<20)
		fill(src.Bytes(), 3)
		sgl := append(sg(src, 0, 4096+100), sg(src, 8192, 400000)...)
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
			SGList: sgl, RemoteAddr: dst.Addr(), RKey: dst.RKey()}})))
		if pkts, _ := b.f.Pending(); pkts < 2 {
			t.Fatalf("%d packets in flight after PostSend; the test wants the WRITE to outlast it", pkts)
		}
		fill(src.Bytes(), 7) // the program reuses its buffer
		var sb strings.Builder
		record(&sb, 0, b.drain(b.cq[0], 1))
		return finish(&sb, b, nil, []verbs.QP{x, y}, []verbs.MR{src, dst}) + trace.String()
	}
	if fast, general := run(false), run(true); fast != general {
		t.Errorf("trains change the outcome:\n%s", firstDiff(fast, general))
	}
}
