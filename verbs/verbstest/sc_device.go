package verbstest

import (
	"math/bits"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// deviceScenarios are this file's scenarios, each Run a named function.
var deviceScenarios = []Scenario{
	{
		Name:   "suite/declared-capabilities",
		Source: "this suite's contract: a capability declared in Options.Has must be real (verbs/optional.go interfaces)",
		Run:    declaredCapabilities,
	},
	{
		Name:   "device/list",
		Source: "ibv_get_device_list(3), ibv_get_device_name(3), ibv_get_device_guid(3)",
		Run:    deviceList,
	},
	{
		Name:   "device/attr-limits",
		Source: "sw/rxe/rxe_param.h and rxe.c rxe_init_device_param (Linux 6.1); ibv_query_device(3)",
		Run:    deviceAttrLimits,
	},
	{
		Name:   "device/attr-identity",
		Source: "rxe.c rxe_init_device_param: vendor_id RXE_VENDOR_ID, sys_image_guid and node_guid from the netdev's EUI-48, one port; ibv_query_device(3)",
		Run:    deviceAttrIdentity,
	},
	{
		Name:   "device/atomic-cap-hca",
		Source: "rxe.c rxe_init_device_param: atomic_cap = IB_ATOMIC_HCA; ibv_query_device(3) IBV_ATOMIC_HCA",
		Run:    scDeviceAtomicCapHCA,
	},
	{
		Name:   "device/close-and-reopen",
		Source: "ibv_open_device(3), ibv_close_device(3)",
		Run:    scDeviceCloseAndReopen,
	},
	{
		Name:   "port/state-active-ethernet",
		Source: "rxe_verbs.c rxe_query_port (phys_state LINK_UP when ACTIVE), rxe_get_link_layer (always Ethernet); ibv_query_port(3)",
		Run:    portStateEthernet,
	},
	{
		Name:   "port/mtu",
		Source: "rxe.c rxe_init_port_param (max_mtu IB_MTU_4096) and rxe_set_mtu (active MTU from the netdev: 1500 gives 1024); rxe_param.h eth_mtu_int_to_enum",
		Run:    portMTU,
	},
	{
		Name:   "port/attr-limits",
		Source: "rxe_param.h enum rxe_port_param: gid_tbl_len 1024, max_msg_sz 0x800000, pkey_tbl_len 1, lid 0, sm_lid 0, lmc 0, max_vl_num 1, port_cap_flags IB_PORT_CM_SUP",
		Run:    portLimits,
	},
	{
		Name:   "port/grh-required-flag",
		Source: "uverbs_std_types_device.c copy_port_attr_to_resp sets IB_UVERBS_QPF_GRH_REQUIRED when rdma_is_grh_required, whose mask includes RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP (include/rdma/ib_verbs.h); ibv_modify_qp(3) IBV_QPF_GRH_REQUIRED",
		Run:    scPortGRHRequiredFlag,
	},
	{
		Name:   "port/bad-port-number",
		Source: "core/device.c ib_query_port: rdma_is_port_valid, else -EINVAL (rxe has one port, numbered 1)",
		Run:    scPortBadPortNumber,
	},
	{
		Name:   "gid/index0-link-local",
		Source: "core/roce_gid_mgmt.c + cache.c: the default GID (fe80::/64 + EUI-64 of the MAC) in the one slot reserved for RoCE v2; rocev2-wire.md §6",
		Run:    gidLinkLocal,
	},
	{
		Name:   "gid/ipv4-mapped-roce-v2",
		Source: "core/roce_gid_mgmt.c adds the netdev's IPv4 address as ::ffff:a.b.c.d after the default GID; rxe_recv.c rxe_match_dgid; ibv_query_gid_type(3) IBV_GID_TYPE_ROCE_V2",
		Run:    gidIPv4Mapped,
	},
	{
		Name:   "gid/types-all-roce-v2",
		Source: "rxe_verbs.c rxe_port_immutable: core_cap_flags RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP only, so every GID is RoCE v2 (core/cache.c gid types)",
		Run:    gidTypesV2,
	},
	{
		Name:   "gid/empty-slot-reads-zero",
		Source: "rdma-core v44 libibverbs/verbs.c ibv_query_gid: an empty entry (ENODATA) reads as a zero GID and returns 0 (\"Preserve API behavior for empty GID\")",
		Run:    scGIDEmptySlotReadsZero,
	},
	{
		Name:   "gid/out-of-table",
		Source: "core/cache.c rdma_query_gid: index >= table size or an invalid port is -EINVAL; ibv_query_gid(3) returns -1",
		Run:    scGIDOutOfTable,
	},
	{
		Name:   "device/two-devices",
		Source: "DESIGN.md \"The simulated RNIC\": devices sim0, sim1 on one segment; ibv_get_device_guid(3): GUIDs are unique",
		Needs:  CapTwoDevices,
		Run:    twoDevices,
	},
	{
		Name:   "errors/are-verbs-errors",
		Source: "DESIGN.md \"The verbs API\": errors are *verbs.Error{Op, Errno} unwrapping to the errno; ibv_reg_mr(3), ibv_create_cq(3), ibv_modify_qp(3), ibv_post_recv(3), ibv_dealloc_pd(3) name the verbs",
		Run:    errorsAreVerbsErrors,
	},
}

func init() {
	registerAll(deviceScenarios)
}

// scDeviceAtomicCapHCA runs the scenario device/atomic-cap-hca.
func scDeviceAtomicCapHCA(e *Env) {
	a, err := e.Ctx.QueryDevice()
	e.Must(err, "ibv_query_device")
	if a.AtomicCap != rxe61.AtomicCapHCA {
		e.Errorf("atomic_cap = %d; want %d (IBV_ATOMIC_HCA: atomics are atomic within this device)", a.AtomicCap, rxe61.AtomicCapHCA)
	}
}

// scDeviceCloseAndReopen runs the scenario device/close-and-reopen.
func scDeviceCloseAndReopen(e *Env) {
	ctx, err := e.Dev.Open()
	e.Must(err, "second ibv_open_device on %s", e.Dev.Name())
	pd, err := ctx.AllocPD()
	e.Must(err, "ibv_alloc_pd on the second context")
	e.Must(pd.Dealloc(), "ibv_dealloc_pd")
	if ctx.Device().Name() != e.Dev.Name() {
		e.Errorf("context.Device().Name() = %q; want %q", ctx.Device().Name(), e.Dev.Name())
	}
	e.Must(ctx.Close(), "ibv_close_device")
}

// scPortGRHRequiredFlag runs the scenario port/grh-required-flag.
func scPortGRHRequiredFlag(e *Env) {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port(%d)", e.Port)
	if pa.Flags&verbs.PortFlagGRHRequired == 0 {
		e.Errorf("port flags = %#x; want IBV_QPF_GRH_REQUIRED (%#x) set on a RoCE v2 port", pa.Flags, verbs.PortFlagGRHRequired)
	}
}

// scPortBadPortNumber runs the scenario port/bad-port-number.
func scPortBadPortNumber(e *Env) {
	for _, p := range []uint8{0, 2} {
		_, err := e.Ctx.QueryPort(p)
		e.ExpectErrno(err, verbs.EINVAL, "ibv_query_port(%d)", p)
	}
}

// scGIDEmptySlotReadsZero runs the scenario gid/empty-slot-reads-zero.
func scGIDEmptySlotReadsZero(e *Env) {
	idx := 255 // rc_pingpong's sgid_index when -g is missing on one side
	g, err := e.Ctx.QueryGID(e.Port, idx)
	if err != nil {
		e.Errorf("ibv_query_gid(port %d, index %d) = %v; want a zero GID and no error", e.Port, idx, err)
	} else if !g.IsZero() {
		e.Errorf("ibv_query_gid(port %d, index %d) = %v; the suite expects this slot empty on a test device", e.Port, idx, g)
	}
}

// scGIDOutOfTable runs the scenario gid/out-of-table.
func scGIDOutOfTable(e *Env) {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	_, err = e.Ctx.QueryGID(e.Port, pa.GIDTblLen)
	e.ExpectError(err, "ibv_query_gid(port %d, index %d = gid_tbl_len)", e.Port, pa.GIDTblLen)
	_, err = e.Ctx.QueryGID(e.Port+1, 0)
	e.ExpectError(err, "ibv_query_gid(port %d, 0)", e.Port+1)
	_, err = e.Ctx.QueryGID(e.Port, -1)
	e.ExpectError(err, "ibv_query_gid(port %d, -1)", e.Port)
}

func declaredCapabilities(e *Env) {
	has := e.Opts.Has
	if has&CapStepper != 0 {
		if _, ok := e.P.(verbs.Stepper); !ok {
			e.Errorf("Options.Has declares %v but the provider does not implement verbs.Stepper", CapStepper)
		}
	}
	if has&CapFaults != 0 {
		if _, ok := e.P.(verbs.FaultInjector); !ok {
			e.Errorf("Options.Has declares %v but the provider does not implement verbs.FaultInjector", CapFaults)
		}
	}
	if has&CapInspector != 0 {
		if _, ok := e.P.(verbs.Inspector); !ok {
			e.Errorf("Options.Has declares %v but the provider does not implement verbs.Inspector", CapInspector)
		}
	}
	if has&CapTwoDevices != 0 {
		devs, err := e.P.Devices()
		e.Must(err, "Devices")
		if len(devs) < 2 {
			e.Errorf("Options.Has declares %v but the provider lists %d device(s)", CapTwoDevices, len(devs))
		}
	}
	if has&CapExplain != 0 {
		_, err := e.PD().AllocMR(4096, verbs.AccessRemoteWrite)
		if ve, ok := verbs.AsError(err); !ok || ve.Why == "" {
			e.Errorf("Options.Has declares %v but a refused ibv_reg_mr returned %v, with no Why", CapExplain, err)
		}
	}
}

func deviceList(e *Env) {
	devs, err := e.P.Devices()
	e.Must(err, "Devices")
	seen := map[string]bool{}
	for _, d := range devs {
		if d.Name() == "" {
			e.Errorf("a device has an empty name")
		}
		if seen[d.Name()] {
			e.Errorf("device name %q listed twice", d.Name())
		}
		seen[d.Name()] = true
		if d.GUID() == 0 {
			e.Errorf("device %s has GUID 0", d.Name())
		}
	}
}

func deviceAttrLimits(e *Env) {
	a, err := e.Ctx.QueryDevice()
	e.Must(err, "ibv_query_device")
	r := rxe61
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"max_qp", a.MaxQP, r.MaxQP},
		{"max_qp_wr", a.MaxQPWR, r.MaxQPWR},
		{"max_sge", a.MaxSGE, r.MaxSGE},
		{"max_sge_rd", a.MaxSGERd, r.MaxSGERd},
		{"max_cq", a.MaxCQ, r.MaxCQ},
		{"max_cqe", a.MaxCQE, r.MaxCQE},
		{"max_mr", a.MaxMR, r.MaxMR},
		{"max_mw", a.MaxMW, r.MaxMW},
		{"max_pd", a.MaxPD, r.MaxPD},
		{"max_qp_rd_atom", a.MaxQPRdAtom, r.MaxQPRdAtom},
		{"max_qp_init_rd_atom", a.MaxQPInitRdAtom, r.MaxQPInitRdAtom},
		{"max_res_rd_atom", a.MaxResRdAtom, r.MaxResRdAtom},
		{"max_srq", a.MaxSRQ, r.MaxSRQ},
		{"max_srq_wr", a.MaxSRQWR, r.MaxSRQWR},
		{"max_srq_sge", a.MaxSRQSGE, r.MaxSRQSGE},
		{"max_ah", a.MaxAH, r.MaxAH},
		{"max_mcast_grp", a.MaxMcastGrp, r.MaxMcastGrp},
		{"max_mcast_qp_attach", a.MaxMcastQPAttach, r.MaxMcastQPAttach},
		{"max_total_mcast_qp_attach", a.MaxTotalMcastQPAtt, r.MaxTotMcastQP},
		{"max_pkeys", a.MaxPKeys, r.MaxPKeys},
	} {
		if c.got != c.want {
			e.Errorf("%s = %d; want %d", c.name, c.got, c.want)
		}
	}
	if a.MaxMRSize != r.MaxMRSize {
		e.Errorf("max_mr_size = %#x; want %#x", a.MaxMRSize, r.MaxMRSize)
	}
	if a.PageSizeCap != r.PageSizeCap {
		e.Errorf("page_size_cap = %#x; want %#x", a.PageSizeCap, r.PageSizeCap)
	}
	if a.LocalCAAckDelay != r.LocalCAAckDelay {
		e.Errorf("local_ca_ack_delay = %d; want %d", a.LocalCAAckDelay, r.LocalCAAckDelay)
	}
}

