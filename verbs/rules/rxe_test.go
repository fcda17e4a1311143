package rules

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// rxe returns the profile of an rxe device on a 1500-byte netdev (Linux
// 6.1): one port, max_mtu 4096, GIDs in slots 0 and 1.
func rxe(m Mode) *RXE {
	return &RXE{
		Mode: m,
		Attr: verbs.DeviceAttr{PhysPortCnt: 1, MaxQPWR: 1 << 20, MaxSGE: 32, MaxCQE: 1<<15 - 1, MaxQPRdAtom: 128,
			MaxSRQWR: 1 << 20, MaxSRQSGE: 27, MaxInlineData: 512},
		Port: verbs.PortAttr{MaxMTU: verbs.MTU4096, ActiveMTU: verbs.MTU1024, GIDTblLen: 1024, PKeyTblLen: 1,
			LinkLayer: verbs.LinkLayerEthernet},
		NumCompVectors: 2,
		GID: func(port uint8, i int) (verbs.GID, bool, bool) {
			return verbs.GID{10: 0xff, 11: 0xff, 12: 10, 15: byte(i)}, i <= 1, true
		},
		Name: "sim0",
	}
}

func grh(sgid uint8) verbs.AHAttr {
	return verbs.AHAttr{PortNum: 1, IsGlobal: true, GRH: verbs.GlobalRoute{DGID: verbs.GID{10: 0xff, 11: 0xff, 12: 10, 15: 2}, SGIDIndex: sgid}}
}

// first returns the first finding of v, and whether v has any.
func first(v Verdict) (Finding, bool) {
	if len(v.Findings) == 0 {
		return Finding{}, false
	}
	return v.Findings[0], true
}

