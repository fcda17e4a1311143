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
	"syscall"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// The extended verbs of XRC, passed to libibverbs as they are: every one
// is called, and libibverbs (or the provider's dummy op) decides. On rxe
// they fail — rdma-core's rxe provider has no open_xrcd, open_qp or
// get_srq_num — and the explanations say so (predict_xrc.go).

var _ verbs.ExtendedContext = (*context)(nil)

// xrcd is an XRC domain (struct ibv_xrcd) and the file that names it.
type xrcd struct {
	ctx  *context
	c    *C.struct_ibv_xrcd // nil once closed; guarded by ctx.mu
	fd   int                // the open file naming the domain, -1 for none
	path string
	// users made through this handle (uxrcd->refcnt), for the EBUSY
	// prediction: XRC SRQs and XRC_RECV QP handles.
	srqs, qps int
}

var _ verbs.XRCD = (*xrcd)(nil)

// Context implements verbs.XRCD.
func (x *xrcd) Context() verbs.Context { return x.ctx }

// ownPD returns the backend's PD behind p, checking that it belongs to this
// context and is alive. Called with c.mu held.
func (c *context) ownPD(op string, p verbs.PD) (*pd, error) {
	x, ok := p.(*pd)
	switch {
	case !ok || x == nil:
		return nil, refuse(op, verbs.EINVAL, "allocate the PD with the same backend", "the PD (%T) was not allocated by the ibverbs backend", p)
	case x.ctx != c:
		return nil, refuse(op, verbs.EINVAL, "use a PD of the same device context", "the PD belongs to another device context")
	case x.c == nil:
		return nil, deadErr(op, "the PD", "ibv_dealloc_pd")
	}
	return x, nil
}

// ownXRCD returns the backend's XRC domain behind d, checking that it
// belongs to this context and is open. Called with c.mu held.
func (c *context) ownXRCD(op string, d verbs.XRCD) (*xrcd, error) {
	x, ok := d.(*xrcd)
	switch {
	case !ok || x == nil:
		return nil, refuse(op, verbs.EINVAL, "open the XRC domain with the same backend", "the XRC domain (%T) was not opened by the ibverbs backend", d)
	case x.ctx != c:
		return nil, refuse(op, verbs.EINVAL, "open the XRC domain on the same device context", "the XRC domain belongs to another device context")
	case x.c == nil:
		return nil, deadErr(op, "the XRC domain", "ibv_close_xrcd")
	}
	return x, nil
}

// OpenXRCD implements verbs.ExtendedContext (ibv_open_xrcd). A path is
// opened first as rdma-core's xsrq_pingpong opens /tmp/xrc_domain
// (O_RDONLY|O_CREAT, mode 0440) and kept open until the domain is closed;
// the kernel finds the domain by the file's inode. No path is fd -1.
func (c *context) OpenXRCD(attr verbs.XRCDInitAttr) (verbs.XRCD, error) {
	const op = "ibv_open_xrcd"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	if uint64(attr.OFlags) > math.MaxInt32 {
		return nil, refuse(op, verbs.EINVAL, "use O_CREAT and O_EXCL", "oflags %#o does not fit the int of struct ibv_xrcd_init_attr", uint32(attr.OFlags))
	}
	fd := -1
	if attr.Path != "" {
		f, err := syscall.Open(attr.Path, syscall.O_RDONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o440)
		if err != nil {
			errno, ok := err.(syscall.Errno)
			if !ok {
				errno = syscall.EIO
			}
			return nil, &verbs.Error{Op: op, Errno: errno,
				Why: fmt.Sprintf("vsh could not open %s, the file that names the XRC domain (open(2) O_RDONLY|O_CREAT, as xsrq_pingpong opens /tmp/xrc_domain): %v; ibv_open_xrcd was not called",
					attr.Path, err),
				Hint: "use a file this user may create or read (e.g. /tmp/xrc_domain), or no path for a private domain"}
		}
		fd = f
	}
	pred := predictOpenXRCD(&c.facts, fd >= 0, attr.OFlags)
	var errc C.int
	x := C.vsh_open_xrcd(c.c, C.int(fd), C.int(attr.OFlags), &errc)
	if x == nil {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return nil, judge(op, syscall.Errno(errc), pred)
	}
	_ = judge(op, 0, pred)
	d := &xrcd{ctx: c, c: x, fd: fd, path: attr.Path}
	c.xrcds = append(c.xrcds, d)
	return d, nil
}

// release forgets the domain and closes its file. Called with ctx.mu held.
func (x *xrcd) release() {
	x.c = nil
	if x.fd >= 0 {
		syscall.Close(x.fd)
		x.fd = -1
	}
}

