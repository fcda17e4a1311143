package pingpong

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// The work request IDs of rdma-core's ping-pongs; the pending mask is made
// of them.
const (
	RecvWRID = 1
	SendWRID = 2
)

// Constants of the programs.
const (
	// UDQKey is the Q_Key ibv_ud_pingpong gives its QP and its sends.
	UDQKey = 0x11111111
	// GRHSize is the 40-byte GRH a UD receive finds at the front of its buffer.
	GRHSize = 40
	// Fill is the byte rc, uc and ud fill their buffer with (srq fills 0).
	Fill = 0x7b
)

// RC attribute values of pp_connect_ctx (rc and srq).
const (
	rcMinRNRTimer     = 12
	rcMaxDestRdAtomic = 1
	rcTimeout         = 14
	rcRetryCnt        = 7
	rcRNRRetry        = 7
	rcMaxRdAtomic     = 1
	grhHopLimit       = 1 // v44 for rc, uc, srq and ud (HEAD's ud uses 64)
)

// Error is a step of the ping-pong that failed. Msg is the line rdma-core's
// program prints at that point ("Failed to modify QP to RTR"), Err the
// verb's own error, and Hint what is most likely wrong and how to fix it.
type Error struct {
	Msg  string
	Err  error
	Hint string
	// Timeout is set when the step gave up waiting (--timeout).
	Timeout bool
	// after is a line rdma-core prints after the reason (the server's
	// "Couldn't connect to remote QP").
	after string
}

// ErrTimeout matches (errors.Is) every *Error that gave up waiting.
var ErrTimeout = errors.New("pingpong: timed out")

func (e *Error) Error() string {
	s := e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; likely cause: " + e.Hint
	}
	return s
}

// Unwrap returns the verb's error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout and e timed out.
func (e *Error) Is(target error) bool { return target == ErrTimeout && e.Timeout }

func fail(msg string, err error, hint string) *Error { return &Error{Msg: msg, Err: err, Hint: hint} }

// Endpoint is one side of a ping-pong: the verbs objects of rdma-core's
// pp_init_ctx, with the receives already posted, and the loop's state. The
// program uses one; RunPair uses two.
//
//	ep, err := pingpong.NewEndpoint(vctx, opts, nil) // QPs in INIT, receives posted
//	remote := exchange(ep.Local())                    // the other side's addresses
//	err = ep.Connect(remote)                          // RTR, RTS (UD: and the AH)
//	stats, err := ep.Run(ctx, isClient)               // the loop
//	ep.Stop(); bad := ep.CheckData()                  // -c
//	ep.Close()
type Endpoint struct {
	o         Options
	vctx      verbs.Context
	channel   verbs.CompChannel
	pd        verbs.PD
	mr        verbs.MR
	buf       []byte
	cq        verbs.CQ
	srq       verbs.SRQ
	qps       []verbs.QP
	ah        verbs.AH
	sendFlags verbs.SendFlags
	port      verbs.PortAttr
	local     []exchange.Dest
	remote    []exchange.Dest
	connected bool

	// The loop (parse_single_wc's state).
	client      bool
	started     bool
	routs       int
	rcnt, scnt  int
	pending     []int
	cqEvents    int
	polls       int // CQ polls in the loop
	posts       int // post calls in the loop
	wc          []verbs.WC
	recvWRs     []verbs.RecvWR
	sendWRs     []verbs.SendWR // one per QP, reused
	closed      bool
	lastPostErr error
}

