package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"maps"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

func createQPCmd() *command {
	return &command{Name: "create_qp", Group: gQP,
		Usage: "create_qp PD type=rc|uc|ud send_cq=CQ recv_cq=CQ [srq=SRQ] [max_send_wr=16] [max_recv_wr=16] " +
			"[max_send_sge=1] [max_recv_sge=1] [max_inline=0] [sq_sig_all]",
		Summary: "Create a queue pair (ibv_create_qp): qp0, in state RESET",
		Help: "A new QP is in RESET and can do nothing until modify_qp walks it to INIT, RTR and RTS (or connect does). " +
			"With srq= its receives come from the SRQ and post_recv on it fails. sq_sig_all makes every send signaled.",
		Args: []argSpec{argPD,
			reqKey("type", vQPType, "the transport: rc, uc or ud (or IBV_QPT_RC, ...)", "qp_type"),
			reqKey("send_cq", vCQ, "the CQ for send completions"),
			reqKey("recv_cq", vCQ, "the CQ for receive completions"),
			key("srq", vSRQ, "none", "a shared receive queue"),
			key("max_send_wr", vNum, "16", "send queue depth"),
			key("max_recv_wr", vNum, "16", "receive queue depth"),
			key("max_send_sge", vNum, "1", "SGEs per send WR"),
			key("max_recv_sge", vNum, "1", "SGEs per receive WR"),
			key("max_inline", vNum, "0", "bytes a send may carry inline", "max_inline_data"),
			flag("sq_sig_all", "every send WR completes with a CQE")},
		run: cmdCreateQP}
}

func cmdCreateQP(c *call) error {
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	typ, err := verbs.ParseQPType(c.raw("type"))
	if err != nil {
		return c.bad("type", err)
	}
	return createQP(c, pd, typ, false, nil)
}

// createQP makes a QP of PD pd with the call's CQs, SRQ and capacities:
// ibv_create_qp, or with ex ibv_create_qp_ex (create_qp_ex, for every type
// but XRC_RECV). notes are said after it.
func createQP(c *call, pd *object, typ verbs.QPType, ex bool, notes []string) error {
	scq, _, err := c.keyObj("send_cq", kCQ)
	if err != nil {
		return err
	}
	rcq, _, err := c.keyObj("recv_cq", kCQ)
	if err != nil {
		return err
	}
	srq, _, err := c.keyObj("srq", kSRQ)
	if err != nil {
		return err
	}
	var capa verbs.QPCap
	for _, f := range []struct {
		key string
		dst *int
	}{
		{"max_send_wr", &capa.MaxSendWR}, {"max_recv_wr", &capa.MaxRecvWR},
		{"max_send_sge", &capa.MaxSendSGE}, {"max_recv_sge", &capa.MaxRecvSGE},
		{"max_inline", &capa.MaxInlineData},
	} {
		if *f.dst, err = c.intArg(f.key); err != nil {
			return err
		}
	}
	if typ == verbs.QPTypeXRCSend {
		// No receive side: the kernel drops recv_cq, the SRQ and the
		// receive capacities (create_qp, uverbs_cmd.c).
		rcq, srq = nil, nil
		capa.MaxRecvWR, capa.MaxRecvSGE = 0, 0
	}
	attr := verbs.QPInitAttr{Type: typ, Cap: capa, SQSigAll: c.a.flags["sq_sig_all"]}
	if scq != nil {
		attr.SendCQ = scq.cq
	}
	if rcq != nil {
		attr.RecvCQ = rcq.cq
	}
	if srq != nil {
		attr.SRQ = srq.srq
	}
	args := fmt.Sprintf("%s, qp_type=%s, send_cq=%s, recv_cq=%s, srq=%s, sq_sig_all=%d", c.s.hn(pd), typ, nameOr(scq), nameOr(rcq), nameOr(srq), b2i(attr.SQSigAll))
	verb := "ibv_create_qp"
	var qp verbs.QP
	if ex {
		verb = "ibv_create_qp_ex"
		args = fmt.Sprintf("%s, qp_type=%s, pd=%s, send_cq=%s, recv_cq=%s, srq=%s, sq_sig_all=%d", c.s.hn(pd.parent), typ, c.s.hn(pd),
			nameOr(scq), nameOr(rcq), nameOr(srq), b2i(attr.SQSigAll))
		x, err := ext(pd.parent, verb)
		if err != nil {
			return err
		}
		if qp, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: attr, PD: pd.pd}); err != nil {
			return c.s.xrcHint(err)
		}
	} else if qp, err = pd.pd.CreateQP(attr); err != nil {
		if typ == verbs.QPTypeXRCSend {
			return c.s.xrcHint(err)
		}
		return err
	}
	o := c.s.h.add(&object{kind: kQP, qp: qp, parent: pd, dev: pd.dev, qpType: typ, sendCQ: scq, recvCQ: rcq, srqObj: srq,
		sqDepth: capa.MaxSendWR, rqDepth: capa.MaxRecvWR})
	// ibv_create_qp writes the capacities the device gave back into
	// init_attr.cap (rxe rounds the queues up to 2^k-1 and derives SGEs and
	// inline size from one WQE size); show those, as query_qp would.
	got := capa
	if a, _, err := qp.Query(verbs.AttrCap); err == nil && a.Cap.MaxSendWR > 0 {
		got = a.Cap
		o.sqDepth, o.rqDepth = a.Cap.MaxSendWR, a.Cap.MaxRecvWR
	}
	c.created(o)
	c.verbs(VerbCall{Name: verb, Args: args, Result: "→ " + c.s.hn(o)})
	c.line("%s: qp_num %s (%d)  cap: max_send_wr %d max_recv_wr %d max_send_sge %d max_recv_sge %d max_inline_data %d",
		o.name, hex24(qp.Num()), qp.Num(), got.MaxSendWR, got.MaxRecvWR, got.MaxSendSGE, got.MaxRecvSGE, got.MaxInlineData)
	if got != capa {
		c.line("%*s(asked: max_send_wr %d max_recv_wr %d max_send_sge %d max_recv_sge %d max_inline_data %d; the device rounds up)",
			len(o.name)+2, "", capa.MaxSendWR, capa.MaxRecvWR, capa.MaxSendSGE, capa.MaxRecvSGE, capa.MaxInlineData)
	}
	for _, n := range notes {
		c.line("note: %s", n)
	}
	return nil
}

