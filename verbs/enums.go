package verbs

// The enums and flags of libibverbs (rdma-core libibverbs/verbs.h, v44),
// with the same numeric values, so that a value can cross into C unchanged.

// QPState mirrors enum ibv_qp_state.
type QPState uint32

// QP states.
const (
	QPSReset QPState = iota
	QPSInit
	QPSRTR
	QPSRTS
	QPSSQD
	QPSSQE
	QPSErr
	QPSUnknown
)

var qpStateNames = nameTable[QPState]{kind: "QP state", prefix: "IBV_QPS_", entries: []nameEntry[QPState]{
	{QPSReset, "RESET", nil}, {QPSInit, "INIT", nil}, {QPSRTR, "RTR", []string{"ready_to_receive"}},
	{QPSRTS, "RTS", []string{"ready_to_send"}}, {QPSSQD, "SQD", nil}, {QPSSQE, "SQE", nil},
	{QPSErr, "ERR", []string{"error"}}, {QPSUnknown, "UNKNOWN", nil},
}}

func (s QPState) String() string { return qpStateNames.name(s) }

// Short returns the short form, e.g. "rts".
func (s QPState) Short() string { return qpStateNames.short(s) }

// ParseQPState parses IBV_QPS_RTS, RTS, rts or 3.
func ParseQPState(s string) (QPState, error) { return qpStateNames.parse(s) }

// QPStateNames lists the short forms of every QP state.
func QPStateNames() []string { return qpStateNames.shorts()[:QPSUnknown] }

// QPType mirrors enum ibv_qp_type.
type QPType uint32

// QP types.
const (
	QPTypeRC        QPType = 2
	QPTypeUC        QPType = 3
	QPTypeUD        QPType = 4
	QPTypeRawPacket QPType = 8
	QPTypeXRCSend   QPType = 9
	QPTypeXRCRecv   QPType = 10
)

var qpTypeNames = nameTable[QPType]{kind: "QP type", prefix: "IBV_QPT_", entries: []nameEntry[QPType]{
	{QPTypeRC, "RC", nil}, {QPTypeUC, "UC", nil}, {QPTypeUD, "UD", nil},
	{QPTypeRawPacket, "RAW_PACKET", []string{"raw"}}, {QPTypeXRCSend, "XRC_SEND", nil}, {QPTypeXRCRecv, "XRC_RECV", nil},
}}

func (t QPType) String() string { return qpTypeNames.name(t) }

// Short returns the short form, e.g. "rc".
func (t QPType) Short() string { return qpTypeNames.short(t) }

// ParseQPType parses IBV_QPT_RC, RC, rc or 2.
func ParseQPType(s string) (QPType, error) { return qpTypeNames.parse(s) }

// QPTypeNames lists the short forms of every QP type.
func QPTypeNames() []string { return qpTypeNames.shorts() }

// WROpcode mirrors enum ibv_wr_opcode.
type WROpcode uint32

// Work request opcodes.
const (
	WRRDMAWrite         WROpcode = 0
	WRRDMAWriteWithImm  WROpcode = 1
	WRSend              WROpcode = 2
	WRSendWithImm       WROpcode = 3
	WRRDMARead          WROpcode = 4
	WRAtomicCmpAndSwp   WROpcode = 5
	WRAtomicFetchAndAdd WROpcode = 6
	WRLocalInv          WROpcode = 7
	WRBindMW            WROpcode = 8
	WRSendWithInv       WROpcode = 9
	WRTSO               WROpcode = 10
)

var wrOpcodeNames = nameTable[WROpcode]{kind: "work request opcode", prefix: "IBV_WR_", entries: []nameEntry[WROpcode]{
	{WRRDMAWrite, "RDMA_WRITE", []string{"write"}}, {WRRDMAWriteWithImm, "RDMA_WRITE_WITH_IMM", []string{"write_imm", "write_with_imm"}},
	{WRSend, "SEND", nil}, {WRSendWithImm, "SEND_WITH_IMM", []string{"send_imm"}},
	{WRRDMARead, "RDMA_READ", []string{"read"}}, {WRAtomicCmpAndSwp, "ATOMIC_CMP_AND_SWP", []string{"cmp_swap", "cas"}},
	{WRAtomicFetchAndAdd, "ATOMIC_FETCH_AND_ADD", []string{"fetch_add", "faa"}}, {WRLocalInv, "LOCAL_INV", nil},
	{WRBindMW, "BIND_MW", nil}, {WRSendWithInv, "SEND_WITH_INV", nil}, {WRTSO, "TSO", nil},
}}

