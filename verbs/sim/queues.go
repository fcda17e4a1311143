package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// engState mirrors rxe's enum rxe_qp_state: the state each of the
// requester, completer and responder is in (rxe_qp.c rxe_qp_from_attr).
type engState uint8

const (
	engReset engState = iota
	engInit
	engReady
	engDrain
	engDrained
	engError
)

// wqeState mirrors rxe's enum wqe_state.
type wqeState uint8

const (
	wqePosted wqeState = iota
	wqeProcessing
	wqePending
	wqeDone
	wqeError
)

func (s wqeState) String() string {
	switch s {
	case wqePosted:
		return "posted"
	case wqeProcessing:
		return "sending"
	case wqePending:
		return "sent"
	case wqeDone:
		return "done"
	}
	return "flushing"
}

// dmaInfo is struct rxe_dma_info: a WQE's progress through its SGE list.
type dmaInfo struct {
	length    uint32 // total bytes
	resid     uint32 // bytes not yet moved
	curSGE    int
	sgeOffset uint32
}

func (d *dmaInfo) reset() { d.resid, d.curSGE, d.sgeOffset = d.length, 0, 0 }

// wrMask bits: wr_opcode_mask (rxe_opcode.c rxe_wr_opcode_info).
const (
	wrInline = 1 << iota
	wrAtomic
	wrSend
	wrRead
	wrWrite
	wrLocalOp
)

// sendWQE is a posted send work request (struct rxe_send_wqe).
type sendWQE struct {
	wr          verbs.SendWR // SGList aliases sge
	sge         []verbs.SGE
	inline      []byte // the data of an IBV_SEND_INLINE WR, copied at post time
	ah          *ah    // UD: the address handle
	mask        int    // wr_opcode_mask for the QP type, 0 when the type cannot do it
	state       wqeState
	status      verbs.WCStatus
	errWhy      string // why the WQE failed, for the learner
	firstPSN    uint32
	lastPSN     uint32
	iova        uint64 // remote address of the next RETH / AtomicETH
	dma         dmaInfo
	signal      bool // completion requested (or sq_sig_all)
	hasRdAtomic bool // holds a max_rd_atomic slot (wqe->has_rd_atomic)
	ssn         uint32
}

// sendQueue is the send queue ring, with free-running producer and
// consumer indexes as rxe_queue keeps them.
type sendQueue struct {
	buf        []sendWQE // a power of two long
	mask       uint32
	cons, prod uint32
	maxWR      int
	maxSGE     int
	maxInline  int
}

// init sizes the queue; the ring itself is allocated at the first post,
// so that an idle QP costs little memory.
func (s *sendQueue) init(maxWR int) {
	s.maxWR = maxWR
}

// alloc allocates the ring: a power of two slots, one more than maxWR.
func (s *sendQueue) alloc() {
	if s.buf != nil {
		return
	}
	slots := 1
	for slots < s.maxWR+1 {
		slots <<= 1
	}
	s.buf = make([]sendWQE, slots)
	s.mask = uint32(slots - 1)
}

func (s *sendQueue) count() int           { return int(s.prod - s.cons) }
func (s *sendQueue) full() bool           { return s.count() >= s.maxWR }
func (s *sendQueue) at(i uint32) *sendWQE { return &s.buf[i&s.mask] }

// head is queue_head: the oldest WQE, or nil.
func (s *sendQueue) head() *sendWQE {
	if s.cons == s.prod {
		return nil
	}
	return s.at(s.cons)
}

// advance is queue_advance_consumer.
func (s *sendQueue) advance() {
	if s.cons == s.prod {
		return
	}
	s.at(s.cons).ah = nil
	s.cons++
}

// recvWQE is a posted receive (struct rxe_recv_wqe).
type recvWQE struct {
	wrID   uint64
	sge    []verbs.SGE
	length uint32
	dma    dmaInfo
}

// recvQueue is a ring of receive WQEs with rxe's capacity.
type recvQueue struct {
	buf         []recvWQE
	head, count int
	maxWR       int // capacity (rounded)
	maxSGE      int
}

func (r *recvQueue) init(maxWR, maxSGE int) {
	r.maxWR, r.maxSGE = maxWR, maxSGE
	r.buf = nil // allocated at the first post
	r.head, r.count = 0, 0
}

