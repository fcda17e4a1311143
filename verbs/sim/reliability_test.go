package sim

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// The reliability tests of issue 4: RC delivers every message exactly
// once and in order through loss, duplication and reordering; UC loses
// only whole messages; UD never delivers part of a datagram; and a
// model-based run of random legal and illegal operations keeps the
// invariants of the verbs API. `go test -short` shrinks them; under the
// race detector (which slows the simulator about tenfold) the full sizes
// are left to the Makefile's non-race `go test -run Reliability` step.

// reliabilitySize picks the size of a reliability run.
func reliabilitySize(t *testing.T, full, short, race int) int {
	switch {
	case testing.Short():
		return short
	case raceEnabled:
		return race
	}
	return full
}

// message returns the bytes of message i: a header (index, size, CRC of
// the rest) then bytes drawn from the index. Every message is different.
func message(buf []byte, i, size int) []byte {
	b := buf[:size]
	r := rand.New(rand.NewPCG(uint64(i), 0x6d7367))
	for k := range b {
		b[k] = byte(r.Uint32())
	}
	if size >= 12 {
		binary.LittleEndian.PutUint32(b[0:], uint32(i))
		binary.LittleEndian.PutUint32(b[4:], uint32(size))
		binary.LittleEndian.PutUint32(b[8:], crc32.ChecksumIEEE(b[12:]))
	}
	return b
}

// lossy are the fault rules of the RC reliability test.
var lossy = []verbs.FaultRule{
	{Action: verbs.FaultDrop, Probability: 0.10},
	{Action: verbs.FaultDuplicate, Probability: 0.05},
	{Action: verbs.FaultReorder, Probability: 0.05},
}

// TestReliabilityRC: 10,000 messages of 1 B to 64 KiB over RC with 10%
// of packets dropped, 5% duplicated and 5% reordered (ACKs and NAKs
// included) arrive exactly once, in order, byte for byte.
func TestReliabilityRC(t *testing.T) {
	n := reliabilitySize(t, 10000, 400, 1000)
	const slots, maxSize = 32, 64 << 10
	b := newBed(t, Config{Seed: 11})
	for _, r := range lossy {
		if _, err := b.f.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	scq, _ := b.ctx[0].CreateCQ(verbs.CQInitAttr{CQE: 256})
	rcq, _ := b.ctx[1].CreateCQ(verbs.CQInitAttr{CQE: 256})
	o := qpOpts{cap: verbs.QPCap{MaxSendWR: slots, MaxRecvWR: slots, MaxSendSGE: 1, MaxRecvSGE: 1},
		retry: 7, rnrRetry: 7, timeout: 8, sendCQ: scq, recvCQ: scq}
	x := b.qp(0, o)
	o.sendCQ, o.recvCQ = rcq, rcq
	y := b.qp(1, o)
	b.connect(x, 0, y, 1, o)
	b.connect(y, 1, x, 0, o)
	src, dst := mrOf(b, 0, slots*maxSize), mrOf(b, 1, slots*maxSize)
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 1 + rng.IntN(maxSize)
	}
	want := make([]byte, maxSize)
	posted, sent, received := 0, 0, 0
	wc := make([]verbs.WC, 64)
	for r := 0; r < slots; r++ {
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(r), SGList: sg(dst, r*maxSize, maxSize)}})))
	}
	for guard := 0; received < n; guard++ {
		if guard > 50*n {
			t.Fatalf("stuck: %d of %d received, %d sent, %d completed", received, n, posted, sent)
		}
		for posted < n && posted-sent < slots/2 {
			i := posted
			slot := i % slots
			message(src.Bytes()[slot*maxSize:], i, sizes[i])
			b.must(first(x.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
				SGList: sg(src, slot*maxSize, sizes[i])}})))
			posted++
		}
		k, err := scq.Poll(wc)
		b.must(err)
		for _, w := range wc[:k] {
			if w.Status != verbs.WCSuccess || w.WRID != uint64(sent) {
				t.Fatalf("send completion %+v, want wr_id %d success", w, sent)
			}
			sent++
		}
		k, err = rcq.Poll(wc)
		b.must(err)
		for _, w := range wc[:k] {
			i := received
			slot := int(w.WRID)
			if w.Status != verbs.WCSuccess || slot != i%slots || w.ByteLen != uint32(sizes[i]) {
				t.Fatalf("receive %d: %+v, want slot %d, %d bytes", i, w, i%slots, sizes[i])
			}
			got := dst.Bytes()[slot*maxSize : slot*maxSize+sizes[i]]
			if string(got) != string(message(want, i, sizes[i])) {
				t.Fatalf("receive %d: bytes differ", i)
			}
			received++
			b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(slot), SGList: sg(dst, slot*maxSize, maxSize)}})))
		}
	}
	for sent < n {
		k, _ := scq.Poll(wc)
		for _, w := range wc[:k] {
			if w.Status != verbs.WCSuccess || w.WRID != uint64(sent) {
				t.Fatalf("send completion %+v", w)
			}
			sent++
		}
	}
	if k, _ := rcq.Poll(wc); k != 0 {
		t.Errorf("extra receive completions %+v", wc[:k])
	}
	hits := 0
	for _, r := range b.f.Faults() {
		hits += r.Hits
	}
	t.Logf("%d messages, %d faults, %v of virtual time", n, hits, b.f.Now())
}