// Close implements verbs.XRCD (ibv_close_xrcd), then closes the file that
// named the domain.
func (x *xrcd) Close() error {
	const op = "ibv_close_xrcd"
	c := x.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return closedErr(op)
	}
	if x.c == nil {
		return deadErr(op, "the XRC domain", "ibv_close_xrcd")
	}
	var users []string
	if x.srqs > 0 {
		users = append(users, fmt.Sprintf("%d XRC SRQ(s)", x.srqs))
	}
	if x.qps > 0 {
		users = append(users, fmt.Sprintf("%d XRC_RECV QP handle(s)", x.qps))
	}
	pred := predictBusy(op, "the XRC domain", users,
		"destroy the XRC SRQs and XRC_RECV QPs made or opened through this handle first (uverbs_free_xrcd: refcnt)")
	if err := judge(op, syscall.Errno(C.vsh_close_xrcd(x.c)), pred); err != nil {
		return err
	}
	x.release()
	for i, y := range c.xrcds {
		if y == x {
			c.xrcds = append(c.xrcds[:i], c.xrcds[i+1:]...)
			break
		}
	}
	return nil
}

// CreateSRQEx implements verbs.ExtendedContext (ibv_create_srq_ex):
// comp_mask carries TYPE, and PD, XRCD and CQ for the fields that are set.
// With only a PD and type basic, libibverbs calls ibv_create_srq.
func (c *context) CreateSRQEx(attr verbs.SRQInitAttrEx) (verbs.SRQ, error) {
	const op = "ibv_create_srq_ex"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	p, xd, err := c.ownPDXRCD(op, attr.PD, attr.XRCD)
	if err != nil {
		return nil, err
	}
	var q *cq
	if attr.CQ != nil {
		if q, err = c.ownCQ(op, "CQ", attr.CQ); err != nil {
			return nil, err
		}
	}
	if attr.Type > verbs.SRQTypeTM {
		return nil, refuse(op, verbs.EINVAL, "use srq_type basic or xrc",
			"%d is not an SRQ type (IBV_SRQT_BASIC, XRC, TM); libibverbs would pass it on unchecked, and its legacy command dereferences the CQ and XRC domain of any SRQ that is not basic",
			uint32(attr.Type))
	}
	if name, v, ok := srqAttrFits(attr.Attr); !ok {
		return nil, refuse(op, verbs.EINVAL, "give max_wr and max_sge from 1 to the device's limits", "%s %d does not fit the uint32_t of struct ibv_srq_attr", name, v)
	}
	var ia C.struct_ibv_srq_init_attr_ex
	srqAttrToC(attr.Attr, &ia.attr)
	ia.comp_mask = C.IBV_SRQ_INIT_ATTR_TYPE
	ia.srq_type = uint32(attr.Type)
	if p != nil {
		ia.comp_mask |= C.IBV_SRQ_INIT_ATTR_PD
		ia.pd = p.c
	}
	if xd != nil {
		ia.comp_mask |= C.IBV_SRQ_INIT_ATTR_XRCD
		ia.xrcd = xd.c
	}
	if q != nil {
		ia.comp_mask |= C.IBV_SRQ_INIT_ATTR_CQ
		ia.cq = q.c
	}
	pred := predictCreateSRQEx(&c.facts, srqExCall{Type: attr.Type, Attr: attr.Attr, HasPD: p != nil, HasXRCD: xd != nil, HasCQ: q != nil})
	var errc C.int
	s := C.vsh_create_srq_ex(c.c, &ia, &errc)
	if s == nil {
		return nil, judge(op, syscall.Errno(errc), pred)
	}
	_ = judge(op, 0, pred)
	x := &srq{ctx: c, pd: p, c: s, userCtx: attr.Context, typ: attr.Type, maxWR: int(ia.attr.max_wr), maxSGE: int(ia.attr.max_sge)}
	var qa C.struct_ibv_srq_attr
	if C.ibv_query_srq(s, &qa) == 0 {
		x.maxWR, x.maxSGE = int(qa.max_wr), int(qa.max_sge)
	}
	c.srqs[s] = x
	if p != nil {
		p.srqs++
	}
	// Only an XRC SRQ holds its domain and its CQ (ib_create_srq_user).
	if attr.Type == verbs.SRQTypeXRC {
		x.xrcd, x.cq = xd, q
		if xd != nil {
			xd.srqs++
		}
		if q != nil {
			q.srqs++
		}
	}
	return x, nil
}

