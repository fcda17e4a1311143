package verbstest

import (
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

const srcChkCap = "sw/rxe/rxe_qp.c rxe_qp_chk_cap (Linux 6.1): max_send_wr/max_recv_wr > max_qp_wr, max_send_sge/max_recv_sge > 32, max_inline_data > RXE_MAX_INLINE_DATA (512) are -EINVAL"

// qpScenarios are this file's scenarios, each Run a named function.
var qpScenarios = []Scenario{
	{
		Name:   "qp/create-each-type",
		Source: "ibv_create_qp(3): a new QP is in RESET; rxe_qp.c rxe_qp_from_init; rxe_param.h RXE_MIN_QP_INDEX 16 (QPNs 0-15 reserved), QPN is 24 bits",
		Run:    scQPCreateEachType,
	},
	{
		Name:   "qp/query-caps-rounded",
		Source: "sw/rxe/rxe_qp.c rxe_qp_init_req/rxe_qp_init_resp and rxe_qp_to_init: queue depths roundup_pow_of_two(n+1)-1 (rxe_queue_init); the send WQE holds max(max_send_sge*16, max_inline_data) bytes, from which query's max_send_sge and max_inline_data are derived",
		Run:    scQPQueryCapsRounded,
	},
	{
		Name:   "qp/caps-over-device-limits",
		Source: srcChkCap,
		Run:    scQPCapsOverDeviceLimits,
	},
	{
		Name:   "qp/caps-at-device-limits",
		Source: srcChkCap + " (the limits themselves are allowed)",
		Run:    scQPCapsAtDeviceLimits,
	},
	{
		Name:   "qp/missing-cq",
		Source: "sw/rxe/rxe_qp.c rxe_qp_chk_init: a QP without a send or receive CQ is -EINVAL (\"missing cq\")",
		Run:    scQPMissingCQ,
	},
	{
		Name:   "qp/separate-cqs-and-sig-all",
		Source: "ibv_create_qp(3) send_cq, recv_cq, sq_sig_all; rxe_qp.c rxe_qp_to_init returns send_cq, recv_cq, sq_sig_type",
		Run:    scQPSeparateCQsAndSigAll,
	},
	{
		Name:   "qp/unsupported-types",
		Source: "sw/rxe/rxe_qp.c rxe_qp_chk_init: only RC, UC, UD (and GSI) — others are -EOPNOTSUPP; rdma-core v44 libibverbs/cmd_qp.c ibv_icmd_create_qp: XRC_RECV without an XRCD, or an unknown type, is EINVAL",
		Run:    scQPUnsupportedTypes,
	},
	{
		Name:   "qp/raw-packet-needs-cap-net-raw",
		Source: "core/uverbs_std_types_qp.c UVERBS_METHOD_QP_CREATE: IB_UVERBS_QPT_RAW_PACKET without capable(CAP_NET_RAW) is -EPERM, checked before the driver; with it, rxe_qp_chk_init says -EOPNOTSUPP. Options.CapNetRaw says which applies",
		Run:    scQPRawPacketNeedsCapNetRaw,
	},
	{
		Name:   "qp/destroy-twice",
		Source: "ibv_destroy_qp(3); DESIGN.md: double destroy is a clear error, never a crash",
		Run:    scQPDestroyTwice,
	},
	{
		Name:   "mcast/attach-rules",
		Source: "core/verbs.c ib_attach_mcast/ib_detach_mcast: the GID must be multicast and the QP UD, else -EINVAL (the LID is ignored on Ethernet: is_valid_mcast_lid)",
		Run:    scMcastAttachRules,
	},
	{
		Name:   "mcast/destroy-attached-qp-busy",
		Source: "core/uverbs_std_types_qp.c uverbs_free_qp: a user destroy with multicast attachments left is -EBUSY; rxe_qp.c rxe_qp_chk_destroy (IBA o10-2.2.3)",
		Run:    scMcastDestroyAttachedQPBusy,
	},
}

func init() {
	registerAll(qpScenarios)
}

// scQPCreateEachType runs the scenario qp/create-each-type.
func scQPCreateEachType(e *Env) {
	seen := map[uint32]bool{}
	for _, typ := range qpTypes {
		q := e.QP(typ)
		if q.Type() != typ {
			e.Errorf("Type() = %v; want %v", q.Type(), typ)
		}
		if n := q.Num(); n < rxe61.MinQPN || n > 0xffffff || seen[n] {
			e.Errorf("%v QP number %#x: want unique, >= %d, 24 bits", typ, n, rxe61.MinQPN)
		}
		seen[q.Num()] = true
		if s := e.State(q); s != verbs.QPSReset {
			e.Errorf("new %v QP state = %v; want RESET", typ, s)
		}
		if q.PD() != e.PD() {
			e.Errorf("QP.PD() is not the PD it was created on")
		}
	}
}

// scQPQueryCapsRounded runs the scenario qp/query-caps-rounded.
func scQPQueryCapsRounded(e *Env) {
	for _, c := range []verbs.QPCap{
		{MaxSendWR: 1, MaxRecvWR: 500, MaxSendSGE: 1, MaxRecvSGE: 1},                    // rc_pingpong
		{MaxSendWR: 10, MaxRecvWR: 10, MaxSendSGE: 2, MaxRecvSGE: 3, MaxInlineData: 0},  // inline 0 still gets 32 bytes
		{MaxSendWR: 64, MaxRecvWR: 0, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 100}, // inline 100 gives 6 SGEs
		{MaxSendWR: 0, MaxRecvWR: 1, MaxSendSGE: 0, MaxRecvSGE: 0, MaxInlineData: 512},
	} {
		for _, typ := range qpTypes {
			q := e.NewQP(e.PD(), verbs.QPInitAttr{Type: typ, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: c})
			attr, init, err := q.Query(verbs.AttrCap)
			e.Must(err, "ibv_query_qp(IBV_QP_CAP)")
			sge, inline := rxeSendCaps(c.MaxSendSGE, c.MaxInlineData)
			want := verbs.QPCap{
				MaxSendWR: rxeQueueDepth(c.MaxSendWR), MaxRecvWR: rxeQueueDepth(c.MaxRecvWR),
				MaxSendSGE: sge, MaxRecvSGE: c.MaxRecvSGE, MaxInlineData: inline,
			}
			if init.Cap != want {
				e.Errorf("%v QP created with %+v: query init cap = %+v; want %+v", typ, c, init.Cap, want)
			}
			if attr.Cap != (verbs.QPCap{}) && attr.Cap != want {
				e.Errorf("%v QP created with %+v: query attr cap = %+v; want %+v", typ, c, attr.Cap, want)
			}
			_ = q.Destroy()
		}
	}
}

// scQPCapsOverDeviceLimits runs the scenario qp/caps-over-device-limits.
func scQPCapsOverDeviceLimits(e *Env) {
	base := verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	for _, c := range []struct {
		name string
		mod  func(*verbs.QPCap)
	}{
		{"max_send_wr", func(c *verbs.QPCap) { c.MaxSendWR = rxe61.MaxQPWR + 1 }},
		{"max_recv_wr", func(c *verbs.QPCap) { c.MaxRecvWR = rxe61.MaxQPWR + 1 }},
		{"max_send_sge", func(c *verbs.QPCap) { c.MaxSendSGE = rxe61.MaxSGE + 1 }},
		{"max_recv_sge", func(c *verbs.QPCap) { c.MaxRecvSGE = rxe61.MaxSGE + 1 }},
		{"max_inline_data", func(c *verbs.QPCap) { c.MaxInlineData = rxe61.MaxInlineData + 1 }},
	} {
		for _, typ := range qpTypes {
			capv := base
			c.mod(&capv)
			_, err := e.PD().CreateQP(verbs.QPInitAttr{Type: typ, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: capv})
			e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp(%v, %s over the device limit)", typ, c.name)
		}
	}
}

// scQPCapsAtDeviceLimits runs the scenario qp/caps-at-device-limits.
func scQPCapsAtDeviceLimits(e *Env) {
	q := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(),
		Cap: verbs.QPCap{MaxSendWR: 1024, MaxRecvWR: 1024, MaxSendSGE: rxe61.MaxSGE, MaxRecvSGE: rxe61.MaxSGE, MaxInlineData: rxe61.MaxInlineData}})
	_, init, err := q.Query(verbs.AttrCap)
	e.Must(err, "ibv_query_qp")
	if init.Cap.MaxSendSGE != rxe61.MaxSGE || init.Cap.MaxInlineData != rxe61.MaxInlineData || init.Cap.MaxRecvSGE != rxe61.MaxSGE {
		e.Errorf("query cap = %+v; want 32 SGEs each way and 512 bytes inline", init.Cap)
	}
}

