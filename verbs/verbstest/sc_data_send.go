package verbstest

import (
	"bytes"
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
)

// How a send is described: signaling, inline data, scatter/gather lists,
// zero-length messages, segmentation by the path MTU, immediate data.

const srcSignal = "sw/rxe/rxe_comp.c do_complete (Linux 6.1): a successful WR gets a CQE only if the QP has sq_sig_all (IB_SIGNAL_ALL_WR) or the WR has IB_SEND_SIGNALED; ibv_post_send(3), ibv_create_qp(3) sq_sig_all"

var sgeCap = verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 4, MaxRecvSGE: 4}

const srcSGE = "sw/rxe/rxe_mr.c copy_data (Linux 6.1) walks the WQE's SGE list in order — gathering on send (rxe_req.c finish_packet) and scattering on receive (rxe_resp.c send_data_in) or into a READ's SGEs (rxe_comp.c do_read); an SGE of length 0 is skipped; byte_len is the total (rxe_comp.c make_send_cqe: wqe->dma.length)"

const srcZero = "ibv_post_send(3): num_sge 0 sends a zero-length message; rxe_req.c update_wqe_psn counts it as one packet; rxe_resp.c check_rkey: \"A zero-byte op is not required to set an addr or rkey\" (C9-88), so a zero-length READ or WRITE skips the R_Key check; byte_len 0 (rxe_comp.c make_send_cqe, rxe_resp.c do_complete)"

// Segmentation.
const srcSeg = "sw/rxe/rxe_req.c next_opcode_rc/next_opcode_uc and rxe_requester (Linux 6.1): a message longer than the path MTU goes as FIRST, MIDDLE..., LAST packets of path-MTU payload; rxe_resp.c reassembles them in the receive WQE or the target memory; READ responses are segmented the same way (read_reply); completions report the whole length"

// dataSendScenarios are this file's scenarios, each Run a named function.
var dataSendScenarios = []Scenario{
	{
		Name:   "signal/unsignaled-sends-complete-silently",
		Source: srcSignal,
		Needs:  CapDataPath,
		Run:    scSignalUnsignaledSendsCompleteSilently,
	},
	{
		Name:   "signal/sq-sig-all",
		Source: srcSignal,
		Needs:  CapDataPath,
		Run:    scSignalSQSigAll,
	},
	{
		Name:   "inline/data-taken-at-post",
		Source: "rdma-core v44 providers/rxe/rxe.c init_send_wqe copies IBV_SEND_INLINE data from the SGEs into the WQE inside ibv_post_send (rxe_req.c finish_packet later sends wqe->dma.inline_data); ibv_post_send(3): with IBV_SEND_INLINE the buffer can be reused as soon as the call returns",
		Needs:  CapDataPath,
		Run:    scInlineDataTakenAtPost,
	},
	{
		Name:   "inline/lkey-not-used",
		Source: "ibv_post_send(3): for IBV_SEND_INLINE \"the L_Key will not be checked\"; rdma-core v44 rxe.c init_send_wqe copies from sg_list[i].addr without looking at lkey, and rxe_req.c finish_packet sends the inline copy without copy_data",
		Needs:  CapDataPath,
		Run:    scInlineLKeyNotUsed,
	},
	{
		Name:   "inline/ud-send",
		Source: "rdma-core v44 rxe.c init_send_wqe (inline copy at post) and validate_send_wr (length <= max_inline); rxe_req.c finish_packet; rxe_resp.c execute puts the GRH first",
		Needs:  CapDataPath,
		Run:    scInlineUDSend,
	},
	{
		Name:   "sge/gather-send",
		Source: srcSGE,
		Needs:  CapDataPath,
		Run:    scSGEGatherSend,
	},
	{
		Name:   "sge/scatter-recv",
		Source: srcSGE,
		Needs:  CapDataPath,
		Run:    scSGEScatterRecv,
	},
	{
		Name:   "sge/write-gather",
		Source: srcSGE + "; rxe_resp.c write_data_in places the payload contiguously from the RETH address",
		Needs:  CapDataPath,
		Run:    scSGEWriteGather,
	},
	{
		Name:   "sge/read-scatter",
		Source: srcSGE,
		Needs:  CapDataPath,
		Run:    scSGEReadScatter,
	},
	{
		Name:   "zero/rc-send",
		Source: srcZero,
		Needs:  CapDataPath,
		Run:    scZeroRCSend,
	},
	{
		Name:   "zero/rc-write-and-read-need-no-rkey",
		Source: srcZero,
		Needs:  CapDataPath,
		Run:    scZeroRCWriteAndReadNeedNoRKey,
	},
	{
		Name:   "zero/write-with-imm",
		Source: srcZero + "; the receive's byte_len is the RETH length (rxe_resp.c do_complete: qp->resp.length)",
		Needs:  CapDataPath,
		Run:    scZeroWriteWithIMM,
	},
	{
		Name:   "zero/ud-send",
		Source: srcZero + "; a UD receive still gets the 40-byte header (rxe_resp.c execute), so byte_len is 40; the header is checked as in ud/grh-ipv4-header (" + srcGRH + ")",
		Needs:  CapDataPath,
		Run:    scZeroUDSend,
	},

	{
		Name:   "imm/byte-order",
		Source: "ibv_post_send(3)/ibv_poll_cq(3): imm_data is in network byte order in both ibv_send_wr and ibv_wc, so the 32-bit value arrives as sent; rxe_req.c init_req_packet (immdt_set_imm) and rxe_resp.c do_complete (immdt_imm) copy it unchanged; the Go API carries it in host order on both sides",
		Needs:  CapDataPath,
		Run:    scIMMByteOrder,
	},
}

