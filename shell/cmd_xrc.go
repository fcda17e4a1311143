package shell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// XRC (eXtended Reliable Connection): the extended verbs of
// verbs.ExtendedContext. An XRC domain (open_xrcd) holds XRC SRQs
// (create_srq_ex type=xrc) and XRC_RECV QPs (create_qp_ex CTX
// type=xrc_recv); a peer's XRC_SEND QP reaches every SRQ of the domain
// through one XRC_RECV QP, naming the SRQ by its number in each send
// (post_send remote_srqn=). Kernel rxe has none of it; the simulator has
// it when switched on (backend xrc=on, vsh --sim-xrc).

// xrcText is what XRC is, for help and explain xrc.
const xrcText = "XRC (eXtended Reliable Connection) lets one sending QP reach many receive queues of a peer: the receiver opens an " +
	"XRC domain (open_xrcd), makes XRC SRQs in it (create_srq_ex type=xrc), each with its own CQ, and one XRC_RECV QP " +
	"(create_qp_ex CTX type=xrc_recv); the sender's XRC_SEND QP connects to that QP like RC and names the SRQ in each send " +
	"(post_send remote_srqn=, the number get_srq_num gives). Kernel rxe has no XRC (every XRC verb fails with EOPNOTSUPP); " +
	"mlx5 has it, and so has the simulator with backend xrc=on or vsh --sim-xrc."

// ext returns the context's extended verbs, or the EOPNOTSUPP a provider
// without them gives through libibverbs' dummy ops.
func ext(ctx *object, op string) (verbs.ExtendedContext, error) {
	if x, ok := ctx.ctx.(verbs.ExtendedContext); ok {
		return x, nil
	}
	return nil, verbs.Errorf(op, verbs.EOPNOTSUPP, "XRC needs a device that has it (mlx5); the simulator has it with backend xrc=on",
		"%s's provider has no %s: libibverbs' dummy op answers EOPNOTSUPP (dummy_ops.c)", ctx.dev, strings.TrimPrefix(op, "ibv_"))
}

// parseOFlags reads open_xrcd's oflags=: O_CREAT, O_CREAT|O_EXCL, 0, short
// forms (creat, excl) or a number.
func parseOFlags(s string) (verbs.XRCDOFlags, error) {
	var f verbs.XRCDOFlags
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '|' || r == ',' }) {
		switch strings.TrimPrefix(w, "o_") {
		case "creat", "create":
			f |= verbs.XRCDCreate
		case "excl":
			f |= verbs.XRCDExcl
		case "0", "none":
		default:
			n, err := strconv.ParseUint(w, 0, 32)
			if err != nil {
				return 0, fmt.Errorf("%q is no open(2) flag ibv_open_xrcd reads: O_CREAT, O_EXCL, or 0", w)
			}
			f |= verbs.XRCDOFlags(n)
		}
	}
	return f, nil
}

// oflagsString prints oflags as open(2)'s names: O_CREAT|O_EXCL, 0.
func oflagsString(f verbs.XRCDOFlags) string {
	var names []string
	if f&verbs.XRCDCreate != 0 {
		names = append(names, "O_CREAT")
	}
	if f&verbs.XRCDExcl != 0 {
		names = append(names, "O_EXCL")
	}
	if rest := f &^ (verbs.XRCDCreate | verbs.XRCDExcl); rest != 0 {
		names = append(names, fmt.Sprintf("0%o", uint32(rest)))
	}
	if len(names) == 0 {
		return "0"
	}
	return strings.Join(names, "|")
}

