package pingpong

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// xsrq: rdma-core's ibv_xsrq_pingpong (libibverbs/examples/xsrq_pingpong.c).
//
// One process has one XRC domain (opened on the file /tmp/xrc_domain), one
// XRC SRQ of num_clients receives whose completions go to one receive CQ,
// and per client an XRC_RECV QP (the target: the peer's XRC_SEND QP sends
// to it) and an XRC_SEND QP (the initiator: it sends to the peer's
// XRC_RECV QP, naming the peer's SRQ in every message). The server sends
// each client its first message; each side answers every message it
// receives until -n went each way per client. Only the last send to each
// peer is signaled.
//
// One deliberate difference: rdma-core's server sends message k to client
// i through send_qp[(i + k) % num_clients], rotating over its XRC_SEND
// QPs, so a message for client i's SRQ may arrive through client j's
// XRC_RECV QP. The target finds the SRQ by number in the domain of the QP
// the message arrived on, so that works only because rdma-core's clients
// on one host share one XRC domain through /tmp/xrc_domain. vsh's server
// sends each client's messages through that client's own XRC_SEND QP:
// simulator processes cannot share a domain (each has its own simulated
// device, and the file names a domain only on one device), and with one
// client the two are the same.

// XRCDomainPath is the file xsrq_pingpong names its XRC domain by.
const XRCDomainPath = "/tmp/xrc_domain"

// Limits of xsrq's options.
const (
	maxXSRQClients = 1024
	maxXSRQTests   = math.MaxInt32
)

// The attribute values of xsrq_pingpong's create_qps and connect_qps.
const (
	xsrqMinRNRTimer = 12
	xsrqTimeout     = 14
	xsrqRetryCnt    = 7
	xsrqRNRRetry    = 7
	xsrqHopLimit    = 5 // set_ah_attr
	xsrqTgtAccess   = verbs.AccessRemoteWrite | verbs.AccessRemoteRead
)

// The masks of xsrq_pingpong's modify_qp calls.
const (
	xsrqInitMask    = verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	xsrqSendRTRMask = verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
	xsrqRecvRTRMask = xsrqSendRTRMask | verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	xsrqRecvRTSMask = verbs.AttrState | verbs.AttrTimeout | verbs.AttrSQPSN
	xsrqSendRTSMask = xsrqRecvRTSMask | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrMaxQPRdAtomic
)

// XRCAddrLine is xsrq_pingpong's address line (ADDR_FORMAT); side is
// "local" or "remote", right-aligned in 8 columns.
func XRCAddrLine(side string, d exchange.XRCDest) string {
	return fmt.Sprintf("%8s: LID %04x, QPN RECV %06x SEND %06x, PSN %06x, SRQN %06x, GID %s",
		side, d.LID, d.RecvQPN, d.SendQPN, d.PSN, d.SRQN, d.GID)
}

// SuccessLine is what xsrq_pingpong prints when all went well.
const SuccessLine = "success"

// XSRQEndpoint is one side of ibv_xsrq_pingpong: pp_init_ctx's objects
// with the first receives posted, and the loop's state. A server has
// Options.Clients connections, a client one.
//
//	ep, err := pingpong.NewXSRQEndpoint(vctx, opts, pingpong.XRCDomainPath, nil)
//	local, err := ep.Local(i)    // connection i's address, as sent
//	err = ep.Connect(i, remote)  // both QPs of connection i to RTS
//	err = ep.Start(isClient)     // the server posts its first sends
//	for !ep.Done() { ep.Poll() }
//	err = ep.DrainSends(...)     // the signaled last sends
//	ep.Close()
type XSRQEndpoint struct {
	o       Options
	n       int // num_clients
	vctx    verbs.Context
	channel verbs.CompChannel
	pd      verbs.PD
	mr      verbs.MR
	buf     []byte
	xrcd    verbs.XRCD
	recvCQ  verbs.CQ
	sendCQ  verbs.CQ
	srq     verbs.SRQ
	recvQPs []verbs.QP // XRC_RECV (TGT), one per client
	sendQPs []verbs.QP // XRC_SEND (INI), one per client
	port    verbs.PortAttr
	psn     func() uint32

	local     []exchange.XRCDest
	remote    []exchange.XRCDest
	haveLocal []bool
	connected []bool

	// The loop.
	client   bool
	started  bool
	ppCnt    []int // sends posted per peer (rem_dest[i].pp_cnt)
	rcvd     []int // messages received per peer
	cnt      int   // receives completed
	sent     int   // signaled send completions seen
	cqEvents int
	polls    int
	posts    int
	wc       [1]verbs.WC
	recvWRs  []verbs.RecvWR // one per receive slot (--verify) or one
	sendWRs  []verbs.SendWR // one per peer
	scratch  []byte         // --verify: the expected message
	closed   bool
}

