package verbstest

import (
	"github.com/vsh-rdma/vsh/verbs"
)

const srcChkAttr = "sw/rxe/rxe_qp.c rxe_qp_chk_attr (Linux 6.1)"

// rcAtInit returns an RC QP in INIT and its peer (in RESET).
func rcAtInit(e *Env) (q, peer verbs.QP) {
	q, peer = e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	e.Bring(q, peer.Num(), verbs.QPSInit)
	return q, peer
}

// rtrAttr returns the RC INIT→RTR attributes and mask.
func rtrAttr(e *Env, q, peer verbs.QP) (verbs.QPAttr, verbs.QPAttrMask) {
	row, _ := lookupRow(verbs.QPSInit, verbs.QPSRTR)
	return e.attrsFor(verbs.QPTypeRC, q.Num(), peer.Num(), verbs.QPSInit, verbs.QPSRTR, verbs.QPCap{}), aState | row.req[0]
}

// rtsAttr returns the RC RTR→RTS attributes and mask.
func rtsAttr(e *Env, q, peer verbs.QP) (verbs.QPAttr, verbs.QPAttrMask) {
	row, _ := lookupRow(verbs.QPSRTR, verbs.QPSRTS)
	return e.attrsFor(verbs.QPTypeRC, q.Num(), peer.Num(), verbs.QPSRTR, verbs.QPSRTS, verbs.QPCap{}), aState | row.req[0]
}

