package sim

import (
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
)

// deadErr is the error for using an object that was destroyed: the C API
// would touch freed memory; the simulator says what happened instead.
func deadErr(op, what, why string) error {
	return verbs.Errorf(op, verbs.EINVAL, "create a new one; a destroyed object cannot be used again",
		"%s was destroyed (%s)", what, why)
}

// ---------------------------------------------------------------- lists

// The objects an owner holds (a device's contexts, a context's PDs and
// CQs, a PD's MRs and QPs, ...) are a plain slice in no particular order.
// Each object keeps its index there and leaves in O(1), the last one taking
// its place; the order is deterministic, and only findMem could see it:
// MRs of the simulator's memory never overlap, and a caller's MRs
// (usermem.go) that overlap hold the same bytes unless their iovas lie.
// Searching the slice on every removal made teardown quadratic: exit with
// a million CQs, destroyed newest first, took minutes.

// member is an object a list holds: it knows its index there.
type member interface {
	comparable
	slot() *int32
}

// inList is embedded in every object a list holds.
type inList struct{ at int32 }

func (m *inList) slot() *int32 { return &m.at }

// listAdd appends x to *list.
func listAdd[T member](list *[]T, x T) {
	*x.slot() = int32(len(*list))
	*list = append(*list, x)
}

// listRemove takes x out of *list, if there, and counts in *work the slots
// it moved. A list that is mostly spare capacity is copied into a smaller
// one (a million objects gone should not pin their slots); that copies
// fewer slots than there were removals since the list got its capacity.
func listRemove[T member](list *[]T, x T, work *int) {
	l := *list
	i := int(*x.slot())
	if i < 0 || i >= len(l) || l[i] != x {
		return
	}
	n := len(l) - 1
	last := l[n]
	l[i], *last.slot() = last, int32(i)
	var zero T
	l[n] = zero
	*x.slot() = -1
	*work++
	if cap(l) > 64 && n < cap(l)/4 {
		l = append(make([]T, 0, 2*n), l[:n]...)
		*work += n
	}
	*list = l[:n]
}

// ---------------------------------------------------------------- pools

// pool is one of rxe's object pools (rxe_pool.c rxe_type_info). A device
// counts each kind of object it holds, for every context on it, against
// the pool's max_elem and refuses one more: __rxe_add_to_pool fails with
// EINVAL, and rxe_alloc (MRs) with NULL, which rxe_reg_user_mr returns as
// ENOMEM. max_elem is the limit ibv_query_device reports since "RDMA/rxe:
// Fix inaccurate constants in rxe_type_info" (Linux 6.2, backported to
// 6.1.y). The simulator does not hold the PD, CQ and DMA MR the kernel's
// MAD layer makes on every port (ib_mad_port_open), so it leaves room for
// one of each more than a real device.
type pool uint8

const (
	poolUContext pool = iota
	poolPD
	poolCQ
	poolSRQ
	poolQP
	poolAH
	poolMR
	numPools
)

// rxeMaxUContext is RXE_MAX_UCONTEXT, the ucontext pool's max_elem; no
// attribute reports it.
const rxeMaxUContext = defaultMaxValue

var pools = [numPools]struct {
	name  string // rxe_type_info's
	attr  string // the ibv_query_device attribute that reports the limit
	noun  string
	max   int
	held  string // an object of the pool the kernel holds itself, if any
	fn    string // the rxe function that refuses
	errno syscall.Errno
	hint  string
}{
	poolUContext: {"uc", "RXE_MAX_UCONTEXT", "open device contexts", rxeMaxUContext, "", "rxe_add_to_pool", verbs.EINVAL, "close contexts you no longer use"},
	poolPD:       {"pd", "max_pd", "PDs", rxeMaxPD, "", "rxe_add_to_pool", verbs.EINVAL, "deallocate PDs you no longer use"},
	poolCQ:       {"cq", "max_cq", "CQs", rxeMaxCQ, "", "rxe_add_to_pool", verbs.EINVAL, "destroy CQs you no longer use; one CQ can serve many QPs"},
	poolSRQ:      {"srq", "max_srq", "SRQs", rxeMaxSRQ, "", "rxe_add_to_pool", verbs.EINVAL, "destroy SRQs you no longer use"},
	// QP index 16 is the GSI QP's from the start (rxe_qp_init_misc).
	poolQP: {"qp", "max_qp", "QPs", rxeMaxQP, "the GSI QP (QP1)", "rxe_add_to_pool", verbs.EINVAL, "destroy QPs you no longer use"},
	poolAH: {"ah", "max_ah", "AHs", rxeMaxAH, "", "rxe_add_to_pool", verbs.EINVAL, "destroy AHs you no longer use; one AH serves every send to its destination"},
	poolMR: {"mr", "max_mr", "MRs", rxeMaxMR, "", "rxe_alloc", verbs.ENOMEM, "deregister MRs you no longer use, or register one larger region"},
}