// NewXSRQEndpoint does what xsrq_pingpong does before the exchange, in
// its order: query the port (and the LID on InfiniBand), a completion
// channel (-e), a PD, a zeroed buffer of -s bytes registered with
// LOCAL_WRITE, the XRC domain of the file domain ("" opens a private one,
// as fd -1 does), a receive CQ and a send CQ of num_clients entries, an
// XRC SRQ of num_clients receives on the receive CQ, per client an
// XRC_RECV QP and an XRC_SEND QP (max_send_wr num_clients × num_tests)
// moved to INIT, then num_clients receives posted to the SRQ. With
// --verify the buffer has a slot of -s bytes per receive and per peer.
//
// psn draws each connection's start PSN (lrand48() & 0xffffff in
// rdma-core), at Local; nil draws at random. The context stays the
// caller's; Close destroys the rest.
func NewXSRQEndpoint(vctx verbs.Context, o Options, domain string, psn func() uint32) (*XSRQEndpoint, error) {
	if o.Transport != XSRQ {
		return nil, usageErrorf("NewXSRQEndpoint runs xsrq, not %s", o.Transport)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if psn == nil {
		psn = func() uint32 { return rand.Uint32() }
	}
	n := o.Clients
	if o.Host != "" {
		n = 1
	}
	e := &XSRQEndpoint{o: o, n: n, vctx: vctx, psn: psn,
		local: make([]exchange.XRCDest, n), remote: make([]exchange.XRCDest, n),
		haveLocal: make([]bool, n), connected: make([]bool, n), ppCnt: make([]int, n), rcvd: make([]int, n)}
	if err := e.init(domain); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// errnoOf is the errno behind err, as rdma-core prints it; 0 when none.
func errnoOf(err error) int {
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return 0
}

// xsrqNoXRCHint explains a backend without XRC.
const xsrqNoXRCHint = "XRC needs a device that has it (mlx5, or vsh's simulator with XRC on, which pingpong xsrq --backend sim turns on); " +
	"kernel rxe has none, and rdma-core's ibv_xsrq_pingpong fails there with this same line"

func (e *XSRQEndpoint) init(domain string) error {
	o := e.o
	port := uint8(o.IBPort)
	var err error
	if e.port, err = e.vctx.QueryPort(port); err != nil {
		return fail("Failed to get port info", err, "")
	}
	if e.port.LinkLayer != verbs.LinkLayerEthernet && e.port.LID == 0 {
		return fail("Couldn't get local LID", nil,
			"an InfiniBand port gets its LID from a subnet manager: start opensm (or use a RoCE device)")
	}
	if o.Events {
		if e.channel, err = e.vctx.CreateCompChannel(); err != nil {
			return fail("Couldn't create completion channel", err, "")
		}
	}
	if e.pd, err = e.vctx.AllocPD(); err != nil {
		return fail("Couldn't allocate PD", err, "")
	}
	bufLen := o.Size
	if o.Check {
		bufLen = 2 * e.n * o.Size // a slot per receive, then one per peer to send from
		e.scratch = make([]byte, o.Size)
	}
	if e.mr, err = e.pd.AllocMR(bufLen, verbs.AccessLocalWrite); err != nil {
		return fail("Couldn't register MR", err, "a large -s needs locked memory: check ulimit -l")
	}
	e.buf = e.mr.Bytes()
	clear(e.buf)
	ext, ok := e.vctx.(verbs.ExtendedContext)
	if !ok {
		err := verbs.Errorf("ibv_open_xrcd", verbs.EOPNOTSUPP, "",
			"%s's provider has no XRC verbs, so libibverbs' dummy open_xrcd answers EOPNOTSUPP (dummy_ops.c)", e.vctx.Device().Name())
		return fail(fmt.Sprintf("Couldn't Open the XRC Domain %d", errnoOf(err)), err, xsrqNoXRCHint)
	}
	if e.xrcd, err = ext.OpenXRCD(verbs.XRCDInitAttr{Path: domain, OFlags: verbs.XRCDCreate}); err != nil {
		hint := ""
		if errors.Is(err, verbs.EOPNOTSUPP) {
			hint = xsrqNoXRCHint
		}
		return fail(fmt.Sprintf("Couldn't Open the XRC Domain %d", errnoOf(err)), err, hint)
	}
	if e.recvCQ, err = e.vctx.CreateCQ(verbs.CQInitAttr{CQE: e.n, Channel: e.channel}); err != nil {
		return fail("Couldn't create recv CQ", err, "")
	}
	if o.Events {
		if err := e.recvCQ.ReqNotify(false); err != nil {
			return fail("Couldn't request CQ notification", err, "")
		}
	}
	if e.sendCQ, err = e.vctx.CreateCQ(verbs.CQInitAttr{CQE: e.n}); err != nil {
		return fail("Couldn't create send CQ", err, "")
	}
	if e.srq, err = ext.CreateSRQEx(verbs.SRQInitAttrEx{Attr: verbs.SRQAttr{MaxWR: e.n, MaxSGE: 1},
		Type: verbs.SRQTypeXRC, PD: e.pd, XRCD: e.xrcd, CQ: e.recvCQ}); err != nil {
		return fail("Couldn't create SRQ", err, "")
	}
	for i := 0; i < e.n; i++ {
		r, err := ext.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCRecv}, XRCD: e.xrcd})
		if err != nil {
			return fail(fmt.Sprintf("Couldn't create recv QP[%d] errno %d", i, errnoOf(err)), err, "")
		}
		e.recvQPs = append(e.recvQPs, r)
		init := verbs.QPAttr{State: verbs.QPSInit, PKeyIndex: 0, PortNum: port, AccessFlags: xsrqTgtAccess}
		if err := r.Modify(&init, xsrqInitMask); err != nil {
			return fail(fmt.Sprintf("Failed to modify recv QP[%d] to INIT", i), err, "")
		}
		s, err := ext.CreateQPEx(verbs.QPInitAttrEx{QPInitAttr: verbs.QPInitAttr{Type: verbs.QPTypeXRCSend, SendCQ: e.sendCQ,
			Cap: verbs.QPCap{MaxSendWR: e.n * o.Iters, MaxSendSGE: 1}}, PD: e.pd})
		if err != nil {
			return fail(fmt.Sprintf("Couldn't create send QP[%d] errno %d", i, errnoOf(err)), err,
				fmt.Sprintf("its send queue holds -c × -n = %d work requests (only the last send to each peer is signaled): a smaller -n or -c may fit", e.n*o.Iters))
		}
		e.sendQPs = append(e.sendQPs, s)
		init.AccessFlags = 0
		if err := s.Modify(&init, xsrqInitMask); err != nil {
			return fail(fmt.Sprintf("Failed to modify send QP[%d] to INIT", i), err, "")
		}
	}
	// The work requests, built once. Without --verify every receive and
	// every send is the whole buffer, as in rdma-core; with it, receive j
	// is slot j and the sends to peer i come from slot n+i.
	slots := 1
	if o.Check {
		slots = e.n
	}
	for j := 0; j < slots; j++ {
		e.recvWRs = append(e.recvWRs, verbs.RecvWR{WRID: uint64(j), SGList: []verbs.SGE{e.sge(j)}})
	}
	for i := 0; i < e.n; i++ {
		sg := e.sge(0)
		if o.Check {
			sg = e.sge(e.n + i)
		}
		e.sendWRs = append(e.sendWRs, verbs.SendWR{WRID: uint64(i), SGList: []verbs.SGE{sg}, Opcode: verbs.WRSend})
	}
	// pp_post_recv(num_clients), one ibv_post_srq_recv at a time.
	for j := 0; j < e.n; j++ {
		if err := e.postRecv(j % slots); err != nil {
			return fail("Failed to post receive to SRQ", err, "")
		}
	}
	return nil
}