// modifyScenarios are this file's scenarios, each Run a named function.
var modifyScenarios = []Scenario{
	{
		Name:   "qp-state/rc-connect",
		Source: "rdma-core libibverbs/examples/rc_pingpong.c pp_init_ctx/pp_connect_ctx; ibv_modify_qp(3); ibv_query_qp(3)",
		Run:    scQPStateRCConnect,
	},
	{
		Name:   "qp-state/uc-and-ud-connect",
		Source: "rdma-core libibverbs/examples/uc_pingpong.c and ud_pingpong.c (UD: INIT needs qkey, RTR only the state, RTS sq_psn); ibv_modify_qp(3)",
		Run:    scQPStateUCAndUDConnect,
	},
	{
		Name:   "qp-state/query-after-connect",
		Source: "sw/rxe/rxe_qp.c rxe_qp_from_attr/rxe_qp_to_attr (attributes stored as given, PSNs read back from req.psn/resp.psn, the AV always with a GRH: rxe_av_to_attr); ibv_query_qp(3); except the AV's hop_limit: on RoCE core/verbs.c _ib_modify_qp resolves a user's IBV_QP_AV (ib_resolve_eth_dmac → ib_resolve_unicast_gid_dmac) and replaces grh.hop_limit with the route's (64, the default IPv4 TTL), as rxe0 shows",
		Run:    scQPStateQueryAfterConnect,
	},
	{
		Name:   "qp-state/refused-modify-changes-nothing",
		Source: srcChkAttr + " checks every attribute before rxe_qp_from_attr changes any; ibv_modify_qp(3)",
		Run:    scQPStateRefusedModifyChangesNothing,
	},
	{
		Name:   "qp-state/reuse-after-reset",
		Source: "rxe_qp.c rxe_qp_reset; core verbs.c qp_state_table: RTS→RESET, ERR→RESET then RESET→INIT again; ibv_modify_qp(3)",
		Run:    scQPStateReuseAfterReset,
	},
	{
		Name:   "qp-state/no-state-bit-uses-current-row",
		Source: "rxe_qp_chk_attr: without IBV_QP_STATE the next state is the current one, so ib_modify_qp_is_ok checks the cur→cur row (RTR→RTR does not exist)",
		Run:    scQPStateNoStateBitUsesCurrentRow,
	},
	{
		Name:   "qp-state/state-out-of-range",
		Source: "core/uverbs_cmd.c modify_qp: qp_state or cur_qp_state above IB_QPS_ERR is -EINVAL",
		Run:    scQPStateStateOutOfRange,
	},
	{
		Name:   "qp-state/sqd-and-back",
		Source: "core verbs.c qp_state_table RTS→SQD→RTS; rxe_qp.c rxe_qp_drain and rxe_qp_chk_attr (SQD may be left, except to ERR, only once drained); rxe_qp_to_attr sq_draining; rxe_qp_from_attr keeps no en_sqd_async_notify (a query reads 0, measured on rxe0)",
		Run:    scQPStateSQDAndBack,
	},
	{
		Name:   "modify/bad-port",
		Source: "core/uverbs_cmd.c modify_qp: IBV_QP_PORT with !rdma_is_port_valid is -EINVAL (rxe_qp_chk_attr checks it again)",
		Run:    scModifyBadPort,
	},
	{
		Name:   "modify/av-port-invalid",
		Source: "core/uverbs_cmd.c modify_qp: IBV_QP_AV with an invalid ah_attr.port_num is -EINVAL, and in INIT→RTR it must equal the QP's port",
		Run:    scModifyAVPortInvalid,
	},
	{
		Name:   "modify/path-mtu-over-port-max",
		Source: srcChkAttr + ": path_mtu > the port's max_mtu (IB_MTU_4096) is -EINVAL",
		Run:    scModifyPathMTUOverPortMax,
	},
	{
		Name:   "modify/path-mtu-any-up-to-max",
		Source: srcChkAttr + ": path_mtu is checked against max_mtu only, not the active MTU (rdma-core-examples.md §5 #11); rxe_qp_to_attr returns it",
		Run:    scModifyPathMTUAnyUpToMax,
	},
	{
		Name:   "modify/av-without-grh",
		Source: srcCheckAH,
		Run:    scModifyAVWithoutGRH,
	},
	{
		Name:   "modify/av-empty-sgid-index",
		Source: "core/verbs.c _ib_modify_qp → rdma_fill_sgid_attr → core/cache.c rdma_get_gid_attr: an empty slot inside the GID table is -ENODATA (beyond it -EINVAL); rc_pingpong.c sgid_index 255",
		Run:    scModifyAVEmptySGIDIndex,
	},
	{
		Name:   "modify/max-rd-atomic-over-device",
		Source: srcChkAttr + ": max_rd_atomic > max_qp_rd_atom (128) is -EINVAL",
		Run:    scModifyMaxRdAtomicOverDevice,
	},
	{
		Name:   "modify/rd-atomic-rounded-up",
		Source: "sw/rxe/rxe_qp.c rxe_qp_from_attr: max_rd_atomic and max_dest_rd_atomic are stored roundup_pow_of_two (0 stays 0), and query returns the stored value",
		Run:    scModifyRdAtomicRoundedUp,
	},
	{
		Name:   "modify/timeout-over-31",
		Source: srcChkAttr + ": timeout > 31 is -EINVAL (the retransmit timer is 4.096 µs << timeout)",
		Run:    scModifyTimeoutOver31,
	},
	{
		Name:   "modify/retry-counts-not-range-checked",
		Source: srcChkAttr + " has no check on retry_cnt, rnr_retry or min_rnr_timer; rxe_qp_from_attr stores them as given (a real HCA has only 3 bits for the retry counts)",
		Run:    scModifyRetryCountsNotRangeChecked,
	},
	{
		Name:   "modify/psn-masked-to-24-bits",
		Source: "core/verbs.c _ib_modify_qp: rq_psn and sq_psn above 24 bits are masked (\"masking to 24 bits\"), not refused; rxe_qp_from_attr masks with BTH_PSN_MASK",
		Run:    scModifyPSNMaskedTo24Bits,
	},
	{
		Name:   "modify/alt-path-refused-on-roce",
		Source: "core/verbs.c _ib_modify_qp: alternate paths are banned unless both ports are IB (\"Ban them in roce mode\"), -EINVAL",
		Run:    scModifyAltPathRefusedOnRoCE,
	},
	{
		Name:   "modify/privileged-qkey",
		Source: "core/uverbs_cmd.c modify_qp (Debian 6.1.192, as upstream since 6.5): a Q_Key with the high bit (IB_QP_SET_QKEY, 0x80000000) is -EPERM unless rdma_nl_get_privileged_qkey() (nldev.c: the privileged-qkey knob, off by default, or CAP_NET_RAW); Options.CapNetRaw says which applies",
		Run:    scModifyPrivilegedQKey,
	},
	{
		Name:   "modify/uc-sqd-av-implies-port",
		Source: "core/uverbs_cmd.c modify_qp: outside INIT→RTR, IBV_QP_AV without IBV_QP_PORT gets IBV_QP_PORT added (port_num from the AV), and qp_state_table's UC SQD→SQD row allows IBV_QP_AV but not IBV_QP_PORT, so ib_modify_qp_is_ok refuses it: EINVAL; RC's SQD→SQD row allows both",
		Run:    scModifyUCSQDAVImpliesPort,
	},
	{
		Name:   "modify/rate-limit-unsupported",
		Source: "rdma-core v44 libibverbs/cmd.c ibv_cmd_modify_qp: IBV_QP_RATE_LIMIT and above need the _ex path, which rxe_modify_qp does not use: EOPNOTSUPP",
		Run:    scModifyRateLimitUnsupported,
	},
}