// NewEndpoint does what rdma-core's program does before the address
// exchange, on an open device context: completion channel (-e), PD, a
// buffer of -s bytes (UD: +40) filled with 0x7b (srq: 0) and registered
// with LOCAL_WRITE, a CQ of rx_depth+1 entries (srq: rx_depth+num_qp), the
// SRQ (srq), the QP(s) with one send WR and rx_depth receive WRs moved to
// INIT, rx_depth receives posted, the CQ armed (-e), the port queried and
// the GID read (-g). psn draws each QP's start PSN (lrand48() & 0xffffff in
// rdma-core); nil draws from a random source.
//
// The context stays the caller's; Close destroys the rest.
func NewEndpoint(vctx verbs.Context, o Options, psn func() uint32) (*Endpoint, error) {
	if o.Transport == XSRQ {
		return nil, usageErrorf("xsrq has an endpoint of its own: use NewXSRQEndpoint")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if psn == nil {
		psn = func() uint32 { return rand.Uint32() }
	}
	e := &Endpoint{o: o, vctx: vctx}
	if err := e.init(psn); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

func (e *Endpoint) nqp() int {
	if e.o.Transport == SRQ {
		return e.o.NumQP
	}
	return 1
}

func (e *Endpoint) bufLen() int {
	if e.o.Transport == UD {
		return e.o.Size + GRHSize
	}
	return e.o.Size
}

func (e *Endpoint) init(psn func() uint32) error {
	o := e.o
	var err error
	port := uint8(o.IBPort)
	if o.Transport == UD {
		// ud_pingpong refuses a message that does not fit the active MTU:
		// a UD message is one packet.
		pa, err := e.vctx.QueryPort(port)
		if err != nil {
			return fail(fmt.Sprintf("Unable to query port info for port %d", o.IBPort), err, "")
		}
		if mtu := pa.ActiveMTU.Bytes(); o.Size > mtu {
			return fail(fmt.Sprintf("Requested size larger than port MTU (%d)", mtu), nil,
				fmt.Sprintf("a UD message is a single packet, so -s must be at most the port's active MTU (%d); use -s %d or less", mtu, mtu))
		}
	}
	if o.Events {
		if e.channel, err = e.vctx.CreateCompChannel(); err != nil {
			return fail("Couldn't create completion channel", err, "")
		}
	}
	if e.pd, err = e.vctx.AllocPD(); err != nil {
		return fail("Couldn't allocate PD", err, "")
	}
	if e.mr, err = e.pd.AllocMR(e.bufLen(), verbs.AccessLocalWrite); err != nil {
		return fail("Couldn't register MR", err, "a large -s needs locked memory: check ulimit -l")
	}
	e.buf = e.mr.Bytes()
	fill := byte(Fill)
	if o.Transport == SRQ {
		fill = 0 // srq_pingpong clears its buffer instead
	}
	for i := range e.buf {
		e.buf[i] = fill
	}
	cqe := o.RxDepth + 1
	if o.Transport == SRQ {
		cqe = o.RxDepth + o.NumQP
	}
	if e.cq, err = e.vctx.CreateCQ(verbs.CQInitAttr{CQE: cqe, Channel: e.channel}); err != nil {
		return fail("Couldn't create CQ", err, "")
	}
	if o.Transport == SRQ {
		if e.srq, err = e.pd.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: o.RxDepth, MaxSGE: 1}}); err != nil {
			return fail("Couldn't create SRQ", err, "")
		}
	}
	if err := e.createQPs(port); err != nil {
		return err
	}
	// The buffers of the work requests, built once.
	e.recvWRs = make([]verbs.RecvWR, o.RxDepth)
	rsge := []verbs.SGE{{Addr: e.mr.Addr(), Length: uint32(e.bufLen()), LKey: e.mr.LKey()}}
	for i := range e.recvWRs {
		e.recvWRs[i] = verbs.RecvWR{WRID: RecvWRID, SGList: rsge}
	}
	// Receives go in now, in INIT, before the peer can know our QPN.
	e.routs = e.postRecv(o.RxDepth)
	if e.routs < o.RxDepth {
		return fail(fmt.Sprintf("Couldn't post receive (%d)", e.routs), e.lastPostErr, "")
	}
	if o.Events {
		if err := e.cq.ReqNotify(false); err != nil {
			return fail("Couldn't request CQ notification", err, "")
		}
	}
	if e.port, err = e.vctx.QueryPort(port); err != nil {
		return fail("Couldn't get port info", err, "")
	}
	if o.Transport != UD && e.port.LinkLayer != verbs.LinkLayerEthernet && e.port.LID == 0 {
		return fail("Couldn't get local LID", nil,
			"an InfiniBand port gets its LID from a subnet manager: start opensm (or use a RoCE device)")
	}
	var gid verbs.GID
	if o.GIDIndex >= 0 {
		if gid, err = e.vctx.QueryGID(port, o.GIDIndex); err != nil {
			return fail(fmt.Sprintf("can't read sgid of index %d", o.GIDIndex), err,
				"pick an index that ibv_devinfo -v lists for this port (on rxe and the simulator, 1 is the IPv4 RoCE v2 GID)")
		}
	}
	for _, qp := range e.qps {
		e.local = append(e.local, exchange.Dest{LID: e.port.LID, QPN: qp.Num(), PSN: psn() & 0xffffff, GID: gid})
	}
	ssge := []verbs.SGE{{Addr: e.mr.Addr(), Length: uint32(o.Size), LKey: e.mr.LKey()}}
	if o.Transport == UD {
		ssge[0].Addr += GRHSize
	}
	e.sendWRs = make([]verbs.SendWR, len(e.qps))
	for i := range e.sendWRs {
		e.sendWRs[i] = verbs.SendWR{WRID: SendWRID, SGList: ssge, Opcode: verbs.WRSend, Flags: e.sendFlags}
	}
	e.pending = make([]int, len(e.qps))
	batch := 2 // rc, uc and ud poll two completions at a time
	if o.Transport == SRQ {
		batch = o.RxDepth + o.NumQP
	}
	e.wc = make([]verbs.WC, batch)
	return nil
}

