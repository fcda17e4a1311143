package sim

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// bench is a small test bed: one or two devices, a PD and CQ per device,
// and helpers that connect QPs the way rc_pingpong does.
type bed struct {
	t    testing.TB
	f    *Fabric
	ctx  []verbs.Context
	pd   []verbs.PD
	cq   []verbs.CQ
	gids []verbs.GID
}

func newBed(t testing.TB, cfg Config) *bed {
	t.Helper()
	f := New(cfg)
	b := &bed{t: t, f: f}
	devs, _ := f.Devices()
	for _, d := range devs {
		ctx, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		pd, _ := ctx.AllocPD()
		cq, err := ctx.CreateCQ(verbs.CQInitAttr{CQE: 4096})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := ctx.QueryGID(1, 1)
		b.ctx, b.pd, b.cq, b.gids = append(b.ctx, ctx), append(b.pd, pd), append(b.cq, cq), append(b.gids, g)
	}
	return b
}

func (b *bed) must(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

// qpOpts are the attributes a connected QP gets.
type qpOpts struct {
	typ       verbs.QPType
	cap       verbs.QPCap
	mtu       verbs.MTU
	access    verbs.Access
	timeout   uint8
	retry     uint8
	rnrRetry  uint8
	minRNR    uint8
	rdAtomic  uint8
	qkey      uint32
	sqSigAll  bool
	srq       verbs.SRQ
	sendCQ    verbs.CQ
	recvCQ    verbs.CQ
	startPSN  uint32
	noConnect bool
}

func (o *qpOpts) defaults() {
	if o.typ == 0 {
		o.typ = verbs.QPTypeRC
	}
	if o.cap == (verbs.QPCap{}) {
		o.cap = verbs.QPCap{MaxSendWR: 256, MaxRecvWR: 256, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64}
	}
	if o.mtu == 0 {
		o.mtu = verbs.MTU1024
	}
	if o.timeout == 0 {
		o.timeout = 14
	}
	if o.rdAtomic == 0 {
		o.rdAtomic = 16
	}
	if o.minRNR == 0 {
		o.minRNR = 12
	}
	if o.qkey == 0 {
		o.qkey = 0x11111111
	}
}

// qp creates a QP on device d.
func (b *bed) qp(d int, o qpOpts) verbs.QP {
	b.t.Helper()
	o.defaults()
	scq, rcq := o.sendCQ, o.recvCQ
	if scq == nil {
		scq = b.cq[d]
	}
	if rcq == nil {
		rcq = b.cq[d]
	}
	q, err := b.pd[d].CreateQP(verbs.QPInitAttr{Type: o.typ, SendCQ: scq, RecvCQ: rcq, Cap: o.cap, SQSigAll: o.sqSigAll, SRQ: o.srq})
	b.must(err)
	return q
}

// connect walks q (on device d) to RTS, talking to peer (on device pd).
func (b *bed) connect(q verbs.QP, d int, peer verbs.QP, pdev int, o qpOpts) {
	b.t.Helper()
	o.defaults()
	switch q.Type() {
	case verbs.QPTypeUD:
		b.must(q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: o.qkey}, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
		b.must(q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
		b.must(q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, SQPSN: o.startPSN}, verbs.AttrState|verbs.AttrSQPSN))
		return
	}
	b.must(q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: o.access},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags))
	av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: b.gids[pdev], SGIDIndex: 1, HopLimit: 1}}
	rtr := &verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: o.mtu, DestQPN: peer.Num(), RQPSN: o.startPSN,
		MaxDestRdAtomic: o.rdAtomic, MinRNRTimer: o.minRNR}
	m := verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
	if q.Type() == verbs.QPTypeRC {
		m |= verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	}
	b.must(q.Modify(rtr, m))
	rts := &verbs.QPAttr{State: verbs.QPSRTS, Timeout: o.timeout, RetryCnt: o.retry, RNRRetry: o.rnrRetry, SQPSN: o.startPSN, MaxRdAtomic: o.rdAtomic}
	m = verbs.AttrState | verbs.AttrSQPSN
	if q.Type() == verbs.QPTypeRC {
		m |= verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrMaxQPRdAtomic
	}
	b.must(q.Modify(rts, m))
}

