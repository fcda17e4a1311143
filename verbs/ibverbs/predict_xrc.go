package ibverbs

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// The predictions of the extended verbs XRC needs (ibv_open_xrcd,
// ibv_create_srq_ex, ibv_create_qp_ex, ibv_open_qp, ibv_get_srq_num). On a
// device without XRC they are exact: rdma-core 44's rxe provider registers
// no open_xrcd, open_qp or get_srq_num, so libibverbs' dummy ops answer
// EOPNOTSUPP (libibverbs/dummy_ops.c), and its create_srq_ex and
// create_qp_ex refuse what needs a domain with libibverbs' own EINVAL
// (ibv_icmd_create_srq, ibv_icmd_create_qp) before the kernel sees the
// call. On a device with XRC (mlx5) only libibverbs' checks are predicted;
// the rest is the device's to say.

// deviceXRC is IBV_DEVICE_XRC in device_cap_flags: the device has XRC
// domains. rxe does not set it.
const deviceXRC = 1 << 20

// hasXRC reports whether the device says it has XRC.
func (d *devFacts) hasXRC() bool { return d.Attr.DeviceCapFlags&deviceXRC != 0 }

// xrcHint is what to do about a device without XRC.
const xrcHint = "XRC needs a NIC that has it (mlx5); the simulator has it with --sim-xrc"

// noXRC is the refusal of a verb whose provider op is libibverbs' dummy.
func noXRC(p *prediction, op string) {
	p.fail(verbs.EOPNOTSUPP, xrcHint,
		"rxe has no XRC: its provider registers no %s, so libibverbs' dummy op answers EOPNOTSUPP (libibverbs/dummy_ops.c; the device does not set IBV_DEVICE_XRC)", op)
}

// predictOpenXRCD is ibv_open_xrcd: the provider's open_xrcd, then the
// kernel's ib_uverbs_open_xrcd. hasPath says the domain is named by a file
// (fd != -1).
func predictOpenXRCD(d *devFacts, hasPath bool, oflags verbs.XRCDOFlags) prediction {
	p := prediction{call: fmt.Sprintf("path %v, oflags %#o", hasPath, uint32(oflags))}
	if !d.hasXRC() {
		p.exhaustive = true
		noXRC(&p, "open_xrcd")
		return p
	}
	if hasPath {
		if oflags&verbs.XRCDCreate == 0 {
			p.maybe(verbs.EAGAIN, "pass O_CREAT to create the domain",
				"the file names no XRC domain yet, and O_CREAT is not set (ib_uverbs_open_xrcd)")
		}
		if oflags&verbs.XRCDExcl != 0 {
			p.maybe(verbs.EINVAL, "drop O_EXCL to share the domain, or use another file",
				"the file already names an XRC domain, and O_EXCL asks for a new one (ib_uverbs_open_xrcd)")
		}
	}
	p.maybe(verbs.ENOMEM, "close unused XRC domains", "the device could not allocate the domain")
	return p
}

// srqExCall is what predictCreateSRQEx needs to know of a create_srq_ex
// call: which comp_mask fields it carries.
type srqExCall struct {
	Type           verbs.SRQType
	Attr           verbs.SRQAttr
	HasPD, HasXRCD bool
	HasCQ          bool
}

// legacy reports whether libibverbs' ibv_create_srq_ex hands the call to
// ibv_create_srq: only PD and TYPE in comp_mask, a PD, a basic SRQ.
func (c srqExCall) legacy() bool {
	return c.HasPD && !c.HasXRCD && !c.HasCQ && c.Type == verbs.SRQTypeBasic
}