// sge is slot j of the buffer.
func (e *XSRQEndpoint) sge(j int) verbs.SGE {
	return verbs.SGE{Addr: e.mr.Addr() + uint64(j*e.o.Size), Length: uint32(e.o.Size), LKey: e.mr.LKey()}
}

func (e *XSRQEndpoint) slot(j int) []byte { return e.buf[j*e.o.Size : (j+1)*e.o.Size] }

func (e *XSRQEndpoint) postRecv(slot int) error {
	e.posts++
	_, err := e.srq.PostRecv(e.recvWRs[slot : slot+1])
	return err
}

// Clients returns how many connections the endpoint has (the server's -c;
// a client's 1).
func (e *XSRQEndpoint) Clients() int { return e.n }

// Port returns the port attributes read at creation.
func (e *XSRQEndpoint) Port() verbs.PortAttr { return e.port }

// Local returns connection i's address as send_local_dest makes it: the
// GID of -g read (all zeros without -g), a PSN drawn for both QPs of the
// connection, and the SRQ's number. It draws once; later calls return the
// same address.
func (e *XSRQEndpoint) Local(i int) (exchange.XRCDest, error) {
	if i < 0 || i >= e.n {
		return exchange.XRCDest{}, fail("Couldn't send local address", nil, fmt.Sprintf("connection %d does not exist: this side has %d", i, e.n))
	}
	if e.haveLocal[i] {
		return e.local[i], nil
	}
	var gid verbs.GID
	if e.o.GIDIndex >= 0 {
		var err error
		if gid, err = e.vctx.QueryGID(uint8(e.o.IBPort), e.o.GIDIndex); err != nil {
			return exchange.XRCDest{}, fail(fmt.Sprintf("can't read sgid of index %d", e.o.GIDIndex), err,
				"pick an index that ibv_devinfo -v lists for this port (on rxe and the simulator, 1 is the IPv4 RoCE v2 GID)")
		}
	}
	psn := e.psn() & 0xffffff
	srqn, err := e.srq.Num()
	if err != nil {
		return exchange.XRCDest{}, fail("Couldn't get SRQ num", err, "")
	}
	e.local[i] = exchange.XRCDest{LID: e.port.LID, RecvQPN: e.recvQPs[i].Num(), SendQPN: e.sendQPs[i].Num(),
		PSN: psn, SRQN: srqn, GID: gid}
	e.haveLocal[i] = true
	return e.local[i], nil
}

