package sim_test

import (
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// Two RC QPs on one device walk RESET → INIT → RTR → RTS and connect to
// each other, as rc_pingpong does (loopback, as on a single rxe0).
func Example() {
	f := sim.New(sim.Config{})
	devs, _ := f.Devices()
	ctx, _ := devs[0].Open()
	pd, _ := ctx.AllocPD()
	cq, _ := ctx.CreateCQ(verbs.CQInitAttr{CQE: 16})
	gid, _ := ctx.QueryGID(1, 1)

	newQP := func() verbs.QP {
		qp, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 500, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			panic(err)
		}
		return qp
	}
	a, b := newQP(), newQP()
	show := func(qp verbs.QP) {
		attr, _, _ := qp.Query(verbs.AttrState)
		fmt.Printf("QP %#x: %s\n", qp.Num(), attr.State)
	}

	connect := func(qp verbs.QP, peer verbs.QP) {
		// RESET → INIT: port, P_Key index, remote access.
		must(qp.Modify(&verbs.QPAttr{State: verbs.QPSInit, PKeyIndex: 0, PortNum: 1},
			verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags))
		show(qp)
		// INIT → RTR: where the peer is and what it will send.
		must(qp.Modify(&verbs.QPAttr{State: verbs.QPSRTR, PathMTU: verbs.MTU1024, DestQPN: peer.Num(),
			RQPSN: 0x1234, MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AH: verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: gid, SGIDIndex: 1, HopLimit: 1}}},
			verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|
				verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer))
		show(qp)
		// RTR → RTS: how this QP sends.
		must(qp.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7,
			SQPSN: 0x1234, MaxRdAtomic: 1},
			verbs.AttrState|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|verbs.AttrSQPSN|verbs.AttrMaxQPRdAtomic))
		show(qp)
	}
	connect(a, b)
	connect(b, a)

	// Skipping a step names the legal next states.
	c := newQP()
	err := c.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState)
	e, _ := verbs.AsError(err)
	fmt.Println(verbs.ErrnoName(e.Errno), e.Why)

	// Output:
	// QP 0x11: IBV_QPS_INIT
	// QP 0x11: IBV_QPS_RTR
	// QP 0x11: IBV_QPS_RTS
	// QP 0x12: IBV_QPS_INIT
	// QP 0x12: IBV_QPS_RTR
	// QP 0x12: IBV_QPS_RTS
	// EINVAL an RC QP cannot go from IBV_QPS_RESET to IBV_QPS_RTR; from IBV_QPS_RESET it can go to: IBV_QPS_RESET, IBV_QPS_INIT
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
