package lessons

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/internal/number"
	"github.com/vsh-rdma/vsh/verbs"
)

// An Expect is one "expect:" line: SUBJECT OP VALUE, where the subject is
// read from the session — object state through the verbs API, completions
// and errors from the log of what the step's commands returned — and never
// from printed text. The grammar is in the package documentation and in
// docs/writing-lessons.md.
type Expect struct {
	Line int    // the line of the lesson file
	Text string // as written after "expect:"

	subj subject
	op   string
	rhs  string // the value as written
	list bool   // the value is a [list]

	// seen, when set, keeps the values the subject was read as: a
	// prediction's answer is read so (Prediction.observe).
	seen *observation
}

// observation is what reading a subject saw: its values, and whether it
// was read at all.
type observation struct {
	vals []value
	read bool
}

// saw notes values the subject was read as, when e keeps them.
func (e *Expect) saw(vs ...value) {
	if e.seen != nil {
		e.seen.vals = append(e.seen.vals, vs...)
		e.seen.read = true
	}
}

type subjKind int

const (
	subjField       subjKind = iota // qp0.state, ctx0.port.active_mtu, qp*.state
	subjBytes                       // mr1[0:5]
	subjCompletions                 // cq0 completions[.field]
	subjError                       // error
	subjCommands                    // commands
	subjHandles                     // handles
	subjView                        // mr0.u64[0], mr1.str[16]: typed views of an MR's bytes
	subjPackets                     // packets[.opcode|.count|.retransmissions|.drops]
	subjCalls                       // calls.post_send: how many times the step ran a command
)

type subject struct {
	kind   subjKind
	handle string // "qp0", "qp*", "cq0", or "" for completions of every CQ
	prefix string // the handle's kind: "qp"
	field  string // "state", "port.active_mtu", "gid[1]"; the WC field for completions
	gidIdx int    // for gid[N]
	lo, hi int    // bytes [lo:hi]
	count  bool   // .count of a list
	view   string // subjView: u8 ... u64, be16 ... be64, str
	// names are the handles a counted call must name: calls.poll_cq cq1.
	names []string
}

// vtype is the type of a value, which says how a literal is read and how
// values print.
type vtype int

const (
	tNum vtype = iota
	tHex       // a number best shown in hex: keys, addresses
	tQPN       // a QP number, or a QP's handle
	tQPState
	tQPType
	tMTU
	tAccess
	tWCStatus
	tWCOpcode
	tPortState
	tLinkLayer
	tBool
	tGID
	tDevice // a device name, or A or B
	tBytes
	tErrno
	tName   // a handle
	tCall   // a command, with handles it names: poll_cq cq1
	tHandle // a handle the object uses: qp0.send_cq == cq0
	tWireOp // a wire opcode name: RC SEND_ONLY (a part of it matches)
	tPSN    // a packet sequence number: shown in decimal and hex
)

var typeNames = map[vtype]string{
	tNum: "a number", tHex: "a number", tPSN: "a PSN (a number)", tQPN: "a QP number or a QP handle", tQPState: "a QP state (RTS)",
	tQPType: "a QP type (RC)", tMTU: "an MTU (1024)", tAccess: "access flags (local_write|remote_write)",
	tWCStatus: "a completion status (IBV_WC_SUCCESS)", tWCOpcode: "a completion opcode (IBV_WC_RECV)",
	tPortState: "a port state (ACTIVE)", tLinkLayer: "a link layer (Ethernet)", tBool: "true or false",
	tGID: "a GID (::ffff:10.0.0.2)", tDevice: "a device (A, B or sim0)", tBytes: "\"text\" or 0x hex bytes",
	tErrno: "an errno (EINVAL), none or any", tName: "a name", tCall: "a command (poll_cq, or poll_cq cq1 for a call on cq1)",
	tHandle: "a handle (cq0) or none", tWireOp: "a wire opcode (SEND_ONLY, RC ACKNOWLEDGE)",
}

// value is one value of some vtype.
type value struct {
	t vtype
	n uint64   // numbers, enums, flags, booleans, errnos
	s string   // GIDs, device and command names, handles
	h []string // tCall: the handles the command names
	b []byte   // bytes
	// errno: fail is set when a command failed without an errno (a usage
	// error); for RHS "any", any is set.
	fail, any bool
}