// Num implements verbs.SRQ (ibv_get_srq_num).
func (s *srq) Num() (uint32, error) {
	const op = "ibv_get_srq_num"
	c := s.ctx
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := s.check(op); err != nil {
		return 0, err
	}
	var n C.uint32_t
	rc := syscall.Errno(C.vsh_get_srq_num(s.c, &n))
	if err := judge(op, rc, predictSRQNum(&c.facts, s.typ)); err != nil {
		return 0, err
	}
	return uint32(n), nil
}

// CreateQPEx implements verbs.ExtendedContext (ibv_create_qp_ex):
// comp_mask carries PD and XRCD for the fields that are set. With only a
// PD, libibverbs calls ibv_create_qp. An XRC_RECV QP is made in its XRC
// domain and has no PD, CQs or queues; an XRC_SEND QP has a send CQ only.
func (c *context) CreateQPEx(attr verbs.QPInitAttrEx) (verbs.QP, error) {
	const op = "ibv_create_qp_ex"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	p, xd, err := c.ownPDXRCD(op, attr.PD, attr.XRCD)
	if err != nil {
		return nil, err
	}
	return c.createQP(op, p, xd, attr.QPInitAttr)
}

// ownPDXRCD checks the PD and XRC domain an extended verb was given, each
// optional (nil: its comp_mask bit is clear).
func (c *context) ownPDXRCD(op string, pdArg verbs.PD, xrcdArg verbs.XRCD) (p *pd, xd *xrcd, err error) {
	if pdArg != nil {
		if p, err = c.ownPD(op, pdArg); err != nil {
			return nil, nil, err
		}
	}
	if xrcdArg != nil {
		if xd, err = c.ownXRCD(op, xrcdArg); err != nil {
			return nil, nil, err
		}
	}
	return p, xd, nil
}

// OpenQP implements verbs.ExtendedContext (ibv_open_qp): another handle to
// an XRC_RECV QP of an XRC domain.
func (c *context) OpenQP(attr verbs.QPOpenAttr) (verbs.QP, error) {
	const op = "ibv_open_qp"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		return nil, closedErr(op)
	}
	var xd *xrcd
	if attr.XRCD != nil {
		var err error
		if xd, err = c.ownXRCD(op, attr.XRCD); err != nil {
			return nil, err
		}
	}
	if uint64(attr.Type) > math.MaxUint32 {
		return nil, refuse(op, verbs.EINVAL, "open an xrc_recv QP", "QP type %d is out of range", attr.Type)
	}
	var oa C.struct_ibv_qp_open_attr
	oa.comp_mask = C.IBV_QP_OPEN_ATTR_NUM | C.IBV_QP_OPEN_ATTR_TYPE
	oa.qp_num = C.uint32_t(attr.QPNum)
	oa.qp_type = uint32(attr.Type)
	if xd != nil {
		oa.comp_mask |= C.IBV_QP_OPEN_ATTR_XRCD
		oa.xrcd = xd.c
	}
	pred := predictOpenQP(&c.facts, attr.Type, xd != nil)
	var errc C.int
	q := C.vsh_open_qp(c.c, &oa, &errc)
	if q == nil {
		return nil, judge(op, syscall.Errno(errc), pred)
	}
	_ = judge(op, 0, pred)
	x := &qp{ctx: c, c: q, typ: verbs.QPType(q.qp_type), num: uint32(q.qp_num), userCtx: attr.Context}
	c.qps[q] = x
	if x.typ == verbs.QPTypeXRCRecv && xd != nil {
		x.xrcd = xd
		xd.qps++
	}
	return x, nil
}