// Remote returns the peers' addresses given to Connect.
func (e *XSRQEndpoint) Remote() []exchange.XRCDest {
	return append([]exchange.XRCDest(nil), e.remote...)
}

// gidHint explains a -g mismatch seen in peer i's address.
func (e *XSRQEndpoint) gidHint(i int) string {
	localGID := e.o.GIDIndex >= 0
	remoteGID := e.remote[i].GID.InterfaceID() != 0
	switch {
	case localGID && !remoteGID:
		return "the peer sent no GID, so it was started without -g: pass the same kind of -g on both sides (e.g. -g 1 on RoCE)"
	case !localGID && remoteGID:
		return fmt.Sprintf("the peer sent a GID (%s), so it was started with -g, but this side has no -g, which makes sgid_index 255: pass -g on both sides", e.remote[i].GID)
	case !localGID && !remoteGID && e.port.LinkLayer == verbs.LinkLayerEthernet:
		return "neither side passed -g, but this is RoCE (Ethernet link layer), where every packet needs a GRH built from a GID: pass -g on both sides (-g 1 is the IPv4 RoCE v2 GID on rxe and the simulator; ibv_devinfo -v lists them)"
	}
	return ""
}

// Connect is connect_qps(i): the XRC_RECV QP to RTR toward the peer's
// XRC_SEND QP, then RTS; the XRC_SEND QP to RTR toward the peer's
// XRC_RECV QP, then RTS; both receive from the peer's PSN and send from
// this side's, with rdma-core's masks and values. The address vector has
// a GRH (hop limit 5, source GID index -g) when the peer sent a GID.
func (e *XSRQEndpoint) Connect(i int, remote exchange.XRCDest) error {
	if i < 0 || i >= e.n || !e.haveLocal[i] {
		return fail(fmt.Sprintf("Failed to modify recv QP[%d] to RTR", i), nil, "send this connection's local address (Local) before connecting it")
	}
	if e.connected[i] {
		return fail(fmt.Sprintf("Failed to modify recv QP[%d] to RTR", i), nil, "the connection is connected already")
	}
	e.remote[i] = remote
	o := e.o
	ah := verbs.AHAttr{DLID: remote.LID, SL: uint8(o.SL), PortNum: uint8(o.IBPort)}
	if remote.GID.InterfaceID() != 0 {
		ah.IsGlobal = true
		ah.GRH = verbs.GlobalRoute{HopLimit: xsrqHopLimit, DGID: remote.GID, SGIDIndex: uint8(o.GIDIndex)}
	}
	hint := e.gidHint(i)
	steps := []struct {
		qp   verbs.QP
		attr verbs.QPAttr
		mask verbs.QPAttrMask
		msg  string
	}{
		{e.recvQPs[i], verbs.QPAttr{State: verbs.QPSRTR, DestQPN: remote.SendQPN, PathMTU: o.MTU, RQPSN: remote.PSN,
			MinRNRTimer: xsrqMinRNRTimer, AH: ah}, xsrqRecvRTRMask, "Failed to modify recv QP[%d] to RTR"},
		{e.recvQPs[i], verbs.QPAttr{State: verbs.QPSRTS, Timeout: xsrqTimeout, SQPSN: e.local[i].PSN},
			xsrqRecvRTSMask, "Failed to modify recv QP[%d] to RTS"},
		{e.sendQPs[i], verbs.QPAttr{State: verbs.QPSRTR, DestQPN: remote.RecvQPN, PathMTU: o.MTU, RQPSN: remote.PSN, AH: ah},
			xsrqSendRTRMask, "Failed to modify send QP[%d] to RTR"},
		{e.sendQPs[i], verbs.QPAttr{State: verbs.QPSRTS, Timeout: xsrqTimeout, RetryCnt: xsrqRetryCnt, RNRRetry: xsrqRNRRetry,
			SQPSN: e.local[i].PSN}, xsrqSendRTSMask, "Failed to modify send QP[%d] to RTS"},
	}
	for _, s := range steps {
		if err := s.qp.Modify(&s.attr, s.mask); err != nil {
			return fail(fmt.Sprintf(s.msg, i), err, hint)
		}
	}
	e.sendWRs[i].RemoteSRQN = remote.SRQN
	e.connected[i] = true
	return nil
}

// xsrqPattern fills b with message k (from 1) of the connection whose
// sender drew PSN from and whose receiver drew PSN to: a byte stream
// (splitmix64) that names the message, so that a message that went to the
// wrong side, came twice, came late or was damaged does not match.
func xsrqPattern(b []byte, from, to uint32, k int) {
	s := uint64(from&0xffffff)<<40 | uint64(to&0xffffff)<<16
	s ^= uint64(uint32(k)) * 0xd6e8feb86659fd93
	for i := 0; i < len(b); i += 8 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(z >> (8 * j))
		}
	}
}

