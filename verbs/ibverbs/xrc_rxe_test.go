//go:build linux && cgo && ibverbs

package ibverbs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestXRCOnRXE calls every extended verb of XRC on rxe0 (VSH_RXE=1), where
// rdma-core 44's rxe provider has no XRC: each outcome must be the one the
// rules predicted (no misprediction), and the refusals must say that rxe
// has no XRC and where XRC is to be found. What rxe0 answered is logged.
func TestXRCOnRXE(t *testing.T) {
	e := newRXE(t)
	before := Mispredictions()
	x, ok := e.ctx.(verbs.ExtendedContext)
	if !ok {
		t.Fatalf("the ibverbs context (%T) does not implement verbs.ExtendedContext", e.ctx)
	}
	expect := func(what string, err error, want syscall.Errno, whyHas string, labHint bool) {
		t.Helper()
		t.Logf("rxe0: %s = %v", what, err)
		ve, ok := verbs.AsError(err)
		if !ok || ve.Errno != want {
			t.Errorf("%s = %v; want %s", what, err, verbs.ErrnoName(want))
			return
		}
		if !strings.Contains(ve.Why, whyHas) {
			t.Errorf("%s: why %q; want it to say %q", what, ve.Why, whyHas)
		}
		if labHint && (!strings.Contains(ve.Hint, "mlx5") || !strings.Contains(ve.Hint, "--sim-xrc")) {
			t.Errorf("%s: hint %q; want it to name mlx5 and --sim-xrc", what, ve.Hint)
		}
	}

	// ibv_open_xrcd: libibverbs' dummy op, with and without a file; the
	// file vsh opened for it is closed again.
	_, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
	expect("ibv_open_xrcd(fd -1, O_CREAT)", err, verbs.EOPNOTSUPP, "rxe has no XRC", true)
	fds := openFDs(t)
	path := filepath.Join(t.TempDir(), "xrc_domain")
	_, err = x.OpenXRCD(verbs.XRCDInitAttr{Path: path, OFlags: verbs.XRCDCreate})
	expect("ibv_open_xrcd("+path+", O_CREAT)", err, verbs.EOPNOTSUPP, "rxe has no XRC", true)
	if n := openFDs(t); n != fds {
		t.Errorf("open file descriptors %d after the failed ibv_open_xrcd; want %d (the domain's file closed)", n, fds)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the domain's file was not created as xsrq_pingpong creates it: %v", err)
	}

	// ibv_create_srq_ex: an XRC SRQ without a domain is refused by
	// libibverbs; a basic SRQ is made, through ibv_create_srq or, with a
	// CQ in comp_mask, through rxe's create_srq_ex.
	_, err = x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, PD: e.pd, CQ: e.cq})
	expect("ibv_create_srq_ex(IBV_SRQT_XRC, pd, cq, no xrcd)", err, verbs.EINVAL, "XRC domain", true)
	_, err = x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeXRC, CQ: e.cq})
	expect("ibv_create_srq_ex(IBV_SRQT_XRC, no pd)", err, verbs.EINVAL, "no PD", false)
	for _, cq := range []verbs.CQ{nil, e.cq} {
		s, err := x.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}, Type: verbs.SRQTypeBasic, PD: e.pd, CQ: cq})
		t.Logf("rxe0: ibv_create_srq_ex(IBV_SRQT_BASIC, cq %v) = %v", cq != nil, err)
		if err != nil {
			t.Errorf("ibv_create_srq_ex(IBV_SRQT_BASIC, cq %v) = %v; want an SRQ", cq != nil, err)
			continue
		}
		if s.PD() != e.pd {
			t.Errorf("SRQ.PD() = %v; want the PD it was made on", s.PD())
		}
		_, err = s.Num()
		expect("ibv_get_srq_num(basic SRQ)", err, verbs.EOPNOTSUPP, "get_srq_num", true)
		e.must(s.Destroy(), "ibv_destroy_srq")
		if err := s.Destroy(); err == nil || !strings.Contains(err.Error(), "destroyed") {
			t.Errorf("second Destroy = %v; want an error saying the SRQ was destroyed", err)
		}
		if _, err := s.Num(); err == nil {
			t.Errorf("Num after Destroy succeeded; want an error")
		}
	}

	// ibv_create_qp_ex: with a PD alone libibverbs calls ibv_create_qp,
	// and rxe refuses XRC_SEND; XRC_RECV without a domain is refused by
	// libibverbs.
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCSend, SendCQ: e.cq,
		Cap: verbs.QPCap{MaxSendWR: 4, MaxSendSGE: 1}}, PD: e.pd})
	expect("ibv_create_qp_ex(IBV_QPT_XRC_SEND, pd, send_cq)", err, verbs.EOPNOTSUPP, "rxe does not implement XRC", true)
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}})
	expect("ibv_create_qp_ex(IBV_QPT_XRC_RECV, no xrcd)", err, verbs.EINVAL, "XRC domain", true)
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, PD: e.pd})
	expect("ibv_create_qp_ex(IBV_QPT_XRC_RECV, pd, no xrcd)", err, verbs.EINVAL, "XRC domain", true)
	_, err = x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.cq, RecvCQ: e.cq,
		Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}})
	expect("ibv_create_qp_ex(IBV_QPT_RC, no pd)", err, verbs.EINVAL, "needs a PD", false)
	q, err := x.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.cq, RecvCQ: e.cq,
		Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}, PD: e.pd})
	t.Logf("rxe0: ibv_create_qp_ex(IBV_QPT_RC, pd) = %v", err)
	if err != nil {
		t.Errorf("ibv_create_qp_ex(RC with a PD) = %v; want a QP", err)
	} else {
		if q.PD() != e.pd || q.Type() != verbs.QPTypeRC {
			t.Errorf("QP PD %v type %v; want the PD and RC", q.PD(), q.Type())
		}
		if err := e.cq.Destroy(); err == nil {
			t.Errorf("destroying the QP's CQ succeeded; want EBUSY")
		}
		e.must(q.Destroy(), "ibv_destroy_qp")
	}

	// ibv_open_qp: libibverbs' dummy op.
	_, err = x.OpenQP(verbs.QPOpenAttr{QPNum: 0x11, Type: verbs.QPTypeXRCRecv})
	expect("ibv_open_qp(IBV_QPT_XRC_RECV)", err, verbs.EOPNOTSUPP, "rxe has no XRC", true)

	if got := Mispredictions() - before; got != 0 {
		for _, m := range MispredictionLog() {
			t.Errorf("misprediction: %v", m)
		}
		t.Errorf("%d misprediction(s) in the XRC verbs on rxe", got)
	}
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	return len(ents)
}
