package verbs

import "time"

// Optional capabilities. A Provider may implement any of these; callers find
// them with a type assertion:
//
//	if st, ok := provider.(verbs.Stepper); ok { st.SetDeliveryMode(verbs.DeliverStep) }
//
// The simulator implements all of them; the real backend only HostGroups (a
// host's IP groups are the kernel's; its wire and its queues are not
// visible), and the shell says so.

// XRCSwitch is a backend whose XRC can be turned on and off: the
// simulator, which by default has none, as kernel rxe has none, and with
// XRC on behaves as a NIC that has it (mlx5).
type XRCSwitch interface {
	// XRC reports whether XRC verbs work.
	XRC() bool
	// SetXRC turns XRC on or off. Turning it off while XRC domains are
	// open fails with EBUSY.
	SetXRC(on bool) error
}

// DeliveryMode says when the fabric moves packets.
type DeliveryMode int

const (
	// DeliverAuto runs the fabric after every verb until it is idle, so that
	// ordinary programs just work (the default).
	DeliverAuto DeliveryMode = iota
	// DeliverStep moves nothing until Step, Run or Advance is called.
	DeliverStep
)

func (m DeliveryMode) String() string {
	if m == DeliverStep {
		return "step"
	}
	return "auto"
}

// FabricEventKind says what one step of the fabric did.
type FabricEventKind int

// Fabric event kinds.
const (
	EventPacketDelivered FabricEventKind = iota // a packet reached its destination device
	EventPacketDropped                          // a packet was lost (fault, link MTU, no such GID)
	EventTimerFired                             // a retransmit or RNR timer expired
)

func (k FabricEventKind) String() string {
	switch k {
	case EventPacketDelivered:
		return "deliver"
	case EventPacketDropped:
		return "drop"
	case EventTimerFired:
		return "timer"
	}
	return "unknown"
}

// FabricEvent is one thing the fabric did in one step.
type FabricEvent struct {
	Time time.Duration // virtual time since the fabric started
	Kind FabricEventKind
	// Packet is set for packet events.
	Packet *PacketEvent
	// Text describes the event in one line.
	Text string
}

// Stepper is a fabric whose packet delivery and timers can be driven by hand,
// in virtual time.
//
// Virtual time ends at MaxVirtualTime: Advance goes no further, so that
// every timer's expiry still fits in a time.Duration.
type Stepper interface {
	DeliveryMode() DeliveryMode
	SetDeliveryMode(DeliveryMode)
	// Step delivers one packet or fires one due timer. It reports false when
	// nothing was pending.
	Step() (FabricEvent, bool)
	// Run steps until nothing is pending now (timers in the future stay
	// armed) and returns what happened.
	Run() []FabricEvent
	// Advance moves virtual time forward by d, firing the timers that fall
	// due and delivering what they cause, and returns what happened.
	Advance(d time.Duration) []FabricEvent
	// Now is the current virtual time.
	Now() time.Duration
	// Pending counts packets in flight and timers armed.
	Pending() (packets, timers int)
}

// EventCounter is implemented by a CQ that counts the completion events
// read from its channel (ibv_get_cq_event) and not yet acknowledged
// (ibv_ack_cq_events): ibv_destroy_cq waits until they all are, and
// acknowledging more than were read makes it wait for ever.
type EventCounter interface {
	UnackedEvents() int
}

// MaxVirtualTime is where a Stepper's virtual time ends: 2^62 ns, about
// 146 years, half of what a time.Duration holds.
const MaxVirtualTime = time.Duration(1 << 62)

// PacketEvent describes one RoCEv2 packet seen on the fabric.
type PacketEvent struct {
	Seq      uint64        // 1, 2, 3 ... in the order packets were sent
	Time     time.Duration // virtual time
	From, To string        // device names
	// Bytes is the packet as RoCEv2 puts it in a UDP datagram (BTH through
	// ICRC). It is valid only during the observer's call; copy to keep.
	Bytes []byte
	// Summary is a one-line description (opcode, QPN, PSN, flags, length).
	Summary string
	// Verdict says what happened to it: "sent", "delivered", "dropped:
	// why", "refused: why", or, for a packet delivered and then dropped by
	// the receiving QP without a trace on the wire (UC and UD drop silently),
	// "delivered, discarded by the UC responder: why" — a second event
	// with the same Seq.
	Verdict string
}