func (v value) String() string {
	switch v.t {
	case tNum:
		return strconv.FormatUint(v.n, 10)
	case tHex:
		return fmt.Sprintf("0x%x", v.n)
	case tPSN:
		return fmt.Sprintf("%d (0x%06x)", v.n, v.n)
	case tQPN:
		if v.s != "" {
			return v.s // with its handle
		}
		return fmt.Sprintf("0x%06x", v.n)
	case tQPState:
		return verbs.QPState(v.n).String()
	case tQPType:
		return verbs.QPType(v.n).String()
	case tMTU:
		return verbs.MTU(v.n).String()
	case tAccess:
		return verbs.Access(v.n).String()
	case tWCStatus:
		return verbs.WCStatus(v.n).String()
	case tWCOpcode:
		return verbs.WCOpcode(v.n).String()
	case tPortState:
		return verbs.PortState(v.n).String()
	case tLinkLayer:
		return verbs.LinkLayer(v.n).String()
	case tBool:
		return strconv.FormatBool(v.n != 0)
	case tBytes:
		if printable(v.b) {
			return strconv.Quote(string(v.b))
		}
		return "0x" + hex.EncodeToString(v.b)
	case tErrno:
		switch {
		case v.any:
			return "any error"
		case v.fail:
			return "a failure with no errno (" + v.s + ")"
		case v.n == 0:
			return "none"
		}
		return verbs.ErrnoName(syscall.Errno(v.n))
	case tCall:
		return strings.Join(append([]string{v.s}, v.h...), " ")
	}
	return v.s
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func (v value) equal(w value) bool {
	switch v.t {
	case tBytes:
		return bytes.Equal(v.b, w.b)
	case tWireOp:
		return strings.Contains(strings.ToUpper(v.s), strings.ToUpper(w.s))
	case tGID, tName, tHandle:
		return v.s == w.s
	case tCall:
		// A call matches a command that names fewer of its handles:
		// poll_cq cq1 is a poll_cq call on cq1, poll_cq any poll_cq.
		for _, h := range w.h {
			if !slices.Contains(v.h, h) {
				return false
			}
		}
		return v.s == w.s
	case tDevice:
		return strings.EqualFold(v.s, w.s)
	case tErrno:
		if w.any {
			return v.fail || v.n != 0
		}
		return !v.fail && v.n == w.n
	}
	return v.n == w.n
}

// Field tables: each kind of handle, the fields an expectation may read.
type fieldSpec struct {
	t   vtype
	get func(x *evalCtx, o any) (value, error)
}

var handlePattern = regexp.MustCompile(`^(ctx|pd|mr|ch|cq|srq|qp|ah|xrcd)([0-9]+|\*)$`)

// commandName is what a command's canonical name looks like.
var commandName = regexp.MustCompile(`^[a-z][a-z_]*$`)

var kindNouns = map[string]string{
	"ctx": "device context", "pd": "protection domain", "mr": "memory region", "ch": "completion channel",
	"cq": "completion queue", "srq": "shared receive queue", "qp": "queue pair", "ah": "address handle",
	"xrcd": "XRC domain",
}

func qpField(t vtype, f func(a verbs.QPAttr, i verbs.QPInitAttr, q verbs.QP) uint64) fieldSpec {
	return fieldSpec{t: t, get: func(x *evalCtx, o any) (value, error) {
		q, ok := o.(verbs.QP)
		if !ok {
			return value{}, fmt.Errorf("not a QP")
		}
		a, i, err := q.Query(verbs.AttrAll)
		if err != nil {
			return value{}, fmt.Errorf("ibv_query_qp: %v", err)
		}
		return value{t: t, n: f(a, i, q)}, nil
	}}
}

var fieldTables = map[string]map[string]fieldSpec{
	"qp": {
		"state":              qpField(tQPState, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.State) }),
		"type":               qpField(tQPType, func(_ verbs.QPAttr, _ verbs.QPInitAttr, q verbs.QP) uint64 { return uint64(q.Type()) }),
		"qp_num":             qpField(tQPN, func(_ verbs.QPAttr, _ verbs.QPInitAttr, q verbs.QP) uint64 { return uint64(q.Num()) }),
		"path_mtu":           qpField(tMTU, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.PathMTU) }),
		"dest_qpn":           qpField(tQPN, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.DestQPN) }),
		"rq_psn":             qpField(tPSN, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.RQPSN) }),
		"sq_psn":             qpField(tPSN, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.SQPSN) }),
		"qkey":               qpField(tHex, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.QKey) }),
		"access":             qpField(tAccess, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.AccessFlags) }),
		"pkey_index":         qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.PKeyIndex) }),
		"port":               qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.PortNum) }),
		"max_rd_atomic":      qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.MaxRdAtomic) }),
		"max_dest_rd_atomic": qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.MaxDestRdAtomic) }),
		"min_rnr_timer":      qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.MinRNRTimer) }),
		"timeout":            qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.Timeout) }),
		"retry_cnt":          qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.RetryCnt) }),
		"rnr_retry":          qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.RNRRetry) }),
		"max_send_wr":        qpField(tNum, func(a verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(capOf(a, i).MaxSendWR) }),
		"max_recv_wr":        qpField(tNum, func(a verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(capOf(a, i).MaxRecvWR) }),
		"max_send_sge":       qpField(tNum, func(a verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(capOf(a, i).MaxSendSGE) }),
		"max_recv_sge":       qpField(tNum, func(a verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(capOf(a, i).MaxRecvSGE) }),
		"max_inline_data":    qpField(tNum, func(a verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(capOf(a, i).MaxInlineData) }),
		"is_global":          qpField(tBool, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return b2n(a.AH.IsGlobal) }),
		"sgid_index":         qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.AH.GRH.SGIDIndex) }),
		"hop_limit":          qpField(tNum, func(a verbs.QPAttr, _ verbs.QPInitAttr, _ verbs.QP) uint64 { return uint64(a.AH.GRH.HopLimit) }),
		"sq_sig_all":         qpField(tBool, func(_ verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return b2n(i.SQSigAll) }),
		"has_srq":            qpField(tBool, func(_ verbs.QPAttr, i verbs.QPInitAttr, _ verbs.QP) uint64 { return b2n(i.SRQ != nil) }),
		"send_cq":            qpHandle(func(i verbs.QPInitAttr, _ verbs.QP) any { return i.SendCQ }),
		"recv_cq":            qpHandle(func(i verbs.QPInitAttr, _ verbs.QP) any { return i.RecvCQ }),
		"srq":                qpHandle(func(i verbs.QPInitAttr, _ verbs.QP) any { return i.SRQ }),
		"pd":                 qpHandle(func(_ verbs.QPInitAttr, q verbs.QP) any { return q.PD() }),
		"dgid": {t: tGID, get: func(x *evalCtx, o any) (value, error) {
			q, ok := o.(verbs.QP)
			if !ok {
				return value{}, fmt.Errorf("not a QP")
			}
			a, _, err := q.Query(verbs.AttrAll)
			if err != nil {
				return value{}, fmt.Errorf("ibv_query_qp: %v", err)
			}
			return value{t: tGID, s: a.AH.GRH.DGID.String()}, nil
		}},
	},
	"mr": {
		"addr":   mrField(tHex, func(m verbs.MR) uint64 { return m.Addr() }),
		"length": mrField(tNum, func(m verbs.MR) uint64 { return uint64(m.Length()) }),
		"lkey":   mrField(tHex, func(m verbs.MR) uint64 { return uint64(m.LKey()) }),
		"rkey":   mrField(tHex, func(m verbs.MR) uint64 { return uint64(m.RKey()) }),
		"access": mrField(tAccess, func(m verbs.MR) uint64 { return uint64(m.Access()) }),
		"pd":     handleField(func(o any) (any, bool) { m, ok := o.(verbs.MR); return pdOf(m, ok) }),
	},
	"cq": {
		"cqe": {t: tNum, get: func(x *evalCtx, o any) (value, error) {
			c, ok := o.(verbs.CQ)
			if !ok {
				return value{}, fmt.Errorf("not a CQ")
			}
			return value{t: tNum, n: uint64(c.CQE())}, nil
		}},
		"channel": handleField(func(o any) (any, bool) {
			c, ok := o.(verbs.CQ)
			if !ok {
				return nil, false
			}
			if ch := c.Channel(); ch != nil {
				return ch, true
			}
			return nil, true
		}),
		"unpolled": {t: tNum}, // read by checkField1: the session's Unpolled
	},
	"srq": {
		"max_wr":    srqField(func(a verbs.SRQAttr) int { return a.MaxWR }),
		"max_sge":   srqField(func(a verbs.SRQAttr) int { return a.MaxSGE }),
		"srq_limit": srqField(func(a verbs.SRQAttr) int { return a.SRQLimit }),
		"pd":        handleField(func(o any) (any, bool) { s, ok := o.(verbs.SRQ); return pdOf(s, ok) }),
	},
	"ah": {
		"dgid":       {t: tGID, get: func(x *evalCtx, o any) (value, error) { return ahGet(o, tGID) }},
		"sgid_index": {t: tNum, get: func(x *evalCtx, o any) (value, error) { return ahGet(o, tNum, "sgid_index") }},
		"hop_limit":  {t: tNum, get: func(x *evalCtx, o any) (value, error) { return ahGet(o, tNum, "hop_limit") }},
		"port":       {t: tNum, get: func(x *evalCtx, o any) (value, error) { return ahGet(o, tNum, "port") }},
		"is_global":  {t: tBool, get: func(x *evalCtx, o any) (value, error) { return ahGet(o, tBool) }},
		"pd":         handleField(func(o any) (any, bool) { a, ok := o.(verbs.AH); return pdOf(a, ok) }),
	},
	"ctx": {
		"device": {t: tDevice, get: func(x *evalCtx, o any) (value, error) {
			c, ok := o.(verbs.Context)
			if !ok {
				return value{}, fmt.Errorf("not a context")
			}
			return value{t: tDevice, s: c.Device().Name()}, nil
		}},
		"port.state":       portField(tPortState, func(p verbs.PortAttr) uint64 { return uint64(p.State) }),
		"port.max_mtu":     portField(tMTU, func(p verbs.PortAttr) uint64 { return uint64(p.MaxMTU) }),
		"port.active_mtu":  portField(tMTU, func(p verbs.PortAttr) uint64 { return uint64(p.ActiveMTU) }),
		"port.link_layer":  portField(tLinkLayer, func(p verbs.PortAttr) uint64 { return uint64(p.LinkLayer) }),
		"port.gid_tbl_len": portField(tNum, func(p verbs.PortAttr) uint64 { return uint64(p.GIDTblLen) }),
		"port.lid":         portField(tNum, func(p verbs.PortAttr) uint64 { return uint64(p.LID) }),
		"port.max_msg_sz":  portField(tNum, func(p verbs.PortAttr) uint64 { return uint64(p.MaxMsgSz) }),
		"port.grh_required": portField(tBool, func(p verbs.PortAttr) uint64 {
			return b2n(p.Flags&verbs.PortFlagGRHRequired != 0)
		}),
		"dev.max_qp":          devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxQP) }),
		"dev.max_qp_wr":       devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxQPWR) }),
		"dev.max_sge":         devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxSGE) }),
		"dev.max_cqe":         devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxCQE) }),
		"dev.max_mr_size":     devField(func(d verbs.DeviceAttr) uint64 { return d.MaxMRSize }),
		"dev.max_srq":         devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxSRQ) }),
		"dev.max_srq_wr":      devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxSRQWR) }),
		"dev.max_qp_rd_atom":  devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxQPRdAtom) }),
		"dev.max_inline_data": devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.MaxInlineData) }),
		"dev.phys_port_cnt":   devField(func(d verbs.DeviceAttr) uint64 { return uint64(d.PhysPortCnt) }),
		"gid[N]":              {t: tGID}, // read by evalField: ibv_query_gid(ctx, 1, N)
	},
	"pd": {},
	"ch": {},
}