// poolFull refuses one more object of pool k on d, as rxe's pool does,
// when the device already holds max_elem of them.
func (d *device) poolFull(op string, k pool) error {
	p := &pools[k]
	n, held := d.pooled[k], ""
	if p.held != "" {
		n++
		held = ", " + p.held + " among them"
	}
	if n >= p.max {
		return verbs.Errorf(op, p.errno, p.hint,
			"%s already holds %d %s%s, its %s (%s: the %s pool's max_elem)", d.name, n, p.noun, held, p.attr, p.fn, p.name)
	}
	return nil
}

// poolAdd counts one more object of pool k on d, after poolFull let it in.
func (d *device) poolAdd(k pool) { d.pooled[k]++ }

// poolDel counts one object of pool k less on d.
func (d *device) poolDel(k pool) { d.pooled[k]-- }

// ---------------------------------------------------------------- PD

// pd is a protection domain (struct rxe_pd).
type pd struct {
	inList
	ctx  *context
	dead string
	mrs  []*mr
	qps  []*qp
	srqs []*srq
	ahs  []*ah
}

var _ verbs.PD = (*pd)(nil)

func (p *pd) check(op string) error {
	if p.dead != "" {
		return deadErr(op, "the PD", p.dead)
	}
	return p.ctx.check(op)
}

// Context implements verbs.PD.
func (p *pd) Context() verbs.Context { return p.ctx }