func (o WROpcode) String() string { return wrOpcodeNames.name(o) }

// Short returns the short form, e.g. "rdma_write".
func (o WROpcode) Short() string { return wrOpcodeNames.short(o) }

// ParseWROpcode parses IBV_WR_RDMA_WRITE, rdma_write, write or 0.
func ParseWROpcode(s string) (WROpcode, error) { return wrOpcodeNames.parse(s) }

// WROpcodeNames lists the short forms of every work request opcode.
func WROpcodeNames() []string { return wrOpcodeNames.shorts() }

// HasImm reports whether the opcode carries immediate data.
func (o WROpcode) HasImm() bool { return o == WRRDMAWriteWithImm || o == WRSendWithImm }

// IsAtomic reports whether the opcode is an atomic operation.
func (o WROpcode) IsAtomic() bool { return o == WRAtomicCmpAndSwp || o == WRAtomicFetchAndAdd }

// IsRDMA reports whether the opcode names remote memory (addr + rkey).
func (o WROpcode) IsRDMA() bool {
	return o == WRRDMAWrite || o == WRRDMAWriteWithImm || o == WRRDMARead || o.IsAtomic()
}

// WCStatus mirrors enum ibv_wc_status.
type WCStatus uint32

// Work completion statuses.
const (
	WCSuccess WCStatus = iota
	WCLocLenErr
	WCLocQPOpErr
	WCLocEECOpErr
	WCLocProtErr
	WCWRFlushErr
	WCMWBindErr
	WCBadRespErr
	WCLocAccessErr
	WCRemInvReqErr
	WCRemAccessErr
	WCRemOpErr
	WCRetryExcErr
	WCRNRRetryExcErr
	WCLocRDDViolErr
	WCRemInvRDReqErr
	WCRemAbortErr
	WCInvEECNErr
	WCInvEECStateErr
	WCFatalErr
	WCRespTimeoutErr
	WCGeneralErr
	WCTMErr
	WCTMRndvIncomplete
)

var wcStatusNames = nameTable[WCStatus]{kind: "completion status", prefix: "IBV_WC_", entries: []nameEntry[WCStatus]{
	{WCSuccess, "SUCCESS", nil}, {WCLocLenErr, "LOC_LEN_ERR", nil}, {WCLocQPOpErr, "LOC_QP_OP_ERR", nil},
	{WCLocEECOpErr, "LOC_EEC_OP_ERR", nil}, {WCLocProtErr, "LOC_PROT_ERR", nil}, {WCWRFlushErr, "WR_FLUSH_ERR", []string{"flush"}},
	{WCMWBindErr, "MW_BIND_ERR", nil}, {WCBadRespErr, "BAD_RESP_ERR", nil}, {WCLocAccessErr, "LOC_ACCESS_ERR", nil},
	{WCRemInvReqErr, "REM_INV_REQ_ERR", nil}, {WCRemAccessErr, "REM_ACCESS_ERR", nil}, {WCRemOpErr, "REM_OP_ERR", nil},
	{WCRetryExcErr, "RETRY_EXC_ERR", nil}, {WCRNRRetryExcErr, "RNR_RETRY_EXC_ERR", nil}, {WCLocRDDViolErr, "LOC_RDD_VIOL_ERR", nil},
	{WCRemInvRDReqErr, "REM_INV_RD_REQ_ERR", nil}, {WCRemAbortErr, "REM_ABORT_ERR", nil}, {WCInvEECNErr, "INV_EECN_ERR", nil},
	{WCInvEECStateErr, "INV_EEC_STATE_ERR", nil}, {WCFatalErr, "FATAL_ERR", nil}, {WCRespTimeoutErr, "RESP_TIMEOUT_ERR", nil},
	{WCGeneralErr, "GENERAL_ERR", nil}, {WCTMErr, "TM_ERR", nil}, {WCTMRndvIncomplete, "TM_RNDV_INCOMPLETE", nil},
}}

