package verbstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vsh-rdma/vsh/verbs"
)

// XRC: domains, XRC SRQs, XRC_SEND and XRC_RECV QPs. Kernel rxe has none
// of it, so on a backend without CapXRC the scenarios that do not need it
// check the refusals; the rest run where XRC works.

const (
	srcXRCNone    = "rdma-core providers/rxe registers no open_xrcd, and libibverbs/dummy_ops.c open_xrcd fails with EOPNOTSUPP (xsrq_pingpong on rxe: \"Couldn't Open the XRC Domain 95\")"
	srcXRCDOpen   = "core/uverbs_cmd.c ib_uverbs_open_xrcd: fd -1 is always a new domain; a file's domain is shared by every open of it; none there and no O_CREAT is -EAGAIN; one there and O_EXCL is -EINVAL; uverbs_std_types.c uverbs_free_xrcd: -EBUSY while SRQs or XRC_TGT QPs were made through the handle"
	srcXRCTarget  = "core/verbs.c create_xrc_qp_user and ib_open_qp: an XRC_TGT QP belongs to its XRCD (xrcd->tgt_qps), the creator and every opener get handles, and __ib_destroy_shared_qp destroys the QP with its last handle; ib_open_qp of an unknown qp_num or another type is -EINVAL"
	srcXRCData    = "the rxe XRC patch series (linux-rdma, 2021, \"RDMA/rxe: Enable receiving XRC packets\"): the XRCETH's SRQ number picks the SRQ, which must be in the XRC_TGT QP's domain; the receive WQE comes from that SRQ and completes on its CQ; R_Keys are checked against its PD; mlx5 cq.c: wc.qp_num is the XRC_TGT QP, wc.src_qp the sender"
	srcXRCBadSRQN = "the rxe XRC patch series (2021): an XRCETH naming no SRQ of the QP's domain is RESPST_ERR_INVALID_XRCETH, do_class_ac_error with a remote access NAK: the sender's WQE completes with IBV_WC_REM_ACCESS_ERR"
	srcXRCMasks   = "core/verbs.c qp_state_table for IB_QPT_XRC_INI and IB_QPT_XRC_TGT (INI: RTR needs AV, path_mtu, dest_qpn, rq_psn; TGT: RTS needs timeout and sq_psn only); uverbs_cmd.c modify_qp_mask drops INI's max_dest_rd_atomic and min_rnr_timer and TGT's max_rd_atomic, retry_cnt and rnr_retry first"
)