func init() {
	registerAll(modifyScenarios)
}

// scQPStateRCConnect runs the scenario qp-state/rc-connect.
func scQPStateRCConnect(e *Env) {
	a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	for _, q := range []struct{ q, peer verbs.QP }{{a, b}, {b, a}} {
		cur := verbs.QPSReset
		for _, next := range pathTo[verbs.QPSRTS] {
			e.step(q.q, q.peer.Num(), cur, next)
			if s := e.State(q.q); s != next {
				e.Errorf("QP %#x after →%v: query says %v", q.q.Num(), next, s)
			}
			cur = next
		}
	}
}

// scQPStateUCAndUDConnect runs the scenario qp-state/uc-and-ud-connect.
func scQPStateUCAndUDConnect(e *Env) {
	for _, typ := range []verbs.QPType{verbs.QPTypeUC, verbs.QPTypeUD} {
		a, b := e.Pair(typ)
		for _, q := range []verbs.QP{a, b} {
			if s := e.State(q); s != verbs.QPSRTS {
				e.Errorf("%v QP %#x: state %v; want RTS", typ, q.Num(), s)
			}
		}
	}
}

// scQPStateQueryAfterConnect runs the scenario qp-state/query-after-connect.
func scQPStateQueryAfterConnect(e *Env) {
	a, b := e.Pair(verbs.QPTypeRC)
	attr, _, err := a.Query(verbs.AttrAll)
	e.Must(err, "ibv_query_qp")
	want := e.attrsFor(verbs.QPTypeRC, a.Num(), b.Num(), verbs.QPSRTR, verbs.QPSRTS, verbs.QPCap{})
	check := func(name string, got, want any) {
		if got != want {
			e.Errorf("query %s = %v; want %v", name, got, want)
		}
	}
	check("qp_state", attr.State, verbs.QPSRTS)
	check("path_mtu", attr.PathMTU, want.PathMTU)
	check("dest_qp_num", attr.DestQPN, b.Num())
	check("rq_psn", attr.RQPSN, psnOf(b.Num()))
	check("sq_psn", attr.SQPSN, psnOf(a.Num()))
	check("qp_access_flags", attr.AccessFlags, want.AccessFlags)
	check("pkey_index", attr.PKeyIndex, uint16(0))
	check("port_num", attr.PortNum, e.Port)
	check("max_rd_atomic", attr.MaxRdAtomic, uint8(1))
	check("max_dest_rd_atomic", attr.MaxDestRdAtomic, uint8(1))
	check("min_rnr_timer", attr.MinRNRTimer, uint8(minRNRTimer))
	check("timeout", attr.Timeout, uint8(timeout))
	check("retry_cnt", attr.RetryCnt, uint8(retryCnt))
	check("rnr_retry", attr.RNRRetry, uint8(rnrRetry))
	check("ah_attr.is_global", attr.AH.IsGlobal, true)
	check("ah_attr.grh.dgid", attr.AH.GRH.DGID, e.GID)
	check("ah_attr.grh.sgid_index", attr.AH.GRH.SGIDIndex, uint8(e.Opts.GIDIndex))
	check("ah_attr.grh.hop_limit", attr.AH.GRH.HopLimit, uint8(routeTTL)) // given 1 (e.AV), replaced by the route's
	check("ah_attr.port_num", attr.AH.PortNum, e.Port)
}

