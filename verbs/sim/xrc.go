package sim

import (
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// XRC, beyond rxe (Config.XRC). Kernel rxe registers no XRC verbs; the
// simulator implements them as the kernel's core (uverbs_cmd.c, verbs.c)
// and mlx5 do: an XRC domain per device and file, XRC SRQs numbered
// device-wide with a CQ of their own, XRC_SEND QPs that name the target
// SRQ in every request (the XRCETH), and XRC_RECV QPs that belong to the
// domain rather than to a process, reached through handles, and that hand
// each message to the SRQ its XRCETH names.

// xdom is an XRC domain (struct ib_xrcd): every open of the same path on
// one device finds the same domain. Its target QPs hang from a PD of its
// own, as mlx5's hang from the device's internal PD.
type xdom struct {
	dev   *device
	path  string // "" for a private domain
	opens int    // handles open (xrcd->usecnt for a file's domain)
	pd    *pd    // the target QPs' PD; no process sees it
	tgts  map[uint32]*qp
}

// xrcd is one process's handle to a domain (struct ib_uxrcd_object).
type xrcd struct {
	inList
	ctx  *context
	dom  *xdom
	dead string
	refs int // SRQs and XRC_RECV QPs made through it (uxrcd->refcnt)
}

var _ verbs.XRCD = (*xrcd)(nil)

// Context implements verbs.XRCD.
func (x *xrcd) Context() verbs.Context { return x.ctx }

func (x *xrcd) check(op string) error {
	if x.dead != "" {
		return deadErr(op, "the XRC domain", x.dead)
	}
	return x.ctx.check(op)
}

// noXRC is the error of an XRC verb on a device without the capability:
// rxe's provider has none of them, and libibverbs' dummy op answers.
func (d *device) noXRC(op string) error {
	return verbs.Errorf(op, verbs.EOPNOTSUPP,
		"XRC needs a NIC that has it (mlx5); the simulator has it once XRC is on (vsh: backend xrc=on or --sim-xrc)",
		"%s has no XRC: rxe's provider registers no %s, so libibverbs' dummy op answers EOPNOTSUPP (dummy_ops.c)",
		d.name, opName(op))
}

// opName is the verbs_context op behind a libibverbs call.
func opName(op string) string {
	switch op {
	case "ibv_open_xrcd":
		return "open_xrcd"
	case "ibv_create_srq_ex":
		return "create_srq_ex"
	case "ibv_open_qp":
		return "open_qp"
	case "ibv_get_srq_num":
		return "get_srq_num"
	}
	return "create_qp_ex"
}

// openXRCD does ibv_open_xrcd (ib_uverbs_open_xrcd): a path finds the
// domain other opens made of it (EAGAIN when there is none and O_CREAT is
// not set), or with O_CREAT makes one; O_CREAT|O_EXCL refuses one that
// exists (EINVAL); no path (fd -1) is always a new private domain, whatever
// the flags.
func (c *context) openXRCD(attr verbs.XRCDInitAttr) (verbs.XRCD, error) {
	const op = "ibv_open_xrcd"
	if err := c.check(op); err != nil {
		return nil, err
	}
	d := c.dev
	if !d.f.cfg.XRC {
		return nil, d.noXRC(op)
	}
	if attr.OFlags&^(verbs.XRCDCreate|verbs.XRCDExcl) != 0 {
		return nil, verbs.Errorf(op, verbs.EINVAL, "use only O_CREAT and O_EXCL",
			"oflags %#o has bits other than O_CREAT and O_EXCL (ib_uverbs_open_xrcd)", uint32(attr.OFlags))
	}
	var dom *xdom
	if attr.Path != "" {
		if dom = d.xdoms[attr.Path]; dom != nil {
			if attr.OFlags&verbs.XRCDExcl != 0 {
				return nil, verbs.Errorf(op, verbs.EINVAL, "drop O_EXCL to share the domain, or use another file",
					"%s already has a domain for %s, and O_EXCL asks for a new one (ib_uverbs_open_xrcd)", d.name, attr.Path)
			}
		} else if attr.OFlags&verbs.XRCDCreate == 0 {
			return nil, verbs.Errorf(op, verbs.EAGAIN, "pass O_CREAT to create the domain",
				"%s has no XRC domain for %s yet, and O_CREAT is not set (ib_uverbs_open_xrcd)", d.name, attr.Path)
		}
	}
	if dom == nil {
		dom = &xdom{dev: d, path: attr.Path, tgts: map[uint32]*qp{}}
		dom.pd = &pd{ctx: d.xctx()}
		if attr.Path != "" {
			if d.xdoms == nil {
				d.xdoms = map[string]*xdom{}
			}
			d.xdoms[attr.Path] = dom
		}
	}
	dom.opens++
	x := &xrcd{ctx: c, dom: dom}
	listAdd(&c.xrcds, x)
	return x, nil
}

// xctx is the device's own context, under which domains keep their target
// QPs: it is never in the device's list of contexts and never closes.
func (d *device) xctx() *context {
	if d.xrcCtx == nil {
		d.xrcCtx = &context{dev: d}
	}
	return d.xrcCtx
}

// close does verbs.XRCD's Close (ibv_close_xrcd; uverbs_free_xrcd): EBUSY
// while SRQs or XRC_RECV QPs made through this handle live.
func (x *xrcd) close() error {
	const op = "ibv_close_xrcd"
	if err := x.check(op); err != nil {
		return err
	}
	if x.refs > 0 {
		return verbs.Errorf(op, verbs.EBUSY, "destroy the XRC SRQs and XRC_RECV QPs made in this domain first",
			"%d XRC SRQ(s) or XRC_RECV QP(s) were made through this handle (uverbs_free_xrcd: refcnt)", x.refs)
	}
	x.closeLocked("ibv_close_xrcd")
	return nil
}

func (x *xrcd) closeLocked(why string) {
	if x.dead != "" {
		return
	}
	x.dead = why
	listRemove(&x.ctx.xrcds, x, &x.ctx.dev.listWork)
	dom := x.dom
	dom.opens--
	if dom.opens == 0 && len(dom.tgts) == 0 && dom.path != "" {
		delete(dom.dev.xdoms, dom.path)
	}
}

// xrcdOf checks that an XRCD argument is a live handle of this context.
func (c *context) xrcdOf(op string, x verbs.XRCD) (*xrcd, error) {
	h, ok := x.(*xrcd)
	if !ok || h == nil {
		return nil, verbs.Errorf(op, verbs.EINVAL, "open an XRC domain (open_xrcd) and pass it", "no XRC domain was given")
	}
	if h.ctx != c {
		return nil, verbs.Errorf(op, verbs.EINVAL, "open the XRC domain on the same device context",
			"the XRC domain was opened on another device context")
	}
	if h.dead != "" {
		return nil, deadErr(op, "the XRC domain", h.dead)
	}
	return h, nil
}

// createSRQEx does ibv_create_srq_ex (ib_uverbs_create_xsrq): a basic SRQ
// as ibv_create_srq; an XRC SRQ also needs an XRC domain and a CQ, takes a
// device-wide SRQ number, and its receives complete on that CQ.
func (c *context) createSRQEx(attr verbs.SRQInitAttrEx) (verbs.SRQ, error) {
	const op = "ibv_create_srq_ex"
	if err := c.check(op); err != nil {
		return nil, err
	}
	d := c.dev
	switch attr.Type {
	case verbs.SRQTypeBasic, verbs.SRQTypeXRC:
	case verbs.SRQTypeTM:
		return nil, verbs.Errorf(op, verbs.EINVAL, "use srq_type basic or xrc",
			"a tag-matching SRQ needs tm_cap with max_num_tags (IBV_SRQ_INIT_ATTR_TM), which vsh cannot pass (libibverbs ibv_icmd_create_srq)")
	default:
		return nil, verbs.Errorf(op, verbs.EINVAL, "use srq_type basic or xrc", "%d is not an SRQ type", uint32(attr.Type))
	}
	p, ok := attr.PD.(*pd)
	if !ok || p == nil {
		return nil, verbs.Errorf(op, verbs.EINVAL, "allocate a PD and pass it", "every SRQ needs a PD (create_xsrq)")
	}
	if p.ctx != c {
		return nil, verbs.Errorf(op, verbs.EINVAL, "allocate the PD on the same device context", "the PD belongs to another device context")
	}
	if attr.Type == verbs.SRQTypeBasic {
		return p.createSRQAs(op, verbs.SRQInitAttr{Attr: attr.Attr, Context: attr.Context})
	}
	// libibverbs checks the domain and the CQ are there (ibv_icmd_create_srq)
	// before the provider, which on rxe has no XRC, is asked.
	if attr.XRCD == nil {
		return nil, verbs.Errorf(op, verbs.EINVAL, "open an XRC domain (open_xrcd) and pass it",
			"an XRC SRQ needs an XRC domain (libibverbs ibv_icmd_create_srq: no IBV_SRQ_INIT_ATTR_XRCD)")
	}
	q, ok := attr.CQ.(*cq)
	if !ok || q == nil {
		return nil, verbs.Errorf(op, verbs.EINVAL, "create a CQ and pass it as cq",
			"an XRC SRQ needs a CQ: its receives complete there, not on a QP's (libibverbs ibv_icmd_create_srq: no IBV_SRQ_INIT_ATTR_CQ)")
	}
	if !d.f.cfg.XRC {
		return nil, d.noXRC(op)
	}
	h, err := c.xrcdOf(op, attr.XRCD)
	if err != nil {
		return nil, err
	}
	if q.ctx != c {
		return nil, verbs.Errorf(op, verbs.EINVAL, "create the CQ on the same device context", "the CQ belongs to another device context")
	}
	if q.dead != "" {
		return nil, deadErr(op, "the CQ", q.dead)
	}
	x, err := p.createSRQAs(op, verbs.SRQInitAttr{Attr: attr.Attr, Context: attr.Context})
	if err != nil {
		return nil, err
	}
	s := x.(*srq)
	s.typ, s.xrcd, s.cq = verbs.SRQTypeXRC, h, q
	q.usecnt++
	h.refs++
	return s, nil
}

// allocSRQN hands out SRQ numbers as rxe's SRQ pool hands out indices,
// cyclically from RXE_MIN_SRQ_INDEX.
func (d *device) allocSRQN() uint32 {
	if d.xsrqs == nil {
		d.xsrqs = map[uint32]*srq{}
	}
	for {
		n := d.nextSRQN
		if n < rxeMinSRQIndex || n > rxeMinSRQIndex+rxeMaxSRQ {
			n = rxeMinSRQIndex
		}
		d.nextSRQN = n + 1
		if d.xsrqs[n] == nil {
			return n
		}
	}
}

// srqNum does verbs.SRQ's Num (ibv_get_srq_num). With XRC every SRQ has
// a number, as mlx5_get_srq_num gives one for any SRQ; rxe's provider has
// no get_srq_num, and libibverbs answers EOPNOTSUPP.
func (s *srq) srqNum() (uint32, error) {
	const op = "ibv_get_srq_num"
	if err := s.check(op); err != nil {
		return 0, err
	}
	if s.num == 0 {
		d := s.pd.ctx.dev
		if !d.f.cfg.XRC {
			return 0, d.noXRC(op)
		}
		d.numberSRQ(s) // made before XRC was turned on
	}
	return s.num, nil
}

// numberSRQ gives a new SRQ its number when the device has XRC.
func (d *device) numberSRQ(s *srq) {
	if d.f.cfg.XRC {
		s.num = d.allocSRQN()
		d.xsrqs[s.num] = s
	}
}

// forgetXRC releases an SRQ's number, and what an XRC SRQ holds, when it
// goes.
func (s *srq) forgetXRC() {
	if s.num != 0 {
		if d := s.pd.ctx.dev; d.xsrqs[s.num] == s {
			delete(d.xsrqs, s.num)
		}
	}
	if s.xrcd != nil {
		s.cq.usecnt--
		s.xrcd.refs--
		s.xrcd = nil
	}
}

// createQPEx does ibv_create_qp_ex: with a PD as ibv_create_qp; an
// XRC_RECV QP is made in the domain instead, with no PD, CQs or queues,
// and the caller gets a handle to it.
func (c *context) createQPEx(attr verbs.QPInitAttrEx) (verbs.QP, error) {
	const op = "ibv_create_qp_ex"
	if err := c.check(op); err != nil {
		return nil, err
	}
	d := c.dev
	if attr.Type != verbs.QPTypeXRCRecv {
		p, ok := attr.PD.(*pd)
		if !ok || p == nil {
			return nil, verbs.Errorf(op, verbs.EINVAL, "allocate a PD and pass it",
				"a %s QP needs a PD (only XRC_RECV is made in an XRC domain instead)", attr.Type.Short())
		}
		if p.ctx != c {
			return nil, verbs.Errorf(op, verbs.EINVAL, "allocate the PD on the same device context", "the PD belongs to another device context")
		}
		return p.createQPAs(op, attr.QPInitAttr)
	}
	if attr.XRCD == nil {
		return nil, verbs.Errorf(op, verbs.EINVAL, "open an XRC domain (open_xrcd) and pass it as xrcd",
			"an XRC_RECV QP is made in an XRC domain (libibverbs ibv_icmd_create_qp: no IBV_QP_INIT_ATTR_XRCD)")
	}
	if !d.f.cfg.XRC {
		return nil, d.noXRC(op)
	}
	h, err := c.xrcdOf(op, attr.XRCD)
	if err != nil {
		return nil, err
	}
	if err := d.poolFull(op, poolQP); err != nil {
		return nil, err
	}
	qpn, ok := d.allocQPN()
	if !ok {
		return nil, verbs.Errorf(op, verbs.ENOMEM, "destroy some QPs", "the device has no free QP number")
	}
	dom := h.dom
	q := newQP(d.f, dom.pd, qpn, verbs.QPTypeXRCRecv)
	q.sq.init(roundQueue(0))
	d.setQP(qpn, q)
	d.poolAdd(poolQP)
	listAdd(&dom.pd.qps, q)
	dom.tgts[qpn] = q
	return c.tgtHandle(h, q, attr.Context), nil
}

// openQP does ibv_open_qp (ib_uverbs_open_qp, ib_open_qp): another handle
// to an XRC_RECV QP of the domain, found by number.
func (c *context) openQP(attr verbs.QPOpenAttr) (verbs.QP, error) {
	const op = "ibv_open_qp"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if !c.dev.f.cfg.XRC {
		return nil, c.dev.noXRC(op)
	}
	if attr.Type != verbs.QPTypeXRCRecv {
		return nil, verbs.Errorf(op, verbs.EINVAL, "open an xrc_recv QP: only they can be shared",
			"qp_type %s cannot be opened; ibv_open_qp takes only IBV_QPT_XRC_RECV (ib_open_qp)", attr.Type)
	}
	h, err := c.xrcdOf(op, attr.XRCD)
	if err != nil {
		return nil, err
	}
	q := h.dom.tgts[attr.QPNum]
	if q == nil || q.dead != "" {
		return nil, verbs.Errorf(op, verbs.EINVAL, "use the number of an XRC_RECV QP made in this same domain",
			"the XRC domain has no XRC_RECV QP %#x (ib_open_qp: not in xrcd->tgt_qps)", attr.QPNum)
	}
	return c.tgtHandle(h, q, attr.Context), nil
}

// tgtHandle makes a process's handle to an XRC_RECV QP.
func (c *context) tgtHandle(h *xrcd, q *qp, userCtx any) *tgtQP {
	q.opens++
	h.refs++
	t := &tgtQP{qp: q, h: h, userCtx: userCtx}
	listAdd(&c.tgtQPs, t)
	return t
}

// tgtQP is a process's handle to an XRC_RECV QP (the ib_qp that
// ib_open_qp returns, whose real_qp is shared). Verbs through it act on
// the shared QP until it is destroyed; the QP goes with its last handle.
type tgtQP struct {
	*qp
	inList
	h       *xrcd
	closed  string
	userCtx any
}

var _ verbs.QP = (*tgtQP)(nil)

// PD implements verbs.QP: an XRC_RECV QP has none.
func (t *tgtQP) PD() verbs.PD { return nil }

// XRCD implements verbs.DomainQP: the domain the handle came through.
func (t *tgtQP) XRCD() verbs.XRCD { return t.h }

var (
	_ verbs.DomainQP    = (*tgtQP)(nil)
	_ verbs.ExtendedSRQ = (*srq)(nil)
)

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
	if s.cq == nil || s.typ != verbs.SRQTypeXRC {
		return nil
	}
	return s.cq
}