func init() {
	for _, c := range []struct {
		typ verbs.QPType
		op  verbs.WROpcode
		mtu verbs.MTU
	}{
		{verbs.QPTypeRC, verbs.WRSend, verbs.MTU1024},
		{verbs.QPTypeRC, verbs.WRRDMAWrite, verbs.MTU1024},
		{verbs.QPTypeRC, verbs.WRRDMARead, verbs.MTU1024},
		{verbs.QPTypeRC, verbs.WRRDMAWriteWithImm, verbs.MTU256},
		{verbs.QPTypeRC, verbs.WRSend, verbs.MTU4096}, // above the port's active MTU: fine on loopback (rxe_net.c rxe_loopback never meets the netdev)
		{verbs.QPTypeUC, verbs.WRSend, verbs.MTU1024},
		{verbs.QPTypeUC, verbs.WRRDMAWriteWithImm, verbs.MTU512},
	} {
		name := fmt.Sprintf("segment/%s-mtu%s", opName(legalOp{c.typ, c.op}), c.mtu.Short())
		Register(Scenario{Name: name, Source: srcSeg + "; rxe accepts any path MTU up to the port's max MTU (rxe_qp_chk_attr)", Needs: CapDataPath,
			Run: func(e *Env) { runSegment(e, c.typ, c.op, c.mtu) }})
	}
	registerAll(dataSendScenarios)
}

// scSignalUnsignaledSendsCompleteSilently runs the scenario signal/unsignaled-sends-complete-silently.
func scSignalUnsignaledSendsCompleteSilently(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	for i := 0; i < 3; i++ {
		e.recv(l.b, uint64(10+i), sgeAt(rbuf, i*64, 64))
	}
	wr := func(id uint64, f verbs.SendFlags) verbs.SendWR {
		return verbs.SendWR{WRID: id, Opcode: verbs.WRSend, Flags: f, SGList: []verbs.SGE{sgeAt(local, 0, 8)}}
	}
	e.post(l.a, wr(1, 0), wr(2, 0), wr(3, verbs.SendSignaled))
	wcs := e.waitWCs(l.acq, 1, "two unsignaled SENDs and a signaled one")
	e.expectWC(wcs[0], verbs.WC{WRID: 3, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 8, QPNum: l.a.Num()}, "the signaled SEND")
	e.waitWCs(l.bcq, 3, "all three receives")
	e.expectNoWC(l.acq, "the unsignaled SENDs")
}

// scSignalSQSigAll runs the scenario signal/sq-sig-all.
func scSignalSQSigAll(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{aSigAll: true})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, SGList: []verbs.SGE{sgeAt(local, 0, 8)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRRDMARead, SGList: []verbs.SGE{sgeAt(local, 8, 8)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 2, "unsignaled WRs on a QP with sq_sig_all")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 8, QPNum: l.a.Num()}, "WRITE")
	e.expectWC(wcs[1], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 8, QPNum: l.a.Num()}, "READ")
}