// scQPStateRefusedModifyChangesNothing runs the scenario qp-state/refused-modify-changes-nothing.
func scQPStateRefusedModifyChangesNothing(e *Env) {
	q, peer := rcAtInit(e)
	attr, mask := rtrAttr(e, q, peer)
	attr.PathMTU = verbs.MTU(6)
	attr.RQPSN = 0x123
	e.ExpectErrno(q.Modify(&attr, mask), verbs.EINVAL, "INIT→RTR with path_mtu 6")
	got, _, err := q.Query(verbs.AttrState | verbs.AttrRQPSN | verbs.AttrDestQPN)
	e.Must(err, "ibv_query_qp")
	if got.State != verbs.QPSInit {
		e.Errorf("after a refused INIT→RTR, state = %v; want INIT", got.State)
	}
	if got.RQPSN == 0x123 {
		e.Errorf("after a refused INIT→RTR, rq_psn took the refused value 0x123")
	}
}

// scQPStateReuseAfterReset runs the scenario qp-state/reuse-after-reset.
func scQPStateReuseAfterReset(e *Env) {
	a, b := e.Pair(verbs.QPTypeRC)
	e.step(a, b.Num(), verbs.QPSRTS, verbs.QPSErr)
	e.step(a, b.Num(), verbs.QPSErr, verbs.QPSReset)
	for _, next := range pathTo[verbs.QPSRTS] {
		e.step(a, b.Num(), e.State(a), next)
	}
	if s := e.State(a); s != verbs.QPSRTS {
		e.Errorf("QP reused after RESET: state %v; want RTS", s)
	}
}

// scQPStateNoStateBitUsesCurrentRow runs the scenario qp-state/no-state-bit-uses-current-row.
func scQPStateNoStateBitUsesCurrentRow(e *Env) {
	q, peer := rcAtInit(e)
	attr := e.attrsFor(verbs.QPTypeRC, q.Num(), peer.Num(), verbs.QPSInit, verbs.QPSInit, verbs.QPCap{})
	e.Must(q.Modify(&attr, aPKey), "INIT QP, mask IBV_QP_PKEY_INDEX only (INIT→INIT optional)")
	a, m := rtrAttr(e, q, peer)
	e.Must(q.Modify(&a, m), "INIT→RTR")
	attr = e.attrsFor(verbs.QPTypeRC, q.Num(), peer.Num(), verbs.QPSRTR, verbs.QPSRTR, verbs.QPCap{})
	e.ExpectErrno(q.Modify(&attr, aAccess), verbs.EINVAL, "RTR QP, mask IBV_QP_ACCESS_FLAGS only (no RTR→RTR row)")
	a, m = rtsAttr(e, q, peer)
	e.Must(q.Modify(&a, m), "RTR→RTS")
	attr = e.attrsFor(verbs.QPTypeRC, q.Num(), peer.Num(), verbs.QPSRTS, verbs.QPSRTS, verbs.QPCap{})
	attr.MinRNRTimer = 20
	e.Must(q.Modify(&attr, aMinRNR), "RTS QP, mask IBV_QP_MIN_RNR_TIMER only (RTS→RTS optional)")
	got, _, err := q.Query(aMinRNR)
	e.Must(err, "ibv_query_qp")
	if got.MinRNRTimer != 20 || got.State != verbs.QPSRTS {
		e.Errorf("after RTS→RTS: min_rnr_timer %d, state %v; want 20, RTS", got.MinRNRTimer, got.State)
	}
}

// scQPStateStateOutOfRange runs the scenario qp-state/state-out-of-range.
func scQPStateStateOutOfRange(e *Env) {
	q := e.QP(verbs.QPTypeUD)
	for _, s := range []verbs.QPState{verbs.QPSUnknown, 42} {
		attr := verbs.QPAttr{State: s}
		e.NoPanic("modify to state "+s.String(), func() {
			e.ExpectErrno(q.Modify(&attr, aState), verbs.EINVAL, "ibv_modify_qp(qp_state=%d)", uint32(s))
		})
	}
}

