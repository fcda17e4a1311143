package sim

import (
	"sync"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// api.go is the simulator's API boundary and its only lock. Every exported
// method that reads or changes the fabric takes the fabric's mutex here and
// calls its unexported twin, which does the work; everything the twin calls
// (the engines, the network, the rules) runs under that one lock, on the
// caller's goroutine, and never locks. The UDP link's goroutines
// (udplink.go) take the same lock to hand the fabric what they read.

// guard is the fabric's lock, embedded in Fabric, with what the API
// boundary is handed from outside the fabric to use under it.
type guard struct {
	mu fabricMutex
	// processMem reads the program's own memory (SetProcessMemory), or nil.
	processMem func(addr uint64, n int) []byte
	// eventNotify is told of every event queued (SetEventNotify), or nil.
	eventNotify func(ch verbs.CompChannel, ctx verbs.Context)
}

// fabricMutex is the fabric's lock. Before it is released, the carrier
// sends what it batched while the lock was held (the UDP link's
// datagrams: udpLink.flushLocked), so that nothing waits for a later
// verb.
type fabricMutex struct {
	sync.Mutex
	flush func()
}

// Unlock flushes and releases the lock.
func (m *fabricMutex) Unlock() {
	if m.flush != nil {
		m.flush()
	}
	m.Mutex.Unlock()
}

// Open is open under the fabric's lock.
func (d *device) Open() (verbs.Context, error) {
	f := d.f
	f.mu.Lock()
	defer f.mu.Unlock()
	return d.open()
}

// SetPortState brings the port of device i down (verbs.PortDown) or up
// (verbs.PortActive), as rxe does when its netdev goes down or up
// (rxe_port_down / rxe_port_up): every open context gets
// IBV_EVENT_PORT_ERR or IBV_EVENT_PORT_ACTIVE, and while the port is down
// nothing is sent or received.
func (f *Fabric) SetPortState(i int, s verbs.PortState) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setPortState(i, s)
}

// QueryDevice is queryDevice under the fabric's lock.
func (c *context) QueryDevice() (verbs.DeviceAttr, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.queryDevice()
}

// QueryPort is queryPort under the fabric's lock.
func (c *context) QueryPort(port uint8) (verbs.PortAttr, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.queryPort(port)
}

// QueryGID is queryGID under the fabric's lock.
func (c *context) QueryGID(port uint8, index int) (verbs.GID, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.queryGID(port, index)
}

// QueryGIDType is queryGIDType under the fabric's lock.
func (c *context) QueryGIDType(port uint8, index int) (verbs.GIDType, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.queryGIDType(port, index)
}

// AllocPD is allocPD under the fabric's lock.
func (c *context) AllocPD() (verbs.PD, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.allocPD()
}

// CreateCompChannel is createCompChannel under the fabric's lock.
func (c *context) CreateCompChannel() (verbs.CompChannel, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.createCompChannel()
}

// GetAsyncEvent is getAsyncEvent under the fabric's lock.
func (c *context) GetAsyncEvent(wait time.Duration) (verbs.AsyncEvent, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.getAsyncEvent(wait)
}

// AckAsyncEvent is ackAsyncEvent under the fabric's lock.
func (c *context) AckAsyncEvent(e verbs.AsyncEvent) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	c.ackAsyncEvent(e)
}

// Close is close under the fabric's lock.
func (c *context) Close() error {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.close()
}

// DeliveryMode implements verbs.Stepper.
func (f *Fabric) DeliveryMode() verbs.DeliveryMode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mode
}

// SetDeliveryMode implements verbs.Stepper. Switching to automatic mode
// runs the fabric until idle.
func (f *Fabric) SetDeliveryMode(m verbs.DeliveryMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setDeliveryMode(m)
}

// Step implements verbs.Stepper: deliver one packet or fire one due timer.
func (f *Fabric) Step() (verbs.FabricEvent, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.step()
}

// Run implements verbs.Stepper.
func (f *Fabric) Run() []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.run()
}

// Advance implements verbs.Stepper: virtual time moves forward by d; the
// packets and timers that fall due are delivered and fired in order, with
// what they cause.
func (f *Fabric) Advance(d time.Duration) []verbs.FabricEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.advance(d)
}