// handleField reads a field that is another object, as its handle.
func handleField(f func(o any) (any, bool)) fieldSpec {
	return fieldSpec{t: tHandle, get: func(x *evalCtx, o any) (value, error) {
		ref, ok := f(o)
		if !ok {
			return value{}, fmt.Errorf("not the right kind of object")
		}
		return value{t: tHandle, s: x.handleOf(ref)}, nil
	}}
}

// pdOf is the PD of an object that has one.
func pdOf[T interface{ PD() verbs.PD }](o T, ok bool) (any, bool) {
	if !ok {
		return nil, false
	}
	return o.PD(), true
}

func qpHandle(f func(i verbs.QPInitAttr, q verbs.QP) any) fieldSpec {
	return fieldSpec{t: tHandle, get: func(x *evalCtx, o any) (value, error) {
		q, ok := o.(verbs.QP)
		if !ok {
			return value{}, fmt.Errorf("not a QP")
		}
		_, i, err := q.Query(verbs.AttrAll)
		if err != nil {
			return value{}, fmt.Errorf("ibv_query_qp: %v", err)
		}
		return value{t: tHandle, s: x.handleOf(f(i, q))}, nil
	}}
}

func b2n(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// capOf prefers the attributes' cap (what the device gave) over the
// creation attributes.
func capOf(a verbs.QPAttr, i verbs.QPInitAttr) verbs.QPCap {
	if a.Cap.MaxSendWR != 0 || a.Cap.MaxRecvWR != 0 {
		return a.Cap
	}
	return i.Cap
}

// queryField reads one number of an object of type O through a query verb
// (ibv_query_srq, ibv_query_port, ...) that returns attributes A.
func queryField[O, A any](t vtype, kind, verb string, query func(O) (A, error), f func(A) uint64) fieldSpec {
	return fieldSpec{t: t, get: func(x *evalCtx, o any) (value, error) {
		obj, ok := o.(O)
		if !ok {
			return value{}, fmt.Errorf("not %s", kind)
		}
		a, err := query(obj)
		if err != nil {
			return value{}, fmt.Errorf("%s: %v", verb, err)
		}
		return value{t: t, n: f(a)}, nil
	}}
}

func mrField(t vtype, f func(verbs.MR) uint64) fieldSpec {
	return queryField(t, "an MR", "", func(m verbs.MR) (verbs.MR, error) { return m, nil }, f)
}

func srqField(f func(verbs.SRQAttr) int) fieldSpec {
	return queryField(tNum, "an SRQ", "ibv_query_srq", verbs.SRQ.Query, func(a verbs.SRQAttr) uint64 { return uint64(f(a)) })
}

func ahGet(o any, t vtype, which ...string) (value, error) {
	ah, ok := o.(verbs.AH)
	if !ok {
		return value{}, fmt.Errorf("not an AH")
	}
	a := ah.Attr()
	switch t {
	case tGID:
		return value{t: tGID, s: a.GRH.DGID.String()}, nil
	case tBool:
		return value{t: tBool, n: b2n(a.IsGlobal)}, nil
	}
	switch which[0] {
	case "sgid_index":
		return value{t: tNum, n: uint64(a.GRH.SGIDIndex)}, nil
	case "hop_limit":
		return value{t: tNum, n: uint64(a.GRH.HopLimit)}, nil
	}
	return value{t: tNum, n: uint64(a.PortNum)}, nil
}

func portField(t vtype, f func(verbs.PortAttr) uint64) fieldSpec {
	return queryField(t, "a context", "ibv_query_port", func(c verbs.Context) (verbs.PortAttr, error) { return c.QueryPort(1) }, f)
}

func devField(f func(verbs.DeviceAttr) uint64) fieldSpec {
	return queryField(tNum, "a context", "ibv_query_device", verbs.Context.QueryDevice, f)
}

// wcFields are the fields of a completion, in libibverbs' names.
var wcFields = map[string]vtype{
	"status": tWCStatus, "opcode": tWCOpcode, "byte_len": tNum, "wr_id": tNum,
	"qp_num": tQPN, "src_qp": tQPN, "imm": tHex,
}

func wcValue(field string, wc verbs.WC) value {
	switch field {
	case "opcode":
		return value{t: tWCOpcode, n: uint64(wc.Opcode)}
	case "byte_len":
		return value{t: tNum, n: uint64(wc.ByteLen)}
	case "wr_id":
		return value{t: tNum, n: wc.WRID}
	case "qp_num":
		return value{t: tQPN, n: uint64(wc.QPNum)}
	case "src_qp":
		return value{t: tQPN, n: uint64(wc.SrcQP)}
	case "imm":
		return value{t: tHex, n: uint64(wc.Imm)}
	}
	return value{t: tWCStatus, n: uint64(wc.Status)}
}

var ops = []string{"==", "!=", "<=", ">=", "<", ">"}

// ParseExpect parses the text after "expect:". It checks the syntax and
// the names (subject, field, operator, the value's form); values that name
// handles are resolved when the expectation is checked.
func ParseExpect(text string) (*Expect, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("empty; write SUBJECT OP VALUE: qp0.state == RTS")
	}
	e := &Expect{Text: text}
	lhs, op, rhs, ok := splitOp(text)
	if !ok {
		return nil, fmt.Errorf("%q has no operator; write SUBJECT OP VALUE with OP one of ==, !=, <, <=, >, >=, contains", text)
	}
	e.op, e.rhs = op, strings.TrimSpace(rhs)
	if e.rhs == "" {
		return nil, fmt.Errorf("%q: nothing after %s", text, op)
	}
	s, err := parseSubject(strings.TrimSpace(lhs))
	if err != nil {
		return nil, err
	}
	e.subj = s
	e.list = strings.HasPrefix(e.rhs, "[")
	if err := e.checkOp(); err != nil {
		return nil, err
	}
	// Check the value's form now, so that check reports it with its line.
	if _, err := e.want(nil); err != nil {
		return nil, err
	}
	return e, nil
}

