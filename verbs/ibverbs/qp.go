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
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// ---------------------------------------------------------------- QP

// qp is a queue pair (struct ibv_qp).
type qp struct {
	ctx     *context
	pd      *pd   // nil for XRC_RECV
	xrcd    *xrcd // XRC_RECV: the domain it was made or opened through
	typ     verbs.QPType
	num     uint32
	sendCQ  *cq
	recvCQ  *cq
	srq     *srq
	sigAll  bool
	userCtx any
	caps    verbs.QPCap // what the device gave (ibv_query_qp after create)

	// guarded by ctx.mu
	c            *C.struct_ibv_qp // nil once destroyed
	port         uint8            // the port bound by IBV_QP_PORT; 0 before
	mcast        []mcastEntry
	asyncUnacked int

	// The data path's C buffers, reused from post to post.
	sendMu sync.Mutex
	sbuf   sendBuf
	// inlineMR is the MR an inline SGE was last found in, looked at first
	// (sendMu); a deregistered MR contains nothing.
	inlineMR *mr
	recvMu   sync.Mutex
	rbuf     recvBuf
}

var _ verbs.QP = (*qp)(nil)

type mcastEntry struct {
	gid verbs.GID
	lid uint16
}

// ownSRQ returns the backend's SRQ behind s for a call on ctx. Called with
// ctx.mu held.
func (c *context) ownSRQ(op string, s verbs.SRQ) (*srq, error) {
	x, ok := s.(*srq)
	switch {
	case !ok || x == nil:
		return nil, refuse(op, verbs.EINVAL, "create the SRQ with the same backend", "the SRQ (%T) was not created by the ibverbs backend", s)
	case x.ctx != c:
		return nil, refuse(op, verbs.EINVAL, "use an SRQ of the same device context", "the SRQ belongs to another device context")
	case x.c == nil:
		return nil, refuse(op, verbs.EINVAL, "create a new SRQ", "the SRQ was destroyed (ibv_destroy_srq)")
	}
	return x, nil
}

// needsCQs says which CQs libibverbs 44 dereferences when it creates a QP
// of type t (ibv_icmd_create_qp): send and receive for RC, UC, UD and raw
// packet QPs, send only for XRC send; none for types it refuses first.
func needsCQs(t verbs.QPType) (send, recv bool) {
	switch t {
	case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD, verbs.QPTypeRawPacket:
		return true, true
	case verbs.QPTypeXRCSend:
		return true, false
	}
	return false, false
}

// CreateQP implements verbs.PD (ibv_create_qp). The capabilities the
// device gave are read back with ibv_query_qp.
func (p *pd) CreateQP(attr verbs.QPInitAttr) (verbs.QP, error) {
	const op = "ibv_create_qp"
	c := p.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := p.check(op); err != nil {
		return nil, err
	}
	return c.createQP(op, p, nil, attr)
}

// PD implements verbs.QP. An XRC_RECV QP has none: it belongs to its XRC
// domain.
func (q *qp) PD() verbs.PD {
	if q.pd == nil {
		return nil
	}
	return q.pd
}

// Num implements verbs.QP (ibv_qp.qp_num).
func (q *qp) Num() uint32 { return q.num }

// Type implements verbs.QP.
func (q *qp) Type() verbs.QPType { return q.typ }

// check returns an error when the QP cannot be used. Called with ctx.mu
// or ctx.dataMu held.
func (q *qp) check(op string) error {
	if q.ctx.c == nil {
		return closedErr(op)
	}
	if q.c == nil {
		return deadErr(op, "the QP", "ibv_destroy_qp")
	}
	return nil
}