// xrcScenarios are this file's scenarios, each Run a named function.
var xrcScenarios = []Scenario{
	{Name: "xrc/open-xrcd", Source: srcXRCNone + "; " + srcXRCDOpen, Run: scXRCOpenXRCD},
	{Name: "xrc/create-xrc-send-qp", Source: "sw/rxe/rxe_qp.c rxe_qp_chk_init: only RC, UC and UD (XRC_INI is -EOPNOTSUPP); libibverbs cmd_qp.c create_qp_ex_common: XRC_SEND takes a send CQ and no receive queue", Run: scXRCCreateSendQP},
	{Name: "xrc/missing-domain", Source: "libibverbs cmd_srq.c ibv_icmd_create_srq: an XRC SRQ without IBV_SRQ_INIT_ATTR_XRCD or _CQ is EINVAL; cmd_qp.c ibv_icmd_create_qp: XRC_RECV without IBV_QP_INIT_ATTR_XRCD, or another type without a PD, is EINVAL — before the provider is asked", Run: scXRCMissingDomain},
	{Name: "xrc/srq-num", Source: "libibverbs verbs.h ibv_get_srq_num: EOPNOTSUPP when the provider has no get_srq_num (rxe); mlx5_get_srq_num gives every SRQ its number", Run: scXRCSRQNum},
	{Name: "xrc/send-to-srq-by-number", Source: srcXRCData, Needs: CapXRC | CapDataPath, Run: scXRCSendToSRQByNumber},
	{Name: "xrc/unknown-srq-number", Source: srcXRCBadSRQN, Needs: CapXRC | CapDataPath, Run: scXRCUnknownSRQNumber},
	{Name: "xrc/srq-of-another-domain", Source: srcXRCBadSRQN, Needs: CapXRC | CapDataPath, Run: scXRCSRQOfAnotherDomain},
	{Name: "xrc/rdma-write-checks-srq-pd", Source: srcXRCData + "; a WRITE to an MR of another PD is a remote access error (IBV_WC_REM_ACCESS_ERR)", Needs: CapXRC | CapDataPath, Run: scXRCWriteChecksSRQPD},
	{Name: "xrc/open-qp-shares-target", Source: srcXRCTarget, Needs: CapXRC, Run: scXRCOpenQPSharesTarget},
	{Name: "xrc/busy-while-used", Source: srcXRCDOpen + "; core/uverbs_std_types_cq.c: a CQ an SRQ uses is busy", Needs: CapXRC, Run: scXRCBusyWhileUsed},
	{Name: "xrc/modify-masks", Source: srcXRCMasks, Needs: CapXRC, Run: scXRCModifyMasks},
	{Name: "xrc/no-queue-where-none", Source: "uverbs_cmd.c create_qp: an XRC SRQ cannot be another QP's srq (-EINVAL); an XRC_INI QP has no receive queue (uverbs create_qp zeroes its receive caps) and an XRC_TGT QP no send queue (mlx5 create_xrc_tgt_qp: no_sq); libibverbs ibv_icmd_create_qp: XRC_RECV without an XRCD is EINVAL", Needs: CapXRC, Run: scXRCNoQueueWhereNone},
}

func init() {
	registerAll(xrcScenarios)
}

// ext returns the context's extended verbs, or nil when it has none (a
// provider with libibverbs' dummy ops).
func (e *Env) ext() verbs.ExtendedContext {
	x, _ := e.Ctx.(verbs.ExtendedContext)
	return x
}

// hasXRC says whether the backend declares XRC.
func (e *Env) hasXRC() bool { return e.Opts.Has&CapXRC != 0 }

// xrcDomain opens a private XRC domain.
func (e *Env) xrcDomain() verbs.XRCD {
	x := e.ext()
	if x == nil {
		e.Fatalf("the context has no extended verbs, but the backend declares XRC")
	}
	d, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
	if err != nil {
		e.Fatalf("ibv_open_xrcd(fd -1, O_CREAT): %v", err)
	}
	e.Defer(func() { _ = d.Close() })
	return d
}

// xrcSRQ makes an XRC SRQ in d whose receives complete on cq.
func (e *Env) xrcSRQ(pd verbs.PD, d verbs.XRCD, cq verbs.CQ) verbs.SRQ {
	s, err := e.ext().CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 16, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: pd, XRCD: d, CQ: cq})
	if err != nil {
		e.Fatalf("ibv_create_srq_ex(IBV_SRQT_XRC): %v", err)
	}
	e.Defer(func() { _ = s.Destroy() })
	return s
}

// xrcRecvQP makes an XRC_RECV QP in d.
func (e *Env) xrcRecvQP(d verbs.XRCD) verbs.QP {
	q, err := e.ext().CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, XRCD: d})
	if err != nil {
		e.Fatalf("ibv_create_qp_ex(IBV_QPT_XRC_RECV): %v", err)
	}
	e.Defer(func() { _ = q.Destroy() })
	return q
}

// xrcSendQP makes an XRC_SEND QP on pd with send CQ cq.
func (e *Env) xrcSendQP(pd verbs.PD, cq verbs.CQ) verbs.QP {
	q, err := e.ext().CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCSend, SendCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 16, MaxSendSGE: 1}}, PD: pd})
	if err != nil {
		e.Fatalf("ibv_create_qp_ex(IBV_QPT_XRC_SEND): %v", err)
	}
	e.Defer(func() { _ = q.Destroy() })
	return q
}

