package verbstest

import (
	"encoding/binary"
	"net/netip"

	"github.com/vsh-rdma/vsh/verbs"
)

// UD multicast on RoCE v2: what ibv_attach_mcast does and does not do.
// A datagram to a group is UDP in IP; the host's IP stack hands it to rxe
// only for a group the host is a member of on rxe's netdev, and attaching
// a QP joins the host to nothing.

// mcastQPN is the multicast QPN a datagram to a group is sent to
// (IB_MULTICAST_QPN, include/rdma/ib_verbs.h).
const mcastQPN = 0xffffff

const (
	srcMcastAttach = "sw/rxe/rxe_mcast.c rxe_attach_mcast → rxe_mcast_add (Linux 6.1): attaching a QP records it in the device's group and adds the group's MAC to the netdev (dev_mc_add); it joins the host to no IP group"
	srcMcastIPIn   = "the receiving host's IP input drops a datagram to a multicast group the host is not a member of on the interface before UDP, and so rxe_udp_encap_recv, sees it: net/ipv4/route.c ip_route_input_rcu (ip_check_mc_rcu, -EINVAL) for IPv4, net/ipv6/ip6_input.c ip6_mc_input (ipv6_chk_mcast_addr) for IPv6"
	srcMcastLoop   = "rxe_net.c rxe_send hands the datagram to ip_local_out (its destination MAC is the group's, not the device's, so it is not rxe_loopback's); the IP layer loops a copy back to the sending host, IPv4 always (net/ipv4/ip_output.c ip_mc_output: IP_MULTICAST_LOOP is on for rxe's socket), IPv6 when the host is a member (net/ipv6/ip6_output.c ip6_finish_output2); rxe_recv.c rxe_rcv_mcast_pkt gives a copy to every QP attached to the group, the sender's own included (rxe refuses every QP create flag, so no IBV_QP_CREATE_BLOCK_SELF_MCAST_LB), each after its own Q_Key check; rxe_net.c rxe_xmit_packet completes the UD send once the datagram is handed to the IP layer, IBV_WC_SUCCESS whatever happens to it"
)

// mcastLink is a UD link whose two QPs are attached to group g (and
// detached when the scenario ends), with an address handle for g from
// source GID index sgid and hop limit 1, and a receive posted on each QP.
func (e *Env) mcastLink(g verbs.GID, sgid int) (l *link, abuf, bbuf verbs.MR) {
	l = e.link(verbs.QPTypeUD, linkCfg{})
	for _, q := range []verbs.QP{l.a, l.b} {
		q := q
		e.Must(q.AttachMcast(g, 0), "ibv_attach_mcast(QP %#x, %v)", q.Num(), g)
		e.Defer(func() { _ = q.DetachMcast(g, 0) })
	}
	l.ah = e.AH(l.apd, verbs.AHAttr{IsGlobal: true, PortNum: e.Port, GRH: verbs.GlobalRoute{DGID: g, SGIDIndex: uint8(sgid), HopLimit: 1}})
	abuf = e.MR(l.apd, 4096, accLocal)
	bbuf = e.MR(l.bpd, 4096, accLocal)
	e.recv(l.a, 10, sgeAt(abuf, 0, 4096))
	e.recv(l.b, 20, sgeAt(bbuf, 0, 4096))
	return l, abuf, bbuf
}

// mcastSend sends n patterned bytes from l.a to the group and waits for
// the send to complete IBV_WC_SUCCESS; it returns the receive completions
// a's CQ gave before it (the sender's own copy may come first).
func (e *Env) mcastSend(l *link, n int, seed byte) []verbs.WC {
	src := e.MR(l.apd, 4096, accAll)
	pattern(src.Bytes()[:n], seed)
	wr := l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(src, 0, n))
	wr.RemoteQPN = mcastQPN
	e.post(l.a, wr)
	var recvs []verbs.WC
	for sent := false; !sent; {
		if len(recvs) > 1 {
			e.Fatalf("the sender's QP: receives %s and no send completion", fmtWCs(recvs))
		}
		wc := e.waitWCs(l.acq, 1, "UD SEND to the group")[0]
		if wc.Opcode == verbs.WCOpRecv {
			recvs = append(recvs, wc)
			continue
		}
		e.expectWC(wc, verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: uint32(n), QPNum: l.a.Num()}, "sender")
		sent = true
	}
	return recvs
}