func openXRCDCmd() *command {
	return &command{Name: "open_xrcd", Group: gQP, Usage: "open_xrcd CTX [file=PATH] [oflags=O_CREAT|O_EXCL]",
		Summary: "Open or create an XRC domain (ibv_open_xrcd): xrcd0",
		Help: "An XRC domain holds the XRC SRQs and XRC_RECV QPs that serve each other: a peer's XRC_SEND QP reaches every SRQ of the " +
			"domain through one XRC_RECV QP, naming the SRQ in each send. Processes share a domain by opening the same file: file= " +
			"names it (libibverbs takes the file's descriptor, which vsh opens as rdma-core's programs do, O_RDONLY|O_CREAT); " +
			"without file= the domain is new and private (fd -1). oflags= are open(2)'s: O_CREAT makes the domain when the file has " +
			"none (without it, EAGAIN), O_EXCL with it refuses a file that has one (EINVAL). Kernel rxe has no XRC: there every XRC " +
			"verb fails with EOPNOTSUPP; the simulator has it with backend xrc=on or vsh --sim-xrc.\n\n" +
			"\topen_xrcd ctx1\n\topen_xrcd ctx1 file=/tmp/xrc_domain oflags=O_CREAT",
		Args: []argSpec{argCtx,
			key("file", vFile, "none: fd -1, a private domain", "the file that names the domain; opens of the same file share it", "path"),
			key("oflags", vOFlags, "O_CREAT", "open(2) flags: O_CREAT, O_CREAT|O_EXCL or 0")},
		run: cmdOpenXRCD}
}

func cmdOpenXRCD(c *call) error {
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	flags, err := value(c, "oflags", parseOFlags)
	if err != nil {
		return err
	}
	path := c.raw("file")
	if c.has("file") && path == "" {
		return usagef("open_xrcd "+ctx.name+" file=/tmp/xrc_domain, or no file= for a private domain", "file= is empty")
	}
	fd := "-1"
	if _, sim := c.s.prov.(verbs.XRCSwitch); path != "" && sim {
		// The simulator's domains live in its device: it names one by
		// the path and opens no file.
		fd = fmt.Sprintf("(the file %s; the simulator opens none)", strconv.Quote(path))
	} else if path != "" {
		fd = fmt.Sprintf("open(%s, O_RDONLY|O_CREAT)", strconv.Quote(path))
	}
	vc := VerbCall{Name: "ibv_open_xrcd", Args: fmt.Sprintf("%s, fd=%s, oflags=%s", c.s.hn(ctx), fd, oflagsString(flags))}
	x, err := ext(ctx, vc.Name)
	if err != nil {
		return err
	}
	xd, err := x.OpenXRCD(verbs.XRCDInitAttr{Path: path, OFlags: flags})
	if err != nil {
		return c.s.xrcHint(err)
	}
	var same []string
	for _, o := range c.s.h.ofKind(kXRCD) {
		if path != "" && o.xrcdPath == path && o.dev == ctx.dev {
			same = append(same, o.name)
		}
	}
	o := c.s.h.add(&object{kind: kXRCD, xd: xd, parent: ctx, dev: ctx.dev, xrcdPath: path, xrcdFlags: flags})
	c.created(o)
	vc.Result = "→ " + c.s.hn(o)
	c.verbs(vc)
	switch {
	case path == "":
		c.line("%s: a new XRC domain on %s, private: no file names it, so no other open finds it", o.name, o.dev)
	case len(same) > 0:
		c.line("%s: the XRC domain of %s on %s, which %s opened too: one domain, %d handles", o.name, strconv.Quote(path), o.dev,
			strings.Join(same, ", "), len(same)+1)
	default:
		c.line("%s: the XRC domain of %s on %s; every open of that file on %s finds it", o.name, strconv.Quote(path), o.dev, o.dev)
	}
	return nil
}

func closeXRCDCmd() *command {
	return &command{Name: "close_xrcd", Group: gQP, Usage: "close_xrcd XRCD",
		Summary: "Close an XRC domain (ibv_close_xrcd)",
		Help:    "EBUSY while XRC SRQs or XRC_RECV QPs made through it live: destroy them first.",
		Args:    []argSpec{pos("XRCD", vXRCD, true, "an XRC domain: xrcd0")}, run: cmdCloseXRCD}
}

