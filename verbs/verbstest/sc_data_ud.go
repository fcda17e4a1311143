package verbstest

import (
	"encoding/binary"
	"net/netip"

	"github.com/vsh-rdma/vsh/verbs"
)

// UD: the 40-byte network header in front of every datagram, the Q_Key,
// the MTU limit and what is silently dropped.

const (
	srcGRH    = "sw/rxe/rxe_resp.c execute (Linux 6.1): for a UD QP over IPv4 the first 40 bytes of the receive buffer get union rdma_network_hdr (include/rdma/ib_verbs.h): 20 zero bytes, then the packet's IPv4 header as rxe_net.c prepare_ipv4_hdr built it — version 4, IHL 5, tos = the AH's traffic_class, tot_len = 20 + UDP 8 + BTH 12 + DETH 8 (+ ImmDt 4) + payload + pad + ICRC 4, frag_off = DF, ttl = the AV's hop_limit, protocol UDP, the GIDs' IPv4 addresses; the identification comes from __ip_select_ident. The hop_limit is not the one the program gave: for RoCE, ibv_create_ah and ibv_modify_qp(AV) go through core/verbs.c ib_resolve_eth_dmac → ib_resolve_unicast_gid_dmac, which overwrites grh.hop_limit with the route's (addr.c addr4_resolve: ip4_dst_hoplimit, net.ipv4.ip_default_ttl, 64 unless changed)"
	srcUDDrop = "sw/rxe/rxe_resp.c (Linux 6.1): a UD datagram with no receive WQE is RESPST_ERR_RNR, which for UD is class D: dropped, no NAK (UD has none), the QP stays RTS; rxe_net.c rxe_xmit_packet completes a UD send once its packet is out, so the sender sees IBV_WC_SUCCESS"
)

// routeTTL is the hop limit the kernel puts in every RoCE v2 address
// vector over IPv4, whatever the program asked for: the route's default
// TTL (net.ipv4.ip_default_ttl, 64 on a stock system; see srcGRH).
const routeTTL = 64

// ipv4Checksum is the ones' complement sum of an IPv4 header (RFC 791);
// it is 0 over a header whose checksum field is right.
func ipv4Checksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// checkGRH checks the 40 bytes in front of a UD payload of n bytes that
// went from src to dst with IPv4 TTL ttl and TOS tos. checksum says whether the IPv4 header checksum must be right.
func (e *Env) checkGRH(grh []byte, n int, imm bool, src, dst verbs.GID, ttl, tos uint8, checksum bool) {
	if !zero(grh[:20]) {
		e.Errorf("GRH bytes 0..19 = % x; want 20 zero bytes (rdma_network_hdr.reserved for IPv4)", grh[:20])
	}
	ip := grh[20:40]
	pad := (4 - n%4) % 4
	hdrs := 20 + 8 + 12 + 8 + 4 // IPv4, UDP, BTH, DETH, ICRC
	if imm {
		hdrs += 4
	}
	check := func(field string, got, want int) {
		if got != want {
			e.Errorf("GRH IPv4 %s = %#x; want %#x", field, got, want)
		}
	}
	check("version/IHL", int(ip[0]), 0x45)
	check("tos", int(ip[1]), int(tos))
	check("total length", int(binary.BigEndian.Uint16(ip[2:])), hdrs+n+pad)
	check("flags/fragment offset", int(binary.BigEndian.Uint16(ip[6:])), 0x4000)
	check("ttl", int(ip[8]), int(ttl))
	check("protocol", int(ip[9]), 17)
	s, _ := src.IPv4()
	d, _ := dst.IPv4()
	if got := netip.AddrFrom4([4]byte(ip[12:16])); got != s {
		e.Errorf("GRH IPv4 source = %v; want %v", got, s)
	}
	if got := netip.AddrFrom4([4]byte(ip[16:20])); got != d {
		e.Errorf("GRH IPv4 destination = %v; want %v", got, d)
	}
	if checksum && ipv4Checksum(ip) != 0 {
		e.Errorf("GRH IPv4 header checksum %#04x is wrong (ib_get_rdma_header_version would not take it for IPv4)", binary.BigEndian.Uint16(ip[10:]))
	}
}