// ipv6GID returns the device's IPv6 (not IPv4-mapped) GID at index 0, the
// link-local default GID (core/cache.c make_default_gid), and its index.
func (e *Env) ipv6GID() (verbs.GID, int) {
	g, err := e.Ctx.QueryGID(e.Port, 0)
	e.Must(err, "ibv_query_gid(port %d, index 0)", e.Port)
	if _, v4 := g.IPv4(); v4 || g[0] != 0xfe || g[1]&0xc0 != 0x80 {
		e.Fatalf("GID 0 is %v; want the link-local fe80::/64 default GID", g)
	}
	return g, 0
}

// checkGRH6 checks the 40 bytes in front of a UD payload of n bytes that
// came in IPv6 from src to dst with hop limit hop: the packet's IPv6
// header (rxe_resp.c execute copies it into the receive buffer).
func (e *Env) checkGRH6(grh []byte, n int, src, dst verbs.GID, hop uint8) {
	pad := (4 - n%4) % 4
	check := func(field string, got, want int) {
		if got != want {
			e.Errorf("GRH IPv6 %s = %#x; want %#x", field, got, want)
		}
	}
	check("version", int(grh[0]>>4), 6)
	check("payload length", int(binary.BigEndian.Uint16(grh[4:])), 8+12+8+n+pad+4) // UDP, BTH, DETH, payload, pad, ICRC
	check("next header", int(grh[6]), 17)
	check("hop limit", int(grh[7]), int(hop))
	if got := netip.AddrFrom16([16]byte(grh[8:24])); got != netip.AddrFrom16(src) {
		e.Errorf("GRH IPv6 source = %v; want %v", got, netip.AddrFrom16(src))
	}
	if got := netip.AddrFrom16([16]byte(grh[24:40])); got != netip.AddrFrom16(dst) {
		e.Errorf("GRH IPv6 destination = %v; want %v", got, netip.AddrFrom16(dst))
	}
}

