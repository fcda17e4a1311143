package ibverbs

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// The rules: what Linux 6.1 rxe and rdma-core 44 do with a call, in the
// order they check it. They are pure Go over what the backend knows (device
// limits, the QP's state and capacities, the objects alive), so that they are
// tested on any machine; the cgo side gathers the facts and calls them.

// devFacts is what the backend knows of a device when it predicts.
type devFacts struct {
	Attr           verbs.DeviceAttr
	Port           verbs.PortAttr // port 1
	NumCompVectors int
	CapNetRaw      bool
	// GIDSlot reports whether GID slot index of port is empty; known is
	// false when the backend could not tell.
	GIDSlot func(port uint8, index int) (empty, known bool)
}

func (d *devFacts) portValid(p uint8) bool { return p >= 1 && p <= d.Attr.PhysPortCnt }

func (d *devFacts) roce() bool { return d.Port.LinkLayer == verbs.LinkLayerEthernet }

func (d *devFacts) gidTblLen() int {
	if d.Port.GIDTblLen > 0 {
		return d.Port.GIDTblLen
	}
	return 1024
}

// ibQPSetQKey is IB_QP_SET_QKEY: a Q_Key with the high bit is a controlled
// (privileged) one.
const ibQPSetQKey = 0x80000000

// legacyModifyBits are the attribute bits the kernel's legacy modify_qp
// command takes (IB_USER_LEGACY_LAST_QP_ATTR_MASK is IB_QP_DEST_QPN).
const legacyModifyBits = verbs.AttrDestQPN<<1 - 1

// modifyFacts is what the backend knows of a QP when it predicts a modify.
type modifyFacts struct {
	Type       verbs.QPType
	Cur        verbs.QPState // the state the QP is in
	SQDraining bool          // in SQD, the send queue is still draining
	DrainKnown bool
	// Port is the port the QP was bound to (IBV_QP_PORT at RESET→INIT); 0
	// when unknown.
	Port uint8
}

// checkAV applies rdma_check_ah_attr and rdma_get_gid_attr (through
// rdma_fill_sgid_attr) to an address vector, as _ib_modify_qp and
// rdma_create_user_ah do.
func checkAV(p *prediction, d *devFacts, what string, a *verbs.AHAttr, attrName string) {
	if !d.portValid(a.PortNum) {
		p.fail(verbs.EINVAL, "set "+what+".port_num=1 (the device's one port)",
			"%s.port_num %d is not a port of this device (rdma_is_port_valid); %s is refused", what, a.PortNum, attrName)
		return
	}
	if !a.IsGlobal {
		if d.roce() {
			p.fail(verbs.EINVAL, "set is_global=1 with dgid=<peer GID> and sgid_index=<your RoCE v2 GID index>",
				"%s has no GRH (is_global=0), but on RoCE every address needs one (rdma_check_ah_attr; rxe(7): the GRH is mandatory with RoCE); %s is refused",
				what, attrName)
		}
		return
	}
	idx := int(a.GRH.SGIDIndex)
	if idx >= d.gidTblLen() {
		p.fail(verbs.EINVAL, "use the index of your RoCE v2 GID (ibv_devinfo -v lists them)",
			"%s.grh.sgid_index %d is outside the GID table of %d entries (rdma_get_gid_attr); %s is refused", what, idx, d.gidTblLen(), attrName)
		return
	}
	if d.GIDSlot == nil {
		p.maybe(errENODATA, "use the index of a filled GID (ibv_devinfo -v)",
			"%s.grh.sgid_index %d may name an empty GID slot (rdma_get_gid_attr)", what, idx)
		return
	}
	empty, known := d.GIDSlot(a.PortNum, idx)
	switch {
	case empty && known:
		p.fail(errENODATA, "use the index of a filled GID: 1 is the IPv4-mapped RoCE v2 GID on rxe with one IPv4 address",
			"%s.grh.sgid_index %d names an empty GID slot (rdma_get_gid_attr: ENODATA); rc_pingpong gets 255 there when only one side passes -g",
			what, idx)
	case !known:
		p.maybe(errENODATA, "use the index of a filled GID (ibv_devinfo -v)",
			"%s.grh.sgid_index %d may name an empty GID slot (rdma_get_gid_attr)", what, idx)
	}
}

