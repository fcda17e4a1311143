package verbs

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
)

// GID is a 128-bit global identifier (union ibv_gid). On RoCE it is an IPv6
// address; an IPv4 address is held in its IPv4-mapped form (::ffff:a.b.c.d).
type GID [16]byte

// String prints the GID as inet_ntop(AF_INET6) does, as rc_pingpong prints it:
// fe80::1, ::ffff:192.168.0.1, :: for zero.
func (g GID) String() string { return netip.AddrFrom16(g).String() }

// IsZero reports whether g is all zeros (rc_pingpong's "no GID").
func (g GID) IsZero() bool { return g == GID{} }

// InterfaceID returns the low 64 bits (ibv_gid.global.interface_id), which
// rc_pingpong tests to decide whether to build a GRH.
func (g GID) InterfaceID() uint64 {
	var v uint64
	for _, b := range g[8:] {
		v = v<<8 | uint64(b)
	}
	return v
}

// IPv4 returns the IPv4 address of an IPv4-mapped GID.
func (g GID) IPv4() (netip.Addr, bool) {
	a := netip.AddrFrom16(g)
	if a.Is4In6() {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

// IsMulticast reports whether g is a multicast GID, as
// rdma_is_multicast_addr reads one: ff00::/8, or an IPv4-mapped
// 224.0.0.0/4 address.
func (g GID) IsMulticast() bool {
	if a, ok := g.IPv4(); ok {
		return a.IsMulticast()
	}
	return g[0] == 0xff
}

// Wire returns the 32 lowercase hex characters rdma-core's pingpong exchange
// uses (gid_to_wire_gid): the 16 bytes in network order.
func (g GID) Wire() string { return hex.EncodeToString(g[:]) }

// GIDFromIPv4 returns the IPv4-mapped GID of addr.
func GIDFromIPv4(addr netip.Addr) GID { return GID(netip.AddrFrom4(addr.As4()).As16()) }

// ParseGID accepts an IPv6 address (fe80::1), an IPv4 address (taken as its
// IPv4-mapped GID), or 32 hex characters (the pingpong wire form).
func ParseGID(s string) (GID, error) {
	s = strings.TrimSpace(s)
	if len(s) == 32 && !strings.Contains(s, ":") {
		b, err := hex.DecodeString(s)
		if err == nil {
			return GID(b), nil
		}
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return GID{}, fmt.Errorf("bad GID %q: want an IPv6 address (fe80::1), an IPv4 address (192.168.1.1) or 32 hex digits", s)
	}
	return GID(a.As16()), nil
}

// DeviceAttr mirrors struct ibv_device_attr (the fields a teacher needs and
// every limit a backend enforces).
type DeviceAttr struct {
	FWVer              string
	NodeGUID           uint64
	SysImageGUID       uint64
	MaxMRSize          uint64
	PageSizeCap        uint64
	VendorID           uint32
	VendorPartID       uint32
	HWVer              uint32
	MaxQP              int
	MaxQPWR            int
	DeviceCapFlags     uint32
	MaxSGE             int
	MaxSGERd           int
	MaxCQ              int
	MaxCQE             int
	MaxMR              int
	MaxPD              int
	MaxQPRdAtom        int
	MaxEECRdAtom       int
	MaxResRdAtom       int
	MaxQPInitRdAtom    int
	MaxEECInitRdAtom   int
	AtomicCap          uint32
	MaxEE              int
	MaxRDD             int
	MaxMW              int
	MaxRawIPv6QP       int
	MaxRawEthyQP       int
	MaxMcastGrp        int
	MaxMcastQPAttach   int
	MaxTotalMcastQPAtt int
	MaxAH              int
	MaxFMR             int
	MaxMapPerFMR       int
	MaxSRQ             int
	MaxSRQWR           int
	MaxSRQSGE          int
	MaxPKeys           int
	LocalCAAckDelay    uint8
	PhysPortCnt        uint8
	MaxInlineData      int // rxe reports this through ibv_query_device_ex; kept here for teaching
}

// PortAttr mirrors struct ibv_port_attr.
type PortAttr struct {
	State         PortState
	MaxMTU        MTU
	ActiveMTU     MTU
	GIDTblLen     int
	PortCapFlags  uint32
	MaxMsgSz      uint32
	BadPKeyCntr   uint32
	QKeyViolCntr  uint32
	PKeyTblLen    uint16
	LID           uint16
	SMLID         uint16
	LMC           uint8
	MaxVLNum      uint8
	SMSL          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8
	ActiveSpeed   uint8
	PhysState     uint8
	LinkLayer     LinkLayer
	Flags         uint8 // IBV_QPF_GRH_REQUIRED = 1
}

// PortFlagGRHRequired is IBV_QPF_GRH_REQUIRED in PortAttr.Flags: address
// vectors on this port must carry a GRH (is_global = 1), as on every RoCE port.
const PortFlagGRHRequired = 1

// GIDEntry is one row of a port's GID table (ibv_query_gid_ex).
type GIDEntry struct {
	Index int
	GID   GID
	Type  GIDType
	// Netdev names the network device the GID belongs to, where known.
	Netdev string
}

// GlobalRoute mirrors struct ibv_global_route (the GRH of an address vector).
type GlobalRoute struct {
	DGID         GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8
}

// AHAttr mirrors struct ibv_ah_attr.
type AHAttr struct {
	GRH         GlobalRoute
	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	StaticRate  uint8
	IsGlobal    bool
	PortNum     uint8
}

// RoutedHopLimit reports whether the kernel sets the address vector's hop
// limit from the route, whatever the program gave, for a QP's path as for
// an AH: a global, unicast RoCE v2 destination (ib_resolve_unicast_gid_dmac).
// A multicast destination keeps the hop limit given.
func (a AHAttr) RoutedHopLimit() bool {
	return a.IsGlobal && !a.GRH.DGID.IsZero() && !a.GRH.DGID.IsMulticast()
}

// QPCap mirrors struct ibv_qp_cap.
type QPCap struct {
	MaxSendWR     int
	MaxRecvWR     int
	MaxSendSGE    int
	MaxRecvSGE    int
	MaxInlineData int
}

// QPInitAttr mirrors struct ibv_qp_init_attr.
type QPInitAttr struct {
	Type     QPType
	SendCQ   CQ
	RecvCQ   CQ
	SRQ      SRQ // nil for none
	Cap      QPCap
	SQSigAll bool
	// Context is an opaque value the application attaches (qp_context).
	Context any
}

// QPAttr mirrors struct ibv_qp_attr. Which fields matter is said by a QPAttrMask.
type QPAttr struct {
	State            QPState
	CurState         QPState
	PathMTU          MTU
	PathMigState     MigState
	QKey             uint32
	RQPSN            uint32
	SQPSN            uint32
	DestQPN          uint32
	AccessFlags      Access
	Cap              QPCap
	AH               AHAttr
	AltAH            AHAttr
	PKeyIndex        uint16
	AltPKeyIndex     uint16
	EnSQDAsyncNotify bool
	SQDraining       bool
	MaxRdAtomic      uint8
	MaxDestRdAtomic  uint8
	MinRNRTimer      uint8
	PortNum          uint8
	Timeout          uint8
	RetryCnt         uint8
	RNRRetry         uint8
	AltPortNum       uint8
	AltTimeout       uint8
	RateLimit        uint32
}

// CQInitAttr holds ibv_create_cq's arguments.
type CQInitAttr struct {
	CQE        int
	Channel    CompChannel // nil for none
	CompVector int
	// Context is an opaque value the application attaches (cq_context).
	Context any
}

// SRQAttr mirrors struct ibv_srq_attr.
type SRQAttr struct {
	MaxWR    int
	MaxSGE   int
	SRQLimit int
}

// SRQInitAttr mirrors struct ibv_srq_init_attr.
type SRQInitAttr struct {
	Attr SRQAttr
	// Context is an opaque value the application attaches (srq_context).
	Context any
}

// SGE mirrors struct ibv_sge: a scatter/gather element in registered memory.
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// SendWR mirrors struct ibv_send_wr. Next is replaced by the slice passed to
// QP.PostSend. Fields that belong to one opcode or QP type (RemoteAddr and
// RKey for RDMA and atomics, CompareAdd and Swap for atomics,
// AH/RemoteQPN/RemoteQKey for UD, RemoteSRQN for XRC_SEND) are ignored by
// the others.
type SendWR struct {
	WRID       uint64
	SGList     []SGE
	Opcode     WROpcode
	Flags      SendFlags
	Imm        uint32 // host order; the wire carries it big-endian (ibv_send_wr.imm_data is __be32)
	InvRKey    uint32 // SEND_WITH_INV, LOCAL_INV
	RemoteAddr uint64
	RKey       uint32
	CompareAdd uint64
	Swap       uint64
	AH         AH
	RemoteQPN  uint32
	RemoteQKey uint32
	RemoteSRQN uint32 // XRC_SEND: the target's XRC SRQ (qp_type.xrc.remote_srqn)
}

// RecvWR mirrors struct ibv_recv_wr.
type RecvWR struct {
	WRID   uint64
	SGList []SGE
}

// WC mirrors struct ibv_wc.
type WC struct {
	WRID         uint64
	Status       WCStatus
	Opcode       WCOpcode
	VendorErr    uint32
	ByteLen      uint32
	Imm          uint32 // host order, valid when WCWithImm is set
	QPNum        uint32
	SrcQP        uint32
	Flags        WCFlags
	PKeyIndex    uint16
	SLID         uint16
	SL           uint8
	DLIDPathBits uint8
}

// AsyncEvent mirrors struct ibv_async_event. Exactly one of the element
// fields is set, according to Type.
type AsyncEvent struct {
	Type    EventType
	QP      QP
	CQ      CQ
	SRQ     SRQ
	PortNum uint8
}

// String prints the event as ibv_asyncwatch does.
func (e AsyncEvent) String() string {
	s := fmt.Sprintf("event_type %s (%d)", e.Type.Str(), uint32(e.Type))
	switch {
	case e.QP != nil:
		s += fmt.Sprintf(", qp_num 0x%06x", e.QP.Num())
	case e.SRQ != nil:
		s += ", srq"
	case e.CQ != nil:
		s += ", cq"
	default:
		s += fmt.Sprintf(", port %d", e.PortNum)
	}
	return s
}