// createQPs creates the endpoint's QPs on e.cq (and e.srq), sets
// e.sendFlags (inline when a QP can hold the whole message), and moves the
// QPs to INIT on port, failing as rdma-core's pingpongs do.
func (e *Endpoint) createQPs(port uint8) error {
	o := e.o
	e.sendFlags = verbs.SendSignaled
	for i := 0; i < e.nqp(); i++ {
		ia := verbs.QPInitAttr{Type: o.Transport.QPType(), SendCQ: e.cq, RecvCQ: e.cq,
			Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1}}
		if o.Transport == SRQ {
			ia.SRQ = e.srq
			ia.Cap.MaxRecvWR, ia.Cap.MaxRecvSGE = 0, 0
		}
		qp, err := e.pd.CreateQP(ia)
		if err != nil {
			if o.Transport == SRQ {
				return fail(fmt.Sprintf("Couldn't create QP[%d]", i), err, "")
			}
			return fail("Couldn't create QP", err, "")
		}
		e.qps = append(e.qps, qp)
		// rdma-core sends inline when the QP can hold the whole message.
		if _, got, err := qp.Query(verbs.AttrCap); err == nil && got.Cap.MaxInlineData >= o.Size {
			e.sendFlags |= verbs.SendInline
		}
	}
	for i, qp := range e.qps {
		attr := verbs.QPAttr{State: verbs.QPSInit, PKeyIndex: 0, PortNum: port}
		mask := verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort
		if o.Transport == UD {
			attr.QKey = UDQKey
			mask |= verbs.AttrQKey
		} else {
			attr.AccessFlags = 0
			mask |= verbs.AttrAccessFlags
		}
		if err := qp.Modify(&attr, mask); err != nil {
			if o.Transport == SRQ {
				return fail(fmt.Sprintf("Failed to modify QP[%d] to INIT", i), err, "")
			}
			return fail("Failed to modify QP to INIT", err, "")
		}
	}
	return nil
}

// postRecv posts n receives (to the SRQ for srq) and returns how many went
// in; lastPostErr keeps the refusal.
func (e *Endpoint) postRecv(n int) int {
	e.lastPostErr = nil
	if n <= 0 {
		return 0
	}
	var got int
	var err error
	e.posts++
	if e.srq != nil {
		got, err = e.srq.PostRecv(e.recvWRs[:n])
	} else {
		got, err = e.qps[0].PostRecv(e.recvWRs[:n])
	}
	e.lastPostErr = err
	return got
}

// Options returns the endpoint's options.
func (e *Endpoint) Options() Options { return e.o }

// Local returns this side's addresses (one per QP), as the exchange sends them.
func (e *Endpoint) Local() []exchange.Dest { return append([]exchange.Dest(nil), e.local...) }

// Remote returns the peer's addresses given to Connect.
func (e *Endpoint) Remote() []exchange.Dest { return append([]exchange.Dest(nil), e.remote...) }

// Port returns the port attributes read at creation.
func (e *Endpoint) Port() verbs.PortAttr { return e.port }

// QPs returns the endpoint's QPs.
func (e *Endpoint) QPs() []verbs.QP { return append([]verbs.QP(nil), e.qps...) }

// Buffer returns the registered buffer (UD: with the 40 GRH bytes in front).
func (e *Endpoint) Buffer() []byte { return e.buf }

// Progress returns how many receives and sends have completed.
func (e *Endpoint) Progress() (received, sent int) { return e.rcnt, e.scnt }

