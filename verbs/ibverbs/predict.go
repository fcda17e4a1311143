package ibverbs

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
)

// The predictions: what Linux 6.1 rxe and rdma-core 44 will do with a call,
// in the order they check it. The control-path rules themselves are
// verbs/rules' RXE profile in Predict mode, shared with the simulator, which
// decides with them; this file adds what only a prediction needs (what the
// kernel may also answer: memory, routes) and what the backend knows of its
// objects. It is pure Go, tested on any machine; the cgo side gathers the
// facts and calls it.

// devFacts is what the backend knows of a device when it predicts.
type devFacts struct {
	Attr           verbs.DeviceAttr
	Port           verbs.PortAttr // port 1
	NumCompVectors int
	CapNetRaw      bool
	// GIDSlot reports whether GID slot index of port is empty; known is
	// false when the backend could not tell.
	GIDSlot func(port uint8, index int) (empty, known bool)
}

// profile returns the rules of the device, to predict with.
func (d *devFacts) profile() *rules.RXE {
	r := &rules.RXE{Mode: rules.Predict, Attr: d.Attr, Port: d.Port, NumCompVectors: d.NumCompVectors, CapNetRaw: d.CapNetRaw}
	if slot := d.GIDSlot; slot != nil {
		r.GID = func(port uint8, i int) (verbs.GID, bool, bool) {
			empty, known := slot(port, i)
			return verbs.GID{}, !empty, known
		}
	}
	return r
}

// noDevice is the profile for the rules that need no device facts.
var noDevice = rules.RXE{Mode: rules.Predict}

// add appends the rules' findings to the prediction, in order.
func (p *prediction) add(v rules.Verdict) {
	for _, f := range v.Findings {
		p.reasons = append(p.reasons, reason{errno: f.Err.Errno, why: f.Err.Why, hint: f.Err.Hint, certain: f.Certain})
	}
}

// modifyFacts is what the backend knows of a QP when it predicts a modify.
type modifyFacts struct {
	Type       verbs.QPType
	Cur        verbs.QPState // the state the QP is in
	SQDraining bool          // in SQD, the send queue is still draining
	DrainKnown bool
	// Port is the port the QP was bound to (IBV_QP_PORT at RESET→INIT); 0
	// when unknown.
	Port uint8
}

