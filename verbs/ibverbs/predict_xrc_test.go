package ibverbs

import (
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestPredictXRC checks the predictions of the extended verbs on rxe
// (rdma-core 44: no open_xrcd, open_qp or get_srq_num; create_srq_ex and
// create_qp_ex refuse what needs a domain in libibverbs) and on a device
// that sets IBV_DEVICE_XRC, where only libibverbs' own checks are certain.
func TestPredictXRC(t *testing.T) {
	rxe := rxeFacts()
	mlx := rxeFacts()
	mlx.Attr.DeviceCapFlags |= deviceXRC
	cap1 := verbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1}
	srq1 := verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}
	tests := []struct {
		name      string
		p         prediction
		want      syscall.Errno // 0: success
		whyHas    string
		labHint   bool // the hint names mlx5 and --sim-xrc
		exhausted bool
	}{
		{"open_xrcd on rxe", predictOpenXRCD(rxe, false, verbs.XRCDCreate), verbs.EOPNOTSUPP, "rxe has no XRC", true, true},
		{"open_xrcd(path) on rxe", predictOpenXRCD(rxe, true, 0), verbs.EOPNOTSUPP, "open_xrcd", true, true},
		{"get_srq_num on rxe", predictSRQNum(rxe, verbs.SRQTypeBasic), verbs.EOPNOTSUPP, "get_srq_num", true, true},
		{"open_qp on rxe", predictOpenQP(rxe, verbs.QPTypeXRCRecv, false), verbs.EOPNOTSUPP, "open_qp", true, true},
		{"create_srq_ex basic", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeBasic, Attr: srq1, HasPD: true}), 0, "", false, true},
		{"create_srq_ex basic max_wr 0", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeBasic, HasPD: true}), verbs.EINVAL, "max_wr", false, true},
		{"create_srq_ex basic with a CQ", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeBasic, Attr: srq1, HasPD: true, HasCQ: true}), 0, "", false, true},
		{"create_srq_ex XRC without XRCD", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeXRC, Attr: srq1, HasPD: true, HasCQ: true}), verbs.EINVAL, "XRC domain", true, true},
		{"create_srq_ex XRC without PD", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeXRC, Attr: srq1}), verbs.EINVAL, "no PD", false, true},
		{"create_srq_ex TM", predictCreateSRQEx(rxe, srqExCall{Type: verbs.SRQTypeTM, Attr: srq1, HasPD: true, HasCQ: true}), verbs.EINVAL, "tag-matching", false, true},
		{"create_qp_ex XRC_SEND with PD", predictCreateQPEx(rxe, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeXRCSend, Cap: cap1}, HasPD: true}), verbs.EOPNOTSUPP, "rxe does not implement XRC", true, true},
		{"create_qp_ex XRC_RECV alone", predictCreateQPEx(rxe, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeXRCRecv}}), verbs.EINVAL, "XRC domain", true, true},
		{"create_qp_ex XRC_RECV with PD", predictCreateQPEx(rxe, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeXRCRecv}, HasPD: true}), verbs.EINVAL, "XRC domain", true, true},
		{"create_qp_ex RC without PD", predictCreateQPEx(rxe, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeRC, Cap: cap1}}), verbs.EINVAL, "needs a PD", false, true},
		{"create_qp_ex RC with PD", predictCreateQPEx(rxe, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeRC, Cap: cap1}, HasPD: true}), 0, "", false, true},
		{"open_xrcd on mlx5", predictOpenXRCD(mlx, true, 0), 0, "", false, false},
		{"get_srq_num on mlx5", predictSRQNum(mlx, verbs.SRQTypeBasic), 0, "", false, false},
		{"create_srq_ex XRC on mlx5", predictCreateSRQEx(mlx, srqExCall{Type: verbs.SRQTypeXRC, Attr: srq1, HasPD: true, HasXRCD: true, HasCQ: true}), 0, "", false, false},
		{"create_srq_ex XRC without CQ on mlx5", predictCreateSRQEx(mlx, srqExCall{Type: verbs.SRQTypeXRC, Attr: srq1, HasPD: true, HasXRCD: true}), verbs.EINVAL, "a CQ", false, true},
		{"create_qp_ex XRC_RECV on mlx5", predictCreateQPEx(mlx, qpExCall{qpCreate: qpCreate{Type: verbs.QPTypeXRCRecv}, HasXRCD: true}), 0, "", false, false},
	}
	for _, tc := range tests {
		r, ok := tc.p.certain()
		got := syscall.Errno(0)
		if ok {
			got = r.errno
		}
		if got != tc.want {
			t.Errorf("%s: predicts %s; want %s", tc.name, tc.p.expected(), verbs.ErrnoName(tc.want))
			continue
		}
		if tc.p.exhaustive != tc.exhausted {
			t.Errorf("%s: exhaustive %v; want %v", tc.name, tc.p.exhaustive, tc.exhausted)
		}
		if !ok {
			continue
		}
		if !strings.Contains(r.why, tc.whyHas) {
			t.Errorf("%s: why %q; want it to name %q", tc.name, r.why, tc.whyHas)
		}
		if labHint := strings.Contains(r.hint, "mlx5") && strings.Contains(r.hint, "--sim-xrc"); labHint != tc.labHint {
			t.Errorf("%s: hint %q; names the lab way out: %v, want %v", tc.name, r.hint, labHint, tc.labHint)
		}
	}
}

// TestJudgeOpenXRCDOnRXE is what the learner reads when ibv_open_xrcd
// fails on rxe, as it does: the verb, the errno, why and what to do.
func TestJudgeOpenXRCDOnRXE(t *testing.T) {
	before := Mispredictions()
	err := judge("ibv_open_xrcd", verbs.EOPNOTSUPP, predictOpenXRCD(rxeFacts(), false, verbs.XRCDCreate))
	ve, ok := verbs.AsError(err)
	if !ok || ve.Op != "ibv_open_xrcd" || ve.Errno != verbs.EOPNOTSUPP {
		t.Fatalf("judge = %v; want an ibv_open_xrcd EOPNOTSUPP error", err)
	}
	for _, s := range []string{"rxe has no XRC", "dummy"} {
		if !strings.Contains(ve.Why, s) {
			t.Errorf("why %q; want %q in it", ve.Why, s)
		}
	}
	if !strings.Contains(ve.Hint, "mlx5") || !strings.Contains(ve.Hint, "--sim-xrc") {
		t.Errorf("hint %q; want mlx5 and --sim-xrc", ve.Hint)
	}
	if Mispredictions() != before {
		t.Errorf("the predicted refusal counted as a misprediction")
	}
}