// scInlineDataTakenAtPost runs the scenario inline/data-taken-at-post.
func scInlineDataTakenAtPost(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	pattern(local.Bytes()[:64], 0xa0)
	e.withHeldFabric(func() {
		e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | verbs.SendInline, SGList: []verbs.SGE{sgeAt(local, 0, 64)}})
		pattern(local.Bytes()[:64], 0x0b) // reuse the buffer at once
	})
	wcs := e.waitWCs(l.acq, 1, "inline SEND")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 64, QPNum: l.a.Num()}, "inline SEND")
	e.waitWCs(l.bcq, 1, "receive")
	e.expectBytes(rbuf.Bytes()[:64], patterned(64, 0xa0), "an inline SEND's bytes (taken when it was posted)")
}

// scInlineLKeyNotUsed runs the scenario inline/lkey-not-used.
func scInlineLKeyNotUsed(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 2, MaxRecvSGE: 1, MaxInlineData: 128}})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:100], 0x3d)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	s1, s2 := sgeAt(local, 0, 40), sgeAt(local, 40, 60)
	s1.LKey, s2.LKey = 0, 0xdeadbe00
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | verbs.SendInline, SGList: []verbs.SGE{s1, s2}})
	wcs := e.waitWCs(l.acq, 1, "inline SEND whose SGEs have bogus lkeys")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 100, QPNum: l.a.Num()}, "inline SEND")
	wcs = e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 100, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(rbuf.Bytes()[:100], patterned(100, 0x3d), "two inline SGEs gathered")
}

// scInlineUDSend runs the scenario inline/ud-send.
func scInlineUDSend(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:48], 0x19)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled|verbs.SendInline, sgeAt(local, 0, 48)))
	e.waitWCs(l.acq, 1, "inline UD SEND")
	wcs := e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + 48, QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "receive")
	e.expectBytes(rbuf.Bytes()[udGRH:udGRH+48], patterned(48, 0x19), "inline datagram")
}

// scSGEGatherSend runs the scenario sge/gather-send.
func scSGEGatherSend(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: sgeCap})
	m1, m2 := e.MR(l.apd, 4096, accAll), e.MR(l.apd, 4096, 0)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(m1.Bytes(), 1)
	pattern(m2.Bytes(), 2)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{sgeAt(m1, 100, 300), sgeAt(m2, 7, 1000), sgeAt(m1, 3000, 33)}})
	wcs := e.waitWCs(l.acq, 1, "SEND gathering 3 SGEs")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 1333, QPNum: l.a.Num()}, "SEND")
	wcs = e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 1333, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	want := append(append(append([]byte{}, m1.Bytes()[100:400]...), m2.Bytes()[7:1007]...), m1.Bytes()[3000:3033]...)
	e.expectBytes(rbuf.Bytes()[:1333], want, "the gathered message (it spans two packets at MTU 1024)")
}

// scSGEScatterRecv runs the scenario sge/scatter-recv.
func scSGEScatterRecv(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: sgeCap})
	local := e.MR(l.apd, 4096, accAll)
	r1, r2 := e.MR(l.bpd, 4096, accLocal), e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes(), 0x42)
	e.recv(l.b, 2, sgeAt(r1, 10, 10), sgeAt(r2, 0, 0), sgeAt(r2, 500, 1500), sgeAt(r1, 2000, 1000))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 2000)}})
	e.waitWCs(l.acq, 1, "SEND")
	wcs := e.waitWCs(l.bcq, 1, "receive scattered over 4 SGEs (one empty)")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 2000, QPNum: l.b.Num(), Flags: verbs.WCGRH}, "receive")
	src := local.Bytes()
	e.expectBytes(r1.Bytes()[10:20], src[:10], "SGE 1")
	e.expectBytes(r2.Bytes()[500:2000], src[10:1510], "SGE 3")
	e.expectBytes(r1.Bytes()[2000:2490], src[1510:2000], "SGE 4 (partly filled)")
	if !zero(r1.Bytes()[2490:3000]) || !zero(r1.Bytes()[:10]) || !zero(r2.Bytes()[:500]) {
		e.Errorf("bytes outside the scattered message were written")
	}
}