// nameOr is an object's handle unstyled, as a verb's argument lists
// name it; NULL for none.
func nameOr(o *object) string {
	if o == nil {
		return "NULL"
	}
	return o.name
}

// avKeys are the modify_qp arguments that make up the address vector.
var avKeys = []string{"dgid", "sgid_index", "hop_limit", "traffic_class", "flow_label", "sl", "dlid", "is_global"}

// qpAttrs builds ibv_qp_attr and its mask from modify_qp's arguments. It
// returns them with a description in libibverbs' field names.
func qpAttrs(c *call) (verbs.QPAttr, verbs.QPAttrMask, []string, error) {
	b := &qpAttrBuild{}
	for _, k := range avKeys {
		if c.has(k) {
			b.hasAV = true
		}
	}
	for _, sp := range c.cmd.Args {
		if sp.kind != keyArg || !c.has(sp.name) {
			continue
		}
		if set := qpAttrSetters[sp.name]; set != nil {
			if err := set(c, sp.name, b); err != nil {
				return b.attr, 0, nil, err
			}
		}
	}
	if b.hasAV {
		av, avDesc, err := avAttrs(c, 1)
		if err != nil {
			return b.attr, 0, nil, err
		}
		port := b.attr.AH.PortNum
		if port == 0 {
			port = 1
		}
		b.attr.AH = av
		b.attr.AH.PortNum = port
		b.set(verbs.AttrAV, fmt.Sprintf("ah_attr={%s port_num=%d}", avDesc, port))
	}
	return b.attr, b.mask, b.desc, nil
}

// qpAttrBuild is the ibv_qp_attr that qpAttrs builds, with its mask and its
// description; hasAV is set when an address vector's arguments are given.
type qpAttrBuild struct {
	attr  verbs.QPAttr
	mask  verbs.QPAttrMask
	desc  []string
	hasAV bool
}

func (b *qpAttrBuild) set(m verbs.QPAttrMask, desc string) {
	b.mask |= m
	b.desc = append(b.desc, desc)
}

// qpAttrSetters read each modify_qp argument into its attribute. The
// address vector's arguments (avKeys) are read together, by avAttrs.
var qpAttrSetters = map[string]func(c *call, key string, b *qpAttrBuild) error{
	"state":     setQPState,
	"cur_state": setQPState,
	"pkey_index": func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.numOr(key, 0, 16)
		b.attr.PKeyIndex = uint16(n)
		b.set(verbs.AttrPKeyIndex, fmt.Sprintf("pkey_index=%d", n))
		return err
	},
	"port": func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.u8Or(key, 1)
		if b.hasAV {
			b.attr.AH.PortNum = n
			return err
		}
		b.attr.PortNum = n
		b.set(verbs.AttrPort, fmt.Sprintf("port_num=%d", n))
		return err
	},
	"access": func(c *call, key string, b *qpAttrBuild) error {
		a, err := c.access(key, 0)
		b.attr.AccessFlags = a
		b.set(verbs.AttrAccessFlags, "qp_access_flags="+a.String())
		return err
	},
	"qkey": func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.u32Or(key, 0)
		b.attr.QKey = n
		b.set(verbs.AttrQKey, fmt.Sprintf("qkey=0x%x", n))
		return err
	},
	"path_mtu": func(c *call, key string, b *qpAttrBuild) error {
		m, err := verbs.ParseMTU(c.raw(key))
		if err != nil {
			return c.bad(key, err)
		}
		b.attr.PathMTU = m
		b.set(verbs.AttrPathMTU, "path_mtu="+m.String())
		return nil
	},
	"dest_qpn": func(c *call, key string, b *qpAttrBuild) error {
		n, _, err := c.qpn(key)
		b.attr.DestQPN = n
		b.set(verbs.AttrDestQPN, "dest_qp_num="+hex24(n))
		return err
	},
	"rq_psn":             psnAttr(verbs.AttrRQPSN, func(a *verbs.QPAttr) *uint32 { return &a.RQPSN }),
	"sq_psn":             psnAttr(verbs.AttrSQPSN, func(a *verbs.QPAttr) *uint32 { return &a.SQPSN }),
	"max_dest_rd_atomic": u8Attr(verbs.AttrMaxDestRdAtomic, func(a *verbs.QPAttr) *uint8 { return &a.MaxDestRdAtomic }),
	"max_rd_atomic":      u8Attr(verbs.AttrMaxQPRdAtomic, func(a *verbs.QPAttr) *uint8 { return &a.MaxRdAtomic }),
	"min_rnr_timer":      u8Attr(verbs.AttrMinRNRTimer, func(a *verbs.QPAttr) *uint8 { return &a.MinRNRTimer }),
	"timeout":            u8Attr(verbs.AttrTimeout, func(a *verbs.QPAttr) *uint8 { return &a.Timeout }),
	"retry_cnt":          u8Attr(verbs.AttrRetryCnt, func(a *verbs.QPAttr) *uint8 { return &a.RetryCnt }),
	"rnr_retry":          u8Attr(verbs.AttrRNRRetry, func(a *verbs.QPAttr) *uint8 { return &a.RNRRetry }),
	"path_mig_state": func(c *call, key string, b *qpAttrBuild) error {
		switch strings.ToLower(c.raw(key)) {
		case "migrated", "ibv_mig_migrated", "0":
			b.attr.PathMigState = verbs.MigMigrated
		case "rearm", "ibv_mig_rearm", "1":
			b.attr.PathMigState = verbs.MigRearm
		case "armed", "ibv_mig_armed", "2":
			b.attr.PathMigState = verbs.MigArmed
		default:
			return c.bad(key, fmt.Errorf("one of: migrated, rearm, armed"))
		}
		b.set(verbs.AttrPathMigState, "path_mig_state="+b.attr.PathMigState.String())
		return nil
	},
	"en_sqd_async_notify": func(c *call, key string, b *qpAttrBuild) error {
		v, err := c.boolArg(key)
		b.attr.EnSQDAsyncNotify = v
		b.set(verbs.AttrEnSQDAsyncNotify, fmt.Sprintf("en_sqd_async_notify=%d", b2i(v)))
		return err
	},
	"rate_limit": func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.u32(key)
		b.attr.RateLimit = n
		b.set(verbs.AttrRateLimit, fmt.Sprintf("rate_limit=%d", n))
		return err
	},
}