func cmdCloseXRCD(c *call) error {
	o, err := c.obj(0, kXRCD)
	if err != nil {
		return err
	}
	if err := o.xd.Close(); err != nil {
		return xrcdBusy(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_close_xrcd", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func createSRQExCmd() *command {
	return &command{Name: "create_srq_ex", Group: gQP,
		Usage:   "create_srq_ex PD type=basic|xrc [xrcd=XRCD cq=CQ] [max_wr=64] [max_sge=1] [srq_limit=0]",
		Summary: "Create an SRQ of any type (ibv_create_srq_ex): an XRC SRQ in an XRC domain, with a CQ of its own",
		Help: "type=basic makes what create_srq makes. type=xrc makes an XRC SRQ: it belongs to the XRC domain xrcd= as well as to " +
			"the PD, and its receives complete on its own CQ, cq=, whichever XRC_RECV QP brought the message. Senders name it by its " +
			"number (get_srq_num) in post_send remote_srqn=.\n\n" +
			"\tcreate_srq_ex pd1 type=xrc xrcd=xrcd0 cq=cq1 max_wr=16",
		Args: []argSpec{argPD,
			reqKey("type", vSRQType, "basic or xrc (or IBV_SRQT_BASIC, IBV_SRQT_XRC)", "srq_type"),
			key("xrcd", vXRCD, "", "type=xrc: the XRC domain"),
			key("cq", vCQ, "", "type=xrc: the CQ its receives complete on"),
			key("max_wr", vNum, "64", "the queue depth"), key("max_sge", vNum, "1", "SGEs per WR"),
			key("srq_limit", vNum, "0", "raise IBV_EVENT_SRQ_LIMIT_REACHED below this many WRs", "limit")},
		run: cmdCreateSRQEx}
}

func cmdCreateSRQEx(c *call) error {
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	typ, err := verbs.ParseSRQType(c.raw("type"))
	if err != nil {
		return c.bad("type", err)
	}
	xd, _, err := c.keyObj("xrcd", kXRCD)
	if err != nil {
		return err
	}
	cq, _, err := c.keyObj("cq", kCQ)
	if err != nil {
		return err
	}
	if typ != verbs.SRQTypeXRC && (xd != nil || cq != nil) {
		return usagef("drop xrcd= and cq=, or make it type=xrc",
			"xrcd= and cq= are for an XRC SRQ; a %s SRQ's receives complete on the CQ of the QP that takes them", typ.Short())
	}
	var a verbs.SRQAttr
	if a.MaxWR, err = c.intArg("max_wr"); err != nil {
		return err
	}
	if a.MaxSGE, err = c.intArg("max_sge"); err != nil {
		return err
	}
	if a.SRQLimit, err = c.intArg("srq_limit"); err != nil {
		return err
	}
	ctx := pd.parent
	args := fmt.Sprintf("%s, srq_type=%s, pd=%s", c.s.hn(ctx), typ, pd.name)
	attr := verbs.SRQInitAttrEx{Attr: a, Type: typ, PD: pd.pd}
	if typ == verbs.SRQTypeXRC {
		args += fmt.Sprintf(", xrcd=%s, cq=%s", nameOr(xd), nameOr(cq))
		if xd != nil {
			attr.XRCD = xd.xd
		}
		if cq != nil {
			attr.CQ = cq.cq
		}
	}
	args += fmt.Sprintf(", max_wr=%d, max_sge=%d, srq_limit=%d", a.MaxWR, a.MaxSGE, a.SRQLimit)
	x, err := ext(ctx, "ibv_create_srq_ex")
	if err != nil {
		return err
	}
	srq, err := x.CreateSRQEx(attr)
	if err != nil {
		return c.s.xrcHint(err)
	}
	o := c.s.h.add(&object{kind: kSRQ, srq: srq, parent: pd, dev: pd.dev, rqDepth: a.MaxWR, srqType: typ})
	if typ == verbs.SRQTypeXRC {
		o.xrcdObj, o.recvCQ = xd, cq
	}
	if q, err := srq.Query(); err == nil && q.MaxWR > 0 {
		o.rqDepth = q.MaxWR
	}
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_srq_ex", Args: args, Result: "→ " + c.s.hn(o)})
	if typ == verbs.SRQTypeXRC {
		c.line("%s: an XRC SRQ in %s; its receives complete on %s, whichever XRC_RECV QP brings them; senders name it by its number: get_srq_num %s",
			o.name, xd.name, cq.name, o.name)
	}
	return nil
}

func getSRQNumCmd() *command {
	return &command{Name: "get_srq_num", Group: gQP, Usage: "get_srq_num SRQ",
		Summary: "Print an SRQ's number, which an XRC sender names in remote_srqn (ibv_get_srq_num)",
		Help: "The number is the device's, like a QP number: the peer's XRC_SEND QP puts it in the XRCETH of every request " +
			"(post_send QP remote_srqn=N) and the XRC_RECV QP hands the message to that SRQ. Only XRC-capable devices number SRQs; " +
			"on rxe it fails with EOPNOTSUPP.",
		Args: []argSpec{argSRQ}, run: cmdGetSRQNum}
}

func cmdGetSRQNum(c *call) error {
	o, err := c.obj(0, kSRQ)
	if err != nil {
		return err
	}
	n, err := o.srq.Num()
	if err != nil {
		return c.s.xrcHint(err)
	}
	c.verbs(VerbCall{Name: "ibv_get_srq_num", Args: c.s.hn(o) + ", &srq_num", Result: fmt.Sprintf("= 0: srq_num %s (%d)", hex24(n), n)})
	c.line("a sender names %s with post_send QP remote_srqn=%s (or remote_srqn=%s in this session)", o.name, hex24(n), o.name)
	return nil
}

func createQPExCmd() *command {
	return &command{Name: "create_qp_ex", Group: gQP,
		Usage: "create_qp_ex PD type=rc|uc|ud|xrc_send send_cq=CQ [recv_cq=CQ] [srq=SRQ] [max_send_wr=16] [max_recv_wr=16] " +
			"[max_send_sge=1] [max_recv_sge=1] [max_inline=0] [sq_sig_all] | create_qp_ex CTX type=xrc_recv xrcd=XRCD",
		Summary: "Create a QP of any type (ibv_create_qp_ex): XRC_SEND with a PD, XRC_RECV in an XRC domain",
		Help: "With a PD it makes what create_qp makes, and also XRC_SEND QPs: the sending half of XRC, with a send queue and no " +
			"receive side (no recv_cq, no SRQ). type=xrc_recv takes a device context and an XRC domain instead: the receiving " +
			"half, with no PD, no CQs and no queues of its own; each message it takes goes to the XRC SRQ its sender names and " +
			"completes on that SRQ's CQ. Both walk RESET → INIT → RTR → RTS with modify_qp (or connect) as RC does.\n\n" +
			"\tcreate_qp_ex pd0 type=xrc_send send_cq=cq0\n\tcreate_qp_ex ctx1 type=xrc_recv xrcd=xrcd0",
		Args: []argSpec{pos("PD|CTX", vPDOrCtx, true, "the PD; for type=xrc_recv the device context"),
			reqKey("type", vQPTypeEx, "the transport: rc, uc, ud, xrc_send or xrc_recv (or IBV_QPT_...)", "qp_type"),
			key("send_cq", vCQ, "", "the CQ for send completions"),
			key("recv_cq", vCQ, "", "the CQ for receive completions (none for xrc_send)"),
			key("srq", vSRQ, "none", "a shared receive queue"),
			key("xrcd", vXRCD, "", "type=xrc_recv: the XRC domain"),
			key("max_send_wr", vNum, "16", "send queue depth"),
			key("max_recv_wr", vNum, "16", "receive queue depth"),
			key("max_send_sge", vNum, "1", "SGEs per send WR"),
			key("max_recv_sge", vNum, "1", "SGEs per receive WR"),
			key("max_inline", vNum, "0", "bytes a send may carry inline", "max_inline_data"),
			flag("sq_sig_all", "every send WR completes with a CQE")},
		run: cmdCreateQPEx}
}

func cmdCreateQPEx(c *call) error {
	typ, err := verbs.ParseQPType(c.raw("type"))
	if err != nil {
		return c.bad("type", err)
	}
	first := c.a.pos[0].text
	if typ == verbs.QPTypeXRCRecv {
		return createXRCRecv(c, first)
	}
	if o, ok := c.s.h.byName[strings.ToLower(first)]; ok && o.kind == kCtx {
		return usagef(fmt.Sprintf("create_qp_ex PD type=%s send_cq=CQ: give a PD of %s", typ.Short(), o.name),
			"%s needs a PD; only an XRC_RECV QP is made from a context, in an XRC domain", aQP(typ))
	}
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	if c.has("xrcd") {
		return usagef("drop xrcd=: an XRC_SEND QP reaches the peer's domain through its XRC_RECV QP",
			"xrcd= is for type=xrc_recv; %s belongs to its PD", aQP(typ))
	}
	if !c.has("send_cq") {
		return usagef(c.cmd.usageHint(), "missing send_cq=")
	}
	if typ != verbs.QPTypeXRCSend && !c.has("recv_cq") {
		return usagef(c.cmd.usageHint(), "missing recv_cq= (only an XRC_SEND QP has no receive side)")
	}
	var notes []string
	if typ == verbs.QPTypeXRCSend {
		for _, k := range []string{"recv_cq", "srq", "max_recv_wr", "max_recv_sge"} {
			if c.has(k) {
				notes = append(notes, k+"= is ignored: an XRC_SEND QP has no receive side (the kernel drops it, create_qp in uverbs_cmd.c)")
			}
		}
	}
	return createQP(c, pd, typ, true, notes)
}

// createXRCRecv is create_qp_ex CTX type=xrc_recv xrcd=XRCD.
func createXRCRecv(c *call, first string) error {
	if o, ok := c.s.h.byName[strings.ToLower(first)]; ok && o.kind == kPD {
		return usagef(fmt.Sprintf("create_qp_ex %s type=xrc_recv xrcd=XRCD", o.parent.name),
			"an XRC_RECV QP has no PD: it belongs to an XRC domain; give the device context (%s) and xrcd=", o.parent.name)
	}
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	for _, k := range []string{"send_cq", "recv_cq", "srq", "max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline"} {
		if c.has(k) {
			return usagef(fmt.Sprintf("create_qp_ex %s type=xrc_recv xrcd=XRCD", ctx.name),
				"%s= is not for an XRC_RECV QP: it has no CQs, no SRQ and no queues; its messages go to the XRC SRQs of its domain", k)
		}
	}
	if c.a.flags["sq_sig_all"] {
		return usagef(fmt.Sprintf("create_qp_ex %s type=xrc_recv xrcd=XRCD", ctx.name), "sq_sig_all is not for an XRC_RECV QP: it sends nothing")
	}
	xd, _, err := c.keyObj("xrcd", kXRCD)
	if err != nil {
		return err
	}
	attr := verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}}
	if xd != nil {
		attr.XRCD = xd.xd
	}
	x, err := ext(ctx, "ibv_create_qp_ex")
	if err != nil {
		return err
	}
	qp, err := x.CreateQPEx(attr)
	if err != nil {
		return c.s.xrcHint(err)
	}
	parent := xd
	if parent == nil {
		parent = ctx
	}
	o := c.s.h.add(&object{kind: kQP, qp: qp, parent: parent, dev: ctx.dev, qpType: verbs.QPTypeXRCRecv})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_qp_ex", Args: fmt.Sprintf("%s, qp_type=%s, xrcd=%s", c.s.hn(ctx), verbs.QPTypeXRCRecv, nameOr(xd)),
		Result: "→ " + c.s.hn(o)})
	c.line("%s: qp_num %s (%d) in %s: no PD, no CQs, no queues; each message goes to the XRC SRQ its sender names and completes on that SRQ's CQ",
		o.name, hex24(qp.Num()), qp.Num(), nameOr(xd))
	return nil
}