// Masks xsrq_pingpong walks its QPs with (connect_qps, create_qps).
const (
	xrcInitMask    = aState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	xrcSendRTRMask = aState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
	xrcRecvRTRMask = xrcSendRTRMask | verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	xrcSendRTSMask = aState | verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrSQPSN | verbs.AttrMaxQPRdAtomic
	xrcRecvRTSMask = aState | verbs.AttrTimeout | verbs.AttrSQPSN
)

// xrcConnect walks an XRC_SEND QP s and an XRC_RECV QP r, both on the
// scenario's device, to RTS, each addressed at the other.
func (e *Env) xrcConnect(s, r verbs.QP, tgtAccess verbs.Access, adjS func(*verbs.QPAttr)) {
	for _, x := range []struct {
		q       verbs.QP
		peer    uint32
		access  verbs.Access
		rtr     verbs.QPAttrMask
		rts     verbs.QPAttrMask
		adjusts func(*verbs.QPAttr)
	}{{s, r.Num(), 0, xrcSendRTRMask, xrcSendRTSMask, adjS}, {r, s.Num(), tgtAccess, xrcRecvRTRMask, xrcRecvRTSMask, nil}} {
		for _, st := range []struct {
			to   verbs.QPState
			mask verbs.QPAttrMask
		}{{verbs.QPSInit, xrcInitMask}, {verbs.QPSRTR, x.rtr}, {verbs.QPSRTS, x.rts}} {
			a := e.attrsFor(verbs.QPTypeRC, x.q.Num(), x.peer, verbs.QPSReset, st.to, verbs.QPCap{})
			a.AccessFlags = x.access
			if x.adjusts != nil {
				x.adjusts(&a)
			}
			e.Must(x.q.Modify(&a, st.mask), "ibv_modify_qp(%v QP %#x → %v, %v)", x.q.Type(), x.q.Num(), st.to, st.mask)
		}
	}
}

// scXRCOpenXRCD runs the scenario xrc/open-xrcd.
func scXRCOpenXRCD(e *Env) {
	x := e.ext()
	if !e.hasXRC() {
		if x == nil {
			return // libibverbs' dummy op: EOPNOTSUPP, which this API spells as no extended context
		}
		_, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
		e.ExpectErrno(err, verbs.EOPNOTSUPP, "ibv_open_xrcd on a device without XRC")
		return
	}
	priv := e.xrcDomain()
	e.Must(priv.Close(), "ibv_close_xrcd(private domain)")
	if err := priv.Close(); err == nil {
		e.Errorf("ibv_close_xrcd twice succeeded; want an error")
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("vsh-xrcd-%d-%d", os.Getpid(), e.Ctx.Device().GUID()&0xffff))
	_, err := x.OpenXRCD(verbs.XRCDInitAttr{Path: path})
	e.ExpectErrno(err, verbs.EAGAIN, "ibv_open_xrcd(%s) without O_CREAT and with no domain there yet", path)
	d1, err := x.OpenXRCD(verbs.XRCDInitAttr{Path: path, OFlags: verbs.XRCDCreate})
	e.Must(err, "ibv_open_xrcd(%s, O_CREAT)", path)
	d2, err := x.OpenXRCD(verbs.XRCDInitAttr{Path: path})
	e.Must(err, "ibv_open_xrcd(%s) of a domain that exists", path)
	_, err = x.OpenXRCD(verbs.XRCDInitAttr{Path: path, OFlags: verbs.XRCDCreate | verbs.XRCDExcl})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_open_xrcd(%s, O_CREAT|O_EXCL) of a domain that exists", path)
	// The two handles are one domain: a QP made through one opens through
	// the other.
	q, err := x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, XRCD: d1})
	e.Must(err, "ibv_create_qp_ex(XRC_RECV) in the file's domain")
	o, err := x.OpenQP(verbs.QPOpenAttr{QPNum: q.Num(), XRCD: d2, Type: verbs.QPTypeXRCRecv})
	if err != nil {
		e.Errorf("ibv_open_qp through the second open of %s: %v; want the QP made through the first", path, err)
	} else {
		e.Must(o.Destroy(), "ibv_destroy_qp(opened handle)")
	}
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.Must(d1.Close(), "ibv_close_xrcd(first open)")
	e.Must(d2.Close(), "ibv_close_xrcd(second open)")
	_ = os.Remove(path)
}