// predictCreateSRQEx is ibv_create_srq_ex on rdma-core 44 over rxe: the
// legacy ibv_create_srq for a plain basic SRQ; otherwise rxe's
// create_srq_ex, whose ibv_cmd_create_srq_ex and ibv_icmd_create_srq check
// the comp_mask before the kernel (rxe_srq_chk_init) sees a basic SRQ.
func predictCreateSRQEx(d *devFacts, c srqExCall) prediction {
	if c.legacy() {
		p := predictCreateSRQ(d, c.Attr)
		p.call = "basic, " + p.call
		return p
	}
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s, pd %v, xrcd %v, cq %v, %+v", c.Type, c.HasPD, c.HasXRCD, c.HasCQ, c.Attr)}
	if !c.HasPD {
		p.fail(verbs.EINVAL, "allocate a PD and pass it: every SRQ needs one",
			"the call has no PD (IBV_SRQ_INIT_ATTR_PD), which every SRQ needs (libibverbs ibv_cmd_create_srq_ex)")
		return p
	}
	switch c.Type {
	case verbs.SRQTypeXRC:
		if !c.HasXRCD || !c.HasCQ {
			var missing string
			switch {
			case !c.HasXRCD && !c.HasCQ:
				missing = "an XRC domain (IBV_SRQ_INIT_ATTR_XRCD) and a CQ (IBV_SRQ_INIT_ATTR_CQ)"
			case !c.HasXRCD:
				missing = "an XRC domain (IBV_SRQ_INIT_ATTR_XRCD)"
			default:
				missing = "a CQ (IBV_SRQ_INIT_ATTR_CQ), where its receives complete"
			}
			why := "an XRC SRQ needs " + missing + "; libibverbs refuses it without (ibv_icmd_create_srq), before the kernel"
			hint := "open an XRC domain (open_xrcd) and pass it with a CQ"
			if !d.hasXRC() {
				why += ". rxe has no XRC domains to give it: its provider registers no open_xrcd"
				hint = xrcHint
			}
			p.fail(verbs.EINVAL, hint, "%s", why)
			return p
		}
		if !d.hasXRC() {
			// Not reachable: without open_xrcd there is no domain to pass.
			p.fail(verbs.EOPNOTSUPP, xrcHint, "rxe has no XRC SRQs (rxe_create_srq takes IB_SRQT_BASIC only)")
			return p
		}
		p.exhaustive = false
	case verbs.SRQTypeTM:
		p.fail(verbs.EINVAL, "use srq_type basic or xrc",
			"a tag-matching SRQ needs IBV_SRQ_INIT_ATTR_TM with max_num_tags and a CQ, which vsh does not pass; libibverbs refuses it (ibv_icmd_create_srq)")
		return p
	default:
		// A basic SRQ with extra fields: the kernel sees a basic SRQ.
		p.add(d.profile().CreateSRQ(c.Attr))
	}
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the SRQ")
	return p
}

// qpExCall is what predictCreateQPEx needs to know of a create_qp_ex call.
type qpExCall struct {
	qpCreate
	HasPD, HasXRCD bool
}

