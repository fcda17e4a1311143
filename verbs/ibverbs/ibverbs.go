//go:build linux && cgo && ibverbs

package ibverbs

/*
#cgo LDFLAGS: -libverbs
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// provider is the device list (ibv_get_device_list).
type provider struct {
	mu     sync.Mutex
	list   **C.struct_ibv_device
	devs   []verbs.Device
	closed bool
	// groups are the IP multicast groups joined on the devices' netdevs
	// (verbs.HostGroups, hostgroups.go); Close leaves them.
	groups ipJoins
}

var _ verbs.Provider = (*provider)(nil)

// New lists the RDMA devices through libibverbs (ibv_get_device_list). With
// none it returns an error wrapping ErrNoDevices that says why.
func New() (verbs.Provider, error) {
	var num, errc C.int
	list := C.vsh_get_device_list(&num, &errc)
	if list == nil {
		errno := syscall.Errno(errc)
		why, hint := explainErrno("ibv_get_device_list", errno)
		return nil, fmt.Errorf("%w: %w", ErrNoDevices, &verbs.Error{Op: "ibv_get_device_list", Errno: errno, Why: why, Hint: hint})
	}
	if num <= 0 {
		C.ibv_free_device_list(list)
		return nil, fmt.Errorf("%w: ibv_get_device_list returned an empty list (no RDMA device and no soft-RoCE link); "+
			"create one with `rdma link add rxe0 type rxe netdev <if>` (module rdma_rxe), or run inside the lab: rxe-lab run -- <command>",
			ErrNoDevices)
	}
	p := &provider{list: list}
	for _, d := range unsafe.Slice(list, int(num)) {
		p.devs = append(p.devs, &device{
			p:    p,
			dev:  d,
			name: C.GoString(C.ibv_get_device_name(d)),
			guid: uint64(C.vsh_device_guid(d)),
		})
	}
	return p, nil
}

// Name implements verbs.Provider.
func (p *provider) Name() string { return "ibverbs" }

// Devices implements verbs.Provider.
func (p *provider) Devices() ([]verbs.Device, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, refuse("ibv_get_device_list", verbs.EINVAL, "create a new provider (ibverbs.New)", "the provider was closed")
	}
	return append([]verbs.Device(nil), p.devs...), nil
}

// Close implements verbs.Provider (ibv_free_device_list). Contexts opened
// before stay usable, as in libibverbs; the IP groups the provider joined
// are left (their sockets closed).
func (p *provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return refuse("ibv_free_device_list", verbs.EINVAL, "close a provider once", "the provider is already closed")
	}
	p.closed = true
	p.groups.close()
	C.ibv_free_device_list(p.list)
	p.list = nil
	return nil
}

// device is one entry of the device list.
type device struct {
	p    *provider
	dev  *C.struct_ibv_device
	name string
	guid uint64
}

var _ verbs.Device = (*device)(nil)

// Name implements verbs.Device (ibv_get_device_name).
func (d *device) Name() string { return d.name }

// GUID implements verbs.Device (ibv_get_device_guid, in host order).
func (d *device) GUID() uint64 { return d.guid }

// Open implements verbs.Device (ibv_open_device). It also queries the
// device and its first port once, for the explanations of later errors.
func (d *device) Open() (verbs.Context, error) {
	const op = "ibv_open_device"
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if d.p.closed {
		return nil, refuse(op, verbs.EINVAL, "open devices before closing the provider (ibv_free_device_list frees them)",
			"the provider that listed %s was closed", d.name)
	}
	c, err := C.ibv_open_device(d.dev)
	if c == nil {
		return nil, judge(op, errnoOf(err), prediction{})
	}
	ctx := &context{dev: d, c: c, mrs: map[*mr]struct{}{}, qps: map[*C.struct_ibv_qp]*qp{},
		cqs: map[*C.struct_ibv_cq]*cq{}, srqs: map[*C.struct_ibv_srq]*srq{}}
	var da C.struct_ibv_device_attr
	if rc := C.vsh_query_device(c, &da); rc != 0 {
		C.ibv_close_device(c)
		return nil, judge("ibv_query_device", syscall.Errno(rc), prediction{})
	}
	ctx.facts.Attr = deviceAttrFromC(&da)
	var pa C.struct_ibv_port_attr
	if rc := C.vsh_query_port(c, 1, &pa); rc == 0 {
		ctx.facts.Port = portAttrFromC(&pa)
	}
	ctx.facts.NumCompVectors = int(c.num_comp_vectors)
	ctx.facts.CapNetRaw = procCaps.netRaw
	ctx.facts.GIDSlot = ctx.gidSlot
	if rc := C.vsh_set_nonblock(c.async_fd); rc != 0 {
		C.ibv_close_device(c)
		return nil, judge("fcntl(async_fd, O_NONBLOCK)", syscall.Errno(rc), prediction{})
	}
	return ctx, nil
}

// errnoOf returns the errno cgo captured, or EIO when libibverbs failed
// without setting one.
func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok && e != 0 {
		return e
	}
	return syscall.EIO
}

// caps are the process's capabilities that change what the kernel allows.
var procCaps = readCaps()

type capSet struct{ netRaw, ipcLock bool }

// readCaps reads the effective capabilities from /proc/self/status:
// CAP_NET_RAW (13) allows raw packet QPs and privileged Q_Keys, CAP_IPC_LOCK
// (14) lifts the locked-memory limit on registrations.
func readCaps() capSet {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return capSet{}
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return capSet{}
			}
			return capSet{netRaw: n&(1<<13) != 0, ipcLock: n&(1<<14) != 0}
		}
	}
	return capSet{}
}

// memlockLimit is RLIMIT_MEMLOCK's soft limit in bytes (^0: unlimited).
func memlockLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(8 /* RLIMIT_MEMLOCK */, &r); err != nil {
		return math.MaxUint64
	}
	return r.Cur
}