// scQPMissingCQ runs the scenario qp/missing-cq.
func scQPMissingCQ(e *Env) {
	for _, c := range []struct {
		name     string
		send, rx verbs.CQ
	}{{"no send CQ", nil, e.CQ()}, {"no recv CQ", e.CQ(), nil}, {"no CQ", nil, nil}} {
		e.NoPanic("ibv_create_qp("+c.name+")", func() {
			_, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: c.send, RecvCQ: c.rx, Cap: DefaultCap})
			e.ExpectErrno(err, verbs.EINVAL, "ibv_create_qp(%s)", c.name)
		})
	}
}

// scQPSeparateCQsAndSigAll runs the scenario qp/separate-cqs-and-sig-all.
func scQPSeparateCQsAndSigAll(e *Env) {
	scq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 8})
	rcq := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 8})
	for _, all := range []bool{false, true} {
		q := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: scq, RecvCQ: rcq, SQSigAll: all, Cap: DefaultCap})
		_, init, err := q.Query(verbs.AttrCap)
		e.Must(err, "ibv_query_qp")
		if init.SendCQ != scq || init.RecvCQ != rcq {
			e.Errorf("query: send/recv CQ are not the ones given")
		}
		if init.SQSigAll != all {
			e.Errorf("query: sq_sig_all = %v; want %v", init.SQSigAll, all)
		}
		if init.Type != verbs.QPTypeUD {
			e.Errorf("query: qp_type = %v; want UD", init.Type)
		}
	}
}