// dealloc does verbs.PD's Dealloc (ibv_dealloc_pd). The kernel refuses with
// EBUSY while anything still uses the PD (uverbs_free_pd: pd->usecnt,
// counted by MRs, QPs, SRQs and AHs).
func (p *pd) dealloc() error {
	const op = "ibv_dealloc_pd"
	if err := p.check(op); err != nil {
		return err
	}
	var users []string
	add := func(n int, what string) {
		if n > 0 {
			users = append(users, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(len(p.qps), "QP(s)")
	add(len(p.srqs), "SRQ(s)")
	add(len(p.mrs), "MR(s)")
	add(len(p.ahs), "AH(s)")
	if len(users) > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "destroy the QPs, SRQs and AHs and deregister the MRs first; a PD goes last",
			"the PD is still used by %s (uverbs_free_pd: pd->usecnt != 0)", strings.Join(users, ", "))
	}
	p.dead = "ibv_dealloc_pd"
	d := p.ctx.dev
	listRemove(&p.ctx.pds, p, &d.listWork)
	d.poolDel(poolPD)
	return nil
}

// ---------------------------------------------------------------- MR

// mr is a registered memory region (struct rxe_mr): over memory the
// simulator owns (allocMR), or over the caller's (regUserMR, usermem.go).
// A destroyed MR keeps no reference to its memory: buf is nil, so that
// contains fails for every non-empty range.
type mr struct {
	pd    *pd
	dead  string
	index uint32
	inList
	addr   uint64
	buf    []byte
	length int
	user   bool // buf is the caller's memory: not counted in memUsed
	lkey   uint32
	rkey   uint32
	access verbs.Access
}

var _ verbs.MR = (*mr)(nil)

// Access flags ib_check_mr_access accepts: LOCAL_WRITE..HUGETLB and the
// optional range (bits 20-29), where RELAXED_ORDERING lives.
const (
	accessOptional = verbs.Access(0x3ff << 20)
)

// allocMR does verbs.PD's AllocMR: memalign + ibv_reg_mr.
//
// Checks, in the kernel's order: ib_check_mr_access (REMOTE_WRITE or
// REMOTE_ATOMIC without LOCAL_WRITE, unknown bits, ON_DEMAND without ODP
// support: EINVAL), then ib_umem_get (an empty region pins no page:
// EINVAL). Keys follow rxe_mr_init: lkey = pool index << 8 | 8 random
// bits, rkey = lkey when any remote access is asked, else 0.
func (p *pd) allocMR(length int, access verbs.Access) (verbs.MR, error) {
	f := p.ctx.fab()
	const op = "ibv_reg_mr"
	if err := p.checkMR(op, length, access); err != nil {
		return nil, err
	}
	if length > maxMRBytes || f.memUsed+int64(length) > maxTotalBytes {
		return nil, verbs.Errorf(op, verbs.ENOMEM, "register less memory (on a real system, raise ulimit -l)",
			"the simulator keeps registered memory under %d MiB per MR and %d MiB in all (%d MiB in use)",
			maxMRBytes>>20, maxTotalBytes>>20, f.memUsed>>20)
	}
	m, err := p.addMR(op, access)
	if err != nil {
		return nil, err
	}
	m.addr, m.buf, m.length = f.allocAddr(length), make([]byte, length), length
	f.memUsed += int64(length)
	return m, nil
}

// checkMR makes ibv_reg_mr's checks that come before its memory: the PD
// alive, ib_check_mr_access, a free slot in the MR pool (rxe_reg_user_mr
// takes the MR from its pool before it pins the pages), then ib_umem_get's
// length.
func (p *pd) checkMR(op string, length int, access verbs.Access) error {
	if err := p.check(op); err != nil {
		return err
	}
	r := p.ctx.dev.profile()
	if err := r.MRAccess(access).Err(); err != nil {
		return err
	}
	if err := p.ctx.dev.poolFull(op, poolMR); err != nil {
		return err
	}
	return r.MRLength(length).Err()
}

// addMR makes an MR of p with access, after checkMR let it in: it takes a
// pool index, draws the keys (rxe_mr_init) and puts the MR in the device
// and the PD. The caller gives it its memory.
func (p *pd) addMR(op string, access verbs.Access) (*mr, error) {
	f := p.ctx.fab()
	d := p.ctx.dev
	idx, ok := d.allocMRIndex()
	if !ok {
		return nil, verbs.Errorf(op, verbs.ENOMEM, "deregister some MRs", "the device has no free MR index")
	}
	m := &mr{pd: p, index: idx, access: access}
	m.lkey = idx<<8 | f.random8()
	if access&verbs.AccessRemote != 0 {
		m.rkey = m.lkey
	}
	d.mrs[idx] = m
	d.poolAdd(poolMR)
	listAdd(&p.mrs, m)
	return m, nil
}

func (m *mr) PD() verbs.PD         { return m.pd }
func (m *mr) Addr() uint64         { return m.addr }
func (m *mr) Length() int          { return m.length }
func (m *mr) LKey() uint32         { return m.lkey }
func (m *mr) RKey() uint32         { return m.rkey }
func (m *mr) Access() verbs.Access { return m.access }

// Bytes implements verbs.MR: the registered memory itself; nil once the
// MR is destroyed.
func (m *mr) Bytes() []byte { return m.buf }

// dereg does verbs.MR's Dereg (ibv_dereg_mr). Work requests still queued that
// name this MR's keys fail when the device reaches them, as on rxe.
func (m *mr) dereg() error {
	const op = "ibv_dereg_mr"
	if m.dead != "" {
		return deadErr(op, fmt.Sprintf("the MR (lkey %#x)", m.lkey), m.dead)
	}
	if err := m.pd.ctx.check(op); err != nil {
		return err
	}
	m.destroyLocked("ibv_dereg_mr")
	listRemove(&m.pd.mrs, m, &m.pd.ctx.dev.listWork)
	return nil
}

// destroyLocked destroys the MR and lets go of its memory: the simulator
// keeps no reference to it (a packet that borrowed from it was copied
// before the last verb returned: settle).
func (m *mr) destroyLocked(why string) {
	f := m.pd.ctx.fab()
	m.dead = why
	if !m.user {
		f.memUsed -= int64(m.length)
	}
	m.buf = nil
	d := m.pd.ctx.dev
	if d.mrs[m.index] == m {
		delete(d.mrs, m.index)
	}
	d.poolDel(poolMR)
}

// contains reports whether [addr, addr+n) lies inside the region
// (mr_check_range). Addresses are the MR's iova, wherever its memory is;
// n > 0 never lies inside a destroyed MR.
func (m *mr) contains(addr uint64, n uint64) bool {
	l := uint64(len(m.buf))
	return addr >= m.addr && n <= l && addr-m.addr <= l-n
}

// ---------------------------------------------------------------- AH

// ah is an address handle (struct rxe_ah).
type ah struct {
	inList
	pd    *pd
	dead  string
	attr  verbs.AHAttr // as the program gave it
	av    verbs.AHAttr // as the kernel resolved it (rxe_av): the hop limit of the route
	route route
}

// Route resolution (core/addr.c, as ib_resolve_eth_dmac uses it). The
// simulated devices share one IPv4 subnet, 10.0.0.0/24, and one link-local
// IPv6 prefix, with no router.
const (
	defaultHopLimit = 64 // net.ipv4.ip_default_ttl and IPv6's hop_limit default
	eNETUNREACH     = 101
)

// resolveAV is ib_resolve_eth_dmac for an address vector: a multicast
// destination needs nothing; a unicast one must be reachable, and its hop
// limit becomes the route's (ib_resolve_unicast_gid_dmac overwrites the one
// the program gave). A destination on the segment that no device answers
// for fails after rdma_resolve_ip's one-second timeout with ETIMEDOUT; one
// off the segment has no route, ENETUNREACH.
func (f *Fabric) resolveAV(op, field string, d *device, av *verbs.AHAttr) error {
	g := av.GRH.DGID
	if g.IsMulticast() {
		return nil
	}
	if f.deviceByGID(g) != nil || f.carrier.peer(d, g) != nil {
		av.GRH.HopLimit = defaultHopLimit
		return nil
	}
	if err := f.carrier.peerErr(op, field, d, g); err != nil {
		return err // e.g. the UDP link has no room for another peer
	}
	a := netip.AddrFrom16(g)
	hint := "use the GID of the peer's device (query_gid on the peer; this one, " + d.name + ", has " + d.gids[1].String() + " at index 1)"
	if why := f.carrier.unreachable(a.Unmap()); why != "" {
		return verbs.Errorf(op, eNETUNREACH, hint, "%s.grh.dgid %s: no route to it: %s (ib_resolve_eth_dmac: ip_route_output_key)", field, g, why)
	}
	onLink := a.IsLinkLocalUnicast()
	if v4, ok := g.IPv4(); ok {
		b := v4.As4()
		onLink = b[0] == 10 && b[1] == 0 && b[2] == 0
	}
	if onLink {
		return verbs.Errorf(op, verbs.ETIMEDOUT, hint,
			"%s.grh.dgid %s is on the segment but nothing answers ARP/ND for it: address resolution timed out after 1 s (ib_resolve_eth_dmac, rdma_resolve_ip)", field, g)
	}
	return verbs.Errorf(op, eNETUNREACH, hint,
		"%s.grh.dgid %s is not on the simulated segment and there is no router: no route to it (ib_resolve_eth_dmac: ip_route_output_key)", field, g)
}

var _ verbs.AH = (*ah)(nil)

// createAH does verbs.PD's CreateAH (ibv_create_ah; ib_uverbs_create_ah,
// rdma_create_user_ah, rxe_create_ah).
func (p *pd) createAH(attr verbs.AHAttr) (verbs.AH, error) {
	f := p.ctx.fab()
	const op = "ibv_create_ah"
	if err := p.check(op); err != nil {
		return nil, err
	}
	if err := p.ctx.dev.profile().AV(op, "ah_attr", &attr, "the AH").Err(); err != nil {
		return nil, err
	}
	av := attr
	if err := f.resolveAV(op, "ah_attr", p.ctx.dev, &av); err != nil {
		return nil, err
	}
	if err := p.ctx.dev.poolFull(op, poolAH); err != nil {
		return nil, err
	}
	a := &ah{pd: p, attr: attr, av: av, route: f.makeRoute(p.ctx.dev, &av)}
	p.ctx.dev.poolAdd(poolAH)
	listAdd(&p.ahs, a)
	return a, nil
}

// PD implements verbs.AH.
func (a *ah) PD() verbs.PD { return a.pd }

// Attr implements verbs.AH.
func (a *ah) Attr() verbs.AHAttr { return a.attr }

func (a *ah) alive() bool              { return a.dead == "" }
func (a *ah) fabric() *Fabric          { return a.pd.ctx.fab() }
func (a *ah) ctxCheck(op string) error { return a.pd.ctx.check(op) }

// destroy does verbs.AH's Destroy (ibv_destroy_ah). rxe never refuses; a UD
// send still queued with this AH fails when the device reaches it.
func (a *ah) destroy() error {
	const op = "ibv_destroy_ah"
	if a.dead != "" {
		return deadErr(op, "the AH", a.dead)
	}
	if err := a.ctxCheck(op); err != nil {
		return err
	}
	a.kill("ibv_destroy_ah")
	listRemove(&a.pd.ahs, a, &a.pd.ctx.dev.listWork)
	return nil
}

func (a *ah) kill(why string) {
	a.dead = why
	a.pd.ctx.dev.poolDel(poolAH)
}

// ---------------------------------------------------------------- channel

// channel is a completion event channel (struct ibv_comp_channel).
type channel struct {
	inList
	ctx    *context
	dead   string
	refcnt int   // CQs that use it
	events []*cq // completion events, oldest first; a destroyed CQ's are skipped
	gone   int   // CQs destroyed since the events were last swept
}

// pending reports whether an event of a live CQ is queued.
func (ch *channel) pending() bool { return pendingIn(&ch.events, (*cq).destroyed) }

// cqGone forgets the unread events of a destroyed CQ (ib_uverbs_release_ucq).
func (ch *channel) cqGone() { sweep(&ch.events, &ch.gone, (*cq).destroyed, &ch.ctx.dev.listWork) }

// pendingIn drops the stale events at the head of the queue *q and reports
// whether one is left.
func pendingIn[T any](q *[]T, stale func(T) bool) bool {
	var zero T
	for len(*q) > 0 && stale((*q)[0]) {
		(*q)[0] = zero
		*q = (*q)[1:]
	}
	return len(*q) > 0
}

// sweep is called as an object that may have events in the queue *q is
// destroyed: the events of destroyed objects go with them. pendingIn skips
// them anyway, so the queue is swept only once as many objects went as it
// holds events (counted in *gone): destroying n objects costs O(n) even
// when each had an event queued. *work counts the slots swept.
func sweep[T any](q *[]T, gone *int, stale func(T) bool, work *int) {
	if len(*q) == 0 {
		return
	}
	if *gone++; *gone < len(*q) {
		return
	}
	*gone, *work = 0, *work+len(*q)
	kept := (*q)[:0]
	for _, e := range *q {
		if !stale(e) {
			kept = append(kept, e)
		}
	}
	clear((*q)[len(kept):])
	*q = kept
}

var _ verbs.CompChannel = (*channel)(nil)

func (ch *channel) Context() verbs.Context { return ch.ctx }

// getEvent does verbs.CompChannel's GetEvent (ibv_get_cq_event).
func (ch *channel) getEvent(wait time.Duration) (verbs.CQ, error) {
	f := ch.ctx.fab()
	const op = "ibv_get_cq_event"
	if ch.dead != "" {
		return nil, deadErr(op, "the completion channel", ch.dead)
	}
	if err := ch.ctx.check(op); err != nil {
		return nil, err
	}
	if !ch.pending() && wait > 0 {
		f.waitFor(wait, ch.pending)
	}
	if !ch.pending() {
		return nil, verbs.Errorf(op, verbs.EAGAIN, "arm the CQ with req_notify_cq before waiting, and poll what is already there",
			"no completion event is pending")
	}
	c := ch.events[0]
	ch.events = ch.events[1:]
	c.compUnacked++
	return c, nil
}

// destroy does verbs.CompChannel's Destroy (ibv_destroy_comp_channel, which
// refuses with EBUSY while CQs use the channel).
func (ch *channel) destroy() error {
	const op = "ibv_destroy_comp_channel"
	if ch.dead != "" {
		return deadErr(op, "the completion channel", ch.dead)
	}
	if err := ch.ctx.check(op); err != nil {
		return err
	}
	if ch.refcnt > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "destroy the CQs created with this channel first",
			"%d CQ(s) still use this completion channel (ibv_destroy_comp_channel: channel->refcnt)", ch.refcnt)
	}
	ch.dead = "ibv_destroy_comp_channel"
	listRemove(&ch.ctx.channels, ch, &ch.ctx.dev.listWork)
	return nil
}