// scXRCCreateSendQP runs the scenario xrc/create-xrc-send-qp.
func scXRCCreateSendQP(e *Env) {
	x := e.ext()
	attr := verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCSend, SendCQ: e.CQ(), RecvCQ: e.CQ(),
		Cap: verbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1, MaxRecvWR: 4, MaxRecvSGE: 1}}, PD: e.PD()}
	if x == nil {
		if e.hasXRC() {
			e.Fatalf("the backend declares XRC but has no extended verbs")
		}
		_, err := e.PD().CreateQP(attr.QPInitAttr)
		e.ExpectErrno(err, verbs.EOPNOTSUPP, "ibv_create_qp(XRC_SEND) without XRC")
		return
	}
	q, err := x.CreateQPEx(attr)
	if !e.hasXRC() {
		e.ExpectErrno(err, verbs.EOPNOTSUPP, "ibv_create_qp_ex(XRC_SEND) on a device without XRC")
		if err == nil {
			_ = q.Destroy()
		}
		return
	}
	e.Must(err, "ibv_create_qp_ex(XRC_SEND)")
	defer func() { e.Must(q.Destroy(), "ibv_destroy_qp") }()
	if q.Type() != verbs.QPTypeXRCSend {
		e.Errorf("type %v; want XRC_SEND", q.Type())
	}
	_, init, err := q.Query(verbs.AttrCap)
	e.Must(err, "ibv_query_qp")
	if init.Cap.MaxRecvWR != 0 || init.Cap.MaxRecvSGE != 0 {
		e.Errorf("an XRC_SEND QP reports receive caps %d/%d; it has no receive queue (want 0/0)", init.Cap.MaxRecvWR, init.Cap.MaxRecvSGE)
	}
	if init.Cap.MaxSendWR < 4 {
		e.Errorf("max_send_wr %d; want at least 4", init.Cap.MaxSendWR)
	}
}

// scXRCSRQNum runs the scenario xrc/srq-num.
func scXRCSRQNum(e *Env) {
	s := e.SRQ(e.PD(), verbs.SRQAttr{MaxWR: 4, MaxSGE: 1})
	n, err := s.Num()
	if !e.hasXRC() {
		e.ExpectErrno(err, verbs.EOPNOTSUPP, "ibv_get_srq_num on a device without XRC")
		return
	}
	e.Must(err, "ibv_get_srq_num(basic SRQ)")
	d := e.xrcDomain()
	x := e.xrcSRQ(e.PD(), d, e.CQ())
	m, err := x.Num()
	e.Must(err, "ibv_get_srq_num(XRC SRQ)")
	if m == n || m == 0 || m > 0xffffff {
		e.Errorf("SRQ numbers %#x (basic) and %#x (XRC); want two different 24-bit numbers", n, m)
	}
}

// xrcRig is an XRC_SEND QP and, in one domain, an XRC_RECV QP and two XRC
// SRQs, each with its own CQ, on the scenario's device.
type xrcRig struct {
	d        verbs.XRCD
	snd, rcv verbs.QP
	scq      verbs.CQ
	srqs     [2]verbs.SRQ
	cqs      [2]verbs.CQ
	nums     [2]uint32
	rpd      verbs.PD // the SRQs' PD
}