func (t *tgtQP) checkHandle(op string) error {
	if t.closed != "" {
		return deadErr(op, t.qp.name(), t.closed)
	}
	return t.h.ctx.check(op)
}

// destroy closes the handle: the QP itself is destroyed with its last
// handle (__ib_destroy_shared_qp).
func (t *tgtQP) destroy() error {
	if err := t.checkHandle("ibv_destroy_qp"); err != nil {
		return err
	}
	t.closeLocked("ibv_destroy_qp")
	return nil
}

func (t *tgtQP) closeLocked(why string) {
	if t.closed != "" {
		return
	}
	t.closed = why
	c := t.h.ctx
	listRemove(&c.tgtQPs, t, &c.dev.listWork)
	t.h.refs--
	q := t.qp
	q.opens--
	if q.opens > 0 {
		return
	}
	dom := t.h.dom
	delete(dom.tgts, q.qpn)
	q.destroyLocked(why)
	if dom.opens == 0 && len(dom.tgts) == 0 && dom.path != "" && dom.dev.xdoms[dom.path] == dom {
		delete(dom.dev.xdoms, dom.path)
	}
}

// closeXRC closes a context's XRC handles as the context goes: its
// handles to target QPs first, then its domains.
func (c *context) closeXRC(why string) {
	for _, t := range append([]*tgtQP(nil), c.tgtQPs...) {
		t.closeLocked(why)
	}
	for _, x := range append([]*xrcd(nil), c.xrcds...) {
		x.refs = 0
		x.closeLocked(why)
	}
}