// ---------------------------------------------------------------- CQ

// CQ notification states (enum ib_cq_notify_flags).
const (
	notifyNone      = 0
	notifySolicited = 1 // IB_CQ_SOLICITED
	notifyNextComp  = 2 // IB_CQ_NEXT_COMP
)

// cq is a completion queue (struct rxe_cq): a ring of cqe entries.
type cq struct {
	inList
	ctx          *context
	dead         string
	ch           *channel
	cqe          int // capacity, as rxe rounded it
	ring         []verbs.WC
	head, count  int
	notify       int
	usecnt       int // QPs (send or receive side) that use it
	overflowed   bool
	compUnacked  int       // completion events read but not acknowledged
	asyncUnacked int       // async events read but not acknowledged
	whys         []failWhy // why recent completions failed (CompletionWhy)
}

var _ verbs.CQ = (*cq)(nil)

// createCQ does verbs.Context's CreateCQ (ibv_create_cq; ib_uverbs_create_cq,
// rxe_cq_chk_attr, rxe_cq_from_init). The depth is rounded as
// rxe_queue_init rounds it: 1 stays 1, 10 becomes 15, 16 becomes 31.
func (c *context) createCQ(attr verbs.CQInitAttr) (verbs.CQ, error) {
	const op = "ibv_create_cq"
	if err := c.check(op); err != nil {
		return nil, err
	}
	var ch *channel
	if attr.Channel != nil {
		x, ok := attr.Channel.(*channel)
		if !ok || x.ctx != c {
			return nil, verbs.Errorf(op, verbs.EINVAL, "create the channel on the same device context",
				"the completion channel belongs to another device context")
		}
		if x.dead != "" {
			return nil, deadErr(op, "the completion channel", x.dead)
		}
		ch = x
	}
	if err := c.dev.profile().CreateCQ(attr.CQE, attr.CompVector).Err(); err != nil {
		return nil, err
	}
	if err := c.dev.poolFull(op, poolCQ); err != nil {
		return nil, err
	}
	n := roundQueue(attr.CQE)
	q := &cq{ctx: c, ch: ch, cqe: n, ring: make([]verbs.WC, n)}
	if ch != nil {
		ch.refcnt++
	}
	c.dev.poolAdd(poolCQ)
	listAdd(&c.cqs, q)
	return q, nil
}