func (e *Env) xrcRig(tgtAccess verbs.Access, adjS func(*verbs.QPAttr)) *xrcRig {
	r := &xrcRig{d: e.xrcDomain(), rpd: e.NewPD(e.Ctx)}
	r.scq = e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
	for i := range r.srqs {
		r.cqs[i] = e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
		r.srqs[i] = e.xrcSRQ(r.rpd, r.d, r.cqs[i])
		n, err := r.srqs[i].Num()
		e.Must(err, "ibv_get_srq_num")
		r.nums[i] = n
	}
	r.rcv = e.xrcRecvQP(r.d)
	r.snd = e.xrcSendQP(e.PD(), r.scq)
	e.xrcConnect(r.snd, r.rcv, tgtAccess, adjS)
	return r
}

// scXRCSendToSRQByNumber runs the scenario xrc/send-to-srq-by-number.
func scXRCSendToSRQByNumber(e *Env) {
	r := e.xrcRig(0, nil)
	rbuf := e.MR(r.rpd, 2*256, accLocal)
	for i, s := range r.srqs {
		_, err := s.PostRecv([]verbs.RecvWR{{WRID: uint64(10 + i), SGList: []verbs.SGE{sgeAt(rbuf, i*256, 256)}}})
		e.Must(err, "ibv_post_srq_recv")
	}
	local := e.MR(e.PD(), 256, accLocal)
	pattern(local.Bytes()[:64], 0x40)
	pattern(local.Bytes()[64:128], 0x80)
	// To the second SRQ first, then the first: the number decides.
	e.post(r.snd, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, RemoteSRQN: r.nums[1], SGList: []verbs.SGE{sgeAt(local, 0, 64)}})
	e.post(r.snd, verbs.SendWR{WRID: 2, Opcode: verbs.WRSendWithImm, Imm: 0x1234, Flags: verbs.SendSignaled, RemoteSRQN: r.nums[0], SGList: []verbs.SGE{sgeAt(local, 64, 33)}})
	sent := e.waitWCs(r.scq, 2, "XRC sends")
	e.expectWC(sent[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 64, QPNum: r.snd.Num()}, "the first send's completion")
	// rxe's send completions carry the length, and IBV_WC_WITH_IMM for a
	// SEND with immediate (rxe_comp.c make_send_cqe).
	e.expectWC(sent[1], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 33, QPNum: r.snd.Num(), Flags: verbs.WCWithImm}, "the second send's completion")
	got1 := e.waitWCs(r.cqs[1], 1, "the receive of SRQ %#x", r.nums[1])
	got0 := e.waitWCs(r.cqs[0], 1, "the receive of SRQ %#x", r.nums[0])
	e.expectWC(got1[0], verbs.WC{WRID: 11, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 64, QPNum: r.rcv.Num(), SrcQP: r.snd.Num(), Flags: verbs.WCGRH}, "receive on the second SRQ's CQ")
	e.expectWC(got0[0], verbs.WC{WRID: 10, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 33, Imm: 0x1234, QPNum: r.rcv.Num(), SrcQP: r.snd.Num(), Flags: verbs.WCGRH | verbs.WCWithImm}, "receive on the first SRQ's CQ")
	e.expectBytes(rbuf.Bytes()[256:256+64], local.Bytes()[:64], "the second SRQ's buffer")
	e.expectBytes(rbuf.Bytes()[:33], local.Bytes()[64:97], "the first SRQ's buffer")
}