// setQPState reads state= or cur_state=.
func setQPState(c *call, key string, b *qpAttrBuild) error {
	st, err := verbs.ParseQPState(c.raw(key))
	if err != nil {
		return c.bad(key, err)
	}
	if st == verbs.QPSUnknown || st > verbs.QPSUnknown {
		return c.bad(key, fmt.Errorf("%s is no state a QP can be asked for; one of: %s",
			c.raw(key), strings.Join(verbs.QPStateNames(), ", ")))
	}
	if key == "state" {
		b.attr.State = st
		b.set(verbs.AttrState, "qp_state="+st.String())
	} else {
		b.attr.CurState = st
		b.set(verbs.AttrCurState, "cur_qp_state="+st.String())
	}
	return nil
}

// u8Attr is the setter of an 8-bit attribute printed under its key's name.
func u8Attr(m verbs.QPAttrMask, field func(*verbs.QPAttr) *uint8) func(*call, string, *qpAttrBuild) error {
	return func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.u8(key)
		*field(&b.attr) = n
		b.set(m, fmt.Sprintf("%s=%d", key, n))
		return err
	}
}

// psnAttr is the setter of a 24-bit PSN, printed in hex.
func psnAttr(m verbs.QPAttrMask, field func(*verbs.QPAttr) *uint32) func(*call, string, *qpAttrBuild) error {
	return func(c *call, key string, b *qpAttrBuild) error {
		n, err := c.num(key, 24)
		*field(&b.attr) = uint32(n)
		b.set(m, key+"="+psnHex(uint32(n)))
		return err
	}
}

// avAttrs builds an address vector from dgid=, sgid_index=, hop_limit= ...
func avAttrs(c *call, defHop uint8) (verbs.AHAttr, string, error) {
	var av verbs.AHAttr
	idx, err := c.u8Or("sgid_index", 0)
	if err != nil {
		return av, "", err
	}
	dgid, hasGID, err := c.gid("dgid", int(idx))
	if err != nil {
		return av, "", err
	}
	av.GRH.SGIDIndex = idx
	av.GRH.DGID = dgid
	hop := uint8(0)
	if hasGID {
		hop = defHop
	}
	if av.GRH.HopLimit, err = c.u8Or("hop_limit", hop); err != nil {
		return av, "", err
	}
	if av.GRH.TrafficClass, err = c.u8Or("traffic_class", 0); err != nil {
		return av, "", err
	}
	n, err := c.numOr("flow_label", 0, 20)
	if err != nil {
		return av, "", err
	}
	av.GRH.FlowLabel = uint32(n)
	if av.SL, err = c.u8Or("sl", 0); err != nil {
		return av, "", err
	}
	d, err := c.numOr("dlid", 0, 16)
	if err != nil {
		return av, "", err
	}
	av.DLID = uint16(d)
	if av.IsGlobal, err = c.boolOr("is_global", hasGID); err != nil {
		return av, "", err
	}
	desc := fmt.Sprintf("is_global=%d", b2i(av.IsGlobal))
	if av.IsGlobal || hasGID {
		desc += fmt.Sprintf(" grh.dgid=%s grh.sgid_index=%d grh.hop_limit=%d", dgid, idx, av.GRH.HopLimit)
		if av.GRH.TrafficClass != 0 {
			desc += fmt.Sprintf(" grh.traffic_class=%d", av.GRH.TrafficClass)
		}
		if av.GRH.FlowLabel != 0 {
			desc += fmt.Sprintf(" grh.flow_label=%d", av.GRH.FlowLabel)
		}
	}
	if av.DLID != 0 {
		desc += fmt.Sprintf(" dlid=%d", av.DLID)
	}
	desc += fmt.Sprintf(" sl=%d", av.SL)
	return av, desc, nil
}