// predictModifyQP is ibv_modify_qp on rxe: libibverbs' ibv_cmd_modify_qp,
// then the kernel's uverbs modify_qp, _ib_modify_qp and rxe_qp_chk_attr, in
// that order. The transition table is verbs.CheckTransition.
func predictModifyQP(d *devFacts, f modifyFacts, a *verbs.QPAttr, mask verbs.QPAttrMask) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s QP in %s, mask %s", f.Type.Short(), f.Cur, mask)}
	// libibverbs: ibv_cmd_modify_qp sends only the legacy bits.
	if extra := mask &^ (verbs.AttrRateLimit - 1); extra != 0 {
		p.fail(verbs.EOPNOTSUPP, "drop "+extra.Short(),
			"%s needs the extended modify command (ibv_cmd_modify_qp sends only IBV_QP_STATE..IBV_QP_DEST_QPN), which rxe does not use", extra)
		return p
	}
	if extra := mask &^ legacyModifyBits; extra != 0 {
		p.fail(verbs.EOPNOTSUPP, "drop "+extra.Short(),
			"%s is not an attribute of the legacy modify command (ib_uverbs_modify_qp takes IBV_QP_STATE..IBV_QP_DEST_QPN)", extra)
		return p
	}
	// uverbs modify_qp.
	if mask&verbs.AttrPort != 0 && !d.portValid(a.PortNum) {
		p.fail(verbs.EINVAL, "set port=1: rxe devices have one port",
			"IBV_QP_PORT %d is not a port of this device (modify_qp: rdma_is_port_valid)", a.PortNum)
	}
	impliedPort := false
	if mask&verbs.AttrAV != 0 {
		if !d.portValid(a.AH.PortNum) {
			p.fail(verbs.EINVAL, "set ah_attr.port_num=1",
				"IBV_QP_AV names port %d (ah_attr.port_num), which is not a port of this device (modify_qp: rdma_is_port_valid)", a.AH.PortNum)
		} else if mask&verbs.AttrState != 0 && a.State == verbs.QPSRTR {
			if f.Port != 0 && a.AH.PortNum != f.Port {
				p.fail(verbs.EINVAL, fmt.Sprintf("set ah_attr.port_num=%d", f.Port),
					"IBV_QP_AV's port_num %d differs from the port %d the QP was bound to at INIT (modify_qp)", a.AH.PortNum, f.Port)
			}
		} else {
			if mask&verbs.AttrPort != 0 && a.PortNum != a.AH.PortNum {
				p.fail(verbs.EINVAL, "give the same port in port and ah_attr.port_num",
					"IBV_QP_PORT %d and IBV_QP_AV's port_num %d differ (modify_qp)", a.PortNum, a.AH.PortNum)
			}
			if mask&verbs.AttrPort == 0 {
				mask |= verbs.AttrPort
				impliedPort = true
			}
		}
	}
	if mask&verbs.AttrAltPath != 0 && (!d.portValid(a.AltPortNum) || !d.portValid(a.AltAH.PortNum) || a.AltPortNum != a.AltAH.PortNum) {
		p.fail(verbs.EINVAL, "drop alt_path: RoCE has no alternate paths",
			"IBV_QP_ALT_PATH names port %d and alt_ah_attr.port_num %d; both must be the same valid port (modify_qp)", a.AltPortNum, a.AltAH.PortNum)
	}
	if mask&verbs.AttrState != 0 && a.State > verbs.QPSErr {
		p.fail(verbs.EINVAL, "use one of reset, init, rtr, rts, sqd, err",
			"IBV_QP_STATE %s is not a state a program can ask for (modify_qp: qp_state > IB_QPS_ERR)", a.State)
	}
	if mask&verbs.AttrCurState != 0 && a.CurState > verbs.QPSErr {
		p.fail(verbs.EINVAL, "use one of reset, init, rtr, rts, sqd, err",
			"IBV_QP_CUR_STATE %s is not a state (modify_qp: cur_qp_state > IB_QPS_ERR)", a.CurState)
	}
	if mask&verbs.AttrQKey != 0 && a.QKey&ibQPSetQKey != 0 && !d.CapNetRaw {
		p.fail(verbs.EPERM, "use a Q_Key below 0x80000000, e.g. qkey=0x11111111",
			"IBV_QP_QKEY %#08x has the high bit set, which makes it a controlled (privileged) Q_Key; only a process with CAP_NET_RAW may set one (modify_qp)", a.QKey)
	}
	if len(p.reasons) > 0 {
		return p
	}
	// _ib_modify_qp: the address vectors' source GIDs, then the RoCE ban on
	// alternate paths.
	if mask&verbs.AttrAV != 0 {
		checkAV(&p, d, "ah_attr", &a.AH, "IBV_QP_AV")
	}
	if mask&verbs.AttrAltPath != 0 {
		checkAV(&p, d, "alt_ah_attr", &a.AltAH, "IBV_QP_ALT_PATH")
		if d.roce() {
			p.fail(verbs.EINVAL, "drop alt_path: RoCE has no alternate paths",
				"IBV_QP_ALT_PATH: alternate paths (APM) are InfiniBand-only; the core bans them on a RoCE port (_ib_modify_qp)")
		}
	}
	if mask&verbs.AttrPKeyIndex != 0 && d.Port.PKeyTblLen > 0 && int(a.PKeyIndex) >= int(d.Port.PKeyTblLen) {
		p.maybe(verbs.EINVAL, "use pkey_index=0",
			"IBV_QP_PKEY_INDEX %d is outside the P_Key table of %d entries (ib_security_modify_qp)", a.PKeyIndex, d.Port.PKeyTblLen)
	}
	if mask&verbs.AttrAV != 0 && a.AH.IsGlobal {
		p.maybe(syscall.EHOSTUNREACH, "use a dgid this host can reach: your own GID for loopback, or the peer's RoCE GID",
			"the kernel could not resolve the Ethernet address of dgid %v (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
		p.maybe(syscall.ENETUNREACH, "use a dgid this host can reach", "there is no route to dgid %v (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
		p.maybe(verbs.ETIMEDOUT, "use a dgid this host can reach", "resolving dgid %v timed out (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
	}
	// rxe_qp_chk_attr: the transition table first.
	cur := f.Cur
	if mask&verbs.AttrCurState != 0 {
		cur = a.CurState
	}
	next := cur
	if mask&verbs.AttrState != 0 {
		next = a.State
	}
	if e := verbs.CheckTransition(f.Type, cur, next, mask); e != nil {
		why, hint := e.Why, e.Hint
		if impliedPort && strings.Contains(why, "does not accept") && strings.Contains(why, "IBV_QP_PORT") {
			why += "; IBV_QP_PORT was not asked for: the kernel adds it to an IBV_QP_AV given without it outside INIT→RTR " +
				"(uverbs modify_qp: the AV's port becomes the QP's port)"
			hint = "drop IBV_QP_AV here: alone it implies IBV_QP_PORT, which this transition does not accept"
		}
		p.reasons = append(p.reasons, reason{errno: e.Errno, why: why, hint: hint, certain: true})
	}
	if mask&verbs.AttrState != 0 && cur == verbs.QPSSQD && next != verbs.QPSErr {
		switch {
		case f.DrainKnown && f.SQDraining:
			p.fail(verbs.EINVAL, "wait for IBV_EVENT_SQ_DRAINED (or until query_qp shows sq_draining=0), or go to err",
				"the send queue is still draining; from SQD only ERR is allowed until it has drained (rxe_qp_chk_attr)")
		case !f.DrainKnown:
			p.maybe(verbs.EINVAL, "wait for IBV_EVENT_SQ_DRAINED, or go to err",
				"the send queue may still be draining; from SQD only ERR is allowed until it has drained (rxe_qp_chk_attr)")
		}
	}
	if mask&verbs.AttrAccessFlags != 0 && a.AccessFlags&^(verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead|verbs.AccessRemoteAtomic|verbs.AccessMWBind) != 0 {
		p.maybe(verbs.EINVAL, "use local_write, remote_write, remote_read, remote_atomic",
			"qp_access_flags %s has flags a QP does not take (rxe_qp_chk_attr)", a.AccessFlags)
	}
	if mask&verbs.AttrPathMTU != 0 {
		maxMTU := d.Port.MaxMTU
		if maxMTU == 0 {
			maxMTU = verbs.MTU4096
		}
		if a.PathMTU > maxMTU {
			p.fail(verbs.EINVAL, "use path_mtu=1024 (the port's active MTU on a 1500-byte netdev) or at most the port's max_mtu",
				"IBV_QP_PATH_MTU %s is larger than the port's max_mtu %s (rxe_qp_chk_attr)", a.PathMTU, maxMTU)
		} else if a.PathMTU == 0 {
			p.maybe(verbs.EINVAL, "use path_mtu=1024 (IBV_MTU_1024 is 3)",
				"IBV_QP_PATH_MTU 0 is not an MTU (IBV_MTU_256=1 .. IBV_MTU_4096=5)")
		}
	}
	if mask&verbs.AttrMaxQPRdAtomic != 0 && d.Attr.MaxQPRdAtom > 0 && int(a.MaxRdAtomic) > d.Attr.MaxQPRdAtom {
		p.fail(verbs.EINVAL, fmt.Sprintf("use max_rd_atomic of at most %d", d.Attr.MaxQPRdAtom),
			"IBV_QP_MAX_QP_RD_ATOMIC %d is larger than the device's max_qp_rd_atom %d (rxe_qp_chk_attr)", a.MaxRdAtomic, d.Attr.MaxQPRdAtom)
	}
	if mask&verbs.AttrTimeout != 0 && a.Timeout > 31 {
		p.fail(verbs.EINVAL, "use timeout=14 (about 67 ms); the field has 5 bits",
			"IBV_QP_TIMEOUT %d is larger than 31 (rxe_qp_chk_attr: the retransmit timer is 4.096 µs << timeout)", a.Timeout)
	}
	if mask&verbs.AttrMaxDestRdAtomic != 0 {
		p.maybe(verbs.ENOMEM, "ask for a smaller max_dest_rd_atomic",
			"the kernel could not allocate %d responder resources (rxe_qp_from_attr)", a.MaxDestRdAtomic)
	}
	return p
}

// predictRegMR is ibv_reg_mr on rxe: ib_uverbs_reg_mr's ib_check_mr_access,
// then ib_umem_get.
func predictRegMR(length int, access verbs.Access, memlock uint64, capIPCLock bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("length %d, access %s", length, access)}
	const supported = verbs.Access(1<<8-1) | verbs.Access((1<<10-1)<<20) // IB_ACCESS_SUPPORTED: bits 0..7 and the optional range 20..29
	if extra := access &^ supported; extra != 0 {
		p.fail(verbs.EINVAL, "drop "+extra.String(),
			"access %s has bits no verbs flag defines (ib_check_mr_access: outside IB_ACCESS_SUPPORTED)", extra)
	}
	if access&(verbs.AccessRemoteWrite|verbs.AccessRemoteAtomic) != 0 && access&verbs.AccessLocalWrite == 0 {
		p.fail(verbs.EINVAL, "add local_write: access=local_write,"+(access&(verbs.AccessRemoteWrite|verbs.AccessRemoteAtomic)).Short(),
			"%s needs IBV_ACCESS_LOCAL_WRITE too: the device writes the MR on the peer's behalf (ib_check_mr_access)",
			access&(verbs.AccessRemoteWrite|verbs.AccessRemoteAtomic))
	}
	if access&verbs.AccessOnDemand != 0 {
		p.fail(verbs.EINVAL, "drop on_demand: rxe in Linux 6.1 has no on-demand paging",
			"IBV_ACCESS_ON_DEMAND needs on-demand paging, which rxe in Linux 6.1 does not offer (ib_check_mr_access: no IBK_ON_DEMAND_PAGING)")
	}
	if length == 0 {
		p.fail(verbs.EINVAL, "register at least one byte", "length 0 pins no page (ib_umem_get: npages == 0)")
	}
	if len(p.reasons) == 0 && length > 0 && !capIPCLock && memlock != ^uint64(0) {
		// The kernel counts pinned pages against RLIMIT_MEMLOCK; the
		// process may already have other memory pinned, so this is a
		// guess unless this one registration alone is too large.
		pages := (uint64(length) + 4095) / 4096
		if pages*4096 > memlock {
			p.fail(verbs.ENOMEM, "raise the limit (ulimit -l unlimited) or register less",
				"pinning %d bytes exceeds the locked-memory limit of %d bytes (RLIMIT_MEMLOCK, ulimit -l; ib_umem_get)", pages*4096, memlock)
		} else {
			p.maybe(verbs.ENOMEM, "raise the limit (ulimit -l unlimited), deregister other MRs, or register less",
				"together with the memory this process has pinned already, %d more bytes may exceed the locked-memory limit of %d bytes (RLIMIT_MEMLOCK, ulimit -l; ib_umem_get)",
				pages*4096, memlock)
		}
	}
	p.maybe(verbs.ENOMEM, "register less", "the kernel is out of memory for the registration")
	p.maybe(verbs.EFAULT, "", "the kernel could not pin the pages (ib_umem_get)")
	return p
}

// predictCreateCQ is ibv_create_cq on rxe: uverbs' comp_vector check, then
// rxe_cq_chk_attr.
func predictCreateCQ(d *devFacts, cqe, compVector int) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("cqe %d, comp_vector %d", cqe, compVector)}
	if d.NumCompVectors > 0 && (compVector < 0 || compVector >= d.NumCompVectors) {
		p.fail(verbs.EINVAL, "use comp_vector=0",
			"comp_vector %d is not below the device's num_comp_vectors %d (create_cq)", compVector, d.NumCompVectors)
	}
	checkCQE(&p, d, cqe, "ibv_create_cq")
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the CQ")
	return p
}