// splitOp finds the operator outside quotes and brackets.
func splitOp(text string) (string, string, string, bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '"' || c == '\'':
			quote = c
			continue
		case c == '[':
			depth++
			continue
		case c == ']':
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		for _, op := range ops {
			if strings.HasPrefix(text[i:], op) {
				return text[:i], op, text[i+len(op):], true
			}
		}
		if c == ' ' && strings.HasPrefix(text[i:], " contains ") {
			return text[:i], "contains", text[i+len(" contains "):], true
		}
	}
	return "", "", "", false
}

func parseSubject(s string) (subject, error) {
	var sub subject
	if s == "" {
		return sub, fmt.Errorf("nothing before the operator; the subject is what is checked: qp0.state, cq0 completions, mr1[0:5], error")
	}
	words := strings.Fields(s)
	switch {
	case s == "error":
		sub.kind = subjError
		return sub, nil
	case s == "commands" || s == "commands.count":
		sub.kind, sub.count = subjCommands, s == "commands.count"
		return sub, nil
	case s == "handles" || s == "handles.count":
		sub.kind, sub.count = subjHandles, s == "handles.count"
		return sub, nil
	case strings.HasPrefix(s, "calls"):
		sub.kind, sub.field = subjCalls, strings.TrimPrefix(words[0], "calls.")
		if !strings.HasPrefix(s, "calls.") || !commandName.MatchString(sub.field) {
			return sub, fmt.Errorf("%q: write calls.COMMAND, how many times the step ran a command: calls.post_send, or calls.poll_cq cq1 for its calls on cq1", s)
		}
		if h, _ := badCallHandle(words[1:]); h != "" {
			return sub, fmt.Errorf("%q: after calls.%s come the handles a counted call names, each once (calls.poll_cq cq1); %q is not one", s, sub.field, h)
		}
		sub.names = words[1:]
		return sub, nil
	case s == "packets" || strings.HasPrefix(s, "packets."):
		sub.kind = subjPackets
		switch f := strings.TrimPrefix(strings.TrimPrefix(s, "packets"), "."); f {
		case "", "opcode":
			sub.field = "opcode"
		case "count":
			sub.count = true
		case "retransmissions", "drops":
			sub.field = f
		default:
			return sub, fmt.Errorf("%q: the packets of the step are packets (their opcodes), packets.count, packets.retransmissions or packets.drops", s)
		}
		return sub, nil
	case strings.HasPrefix(words[len(words)-1], "completions") && len(words) <= 2:
		return parseCompletionsSubject(s, words)
	}
	if len(words) > 1 {
		return sub, fmt.Errorf("%q: a subject is one word (qp0.state, mr1[0:5]) or CQ completions; see docs/writing-lessons.md", s)
	}
	// HANDLE[lo:hi]
	if i := strings.IndexByte(s, '['); i > 0 && !strings.Contains(s[:i], ".") {
		return parseBytesSubject(s, i)
	}
	h, field, ok := strings.Cut(s, ".")
	if mv := viewPattern.FindStringSubmatch(field); ok && mv != nil && strings.HasPrefix(h, "mr") {
		if m := handlePattern.FindStringSubmatch(h); m != nil && m[2] != "*" {
			n, err := number.Parse(mv[2], 30)
			if err != nil {
				return sub, fmt.Errorf("%q: the index is %v", s, err)
			}
			sub.kind, sub.handle, sub.prefix, sub.view, sub.lo = subjView, h, "mr", mv[1], int(n)
			return sub, nil
		}
	}
	m := handlePattern.FindStringSubmatch(h)
	if m == nil {
		return sub, fmt.Errorf("%q: the subject starts with a handle (qp0, mr1, cq0, ctx0, or qp* for every QP), or is completions, error, commands or handles", s)
	}
	if !ok || field == "" {
		return sub, fmt.Errorf("%q: name a field: %s.%s", s, h, firstField(m[1]))
	}
	sub.kind, sub.handle, sub.prefix, sub.field = subjField, h, m[1], field
	table := fieldTables[m[1]]
	if m[1] == "ctx" && strings.HasPrefix(field, "gid[") && strings.HasSuffix(field, "]") {
		n, err := number.Parse(field[4:len(field)-1], 31)
		if err != nil {
			return sub, fmt.Errorf("%q: write ctx0.gid[INDEX], e.g. ctx0.gid[1]; the index is %v", s, err)
		}
		sub.field, sub.gidIdx = "gid[N]", int(n)
		return sub, nil
	}
	if _, ok := table[field]; !ok {
		names := keys(table)
		if len(names) == 0 {
			return sub, fmt.Errorf("%q: a %s has no fields to check; check that it exists with handles contains %s", s, kindNouns[m[1]], h)
		}
		return sub, fmt.Errorf("a %s has no field %q%s; its fields are %s", kindNouns[m[1]], field, didYouMean(field, names), strings.Join(names, ", "))
	}
	return sub, nil
}

