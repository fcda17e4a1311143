package verbs

import "time"

// Provider is a backend: the simulator or libibverbs. It lists the devices
// that ibv_get_device_list would return.
type Provider interface {
	// Name is the backend's name: "sim" or "ibverbs".
	Name() string
	// Devices returns the RDMA devices (ibv_get_device_list).
	Devices() ([]Device, error)
	// Close releases the backend (ibv_free_device_list, stopping drivers).
	Close() error
}

// Device is an RDMA device as ibv_get_device_list lists it.
type Device interface {
	Name() string // ibv_get_device_name: "rxe0", "sim0"
	GUID() uint64 // ibv_get_device_guid, host order
	// Open opens the device (ibv_open_device).
	Open() (Context, error)
}

// Context is an open device (struct ibv_context).
type Context interface {
	Device() Device
	QueryDevice() (DeviceAttr, error)                    // ibv_query_device
	QueryPort(port uint8) (PortAttr, error)              // ibv_query_port
	QueryGID(port uint8, index int) (GID, error)         // ibv_query_gid
	QueryGIDType(port uint8, index int) (GIDType, error) // ibv_query_gid_type
	AllocPD() (PD, error)                                // ibv_alloc_pd
	CreateCompChannel() (CompChannel, error)             // ibv_create_comp_channel
	CreateCQ(attr CQInitAttr) (CQ, error)                // ibv_create_cq
	// GetAsyncEvent returns the next async event (ibv_get_async_event),
	// waiting up to wait for one; with none it returns an *Error with EAGAIN,
	// as a non-blocking async fd does.
	GetAsyncEvent(wait time.Duration) (AsyncEvent, error)
	// AckAsyncEvent acknowledges an event (ibv_ack_async_event).
	AckAsyncEvent(AsyncEvent)
	// Close closes the device (ibv_close_device).
	Close() error
}

// SelfDriven is implemented by a Context whose device moves packets and
// completions on its own (a kernel driver or a NIC). SelfDriven reports
// true when a CQ poll needs nothing else of the calling process, so that a
// program busy-polling it need not give the process's other goroutines a
// turn. A backend that runs inside the program (the simulator) does not
// implement it.
type SelfDriven interface {
	SelfDriven() bool
}

// PD is a protection domain (struct ibv_pd).
type PD interface {
	Context() Context
	// AllocMR allocates length bytes of memory owned by the backend and
	// registers them with the given access (memalign + ibv_reg_mr). The
	// memory is zeroed.
	AllocMR(length int, access Access) (MR, error)
	CreateQP(attr QPInitAttr) (QP, error)    // ibv_create_qp
	CreateSRQ(attr SRQInitAttr) (SRQ, error) // ibv_create_srq
	CreateAH(attr AHAttr) (AH, error)        // ibv_create_ah
	Dealloc() error                          // ibv_dealloc_pd
}

// MR is a registered memory region (struct ibv_mr).
type MR interface {
	PD() PD
	Addr() uint64 // the virtual address of the first byte (ibv_mr.addr)
	Length() int
	LKey() uint32
	RKey() uint32
	Access() Access
	// Bytes returns the registered memory itself. The slice aliases memory
	// the device may read and write at any time; it is valid until Dereg.
	Bytes() []byte
	Dereg() error // ibv_dereg_mr
}

// CompChannel is a completion event channel (struct ibv_comp_channel).
type CompChannel interface {
	Context() Context
	// GetEvent returns the CQ of the next completion event
	// (ibv_get_cq_event), waiting up to wait; with none it returns an *Error
	// with EAGAIN. Each event must be acknowledged with CQ.AckEvents.
	GetEvent(wait time.Duration) (CQ, error)
	Destroy() error // ibv_destroy_comp_channel
}

// CQ is a completion queue (struct ibv_cq).
type CQ interface {
	Context() Context
	CQE() int // the depth the device gave (ibv_cq.cqe), at least what was asked
	Channel() CompChannel
	// Poll moves up to len(wc) completions into wc and returns how many
	// (ibv_poll_cq).
	Poll(wc []WC) (int, error)
	// ReqNotify arms the CQ to raise one completion event on its channel
	// (ibv_req_notify_cq); with solicitedOnly, only for solicited or error
	// completions.
	ReqNotify(solicitedOnly bool) error
	AckEvents(n int)      // ibv_ack_cq_events
	Resize(cqe int) error // ibv_resize_cq
	Destroy() error       // ibv_destroy_cq
}

// QP is a queue pair (struct ibv_qp).
type QP interface {
	PD() PD
	Num() uint32 // qp_num
	Type() QPType
	// Modify changes the attributes named by mask (ibv_modify_qp).
	Modify(attr *QPAttr, mask QPAttrMask) error
	// Query returns the attributes named by mask and the creation
	// attributes (ibv_query_qp). Unrequested fields may be filled too.
	Query(mask QPAttrMask) (QPAttr, QPInitAttr, error)
	// PostSend posts work requests to the send queue in order
	// (ibv_post_send). It returns how many were posted; on error, wrs[n] is
	// the one refused (bad_wr) and none after it was posted.
	PostSend(wrs []SendWR) (n int, err error)
	// PostRecv posts receive work requests (ibv_post_recv), as PostSend.
	PostRecv(wrs []RecvWR) (n int, err error)
	AttachMcast(gid GID, lid uint16) error // ibv_attach_mcast
	DetachMcast(gid GID, lid uint16) error // ibv_detach_mcast
	Destroy() error                        // ibv_destroy_qp
}

// SRQ is a shared receive queue (struct ibv_srq).
type SRQ interface {
	PD() PD
	// PostRecv posts receive work requests (ibv_post_srq_recv), as QP.PostRecv.
	PostRecv(wrs []RecvWR) (n int, err error)
	Modify(attr SRQAttr, mask SRQAttrMask) error // ibv_modify_srq
	Query() (SRQAttr, error)                     // ibv_query_srq
	// Num returns the SRQ number an XRC sender names in remote_srqn
	// (ibv_get_srq_num); an SRQ that is not XRC has none (EOPNOTSUPP).
	Num() (uint32, error)
	Destroy() error // ibv_destroy_srq
}

// AH is an address handle (struct ibv_ah), used by UD sends.
type AH interface {
	PD() PD
	Attr() AHAttr   // what it was created with
	Destroy() error // ibv_destroy_ah
}