func (q *cq) check(op string) error {
	if q.dead != "" {
		return deadErr(op, "the CQ", q.dead)
	}
	return q.ctx.check(op)
}

func (q *cq) Context() verbs.Context { return q.ctx }

func (q *cq) Channel() verbs.CompChannel {
	if q.ch == nil {
		return nil
	}
	return q.ch
}

// post queues a completion (rxe_cq_post). A full CQ loses it and raises
// IBV_EVENT_CQ_ERR; the caller decides what that does to the QP.
func (q *cq) post(wc verbs.WC, solicited bool) bool {
	if q.dead != "" {
		return false
	}
	if q.count == q.cqe {
		q.overflowed = true
		q.ctx.events = append(q.ctx.events, asyncEv{ev: verbs.AsyncEvent{Type: verbs.EventCQErr, CQ: q}})
		q.ctx.fab().asyncQueued(q.ctx)
		return false
	}
	i := q.head + q.count // < 2*cqe: the ring wraps without a division
	if i >= q.cqe {
		i -= q.cqe
	}
	q.ring[i] = wc
	q.count++
	if q.notify == notifyNextComp || (q.notify == notifySolicited && solicited) {
		q.notify = notifyNone
		if q.ch != nil && q.ch.dead == "" {
			q.ch.events = append(q.ch.events, q)
			q.ctx.fab().compQueued(q.ch)
		}
	}
	return true
}