// scXRCUnknownSRQNumber runs the scenario xrc/unknown-srq-number.
func scXRCUnknownSRQNumber(e *Env) {
	r := e.xrcRig(0, nil)
	bad := (r.nums[0] ^ 0x800000) & 0xffffff
	local := e.MR(e.PD(), 64, accLocal)
	e.post(r.snd, verbs.SendWR{WRID: 7, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, RemoteSRQN: bad, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	wcs := e.waitWCs(r.scq, 1, "a SEND to SRQ %#x, which does not exist", bad)
	if wcs[0].Status != verbs.WCRemAccessErr {
		e.Errorf("status %v; want IBV_WC_REM_ACCESS_ERR (%s)", wcs[0].Status, fmtWC(wcs[0]))
	}
	e.expectNoWC(r.cqs[0], "the SRQs' CQs after a SEND to no SRQ")
	e.expectState(r.rcv, verbs.QPSErr, "the XRC_RECV QP after an invalid XRCETH")
}

// scXRCSRQOfAnotherDomain runs the scenario xrc/srq-of-another-domain.
func scXRCSRQOfAnotherDomain(e *Env) {
	r := e.xrcRig(0, nil)
	other := e.xrcSRQ(r.rpd, e.xrcDomain(), r.cqs[0])
	n, err := other.Num()
	e.Must(err, "ibv_get_srq_num")
	rbuf := e.MR(r.rpd, 64, accLocal)
	_, err = other.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sgeAt(rbuf, 0, 64)}}})
	e.Must(err, "ibv_post_srq_recv")
	local := e.MR(e.PD(), 64, accLocal)
	e.post(r.snd, verbs.SendWR{WRID: 8, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, RemoteSRQN: n, SGList: []verbs.SGE{sgeAt(local, 0, 8)}})
	wcs := e.waitWCs(r.scq, 1, "a SEND to an SRQ of another domain")
	if wcs[0].Status != verbs.WCRemAccessErr {
		e.Errorf("status %v; want IBV_WC_REM_ACCESS_ERR (%s)", wcs[0].Status, fmtWC(wcs[0]))
	}
	e.expectNoWC(r.cqs[0], "the other domain's SRQ's CQ")
}

// scXRCWriteChecksSRQPD runs the scenario xrc/rdma-write-checks-srq-pd.
func scXRCWriteChecksSRQPD(e *Env) {
	r := e.xrcRig(verbs.AccessRemoteWrite, nil)
	target := e.MR(r.rpd, 128, accAll)
	local := e.MR(e.PD(), 128, accLocal)
	pattern(local.Bytes(), 0x33)
	e.post(r.snd, verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, RemoteSRQN: r.nums[0],
		RemoteAddr: target.Addr(), RKey: target.RKey(), SGList: []verbs.SGE{sgeAt(local, 0, 100)}})
	wcs := e.waitWCs(r.scq, 1, "a WRITE into an MR of the SRQ's PD")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRDMAWrite, ByteLen: 100, QPNum: r.snd.Num()}, "the WRITE")
	e.expectBytes(target.Bytes()[:100], local.Bytes()[:100], "the WRITE's target")
	e.expectNoWC(r.cqs[0], "the SRQ's CQ after a WRITE without immediate")

	r2 := e.xrcRig(verbs.AccessRemoteWrite, nil)
	elsewhere := e.MR(e.NewPD(e.Ctx), 128, accAll)
	e.post(r2.snd, verbs.SendWR{WRID: 2, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, RemoteSRQN: r2.nums[0],
		RemoteAddr: elsewhere.Addr(), RKey: elsewhere.RKey(), SGList: []verbs.SGE{sgeAt(local, 0, 16)}})
	wcs = e.waitWCs(r2.scq, 1, "a WRITE into an MR of another PD than the SRQ's")
	if wcs[0].Status != verbs.WCRemAccessErr {
		e.Errorf("status %v; want IBV_WC_REM_ACCESS_ERR (%s)", wcs[0].Status, fmtWC(wcs[0]))
	}
	if !zero(elsewhere.Bytes()) {
		e.Errorf("the MR of the other PD was written: % x", head(elsewhere.Bytes()))
	}
}

