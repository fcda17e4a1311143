package sim

import (
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Behaviours of rxe 6.1 that docs/simulator.md lists and the conformance
// suite does not cover.

// TestSendWithInvalidate: rxe cannot invalidate an MR from ibv_reg_mr, so
// the receive fails with REM_INV_REQ_ERR and the receiver goes to ERR,
// while the sender is acknowledged (rxe_resp.c execute, class J).
func TestSendWithInvalidate(t *testing.T) {
	b := newBed(t, Config{})
	x, y := b.pair(0, 1, qpOpts{retry: 7})
	src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 100)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSendWithInv, InvRKey: dst.RKey(), Flags: verbs.SendSignaled, SGList: sg(src, 0, 10)}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess || wcs[0].Opcode != verbs.WCOpSend {
		t.Errorf("sender %+v, want success", wcs)
	}
	if wcs := b.drain(b.cq[1], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCRemInvReqErr {
		t.Errorf("receiver %+v, want REM_INV_REQ_ERR", wcs)
	}
	if a, _, _ := y.Query(verbs.AttrState); a.State != verbs.QPSErr {
		t.Errorf("receiver in %v, want ERR", a.State)
	}
	// LOCAL_INV of such an MR fails locally.
	x2, _ := b.pair(0, 1, qpOpts{})
	b.must(first(x2.PostSend([]verbs.SendWR{{WRID: 3, Opcode: verbs.WRLocalInv, InvRKey: src.LKey(), Flags: verbs.SendSignaled}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCLocQPOpErr {
		t.Errorf("LOCAL_INV %+v, want LOC_QP_OP_ERR", wcs)
	}
}

// TestTimeoutDuringRNRWait: a retransmit timeout that falls while the
// requester waits for its RNR timer counts against retry_cnt (rxe_comp.c
// COMPST_ERROR_RETRY; rxe_req.c waits for the RNR timer before retrying).
func TestTimeoutDuringRNRWait(t *testing.T) {
	b := newBed(t, Config{})
	// timeout 10: 4 ms, one jiffy; min_rnr_timer 0: 655 ms.
	o := qpOpts{timeout: 10, retry: 1, rnrRetry: 7, minRNR: 0}
	x, y := b.qp(0, o), b.qp(1, o)
	b.connect(x, 0, y, 1, o)
	b.connect(y, 1, x, 0, qpOpts{minRNR: 32}) // 32&0x1f = 0: 655.36 ms
	src := mrOf(b, 0, 64)
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 8)}})))
	wcs := b.drain(b.cq[0], 1)
	if len(wcs) != 1 || wcs[0].Status != verbs.WCRetryExcErr {
		t.Errorf("completions %+v, want RETRY_EXC_ERR from timeouts during the RNR waits", wcs)
	}
	if b.f.Now() > 700*time.Millisecond {
		t.Errorf("failed at %v; the timeouts (4-8 ms) come long before the RNR timer", b.f.Now())
	}
}

// TestUCSRQClassE: a UC QP with an SRQ fails a receive for a bad length
// (here, a write with a bad R_Key) without going to ERR (classes D and E).
func TestUCSRQClassE(t *testing.T) {
	b := newBed(t, Config{})
	s, err := b.pd[1].CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 8, MaxSGE: 1}})
	b.must(err)
	o := qpOpts{typ: verbs.QPTypeUC, access: verbs.AccessRemoteWrite}
	x := b.qp(0, o)
	o.srq = s
	y := b.qp(1, o)
	b.connect(x, 0, y, 1, o)
	b.connect(y, 1, x, 0, o)
	src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
	b.must(first(s.PostRecv([]verbs.RecvWR{{WRID: 1}, {WRID: 2, SGList: sg(dst, 0, 64)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 3, Opcode: verbs.WRRDMAWriteWithImm, SGList: sg(src, 0, 8), RemoteAddr: dst.Addr(), RKey: 0x4242}})))
	if wcs := b.drain(b.cq[1], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCRemAccessErr {
		t.Errorf("receive %+v, want REM_ACCESS_ERR", wcs)
	}
	if a, _, _ := y.Query(verbs.AttrState); a.State != verbs.QPSRTS {
		t.Errorf("UC QP in %v, want RTS", a.State)
	}
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 4, Opcode: verbs.WRSend, SGList: sg(src, 0, 8)}})))
	if wcs := b.drain(b.cq[1], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess || wcs[0].WRID != 2 {
		t.Errorf("next receive %+v, want success", wcs)
	}
}

// TestCQOverflow: a send completion that finds the CQ full is lost and the
// QP carries on; a receive completion that does moves the QP to ERR. Both
// raise IBV_EVENT_CQ_ERR.
func TestCQOverflow(t *testing.T) {
	b := newBed(t, Config{})
	small0, _ := b.ctx[0].CreateCQ(verbs.CQInitAttr{CQE: 1})
	small1, _ := b.ctx[1].CreateCQ(verbs.CQInitAttr{CQE: 1})
	src, dst := mrOf(b, 0, 64), mrOf(b, 1, 64)
	// The sender's CQ holds one completion; the receiver's is large.
	x := b.qp(0, qpOpts{sendCQ: small0, recvCQ: small0})
	y := b.qp(1, qpOpts{})
	b.connect(x, 0, y, 1, qpOpts{retry: 7, rnrRetry: 7})
	b.connect(y, 1, x, 0, qpOpts{retry: 7, rnrRetry: 7})
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8)}, {WRID: 2, SGList: sg(dst, 8, 8)}})))
	b.must(first(x.PostSend([]verbs.SendWR{
		{WRID: 10, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 8)},
		{WRID: 11, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 8)},
	})))
	if a, _, _ := x.Query(verbs.AttrState); a.State != verbs.QPSRTS {
		t.Errorf("sender in %v after losing a send completion, want RTS", a.State)
	}
	if wcs := b.drain(small0, 1); len(wcs) != 1 || wcs[0].WRID != 10 {
		t.Errorf("sender's completions %+v, want only the first", wcs)
	}
	// Now the receiver's CQ holds one completion.
	z := b.qp(0, qpOpts{})
	w := b.qp(1, qpOpts{sendCQ: small1, recvCQ: small1})
	b.connect(z, 0, w, 1, qpOpts{retry: 7, rnrRetry: 7})
	b.connect(w, 1, z, 0, qpOpts{retry: 7, rnrRetry: 7})
	b.must(first(w.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8)}, {WRID: 2, SGList: sg(dst, 8, 8)}})))
	b.must(first(z.PostSend([]verbs.SendWR{
		{WRID: 20, Opcode: verbs.WRSend, SGList: sg(src, 0, 8)},
		{WRID: 21, Opcode: verbs.WRSend, SGList: sg(src, 0, 8)},
	})))
	if a, _, _ := w.Query(verbs.AttrState); a.State != verbs.QPSErr {
		t.Errorf("receiver in %v after losing a receive completion, want ERR", a.State)
	}
	for d := 0; d < 2; d++ {
		ev, err := b.ctx[d].GetAsyncEvent(0)
		if err != nil || ev.Type != verbs.EventCQErr {
			t.Errorf("device %d: %v %v, want IBV_EVENT_CQ_ERR", d, ev, err)
		}
	}
}