// context is an open device (struct ibv_context).
//
// Locking: mu guards the object tables and every object's liveness and
// counters, and is held across control-path calls into libibverbs. The
// data path (post, poll, notify) holds dataMu for reading and the object's
// own lock; destroying anything takes dataMu for writing, so that nothing is
// freed under a post. Event reads happen under mu (so that destroy sees
// their counts), event waits outside it.
type context struct {
	dev    *device
	mu     sync.Mutex
	dataMu sync.RWMutex
	c      *C.struct_ibv_context // nil once closed
	facts  devFacts

	pds      []*pd
	channels []*channel
	ahs      []*ah
	mrs      map[*mr]struct{}
	qps      map[*C.struct_ibv_qp]*qp
	cqs      map[*C.struct_ibv_cq]*cq
	srqs     map[*C.struct_ibv_srq]*srq
	xrcds    []*xrcd
}

var _ verbs.Context = (*context)(nil)

func closedErr(op string) error {
	return refuse(op, verbs.EINVAL, "open the device again (open_device)", "the device context was closed (ibv_close_device)")
}

// Device implements verbs.Context.
func (c *context) Device() verbs.Device { return c.dev }

// SelfDriven implements verbs.SelfDriven: the kernel or the NIC moves the
// packets; a poll only reads the CQ's ring.
func (c *context) SelfDriven() bool { return true }

// gidSlot reports whether a GID slot is empty (ibv_query_gid_ex: ENODATA).
func (c *context) gidSlot(port uint8, index int) (empty, known bool) {
	if c.c == nil || index < 0 {
		return false, false
	}
	var e C.struct_ibv_gid_entry
	switch rc := C.vsh_query_gid_ex(c.c, C.uint32_t(port), C.uint32_t(index), &e); syscall.Errno(rc) {
	case 0:
		return false, true
	case errENODATA:
		return true, true
	}
	return false, false
}

// QueryDevice implements verbs.Context (ibv_query_device).
func (c *context) QueryDevice() (verbs.DeviceAttr, error) {
	const op = "ibv_query_device"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return verbs.DeviceAttr{}, closedErr(op)
	}
	var a C.struct_ibv_device_attr
	if rc := C.vsh_query_device(c.c, &a); rc != 0 {
		return verbs.DeviceAttr{}, judge(op, syscall.Errno(rc), prediction{})
	}
	return deviceAttrFromC(&a), nil
}