// dataUdScenarios are this file's scenarios, each Run a named function.
var dataUdScenarios = []Scenario{
	{
		Name: "ud/grh-ipv4-header",
		Source: srcGRH + ". Compared with the identification (bytes 24..25) masked, and with the checksum (bytes 30..31) masked too: on one device the packet takes rxe_net.c rxe_loopback, " +
			"which never passes ip_local_out, so the kernel never fills iph->check; the completion has IBV_WC_GRH and byte_len 40 + payload (rxe_resp.c do_complete)",
		Needs: CapDataPath,
		Run:   scUDGRHIPv4Header,
	},
	{
		Name:   "ud/grh-ipv4-header-two-devices",
		Source: srcGRH + "; between two devices the packet leaves through rxe_send → ip_local_out, which computes the header checksum (ip_send_check), so the receiver's GRH carries a valid one",
		Needs:  CapDataPath | CapTwoDevices,
		Run:    scUDGRHIPv4HeaderTwoDevices,
	},
	{
		Name:   "ud/qkey-mismatch-dropped",
		Source: "sw/rxe/rxe_recv.c check_keys (Linux 6.1): a UD packet whose DETH Q_Key differs from the QP's qkey is dropped and the port's qkey_viol_cntr goes up by one (set_qkey_viol_cntr, capped at 0xffff; rxe_query_port returns it); the sender completes on transmission (rxe_net.c rxe_xmit_packet); the DETH carries the WR's remote_qkey (rxe_req.c init_req_packet)",
		Needs:  CapDataPath,
		Run:    scUDQKeyMismatchDropped,
	},
	{
		Name:   "ud/send-over-mtu-not-delivered",
		Source: "sw/rxe/rxe_req.c rxe_requester (Linux 6.1), quoting C10-93.1.1: a UD message longer than the port MTU (rxe->port.mtu_cap, the active MTU; get_mtu) emits no packet and still completes IBV_WC_SUCCESS (\"fake a successful UD send\")",
		Needs:  CapDataPath,
		Run:    scUDSendOverMTUNotDelivered,
	},
	{
		Name:   "ud/send-of-mtu-delivered",
		Source: "sw/rxe/rxe_req.c rxe_requester (Linux 6.1): a UD payload of exactly the port MTU fits one UD SEND_ONLY packet (payload > mtu is the only refusal); rxe_resp.c do_complete: byte_len 40 + payload",
		Needs:  CapDataPath,
		Run:    scUDSendOfMTUDelivered,
	},
	{
		Name:   "ud/no-receive-dropped",
		Source: srcUDDrop,
		Needs:  CapDataPath,
		Run:    scUDNoReceiveDropped,
	},
	{
		Name:   "ud/unknown-qpn-dropped",
		Source: "sw/rxe/rxe_recv.c hdr_check (Linux 6.1): a packet for a QPN with no QP is dropped (rxe_pool_get_index fails); the UD sender completes on transmission (rxe_net.c rxe_xmit_packet)",
		Needs:  CapDataPath,
		Run:    scUDUnknownQPNDropped,
	},
	{
		Name:   "ud/src-qp-names-each-sender",
		Source: "sw/rxe/rxe_req.c init_req_packet puts the sender's QPN in the DETH (deth_set_sqp) and rxe_resp.c do_complete copies it to src_qp (Linux 6.1)",
		Needs:  CapDataPath,
		Run:    scUDSrcQPNamesEachSender,
	},
}

func init() {
	registerAll(dataUdScenarios)
}

// scUDGRHIPv4Header runs the scenario ud/grh-ipv4-header.
func scUDGRHIPv4Header(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	av := e.AV()
	av.GRH.HopLimit = 5 // ignored: the kernel uses the route's hop limit
	ah := e.AH(l.apd, av)
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	const n = 30
	pattern(local.Bytes()[:n], 0x51)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	wr := l.udWR(1, verbs.WRSendWithImm, verbs.SendSignaled, sgeAt(local, 0, n))
	wr.AH, wr.Imm = ah, 7
	e.post(l.a, wr)
	e.waitWCs(l.acq, 1, "UD SEND")
	wcs := e.waitWCs(l.bcq, 1, "UD receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + n, Imm: 7,
		QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH | verbs.WCWithImm}, "UD receive")
	e.checkGRH(rbuf.Bytes()[:udGRH], n, true, e.GID, e.GID, routeTTL, 0, false)
	e.expectBytes(rbuf.Bytes()[udGRH:udGRH+n], patterned(n, 0x51), "the payload after the GRH")
	if !zero(rbuf.Bytes()[udGRH+n:]) {
		e.Errorf("bytes past the datagram were written")
	}
}

