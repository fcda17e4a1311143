//go:build linux && cgo && ibverbs

package ibverbs

import (
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestRXEHostGroups: on rxe0 (VSH_RXE=1), a QP attached to a group no
// interface is in receives nothing until the provider joins the group on
// rxe0's netdev (verbs.HostGroups); the kernel's tables show the join while
// it is held, and a leave, or closing the provider, ends it.
func TestRXEHostGroups(t *testing.T) {
	e := newRXE(t)
	hg, ok := e.p.(verbs.HostGroups)
	if !ok {
		t.Fatal("the ibverbs provider does not implement verbs.HostGroups")
	}
	dev := rxeDevice()
	netdev, _, err := (&ipJoins{}).netdev("netdev", dev)
	e.must(err, "the netdev of "+dev)
	rcq, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 16})
	e.must(err, "CreateCQ")
	src, dst := e.udQP(e.cq), e.udQP(rcq)
	mr, err := e.pd.AllocMR(8192, verbs.AccessLocalWrite)
	e.must(err, "AllocMR")
	ll, err := e.ctx.QueryGID(1, 0)
	e.must(err, "QueryGID(1, 0)")
	// Groups of this test only, so that nothing else on the host is in them.
	for _, tc := range []struct {
		group string
		sgid  uint8
	}{{"::ffff:239.86.83.1", 1}, {"ff0e::5653:1", 0}} {
		g, err := verbs.ParseGID(tc.group)
		e.must(err, "ParseGID")
		if tc.sgid == 0 {
			if _, v4 := ll.IPv4(); v4 {
				t.Fatalf("GID 0 is %s; want the link-local IPv6 GID", ll)
			}
		}
		e.must(dst.AttachMcast(g, 0), "AttachMcast")
		ah, err := e.pd.CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: g, SGIDIndex: tc.sgid, HopLimit: 1}})
		e.must(err, "CreateAH")
		posted := 0
		send := func() {
			t.Helper()
			if posted == 0 {
				_, err := dst.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mr.Addr() + 4096, Length: 1064, LKey: mr.LKey()}}}})
				e.must(err, "PostRecv")
				posted = 1
			}
			_, err := src.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
				SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 16, LKey: mr.LKey()}}, AH: ah, RemoteQPN: 0xffffff, RemoteQKey: 0x11111111}})
			e.must(err, "PostSend")
			if wc := pollN(t, e.cq, 1)[0]; wc.Status != verbs.WCSuccess {
				t.Fatalf("%s: send completion %v", g, wc.Status)
			}
		}
		received := func() bool {
			t.Helper()
			buf := make([]verbs.WC, 2)
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				n, err := rcq.Poll(buf)
				e.must(err, "Poll")
				if n > 0 {
					if buf[0].Status != verbs.WCSuccess || buf[0].ByteLen != 16+40 {
						t.Fatalf("%s: receive %+v", g, buf[0])
					}
					posted = 0
					return true
				}
			}
			return false
		}

		send()
		if received() {
			t.Errorf("%s: received before any join", g)
		}
		e.must(hg.JoinIPGroup(dev, g), "JoinIPGroup")
		if n := hostUsers(t, netdev, g); n != 1 {
			t.Errorf("%s joined: the kernel counts %d users on %s; want 1", g, n, netdev)
		}
		send()
		if !received() {
			t.Errorf("%s: nothing received after the join", g)
		}
		e.must(hg.LeaveIPGroup(dev, g), "LeaveIPGroup")
		if n := hostUsers(t, netdev, g); n != 0 {
			t.Errorf("%s left: the kernel counts %d users on %s", g, n, netdev)
		}
		send()
		if received() {
			t.Errorf("%s: received after the leave", g)
		}
		e.must(dst.DetachMcast(g, 0), "DetachMcast")
		e.must(ah.Destroy(), "Destroy AH")
	}
	// Closing the provider leaves what it joined.
	g, _ := verbs.ParseGID("::ffff:239.86.83.2")
	e.must(hg.JoinIPGroup(dev, g), "JoinIPGroup")
	if n := hostUsers(t, netdev, g); n != 1 {
		t.Errorf("%s joined: the kernel counts %d users on %s; want 1", g, n, netdev)
	}
	e.must(e.p.Close(), "provider Close")
	if n := hostUsers(t, netdev, g); n != 0 {
		t.Errorf("after the provider's Close: the kernel counts %d users of %s on %s", n, g, netdev)
	}
}

// udQP makes a UD QP in RTS with Q_Key 0x11111111, as ud_pingpong does.
func (e *rxeEnv) udQP(cq verbs.CQ) verbs.QP {
	q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
	e.must(err, "CreateQP UD")
	e.must(q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey), "INIT")
	e.must(q.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState), "RTR")
	e.must(q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, SQPSN: 0}, verbs.AttrState|verbs.AttrSQPSN), "RTS")
	return q
}
