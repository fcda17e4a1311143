package verbs

import (
	"fmt"
	"strings"
)

// The QP state machine: which transitions ibv_modify_qp allows for each QP
// type, and which attributes each one requires and allows. This is the
// kernel's table, qp_state_table and ib_modify_qp_is_ok in
// drivers/infiniband/core/verbs.c (Linux 6.1), restricted to RC, UC, UD and
// XRC;
// the same masks are in rdma-core's ibv_modify_qp(3) and pyverbs'
// qp.pyx:_get_comp_mask. rxe calls ib_modify_qp_is_ok first in
// rxe_qp_chk_attr (drivers/infiniband/sw/rxe/rxe_qp.c).
//
// The simulator enforces it, and the real backend uses it to explain an
// errno that libibverbs returned.

// Transition is one legal move of the QP state machine.
type Transition struct {
	From, To QPState
	Required QPAttrMask // besides AttrState
	Optional QPAttrMask
}

type transKey struct {
	t        QPType
	from, to QPState
}

var transitions = map[transKey]Transition{}

func addTrans(from, to QPState, rc, uc, ud [2]QPAttrMask) {
	for _, e := range []struct {
		t QPType
		m [2]QPAttrMask
	}{{QPTypeRC, rc}, {QPTypeUC, uc}, {QPTypeUD, ud}} {
		transitions[transKey{e.t, from, to}] = Transition{From: from, To: to, Required: e.m[0], Optional: e.m[1]}
	}
}

func init() {
	none := [2]QPAttrMask{}
	// Every state may go to RESET and to ERR, except RESET→ERR.
	for s := QPSInit; s <= QPSErr; s++ {
		addTrans(s, QPSReset, none, none, none)
		addTrans(s, QPSErr, none, none, none)
	}
	addTrans(QPSReset, QPSReset, none, none, none)
	addTrans(QPSReset, QPSInit,
		[2]QPAttrMask{AttrPKeyIndex | AttrPort | AttrAccessFlags, 0},
		[2]QPAttrMask{AttrPKeyIndex | AttrPort | AttrAccessFlags, 0},
		[2]QPAttrMask{AttrPKeyIndex | AttrPort | AttrQKey, 0})
	addTrans(QPSInit, QPSInit,
		[2]QPAttrMask{0, AttrPKeyIndex | AttrPort | AttrAccessFlags},
		[2]QPAttrMask{0, AttrPKeyIndex | AttrPort | AttrAccessFlags},
		[2]QPAttrMask{0, AttrPKeyIndex | AttrPort | AttrQKey})
	addTrans(QPSInit, QPSRTR,
		[2]QPAttrMask{AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN | AttrMaxDestRdAtomic | AttrMinRNRTimer,
			AttrAltPath | AttrAccessFlags | AttrPKeyIndex},
		[2]QPAttrMask{AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN, AttrAltPath | AttrAccessFlags | AttrPKeyIndex},
		[2]QPAttrMask{0, AttrPKeyIndex | AttrQKey})
	addTrans(QPSRTR, QPSRTS,
		[2]QPAttrMask{AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrSQPSN | AttrMaxQPRdAtomic,
			AttrCurState | AttrAltPath | AttrAccessFlags | AttrMinRNRTimer | AttrPathMigState},
		[2]QPAttrMask{AttrSQPSN, AttrCurState | AttrAltPath | AttrAccessFlags | AttrPathMigState},
		[2]QPAttrMask{AttrSQPSN, AttrCurState | AttrQKey})
	addTrans(QPSRTS, QPSRTS,
		[2]QPAttrMask{0, AttrCurState | AttrAccessFlags | AttrAltPath | AttrPathMigState | AttrMinRNRTimer},
		[2]QPAttrMask{0, AttrCurState | AttrAccessFlags | AttrAltPath | AttrPathMigState},
		[2]QPAttrMask{0, AttrCurState | AttrQKey})
	addTrans(QPSRTS, QPSSQD,
		[2]QPAttrMask{0, AttrEnSQDAsyncNotify},
		[2]QPAttrMask{0, AttrEnSQDAsyncNotify},
		[2]QPAttrMask{0, AttrEnSQDAsyncNotify})
	addTrans(QPSSQD, QPSRTS,
		[2]QPAttrMask{0, AttrCurState | AttrAltPath | AttrAccessFlags | AttrMinRNRTimer | AttrPathMigState},
		[2]QPAttrMask{0, AttrCurState | AttrAltPath | AttrAccessFlags | AttrPathMigState},
		[2]QPAttrMask{0, AttrCurState | AttrQKey})
	addTrans(QPSSQD, QPSSQD,
		[2]QPAttrMask{0, AttrPort | AttrAV | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxQPRdAtomic |
			AttrMaxDestRdAtomic | AttrAltPath | AttrAccessFlags | AttrPKeyIndex | AttrMinRNRTimer | AttrPathMigState},
		[2]QPAttrMask{0, AttrAV | AttrAltPath | AttrAccessFlags | AttrPKeyIndex | AttrPathMigState},
		[2]QPAttrMask{0, AttrPKeyIndex | AttrQKey})
	// SQE→RTS: the kernel's row is valid for every type, with optional
	// attributes for UC and UD only. An RC QP never reaches SQE on rxe (an RC
	// send error takes it to ERR), so for RC the row is unreachable.
	transitions[transKey{QPTypeRC, QPSSQE, QPSRTS}] = Transition{From: QPSSQE, To: QPSRTS}
	transitions[transKey{QPTypeUC, QPSSQE, QPSRTS}] = Transition{From: QPSSQE, To: QPSRTS, Optional: AttrCurState | AttrAccessFlags}
	transitions[transKey{QPTypeUD, QPSSQE, QPSRTS}] = Transition{From: QPSSQE, To: QPSRTS, Optional: AttrCurState | AttrQKey}
	addXRCTrans()
}