func (c *context) predictPort(port uint8) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("port %d", port)}
	p.add(c.facts.profile().CheckPort("ibv_query_port", port))
	return p
}

// QueryPort implements verbs.Context (ibv_query_port).
func (c *context) QueryPort(port uint8) (verbs.PortAttr, error) {
	const op = "ibv_query_port"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return verbs.PortAttr{}, closedErr(op)
	}
	var a C.struct_ibv_port_attr
	rc := C.vsh_query_port(c.c, C.uint8_t(port), &a)
	if err := judge(op, syscall.Errno(rc), c.predictPort(port)); err != nil {
		return verbs.PortAttr{}, err
	}
	return portAttrFromC(&a), nil
}

func (c *context) predictGID(port uint8, index int) prediction {
	p := c.predictPort(port)
	if len(p.reasons) == 0 {
		p.add(c.facts.profile().GIDIndex("ibv_query_gid", index))
	}
	p.call += fmt.Sprintf(", index %d", index)
	return p
}

// queryGIDEntry is ibv_query_gid_ex, which both QueryGID and QueryGIDType
// use (libibverbs' own ibv_query_gid and ibv_query_gid_type do the same).
func (c *context) queryGIDEntry(op string, port uint8, index int) (C.struct_ibv_gid_entry, syscall.Errno, error) {
	var e C.struct_ibv_gid_entry
	if c.c == nil {
		return e, 0, closedErr(op)
	}
	if index < 0 || int64(index) > math.MaxUint32 {
		return e, 0, refuse(op, verbs.EINVAL, "GID indexes run from 0 to gid_tbl_len-1", "GID index %d is out of range", index)
	}
	rc := syscall.Errno(C.vsh_query_gid_ex(c.c, C.uint32_t(port), C.uint32_t(index), &e))
	return e, rc, nil
}

// QueryGID implements verbs.Context (ibv_query_gid). An empty slot reads as
// the zero GID with no error, as libibverbs 44 preserves ("empty GID").
func (c *context) QueryGID(port uint8, index int) (verbs.GID, error) {
	const op = "ibv_query_gid"
	c.mu.Lock()
	defer c.mu.Unlock()
	e, rc, err := c.queryGIDEntry(op, port, index)
	if err != nil {
		return verbs.GID{}, err
	}
	if rc == errENODATA {
		rc = 0 // libibverbs: "Preserve API behavior for empty GID"
	}
	if err := judge(op, rc, c.predictGID(port, index)); err != nil {
		return verbs.GID{}, err
	}
	return gidFromC(&e.gid), nil
}

// QueryGIDType implements verbs.Context (ibv_query_gid_type). An empty
// slot reads as IB/RoCE v1, as libibverbs' ibv_query_gid_type reports it.
func (c *context) QueryGIDType(port uint8, index int) (verbs.GIDType, error) {
	const op = "ibv_query_gid_type"
	c.mu.Lock()
	defer c.mu.Unlock()
	e, rc, err := c.queryGIDEntry(op, port, index)
	if err != nil {
		return 0, err
	}
	if rc == errENODATA {
		return verbs.GIDTypeRoCEv1, nil
	}
	if err := judge(op, rc, c.predictGID(port, index)); err != nil {
		return 0, err
	}
	return gidTypeFromC(e.gid_type), nil
}

// AllocPD implements verbs.Context (ibv_alloc_pd).
func (c *context) AllocPD() (verbs.PD, error) {
	const op = "ibv_alloc_pd"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	p, err := C.ibv_alloc_pd(c.c)
	if p == nil {
		return nil, judge(op, errnoOf(err), prediction{})
	}
	pd := &pd{ctx: c, c: p}
	c.pds = append(c.pds, pd)
	return pd, nil
}

