package sim

import (
	"github.com/vsh-rdma/vsh/verbs/rules"
	"net/netip"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// device is one simulated rxe device (struct rxe_dev) with its one port.
type device struct {
	f         *Fabric
	prof      *rules.RXE // profile(): made at its first use
	idx       int
	name      string
	mac       [6]byte
	ip        netip.Addr
	guid      uint64
	gids      [2]verbs.GID
	portState verbs.PortState
	link      link
	// Port counters (rxe_recv.c set_bad_pkey_cntr, set_qkey_viol_cntr).
	badPKeyCntr, qkeyViolCntr uint32
	mcgs                      map[verbs.GID]*mcastGroup // rxe_mcg: multicast groups with attached QPs
	mcgAttach                 int                       // rxe->mcg_attach: attachments on the device
	// ipGroups are the multicast groups the host's IP stack joined on the
	// device's netdev beyond those every interface is in (alwaysMember),
	// each with its count of joins (JoinHostGroup; mcast.go).
	ipGroups map[verbs.GID]int

	nextQPN   uint32 // rxe_pool's cyclic index allocation (xa_alloc_cyclic)
	nextMRIdx uint32
	qps       []*qp          // by QPN, for packet delivery (qp and setQP)
	mrs       map[uint32]*mr // by pool index (key >> 8)
	lastMR    *mr            // the MR found last, tried before the map
	ctxs      []*context
	pooled    [numPools]int // objects in each of rxe's pools (poolFull)
	// listWork counts the slots moved or swept as objects left their
	// lists and queues, so that tests can check teardown is linear without
	// timing it.
	listWork int
	// peer marks a stand-in for another host on the UDP link
	// (udplink.go): not one of the fabric's devices, only a destination.
	peer bool

	// XRC (xrc.go): the domains by file, the XRC SRQs by number, and the
	// context the domains' target QPs live under.
	xdoms    map[string]*xdom
	xsrqs    map[uint32]*srq
	nextSRQN uint32
	xrcCtx   *context
}

var _ verbs.Device = (*device)(nil)

// Name implements verbs.Device.
func (d *device) Name() string { return d.name }

// GUID implements verbs.Device: the node GUID, EUI-64 of the MAC as rxe
// derives it (rxe_register_device, addrconf_addr_eui48).
func (d *device) GUID() uint64 { return d.guid }

// open does verbs.Device's Open (ibv_open_device).
func (d *device) open() (verbs.Context, error) {
	f := d.f
	if f.closed {
		return nil, verbs.Errorf("ibv_open_device", verbs.ENODEV, "create a new simulator with sim.New", "the simulator was closed")
	}
	if err := d.poolFull("ibv_open_device", poolUContext); err != nil {
		return nil, err
	}
	c := &context{dev: d}
	d.poolAdd(poolUContext)
	listAdd(&d.ctxs, c)
	return c, nil
}

// gid returns GID table entry i and whether it is populated.
func (d *device) gid(i int) (verbs.GID, bool) {
	if i >= 0 && i < len(d.gids) {
		return d.gids[i], true
	}
	return verbs.GID{}, false
}

// hasGID reports whether g is one of d's RoCE v2 GIDs (rxe_match_dgid).
func (d *device) hasGID(g verbs.GID) bool {
	for i := range d.gids { // by index: ranging over the array would copy it
		if d.gids[i] == g {
			return true
		}
	}
	return false
}

// allocQPN hands out the next QP number the way rxe's pool does: cyclic
// from the last one given, skipping numbers in use.
func (d *device) allocQPN() (uint32, bool) {
	for tries := 0; tries < rxeMaxQPIndex; tries++ {
		n := d.nextQPN
		d.nextQPN++
		if d.nextQPN > rxeMaxQPIndex {
			d.nextQPN = rxeMinQPIndex + 1
		}
		if d.qp(n) == nil {
			return n, true
		}
	}
	return 0, false
}

// qp returns the live QP numbered n, or nil.
func (d *device) qp(n uint32) *qp {
	if uint64(n) < uint64(len(d.qps)) {
		return d.qps[n]
	}
	return nil
}

// setQP files q (nil to clear) under number n. The table is a slice
// indexed by QPN: QPNs are handed out cyclically from 17, so it stays as
// long as the highest number in use, and a packet finds its QP with one
// index.
func (d *device) setQP(n uint32, q *qp) {
	if int(n) >= len(d.qps) {
		if q == nil {
			return
		}
		d.qps = append(d.qps, make([]*qp, int(n)+1-len(d.qps))...)
	}
	d.qps[n] = q
}

func (d *device) allocMRIndex() (uint32, bool) {
	for tries := 0; tries < rxeMaxMRIndex; tries++ {
		n := d.nextMRIdx
		d.nextMRIdx++
		if d.nextMRIdx > rxeMaxMRIndex {
			d.nextMRIdx = rxeMinMRIndex
		}
		if _, used := d.mrs[n]; !used {
			return n, true
		}
	}
	return 0, false
}

// portEvent delivers a port event to every open context of the device, as
// ib_dispatch_event does to every registered handler.
func (d *device) portEvent(t verbs.EventType) {
	for _, c := range d.ctxs {
		c.events = append(c.events, asyncEv{ev: verbs.AsyncEvent{Type: t, PortNum: 1}})
		d.f.asyncQueued(c)
	}
}

// setPortState does SetPortState's work.
func (f *Fabric) setPortState(i int, s verbs.PortState) error {
	if i < 0 || i >= len(f.devs) {
		return verbs.Errorf("set_port_state", verbs.ENODEV, "", "no device sim%d", i)
	}
	if s != verbs.PortActive && s != verbs.PortDown {
		return verbs.Errorf("set_port_state", verbs.EINVAL, "use IBV_PORT_ACTIVE or IBV_PORT_DOWN",
			"rxe's port is either ACTIVE or DOWN, not %s", s)
	}
	d := f.devs[i]
	if d.portState == s {
		return nil
	}
	d.portState = s
	if s == verbs.PortActive {
		d.portEvent(verbs.EventPortActive)
	} else {
		d.portEvent(verbs.EventPortErr)
	}
	return nil
}

// asyncEv is a queued async event.
type asyncEv struct {
	ev verbs.AsyncEvent
}

// context is an open device (struct ibv_context, a uverbs file).
type context struct {
	inList
	dev    *device
	closed bool
	why    string // why it is closed

	events []asyncEv // the async event queue, oldest first; stale ones are skipped
	gone   int       // objects destroyed since the queue was last swept (objectGone)

	pds      []*pd
	cqs      []*cq
	channels []*channel
	xrcds    []*xrcd  // XRC domain handles (xrc.go)
	tgtQPs   []*tgtQP // handles to XRC_RECV QPs
}

var _ verbs.Context = (*context)(nil)

func (c *context) fab() *Fabric { return c.dev.f }

// check returns an error when the context cannot be used.
func (c *context) check(op string) error {
	if c.closed {
		return verbs.Errorf(op, verbs.EINVAL, "open the device again (open_device)",
			"the device context was closed (%s)", c.why)
	}
	return nil
}

// Device implements verbs.Context.
func (c *context) Device() verbs.Device { return c.dev }

// queryDevice does verbs.Context's QueryDevice (ibv_query_device; rxe_query_device
// copies rxe->attr, set by rxe_init_device_param).
func (c *context) queryDevice() (verbs.DeviceAttr, error) {
	if err := c.check("ibv_query_device"); err != nil {
		return verbs.DeviceAttr{}, err
	}
	return c.dev.deviceAttr(), nil
}

// queryPort does verbs.Context's QueryPort (ibv_query_port, rxe_query_port).
func (c *context) queryPort(port uint8) (verbs.PortAttr, error) {
	if err := c.check("ibv_query_port"); err != nil {
		return verbs.PortAttr{}, err
	}
	if err := c.dev.profile().CheckPort("ibv_query_port", port).Err(); err != nil {
		return verbs.PortAttr{}, err
	}
	return c.dev.portAttr(), nil
}

// queryGID does verbs.Context's QueryGID (ibv_query_gid). An empty slot gives
// the zero GID and no error, as libibverbs preserves ("Preserve API
// behavior for empty GID").
func (c *context) queryGID(port uint8, index int) (verbs.GID, error) {
	r := c.dev.profile()
	for _, err := range []error{c.check("ibv_query_gid"), r.CheckPort("ibv_query_gid", port).Err(), r.GIDIndex("ibv_query_gid", index).Err()} {
		if err != nil {
			return verbs.GID{}, err
		}
	}
	g, _ := c.dev.gid(index)
	return g, nil
}

// queryGIDType does verbs.Context's QueryGIDType (ibv_query_gid_type). Both of rxe's
// GIDs are RoCE v2; an empty slot reads as IB/RoCE v1, as libibverbs
// reports it.
func (c *context) queryGIDType(port uint8, index int) (verbs.GIDType, error) {
	r := c.dev.profile()
	for _, err := range []error{c.check("ibv_query_gid_type"), r.CheckPort("ibv_query_gid_type", port).Err(), r.GIDIndex("ibv_query_gid_type", index).Err()} {
		if err != nil {
			return 0, err
		}
	}
	if _, ok := c.dev.gid(index); ok {
		return verbs.GIDTypeRoCEv2, nil
	}
	return verbs.GIDTypeRoCEv1, nil
}

// allocPD does verbs.Context's AllocPD (ibv_alloc_pd).
func (c *context) allocPD() (verbs.PD, error) {
	if err := c.check("ibv_alloc_pd"); err != nil {
		return nil, err
	}
	if err := c.dev.poolFull("ibv_alloc_pd", poolPD); err != nil {
		return nil, err
	}
	p := &pd{ctx: c}
	c.dev.poolAdd(poolPD)
	listAdd(&c.pds, p)
	return p, nil
}

// createCompChannel does verbs.Context's CreateCompChannel (ibv_create_comp_channel).
func (c *context) createCompChannel() (verbs.CompChannel, error) {
	if err := c.check("ibv_create_comp_channel"); err != nil {
		return nil, err
	}
	ch := &channel{ctx: c}
	listAdd(&c.channels, ch)
	return ch, nil
}

// getAsyncEvent does verbs.Context's GetAsyncEvent (ibv_get_async_event). With no
// event queued it returns EAGAIN, as a non-blocking async fd does. In
// automatic delivery mode, wait lets virtual time run (up to wait) so that
// timers can raise events.
func (c *context) getAsyncEvent(wait time.Duration) (verbs.AsyncEvent, error) {
	f := c.fab()
	if err := c.check("ibv_get_async_event"); err != nil {
		return verbs.AsyncEvent{}, err
	}
	if !c.eventPending() && wait > 0 {
		f.waitFor(wait, c.eventPending)
	}
	if !c.eventPending() {
		return verbs.AsyncEvent{}, verbs.Errorf("ibv_get_async_event", verbs.EAGAIN, "",
			"no async event is pending")
	}
	e := c.events[0]
	c.events = c.events[1:]
	// Reading an event counts it as reported to its object
	// (ib_uverbs_event_read); ibv_ack_async_event counts it completed.
	switch {
	case e.ev.QP != nil:
		e.ev.QP.(*qp).eventsUnacked++
	case e.ev.CQ != nil:
		e.ev.CQ.(*cq).asyncUnacked++
	case e.ev.SRQ != nil:
		e.ev.SRQ.(*srq).eventsUnacked++
	}
	return e.ev, nil
}

// ackAsyncEvent does verbs.Context's AckAsyncEvent (ibv_ack_async_event).
func (c *context) ackAsyncEvent(e verbs.AsyncEvent) {
	switch {
	case e.QP != nil:
		if q, ok := e.QP.(*qp); ok && q.eventsUnacked > 0 {
			q.eventsUnacked--
		}
	case e.CQ != nil:
		if q, ok := e.CQ.(*cq); ok && q.asyncUnacked > 0 {
			q.asyncUnacked--
		}
	case e.SRQ != nil:
		if q, ok := e.SRQ.(*srq); ok && q.eventsUnacked > 0 {
			q.eventsUnacked--
		}
	}
}

// close does verbs.Context's Close (ibv_close_device). As when a process
// closes its uverbs file, every object still open is destroyed with it
// (uverbs_destroy_ufile_hw); using one afterwards is an error.
func (c *context) close() error {
	if c.closed {
		return verbs.Errorf("ibv_close_device", verbs.EINVAL, "close each context once",
			"the device context is already closed (%s)", c.why)
	}
	c.closeLocked("ibv_close_device was called")
	return nil
}

func (c *context) closeLocked(why string) {
	gone := "its device context was closed"
	d := c.dev
	c.events = nil // before the objects go: nothing left to sweep
	c.closeXRC(gone)
	for _, p := range c.pds {
		for _, q := range append([]*qp(nil), p.qps...) { // each takes itself out
			q.destroyLocked(gone)
		}
		for _, s := range p.srqs {
			s.kill(gone)
		}
		for _, a := range p.ahs {
			a.kill(gone)
		}
		for _, m := range p.mrs {
			m.destroyLocked(gone)
		}
		p.qps, p.srqs, p.ahs, p.mrs = nil, nil, nil, nil
		p.dead = gone
		d.poolDel(poolPD)
	}
	for _, q := range c.cqs {
		q.kill(gone)
	}
	for _, ch := range c.channels {
		ch.dead = gone
	}
	c.pds, c.cqs, c.channels = nil, nil, nil
	c.closed, c.why = true, why
	listRemove(&d.ctxs, c, &d.listWork)
	d.poolDel(poolUContext)
}

// mrByIndex returns the MR with pool index idx (rxe_pool_get_index), or
// nil. A deregistered MR is never returned.
func (d *device) mrByIndex(idx uint32) *mr {
	if m := d.lastMR; m != nil && m.index == idx && m.dead == "" {
		return m
	}
	return d.mrLookup(idx)
}

// mrLookup is mrByIndex past the last MR found.
func (d *device) mrLookup(idx uint32) *mr {
	m := d.mrs[idx]
	if m != nil {
		d.lastMR = m
	}
	return m
}