// xrcTarget is the XRC check of a request at an XRC_RECV QP: the XRCETH
// names the SRQ that serves it, which must be an XRC SRQ of the QP's
// domain. It sets q.srq for the rest of the request's way.
func (q *qp) xrcTarget(p *packet) (string, bool) {
	n := p.hdr.XRCETH & wire.QPNMask
	s := q.pd.ctx.dev.xsrqs[n]
	switch {
	case s == nil || s.dead != "":
		return fmt.Sprintf("the XRCETH names SRQ %#x, which %s does not have", n, q.pd.ctx.dev.name), false
	case s.typ != verbs.SRQTypeXRC || s.xrcd == nil || s.xrcd.dom.pd != q.pd:
		return fmt.Sprintf("the XRCETH names SRQ %#x, which is in another XRC domain than %s", n, q.name()), false
	}
	q.srq = s
	return "", true
}

// connected reports whether the QP is one end of a connection: RC, UC or
// either XRC type.
func (q *qp) connected() bool {
	return q.typ == verbs.QPTypeRC || q.typ == verbs.QPTypeUC || q.xrc()
}

// reliable reports whether the QP follows RC's rules: RC or either XRC
// type.
func (q *qp) reliable() bool { return q.typ == verbs.QPTypeRC || q.xrc() }