// Connect moves the QP(s) to RTR and RTS toward the peer's addresses, with
// rdma-core's attribute values, and for UD creates the address handle. A
// GRH is used when the peer's GID has a non-zero interface ID, with the
// local GID index -g (-1 becomes 255 in the uint8 field, as in C, and is
// refused).
func (e *Endpoint) Connect(remote []exchange.Dest) error {
	if e.connected {
		return fail("Couldn't connect to remote QP", nil, "the endpoint is connected already")
	}
	if len(remote) == 0 {
		return fail("Couldn't connect to remote QP", nil, "the peer sent no address")
	}
	if e.o.Transport == SRQ && len(remote) != e.o.NumQP {
		return fail("Couldn't connect to remote QP", nil, fmt.Sprintf(
			"the peer sent %d QP addresses but this side has %d QPs: use the same -q on both sides (-q %d here)",
			len(remote), e.o.NumQP, e.o.NumQP))
	}
	e.remote = append([]exchange.Dest(nil), remote...)
	o := e.o
	port := uint8(o.IBPort)
	ah := verbs.AHAttr{DLID: remote[0].LID, SL: uint8(o.SL), SrcPathBits: 0, PortNum: port}
	// srq builds the GRH of every QP from the first address's GID.
	if remote[0].GID.InterfaceID() != 0 {
		ah.IsGlobal = true
		ah.GRH = verbs.GlobalRoute{HopLimit: grhHopLimit, DGID: remote[0].GID, SGIDIndex: uint8(o.GIDIndex)}
	}
	hint := e.gidHint()
	for i, qp := range e.qps {
		r := remote[i]
		av := ah
		av.DLID = r.LID
		label := "QP"
		if o.Transport == SRQ {
			label = fmt.Sprintf("QP[%d]", i)
		}
		rtr := verbs.QPAttr{State: verbs.QPSRTR}
		rtrMask := verbs.AttrState
		rts := verbs.QPAttr{State: verbs.QPSRTS, SQPSN: e.local[i].PSN}
		rtsMask := verbs.AttrState | verbs.AttrSQPSN
		switch o.Transport {
		case RC, SRQ:
			rtr.PathMTU, rtr.DestQPN, rtr.RQPSN, rtr.AH = o.MTU, r.QPN, r.PSN, av
			rtr.MaxDestRdAtomic, rtr.MinRNRTimer = rcMaxDestRdAtomic, rcMinRNRTimer
			rtrMask |= verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN |
				verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
			rts.Timeout, rts.RetryCnt, rts.RNRRetry, rts.MaxRdAtomic = rcTimeout, rcRetryCnt, rcRNRRetry, rcMaxRdAtomic
			rtsMask |= verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrMaxQPRdAtomic
		case UC:
			rtr.PathMTU, rtr.DestQPN, rtr.RQPSN, rtr.AH = o.MTU, r.QPN, r.PSN, av
			rtrMask |= verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN
		}
		if err := qp.Modify(&rtr, rtrMask); err != nil {
			return fail("Failed to modify "+label+" to RTR", err, hint)
		}
		if err := qp.Modify(&rts, rtsMask); err != nil {
			return fail("Failed to modify "+label+" to RTS", err, hint)
		}
	}
	if o.Transport == UD {
		var err error
		if e.ah, err = e.pd.CreateAH(ah); err != nil {
			return fail("Failed to create AH", err, hint)
		}
		e.sendWRs[0].AH = e.ah
		e.sendWRs[0].RemoteQPN = remote[0].QPN
		e.sendWRs[0].RemoteQKey = UDQKey
	}
	e.connected = true
	return nil
}

// gidHint explains a -g mismatch, seen in the peer's address: the GRH is
// built when the peer sent a GID, from the local -g.
func (e *Endpoint) gidHint() string {
	if len(e.remote) == 0 {
		return ""
	}
	localGID := e.o.GIDIndex >= 0
	remoteGID := e.remote[0].GID.InterfaceID() != 0
	switch {
	case localGID && !remoteGID:
		return "the peer sent no GID, so it was started without -g: pass the same kind of -g on both sides (e.g. -g 1 on RoCE)"
	case !localGID && remoteGID:
		return fmt.Sprintf("the peer sent a GID (%s), so it was started with -g, but this side has no -g, which makes sgid_index 255: pass -g on both sides", e.remote[0].GID)
	case !localGID && !remoteGID && e.port.LinkLayer == verbs.LinkLayerEthernet:
		return "neither side passed -g, but this is RoCE (Ethernet link layer), where every packet needs a GRH built from a GID: pass -g on both sides (-g 1 is the IPv4 RoCE v2 GID on rxe and the simulator; ibv_devinfo -v lists them)"
	}
	return ""
}

// Close destroys what NewEndpoint and Connect created, in rdma-core's
// order (QPs, SRQ, CQ, MR, AH, PD, channel), after acknowledging the CQ
// events. It returns the first error; the context stays open.
func (e *Endpoint) Close() error {
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
	if e.cq != nil && e.cqEvents > 0 {
		e.cq.AckEvents(e.cqEvents)
		e.cqEvents = 0
	}
	for _, qp := range e.qps {
		keep("Couldn't destroy QP", qp.Destroy())
	}
	if e.srq != nil {
		keep("Couldn't destroy SRQ", e.srq.Destroy())
	}
	if e.cq != nil {
		keep("Couldn't destroy CQ", e.cq.Destroy())
	}
	if e.mr != nil {
		keep("Couldn't deregister MR", e.mr.Dereg())
	}
	if e.ah != nil {
		keep("Couldn't destroy AH", e.ah.Destroy())
	}
	if e.pd != nil {
		keep("Couldn't deallocate PD", e.pd.Dealloc())
	}
	if e.channel != nil {
		keep("Couldn't destroy completion channel", e.channel.Destroy())
	}
	return first
}