func checkCQE(p *prediction, d *devFacts, cqe int, op string) {
	switch {
	case cqe <= 0:
		p.fail(verbs.EINVAL, "ask for at least one entry: cqe=16",
			"cqe %d: a CQ needs at least one entry (rxe_cq_chk_attr)", cqe)
	case d.Attr.MaxCQE > 0 && cqe > d.Attr.MaxCQE:
		p.fail(verbs.EINVAL, fmt.Sprintf("ask for at most %d entries", d.Attr.MaxCQE),
			"cqe %d is above the device's max_cqe %d (rxe_cq_chk_attr)", cqe, d.Attr.MaxCQE)
	}
}

// predictResizeCQ is ibv_resize_cq on rxe (rxe_resize_cq → rxe_cq_chk_attr).
func predictResizeCQ(d *devFacts, cqe int) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("cqe %d", cqe)}
	checkCQE(&p, d, cqe, "ibv_resize_cq")
	p.maybe(verbs.EINVAL, "poll the CQ first, or ask for more entries",
		"the CQ holds more completions than %d entries (rxe_cq_chk_attr)", cqe)
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the new queue")
	return p
}

// qpCreate is what predictCreateQP needs to know of a create_qp call.
type qpCreate struct {
	Type   verbs.QPType
	Cap    verbs.QPCap
	HasSRQ bool
}