// xrc reports whether the QP is an XRC_SEND or XRC_RECV QP.
func (q *qp) xrc() bool { return q.typ == verbs.QPTypeXRCSend || q.typ == verbs.QPTypeXRCRecv }

// transport is the BTH transport of the QP's packets.
func (q *qp) transport() wire.Transport {
	switch q.typ {
	case verbs.QPTypeUC:
		return wire.UC
	case verbs.QPTypeUD:
		return wire.UD
	case verbs.QPTypeXRCSend, verbs.QPTypeXRCRecv:
		return wire.XRC
	}
	return wire.RC
}

// respOp is the responder's opcode op (an RC one) in the QP's transport.
func (q *qp) respOp(op wire.Opcode) wire.Opcode {
	return wire.Opcode(q.transport())<<5 | op&0x1f
}

// setXRC turns XRC on or off; off needs every XRC domain closed and every
// SRQ destroyed first, since with XRC they carry numbers.
func (f *Fabric) setXRC(on bool) error {
	if on == f.cfg.XRC {
		return nil
	}
	if !on {
		for _, d := range f.devs {
			for _, c := range d.ctxs {
				if len(c.xrcds) > 0 {
					return verbs.Errorf("xrc", verbs.EBUSY, "close the XRC domains first (close_xrcd)",
						"%s has XRC domains open", d.name)
				}
			}
			if len(d.xsrqs) > 0 {
				return verbs.Errorf("xrc", verbs.EBUSY, "destroy the SRQs first",
					"%s has SRQs, which carry numbers while XRC is on", d.name)
			}
		}
	}
	f.cfg.XRC = on
	return nil
}

// xrcSRQs counts the live XRC SRQs whose receives complete on q.
func (q *cq) xrcSRQs() int {
	n := 0
	for _, s := range q.ctx.dev.xsrqs {
		if s.cq == q && s.xrcd != nil && s.dead == "" {
			n++
		}
	}
	return n
}
