package sim

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// pair is two connected RC (or UC) QPs on one device (loopback, as on a
// single rxe0), each with an MR of 64 KiB.
type pair struct {
	*env
	a, b   verbs.QP
	ma, mb verbs.MR
}

func newPair(t *testing.T, typ verbs.QPType, access verbs.Access, rnrRetry uint8) *pair {
	e := newEnv(t)
	p := &pair{env: e}
	p.a = e.qp(typ, verbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 2, MaxRecvSGE: 2, MaxInlineData: 64})
	p.b = e.qp(typ, verbs.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 2, MaxRecvSGE: 2, MaxInlineData: 64})
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	p.ma, _ = e.pd.AllocMR(1<<16, all)
	p.mb, _ = e.pd.AllocMR(1<<16, all)
	for _, x := range []struct{ q, peer verbs.QP }{{p.a, p.b}, {p.b, p.a}} {
		initMask := verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
		mustT(t, x.q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: access}, initMask))
		rtr := &verbs.QPAttr{State: verbs.QPSRTR, AH: e.av(), PathMTU: verbs.MTU1024, DestQPN: x.peer.Num(), RQPSN: 100,
			MaxDestRdAtomic: 4, MinRNRTimer: 12}
		m := verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
		if typ == verbs.QPTypeRC {
			m |= verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
		}
		mustT(t, x.q.Modify(rtr, m))
		rts := &verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: rnrRetry, SQPSN: 100, MaxRdAtomic: 4}
		m = verbs.AttrState | verbs.AttrSQPSN
		if typ == verbs.QPTypeRC {
			m |= verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrMaxQPRdAtomic
		}
		mustT(t, x.q.Modify(rts, m))
	}
	return p
}

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fill(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7)
	}
}

func TestRCSendRecv(t *testing.T) {
	for _, size := range []int{0, 1, 1024, 1025, 4096, 10000} {
		p := newPair(t, verbs.QPTypeRC, 0, 7)
		fill(p.ma.Bytes()[:size], 3)
		_, err := p.b.PostRecv([]verbs.RecvWR{{WRID: 9, SGList: []verbs.SGE{{Addr: p.mb.Addr(), Length: 16384, LKey: p.mb.LKey()}}}})
		mustT(t, err)
		_, err = p.a.PostSend([]verbs.SendWR{{WRID: 5, Opcode: verbs.WRSendWithImm, Imm: 0xabcd, Flags: verbs.SendSignaled,
			SGList: []verbs.SGE{{Addr: p.ma.Addr(), Length: uint32(size), LKey: p.ma.LKey()}}}})
		mustT(t, err)
		got := p.poll()
		if len(got) != 2 {
			t.Fatalf("size %d: completions %+v", size, got)
		}
		var recv, send verbs.WC
		for _, wc := range got {
			if wc.Opcode == verbs.WCOpRecv {
				recv = wc
			} else {
				send = wc
			}
		}
		if recv.Status != verbs.WCSuccess || recv.ByteLen != uint32(size) || recv.WRID != 9 || recv.Imm != 0xabcd ||
			recv.Flags != verbs.WCGRH|verbs.WCWithImm || recv.QPNum != p.b.Num() {
			t.Errorf("size %d: recv %+v", size, recv)
		}
		if send.Status != verbs.WCSuccess || send.Opcode != verbs.WCOpSend || send.ByteLen != uint32(size) || send.WRID != 5 {
			t.Errorf("size %d: send %+v", size, send)
		}
		if !bytes.Equal(p.ma.Bytes()[:size], p.mb.Bytes()[:size]) {
			t.Errorf("size %d: data differs", size)
		}
	}
}

