package shell

import (
	"strings"
	"sync"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// maxWireLog is how many packets the wire log keeps for trace ladder: the
// most recent ones.
const maxWireLog = 4096

// wireLog keeps the last packets the trace saw, decoded, each with the cell
// that put it on the wire, for trace ladder. It lives from the first trace
// on until reset; trace off stops it growing but keeps it.
type wireLog struct {
	mu    sync.Mutex // the observer may call from a driver's goroutine
	pkts  []*wirePacket
	bySeq map[uint64]*wirePacket
	// sent counts the requests in the log by what a retransmission
	// repeats, so that one is marked as such.
	sent map[resendKey]int
}

// wirePacket is one packet of the log, with its latest verdict.
type wirePacket struct {
	seq      uint64
	cell     int // the cell that caused it; 0 while that cell runs
	time     time.Duration
	from, to string
	hdr      wire.Packet // decoded, without its payload
	payload  int         // the payload's length
	decoded  bool        // hdr holds it; else only summary does
	summary  string
	verdict  string
	resent   bool // a request sent before: a retransmission
	key      resendKey
	isResend bool // key counts in sent
}

// resendKey is what a retransmitted request repeats.
type resendKey struct {
	from, to string
	op       wire.Opcode
	dqpn     uint32
	psn      wire.PSN
}

func newWireLog() *wireLog {
	return &wireLog{bySeq: map[uint64]*wirePacket{}, sent: map[resendKey]int{}}
}

// observe records a packet event: a new packet, or a later verdict on one
// already in the log.
func (wl *wireLog) observe(ev verbs.PacketEvent) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if p, ok := wl.bySeq[ev.Seq]; ok {
		p.verdict = ev.Verdict
		return
	}
	p := &wirePacket{seq: ev.Seq, time: ev.Time, from: ev.From, to: ev.To, summary: ev.Summary, verdict: ev.Verdict}
	if len(ev.Bytes) > 0 && wire.Decode(ev.Bytes, &p.hdr) == nil {
		p.decoded = true
		p.payload = len(p.hdr.Payload)
		p.hdr.Payload = nil // Bytes is valid only during this call
		if p.hdr.BTH.Opcode.IsRequest() {
			p.key = resendKey{ev.From, ev.To, p.hdr.BTH.Opcode, p.hdr.BTH.DestQP, p.hdr.BTH.PSN}
			p.isResend = true
			p.resent = wl.sent[p.key] > 0
			wl.sent[p.key]++
		}
	}
	wl.bySeq[ev.Seq] = p
	wl.pkts = append(wl.pkts, p)
	if len(wl.pkts) > maxWireLog+maxWireLog/4 {
		wl.trim()
	}
}

// trim drops the oldest packets down to maxWireLog, in one go now and
// then rather than one at a time.
func (wl *wireLog) trim() {
	drop := len(wl.pkts) - maxWireLog
	for _, p := range wl.pkts[:drop] {
		delete(wl.bySeq, p.seq)
		if p.isResend {
			if wl.sent[p.key]--; wl.sent[p.key] <= 0 {
				delete(wl.sent, p.key)
			}
		}
	}
	wl.pkts = append([]*wirePacket(nil), wl.pkts[drop:]...)
}

// endCell gives the packets not yet claimed to cell n, which caused them.
func (wl *wireLog) endCell(n int) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	for i := len(wl.pkts) - 1; i >= 0 && wl.pkts[i].cell == 0; i-- {
		wl.pkts[i].cell = n
	}
}

// last returns copies of the last n packets (all of them when n is 0 or
// more than the log holds), oldest first, at most maxWireLog.
func (wl *wireLog) last(n int) []wirePacket {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	from := max(0, len(wl.pkts)-maxWireLog)
	if n > 0 {
		from = max(from, len(wl.pkts)-n)
	}
	out := make([]wirePacket, 0, len(wl.pkts)-from)
	for _, p := range wl.pkts[from:] {
		out = append(out, *p)
	}
	return out
}

// lastCell returns the packets of the last cell that sent any.
func (wl *wireLog) lastCell() []wirePacket {
	all := wl.last(0)
	i := len(all)
	for i > 0 && all[i-1].cell == 0 {
		i-- // a cell still running: not yet claimed
	}
	if i == 0 {
		return nil
	}
	cell := all[i-1].cell
	j := i - 1
	for j > 0 && all[j-1].cell == cell {
		j--
	}
	return all[j:i]
}

// size is how many packets the log holds.
func (wl *wireLog) size() int {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	return min(len(wl.pkts), maxWireLog)
}

// opName is the packet's opcode without its transport: SEND_ONLY.
func (p *wirePacket) opName() string {
	if p.decoded {
		return p.hdr.BTH.Opcode.Name()
	}
	w := strings.Fields(wireOpcode(p.summary))
	if len(w) == 0 {
		return "?"
	}
	return w[len(w)-1]
}

// dropped reports whether the packet never arrived.
func (p *wirePacket) dropped() bool {
	return strings.HasPrefix(p.verdict, "dropped") || strings.HasPrefix(p.verdict, "refused")
}