// predictCreateQP is ibv_create_qp on rxe: libibverbs' type switch
// (ibv_icmd_create_qp), uverbs' CAP_NET_RAW check for raw packet QPs, then
// rxe_qp_chk_init and rxe_qp_chk_cap.
func predictCreateQP(d *devFacts, c qpCreate) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s, cap %+v, srq %v", c.Type, c.Cap, c.HasSRQ)}
	switch c.Type {
	case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD:
	case verbs.QPTypeXRCRecv:
		p.fail(verbs.EINVAL, "use rc, uc or ud",
			"IBV_QPT_XRC_RECV needs an XRC domain, which ibv_create_qp cannot pass (libibverbs ibv_icmd_create_qp)")
		return p
	case verbs.QPTypeRawPacket:
		if !d.CapNetRaw {
			p.fail(verbs.EPERM, "use rc, uc or ud (or run as root to see rxe refuse it)",
				"IBV_QPT_RAW_PACKET needs CAP_NET_RAW; the kernel refuses it before the driver sees it (UVERBS_METHOD_QP_CREATE)")
			return p
		}
		p.fail(verbs.EOPNOTSUPP, "use rc, uc or ud", "rxe does not implement raw packet QPs (rxe_qp_chk_init: only RC, UC and UD)")
		return p
	case verbs.QPTypeXRCSend:
		p.fail(verbs.EOPNOTSUPP, "use rc, uc or ud", "rxe does not implement XRC (rxe_qp_chk_init: only RC, UC and UD)")
		return p
	default:
		p.fail(verbs.EINVAL, "use rc, uc or ud", "%s is not a QP type libibverbs knows (ibv_icmd_create_qp)", c.Type)
		return p
	}
	a := &d.Attr
	check := func(name string, v, max int, skip bool) {
		if !skip && max > 0 && v > max {
			p.fail(verbs.EINVAL, fmt.Sprintf("ask for at most %d", max),
				"cap.%s %d is above the device's limit %d (rxe_qp_chk_cap)", name, v, max)
		}
	}
	check("max_send_wr", c.Cap.MaxSendWR, a.MaxQPWR, false)
	check("max_send_sge", c.Cap.MaxSendSGE, a.MaxSGE, false)
	check("max_recv_wr", c.Cap.MaxRecvWR, a.MaxQPWR, c.HasSRQ)
	check("max_recv_sge", c.Cap.MaxRecvSGE, a.MaxSGE, c.HasSRQ)
	maxInline := a.MaxInlineData
	if maxInline == 0 {
		maxInline = rxeMaxInlineData
	}
	check("max_inline_data", c.Cap.MaxInlineData, maxInline, false)
	p.maybe(verbs.ENOMEM, "ask for smaller queues", "the kernel could not allocate the queues")
	return p
}