// Now implements verbs.Stepper.
func (f *Fabric) Now() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock.now()
}

// Pending implements verbs.Stepper: packets in flight (held ones
// included) and timers armed.
func (f *Fabric) Pending() (packets, timers int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.net.pkts.len() + len(f.net.held), len(f.net.timers)
}

// Devices implements verbs.Provider (ibv_get_device_list).
func (f *Fabric) Devices() ([]verbs.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.devices()
}

// Device returns device i (sim<i>), for callers that hold a *Fabric.
func (f *Fabric) Device(i int) (verbs.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.device(i)
}

// AddFault implements verbs.FaultInjector.
func (f *Fabric) AddFault(r verbs.FaultRule) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addFault(r)
}

// RemoveFault implements verbs.FaultInjector.
func (f *Fabric) RemoveFault(id int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.removeFault(id)
}

// Faults implements verbs.FaultInjector: the rules in force, with how many
// times each acted.
func (f *Fabric) Faults() []verbs.FaultRule {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]verbs.FaultRule(nil), f.net.faults...)
}

// ClearFaults implements verbs.FaultInjector.
func (f *Fabric) ClearFaults() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clearFaults()
}

// InspectQP implements verbs.Inspector: the QP's work queues and rxe's
// engine state behind them.
//
// Send WQEs are "posted" (not started), "sending" (some packets out),
// "sent" (every packet out, waiting for the ACK), "done" (UC/UD, or a UD
// send over the MTU: waiting for the completer) or "flushing" (failed, to
// complete in error). Receive WQEs are "posted", and the one the responder
// is filling is "receiving". FirstPSN and LastPSN are set once a WQE's
// first packet has gone out.
func (f *Fabric) InspectQP(x verbs.QP) (verbs.QPInternals, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inspectQP(x)
}

// InspectCQ implements verbs.Inspector.
func (f *Fabric) InspectCQ(x verbs.CQ) (verbs.CQInternals, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inspectCQ(x)
}

// InspectSRQ implements verbs.Inspector.
func (f *Fabric) InspectSRQ(x verbs.SRQ) (verbs.SRQInternals, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inspectSRQ(x)
}

// SetLink configures the link of device i (zero fields take the defaults).
// A new MTU changes the port's active MTU at once, as rxe does on
// NETDEV_CHANGEMTU (rxe_net.c rxe_notify, rxe_set_mtu); QPs keep the
// path MTU they were given.
func (f *Fabric) SetLink(i int, l LinkConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setLink(i, l)
}

// Link returns the link configuration of device i.
func (f *Fabric) Link(i int) (LinkConfig, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.linkConfig(i)
}

// LinkStats returns the counters of device i's link (loopback traffic is
// not counted: it never reaches the link).
func (f *Fabric) LinkStats(i int) (LinkStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.linkStats(i)
}

// AttachMcast is attachMcast under the fabric's lock.
func (q *qp) AttachMcast(gid verbs.GID, lid uint16) error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.attachMcast(gid, lid)
}

// DetachMcast is detachMcast under the fabric's lock.
func (q *qp) DetachMcast(gid verbs.GID, lid uint16) error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.detachMcast(gid, lid)
}

// JoinHostGroup makes the host of device i a member of multicast group g
// on the device's netdev, as a socket bound to that interface does with
// IP_ADD_MEMBERSHIP (g IPv4-mapped, ::ffff:239.1.1.1) or IPV6_JOIN_GROUP
// (ip_mc_inc_group, ipv6_dev_mc_inc), and as rdma_join_multicast does for
// an IPv4 group (cma_igmp_send). From then on datagrams to g pass the
// host's IP input and reach the QPs attached to g on the device. Joins are
// counted, as the kernel counts a group's users: each needs its
// LeaveHostGroup.
func (f *Fabric) JoinHostGroup(i int, g verbs.GID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.joinHostGroup(i, g)
}

// LeaveHostGroup undoes one JoinHostGroup. A group the host is in without
// a join (224.0.0.1, ff02::1 ...) cannot be left this way, as a socket
// cannot leave what it did not join: EADDRNOTAVAIL (ip_mc_leave_group,
// ipv6_sock_mc_drop).
func (f *Fabric) LeaveHostGroup(i int, g verbs.GID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaveHostGroup(i, g)
}