func deviceAttrIdentity(e *Env) {
	a, err := e.Ctx.QueryDevice()
	e.Must(err, "ibv_query_device")
	if a.VendorID != rxe61.VendorID {
		e.Errorf("vendor_id = %#x; want %#x", a.VendorID, rxe61.VendorID)
	}
	if a.PhysPortCnt != rxe61.PhysPortCnt {
		e.Errorf("phys_port_cnt = %d; want %d", a.PhysPortCnt, rxe61.PhysPortCnt)
	}
	if a.NodeGUID == 0 {
		e.Errorf("node_guid = 0")
	}
	if a.SysImageGUID != a.NodeGUID {
		e.Errorf("sys_image_guid = %#x; want node_guid %#x (both from the netdev's EUI-48)", a.SysImageGUID, a.NodeGUID)
	}
	// node_guid is __be64 in struct ibv_device_attr; ibv_get_device_guid
	// returns host order. Accept either representation, but they must be
	// the same GUID.
	g := e.Dev.GUID()
	if a.NodeGUID != g && a.NodeGUID != bits.ReverseBytes64(g) {
		e.Errorf("node_guid = %#x; want the device GUID %#x", a.NodeGUID, g)
	}
}

func portStateEthernet(e *Env) {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port(%d)", e.Port)
	if pa.State != verbs.PortActive {
		e.Errorf("state = %v; want %v", pa.State, verbs.PortActive)
	}
	if pa.PhysState != rxe61.PhysLinkUp {
		e.Errorf("phys_state = %d; want %d (LINK_UP)", pa.PhysState, rxe61.PhysLinkUp)
	}
	if pa.LinkLayer != verbs.LinkLayerEthernet {
		e.Errorf("link_layer = %v; want %v", pa.LinkLayer, verbs.LinkLayerEthernet)
	}
}