// predictModifyQP is ibv_modify_qp on rxe: libibverbs' ibv_cmd_modify_qp,
// then the kernel's uverbs modify_qp, _ib_modify_qp and rxe_qp_chk_attr, in
// that order.
func predictModifyQP(d *devFacts, f modifyFacts, a *verbs.QPAttr, mask verbs.QPAttrMask) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s QP in %s, mask %s", f.Type.Short(), f.Cur, mask)}
	r := d.profile()
	q := rules.QP{Type: f.Type, State: f.Cur, Draining: f.SQDraining, DrainKnown: f.DrainKnown, Port: f.Port}
	// libibverbs, then uverbs modify_qp: a refusal there ends the call.
	if p.add(r.ModifyQPCommand(q, a, mask)); len(p.reasons) > 0 {
		return p
	}
	// _ib_modify_qp: the address vectors' source GIDs, the RoCE ban on
	// alternate paths, what only the kernel knows (P_Keys, routes).
	if mask&verbs.AttrAV != 0 {
		p.add(r.AV("ibv_modify_qp", "ah_attr", &a.AH, "IBV_QP_AV"))
	}
	p.add(r.ModifyQPAltPath(a, mask))
	if mask&verbs.AttrPKeyIndex != 0 && d.Port.PKeyTblLen > 0 && int(a.PKeyIndex) >= int(d.Port.PKeyTblLen) {
		p.maybe(verbs.EINVAL, "use pkey_index=0",
			"IBV_QP_PKEY_INDEX %d is outside the P_Key table of %d entries (ib_security_modify_qp)", a.PKeyIndex, d.Port.PKeyTblLen)
	}
	if mask&verbs.AttrAV != 0 && a.AH.IsGlobal {
		p.maybe(syscall.EHOSTUNREACH, "use a dgid this host can reach: your own GID for loopback, or the peer's RoCE GID",
			"the kernel could not resolve the Ethernet address of dgid %v (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
		p.maybe(syscall.ENETUNREACH, "use a dgid this host can reach", "there is no route to dgid %v (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
		p.maybe(verbs.ETIMEDOUT, "use a dgid this host can reach", "resolving dgid %v timed out (ib_resolve_eth_dmac)", a.AH.GRH.DGID)
	}
	// rxe_qp_chk_attr: the transition table first, on the mask the kernel
	// widened.
	implied := rules.ImpliesPort(a, mask)
	if implied {
		mask |= verbs.AttrPort
	}
	p.add(r.ModifyQPTransition(q, a, mask, implied))
	p.add(r.ModifyQPAttr(q, a, mask))
	if mask&verbs.AttrMaxDestRdAtomic != 0 {
		p.maybe(verbs.ENOMEM, "ask for a smaller max_dest_rd_atomic",
			"the kernel could not allocate %d responder resources (rxe_qp_from_attr)", a.MaxDestRdAtomic)
	}
	return p
}

// predictRegMR is ibv_reg_mr on rxe: ib_uverbs_reg_mr's ib_check_mr_access,
// then ib_umem_get.
func predictRegMR(length int, access verbs.Access, memlock uint64, capIPCLock bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("length %d, access %s", length, access)}
	p.add(noDevice.MRAccess(access))
	p.add(noDevice.MRLength(length))
	if len(p.reasons) == 0 {
		p.add(noDevice.MRPin(length, memlock, capIPCLock))
	}
	p.maybe(verbs.ENOMEM, "register less", "the kernel is out of memory for the registration")
	p.maybe(verbs.EFAULT, "", "the kernel could not pin the pages (ib_umem_get)")
	return p
}

// predictCreateCQ is ibv_create_cq on rxe: uverbs' comp_vector check, then
// rxe_cq_chk_attr.
func predictCreateCQ(d *devFacts, cqe, compVector int) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("cqe %d, comp_vector %d", cqe, compVector)}
	p.add(d.profile().CreateCQ(cqe, compVector))
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the CQ")
	return p
}

// predictResizeCQ is ibv_resize_cq on rxe (rxe_resize_cq → rxe_cq_chk_attr),
// not knowing how many completions the CQ holds.
func predictResizeCQ(d *devFacts, cqe int) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("cqe %d", cqe)}
	p.add(d.profile().CQE("ibv_resize_cq", cqe, -1))
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the new queue")
	return p
}

// qpCreate is what predictCreateQP needs to know of a create_qp call.
type qpCreate struct {
	Type   verbs.QPType
	Cap    verbs.QPCap
	HasSRQ bool
}

// predictCreateQP is ibv_create_qp on rxe: the type (libibverbs, uverbs,
// rxe_qp_chk_init), then rxe_qp_chk_cap.
func predictCreateQP(d *devFacts, c qpCreate) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s, cap %+v, srq %v", c.Type, c.Cap, c.HasSRQ)}
	r := d.profile()
	if p.add(r.QPType(c.Type)); len(p.reasons) > 0 {
		return p
	}
	p.add(r.QPCap(c.Cap, c.HasSRQ))
	p.maybe(verbs.ENOMEM, "ask for smaller queues", "the kernel could not allocate the queues")
	return p
}

// predictCreateSRQ is ibv_create_srq on rxe (rxe_srq_chk_init).
func predictCreateSRQ(d *devFacts, a verbs.SRQAttr) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v", a)}
	p.add(d.profile().CreateSRQ(a))
	p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the SRQ")
	return p
}