func modifyQPCmd() *command {
	return &command{Name: "modify_qp", Aliases: []string{"mqp"}, Group: gQP, Usage: "modify_qp QP [state=STATE] [ATTR=VALUE ...]",
		Summary: "Change a QP's state and attributes (ibv_modify_qp)",
		Help: "The attribute mask is made from the attributes given: state=rtr path_mtu=1024 sets IBV_QP_STATE|IBV_QP_PATH_MTU. " +
			"Each transition requires some attributes and allows others; a missing or extra one is EINVAL, and the error names it.\n\n" +
			"\tRC/UC  RESET→INIT  state=init pkey_index=0 port=1 access=remote_write     (UD: qkey=0x11111111 instead of access)\n" +
			"\tRC     INIT→RTR    state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=qp1 sgid_index=1 hop_limit=1\n" +
			"\tRC     RTR→RTS     state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=7 max_rd_atomic=1\n\n" +
			"XRC QPs walk as RC does, each with what its half needs: an XRC_SEND QP has no responder, so its RTR takes no " +
			"max_dest_rd_atomic or min_rnr_timer; an XRC_RECV QP has no requester, so its RTS needs only sq_psn and timeout.\n\n" +
			"dest_qpn= and remote QPNs take a handle (qp1) or a number; dgid= takes a GID or a handle (qp1, ctx1, B), " +
			"read at the same sgid_index. The address vector (IBV_QP_AV) is dgid, sgid_index, hop_limit, traffic_class, " +
			"flow_label, sl and dlid; dgid= implies is_global=1 and hop_limit=1. port= is the QP's port (IBV_QP_PORT) " +
			"unless address-vector attributes are given: then it is the address vector's port_num.",
		Args: []argSpec{argQP,
			key("state", vState, "", "the new state: reset, init, rtr, rts, sqd, err", "qp_state"),
			key("cur_state", vState, "", "the state the QP is believed to be in (IBV_QP_CUR_STATE)", "cur_qp_state"),
			key("pkey_index", vNum, "", "IBV_QP_PKEY_INDEX"),
			key("port", vNum, "", "IBV_QP_PORT, or the address vector's port_num", "port_num"),
			key("access", vAccess, "", "IBV_QP_ACCESS_FLAGS: what the peer may do (remote_write, remote_read, remote_atomic)", "qp_access_flags"),
			key("qkey", vNum, "", "IBV_QP_QKEY (UD)"),
			key("path_mtu", vMTU, "", "IBV_QP_PATH_MTU: 256, 512, 1024, 2048, 4096"),
			key("dest_qpn", vQPN, "", "IBV_QP_DEST_QPN: the peer QP (qp1 or a number)", "dest_qp_num"),
			key("rq_psn", vNum, "", "IBV_QP_RQ_PSN: the first PSN the peer sends"),
			key("sq_psn", vNum, "", "IBV_QP_SQ_PSN: this QP's first PSN"),
			key("max_dest_rd_atomic", vNum, "", "IBV_QP_MAX_DEST_RD_ATOMIC"),
			key("max_rd_atomic", vNum, "", "IBV_QP_MAX_QP_RD_ATOMIC", "max_qp_rd_atomic"),
			key("min_rnr_timer", vNum, "", "IBV_QP_MIN_RNR_TIMER"),
			key("timeout", vNum, "", "IBV_QP_TIMEOUT: ACK timeout, 4.096 µs × 2^timeout"),
			key("retry_cnt", vNum, "", "IBV_QP_RETRY_CNT"),
			key("rnr_retry", vNum, "", "IBV_QP_RNR_RETRY (7: forever)"),
			key("dgid", vGID, "", "address vector: the peer's GID, or a handle", "gid"),
			key("sgid_index", vNum, "", "address vector: the local GID index"),
			key("hop_limit", vNum, "", "address vector: the GRH hop limit"),
			key("traffic_class", vNum, "", "address vector: the GRH traffic class"),
			key("flow_label", vNum, "", "address vector: the GRH flow label"),
			key("sl", vNum, "", "address vector: the service level"),
			key("dlid", vNum, "", "address vector: the destination LID (InfiniBand)"),
			key("is_global", vBool, "", "address vector: whether a GRH is used"),
			key("path_mig_state", vMigState, "", "IBV_QP_PATH_MIG_STATE: migrated, rearm, armed"),
			key("en_sqd_async_notify", vBool, "", "IBV_QP_EN_SQD_ASYNC_NOTIFY"),
			key("rate_limit", vNum, "", "IBV_QP_RATE_LIMIT")},
		run: cmdModifyQP}
}

func cmdModifyQP(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	return modifyQP(c, o, false)
}

// modifyQP runs ibv_modify_qp with the call's arguments. With sameAs it also
// prints the modify_qp command that does the same (for connect).
func modifyQP(c *call, o *object, sameAs bool) error {
	attr, mask, desc, err := qpAttrs(c)
	if err != nil {
		return err
	}
	if mask == 0 {
		return usagef("give the attributes to change: modify_qp "+o.name+" state=init pkey_index=0 port=1 access=remote_write",
			"nothing to modify: no attribute given")
	}
	err = o.qp.Modify(&attr, mask)
	result := "0"
	if err != nil {
		result = verbs.ErrnoName(verbs.ErrnoOf(err))
		if result == "errno 0" {
			result = "error"
		}
	}
	if err == nil && mask&verbs.AttrState != 0 {
		o.notePath(attr.State)
		if attr.State == verbs.QPSReset {
			o.sent, o.recvs = nil, 0 // RESET empties the queues without completions
		}
	}
	c.verbs(VerbCall{Name: "ibv_modify_qp", Args: fmt.Sprintf("%s, &attr, %s", c.s.hn(o), mask), Result: "= " + result})
	c.out.addKind(render.Call, "attr: "+strings.Join(desc, " "))
	if sameAs {
		c.out.addKind(render.Verbatim, "same as: "+modifyLine(o, c.a))
	}
	if err == nil {
		if note := c.destNote(&attr, mask); note != "" {
			c.line("note: %s", note)
		}
	}
	if err == nil && !sameAs && mask&verbs.AttrAV != 0 && c.has("hop_limit") && attr.AH.RoutedHopLimit() {
		// The kernel may have changed the hop limit given: say so where it
		// was given (connect leaves it to query_qp).
		if got, _, qerr := o.qp.Query(verbs.AttrAV); qerr == nil && got.AH.GRH.HopLimit != attr.AH.GRH.HopLimit {
			c.line("hop_limit=%d became %d: %s", attr.AH.GRH.HopLimit, got.AH.GRH.HopLimit, hopLimitWhy)
		}
	}
	return err
}

// destNote says when dest_qpn= names a QP on another device than the one
// dgid= sends to: the number is then taken as that device's QP, which two
// devices that number their QPs alike make work by accident ("" else).
func (c *call) destNote(attr *verbs.QPAttr, mask verbs.QPAttrMask) string {
	if mask&verbs.AttrAV == 0 || !attr.AH.IsGlobal {
		return ""
	}
	return c.qpnNote("dest_qpn", attr.DestQPN, attr.AH.GRH.DGID, "dgid= is", "the packets go")
}

// qpnNote says when key= (dest_qpn=, remote_qpn=) names by its handle a QP
// on another device than dg's, the GID the QP number is sent to ("" else).
func (c *call) qpnNote(key string, qpn uint32, dg verbs.GID, where, goes string) string {
	v := c.a.kv[key]
	if k, isHandle := kindOfName(v); !isHandle || k != kQP {
		return ""
	}
	named, err := c.s.h.lookup(v, kQP)
	if err != nil || hasGID(ctxOf(named), dg) {
		return ""
	}
	if q := c.s.qpAtGID(qpn, dg); q != nil {
		return fmt.Sprintf("%s=%s names %s, but %s another device's GID, where QP number %s is %s: %s to %s "+
			"(two devices number their QPs alike); say %s=%s", key, v, c.s.hn(named), where, hex24(qpn), c.s.hn(q), goes, c.s.hn(q), key, q.name)
	}
	return fmt.Sprintf("%s=%s names %s, but %s another device's GID, where no QP of this session has the number %s", key, v, c.s.hn(named), where, hex24(qpn))
}