// Dealloc is dealloc under the fabric's lock.
func (p *pd) Dealloc() error {
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.dealloc()
}

// AllocMR is allocMR under the fabric's lock.
func (p *pd) AllocMR(length int, access verbs.Access) (verbs.MR, error) {
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.allocMR(length, access)
}

// RegUserMR registers memory the caller owns as an MR of pd, a PD of this
// simulator (any other is EINVAL), at virtual address iova: ibv_reg_mr's
// address, or ibv_reg_mr_iova's iova. It refuses what AllocMR refuses,
// with the same errors, except AllocMR's limits on the simulator's own
// memory, which buf is not. The MR's Bytes is buf itself, which the
// device reads and writes in place until Dereg; after that the simulator
// keeps no reference to buf. buf may be C memory (unsafe.Slice); the
// caller keeps it valid until Dereg.
func RegUserMR(pd verbs.PD, buf []byte, iova uint64, access verbs.Access) (verbs.MR, error) {
	p, err := simPD(pd)
	if err != nil {
		return nil, err
	}
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.regUserMR(buf, iova, access)
}

// SetProcessMemory gives the fabric the program's memory: read returns
// the n bytes at addr, or nil when they are not the program's. With it,
// inline sends copy their SGEs' bytes through read, as rdma-core's
// provider memcpy's from the SGE addresses, rather than from the MRs of
// the QP's context; nil restores that. read runs under the fabric's lock
// and must not call back into the simulator.
func (f *Fabric) SetProcessMemory(read func(addr uint64, n int) []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.processMem = read
}

// SetEventNotify has fn told of every event the fabric queues, once per
// event, as it is queued: a completion event on channel ch (ctx nil), or
// an async event of context ctx (ch nil). A program that waits for events
// on file descriptors (libibverbs' completion channels and async fd) gets
// them this way without a goroutine waiting in the fabric. fn runs under
// the fabric's lock and must not call back into the simulator; nil turns
// it off.
func (f *Fabric) SetEventNotify(fn func(ch verbs.CompChannel, ctx verbs.Context)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eventNotify = fn
}

// SetUDPQuiet sets how long a program must leave the fabric alone (no
// verb, no empty poll) before the UDP link's own goroutine takes over the
// socket and delivers what comes (default 2 ms). A program that waits by
// reading memory a peer writes, not by polling a CQ, as a C program may,
// sees the peer's data that much later; a shorter wait costs a busily
// polling program a timer reset now and then. No effect off the UDP link.
func (f *Fabric) SetUDPQuiet(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.carrier.(*udpLink); ok && d > 0 {
		l.quiet = d
	}
}

// SetUDPIdleWait sets how long an empty poll may wait for the network on
// the UDP link (default 50 ms; 0: it does not wait, beyond a short spin
// while datagrams are coming). The wait keeps two programs spinning on
// one small machine from taking the CPU from each other; without it, a
// program that gives up after N empty polls (a C program's timeout loop)
// gives up after about N socket reads, as on hardware. No effect off the
// UDP link.
func (f *Fabric) SetUDPIdleWait(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.carrier.(*udpLink); ok && d >= 0 {
		l.idleWait = d
	}
}

// CompletionWhy says why the failed completion wc, polled from c, failed,
// as the simulator decided it (the responder's or completer's reason,
// with rxe's function), or "" when it kept no reason: a success, a flush,
// or one of more than the last 64 failures of c. The status's general
// meaning is WCStatus.Explain.
func CompletionWhy(c verbs.CQ, wc verbs.WC) string {
	q, ok := c.(*cq)
	if !ok || q == nil {
		return ""
	}
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.completionWhy(wc)
}

// Dereg is dereg under the fabric's lock.
func (m *mr) Dereg() error {
	f := m.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return m.dereg()
}

// CreateAH is createAH under the fabric's lock.
func (p *pd) CreateAH(attr verbs.AHAttr) (verbs.AH, error) {
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.createAH(attr)
}

// Destroy is destroy under the fabric's lock.
func (a *ah) Destroy() error {
	f := a.fabric()
	f.mu.Lock()
	defer f.mu.Unlock()
	return a.destroy()
}