// predictModifySRQ is ibv_modify_srq on rxe (rxe_srq_chk_attr), given the
// SRQ's current max_wr and armed limit.
func predictModifySRQ(d *devFacts, curMaxWR, curLimit int, a verbs.SRQAttr, mask verbs.SRQAttrMask) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v, mask %s, now max_wr %d limit %d", a, mask, curMaxWR, curLimit)}
	p.add(d.profile().ModifySRQ(rules.SRQ{MaxWR: curMaxWR, Limit: curLimit}, a, mask))
	if mask&verbs.SRQAttrMaxWR != 0 {
		p.maybe(verbs.EINVAL, "poll first, or ask for more", "the SRQ holds more posted receives than %d (rxe_queue_resize)", a.MaxWR)
		p.maybe(verbs.ENOMEM, "ask for fewer entries", "the kernel could not allocate the new queue")
	}
	return p
}

// predictCreateAH is ibv_create_ah on rxe: ib_uverbs_create_ah's port
// check, then rdma_create_user_ah (rdma_fill_sgid_attr, then the RoCE
// address resolution).
func predictCreateAH(d *devFacts, a verbs.AHAttr) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%+v", a)}
	p.add(d.profile().AV("ibv_create_ah", "ah_attr", &a, "the AH"))
	if a.IsGlobal {
		p.maybe(syscall.EHOSTUNREACH, "use a dgid this host can reach", "the kernel could not resolve the Ethernet address of dgid %v (ib_resolve_eth_dmac)", a.GRH.DGID)
		p.maybe(syscall.ENETUNREACH, "use a dgid this host can reach", "there is no route to dgid %v", a.GRH.DGID)
		p.maybe(verbs.ETIMEDOUT, "use a dgid this host can reach", "resolving dgid %v timed out", a.GRH.DGID)
	}
	p.maybe(verbs.ENOMEM, "destroy unused AHs", "the kernel could not allocate the AH (max_ah reached?)")
	return p
}

// predictAttachMcast is ibv_attach_mcast (ib_uverbs_attach_mcast,
// ib_attach_mcast). attached says the QP is already attached to (gid, lid),
// which uverbs answers with success without asking the device.
func predictAttachMcast(t verbs.QPType, gid verbs.GID, attached bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("%s QP, gid %v", t, gid)}
	if attached {
		return p
	}
	p.add(noDevice.Mcast("ibv_attach_mcast", "", t, gid))
	p.maybe(verbs.ENOMEM, "detach other groups", "the device has no room for the attachment (max_mcast_grp, max_mcast_qp_attach)")
	return p
}

// predictDetachMcast is ibv_detach_mcast: uverbs refuses a group it has no
// record of attaching.
func predictDetachMcast(gid verbs.GID, attached bool) prediction {
	p := prediction{exhaustive: true, call: fmt.Sprintf("gid %v", gid)}
	p.add(noDevice.DetachMcast("ibv_detach_mcast", "", gid, 0, attached))
	return p
}

// predictBusy is a destroy that the kernel refuses with EBUSY while users
// are listed.
func predictBusy(op, what string, users []string, hint string) prediction {
	p := prediction{exhaustive: true}
	if len(users) > 0 {
		p.fail(verbs.EBUSY, hint, "%s is still in use by %s", what, strings.Join(users, ", "))
		p.call = strings.Join(users, ", ")
	}
	return p
}

// sendWRFacts is what a QP knows when it checks a send WR (validate_send_wr
// in rdma-core 44's rxe provider).
type sendFacts struct {
	Type      verbs.QPType
	State     verbs.QPState // libibverbs' cached ibv_qp.state
	MaxSGE    int
	MaxInline int
}

