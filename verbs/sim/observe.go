package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// observer is one registered PacketObserver callback.
type observer struct {
	id int
	fn func(verbs.PacketEvent)
}

var _ verbs.PacketObserver = (*Fabric)(nil)

// observePackets does ObservePackets's work and returns the id that
// forgetObserver takes.
func (f *Fabric) observePackets(fn func(verbs.PacketEvent)) int {
	f.net.nextObs++
	id := f.net.nextObs
	f.net.observers = append(f.net.observers, observer{id: id, fn: fn})
	return id
}

// forgetObserver removes observer id.
func (f *Fabric) forgetObserver(id int) {
	obs := f.net.observers
	for i, o := range obs {
		if o.id == id {
			f.net.observers = append(obs[:i:i], obs[i+1:]...)
			return
		}
	}
}

// observe tells the observers about a packet on the network. It is small
// enough to be inlined, so that a packet nobody observes costs one test.
func (f *Fabric) observe(p *packet, verdict, why string) {
	if len(f.net.observers) > 0 {
		f.tellObservers(p, verdict, why)
	}
}

func (f *Fabric) tellObservers(p *packet, verdict, why string) {
	if !p.encoded {
		_ = p.encode()
	}
	ev := f.packetEvent(p, verdict, why)
	for _, o := range f.net.observers {
		o.fn(ev)
	}
}

// observeLocal tells the observers about a packet rxe built and handed to
// rxe_xmit_packet but that never reached the network (verdict is
// "dropped: ..." or "refused: ..."). It has a sequence number of its own,
// as every packet handed over does.
func (f *Fabric) observeLocal(p *packet, verdict string) {
	if len(f.net.observers) == 0 {
		return
	}
	_ = p.encode()
	ev := f.packetEvent(p, verdict, "")
	for _, o := range f.net.observers {
		o.fn(ev)
	}
}

// packetEvent describes a packet for observers and fabric events.
func (f *Fabric) packetEvent(p *packet, verdict, why string) verbs.PacketEvent {
	ev := verbs.PacketEvent{
		Seq:     p.seq,
		Time:    f.clock.now(),
		From:    p.from.name,
		To:      p.toName(),
		Summary: wire.Describe(&p.hdr),
		Verdict: verdict,
	}
	if why != "" {
		ev.Verdict = verdict + ": " + why
	}
	if p.encoded {
		ev.Bytes = p.enc
	}
	return ev
}

// discard tells the observers that q's responder dropped p, which the
// network delivered, without a trace on the wire (rxe's silent drops: UC
// and UD class D and E errors, an RC packet out of sequence once its NAK
// went out). The verdict says delivered, then by whom and why.
func (q *qp) discard(p *packet, why string) {
	f := q.fab()
	if len(f.net.observers) == 0 {
		return
	}
	kind := map[verbs.QPType]string{verbs.QPTypeRC: "RC", verbs.QPTypeUC: "UC", verbs.QPTypeUD: "UD",
		verbs.QPTypeXRCSend: "XRC_SEND", verbs.QPTypeXRCRecv: "XRC_RECV"}[q.typ]
	f.tellObservers(p, "delivered, discarded by the "+kind+" responder", why)
}
