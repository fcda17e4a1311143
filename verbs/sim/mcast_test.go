package sim

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// mcastBed is two devices with a UD QP each attached to a group: qp[0] on
// sim0 sends to the group; qp[1] on sim1 listens. Each has receives posted.
type mcastBed struct {
	*bed
	qp [2]verbs.QP
	tr trace
}

func newMcastBed(t *testing.T) *mcastBed {
	m := &mcastBed{bed: newBed(t, Config{Devices: 2})}
	for d := range m.qp {
		q := m.bed.qp(d, qpOpts{typ: verbs.QPTypeUD})
		m.connect(q, d, nil, 0, qpOpts{})
		buf := mrOf(m.bed, d, 8192)
		for i := 0; i < 8; i++ {
			m.must(first(q.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sg(buf, i*1024, 1024)}})))
		}
		m.qp[d] = q
	}
	t.Cleanup(m.tr.observe(m.f))
	return m
}

// send attaches both QPs to g, sends one datagram from sim0's QP with
// the given source GID index and hop limit, detaches, and returns the
// devices whose QP received it and the trace's verdicts.
func (m *mcastBed) send(g verbs.GID, sgid, hop uint8) (got []string, verdicts []string) {
	m.t.Helper()
	for _, q := range m.qp {
		m.must(q.AttachMcast(g, 0))
	}
	ah, err := m.pd[0].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: g, SGIDIndex: sgid, HopLimit: hop}})
	m.must(err)
	src := mrOf(m.bed, 0, 64)
	m.tr.evs = nil
	m.must(first(m.qp[0].PostSend([]verbs.SendWR{{WRID: 99, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 16),
		AH: ah, RemoteQPN: wire.MulticastQPN, RemoteQKey: 0x11111111}})))
	sent := false
	for d := range m.qp {
		for _, wc := range m.drain(m.cq[d], 0) {
			switch {
			case wc.Status != verbs.WCSuccess:
				m.t.Errorf("completion %+v", wc)
			case wc.Opcode == verbs.WCOpSend:
				sent = true
			case wc.Opcode == verbs.WCOpRecv:
				got = append(got, fmt.Sprintf("sim%d", d))
			}
		}
	}
	if !sent {
		m.t.Errorf("send to %s: no IBV_WC_SUCCESS send completion", g)
	}
	for _, q := range m.qp {
		m.must(q.DetachMcast(g, 0))
	}
	m.must(ah.Destroy())
	for _, e := range m.tr.evs {
		verdicts = append(verdicts, e.From+"→"+e.To+" "+e.Verdict)
	}
	sort.Strings(got)
	return got, verdicts
}

// TestMcastHostMembership: a datagram to a group reaches a device's
// attached QPs only when that device's host is a member of the group
// (ip_check_mc_rcu, ipv6_chk_mcast_addr); ibv_attach_mcast alone joins
// nothing. The sender's own host gets a copy when it is a member.
func TestMcastHostMembership(t *testing.T) {
	m := newMcastBed(t)
	sim1 := m.f.devs[1]
	for _, tc := range []struct {
		group string
		sgid  uint8
		hop   uint8
		want  string   // devices whose QP receives
		why   []string // parts of the trace's verdicts
		not   string   // a part they must not have
	}{
		{"::ffff:239.1.1.1", 1, 1, "", []string{
			"sim0→sim0 dropped: the host of sim0 is not a member of IPv4 group 239.1.1.1 (ip_route_input_rcu: ip_check_mc_rcu); ibv_attach_mcast does not join it",
			"sim0→sim1 dropped: the host of sim1 is not a member of IPv4 group 239.1.1.1"}, ""},
		// IPv6 loops no copy back to a host that is not a member.
		{"ff0e::1234", 0, 1, "", []string{"sim0→sim1 dropped: the host of sim1 is not a member of IPv6 group ff0e::1234 (ip6_mc_input: ipv6_chk_mcast_addr)"}, "sim0→sim0"},
		{"ff02::1", 0, 1, "sim0 sim1", []string{"sim0→sim0 delivered", "sim0→sim1 delivered"}, ""},
		{"::ffff:224.0.0.1", 1, 1, "sim0 sim1", []string{"sim0→sim0 delivered", "sim0→sim1 delivered"}, ""},
		{solicitedNode(sim1.gids[0]).String(), 0, 1, "sim1", []string{"sim0→sim1 delivered"}, ""},
		// Interface-local and hop-limit-0 datagrams stay in the host.
		{"ff01::1", 0, 1, "sim0", []string{"sim0→sim0 delivered"}, "sim1"},
		{"ff02::1", 0, 0, "sim0", []string{"sim0→sim0 delivered"}, "sim1"},
		{"::ffff:224.0.0.1", 1, 0, "sim0", []string{"sim0→sim0 delivered"}, "sim1"},
		// To a group the sender's host is not in, IPv6 sends even hop
		// limit 0 on the wire (ip6_finish_output2).
		{"ff0e::1234", 0, 0, "", []string{"sim0→sim1 dropped: the host of sim1 is not a member of IPv6 group ff0e::1234"}, "sim0→sim0"},
		{"ff01::1234", 0, 1, "", []string{"sim0→ff01::1234 dropped: interface-local scope keeps it in the host, and the host of sim0 is not a member of ff01::1234"}, "sim1"},
	} {
		g, err := verbs.ParseGID(tc.group)
		m.must(err)
		got, verdicts := m.send(g, tc.sgid, tc.hop)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s hop %d: received on [%s]; want [%s]", tc.group, tc.hop, strings.Join(got, " "), tc.want)
		}
		all := strings.Join(verdicts, "\n")
		for _, w := range tc.why {
			if !strings.Contains(all, w) {
				t.Errorf("%s hop %d: trace lacks %q:\n%s", tc.group, tc.hop, w, all)
			}
		}
		if tc.not != "" && strings.Contains(all, tc.not) {
			t.Errorf("%s hop %d: trace has %q:\n%s", tc.group, tc.hop, tc.not, all)
		}
		if n := strings.Count(all, "delivered"); n != len(got) {
			t.Errorf("%s hop %d: %d deliveries in the trace, %d receives:\n%s", tc.group, tc.hop, n, len(got), all)
		}
	}
}