func openQPCmd() *command {
	return &command{Name: "open_qp", Group: gQP, Usage: "open_qp CTX xrcd=XRCD qp_num=N [type=xrc_recv]",
		Summary: "Open another handle to an XRC_RECV QP of an XRC domain (ibv_open_qp)",
		Help: "An XRC_RECV QP belongs to its domain, not to the process that made it: another process that opened the same domain " +
			"(open_xrcd with the same file) reaches it by its number. The QP lives until its last handle is destroyed.\n\n" +
			"\topen_qp ctx1 xrcd=xrcd1 qp_num=qp1",
		Args: []argSpec{argCtx,
			reqKey("xrcd", vXRCD, "the XRC domain the QP is in"),
			reqKey("qp_num", vQPN, "the QP's number (or its handle)", "qpn"),
			key("type", vQPTypeEx, "xrc_recv", "the QP's type: only xrc_recv can be opened", "qp_type")},
		run: cmdOpenQP}
}

func cmdOpenQP(c *call) error {
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	xd, _, err := c.keyObj("xrcd", kXRCD)
	if err != nil {
		return err
	}
	n, _, err := c.qpn("qp_num")
	if err != nil {
		return err
	}
	if v := c.raw("qp_num"); v != "" {
		if k, isHandle := kindOfName(v); isHandle && k == kQP {
			if q, err := c.s.h.lookup(v, kQP); err == nil && (q.qpType != verbs.QPTypeXRCRecv || q.dev != ctx.dev) {
				return usagef("give the number of an XRC_RECV QP made in "+xd.name+" on "+ctx.dev,
					"%s is %s on %s, not an XRC_RECV QP of %s on %s: open_qp opens an XRC_RECV QP of the domain by its number",
					v, q.qpType, q.dev, xd.name, ctx.dev)
			}
		}
	}
	typ, err := value(c, "type", verbs.ParseQPType)
	if err != nil {
		return err
	}
	x, err := ext(ctx, "ibv_open_qp")
	if err != nil {
		return err
	}
	qp, err := x.OpenQP(verbs.QPOpenAttr{QPNum: n, XRCD: xd.xd, Type: typ})
	if err != nil {
		return c.s.xrcHint(err)
	}
	before := c.s.qpName(n, ctx.dev)
	o := c.s.h.add(&object{kind: kQP, qp: qp, parent: xd, dev: ctx.dev, qpType: typ})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_open_qp", Args: fmt.Sprintf("%s, qp_num=%s, xrcd=%s, qp_type=%s", c.s.hn(ctx), hex24(n), nameOr(xd), typ),
		Result: "→ " + c.s.hn(o)})
	c.line("%s: another handle to XRC_RECV QP %s; the QP goes with its last handle", o.name, before)
	return nil
}

