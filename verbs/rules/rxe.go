package rules

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// The rules of Linux 6.1 rxe with rdma-core 44, each in the order the
// kernel checks it. Where the simulator and the real backend's explanations
// are worded differently today, a rule carries both wordings (say); the
// condition is one.

// RXE is the control-path profile of soft-RoCE: the facts a rule needs of
// the device and the process. In Predict mode a zero limit is one the
// backend could not query, and is not checked.
type RXE struct {
	Mode           Mode
	Attr           verbs.DeviceAttr
	Port           verbs.PortAttr // port 1
	NumCompVectors int
	CapNetRaw      bool
	// GID returns the GID in slot index of port; filled is false for an
	// empty slot, known false when the caller cannot tell. Nil: unknown.
	GID func(port uint8, index int) (g verbs.GID, filled, known bool)
	// Name is the device's name, for explanations.
	Name string
	// XRC is set for the simulator beyond rxe (sim.Config.XRC): XRC_SEND
	// QPs are made as mlx5 makes them. Kernel rxe has no XRC.
	XRC bool
}

// Linux error numbers the rules return that package verbs does not name.
const (
	ENODATA = syscall.Errno(61)
)

// RXEMaxInlineData is RXE_MAX_INLINE_DATA in Linux 6.1, which
// ibv_query_device does not report.
const RXEMaxInlineData = 512

// IBQPSetQKey is IB_QP_SET_QKEY: a Q_Key with the high bit is a controlled
// (privileged) one.
const IBQPSetQKey = 0x80000000

// LegacyModifyBits are the attribute bits the kernel's legacy modify_qp
// command takes, IBV_QP_STATE..IBV_QP_DEST_QPN
// (IB_USER_LEGACY_LAST_QP_ATTR_MASK).
const LegacyModifyBits = verbs.AttrDestQPN<<1 - 1

// AccessSupported is IB_ACCESS_SUPPORTED: bits 0..7 and the optional range
// 20..29.
const AccessSupported = verbs.Access(1<<8-1) | verbs.Access((1<<10-1)<<20)

// say picks the wording of the profile's mode.
func (r *RXE) say(decide, predict string) string {
	if r.Mode == Decide {
		return decide
	}
	return predict
}

// PortValid is rdma_is_port_valid.
func (r *RXE) PortValid(p uint8) bool { return p >= 1 && p <= r.Attr.PhysPortCnt }

func (r *RXE) roce() bool { return r.Port.LinkLayer == verbs.LinkLayerEthernet }

// GIDTblLen is the port's GID table length (1024 when unknown).
func (r *RXE) GIDTblLen() int {
	if r.Port.GIDTblLen > 0 {
		return r.Port.GIDTblLen
	}
	return 1024
}

// huge maps a negative count to what it is in C (a u32 far above any
// limit), so that the limit checks refuse it.
func huge(n int) int64 {
	if n < 0 {
		return 1 << 32
	}
	return int64(n)
}

// QPType is the type check of ibv_create_qp: libibverbs' type switch,
// uverbs' CAP_NET_RAW check for raw packet QPs, then rxe_qp_chk_init (RC,
// UC and UD only).
func (r *RXE) QPType(t verbs.QPType) Verdict {
	const op = "ibv_create_qp"
	var v Verdict
	hint := r.say("use type rc, uc or ud", "use rc, uc or ud")
	switch t {
	case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD:
	case verbs.QPTypeXRCRecv:
		if r.XRC {
			v.fail(op, verbs.EINVAL, "make it in an XRC domain: create_qp_ex type=xrc_recv xrcd=XRCD",
				"an XRC_RECV QP belongs to an XRC domain, not to a PD; ibv_create_qp cannot pass one (libibverbs ibv_icmd_create_qp)")
			break
		}
		v.fail(op, verbs.EINVAL, hint, r.say("an XRC_RECV QP needs an XRC domain, and rxe has no XRC support",
			"IBV_QPT_XRC_RECV needs an XRC domain, which ibv_create_qp cannot pass (libibverbs ibv_icmd_create_qp)"))
	case verbs.QPTypeRawPacket:
		if !r.CapNetRaw {
			v.fail(op, verbs.EPERM,
				r.say("use type rc, uc or ud; raw packet QPs need root (CAP_NET_RAW), and rxe has none anyway",
					"use rc, uc or ud (or run as root to see rxe refuse it)"),
				r.say("a RAW_PACKET QP needs CAP_NET_RAW, which this process lacks (uverbs create_qp checks it before the driver)",
					"IBV_QPT_RAW_PACKET needs CAP_NET_RAW; the kernel refuses it before the driver sees it (UVERBS_METHOD_QP_CREATE)"))
			break
		}
		v.fail(op, verbs.EOPNOTSUPP, hint, r.say(fmt.Sprintf("rxe does not support %s QPs (rxe_qp_chk_init accepts RC, UC and UD only)", t),
			"rxe does not implement raw packet QPs (rxe_qp_chk_init: only RC, UC and UD)"))
	case verbs.QPTypeXRCSend:
		if r.XRC {
			break
		}
		v.fail(op, verbs.EOPNOTSUPP, hint, r.say(fmt.Sprintf("rxe does not support %s QPs (rxe_qp_chk_init accepts RC, UC and UD only)", t),
			"rxe does not implement XRC (rxe_qp_chk_init: only RC, UC and UD)"))
	default:
		v.fail(op, verbs.EINVAL, hint, r.say("%s is not a QP type (create_qp)", "%s is not a QP type libibverbs knows (ibv_icmd_create_qp)"), t)
	}
	return v
}