// rxeMaxInlineData is RXE_MAX_INLINE_DATA in Linux 6.1, which
// ibv_query_device does not report.
const rxeMaxInlineData = 512

// predictCreateSRQ is ibv_create_srq on rxe (rxe_srq_chk_init).
func predictCreateSRQ(d *devFacts, a verbs.SRQAttr) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v", a)}
	switch {
	case a.MaxWR <= 0:
		p.fail(verbs.EINVAL, "ask for at least one entry: max_wr=16", "max_wr %d: an SRQ needs at least one entry (rxe_srq_chk_init)", a.MaxWR)
	case d.Attr.MaxSRQWR > 0 && a.MaxWR > d.Attr.MaxSRQWR:
		p.fail(verbs.EINVAL, fmt.Sprintf("ask for at most %d", d.Attr.MaxSRQWR),
			"max_wr %d is above the device's max_srq_wr %d (rxe_srq_chk_init)", a.MaxWR, d.Attr.MaxSRQWR)
	}
	if d.Attr.MaxSRQSGE > 0 && a.MaxSGE > d.Attr.MaxSRQSGE {
		p.fail(verbs.EINVAL, fmt.Sprintf("ask for at most %d", d.Attr.MaxSRQSGE),
			"max_sge %d is above the device's max_srq_sge %d (rxe_srq_chk_init)", a.MaxSGE, d.Attr.MaxSRQSGE)
	}
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the SRQ")
	return p
}