// pair creates two connected QPs: a on device da, b on device db.
func (b *bed) pair(da, db int, o qpOpts) (verbs.QP, verbs.QP) {
	b.t.Helper()
	x, y := b.qp(da, o), b.qp(db, o)
	b.connect(x, da, y, db, o)
	b.connect(y, db, x, da, o)
	return x, y
}

// drain polls cq until it is empty and it has got want completions or the
// fabric has nothing left to do.
func (b *bed) drain(cq verbs.CQ, want int) []verbs.WC {
	var out []verbs.WC
	wc := make([]verbs.WC, 64)
	for tries := 0; tries < 100000; tries++ {
		n, err := cq.Poll(wc)
		b.must(err)
		out = append(out, wc[:n]...)
		if want > 0 && len(out) >= want {
			break
		}
		if n == 0 {
			if want == 0 {
				break
			}
			if p, tm := b.f.Pending(); p == 0 && tm == 0 {
				break
			}
		}
	}
	return out
}

// workload runs a deterministic mix of RC, UC and UD traffic on two
// devices (and loopback), with the given fault rules, and returns a
// transcript of every completion, the final PSNs and a checksum of every
// MR's bytes.
func workload(t testing.TB, f *Fabric, rules []verbs.FaultRule, n int) string {
	b := &bed{t: t, f: f}
	devs, _ := f.Devices()
	for _, d := range devs {
		ctx, _ := d.Open()
		pd, _ := ctx.AllocPD()
		cq, _ := ctx.CreateCQ(verbs.CQInitAttr{CQE: 32767})
		g, _ := ctx.QueryGID(1, 1)
		b.ctx, b.pd, b.cq, b.gids = append(b.ctx, ctx), append(b.pd, pd), append(b.cq, cq), append(b.gids, g)
	}
	for _, r := range rules {
		if _, err := f.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	o := qpOpts{access: all, retry: 7, rnrRetry: 7, timeout: 8}
	rc1, rc2 := b.pair(0, 1, o)
	rcl1, rcl2 := b.pair(0, 0, o)
	o.typ = verbs.QPTypeUC
	uc1, uc2 := b.pair(0, 1, o)
	ud1, ud2 := b.qp(0, qpOpts{typ: verbs.QPTypeUD}), b.qp(1, qpOpts{typ: verbs.QPTypeUD})
	b.connect(ud1, 0, nil, 1, qpOpts{})
	b.connect(ud2, 1, nil, 0, qpOpts{})
	ah, err := b.pd[0].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: b.gids[1], SGIDIndex: 1, HopLimit: 1}})
	b.must(err)
	const msz = 1 << 18
	mr := func(d int) verbs.MR {
		m, err := b.pd[d].AllocMR(msz, all)
		b.must(err)
		return m
	}
	m0, m1, ml := mr(0), mr(1), mr(0)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range m0.Bytes() {
		m0.Bytes()[i] = byte(rng.Uint32())
		ml.Bytes()[i] = byte(rng.Uint32())
	}
	var sb strings.Builder
	sge := func(m verbs.MR, off, n int) []verbs.SGE {
		return []verbs.SGE{{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}}
	}
	for i := 0; i < n; i++ {
		size := 1 + rng.IntN(6000)
		off := rng.IntN(msz/2 - size)
		roff := msz/2 + rng.IntN(msz/2-size-8192)
		switch rng.IntN(8) {
		case 0:
			b.must(first(rc2.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sge(m1, roff, size)}})))
			b.must(first(rc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSendWithImm, Imm: uint32(i), Flags: verbs.SendSignaled, SGList: sge(m0, off, size)}})))
		case 1:
			b.must(first(rc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: sge(m0, off, size),
				RemoteAddr: m1.Addr() + uint64(roff), RKey: m1.RKey()}})))
		case 2:
			b.must(first(rc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: sge(m0, roff, size),
				RemoteAddr: m1.Addr() + uint64(off), RKey: m1.RKey()}})))
		case 3:
			a := uint64(rng.IntN(msz/16)) * 8
			b.must(first(rc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: sge(m0, msz-8, 8),
				RemoteAddr: m1.Addr() + a, RKey: m1.RKey(), CompareAdd: uint64(i)}})))
		case 4:
			b.must(first(rcl2.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sge(ml, roff, size)}})))
			b.must(first(rcl1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge(ml, off, size)}})))
		case 5:
			// Receives as large as any message: rxe's UC reuses the WQE of
			// a message it lost for the next one.
			b.must(first(uc2.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sge(m1, msz-8192, 6000)}})))
			b.must(first(uc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge(m0, off, size)}})))
		case 6:
			n := min(size, 1024)
			b.must(first(ud2.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sge(m1, msz-2048, 1024+40)}})))
			b.must(first(ud1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sge(m0, off, n),
				AH: ah, RemoteQPN: ud2.Num(), RemoteQKey: 0x11111111}})))
		case 7:
			b.must(first(rc1.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRRDMAWriteWithImm, Imm: 7, Flags: verbs.SendSignaled, SGList: sge(m0, off, size),
				RemoteAddr: m1.Addr() + uint64(roff), RKey: m1.RKey()}})))
			b.must(first(rc2.PostRecv([]verbs.RecvWR{{WRID: uint64(i)}})))
		}
		if i%16 == 15 {
			for d := range b.cq {
				record(&sb, d, b.drain(b.cq[d], 0))
			}
		}
	}
	for d := range b.cq {
		record(&sb, d, b.drain(b.cq[d], 1<<30))
	}
	for _, q := range []verbs.QP{rc1, rc2, rcl1, rcl2, uc1, uc2, ud1, ud2} {
		a, _, _ := q.Query(verbs.AttrState | verbs.AttrSQPSN | verbs.AttrRQPSN)
		fmt.Fprintf(&sb, "qp %#x %v sq %#x rq %#x\n", q.Num(), a.State, a.SQPSN, a.RQPSN)
	}
	for _, m := range []verbs.MR{m0, m1, ml} {
		fmt.Fprintf(&sb, "mr %#x crc %08x\n", m.LKey(), crc32.ChecksumIEEE(m.Bytes()))
	}
	fmt.Fprintf(&sb, "time %v\n", f.Now())
	return sb.String()
}