// wcStatusStr holds ibv_wc_status_str's strings (libibverbs/enum_strs.c).
var wcStatusStr = [...]string{
	"success", "local length error", "local QP operation error", "local EE context operation error",
	"local protection error", "Work Request Flushed Error", "memory management operation error",
	"bad response error", "local access error", "remote invalid request error", "remote access error",
	"remote operation error", "transport retry counter exceeded", "RNR retry counter exceeded",
	"local RDD violation error", "remote invalid RD request", "aborted error", "invalid EE context number",
	"invalid EE context state", "fatal error", "response timeout error", "general error",
	"TM error", "TM software rendezvous",
}

func (s WCStatus) String() string { return wcStatusNames.name(s) }

// Short returns the short form, e.g. "rnr_retry_exc_err".
func (s WCStatus) Short() string { return wcStatusNames.short(s) }

// Str returns what ibv_wc_status_str returns, e.g. "RNR retry counter exceeded".
func (s WCStatus) Str() string {
	if int(s) < len(wcStatusStr) {
		return wcStatusStr[s]
	}
	return "unknown"
}

// ParseWCStatus parses IBV_WC_SUCCESS, success or 0.
func ParseWCStatus(s string) (WCStatus, error) { return wcStatusNames.parse(s) }

// WCStatusNames lists the short forms of every completion status.
func WCStatusNames() []string { return wcStatusNames.shorts() }

// WCOpcode mirrors enum ibv_wc_opcode.
type WCOpcode uint32

// Work completion opcodes.
const (
	WCOpSend            WCOpcode = 0
	WCOpRDMAWrite       WCOpcode = 1
	WCOpRDMARead        WCOpcode = 2
	WCOpCompSwap        WCOpcode = 3
	WCOpFetchAdd        WCOpcode = 4
	WCOpBindMW          WCOpcode = 5
	WCOpLocalInv        WCOpcode = 6
	WCOpTSO             WCOpcode = 7
	WCOpRecv            WCOpcode = 128
	WCOpRecvRDMAWithImm WCOpcode = 129
)

var wcOpcodeNames = nameTable[WCOpcode]{kind: "completion opcode", prefix: "IBV_WC_", entries: []nameEntry[WCOpcode]{
	{WCOpSend, "SEND", nil}, {WCOpRDMAWrite, "RDMA_WRITE", nil}, {WCOpRDMARead, "RDMA_READ", nil},
	{WCOpCompSwap, "COMP_SWAP", nil}, {WCOpFetchAdd, "FETCH_ADD", nil}, {WCOpBindMW, "BIND_MW", nil},
	{WCOpLocalInv, "LOCAL_INV", nil}, {WCOpTSO, "TSO", nil}, {WCOpRecv, "RECV", nil},
	{WCOpRecvRDMAWithImm, "RECV_RDMA_WITH_IMM", nil},
}}

func (o WCOpcode) String() string { return wcOpcodeNames.name(o) }

// Short returns the short form, e.g. "recv".
func (o WCOpcode) Short() string { return wcOpcodeNames.short(o) }

// ParseWCOpcode parses IBV_WC_RECV, recv or 128.
func ParseWCOpcode(s string) (WCOpcode, error) { return wcOpcodeNames.parse(s) }

// IsRecv reports whether the completion belongs to a receive work request.
func (o WCOpcode) IsRecv() bool { return o&WCOpRecv != 0 }

// MTU mirrors enum ibv_mtu.
type MTU uint32

// MTUs.
const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

var mtuNames = nameTable[MTU]{kind: "MTU", prefix: "IBV_MTU_", entries: []nameEntry[MTU]{
	{MTU256, "256", nil}, {MTU512, "512", nil}, {MTU1024, "1024", nil}, {MTU2048, "2048", nil}, {MTU4096, "4096", nil},
}}

func (m MTU) String() string { return mtuNames.name(m) }

// Short returns the size in bytes as text, e.g. "1024".
func (m MTU) Short() string { return mtuNames.short(m) }