// scQPUnsupportedTypes runs the scenario qp/unsupported-types.
func scQPUnsupportedTypes(e *Env) {
	for _, c := range []struct {
		typ  verbs.QPType
		want syscall.Errno
	}{
		{verbs.QPTypeXRCSend, verbs.EOPNOTSUPP},
		{verbs.QPTypeXRCRecv, verbs.EINVAL},
		{verbs.QPType(99), verbs.EINVAL},
	} {
		e.NoPanic("ibv_create_qp("+c.typ.String()+")", func() {
			q, err := e.PD().CreateQP(verbs.QPInitAttr{Type: c.typ, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
			if err == nil {
				e.Defer(func() { _ = q.Destroy() })
			}
			e.ExpectErrno(err, c.want, "ibv_create_qp(%v)", c.typ)
		})
	}
}

// scQPRawPacketNeedsCapNetRaw runs the scenario qp/raw-packet-needs-cap-net-raw.
func scQPRawPacketNeedsCapNetRaw(e *Env) {
	want := verbs.EPERM
	if e.Opts.CapNetRaw {
		want = verbs.EOPNOTSUPP
	}
	q, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRawPacket, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
	if err == nil {
		e.Defer(func() { _ = q.Destroy() })
	}
	e.ExpectErrno(err, want, "ibv_create_qp(IBV_QPT_RAW_PACKET), CAP_NET_RAW %v", e.Opts.CapNetRaw)
}

// scQPDestroyTwice runs the scenario qp/destroy-twice.
func scQPDestroyTwice(e *Env) {
	q, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
	e.Must(err, "ibv_create_qp")
	e.Must(q.Destroy(), "ibv_destroy_qp")
	e.NoPanic("second ibv_destroy_qp", func() { e.ExpectError(q.Destroy(), "second ibv_destroy_qp") })
	e.NoPanic("ibv_modify_qp on a destroyed QP", func() {
		attr := verbs.QPAttr{State: verbs.QPSInit}
		e.ExpectError(q.Modify(&attr, aState|aPKey|aPort|aAccess), "ibv_modify_qp on a destroyed QP")
	})
}

// scMcastAttachRules runs the scenario mcast/attach-rules.
func scMcastAttachRules(e *Env) {
	mgid := verbs.GID{0xff, 0x0e, 15: 0x01}
	rc := e.QP(verbs.QPTypeRC)
	e.ExpectErrno(rc.AttachMcast(mgid, 0), verbs.EINVAL, "ibv_attach_mcast on an RC QP")
	ud := e.QP(verbs.QPTypeUD)
	e.ExpectErrno(ud.AttachMcast(e.GID, 0), verbs.EINVAL, "ibv_attach_mcast(unicast GID %v)", e.GID)
	e.Must(ud.AttachMcast(mgid, 0xc001), "ibv_attach_mcast(%v) on a UD QP", mgid)
	e.Must(ud.DetachMcast(mgid, 0xc001), "ibv_detach_mcast(%v)", mgid)
}

// scMcastDestroyAttachedQPBusy runs the scenario mcast/destroy-attached-qp-busy.
func scMcastDestroyAttachedQPBusy(e *Env) {
	mgid := verbs.GID{0xff, 0x0e, 15: 0x02}
	ud, err := e.PD().CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
	e.Must(err, "ibv_create_qp(UD)")
	e.Defer(func() { _ = ud.Destroy() })
	e.Must(ud.AttachMcast(mgid, 0), "ibv_attach_mcast")
	e.ExpectErrno(ud.Destroy(), verbs.EBUSY, "ibv_destroy_qp while attached to %v", mgid)
	e.Must(ud.DetachMcast(mgid, 0), "ibv_detach_mcast")
	e.Must(ud.Destroy(), "ibv_destroy_qp after detaching")
}