// CreateCompChannel implements verbs.Context (ibv_create_comp_channel).
// The channel's fd is made non-blocking, so that GetEvent can wait with a
// timeout.
func (c *context) CreateCompChannel() (verbs.CompChannel, error) {
	const op = "ibv_create_comp_channel"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	ch, err := C.ibv_create_comp_channel(c.c)
	if ch == nil {
		return nil, judge(op, errnoOf(err), prediction{})
	}
	if rc := C.vsh_set_nonblock(ch.fd); rc != 0 {
		C.ibv_destroy_comp_channel(ch)
		return nil, judge("fcntl(channel fd, O_NONBLOCK)", syscall.Errno(rc), prediction{})
	}
	x := &channel{ctx: c, c: ch}
	c.channels = append(c.channels, x)
	return x, nil
}

// ownCQ returns the backend's CQ behind q, checking that it belongs to this
// context and is alive. Called with c.mu held.
func (c *context) ownCQ(op, role string, q verbs.CQ) (*cq, error) {
	x, ok := q.(*cq)
	switch {
	case !ok:
		return nil, refuse(op, verbs.EINVAL, "create the CQ with the same backend", "the %s (%T) was not created by the ibverbs backend", role, q)
	case x.ctx != c:
		return nil, refuse(op, verbs.EINVAL, "use a CQ of the same device context", "the %s belongs to another device context", role)
	case x.c == nil:
		return nil, refuse(op, verbs.EINVAL, "create a new CQ", "the %s was destroyed (ibv_destroy_cq)", role)
	}
	return x, nil
}

// CreateCQ implements verbs.Context (ibv_create_cq).
func (c *context) CreateCQ(attr verbs.CQInitAttr) (verbs.CQ, error) {
	const op = "ibv_create_cq"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	var ch *channel
	if attr.Channel != nil {
		var ok bool
		ch, ok = attr.Channel.(*channel)
		switch {
		case !ok:
			return nil, refuse(op, verbs.EINVAL, "create the channel with the same backend", "the completion channel (%T) was not created by the ibverbs backend", attr.Channel)
		case ch.ctx != c:
			return nil, refuse(op, verbs.EINVAL, "use a channel of the same device context", "the completion channel belongs to another device context")
		case ch.c == nil:
			return nil, refuse(op, verbs.EINVAL, "create a new channel", "the completion channel was destroyed")
		}
	}
	if attr.CQE < math.MinInt32 || attr.CQE > math.MaxInt32 || attr.CompVector < math.MinInt32 || attr.CompVector > math.MaxInt32 {
		return nil, refuse(op, verbs.EINVAL, "ask for 1 to max_cqe entries and comp_vector 0", "cqe %d or comp_vector %d does not fit a C int", attr.CQE, attr.CompVector)
	}
	var cch *C.struct_ibv_comp_channel
	if ch != nil {
		cch = ch.c
	}
	pred := predictCreateCQ(&c.facts, attr.CQE, attr.CompVector)
	q, err := C.ibv_create_cq(c.c, C.int(attr.CQE), nil, cch, C.int(attr.CompVector))
	if q == nil {
		return nil, judge(op, errnoOf(err), pred)
	}
	_ = judge(op, 0, pred)
	x := &cq{ctx: c, c: q, ch: ch, userCtx: attr.Context, cqe: int(q.cqe)}
	c.cqs[q] = x
	if ch != nil {
		ch.cqs++
	}
	return x, nil
}