func portMTU(e *Env) {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port(%d)", e.Port)
	if pa.MaxMTU != verbs.MTU4096 {
		e.Errorf("max_mtu = %v; want %v", pa.MaxMTU, verbs.MTU4096)
	}
	if !pa.ActiveMTU.Valid() || pa.ActiveMTU > pa.MaxMTU {
		e.Errorf("active_mtu = %v; want a valid MTU no larger than max_mtu %v", pa.ActiveMTU, pa.MaxMTU)
	}
	if e.Opts.ActiveMTU != 0 && pa.ActiveMTU != e.Opts.ActiveMTU {
		e.Errorf("active_mtu = %v; want %v", pa.ActiveMTU, e.Opts.ActiveMTU)
	}
}

func portLimits(e *Env) {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port(%d)", e.Port)
	r := rxe61
	if pa.GIDTblLen != r.GIDTblLen {
		e.Errorf("gid_tbl_len = %d; want %d", pa.GIDTblLen, r.GIDTblLen)
	}
	if pa.MaxMsgSz != r.MaxMsgSz {
		e.Errorf("max_msg_sz = %#x; want %#x", pa.MaxMsgSz, r.MaxMsgSz)
	}
	if pa.PKeyTblLen != r.PKeyTblLen {
		e.Errorf("pkey_tbl_len = %d; want %d", pa.PKeyTblLen, r.PKeyTblLen)
	}
	if pa.LID != 0 || pa.SMLID != 0 || pa.LMC != 0 {
		e.Errorf("lid/sm_lid/lmc = %d/%d/%d; want 0/0/0 (no subnet manager on Ethernet)", pa.LID, pa.SMLID, pa.LMC)
	}
	if pa.MaxVLNum != r.MaxVLNum {
		e.Errorf("max_vl_num = %d; want %d", pa.MaxVLNum, r.MaxVLNum)
	}
	if pa.PortCapFlags&r.PortCapCMSup == 0 {
		e.Errorf("port_cap_flags = %#x; want IB_PORT_CM_SUP (%#x) set", pa.PortCapFlags, r.PortCapCMSup)
	}
}

