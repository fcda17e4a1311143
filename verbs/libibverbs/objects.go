//go:build linux && cgo && ibverbs

package main

/*
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

type ctxObj struct {
	object
	ctx     verbs.Context
	cc      *C.struct_vsh_context
	owned   []handled // every object made in it, destroyed or not
	fd      C.int     // async_fd: an eventfd, one count per async event queued
	unacked []pendingEvent
	mu      sync.Mutex // unacked
}

type pdObj struct {
	object
	pd verbs.PD
}

type mrObj struct {
	object
	mr verbs.MR
}

type chanObj struct {
	object
	ch verbs.CompChannel
	fd C.int // an eventfd, one count per completion event queued
}

type cqObj struct {
	object
	cq  verbs.CQ
	mu  sync.Mutex // wcs, as rxe_poll_cq holds cq->lock
	wcs []verbs.WC
}

type qpObj struct {
	object
	qp    verbs.QP
	mu    sync.Mutex // the scratch below, as rxe's posts hold sq->lock, rq->lock
	wrs   []verbs.SendWR
	rwrs  []verbs.RecvWR
	sges  []verbs.SGE
	state verbs.QPState
}

type srqObj struct {
	object
	srq  verbs.SRQ
	mu   sync.Mutex
	rwrs []verbs.RecvWR
	sges []verbs.SGE
}

type ahObj struct {
	object
	ah verbs.AH
}

type xrcdObj struct {
	object
	xrcd verbs.XRCD
}

func (c *ctxObj) check(op string) error {
	if c.dead {
		return deadErr(op, &c.object)
	}
	return nil
}

// live returns handle h's object when it may be used in op; a refusal is
// traced.
func live[T handled](h C.uintptr_t, op string) (T, error) {
	o, e := lookup[T](h)
	if e != 0 {
		err := badHandle(op)
		traceCall(op, "?", err)
		return o, err
	}
	if b := o.base(); b.dead || (b.ctx != nil && b.ctx.dead) {
		err := deadErr(op, b)
		traceCall(op, b.name, err)
		return o, err
	}
	return o, nil
}

func badHandle(op string) error {
	return verbs.Errorf(op, verbs.EINVAL, "pass a pointer the library returned, of the kind the verb takes",
		"the object passed to %s is not one this library made", op)
}

// ---- contexts ----

//export vshOpenDevice
func vshOpenDevice(dev *C.struct_ibv_device, dh C.uintptr_t, out **C.struct_ibv_context) C.int {
	const op = "ibv_open_device"
	if err := start(); err != nil {
		return errno(verbs.Errorf(op, verbs.ENOSYS, "", "the simulator did not start: %v", err))
	}
	i := int(dh) - 1
	if i < 0 || i >= len(state.devs) {
		return C.int(syscall.ENODEV)
	}
	vc, err := state.devs[i].Open()
	if err != nil {
		traceCall(op, state.devs[i].Name(), err)
		return errno(err)
	}
	fd := C.eventfd(0, C.EFD_CLOEXEC|C.EFD_SEMAPHORE)
	if fd < 0 {
		vc.Close()
		return C.int(syscall.EMFILE)
	}
	c := &ctxObj{ctx: vc, fd: fd}
	h := add(c, "ctx", nil, nil, vc)
	c.cc = C.vsh_new_context(dev, h, fd, sim.NumCompVectors)
	if c.cc == nil {
		vc.Close()
		C.close(fd)
		return C.int(syscall.ENOMEM)
	}
	c.c = unsafe.Pointer(c.cc)
	eventFDs.Store(vc, int(fd))
	*out = &c.cc.vctx.context
	traceCall(op, fmt.Sprintf("%s) → %s", state.devs[i].Name(), c.name), nil)
	return 0
}

//export vshCloseDevice
func vshCloseDevice(h C.uintptr_t) C.int {
	const op = "ibv_close_device"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	err = c.ctx.Close()
	traceCall(op, c.name, err)
	if err != nil {
		return errno(err)
	}
	closeEventFD(c.ctx, c.fd)
	state.mu.Lock()
	defer state.mu.Unlock()
	c.dead = true
	for _, o := range c.owned {
		b := o.base()
		if ch, ok := o.(*chanObj); ok && !b.dead {
			// The program holds ch->fd and closes it with
			// ibv_destroy_comp_channel, as in rdma-core; no event comes
			// to it any more.
			eventFDs.Delete(ch.ch)
		}
		b.dead = true
		forget(o)
	}
	forget(c)
	c.owned = nil
	return 0
}

//export vshQueryDevice
func vshQueryDevice(h C.uintptr_t, out *C.struct_ibv_device_attr) C.int {
	const op = "ibv_query_device"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	a, err := c.ctx.QueryDevice()
	if err != nil {
		return errno(err)
	}
	deviceAttrToC(&a, out)
	return 0
}

//export vshQueryPort
func vshQueryPort(h C.uintptr_t, port C.uint8_t, out *C.struct_ibv_port_attr) C.int {
	const op = "ibv_query_port"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	a, err := c.ctx.QueryPort(uint8(port))
	if err != nil {
		traceCall(op, fmt.Sprintf("%s, %d", c.name, port), err)
		return errno(err)
	}
	portAttrToC(&a, out)
	return 0
}

// vshQueryGID gives GID index of port, and its type (enum ibv_gid_type)
// when typ is not nil. An index past the table is EINVAL; an empty slot,
// ENODATA, as ibv_query_gid_ex says.
//
//export vshQueryGID
func vshQueryGID(h C.uintptr_t, port C.uint8_t, index C.int, gid *C.union_ibv_gid, typ *C.uint32_t) C.int {
	const op = "ibv_query_gid"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	g, err := c.ctx.QueryGID(uint8(port), int(index))
	if err != nil {
		return errno(err)
	}
	*(*[16]byte)(unsafe.Pointer(gid)) = g
	if typ != nil {
		t, err := c.ctx.QueryGIDType(uint8(port), int(index))
		if err != nil {
			return errno(err)
		}
		*typ = C.uint32_t(t)
	}
	return 0
}

//export vshQueryPKey
func vshQueryPKey(h C.uintptr_t, port C.uint8_t, index C.int, out *C.uint16_t) C.int {
	const op = "ibv_query_pkey"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	a, err := c.ctx.QueryPort(uint8(port))
	if err != nil {
		return errno(err)
	}
	if index < 0 || int(index) >= int(a.PKeyTblLen) {
		return C.int(syscall.EINVAL)
	}
	*out = 0 // an empty slot, as on rxe past index 0
	if index == 0 {
		*out = 0xffff // the default P_Key, the only one rxe has
	}
	return 0
}

// ---- protection domains, memory, XRC domains ----

//export vshAllocPD
func vshAllocPD(h C.uintptr_t, out **C.struct_ibv_pd) C.int {
	const op = "ibv_alloc_pd"
	c, err := live[*ctxObj](h, op)
	if err == nil {
		err = c.check(op)
	}
	if err != nil {
		return errno(err)
	}
	pd, err := c.ctx.AllocPD()
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	o := &pdObj{pd: pd}
	cp := calloc[C.struct_vsh_pd]()
	cp.h = add(o, "pd", c, unsafe.Pointer(cp), pd)
	cp.pd.context = &c.cc.vctx.context
	cp.pd.handle = C.uint32_t(cp.h)
	*out = &cp.pd
	traceCall(op, c.name+") → "+o.name, nil)
	return 0
}

//export vshDeallocPD
func vshDeallocPD(h C.uintptr_t) C.int {
	return destroy(h, "ibv_dealloc_pd", func(o *pdObj) error { return o.pd.Dealloc() })
}

// destroy runs a destroy verb on handle h's object: traced, and the
// object marked destroyed when it succeeded.
func destroy[T handled](h C.uintptr_t, op string, fn func(T) error) C.int {
	o, e := lookup[T](h)
	if e != 0 {
		err := badHandle(op)
		traceCall(op, "?", err)
		return errno(err)
	}
	b := o.base()
	var err error
	if b.dead || (b.ctx != nil && b.ctx.dead) {
		err = deadErr(op, b)
	} else {
		err = fn(o)
	}
	traceCall(op, b.name, err)
	if err != nil {
		return errno(err)
	}
	state.mu.Lock()
	b.dead = true
	release(o)
	state.mu.Unlock()
	return 0
}

// release lets the simulator's object of a destroyed o go: o keeps its
// name and its struct (calls through the program's stale pointer are
// refused as "destroyed"), nothing else. state.mu is held.
func release(o handled) {
	b := o.base()
	delete(state.byV, b.v)
	b.v = nil
	if r, ok := o.(interface{ drop() }); ok {
		r.drop()
	}
}

// forget frees o's struct once its context is closed, and its handle:
// a later call through the freed struct is a use after free, as in
// rdma-core. state.mu is held.
func forget(o handled) {
	release(o)
	b := o.base()
	if b.c != nil {
		C.free(b.c)
		b.c = nil
	}
	if b.h > 0 {
		state.objs[b.h-1] = nil
	}
}

func (o *pdObj) drop()   { o.pd = nil }
func (o *mrObj) drop()   { o.mr = nil }
func (o *cqObj) drop()   { o.cq, o.wcs = nil, nil }
func (o *qpObj) drop()   { o.qp, o.wrs, o.rwrs, o.sges = nil, nil, nil, nil }
func (o *srqObj) drop()  { o.srq, o.rwrs, o.sges = nil, nil, nil }
func (o *ahObj) drop()   { o.ah = nil }
func (o *xrcdObj) drop() { o.xrcd = nil }

//export vshRegMR
func vshRegMR(h C.uintptr_t, addr unsafe.Pointer, length C.size_t, iova C.uint64_t, access C.uint, out **C.struct_ibv_mr) C.int {
	const op = "ibv_reg_mr"
	p, err := live[*pdObj](h, op)
	if err != nil {
		return errno(err)
	}
	args := fmt.Sprintf("%s, %p, %d, %s", p.name, addr, length, verbs.Access(access))
	if uint64(length) > 1<<40 {
		err = verbs.Errorf(op, verbs.EINVAL, "register a buffer of its real length",
			"length %d is larger than any buffer this process can hold", uint64(length))
		traceCall(op, args, err)
		return errno(err)
	}
	var buf []byte
	if addr != nil && length > 0 {
		buf = unsafe.Slice((*byte)(addr), int(length))
	} else if length > 0 {
		err = verbs.Errorf(op, verbs.EFAULT, "register memory the program has allocated (malloc, memalign)",
			"the address is NULL: the kernel cannot pin pages there (ib_umem_get)")
		traceCall(op, args, err)
		return errno(err)
	}
	mr, err := sim.RegUserMR(p.pd, buf, uint64(iova), verbs.Access(access))
	if err == nil {
		// After the access check and the MR pool, as rxe_reg_user_mr
		// pins the pages.
		if err = pinnable(op, uintptr(addr), uint64(length), verbs.Access(access)); err != nil {
			mr.Dereg()
		}
	}
	if err != nil {
		traceCall(op, args, err)
		return errno(err)
	}
	o := &mrObj{mr: mr}
	cm := calloc[C.struct_vsh_mr]()
	cm.h = add(o, "mr", p.ctx, unsafe.Pointer(cm), mr)
	cm.mr.context = &p.ctx.cc.vctx.context
	cm.mr.pd = &(*C.struct_vsh_pd)(p.c).pd
	cm.mr.addr = addr
	cm.mr.length = length
	cm.mr.handle = C.uint32_t(cm.h)
	cm.mr.lkey = C.uint32_t(mr.LKey())
	cm.mr.rkey = C.uint32_t(mr.RKey())
	*out = &cm.mr
	traceCall(op, fmt.Sprintf("%s) → %s  lkey %#x rkey %#x", args, o.name, mr.LKey(), mr.RKey()), nil)
	return 0
}

//export vshDeregMR
func vshDeregMR(h C.uintptr_t) C.int {
	return destroy(h, "ibv_dereg_mr", func(o *mrObj) error { return o.mr.Dereg() })
}

//export vshOpenXRCD
func vshOpenXRCD(h C.uintptr_t, attr *C.struct_ibv_xrcd_init_attr, out **C.struct_ibv_xrcd) C.int {
	const op = "ibv_open_xrcd"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	ec, ok := c.ctx.(verbs.ExtendedContext)
	if !ok {
		return C.int(syscall.EOPNOTSUPP)
	}
	if attr.comp_mask&(C.IBV_XRCD_INIT_ATTR_FD|C.IBV_XRCD_INIT_ATTR_OFLAGS) != C.IBV_XRCD_INIT_ATTR_FD|C.IBV_XRCD_INIT_ATTR_OFLAGS {
		err := verbs.Errorf(op, verbs.EINVAL, "set comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS",
			"comp_mask %#x lacks IBV_XRCD_INIT_ATTR_FD or IBV_XRCD_INIT_ATTR_OFLAGS (ibv_cmd_open_xrcd)", uint32(attr.comp_mask))
		traceCall(op, c.name, err)
		return errno(err)
	}
	a := verbs.XRCDInitAttr{OFlags: verbs.XRCDOFlags(attr.oflags)}
	if attr.comp_mask&C.IBV_XRCD_INIT_ATTR_FD != 0 && attr.fd >= 0 {
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", attr.fd))
		if err != nil {
			return C.int(syscall.EBADF)
		}
		a.Path = p
	}
	x, err := ec.OpenXRCD(a)
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	o := &xrcdObj{xrcd: x}
	cx := calloc[C.struct_vsh_xrcd]()
	cx.h = add(o, "xrcd", c, unsafe.Pointer(cx), x)
	cx.xrcd.context = &c.cc.vctx.context
	*out = &cx.xrcd
	traceCall(op, fmt.Sprintf("%s, %q) → %s", c.name, a.Path, o.name), nil)
	return 0
}

//export vshCloseXRCD
func vshCloseXRCD(h C.uintptr_t) C.int {
	return destroy(h, "ibv_close_xrcd", func(o *xrcdObj) error { return o.xrcd.Close() })
}

// ---- completion channels and CQs ----

//export vshCreateChannel
func vshCreateChannel(h C.uintptr_t, out **C.struct_ibv_comp_channel) C.int {
	const op = "ibv_create_comp_channel"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	ch, err := c.ctx.CreateCompChannel()
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	fd := C.eventfd(0, C.EFD_CLOEXEC|C.EFD_SEMAPHORE)
	if fd < 0 {
		ch.Destroy()
		return C.int(syscall.EMFILE)
	}
	o := &chanObj{ch: ch, fd: fd}
	cc := calloc[C.struct_vsh_channel]()
	cc.h = add(o, "channel", c, unsafe.Pointer(cc), ch)
	cc.ch.context = &c.cc.vctx.context
	cc.ch.fd = fd
	eventFDs.Store(ch, int(fd))
	*out = &cc.ch
	traceCall(op, c.name+") → "+o.name, nil)
	return 0
}

//export vshDestroyChannel
func vshDestroyChannel(h C.uintptr_t) C.int {
	return destroy(h, "ibv_destroy_comp_channel", func(o *chanObj) error {
		if err := o.ch.Destroy(); err != nil {
			return err
		}
		closeEventFD(o.ch, o.fd)
		return nil
	})
}

//export vshCreateCQ
func vshCreateCQ(h C.uintptr_t, cqe C.int, cqCtx unsafe.Pointer, ch *C.struct_ibv_comp_channel, chh C.uintptr_t, vec C.int, out **C.struct_ibv_cq) C.int {
	const op = "ibv_create_cq"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	a := verbs.CQInitAttr{CQE: int(cqe), CompVector: int(vec)}
	chName := "NULL"
	if ch != nil {
		co, err := live[*chanObj](chh, op)
		if err != nil {
			return errno(err)
		}
		a.Channel, chName = co.ch, co.name
	}
	args := fmt.Sprintf("%s, cqe=%d, channel=%s, comp_vector=%d", c.name, cqe, chName, vec)
	cq, err := c.ctx.CreateCQ(a)
	if err != nil {
		traceCall(op, args, err)
		return errno(err)
	}
	o := &cqObj{cq: cq}
	cc := calloc[C.struct_vsh_cq]()
	cc.h = add(o, "cq", c, unsafe.Pointer(cc), cq)
	cc.cq.context = &c.cc.vctx.context
	cc.cq.channel = ch
	cc.cq.cq_context = cqCtx
	cc.cq.handle = C.uint32_t(cc.h)
	cc.cq.cqe = C.int(cq.CQE())
	C.pthread_mutex_init(&cc.cq.mutex, nil)
	C.pthread_cond_init(&cc.cq.cond, nil)
	*out = &cc.cq
	traceCall(op, fmt.Sprintf("%s) → %s  cqe %d", args, o.name, cq.CQE()), nil)
	return 0
}

//export vshResizeCQ
func vshResizeCQ(h C.uintptr_t, cqe C.int) C.int {
	const op = "ibv_resize_cq"
	o, err := live[*cqObj](h, op)
	if err != nil {
		return errno(err)
	}
	err = o.cq.Resize(int(cqe))
	if err == nil {
		(*C.struct_vsh_cq)(o.c).cq.cqe = C.int(o.cq.CQE())
	}
	traceCall(op, fmt.Sprintf("%s, %d", o.name, cqe), err)
	return errno(err)
}

//export vshDestroyCQ
func vshDestroyCQ(h C.uintptr_t) C.int {
	return destroy(h, "ibv_destroy_cq", func(o *cqObj) error { return o.cq.Destroy() })
}

//export vshNextCQEvent
func vshNextCQEvent(h C.uintptr_t, out **C.struct_ibv_cq) C.int {
	const op = "ibv_get_cq_event"
	o, err := live[*chanObj](h, op)
	if err != nil {
		return errno(err)
	}
	cq, err := o.ch.GetEvent(0)
	if err != nil {
		traceCall(op, o.name, err)
		return errno(err)
	}
	p := cOf(cq)
	if p == nil {
		return C.int(syscall.EINVAL)
	}
	cc := (*C.struct_vsh_cq)(p)
	*out = &cc.cq
	if tracing() {
		name := "?"
		if co, e := lookup[*cqObj](cc.h); e == 0 {
			name = co.name
		}
		traceLine(fmt.Sprintf("ibv_get_cq_event(%s) → %s", o.name, name))
	}
	return 0
}

//export vshAckCQEvents
func vshAckCQEvents(h C.uintptr_t, n C.uint) {
	o, e := lookup[*cqObj](h)
	if e != 0 {
		return
	}
	o.cq.AckEvents(int(n))
	traceCall("ibv_ack_cq_events", fmt.Sprintf("%s, %d", o.name, n), nil)
	cc := (*C.struct_vsh_cq)(o.c)
	C.pthread_mutex_lock(&cc.cq.mutex)
	cc.cq.comp_events_completed += C.uint32_t(n)
	C.pthread_cond_signal(&cc.cq.cond)
	C.pthread_mutex_unlock(&cc.cq.mutex)
}

// ---- async events ----

// vshChannelLive refuses a destroyed channel before ibv_get_cq_event
// reads its fd (a number the program may since have reused).
//
//export vshChannelLive
func vshChannelLive(h C.uintptr_t) C.int {
	_, err := live[*chanObj](h, "ibv_get_cq_event")
	return errno(err)
}

// vshContextLive is vshChannelLive for ibv_get_async_event.
//
//export vshContextLive
func vshContextLive(h C.uintptr_t) C.int {
	_, err := live[*ctxObj](h, "ibv_get_async_event")
	return errno(err)
}

// vshRefuse traces a refusal the C side decided (a NULL argument) and
// returns its errno.
//
//export vshRefuse
func vshRefuse(op, why *C.char, e C.int) C.int {
	traceCall(C.GoString(op), "", verbs.Errorf(C.GoString(op), syscall.Errno(e), "", "%s", C.GoString(why)))
	return e
}

//export vshNextAsyncEvent
func vshNextAsyncEvent(h C.uintptr_t, out *C.struct_ibv_async_event) C.int {
	const op = "ibv_get_async_event"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	ev, err := c.ctx.GetAsyncEvent(0)
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	elem := (*unsafe.Pointer)(unsafe.Pointer(&out.element))
	switch {
	case ev.QP != nil:
		*elem = cOf(ev.QP)
	case ev.CQ != nil:
		*elem = cOf(ev.CQ)
	case ev.SRQ != nil:
		*elem = cOf(ev.SRQ)
	default:
		*(*C.int)(unsafe.Pointer(&out.element)) = C.int(ev.PortNum)
	}
	out.event_type = uint32(ev.Type)
	c.mu.Lock()
	c.unacked = append(c.unacked, pendingEvent{ev, *elem})
	c.mu.Unlock()
	traceLine(fmt.Sprintf("ibv_get_async_event(%s) → %s", c.name, ev))
	return 0
}

//export vshAckAsyncEvent
func vshAckAsyncEvent(out *C.struct_ibv_async_event) {
	elem := *(*unsafe.Pointer)(unsafe.Pointer(&out.element))
	state.mu.RLock()
	objs := state.objs
	state.mu.RUnlock()
	for _, o := range objs {
		c, ok := o.(*ctxObj)
		if !ok {
			continue
		}
		if ev, ok := c.takeUnacked(uint32(out.event_type), elem); ok {
			c.ctx.AckAsyncEvent(ev)
			return
		}
	}
}

type pendingEvent struct {
	ev   verbs.AsyncEvent
	elem unsafe.Pointer
}

// eventFDs maps each completion channel and context to its eventfd, for
// the simulator's event hook (notifyEvent).
var eventFDs sync.Map

// notifyEvent is the simulator's event hook: one count on the eventfd of
// the channel or context the event was queued for. It runs under the
// fabric's lock.
func notifyEvent(ch verbs.CompChannel, ctx verbs.Context) {
	var key any = ctx
	if ch != nil {
		key = ch
	}
	if fd, ok := eventFDs.Load(key); ok {
		one := [8]byte{1}
		syscall.Write(fd.(int), one[:])
	}
}

// closeEventFD forgets key's eventfd and closes it: once its channel or
// context is gone, no event is queued for it.
func closeEventFD(key any, fd C.int) {
	eventFDs.Delete(key)
	C.close(fd)
}

func (c *ctxObj) takeUnacked(typ uint32, elem unsafe.Pointer) (verbs.AsyncEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.unacked {
		if uint32(p.ev.Type) == typ && p.elem == elem {
			c.unacked = append(c.unacked[:i], c.unacked[i+1:]...)
			return p.ev, true
		}
	}
	return verbs.AsyncEvent{}, false
}

// writeAccess is ib_access_writable's set: an MR with any of them pins its
// pages for writing.
const writeAccess = verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic | verbs.AccessMWBind

// pinnable is ib_umem_get's check, which rxe makes at ibv_reg_mr: every
// page of [addr, addr+n) mapped in this process, readable, and writable
// when the access writes. The mappings are /proc/self/maps'.
func pinnable(op string, addr uintptr, n uint64, access verbs.Access) error {
	if n == 0 {
		return nil
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil // no way to tell: let it through, as before the check
	}
	write := access&writeAccess != 0
	lo, hi := uint64(addr), uint64(addr)+n
	if hi < lo {
		hi = ^uint64(0)
	}
	at := lo
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		a, b, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(a, 16, 64)
		end, err2 := strconv.ParseUint(b, 16, 64)
		if !ok || err1 != nil || err2 != nil || end <= at || start > at {
			continue
		}
		if f[1][0] != 'r' || (write && f[1][1] != 'w') {
			need := "readable"
			if write {
				need = "readable and writable (the access asks for writes)"
			}
			return verbs.Errorf(op, verbs.EFAULT, "register memory the program allocated with malloc/memalign/mmap(PROT_READ|PROT_WRITE)",
				"the page at %#x is not %s (mapping %s %s): the kernel cannot pin it (ib_umem_get)", at, need, f[0], f[1])
		}
		at = end
		if at >= hi {
			return nil
		}
	}
	return verbs.Errorf(op, verbs.EFAULT, "register memory the program allocated, and its real length",
		"nothing is mapped at %#x, inside [%#x, %#x): the kernel cannot pin it (ib_umem_get)", at, lo, hi)
}