// TestReliabilityUC: over UC, with drops, duplicates and reordering, every
// message that completes is whole and intact; lost ones are simply not
// there.
func TestReliabilityUC(t *testing.T) {
	n := reliabilitySize(t, 5000, 300, 1000)
	const slots, maxSize = 16, 16 << 10
	b := newBed(t, Config{Seed: 12})
	for _, r := range lossy {
		if _, err := b.f.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	o := qpOpts{typ: verbs.QPTypeUC, cap: verbs.QPCap{MaxSendWR: slots, MaxRecvWR: slots, MaxSendSGE: 1, MaxRecvSGE: 1}}
	x, y := b.pair(0, 1, o)
	src, dst := mrOf(b, 0, slots*maxSize), mrOf(b, 1, slots*maxSize)
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 12 + rng.IntN(maxSize-12)
	}
	for r := 0; r < slots; r++ {
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(r), SGList: sg(dst, r*maxSize, maxSize)}})))
	}
	wc := make([]verbs.WC, 64)
	delivered := 0
	want := make([]byte, maxSize)
	check := func() {
		k, err := b.cq[1].Poll(wc)
		b.must(err)
		for _, w := range wc[:k] {
			slot := int(w.WRID)
			if w.Status != verbs.WCSuccess {
				t.Fatalf("receive %+v", w)
			}
			got := dst.Bytes()[slot*maxSize : slot*maxSize+int(w.ByteLen)]
			if len(got) < 12 {
				t.Fatalf("a %d-byte receive: part of a message", len(got))
			}
			i := int(binary.LittleEndian.Uint32(got))
			if i >= n || int(w.ByteLen) != sizes[i] || string(got) != string(message(want, i, sizes[i])) {
				t.Fatalf("receive of %d bytes is not a whole message (claims %d)", w.ByteLen, i)
			}
			delivered++
			b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(slot), SGList: sg(dst, slot*maxSize, maxSize)}})))
		}
	}
	for i := 0; i < n; i++ {
		slot := i % slots
		message(src.Bytes()[slot*maxSize:], i, sizes[i])
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
			SGList: sg(src, slot*maxSize, sizes[i])}})))
		for {
			k, _ := b.cq[0].Poll(wc)
			if k > 0 {
				if wc[0].Status != verbs.WCSuccess || wc[0].WRID != uint64(i) {
					t.Fatalf("send completion %+v", wc[0])
				}
				break
			}
		}
		check()
	}
	check()
	if delivered == 0 || delivered > n+n/10 {
		t.Errorf("%d of %d messages delivered", delivered, n)
	}
	t.Logf("%d of %d messages delivered whole", delivered, n)
}

