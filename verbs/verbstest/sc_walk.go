package verbstest

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

const srcWalk = "drivers/infiniband/core/verbs.c qp_state_table + ib_modify_qp_is_ok (Linux 6.1), called first by " +
	"rxe_qp_chk_attr (sw/rxe/rxe_qp.c); ibv_modify_qp(3) attribute tables; uverbs_cmd.c modify_qp and verbs.c " +
	"_ib_modify_qp for the RoCE rules (alternate path banned; IBV_QP_AV alone outside RTR implies IBV_QP_PORT)"

func init() {
	for _, typ := range qpTypes {
		Register(Scenario{
			Name:   "qp-state/walk-" + strings.ToLower(typ.Short()),
			Source: srcWalk,
			Run:    func(e *Env) { walk(e, typ) },
		})
	}
}

// walk tries every (reachable state, state) pair for one QP type:
//   - an illegal pair fails with EINVAL (and, where errors explain, names
//     the legal next states);
//   - a legal pair with one required attribute dropped fails with EINVAL
//     naming it;
//   - a legal pair with one attribute added that the table does not allow
//     fails with EINVAL naming it;
//   - a legal pair with each allowed optional attribute added succeeds,
//     except IBV_QP_ALT_PATH, which RoCE forbids (UC SQD→SQD with IBV_QP_AV
//     is left to its own scenario);
//   - a legal pair with exactly the required attributes succeeds, and
//     ibv_query_qp then reports the new state.
func walk(e *Env, typ verbs.QPType) {
	col := typeCol(typ)
	peer := e.QP(typ) // the QPN the connected types address; stays in RESET
	var (
		q      verbs.QP
		qState verbs.QPState
		caps   verbs.QPCap
	)
	get := func(from verbs.QPState) verbs.QP {
		if q != nil && qState == from {
			return q
		}
		if q != nil {
			_ = q.Destroy()
		}
		q = e.QP(typ)
		caps = e.qpCaps(q)
		e.Bring(q, peer.Num(), from)
		qState = from
		return q
	}
	// settle records where q is after a modify.
	settle := func() {
		if qState = e.State(q); qState == verbs.QPSSQD {
			e.waitDrained(q)
		}
	}
	label := func(from, to verbs.QPState) string {
		return fmt.Sprintf("%s %s→%s", typ.Short(), strings.ToUpper(from.Short()), strings.ToUpper(to.Short()))
	}

	for _, from := range reachableStates {
		for _, to := range allStates {
			row, legal := lookupRow(from, to)
			lbl := label(from, to)
			if !legal {
				qp := get(from)
				attr := e.attrsFor(typ, qp.Num(), peer.Num(), from, to, caps)
				err := qp.Modify(&attr, aState)
				if e.ExpectErrno(err, verbs.EINVAL, "%s (not a legal transition) with IBV_QP_STATE", lbl) {
					e.ExpectNamesStates(err, legalNext(from), "%s", lbl)
				}
				settle()
				continue
			}
			req, opt := row.req[col], row.opt[col]

			for _, b := range req.Bits() {
				qp := get(from)
				attr := e.attrsFor(typ, qp.Num(), peer.Num(), from, to, caps)
				err := qp.Modify(&attr, aState|req&^b)
				if e.ExpectErrno(err, verbs.EINVAL, "%s without required %v", lbl, b) {
					e.ExpectNamesAttr(err, b, "%s without required %v", lbl, b)
				}
				settle()
			}

			for _, b := range standardAttrs {
				if (req|opt)&b != 0 {
					continue
				}
				qp := get(from)
				attr := e.attrsFor(typ, qp.Num(), peer.Num(), from, to, caps)
				err := qp.Modify(&attr, aState|req|b)
				if e.ExpectErrno(err, verbs.EINVAL, "%s with not-allowed %v", lbl, b) {
					e.ExpectNamesAttr(err, b, "%s with not-allowed %v", lbl, b)
				}
				settle()
			}

			for _, b := range opt.Bits() {
				qp := get(from)
				attr := e.attrsFor(typ, qp.Num(), peer.Num(), from, to, caps)
				err := qp.Modify(&attr, aState|req|b)
				switch {
				case b == aAlt:
					// _ib_modify_qp: "the core code can only handle alternate
					// paths and APM for IB. Ban them in roce mode."
					if e.ExpectErrno(err, verbs.EINVAL, "%s with optional IBV_QP_ALT_PATH on RoCE", lbl) {
						e.ExpectNamesAttr(err, b, "%s with IBV_QP_ALT_PATH on RoCE", lbl)
					}
				case b == aAV && (req|opt)&aPort == 0 && to != verbs.QPSRTR:
					// uverbs adds IBV_QP_PORT to a lone IBV_QP_AV outside
					// INIT→RTR, so this row (UC SQD→SQD) refuses it: that
					// quirk is its own scenario, modify/uc-sqd-av-implies-port.
					continue
				default:
					if err != nil {
						e.Errorf("%s with optional %v = %v; want success", lbl, b, err)
					} else if got := e.State(qp); got != to {
						e.Errorf("%s with optional %v succeeded but ibv_query_qp says %v", lbl, b, got)
					}
				}
				settle()
			}

			qp := get(from)
			attr := e.attrsFor(typ, qp.Num(), peer.Num(), from, to, caps)
			if err := qp.Modify(&attr, aState|req); err != nil {
				e.Errorf("%s with exactly the required %v = %v; want success", lbl, orNone(req), err)
			} else if got := e.State(qp); got != to {
				e.Errorf("%s succeeded but ibv_query_qp says %v", lbl, got)
			}
			settle()
		}
	}
}

func orNone(m verbs.QPAttrMask) string {
	if m == 0 {
		return "(none but IBV_QP_STATE)"
	}
	return m.String()
}