// TestRXE checks each rule on a case it refuses and one it passes, in both
// modes. Reference: rxe_qp_chk_attr, rxe_qp_chk_init, rxe_qp_chk_cap,
// rxe_cq_chk_attr, rxe_srq_chk_init, rxe_srq_chk_attr, ib_check_mr_access,
// rdma_check_ah_attr, ib_attach_mcast (Linux 6.1).
func TestRXE(t *testing.T) {
	rtr := verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN |
		verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	init := verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	rcInit := QP{Type: verbs.QPTypeRC, State: verbs.QPSInit, DrainKnown: true, Port: 1}
	rtrAttr := func(f func(a *verbs.QPAttr)) *verbs.QPAttr {
		a := &verbs.QPAttr{State: verbs.QPSRTR, PathMTU: verbs.MTU1024, AH: grh(1), DestQPN: 17, MaxDestRdAtomic: 1, MinRNRTimer: 12}
		if f != nil {
			f(a)
		}
		return a
	}
	tests := []struct {
		name    string
		rule    func(r *RXE) Verdict
		errno   syscall.Errno // 0: no finding
		certain [2]bool       // in Decide, in Predict
		mention string        // a word the why must contain
	}{
		{"qp rc", func(r *RXE) Verdict { return r.QPType(verbs.QPTypeRC) }, 0, [2]bool{}, ""},
		{"qp xrc send", func(r *RXE) Verdict { return r.QPType(verbs.QPTypeXRCSend) }, verbs.EOPNOTSUPP, [2]bool{true, true}, "rxe"},
		{"qp xrc recv", func(r *RXE) Verdict { return r.QPType(verbs.QPTypeXRCRecv) }, verbs.EINVAL, [2]bool{true, true}, "XRC"},
		{"qp raw", func(r *RXE) Verdict { return r.QPType(verbs.QPTypeRawPacket) }, verbs.EPERM, [2]bool{true, true}, "CAP_NET_RAW"},
		{"qp raw as root", func(r *RXE) Verdict { r.CapNetRaw = true; return r.QPType(verbs.QPTypeRawPacket) }, verbs.EOPNOTSUPP, [2]bool{true, true}, "rxe"},
		{"qp 99", func(r *RXE) Verdict { return r.QPType(99) }, verbs.EINVAL, [2]bool{true, true}, "not a QP type"},
		{"cap ok", func(r *RXE) Verdict {
			return r.QPCap(verbs.QPCap{MaxSendWR: 16, MaxSendSGE: 32, MaxInlineData: 512}, false)
		}, 0, [2]bool{}, ""},
		{"cap sge 33", func(r *RXE) Verdict { return r.QPCap(verbs.QPCap{MaxSendSGE: 33}, false) }, verbs.EINVAL, [2]bool{true, true}, "max_send_sge"},
		{"cap negative", func(r *RXE) Verdict { return r.QPCap(verbs.QPCap{MaxRecvWR: -1}, false) }, verbs.EINVAL, [2]bool{true, true}, "max_recv_wr"},
		{"cap srq", func(r *RXE) Verdict { return r.QPCap(verbs.QPCap{MaxRecvWR: 1 << 21}, true) }, 0, [2]bool{}, ""},
		{"cap inline 513", func(r *RXE) Verdict { return r.QPCap(verbs.QPCap{MaxInlineData: 513}, false) }, verbs.EINVAL, [2]bool{true, true}, "max_inline_data"},
		{"modify init", func(r *RXE) Verdict {
			q := QP{Type: verbs.QPTypeRC, State: verbs.QPSReset, DrainKnown: true}
			a := &verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}
			v := r.ModifyQPCommand(q, a, init)
			v.Add(r.ModifyQPTransition(q, a, init, false))
			v.Add(r.ModifyQPAttr(q, a, init))
			return v
		}, 0, [2]bool{}, ""},
		{"modify rate limit", func(r *RXE) Verdict { return r.ModifyQPCommand(rcInit, rtrAttr(nil), rtr|verbs.AttrRateLimit) }, verbs.EOPNOTSUPP, [2]bool{true, true}, "IBV_QP_RATE_LIMIT"},
		{"modify state 9", func(r *RXE) Verdict { return r.ModifyQPCommand(rcInit, &verbs.QPAttr{State: 9}, verbs.AttrState) }, verbs.EINVAL, [2]bool{true, true}, "state"},
		{"modify qkey", func(r *RXE) Verdict {
			return r.ModifyQPCommand(rcInit, &verbs.QPAttr{QKey: 0x80010000}, verbs.AttrQKey)
		}, verbs.EPERM, [2]bool{true, true}, "IBV_QP_QKEY"},
		{"modify reset→rtr", func(r *RXE) Verdict {
			return r.ModifyQPTransition(QP{Type: verbs.QPTypeRC, State: verbs.QPSReset}, rtrAttr(nil), rtr, false)
		}, verbs.EINVAL, [2]bool{true, true}, "IBV_QPS_INIT"},
		{"modify uc sqd av implies port", func(r *RXE) Verdict {
			a := &verbs.QPAttr{State: verbs.QPSSQD, AH: grh(1)}
			return r.ModifyQPTransition(QP{Type: verbs.QPTypeUC, State: verbs.QPSSQD}, a, verbs.AttrState|verbs.AttrAV|verbs.AttrPort, true)
		}, verbs.EINVAL, [2]bool{true, true}, "adds it"},
		{"modify path mtu 6", func(r *RXE) Verdict {
			return r.ModifyQPAttr(rcInit, rtrAttr(func(a *verbs.QPAttr) { a.PathMTU = 6 }), rtr)
		}, verbs.EINVAL, [2]bool{true, true}, "max_mtu"},
		{"modify path mtu 0", func(r *RXE) Verdict {
			return r.ModifyQPAttr(rcInit, rtrAttr(func(a *verbs.QPAttr) { a.PathMTU = 0 }), rtr)
		}, verbs.EINVAL, [2]bool{true, false}, "not an MTU"},
		{"modify timeout 32", func(r *RXE) Verdict {
			return r.ModifyQPAttr(QP{Type: verbs.QPTypeRC, State: verbs.QPSRTR}, &verbs.QPAttr{State: verbs.QPSRTS, Timeout: 32}, verbs.AttrState|verbs.AttrTimeout)
		}, verbs.EINVAL, [2]bool{true, true}, "31"},
		{"modify rd_atomic 129", func(r *RXE) Verdict {
			return r.ModifyQPAttr(QP{Type: verbs.QPTypeRC, State: verbs.QPSRTR}, &verbs.QPAttr{State: verbs.QPSRTS, MaxRdAtomic: 129}, verbs.AttrState|verbs.AttrMaxQPRdAtomic)
		}, verbs.EINVAL, [2]bool{true, true}, "max_qp_rd_atom 128"},
		{"modify draining", func(r *RXE) Verdict {
			return r.ModifyQPAttr(QP{Type: verbs.QPTypeRC, State: verbs.QPSSQD, Draining: true, DrainKnown: true}, &verbs.QPAttr{State: verbs.QPSRTS}, verbs.AttrState)
		}, verbs.EINVAL, [2]bool{true, true}, "draining"},
		{"predict only: modify drain unknown", func(r *RXE) Verdict {
			return r.ModifyQPAttr(QP{Type: verbs.QPTypeRC, State: verbs.QPSSQD}, &verbs.QPAttr{State: verbs.QPSRTS}, verbs.AttrState)
		}, verbs.EINVAL, [2]bool{false, false}, "draining"},
		{"modify port 2", func(r *RXE) Verdict { return r.ModifyQPPort(&verbs.QPAttr{PortNum: 2}, verbs.AttrPort) }, verbs.EINVAL, [2]bool{true, true}, "port 2"},
		{"alt path on roce", func(r *RXE) Verdict {
			return r.ModifyQPAltPath(&verbs.QPAttr{AltPortNum: 1, AltAH: grh(1)}, verbs.AttrAltPath)
		}, verbs.EINVAL, [2]bool{true, true}, "InfiniBand-only"},
		{"av ok", func(r *RXE) Verdict { a := grh(1); return r.AV("ibv_create_ah", "ah_attr", &a, "the AH") }, 0, [2]bool{}, ""},
		{"av port 0", func(r *RXE) Verdict {
			a := grh(1)
			a.PortNum = 0
			return r.AV("ibv_create_ah", "ah_attr", &a, "the AH")
		}, verbs.EINVAL, [2]bool{true, true}, "port_num"},
		{"av no grh", func(r *RXE) Verdict {
			a := verbs.AHAttr{PortNum: 1}
			return r.AV("ibv_create_ah", "ah_attr", &a, "the AH")
		}, verbs.EINVAL, [2]bool{true, true}, "GRH"},
		{"av empty sgid", func(r *RXE) Verdict { a := grh(5); return r.AV("ibv_create_ah", "ah_attr", &a, "the AH") }, ENODATA, [2]bool{true, true}, "empty"},
		{"av sgid unknown", func(r *RXE) Verdict { a := grh(5); r.GID = nil; return r.AV("ibv_create_ah", "ah_attr", &a, "the AH") }, ENODATA, [2]bool{false, false}, "may name"},
		{"cq 16", func(r *RXE) Verdict { return r.CreateCQ(16, 0) }, 0, [2]bool{}, ""},
		{"cq 0", func(r *RXE) Verdict { return r.CreateCQ(0, 0) }, verbs.EINVAL, [2]bool{true, true}, "cqe 0"},
		{"cq max+1", func(r *RXE) Verdict { return r.CreateCQ(1<<15, 0) }, verbs.EINVAL, [2]bool{true, true}, "max_cqe 32767"},
		{"cq vector 2", func(r *RXE) Verdict { return r.CreateCQ(16, 2) }, verbs.EINVAL, [2]bool{true, true}, "comp_vector"},
		{"resize below held", func(r *RXE) Verdict { return r.CQE("ibv_resize_cq", 4, 9) }, verbs.EINVAL, [2]bool{true, true}, "9 completions"},
		{"resize held unknown", func(r *RXE) Verdict { return r.CQE("ibv_resize_cq", 4, -1) }, verbs.EINVAL, [2]bool{false, false}, "holds more"},
		{"srq ok", func(r *RXE) Verdict { return r.CreateSRQ(verbs.SRQAttr{MaxWR: 16, MaxSGE: 1}) }, 0, [2]bool{}, ""},
		{"srq 0", func(r *RXE) Verdict { return r.CreateSRQ(verbs.SRQAttr{MaxWR: 0}) }, verbs.EINVAL, [2]bool{true, true}, "max_wr 0"},
		{"srq sge 28", func(r *RXE) Verdict { return r.CreateSRQ(verbs.SRQAttr{MaxWR: 16, MaxSGE: 28}) }, verbs.EINVAL, [2]bool{true, true}, "max_srq_sge 27"},
		{"srq limit over", func(r *RXE) Verdict {
			return r.ModifySRQ(SRQ{MaxWR: 127}, verbs.SRQAttr{SRQLimit: 128}, verbs.SRQAttrLimit)
		}, verbs.EINVAL, [2]bool{true, true}, "128"},
		{"srq resize below limit", func(r *RXE) Verdict {
			return r.ModifySRQ(SRQ{MaxWR: 127, Limit: 50}, verbs.SRQAttr{MaxWR: 20}, verbs.SRQAttrMaxWR)
		}, verbs.EINVAL, [2]bool{true, true}, "srq_limit 50"},
		{"mr ok", func(r *RXE) Verdict { return r.MRAccess(verbs.AccessLocalWrite | verbs.AccessRemoteWrite) }, 0, [2]bool{}, ""},
		{"mr remote write alone", func(r *RXE) Verdict { return r.MRAccess(verbs.AccessRemoteWrite) }, verbs.EINVAL, [2]bool{true, true}, "LOCAL_WRITE"},
		{"mr on demand", func(r *RXE) Verdict { return r.MRAccess(verbs.AccessLocalWrite | verbs.AccessOnDemand) }, verbs.EINVAL, [2]bool{true, true}, "on-demand"},
		{"mr length 0", func(r *RXE) Verdict { return r.MRLength(0) }, verbs.EINVAL, [2]bool{true, true}, "npages"},
		{"mr over memlock", func(r *RXE) Verdict { return r.MRPin(1<<20, 64<<10, false) }, verbs.ENOMEM, [2]bool{true, true}, "RLIMIT_MEMLOCK"},
		{"mr under memlock", func(r *RXE) Verdict { return r.MRPin(4096, 64<<10, false) }, verbs.ENOMEM, [2]bool{false, false}, "RLIMIT_MEMLOCK"},
		{"mr CAP_IPC_LOCK", func(r *RXE) Verdict { return r.MRPin(1<<20, 64<<10, true) }, 0, [2]bool{}, ""},
		{"mcast ok", func(r *RXE) Verdict {
			return r.Mcast("ibv_attach_mcast", "qp0", verbs.QPTypeUD, verbs.GID{0: 0xff, 1: 0x0e, 15: 1})
		}, 0, [2]bool{}, ""},
		{"mcast rc", func(r *RXE) Verdict { return r.Mcast("ibv_attach_mcast", "qp0", verbs.QPTypeRC, verbs.GID{0: 0xff}) }, verbs.EINVAL, [2]bool{true, true}, "UD"},
		{"mcast unicast", func(r *RXE) Verdict { return r.Mcast("ibv_attach_mcast", "qp0", verbs.QPTypeUD, grh(1).GRH.DGID) }, verbs.EINVAL, [2]bool{true, true}, "multicast"},
		{"detach unknown", func(r *RXE) Verdict { return r.DetachMcast("ibv_detach_mcast", "qp0", verbs.GID{0: 0xff}, 0, false) }, verbs.EINVAL, [2]bool{true, true}, "not attached"},
		{"gid index 1024", func(r *RXE) Verdict { return r.GIDIndex("ibv_query_gid", 1024) }, verbs.EINVAL, [2]bool{true, true}, "1024"},
	}
	for _, tc := range tests {
		for m, mode := range []Mode{Decide, Predict} {
			if strings.HasPrefix(tc.name, "predict only") && mode == Decide {
				continue
			}
			t.Run(tc.name+"/"+[]string{"decide", "predict"}[m], func(t *testing.T) {
				v := tc.rule(rxe(mode))
				f, ok := first(v)
				if tc.errno == 0 {
					if ok {
						t.Fatalf("finding %v (certain %v); want none", f.Err, f.Certain)
					}
					return
				}
				if !ok {
					t.Fatalf("no finding; want %s", verbs.ErrnoName(tc.errno))
				}
				if f.Err.Errno != tc.errno || f.Certain != tc.certain[m] {
					t.Fatalf("finding %s (certain %v): %v; want %s (certain %v)", verbs.ErrnoName(f.Err.Errno), f.Certain, f.Err, verbs.ErrnoName(tc.errno), tc.certain[m])
				}
				if !strings.Contains(f.Err.Why, tc.mention) {
					t.Errorf("why %q does not mention %q", f.Err.Why, tc.mention)
				}
				if f.Err.Hint == "" && tc.errno != 0 {
					t.Errorf("no hint for %v", f.Err)
				}
				if err := v.Err(); (err != nil) != f.Certain || (err != nil && !errors.Is(err, tc.errno)) {
					t.Errorf("Err() = %v with certain %v", err, f.Certain)
				}
			})
		}
	}
}

// TestPredictUnknownLimits: a limit the real backend could not query (0) is
// not checked.
func TestPredictUnknownLimits(t *testing.T) {
	r := &RXE{Mode: Predict, Attr: verbs.DeviceAttr{PhysPortCnt: 1}}
	for name, v := range map[string]Verdict{
		"cap":   r.QPCap(verbs.QPCap{MaxSendWR: 1 << 30, MaxSendSGE: 1000}, false),
		"cqe":   r.CQE("ibv_create_cq", 1<<30, 0),
		"srq":   r.CreateSRQ(verbs.SRQAttr{MaxWR: 1 << 30, MaxSGE: 1000}),
		"cq":    r.CreateCQ(16, 7),
		"rdatm": r.ModifyQPAttr(QP{Type: verbs.QPTypeRC, State: verbs.QPSRTR}, &verbs.QPAttr{State: verbs.QPSRTS, MaxRdAtomic: 200}, verbs.AttrState|verbs.AttrMaxQPRdAtomic),
	} {
		if err := v.Err(); err != nil {
			t.Errorf("%s: %v; want no finding with unknown limits", name, err)
		}
	}
}