// addXRCTrans adds the rows of XRC_SEND (the kernel's IB_QPT_XRC_INI) and
// XRC_RECV (IB_QPT_XRC_TGT). Both start from RC's; the sender has no
// responder, so nothing about receiving (max_dest_rd_atomic,
// min_rnr_timer), and the receiver no requester, so RTS needs only timeout
// and sq_psn.
func addXRCTrans() {
	for k, tr := range transitions {
		if k.t != QPTypeRC {
			continue
		}
		ini, tgt := tr, tr
		ini.Required &^= AttrMaxDestRdAtomic | AttrMinRNRTimer
		ini.Optional &^= AttrMaxDestRdAtomic | AttrMinRNRTimer
		if k.from == QPSRTR && k.to == QPSRTS {
			tgt.Required = AttrTimeout | AttrSQPSN
		}
		if k.from == QPSSQD && k.to == QPSSQD {
			tgt.Optional &^= AttrRetryCnt | AttrRNRRetry | AttrMaxQPRdAtomic
		}
		transitions[transKey{QPTypeXRCSend, k.from, k.to}] = ini
		transitions[transKey{QPTypeXRCRecv, k.from, k.to}] = tgt
	}
}

// LookupTransition returns the rule for moving a QP of type t from one state
// to another, and whether that move is legal at all.
func LookupTransition(t QPType, from, to QPState) (Transition, bool) {
	tr, ok := transitions[transKey{t, from, to}]
	return tr, ok
}

// NextStates lists the states a QP of type t may move to from a state, in
// state order.
func NextStates(t QPType, from QPState) []QPState {
	var out []QPState
	for s := QPSReset; s <= QPSErr; s++ {
		if _, ok := transitions[transKey{t, from, s}]; ok {
			out = append(out, s)
		}
	}
	return out
}

