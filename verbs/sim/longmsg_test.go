package sim

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestLongMessagesAgree runs long RC messages — WRITEs, SENDs and READs of
// up to 300 KB at path MTUs 256, 1024 and 4096, on three QPs between two
// devices and one in loopback, SENDs that meet no receive (RNR NAK, then
// a retry while other QPs' messages are on the wire), with and without
// faults (retransmits in the middle of a message) — with the data path's
// shortcuts and with the general steps, and wants the same completions
// in order, PSNs, memory, final time and the fabric's counts.
func TestLongMessagesAgree(t *testing.T) {
	for _, mtu := range []verbs.MTU{verbs.MTU256, verbs.MTU1024, verbs.MTU4096} {
		for _, tc := range faultCases() {
			t.Run(fmt.Sprintf("%d/%s", mtu.Bytes(), tc.name), func(t *testing.T) {
				var stats trainCounts
				fast, general := longMessages(t, mtu, tc.rules, false, &stats), longMessages(t, mtu, tc.rules, true, nil)
				if fast != general {
					t.Errorf("the shortcuts change the outcome:\n%s", firstDiff(fast, general))
				}
				if !strings.Contains(fast, "IBV_WC_RNR_RETRY_EXC_ERR") && !strings.Contains(fast, "IBV_WC_RECV") {
					t.Errorf("no receive completed:\n%s", fast)
				}
				// Without faults, long messages go as trains, split and
				// delivered in place (train.go).
				if tc.rules == nil && (stats.made == 0 || stats.split == 0 || stats.inPlace == 0) {
					t.Errorf("trains: %+v", stats)
				}
			})
		}
	}
}

// trainCounts are the fabric's counts of packet trains.
type trainCounts = struct{ made, packets, split, inPlace uint64 }

// longMessages runs the traffic and returns what it did: completions,
// QP states and PSNs, memory, the fabric's counts and every packet
// delivered in order (from the fabric's tap, which turns no shortcut
// off). It stores the train counts in stats, if not nil.
func longMessages(t *testing.T, mtu verbs.MTU, rules []verbs.FaultRule, general bool, stats *trainCounts) string {
	b := newBed(t, Config{Seed: 11, Link: LinkConfig{MTU: 9000}})
	b.f.net.general = general
	trace := tapDeliveries(b.f)
	if stats != nil {
		defer func() { *stats = b.f.net.trainStats }()
	}
	for _, r := range rules {
		if _, err := b.f.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	o := qpOpts{mtu: mtu, access: all, retry: 7, rnrRetry: 7, minRNR: 1, timeout: 8, rdAtomic: 4,
		cap: verbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1}}
	var xs, ys []verbs.QP
	for _, ends := range [][2]int{{0, 1}, {0, 1}, {1, 0}, {0, 0}} {
		x, y := b.pair(ends[0], ends[1], o)
		xs, ys = append(xs, x), append(ys, y)
	}
	const msz = 1 << 20
	mrs := make([]verbs.MR, 2)
	rng := rand.New(rand.NewPCG(11, uint64(mtu)))
	for d := range mrs {
		m, err := b.pd[d].AllocMR(msz, all)
		b.must(err)
		for i := range m.Bytes() {
			m.Bytes()[i] = byte(rng.Uint32())
		}
		mrs[d] = m
	}
	dev := func(q verbs.QP) int {
		for i, x := range append(xs, ys...) {
			if x == q {
				return []int{0, 0, 1, 0, 1, 1, 0, 0}[i]
			}
		}
		return 0
	}
	sge := func(m verbs.MR, off, n int) []verbs.SGE {
		return []verbs.SGE{{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}}
	}
	var sb strings.Builder
	var late []func() // receives posted after other traffic (RNR until then)
	for i := 0; i < 48; i++ {
		k := rng.IntN(len(xs))
		x, y := xs[k], ys[k]
		mx, my := mrs[dev(x)], mrs[dev(y)]
		size := 1 + rng.IntN(300000)
		off, roff := rng.IntN(msz/2-size), msz/2+rng.IntN(msz/2-size)
		wr := verbs.SendWR{WRID: uint64(i), Flags: verbs.SendSignaled, SGList: sge(mx, off, size)}
		switch op := rng.IntN(5); op {
		case 0, 1:
			wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMAWrite, my.Addr()+uint64(roff), my.RKey()
			if op == 1 {
				wr.Opcode, wr.Imm = verbs.WRRDMAWriteWithImm, uint32(i)
				b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(i)}})))
			}
		case 2:
			wr.Opcode, wr.RemoteAddr, wr.RKey = verbs.WRRDMARead, my.Addr()+uint64(roff), my.RKey()
			wr.SGList = sge(mx, roff, size) // lands in the upper half, away from what others read
		default:
			wr.Opcode = verbs.WRSend
			recv := []verbs.RecvWR{{WRID: uint64(i), SGList: sge(my, roff, size)}}
			if op == 4 {
				late = append(late, func() { b.must(first(y.PostRecv(recv))) })
			} else {
				b.must(first(y.PostRecv(recv)))
			}
		}
		b.must(first(x.PostSend([]verbs.SendWR{wr})))
		if len(late) > 0 && rng.IntN(3) == 0 {
			late[0]()
			late = late[1:]
		}
		if i%6 == 5 {
			for d := range b.cq {
				record(&sb, d, b.drain(b.cq[d], 0))
			}
		}
	}
	return finish(&sb, b, late, append(xs, ys...), mrs) + trace.String()
}