// poll does verbs.CQ's Poll (ibv_poll_cq, rxe_poll_cq). In automatic
// delivery mode an empty CQ lets virtual time run to the next timer, as
// real time passes while a program spins on ibv_poll_cq.
func (q *cq) poll(wc []verbs.WC) (int, error) {
	f := q.ctx.fab()
	const op = "ibv_poll_cq"
	if err := q.check(op); err != nil {
		return 0, err
	}
	if q.count == 0 && len(wc) > 0 {
		f.idlePoll(func() bool { return q.count > 0 })
	}
	n := 0
	for n < len(wc) && q.count > 0 {
		wc[n] = q.ring[q.head]
		q.ring[q.head] = verbs.WC{}
		if q.head++; q.head == q.cqe {
			q.head = 0
		}
		q.count--
		n++
	}
	return n, nil
}

// reqNotify does verbs.CQ's ReqNotify (ibv_req_notify_cq, rxe_req_notify_cq): an
// armed next-completion request is not downgraded to solicited-only.
func (q *cq) reqNotify(solicitedOnly bool) error {
	if err := q.check("ibv_req_notify_cq"); err != nil {
		return err
	}
	if q.notify != notifyNextComp {
		if solicitedOnly {
			q.notify = notifySolicited
		} else {
			q.notify = notifyNextComp
		}
	}
	return nil
}

// ackEvents does verbs.CQ's AckEvents (ibv_ack_cq_events).
func (q *cq) ackEvents(n int) {
	if n <= 0 {
		return
	}
	q.compUnacked -= n
	if q.compUnacked < 0 {
		q.compUnacked = 0
	}
}

// resize does verbs.CQ's Resize (ibv_resize_cq; rxe_resize_cq checks the new
// size as at creation and against the entries held now, then rounds it).
func (q *cq) resize(n int) error {
	const op = "ibv_resize_cq"
	if err := q.check(op); err != nil {
		return err
	}
	if err := q.ctx.dev.profile().CQE(op, n, q.count).Err(); err != nil {
		return err
	}
	n = roundQueue(n)
	ring := make([]verbs.WC, n)
	for i := 0; i < q.count; i++ {
		ring[i] = q.ring[(q.head+i)%q.cqe]
	}
	q.ring, q.head, q.cqe = ring, 0, n
	return nil
}

