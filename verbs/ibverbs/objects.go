//go:build linux && cgo && ibverbs

package ibverbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// ---------------------------------------------------------------- PD

// pd is a protection domain (struct ibv_pd).
type pd struct {
	ctx *context
	c   *C.struct_ibv_pd // nil once deallocated; guarded by ctx.mu
	// users counts the MRs, QPs, SRQs and AHs on the PD (the kernel's
	// pd->usecnt), for the EBUSY prediction.
	mrs, qps, srqs, ahs int
}

var _ verbs.PD = (*pd)(nil)

func deadErr(op, what, how string) error {
	return refuse(op, verbs.EINVAL, "create a new one; a destroyed object cannot be used again",
		"%s was destroyed (%s); libibverbs would use freed memory", what, how)
}

// check returns an error when the PD cannot be used. Called with ctx.mu.
func (p *pd) check(op string) error {
	if p.ctx.c == nil {
		return closedErr(op)
	}
	if p.c == nil {
		return deadErr(op, "the PD", "ibv_dealloc_pd")
	}
	return nil
}

// Context implements verbs.PD.
func (p *pd) Context() verbs.Context { return p.ctx }

// Dealloc implements verbs.PD (ibv_dealloc_pd).
func (p *pd) Dealloc() error {
	const op = "ibv_dealloc_pd"
	p.ctx.mu.Lock()
	defer p.ctx.mu.Unlock()
	if err := p.check(op); err != nil {
		return err
	}
	var users []string
	for _, u := range []struct {
		n    int
		what string
	}{{p.mrs, "MR"}, {p.qps, "QP"}, {p.srqs, "SRQ"}, {p.ahs, "AH"}} {
		if u.n > 0 {
			users = append(users, fmt.Sprintf("%d %s(s)", u.n, u.what))
		}
	}
	pred := predictBusy(op, "the PD", users, "destroy the QPs, SRQs and AHs and deregister the MRs on it first (uverbs_free_pd: pd->usecnt)")
	if err := judge(op, syscall.Errno(C.ibv_dealloc_pd(p.c)), pred); err != nil {
		return err
	}
	p.c = nil
	for i, x := range p.ctx.pds {
		if x == p {
			p.ctx.pds = append(p.ctx.pds[:i], p.ctx.pds[i+1:]...)
			break
		}
	}
	return nil
}

// ---------------------------------------------------------------- MR

// mr is a registered memory region (struct ibv_mr) over C memory the
// backend allocated.
type mr struct {
	pd     *pd
	c      *C.struct_ibv_mr // nil once deregistered
	buf    unsafe.Pointer   // posix_memalign'ed, zeroed; freed with the MR
	length int
	addr   uint64
	lkey   uint32
	rkey   uint32
	access verbs.Access
}

var _ verbs.MR = (*mr)(nil)

// AllocMR implements verbs.PD: posix_memalign (page-aligned, zeroed, outside
// the Go heap), then ibv_reg_mr.
func (p *pd) AllocMR(length int, access verbs.Access) (verbs.MR, error) {
	const op = "ibv_reg_mr"
	p.ctx.mu.Lock()
	defer p.ctx.mu.Unlock()
	if err := p.check(op); err != nil {
		return nil, err
	}
	if length < 0 {
		return nil, refuse(op, verbs.EINVAL, "register a positive length", "length %d is negative; ibv_reg_mr takes a size_t", length)
	}
	if uint64(access) > math.MaxUint32 {
		return nil, refuse(op, verbs.EINVAL, "use the IBV_ACCESS_* flags", "access %#x does not fit an unsigned int", uint64(access))
	}
	var buf unsafe.Pointer
	if rc := C.vsh_alloc_buf(C.size_t(length), &buf); rc != 0 {
		return nil, judge("posix_memalign", syscall.Errno(rc), prediction{})
	}
	pred := predictRegMR(length, access, memlockLimit(), procCaps.ipcLock)
	var errc C.int
	m := C.vsh_reg_mr(p.c, buf, C.size_t(length), C.uint(access), &errc)
	if m == nil {
		C.free(buf)
		return nil, judge(op, syscall.Errno(errc), pred)
	}
	_ = judge(op, 0, pred)
	x := &mr{pd: p, c: m, buf: buf, length: length, addr: uint64(uintptr(buf)), lkey: uint32(m.lkey), rkey: uint32(m.rkey), access: access}
	p.mrs++
	// PostSend reads the map under dataMu alone (inlineCovered).
	p.ctx.dataMu.Lock()
	p.ctx.mrs[x] = struct{}{}
	p.ctx.dataMu.Unlock()
	return x, nil
}