// scQPStateSQDAndBack runs the scenario qp-state/sqd-and-back.
func scQPStateSQDAndBack(e *Env) {
	a, b := e.Pair(verbs.QPTypeRC)
	attr := e.attrsFor(verbs.QPTypeRC, a.Num(), b.Num(), verbs.QPSRTS, verbs.QPSSQD, verbs.QPCap{})
	e.Must(a.Modify(&attr, aState|aSQDNote), "RTS→SQD with en_sqd_async_notify")
	if s := e.State(a); s != verbs.QPSSQD {
		e.Errorf("after RTS→SQD: state %v; want SQD", s)
	}
	// rxe takes en_sqd_async_notify and keeps none of it.
	if got, _, err := a.Query(aSQDNote); err != nil {
		e.Errorf("ibv_query_qp(IBV_QP_EN_SQD_ASYNC_NOTIFY): %v", err)
	} else if got.EnSQDAsyncNotify {
		e.Errorf("after RTS→SQD with en_sqd_async_notify=1, query reads it 1; rxe reads 0 (it keeps no such attribute)")
	}
	e.step(a, b.Num(), verbs.QPSSQD, verbs.QPSRTS)
	if s := e.State(a); s != verbs.QPSRTS {
		e.Errorf("after SQD→RTS: state %v; want RTS", s)
	}
}

// scModifyBadPort runs the scenario modify/bad-port.
func scModifyBadPort(e *Env) {
	q := e.QP(verbs.QPTypeRC)
	for _, p := range []uint8{0, 2} {
		attr := e.attrsFor(verbs.QPTypeRC, q.Num(), q.Num(), verbs.QPSReset, verbs.QPSInit, verbs.QPCap{})
		attr.PortNum = p
		err := q.Modify(&attr, aState|aPKey|aPort|aAccess)
		if e.ExpectErrno(err, verbs.EINVAL, "RESET→INIT with port %d", p) {
			e.ExpectNamesAttr(err, aPort, "RESET→INIT with port %d", p)
		}
	}
}

// scModifyAVPortInvalid runs the scenario modify/av-port-invalid.
func scModifyAVPortInvalid(e *Env) {
	q, peer := rcAtInit(e)
	for _, p := range []uint8{0, 2} {
		attr, mask := rtrAttr(e, q, peer)
		attr.AH.PortNum = p
		e.ExpectErrno(q.Modify(&attr, mask), verbs.EINVAL, "INIT→RTR with ah_attr.port_num %d", p)
	}
}

// scModifyPathMTUOverPortMax runs the scenario modify/path-mtu-over-port-max.
func scModifyPathMTUOverPortMax(e *Env) {
	q, peer := rcAtInit(e)
	attr, mask := rtrAttr(e, q, peer)
	attr.PathMTU = verbs.MTU4096 + 1
	err := q.Modify(&attr, mask)
	if e.ExpectErrno(err, verbs.EINVAL, "INIT→RTR with path_mtu %d", uint32(attr.PathMTU)) {
		e.ExpectNamesAttr(err, aMTU, "INIT→RTR with a bad path_mtu")
	}
}

// scModifyPathMTUAnyUpToMax runs the scenario modify/path-mtu-any-up-to-max.
func scModifyPathMTUAnyUpToMax(e *Env) {
	for m := verbs.MTU256; m <= verbs.MTU4096; m++ {
		q, peer := rcAtInit(e)
		attr, mask := rtrAttr(e, q, peer)
		attr.PathMTU = m
		if err := q.Modify(&attr, mask); err != nil {
			e.Errorf("INIT→RTR with path_mtu %v = %v; want success", m, err)
			continue
		}
		got, _, err := q.Query(aMTU)
		e.Must(err, "ibv_query_qp")
		if got.PathMTU != m {
			e.Errorf("path_mtu after setting %v = %v", m, got.PathMTU)
		}
	}
}

// scModifyAVWithoutGRH runs the scenario modify/av-without-grh.
func scModifyAVWithoutGRH(e *Env) {
	q, peer := rcAtInit(e)
	attr, mask := rtrAttr(e, q, peer)
	attr.AH.IsGlobal = false
	err := q.Modify(&attr, mask)
	if e.ExpectErrno(err, verbs.EINVAL, "INIT→RTR with an AV without GRH") {
		e.ExpectNamesAttr(err, aAV, "INIT→RTR with an AV without GRH")
	}
}

// scModifyAVEmptySGIDIndex runs the scenario modify/av-empty-sgid-index.
func scModifyAVEmptySGIDIndex(e *Env) {
	q, peer := rcAtInit(e)
	attr, mask := rtrAttr(e, q, peer)
	attr.AH.GRH.SGIDIndex = 255
	e.ExpectErrno(q.Modify(&attr, mask), sgidErrno(e, 255), "INIT→RTR with sgid_index 255")
}

