package verbstest

import "github.com/vsh-rdma/vsh/verbs"

// This file is the suite's own reading of the sources. It is deliberately
// independent of verbs.CheckTransition and of the simulator: if either
// disagrees with the kernel, the scenarios below catch it.

// Attribute bits, short names for the table below.
const (
	aState   = verbs.AttrState
	aCur     = verbs.AttrCurState
	aSQDNote = verbs.AttrEnSQDAsyncNotify
	aAccess  = verbs.AttrAccessFlags
	aPKey    = verbs.AttrPKeyIndex
	aPort    = verbs.AttrPort
	aQKey    = verbs.AttrQKey
	aAV      = verbs.AttrAV
	aMTU     = verbs.AttrPathMTU
	aTimeout = verbs.AttrTimeout
	aRetry   = verbs.AttrRetryCnt
	aRNR     = verbs.AttrRNRRetry
	aRQPSN   = verbs.AttrRQPSN
	aRdAtom  = verbs.AttrMaxQPRdAtomic
	aAlt     = verbs.AttrAltPath
	aMinRNR  = verbs.AttrMinRNRTimer
	aSQPSN   = verbs.AttrSQPSN
	aDestRd  = verbs.AttrMaxDestRdAtomic
	aMig     = verbs.AttrPathMigState
	aCap     = verbs.AttrCap
	aDestQPN = verbs.AttrDestQPN
)

// standardAttrs are the attribute bits ibv_modify_qp(3) takes through the
// legacy command (IBV_QP_STATE .. IBV_QP_DEST_QPN); the walk adds each one
// that a transition does not allow and expects EINVAL.
var standardAttrs = []verbs.QPAttrMask{
	aCur, aSQDNote, aAccess, aPKey, aPort, aQKey, aAV, aMTU, aTimeout, aRetry, aRNR,
	aRQPSN, aRdAtom, aAlt, aMinRNR, aSQPSN, aDestRd, aMig, aCap, aDestQPN,
}

// The QP types the suite covers, in table column order.
var qpTypes = []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD}

func typeCol(t verbs.QPType) int {
	switch t {
	case verbs.QPTypeRC:
		return 0
	case verbs.QPTypeUC:
		return 1
	case verbs.QPTypeUD:
		return 2
	}
	return -1
}

// transRow is one valid (current state, next state) pair of the kernel's
// qp_state_table, with its required and optional attribute masks for RC,
// UC and UD (columns in that order).
type transRow struct {
	from, to verbs.QPState
	req, opt [3]verbs.QPAttrMask
}