// qpAtGID finds the session's QP numbered qpn on the device that has GID
// dg, or nil.
func (s *Shell) qpAtGID(qpn uint32, dg verbs.GID) *object {
	for _, q := range s.h.ofKind(kQP) {
		if q.qp.Num() == qpn && hasGID(ctxOf(q), dg) {
			return q
		}
	}
	return nil
}

// hasGID reports whether port 1 of ctx has g in its GID table.
func hasGID(ctx verbs.Context, g verbs.GID) bool {
	if ctx == nil {
		return false
	}
	pa, err := ctx.QueryPort(1)
	if err != nil {
		return false
	}
	for i := 0; i < min(pa.GIDTblLen, gidScan); i++ {
		if x, err := ctx.QueryGID(1, i); err == nil && x == g {
			return true
		}
	}
	return false
}

// modifyLine prints the modify_qp command for a set of arguments.
func modifyLine(o *object, a *args) string {
	parts := []string{"modify_qp", o.name}
	for _, k := range a.keys {
		parts = append(parts, k+"="+a.kv[k])
	}
	return strings.Join(parts, " ")
}

func queryQPCmd() *command {
	return &command{Name: "query_qp", Aliases: []string{"qqp"}, Group: gQP, Usage: "query_qp QP",
		Summary: "Print every attribute of a QP (ibv_query_qp)",
		Args:    []argSpec{argQP}, run: cmdQueryQP}
}

func cmdQueryQP(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	attr, init, err := o.qp.Query(verbs.AttrAll)
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_query_qp", Args: fmt.Sprintf("%s, IBV_QP_STATE|...all", c.s.hn(o)), Result: "= 0"})
	for i, g := range c.s.qpAttrGroups(o, attr, init) {
		if i > 0 {
			c.line("")
		}
		c.out.add(render.KV(g))
	}
	var notes []string
	if attr.CurState != attr.State {
		notes = append(notes, fmt.Sprintf("cur_qp_state is not %s's state: rxe returns the one a modify_qp with IBV_QP_CUR_STATE "+
			"stored, RESET if none did (rxe_qp_to_attr; commit 775e6d3c8fda, Linux 6.13, makes it the state); read qp_state", o.name))
	}
	if attr.AH.RoutedHopLimit() {
		notes = append(notes, fmt.Sprintf("ah_attr.grh.hop_limit is %d whatever modify_qp gave: %s",
			attr.AH.GRH.HopLimit, hopLimitWhy))
	}
	if len(notes) > 0 {
		c.line("")
		c.out.add(strings.Join(notes, "\n"))
	}
	return nil
}

// hopLimitWhy says where a unicast address vector's hop limit comes from.
const hopLimitWhy = "for a unicast RoCE v2 destination the kernel sets it from the route " +
	"(ib_resolve_unicast_gid_dmac, drivers/infiniband/core/verbs.c)"

// qpAttrGroups lists a QP's attributes in two columns, as pyverbs prints
// them, in groups (identity and state, connection, capacities, address
// vector, timers and retries, objects), each aligned on its own, so that the
// state line reads "qp_state  IBV_QPS_RTS".
func (s *Shell) qpAttrGroups(o *object, a verbs.QPAttr, init verbs.QPInitAttr) [][][2]string {
	grh := a.AH.GRH
	objs := [][2]string{
		{"send_cq", s.hn(o.sendCQ)},
		{"recv_cq", s.hn(o.recvCQ)},
		{"srq", s.hn(o.srqObj)},
		{"sq_sig_all", fmt.Sprint(b2i(init.SQSigAll))},
	}
	if o.qpType == verbs.QPTypeXRCRecv { // no PD, CQs or SRQ: its domain
		objs = [][2]string{{"xrcd", s.hn(o.parent)}}
	}
	return [][][2]string{{
		{"qp_num", fmt.Sprintf("%s (%d)", hex24(o.qp.Num()), o.qp.Num())},
		{"qp_type", o.qpType.String()},
		{"qp_state", a.State.String()},
	}, {
		{"cur_qp_state", a.CurState.String()},
		{"path_mtu", a.PathMTU.String()},
		{"path_mig_state", a.PathMigState.String()},
		{"qkey", fmt.Sprintf("0x%x", a.QKey)},
		{"rq_psn", psnHex(a.RQPSN)},
		{"sq_psn", psnHex(a.SQPSN)},
		{"dest_qp_num", s.qpName(a.DestQPN, "")},
		{"qp_access_flags", a.AccessFlags.String()},
		{"pkey_index", fmt.Sprint(a.PKeyIndex)},
		{"port_num", fmt.Sprint(a.PortNum)},
	}, {
		{"cap.max_send_wr", fmt.Sprint(a.Cap.MaxSendWR)},
		{"cap.max_recv_wr", fmt.Sprint(a.Cap.MaxRecvWR)},
		{"cap.max_send_sge", fmt.Sprint(a.Cap.MaxSendSGE)},
		{"cap.max_recv_sge", fmt.Sprint(a.Cap.MaxRecvSGE)},
		{"cap.max_inline_data", fmt.Sprint(a.Cap.MaxInlineData)},
	}, {
		{"ah_attr.is_global", fmt.Sprint(b2i(a.AH.IsGlobal))},
		{"ah_attr.grh.dgid", grh.DGID.String()},
		{"ah_attr.grh.sgid_index", fmt.Sprint(grh.SGIDIndex)},
		{"ah_attr.grh.hop_limit", fmt.Sprint(grh.HopLimit)},
		{"ah_attr.grh.traffic_class", fmt.Sprint(grh.TrafficClass)},
		{"ah_attr.grh.flow_label", fmt.Sprint(grh.FlowLabel)},
		{"ah_attr.dlid", fmt.Sprint(a.AH.DLID)},
		{"ah_attr.sl", fmt.Sprint(a.AH.SL)},
		{"ah_attr.port_num", fmt.Sprint(a.AH.PortNum)},
	}, {
		{"max_rd_atomic", fmt.Sprint(a.MaxRdAtomic)},
		{"max_dest_rd_atomic", fmt.Sprint(a.MaxDestRdAtomic)},
		{"min_rnr_timer", fmt.Sprint(a.MinRNRTimer)},
		{"timeout", fmt.Sprint(a.Timeout)},
		{"retry_cnt", fmt.Sprint(a.RetryCnt)},
		{"rnr_retry", fmt.Sprint(a.RNRRetry)},
		{"en_sqd_async_notify", fmt.Sprint(b2i(a.EnSQDAsyncNotify))},
		{"sq_draining", fmt.Sprint(b2i(a.SQDraining))},
		{"rate_limit", fmt.Sprint(a.RateLimit)},
	}, objs}
}