// xrcHint tells, on an XRC verb's EOPNOTSUPP from a backend that can
// switch XRC on, how the learner does it in this session.
func (s *Shell) xrcHint(err error) error {
	ve, ok := verbs.AsError(err)
	if _, sw := s.prov.(verbs.XRCSwitch); !ok || !sw || ve.Errno != verbs.EOPNOTSUPP || s.xrcOn() {
		return err
	}
	e := *ve
	e.Hint = "backend xrc=on gives the simulator XRC, as mlx5 has it (vsh --sim-xrc starts with it on)"
	return &e
}

// xrcdBusy names, on close_xrcd's EBUSY, what was made through the
// domain's handle: its XRC SRQs and XRC_RECV QPs.
func xrcdBusy(err error, s *Shell, o *object) error {
	ve, ok := verbs.AsError(err)
	if !ok || ve.Errno != verbs.EBUSY {
		return err
	}
	var users []string
	for _, u := range append(s.h.children(o), s.h.users(o)...) {
		users = append(users, u.name)
	}
	if len(users) == 0 {
		return err
	}
	e := *ve
	e.Hint = fmt.Sprintf("destroy what was made through %s first: %s", o.name, strings.Join(users, ", "))
	return &e
}

// remoteSRQN reads post_send's remote_srqn=: a number, or an SRQ handle
// whose number ibv_get_srq_num gives.
func (c *call) remoteSRQN() (uint32, bool, error) {
	v, ok := c.a.kv["remote_srqn"]
	if !ok {
		return 0, false, nil
	}
	if k, isHandle := kindOfName(v); isHandle {
		if k != kSRQ {
			return 0, true, c.bad("remote_srqn", fmt.Errorf("%s is a %s; give an SRQ (srq1) or an SRQ number", v, kindInfo[k].noun))
		}
		o, err := c.s.h.lookup(v, kSRQ)
		if err != nil {
			return 0, true, err
		}
		n, err := o.srq.Num()
		if err != nil {
			return 0, true, err
		}
		return n, true, nil
	}
	n, err := parseUint(v, 24)
	if err != nil {
		return 0, true, c.bad("remote_srqn", err)
	}
	return uint32(n), true, nil
}