func gidLinkLocal(e *Env) {
	g, err := e.Ctx.QueryGID(e.Port, 0)
	e.Must(err, "ibv_query_gid(%d, 0)", e.Port)
	if g[0] != 0xfe || g[1] != 0x80 || g.InterfaceID() == 0 {
		e.Errorf("GID[0] = %v; want the link-local fe80::<EUI-64> default GID", g)
	}
	for i := 2; i < 8; i++ {
		if g[i] != 0 {
			e.Errorf("GID[0] = %v; want prefix fe80::/64", g)
			break
		}
	}
	typ, err := e.Ctx.QueryGIDType(e.Port, 0)
	e.Must(err, "ibv_query_gid_type(%d, 0)", e.Port)
	if typ != verbs.GIDTypeRoCEv2 {
		e.Errorf("GID[0] type = %v; want %v", typ, verbs.GIDTypeRoCEv2)
	}
}

func gidIPv4Mapped(e *Env) {
	if _, ok := e.GID.IPv4(); !ok {
		e.Errorf("GID[%d] = %v; want an IPv4-mapped GID (::ffff:a.b.c.d)", e.Opts.GIDIndex, e.GID)
	}
	typ, err := e.Ctx.QueryGIDType(e.Port, e.Opts.GIDIndex)
	e.Must(err, "ibv_query_gid_type(%d, %d)", e.Port, e.Opts.GIDIndex)
	if typ != verbs.GIDTypeRoCEv2 {
		e.Errorf("GID[%d] type = %v; want %v", e.Opts.GIDIndex, typ, verbs.GIDTypeRoCEv2)
	}
}