// QPCap is rxe_qp_chk_cap: the capabilities against the device's limits;
// with an SRQ the receive side is not checked.
func (r *RXE) QPCap(c verbs.QPCap, hasSRQ bool) Verdict {
	const op = "ibv_create_qp"
	var v Verdict
	a := &r.Attr
	maxInline := a.MaxInlineData
	if maxInline == 0 {
		maxInline = RXEMaxInlineData
	}
	for _, l := range []struct {
		name string
		v    int
		max  int
		skip bool
	}{
		{"max_send_wr", c.MaxSendWR, a.MaxQPWR, false},
		{"max_send_sge", c.MaxSendSGE, a.MaxSGE, false},
		{"max_recv_wr", c.MaxRecvWR, a.MaxQPWR, hasSRQ},
		{"max_recv_sge", c.MaxRecvSGE, a.MaxSGE, hasSRQ},
		{"max_inline_data", c.MaxInlineData, maxInline, false},
	} {
		if l.skip || l.max <= 0 || huge(l.v) <= int64(l.max) {
			continue
		}
		v.fail(op, verbs.EINVAL, fmt.Sprintf(r.say("ask for at most %d (query_device shows the limits)", "ask for at most %d"), l.max),
			r.say("cap.%s %d is larger than the device allows (%d) (rxe_qp_chk_cap)", "cap.%s %d is above the device's limit %d (rxe_qp_chk_cap)"),
			l.name, l.v, l.max)
	}
	return v
}

// QP is what the rules know of a QP being modified.
type QP struct {
	Type  verbs.QPType
	State verbs.QPState // the state it is in
	// Draining says the send queue is still draining in SQD; DrainKnown is
	// false when the caller cannot tell (Predict only).
	Draining, DrainKnown bool
	// Port is the port it was bound to at RESET→INIT; 0 when unknown.
	Port uint8
}

// ImpliesPort reports whether uverbs' modify_qp adds IBV_QP_PORT to the
// mask: an IBV_QP_AV given without it outside INIT→RTR brings the AV's port.
func ImpliesPort(a *verbs.QPAttr, mask verbs.QPAttrMask) bool {
	return mask&verbs.AttrAV != 0 && !(mask&verbs.AttrState != 0 && a.State == verbs.QPSRTR) && mask&verbs.AttrPort == 0
}