// TestReliabilityUD: datagrams are delivered whole or not at all, through
// drops, duplicates, reordering and corruption; datagrams above the port
// MTU complete successfully and are never delivered.
func TestReliabilityUD(t *testing.T) {
	n := reliabilitySize(t, 10000, 500, 2000)
	const slots, slot = 32, 2048
	b := newBed(t, Config{Seed: 13})
	for _, r := range append(lossy, verbs.FaultRule{Action: verbs.FaultCorrupt, Probability: 0.05}) {
		if _, err := b.f.AddFault(r); err != nil {
			t.Fatal(err)
		}
	}
	o := qpOpts{typ: verbs.QPTypeUD, cap: verbs.QPCap{MaxSendWR: slots, MaxRecvWR: slots, MaxSendSGE: 1, MaxRecvSGE: 1}}
	x, y := b.qp(0, o), b.qp(1, o)
	b.connect(x, 0, nil, 1, o)
	b.connect(y, 1, nil, 0, o)
	ah, err := b.pd[0].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: b.gids[1], SGIDIndex: 1}})
	b.must(err)
	src, dst := mrOf(b, 0, 2048), mrOf(b, 1, slots*slot)
	rng := rand.New(rand.NewPCG(5, 6))
	for r := 0; r < slots; r++ {
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(r), SGList: sg(dst, r*slot, slot)}})))
	}
	wc := make([]verbs.WC, 64)
	want := make([]byte, 2048)
	delivered := 0
	for i := 0; i < n; i++ {
		size := 12 + rng.IntN(1100) // some above the 1024-byte port MTU
		message(src.Bytes(), i, size)
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
			SGList: sg(src, 0, size), AH: ah, RemoteQPN: y.Num(), RemoteQKey: 0x11111111}})))
		if k, _ := b.cq[0].Poll(wc); k != 1 || wc[0].Status != verbs.WCSuccess {
			t.Fatalf("send %d: %+v", i, wc[:k])
		}
		k, _ := b.cq[1].Poll(wc)
		for _, w := range wc[:k] {
			if w.Status != verbs.WCSuccess {
				t.Fatalf("receive %+v", w)
			}
			s := int(w.WRID)
			got := dst.Bytes()[s*slot+40 : s*slot+int(w.ByteLen)]
			j := int(binary.LittleEndian.Uint32(got))
			if len(got) > 1024 || len(got) != int(binary.LittleEndian.Uint32(got[4:])) || string(got) != string(message(want, j, len(got))) {
				t.Fatalf("receive of %d bytes is not a whole datagram", len(got))
			}
			delivered++
			b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(s), SGList: sg(dst, s*slot, slot)}})))
		}
	}
	t.Logf("%d of %d datagrams delivered whole", delivered, n)
	if delivered == 0 {
		t.Errorf("nothing delivered")
	}
}

// TestReliabilityModel runs 10^6 random operations — legal and illegal
// verbs, fabric steps, faults, resets, destroys — and checks, throughout
// and at the end, that nothing panics, that every work request completes
// at most once (exactly once when its QP ends in ERR and it was signaled
// or a receive), that after a QP's first error every later completion of
// it is a flush, and that no byte outside the ranges the work requests
// named ever changes.
func TestReliabilityModel(t *testing.T) {
	n := reliabilitySize(t, 1_000_000, 20_000, 100_000)
	for seed := int64(1); n > 0; seed++ {
		m := min(n, 100_000)
		runModel(t, seed, m)
		n -= m
	}
}

// wrRec is what the model knows of one posted work request.
type wrRec struct {
	q        *modelQP
	recv     bool
	signaled bool
	srq      bool
	gen      int // the QP's incarnation when posted
	done     int
}