// predictCreateQPEx is ibv_create_qp_ex on rdma-core 44 over rxe: with
// only a PD in comp_mask, libibverbs calls ibv_create_qp (predictCreateQP);
// otherwise rxe's create_qp_ex refuses comp_mask bits it lacks (XRCD,
// check_qp_init_attr) with EOPNOTSUPP, and ibv_icmd_create_qp refuses an
// XRC_RECV QP without an XRC domain, or another type without a PD, with
// EINVAL.
func predictCreateQPEx(d *devFacts, c qpExCall) prediction {
	if c.HasPD && !c.HasXRCD {
		p := predictCreateQP(d, c.qpCreate)
		if (c.Type == verbs.QPTypeXRCSend || c.Type == verbs.QPTypeXRCRecv) && !d.hasXRC() {
			for i := range p.reasons {
				if r := &p.reasons[i]; r.certain {
					if !strings.Contains(r.why, "rxe") {
						r.why = "rxe has no XRC: " + r.why
					}
					r.why += "; with only a PD in comp_mask, ibv_create_qp_ex is ibv_create_qp"
					r.hint = xrcHint
				}
			}
		}
		return p
	}
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s, pd %v, xrcd %v, cap %+v, srq %v", c.Type, c.HasPD, c.HasXRCD, c.Cap, c.HasSRQ)}
	if c.HasXRCD && !d.hasXRC() {
		// Not reachable: without open_xrcd there is no domain to pass.
		p.fail(verbs.EOPNOTSUPP, xrcHint, "rxe has no XRC: its create_qp_ex takes no IBV_QP_INIT_ATTR_XRCD (check_qp_init_attr)")
		return p
	}
	switch c.Type {
	case verbs.QPTypeXRCRecv:
		if !c.HasXRCD {
			why := "an XRC_RECV QP is made in an XRC domain (IBV_QP_INIT_ATTR_XRCD), and the call has none; libibverbs refuses it (ibv_icmd_create_qp)"
			hint := "open an XRC domain (open_xrcd) and pass it as xrcd"
			if !d.hasXRC() {
				why += ". rxe has no XRC domains to give it: its provider registers no open_xrcd"
				hint = xrcHint
			}
			p.fail(verbs.EINVAL, hint, "%s", why)
			return p
		}
		p.exhaustive = false
		return p
	case verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD, verbs.QPTypeRawPacket, verbs.QPTypeXRCSend:
		if !c.HasPD {
			p.fail(verbs.EINVAL, "allocate a PD and pass it", "a QP of type %s needs a PD (IBV_QP_INIT_ATTR_PD), and the call has none; libibverbs refuses it (ibv_icmd_create_qp)", c.Type)
			return p
		}
		// A PD and an XRCD, on a device with XRC: the kernel refuses the
		// XRCD on any type but XRC_RECV (UVERBS_METHOD_QP_CREATE).
		p.maybe(verbs.EINVAL, "pass an XRC domain only with xrc_recv", "only an XRC_RECV QP takes an XRC domain (UVERBS_METHOD_QP_CREATE)")
		p.exhaustive = false
		return p
	}
	p.fail(verbs.EINVAL, "use rc, uc or ud", "%s is not a QP type libibverbs knows (ibv_icmd_create_qp)", c.Type)
	return p
}

// predictOpenQP is ibv_open_qp: the provider's open_qp, then the kernel's
// ib_uverbs_open_qp and ib_open_qp.
func predictOpenQP(d *devFacts, t verbs.QPType, hasXRCD bool) prediction {
	p := prediction{call: fmt.Sprintf("%s, xrcd %v", t, hasXRCD)}
	if !d.hasXRC() {
		p.exhaustive = true
		noXRC(&p, "open_qp")
		return p
	}
	if !hasXRCD {
		p.fail(verbs.EINVAL, "pass the XRC domain the QP was made in",
			"ibv_open_qp finds the QP in an XRC domain (IBV_QP_OPEN_ATTR_XRCD), and the call has none (ibv_cmd_open_qp)")
		return p
	}
	if t != verbs.QPTypeXRCRecv {
		p.maybe(verbs.EINVAL, "open an xrc_recv QP: only they can be shared", "ibv_open_qp takes only IBV_QPT_XRC_RECV (ib_open_qp)")
	}
	p.maybe(verbs.EINVAL, "use the number of an XRC_RECV QP made in this same domain", "the domain has no XRC_RECV QP of that number (ib_open_qp)")
	return p
}

// predictSRQNum is ibv_get_srq_num.
func predictSRQNum(d *devFacts, t verbs.SRQType) prediction {
	p := prediction{call: t.String()}
	if !d.hasXRC() {
		p.exhaustive = true
		p.fail(verbs.EOPNOTSUPP, xrcHint,
			"rxe has no XRC: its provider registers no get_srq_num, so libibverbs answers EOPNOTSUPP (verbs.h ibv_get_srq_num); "+
				"an SRQ number is what an XRC sender names (remote_srqn), and only XRC SRQs need one")
	}
	return p
}