// stateNow asks the kernel for the QP's state and drain status
// (ibv_query_qp(IBV_QP_STATE)); ok is false when it cannot tell.
func (q *qp) stateNow() (state verbs.QPState, draining, ok bool) {
	var qa C.struct_ibv_qp_attr
	var qi C.struct_ibv_qp_init_attr
	if C.ibv_query_qp(q.c, &qa, C.IBV_QP_STATE, &qi) != 0 {
		return verbs.QPState(q.c.state), false, false
	}
	return verbs.QPState(qa.qp_state), qa.sq_draining != 0, true
}

// Modify implements verbs.QP (ibv_modify_qp). libibverbs decides; the
// prediction is made from the QP's state as the kernel reports it just
// before the call.
func (q *qp) Modify(attr *verbs.QPAttr, mask verbs.QPAttrMask) error {
	const op = "ibv_modify_qp"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := q.check(op); err != nil {
		return err
	}
	if attr == nil {
		return refuse(op, verbs.EINVAL, "pass the attributes the mask names", "attr is nil")
	}
	cur, draining, known := q.stateNow()
	// A drain seen in progress may finish between the query and the call:
	// then the rule is a possibility, not a certainty.
	f := modifyFacts{Type: q.typ, Cur: cur, SQDraining: draining, DrainKnown: known && !draining, Port: q.port}
	pred := predictModifyQP(&c.facts, f, attr, mask)
	var ca C.struct_ibv_qp_attr
	qpAttrToC(attr, &ca)
	rc := syscall.Errno(C.ibv_modify_qp(q.c, &ca, C.int(int32(mask))))
	if err := judge(op, rc, pred); err != nil {
		return err
	}
	switch {
	case mask&verbs.AttrPort != 0:
		q.port = attr.PortNum
	case mask&verbs.AttrAV != 0 && !(mask&verbs.AttrState != 0 && attr.State == verbs.QPSRTR):
		q.port = attr.AH.PortNum // uverbs adds IBV_QP_PORT from the AV
	}
	return nil
}

// Query implements verbs.QP (ibv_query_qp).
func (q *qp) Query(mask verbs.QPAttrMask) (verbs.QPAttr, verbs.QPInitAttr, error) {
	const op = "ibv_query_qp"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := q.check(op); err != nil {
		return verbs.QPAttr{}, verbs.QPInitAttr{}, err
	}
	var qa C.struct_ibv_qp_attr
	var qi C.struct_ibv_qp_init_attr
	if err := judge(op, syscall.Errno(C.ibv_query_qp(q.c, &qa, C.int(int32(mask)), &qi)), prediction{}); err != nil {
		return verbs.QPAttr{}, verbs.QPInitAttr{}, err
	}
	init := verbs.QPInitAttr{
		Type:     verbs.QPType(qi.qp_type),
		Cap:      capFromC(&qi.cap),
		SQSigAll: qi.sq_sig_all != 0,
		Context:  q.userCtx,
	}
	if x := c.cqs[qi.send_cq]; x != nil {
		init.SendCQ = x
	} else if q.sendCQ != nil {
		init.SendCQ = q.sendCQ
	}
	if x := c.cqs[qi.recv_cq]; x != nil {
		init.RecvCQ = x
	} else if q.recvCQ != nil {
		init.RecvCQ = q.recvCQ
	}
	if x := c.srqs[qi.srq]; x != nil {
		init.SRQ = x
	} else if q.srq != nil {
		init.SRQ = q.srq
	}
	if init.Type == 0 {
		init.Type = q.typ
	}
	return qpAttrFromC(&qa), init, nil
}

// sendBuf holds one QP's send batch in C memory: the flat WRs the Go side
// fills, the ibv_send_wr chain C builds from them, and the SGEs.
type sendBuf struct {
	flat   *C.struct_vsh_send
	wrs    *C.struct_ibv_send_wr
	nwr    int
	sges   *C.struct_ibv_sge
	nsge   int
	failed bool
}

// recvBuf is sendBuf for receives.
type recvBuf struct {
	flat *C.struct_vsh_recv
	wrs  *C.struct_ibv_recv_wr
	nwr  int
	sges *C.struct_ibv_sge
	nsge int
}