// sendWRReason returns why rxe's validate_send_wr would refuse wr, or ok.
func sendWRReason(f *sendFacts, wr *verbs.SendWR, length uint64) (reason, bool) {
	if len(wr.SGList) > f.MaxSGE {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("post at most %d SGEs, or create the QP with a larger max_send_sge", f.MaxSGE),
			why: fmt.Sprintf("the WR has %d SGEs; this QP's max_send_sge is %d (rxe validate_send_wr)", len(wr.SGList), f.MaxSGE)}, false
	}
	if wr.Opcode.IsAtomic() && (length < 8 || wr.RemoteAddr&7 != 0) {
		return reason{errno: verbs.EINVAL, certain: true, hint: "give the atomic one 8-byte local buffer and an 8-byte-aligned remote_addr",
			why: fmt.Sprintf("%s needs at least 8 local bytes (has %d) and an 8-byte-aligned remote_addr (%#x) (rxe validate_send_wr)", wr.Opcode, length, wr.RemoteAddr)}, false
	}
	if wr.Flags&verbs.SendInline != 0 && length > uint64(f.MaxInline) {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("send at most %d bytes inline, or drop the inline flag", f.MaxInline),
			why: fmt.Sprintf("%d bytes of inline data exceed this QP's max_inline_data %d (rxe validate_send_wr)", length, f.MaxInline)}, false
	}
	return reason{}, true
}

// sendDoorbellReason is the kernel's answer to the doorbell rxe rings after
// queueing: rxe_post_send refuses it with EINVAL while the requester is not
// ready (before RTS).
func sendDoorbellReason(state verbs.QPState, queued int) (reason, bool) {
	switch state {
	case verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR:
		why := fmt.Sprintf("the QP is in %s; sends are accepted from RTS on (the kernel's rxe_post_send refuses the doorbell while the requester is not ready)", state)
		if queued > 0 {
			why += fmt.Sprintf("; rxe had already queued the %d WR(s) in the send queue (bad_wr is not set): they stay there and go out "+
				"after the QP reaches RTS and another post rings the doorbell, unless the QP is reset first", queued)
		}
		return reason{errno: verbs.EINVAL, certain: true, why: why, hint: "bring the QP to RTS first (INIT → RTR → RTS)", queued: true}, false
	}
	return reason{}, true
}

// recvPreReason is rxe_post_recv's refusal before it looks at any WR
// (bad_wr stays NULL): a QP on an SRQ has no receive queue, and a QP in
// RESET takes no receives (C10-97.2.1, from libibverbs' cached state).
func recvPreReason(state verbs.QPState, hasSRQ bool) (reason, bool) {
	if hasSRQ {
		return reason{errno: verbs.EINVAL, certain: true, hint: "post the receive to the SRQ (post_srq_recv)",
			why: "the QP takes its receives from an SRQ and has no receive queue of its own (rxe_post_recv)"}, false
	}
	if state == verbs.QPSReset {
		return reason{errno: verbs.EINVAL, certain: true, hint: "move the QP to INIT first; rc_pingpong posts its receives in INIT",
			why: "the QP is in RESET, which takes no receives (rxe_post_recv, C10-97.2.1)"}, false
	}
	return reason{}, true
}

// recvWRReason is rxe_post_one_recv's check of one WR (a full queue is
// checked first, and is not predictable here).
func recvWRReason(wr *verbs.RecvWR, maxSGE int, what string) (reason, bool) {
	if len(wr.SGList) > maxSGE {
		return reason{errno: verbs.EINVAL, certain: true, hint: fmt.Sprintf("post at most %d SGEs, or create the %s with more", maxSGE, what),
			why: fmt.Sprintf("the WR has %d SGEs; this %s's max_sge is %d (rxe_post_one_recv)", len(wr.SGList), what, maxSGE)}, false
	}
	return reason{}, true
}

// postQueue names the queue a post fills, for the queue-full explanation.
type postQueue struct {
	name  string // "send queue", "receive queue", "SRQ"
	depth int    // its capacity
	grow  string // how to make it larger
}