// PacketObserver reports every packet the fabric sends, delivers or drops.
type PacketObserver interface {
	// ObservePackets calls fn for every packet event until cancel is called.
	ObservePackets(fn func(PacketEvent)) (cancel func())
}

// FaultAction is what a fault rule does to a matching packet.
type FaultAction int

// Fault actions.
const (
	FaultDrop      FaultAction = iota // lose the packet
	FaultDuplicate                    // deliver it twice
	FaultReorder                      // hold it back behind the next packet
	FaultDelay                        // deliver it Delay later
	FaultCorrupt                      // flip a payload bit (the ICRC check then drops it)
	FaultCut                          // the link is down: drop everything that matches
)

var faultActionNames = []string{"drop", "duplicate", "reorder", "delay", "corrupt", "cut"}

func (a FaultAction) String() string {
	if int(a) < len(faultActionNames) {
		return faultActionNames[a]
	}
	return "unknown"
}

// ParseFaultAction parses drop, duplicate, reorder, delay, corrupt or cut.
func ParseFaultAction(s string) (FaultAction, error) {
	for i, n := range faultActionNames {
		if s == n || (n == "duplicate" && s == "dup") {
			return FaultAction(i), nil
		}
	}
	return 0, errorf("unknown fault action %q (one of: drop, duplicate, reorder, delay, corrupt, cut)", s)
}

// FaultActionNames lists the fault actions.
func FaultActionNames() []string { return append([]string(nil), faultActionNames...) }

// FaultRule selects packets and says what to do with them. Zero-valued
// matchers match everything.
type FaultRule struct {
	ID     int // assigned by AddFault
	Action FaultAction
	// Opcode matches a packet opcode by its wire name ("RC SEND_ONLY",
	// "RDMA_WRITE_FIRST", "ACKNOWLEDGE"): a packet matches when its full
	// name contains this text, case-insensitively.
	Opcode string
	// PSN matches one PSN when HasPSN is set.
	PSN    uint32
	HasPSN bool
	// From and To match the sending and receiving device names.
	From, To string
	// Nth, when > 0, applies the rule to the nth matching packet only.
	Nth int
	// Count, when > 0, retires the rule after it has acted Count times.
	Count int
	// Probability, when in (0, 1), applies the rule to each matching packet
	// with that probability, drawn from the fabric's seeded source.
	Probability float64
	// Delay is how long FaultDelay holds a packet.
	Delay time.Duration
	// Hits counts how many times the rule acted (filled by Faults).
	Hits int
}

// FaultInjector adds and removes fault rules on the fabric.
type FaultInjector interface {
	AddFault(FaultRule) (id int, err error)
	RemoveFault(id int) error
	Faults() []FaultRule
	ClearFaults()
}

// WQEInfo describes one outstanding work queue entry.
type WQEInfo struct {
	WRID   uint64
	Opcode string // WROpcode short name, or "recv"
	Length uint32 // total bytes of its SGEs
	// State is where it is: "posted", "sending", "sent" (awaiting ACK),
	// "done" (completed, not yet retired), "flushing".
	State string
	// FirstPSN and LastPSN are the PSNs its packets use, once sent.
	FirstPSN, LastPSN uint32
}

// TimerInfo describes one armed timer.
type TimerInfo struct {
	Name     string        // "retransmit", "rnr"
	Deadline time.Duration // virtual time at which it fires
}

// QPInternals is what a QP holds that libibverbs does not show.
type QPInternals struct {
	State            QPState
	SQ, RQ           []WQEInfo
	SQDepth, RQDepth int
	// Requester: the next PSN to send and the oldest unacknowledged one.
	NextPSN, UnackedPSN uint32
	// Responder: the PSN expected next, and the message sequence number.
	ExpectedPSN, MSN uint32
	RetryLeft        int
	RNRRetryLeft     int
	// Outstanding READ/atomic requests (at most max_rd_atomic).
	InflightRdAtomic int
	Timers           []TimerInfo
}

// CQInternals is what a CQ holds that libibverbs does not show.
type CQInternals struct {
	Depth, Used   int
	Armed         bool
	SolicitedOnly bool
	Overflowed    bool
	// Entries are the completions the CQ holds, oldest first: what the
	// next polls will return.
	Entries []WC
	// Unacked counts the completion events read from the CQ's channel and
	// not yet acknowledged (ibv_ack_cq_events); destroying the CQ waits for them.
	Unacked int
	// Events counts the completion events the CQ raised that wait in its
	// channel, not yet read (ibv_get_cq_event).
	Events int
}