// srqName prints an SRQ number with the handles of the session's XRC
// SRQs of that number (numbers are per device): 0x000040 (srq0).
func (s *Shell) srqName(n uint32) string {
	var names []string
	for _, o := range s.h.ofKind(kSRQ) {
		if o.srqType != verbs.SRQTypeXRC {
			continue
		}
		if m, err := o.srq.Num(); err == nil && m == n {
			names = append(names, o.name+" on "+o.dev)
		}
	}
	if len(names) == 0 {
		return hex24(n)
	}
	return hex24(n) + " (" + strings.Join(names, " or ") + ")"
}

// xrcSRQOf returns the XRC SRQ whose receives complete on cq, the first
// with receives posted when several share it; nil for none.
func (s *Shell) xrcSRQOf(cq *object) *object {
	var first *object
	for _, o := range s.h.ofKind(kSRQ) {
		if o.srqType != verbs.SRQTypeXRC || o.recvCQ != cq {
			continue
		}
		if o.recvs > 0 {
			return o
		}
		if first == nil {
			first = o
		}
	}
	return first
}

// aQP is "an RC QP", "a UD QP": a QP of type t, with its article.
func aQP(t verbs.QPType) string {
	name := strings.ToUpper(t.Short())
	switch t {
	case verbs.QPTypeUC, verbs.QPTypeUD:
		return "a " + name + " QP"
	}
	return "an " + name + " QP"
}