func first(_ int, err error) error { return err }

func record(sb *strings.Builder, d int, wcs []verbs.WC) {
	for _, wc := range wcs {
		fmt.Fprintf(sb, "dev%d %d %v %v %d %#x %#x\n", d, wc.WRID, wc.Status, wc.Opcode, wc.ByteLen, wc.QPNum, wc.Imm)
	}
}

// agreementSize is how many operations the agreement tests run.
func agreementSize() int {
	if testing.Short() {
		return 200
	}
	return 600
}

// faultCases are the two ways the agreement tests run their traffic:
// clean, and through drops, duplicates, reorders and delays.
func faultCases() []struct {
	name  string
	rules []verbs.FaultRule
} {
	return []struct {
		name  string
		rules []verbs.FaultRule
	}{{"clean", nil}, {"faults", []verbs.FaultRule{
		{Action: verbs.FaultDrop, Probability: 0.05},
		{Action: verbs.FaultDuplicate, Probability: 0.03},
		{Action: verbs.FaultReorder, Probability: 0.03},
		{Action: verbs.FaultDelay, Probability: 0.02, Delay: 30 * time.Microsecond},
	}}}
}

// TestEncodedAndDecodedAgree runs the same traffic three ways — packets
// decoded in process, every packet encoded to RoCEv2 bytes and decoded by
// the receiver, and encoded because an observer watches — with and
// without faults, and wants identical completions, PSNs and memory.
func TestEncodedAndDecodedAgree(t *testing.T) {
	n := agreementSize()
	for _, tc := range faultCases() {
		t.Run(tc.name, func(t *testing.T) {
			plain := New(Config{Seed: 3})
			enc := New(Config{Seed: 3})
			enc.net.alwaysEncode = true
			obs := New(Config{Seed: 3})
			packets := 0
			cancel := obs.ObservePackets(func(e verbs.PacketEvent) {
				if e.Verdict == "sent" {
					packets++
				}
			})
			defer cancel()
			a := workload(t, plain, tc.rules, n)
			b := workload(t, enc, tc.rules, n)
			c := workload(t, obs, tc.rules, n)
			if a != b {
				t.Errorf("decoded and encoded runs differ:\n%s", firstDiff(a, b))
			}
			if a != c {
				t.Errorf("decoded and observed runs differ:\n%s", firstDiff(a, c))
			}
			if packets == 0 {
				t.Errorf("the observer saw no packet")
			}
			if !strings.Contains(a, "IBV_WC_SUCCESS") {
				t.Errorf("no successful completion:\n%s", a)
			}
		})
	}
}