// waitMillis turns a wait into poll(2)'s milliseconds.
func waitMillis(d time.Duration) int {
	switch {
	case d <= 0:
		return 0
	case d >= time.Duration(math.MaxInt32)*time.Millisecond:
		return math.MaxInt32
	}
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

// readEvent calls try under c.mu until it finds an event or the wait is
// over, sleeping in poll(2) on fd (outside the lock) between tries. try
// returns EAGAIN when nothing is pending.
func (c *context) readEvent(op string, wait time.Duration, fd func() (C.int, error), try func() (syscall.Errno, error)) error {
	deadline := time.Now().Add(wait)
	for {
		c.mu.Lock()
		n, err := fd()
		if err != nil {
			c.mu.Unlock()
			return err
		}
		rc, err := try()
		c.mu.Unlock()
		if err != nil || rc == 0 {
			return err
		}
		if rc != syscall.EAGAIN {
			return judge(op, rc, prediction{})
		}
		left := time.Until(deadline)
		if left <= 0 {
			why, hint := explainErrno(op, syscall.EAGAIN)
			if wait > 0 {
				why += fmt.Sprintf(" (waited %v)", wait)
			}
			return &verbs.Error{Op: op, Errno: verbs.EAGAIN, Why: why, Hint: hint}
		}
		switch rc := syscall.Errno(C.vsh_wait_readable(n, C.int(waitMillis(left)))); rc {
		case 0, syscall.ETIMEDOUT:
		default:
			return judge("poll", rc, prediction{})
		}
	}
}

// GetAsyncEvent implements verbs.Context (ibv_get_async_event on the
// non-blocking async fd, after poll(2) for up to wait).
func (c *context) GetAsyncEvent(wait time.Duration) (verbs.AsyncEvent, error) {
	const op = "ibv_get_async_event"
	var ev verbs.AsyncEvent
	err := c.readEvent(op, wait, func() (C.int, error) {
		if c.c == nil {
			return 0, closedErr(op)
		}
		return c.c.async_fd, nil
	}, func() (syscall.Errno, error) {
		var e C.struct_ibv_async_event
		if rc := syscall.Errno(C.vsh_get_async_event(c.c, &e)); rc != 0 {
			return rc, nil
		}
		ev = c.asyncEventFromC(&e)
		return 0, nil
	})
	return ev, err
}

// asyncEventFromC converts an event and counts it as not yet acknowledged
// on its object (libibverbs counts it reported). An event on an object the
// backend does not know is acknowledged at once. Called with c.mu held.
func (c *context) asyncEventFromC(e *C.struct_ibv_async_event) verbs.AsyncEvent {
	t := verbs.EventType(e.event_type)
	ev := verbs.AsyncEvent{Type: t}
	elem := C.vsh_async_element(e)
	known := true
	switch eventElement(t) {
	case elemQP:
		if q := c.qps[(*C.struct_ibv_qp)(elem)]; q != nil {
			q.asyncUnacked++
			ev.QP = q
		} else {
			known = false
		}
	case elemCQ:
		if q := c.cqs[(*C.struct_ibv_cq)(elem)]; q != nil {
			q.asyncUnacked++
			ev.CQ = q
		} else {
			known = false
		}
	case elemSRQ:
		if s := c.srqs[(*C.struct_ibv_srq)(elem)]; s != nil {
			s.asyncUnacked++
			ev.SRQ = s
		} else {
			known = false
		}
	case elemPort:
		ev.PortNum = uint8(C.vsh_async_port(e))
	default:
		known = false
	}
	if !known {
		C.vsh_ack_async_event(C.int(t), elem, C.vsh_async_port(e))
	} else if eventElement(t) == elemPort {
		// Port and device events hold nothing; acknowledging them is a
		// formality libibverbs keeps, done here so it is never forgotten.
		C.vsh_ack_async_event(C.int(t), nil, C.vsh_async_port(e))
	}
	return ev
}

type element int

const (
	elemQP element = iota
	elemCQ
	elemSRQ
	elemPort
	elemOther
)

// eventElement says which member of ibv_async_event.element an event type
// uses (ibv_get_async_event(3)).
func eventElement(t verbs.EventType) element {
	switch t {
	case verbs.EventQPFatal, verbs.EventQPReqErr, verbs.EventQPAccessErr, verbs.EventCommEst, verbs.EventSQDrained,
		verbs.EventPathMig, verbs.EventPathMigErr, verbs.EventQPLastWQEReached:
		return elemQP
	case verbs.EventCQErr:
		return elemCQ
	case verbs.EventSRQErr, verbs.EventSRQLimitReached:
		return elemSRQ
	case verbs.EventDeviceFatal, verbs.EventPortActive, verbs.EventPortErr, verbs.EventLIDChange, verbs.EventPKeyChange,
		verbs.EventSMChange, verbs.EventClientReregister, verbs.EventGIDChange:
		return elemPort
	}
	return elemOther
}

// AckAsyncEvent implements verbs.Context (ibv_ack_async_event). An event
// that was not returned by GetAsyncEvent, or is acknowledged twice, is
// ignored: libibverbs would count it and later wait forever in a destroy.
func (c *context) AckAsyncEvent(e verbs.AsyncEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return
	}
	t := C.int(e.Type)
	switch {
	case e.QP != nil:
		if q, ok := e.QP.(*qp); ok && q.ctx == c && q.c != nil && q.asyncUnacked > 0 {
			q.asyncUnacked--
			C.vsh_ack_async_event(t, unsafe.Pointer(q.c), 0)
		}
	case e.CQ != nil:
		if q, ok := e.CQ.(*cq); ok && q.ctx == c && q.c != nil && q.asyncUnacked > 0 {
			q.asyncUnacked--
			C.vsh_ack_async_event(t, unsafe.Pointer(q.c), 0)
		}
	case e.SRQ != nil:
		if s, ok := e.SRQ.(*srq); ok && s.ctx == c && s.c != nil && s.asyncUnacked > 0 {
			s.asyncUnacked--
			C.vsh_ack_async_event(t, unsafe.Pointer(s.c), 0)
		}
	}
}