// ModifyQPCommand is what libibverbs' ibv_cmd_modify_qp and the kernel's
// uverbs modify_qp check of ibv_modify_qp, before _ib_modify_qp: the mask's
// bits, (Predict) the ports named, the states' range and a privileged
// Q_Key. The simulator checks the ports later (ModifyQPPort).
func (r *RXE) ModifyQPCommand(q QP, a *verbs.QPAttr, mask verbs.QPAttrMask) Verdict {
	const op = "ibv_modify_qp"
	var v Verdict
	if r.Mode == Decide {
		if extra := mask &^ LegacyModifyBits; extra != 0 {
			v.fail(op, verbs.EOPNOTSUPP, "drop "+extra.Short(),
				"%s is not accepted by ibv_modify_qp (ib_uverbs_modify_qp: only IBV_QP_STATE..IBV_QP_DEST_QPN)", extra)
			return v
		}
		if (mask&verbs.AttrState != 0 && a.State > verbs.QPSErr) || (mask&verbs.AttrCurState != 0 && a.CurState > verbs.QPSErr) {
			v.fail(op, verbs.EINVAL, "use one of reset, init, rtr, rts, sqd, err",
				"%s is not a QP state a program can ask for (modify_qp: qp_state > IB_QPS_ERR)", a.State)
		}
	} else {
		if extra := mask &^ (verbs.AttrRateLimit - 1); extra != 0 {
			v.fail(op, verbs.EOPNOTSUPP, "drop "+extra.Short(),
				"%s needs the extended modify command (ibv_cmd_modify_qp sends only IBV_QP_STATE..IBV_QP_DEST_QPN), which rxe does not use", extra)
			return v
		}
		if extra := mask &^ LegacyModifyBits; extra != 0 {
			v.fail(op, verbs.EOPNOTSUPP, "drop "+extra.Short(),
				"%s is not an attribute of the legacy modify command (ib_uverbs_modify_qp takes IBV_QP_STATE..IBV_QP_DEST_QPN)", extra)
			return v
		}
		r.modifyPorts(&v, q, a, mask)
		if mask&verbs.AttrState != 0 && a.State > verbs.QPSErr {
			v.fail(op, verbs.EINVAL, "use one of reset, init, rtr, rts, sqd, err",
				"IBV_QP_STATE %s is not a state a program can ask for (modify_qp: qp_state > IB_QPS_ERR)", a.State)
		}
		if mask&verbs.AttrCurState != 0 && a.CurState > verbs.QPSErr {
			v.fail(op, verbs.EINVAL, "use one of reset, init, rtr, rts, sqd, err",
				"IBV_QP_CUR_STATE %s is not a state (modify_qp: cur_qp_state > IB_QPS_ERR)", a.CurState)
		}
	}
	if mask&verbs.AttrQKey != 0 && a.QKey&IBQPSetQKey != 0 && !r.CapNetRaw {
		v.fail(op, verbs.EPERM, "use a Q_Key below 0x80000000, e.g. qkey=0x11111111",
			r.say("IBV_QP_QKEY %#08x has the high bit set, which makes it a privileged (controlled) Q_Key; "+
				"only a process with CAP_NET_RAW may set one (uverbs modify_qp, rdma_nl_get_privileged_qkey)",
				"IBV_QP_QKEY %#08x has the high bit set, which makes it a controlled (privileged) Q_Key; only a process with CAP_NET_RAW may set one (modify_qp)"),
			a.QKey)
	}
	return v
}

// modifyPorts is uverbs modify_qp's port checks, where the kernel makes
// them (Predict).
func (r *RXE) modifyPorts(v *Verdict, q QP, a *verbs.QPAttr, mask verbs.QPAttrMask) {
	const op = "ibv_modify_qp"
	if mask&verbs.AttrPort != 0 && !r.PortValid(a.PortNum) {
		v.fail(op, verbs.EINVAL, "set port=1: rxe devices have one port",
			"IBV_QP_PORT %d is not a port of this device (modify_qp: rdma_is_port_valid)", a.PortNum)
	}
	if mask&verbs.AttrAV != 0 {
		switch {
		case !r.PortValid(a.AH.PortNum):
			v.fail(op, verbs.EINVAL, "set ah_attr.port_num=1",
				"IBV_QP_AV names port %d (ah_attr.port_num), which is not a port of this device (modify_qp: rdma_is_port_valid)", a.AH.PortNum)
		case mask&verbs.AttrState != 0 && a.State == verbs.QPSRTR:
			if q.Port != 0 && a.AH.PortNum != q.Port {
				v.fail(op, verbs.EINVAL, fmt.Sprintf("set ah_attr.port_num=%d", q.Port),
					"IBV_QP_AV's port_num %d differs from the port %d the QP was bound to at INIT (modify_qp)", a.AH.PortNum, q.Port)
			}
		case mask&verbs.AttrPort != 0 && a.PortNum != a.AH.PortNum:
			v.fail(op, verbs.EINVAL, "give the same port in port and ah_attr.port_num",
				"IBV_QP_PORT %d and IBV_QP_AV's port_num %d differ (modify_qp)", a.PortNum, a.AH.PortNum)
		}
	}
	if mask&verbs.AttrAltPath != 0 && (!r.PortValid(a.AltPortNum) || !r.PortValid(a.AltAH.PortNum) || a.AltPortNum != a.AltAH.PortNum) {
		v.fail(op, verbs.EINVAL, "drop alt_path: RoCE has no alternate paths",
			"IBV_QP_ALT_PATH names port %d and alt_ah_attr.port_num %d; both must be the same valid port (modify_qp)", a.AltPortNum, a.AltAH.PortNum)
	}
}