type modelQP struct {
	qp       verbs.QP
	dev      int
	cq       verbs.CQ
	peer     *modelQP
	gen      int // bumped at RESET and destroy: older WRs may vanish
	failed   bool
	dead     bool
	hasSRQ   bool
	srq      verbs.SRQ
	typ      verbs.QPType
	errSeen  bool // a non-success completion of this incarnation was seen
	firstErr verbs.WC
}

type modelMR struct {
	mr    verbs.MR
	dev   int
	init  []byte
	named []bool // bytes some work request named as a place to write
	dead  []byte // contents at dereg
}

func runModel(t *testing.T, seed int64, nops int) { modelRun(t, seed, nops, false) }

// TestModelShortcutsAgree runs the model's operations — every transport,
// SRQs, RNR, errors, resets, faults, illegal calls — with the data path's
// shortcuts and with every packet taking the general steps (net.general),
// and wants the same completions in the same order, the same memory and
// the same virtual time.
func TestModelShortcutsAgree(t *testing.T) {
	n := reliabilitySize(t, 100_000, 10_000, 20_000)
	for seed := int64(1); seed <= 2; seed++ {
		fast, general := modelRun(t, seed, n/2, false), modelRun(t, seed, n/2, true)
		if fast != general {
			t.Errorf("seed %d: the shortcuts change the outcome: %s, general steps: %s", seed, fast, general)
		}
	}
}