// xrcState is what the backend command says of XRC: on, off, or what the
// backend cannot switch.
func (s *Shell) xrcState() string {
	sw, ok := s.prov.(verbs.XRCSwitch)
	switch {
	case !ok:
		return "the device's own: vsh cannot switch it on this backend (mlx5 has XRC, rxe has none; open_xrcd tells)"
	case sw.XRC():
		return "on — beyond rxe: XRC as mlx5 implements it (backend xrc=off turns it off)"
	}
	return "off — as kernel rxe, which has no XRC verbs (backend xrc=on turns it on)"
}

// setXRC turns the backend's XRC on or off through verbs.XRCSwitch, and
// keeps the choice for the backends reset opens.
func (s *Shell) setXRC(on bool) error {
	sw, ok := s.prov.(verbs.XRCSwitch)
	if !ok {
		return usagef("XRC is the device's own here: open_xrcd works where the device has it (mlx5), and fails with EOPNOTSUPP where not (rxe)",
			"the %s backend cannot switch XRC on or off: its devices have XRC or not", s.prov.Name())
	}
	if err := sw.SetXRC(on); err != nil {
		return err
	}
	s.xrcWant = &on
	return nil
}

// applyXRC gives a backend just opened the XRC setting the session chose.
func (s *Shell) applyXRC() {
	if s.xrcWant == nil {
		return
	}
	if sw, ok := s.prov.(verbs.XRCSwitch); ok {
		sw.SetXRC(*s.xrcWant) // a new backend has no domains: this cannot be EBUSY
	}
}

// xrcOn reports whether the backend's XRC is switched on.
func (s *Shell) xrcOn() bool {
	sw, ok := s.prov.(verbs.XRCSwitch)
	return ok && sw.XRC()
}

// needXRC is the lesson need xrc: on a backend that can switch XRC, it
// turns it on (what it says is for the learner, "" when it was on
// already); elsewhere the device must have XRC itself, which a private
// ibv_open_xrcd on the first device tells, and the error says why not.
func (s *Shell) needXRC() (string, error) {
	if sw, ok := s.prov.(verbs.XRCSwitch); ok {
		if sw.XRC() {
			return "", nil
		}
		if err := s.setXRC(true); err != nil {
			return "", err
		}
		return "» XRC is on for this lesson: the simulator goes beyond rxe, as mlx5 does (backend xrc=off turns it off)\n", nil
	}
	if why := xrcMissing(s.devs); why != "" {
		return "", usagef("take it on the simulator, which turns XRC on for it: vsh --backend sim lesson ...", "xrc: %s", why)
	}
	return "", nil
}

// xrcMissing says why the first of devs has no XRC, "" when it has: an
// ibv_open_xrcd of a private domain, closed at once, is the test.
func xrcMissing(devs []verbs.Device) string {
	if len(devs) == 0 {
		return "the backend has no device"
	}
	ctx, err := devs[0].Open()
	if err != nil {
		return fmt.Sprintf("opening %s: %v", devs[0].Name(), err)
	}
	defer ctx.Close()
	x, ok := ctx.(verbs.ExtendedContext)
	if !ok {
		return devs[0].Name() + "'s provider has no extended verbs: ibv_open_xrcd answers EOPNOTSUPP"
	}
	xd, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
	if err != nil {
		if ve, ok := verbs.AsError(err); ok && ve.Why != "" {
			return fmt.Sprintf("ibv_open_xrcd on %s: %s: %s", devs[0].Name(), verbs.ErrnoName(ve.Errno), ve.Why)
		}
		return fmt.Sprintf("ibv_open_xrcd on %s: %v", devs[0].Name(), err)
	}
	xd.Close()
	return ""
}