// grow makes room for n elements of size each at *p (cap *have), keeping
// the buffer when it is large enough: the steady state allocates nothing.
func grow(p *unsafe.Pointer, have *int, n int, size uintptr) bool {
	if n <= *have {
		return true
	}
	c := max(n, 2**have, 16)
	np := C.realloc(*p, C.size_t(uintptr(c)*size))
	if np == nil {
		return false
	}
	*p, *have = np, c
	return true
}

// reserveWRs makes room for nwr work requests, in their flat Go-facing form
// (flatSize each) and as libibverbs' chain (wrSize each), and for nsge SGEs.
// The SGE array is never empty, so it always has an address.
func reserveWRs(flat *unsafe.Pointer, flatSize uintptr, wrs *unsafe.Pointer, wrSize uintptr, haveWR *int,
	sges *unsafe.Pointer, haveSGE *int, nwr, nsge int) bool {
	have := *haveWR
	if !grow(flat, &have, nwr, flatSize) {
		return false
	}
	have = *haveWR
	if !grow(wrs, &have, nwr, wrSize) {
		return false
	}
	*haveWR = have
	return grow(sges, haveSGE, max(nsge, 1), unsafe.Sizeof(C.struct_ibv_sge{}))
}

// ptr views a typed C pointer field as an unsafe.Pointer to grow it in place.
func ptr[T any](p **T) *unsafe.Pointer { return (*unsafe.Pointer)(unsafe.Pointer(p)) }

func (b *sendBuf) reserve(nwr, nsge int) bool {
	return reserveWRs(ptr(&b.flat), unsafe.Sizeof(C.struct_vsh_send{}), ptr(&b.wrs), unsafe.Sizeof(C.struct_ibv_send_wr{}),
		&b.nwr, ptr(&b.sges), &b.nsge, nwr, nsge)
}

func (b *recvBuf) reserve(nwr, nsge int) bool {
	return reserveWRs(ptr(&b.flat), unsafe.Sizeof(C.struct_vsh_recv{}), ptr(&b.wrs), unsafe.Sizeof(C.struct_ibv_recv_wr{}),
		&b.nwr, ptr(&b.sges), &b.nsge, nwr, nsge)
}

func (b *sendBuf) free() {
	C.free(unsafe.Pointer(b.flat))
	C.free(unsafe.Pointer(b.wrs))
	C.free(unsafe.Pointer(b.sges))
	*b = sendBuf{}
}

func (b *recvBuf) free() {
	C.free(unsafe.Pointer(b.flat))
	C.free(unsafe.Pointer(b.wrs))
	C.free(unsafe.Pointer(b.sges))
	*b = recvBuf{}
}

// maxBatchSGEs bounds the SGEs of one post (the C buffers behind it).
const maxBatchSGEs = 1 << 20

// fillSGEs copies wr's SGEs to dst.
func fillSGEs(dst []C.struct_ibv_sge, sg []verbs.SGE) {
	for j := range sg {
		dst[j].addr = C.uint64_t(sg[j].Addr)
		dst[j].length = C.uint32_t(sg[j].Length)
		dst[j].lkey = C.uint32_t(sg[j].LKey)
	}
}

// inlineCovered reports whether every SGE of an inline send lies in memory
// of an MR of this context: rxe's provider copies inline data with memcpy
// from the SGE's address, so anything else would crash the process. Called
// with ctx.dataMu and q.sendMu held.
func (q *qp) inlineCovered(sg []verbs.SGE) (int, bool) {
	c := q.ctx
next:
	for j, s := range sg {
		if s.Length == 0 {
			continue
		}
		if m := q.inlineMR; m != nil && m.contains(s.Addr, uint64(s.Length)) {
			continue
		}
		for m := range c.mrs {
			if m.contains(s.Addr, uint64(s.Length)) {
				q.inlineMR = m
				continue next
			}
		}
		return j, false
	}
	return 0, true
}