// scModifyMaxRdAtomicOverDevice runs the scenario modify/max-rd-atomic-over-device.
func scModifyMaxRdAtomicOverDevice(e *Env) {
	a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	e.Bring(a, b.Num(), verbs.QPSRTR)
	attr, mask := rtsAttr(e, a, b)
	attr.MaxRdAtomic = uint8(rxe61.MaxQPRdAtom + 1)
	err := a.Modify(&attr, mask)
	if e.ExpectErrno(err, verbs.EINVAL, "RTR→RTS with max_rd_atomic %d", attr.MaxRdAtomic) {
		e.ExpectNamesAttr(err, aRdAtom, "RTR→RTS with max_rd_atomic over the device max")
	}
	attr.MaxRdAtomic = uint8(rxe61.MaxQPRdAtom)
	e.Must(a.Modify(&attr, mask), "RTR→RTS with max_rd_atomic %d (the device max)", attr.MaxRdAtomic)
}

// scModifyRdAtomicRoundedUp runs the scenario modify/rd-atomic-rounded-up.
func scModifyRdAtomicRoundedUp(e *Env) {
	for _, n := range []int{0, 1, 3, 5, 100} {
		a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
		e.Bring(a, b.Num(), verbs.QPSInit)
		attr, mask := rtrAttr(e, a, b)
		attr.MaxDestRdAtomic = uint8(n)
		e.Must(a.Modify(&attr, mask), "INIT→RTR with max_dest_rd_atomic %d", n)
		attr, mask = rtsAttr(e, a, b)
		attr.MaxRdAtomic = uint8(n)
		e.Must(a.Modify(&attr, mask), "RTR→RTS with max_rd_atomic %d", n)
		got, _, err := a.Query(aRdAtom | aDestRd)
		e.Must(err, "ibv_query_qp")
		if int(got.MaxRdAtomic) != roundPow2(n) || int(got.MaxDestRdAtomic) != roundPow2(n) {
			e.Errorf("asked %d: query max_rd_atomic %d, max_dest_rd_atomic %d; want %d for both", n, got.MaxRdAtomic, got.MaxDestRdAtomic, roundPow2(n))
		}
	}
}

// scModifyTimeoutOver31 runs the scenario modify/timeout-over-31.
func scModifyTimeoutOver31(e *Env) {
	a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	e.Bring(a, b.Num(), verbs.QPSRTR)
	attr, mask := rtsAttr(e, a, b)
	attr.Timeout = 32
	err := a.Modify(&attr, mask)
	if e.ExpectErrno(err, verbs.EINVAL, "RTR→RTS with timeout 32") {
		e.ExpectNamesAttr(err, aTimeout, "RTR→RTS with timeout 32")
	}
	attr.Timeout = 31
	e.Must(a.Modify(&attr, mask), "RTR→RTS with timeout 31")
}

// scModifyRetryCountsNotRangeChecked runs the scenario modify/retry-counts-not-range-checked.
func scModifyRetryCountsNotRangeChecked(e *Env) {
	a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	e.Bring(a, b.Num(), verbs.QPSRTR)
	attr, mask := rtsAttr(e, a, b)
	attr.RetryCnt, attr.RNRRetry = 8, 200
	e.Must(a.Modify(&attr, mask), "RTR→RTS with retry_cnt 8, rnr_retry 200")
	got, _, err := a.Query(aRetry | aRNR)
	e.Must(err, "ibv_query_qp")
	if got.RetryCnt != 8 || got.RNRRetry != 200 {
		e.Errorf("query retry_cnt %d, rnr_retry %d; want 8, 200 as set", got.RetryCnt, got.RNRRetry)
	}
}