// scXRCOpenQPSharesTarget runs the scenario xrc/open-qp-shares-target.
func scXRCOpenQPSharesTarget(e *Env) {
	d := e.xrcDomain()
	x := e.ext()
	q, err := x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, XRCD: d})
	e.Must(err, "ibv_create_qp_ex(XRC_RECV)")
	if q.PD() != nil {
		e.Errorf("an XRC_RECV QP has a PD; it belongs to its domain")
	}
	n := q.Num()
	_, err = x.OpenQP(verbs.QPOpenAttr{QPNum: n, XRCD: d, Type: verbs.QPTypeRC})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_open_qp of type RC")
	_, err = x.OpenQP(verbs.QPOpenAttr{QPNum: n ^ 0x1, XRCD: d, Type: verbs.QPTypeXRCRecv})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_open_qp of a QP number the domain does not have")
	o, err := x.OpenQP(verbs.QPOpenAttr{QPNum: n, XRCD: d, Type: verbs.QPTypeXRCRecv})
	e.Must(err, "ibv_open_qp")
	if o.Num() != n {
		e.Errorf("the opened QP is %#x; want %#x", o.Num(), n)
	}
	e.Must(q.Destroy(), "ibv_destroy_qp(the creator's handle)")
	if err := q.Destroy(); err == nil {
		e.Errorf("a second destroy of the creator's handle succeeded")
	}
	// The QP lives on through the opened handle.
	a := e.attrsFor(verbs.QPTypeRC, n, 0, verbs.QPSReset, verbs.QPSInit, verbs.QPCap{})
	e.Must(o.Modify(&a, xrcInitMask), "ibv_modify_qp(→INIT) through the opened handle after the creator's was destroyed")
	if st := e.State(o); st != verbs.QPSInit {
		e.Errorf("state %v; want INIT", st)
	}
	e.Must(o.Destroy(), "ibv_destroy_qp(the last handle)")
	_, err = x.OpenQP(verbs.QPOpenAttr{QPNum: n, XRCD: d, Type: verbs.QPTypeXRCRecv})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_open_qp after its last handle was destroyed")
}

// scXRCBusyWhileUsed runs the scenario xrc/busy-while-used.
func scXRCBusyWhileUsed(e *Env) {
	x := e.ext()
	d, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
	e.Must(err, "ibv_open_xrcd")
	cq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 4})
	s, err := x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: e.PD(), XRCD: d, CQ: cq})
	e.Must(err, "ibv_create_srq_ex(XRC)")
	e.ExpectErrno(d.Close(), verbs.EBUSY, "ibv_close_xrcd while an XRC SRQ uses it")
	e.ExpectErrno(cq.Destroy(), verbs.EBUSY, "ibv_destroy_cq while an XRC SRQ completes on it")
	e.Must(s.Destroy(), "ibv_destroy_srq")
	q, err := x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, XRCD: d})
	e.Must(err, "ibv_create_qp_ex(XRC_RECV)")
	e.ExpectErrno(d.Close(), verbs.EBUSY, "ibv_close_xrcd while an XRC_RECV QP made through it lives")
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.Must(d.Close(), "ibv_close_xrcd once its SRQ and QP are gone")
	_, err = x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: e.PD(), CQ: cq})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_srq_ex(XRC) without an XRC domain")
	_, err = x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: e.PD(), XRCD: e.xrcDomain()})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_srq_ex(XRC) without a CQ")
}