// predictModifySRQ is ibv_modify_srq on rxe (rxe_srq_chk_attr), given the
// SRQ's current max_wr and armed limit.
func predictModifySRQ(d *devFacts, curMaxWR, curLimit int, a verbs.SRQAttr, mask verbs.SRQAttrMask) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v, mask %s, now max_wr %d limit %d", a, mask, curMaxWR, curLimit)}
	if mask&verbs.SRQAttrMaxWR != 0 {
		switch {
		case a.MaxWR <= 0:
			p.fail(verbs.EINVAL, "give a positive max_wr", "IBV_SRQ_MAX_WR %d: an SRQ needs at least one entry (rxe_srq_chk_attr)", a.MaxWR)
		case d.Attr.MaxSRQWR > 0 && a.MaxWR > d.Attr.MaxSRQWR:
			p.fail(verbs.EINVAL, fmt.Sprintf("ask for at most %d", d.Attr.MaxSRQWR),
				"IBV_SRQ_MAX_WR %d is above the device's max_srq_wr %d (rxe_srq_chk_attr)", a.MaxWR, d.Attr.MaxSRQWR)
		case curLimit > 0 && a.MaxWR < curLimit:
			p.fail(verbs.EINVAL, fmt.Sprintf("keep max_wr at least %d, or lower the limit first", curLimit),
				"IBV_SRQ_MAX_WR %d is below the armed srq_limit %d (rxe_srq_chk_attr)", a.MaxWR, curLimit)
		}
	}
	if mask&verbs.SRQAttrLimit != 0 {
		if a.SRQLimit > curMaxWR {
			p.fail(verbs.EINVAL, fmt.Sprintf("arm a limit of at most %d", curMaxWR),
				"IBV_SRQ_LIMIT %d is above the SRQ's max_wr %d (rxe_srq_chk_attr)", a.SRQLimit, curMaxWR)
		} else if a.SRQLimit < 0 {
			p.fail(verbs.EINVAL, "give a limit of 0 or more", "IBV_SRQ_LIMIT %d is negative", a.SRQLimit)
		}
	}
	if mask&verbs.SRQAttrMaxWR != 0 {
		p.maybe(verbs.EINVAL, "poll first, or ask for more", "the SRQ holds more posted receives than %d (rxe_queue_resize)", a.MaxWR)
		p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the new queue")
	}
	return p
}

// predictCreateAH is ibv_create_ah on rxe: ib_uverbs_create_ah's port
// check, then rdma_create_user_ah (rdma_fill_sgid_attr, then the RoCE
// address resolution).
func predictCreateAH(d *devFacts, a verbs.AHAttr) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v", a)}
	checkAV(&p, d, "ah_attr", &a, "the AH")
	if a.IsGlobal {
		p.maybe(syscall.EHOSTUNREACH, "use a dgid this host can reach", "the kernel could not resolve the Ethernet address of dgid %v (ib_resolve_eth_dmac)", a.GRH.DGID)
		p.maybe(syscall.ENETUNREACH, "use a dgid this host can reach", "there is no route to dgid %v", a.GRH.DGID)
		p.maybe(verbs.ETIMEDOUT, "use a dgid this host can reach", "resolving dgid %v timed out", a.GRH.DGID)
	}
	p.maybe(verbs.ENOMEM, "destroy unused AHs", "the kernel could not allocate the AH (max_ah reached?)")
	return p
}

// isMcastGID is rdma_is_multicast_addr: ff00::/8, or an IPv4-mapped
// 224.0.0.0/4 address.
func isMcastGID(g verbs.GID) bool {
	if g.IsMulticast() {
		return true
	}
	if a, ok := g.IPv4(); ok {
		return a.IsMulticast()
	}
	return false
}

// predictAttachMcast is ibv_attach_mcast (ib_uverbs_attach_mcast,
// ib_attach_mcast). attached says the QP is already attached to (gid, lid),
// which uverbs answers with success without asking the device.
func predictAttachMcast(t verbs.QPType, gid verbs.GID, attached bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s QP, gid %v", t, gid)}
	if attached {
		return p
	}
	if !isMcastGID(gid) {
		p.fail(verbs.EINVAL, "use a multicast GID such as ff0e::1", "%v is not a multicast address (ib_attach_mcast: rdma_is_multicast_addr)", gid)
	}
	if t != verbs.QPTypeUD {
		p.fail(verbs.EINVAL, "attach a UD QP", "only UD QPs join multicast groups; this one is %s (ib_attach_mcast)", t)
	}
	p.maybe(verbs.ENOMEM, "detach other groups", "the device has no room for the attachment (max_mcast_grp, max_mcast_qp_attach)")
	return p
}