// TestShortcutsAgree runs the same traffic with the data path's shortcuts
// for the usual case (a message's next packet sent without choosing the WQE
// again, the responder's steps for a MIDDLE packet in one go, hdr_check in
// one test, queueing a packet no rule or observer concerns, not running an
// engine that would find nothing to do) and with every packet and run
// taking the general steps, with and without faults, and wants the same
// completions, PSNs, memory and final time, and the same packets — each
// one's number, time, ends, headers and fate — in the same order.
func TestShortcutsAgree(t *testing.T) {
	n := agreementSize()
	run := func(rules []verbs.FaultRule, general, observe bool) (string, string) {
		f := New(Config{Seed: 5})
		f.net.general = general
		var trace strings.Builder
		if observe {
			defer f.ObservePackets(func(e verbs.PacketEvent) {
				fmt.Fprintf(&trace, "#%d %v %s→%s %s %s\n", e.Seq, e.Time, e.From, e.To, e.Summary, e.Verdict)
			})()
		}
		out := workload(t, f, rules, n)
		// The fabric's own counts: packets handed over, queued, timers
		// armed, and what crossed each link.
		out += fmt.Sprintf("seq %d ord %d timers %d\n", f.net.seq, f.net.pktOrd, f.net.timerOrd)
		for i := range f.devs {
			s, _ := f.LinkStats(i)
			out += fmt.Sprintf("link %d %+v\n", i, s)
		}
		return out, trace.String()
	}
	for _, tc := range faultCases() {
		t.Run(tc.name, func(t *testing.T) {
			fast, _ := run(tc.rules, false, false)
			slow, _ := run(tc.rules, true, false)
			if fast != slow {
				t.Errorf("the shortcuts change the outcome:\n%s", firstDiff(fast, slow))
			}
			fastObs, fastTrace := run(tc.rules, false, true)
			slowObs, slowTrace := run(tc.rules, true, true)
			if fastObs != slowObs || fastObs != fast {
				t.Errorf("observed runs differ:\n%s\n%s", firstDiff(fastObs, slowObs), firstDiff(fast, fastObs))
			}
			if fastTrace != slowTrace {
				t.Errorf("the shortcuts change the packets:\n%s", firstDiff(fastTrace, slowTrace))
			}
			if strings.Count(fastTrace, "\n") < n {
				t.Errorf("the trace has only %d packets", strings.Count(fastTrace, "\n"))
			}
		})
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}

// TestDeterministic: the same calls and seed give the same transcript.
func TestDeterministic(t *testing.T) {
	rules := []verbs.FaultRule{{Action: verbs.FaultDrop, Probability: 0.1}, {Action: verbs.FaultDuplicate, Probability: 0.05}}
	a := workload(t, New(Config{Seed: 9}), rules, 150)
	b := workload(t, New(Config{Seed: 9}), rules, 150)
	if a != b {
		t.Errorf("two runs differ:\n%s", firstDiff(a, b))
	}
	_ = binary.LittleEndian
}