// parseCompletionsSubject reads "[CQ ]completions[.FIELD|.count]", whose
// last word is words' last and which has at most two words.
func parseCompletionsSubject(s string, words []string) (subject, error) {
	var sub subject
	sub.kind = subjCompletions
	if len(words) == 2 {
		h := words[0]
		m := handlePattern.FindStringSubmatch(h)
		if m == nil || m[1] != "cq" || m[2] == "*" {
			return sub, fmt.Errorf("%q: completions are counted per CQ (cq0 completions) or over all CQs (completions)", s)
		}
		sub.handle, sub.prefix = h, "cq"
	}
	rest := strings.TrimPrefix(words[len(words)-1], "completions")
	switch {
	case rest == "":
		sub.field = "status"
	case rest == ".count":
		sub.count = true
	case strings.HasPrefix(rest, "."):
		f := rest[1:]
		if _, ok := wcFields[f]; !ok {
			return sub, fmt.Errorf("a completion has no field %q%s; its fields are %s, and .count", f, didYouMean(f, keys(wcFields)), strings.Join(keys(wcFields), ", "))
		}
		sub.field = f
	default:
		return sub, fmt.Errorf("%q: write completions, completions.FIELD or completions.count", s)
	}
	return sub, nil
}

// parseBytesSubject reads "mrN[lo:hi]", an MR's bytes; s[i] is the '['.
func parseBytesSubject(s string, i int) (subject, error) {
	var sub subject
	h := s[:i]
	m := handlePattern.FindStringSubmatch(h)
	if m == nil || m[1] != "mr" || m[2] == "*" {
		return sub, fmt.Errorf("%q: only a memory region's bytes can be read: mr1[0:5]", s)
	}
	if !strings.HasSuffix(s, "]") {
		return sub, fmt.Errorf("%q: write mr1[OFFSET:END], the bytes from OFFSET up to END", s)
	}
	lo, hi, ok := strings.Cut(s[i+1:len(s)-1], ":")
	if !ok {
		return sub, fmt.Errorf("%q: write mr1[OFFSET:END] with OFFSET < END, numbers", s)
	}
	a, err := number.Parse(lo, 31)
	if err != nil {
		return sub, fmt.Errorf("%q: OFFSET %s: %v", s, strings.TrimSpace(lo), err)
	}
	b, err := number.Parse(hi, 31)
	if err != nil {
		return sub, fmt.Errorf("%q: END %s: %v", s, strings.TrimSpace(hi), err)
	}
	if b <= a {
		return sub, fmt.Errorf("%q: write mr1[OFFSET:END] with OFFSET < END, numbers", s)
	}
	if b-a > 1<<20 {
		return sub, fmt.Errorf("%q: compare at most 1 MiB at a time", s)
	}
	sub.kind, sub.handle, sub.prefix, sub.lo, sub.hi = subjBytes, h, "mr", int(a), int(b)
	return sub, nil
}