func destroyQPCmd() *command {
	return &command{Name: "destroy_qp", Group: gQP, Usage: "destroy_qp QP",
		Summary: "Destroy a queue pair (ibv_destroy_qp)", Args: []argSpec{argQP}, run: cmdDestroyQP}
}

func cmdDestroyQP(c *call) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	if err := o.qp.Destroy(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_destroy_qp", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func connectCmd() *command {
	return &command{Name: "connect", Group: gQP, Usage: "connect QP QP [access=remote_write,remote_read,remote_atomic] [sgid_index=1]",
		Summary: "Take two QPs to RTS, connected to each other, as rc_pingpong does; prints every verb",
		Help: "Runs ibv_modify_qp six times: both QPs RESET→INIT, INIT→RTR (each pointing at the other), RTR→RTS, " +
			"with rc_pingpong's values: port 1, pkey_index 0, path_mtu 1024, PSN 0, max_dest_rd_atomic 1, min_rnr_timer 12, " +
			"hop_limit 1, timeout 14, retry_cnt 7, rnr_retry 7, max_rd_atomic 1, and the given QP access (all remote access by default). " +
			"UD QPs get qkey 0x11111111 and need no peer. An XRC_SEND QP connects to an XRC_RECV QP, each given only what the kernel asks of its half: " +
			"the sender no max_dest_rd_atomic or min_rnr_timer, the receiver only timeout and sq_psn for RTS. A QP already past RESET starts from where it is. " +
			"Each step is printed as the modify_qp command that does it, so you can replay it by hand.",
		Args: []argSpec{pos("QP", vQP, true, "the first QP"), pos("QP", vQP, true, "the second QP (the same one for a QP talking to itself)"),
			key("access", vAccess, "remote_write,remote_read,remote_atomic", "the QPs' access flags", "qp_access_flags"),
			key("sgid_index", vNum, "1", "the GID index on both sides"),
			key("path_mtu", vMTU, "1024", "the path MTU")},
		run: cmdConnect}
}

// cmdConnect walks two QPs to RTS, each pointing at the other, with
// rc_pingpong's values (pp_connect_ctx and the INIT step of pp_init_ctx).
func cmdConnect(c *call) error {
	a, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	b, err := c.obj(1, kQP)
	if err != nil {
		return err
	}
	if err := connectable(a, b); err != nil {
		return err
	}
	if _, err := c.access("access", 0); err != nil {
		return err
	}
	if _, err := c.u8("sgid_index"); err != nil {
		return err
	}
	if c.has("path_mtu") {
		if _, err := verbs.ParseMTU(c.raw("path_mtu")); err != nil {
			return c.bad("path_mtu", err)
		}
	}
	access := "remote_write,remote_read,remote_atomic"
	if c.has("access") {
		access = c.raw("access")
	} else if a.qpType == verbs.QPTypeUC {
		access = "remote_write"
	}
	sgid := "1"
	if c.has("sgid_index") {
		sgid = c.raw("sgid_index")
	}
	mtu := "1024"
	if c.has("path_mtu") {
		mtu = c.raw("path_mtu")
	}
	states := map[*object]verbs.QPState{}
	both := []*object{a, b}
	if a == b {
		both = both[:1]
	}
	for _, o := range both {
		attr, _, err := o.qp.Query(verbs.AttrState)
		if err != nil {
			return err
		}
		states[o] = attr.State
		c.verbs(VerbCall{Name: "ibv_query_qp", Args: fmt.Sprintf("%s, IBV_QP_STATE", c.s.hn(o)), Result: fmt.Sprintf("= 0: %s", attr.State)})
	}
	states0 := maps.Clone(states)
	pairs := []struct{ me, peer *object }{{a, b}, {b, a}}
	if a == b {
		pairs = pairs[:1]
	}
	steps := []verbs.QPState{verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS}
	modify := c.s.byKey["modify_qp"]
	for _, to := range steps {
		for _, p := range pairs {
			cur := states[p.me]
			if cur >= to && cur <= verbs.QPSRTS {
				continue
			}
			if cur > verbs.QPSRTS {
				return usagef("bring it back with modify_qp "+p.me.name+" state=reset, then connect again",
					"%s is in %s; connect starts from RESET, INIT, RTR or RTS", p.me.name, cur)
			}
			kv, keys := connectAttrs(p.me, p.peer, to, access, mtu, sgid)
			sub := &call{s: c.s, cmd: modify, a: &args{kv: kv, keys: keys, flags: map[string]bool{}}, out: c.out, cell: c.cell}
			if err := modifyQP(sub, p.me, true); err != nil {
				return err
			}
			states[p.me] = to
		}
	}
	if a == b {
		c.line("%s is connected to itself (loopback)", a.name)
	} else {
		c.line("%s and %s are connected", a.name, b.name)
	}
	// What was asked of a step a QP had taken already is not applied:
	// say so where the QP has another value.
	for _, o := range both {
		if states0[o] < verbs.QPSInit {
			continue
		}
		attr, _, err := o.qp.Query(verbs.AttrAccessFlags | verbs.AttrPathMTU | verbs.AttrAV)
		if err != nil {
			continue
		}
		var skipped []string
		if acc, err := c.access("access", 0); err == nil && c.has("access") && attr.AccessFlags != acc {
			skipped = append(skipped, "access="+c.raw("access"))
		}
		if states0[o] >= verbs.QPSRTR {
			if m, err := verbs.ParseMTU(mtu); err == nil && c.has("path_mtu") && attr.PathMTU != m {
				skipped = append(skipped, "path_mtu="+mtu)
			}
			if c.has("sgid_index") && fmt.Sprint(attr.AH.GRH.SGIDIndex) != strings.TrimSpace(sgid) {
				skipped = append(skipped, "sgid_index="+sgid)
			}
		}
		if len(skipped) > 0 {
			next := "rts" // RTR → RTS and RTS → RTS take access flags
			if states0[o] == verbs.QPSInit {
				next = "init"
			}
			c.line("note: %s was in %s already: %s not applied (a QP takes them on its way to RTS: modify_qp %s state=reset, then connect again; access= alone: modify_qp %s state=%s access=...)",
				o.name, states0[o], strings.Join(skipped, " and "), o.name, o.name, next)
		}
	}
	return nil
}