// tapDeliveries has f tell every packet delivered (net.tap, which turns
// no shortcut off) and returns where it writes them, each with the state
// its QP's responder and completer are in when it arrives.
func tapDeliveries(f *Fabric) *strings.Builder {
	var trace strings.Builder
	f.net.tap = func(p *packet, why string) {
		fmt.Fprintf(&trace, "#%d %v %s→%s %v psn %d len %d ack %v %s", p.seq, p.at, p.from.name, p.toName(),
			p.hdr.BTH.Opcode, p.hdr.BTH.PSN, len(p.hdr.Payload), p.hdr.BTH.AckReq, why)
		if p.to != nil {
			if q := p.to.qp(p.hdr.BTH.DestQP); q != nil {
				r := &q.resp
				fmt.Fprintf(&trace, " | resp %d psn %d ack %d msn %d op %d va %#x resid %d | comp psn %d req psn %d",
					r.state, r.psn, r.ackPSN, r.msn, r.opcode, r.va, r.resid, q.comp.psn, q.req.psn)
			}
		}
		trace.WriteByte('\n')
	}
	return &trace
}

// finish posts the receives held back, completes everything, and returns
// the completions so far in sb and what the traffic left behind.
func finish(sb *strings.Builder, b *bed, late []func(), qps []verbs.QP, mrs []verbs.MR) string {
	for _, post := range late {
		post()
	}
	for d := range b.cq {
		record(sb, d, b.drain(b.cq[d], 1<<30))
	}
	outcome(sb, b, qps, mrs)
	return sb.String()
}

// outcome writes what traffic left behind: each QP's state, PSNs and
// packets in flight, each MR's contents, the clock, the fabric's counts,
// and each link's counters and reservations.
func outcome(sb *strings.Builder, b *bed, qps []verbs.QP, mrs []verbs.MR) {
	for _, q := range qps {
		a, _, _ := q.Query(verbs.AttrState | verbs.AttrSQPSN | verbs.AttrRQPSN)
		fmt.Fprintf(sb, "qp %#x %v sq %#x rq %#x in flight %d\n", q.Num(), a.State, a.SQPSN, a.RQPSN, q.(*qp).inflight)
	}
	for _, m := range mrs {
		fmt.Fprintf(sb, "mr %#x crc %08x\n", m.LKey(), crc32.ChecksumIEEE(m.Bytes()))
	}
	fmt.Fprintf(sb, "time %v seq %d ord %d timers %d\n", b.f.Now(), b.f.net.seq, b.f.net.pktOrd, b.f.net.timerOrd)
	for i := range b.f.devs {
		s, _ := b.f.LinkStats(i)
		l := &b.f.devs[i].link
		fmt.Fprintf(sb, "link %d %+v busy %v %v %v\n", i, s, l.upBusy, l.downBusy, l.loopBusy)
	}
}