// ModifyQPPort is the simulator's check of IBV_QP_PORT (rdma_is_port_valid),
// which it makes after the transition table (Decide; Predict makes it in
// ModifyQPCommand).
func (r *RXE) ModifyQPPort(a *verbs.QPAttr, mask verbs.QPAttrMask) Verdict {
	var v Verdict
	if mask&verbs.AttrPort != 0 {
		v.Add(r.CheckPort("ibv_modify_qp", a.PortNum))
	}
	return v
}

// CheckPort is rdma_is_port_valid for a port a verb names.
func (r *RXE) CheckPort(op string, port uint8) Verdict {
	var v Verdict
	if !r.PortValid(port) {
		v.fail(op, verbs.EINVAL,
			r.say("use port 1: rxe devices have a single port",
				fmt.Sprintf("use port 1 (this device has %d port(s), numbered from 1)", r.Attr.PhysPortCnt)),
			r.say("port %d does not exist (rdma_is_port_valid); rxe has one port, numbered 1", "port %d does not exist (rdma_is_port_valid)"), port)
	}
	return v
}

// GIDIndex is the GID table's bound, for ibv_query_gid and
// ibv_query_gid_type.
func (r *RXE) GIDIndex(op string, index int) Verdict {
	var v Verdict
	if n := r.GIDTblLen(); index < 0 || index >= n {
		v.fail(op, verbs.EINVAL, fmt.Sprintf("GID indexes run from 0 to %d; rxe fills 0 (link-local) and 1 (IPv4-mapped)", n-1),
			r.say("GID index %d is outside the table of %d entries (rdma_get_gid_attr)", "GID index %d is outside the table of %d entries (rdma_query_gid)"),
			index, n)
	}
	return v
}

// AV is what the kernel checks of an address vector, for ibv_create_ah and
// IBV_QP_AV (attrName says which: "the AH", "IBV_QP_AV"): the port
// (rdma_is_port_valid), a GRH on RoCE (rdma_check_ah_attr), the source GID
// index (rdma_get_gid_attr: outside the table EINVAL, an empty slot
// ENODATA). field names the attribute ("ah_attr").
func (r *RXE) AV(op, field string, a *verbs.AHAttr, attrName string) Verdict {
	var v Verdict
	if !r.PortValid(a.PortNum) {
		v.fail(op, verbs.EINVAL, r.say("set port_num=1 in the address vector", "set "+field+".port_num=1 (the device's one port)"),
			r.say(fmt.Sprintf("%s.port_num is %d; rxe has one port, numbered 1 (rdma_is_port_valid)", field, a.PortNum),
				fmt.Sprintf("%s.port_num %d is not a port of this device (rdma_is_port_valid); %s is refused", field, a.PortNum, attrName)))
		return v
	}
	if !a.IsGlobal {
		if r.roce() {
			v.fail(op, verbs.EINVAL,
				r.say("set is_global=1 with dgid=<peer GID> and sgid_index=1 (rc_pingpong: pass -g 1)",
					"set is_global=1 with dgid=<peer GID> and sgid_index=<your RoCE v2 GID index>"),
				r.say(fmt.Sprintf("%s has no GRH (is_global=0), but on RoCE the GRH is mandatory: it carries the IP addresses (rdma_check_ah_attr)", field),
					fmt.Sprintf("%s has no GRH (is_global=0), but on RoCE every address needs one (rdma_check_ah_attr; rxe(7): the GRH is mandatory with RoCE); %s is refused",
						field, attrName)))
		}
		return v
	}
	idx := int(a.GRH.SGIDIndex)
	if idx >= r.GIDTblLen() {
		v.fail(op, verbs.EINVAL, r.say("use sgid_index=1 (the IPv4-mapped GID) or 0 (link-local)", "use the index of your RoCE v2 GID (ibv_devinfo -v lists them)"),
			r.say(fmt.Sprintf("%s.grh.sgid_index %d is outside the GID table (rdma_get_gid_attr)", field, idx),
				fmt.Sprintf("%s.grh.sgid_index %d is outside the GID table of %d entries (rdma_get_gid_attr); %s is refused", field, idx, r.GIDTblLen(), attrName)))
		return v
	}
	filled, known := false, false
	if r.GID != nil {
		_, filled, known = r.GID(a.PortNum, idx)
	}
	switch {
	case !known:
		v.maybe(op, ENODATA, "use the index of a filled GID (ibv_devinfo -v)",
			"%s.grh.sgid_index %d may name an empty GID slot (rdma_get_gid_attr)", field, idx)
	case filled:
	case r.Mode == Decide:
		g0, _, _ := r.GID(a.PortNum, 0)
		g1, _, _ := r.GID(a.PortNum, 1)
		v.fail(op, ENODATA, "use sgid_index=1 (the IPv4-mapped GID) or 0 (link-local); query_gid shows the table",
			"%s.grh.sgid_index %d names an empty GID table slot; %s has GIDs at 0 (%s) and 1 (%s) (rdma_get_gid_attr)",
			field, idx, r.Name, g0, g1)
	default:
		v.fail(op, ENODATA, "use the index of a filled GID: 1 is the IPv4-mapped RoCE v2 GID on rxe with one IPv4 address",
			"%s.grh.sgid_index %d names an empty GID slot (rdma_get_gid_attr: ENODATA); rc_pingpong gets 255 there when only one side passes -g",
			field, idx)
	}
	return v
}

