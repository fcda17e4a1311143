package verbstest

import (
	"bytes"

	"github.com/vsh-rdma/vsh/verbs"
)

// Data-path scenarios need CapDataPath. They are the pattern for the
// scenarios of the data-path issue: register them here (or in more
// sc_data_*.go files) with Needs: CapDataPath and a source, and use
// PollN to collect completions.

// PollN polls cq until it has n completions or Options.Wait passes, and
// returns what it got.
func (e *Env) PollN(cq verbs.CQ, n int) []verbs.WC {
	var out []verbs.WC
	buf := make([]verbs.WC, n)
	e.Eventually(func() bool {
		k, err := cq.Poll(buf[:n-len(out)])
		if err != nil {
			e.Fatalf("ibv_poll_cq: %v", err)
		}
		out = append(out, buf[:k]...)
		return len(out) == n
	})
	return out
}

// dataScenarios are this file's scenarios, each Run a named function.
var dataScenarios = []Scenario{
	{
		Name:   "data/rc-send-loopback",
		Source: "rc_pingpong.c on one rxe device (rxe_net.c rxe_loopback); ibv_post_send(3), ibv_poll_cq(3): IBV_WC_SEND on the sender, IBV_WC_RECV with byte_len on the receiver",
		Needs:  CapDataPath,
		Run:    scDataRCSendLoopback,
	},
	{
		Name:   "data/send-bad-sge-completes-in-error",
		Source: "sw/rxe/rxe_req.c rxe_requester (Linux 6.1): finish_packet → rxe_mr.c copy_data; an lkey that lookup_mr cannot resolve is -EINVAL, which becomes IB_WC_LOC_QP_OP_ERR; a valid lkey with the SGE outside its MR fails mr_check_range in rxe_mr_copy with -EFAULT, which becomes IB_WC_LOC_PROT_ERR; the completer then moves the QP to ERR (rxe_comp.c)",
		Needs:  CapDataPath,
		Run:    scDataSendBadSGECompletesInError,
	},
}

func init() {
	registerAll(dataScenarios)
}

// scDataRCSendLoopback runs the scenario data/rc-send-loopback.
func scDataRCSendLoopback(e *Env) {
	a, b := e.Pair(verbs.QPTypeRC)
	src := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	dst := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	copy(src.Bytes(), bytes.Repeat([]byte("vsh!"), 16))
	_, err := b.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: []verbs.SGE{sendSGE(dst, 4096)}}})
	e.Must(err, "ibv_post_recv")
	_, err = a.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sendSGE(src, 64)}}})
	e.Must(err, "ibv_post_send")
	wcs := e.PollN(e.CQ(), 2)
	if len(wcs) != 2 {
		e.Fatalf("got %d completions; want 2", len(wcs))
	}
	for _, wc := range wcs {
		switch {
		case wc.Status != verbs.WCSuccess:
			e.Errorf("wr_id %d: status %v; want success", wc.WRID, wc.Status)
		case wc.WRID == 1 && (wc.Opcode != verbs.WCOpSend || wc.QPNum != a.Num()):
			e.Errorf("send completion %+v; want IBV_WC_SEND on QP %#x", wc, a.Num())
		case wc.WRID == 2 && (wc.Opcode != verbs.WCOpRecv || wc.ByteLen != 64 || wc.QPNum != b.Num() || wc.SrcQP != 0 && wc.SrcQP != a.Num()):
			e.Errorf("receive completion %+v; want IBV_WC_RECV, byte_len 64 on QP %#x", wc, b.Num())
		}
	}
	if !bytes.Equal(dst.Bytes()[:64], src.Bytes()[:64]) {
		e.Errorf("received bytes differ from the ones sent")
	}
}

// scDataSendBadSGECompletesInError runs the scenario data/send-bad-sge-completes-in-error.
func scDataSendBadSGECompletesInError(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
	for _, c := range []struct {
		name string
		sge  verbs.SGE
		want verbs.WCStatus
	}{
		{"wrong lkey", verbs.SGE{Addr: mr.Addr(), Length: 64, LKey: mr.LKey() ^ 0xff}, verbs.WCLocQPOpErr},
		{"SGE past the end of its MR", verbs.SGE{Addr: mr.Addr() + 4096 - 32, Length: 64, LKey: mr.LKey()}, verbs.WCLocProtErr},
	} {
		cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
		mk := func() verbs.QP {
			return e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: e.CQ(), Cap: DefaultCap})
		}
		a, b := mk(), mk()
		e.Bring(a, b.Num(), verbs.QPSRTS)
		e.Bring(b, a.Num(), verbs.QPSRTS)
		prepostRecv(e, b, e.MR(e.PD(), 4096, verbs.AccessLocalWrite), 1)
		_, err := a.PostSend([]verbs.SendWR{{WRID: 9, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{c.sge}}})
		e.Must(err, "ibv_post_send with %s", c.name)
		wcs := e.PollN(cq, 1)
		if len(wcs) != 1 || wcs[0].WRID != 9 || wcs[0].Status != c.want {
			e.Errorf("%s: completions %+v; want wr_id 9 with %v", c.name, wcs, c.want)
		}
		if s := e.State(a); s != verbs.QPSErr {
			e.Errorf("%s: QP state after the error completion = %v; want ERR", c.name, s)
		}
	}
}