// judgePost compares a post's outcome (errno, gotBad: the index of bad_wr
// or -1) with the rules: predBad is the first WR the rules refuse (-1 for
// none) with its reason predWhy, and door, when hasDoor, is the refusal of
// the whole call (the send doorbell before RTS; a receive on a QP in RESET
// or on an SRQ). It returns how many WRs count as posted and the explained
// error. The success path does not allocate.
func judgePost(op string, errno syscall.Errno, gotBad, nwr int, predBad int, predWhy reason, door reason, hasDoor bool, q postQueue) (int, error) {
	if errno == 0 {
		if predBad >= 0 || hasDoor {
			recordMisprediction(Misprediction{Op: op, Predicted: postPredicted(predBad, predWhy, door, hasDoor), Got: "success",
				Call: fmt.Sprintf("%d WR(s)", nwr)})
		}
		return nwr, nil
	}
	// With no bad_wr after rxe's doorbell refused, no WR was refused: the
	// provider queued them all, and they are posted (the simulator says so
	// too). Before a check that looks at no WR (a receive in RESET), none.
	n := 0
	switch {
	case gotBad >= 0:
		n = gotBad
	case hasDoor && errno == door.errno && door.queued:
		n = nwr
	}
	full := func() string {
		return fmt.Sprintf("the %s is full: its %d slot(s) hold WRs not yet completed", q.name, q.depth)
	}
	fullHint := "poll the CQ to retire completed WRs, or " + q.grow
	var why, hint string
	mispredicted := false
	earlier := gotBad >= 0 && (predBad < 0 || gotBad < predBad) // a WR the rules passed was refused
	switch {
	case gotBad >= 0 && gotBad == predBad && errno == predWhy.errno:
		why, hint = fmt.Sprintf("WR #%d: %s", gotBad+1, predWhy.why), predWhy.hint
		if hasDoor {
			why += "; and " + door.why
		}
	case gotBad >= 0 && gotBad == predBad && hasDoor && errno == door.errno:
		// The WR was refused, then the doorbell too, whose errno rxe
		// returns in preference.
		why, hint = fmt.Sprintf("WR #%d: %s; and %s", gotBad+1, predWhy.why, door.why), door.hint
	case earlier && hasDoor && errno == door.errno:
		why, hint = fmt.Sprintf("WR #%d did not fit: %s; and %s", gotBad+1, full(), door.why), door.hint
	case earlier && errno == verbs.ENOMEM:
		why, hint = fmt.Sprintf("WR #%d did not fit: %s", gotBad+1, full()), fullHint
	case gotBad < 0 && hasDoor && errno == door.errno:
		why, hint = door.why, door.hint
	default:
		mispredicted = true
		why, hint = explainErrno(op, errno)
		if gotBad >= 0 {
			why = fmt.Sprintf("WR #%d: %s", gotBad+1, why)
		}
	}
	if mispredicted {
		predicted := postPredicted(predBad, predWhy, door, hasDoor)
		recordMisprediction(Misprediction{Op: op, Predicted: predicted, Got: fmt.Sprintf("%s, bad_wr = WR #%d", verbs.ErrnoName(errno), gotBad+1),
			Call: fmt.Sprintf("%d WR(s)", nwr)})
		why += fmt.Sprintf(" [misprediction: vsh's rules for %s predicted %s, but libibverbs returned %s with bad_wr = WR #%d; "+
			"a bug in verbs/ibverbs' rules or in the simulator that follows them — counted by ibverbs.Mispredictions]",
			op, predicted, verbs.ErrnoName(errno), gotBad+1)
	}
	return n, &verbs.Error{Op: op, Errno: errno, Why: why, Hint: hint}
}

func postPredicted(predBad int, predWhy, door reason, hasDoor bool) string {
	switch {
	case predBad >= 0:
		return fmt.Sprintf("WR #%d refused with %s (%s)", predBad+1, verbs.ErrnoName(predWhy.errno), predWhy.why)
	case hasDoor:
		return fmt.Sprintf("%s (%s)", verbs.ErrnoName(door.errno), door.why)
	}
	return "success"
}