// checkSend refuses what libibverbs would crash on. Called with
// ctx.dataMu held.
func (q *qp) checkSend(i int, wr *verbs.SendWR, total int) error {
	const op = "ibv_post_send"
	if total > maxBatchSGEs {
		return refuse(op, verbs.EINVAL, "post fewer SGEs at once", "WR #%d brings the batch to %d SGEs, more than vsh passes in one post (%d)", i+1, total, maxBatchSGEs)
	}
	if q.typ == verbs.QPTypeUD {
		if wr.AH == nil {
			return refuse(op, verbs.EINVAL, "create an AH (create_ah) for the destination and give it with remote_qpn and remote_qkey",
				"WR #%d is a UD send without an address handle; rxe's provider would dereference the missing AH", i+1)
		}
		a, ok := wr.AH.(*ah)
		switch {
		case !ok || a == nil:
			return refuse(op, verbs.EINVAL, "create the AH with the same backend", "WR #%d: the AH (%T) was not created by the ibverbs backend", i+1, wr.AH)
		case a.pd.ctx != q.ctx:
			return refuse(op, verbs.EINVAL, "create the AH on this QP's device context", "WR #%d: the AH belongs to another device context", i+1)
		case a.c == nil:
			return refuse(op, verbs.EINVAL, "create a new AH", "WR #%d: the AH was destroyed (ibv_destroy_ah)", i+1)
		}
	}
	if wr.Flags&verbs.SendInline != 0 {
		if j, ok := q.inlineCovered(wr.SGList); !ok {
			s := wr.SGList[j]
			return refuse(op, verbs.EFAULT, "point inline SGEs at an MR's memory (MR.Addr() .. Addr()+Length())",
				"WR #%d is inline but its SGE #%d [%#x, +%d) is not inside memory this backend registered; rxe's provider would copy it with memcpy and crash the process",
				i+1, j+1, s.Addr, s.Length)
		}
	}
	return nil
}

