package verbs

// The extended verbs that XRC (eXtended Reliable Connection) needs. In
// libibverbs they are ops of struct verbs_context that a provider may
// leave out; rxe's provider does, so that ibv_open_xrcd on rxe fails with
// EOPNOTSUPP (libibverbs dummy_ops.c).

// ExtendedContext is implemented by a Context that offers the extended
// verbs. A Context without it behaves as a provider whose verbs_context
// ops are libibverbs' dummies: every one of them fails with EOPNOTSUPP.
type ExtendedContext interface {
	// OpenXRCD opens or creates an XRC domain (ibv_open_xrcd).
	OpenXRCD(attr XRCDInitAttr) (XRCD, error)
	// CreateSRQEx creates an SRQ of any type (ibv_create_srq_ex); an XRC
	// SRQ needs a PD, an XRCD and a CQ.
	CreateSRQEx(attr SRQInitAttrEx) (SRQ, error)
	// CreateQPEx creates a QP (ibv_create_qp_ex): every type with a PD,
	// and an XRC_RECV QP in an XRCD, with no PD, CQs or queues.
	CreateQPEx(attr QPInitAttrEx) (QP, error)
	// OpenQP opens another handle to an existing XRC_RECV QP of an XRC
	// domain, found by its number (ibv_open_qp).
	OpenQP(attr QPOpenAttr) (QP, error)
}

// XRCD is an XRC domain (struct ibv_xrcd): the set of XRC SRQs and
// XRC_RECV QPs that may serve each other.
type XRCD interface {
	Context() Context
	Close() error // ibv_close_xrcd
}

// XRCDOFlags are the open(2) flags of struct ibv_xrcd_init_attr's oflags.
type XRCDOFlags uint32

// The flags ibv_open_xrcd reads, with open(2)'s values on Linux.
const (
	XRCDCreate XRCDOFlags = 0o100 // O_CREAT: create the domain if the file has none
	XRCDExcl   XRCDOFlags = 0o200 // O_EXCL: with O_CREAT, fail with EEXIST if it has one
)

// XRCDInitAttr mirrors struct ibv_xrcd_init_attr. libibverbs names the
// domain by a file descriptor; here it is the file's path, which the real
// backend opens as rdma-core's programs do (O_RDONLY|O_CREAT). Path "" is
// fd -1: a new domain no other open can find, which needs XRCDCreate.
type XRCDInitAttr struct {
	Path   string
	OFlags XRCDOFlags
}

// SRQType mirrors enum ibv_srq_type.
type SRQType uint32

// SRQ types.
const (
	SRQTypeBasic SRQType = 0 // IBV_SRQT_BASIC: ibv_create_srq's kind
	SRQTypeXRC   SRQType = 1 // IBV_SRQT_XRC: in an XRC domain, with a CQ of its own
	SRQTypeTM    SRQType = 2 // IBV_SRQT_TM: tag matching (no backend here has it)
)

var srqTypeNames = nameTable[SRQType]{kind: "SRQ type", prefix: "IBV_SRQT_", entries: []nameEntry[SRQType]{
	{SRQTypeBasic, "BASIC", nil}, {SRQTypeXRC, "XRC", nil}, {SRQTypeTM, "TM", nil},
}}

func (t SRQType) String() string { return srqTypeNames.name(t) }

// Short returns the short form, e.g. "xrc".
func (t SRQType) Short() string { return srqTypeNames.short(t) }

// ParseSRQType parses IBV_SRQT_XRC, XRC, xrc or 1.
func ParseSRQType(s string) (SRQType, error) { return srqTypeNames.parse(s) }

// SRQInitAttrEx mirrors struct ibv_srq_init_attr_ex; a nil field is a
// comp_mask bit left clear.
type SRQInitAttrEx struct {
	Attr    SRQAttr
	Context any // srq_context
	Type    SRQType
	PD      PD
	XRCD    XRCD // XRC only
	CQ      CQ   // XRC only: where the completions of its receives go
}

// QPInitAttrEx mirrors struct ibv_qp_init_attr_ex. PD is needed by every
// type but XRC_RECV, which needs XRCD instead and has no CQs, no SRQ and
// no queues.
type QPInitAttrEx struct {
	QPInitAttr
	PD   PD
	XRCD XRCD
}

// QPOpenAttr mirrors struct ibv_qp_open_attr.
type QPOpenAttr struct {
	QPNum   uint32
	XRCD    XRCD
	Type    QPType // XRC_RECV, the only type that can be opened
	Context any    // qp_context
}

// ExtendedSRQ is an SRQ that says how ibv_create_srq_ex made it: its type
// and, for an XRC SRQ, its domain and the CQ its receives complete on
// (nil for a basic SRQ).
type ExtendedSRQ interface {
	Type() SRQType
	XRCD() XRCD
	CQ() CQ
}

// DomainQP is a handle to an XRC_RECV QP, which belongs to an XRC domain
// instead of a PD.
type DomainQP interface {
	XRCD() XRCD
}