// viewPattern reads a typed view of an MR's bytes: u32[2] is the third
// 4-byte little-endian number (bytes 8 to 12), be16[0] the first 2-byte
// big-endian one, str[16] the NUL-terminated text at byte 16.
var viewPattern = regexp.MustCompile(`^(u8|u16|u32|u64|be16|be32|be64|str)\[([0-9]+)\]$`)

// viewSize is the width of a typed view, 0 for str.
func viewSize(v string) int {
	switch v {
	case "u8":
		return 1
	case "u16", "be16":
		return 2
	case "u32", "be32":
		return 4
	case "u64", "be64":
		return 8
	}
	return 0
}

func firstField(prefix string) string {
	names := keys(fieldTables[prefix])
	if len(names) == 0 {
		return "..."
	}
	if prefix == "qp" {
		return "state"
	}
	return names[0]
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func didYouMean(s string, names []string) string {
	if near := verbs.Nearest(s, names); near != "" {
		return " (did you mean " + near + "?)"
	}
	return ""
}

// elemType is the type of the subject's value, or of its elements.
func (e *Expect) elemType() vtype {
	s := e.subj
	switch s.kind {
	case subjBytes:
		return tBytes
	case subjError:
		return tErrno
	case subjCommands, subjHandles:
		if s.count {
			return tNum
		}
		if s.kind == subjCommands {
			return tCall
		}
		return tName
	case subjCompletions:
		if s.count {
			return tNum
		}
		return wcFields[s.field]
	case subjView:
		if s.view == "str" {
			return tBytes
		}
		return tNum
	case subjCalls:
		return tNum
	case subjPackets:
		if s.count || s.field != "opcode" {
			return tNum
		}
		return tWireOp
	}
	return fieldTables[s.prefix][s.field].t
}

// isList reports whether the subject is a list.
func (e *Expect) isList() bool {
	s := e.subj
	return !s.count && (s.kind == subjCompletions || s.kind == subjCommands || s.kind == subjHandles ||
		s.kind == subjPackets && s.field == "opcode")
}

func (e *Expect) checkOp() error {
	t := e.elemType()
	switch e.op {
	case "<", "<=", ">", ">=":
		if e.isList() || !(t == tNum || t == tHex || t == tPSN || t == tQPN || t == tMTU) {
			return fmt.Errorf("%s compares numbers; %s is %s", e.op, e.subjText(), e.describeSubject())
		}
	case "contains":
		if !e.isList() && t != tAccess && t != tBytes {
			return fmt.Errorf("contains looks into a list, flags or bytes; %s is %s: use == or !=", e.subjText(), e.describeSubject())
		}
	}
	if e.list && !e.isList() {
		return fmt.Errorf("%s is one value, not a list: drop the [ ]", e.subjText())
	}
	if e.subj.kind == subjError && (e.op != "==" && e.op != "!=") {
		return fmt.Errorf("error is compared with == or !=")
	}
	return nil
}

func (e *Expect) subjText() string {
	lhs, _, _, _ := splitOp(e.Text)
	return strings.TrimSpace(lhs)
}

func (e *Expect) describeSubject() string {
	if e.isList() {
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(typeNames[e.elemType()], "a "), "an ") + "s"
	}
	return typeNames[e.elemType()]
}

// noFailure reports whether this is "error == none".
func (e *Expect) noFailure() bool {
	return e.subj.kind == subjError && e.op == "==" && strings.EqualFold(e.rhs, "none")
}