// scUDGRHIPv4HeaderTwoDevices runs the scenario ud/grh-ipv4-header-two-devices.
func scUDGRHIPv4HeaderTwoDevices(e *Env) {
	devs, err := e.P.Devices()
	e.Must(err, "Devices")
	var other verbs.Device
	for _, d := range devs {
		if d.Name() != e.Dev.Name() {
			other = d
			break
		}
	}
	if other == nil {
		e.Fatalf("no second device")
	}
	ctx2 := e.open(other)
	gid2, err := ctx2.QueryGID(e.Port, e.Opts.GIDIndex)
	e.Must(err, "QueryGID on %s", other.Name())
	pd2 := e.NewPD(ctx2)
	cq1 := e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 16})
	cq2 := e.NewCQ(ctx2, verbs.CQInitAttr{CQE: 16})
	a := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq1, RecvCQ: cq1, Cap: DefaultCap})
	b := e.NewQP(pd2, verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: cq2, RecvCQ: cq2, Cap: DefaultCap})
	e.Bring(a, 0, verbs.QPSRTS)
	e.Bring(b, 0, verbs.QPSRTS)
	av := e.AV()
	av.GRH.DGID = gid2
	av.GRH.HopLimit = 8 // ignored, as on one device
	ah := e.AH(e.PD(), av)
	local := e.MR(e.PD(), 4096, accAll)
	rbuf := e.MR(pd2, 4096, accLocal)
	const n = 57
	pattern(local.Bytes()[:n], 0x13)
	_, err = b.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: []verbs.SGE{sgeAt(rbuf, 0, 4096)}}})
	e.Must(err, "ibv_post_recv")
	e.post(a, verbs.SendWR{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, n)}, AH: ah, RemoteQPN: b.Num(), RemoteQKey: qkey})
	e.waitWCs(cq1, 1, "UD SEND to the other device")
	wcs := e.waitWCs(cq2, 1, "UD receive on the other device")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + n,
		QPNum: b.Num(), SrcQP: a.Num(), Flags: verbs.WCGRH}, "UD receive")
	e.checkGRH(rbuf.Bytes()[:udGRH], n, false, e.GID, gid2, routeTTL, 0, true)
	e.expectBytes(rbuf.Bytes()[udGRH:udGRH+n], patterned(n, 0x13), "the payload after the GRH")
}

// scUDQKeyMismatchDropped runs the scenario ud/qkey-mismatch-dropped.
func scUDQKeyMismatchDropped(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x61)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	before, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	wr := l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 32))
	wr.RemoteQKey = qkey + 1
	e.post(l.a, wr)
	wcs := e.waitWCs(l.acq, 1, "UD SEND with the wrong Q_Key")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 32, QPNum: l.a.Num()}, "sender")
	e.expectNoWC(l.bcq, "receiver of a datagram with the wrong Q_Key")
	after, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	if want := min(before.QKeyViolCntr+1, 0xffff); after.QKeyViolCntr != want {
		e.Errorf("qkey_viol_cntr went from %d to %d; want %d", before.QKeyViolCntr, after.QKeyViolCntr, want)
	}
	// The right Q_Key still gets through: the QP was not harmed.
	e.post(l.a, l.udWR(3, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 64)))
	e.waitWCs(l.acq, 1, "UD SEND with the right Q_Key")
	wcs = e.waitWCs(l.bcq, 1, "receive with the right Q_Key")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + 64,
		QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "receiver")
	e.expectBytes(rbuf.Bytes()[udGRH:udGRH+64], patterned(64, 0x61), "the datagram with the right Q_Key")
}

// scUDSendOverMTUNotDelivered runs the scenario ud/send-over-mtu-not-delivered.
func scUDSendOverMTUNotDelivered(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	mtu := pa.ActiveMTU.Bytes()
	local := e.MR(l.apd, 2*mtu, accAll)
	rbuf := e.MR(l.bpd, 2*mtu+udGRH, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, rbuf.Length()))
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, mtu+1)))
	wcs := e.waitWCs(l.acq, 1, "UD SEND of MTU+1 bytes")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: uint32(mtu + 1), QPNum: l.a.Num()}, "sender of an oversized datagram")
	e.expectNoWC(l.bcq, "receiver of a datagram larger than the MTU")
	if !zero(rbuf.Bytes()) {
		e.Errorf("part of an oversized datagram reached the receive buffer")
	}
	e.expectState(l.a, verbs.QPSRTS, "sender of an oversized datagram")
}