// ModifyQPAltPath is _ib_modify_qp's ban on alternate paths on a RoCE
// port; Predict first checks the alternate AV as the kernel does.
func (r *RXE) ModifyQPAltPath(a *verbs.QPAttr, mask verbs.QPAttrMask) Verdict {
	const op = "ibv_modify_qp"
	var v Verdict
	if mask&verbs.AttrAltPath == 0 {
		return v
	}
	if r.Mode == Predict {
		v.Add(r.AV(op, "alt_ah_attr", &a.AltAH, "IBV_QP_ALT_PATH"))
	}
	if r.roce() {
		v.fail(op, verbs.EINVAL, "drop alt_path: RoCE has no alternate paths",
			r.say("alternate paths (APM) are InfiniBand-only; the core refuses IBV_QP_ALT_PATH on a RoCE port (_ib_modify_qp)",
				"IBV_QP_ALT_PATH: alternate paths (APM) are InfiniBand-only; the core bans them on a RoCE port (_ib_modify_qp)"))
	}
	return v
}

// States returns the state a modify starts from (IBV_QP_CUR_STATE when
// given, as rxe_qp_chk_attr takes it) and the one it asks for.
func States(q QP, a *verbs.QPAttr, mask verbs.QPAttrMask) (cur, next verbs.QPState) {
	cur = q.State
	if mask&verbs.AttrCurState != 0 {
		cur = a.CurState
	}
	next = cur
	if mask&verbs.AttrState != 0 {
		next = a.State
	}
	return cur, next
}

// ModifyQPTransition is ib_modify_qp_is_ok (verbs.CheckTransition). mask is
// the one the kernel judges; implied says IBV_QP_PORT in it came from the
// AV (ImpliesPort), which the explanation then names.
func (r *RXE) ModifyQPTransition(q QP, a *verbs.QPAttr, mask verbs.QPAttrMask, implied bool) Verdict {
	var v Verdict
	cur, next := States(q, a, mask)
	e := verbs.CheckTransition(q.Type, cur, next, mask)
	if e == nil {
		return v
	}
	if implied && strings.Contains(e.Why, "does not accept") && strings.Contains(e.Why, "IBV_QP_PORT") {
		e.Why += "; IBV_QP_PORT was not asked for: the kernel adds it to an IBV_QP_AV given without it " +
			r.say("outside INIT→RTR (uverbs modify_qp)", "outside INIT→RTR (uverbs modify_qp: the AV's port becomes the QP's port)")
		e.Hint = "drop IBV_QP_AV here: alone it implies IBV_QP_PORT, which this transition does not accept"
	}
	v.Findings = append(v.Findings, Finding{Err: e, Certain: true})
	return v
}