// Start begins the loop on a connected endpoint: the server posts the
// first message to each client (pp_post_send(i) for every i); the client
// waits for the server's.
func (e *XSRQEndpoint) Start(client bool) error {
	for i, c := range e.connected {
		if !c {
			return fail("Couldn't post send", nil, fmt.Sprintf("connection %d is not connected: connect every connection before the loop", i))
		}
	}
	if e.started {
		return fail("Couldn't post send", nil, "the loop has started already")
	}
	e.client, e.started = client, true
	e.polls, e.posts = 0, 0
	if client {
		return nil
	}
	for i := 0; i < e.n; i++ {
		if err := e.postSend(i); err != nil {
			return fail("Couldn't post send", err, "")
		}
	}
	return nil
}

// postSend is pp_post_send(i): the next message to peer i, naming its SRQ,
// signaled when it is the last; vsh sends it through connection i's
// XRC_SEND QP (rdma-core: send_qp[(i + pp_cnt) % num_clients]).
func (e *XSRQEndpoint) postSend(i int) error {
	wr := &e.sendWRs[i]
	e.ppCnt[i]++
	if e.o.Check {
		xsrqPattern(e.slot(e.n+i), e.local[i].PSN, e.remote[i].PSN, e.ppCnt[i])
	}
	wr.Flags = 0
	if e.ppCnt[i] >= e.o.Iters {
		wr.Flags = verbs.SendSignaled
	}
	e.posts++
	_, err := e.sendQPs[i].PostSend(e.sendWRs[i : i+1])
	return err
}

// total is how many messages this side receives: num_clients × num_tests.
func (e *XSRQEndpoint) total() int { return e.n * e.o.Iters }

// Done reports whether every message has been received.
func (e *XSRQEndpoint) Done() bool { return e.cnt >= e.total() }

// Progress returns how many messages have been received and sent.
func (e *XSRQEndpoint) Progress() (received, sent int) {
	for _, c := range e.ppCnt {
		sent += c
	}
	return e.cnt, sent
}

// Poll polls the receive CQ once for one completion, as rdma-core does,
// and handles it. It returns how many it handled.
func (e *XSRQEndpoint) Poll() (int, error) {
	e.polls++
	n, err := e.recvCQ.Poll(e.wc[:])
	if err != nil {
		return 0, fail(fmt.Sprintf("Error polling cq %d", -errnoOf(err)), err, "")
	}
	if n == 0 {
		return 0, nil
	}
	return 1, e.Handle(e.wc[0])
}

// pollAll polls until the receive CQ is empty or every message is in,
// and returns how many completions it handled.
func (e *XSRQEndpoint) pollAll() (int, error) {
	got := 0
	for !e.Done() {
		n, err := e.Poll()
		if err != nil || n == 0 {
			return got, err
		}
		got += n
	}
	return got, nil
}

// Handle takes a receive completion as rdma-core's loop does: an error
// status ends the run; otherwise a receive goes back to the SRQ, the
// completion's QP number (the XRC_RECV QP the message came through) names
// the peer, and the peer gets its next message while fewer than -n went.
// vsh also checks the size and, with --verify, every byte.
func (e *XSRQEndpoint) Handle(wc verbs.WC) error {
	if wc.Status != verbs.WCSuccess {
		return &Error{Msg: fmt.Sprintf("Work completion error %d", int(wc.Status)),
			Hint: fmt.Sprintf("a receive completed with %s; %s", wc.Status.Str(), e.statusHint(wc, true))}
	}
	qi := 0
	if e.n > 1 {
		qi = -1
		for i, qp := range e.recvQPs {
			if qp.Num() == wc.QPNum {
				qi = i
				break
			}
		}
		if qi < 0 {
			return fail(fmt.Sprintf("Unable to find qp %x", wc.QPNum), nil,
				"the message came through a QP that is none of this side's XRC_RECV QPs")
		}
	}
	if int(wc.ByteLen) != e.o.Size {
		return fail(fmt.Sprintf("Received a %d-byte message, expected %d", wc.ByteLen, e.o.Size), nil,
			fmt.Sprintf("the peer sends %d-byte messages but this side was started with -s %d: use the same -s on both sides", wc.ByteLen, e.o.Size))
	}
	slot := 0
	if e.o.Check {
		slot = int(wc.WRID)
		if slot < 0 || slot >= len(e.recvWRs) {
			return fail(fmt.Sprintf("Completion for unknown wr_id %d", wc.WRID), nil, "")
		}
		if err := e.verify(qi, e.rcvd[qi]+1, e.slot(slot)); err != nil {
			return err
		}
	}
	if err := e.postRecv(slot); err != nil {
		return fail("Failed to post receive to SRQ", err, "")
	}
	e.rcvd[qi]++
	if e.ppCnt[qi] < e.o.Iters {
		if err := e.postSend(qi); err != nil {
			return fail("Couldn't post send", err, "")
		}
	}
	e.cnt++
	return nil
}

// peerName names peer i in messages.
func (e *XSRQEndpoint) peerName(i int) string {
	if e.client {
		return "the server"
	}
	return fmt.Sprintf("client %d", i)
}