func gidTypesV2(e *Env) {
	n := 0
	for i := 0; i < 16; i++ {
		g, err := e.Ctx.QueryGID(e.Port, i)
		if err != nil {
			e.Errorf("ibv_query_gid(%d, %d) = %v", e.Port, i, err)
			continue
		}
		if g.IsZero() {
			continue
		}
		n++
		typ, err := e.Ctx.QueryGIDType(e.Port, i)
		if err != nil {
			e.Errorf("ibv_query_gid_type(%d, %d) = %v", e.Port, i, err)
		} else if typ != verbs.GIDTypeRoCEv2 {
			e.Errorf("GID[%d] %v type = %v; want %v", i, g, typ, verbs.GIDTypeRoCEv2)
		}
	}
	if n < 2 {
		e.Errorf("found %d GIDs in the first 16 slots; want at least the link-local and the IPv4-mapped one", n)
	}
}

func twoDevices(e *Env) {
	devs, err := e.P.Devices()
	e.Must(err, "Devices")
	if len(devs) < 2 {
		e.Fatalf("Devices() lists %d; want at least 2", len(devs))
	}
	a, b := devs[0], devs[1]
	if a.GUID() == b.GUID() {
		e.Errorf("%s and %s share GUID %#x", a.Name(), b.Name(), a.GUID())
	}
	ca, cb := e.open(a), e.open(b)
	ga, err := ca.QueryGID(e.Port, e.Opts.GIDIndex)
	e.Must(err, "%s ibv_query_gid", a.Name())
	gb, err := cb.QueryGID(e.Port, e.Opts.GIDIndex)
	e.Must(err, "%s ibv_query_gid", b.Name())
	if ga == gb {
		e.Errorf("%s and %s share GID %v", a.Name(), b.Name(), ga)
	}
	// An RC pair across the two devices reaches RTS, each addressing the
	// other's GID (rc_pingpong between two hosts).
	mk := func(ctx verbs.Context) verbs.QP {
		pd := e.NewPD(ctx)
		cq := e.NewCQ(ctx, verbs.CQInitAttr{CQE: 16})
		return e.NewQP(pd, verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: DefaultCap})
	}
	qa, qb := mk(ca), mk(cb)
	connect := func(q verbs.QP, peer uint32, dgid verbs.GID) {
		cur := verbs.QPSReset
		for _, next := range pathTo[verbs.QPSRTS] {
			row, _ := lookupRow(cur, next)
			attr := e.attrsFor(verbs.QPTypeRC, q.Num(), peer, cur, next, verbs.QPCap{})
			attr.AH.GRH.DGID = dgid
			e.Must(q.Modify(&attr, aState|row.req[0]), "RC QP %#x %v→%v across devices", q.Num(), cur, next)
			cur = next
		}
	}
	connect(qa, qb.Num(), gb)
	connect(qb, qa.Num(), ga)
	for _, q := range []verbs.QP{qa, qb} {
		if s := e.State(q); s != verbs.QPSRTS {
			e.Errorf("QP %#x state %v; want RTS", q.Num(), s)
		}
	}
}