func TestRCWriteReadAtomic(t *testing.T) {
	p := newPair(t, verbs.QPTypeRC, verbs.AccessRemote|verbs.AccessLocalWrite, 7)
	fill(p.ma.Bytes()[:5000], 1)
	sg := func(m verbs.MR, off uint64, n uint32) []verbs.SGE {
		return []verbs.SGE{{Addr: m.Addr() + off, Length: n, LKey: m.LKey()}}
	}
	// WRITE 5000 bytes a → b.
	_, err := p.a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: sg(p.ma, 0, 5000),
		RemoteAddr: p.mb.Addr() + 100, RKey: p.mb.RKey()}})
	mustT(t, err)
	if got := p.poll(); len(got) != 1 || got[0].Status != verbs.WCSuccess || got[0].Opcode != verbs.WCOpRDMAWrite {
		t.Fatalf("write: %+v", got)
	}
	if !bytes.Equal(p.mb.Bytes()[100:5100], p.ma.Bytes()[:5000]) {
		t.Errorf("write: data differs")
	}
	// READ it back into a at 20000.
	_, err = p.a.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: sg(p.ma, 20000, 5000),
		RemoteAddr: p.mb.Addr() + 100, RKey: p.mb.RKey()}})
	mustT(t, err)
	if got := p.poll(); len(got) != 1 || got[0].Status != verbs.WCSuccess || got[0].Opcode != verbs.WCOpRDMARead || got[0].ByteLen != 5000 {
		t.Fatalf("read: %+v", got)
	}
	if !bytes.Equal(p.ma.Bytes()[20000:25000], p.ma.Bytes()[:5000]) {
		t.Errorf("read: data differs")
	}
	// Atomics on b's first 8 bytes.
	binary.LittleEndian.PutUint64(p.mb.Bytes()[8:], 40)
	_, err = p.a.PostSend([]verbs.SendWR{
		{WRID: 3, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: sg(p.ma, 30000, 8), RemoteAddr: p.mb.Addr() + 8, RKey: p.mb.RKey(), CompareAdd: 2},
		{WRID: 4, Opcode: verbs.WRAtomicCmpAndSwp, Flags: verbs.SendSignaled, SGList: sg(p.ma, 30008, 8), RemoteAddr: p.mb.Addr() + 8, RKey: p.mb.RKey(), CompareAdd: 42, Swap: 7},
	})
	mustT(t, err)
	got := p.poll()
	if len(got) != 2 || got[0].Status != verbs.WCSuccess || got[1].Status != verbs.WCSuccess {
		t.Fatalf("atomics: %+v", got)
	}
	if v := binary.LittleEndian.Uint64(p.mb.Bytes()[8:]); v != 7 {
		t.Errorf("remote after FAA+CAS = %d, want 7", v)
	}
	if a, b := binary.LittleEndian.Uint64(p.ma.Bytes()[30000:]), binary.LittleEndian.Uint64(p.ma.Bytes()[30008:]); a != 40 || b != 42 {
		t.Errorf("originals %d, %d; want 40, 42", a, b)
	}
	// WRITE_WITH_IMM consumes a receive.
	_, _ = p.b.PostRecv([]verbs.RecvWR{{WRID: 77}})
	_, err = p.a.PostSend([]verbs.SendWR{{WRID: 5, Opcode: verbs.WRRDMAWriteWithImm, Imm: 5, SGList: sg(p.ma, 0, 3000),
		RemoteAddr: p.mb.Addr(), RKey: p.mb.RKey()}})
	mustT(t, err)
	got = p.poll()
	if len(got) != 1 || got[0].Opcode != verbs.WCOpRecvRDMAWithImm || got[0].ByteLen != 3000 || got[0].WRID != 77 {
		t.Errorf("write_imm: %+v (the send was unsignaled)", got)
	}
}