// SRQInternals is what an SRQ holds that libibverbs does not show.
type SRQInternals struct {
	Depth, Used int
	Limit       int
	Armed       bool
	Queue       []WQEInfo
}

// Inspector shows the internals of objects created by the same Provider.
type Inspector interface {
	InspectQP(QP) (QPInternals, error)
	InspectCQ(CQ) (CQInternals, error)
	InspectSRQ(SRQ) (SRQInternals, error)
}

// RealTimeClock is implemented by a fabric whose clock can follow the wall
// clock, as the simulator's does on its UDP link to other processes: there,
// a peer's packets arrive in real time, so an empty fabric does not mean that
// no completion can come. A caller that waits for completions should then
// wait in real time.
type RealTimeClock interface {
	RealTime() bool
}

// LinkParams describe the Ethernet link that attaches one device of a
// simulated fabric to its switch. Zero fields mean the fabric's defaults.
type LinkParams struct {
	// Latency is the one-way propagation delay between the device and the
	// switch; a packet from one device to another crosses two such cables.
	Latency time.Duration
	// Bandwidth is the link rate in bits per second.
	Bandwidth int64
	// MTU is the netdev MTU: the largest IP datagram the link carries. It
	// sets the port's active MTU, as rxe derives it from its netdev.
	MTU int
}

// LinkConfigurer is a fabric whose links can be read and changed, by device
// name. Real hardware does not offer it: its link is a cable and a switch
// (and, for rxe, the netdev, whose MTU `ip link set dev IF mtu N` changes).
type LinkConfigurer interface {
	LinkParams(device string) (LinkParams, error)
	SetLinkParams(device string, p LinkParams) error
}

// HostGroups is a backend that can make the host of one of its devices a
// member of an IP multicast group on the device's netdev: what a socket's
// IP_ADD_MEMBERSHIP (an IPv4-mapped GID, ::ffff:239.1.1.1) or
// IPV6_JOIN_GROUP (ff0e::1234) on that interface does. On RoCE v2 that is
// the half of multicast ibv_attach_mcast does not do: attaching tells the
// device which QPs get a copy of a group's datagrams, and the host's IP
// stack hands the device a datagram to a group only while the host is a
// member of it (every interface is in 224.0.0.1, ff01::1 and ff02::1 from
// the start; rdma_join_multicast joins an IPv4 group for its caller).
//
// Joins are counted, as the kernel counts a group's users: each
// JoinIPGroup needs its LeaveIPGroup, and closing the Provider leaves every
// group it joined. Errors are *Error values whose Op is the socket call
// ("setsockopt(IP_ADD_MEMBERSHIP)"), with the errno the kernel gives.
type HostGroups interface {
	// JoinIPGroup joins group gid on the named device's netdev.
	JoinIPGroup(device string, gid GID) error
	// LeaveIPGroup undoes one JoinIPGroup of gid on the device.
	LeaveIPGroup(device string, gid GID) error
	// IPGroups lists the groups JoinIPGroup joined on the device and
	// LeaveIPGroup has not left, once per join, in increasing order.
	IPGroups(device string) ([]GID, error)
}

// GroupSockopt names the socket option that joins (join) or leaves group g:
// IP_ADD_MEMBERSHIP or IP_DROP_MEMBERSHIP for an IPv4-mapped GID,
// IPV6_JOIN_GROUP or IPV6_LEAVE_GROUP for an IPv6 one.
func GroupSockopt(g GID, join bool) string {
	_, v4 := g.IPv4()
	switch {
	case v4 && join:
		return "IP_ADD_MEMBERSHIP"
	case v4:
		return "IP_DROP_MEMBERSHIP"
	case join:
		return "IPV6_JOIN_GROUP"
	}
	return "IPV6_LEAVE_GROUP"
}

// GroupAddr prints group g as the IP stack writes it: 239.1.1.1 for an
// IPv4-mapped GID, ff0e::1234 for an IPv6 one.
func GroupAddr(g GID) string {
	if a, ok := g.IPv4(); ok {
		return a.String()
	}
	return g.String()
}