func errorsAreVerbsErrors(e *Env) {
	pd := e.PD()
	_, err1 := pd.AllocMR(4096, verbs.AccessRemoteWrite)
	_, err2 := e.Ctx.CreateCQ(verbs.CQInitAttr{CQE: 0})
	q := e.QP(verbs.QPTypeRC)
	attr := verbs.QPAttr{State: verbs.QPSRTR}
	err3 := q.Modify(&attr, aState)
	_, err4 := q.PostRecv([]verbs.RecvWR{{WRID: 1}})
	e.MR(pd, 64, 0)
	err5 := pd.Dealloc()
	for _, c := range []struct {
		err   error
		op    string
		errno syscall.Errno
	}{
		{err1, "ibv_reg_mr", verbs.EINVAL},
		{err2, "ibv_create_cq", verbs.EINVAL},
		{err3, "ibv_modify_qp", verbs.EINVAL},
		{err4, "ibv_post_recv", verbs.EINVAL},
		{err5, "ibv_dealloc_pd", verbs.EBUSY},
	} {
		ve, ok := verbs.AsError(c.err)
		switch {
		case c.err == nil:
			e.Errorf("%s: no error; want %v", c.op, c.errno)
		case !ok:
			e.Errorf("%s: error %T %q is not a *verbs.Error", c.op, c.err, c.err)
		case !strings.Contains(ve.Op, c.op):
			e.Errorf("%s: Error.Op = %q; want %q", c.op, ve.Op, c.op)
		case ve.Errno != c.errno:
			e.Errorf("%s: Error.Errno = %v; want %v", c.op, verbs.ErrnoName(ve.Errno), c.errno)
		}
	}
}