// PD implements verbs.MR.
func (m *mr) PD() verbs.PD { return m.pd }

// Addr implements verbs.MR.
func (m *mr) Addr() uint64 { return m.addr }

// Length implements verbs.MR.
func (m *mr) Length() int { return m.length }

// LKey implements verbs.MR.
func (m *mr) LKey() uint32 { return m.lkey }

// RKey implements verbs.MR.
func (m *mr) RKey() uint32 { return m.rkey }

// Access implements verbs.MR.
func (m *mr) Access() verbs.Access { return m.access }

// Bytes implements verbs.MR: the registered C memory itself. After Dereg
// (or the context's Close) it returns nil; a slice taken before must not be
// used then.
func (m *mr) Bytes() []byte {
	m.pd.ctx.dataMu.RLock()
	defer m.pd.ctx.dataMu.RUnlock()
	if m.buf == nil || m.length == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(m.buf), m.length)
}

// contains reports whether [addr, addr+n) lies inside the MR's memory.
func (m *mr) contains(addr, n uint64) bool {
	return m.buf != nil && addr >= m.addr && n <= uint64(m.length) && addr-m.addr <= uint64(m.length)-n
}

// release frees the memory. Called with ctx.mu and ctx.dataMu held.
func (m *mr) release() {
	if m.buf != nil {
		C.free(m.buf)
	}
	m.buf, m.c = nil, nil
}

// Dereg implements verbs.MR (ibv_dereg_mr), then frees the memory.
func (m *mr) Dereg() error {
	const op = "ibv_dereg_mr"
	c := m.pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return closedErr(op)
	}
	if m.c == nil {
		return deadErr(op, "the MR", "ibv_dereg_mr")
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	if err := judge(op, syscall.Errno(C.ibv_dereg_mr(m.c)), prediction{exhaustive: true, call: fmt.Sprintf("lkey %#x", m.lkey)}); err != nil {
		return err
	}
	m.release()
	m.pd.mrs--
	delete(c.mrs, m)
	return nil
}

// ---------------------------------------------------------------- channel

// channel is a completion event channel (struct ibv_comp_channel).
type channel struct {
	ctx *context
	c   *C.struct_ibv_comp_channel // nil once destroyed
	cqs int                        // CQs using it (libibverbs' refcnt)
}

var _ verbs.CompChannel = (*channel)(nil)

// Context implements verbs.CompChannel.
func (ch *channel) Context() verbs.Context { return ch.ctx }