// GetEvent is getEvent under the fabric's lock.
func (ch *channel) GetEvent(wait time.Duration) (verbs.CQ, error) {
	f := ch.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return ch.getEvent(wait)
}

// Destroy is destroy under the fabric's lock.
func (ch *channel) Destroy() error {
	f := ch.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return ch.destroy()
}

// CreateCQ is createCQ under the fabric's lock.
func (c *context) CreateCQ(attr verbs.CQInitAttr) (verbs.CQ, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.createCQ(attr)
}

// CQE implements verbs.CQ: the rounded depth (ibv_cq.cqe).
func (q *cq) CQE() int {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.cqe
}

// Poll is poll under the fabric's lock.
func (q *cq) Poll(wc []verbs.WC) (int, error) {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.poll(wc)
}

// ReqNotify is reqNotify under the fabric's lock.
func (q *cq) ReqNotify(solicitedOnly bool) error {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.reqNotify(solicitedOnly)
}

// AckEvents is ackEvents under the fabric's lock.
func (q *cq) AckEvents(n int) {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	q.ackEvents(n)
}

// UnackedEvents implements verbs.EventCounter.
func (q *cq) UnackedEvents() int {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.compUnacked
}

// Resize is resize under the fabric's lock.
func (q *cq) Resize(n int) error {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.resize(n)
}

// Destroy is destroy under the fabric's lock.
func (q *cq) Destroy() error {
	f := q.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.destroy()
}

// CreateSRQ is createSRQ under the fabric's lock.
func (p *pd) CreateSRQ(attr verbs.SRQInitAttr) (verbs.SRQ, error) {
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.createSRQ(attr)
}

// PostRecv is postRecv under the fabric's lock.
func (s *srq) PostRecv(wrs []verbs.RecvWR) (int, error) {
	f := s.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.postRecv(wrs)
}

// Modify is modify under the fabric's lock.
func (s *srq) Modify(attr verbs.SRQAttr, mask verbs.SRQAttrMask) error {
	f := s.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.modify(attr, mask)
}

// Query is query under the fabric's lock.
func (s *srq) Query() (verbs.SRQAttr, error) {
	f := s.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.query()
}

// Destroy is destroy under the fabric's lock.
func (s *srq) Destroy() error {
	f := s.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.destroy()
}

// CreateQP is createQP under the fabric's lock.
func (p *pd) CreateQP(attr verbs.QPInitAttr) (verbs.QP, error) {
	f := p.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.createQP(attr)
}

// Modify is modify under the fabric's lock.
func (q *qp) Modify(a *verbs.QPAttr, mask verbs.QPAttrMask) error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.modify(a, mask)
}

// Query is query under the fabric's lock.
func (q *qp) Query(mask verbs.QPAttrMask) (verbs.QPAttr, verbs.QPInitAttr, error) {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.query(mask)
}

// PostSend is postSend under the fabric's lock.
func (q *qp) PostSend(wrs []verbs.SendWR) (int, error) {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.postSend(wrs)
}

// PostRecv is postRecv under the fabric's lock.
func (q *qp) PostRecv(wrs []verbs.RecvWR) (int, error) {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.postRecv(wrs)
}

// Destroy is destroy under the fabric's lock.
func (q *qp) Destroy() error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return q.destroy()
}

// JoinIPGroup implements verbs.HostGroups: JoinHostGroup on the named
// device, what a socket's IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP on its
// netdev does.
func (f *Fabric) JoinIPGroup(device string, g verbs.GID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.joinIPGroup(device, g)
}

// LeaveIPGroup implements verbs.HostGroups: LeaveHostGroup on the named
// device.
func (f *Fabric) LeaveIPGroup(device string, g verbs.GID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leaveIPGroup(device, g)
}

// IPGroups implements verbs.HostGroups: the groups joined on the named
// device, once per join, in increasing order.
func (f *Fabric) IPGroups(device string) ([]verbs.GID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ipGroups(device)
}

// LinkParams implements verbs.LinkConfigurer: the link of the named device.
func (f *Fabric) LinkParams(name string) (verbs.LinkParams, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.linkParams(name)
}

// SetLinkParams implements verbs.LinkConfigurer with SetLink.
func (f *Fabric) SetLinkParams(name string, p verbs.LinkParams) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setLinkParams(name, p)
}