// scUDSendOfMTUDelivered runs the scenario ud/send-of-mtu-delivered.
func scUDSendOfMTUDelivered(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	mtu := pa.ActiveMTU.Bytes()
	local := e.MR(l.apd, mtu, accAll)
	rbuf := e.MR(l.bpd, mtu+udGRH, accLocal)
	pattern(local.Bytes(), 0x71)
	e.recv(l.b, 2, sgeAt(rbuf, 0, mtu+udGRH))
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, mtu)))
	e.waitWCs(l.acq, 1, "UD SEND of exactly the MTU")
	wcs := e.waitWCs(l.bcq, 1, "receive of an MTU-sized datagram")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: uint32(udGRH + mtu),
		QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "receiver")
	e.expectBytes(rbuf.Bytes()[udGRH:], patterned(mtu, 0x71), "the MTU-sized datagram")
}

// scUDNoReceiveDropped runs the scenario ud/no-receive-dropped.
func scUDNoReceiveDropped(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x01)
	pattern(local.Bytes()[1024:1088], 0x02)
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 64)))
	wcs := e.waitWCs(l.acq, 1, "UD SEND to a QP with no receive")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 64, QPNum: l.a.Num()}, "sender")
	e.expectNoWC(l.bcq, "receiver without a receive WQE")
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	e.post(l.a, l.udWR(3, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 1024, 64)))
	e.waitWCs(l.acq, 1, "second UD SEND")
	wcs = e.waitWCs(l.bcq, 1, "receive posted after the drop")
	e.expectWC(wcs[0], verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + 64,
		QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "receiver")
	e.expectBytes(rbuf.Bytes()[udGRH:udGRH+64], patterned(64, 0x02), "the second datagram (the first is gone, not queued)")
	e.expectState(l.b, verbs.QPSRTS, "receiver after a drop")
}

// scUDUnknownQPNDropped runs the scenario ud/unknown-qpn-dropped.
func scUDUnknownQPNDropped(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	gone := e.NewQP(e.PD(), verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: l.bcq, RecvCQ: l.bcq, Cap: DefaultCap})
	qpn := gone.Num()
	e.Must(gone.Destroy(), "ibv_destroy_qp")
	wr := l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 16))
	wr.RemoteQPN = qpn
	e.post(l.a, wr)
	wcs := e.waitWCs(l.acq, 1, "UD SEND to a destroyed QPN")
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpSend, ByteLen: 16, QPNum: l.a.Num()}, "sender")
	e.expectNoWC(l.bcq, "an unrelated QP on the device")
}

// scUDSrcQPNamesEachSender runs the scenario ud/src-qp-names-each-sender.
func scUDSrcQPNamesEachSender(e *Env) {
	l := e.link(verbs.QPTypeUD, linkCfg{})
	c := e.NewQP(l.apd, verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: l.acq, RecvCQ: l.acq, Cap: DefaultCap})
	e.Bring(c, 0, verbs.QPSRTS)
	local := e.MR(l.apd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	e.recv(l.b, 10, sgeAt(rbuf, 0, 1024))
	e.recv(l.b, 11, sgeAt(rbuf, 1024, 1024))
	e.post(l.a, l.udWR(1, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 8)))
	e.waitWCs(l.acq, 1, "first sender")
	wr := l.udWR(2, verbs.WRSend, verbs.SendSignaled, sgeAt(local, 0, 9))
	_, err := c.PostSend([]verbs.SendWR{wr})
	e.Must(err, "ibv_post_send on the second sender")
	e.waitWCs(l.acq, 1, "second sender")
	wcs := e.waitWCs(l.bcq, 2, "two datagrams")
	e.expectWC(wcs[0], verbs.WC{WRID: 10, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + 8, QPNum: l.b.Num(), SrcQP: l.a.Num(), Flags: verbs.WCGRH}, "from the first sender")
	e.expectWC(wcs[1], verbs.WC{WRID: 11, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: udGRH + 9, QPNum: l.b.Num(), SrcQP: c.Num(), Flags: verbs.WCGRH}, "from the second sender")
}