// Close implements verbs.Context (ibv_close_device). Like a process that
// closes its uverbs file, it takes every object still open with it: they
// are destroyed here first (events acknowledged, QPs, SRQs, XRC domains,
// AHs, MRs, CQs, channels, PDs), their memory freed (and the files naming
// XRC domains closed), and using them afterwards is an error.
func (c *context) Close() error {
	const op = "ibv_close_device"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return refuse(op, verbs.EINVAL, "close each context once", "the device context is already closed")
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	for _, q := range c.qps {
		for q.asyncUnacked > 0 {
			q.asyncUnacked--
			C.vsh_ack_async_event(C.int(verbs.EventQPFatal), unsafe.Pointer(q.c), 0)
		}
		for _, m := range q.mcast {
			gid := m.gid
			var g C.union_ibv_gid
			gidToC(gid, &g)
			C.ibv_detach_mcast(q.c, &g, C.uint16_t(m.lid))
		}
		q.mcast = nil
		C.ibv_destroy_qp(q.c)
		q.release()
	}
	for _, s := range c.srqs {
		for s.asyncUnacked > 0 {
			s.asyncUnacked--
			C.vsh_ack_async_event(C.int(verbs.EventSRQErr), unsafe.Pointer(s.c), 0)
		}
		C.ibv_destroy_srq(s.c)
		s.release()
	}
	for _, x := range c.xrcds {
		if x.c != nil {
			C.vsh_close_xrcd(x.c)
			x.release()
		}
	}
	for _, a := range c.ahs {
		if a.c != nil {
			C.ibv_destroy_ah(a.c)
			a.c = nil
		}
	}
	for m := range c.mrs {
		C.ibv_dereg_mr(m.c)
		m.release()
	}
	for _, q := range c.cqs {
		if n := q.compUnacked; n > 0 {
			C.ibv_ack_cq_events(q.c, C.uint(n))
			q.compUnacked = 0
		}
		for q.asyncUnacked > 0 {
			q.asyncUnacked--
			C.vsh_ack_async_event(C.int(verbs.EventCQErr), unsafe.Pointer(q.c), 0)
		}
		q.cqe = int(q.c.cqe)
		C.ibv_destroy_cq(q.c)
		q.release()
	}
	for _, ch := range c.channels {
		if ch.c != nil {
			C.ibv_destroy_comp_channel(ch.c)
			ch.c = nil
		}
	}
	for _, p := range c.pds {
		if p.c != nil {
			C.ibv_dealloc_pd(p.c)
			p.c = nil
		}
	}
	c.qps, c.cqs, c.srqs, c.mrs = map[*C.struct_ibv_qp]*qp{}, map[*C.struct_ibv_cq]*cq{}, map[*C.struct_ibv_srq]*srq{}, map[*mr]struct{}{}
	c.pds, c.channels, c.ahs, c.xrcds = nil, nil, nil, nil
	rc := C.ibv_close_device(c.c)
	c.c = nil
	if rc != 0 {
		return judge(op, syscall.Errno(rc), prediction{})
	}
	return nil
}