func (r *recvQueue) full() bool { return r.count >= r.maxWR }

func (r *recvQueue) push(wr *verbs.RecvWR) {
	if r.buf == nil {
		r.buf = make([]recvWQE, r.maxWR)
	}
	w := &r.buf[r.wrap(r.head+r.count)]
	w.wrID = wr.WRID
	w.sge = append(w.sge[:0], wr.SGList...)
	w.length = 0
	for _, s := range wr.SGList {
		w.length += s.Length
	}
	r.count++
}

// peek returns the oldest WQE, or nil.
func (r *recvQueue) peek() *recvWQE {
	if r.count == 0 {
		return nil
	}
	return &r.buf[r.head]
}

// at returns the i-th WQE from the head.
func (r *recvQueue) at(i int) *recvWQE { return &r.buf[r.wrap(r.head+i)] }

// wrap is i modulo the ring's length, for 0 <= i < 2*maxWR.
func (r *recvQueue) wrap(i int) int {
	if i >= r.maxWR {
		i -= r.maxWR
	}
	return i
}

func (r *recvQueue) pop() {
	if r.count == 0 {
		return
	}
	r.head = r.wrap(r.head + 1)
	r.count--
}

func (r *recvQueue) clear() { r.head, r.count = 0, 0 }

// resize keeps the queued WQEs (rxe_queue_resize).
func (r *recvQueue) resize(n int) {
	if r.buf == nil {
		r.maxWR = n
		return
	}
	buf := make([]recvWQE, n)
	for i := 0; i < r.count; i++ {
		buf[i] = r.buf[(r.head+i)%r.maxWR]
	}
	r.buf, r.head, r.maxWR = buf, 0, n
}

// pktQueue is a FIFO of received packets (an skb queue).
type pktQueue struct {
	buf  []*packet
	head int
}

func (q *pktQueue) push(p *packet) { q.buf = append(q.buf, p) }
func (q *pktQueue) len() int       { return len(q.buf) - q.head }

func (q *pktQueue) peek() *packet {
	if q.head == len(q.buf) {
		return nil
	}
	return q.buf[q.head]
}

func (q *pktQueue) pop() *packet {
	if q.head == len(q.buf) {
		return nil
	}
	p := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	return p
}

// reqEngine is the requester's state (qp->req).
type reqEngine struct {
	state           engState
	psn             uint32
	opcode          int    // opcode of the last packet sent, -1 for none
	wqeIndex        uint32 // next WQE to work on
	noackPkts       int
	rdAtomic        int // free max_rd_atomic slots
	needRdAtomic    bool
	waitPSN         bool
	needRetry       bool
	waitForRNRTimer bool
	waitFence       bool
}

// compEngine is the completer's state (qp->comp).
type compEngine struct {
	state        engState
	psn          uint32
	opcode       int
	timeout      bool
	timeoutRetry bool
	startedRetry bool
	retryCnt     int
	rnrRetry     int
	pkts         pktQueue // resp_pkts
}

// respRes is a responder resource (struct resp_res): the record of a READ
// or atomic, kept for replaying a duplicate.
type respRes struct {
	typ      int // 0, wire.FlagRead or wire.FlagAtomic
	replay   bool
	next     bool // rdatm_res_state_next: the first response went out
	firstPSN uint32
	lastPSN  uint32
	curPSN   uint32
	readVA   uint64
	readOrg  uint64
	resid    uint32
	length   uint32
	rkey     uint32
	origVal  uint64
}

// respEngine is the responder's state (qp->resp).
type respEngine struct {
	state      engState
	psn        uint32
	ackPSN     uint32
	msn        uint32
	opcode     int
	dropMsg    bool
	gotoError  bool
	sentPSNNak bool
	status     verbs.WCStatus
	aethSyn    wire.Syndrome
	errWhy     string

	wqe     *recvWQE // the receive WQE being filled, or nil (points at wqeCopy)
	wqeCopy recvWQE  // rxe copies the WQE out of the queue (resp.srq_wqe)

	va     uint64 // RDMA WRITE / READ / atomic in progress
	offset uint64
	rkey   uint32
	resid  uint32
	length uint32
	mr     *mr

	resources []respRes
	resHead   int
	res       *respRes

	pkts pktQueue // req_pkts
}