// expectGroupCopy checks that q's receive wcs hold exactly one copy of the
// n-byte datagram l.a sent to the group, with the GRH flag, and that buf
// holds its payload after the 40-byte header.
func (e *Env) expectGroupCopy(wcs []verbs.WC, wrid uint64, q verbs.QP, l *link, buf verbs.MR, n int, seed byte, who string) {
	if len(wcs) != 1 {
		e.Errorf("%s: %d receive completion(s) %s; want 1", who, len(wcs), fmtWCs(wcs))
		return
	}
	e.expectWC(wcs[0], verbs.WC{WRID: wrid, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(udGRH + n),
		QPNum: q.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "%s", who)
	e.expectBytes(buf.Bytes()[udGRH:udGRH+n], patterned(n, seed), "%s: the datagram after the GRH", who)
}

// mcastToBoth sends n patterned bytes from one QP to group g (from GID
// index sgid) and checks that both QPs attached to it, the sender's own
// included, get exactly one copy; it returns the other QP's buffer, whose
// first 40 bytes hold the GRH.
func (e *Env) mcastToBoth(g verbs.GID, sgid, n int, seed byte) verbs.MR {
	l, abuf, bbuf := e.mcastLink(g, sgid)
	arecv := e.mcastSend(l, n, seed)
	if len(arecv) == 0 {
		arecv = e.PollN(l.acq, 1)
	}
	e.expectGroupCopy(arecv, 10, l.a, l, abuf, n, seed, "the sender's own QP")
	e.expectGroupCopy(e.PollN(l.bcq, 1), 20, l.b, l, bbuf, n, seed, "the other attached QP")
	e.expectNoWC(l.acq, "the sender's QP after its copy")
	e.expectNoWC(l.bcq, "the other QP after its copy")
	return bbuf
}

// mcastScenarios are this file's scenarios, each Run a named function.
var mcastScenarios = []Scenario{
	{
		Name: "mcast/non-member-group-not-delivered",
		Source: srcMcastAttach + "; " + srcMcastIPIn + ". ::ffff:239.1.1.1 and ff0e::1234 are groups no interface is in until something joins them " +
			"(a socket's IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP, or rdma_join_multicast, which joins an IPv4 group: core/cma.c cma_iboe_join_multicast → cma_igmp_send); " +
			srcMcastLoop + ". Seen on rxe0: nothing arrives for either group until a socket on the host joins it",
		Needs: CapDataPath,
		Run:   scMcastNonMemberGroupNotDelivered,
	},
	{
		Name: "mcast/all-nodes-delivered-to-every-attached-qp",
		Source: srcMcastAttach + "; every IPv6 interface is in ff02::1, all nodes on the link (net/ipv6/addrconf.c ipv6_add_dev: ipv6_dev_mc_inc(in6addr_linklocal_allnodes)), so the datagram passes the host's IP input (net/ipv6/ip6_input.c ip6_mc_input); " +
			srcMcastLoop + "; the receive buffer's first 40 bytes get the packet's IPv6 header: version 6, payload length = UDP 8 + BTH 12 + DETH 8 + payload + pad + ICRC 4, next header UDP, the AH's hop limit (the kernel keeps a multicast AV's: core/verbs.c ib_resolve_eth_dmac), the sender's GID and the group (rxe_resp.c execute, rxe_net.c prepare_ipv6_hdr)",
		Needs: CapDataPath,
		Run:   scMcastAllNodesDeliveredToEveryAttachedQP,
	},
	{
		Name: "mcast/all-hosts-delivered-to-every-attached-qp",
		Source: srcMcastAttach + "; every IPv4 interface is in 224.0.0.1, all hosts, from when it comes up (net/ipv4/igmp.c ip_mc_up: ip_mc_inc_group(IGMP_ALL_HOSTS)), so ::ffff:224.0.0.1 passes the host's IP input (ip_route_input_rcu: ip_check_mc_rcu); " +
			srcMcastLoop + "; the GRH holds 20 zero bytes and the IPv4 header, with the AH's TTL (kept for a multicast AV: ib_resolve_eth_dmac) and a valid checksum, since the datagram went through ip_local_out (ip_send_check) before the IP layer looped it back",
		Needs: CapDataPath,
		Run:   scMcastAllHostsDeliveredToEveryAttachedQP,
	},
	{
		Name:   "mcast/detached-qp-gets-no-copy",
		Source: "sw/rxe/rxe_mcast.c rxe_detach_mcast removes the QP from the group; rxe_recv.c rxe_rcv_mcast_pkt copies the datagram to the QPs still attached (ff02::1, a group every IPv6 interface is in: net/ipv6/addrconf.c ipv6_add_dev)",
		Needs:  CapDataPath,
		Run:    scMcastDetachedQPGetsNoCopy,
	},
}

func init() {
	registerAll(mcastScenarios)
}

// scMcastNonMemberGroupNotDelivered runs the scenario mcast/non-member-group-not-delivered.
func scMcastNonMemberGroupNotDelivered(e *Env) {
	_, v6idx := e.ipv6GID()
	for _, tc := range []struct {
		group string
		sgid  int
	}{{"::ffff:239.1.1.1", e.Opts.GIDIndex}, {"ff0e::1234", v6idx}} {
		g, err := verbs.ParseGID(tc.group)
		e.Must(err, "ParseGID(%s)", tc.group)
		l, _, _ := e.mcastLink(g, tc.sgid)
		if got := e.mcastSend(l, 32, 0x41); len(got) != 0 {
			e.Errorf("the sender's QP, attached to %s: unexpected receive %s", g, fmtWCs(got))
		}
		e.expectNoWC(l.acq, "the sender's QP, attached to %s, which the host has not joined", g)
		e.expectNoWC(l.bcq, "a second QP attached to %s, which the host has not joined", g)
	}
}

// scMcastAllNodesDeliveredToEveryAttachedQP runs the scenario mcast/all-nodes-delivered-to-every-attached-qp.
func scMcastAllNodesDeliveredToEveryAttachedQP(e *Env) {
	src, idx := e.ipv6GID()
	g, _ := verbs.ParseGID("ff02::1")
	const n = 21
	e.checkGRH6(e.mcastToBoth(g, idx, n, 0x29).Bytes()[:udGRH], n, src, g, 1)
}

// scMcastAllHostsDeliveredToEveryAttachedQP runs the scenario mcast/all-hosts-delivered-to-every-attached-qp.
func scMcastAllHostsDeliveredToEveryAttachedQP(e *Env) {
	g, _ := verbs.ParseGID("::ffff:224.0.0.1")
	const n = 30
	e.checkGRH(e.mcastToBoth(g, e.Opts.GIDIndex, n, 0x37).Bytes()[:udGRH], n, false, e.GID, g, 1, 0, true)
}

// scMcastDetachedQPGetsNoCopy runs the scenario mcast/detached-qp-gets-no-copy.
func scMcastDetachedQPGetsNoCopy(e *Env) {
	_, idx := e.ipv6GID()
	g, _ := verbs.ParseGID("ff02::1")
	l, _, bbuf := e.mcastLink(g, idx)
	e.Must(l.a.DetachMcast(g, 0), "ibv_detach_mcast(sender's QP)")
	const n = 12
	if got := e.mcastSend(l, n, 0x5a); len(got) != 0 {
		e.Errorf("the sender's QP, detached: unexpected receive %s", fmtWCs(got))
	}
	e.expectGroupCopy(e.PollN(l.bcq, 1), 20, l.b, l, bbuf, n, 0x5a, "the QP still attached")
	e.expectNoWC(l.acq, "the sender's QP after it detached")
}