// modelRun runs the model and returns a digest of what happened: a
// checksum of every completion in order and of the memory, and the
// virtual time at the end.
func modelRun(t *testing.T, seed int64, nops int, general bool) string {
	digest := crc32.NewIEEE()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("seed %d: panic: %v", seed, r)
		}
	}()
	r := rand.New(rand.NewPCG(uint64(seed), 99))
	b := newBed(t, Config{Seed: seed})
	b.f.net.general = general
	var (
		qps  []*modelQP
		mrs  []*modelMR
		wrs  = map[uint64]*wrRec{}
		next uint64
	)
	for d := 0; d < 2; d++ {
		for k := 0; k < 4; k++ {
			size := 4096 << r.IntN(4)
			acc := verbs.AccessLocalWrite
			switch r.IntN(4) {
			case 0:
				acc |= verbs.AccessRemote
			case 1:
				acc |= verbs.AccessRemoteWrite
			case 2:
				acc |= verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
			}
			if r.IntN(12) == 0 {
				acc = 0 // not even locally writable
			}
			m, err := b.pd[d].AllocMR(size, acc)
			b.must(err)
			for i := range m.Bytes() {
				m.Bytes()[i] = byte(r.Uint32())
			}
			mrs = append(mrs, &modelMR{mr: m, dev: d, init: append([]byte(nil), m.Bytes()...), named: make([]bool, size)})
		}
	}
	srqs := make([]verbs.SRQ, 2)
	for d := range srqs {
		s, err := b.pd[d].CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 64, MaxSGE: 2, SRQLimit: 4}})
		b.must(err)
		srqs[d] = s
	}
	types := []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD}
	byNum := map[int]*modelQP{}
	newQP := func(d int, typ verbs.QPType, useSRQ bool) *modelQP {
		o := qpOpts{typ: typ, cap: verbs.QPCap{MaxSendWR: 32, MaxRecvWR: 32, MaxSendSGE: 3, MaxRecvSGE: 3, MaxInlineData: 64},
			retry: uint8(r.IntN(8)), rnrRetry: uint8(r.IntN(8)), timeout: uint8(4 + r.IntN(8)), minRNR: uint8(1 + r.IntN(14)),
			rdAtomic: uint8(r.IntN(5)), mtu: verbs.MTU(1 + r.IntN(3)), sqSigAll: r.IntN(4) == 0}
		if useSRQ {
			o.srq = srqs[d]
		}
		mq := &modelQP{qp: b.qp(d, o), dev: d, cq: b.cq[d], typ: typ, hasSRQ: useSRQ, srq: o.srq}
		byNum[d<<24|int(mq.qp.Num())] = mq
		return mq
	}
	connect := func(x, y *modelQP) {
		o := qpOpts{retry: uint8(r.IntN(8)), rnrRetry: uint8(r.IntN(8)), timeout: uint8(4 + r.IntN(8)), minRNR: uint8(1 + r.IntN(14)),
			rdAtomic: uint8(r.IntN(5)), mtu: verbs.MTU(1 + r.IntN(3))}
		switch r.IntN(8) {
		case 0:
			o.access = verbs.AccessRemoteWrite
		case 1:
			o.access = verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
		case 2:
		default:
			o.access = verbs.AccessRemote
		}
		if r.IntN(4) != 0 {
			o.retry, o.rnrRetry = 7, 7
		}
		b.connect(x.qp, x.dev, y.qp, y.dev, o)
		x.peer = y
	}
	for k := 0; k < 6; k++ {
		typ := types[r.IntN(len(types))]
		da, db := r.IntN(2), r.IntN(2)
		x, y := newQP(da, typ, r.IntN(4) == 0), newQP(db, typ, r.IntN(4) == 0)
		connect(x, y)
		connect(y, x)
		qps = append(qps, x, y)
	}
	ahs := make([]verbs.AH, 2)
	for d := range ahs {
		a, err := b.pd[d].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: b.gids[1-d], SGIDIndex: 1}})
		b.must(err)
		ahs[d] = a
	}
	// ranges: a legal range in an MR of device d, or an illegal one.
	pickMR := func(d int) *modelMR {
		for {
			m := mrs[r.IntN(len(mrs))]
			if m.dev == d || r.IntN(8) == 0 {
				return m
			}
		}
	}
	span := func(m *modelMR, most int) (uint64, int) {
		l := len(m.init)
		n := r.IntN(min(l, most)) + 1
		if r.IntN(5) == 0 {
			n = r.IntN(17)
		}
		off := r.IntN(l - n + 1)
		if r.IntN(60) == 0 {
			off = l - n/2 // crosses the end
		}
		return m.mr.Addr() + uint64(off), n
	}
	mark := func(addr uint64, n int) {
		for _, m := range mrs {
			a := m.mr.Addr()
			l := uint64(len(m.init))
			if addr+uint64(n) <= a || addr >= a+l {
				continue
			}
			from, to := max(addr, a), min(addr+uint64(n), a+l)
			for i := from; i < to; i++ {
				m.named[i-a] = true
			}
		}
	}
	sges := func(d int, write bool, max, most int) []verbs.SGE {
		k := r.IntN(max + 1)
		if write && k == 0 && r.IntN(8) != 0 {
			k = 1
		}
		out := make([]verbs.SGE, k)
		for i := range out {
			m := pickMR(d)
			addr, n := span(m, most)
			key := m.mr.LKey()
			if r.IntN(50) == 0 {
				key ^= 0x100 // another index: a bad lkey
			}
			out[i] = verbs.SGE{Addr: addr, Length: uint32(n), LKey: key}
			if write {
				mark(addr, n)
			}
		}
		return out
	}
	var pollAll func()
	// quiesce stops the fabric (step mode: polling an empty CQ lets no time
	// pass) and polls every CQ, so that what completes next belongs to what
	// the model does next; it returns a function that restores the mode.
	quiesce := func() func() {
		mode := b.f.DeliveryMode()
		b.f.SetDeliveryMode(verbs.DeliverStep)
		pollAll()
		return func() { b.f.SetDeliveryMode(mode) }
	}
	reconnect := func(q *modelQP) {
		defer quiesce()()
		// From an SQD still draining only ERR is allowed (rxe_qp_chk_attr).
		_ = q.qp.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState)
		pollAll() // the flushes of this incarnation
		b.must(q.qp.Modify(&verbs.QPAttr{State: verbs.QPSReset}, verbs.AttrState))
		q.gen++
		q.errSeen = false
		if q.typ == verbs.QPTypeUD {
			b.connect(q.qp, q.dev, nil, 0, qpOpts{})
		} else {
			connect(q, q.peer)
		}
	}
	alive := func() *modelQP {
		for tries := 0; tries < 10; tries++ {
			q := qps[r.IntN(len(qps))]
			if q.dead {
				continue
			}
			if q.errSeen && r.IntN(2) == 0 && (q.peer != nil || q.typ == verbs.QPTypeUD) {
				reconnect(q)
			}
			return q
		}
		return nil
	}
	stats := map[verbs.WCStatus]int{}
	record := func(wc verbs.WC) {
		fmt.Fprintf(digest, "%+v\n", wc)
		stats[wc.Status]++
		rec := wrs[wc.WRID]
		if rec == nil {
			t.Fatalf("seed %d: completion for a work request never posted: %+v", seed, wc)
		}
		rec.done++
		if rec.done > 1 {
			t.Fatalf("seed %d: work request %d completed twice: %+v", seed, wc.WRID, wc)
		}
		q := rec.q
		if rec.srq {
			// Any QP of the SRQ may have taken it: the one that completed it.
			q = byNum[q.dev<<24|int(wc.QPNum)]
			if q == nil {
				t.Fatalf("seed %d: SRQ completion from unknown QP %+v", seed, wc)
			}
		} else if rec.gen != q.gen {
			return
		}
		if q.errSeen && wc.Status != verbs.WCWRFlushErr {
			t.Fatalf("seed %d: after %v, %v QP %#x (srq %v) completed %d (recv %v) with %v, not a flush",
				seed, q.firstErr, q.typ, q.qp.Num(), q.hasSRQ, wc.WRID, rec.recv, wc.Status)
		}
		// A UC or UD QP with an SRQ fails a receive (class D and E:
		// REM_ACCESS_ERR, REM_INV_REQ_ERR) without going to ERR
		// (rxe_resp.c); every other error takes the QP to ERR.
		classDE := rec.recv && rec.srq && q.typ != verbs.QPTypeRC &&
			(wc.Status == verbs.WCRemAccessErr || wc.Status == verbs.WCRemInvReqErr)
		if wc.Status != verbs.WCSuccess && !classDE && !q.errSeen {
			q.errSeen = true
			q.firstErr = wc
		}
		if !rec.recv && !rec.signaled && wc.Status == verbs.WCSuccess {
			t.Fatalf("seed %d: an unsignaled send completed successfully: %+v", seed, wc)
		}
	}
	wcs := make([]verbs.WC, 64)
	pollAll = func() {
		for d := 0; d < 2; d++ {
			for {
				k, err := b.cq[d].Poll(wcs)
				b.must(err)
				for _, w := range wcs[:k] {
					record(w)
				}
				if k < len(wcs) {
					break
				}
			}
		}
	}
	opcodes := []verbs.WROpcode{verbs.WRSend, verbs.WRSend, verbs.WRSendWithImm, verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm,
		verbs.WRRDMARead, verbs.WRAtomicCmpAndSwp, verbs.WRAtomicFetchAndAdd, verbs.WRSendWithInv, verbs.WRLocalInv, verbs.WROpcode(10), verbs.WROpcode(11)}
	for op := 0; op < nops; op++ {
		switch k := r.IntN(100); {
		case k < 35: // post send
			q := alive()
			if q == nil {
				continue
			}
			var list []verbs.SendWR
			for c := r.IntN(3) + 1; c > 0; c-- {
				next++
				opc := opcodes[r.IntN(len(opcodes))]
				if r.IntN(10) != 0 {
					// Mostly what the QP type can do.
					switch q.typ {
					case verbs.QPTypeRC:
						opc = opcodes[r.IntN(8)]
					case verbs.QPTypeUC:
						opc = opcodes[r.IntN(5)]
					default:
						opc = opcodes[r.IntN(3)]
					}
				}
				wr := verbs.SendWR{WRID: next, Opcode: opc, Imm: r.Uint32()}
				if r.IntN(3) != 0 {
					wr.Flags |= verbs.SendSignaled
				}
				if r.IntN(10) == 0 {
					wr.Flags |= verbs.SendFence
				}
				if r.IntN(8) == 0 {
					wr.Flags |= verbs.SendSolicited
				}
				writesLocal := opc == verbs.WRRDMARead || opc == verbs.WROpcode(11) || opc.IsAtomic()
				wr.SGList = sges(q.dev, writesLocal, 2, 1500)
				if opc.IsAtomic() && r.IntN(4) != 0 {
					m := pickMR(q.dev)
					a := m.mr.Addr() + uint64(r.IntN(len(m.init)/8-1))*8
					wr.SGList = []verbs.SGE{{Addr: a, Length: 8, LKey: m.mr.LKey()}}
					mark(a, 8)
				}
				if r.IntN(12) == 0 {
					wr.Flags |= verbs.SendInline
				}
				peerDev := 1 - q.dev
				if q.peer != nil {
					peerDev = q.peer.dev
				}
				m := pickMR(peerDev)
				addr, _ := span(m, 1500)
				if opc.IsAtomic() {
					addr = m.mr.Addr() + uint64(r.IntN(len(m.init)/8))*8
				}
				wr.RemoteAddr, wr.RKey = addr, m.mr.RKey()
				if r.IntN(50) == 0 {
					wr.RKey = m.mr.LKey() ^ 0x300
				}
				if opc == verbs.WRRDMAWrite || opc == verbs.WRRDMAWriteWithImm || opc.IsAtomic() {
					var l int
					for _, s := range wr.SGList {
						l += int(s.Length)
					}
					if opc.IsAtomic() {
						l = 8
					}
					mark(addr, l)
				}
				wr.CompareAdd, wr.Swap = uint64(r.IntN(4)), r.Uint64()
				if q.typ == verbs.QPTypeUD {
					wr.AH = ahs[q.dev]
					if q.peer != nil {
						wr.RemoteQPN = q.peer.qp.Num()
					}
					wr.RemoteQKey = 0x11111111
					if r.IntN(10) == 0 {
						wr.RemoteQKey = 5
					}
				}
				list = append(list, wr)
				wrs[next] = &wrRec{q: q, signaled: wr.Flags&verbs.SendSignaled != 0 || q.sigAll(), gen: q.gen}
			}
			cnt, _ := q.qp.PostSend(list)
			for _, wr := range list[cnt:] {
				delete(wrs, wr.WRID)
			}
		case k < 55: // post receive
			q := alive()
			if q == nil {
				continue
			}
			next++
			wr := verbs.RecvWR{WRID: next, SGList: sges(q.dev, true, 3, 4096)}
			var cnt int
			if q.hasSRQ {
				cnt, _ = q.srq.PostRecv([]verbs.RecvWR{wr})
			} else {
				cnt, _ = q.qp.PostRecv([]verbs.RecvWR{wr})
			}
			if cnt == 1 {
				wrs[next] = &wrRec{q: q, recv: true, srq: q.hasSRQ, gen: q.gen}
			}
		case k < 75:
			pollAll()
		case k < 85:
			switch r.IntN(4) {
			case 0:
				b.f.Step()
			case 1:
				b.f.Run()
			default:
				b.f.Advance(time.Duration(r.IntN(20)) * time.Millisecond)
			}
		case k < 88: // a fault rule
			b.f.ClearFaults()
			acts := []verbs.FaultAction{verbs.FaultDrop, verbs.FaultDuplicate, verbs.FaultReorder, verbs.FaultDelay, verbs.FaultCorrupt}
			a := acts[r.IntN(len(acts))]
			rule := verbs.FaultRule{Action: a, Probability: 0.05 + 0.2*r.Float64()}
			if a == verbs.FaultDelay {
				rule.Delay = time.Duration(1+r.IntN(1000)) * time.Microsecond
			}
			_, _ = b.f.AddFault(rule)
		case k < 91: // delivery mode
			if r.IntN(2) == 0 {
				b.f.SetDeliveryMode(verbs.DeliverStep)
			} else {
				b.f.SetDeliveryMode(verbs.DeliverAuto)
			}
		case k < 95: // a modify: to ERR, to SQD, or random
			q := alive()
			if q == nil {
				continue
			}
			pollAll()
			st := []verbs.QPState{verbs.QPSErr, verbs.QPSSQD, verbs.QPSRTS, verbs.QPSInit, verbs.QPSRTR}[r.IntN(5)]
			_ = q.qp.Modify(&verbs.QPAttr{State: st}, verbs.AttrState)
		case k < 97: // reset and reconnect
			q := alive()
			if q == nil || (q.peer == nil && q.typ != verbs.QPTypeUD) {
				continue
			}
			reconnect(q)
		case k < 98: // destroy and replace
			q := alive()
			if q == nil {
				continue
			}
			restore := quiesce()
			if err := q.qp.Destroy(); err == nil {
				q.dead = true
				q.gen++
				nq := newQP(q.dev, q.typ, q.hasSRQ)
				if q.typ == verbs.QPTypeUD {
					b.connect(nq.qp, nq.dev, nil, 0, qpOpts{})
				} else if q.peer != nil {
					connect(nq, q.peer)
				}
				nq.peer = q.peer
				qps = append(qps, nq)
			}
			restore()
		case k < 99: // deregister an MR (its memory must not change again)
			m := mrs[r.IntN(len(mrs))]
			if m.dead == nil && r.IntN(4) == 0 {
				pollAll()
				if err := m.mr.Dereg(); err == nil {
					m.dead = append([]byte(nil), m.mr.Bytes()...)
				}
			}
		default: // illegal calls that must fail cleanly
			q := alive()
			if q == nil {
				continue
			}
			_, _ = q.qp.PostSend(nil)
			_, _ = q.qp.PostSend([]verbs.SendWR{{WRID: 0, SGList: make([]verbs.SGE, 9)}})
			_ = q.qp.Modify(&verbs.QPAttr{State: verbs.QPState(r.IntN(9)), PathMTU: verbs.MTU(r.IntN(7))}, verbs.QPAttrMask(r.Uint32()))
			_, _, _ = q.qp.Query(verbs.AttrAll)
		}
	}
	// The end: every QP alive goes to ERR and everything completes.
	b.f.ClearFaults()
	b.f.SetDeliveryMode(verbs.DeliverAuto)
	pollAll()
	for _, q := range qps {
		if !q.dead {
			b.must(q.qp.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState))
		}
	}
	for i := 0; i < 4; i++ {
		b.f.Advance(time.Second)
		pollAll()
	}
	if testing.Verbose() {
		t.Logf("seed %d: %d ops, %d work requests, completions %v, %v of virtual time", seed, nops, len(wrs), stats, b.f.Now())
	}
	for id, rec := range wrs {
		if rec.q.dead || rec.gen != rec.q.gen {
			continue // destroyed or reset: completes at most once
		}
		switch {
		case rec.recv && rec.srq:
		case rec.recv || rec.signaled:
			if rec.done != 1 {
				t.Fatalf("seed %d: work request %d (%+v) completed %d times, want once", seed, id, *rec, rec.done)
			}
		}
	}
	for i, m := range mrs {
		mem := m.mr.Bytes()
		digest.Write(mem)
		for k := range mem {
			if !m.named[k] && mem[k] != m.init[k] {
				t.Fatalf("seed %d: MR %d byte %d changed though no work request named it", seed, i, k)
			}
			if m.dead != nil && mem[k] != m.dead[k] {
				t.Fatalf("seed %d: MR %d byte %d changed after ibv_dereg_mr", seed, i, k)
			}
		}
	}
	return fmt.Sprintf("crc %08x, %v", digest.Sum32(), b.f.Now())
}

func (q *modelQP) sigAll() bool {
	_, init, _ := q.qp.Query(0)
	return init.SQSigAll
}