// want parses the right-hand side. With a nil evalCtx (at parse time)
// handles are accepted by their form and not resolved.
func (e *Expect) want(x *evalCtx) ([]value, error) {
	t := e.elemType()
	var lits []string
	if e.list {
		if !strings.HasSuffix(e.rhs, "]") {
			return nil, fmt.Errorf("%q: a list ends with ]", e.rhs)
		}
		var err error
		lits, err = splitList(e.rhs[1 : len(e.rhs)-1])
		if err != nil {
			return nil, err
		}
	} else {
		lits = []string{e.rhs}
	}
	var out []value
	for _, lit := range lits {
		n := 1
		if e.list {
			if i := strings.LastIndexByte(lit, '*'); i > 0 && !strings.HasPrefix(lit, "\"") && (t != tCall || !strings.HasSuffix(lit, "*")) {
				k, err := number.Parse(lit[i+1:], 31)
				if err != nil || k < 1 || k > 100000 {
					return nil, fmt.Errorf("%q: VALUE*N repeats a value N times (N from 1 to 100000)", lit)
				}
				n, lit = int(k), strings.TrimSpace(lit[:i])
			}
		}
		v, err := parseValue(x, t, lit)
		if err != nil {
			return nil, err
		}
		for ; n > 0; n-- {
			out = append(out, v)
		}
	}
	if !e.list && e.isList() && e.op != "contains" && len(out) == 1 && out[0].t != tNum {
		return nil, fmt.Errorf("%s is a list: write [%s] (or use contains)", e.subjText(), e.rhs)
	}
	if e.subj.kind == subjView && e.subj.view != "str" && len(out) == 1 && viewSize(e.subj.view) < 8 && out[0].n>>(8*uint(viewSize(e.subj.view))) != 0 {
		return nil, fmt.Errorf("%s is %d bytes wide; %s does not fit", e.subjText(), viewSize(e.subj.view), e.rhs)
	}
	if e.subj.kind == subjBytes && len(out) == 1 && len(out[0].b) != e.subj.hi-e.subj.lo && e.op != "contains" {
		return nil, fmt.Errorf("%s is %d bytes but %s is %d", e.subjText(), e.subj.hi-e.subj.lo, e.rhs, len(out[0].b))
	}
	return out, nil
}

// splitList splits the inside of [ ] at commas outside quotes. Access
// flags inside a list are joined with |.
func splitList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a quote is not closed in [%s]", s)
	}
	out = append(out, strings.TrimSpace(s[start:]))
	for _, x := range out {
		if x == "" {
			return nil, fmt.Errorf("[%s] has an empty element", s)
		}
	}
	return out, nil
}

// parseValue reads one literal as type t, with the parser valueParsers
// gives for t (a type without one takes no literal: the zero value).
func parseValue(x *evalCtx, t vtype, lit string) (value, error) {
	v := value{t: t}
	p := valueParsers[t]
	if p == nil {
		return v, nil
	}
	if err := p(x, lit, &v); err != nil {
		if b, ok := err.(*notA); ok {
			msg := fmt.Sprintf("%q is not %s", lit, typeNames[t])
			if b.err != nil {
				msg += ": " + b.err.Error()
			}
			return value{}, fmt.Errorf("%s", msg)
		}
		return value{}, err
	}
	return v, nil
}

// A valueParser reads lit into v, whose type is set. It returns a *notA
// when lit is not of that type, and other errors as they are; x may be nil
// (no session: handles and device names stay unresolved).
type valueParser func(x *evalCtx, lit string, v *value) error

// notA says a literal is not of its type; parseValue adds the literal and
// the type's name, then err's text if any.
type notA struct{ err error }

func (e *notA) Error() string { return "not of its type" }

// badLiteral returns a *notA for err.
func badLiteral(err error) error { return &notA{err} }

// valueParsers maps each literal type to its parser.
var valueParsers = map[vtype]valueParser{
	tNum: parseNumber, tHex: parseNumber, tPSN: parseNumber,
	tQPN:       parseQPN,
	tQPState:   enumValue(verbs.ParseQPState),
	tQPType:    enumValue(verbs.ParseQPType),
	tMTU:       enumValue(verbs.ParseMTU),
	tAccess:    parseAccessValue,
	tWCStatus:  enumValue(verbs.ParseWCStatus),
	tWCOpcode:  enumValue(verbs.ParseWCOpcode),
	tPortState: parsePortState,
	tLinkLayer: parseLinkLayer,
	tBool:      parseBool,
	tGID:       parseGIDValue,
	tDevice:    parseDevice,
	tBytes:     parseBytesValue,
	tErrno:     parseErrnoValue,
	tName:      parseName,
	tCall:      parseCall,
	tHandle:    parseHandle,
	tWireOp:    parseWireOp,
}

// parseNumber reads a 64-bit number (decimal, 0x hex, ...).
func parseNumber(_ *evalCtx, lit string, v *value) error {
	n, err := number.Parse(lit, 64)
	if err != nil {
		return fmt.Errorf("%q: %v", lit, err)
	}
	v.n = n
	return nil
}

// parseQPN reads a 32-bit QP number, or a QP's handle resolved in x's
// session (an *unresolved error if there is no such QP).
func parseQPN(x *evalCtx, lit string, v *value) error {
	if lit != "" && '0' <= lit[0] && lit[0] <= '9' {
		n, err := number.Parse(lit, 32)
		if err != nil {
			return fmt.Errorf("%q: %v", lit, err)
		}
		v.n = n
		return nil
	}
	m := handlePattern.FindStringSubmatch(lit)
	if m == nil || m[1] != "qp" || m[2] == "*" {
		return badLiteral(nil)
	}
	if x != nil {
		o, ok := x.env.Object(lit)
		qp, isQP := o.(verbs.QP)
		if !ok || !isQP {
			return &unresolved{fmt.Sprintf("there is no %s", lit)}
		}
		v.n = uint64(qp.Num())
	}
	return nil
}

// enumValue returns the parser of an enum that verbs parses by name.
func enumValue[E ~uint32](parse func(string) (E, error)) valueParser {
	return func(_ *evalCtx, lit string, v *value) error {
		s, err := parse(lit)
		if err != nil {
			return badLiteral(err)
		}
		v.n = uint64(s)
		return nil
	}
}

// parseAccessValue reads access flags joined with | (or commas).
func parseAccessValue(_ *evalCtx, lit string, v *value) error {
	a, err := verbs.ParseAccess(strings.ReplaceAll(lit, "|", ","))
	if err != nil {
		return badLiteral(err)
	}
	v.n = uint64(a)
	return nil
}