func TestRCErrorStatuses(t *testing.T) {
	tests := []struct {
		name   string
		access verbs.Access // the responder QP's access flags
		wr     func(p *pair) verbs.SendWR
		want   verbs.WCStatus
	}{
		{"bad rkey", verbs.AccessRemote, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{{Addr: p.ma.Addr(), Length: 8, LKey: p.ma.LKey()}}, RemoteAddr: p.mb.Addr(), RKey: 0x1234}
		}, verbs.WCRemAccessErr},
		{"out of bounds", verbs.AccessRemote, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WRRDMARead, SGList: []verbs.SGE{{Addr: p.ma.Addr(), Length: 64, LKey: p.ma.LKey()}}, RemoteAddr: p.mb.Addr() + 1<<16 - 8, RKey: p.mb.RKey()}
		}, verbs.WCRemAccessErr},
		{"QP without remote write", 0, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{{Addr: p.ma.Addr(), Length: 8, LKey: p.ma.LKey()}}, RemoteAddr: p.mb.Addr(), RKey: p.mb.RKey()}
		}, verbs.WCRemInvReqErr},
		{"bad lkey", verbs.AccessRemote, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{{Addr: p.ma.Addr(), Length: 8, LKey: 0x77}}, RemoteAddr: p.mb.Addr(), RKey: p.mb.RKey()}
		}, verbs.WCLocQPOpErr}, // copy_data: lookup_mr fails, -EINVAL
		{"local SGE outside its MR", verbs.AccessRemote, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{{Addr: p.ma.Addr() + 1<<16 - 4, Length: 8, LKey: p.ma.LKey()}}, RemoteAddr: p.mb.Addr(), RKey: p.mb.RKey()}
		}, verbs.WCLocProtErr}, // rxe_mr_copy: mr_check_range, -EFAULT
		{"read on UC-only opcode misuse", verbs.AccessRemote, func(p *pair) verbs.SendWR {
			return verbs.SendWR{Opcode: verbs.WROpcode(11), SGList: nil}
		}, verbs.WCLocQPOpErr},
	}
	for _, tc := range tests {
		p := newPair(t, verbs.QPTypeRC, tc.access, 7)
		wr := tc.wr(p)
		wr.WRID = 42
		_, err := p.a.PostSend([]verbs.SendWR{wr, {WRID: 43, Opcode: verbs.WRSend}})
		mustT(t, err)
		got := p.poll()
		if len(got) < 2 || got[0].WRID != 42 || got[0].Status != tc.want || got[1].Status != verbs.WCWRFlushErr {
			t.Errorf("%s: completions %+v, want %v then a flush", tc.name, got, tc.want)
		}
		if a, _, _ := p.a.Query(verbs.AttrState); a.State != verbs.QPSErr {
			t.Errorf("%s: requester in %v, want ERR", tc.name, a.State)
		}
	}
}

func TestRNR(t *testing.T) {
	// rnr_retry 0: the first RNR NAK ends it.
	p := newPair(t, verbs.QPTypeRC, 0, 0)
	_, err := p.a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}})
	mustT(t, err)
	if got := p.poll(); len(got) != 1 || got[0].Status != verbs.WCRNRRetryExcErr {
		t.Errorf("rnr_retry 0: %+v", got)
	}
	// rnr_retry 7: retried until the receive is posted.
	p = newPair(t, verbs.QPTypeRC, 0, 7)
	p.f.SetDeliveryMode(verbs.DeliverStep)
	_, err = p.a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}})
	mustT(t, err)
	p.f.Run() // SEND, RNR NAK
	// The retransmit timer armed by the SEND, and the RNR timer.
	if pk, tm := p.f.Pending(); pk != 0 || tm != 2 {
		t.Fatalf("pending %d packets %d timers; want the retransmit and RNR timers", pk, tm)
	}
	_, _ = p.b.PostRecv([]verbs.RecvWR{{WRID: 2}})
	// min_rnr_timer 12 is 0.64 ms, one jiffy: the wheel fires it 4-8 ms on.
	evs := p.f.Advance(8 * time.Millisecond)
	if len(evs) < 3 {
		t.Errorf("advance: %v", evs)
	}
	got := p.poll()
	if len(got) != 2 || got[0].Status != verbs.WCSuccess || got[1].Status != verbs.WCSuccess {
		t.Errorf("after RNR retry: %+v", got)
	}
}