// createQP makes a QP: ibv_create_qp on p (op "ibv_create_qp", xd nil), or
// ibv_create_qp_ex with a PD and/or an XRC domain. The capabilities the
// device gave are read back with ibv_query_qp. Called with c.mu held.
func (c *context) createQP(op string, p *pd, xd *xrcd, attr verbs.QPInitAttr) (*qp, error) {
	ex := op == "ibv_create_qp_ex"
	// Without a PD, libibverbs refuses every type but XRC_RECV before it
	// looks at the CQs; XRC_RECV looks at none.
	needSend, needRecv := false, false
	if p != nil {
		needSend, needRecv = needsCQs(attr.Type)
	}
	var scq, rcq *cq
	var err error
	for _, x := range []struct {
		role string
		in   verbs.CQ
		out  **cq
		need bool
	}{{"send CQ", attr.SendCQ, &scq, needSend}, {"receive CQ", attr.RecvCQ, &rcq, needRecv}} {
		if x.in == nil {
			if x.need {
				return nil, refuse(op, verbs.EINVAL, "give the QP a send_cq and a recv_cq (they may be the same CQ)",
					"the QP has no %s: rxe refuses that with EINVAL (rxe_qp_chk_init: \"missing cq\"), and libibverbs 44 would dereference the missing CQ", x.role)
			}
			continue
		}
		if *x.out, err = c.ownCQ(op, x.role, x.in); err != nil {
			return nil, err
		}
	}
	var s *srq
	if attr.SRQ != nil {
		if s, err = c.ownSRQ(op, attr.SRQ); err != nil {
			return nil, err
		}
	}
	if name, v, ok := capFits(attr.Cap); !ok {
		return nil, refuse(op, verbs.EINVAL, "ask for 0 to the device's limit (query_device)", "cap.%s %d does not fit the uint32_t of struct ibv_qp_cap", name, v)
	}
	if uint64(attr.Type) > math.MaxUint32 {
		return nil, refuse(op, verbs.EINVAL, "use rc, uc or ud", "QP type %d is out of range", attr.Type)
	}
	var ia C.struct_ibv_qp_init_attr_ex
	if scq != nil {
		ia.send_cq = scq.c
	}
	if rcq != nil {
		ia.recv_cq = rcq.c
	}
	if s != nil {
		ia.srq = s.c
	}
	capToC(attr.Cap, &ia.cap)
	ia.qp_type = uint32(attr.Type)
	if attr.SQSigAll {
		ia.sq_sig_all = 1
	}
	create := qpCreate{Type: attr.Type, Cap: attr.Cap, HasSRQ: s != nil}
	var q *C.struct_ibv_qp
	var errno syscall.Errno
	var pred prediction
	if ex {
		if p != nil {
			ia.comp_mask |= C.IBV_QP_INIT_ATTR_PD
			ia.pd = p.c
		}
		if xd != nil {
			ia.comp_mask |= C.IBV_QP_INIT_ATTR_XRCD
			ia.xrcd = xd.c
		}
		pred = predictCreateQPEx(&c.facts, qpExCall{qpCreate: create, HasPD: p != nil, HasXRCD: xd != nil})
		var errc C.int
		q = C.vsh_create_qp_ex(c.c, &ia, &errc)
		errno = syscall.Errno(errc)
	} else {
		// struct ibv_qp_init_attr is the head of struct ibv_qp_init_attr_ex
		// (libibverbs casts one to the other).
		pred = predictCreateQP(&c.facts, create)
		var cerr error
		q, cerr = C.ibv_create_qp(p.c, (*C.struct_ibv_qp_init_attr)(unsafe.Pointer(&ia)))
		if q == nil {
			errno = errnoOf(cerr)
		}
	}
	if q == nil {
		return nil, judge(op, errno, pred)
	}
	_ = judge(op, 0, pred)
	typ := verbs.QPType(q.qp_type)
	x := &qp{ctx: c, c: q, typ: typ, num: uint32(q.qp_num), sigAll: attr.SQSigAll, userCtx: attr.Context, caps: capFromC(&ia.cap)}
	var qa C.struct_ibv_qp_attr
	var qi C.struct_ibv_qp_init_attr
	if C.ibv_query_qp(q, &qa, C.IBV_QP_CAP, &qi) == 0 {
		x.caps = capFromC(&qi.cap)
	}
	c.qps[q] = x
	// What the kernel holds a reference to (create_qp, create_xrc_qp_user):
	// an XRC_RECV QP its domain only; an XRC_SEND QP its PD and send CQ.
	switch typ {
	case verbs.QPTypeXRCRecv:
		if xd != nil {
			x.xrcd = xd
			xd.qps++
		}
		return x, nil
	case verbs.QPTypeXRCSend:
		rcq = nil
	}
	if p != nil {
		x.pd = p
		p.qps++
	}
	x.sendCQ, x.recvCQ, x.srq = scq, rcq, s
	for _, u := range []*cq{scq, rcq} {
		if u != nil {
			u.users++
		}
	}
	if s != nil {
		s.users++
	}
	return x, nil
}

var _ verbs.ExtendedSRQ = (*srq)(nil)

// Type implements verbs.ExtendedSRQ.
func (s *srq) Type() verbs.SRQType { return s.typ }

// XRCD implements verbs.ExtendedSRQ.
func (s *srq) XRCD() verbs.XRCD {
	if s.xrcd == nil {
		return nil
	}
	return s.xrcd
}

// CQ implements verbs.ExtendedSRQ.
func (s *srq) CQ() verbs.CQ {
	if s.cq == nil {
		return nil
	}
	return s.cq
}

var _ verbs.DomainQP = (*qp)(nil)

// XRCD implements verbs.DomainQP: an XRC_RECV QP's domain, nil for the
// other types.
func (q *qp) XRCD() verbs.XRCD {
	if q.xrcd == nil {
		return nil
	}
	return q.xrcd
}