// scXRCModifyMasks runs the scenario xrc/modify-masks.
func scXRCModifyMasks(e *Env) {
	d := e.xrcDomain()
	r := e.xrcRecvQP(d)
	s := e.xrcSendQP(e.PD(), e.CQ())
	attr := func(q verbs.QP, peer uint32, to verbs.QPState) *verbs.QPAttr {
		a := e.attrsFor(verbs.QPTypeRC, q.Num(), peer, verbs.QPSReset, to, verbs.QPCap{})
		return &a
	}
	e.Must(r.Modify(attr(r, s.Num(), verbs.QPSInit), xrcInitMask), "XRC_RECV → INIT")
	e.Must(s.Modify(attr(s, r.Num(), verbs.QPSInit), xrcInitMask), "XRC_SEND → INIT")
	err := r.Modify(attr(r, s.Num(), verbs.QPSRTR), xrcSendRTRMask)
	e.ExpectErrno(err, verbs.EINVAL, "XRC_RECV → RTR without max_dest_rd_atomic and min_rnr_timer")
	e.Must(r.Modify(attr(r, s.Num(), verbs.QPSRTR), xrcRecvRTRMask), "XRC_RECV → RTR")
	// The XRC_SEND QP needs no receive-side attributes; given, they are dropped.
	e.Must(s.Modify(attr(s, r.Num(), verbs.QPSRTR), xrcRecvRTRMask), "XRC_SEND → RTR with max_dest_rd_atomic and min_rnr_timer")
	err = s.Modify(attr(s, r.Num(), verbs.QPSRTS), xrcRecvRTSMask)
	e.ExpectErrno(err, verbs.EINVAL, "XRC_SEND → RTS with timeout and sq_psn only")
	e.Must(s.Modify(attr(s, r.Num(), verbs.QPSRTS), xrcSendRTSMask), "XRC_SEND → RTS")
	e.Must(r.Modify(attr(r, s.Num(), verbs.QPSRTS), xrcRecvRTSMask), "XRC_RECV → RTS with timeout and sq_psn only")
	for _, q := range []verbs.QP{s, r} {
		if st := e.State(q); st != verbs.QPSRTS {
			e.Errorf("%v QP in %v; want RTS", q.Type(), st)
		}
	}
}

// scXRCNoQueueWhereNone runs the scenario xrc/no-queue-where-none.
func scXRCNoQueueWhereNone(e *Env) {
	d := e.xrcDomain()
	r := e.xrcRecvQP(d)
	s := e.xrcSendQP(e.PD(), e.CQ())
	e.xrcConnect(s, r, 0, nil)
	buf := e.MR(e.PD(), 64, accLocal)
	for _, q := range []verbs.QP{s, r} {
		_, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{sgeAt(buf, 0, 64)}}})
		e.ExpectErrno(err, verbs.EINVAL, "ibv_post_recv on an %v QP", q.Type())
	}
	_, err := r.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, SGList: []verbs.SGE{sgeAt(buf, 0, 8)}}})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_post_send on an XRC_RECV QP")
	_, err = e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp(XRC_RECV): only ibv_create_qp_ex can name its domain")
	xs := e.xrcSRQ(e.PD(), d, e.CQ())
	for _, t := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD} {
		_, err = e.PD().CreateQP(verbs.QPInitAttr{Type: t, SendCQ: e.CQ(), RecvCQ: e.CQ(), SRQ: xs, Cap: DefaultCap})
		e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp(%v) with an XRC SRQ as its srq", t)
	}
	var ve *verbs.Error
	if err != nil && !errors.As(err, &ve) {
		e.Errorf("the error is %T, not a *verbs.Error", err)
	}
}

// scXRCMissingDomain runs the scenario xrc/missing-domain.
func scXRCMissingDomain(e *Env) {
	x := e.ext()
	if x == nil {
		if e.hasXRC() {
			e.Fatalf("the backend declares XRC but has no extended verbs")
		}
		return // libibverbs' dummy ops: nothing reaches the checks
	}
	cq := e.CQ()
	_, err := x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: e.PD(), CQ: cq})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_srq_ex(XRC) with a PD and a CQ but no XRC domain")
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp_ex(XRC_RECV) without an XRC domain")
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: DefaultCap}})
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp_ex(RC) without a PD")
	s, err := x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeBasic, PD: e.PD()})
	e.Must(err, "ibv_create_srq_ex(basic)")
	e.Must(s.Destroy(), "ibv_destroy_srq")
	q, err := x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: DefaultCap}, PD: e.PD()})
	e.Must(err, "ibv_create_qp_ex(RC) with a PD")
	e.Must(q.Destroy(), "ibv_destroy_qp")
}
