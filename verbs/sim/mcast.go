package sim

import (
	"net/netip"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// Multicast: uverbs keeps each QP's (GID, LID) attachments; rxe keeps, per
// device, the groups and the QPs attached to each (rxe_mcast.c). Attaching
// tells rxe which QPs get a copy, and adds the group's MAC to the netdev's
// filter (rxe_mcast_add: dev_mc_add), nothing more: a RoCE v2 datagram is
// UDP in IP, and the host's IP stack hands rxe one for a multicast group
// only when the host is a member of that group on the netdev
// (ip_route_input_rcu: ip_check_mc_rcu for IPv4; ip6_mc_input:
// ipv6_chk_mcast_addr for IPv6). An interface is always in a few groups
// (alwaysMember); any other needs a join by the host — a socket's
// IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP, or rdma_join_multicast, which
// joins an IPv4 group with IGMP (cma.c cma_iboe_join_multicast →
// cma_igmp_send) — which ibv_attach_mcast does not do.
//
// On the way out (xmitMcast) the sender's IP layer loops a copy back to its
// own host (IP_MULTICAST_LOOP is on for rxe's socket) and puts the datagram
// on the wire, where the switch floods it to every other device. Each
// copy passes the receiving host's IP input (mcastInput), and then rxe
// hands it to every QP of the group that passes the type, state and Q_Key
// checks (rxe_recv.c rxe_rcv_mcast_pkt) — the sender's own QP included
// when it is attached.

// mcastEntry is one ib_uverbs_mcast_entry.
type mcastEntry struct {
	gid verbs.GID
	lid uint16
}

// mcastGroup is struct rxe_mcg.
type mcastGroup struct {
	gid verbs.GID
	qps []*qp
}

// attachMcast does verbs.QP's AttachMcast (ibv_attach_mcast). uverbs ignores a
// repeated (GID, LID); ib_attach_mcast wants a multicast GID and a UD QP;
// rxe_attach_mcast creates the group if needed (at most max_mcast_grp per
// device), and adds the QP (at most max_mcast_qp_attach QPs per group and
// max_total_mcast_qp_attach in all).
func (q *qp) attachMcast(gid verbs.GID, lid uint16) error {
	const op = "ibv_attach_mcast"
	if err := q.check(op); err != nil {
		return err
	}
	for _, e := range q.mcast {
		if e.gid == gid && e.lid == lid {
			return nil
		}
	}
	if err := q.pd.ctx.dev.profile().Mcast(op, q.name(), q.typ, gid).Err(); err != nil {
		return err
	}
	d := q.pd.ctx.dev
	g := d.mcgs[gid]
	if g == nil {
		if len(d.mcgs) >= rxeMaxMcastGrp {
			return verbs.Errorf(op, verbs.ENOMEM, "detach QPs from groups you no longer use",
				"the device has %d multicast groups already, its max_mcast_grp (rxe_get_mcg)", rxeMaxMcastGrp)
		}
		g = &mcastGroup{gid: gid}
		d.mcgs[gid] = g
	}
	if err := d.attachMcg(op, g, q); err != nil {
		if len(g.qps) == 0 {
			delete(d.mcgs, gid)
		}
		return err
	}
	q.mcast = append(q.mcast, mcastEntry{gid, lid})
	return nil
}

// attachMcg is rxe_attach_mcg.
func (d *device) attachMcg(op string, g *mcastGroup, q *qp) error {
	for _, x := range g.qps {
		if x == q {
			return nil
		}
	}
	if d.mcgAttach+1 > rxeMaxTotMcastQPAtt {
		return verbs.Errorf(op, verbs.ENOMEM, "detach QPs first",
			"the device has %d multicast attachments, its max_total_mcast_qp_attach (__rxe_init_mca)", d.mcgAttach)
	}
	if len(g.qps)+1 > rxeMaxMcastQPAttach {
		return verbs.Errorf(op, verbs.ENOMEM, "use another group, or detach a QP from this one",
			"group %s has %d QPs, the device's max_mcast_qp_attach (__rxe_init_mca)", g.gid, len(g.qps))
	}
	d.mcgAttach++
	g.qps = append(g.qps, q)
	return nil
}

// detachMcg is rxe_detach_mcg; it reports whether q was attached.
func (d *device) detachMcg(gid verbs.GID, q *qp) bool {
	g := d.mcgs[gid]
	if g == nil {
		return false
	}
	for i, x := range g.qps {
		if x == q {
			g.qps = append(g.qps[:i], g.qps[i+1:]...)
			d.mcgAttach--
			if len(g.qps) == 0 {
				delete(d.mcgs, gid)
			}
			return true
		}
	}
	return false
}

// detachMcast does verbs.QP's DetachMcast (ibv_detach_mcast): uverbs wants the
// same (GID, LID) as the attach, else EINVAL; then ib_detach_mcast's checks
// and rxe_detach_mcast.
func (q *qp) detachMcast(gid verbs.GID, lid uint16) error {
	const op = "ibv_detach_mcast"
	if err := q.check(op); err != nil {
		return err
	}
	found := false
	for i, e := range q.mcast {
		if e.gid == gid && e.lid == lid {
			q.mcast = append(q.mcast[:i], q.mcast[i+1:]...)
			found = true
			break
		}
	}
	if err := q.pd.ctx.dev.profile().DetachMcast(op, q.name(), gid, lid, found).Err(); err != nil {
		return err
	}
	if err := q.pd.ctx.dev.profile().Mcast(op, q.name(), q.typ, gid).Err(); err != nil {
		return err
	}
	if !q.pd.ctx.dev.detachMcg(gid, q) {
		return verbs.Errorf(op, verbs.EINVAL, "", "%s is not in the device's group %s (rxe_detach_mcast)", q.name(), gid)
	}
	return nil
}

// detachAll removes a destroyed QP from its device's groups.
func (q *qp) detachAll() {
	d := q.pd.ctx.dev
	for _, e := range q.mcast {
		d.detachMcg(e.gid, q)
	}
	q.mcast = nil
}

// receiveMcast is rxe_rcv_mcast_pkt: a copy for every QP of the group that
// takes it. It returns why nobody did, or "".
func (f *Fabric) receiveMcast(p *packet) string {
	to := p.to
	g := to.mcgs[p.dgid]
	if g == nil {
		return to.name + " has no QP attached to " + p.dgid.String()
	}
	var takers []*qp
	why := ""
	for _, q := range g.qps {
		if w := q.checkTypeState(p); w != "" {
			why = w
			continue
		}
		if w := q.checkKeys(p, p.hdr.BTH.DestQP); w != "" {
			why = w
			continue
		}
		takers = append(takers, q)
	}
	if len(takers) == 0 {
		if why == "" {
			why = "no QP of the group takes it"
		}
		return why
	}
	for i, q := range takers {
		c := p
		if i < len(takers)-1 {
			c = f.clonePacket(p)
		}
		q.rcvPkt(c)
	}
	return ""
}

// ---------------------------------------------------------------- the host's IP groups

// eADDRNOTAVAIL is what leaving a group the socket did not join returns
// (ip_mc_leave_group, ipv6_sock_mc_drop).
const eADDRNOTAVAIL = syscall.Errno(99)

// Multicast addresses every interface is a member of.
var (
	allHosts4     = verbs.GIDFromIPv4(netip.AddrFrom4([4]byte{224, 0, 0, 1})) // IGMP_ALL_HOSTS
	allNodesIface = verbs.GID{0: 0xff, 1: 0x01, 15: 1}                        // ff01::1, interface-local all nodes
	allNodesLink  = verbs.GID{0: 0xff, 1: 0x02, 15: 1}                        // ff02::1, link-local all nodes
)

// alwaysMember reports whether g is a group every interface like d's
// netdev joins without being asked: 224.0.0.1 when it comes up (igmp.c
// ip_mc_up); ff01::1 and ff02::1 when IPv6 starts on it (addrconf.c
// ipv6_add_dev); and for each of its IPv6 addresses the solicited-node
// group ff02::1:ffXX:XXXX, the address's low 24 bits (addrconf_dad_begin →
// addrconf_join_solict). The simulated netdevs are Ethernet NICs that
// answer ARP and neighbour solicitations; a NOARP device, such as the
// lab's dummy rxenet0, joins no solicited-node group.
func (d *device) alwaysMember(g verbs.GID) bool {
	switch g {
	case allHosts4, allNodesIface, allNodesLink:
		return true
	}
	if g[1] != 0x02 || g[11] != 0x01 || g[12] != 0xff {
		return false
	}
	for _, a := range d.gids {
		if !isV4Mapped(a) && solicitedNode(a) == g {
			return true
		}
	}
	return false
}

// solicitedNode is addrconf_addr_solict_mult: ff02::1:ff00:0/104 with the
// low 24 bits of a.
func solicitedNode(a verbs.GID) verbs.GID {
	return verbs.GID{0: 0xff, 1: 0x02, 11: 0x01, 12: 0xff, 13: a[13], 14: a[14], 15: a[15]}
}

// ipMember reports whether d's host is a member of group g on d's netdev:
// ip_check_mc_rcu (IPv4), ipv6_chk_mcast_addr (IPv6).
func (d *device) ipMember(g verbs.GID) bool {
	return d.ipGroups[g] > 0 || d.alwaysMember(g)
}

// mcastScope is an IPv6 multicast address's scope (RFC 4291 2.7); -1 for
// an IPv4 group.
func mcastScope(g verbs.GID) int {
	if isV4Mapped(g) {
		return -1
	}
	return int(g[1] & 0x0f)
}

// hostGroupOp names the socket option that joins or leaves g.
func hostGroupOp(g verbs.GID, join bool) string {
	switch {
	case isV4Mapped(g) && join:
		return "setsockopt(IP_ADD_MEMBERSHIP)"
	case isV4Mapped(g):
		return "setsockopt(IP_DROP_MEMBERSHIP)"
	case join:
		return "setsockopt(IPV6_JOIN_GROUP)"
	}
	return "setsockopt(IPV6_LEAVE_GROUP)"
}

// joinHostGroup does JoinHostGroup's work.
func (f *Fabric) joinHostGroup(i int, g verbs.GID) error {
	op := hostGroupOp(g, true)
	d, err := f.hostGroupDev(op, i, g)
	if err != nil {
		return err
	}
	if d.ipGroups == nil {
		d.ipGroups = map[verbs.GID]int{}
	}
	d.ipGroups[g]++
	return nil
}

// leaveHostGroup does LeaveHostGroup's work.
func (f *Fabric) leaveHostGroup(i int, g verbs.GID) error {
	op := hostGroupOp(g, false)
	d, err := f.hostGroupDev(op, i, g)
	if err != nil {
		return err
	}
	if d.ipGroups[g] == 0 {
		return verbs.Errorf(op, eADDRNOTAVAIL, "leave only a group you joined (JoinHostGroup)",
			"the host of %s has no join of %s to leave", d.name, g)
	}
	if d.ipGroups[g]--; d.ipGroups[g] == 0 {
		delete(d.ipGroups, g)
	}
	return nil
}

func (f *Fabric) hostGroupDev(op string, i int, g verbs.GID) (*device, error) {
	if i < 0 || i >= len(f.devs) {
		return nil, verbs.Errorf(op, verbs.ENODEV, "", "no device sim%d; this fabric has %d", i, len(f.devs))
	}
	if !g.IsMulticast() {
		return nil, verbs.Errorf(op, verbs.EINVAL, "use a multicast group (::ffff:239.1.1.1, ff0e::1)",
			"%s is not a multicast address (ip_mc_join_group, ipv6_sock_mc_join)", g)
	}
	return f.devs[i], nil
}

// mcastLoops reports whether the sender's IP layer loops a multicast
// datagram back to its own host: IPv4 always (ip_mc_output clones it for
// every socket with IP_MULTICAST_LOOP, rxe's included, and the host's IP
// input then decides); IPv6 only when the host is a member of the group
// (ip6_finish_output2: ipv6_chk_mcast_addr).
func mcastLoops(from *device, g verbs.GID) bool {
	return isV4Mapped(g) || from.ipMember(g)
}

// mcastStaysHome reports why a multicast datagram stays inside the
// sending host, or "" when it goes on the wire: an IPv4 TTL of 0
// ("multicasts with ttl 0 must not go beyond the host", ip_mc_output); an
// IPv6 group of interface-local scope (or the reserved scope 0), or a hop
// limit of 0 to a group the host is a member of (ip6_finish_output2 drops
// such a datagram once it has looped a copy back; to any other group it
// leaves with hop limit 0).
func mcastStaysHome(p *packet) string {
	hop := -1
	if p.rt != nil {
		hop = int(p.rt.netw.HopLimit)
	}
	switch s := mcastScope(p.dgid); {
	case s < 0 && hop == 0:
		return "TTL 0"
	case s == 0 || s == 1:
		return "interface-local scope"
	case hop == 0 && p.from.ipMember(p.dgid):
		return "hop limit 0"
	}
	return ""
}

// mcastInput is the receiving host's IP input for a datagram to a
// multicast group: it returns why the IP layer drops it before rxe sees
// it, or "".
func mcastInput(p *packet) string {
	to, g := p.to, p.dgid
	if mcastScope(g) == 0 {
		return "multicast scope 0 is reserved (ip6_rcv_core, RFC 4291 2.7)"
	}
	if to.ipMember(g) {
		return ""
	}
	if isV4Mapped(g) {
		return "the host of " + to.name + " is not a member of IPv4 group " + netip.AddrFrom16(g).Unmap().String() +
			" (ip_route_input_rcu: ip_check_mc_rcu); ibv_attach_mcast does not join it — a socket's IP_ADD_MEMBERSHIP or rdma_join_multicast does"
	}
	return "the host of " + to.name + " is not a member of IPv6 group " + g.String() +
		" (ip6_mc_input: ipv6_chk_mcast_addr); ibv_attach_mcast does not join it — a socket's IPV6_JOIN_GROUP does"
}

// xmitMcast sends a multicast datagram (ip_mc_output, ip6_finish_output2):
// a copy looped back to the sender's own host when mcastLoops says so, and
// the datagram on the wire, where the switch floods it to every other
// device, unless mcastStaysHome keeps it in. Each copy is then matched
// against its host's groups (mcastInput) and its device's QPs
// (receiveMcast). The send completes either way: rxe_xmit_packet does not
// learn what the IP layer did with a multicast datagram.
func (f *Fabric) xmitMcast(p *packet) error {
	size := p.size()
	if err := f.egressCheck(p, size); err != nil {
		return err
	}
	from := p.from
	loop := mcastLoops(from, p.dgid)
	home := mcastStaysHome(p)
	if home == "" {
		// One transmission; the switch replicates it.
		p.atSwitch = f.uplink(from, size)
	}
	takes := func(d *device) bool {
		if d == from {
			return loop
		}
		return home == ""
	}
	last := -1
	for i, d := range f.devs {
		if takes(d) {
			last = i
		}
	}
	if last < 0 {
		f.net.seq++
		p.seq = f.net.seq
		f.observe(p, "sent", "")
		why := "no other device on the segment"
		if home != "" {
			why = home + " keeps it in the host"
		}
		f.observe(p, "dropped", why+", and the host of "+from.name+" is not a member of "+p.dgid.String()+
			", so its IP layer loops no copy back (ip6_finish_output2: ipv6_chk_mcast_addr)")
		f.net.pool.put(p)
		return nil
	}
	for i, d := range f.devs[:last+1] {
		if !takes(d) {
			continue
		}
		c := p
		if i < last {
			c = f.clonePacket(p)
		}
		c.to = d
		c.loopback = d == from
		f.put(c, size)
	}
	return nil
}