// parsePortState reads a port state by its full or short name, in any case.
func parsePortState(_ *evalCtx, lit string, v *value) error {
	for s := verbs.PortNop; s <= verbs.PortActiveDefer; s++ {
		if strings.EqualFold(lit, s.String()) || strings.EqualFold(lit, s.Short()) {
			v.n = uint64(s)
			return nil
		}
	}
	return badLiteral(nil)
}

// parseLinkLayer reads a link layer by its full or short name, in any case.
func parseLinkLayer(_ *evalCtx, lit string, v *value) error {
	for _, l := range []verbs.LinkLayer{verbs.LinkLayerUnspecified, verbs.LinkLayerInfiniBand, verbs.LinkLayerEthernet} {
		if strings.EqualFold(lit, l.String()) || strings.EqualFold(lit, l.Short()) {
			v.n = uint64(l)
			return nil
		}
	}
	return badLiteral(nil)
}

// parseBool reads true/yes/1 or false/no/0, in any case.
func parseBool(_ *evalCtx, lit string, v *value) error {
	switch strings.ToLower(lit) {
	case "true", "yes", "1":
		v.n = 1
	case "false", "no", "0":
	default:
		return badLiteral(nil)
	}
	return nil
}

// parseGIDValue reads a GID and keeps its canonical text.
func parseGIDValue(_ *evalCtx, lit string, v *value) error {
	g, err := verbs.ParseGID(lit)
	if err != nil {
		return badLiteral(nil)
	}
	v.s = g.String()
	return nil
}

// parseDevice keeps a device name, resolving A and B in x's session.
func parseDevice(x *evalCtx, lit string, v *value) error {
	v.s = lit
	if x != nil {
		v.s = x.deviceName(lit)
	}
	return nil
}

// parseBytesValue reads bytes as parseBytes does.
func parseBytesValue(_ *evalCtx, lit string, v *value) error {
	b, err := parseBytes(lit)
	if err != nil {
		return badLiteral(err)
	}
	v.b = b
	return nil
}

// parseErrnoValue reads an errno name, none (no error) or any (v.any).
func parseErrnoValue(_ *evalCtx, lit string, v *value) error {
	switch strings.ToLower(lit) {
	case "none":
		return nil
	case "any":
		v.any = true
		return nil
	}
	n, err := verbs.ParseErrno(lit)
	if err != nil {
		return badLiteral(nil)
	}
	v.n = uint64(n)
	return nil
}

// parseName reads a handle's name (handles == [qp15]) without blanks or
// quotes, in lower case.
func parseName(_ *evalCtx, lit string, v *value) error {
	if strings.ContainsAny(lit, " \t\"'") {
		return badLiteral(nil)
	}
	v.s = strings.ToLower(lit)
	return nil
}

// parseCall reads a command's canonical name, then the handles a call of
// it must name (poll_cq cq1), in lower case.
func parseCall(_ *evalCtx, lit string, v *value) error {
	words := strings.Fields(strings.ToLower(lit))
	if len(words) == 0 || !commandName.MatchString(words[0]) {
		return badLiteral(nil)
	}
	switch h, twice := badCallHandle(words[1:]); {
	case twice:
		return badLiteral(fmt.Errorf("it names %s twice; a call is matched by the handles it names, each once", h))
	case h != "":
		return badLiteral(fmt.Errorf("after the command come the handles its call names (poll_cq cq1); %q is not one", h))
	}
	v.s, v.h = words[0], words[1:]
	return nil
}

// badCallHandle returns the first of the handles a call must name that
// cannot be one — not a handle as the shell writes it (cq1: no wildcard,
// no leading 0), or named twice (twice) — or "".
func badCallHandle(hs []string) (h string, twice bool) {
	for i, h := range hs {
		if m := handlePattern.FindStringSubmatch(h); m == nil || m[2] == "*" || len(m[2]) > 1 && m[2][0] == '0' {
			return h, false
		}
		if slices.Contains(hs[:i], h) {
			return h, true
		}
	}
	return "", false
}

// parseHandle reads a handle (no wildcard) or none, in lower case.
func parseHandle(_ *evalCtx, lit string, v *value) error {
	l := strings.ToLower(lit)
	if l != "none" {
		if m := handlePattern.FindStringSubmatch(l); m == nil || m[2] == "*" {
			return badLiteral(nil)
		}
	}
	v.s = l
	return nil
}

// parseWireOp reads a non-empty wire opcode name without quotes, in upper
// case.
func parseWireOp(_ *evalCtx, lit string, v *value) error {
	if lit == "" || strings.ContainsAny(lit, "\"'") {
		return badLiteral(nil)
	}
	v.s = strings.ToUpper(lit)
	return nil
}

// parseBytes reads "text" (with \n \t \0 \\ \" \xNN escapes) or 0x hex.
func parseBytes(lit string) ([]byte, error) {
	if strings.HasPrefix(lit, "0x") || strings.HasPrefix(lit, "0X") {
		b, err := hex.DecodeString(lit[2:])
		if err != nil {
			return nil, fmt.Errorf("odd or non-hex digits")
		}
		return b, nil
	}
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, fmt.Errorf("write \"text\" in double quotes, or 0x followed by hex digits")
	}
	s := lit[1 : len(lit)-1]
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("a lone \\ at the end")
		}
		i++
		switch s[i] {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case '0':
			b = append(b, 0)
		case '\\', '"', '\'':
			b = append(b, s[i])
		case 'x':
			if i+2 >= len(s) {
				return nil, fmt.Errorf("\\x needs two hex digits")
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("\\x needs two hex digits")
			}
			b = append(b, byte(n))
			i += 2
		default:
			return nil, fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return b, nil
}

// unresolved is a value that names an object that does not exist (yet).
type unresolved struct{ msg string }

func (u *unresolved) Error() string { return u.msg }