// predictDetachMcast is ibv_detach_mcast: uverbs refuses a group it has no
// record of attaching.
func predictDetachMcast(gid verbs.GID, attached bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("gid %v", gid)}
	if !attached {
		p.fail(verbs.EINVAL, "detach only a group attach_mcast attached", "the QP is not attached to %v (ib_uverbs_detach_mcast)", gid)
	}
	return p
}

// predictBusy is a destroy that the kernel refuses with EBUSY while users
// are listed.
func predictBusy(op, what string, users []string, hint string) prediction {
	p := prediction{exhaustive: true}
	if len(users) > 0 {
		p.fail(verbs.EBUSY, hint, "%s is still in use by %s", what, strings.Join(users, ", "))
		p.call = strings.Join(users, ", ")
	}
	return p
}

// sendWRFacts is what a QP knows when it checks a send WR (validate_send_wr
// in rdma-core 44's rxe provider).
type sendFacts struct {
	Type      verbs.QPType
	State     verbs.QPState // libibverbs' cached ibv_qp.state
	MaxSGE    int
	MaxInline int
}

// sendWRReason returns why rxe's validate_send_wr would refuse wr, or ok.
func sendWRReason(f *sendFacts, wr *verbs.SendWR, length uint64) (reason, bool) {
	if len(wr.SGList) > f.MaxSGE {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("post at most %d SGEs, or create the QP with a larger max_send_sge", f.MaxSGE),
			why: fmt.Sprintf("the WR has %d SGEs; this QP's max_send_sge is %d (rxe validate_send_wr)", len(wr.SGList), f.MaxSGE)}, false
	}
	if wr.Opcode.IsAtomic() && (length < 8 || wr.RemoteAddr&7 != 0) {
		return reason{errno: verbs.EINVAL, certain: true, hint: "give the atomic one 8-byte local buffer and an 8-byte-aligned remote_addr",
			why: fmt.Sprintf("%s needs at least 8 local bytes (has %d) and an 8-byte-aligned remote_addr (%#x) (rxe validate_send_wr)", wr.Opcode, length, wr.RemoteAddr)}, false
	}
	if wr.Flags&verbs.SendInline != 0 && length > uint64(f.MaxInline) {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("send at most %d bytes inline, or drop the inline flag", f.MaxInline),
			why: fmt.Sprintf("%d bytes of inline data exceed this QP's max_inline_data %d (rxe validate_send_wr)", length, f.MaxInline)}, false
	}
	return reason{}, true
}

// sendDoorbellReason is the kernel's answer to the doorbell rxe rings after
// queueing: rxe_post_send refuses it with EINVAL while the requester is not
// ready (before RTS).
func sendDoorbellReason(state verbs.QPState, queued int) (reason, bool) {
	switch state {
	case verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR:
		why := fmt.Sprintf("the QP is in %s; sends are accepted from RTS on (the kernel's rxe_post_send refuses the doorbell while the requester is not ready)", state)
		if queued > 0 {
			why += fmt.Sprintf("; rxe had already queued the %d WR(s) in the send queue (bad_wr is not set): they stay there and go out "+
				"after the QP reaches RTS and another post rings the doorbell, unless the QP is reset first", queued)
		}
		return reason{errno: verbs.EINVAL, certain: true, why: why, hint: "bring the QP to RTS first (INIT → RTR → RTS)", queued: true}, false
	}
	return reason{}, true
}

// recvPreReason is rxe_post_recv's refusal before it looks at any WR
// (bad_wr stays NULL): a QP on an SRQ has no receive queue, and a QP in
// RESET takes no receives (C10-97.2.1, from libibverbs' cached state).
func recvPreReason(state verbs.QPState, hasSRQ bool) (reason, bool) {
	if hasSRQ {
		return reason{errno: verbs.EINVAL, certain: true, hint: "post the receive to the SRQ (post_srq_recv)",
			why: "the QP takes its receives from an SRQ and has no receive queue of its own (rxe_post_recv)"}, false
	}
	if state == verbs.QPSReset {
		return reason{errno: verbs.EINVAL, certain: true, hint: "move the QP to INIT first; rc_pingpong posts its receives in INIT",
			why: "the QP is in RESET, which takes no receives (rxe_post_recv, C10-97.2.1)"}, false
	}
	return reason{}, true
}