// GetEvent implements verbs.CompChannel (ibv_get_cq_event on the
// non-blocking channel fd, after poll(2) for up to wait).
func (ch *channel) GetEvent(wait time.Duration) (verbs.CQ, error) {
	const op = "ibv_get_cq_event"
	c := ch.ctx
	var got *cq
	err := c.readEvent(op, wait, func() (C.int, error) {
		if c.c == nil {
			return 0, closedErr(op)
		}
		if ch.c == nil {
			return 0, deadErr(op, "the completion channel", "ibv_destroy_comp_channel")
		}
		return ch.c.fd, nil
	}, func() (syscall.Errno, error) {
		var q *C.struct_ibv_cq
		if rc := syscall.Errno(C.vsh_get_cq_event(ch.c, &q)); rc != 0 {
			return rc, nil
		}
		got = c.cqs[q]
		if got == nil {
			// A CQ this backend does not know: acknowledge at once.
			C.ibv_ack_cq_events(q, 1)
			return syscall.EAGAIN, nil
		}
		got.compUnacked++
		return 0, nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// Destroy implements verbs.CompChannel (ibv_destroy_comp_channel).
func (ch *channel) Destroy() error {
	const op = "ibv_destroy_comp_channel"
	c := ch.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return closedErr(op)
	}
	if ch.c == nil {
		return deadErr(op, "the completion channel", "ibv_destroy_comp_channel")
	}
	var users []string
	if ch.cqs > 0 {
		users = append(users, fmt.Sprintf("%d CQ(s)", ch.cqs))
	}
	pred := predictBusy(op, "the completion channel", users, "destroy the CQs on it first (libibverbs counts them in channel->refcnt)")
	if err := judge(op, syscall.Errno(C.ibv_destroy_comp_channel(ch.c)), pred); err != nil {
		return err
	}
	ch.c = nil
	for i, x := range c.channels {
		if x == ch {
			c.channels = append(c.channels[:i], c.channels[i+1:]...)
			break
		}
	}
	return nil
}

// ---------------------------------------------------------------- CQ

// cq is a completion queue (struct ibv_cq).
type cq struct {
	ctx     *context
	c       *C.struct_ibv_cq // nil once destroyed
	ch      *channel
	userCtx any
	cqe     int // last known depth, for CQE after destroy

	// guarded by ctx.mu
	users        int // QPs using it as send or receive CQ (cq->usecnt)
	srqs         int // XRC SRQs completing on it (cq->usecnt too)
	compUnacked  int // completion events got but not acknowledged
	asyncUnacked int

	pollMu sync.Mutex
	wc     *C.struct_ibv_wc // poll buffer, reused
	wcCap  int
}

var _ verbs.CQ = (*cq)(nil)

// Context implements verbs.CQ.
func (q *cq) Context() verbs.Context { return q.ctx }

// CQE implements verbs.CQ (ibv_cq.cqe, which ibv_resize_cq updates).
func (q *cq) CQE() int {
	q.ctx.dataMu.RLock()
	defer q.ctx.dataMu.RUnlock()
	if q.c != nil {
		return int(q.c.cqe)
	}
	return q.cqe
}

// Channel implements verbs.CQ.
func (q *cq) Channel() verbs.CompChannel {
	if q.ch == nil {
		return nil
	}
	return q.ch
}

// maxPollBatch bounds one ibv_poll_cq call (and the C buffer behind it).
const maxPollBatch = 4096

// Poll implements verbs.CQ (ibv_poll_cq): one call into C for up to
// len(wc) completions (at most 4096 at a time).
func (q *cq) Poll(wc []verbs.WC) (int, error) {
	const op = "ibv_poll_cq"
	q.ctx.dataMu.RLock()
	defer q.ctx.dataMu.RUnlock()
	if q.ctx.c == nil {
		return 0, closedErr(op)
	}
	if q.c == nil {
		return 0, deadErr(op, "the CQ", "ibv_destroy_cq")
	}
	n := min(len(wc), maxPollBatch)
	if n == 0 {
		return 0, nil
	}
	q.pollMu.Lock()
	defer q.pollMu.Unlock()
	if n > q.wcCap {
		p := C.realloc(unsafe.Pointer(q.wc), C.size_t(n)*C.size_t(unsafe.Sizeof(C.struct_ibv_wc{})))
		if p == nil {
			return 0, judge("realloc", syscall.ENOMEM, prediction{})
		}
		q.wc, q.wcCap = (*C.struct_ibv_wc)(p), n
	}
	r := C.vsh_poll_cq(handle(unsafe.Pointer(q.c)), C.int(n), q.wc)
	if r.err != 0 {
		return 0, judge(op, syscall.Errno(r.err), prediction{})
	}
	got := int(r.val)
	src := unsafe.Slice(q.wc, got)
	for i := range src {
		wcFromC(&src[i], &wc[i])
	}
	return got, nil
}

// ReqNotify implements verbs.CQ (ibv_req_notify_cq).
func (q *cq) ReqNotify(solicitedOnly bool) error {
	const op = "ibv_req_notify_cq"
	q.ctx.dataMu.RLock()
	defer q.ctx.dataMu.RUnlock()
	if q.ctx.c == nil {
		return closedErr(op)
	}
	if q.c == nil {
		return deadErr(op, "the CQ", "ibv_destroy_cq")
	}
	so := C.int(0)
	if solicitedOnly {
		so = 1
	}
	return judge(op, syscall.Errno(C.vsh_req_notify_cq(q.c, so)), prediction{})
}

// AckEvents implements verbs.CQ (ibv_ack_cq_events). It acknowledges at
// most the events GetEvent returned for this CQ and not yet acknowledged:
// acknowledging more would make ibv_destroy_cq wait forever.
func (q *cq) AckEvents(n int) {
	q.ctx.mu.Lock()
	defer q.ctx.mu.Unlock()
	if q.c == nil || n <= 0 {
		return
	}
	n = min(n, q.compUnacked)
	if n > 0 {
		C.ibv_ack_cq_events(q.c, C.uint(n))
		q.compUnacked -= n
	}
}

// UnackedEvents implements verbs.EventCounter.
func (q *cq) UnackedEvents() int {
	q.ctx.mu.Lock()
	defer q.ctx.mu.Unlock()
	return q.compUnacked
}

// Resize implements verbs.CQ (ibv_resize_cq).
func (q *cq) Resize(cqe int) error {
	const op = "ibv_resize_cq"
	q.ctx.mu.Lock()
	defer q.ctx.mu.Unlock()
	if q.ctx.c == nil {
		return closedErr(op)
	}
	if q.c == nil {
		return deadErr(op, "the CQ", "ibv_destroy_cq")
	}
	if cqe < math.MinInt32 || cqe > math.MaxInt32 {
		return refuse(op, verbs.EINVAL, "ask for 1 to max_cqe entries", "cqe %d does not fit a C int", cqe)
	}
	// rxe_resize_cq swaps the queue mapping: keep pollers out meanwhile.
	q.ctx.dataMu.Lock()
	defer q.ctx.dataMu.Unlock()
	pred := predictResizeCQ(&q.ctx.facts, cqe)
	if err := judge(op, syscall.Errno(C.ibv_resize_cq(q.c, C.int(cqe))), pred); err != nil {
		return err
	}
	q.cqe = int(q.c.cqe)
	return nil
}

// release frees the CQ's C memory. Called with ctx.mu and dataMu held.
func (q *cq) release() {
	q.c = nil
	C.free(unsafe.Pointer(q.wc))
	q.wc, q.wcCap = nil, 0
}

// Destroy implements verbs.CQ (ibv_destroy_cq). Unacknowledged completion
// or async events are refused before the call: ibv_destroy_cq would wait
// for their acknowledgement forever.
func (q *cq) Destroy() error {
	const op = "ibv_destroy_cq"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return closedErr(op)
	}
	if q.c == nil {
		return deadErr(op, "the CQ", "ibv_destroy_cq")
	}
	if q.compUnacked > 0 || q.asyncUnacked > 0 {
		return refuse(op, verbs.EBUSY, "acknowledge them first: ack_cq_events (CQ.AckEvents) for completion events, ack_async_event for async ones",
			"%d completion event(s) and %d async event(s) of this CQ are not acknowledged; ibv_destroy_cq would wait for them forever",
			q.compUnacked, q.asyncUnacked)
	}
	var users []string
	if q.users > 0 {
		users = append(users, fmt.Sprintf("%d QP(s)", q.users))
	}
	hint := "destroy the QPs that use it first (ib_destroy_cq_user: cq->usecnt)"
	if q.srqs > 0 {
		users = append(users, fmt.Sprintf("%d XRC SRQ(s)", q.srqs))
		hint = "destroy the QPs and XRC SRQs that use it first (ib_destroy_cq_user: cq->usecnt)"
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	pred := predictBusy(op, "the CQ", users, hint)
	cqe := int(q.c.cqe) // read before the struct is freed
	if err := judge(op, syscall.Errno(C.ibv_destroy_cq(q.c)), pred); err != nil {
		return err
	}
	delete(c.cqs, q.c)
	q.cqe = cqe
	q.release()
	if q.ch != nil {
		q.ch.cqs--
	}
	return nil
}

// ---------------------------------------------------------------- AH

// ah is an address handle (struct ibv_ah).
type ah struct {
	pd   *pd
	c    *C.struct_ibv_ah // nil once destroyed
	attr verbs.AHAttr
}

var _ verbs.AH = (*ah)(nil)

// CreateAH implements verbs.PD (ibv_create_ah).
func (p *pd) CreateAH(attr verbs.AHAttr) (verbs.AH, error) {
	const op = "ibv_create_ah"
	p.ctx.mu.Lock()
	defer p.ctx.mu.Unlock()
	if err := p.check(op); err != nil {
		return nil, err
	}
	var a C.struct_ibv_ah_attr
	ahAttrToC(&attr, &a)
	pred := predictCreateAH(&p.ctx.facts, attr)
	h, err := C.ibv_create_ah(p.c, &a)
	if h == nil {
		return nil, judge(op, errnoOf(err), pred)
	}
	_ = judge(op, 0, pred)
	x := &ah{pd: p, c: h, attr: attr}
	p.ahs++
	p.ctx.ahs = append(p.ctx.ahs, x)
	return x, nil
}

// PD implements verbs.AH.
func (a *ah) PD() verbs.PD { return a.pd }

// Attr implements verbs.AH.
func (a *ah) Attr() verbs.AHAttr { return a.attr }

// Destroy implements verbs.AH (ibv_destroy_ah).
func (a *ah) Destroy() error {
	const op = "ibv_destroy_ah"
	c := a.pd.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return closedErr(op)
	}
	if a.c == nil {
		return deadErr(op, "the AH", "ibv_destroy_ah")
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	if err := judge(op, syscall.Errno(C.ibv_destroy_ah(a.c)), prediction{}); err != nil {
		return err
	}
	a.c = nil
	a.pd.ahs--
	for i, x := range c.ahs {
		if x == a {
			c.ahs = append(c.ahs[:i], c.ahs[i+1:]...)
			break
		}
	}
	return nil
}