// connectable says why connect cannot take QPs a and b: two QPs of one
// type (RC, UC or UD), or an XRC_SEND QP and an XRC_RECV QP.
func connectable(a, b *object) error {
	xrcPair := a.qpType == verbs.QPTypeXRCSend && b.qpType == verbs.QPTypeXRCRecv ||
		a.qpType == verbs.QPTypeXRCRecv && b.qpType == verbs.QPTypeXRCSend
	switch {
	case xrcPair:
	case a.qpType == verbs.QPTypeXRCSend || a.qpType == verbs.QPTypeXRCRecv:
		return usagef("connect an XRC_SEND QP with an XRC_RECV QP (connect SEND_QP RECV_QP)",
			"%s is %s but %s is %s; XRC connects a sender to a receiver", a.name, a.qpType, b.name, b.qpType)
	case a.qpType != b.qpType:
		return usagef("connect two QPs of the same type", "%s is %s but %s is %s", a.name, a.qpType, b.name, b.qpType)
	}
	switch a.qpType {
	case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD, verbs.QPTypeXRCSend, verbs.QPTypeXRCRecv:
		return nil
	}
	return usagef("connect takes RC, UC or UD QPs, or an XRC_SEND QP and an XRC_RECV QP", "%s is %s", a.name, a.qpType)
}

// connectAttrs are the modify_qp arguments, in order, that take me to
// state to, addressed at peer, with rc_pingpong's values: only those the
// kernel's table asks of me's type (an XRC QP only its half's).
func connectAttrs(me, peer *object, to verbs.QPState, access, mtu, sgid string) (map[string]string, []string) {
	kv := map[string]string{}
	var keys []string
	set := func(k, v string) { kv[k] = v; keys = append(keys, k) }
	switch to {
	case verbs.QPSInit:
		set("state", "init")
		set("pkey_index", "0")
		set("port", "1")
		if me.qpType == verbs.QPTypeUD {
			set("qkey", "0x11111111")
		} else {
			set("access", access)
		}
	case verbs.QPSRTR:
		set("state", "rtr")
		if t := me.qpType; t != verbs.QPTypeUD {
			set("path_mtu", mtu)
			set("dest_qpn", peer.name)
			set("rq_psn", "0")
			if t == verbs.QPTypeRC || t == verbs.QPTypeXRCRecv { // XRC_SEND has no responder
				set("max_dest_rd_atomic", "1")
				set("min_rnr_timer", "12")
			}
			set("dgid", peer.name)
			set("sgid_index", sgid)
			set("hop_limit", "1")
		}
	case verbs.QPSRTS:
		set("state", "rts")
		set("sq_psn", "0")
		switch me.qpType {
		case verbs.QPTypeRC, verbs.QPTypeXRCSend:
			set("timeout", "14")
			set("retry_cnt", "7")
			set("rnr_retry", "7")
			set("max_rd_atomic", "1")
		case verbs.QPTypeXRCRecv: // no requester: RTS needs only timeout and sq_psn
			set("timeout", "14")
		}
	}
	return kv, keys
}

func createSRQCmd() *command {
	return &command{Name: "create_srq", Group: gQP, Usage: "create_srq PD [max_wr=64] [max_sge=1] [srq_limit=0]",
		Summary: "Create a shared receive queue (ibv_create_srq): srq0",
		Args: []argSpec{argPD, key("max_wr", vNum, "64", "the queue depth"), key("max_sge", vNum, "1", "SGEs per WR"),
			key("srq_limit", vNum, "0", "raise IBV_EVENT_SRQ_LIMIT_REACHED below this many WRs", "limit")},
		run: cmdCreateSRQ}
}

func cmdCreateSRQ(c *call) error {
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	var a verbs.SRQAttr
	if a.MaxWR, err = c.intArg("max_wr"); err != nil {
		return err
	}
	if a.MaxSGE, err = c.intArg("max_sge"); err != nil {
		return err
	}
	if a.SRQLimit, err = c.intArg("srq_limit"); err != nil {
		return err
	}
	srq, err := pd.pd.CreateSRQ(verbs.SRQInitAttr{Attr: a})
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kSRQ, srq: srq, parent: pd, dev: pd.dev, rqDepth: a.MaxWR})
	if q, err := srq.Query(); err == nil && q.MaxWR > 0 {
		o.rqDepth = q.MaxWR
	}
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_srq", Args: fmt.Sprintf("%s, max_wr=%d, max_sge=%d, srq_limit=%d", c.s.hn(pd), a.MaxWR, a.MaxSGE, a.SRQLimit), Result: "→ " + c.s.hn(o)})
	return nil
}

func modifySRQCmd() *command {
	return &command{Name: "modify_srq", Group: gQP, Usage: "modify_srq SRQ [max_wr=N] [srq_limit=N]",
		Summary: "Resize an SRQ or arm its limit (ibv_modify_srq)",
		Args: []argSpec{argSRQ, key("max_wr", vNum, "", "IBV_SRQ_MAX_WR: the new depth"),
			key("srq_limit", vNum, "", "IBV_SRQ_LIMIT: arm the limit event", "limit")},
		run: cmdModifySRQ}
}