// scSGEWriteGather runs the scenario sge/write-gather.
func scSGEWriteGather(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: sgeCap})
	local := e.MR(l.apd, 8192, accAll)
	remote := e.MR(l.bpd, 8192, accAll)
	pattern(local.Bytes(), 0x5a)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{sgeAt(local, 4000, 2000), sgeAt(local, 0, 1)}, RemoteAddr: remote.Addr() + 5, RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "WRITE gathering 2 SGEs")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 2001, QPNum: l.a.Num()}, "WRITE")
	want := append(append([]byte{}, local.Bytes()[4000:6000]...), local.Bytes()[0])
	e.expectBytes(remote.Bytes()[5:2006], want, "the written range")
	if !zero(remote.Bytes()[:5]) || !zero(remote.Bytes()[2006:]) {
		e.Errorf("the WRITE touched bytes outside its range")
	}
}

// scSGEReadScatter runs the scenario sge/read-scatter.
func scSGEReadScatter(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{cap: sgeCap})
	l1, l2 := e.MR(l.apd, 4096, accAll), e.MR(l.apd, 4096, accLocal)
	remote := e.MR(l.bpd, 8192, accAll)
	pattern(remote.Bytes(), 0x6b)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{sgeAt(l1, 1, 1500), sgeAt(l2, 96, 1700)}, RemoteAddr: remote.Addr() + 100, RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "READ scattered over 2 SGEs")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 3200, QPNum: l.a.Num()}, "READ")
	e.expectBytes(l1.Bytes()[1:1501], remote.Bytes()[100:1600], "SGE 1")
	e.expectBytes(l2.Bytes()[96:1796], remote.Bytes()[1600:3300], "SGE 2")
}

// scZeroRCSend runs the scenario zero/rc-send.
func scZeroRCSend(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSendWithImm, Flags: verbs.SendSignaled, Imm: 0xabad1dea})
	wcs := e.waitWCs(l.acq, 1, "zero-length SEND with immediate")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 0, QPNum: l.a.Num(), Flags: verbs.WCWithImm}, "sender")
	wcs = e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 0, Imm: 0xabad1dea, QPNum: l.b.Num(), Flags: verbs.WCGRH | verbs.WCWithImm}, "receiver")
	if !zero(rbuf.Bytes()) {
		e.Errorf("a zero-length SEND wrote into the receive buffer")
	}
}

// scZeroRCWriteAndReadNeedNoRKey runs the scenario zero/rc-write-and-read-need-no-rkey.
func scZeroRCWriteAndReadNeedNoRKey(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, RemoteAddr: 0, RKey: 0x12345678},
		verbs.SendWR{WRID: 2, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, RemoteAddr: 8, RKey: 0})
	wcs := e.waitWCs(l.acq, 2, "zero-length WRITE and READ with bogus rkeys")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 0, QPNum: l.a.Num()}, "WRITE")
	e.expectWC(wcs[1], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMARead, ByteLen: 0, QPNum: l.a.Num()}, "READ")
	e.expectState(l.b, verbs.QPSRTS, "responder")
}

// scZeroWriteWithIMM runs the scenario zero/write-with-imm.
func scZeroWriteWithIMM(e *Env) {
	l := e.link(verbs.QPTypeUC, linkCfg{})
	e.recv(l.b, 2)
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWriteWithImm, Flags: verbs.SendSignaled, Imm: 77})
	e.waitWCs(l.acq, 1, "zero-length UC WRITE with immediate")
	wcs := e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecvRDMAWithImm, ByteLen: 0, Imm: 77, QPNum: l.b.Num(), Flags: verbs.WCGRH | verbs.WCWithImm}, "receiver")
}

// scZeroUDSend runs the scenario zero/ud-send.
func scZeroUDSend(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled))
	e.waitWCs(l.acq, 1, "zero-length UD SEND")
	wcs := e.waitWCs(l.bcq, 1, "receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH, QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "receiver")
	e.checkGRH(rbuf.Bytes()[:udGRH], 0, false, e.GID, e.GID, routeTTL, 0, false)
}