// verify checks message k from peer i against its pattern.
func (e *XSRQEndpoint) verify(i, k int, got []byte) error {
	want := e.scratch
	xsrqPattern(want, e.remote[i].PSN, e.local[i].PSN, k)
	bad, first := 0, -1
	for j := range got {
		if got[j] != want[j] {
			bad++
			if first < 0 {
				first = j
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return &Error{
		Msg: fmt.Sprintf("--verify: message %d of %d from %s differs from its pattern: %d of %d bytes, the first at byte %d (0x%02x where the pattern has 0x%02x)",
			k, e.o.Iters, e.peerName(i), bad, len(got), first, got[first], want[first]),
		Hint: e.verifyHint(i, k, got),
	}
}

// verifyHint says what a message that failed --verify is instead.
func (e *XSRQEndpoint) verifyHint(i, k int, got []byte) string {
	b := make([]byte, len(got))
	matches := func(from, to uint32, k int) bool {
		if k < 1 {
			return false
		}
		xsrqPattern(b, from, to, k)
		return string(b) == string(got)
	}
	zero := true
	for _, c := range got {
		if c != 0 {
			zero = false
			break
		}
	}
	switch {
	case zero:
		return "it is all zeros, the peer's buffer as it starts: the peer writes no pattern, so it was started without --verify (pass --verify on both sides)"
	case matches(e.local[i].PSN, e.remote[i].PSN, k), matches(e.local[i].PSN, e.remote[i].PSN, k-1):
		return "it is this side's own message to that peer, sent back: the peer echoes what it receives and writes no pattern, so it was started without --verify (pass --verify on both sides)"
	}
	for _, kk := range []int{k - 1, k + 1, k - 2, k + 2} {
		if kk >= 1 && kk <= e.o.Iters && matches(e.remote[i].PSN, e.local[i].PSN, kk) {
			return fmt.Sprintf("it is message %d of the same peer: messages were lost, repeated or reordered on the way", kk)
		}
	}
	for j := range e.remote {
		if j != i && e.connected[j] {
			for kk := max(1, k-2); kk <= min(e.o.Iters, k+2); kk++ {
				if matches(e.remote[j].PSN, e.local[j].PSN, kk) {
					return fmt.Sprintf("it is message %d from %s, counted as %s's: the completion named the wrong XRC_RECV QP", kk, e.peerName(j), e.peerName(i))
				}
			}
		}
	}
	return "it is no message of this run: the bytes were damaged on the way, or the peer runs another program"
}

// statusHint explains a failed completion of xsrq.
func (e *XSRQEndpoint) statusHint(wc verbs.WC, recv bool) string {
	s := e.o.Size
	switch wc.Status {
	case verbs.WCRetryExcErr:
		return "the peer never acknowledged: it cannot be reached (check -g and the GIDs both sides printed), or it failed or stopped (see its output)"
	case verbs.WCRNRRetryExcErr:
		return "the peer's XRC SRQ had no receive posted when the message arrived: the peer stopped taking messages"
	case verbs.WCRemAccessErr:
		return "the peer's XRC_RECV QP refused the message: the SRQ number this side names (from the peer's address) is no XRC SRQ of that QP's XRC domain, so the peer's address is stale or the peer is not xsrq"
	case verbs.WCRemInvReqErr:
		if recv {
			return fmt.Sprintf("an incoming message did not fit this side's receive buffer of %d bytes or broke the packet sequence: the peer uses a larger -s or another -m; use the same -s and -m on both sides", s)
		}
		return fmt.Sprintf("the peer refused the message: its receive buffer is smaller than %d bytes (different -s), or the path MTUs differ (-m): use the same -s and -m on both sides", s)
	case verbs.WCRemOpErr:
		return fmt.Sprintf("the peer failed while taking the message, most often because its receive buffer is smaller than %d bytes: use the same -s on both sides", s)
	case verbs.WCLocLenErr, verbs.WCLocQPOpErr:
		if recv {
			return fmt.Sprintf("a message did not fit this side's receive buffer of %d bytes: the peer uses a larger -s; use the same -s on both sides", s)
		}
		return "the send was refused locally (a bad work request or a failed transmit)"
	case verbs.WCWRFlushErr:
		return "the QP had already failed; an earlier completion or the peer's output has the real cause"
	}
	return "see the status above"
}

// sendFailure polls the send CQ once for a failed send, to explain a
// loop that stopped: a send that failed completes even unsignaled.
func (e *XSRQEndpoint) sendFailure() *Error {
	var wc [1]verbs.WC
	n, err := e.sendCQ.Poll(wc[:])
	if err != nil || n == 0 {
		return nil
	}
	if wc[0].Status == verbs.WCSuccess {
		e.sent++
		return nil
	}
	peer := int(wc[0].WRID)
	name := "a peer"
	if peer >= 0 && peer < e.n {
		name = e.peerName(peer)
	}
	return &Error{Msg: fmt.Sprintf("Work completion error %d", int(wc[0].Status)),
		Hint: fmt.Sprintf("a send to %s completed with %s; %s", name, wc[0].Status.Str(), e.statusHint(wc[0], false))}
}

// MTUWarning says, when it is so, that -m exceeds the port's active MTU
// while a message needs packets of the full path MTU. Empty otherwise.
func (e *XSRQEndpoint) MTUWarning() string {
	act := e.port.ActiveMTU.Bytes()
	if act == 0 || e.o.MTU.Bytes() <= act || e.o.Size <= act {
		return ""
	}
	return fmt.Sprintf("-m %d is larger than the port's active MTU (%d), and a %d-byte message needs packets that big: they do not fit the link (on RoCE, the netdev's MTU), so they never arrive; use -m %d or less, or raise the link's MTU",
		e.o.MTU.Bytes(), act, e.o.Size, act)
}

// stallError is the timeout of a loop that stopped moving.
func (e *XSRQEndpoint) stallError(waited time.Duration, extra string) *Error {
	if f := e.sendFailure(); f != nil {
		return f
	}
	rcvd, sent := e.Progress()
	msg := fmt.Sprintf("No completion for %s: %d of %d messages received, %d sent", waited, rcvd, e.total(), sent)
	hint := e.stallHint()
	if extra != "" {
		hint += "; " + extra
	}
	return &Error{Msg: msg, Hint: hint, Timeout: true}
}

func (e *XSRQEndpoint) stallHint() string {
	var h string
	switch {
	case e.client && e.cnt == 0:
		h = "the server's first message never came: the server sends it only once all its clients have connected, so if it was started with -c N, start the other clients (each within --timeout of the first); otherwise its messages cannot reach this side (check -g and the GIDs both sides printed)"
	case e.client:
		h = fmt.Sprintf("the server stopped answering after %d message(s): it was probably started with a smaller -n (-n %d here; both sides need the same -n), or it was stopped", e.cnt, e.o.Iters)
	default:
		var behind []string
		none := true
		for i, r := range e.rcvd {
			if r > 0 {
				none = false
			}
			if r < e.o.Iters {
				behind = append(behind, fmt.Sprintf("%s (GID %s) answered %d of %d", e.peerName(i), e.remote[i].GID, r, e.o.Iters))
			}
		}
		if none {
			h = "no client answered its first message: the messages cannot reach the clients (check -g and the GIDs both sides printed), or the clients failed on it (see their output; a different -s, or --verify on one side only, is the usual cause)"
		} else {
			h = strings.Join(behind, ", ") + ": a client that stopped early was probably started with a smaller -n (-n " + fmt.Sprint(e.o.Iters) + " here; all sides need the same -n), or it was stopped"
		}
	}
	if g := e.gidHint(0); g != "" {
		h = g + "; " + h
	}
	if m := e.MTUWarning(); m != "" {
		h = m + "; " + h
	}
	return h + ". Both sides must run xsrq with the same -s, -m and -n, and -g on both or neither"
}

// Run runs the receive loop on a connected endpoint until num_clients ×
// num_tests messages arrived: Start, then poll (or, with -e, sleep on the
// receive CQ's completion events) and Handle. With a timeout it gives up
// when no completion comes for that long, with an *Error that says what
// is most likely wrong; extra is added to that explanation.
func (e *XSRQEndpoint) Run(ctx context.Context, client bool, extra string) (Stats, error) {
	if err := e.Start(client); err != nil {
		return Stats{}, err
	}
	start := time.Now()
	last := start
	timeout := e.o.Timeout
	for idle := 0; !e.Done(); {
		if e.o.Events {
			if err := e.waitEvent(ctx, last, extra); err != nil {
				return e.stats(time.Since(start)), err
			}
		}
		// An event may stand for several completions: poll until the CQ
		// is empty, as rdma-core's inner loop does.
		n, err := e.pollAll()
		if err != nil {
			return e.stats(time.Since(start)), err
		}
		if n > 0 {
			idle = 0
			last = time.Now()
			continue
		}
		if e.o.Events {
			continue
		}
		idle++
		if err := ctx.Err(); err != nil {
			return e.stats(time.Since(start)), fail("Interrupted", err, "")
		}
		if idle%16 == 0 {
			runtime.Gosched()
			if t := time.Now(); timeout > 0 && t.Sub(last) >= timeout {
				return e.stats(t.Sub(start)), e.stallError(timeout, extra)
			}
		}
	}
	return e.stats(time.Since(start)), nil
}

func (e *XSRQEndpoint) stats(d time.Duration) Stats {
	return Stats{Size: e.o.Size, Iters: e.o.Iters, Elapsed: d, CQEvents: e.cqEvents, Polls: e.polls, Posts: e.posts}
}

// waitEvent sleeps until a completion event of the receive CQ
// (get_cq_event), counts it for ibv_ack_cq_events and re-arms the CQ.
func (e *XSRQEndpoint) waitEvent(ctx context.Context, last time.Time, extra string) error {
	for {
		if err := ctx.Err(); err != nil {
			return fail("Interrupted", err, "")
		}
		wait := eventSlice
		if e.o.Timeout > 0 {
			left := e.o.Timeout - time.Since(last)
			if left <= 0 {
				return e.stallError(e.o.Timeout, extra)
			}
			wait = min(wait, left)
		}
		got, err := e.takeEvent(wait)
		if err != nil {
			return err
		}
		if got {
			return nil
		}
		runtime.Gosched()
	}
}

// takeEvent waits up to wait for a completion event; it reports whether
// one came.
func (e *XSRQEndpoint) takeEvent(wait time.Duration) (bool, error) {
	cq, err := e.channel.GetEvent(wait)
	if err != nil {
		if errors.Is(err, verbs.EAGAIN) {
			return false, nil
		}
		return false, fail("Failed to get cq_event", err, "")
	}
	e.cqEvents++
	if cq != e.recvCQ {
		return false, fail(fmt.Sprintf("CQ event for unknown CQ %p", cq), nil, "")
	}
	if err := e.recvCQ.ReqNotify(false); err != nil {
		return false, fail("Couldn't request CQ notification", err, "")
	}
	return true, nil
}

// pollSends polls the send CQ once, as the end of rdma-core's main does,
// and counts the signaled last sends; vsh also stops at a failed one.
func (e *XSRQEndpoint) pollSends() (int, error) {
	var wc [1]verbs.WC
	n, err := e.sendCQ.Poll(wc[:])
	if err != nil {
		return 0, fail(fmt.Sprintf("Error polling cq %d", -errnoOf(err)), err, "")
	}
	if n == 0 {
		return 0, nil
	}
	if wc[0].Status != verbs.WCSuccess {
		return 0, &Error{Msg: fmt.Sprintf("Work completion error %d", int(wc[0].Status)),
			Hint: fmt.Sprintf("a send completed with %s; %s", wc[0].Status.Str(), e.statusHint(wc[0], false))}
	}
	e.sent++
	return 1, nil
}

// SendsDone reports whether the last send to every peer has completed.
func (e *XSRQEndpoint) SendsDone() bool { return e.sent >= e.n }

// DrainSends waits for the signaled last send to every peer (num_clients
// completions on the send CQ), bounded by the timeout.
func (e *XSRQEndpoint) DrainSends(ctx context.Context, extra string) error {
	last := time.Now()
	for idle := 0; !e.SendsDone(); {
		n, err := e.pollSends()
		if err != nil {
			return err
		}
		if n > 0 {
			idle, last = 0, time.Now()
			continue
		}
		idle++
		if err := ctx.Err(); err != nil {
			return fail("Interrupted", err, "")
		}
		if idle%16 == 0 {
			runtime.Gosched()
			if e.o.Timeout > 0 && time.Since(last) >= e.o.Timeout {
				return &Error{Msg: fmt.Sprintf("No completion for %s: %d of %d last sends acknowledged", e.o.Timeout, e.sent, e.n),
					Hint:    "every message arrived here, but the peer never acknowledged this side's last one: it has exited or stopped (see its output)" + ifExtra(extra),
					Timeout: true}
			}
		}
	}
	if e.o.Events && e.cqEvents > 0 {
		e.recvCQ.AckEvents(e.cqEvents)
		e.cqEvents = 0
	}
	return nil
}

func ifExtra(extra string) string {
	if extra == "" {
		return ""
	}
	return "; " + extra
}

// Close destroys what NewXSRQEndpoint made, in pp_close_ctx's order: per
// connection the XRC_SEND QP then the XRC_RECV QP, the SRQ, the XRC
// domain, the send CQ, the receive CQ, the MR, the PD, the channel. It
// returns the first error, with rdma-core's line; the context stays open.
func (e *XSRQEndpoint) Close() error {
	if e == nil || e.closed {
		return nil
	}
	e.closed = true
	var first error
	keep := func(msg string, err error) {
		if err != nil && first == nil {
			first = fail(msg, err, "")
		}
	}
	if e.recvCQ != nil && e.cqEvents > 0 {
		e.recvCQ.AckEvents(e.cqEvents)
		e.cqEvents = 0
	}
	for i := 0; i < max(len(e.sendQPs), len(e.recvQPs)); i++ {
		if i < len(e.sendQPs) {
			keep(fmt.Sprintf("Couldn't destroy INI QP[%d]", i), e.sendQPs[i].Destroy())
		}
		if i < len(e.recvQPs) {
			keep(fmt.Sprintf("Couldn't destroy TGT QP[%d]", i), e.recvQPs[i].Destroy())
		}
	}
	if e.srq != nil {
		keep("Couldn't destroy SRQ", e.srq.Destroy())
	}
	if e.xrcd != nil {
		keep("Couldn't close the XRC Domain", e.xrcd.Close())
	}
	if e.sendCQ != nil {
		keep("Couldn't destroy send CQ", e.sendCQ.Destroy())
	}
	if e.recvCQ != nil {
		keep("Couldn't destroy recv CQ", e.recvCQ.Destroy())
	}
	if e.mr != nil {
		keep("Couldn't deregister MR", e.mr.Dereg())
	}
	if e.pd != nil {
		keep("Couldn't deallocate PD", e.pd.Dealloc())
	}
	if e.channel != nil {
		keep("Couldn't destroy completion channel", e.channel.Destroy())
	}
	return first
}