// TestMcastHostJoin: once a host joins a group (a socket's
// IP_ADD_MEMBERSHIP, rdma_join_multicast's IGMP join), its attached QPs
// receive; a leave undoes one join; errors are the socket calls'.
func TestMcastHostJoin(t *testing.T) {
	m := newMcastBed(t)
	for _, group := range []string{"::ffff:239.1.1.1", "ff0e::1234"} {
		g, _ := verbs.ParseGID(group)
		sgid := uint8(0)
		if isV4Mapped(g) {
			sgid = 1
		}
		m.must(m.f.JoinHostGroup(1, g))
		m.must(m.f.JoinHostGroup(1, g)) // a second user
		if got, v := m.send(g, sgid, 1); strings.Join(got, " ") != "sim1" {
			t.Errorf("%s joined on sim1: received on %v\n%s", group, got, strings.Join(v, "\n"))
		}
		m.must(m.f.LeaveHostGroup(1, g))
		if got, _ := m.send(g, sgid, 1); strings.Join(got, " ") != "sim1" {
			t.Errorf("%s after one of two leaves: received on %v", group, got)
		}
		m.must(m.f.LeaveHostGroup(1, g))
		if got, _ := m.send(g, sgid, 1); len(got) != 0 {
			t.Errorf("%s left: received on %v", group, got)
		}
		// The sender's own host joins: its attached QP gets the copy
		// its IP layer loops back.
		m.must(m.f.JoinHostGroup(0, g))
		if got, _ := m.send(g, sgid, 1); strings.Join(got, " ") != "sim0" {
			t.Errorf("%s joined on sim0: received on %v", group, got)
		}
		m.must(m.f.LeaveHostGroup(0, g))
	}
	all, _ := verbs.ParseGID("ff02::1")
	uni := m.gids[1]
	v4, _ := verbs.ParseGID("::ffff:239.1.1.1")
	for _, tc := range []struct {
		name  string
		err   error
		errno syscall.Errno
		want  string
	}{
		{"leave never joined", m.f.LeaveHostGroup(0, v4), eADDRNOTAVAIL, "setsockopt(IP_DROP_MEMBERSHIP)"},
		{"leave ff02::1", m.f.LeaveHostGroup(0, all), eADDRNOTAVAIL, "setsockopt(IPV6_LEAVE_GROUP)"},
		{"join unicast", m.f.JoinHostGroup(0, uni), verbs.EINVAL, "not a multicast address"},
		{"join on sim7", m.f.JoinHostGroup(7, v4), verbs.ENODEV, "no device sim7"},
	} {
		if !errors.Is(tc.err, tc.errno) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v; want %v and %q", tc.name, tc.err, tc.errno, tc.want)
		}
	}
}

// TestAlwaysMember: the groups an Ethernet interface is in from the start.
func TestAlwaysMember(t *testing.T) {
	f := New(Config{Devices: 2})
	d0, d1 := f.devs[0], f.devs[1]
	for _, tc := range []struct {
		group string
		want  bool
	}{
		{"::ffff:224.0.0.1", true}, {"ff01::1", true}, {"ff02::1", true},
		{solicitedNode(d0.gids[0]).String(), true},
		{solicitedNode(d1.gids[0]).String(), false},
		{solicitedNode(d0.gids[1]).String(), false}, // an IPv4 address has no solicited-node group
		{"ff02::2", false}, {"ff05::1", false}, {"::ffff:224.0.0.2", false}, {"::ffff:239.255.255.250", false},
	} {
		g, err := verbs.ParseGID(tc.group)
		if err != nil {
			t.Fatal(err)
		}
		if got := d0.ipMember(g); got != tc.want {
			t.Errorf("sim0 member of %s = %v; want %v", tc.group, got, tc.want)
		}
	}
	if g := solicitedNode(d0.gids[0]); g[0] != 0xff || g[1] != 0x02 || g[11] != 1 || g[12] != 0xff || g[15] != d0.gids[0][15] {
		t.Errorf("solicited-node group of %s = %s", d0.gids[0], g)
	}
}