// TestAdvanceEndsAtMaxVirtualTime: Advance stops at verbs.MaxVirtualTime,
// however far it is asked to go, and an RNR retry there still ends: no
// timer's expiry overflows into the past.
func TestAdvanceEndsAtMaxVirtualTime(t *testing.T) {
	p := newPair(t, verbs.QPTypeRC, 0, 7)
	p.f.SetDeliveryMode(verbs.DeliverStep)
	p.f.Advance(time.Duration(math.MaxInt64))
	if now := p.f.Now(); now != verbs.MaxVirtualTime {
		t.Fatalf("Advance(MaxInt64) took the clock to %s; want %s", now, verbs.MaxVirtualTime)
	}
	p.f.Advance(time.Duration(math.MaxInt64)) // at the end, d past it must not wrap round
	if now := p.f.Now(); now != verbs.MaxVirtualTime {
		t.Fatalf("Advance past the end took the clock to %s", now)
	}
	_, err := p.a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}})
	mustT(t, err)
	if evs := p.f.Run(); len(evs) > 10 {
		t.Fatalf("a SEND at the end of time ran %d steps: %v", len(evs), evs[:10])
	}
}

func TestPostBeforeRTSIsSentLater(t *testing.T) {
	e := newEnv(t)
	a := e.qp(verbs.QPTypeRC, verbs.QPCap{})
	b := e.qp(verbs.QPTypeRC, verbs.QPCap{})
	e.toInit(a, 0)
	e.toInit(b, 0)
	b.PostRecv([]verbs.RecvWR{{WRID: 1}, {WRID: 2}})
	e.toRTR(a, b.Num())
	e.toRTR(b, a.Num())
	_, err := a.PostSend([]verbs.SendWR{{WRID: 10, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}})
	wantErr(t, "PostSend in RTR", err, verbs.EINVAL, "queued")
	e.toRTS(a)
	e.toRTS(b)
	if got := e.poll(); len(got) != 0 {
		t.Fatalf("sent without a doorbell: %+v", got)
	}
	_, err = a.PostSend([]verbs.SendWR{{WRID: 11, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}})
	mustT(t, err)
	if got := e.poll(); len(got) != 4 {
		t.Errorf("after the next doorbell: %+v, want both sends and both receives", got)
	}
}

func TestUD(t *testing.T) {
	e := newEnv(t)
	c := verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	a, b := e.qp(verbs.QPTypeUD, c), e.qp(verbs.QPTypeUD, c)
	m, _ := e.pd.AllocMR(8192, verbs.AccessLocalWrite)
	for _, q := range []verbs.QP{a, b} {
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111}, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
		mustT(t, q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, SQPSN: 1}, verbs.AttrState|verbs.AttrSQPSN))
	}
	ah, err := e.pd.CreateAH(e.av())
	mustT(t, err)
	copy(m.Bytes(), "hello, datagram")
	b.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: m.Addr() + 4096, Length: 40 + 100, LKey: m.LKey()}}}})
	_, err = a.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, AH: ah, RemoteQPN: b.Num(), RemoteQKey: 0x11111111,
		SGList: []verbs.SGE{{Addr: m.Addr(), Length: 15, LKey: m.LKey()}}}})
	mustT(t, err)
	got := e.poll()
	if len(got) != 2 {
		t.Fatalf("UD: %+v", got)
	}
	var recv verbs.WC
	for _, wc := range got {
		if wc.Opcode == verbs.WCOpRecv {
			recv = wc
		}
	}
	if recv.ByteLen != 55 || recv.SrcQP != a.Num() || recv.Flags&verbs.WCGRH == 0 {
		t.Errorf("UD recv %+v", recv)
	}
	grh := m.Bytes()[4096 : 4096+40]
	if !bytes.Equal(grh[:20], make([]byte, 20)) || grh[20] != 0x45 || string(m.Bytes()[4136:4151]) != "hello, datagram" {
		t.Errorf("GRH/payload: % x", m.Bytes()[4096:4151])
	}
	// A wrong Q_Key is dropped silently; the send still succeeds.
	b.PostRecv([]verbs.RecvWR{{WRID: 3, SGList: []verbs.SGE{{Addr: m.Addr() + 4096, Length: 140, LKey: m.LKey()}}}})
	a.PostSend([]verbs.SendWR{{WRID: 4, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, AH: ah, RemoteQPN: b.Num(), RemoteQKey: 5}})
	if got := e.poll(); len(got) != 1 || got[0].WRID != 4 || got[0].Status != verbs.WCSuccess {
		t.Errorf("wrong qkey: %+v", got)
	}
}
