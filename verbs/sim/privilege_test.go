package sim

import (
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestPrivilege: what CAP_NET_RAW changes (uverbs_cmd.c create_qp and
// modify_qp, nldev.c rdma_nl_get_privileged_qkey).
func TestPrivilege(t *testing.T) {
	for _, root := range []bool{false, true} {
		f := New(Config{CapNetRaw: root})
		dev, _ := f.Device(0)
		ctx, _ := dev.Open()
		pd, _ := ctx.AllocPD()
		cq, _ := ctx.CreateCQ(verbs.CQInitAttr{CQE: 4})
		_, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRawPacket, SendCQ: cq, RecvCQ: cq})
		want := verbs.EPERM
		if root {
			want = verbs.EOPNOTSUPP
		}
		wantErr(t, "CreateQP(raw)", err, want, "")
		ud, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq, RecvCQ: cq})
		mustT(t, err)
		m := verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrQKey
		err = ud.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x80010000}, m)
		if root {
			mustT(t, err)
		} else {
			wantErr(t, "Modify(privileged qkey)", err, verbs.EPERM, "IBV_QP_QKEY")
		}
	}
}

// TestPortFlags: rxe's port reports IBV_QPF_GRH_REQUIRED.
func TestPortFlags(t *testing.T) {
	e := newEnv(t)
	pa, err := e.ctx.QueryPort(1)
	mustT(t, err)
	if pa.Flags != verbs.PortFlagGRHRequired {
		t.Errorf("port flags %#x, want IBV_QPF_GRH_REQUIRED", pa.Flags)
	}
}