// recvWRReason is rxe_post_one_recv's check of one WR (a full queue is
// checked first, and is not predictable here).
func recvWRReason(wr *verbs.RecvWR, maxSGE int, what string) (reason, bool) {
	if len(wr.SGList) > maxSGE {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("post at most %d SGEs, or create the %s with more", maxSGE, what),
			why: fmt.Sprintf("the WR has %d SGEs; this %s's max_sge is %d (rxe_post_one_recv)", len(wr.SGList), what, maxSGE)}, false
	}
	return reason{}, true
}

// postQueue names the queue a post fills, for the queue-full explanation.
type postQueue struct {
	name  string // "send queue", "receive queue", "SRQ"
	depth int    // its capacity
	grow  string // how to make it larger
}

// judgePost compares a post's outcome (errno, gotBad: the index of bad_wr
// or -1) with the rules: predBad is the first WR the rules refuse (-1 for
// none) with its reason predWhy, and door, when hasDoor, is the refusal of
// the whole call (the send doorbell before RTS; a receive on a QP in RESET
// or on an SRQ). It returns how many WRs count as posted and the explained
// error. The success path does not allocate.
func judgePost(op string, errno syscall.Errno, gotBad, nwr int, predBad int, predWhy reason, door reason, hasDoor bool, q postQueue) (int, error) {
	if errno == 0 {
		if predBad >= 0 || hasDoor {
			recordMisprediction(Misprediction{Op: op, Predicted: postPredicted(predBad, predWhy, door, hasDoor), Got: "success",
				Call: fmt.Sprintf("%d WR(s)", nwr)})
		}
		return nwr, nil
	}
	// With no bad_wr after rxe's doorbell refused, no WR was refused: the
	// provider queued them all, and they are posted (the simulator says so
	// too). Before a check that looks at no WR (a receive in RESET), none.
	n := 0
	switch {
	case gotBad >= 0:
		n = gotBad
	case hasDoor && errno == door.errno && door.queued:
		n = nwr
	}
	full := func() string {
		return fmt.Sprintf("the %s is full: its %d slot(s) hold WRs not yet completed", q.name, q.depth)
	}
	fullHint := "poll the CQ to retire completed WRs, or " + q.grow
	var why, hint string
	mispredicted := false
	earlier := gotBad >= 0 && (predBad < 0 || gotBad < predBad) // a WR the rules passed was refused
	switch {
	case gotBad >= 0 && gotBad == predBad && errno == predWhy.errno:
		why, hint = fmt.Sprintf("WR %d: %s", gotBad, predWhy.why), predWhy.hint
		if hasDoor {
			why += "; and " + door.why
		}
	case gotBad >= 0 && gotBad == predBad && hasDoor && errno == door.errno:
		// The WR was refused, then the doorbell too, whose errno rxe
		// returns in preference.
		why, hint = fmt.Sprintf("WR %d: %s; and %s", gotBad, predWhy.why, door.why), door.hint
	case earlier && hasDoor && errno == door.errno:
		why, hint = fmt.Sprintf("WR %d did not fit: %s; and %s", gotBad, full(), door.why), door.hint
	case earlier && errno == verbs.ENOMEM:
		why, hint = fmt.Sprintf("WR %d did not fit: %s", gotBad, full()), fullHint
	case gotBad < 0 && hasDoor && errno == door.errno:
		why, hint = door.why, door.hint
	default:
		mispredicted = true
		why, hint = explainErrno(op, errno)
		if gotBad >= 0 {
			why = fmt.Sprintf("WR %d: %s", gotBad, why)
		}
	}
	if mispredicted {
		predicted := postPredicted(predBad, predWhy, door, hasDoor)
		recordMisprediction(Misprediction{Op: op, Predicted: predicted, Got: fmt.Sprintf("%s, bad_wr %d", verbs.ErrnoName(errno), gotBad),
			Call: fmt.Sprintf("%d WR(s)", nwr)})
		why += fmt.Sprintf(" [misprediction: vsh's rules for %s predicted %s, but libibverbs returned %s with bad_wr %d; "+
			"a bug in verbs/ibverbs' rules or in the simulator that follows them — counted by ibverbs.Mispredictions]",
			op, predicted, verbs.ErrnoName(errno), gotBad)
	}
	return n, &verbs.Error{Op: op, Errno: errno, Why: why, Hint: hint}
}

func postPredicted(predBad int, predWhy, door reason, hasDoor bool) string {
	switch {
	case predBad >= 0:
		return fmt.Sprintf("WR %d refused with %s (%s)", predBad, verbs.ErrnoName(predWhy.errno), predWhy.why)
	case hasDoor:
		return fmt.Sprintf("%s (%s)", verbs.ErrnoName(door.errno), door.why)
	}
	return "success"
}