// kernelQPStateTable is qp_state_table in drivers/infiniband/core/verbs.c
// (Linux 6.1), which ib_modify_qp_is_ok consults and rxe_qp_chk_attr calls
// first. The same masks are the "required/optional attributes" of
// ibv_modify_qp(3). A pair that is not listed is not a legal transition for
// any type. Notes from the source:
//   - RESET→ERR is not valid (only RESET→RESET and RESET→INIT).
//   - RTR→RTR is not valid; every other reachable state may stay put.
//   - nothing enters SQE through modify_qp; SQE→RTS is valid for every type,
//     with no attribute allowed for RC (rxe never enters SQE, so it is
//     unreachable here).
var kernelQPStateTable = []transRow{
	{from: verbs.QPSReset, to: verbs.QPSReset},
	{from: verbs.QPSReset, to: verbs.QPSInit,
		req: [3]verbs.QPAttrMask{aPKey | aPort | aAccess, aPKey | aPort | aAccess, aPKey | aPort | aQKey}},

	{from: verbs.QPSInit, to: verbs.QPSReset},
	{from: verbs.QPSInit, to: verbs.QPSErr},
	{from: verbs.QPSInit, to: verbs.QPSInit,
		opt: [3]verbs.QPAttrMask{aPKey | aPort | aAccess, aPKey | aPort | aAccess, aPKey | aPort | aQKey}},
	{from: verbs.QPSInit, to: verbs.QPSRTR,
		req: [3]verbs.QPAttrMask{aAV | aMTU | aDestQPN | aRQPSN | aDestRd | aMinRNR, aAV | aMTU | aDestQPN | aRQPSN, 0},
		opt: [3]verbs.QPAttrMask{aAlt | aAccess | aPKey, aAlt | aAccess | aPKey, aPKey | aQKey}},

	{from: verbs.QPSRTR, to: verbs.QPSReset},
	{from: verbs.QPSRTR, to: verbs.QPSErr},
	{from: verbs.QPSRTR, to: verbs.QPSRTS,
		req: [3]verbs.QPAttrMask{aTimeout | aRetry | aRNR | aSQPSN | aRdAtom, aSQPSN, aSQPSN},
		opt: [3]verbs.QPAttrMask{aCur | aAlt | aAccess | aMinRNR | aMig, aCur | aAlt | aAccess | aMig, aCur | aQKey}},

	{from: verbs.QPSRTS, to: verbs.QPSReset},
	{from: verbs.QPSRTS, to: verbs.QPSErr},
	{from: verbs.QPSRTS, to: verbs.QPSRTS,
		opt: [3]verbs.QPAttrMask{aCur | aAccess | aAlt | aMig | aMinRNR, aCur | aAccess | aAlt | aMig, aCur | aQKey}},
	{from: verbs.QPSRTS, to: verbs.QPSSQD,
		opt: [3]verbs.QPAttrMask{aSQDNote, aSQDNote, aSQDNote}},

	{from: verbs.QPSSQD, to: verbs.QPSReset},
	{from: verbs.QPSSQD, to: verbs.QPSErr},
	{from: verbs.QPSSQD, to: verbs.QPSRTS,
		opt: [3]verbs.QPAttrMask{aCur | aAlt | aAccess | aMinRNR | aMig, aCur | aAlt | aAccess | aMig, aCur | aQKey}},
	{from: verbs.QPSSQD, to: verbs.QPSSQD,
		opt: [3]verbs.QPAttrMask{
			aPort | aAV | aTimeout | aRetry | aRNR | aRdAtom | aDestRd | aAlt | aAccess | aPKey | aMinRNR | aMig,
			aAV | aAlt | aAccess | aPKey | aMig,
			aPKey | aQKey}},

	{from: verbs.QPSSQE, to: verbs.QPSReset},
	{from: verbs.QPSSQE, to: verbs.QPSErr},
	{from: verbs.QPSSQE, to: verbs.QPSRTS,
		opt: [3]verbs.QPAttrMask{0, aCur | aAccess, aCur | aQKey}},

	{from: verbs.QPSErr, to: verbs.QPSReset},
	{from: verbs.QPSErr, to: verbs.QPSErr},
}

// allStates are the states a modify_qp may name (IBV_QPS_RESET..ERR).
var allStates = []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSSQD, verbs.QPSSQE, verbs.QPSErr}

// reachableStates are the states a QP on rxe can be put in through verbs:
// SQE is entered only by the device after a send error, and rxe never does
// (rxe_qp_from_attr: "Not possible from modify_qp").
var reachableStates = []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSSQD, verbs.QPSErr}

// lookupRow returns the table row for from→to and whether it is legal.
func lookupRow(from, to verbs.QPState) (transRow, bool) {
	for _, r := range kernelQPStateTable {
		if r.from == from && r.to == to {
			return r, true
		}
	}
	return transRow{}, false
}

// legalNext lists the states the kernel lets a QP in from move to.
func legalNext(from verbs.QPState) []verbs.QPState {
	var out []verbs.QPState
	for _, s := range allStates {
		if _, ok := lookupRow(from, s); ok {
			out = append(out, s)
		}
	}
	return out
}