// ObservePackets implements verbs.PacketObserver: fn is called for every
// packet the fabric sends ("sent"), delivers ("delivered") or loses
// ("dropped: why"; "refused: why" when the sender's IP layer would not
// send it), until cancel is called. While anyone observes, every packet is
// encoded as genuine RoCEv2 bytes and the receiver decodes and checks them.
//
// fn runs with the fabric locked, in the order things happen, on the
// goroutine of the verb that caused them: it must not call back into the
// simulator, and it must copy PacketEvent.Bytes to keep them.
func (f *Fabric) ObservePackets(fn func(verbs.PacketEvent)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.observePackets(fn)
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.forgetObserver(id)
	}
}

// Close implements verbs.Provider: it closes every open context (which
// destroys every object, as closing the uverbs file does) and stops the
// fabric.
func (f *Fabric) Close() error {
	f.mu.Lock()
	open, c := f.shutdown(), f.carrier
	f.mu.Unlock()
	if open {
		c.stop() // the UDP link's goroutines take the lock: not under it
	}
	return nil
}

var _ verbs.ExtendedContext = (*context)(nil)

// OpenXRCD is openXRCD under the fabric's lock.
func (c *context) OpenXRCD(attr verbs.XRCDInitAttr) (verbs.XRCD, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.openXRCD(attr)
}

// CreateSRQEx is createSRQEx under the fabric's lock.
func (c *context) CreateSRQEx(attr verbs.SRQInitAttrEx) (verbs.SRQ, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.createSRQEx(attr)
}

// CreateQPEx is createQPEx under the fabric's lock.
func (c *context) CreateQPEx(attr verbs.QPInitAttrEx) (verbs.QP, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.createQPEx(attr)
}

// OpenQP is openQP under the fabric's lock.
func (c *context) OpenQP(attr verbs.QPOpenAttr) (verbs.QP, error) {
	f := c.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.openQP(attr)
}

// Close is close under the fabric's lock.
func (x *xrcd) Close() error {
	f := x.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return x.close()
}

// Num is srqNum under the fabric's lock.
func (s *srq) Num() (uint32, error) {
	f := s.pd.ctx.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	return s.srqNum()
}

var _ verbs.XRCSwitch = (*Fabric)(nil)

// XRC implements verbs.XRCSwitch.
func (f *Fabric) XRC() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.XRC
}

// SetXRC implements verbs.XRCSwitch.
func (f *Fabric) SetXRC(on bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.setXRC(on)
}

// Modify is modify through an XRC_RECV QP's handle, under the fabric's lock.
func (t *tgtQP) Modify(a *verbs.QPAttr, mask verbs.QPAttrMask) error {
	f := t.qp.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := t.checkHandle("ibv_modify_qp"); err != nil {
		return err
	}
	return t.qp.modify(a, mask)
}

// Query is query through an XRC_RECV QP's handle, under the fabric's lock.
func (t *tgtQP) Query(mask verbs.QPAttrMask) (verbs.QPAttr, verbs.QPInitAttr, error) {
	f := t.qp.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := t.checkHandle("ibv_query_qp"); err != nil {
		return verbs.QPAttr{}, verbs.QPInitAttr{}, err
	}
	a, init, err := t.qp.query(mask)
	init.Context = t.userCtx
	return a, init, err
}

// PostSend is postSend through an XRC_RECV QP's handle, under the fabric's lock.
func (t *tgtQP) PostSend(wrs []verbs.SendWR) (int, error) {
	f := t.qp.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := t.checkHandle("ibv_post_send"); err != nil {
		return 0, err
	}
	return t.qp.postSend(wrs)
}

// PostRecv is postRecv through an XRC_RECV QP's handle, under the fabric's lock.
func (t *tgtQP) PostRecv(wrs []verbs.RecvWR) (int, error) {
	f := t.qp.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := t.checkHandle("ibv_post_recv"); err != nil {
		return 0, err
	}
	return t.qp.postRecv(wrs)
}

// Destroy is destroy of an XRC_RECV QP's handle, under the fabric's lock.
func (t *tgtQP) Destroy() error {
	f := t.qp.fabric
	f.mu.Lock()
	defer f.mu.Unlock()
	return t.destroy()
}