// scIMMByteOrder runs the scenario imm/byte-order.
func scIMMByteOrder(e *Env) {
	l := e.link(verbs.QPTypeRC, linkCfg{})
	rbuf := e.MR(l.bpd, 4096, accAll)
	vals := []uint32{0x01020304, 0x80000000, 0x000000ff, 0xffffffff, 0}
	// Where the backend shows its packets, the first one's ImmDt
	// must be big-endian on the wire: RC SEND_ONLY_WITH_IMMEDIATE
	// (opcode 0x05) carries it right after the 12-byte BTH.
	var immWire []byte
	if po, ok := e.P.(verbs.PacketObserver); ok {
		cancel := po.ObservePackets(func(p verbs.PacketEvent) {
			if immWire == nil && len(p.Bytes) >= 16 && p.Bytes[0] == 0x05 {
				immWire = append([]byte(nil), p.Bytes[12:16]...)
			}
		})
		e.Defer(cancel)
		e.Defer(func() {
			if want := []byte{1, 2, 3, 4}; !bytes.Equal(immWire, want) {
				e.Errorf("ImmDt of the first SEND with immediate on the wire = % x; want % x (network byte order)", immWire, want)
			}
		})
	}
	for i := range vals {
		e.recv(l.b, uint64(i), sgeAt(rbuf, 0, 64))
	}
	for i, v := range vals {
		op := verbs.WRSendWithImm
		if i%2 == 1 {
			op = verbs.WRRDMAWriteWithImm
		}
		e.post(l.a, verbs.SendWR{WRID: uint64(i), Opcode: op, Imm: v, RemoteAddr: rbuf.Addr(), RKey: rbuf.RKey()})
	}
	wcs := e.waitWCs(l.bcq, len(vals), "receives with immediate data")
	for i, wc := range wcs {
		if wc.Imm != vals[i] || wc.Flags&verbs.WCWithImm == 0 {
			e.Errorf("immediate %d: got imm_data %#08x (wc_flags %v); want %#08x with IBV_WC_WITH_IMM", i, wc.Imm, wc.Flags, vals[i])
		}
	}
}

// runSegment moves a 3.5-MTU message of op over a link with the given path
// MTU and checks the bytes and lengths.
func runSegment(e *Env, typ verbs.QPType, op verbs.WROpcode, mtu verbs.MTU) {
	l := e.link(typ, linkCfg{aAttr: func(a *verbs.QPAttr) { a.PathMTU = mtu }, bAttr: func(a *verbs.QPAttr) { a.PathMTU = mtu }})
	n := mtu.Bytes()*3 + mtu.Bytes()/2 + 3
	local := e.MR(l.apd, 16384, accAll)
	remote := e.MR(l.bpd, 16384, accAll)
	rbuf := e.MR(l.bpd, 16384, accLocal)
	pattern(local.Bytes(), 0x0d)
	pattern(remote.Bytes(), 0x0e)
	before := append([]byte(nil), remote.Bytes()...)
	consumes := op != verbs.WRRDMAWrite && op != verbs.WRRDMARead
	if consumes {
		e.recv(l.b, 2, sgeAt(rbuf, 0, 16384))
	}
	e.post(l.a, verbs.SendWR{WRID: 1, Opcode: op, Flags: verbs.SendSignaled, Imm: 3, SGList: []verbs.SGE{sgeAt(local, 0, n)},
		RemoteAddr: remote.Addr() + 64, RKey: remote.RKey()})
	wcs := e.waitWCs(l.acq, 1, "%v of %d bytes at path MTU %d", op, n, mtu.Bytes())
	var fl verbs.WCFlags
	if op.HasImm() {
		fl = verbs.WCWithImm
	}
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: sendWCOpcode[op], ByteLen: uint32(n), QPNum: l.a.Num(), Flags: fl}, "requester")
	if consumes {
		wcs := e.waitWCs(l.bcq, 1, "the receive")
		want := verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(n), QPNum: l.b.Num(), Flags: verbs.WCGRH | fl}
		if op == verbs.WRRDMAWriteWithImm {
			want.Opcode, want.Imm = verbs.WCOpRecvRDMAWithImm, 3
		}
		e.expectWC(wcs[0], want, "responder")
	}
	switch op {
	case verbs.WRSend:
		e.expectBytes(rbuf.Bytes()[:n], local.Bytes()[:n], "the reassembled message")
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		e.expectBytes(remote.Bytes()[64:64+n], local.Bytes()[:n], "the written range")
		e.expectBytes(remote.Bytes()[64+n:], before[64+n:], "memory after the written range")
		e.expectBytes(remote.Bytes()[:64], before[:64], "memory before the written range")
	case verbs.WRRDMARead:
		e.expectBytes(local.Bytes()[:n], before[64:64+n], "the bytes read")
	}
}