// rxe61 holds the device and port attributes of rxe in Linux 6.1, from
// drivers/infiniband/sw/rxe/rxe_param.h and rxe.c rxe_init_device_param /
// rxe_init_port_param. A real rxe0 in the lab reported max_qp 1048560,
// max_cq 1048576, max_mr 524287, max_qp_wr 1048576, gid_tbl_len 1024.
var rxe61 = struct {
	MaxMRSize        uint64
	PageSizeCap      uint64
	VendorID         uint32
	MaxQP            int // DEFAULT_MAX_VALUE - RXE_MIN_QP_INDEX
	MaxQPWR          int
	MaxSGE           int
	MaxSGERd         int
	MaxCQ            int
	MaxCQE           int // (1 << RXE_MAX_LOG_CQE) - 1
	MaxMR            int // RXE_MAX_MR_INDEX - RXE_MIN_MR_INDEX
	MaxMW            int
	MaxPD            int
	MaxQPRdAtom      int
	MaxQPInitRdAtom  int
	MaxResRdAtom     int
	MaxSRQ           int // DEFAULT_MAX_VALUE - RXE_MIN_SRQ_INDEX
	MaxSRQWR         int
	MaxSRQSGE        int
	MaxAH            int
	MaxMcastGrp      int
	MaxMcastQPAttach int
	MaxTotMcastQP    int
	MaxPKeys         int
	LocalCAAckDelay  uint8
	PhysPortCnt      uint8
	MaxInlineData    int // RXE_MAX_WQE_SIZE - sizeof(rxe_send_wqe) = 32 SGEs × 16 bytes
	AtomicCapHCA     uint32
	MinQPN           uint32 // RXE_MIN_QP_INDEX: QPNs 0..15 are reserved
	// port
	GIDTblLen    int
	MaxMsgSz     uint32
	PKeyTblLen   uint16
	PortCapCMSup uint32 // IB_PORT_CM_SUP, the only bit of RXE_PORT_PORT_CAP_FLAGS
	MaxVLNum     uint8
	PhysLinkUp   uint8 // IB_PORT_PHYS_STATE_LINK_UP (rxe_query_port when ACTIVE)
	SGESize      int   // sizeof(struct ib_sge): the unit of rxe's send WQE size
}{
	MaxMRSize: ^uint64(0), PageSizeCap: 0xfffff000, VendorID: 0xffffff,
	MaxQP: 1<<20 - 16, MaxQPWR: 1 << 20, MaxSGE: 32, MaxSGERd: 32,
	MaxCQ: 1 << 20, MaxCQE: 1<<15 - 1, MaxMR: 1<<19 - 1, MaxMW: 1<<20 - (1<<19 + 1), MaxPD: 1 << 20,
	MaxQPRdAtom: 128, MaxQPInitRdAtom: 128, MaxResRdAtom: 0x3f000,
	MaxSRQ: 1<<20 - 0x00020001, MaxSRQWR: 1 << 20, MaxSRQSGE: 27, MaxAH: 1<<15 - 1,
	MaxMcastGrp: 8192, MaxMcastQPAttach: 56, MaxTotMcastQP: 0x70000, MaxPKeys: 64,
	LocalCAAckDelay: 15, PhysPortCnt: 1, MaxInlineData: 32 * 16, AtomicCapHCA: 1, MinQPN: 16,
	GIDTblLen: 1024, MaxMsgSz: 0x800000, PKeyTblLen: 1, PortCapCMSup: 1 << 16, MaxVLNum: 1,
	PhysLinkUp: 5, SGESize: 16,
}

// rxeQueueDepth is what rxe_queue_init makes of a requested depth n: one
// slot is kept empty and the slot count is a power of two, so the usable
// depth is roundup_pow_of_two(n+1) - 1 (rxe_queue.c). SQ, RQ, SRQ and CQ
// depths are all sized this way, and that is what query returns.
func rxeQueueDepth(n int) int {
	slots := 1
	for slots < n+1 {
		slots <<= 1
	}
	return slots - 1
}

// rxeSendCaps is what rxe_qp_init_req makes of the send-side capabilities:
// the WQE holds max(sge × 16, inline) bytes, and both max_send_sge and
// max_inline_data are derived from that size.
func rxeSendCaps(sge, inline int) (maxSGE, maxInline int) {
	size := sge * rxe61.SGESize
	if inline > size {
		size = inline
	}
	return size / rxe61.SGESize, size
}

// roundPow2 is roundup_pow_of_two as rxe_qp_from_attr applies it to
// max_rd_atomic and max_dest_rd_atomic (0 stays 0).
func roundPow2(n int) int {
	if n == 0 {
		return 0
	}
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