// scModifyPSNMaskedTo24Bits runs the scenario modify/psn-masked-to-24-bits.
func scModifyPSNMaskedTo24Bits(e *Env) {
	a, b := e.QP(verbs.QPTypeRC), e.QP(verbs.QPTypeRC)
	e.Bring(a, b.Num(), verbs.QPSInit)
	attr, mask := rtrAttr(e, a, b)
	attr.RQPSN = 0xfe123456
	e.Must(a.Modify(&attr, mask), "INIT→RTR with rq_psn 0xfe123456")
	attr, mask = rtsAttr(e, a, b)
	attr.SQPSN = 0x01abcdef
	e.Must(a.Modify(&attr, mask), "RTR→RTS with sq_psn 0x01abcdef")
	got, _, err := a.Query(aRQPSN | aSQPSN)
	e.Must(err, "ibv_query_qp")
	if got.RQPSN != 0x123456 || got.SQPSN != 0xabcdef {
		e.Errorf("query rq_psn %#x, sq_psn %#x; want 0x123456, 0xabcdef", got.RQPSN, got.SQPSN)
	}
}

// scModifyAltPathRefusedOnRoCE runs the scenario modify/alt-path-refused-on-roce.
func scModifyAltPathRefusedOnRoCE(e *Env) {
	q, peer := rcAtInit(e)
	attr, mask := rtrAttr(e, q, peer)
	err := q.Modify(&attr, mask|aAlt)
	if e.ExpectErrno(err, verbs.EINVAL, "INIT→RTR with IBV_QP_ALT_PATH") {
		e.ExpectNamesAttr(err, aAlt, "INIT→RTR with IBV_QP_ALT_PATH")
	}
	if s := e.State(q); s != verbs.QPSInit {
		e.Errorf("state after the refused modify: %v; want INIT", s)
	}
}

// scModifyPrivilegedQKey runs the scenario modify/privileged-qkey.
func scModifyPrivilegedQKey(e *Env) {
	q := e.QP(verbs.QPTypeUD)
	attr := e.attrsFor(verbs.QPTypeUD, q.Num(), q.Num(), verbs.QPSReset, verbs.QPSInit, verbs.QPCap{})
	attr.QKey = 0x80010000
	err := q.Modify(&attr, aState|aPKey|aPort|aQKey)
	if e.Opts.CapNetRaw {
		if err != nil {
			e.Errorf("UD RESET→INIT with qkey 0x80010000 and CAP_NET_RAW = %v; want success", err)
		}
		return
	}
	if e.ExpectErrno(err, verbs.EPERM, "UD RESET→INIT with qkey 0x80010000, unprivileged") {
		e.ExpectNamesAttr(err, aQKey, "UD RESET→INIT with a privileged qkey")
	}
	attr.QKey = 0x7fffffff
	e.Must(q.Modify(&attr, aState|aPKey|aPort|aQKey), "UD RESET→INIT with qkey 0x7fffffff")
}

// scModifyUCSQDAVImpliesPort runs the scenario modify/uc-sqd-av-implies-port.
func scModifyUCSQDAVImpliesPort(e *Env) {
	for _, c := range []struct {
		typ verbs.QPType
		ok  bool
	}{{verbs.QPTypeUC, false}, {verbs.QPTypeRC, true}} {
		a, b := e.Pair(c.typ)
		e.step(a, b.Num(), verbs.QPSRTS, verbs.QPSSQD)
		attr := e.attrsFor(c.typ, a.Num(), b.Num(), verbs.QPSSQD, verbs.QPSSQD, verbs.QPCap{})
		err := a.Modify(&attr, aState|aAV)
		if c.ok {
			if err != nil {
				e.Errorf("%v SQD→SQD with IBV_QP_AV = %v; want success (IBV_QP_PORT is allowed there)", c.typ, err)
			}
		} else {
			e.ExpectErrno(err, verbs.EINVAL, "%v SQD→SQD with IBV_QP_AV (uverbs adds IBV_QP_PORT, not allowed for UC)", c.typ)
		}
	}
}

// scModifyRateLimitUnsupported runs the scenario modify/rate-limit-unsupported.
func scModifyRateLimitUnsupported(e *Env) {
	q := e.QP(verbs.QPTypeRC)
	attr := e.attrsFor(verbs.QPTypeRC, q.Num(), q.Num(), verbs.QPSReset, verbs.QPSInit, verbs.QPCap{})
	e.ExpectErrno(q.Modify(&attr, aState|aPKey|aPort|aAccess|verbs.AttrRateLimit), verbs.EOPNOTSUPP, "RESET→INIT with IBV_QP_RATE_LIMIT")
}