// destroy does verbs.CQ's Destroy (ibv_destroy_cq). The core refuses with
// EBUSY while a QP uses the CQ (ib_destroy_cq_user: cq->usecnt).
func (q *cq) destroy() error {
	const op = "ibv_destroy_cq"
	if err := q.check(op); err != nil {
		return err
	}
	if q.usecnt > 0 {
		n := 0 // the QPs: one that uses the CQ both ways counts twice in usecnt
		for _, p := range q.ctx.dev.qps {
			if p != nil && (p.scq == q || p.rcq == q) {
				n++
			}
		}
		if x := q.xrcSRQs(); x > 0 {
			return verbs.Errorf(op, verbs.EBUSY, "destroy the XRC SRQs that complete on this CQ, and the QPs that use it, first",
				"%d XRC SRQ(s) complete on this CQ and %d QP(s) use it (ib_destroy_cq_user: cq->usecnt is %d)", x, n, q.usecnt)
		}
		return verbs.Errorf(op, verbs.EBUSY, "destroy the QPs that use this CQ first",
			"%d QP%s still use%s this CQ (ib_destroy_cq_user: cq->usecnt is %d, a count for each QP's send CQ and receive CQ)",
			n, map[bool]string{true: "", false: "s"}[n == 1], map[bool]string{true: "s", false: ""}[n == 1], q.usecnt)
	}
	if q.compUnacked > 0 || q.asyncUnacked > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "ack every completion event with ack_cq_events, and every async event (ibv_ack_async_event; vsh's async_events does it for you)",
			"%d completion event(s) and %d async event(s) of this CQ were read but not acknowledged; "+
				"real libibverbs would block forever here waiting for them (ibv_cmd_destroy_cq)", q.compUnacked, q.asyncUnacked)
	}
	q.kill("ibv_destroy_cq")
	if q.ch != nil {
		q.ch.refcnt--
		q.ch.cqGone() // unread events of this CQ go with it
	}
	q.ctx.objectGone()
	listRemove(&q.ctx.cqs, q, &q.ctx.dev.listWork)
	return nil
}

func (q *cq) kill(why string) {
	q.dead = why
	q.ctx.dev.poolDel(poolCQ)
}

func (q *cq) destroyed() bool { return q.dead != "" }

// stale reports whether e is about an object that was destroyed: its
// unread events went with it (ib_uverbs_release_uevent).
func (e asyncEv) stale() bool {
	switch {
	case e.ev.QP != nil:
		return e.ev.QP.(*qp).dead != ""
	case e.ev.CQ != nil:
		return e.ev.CQ.(*cq).dead != ""
	case e.ev.SRQ != nil:
		return e.ev.SRQ.(*srq).dead != ""
	}
	return false
}

// eventPending reports whether an event of a live object is queued.
func (c *context) eventPending() bool { return pendingIn(&c.events, asyncEv.stale) }

// objectGone forgets the queued async events of an object just destroyed.
func (c *context) objectGone() { sweep(&c.events, &c.gone, asyncEv.stale, &c.dev.listWork) }

// ---------------------------------------------------------------- SRQ

// srq is a shared receive queue (struct rxe_srq).
type srq struct {
	inList
	pd            *pd
	dead          string
	rq            recvQueue
	limit         int // armed when > 0 (rxe: srq->limit)
	usecnt        int // QPs attached
	eventsUnacked int
	context       any
	// An XRC SRQ (xrc.go): its domain handle, the CQ its receives
	// complete on, and its device-wide number.
	typ  verbs.SRQType
	xrcd *xrcd
	cq   *cq
	num  uint32
}

var _ verbs.SRQ = (*srq)(nil)

func (s *srq) check(op string) error {
	if s.dead != "" {
		return deadErr(op, "the SRQ", s.dead)
	}
	return s.pd.ctx.check(op)
}

func (s *srq) kill(why string) {
	s.forgetXRC()
	s.dead = why
	s.pd.ctx.dev.poolDel(poolSRQ)
}

// createSRQ does verbs.PD's CreateSRQ (ibv_create_srq; rxe_srq_chk_init,
// rxe_srq_from_init). max_wr is rounded like every rxe queue; max_sge 0
// becomes 1; srq_limit is taken as given, so a non-zero limit arms the SRQ
// at creation.
func (p *pd) createSRQ(attr verbs.SRQInitAttr) (verbs.SRQ, error) {
	return p.createSRQAs("ibv_create_srq", attr)
}