func cmdModifySRQ(c *call) error {
	o, err := c.obj(0, kSRQ)
	if err != nil {
		return err
	}
	var a verbs.SRQAttr
	var mask verbs.SRQAttrMask
	if c.has("max_wr") {
		if a.MaxWR, err = c.intArg("max_wr"); err != nil {
			return err
		}
		mask |= verbs.SRQAttrMaxWR
	}
	if c.has("srq_limit") {
		if a.SRQLimit, err = c.intArg("srq_limit"); err != nil {
			return err
		}
		mask |= verbs.SRQAttrLimit
	}
	if mask == 0 {
		return usagef("modify_srq "+o.name+" srq_limit=8", "nothing to modify: give max_wr= or srq_limit=")
	}
	if err := o.srq.Modify(a, mask); err != nil {
		return err
	}
	if q, err := o.srq.Query(); err == nil && q.MaxWR > 0 {
		o.rqDepth = q.MaxWR
	}
	c.verbs(VerbCall{Name: "ibv_modify_srq", Args: fmt.Sprintf("%s, max_wr=%d srq_limit=%d, %s", c.s.hn(o), a.MaxWR, a.SRQLimit, mask), Result: "= 0"})
	return nil
}

func querySRQCmd() *command {
	return &command{Name: "query_srq", Group: gQP, Usage: "query_srq SRQ",
		Summary: "Print an SRQ's attributes (ibv_query_srq)", Args: []argSpec{argSRQ}, run: cmdQuerySRQ}
}

func cmdQuerySRQ(c *call) error {
	o, err := c.obj(0, kSRQ)
	if err != nil {
		return err
	}
	a, err := o.srq.Query()
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_query_srq", Args: c.s.hn(o), Result: "= 0"})
	c.out.add(render.KV([][2]string{{"max_wr", fmt.Sprint(a.MaxWR)}, {"max_sge", fmt.Sprint(a.MaxSGE)}, {"srq_limit", fmt.Sprint(a.SRQLimit)}}))
	return nil
}

func destroySRQCmd() *command {
	return &command{Name: "destroy_srq", Group: gQP, Usage: "destroy_srq SRQ",
		Summary: "Destroy a shared receive queue (ibv_destroy_srq)", Args: []argSpec{argSRQ}, run: cmdDestroySRQ}
}

func cmdDestroySRQ(c *call) error {
	o, err := c.obj(0, kSRQ)
	if err != nil {
		return err
	}
	if err := o.srq.Destroy(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_destroy_srq", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func createAHCmd() *command {
	return &command{Name: "create_ah", Group: gQP, Usage: "create_ah PD dgid=GID|HANDLE [sgid_index=0] [hop_limit=64] [port=1] [sl=0] [traffic_class=0] [flow_label=0]",
		Summary: "Create an address handle for UD sends (ibv_create_ah): ah0",
		Help:    "dgid= takes a GID (::ffff:127.0.0.2, fe80::1 or 32 hex digits) or a handle (qp1, ctx1, B), read at the same sgid_index.",
		Args: []argSpec{argPD, reqKey("dgid", vGID, "the destination GID, or a handle", "gid"),
			key("sgid_index", vNum, "0", "the local GID index"), key("hop_limit", vNum, "64", "the GRH hop limit"),
			key("port", vNum, "1", "the port", "port_num"), key("sl", vNum, "0", "the service level"),
			key("traffic_class", vNum, "0", "the GRH traffic class"), key("flow_label", vNum, "0", "the GRH flow label")},
		run: cmdCreateAH}
}

func cmdCreateAH(c *call) error {
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	av, desc, err := avAttrs(c, 64)
	if err != nil {
		return err
	}
	if av.PortNum, err = c.u8("port"); err != nil {
		return err
	}
	ah, err := pd.pd.CreateAH(av)
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kAH, ah: ah, parent: pd, dev: pd.dev})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_ah", Args: fmt.Sprintf("%s, {%s port_num=%d}", c.s.hn(pd), desc, av.PortNum), Result: "→ " + c.s.hn(o)})
	return nil
}

func destroyAHCmd() *command {
	return &command{Name: "destroy_ah", Group: gQP, Usage: "destroy_ah AH",
		Summary: "Destroy an address handle (ibv_destroy_ah)",
		Args:    []argSpec{pos("AH", vAH, true, "an address handle: ah0")}, run: cmdDestroyAH}
}

func cmdDestroyAH(c *call) error {
	o, err := c.obj(0, kAH)
	if err != nil {
		return err
	}
	if err := o.ah.Destroy(); err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_destroy_ah", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func mcast(c *call, attach bool) error {
	o, err := c.obj(0, kQP)
	if err != nil {
		return err
	}
	g, _, err := c.gid("gid", 0)
	if err != nil {
		return err
	}
	lid, err := c.numOr("lid", 0, 16)
	if err != nil {
		return err
	}
	name := "ibv_attach_mcast"
	if attach {
		err = o.qp.AttachMcast(g, uint16(lid))
	} else {
		name = "ibv_detach_mcast"
		err = o.qp.DetachMcast(g, uint16(lid))
	}
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: name, Args: fmt.Sprintf("%s, %s, %d", c.s.hn(o), g, lid), Result: "= 0"})
	o.trackGroup(g, attach)
	return nil
}

func attachMcastCmd() *command {
	return &command{Name: "attach_mcast", Group: gQP, Usage: "attach_mcast QP gid=GID [lid=0]",
		Summary: "Join a UD QP to a multicast group (ibv_attach_mcast)",
		Args:    []argSpec{argQP, reqKey("gid", vGID, "the multicast GID (ff0e::...)", "dgid"), key("lid", vNum, "0", "the multicast LID")},
		run:     cmdAttachMcast}
}

func cmdAttachMcast(c *call) error { return mcast(c, true) }
func detachMcastCmd() *command {
	return &command{Name: "detach_mcast", Group: gQP, Usage: "detach_mcast QP gid=GID [lid=0]",
		Summary: "Leave a multicast group (ibv_detach_mcast)",
		Args:    []argSpec{argQP, reqKey("gid", vGID, "the multicast GID", "dgid"), key("lid", vNum, "0", "the multicast LID")},
		run:     cmdDetachMcast}
}

func cmdDetachMcast(c *call) error { return mcast(c, false) }