// handle passes a pointer to C memory as a uintptr_t (see shim.h).
func handle(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// PostSend implements verbs.QP (ibv_post_send): the batch is laid out in
// the QP's C buffers and posted with one call into C.
func (q *qp) PostSend(wrs []verbs.SendWR) (int, error) {
	const op = "ibv_post_send"
	c := q.ctx
	c.dataMu.RLock()
	defer c.dataMu.RUnlock()
	if err := q.check(op); err != nil {
		return 0, err
	}
	if len(wrs) == 0 {
		return 0, nil
	}
	q.sendMu.Lock()
	defer q.sendMu.Unlock()
	m, total := len(wrs), 0
	var refusal error
	for i := range wrs {
		if err := q.checkSend(i, &wrs[i], total+len(wrs[i].SGList)); err != nil {
			m, refusal = i, err
			break
		}
		total += len(wrs[i].SGList)
	}
	if m == 0 {
		return 0, refusal
	}
	if !q.sbuf.reserve(m, total) {
		return 0, judge("realloc", syscall.ENOMEM, prediction{})
	}
	flat := unsafe.Slice(q.sbuf.flat, m)
	sges := unsafe.Slice(q.sbuf.sges, max(total, 1))
	f := sendFacts{Type: q.typ, State: verbs.QPState(q.c.state), MaxSGE: q.caps.MaxSendSGE, MaxInline: q.caps.MaxInlineData}
	predBad, predWhy := -1, reason{}
	off := 0
	for i := 0; i < m; i++ {
		wr := &wrs[i]
		fl := &flat[i]
		*fl = C.struct_vsh_send{}
		fl.wr_id = C.uint64_t(wr.WRID)
		fl.remote_addr = C.uint64_t(wr.RemoteAddr)
		fl.compare_add = C.uint64_t(wr.CompareAdd)
		fl.swap = C.uint64_t(wr.Swap)
		if a, ok := wr.AH.(*ah); ok && a != nil && q.typ == verbs.QPTypeUD {
			fl.ah = a.c
		}
		fl.num_sge = C.uint32_t(len(wr.SGList))
		fl.opcode = C.uint32_t(wr.Opcode)
		fl.send_flags = C.uint32_t(wr.Flags)
		fl.imm = C.uint32_t(wr.Imm)
		fl.inv_rkey = C.uint32_t(wr.InvRKey)
		fl.rkey = C.uint32_t(wr.RKey)
		fl.remote_qpn = C.uint32_t(wr.RemoteQPN)
		fl.remote_qkey = C.uint32_t(wr.RemoteQKey)
		fl.remote_srqn = C.uint32_t(wr.RemoteSRQN)
		fillSGEs(sges[off:off+len(wr.SGList)], wr.SGList)
		off += len(wr.SGList)
		if predBad < 0 {
			var length uint64
			for _, s := range wr.SGList {
				length += uint64(s.Length)
			}
			if r, ok := sendWRReason(&f, wr, length); !ok {
				predBad, predWhy = i, r
			}
		}
	}
	queued := m
	if predBad >= 0 {
		queued = predBad
	}
	door, doorOK := sendDoorbellReason(f.State, queued)
	r := C.vsh_post_send(handle(unsafe.Pointer(q.c)), handle(unsafe.Pointer(q.sbuf.flat)), C.int(m), handle(unsafe.Pointer(q.sbuf.wrs)), q.sbuf.sges)
	n, err := judgePost(op, syscall.Errno(r.err), int(r.val), m, predBad, predWhy, door, !doorOK,
		postQueue{name: "send queue", depth: q.caps.MaxSendWR, grow: "create the QP with a larger max_send_wr"})
	if err == nil && refusal != nil {
		return m, refusal
	}
	return n, err
}

// PostRecv implements verbs.QP (ibv_post_recv), one call into C per batch.
func (q *qp) PostRecv(wrs []verbs.RecvWR) (int, error) {
	const op = "ibv_post_recv"
	c := q.ctx
	c.dataMu.RLock()
	defer c.dataMu.RUnlock()
	if err := q.check(op); err != nil {
		return 0, err
	}
	if len(wrs) == 0 {
		return 0, nil
	}
	q.recvMu.Lock()
	defer q.recvMu.Unlock()
	door, doorOK := recvPreReason(verbs.QPState(q.c.state), q.srq != nil)
	return postRecv(op, &q.rbuf, wrs, q.caps.MaxRecvSGE, "QP", door, !doorOK,
		postQueue{name: "receive queue", depth: q.caps.MaxRecvWR, grow: "create the QP with a larger max_recv_wr"},
		func(flat *C.struct_vsh_recv, n C.int, w *C.struct_ibv_recv_wr, s *C.struct_ibv_sge) C.struct_vsh_result {
			return C.vsh_post_recv(handle(unsafe.Pointer(q.c)), flat, n, handle(unsafe.Pointer(w)), s)
		})
}

// postRecv lays out a receive batch and posts it with one call into C.
func postRecv(op string, b *recvBuf, wrs []verbs.RecvWR, maxSGE int, what string, door reason, hasDoor bool, pq postQueue,
	post func(*C.struct_vsh_recv, C.int, *C.struct_ibv_recv_wr, *C.struct_ibv_sge) C.struct_vsh_result) (int, error) {
	m, total := len(wrs), 0
	var refusal error
	for i := range wrs {
		if total+len(wrs[i].SGList) > maxBatchSGEs {
			m = i
			refusal = refuse(op, verbs.EINVAL, "post fewer SGEs at once", "WR #%d brings the batch to more than %d SGEs", i+1, maxBatchSGEs)
			break
		}
		total += len(wrs[i].SGList)
	}
	if m == 0 {
		return 0, refusal
	}
	if !b.reserve(m, total) {
		return 0, judge("realloc", syscall.ENOMEM, prediction{})
	}
	flat := unsafe.Slice(b.flat, m)
	sges := unsafe.Slice(b.sges, max(total, 1))
	predBad, predWhy := -1, reason{}
	off := 0
	for i := 0; i < m; i++ {
		wr := &wrs[i]
		flat[i].wr_id = C.uint64_t(wr.WRID)
		flat[i].num_sge = C.uint32_t(len(wr.SGList))
		fillSGEs(sges[off:off+len(wr.SGList)], wr.SGList)
		off += len(wr.SGList)
		if predBad < 0 && !hasDoor {
			if r, ok := recvWRReason(wr, maxSGE, what); !ok {
				predBad, predWhy = i, r
			}
		}
	}
	r := post(b.flat, C.int(m), b.wrs, b.sges)
	n, err := judgePost(op, syscall.Errno(r.err), int(r.val), m, predBad, predWhy, door, hasDoor, pq)
	if err == nil && refusal != nil {
		return m, refusal
	}
	return n, err
}

// AttachMcast implements verbs.QP (ibv_attach_mcast).
func (q *qp) AttachMcast(gid verbs.GID, lid uint16) error {
	const op = "ibv_attach_mcast"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := q.check(op); err != nil {
		return err
	}
	attached := q.mcastIndex(gid, lid) >= 0
	var g C.union_ibv_gid
	gidToC(gid, &g)
	rc := syscall.Errno(C.ibv_attach_mcast(q.c, &g, C.uint16_t(lid)))
	if err := judge(op, rc, predictAttachMcast(q.typ, gid, attached)); err != nil {
		return err
	}
	if !attached {
		q.mcast = append(q.mcast, mcastEntry{gid, lid})
	}
	return nil
}

func (q *qp) mcastIndex(gid verbs.GID, lid uint16) int {
	for i, m := range q.mcast {
		if m.gid == gid && m.lid == lid {
			return i
		}
	}
	return -1
}

// DetachMcast implements verbs.QP (ibv_detach_mcast).
func (q *qp) DetachMcast(gid verbs.GID, lid uint16) error {
	const op = "ibv_detach_mcast"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := q.check(op); err != nil {
		return err
	}
	i := q.mcastIndex(gid, lid)
	var g C.union_ibv_gid
	gidToC(gid, &g)
	rc := syscall.Errno(C.ibv_detach_mcast(q.c, &g, C.uint16_t(lid)))
	if err := judge(op, rc, predictDetachMcast(gid, i >= 0)); err != nil {
		return err
	}
	if i >= 0 {
		q.mcast = append(q.mcast[:i], q.mcast[i+1:]...)
	}
	return nil
}

// release forgets the QP and frees its buffers. Called with ctx.mu and
// ctx.dataMu held.
func (q *qp) release() {
	q.sendMu.Lock()
	q.sbuf.free()
	q.sendMu.Unlock()
	q.recvMu.Lock()
	q.rbuf.free()
	q.recvMu.Unlock()
	q.c = nil
}

// Destroy implements verbs.QP (ibv_destroy_qp). Unacknowledged async events
// are refused before the call: ibv_destroy_qp would wait for their
// acknowledgement forever.
func (q *qp) Destroy() error {
	const op = "ibv_destroy_qp"
	c := q.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := q.check(op); err != nil {
		return err
	}
	if q.asyncUnacked > 0 {
		return refuse(op, verbs.EBUSY, "acknowledge every async event you read (ibv_ack_async_event; vsh's async_events does it for you)",
			"%d async event(s) of this QP are not acknowledged; ibv_destroy_qp would wait for them forever", q.asyncUnacked)
	}
	var users []string
	if len(q.mcast) > 0 {
		users = append(users, fmt.Sprintf("%d multicast group(s)", len(q.mcast)))
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	pred := predictBusy(op, "the QP", users, "detach it from its multicast groups first (detach_mcast)")
	cqp := q.c
	if err := judge(op, syscall.Errno(C.ibv_destroy_qp(cqp)), pred); err != nil {
		return err
	}
	delete(c.qps, cqp)
	q.release()
	if q.pd != nil {
		q.pd.qps--
	}
	if q.xrcd != nil {
		q.xrcd.qps--
	}
	for _, u := range []*cq{q.sendCQ, q.recvCQ} {
		if u != nil {
			u.users--
		}
	}
	if q.srq != nil {
		q.srq.users--
	}
	return nil
}

// ---------------------------------------------------------------- SRQ

// srq is a shared receive queue (struct ibv_srq).
type srq struct {
	ctx     *context
	pd      *pd
	userCtx any
	typ     verbs.SRQType
	xrcd    *xrcd             // an XRC SRQ's domain
	cq      *cq               // an XRC SRQ's CQ
	c       *C.struct_ibv_srq // nil once destroyed; guarded by ctx.mu

	// guarded by ctx.mu
	maxWR, maxSGE int // what the device gave (ibv_query_srq)
	users         int // QPs using it
	asyncUnacked  int

	recvMu sync.Mutex
	rbuf   recvBuf
}

var _ verbs.SRQ = (*srq)(nil)

// CreateSRQ implements verbs.PD (ibv_create_srq).
func (p *pd) CreateSRQ(attr verbs.SRQInitAttr) (verbs.SRQ, error) {
	const op = "ibv_create_srq"
	c := p.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := p.check(op); err != nil {
		return nil, err
	}
	if name, v, ok := srqAttrFits(attr.Attr); !ok {
		return nil, refuse(op, verbs.EINVAL, "give max_wr and max_sge from 1 to the device's limits", "%s %d does not fit the uint32_t of struct ibv_srq_attr", name, v)
	}
	var ia C.struct_ibv_srq_init_attr
	srqAttrToC(attr.Attr, &ia.attr)
	pred := predictCreateSRQ(&c.facts, attr.Attr)
	s, err := C.ibv_create_srq(p.c, &ia)
	if s == nil {
		return nil, judge(op, errnoOf(err), pred)
	}
	_ = judge(op, 0, pred)
	x := &srq{ctx: c, pd: p, c: s, userCtx: attr.Context, maxWR: int(ia.attr.max_wr), maxSGE: int(ia.attr.max_sge)}
	var qa C.struct_ibv_srq_attr
	if C.ibv_query_srq(s, &qa) == 0 {
		x.maxWR, x.maxSGE = int(qa.max_wr), int(qa.max_sge)
	}
	c.srqs[s] = x
	p.srqs++
	return x, nil
}

// PD implements verbs.SRQ.
func (s *srq) PD() verbs.PD {
	if s.pd == nil {
		return nil
	}
	return s.pd
}

func (s *srq) check(op string) error {
	if s.ctx.c == nil {
		return closedErr(op)
	}
	if s.c == nil {
		return deadErr(op, "the SRQ", "ibv_destroy_srq")
	}
	return nil
}

// PostRecv implements verbs.SRQ (ibv_post_srq_recv), one call into C per
// batch.
func (s *srq) PostRecv(wrs []verbs.RecvWR) (int, error) {
	const op = "ibv_post_srq_recv"
	c := s.ctx
	c.dataMu.RLock()
	defer c.dataMu.RUnlock()
	if err := s.check(op); err != nil {
		return 0, err
	}
	if len(wrs) == 0 {
		return 0, nil
	}
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	return postRecv(op, &s.rbuf, wrs, s.maxSGE, "SRQ", reason{}, false,
		postQueue{name: "SRQ", depth: s.maxWR, grow: "resize it with modify_srq max_wr"},
		func(flat *C.struct_vsh_recv, n C.int, w *C.struct_ibv_recv_wr, sg *C.struct_ibv_sge) C.struct_vsh_result {
			return C.vsh_post_srq_recv(handle(unsafe.Pointer(s.c)), flat, n, handle(unsafe.Pointer(w)), sg)
		})
}

// Modify implements verbs.SRQ (ibv_modify_srq).
func (s *srq) Modify(attr verbs.SRQAttr, mask verbs.SRQAttrMask) error {
	const op = "ibv_modify_srq"
	c := s.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.check(op); err != nil {
		return err
	}
	if name, v, ok := srqAttrFits(attr); !ok {
		return refuse(op, verbs.EINVAL, "give values from 0 to the device's limits", "%s %d does not fit the uint32_t of struct ibv_srq_attr", name, v)
	}
	if uint64(mask) > math.MaxInt32 {
		return refuse(op, verbs.EINVAL, "use max_wr and/or limit", "mask %#x is out of range", uint64(mask))
	}
	curMaxWR, curLimit := s.maxWR, 0
	var qa C.struct_ibv_srq_attr
	if C.ibv_query_srq(s.c, &qa) == 0 {
		curMaxWR, curLimit = int(qa.max_wr), int(qa.srq_limit)
	}
	pred := predictModifySRQ(&c.facts, curMaxWR, curLimit, attr, mask)
	var a C.struct_ibv_srq_attr
	srqAttrToC(attr, &a)
	// A resize swaps the queue's mapping: keep posters out meanwhile.
	c.dataMu.Lock()
	rc := syscall.Errno(C.ibv_modify_srq(s.c, &a, C.int(mask)))
	c.dataMu.Unlock()
	if err := judge(op, rc, pred); err != nil {
		return err
	}
	if C.ibv_query_srq(s.c, &qa) == 0 {
		s.maxWR, s.maxSGE = int(qa.max_wr), int(qa.max_sge)
	}
	return nil
}

// Query implements verbs.SRQ (ibv_query_srq).
func (s *srq) Query() (verbs.SRQAttr, error) {
	const op = "ibv_query_srq"
	c := s.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.check(op); err != nil {
		return verbs.SRQAttr{}, err
	}
	var qa C.struct_ibv_srq_attr
	if err := judge(op, syscall.Errno(C.ibv_query_srq(s.c, &qa)), prediction{}); err != nil {
		return verbs.SRQAttr{}, err
	}
	return srqAttrFromC(&qa), nil
}

func (s *srq) release() {
	s.recvMu.Lock()
	s.rbuf.free()
	s.recvMu.Unlock()
	s.c = nil
}

// Destroy implements verbs.SRQ (ibv_destroy_srq).
func (s *srq) Destroy() error {
	const op = "ibv_destroy_srq"
	c := s.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.check(op); err != nil {
		return err
	}
	if s.asyncUnacked > 0 {
		return refuse(op, verbs.EBUSY, "acknowledge every async event you read (ibv_ack_async_event; vsh's async_events does it for you)",
			"%d async event(s) of this SRQ are not acknowledged; ibv_destroy_srq would wait for them forever", s.asyncUnacked)
	}
	var users []string
	if s.users > 0 {
		users = append(users, fmt.Sprintf("%d QP(s)", s.users))
	}
	c.dataMu.Lock()
	defer c.dataMu.Unlock()
	pred := predictBusy(op, "the SRQ", users, "destroy the QPs on it first (ib_destroy_srq_user: srq->usecnt)")
	cs := s.c
	if err := judge(op, syscall.Errno(C.ibv_destroy_srq(cs)), pred); err != nil {
		return err
	}
	delete(c.srqs, cs)
	s.release()
	if s.pd != nil {
		s.pd.srqs--
	}
	if s.xrcd != nil {
		s.xrcd.srqs--
	}
	if s.cq != nil {
		s.cq.srqs--
	}
	return nil
}