// createSRQAs is createSRQ for the verb op (ibv_create_srq, ibv_create_srq_ex).
func (p *pd) createSRQAs(op string, attr verbs.SRQInitAttr) (verbs.SRQ, error) {
	if err := p.check(op); err != nil {
		return nil, err
	}
	a := attr.Attr
	if err := p.ctx.dev.profile().CreateSRQ(a).Err(); err != nil {
		return nil, err
	}
	if a.MaxSGE < rxeMinSRQSGE {
		a.MaxSGE = rxeMinSRQSGE
	}
	if a.SRQLimit < 0 {
		a.SRQLimit = 0
	}
	if err := p.ctx.dev.poolFull(op, poolSRQ); err != nil {
		return nil, err
	}
	s := &srq{pd: p, limit: a.SRQLimit, context: attr.Context}
	s.rq.init(roundQueue(a.MaxWR), a.MaxSGE)
	p.ctx.dev.numberSRQ(s)
	p.ctx.dev.poolAdd(poolSRQ)
	listAdd(&p.srqs, s)
	return s, nil
}

func (s *srq) PD() verbs.PD { return s.pd }

// postRecv does verbs.SRQ's PostRecv (ibv_post_srq_recv; rdma-core's
// rxe_post_srq_recv / rxe_post_one_recv): a full queue is ENOMEM, too many
// SGEs EINVAL; an empty list posts nothing and succeeds.
func (s *srq) postRecv(wrs []verbs.RecvWR) (int, error) {
	f := s.pd.ctx.fab()
	const op = "ibv_post_srq_recv"
	if err := s.check(op); err != nil {
		return 0, err
	}
	for i := range wrs {
		if s.rq.full() {
			return i, verbs.Errorf(op, verbs.ENOMEM, "poll completions (each consumed receive frees a slot) or create the SRQ larger",
				"the SRQ is full: it holds %d receive WRs (max_wr as rounded by rxe)", s.rq.maxWR)
		}
		if len(wrs[i].SGList) > s.rq.maxSGE {
			return i, verbs.Errorf(op, verbs.EINVAL, "use fewer SGEs, or create the SRQ with a larger max_sge",
				"receive WR #%d has %d SGEs; the SRQ takes at most %d (rxe_post_one_recv)", i+1, len(wrs[i].SGList), s.rq.maxSGE)
		}
		s.rq.push(&wrs[i])
	}
	f.afterVerb()
	return len(wrs), nil
}

// modify does verbs.SRQ's Modify (ibv_modify_srq; rxe_srq_chk_attr,
// rxe_srq_from_attr): IBV_SRQ_MAX_WR resizes the queue, IBV_SRQ_LIMIT arms
// the limit event (0 disarms it).
func (s *srq) modify(attr verbs.SRQAttr, mask verbs.SRQAttrMask) error {
	const op = "ibv_modify_srq"
	if err := s.check(op); err != nil {
		return err
	}
	if err := s.pd.ctx.dev.profile().ModifySRQ(rules.SRQ{MaxWR: s.rq.maxWR, Limit: s.limit}, attr, mask).Err(); err != nil {
		return err
	}
	if mask&verbs.SRQAttrMaxWR != 0 {
		n := roundQueue(attr.MaxWR)
		if n < s.rq.count {
			return verbs.Errorf(op, verbs.EINVAL, "let the SRQ drain first",
				"max_wr %d would hold fewer than the %d receive WRs queued now (rxe_queue_resize)", attr.MaxWR, s.rq.count)
		}
		s.rq.resize(n)
	}
	if mask&verbs.SRQAttrLimit != 0 {
		s.limit = attr.SRQLimit
	}
	return nil
}

// query does verbs.SRQ's Query (ibv_query_srq, rxe_query_srq).
func (s *srq) query() (verbs.SRQAttr, error) {
	if err := s.check("ibv_query_srq"); err != nil {
		return verbs.SRQAttr{}, err
	}
	return verbs.SRQAttr{MaxWR: s.rq.maxWR, MaxSGE: s.rq.maxSGE, SRQLimit: s.limit}, nil
}

// destroy does verbs.SRQ's Destroy (ibv_destroy_srq; the core refuses with
// EBUSY while QPs use it: ib_destroy_srq_user, srq->usecnt).
func (s *srq) destroy() error {
	const op = "ibv_destroy_srq"
	if err := s.check(op); err != nil {
		return err
	}
	if s.usecnt > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "destroy the QPs attached to this SRQ first",
			"%d QP(s) still take their receives from this SRQ (ib_destroy_srq_user: srq->usecnt)", s.usecnt)
	}
	if s.eventsUnacked > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "acknowledge every async event you read (ibv_ack_async_event; vsh's async_events does it for you)",
			"%d async event(s) of this SRQ were read but not acknowledged; real libibverbs would block forever here (ibv_cmd_destroy_srq)",
			s.eventsUnacked)
	}
	s.kill("ibv_destroy_srq")
	s.pd.ctx.objectGone()
	listRemove(&s.pd.srqs, s, &s.pd.ctx.dev.listWork)
	return nil
}
