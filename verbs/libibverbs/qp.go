//go:build linux && cgo && ibverbs

package main

/*
#include <stdlib.h>
#include <pthread.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// ---- queue pairs ----

// cqOf returns the CQ of handle h (0: none, "NULL").
func cqOf(h C.uintptr_t, op string) (verbs.CQ, string, error) {
	if h == 0 {
		return nil, "NULL", nil
	}
	o, err := live[*cqObj](h, op)
	if err != nil {
		return nil, "", err
	}
	return o.cq, o.name, nil
}

func srqOf(h C.uintptr_t, op string) (verbs.SRQ, string, error) {
	if h == 0 {
		return nil, "NULL", nil
	}
	o, err := live[*srqObj](h, op)
	if err != nil {
		return nil, "", err
	}
	return o.srq, o.name, nil
}

func pdOf(h C.uintptr_t, op string) (*pdObj, error) {
	if h == 0 {
		return nil, nil
	}
	return live[*pdObj](h, op)
}

func xrcdOf(h C.uintptr_t, op string) (verbs.XRCD, error) {
	if h == 0 {
		return nil, nil
	}
	o, err := live[*xrcdObj](h, op)
	if err != nil {
		return nil, err
	}
	return o.xrcd, nil
}

//export vshCreateQP
func vshCreateQP(h C.uintptr_t, a *C.struct_ibv_qp_init_attr_ex, sendh, recvh, srqh, pdh, xrcdh C.uintptr_t, out **C.struct_ibv_qp) C.int {
	const op = "ibv_create_qp"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	var ia verbs.QPInitAttrEx
	var sendName, recvName, srqName string
	if err == nil {
		ia.SendCQ, sendName, err = cqOf(sendh, op)
	}
	if err == nil {
		ia.RecvCQ, recvName, err = cqOf(recvh, op)
	}
	if err == nil {
		ia.SRQ, srqName, err = srqOf(srqh, op)
	}
	var pd *pdObj
	if err == nil && a.comp_mask&C.IBV_QP_INIT_ATTR_PD != 0 {
		pd, err = pdOf(pdh, op)
	}
	if err == nil && a.comp_mask&C.IBV_QP_INIT_ATTR_XRCD != 0 {
		ia.XRCD, err = xrcdOf(xrcdh, op)
	}
	if err == nil && a.comp_mask&^C.uint32_t(C.IBV_QP_INIT_ATTR_PD|C.IBV_QP_INIT_ATTR_XRCD) != 0 {
		err = verbs.Errorf(op, verbs.EOPNOTSUPP, "leave out create_flags, send_ops_flags and the other extended fields",
			"comp_mask %#x asks for what the simulator does not have: only IBV_QP_INIT_ATTR_PD and IBV_QP_INIT_ATTR_XRCD (no ibv_wr_* API, no RSS, no TSO)", uint32(a.comp_mask))
	}
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	ia.Type = verbs.QPType(a.qp_type)
	ia.Cap = capFromC(&a.cap)
	ia.SQSigAll = a.sq_sig_all != 0
	pdName := "NULL"
	if pd != nil {
		ia.PD, pdName = pd.pd, pd.name
	}
	args := fmt.Sprintf("%s, qp_type=%s, send_cq=%s, recv_cq=%s, srq=%s, sq_sig_all=%d", pdName, ia.Type,
		sendName, recvName, srqName, a.sq_sig_all)
	var qp verbs.QP
	switch {
	case a.comp_mask&C.IBV_QP_INIT_ATTR_XRCD != 0 || ia.Type == verbs.QPTypeXRCSend:
		ec, ok := c.ctx.(verbs.ExtendedContext)
		if !ok {
			err = verbs.Errorf(op, verbs.EOPNOTSUPP, "", "this device has no XRC")
			break
		}
		qp, err = ec.CreateQPEx(ia)
	case pd == nil:
		err = verbs.Errorf(op, verbs.EINVAL, "pass the PD", "ibv_create_qp_ex without IBV_QP_INIT_ATTR_PD has no PD")
	default:
		qp, err = pd.pd.CreateQP(ia.QPInitAttr)
	}
	if err != nil {
		traceCall(op, args, err)
		return errno(err)
	}
	o := &qpObj{qp: qp}
	cq := calloc[C.struct_vsh_qp]()
	cq.h = add(o, "qp", c, unsafe.Pointer(cq), qp)
	cq.qp.context = &c.cc.vctx.context
	cq.qp.qp_context = a.qp_context
	if pd != nil {
		cq.qp.pd = &(*C.struct_vsh_pd)(pd.c).pd
	}
	cq.qp.send_cq, cq.qp.recv_cq, cq.qp.srq = a.send_cq, a.recv_cq, a.srq
	cq.qp.handle = C.uint32_t(cq.h)
	cq.qp.qp_num = C.uint32_t(qp.Num())
	cq.qp.state = C.IBV_QPS_RESET
	cq.qp.qp_type = a.qp_type
	C.pthread_mutex_init(&cq.qp.mutex, nil)
	C.pthread_cond_init(&cq.qp.cond, nil)
	if _, init, err := qp.Query(verbs.AttrCap); err == nil {
		capToC(init.Cap, &a.cap)
	}
	*out = &cq.qp
	traceCall(op, fmt.Sprintf("%s) → %s  qp_num %#06x", args, o.name, qp.Num()), nil)
	traceQPState(o, verbs.QPSReset)
	return 0
}

//export vshOpenQP
func vshOpenQP(h C.uintptr_t, a *C.struct_ibv_qp_open_attr, xrcdh C.uintptr_t, out **C.struct_ibv_qp) C.int {
	const op = "ibv_open_qp"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	ec, ok := c.ctx.(verbs.ExtendedContext)
	if !ok {
		return C.int(syscall.EOPNOTSUPP)
	}
	x, err := xrcdOf(xrcdh, op)
	if err != nil {
		return errno(err)
	}
	qp, err := ec.OpenQP(verbs.QPOpenAttr{QPNum: uint32(a.qp_num), XRCD: x, Type: verbs.QPType(a.qp_type)})
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	o := &qpObj{qp: qp}
	cq := calloc[C.struct_vsh_qp]()
	cq.h = add(o, "qp", c, unsafe.Pointer(cq), qp)
	cq.qp.context = &c.cc.vctx.context
	cq.qp.qp_context = a.qp_context
	cq.qp.handle = C.uint32_t(cq.h)
	cq.qp.qp_num = a.qp_num
	cq.qp.qp_type = a.qp_type
	C.pthread_mutex_init(&cq.qp.mutex, nil)
	C.pthread_cond_init(&cq.qp.cond, nil)
	*out = &cq.qp
	traceCall(op, fmt.Sprintf("%s, qp_num=%#06x) → %s", c.name, uint32(a.qp_num), o.name), nil)
	return 0
}

//export vshModifyQP
func vshModifyQP(h C.uintptr_t, a *C.struct_ibv_qp_attr, mask C.int) C.int {
	const op = "ibv_modify_qp"
	o, err := live[*qpObj](h, op)
	if err != nil {
		return errno(err)
	}
	attr := qpAttrFromC(a)
	m := verbs.QPAttrMask(mask)
	o.mu.Lock()
	before := o.state
	o.mu.Unlock()
	err = o.qp.Modify(&attr, m)
	traceModify(o, &attr, m, err)
	if err != nil {
		return errno(err)
	}
	if m&verbs.AttrState != 0 {
		o.mu.Lock()
		o.state = attr.State
		o.mu.Unlock()
		if before != attr.State {
			traceQPState(o, attr.State)
		}
	}
	return 0
}

//export vshQueryQP
func vshQueryQP(h C.uintptr_t, a *C.struct_ibv_qp_attr, mask C.int, ia *C.struct_ibv_qp_init_attr) C.int {
	const op = "ibv_query_qp"
	o, err := live[*qpObj](h, op)
	if err != nil {
		return errno(err)
	}
	attr, init, err := o.qp.Query(verbs.QPAttrMask(mask))
	if err != nil {
		traceCall(op, o.name, err)
		return errno(err)
	}
	qpAttrToC(&attr, a)
	traceCall(op, fmt.Sprintf("%s, %s) → qp_state=%s", o.name, verbs.QPAttrMask(mask), attr.State), nil)
	cq := (*C.struct_vsh_qp)(o.c)
	ia.qp_context = cq.qp.qp_context
	ia.send_cq, ia.recv_cq, ia.srq = cq.qp.send_cq, cq.qp.recv_cq, cq.qp.srq
	capToC(init.Cap, &ia.cap)
	ia.qp_type = uint32(init.Type)
	ia.sq_sig_all = 0
	if init.SQSigAll {
		ia.sq_sig_all = 1
	}
	cq.qp.state = uint32(attr.State)
	return 0
}

//export vshDestroyQP
func vshDestroyQP(h C.uintptr_t) C.int {
	return destroy(h, "ibv_destroy_qp", func(o *qpObj) error { return o.qp.Destroy() })
}

//export vshMcast
func vshMcast(h C.uintptr_t, gid *C.union_ibv_gid, lid C.uint16_t, attach C.int) C.int {
	op := "ibv_detach_mcast"
	if attach != 0 {
		op = "ibv_attach_mcast"
	}
	o, err := live[*qpObj](h, op)
	if err != nil {
		return errno(err)
	}
	g := verbs.GID(*(*[16]byte)(unsafe.Pointer(gid)))
	if attach != 0 {
		err = o.qp.AttachMcast(g, uint16(lid))
	} else {
		err = o.qp.DetachMcast(g, uint16(lid))
	}
	traceCall(op, fmt.Sprintf("%s, %s, %d", o.name, g, lid), err)
	return errno(err)
}

// ---- shared receive queues ----

//export vshCreateSRQ
func vshCreateSRQ(h C.uintptr_t, a *C.struct_ibv_srq_init_attr_ex, pdh, xrcdh, cqh C.uintptr_t, out **C.struct_ibv_srq) C.int {
	const op = "ibv_create_srq"
	c, err := live[*ctxObj](h, op)
	if err != nil {
		return errno(err)
	}
	ia := verbs.SRQInitAttrEx{Attr: srqAttrFromC(&a.attr)}
	var pd *pdObj
	if a.comp_mask&C.IBV_SRQ_INIT_ATTR_PD != 0 {
		pd, err = pdOf(pdh, op)
	}
	if err == nil && a.comp_mask&C.IBV_SRQ_INIT_ATTR_XRCD != 0 {
		ia.XRCD, err = xrcdOf(xrcdh, op)
	}
	if err == nil && a.comp_mask&C.IBV_SRQ_INIT_ATTR_CQ != 0 {
		ia.CQ, _, err = cqOf(cqh, op)
	}
	if a.comp_mask&C.IBV_SRQ_INIT_ATTR_TYPE != 0 {
		ia.Type = verbs.SRQType(a.srq_type)
	}
	if err != nil {
		traceCall(op, c.name, err)
		return errno(err)
	}
	pdName := "NULL"
	if pd != nil {
		ia.PD, pdName = pd.pd, pd.name
	}
	args := fmt.Sprintf("%s, max_wr=%d, max_sge=%d, srq_limit=%d", pdName, a.attr.max_wr, a.attr.max_sge, a.attr.srq_limit)
	var srq verbs.SRQ
	switch {
	case ia.Type != verbs.SRQTypeBasic:
		ec, ok := c.ctx.(verbs.ExtendedContext)
		if !ok {
			err = verbs.Errorf(op, verbs.EOPNOTSUPP, "", "this device has only basic SRQs")
			break
		}
		srq, err = ec.CreateSRQEx(ia)
	case pd == nil:
		err = verbs.Errorf(op, verbs.EINVAL, "pass the PD", "an SRQ needs a PD (IBV_SRQ_INIT_ATTR_PD)")
	default:
		srq, err = pd.pd.CreateSRQ(verbs.SRQInitAttr{Attr: ia.Attr})
	}
	if err != nil {
		traceCall(op, args, err)
		return errno(err)
	}
	o := &srqObj{srq: srq}
	cs := calloc[C.struct_vsh_srq]()
	cs.h = add(o, "srq", c, unsafe.Pointer(cs), srq)
	cs.srq.context = &c.cc.vctx.context
	cs.srq.srq_context = a.srq_context
	if pd != nil {
		cs.srq.pd = &(*C.struct_vsh_pd)(pd.c).pd
	}
	cs.srq.handle = C.uint32_t(cs.h)
	C.pthread_mutex_init(&cs.srq.mutex, nil)
	C.pthread_cond_init(&cs.srq.cond, nil)
	if got, err := srq.Query(); err == nil {
		a.attr.max_wr = C.uint32_t(got.MaxWR)
		a.attr.max_sge = C.uint32_t(got.MaxSGE)
	}
	*out = &cs.srq
	traceCall(op, args+") → "+o.name, nil)
	return 0
}

//export vshModifySRQ
func vshModifySRQ(h C.uintptr_t, a *C.struct_ibv_srq_attr, mask C.int) C.int {
	const op = "ibv_modify_srq"
	o, err := live[*srqObj](h, op)
	if err != nil {
		return errno(err)
	}
	err = o.srq.Modify(srqAttrFromC(a), verbs.SRQAttrMask(mask))
	traceCall(op, fmt.Sprintf("%s, max_wr=%d, srq_limit=%d, %s", o.name, a.max_wr, a.srq_limit, verbs.SRQAttrMask(mask)), err)
	return errno(err)
}

//export vshQuerySRQ
func vshQuerySRQ(h C.uintptr_t, a *C.struct_ibv_srq_attr) C.int {
	const op = "ibv_query_srq"
	o, err := live[*srqObj](h, op)
	if err != nil {
		return errno(err)
	}
	got, err := o.srq.Query()
	if err != nil {
		return errno(err)
	}
	a.max_wr = C.uint32_t(got.MaxWR)
	a.max_sge = C.uint32_t(got.MaxSGE)
	a.srq_limit = C.uint32_t(got.SRQLimit)
	return 0
}

//export vshDestroySRQ
func vshDestroySRQ(h C.uintptr_t) C.int {
	return destroy(h, "ibv_destroy_srq", func(o *srqObj) error { return o.srq.Destroy() })
}

//export vshSRQNum
func vshSRQNum(h C.uintptr_t, out *C.uint32_t) C.int {
	const op = "ibv_get_srq_num"
	o, err := live[*srqObj](h, op)
	if err != nil {
		return errno(err)
	}
	n, err := o.srq.Num()
	traceCall(op, o.name, err)
	if err != nil {
		return errno(err)
	}
	*out = C.uint32_t(n)
	return 0
}

// ---- address handles ----

//export vshCreateAH
func vshCreateAH(h C.uintptr_t, a *C.struct_ibv_ah_attr, out **C.struct_ibv_ah) C.int {
	const op = "ibv_create_ah"
	p, err := live[*pdObj](h, op)
	if err != nil {
		return errno(err)
	}
	attr := ahAttrFromC(a)
	ah, err := p.pd.CreateAH(attr)
	args := fmt.Sprintf("%s, %s", p.name, ahString(&attr))
	if err != nil {
		traceCall(op, args, err)
		return errno(err)
	}
	o := &ahObj{ah: ah}
	ca := calloc[C.struct_vsh_ah]()
	ca.h = add(o, "ah", p.ctx, unsafe.Pointer(ca), ah)
	ca.ah.context = &p.ctx.cc.vctx.context
	ca.ah.pd = &(*C.struct_vsh_pd)(p.c).pd
	ca.ah.handle = C.uint32_t(ca.h)
	*out = &ca.ah
	traceCall(op, args+") → "+o.name, nil)
	return 0
}

//export vshDestroyAH
func vshDestroyAH(h C.uintptr_t) C.int {
	return destroy(h, "ibv_destroy_ah", func(o *ahObj) error { return o.ah.Destroy() })
}