// ModifyQPAttr is rxe_qp_chk_attr after the transition: leaving SQD while
// the send queue drains, (Predict) access flags, the path MTU against the
// port's max_mtu, max_rd_atomic against max_qp_rd_atom, the timeout's 5 bits.
//
// path_mtu 0: rxe 6.1 only compares it with max_mtu and stores an MTU of -1
// bytes. The simulator refuses it (Decide: certain); the real backend can
// only say it may fail (Predict: uncertain).
func (r *RXE) ModifyQPAttr(q QP, a *verbs.QPAttr, mask verbs.QPAttrMask) Verdict {
	const op = "ibv_modify_qp"
	var v Verdict
	cur, next := States(q, a, mask)
	if mask&verbs.AttrState != 0 && cur == verbs.QPSSQD && next != verbs.QPSErr && (q.Draining || (r.Mode == Predict && !q.DrainKnown)) {
		switch {
		case r.Mode == Decide:
			v.fail(op, verbs.EINVAL, "wait for IBV_EVENT_SQ_DRAINED, or go to err",
				"the send queue is still draining; from SQD only ERR is allowed until it has drained (rxe_qp_chk_attr)")
		case q.DrainKnown:
			v.fail(op, verbs.EINVAL, "wait for IBV_EVENT_SQ_DRAINED (or until query_qp shows sq_draining=0), or go to err",
				"the send queue is still draining; from SQD only ERR is allowed until it has drained (rxe_qp_chk_attr)")
		default:
			v.maybe(op, verbs.EINVAL, "wait for IBV_EVENT_SQ_DRAINED, or go to err",
				"the send queue may still be draining; from SQD only ERR is allowed until it has drained (rxe_qp_chk_attr)")
		}
	}
	const qpAccess = verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic | verbs.AccessMWBind
	if r.Mode == Predict && mask&verbs.AttrAccessFlags != 0 && a.AccessFlags&^qpAccess != 0 {
		v.maybe(op, verbs.EINVAL, "use local_write, remote_write, remote_read, remote_atomic",
			"qp_access_flags %s has flags a QP does not take (rxe_qp_chk_attr)", a.AccessFlags)
	}
	if mask&verbs.AttrPathMTU != 0 {
		maxMTU := r.Port.MaxMTU
		if maxMTU == 0 {
			maxMTU = verbs.MTU4096
		}
		if a.PathMTU > maxMTU {
			v.fail(op, verbs.EINVAL,
				r.say("use path_mtu=1024 (the port's active MTU) or at most 4096",
					"use path_mtu=1024 (the port's active MTU on a 1500-byte netdev) or at most the port's max_mtu"),
				r.say("path_mtu %s is larger than the port's max_mtu %s (rxe_qp_chk_attr)",
					"IBV_QP_PATH_MTU %s is larger than the port's max_mtu %s (rxe_qp_chk_attr)"), a.PathMTU, maxMTU)
		} else if a.PathMTU == 0 {
			v.failIf(r.Mode == Decide, op, verbs.EINVAL, "use path_mtu=1024 (IBV_MTU_1024 is 3)",
				r.say("path_mtu 0 is not an MTU (the enum runs from IBV_MTU_256=1 to IBV_MTU_4096=5); rxe itself does not catch this, the simulator does",
					"IBV_QP_PATH_MTU 0 is not an MTU (IBV_MTU_256=1 .. IBV_MTU_4096=5)"))
		}
	}
	if mask&verbs.AttrMaxQPRdAtomic != 0 && r.Attr.MaxQPRdAtom > 0 && int(a.MaxRdAtomic) > r.Attr.MaxQPRdAtom {
		v.fail(op, verbs.EINVAL, fmt.Sprintf("use max_rd_atomic of at most %d", r.Attr.MaxQPRdAtom),
			r.say("max_rd_atomic %d is larger than the device's max_qp_rd_atom %d (rxe_qp_chk_attr)",
				"IBV_QP_MAX_QP_RD_ATOMIC %d is larger than the device's max_qp_rd_atom %d (rxe_qp_chk_attr)"), a.MaxRdAtomic, r.Attr.MaxQPRdAtom)
	}
	if mask&verbs.AttrTimeout != 0 && a.Timeout > 31 {
		v.fail(op, verbs.EINVAL, "use timeout=14 (about 67 ms); the field has 5 bits",
			r.say("timeout %d is larger than 31 (rxe_qp_chk_attr)",
				"IBV_QP_TIMEOUT %d is larger than 31 (rxe_qp_chk_attr: the retransmit timer is 4.096 µs << timeout)"), a.Timeout)
	}
	return v
}
