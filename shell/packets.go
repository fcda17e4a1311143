package shell

import (
	"strings"
	"sync"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// packetLog records the packets each cell puts on the wire while a lesson
// asks for them (lessons.Env.RecordPackets): what an expectation about the
// step's packets counts. Watching packets costs the simulator its fast
// paths, so it is on only while needed.
type packetLog struct {
	mu     sync.Mutex // the observer may call from a driver's goroutine
	cancel func()
	events []verbs.PacketEvent
	sent   map[string]bool // requests seen: sender and summary
	// inFlight are the packets an earlier drain handed out still on the
	// wire, by Seq: their verdict (delivered, dropped) comes in a later
	// cell (the fabric in step mode), and is written there.
	inFlight map[uint64]*lessons.Packet
	// last is the highest Seq handed out: a later event of a settled
	// packet (a duplicate delivered again, a multicast copy) is not a new
	// packet.
	last uint64
}

func (s *Shell) recordPackets(on bool) bool {
	obs, ok := s.prov.(verbs.PacketObserver)
	if !ok {
		return false
	}
	switch {
	case on && s.pkts == nil:
		pl := newPacketLog()
		pl.cancel = obs.ObservePackets(pl.observe)
		s.pkts = pl
	case !on && s.pkts != nil:
		s.pkts.cancel()
		s.pkts = nil
	}
	return true
}

func newPacketLog() *packetLog {
	return &packetLog{sent: map[string]bool{}, inFlight: map[uint64]*lessons.Packet{}}
}

func (pl *packetLog) observe(p verbs.PacketEvent) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	p.Bytes = nil
	pl.events = append(pl.events, p)
}

// drain returns the packets sent since the last drain, each once with its
// last verdict, in the order they were sent. A packet an earlier drain
// returned is not returned again: its verdict is written where it was.
func (pl *packetLog) drain() []lessons.Packet {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	out := []lessons.Packet{}
	at := map[uint64]int{}
	settled := map[uint64]bool{}
	for _, e := range pl.events {
		if p := pl.inFlight[e.Seq]; p != nil {
			p.Dropped = dropVerdict(e.Verdict)
			settled[e.Seq] = e.Verdict != "sent"
			continue
		}
		if e.Seq <= pl.last {
			continue // settled in an earlier cell
		}
		i, seen := at[e.Seq]
		if !seen {
			op := wireOpcode(e.Summary)
			key := e.From + " " + e.Summary
			p := lessons.Packet{Opcode: op}
			if !strings.Contains(op, "ACKNOWLEDGE") && !strings.Contains(op, "READ_RESPONSE") {
				p.Retransmitted = pl.sent[key]
				pl.sent[key] = true
			}
			at[e.Seq] = len(out)
			out = append(out, p)
			i = len(out) - 1
		}
		out[i].Dropped = dropVerdict(e.Verdict)
		settled[e.Seq] = e.Verdict != "sent"
	}
	for seq := range at {
		pl.last = max(pl.last, seq)
	}
	for seq, done := range settled {
		switch i, ok := at[seq]; {
		case done:
			delete(pl.inFlight, seq)
		case ok:
			pl.inFlight[seq] = &out[i]
		}
	}
	pl.events = nil
	return out
}

// dropVerdict reports whether a packet's verdict loses it.
func dropVerdict(v string) bool {
	return strings.HasPrefix(v, "dropped") || strings.HasPrefix(v, "refused")
}

// wireOpcode is the opcode part of a packet's summary: its words before
// the first field (dqpn=...).
func wireOpcode(summary string) string {
	var words []string
	for _, w := range strings.Fields(summary) {
		if strings.Contains(w, "=") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