func stateList(states []QPState) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// CheckTransition applies ib_modify_qp_is_ok: nil when a QP of type t in
// state cur may take mask (which includes AttrState when the state changes;
// next is the state asked for, or cur when AttrState is absent). Otherwise an
// *Error with EINVAL that names the missing or extra attribute, or the legal
// next states.
func CheckTransition(t QPType, cur, next QPState, mask QPAttrMask) *Error {
	const op = "ibv_modify_qp"
	typ := t.Short()
	if mask&AttrCurState != 0 && cur != QPSRTR && cur != QPSRTS && cur != QPSSQD && cur != QPSSQE {
		return Errorf(op, EINVAL, "drop cur_state; it is only accepted from RTR, RTS, SQD or SQE",
			"IBV_QP_CUR_STATE is given but the QP is in %s", cur)
	}
	tr, ok := LookupTransition(t, cur, next)
	if !ok {
		nexts := NextStates(t, cur)
		hint := fmt.Sprintf("walk the QP one step at a time: RESET → INIT → RTR → RTS; from %s go to one of %s", cur.Short(), shortList(nexts))
		if t == QPTypeRC && next == QPSSQE {
			hint = "an RC QP never enters SQE: a send error on RC takes it to ERR; use state=err or state=reset"
		} else if next == QPSSQE {
			hint = "SQE is entered by the device after a send error, never through ibv_modify_qp"
		}
		return Errorf(op, EINVAL, hint, "a%s %s QP cannot go from %s to %s; from %s it can go to: %s",
			article(typ), strings.ToUpper(typ), cur, next, cur, stateList(nexts))
	}
	if missing := tr.Required &^ mask; missing != 0 {
		return Errorf(op, EINVAL, hintForMissing(missing),
			"%s on a%s %s QP needs %s; missing: %s", transName(tr), article(typ), strings.ToUpper(typ),
			tr.Required.String(), missing.String())
	}
	if extra := mask &^ (tr.Required | tr.Optional | AttrState); extra != 0 {
		return Errorf(op, EINVAL, "drop "+extra.Short()+" from this call",
			"%s does not accept %s on a%s %s QP (required: %s; optional: %s)", transName(tr), extra.String(),
			article(typ), strings.ToUpper(typ), orNone(tr.Required), orNone(tr.Optional))
	}
	return nil
}

func orNone(m QPAttrMask) string {
	if m == 0 {
		return "none"
	}
	return m.String()
}

// article completes "a"/"an" before the upper-case type name.
func article(typ string) string {
	if typ == "rc" || strings.HasPrefix(typ, "xrc") {
		return "n"
	}
	return ""
}

func transName(tr Transition) string {
	if tr.From == tr.To {
		return fmt.Sprintf("%s→%s", tr.From.Short(), tr.To.Short())
	}
	return strings.ToUpper(tr.To.Short())
}

func shortList(states []QPState) string {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.Short()
	}
	return strings.Join(names, ", ")
}

// attrHints says, for each attribute, what it is and what to give.
var attrHints = map[QPAttrMask]string{
	AttrPKeyIndex:       "pkey_index=0 (the default partition)",
	AttrPort:            "port=1 (the port the QP uses)",
	AttrAccessFlags:     "access=... (what the remote side may do to this QP's memory; 0 for none)",
	AttrQKey:            "qkey=0x11111111 (the UD queue key both sides agree on)",
	AttrAV:              "the address vector: dgid=<peer GID> sgid_index=1 hop_limit=1 (RoCE needs a GRH)",
	AttrPathMTU:         "path_mtu=1024",
	AttrDestQPN:         "dest_qpn=<the peer's QP number>",
	AttrRQPSN:           "rq_psn=<the PSN the peer will start sending with>",
	AttrMaxDestRdAtomic: "max_dest_rd_atomic=1 (READs/atomics the peer may have in flight here)",
	AttrMinRNRTimer:     "min_rnr_timer=12 (how long a peer waits after an RNR NAK)",
	AttrTimeout:         "timeout=14 (ACK timeout, 4.096 µs × 2^timeout)",
	AttrRetryCnt:        "retry_cnt=7",
	AttrRNRRetry:        "rnr_retry=7 (7 means retry forever)",
	AttrSQPSN:           "sq_psn=<this QP's first PSN>",
	AttrMaxQPRdAtomic:   "max_rd_atomic=1 (READs/atomics this QP may have in flight)",
}

func hintForMissing(missing QPAttrMask) string {
	var parts []string
	for _, b := range missing.Bits() {
		if h, ok := attrHints[b]; ok {
			parts = append(parts, h)
		} else {
			parts = append(parts, b.Short())
		}
	}
	return "add " + strings.Join(parts, "; ")
}

// AttrHint describes one attribute mask bit for a learner.
func AttrHint(b QPAttrMask) string { return attrHints[b] }