// Bytes returns the MTU in bytes (256 << (m-1)), or 0 when m is not a valid MTU.
func (m MTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

// Valid reports whether m is one of the five IB MTUs.
func (m MTU) Valid() bool { return m >= MTU256 && m <= MTU4096 }

// ParseMTU parses a size in bytes (256..4096), IBV_MTU_1024, or the enum
// value when written as 1..5.
func ParseMTU(s string) (MTU, error) {
	if n, isNum, err := parseNumber(s, 64); isNum && err == nil {
		switch n {
		case 256, 512, 1024, 2048, 4096:
			return MTUFromBytes(int(n)), nil
		case 1, 2, 3, 4, 5:
			return MTU(n), nil
		}
	}
	for _, e := range mtuNames.entries {
		if s == mtuNames.prefix+e.suffix {
			return e.v, nil
		}
	}
	return 0, errorf("unknown MTU %q (one of: 256, 512, 1024, 2048, 4096)", s)
}

// RoCEHeaderBudget is what rxe takes off a netdev's MTU for the RoCEv2
// headers (RXE_MAX_HDR_LENGTH) before it rounds down to an IB MTU.
const RoCEHeaderBudget = 80

// RoCEActiveMTU is the port's active MTU rxe derives from its netdev's
// MTU (rxe_set_mtu): the netdev MTU less RoCEHeaderBudget, rounded down to
// an IB MTU, at least 256. A 1500-byte netdev gives 1024; 9000 gives 4096.
func RoCEActiveMTU(netdevMTU int) MTU {
	n := netdevMTU - RoCEHeaderBudget
	for m := MTU4096; m > MTU256; m-- {
		if n >= m.Bytes() {
			return m
		}
	}
	return MTU256
}

// MTUFromBytes returns the MTU of a size in bytes, or 0 when it is not one of the five.
func MTUFromBytes(n int) MTU {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == n {
			return m
		}
	}
	return 0
}

// MTUNames lists the five MTUs in bytes.
func MTUNames() []string { return mtuNames.shorts() }

// PortState mirrors enum ibv_port_state.
type PortState uint32

// Port states.
const (
	PortNop PortState = iota
	PortDown
	PortInit
	PortArmed
	PortActive
	PortActiveDefer
)

var portStateNames = nameTable[PortState]{kind: "port state", prefix: "IBV_PORT_", entries: []nameEntry[PortState]{
	{PortNop, "NOP", nil}, {PortDown, "DOWN", nil}, {PortInit, "INIT", nil}, {PortArmed, "ARMED", nil},
	{PortActive, "ACTIVE", nil}, {PortActiveDefer, "ACTIVE_DEFER", nil},
}}

func (s PortState) String() string { return portStateNames.name(s) }

// Short returns the short form, e.g. "active".
func (s PortState) Short() string { return portStateNames.short(s) }

// LinkLayer mirrors the IBV_LINK_LAYER_* values.
type LinkLayer uint8

// Link layers.
const (
	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2
)

var linkLayerNames = nameTable[LinkLayer]{kind: "link layer", prefix: "IBV_LINK_LAYER_", entries: []nameEntry[LinkLayer]{
	{LinkLayerUnspecified, "UNSPECIFIED", nil}, {LinkLayerInfiniBand, "INFINIBAND", []string{"ib"}},
	{LinkLayerEthernet, "ETHERNET", []string{"eth"}},
}}

func (l LinkLayer) String() string { return linkLayerNames.name(l) }

// Short returns the short form as ibv_devinfo prints it ("Ethernet", "InfiniBand").
func (l LinkLayer) Short() string {
	switch l {
	case LinkLayerEthernet:
		return "Ethernet"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	}
	return "Unknown"
}

// GIDType mirrors enum ibv_gid_type (ibv_query_gid_type).
type GIDType uint32

// GID types.
const (
	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

var gidTypeNames = nameTable[GIDType]{kind: "GID type", prefix: "IBV_GID_TYPE_", entries: []nameEntry[GIDType]{
	{GIDTypeIB, "IB", nil}, {GIDTypeRoCEv1, "ROCE_V1", []string{"v1"}}, {GIDTypeRoCEv2, "ROCE_V2", []string{"v2"}},
}}

func (t GIDType) String() string { return gidTypeNames.name(t) }

// Short returns what ibv_devinfo -v prints: "IB", "RoCE v1", "RoCE v2".
func (t GIDType) Short() string {
	switch t {
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return "IB"
}

// EventType mirrors enum ibv_event_type.
type EventType uint32

// Async event types.
const (
	EventCQErr EventType = iota
	EventQPFatal
	EventQPReqErr
	EventQPAccessErr
	EventCommEst
	EventSQDrained
	EventPathMig
	EventPathMigErr
	EventDeviceFatal
	EventPortActive
	EventPortErr
	EventLIDChange
	EventPKeyChange
	EventSMChange
	EventSRQErr
	EventSRQLimitReached
	EventQPLastWQEReached
	EventClientReregister
	EventGIDChange
	EventWQFatal
)

var eventTypeNames = nameTable[EventType]{kind: "event type", prefix: "IBV_EVENT_", entries: []nameEntry[EventType]{
	{EventCQErr, "CQ_ERR", nil}, {EventQPFatal, "QP_FATAL", nil}, {EventQPReqErr, "QP_REQ_ERR", nil},
	{EventQPAccessErr, "QP_ACCESS_ERR", nil}, {EventCommEst, "COMM_EST", nil}, {EventSQDrained, "SQ_DRAINED", nil},
	{EventPathMig, "PATH_MIG", nil}, {EventPathMigErr, "PATH_MIG_ERR", nil}, {EventDeviceFatal, "DEVICE_FATAL", nil},
	{EventPortActive, "PORT_ACTIVE", nil}, {EventPortErr, "PORT_ERR", nil}, {EventLIDChange, "LID_CHANGE", nil},
	{EventPKeyChange, "PKEY_CHANGE", nil}, {EventSMChange, "SM_CHANGE", nil}, {EventSRQErr, "SRQ_ERR", nil},
	{EventSRQLimitReached, "SRQ_LIMIT_REACHED", nil}, {EventQPLastWQEReached, "QP_LAST_WQE_REACHED", nil},
	{EventClientReregister, "CLIENT_REREGISTER", nil}, {EventGIDChange, "GID_CHANGE", nil}, {EventWQFatal, "WQ_FATAL", nil},
}}

// eventTypeStr holds ibv_event_type_str's strings (libibverbs/enum_strs.c).
var eventTypeStr = [...]string{
	"CQ error", "local work queue catastrophic error", "invalid request local work queue error",
	"local access violation work queue error", "communication established", "send queue drained",
	"path migrated", "path migration request error", "local catastrophic error", "port active",
	"port error", "LID change", "P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached",
	"last WQE reached", "client reregistration", "GID table change", "WQ fatal",
}

func (t EventType) String() string { return eventTypeNames.name(t) }

// Short returns the short form, e.g. "port_active".
func (t EventType) Short() string { return eventTypeNames.short(t) }

// Str returns what ibv_event_type_str returns, e.g. "port active".
func (t EventType) Str() string {
	if int(t) < len(eventTypeStr) {
		return eventTypeStr[t]
	}
	return "unknown"
}

// ParseEventType parses IBV_EVENT_PORT_ACTIVE, port_active or 9.
func ParseEventType(s string) (EventType, error) { return eventTypeNames.parse(s) }

// MigState mirrors enum ibv_mig_state.
type MigState uint32

// Path migration states.
const (
	MigMigrated MigState = iota
	MigRearm
	MigArmed
)

var migStateNames = nameTable[MigState]{kind: "migration state", prefix: "IBV_MIG_", entries: []nameEntry[MigState]{
	{MigMigrated, "MIGRATED", nil}, {MigRearm, "REARM", nil}, {MigArmed, "ARMED", nil},
}}

func (m MigState) String() string { return migStateNames.name(m) }

// Access mirrors enum ibv_access_flags.
type Access uint32

// Access flags, for MRs (ibv_reg_mr) and QPs (qp_access_flags).
const (
	AccessLocalWrite      Access = 1 << 0
	AccessRemoteWrite     Access = 1 << 1
	AccessRemoteRead      Access = 1 << 2
	AccessRemoteAtomic    Access = 1 << 3
	AccessMWBind          Access = 1 << 4
	AccessZeroBased       Access = 1 << 5
	AccessOnDemand        Access = 1 << 6
	AccessHugeTLB         Access = 1 << 7
	AccessRelaxedOrdering Access = 1 << 20
)

// AccessRemote is every remote access right.
const AccessRemote = AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic

var accessNames = flagTable[Access]{nameTable[Access]{kind: "access flag", prefix: "IBV_ACCESS_", entries: []nameEntry[Access]{
	{AccessLocalWrite, "LOCAL_WRITE", []string{"lw"}}, {AccessRemoteWrite, "REMOTE_WRITE", []string{"rw"}},
	{AccessRemoteRead, "REMOTE_READ", []string{"rr"}}, {AccessRemoteAtomic, "REMOTE_ATOMIC", []string{"ra", "atomic"}},
	{AccessMWBind, "MW_BIND", nil}, {AccessZeroBased, "ZERO_BASED", nil}, {AccessOnDemand, "ON_DEMAND", []string{"odp"}},
	{AccessHugeTLB, "HUGETLB", nil}, {AccessRelaxedOrdering, "RELAXED_ORDERING", nil},
}}}

func (a Access) String() string { return accessNames.format(a, false) }

// Short returns the flags as a comma list of short forms, e.g. "local_write,remote_write".
func (a Access) Short() string { return accessNames.format(a, true) }

// ParseAccess parses "local_write,remote_write", "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_READ", "3" or "0".
func ParseAccess(s string) (Access, error) { return accessNames.parseFlags(s) }

// AccessNames lists the short forms of every access flag.
func AccessNames() []string { return accessNames.shorts() }

// SendFlags mirrors enum ibv_send_flags.
type SendFlags uint32

// Send flags.
const (
	SendFence     SendFlags = 1 << 0
	SendSignaled  SendFlags = 1 << 1
	SendSolicited SendFlags = 1 << 2
	SendInline    SendFlags = 1 << 3
	SendIPCsum    SendFlags = 1 << 4
)

var sendFlagNames = flagTable[SendFlags]{nameTable[SendFlags]{kind: "send flag", prefix: "IBV_SEND_", entries: []nameEntry[SendFlags]{
	{SendFence, "FENCE", nil}, {SendSignaled, "SIGNALED", []string{"signalled"}}, {SendSolicited, "SOLICITED", nil},
	{SendInline, "INLINE", nil}, {SendIPCsum, "IP_CSUM", nil},
}}}

func (f SendFlags) String() string { return sendFlagNames.format(f, false) }

// Short returns the flags as a comma list of short forms.
func (f SendFlags) Short() string { return sendFlagNames.format(f, true) }

// ParseSendFlags parses "signaled,inline", IBV_SEND_SIGNALED or a number.
func ParseSendFlags(s string) (SendFlags, error) { return sendFlagNames.parseFlags(s) }

// SendFlagNames lists the short forms of every send flag.
func SendFlagNames() []string { return sendFlagNames.shorts() }

// WCFlags mirrors enum ibv_wc_flags.
type WCFlags uint32

// Work completion flags.
const (
	WCGRH      WCFlags = 1 << 0
	WCWithImm  WCFlags = 1 << 1
	WCIPCsumOK WCFlags = 1 << 2
	WCWithInv  WCFlags = 1 << 3
)

var wcFlagNames = flagTable[WCFlags]{nameTable[WCFlags]{kind: "completion flag", prefix: "IBV_WC_", entries: []nameEntry[WCFlags]{
	{WCGRH, "GRH", nil}, {WCWithImm, "WITH_IMM", nil}, {WCIPCsumOK, "IP_CSUM_OK", nil}, {WCWithInv, "WITH_INV", nil},
}}}

func (f WCFlags) String() string { return wcFlagNames.format(f, false) }

// Short returns the flags as a comma list of short forms.
func (f WCFlags) Short() string { return wcFlagNames.format(f, true) }

// QPAttrMask mirrors enum ibv_qp_attr_mask.
type QPAttrMask uint32

// QP attribute mask bits.
const (
	AttrState            QPAttrMask = 1 << 0
	AttrCurState         QPAttrMask = 1 << 1
	AttrEnSQDAsyncNotify QPAttrMask = 1 << 2
	AttrAccessFlags      QPAttrMask = 1 << 3
	AttrPKeyIndex        QPAttrMask = 1 << 4
	AttrPort             QPAttrMask = 1 << 5
	AttrQKey             QPAttrMask = 1 << 6
	AttrAV               QPAttrMask = 1 << 7
	AttrPathMTU          QPAttrMask = 1 << 8
	AttrTimeout          QPAttrMask = 1 << 9
	AttrRetryCnt         QPAttrMask = 1 << 10
	AttrRNRRetry         QPAttrMask = 1 << 11
	AttrRQPSN            QPAttrMask = 1 << 12
	AttrMaxQPRdAtomic    QPAttrMask = 1 << 13
	AttrAltPath          QPAttrMask = 1 << 14
	AttrMinRNRTimer      QPAttrMask = 1 << 15
	AttrSQPSN            QPAttrMask = 1 << 16
	AttrMaxDestRdAtomic  QPAttrMask = 1 << 17
	AttrPathMigState     QPAttrMask = 1 << 18
	AttrCap              QPAttrMask = 1 << 19
	AttrDestQPN          QPAttrMask = 1 << 20
	AttrRateLimit        QPAttrMask = 1 << 25
)

// AttrAll is every attribute bit that ibv_query_qp understands.
const AttrAll = AttrState | AttrCurState | AttrEnSQDAsyncNotify | AttrAccessFlags | AttrPKeyIndex | AttrPort |
	AttrQKey | AttrAV | AttrPathMTU | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrRQPSN | AttrMaxQPRdAtomic |
	AttrAltPath | AttrMinRNRTimer | AttrSQPSN | AttrMaxDestRdAtomic | AttrPathMigState | AttrCap | AttrDestQPN

var attrMaskNames = flagTable[QPAttrMask]{nameTable[QPAttrMask]{kind: "QP attribute", prefix: "IBV_QP_", entries: []nameEntry[QPAttrMask]{
	{AttrState, "STATE", []string{"qp_state"}}, {AttrCurState, "CUR_STATE", []string{"cur_qp_state"}},
	{AttrEnSQDAsyncNotify, "EN_SQD_ASYNC_NOTIFY", nil}, {AttrAccessFlags, "ACCESS_FLAGS", []string{"access", "qp_access_flags"}},
	{AttrPKeyIndex, "PKEY_INDEX", nil}, {AttrPort, "PORT", []string{"port_num"}}, {AttrQKey, "QKEY", nil},
	{AttrAV, "AV", []string{"ah_attr"}}, {AttrPathMTU, "PATH_MTU", nil}, {AttrTimeout, "TIMEOUT", nil},
	{AttrRetryCnt, "RETRY_CNT", nil}, {AttrRNRRetry, "RNR_RETRY", nil}, {AttrRQPSN, "RQ_PSN", nil},
	{AttrMaxQPRdAtomic, "MAX_QP_RD_ATOMIC", []string{"max_rd_atomic"}}, {AttrAltPath, "ALT_PATH", nil},
	{AttrMinRNRTimer, "MIN_RNR_TIMER", nil}, {AttrSQPSN, "SQ_PSN", nil}, {AttrMaxDestRdAtomic, "MAX_DEST_RD_ATOMIC", nil},
	{AttrPathMigState, "PATH_MIG_STATE", nil}, {AttrCap, "CAP", nil}, {AttrDestQPN, "DEST_QPN", []string{"dest_qp_num"}},
	{AttrRateLimit, "RATE_LIMIT", nil},
}}}

func (m QPAttrMask) String() string { return attrMaskNames.format(m, false) }

// Short returns the bits as a comma list of short forms, e.g. "state,pkey_index,port".
func (m QPAttrMask) Short() string { return attrMaskNames.format(m, true) }

// Bits lists the single bits set in m, lowest first.
func (m QPAttrMask) Bits() []QPAttrMask { return bitsOf(m) }

// ParseQPAttrMask parses "state,port", IBV_QP_STATE|IBV_QP_PORT or a number.
func ParseQPAttrMask(s string) (QPAttrMask, error) { return attrMaskNames.parseFlags(s) }

// QPAttrNames lists the short forms of every QP attribute mask bit.
func QPAttrNames() []string { return attrMaskNames.shorts() }

// SRQAttrMask mirrors enum ibv_srq_attr_mask.
type SRQAttrMask uint32

// SRQ attribute mask bits.
const (
	SRQAttrMaxWR SRQAttrMask = 1 << 0
	SRQAttrLimit SRQAttrMask = 1 << 1
)

var srqMaskNames = flagTable[SRQAttrMask]{nameTable[SRQAttrMask]{kind: "SRQ attribute", prefix: "IBV_SRQ_", entries: []nameEntry[SRQAttrMask]{
	{SRQAttrMaxWR, "MAX_WR", nil}, {SRQAttrLimit, "LIMIT", []string{"srq_limit"}},
}}}

func (m SRQAttrMask) String() string { return srqMaskNames.format(m, false) }

// ParseSRQAttrMask parses "max_wr,limit" or a number.
func ParseSRQAttrMask(s string) (SRQAttrMask, error) { return srqMaskNames.parseFlags(s) }
