package sim

import (
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// Fault injection: rules that act on packets as they are put on the
// network, loopback included (rxe's loopback never touches a wire; the
// simulator lets faults act on it so that lessons on one device can lose
// packets too).
//
// Every rule whose matchers all match acts on the packet, in the order the
// rules were added: drop and cut end the packet's journey; duplicate
// delivers a second copy; reorder holds the packet back until the next
// packet is sent and delivers it after that one; delay adds Delay to its
// arrival; corrupt flips one bit of its payload (or, without payload, of its
// last header byte) in the encoded bytes, leaving the ICRC as it was, so
// the receiver's ICRC check drops it. A rule with Probability acts on each
// matching packet with that probability, drawn from a source seeded by
// Config.Seed (a stream of its own, so that faults do not change the keys
// and addresses the fabric hands out).

var _ verbs.FaultInjector = (*Fabric)(nil)

// addFault does AddFault's work.
func (f *Fabric) addFault(r verbs.FaultRule) (int, error) {
	const op = "fault"
	if int(r.Action) < 0 || int(r.Action) >= len(verbs.FaultActionNames()) {
		return 0, verbs.Errorf(op, verbs.EINVAL, "use one of "+strings.Join(verbs.FaultActionNames(), ", "),
			"unknown fault action %d", int(r.Action))
	}
	if r.Probability < 0 || r.Probability > 1 || r.Probability != r.Probability {
		return 0, verbs.Errorf(op, verbs.EINVAL, "give a probability between 0 and 1, e.g. 0.1 for 10%",
			"probability %v is not between 0 and 1", r.Probability)
	}
	if r.Nth < 0 || r.Count < 0 {
		return 0, verbs.Errorf(op, verbs.EINVAL, "nth and count count packets: use 1 or more (0 for no limit)",
			"nth %d and count %d must not be negative", r.Nth, r.Count)
	}
	if r.Action == verbs.FaultDelay && r.Delay <= 0 {
		return 0, verbs.Errorf(op, verbs.EINVAL, "give the delay, e.g. delay=100us",
			"a delay rule needs a positive Delay (got %v)", r.Delay)
	}
	if r.Action != verbs.FaultDelay && r.Delay != 0 {
		return 0, verbs.Errorf(op, verbs.EINVAL, "use action delay to delay packets",
			"Delay is only for the delay action, not %s", r.Action)
	}
	if r.HasPSN && r.PSN > wire.PSNMask {
		return 0, verbs.Errorf(op, verbs.EINVAL, "PSNs have 24 bits: 0 to 0xffffff", "PSN %#x does not fit 24 bits", r.PSN)
	}
	for _, dev := range []*string{&r.From, &r.To} {
		if *dev == "" || f.deviceByName(*dev) != nil || dev == &r.To && f.mcastName(*dev) {
			continue // no device, one of this fabric's, or a multicast group packets go to
		}
		name, why := f.carrier.peerName(*dev)
		switch {
		case name != "" && dev == &r.From && (r.Action == verbs.FaultDelay || r.Action == verbs.FaultReorder):
			return 0, verbs.Errorf(op, verbs.EINVAL, "drop, duplicate or corrupt the peer's packets, or "+r.Action.String()+" them on the peer's side",
				"a peer's packets arrive in real time, when their datagrams do: %s cannot act on them here", r.Action)
		case name != "":
			*dev = name // a peer beyond the UDP link, by its address
		case why != "":
			return 0, verbs.Errorf(op, verbs.ENODEV, "name a device of this fabric or a peer's address the link reaches",
				"there is no device %q: %s", *dev, why)
		default:
			names := make([]string, len(f.devs))
			for i, d := range f.devs {
				names[i] = d.name
			}
			return 0, verbs.Errorf(op, verbs.ENODEV, "use one of "+strings.Join(names, ", ")+f.carrier.peerHint(),
				"there is no device %q on this fabric", *dev)
		}
	}
	if r.Opcode != "" && !opcodeTextKnown(r.Opcode) {
		return 0, verbs.Errorf(op, verbs.EINVAL, "use part of an opcode name, e.g. SEND_ONLY, RDMA_WRITE, ACKNOWLEDGE, READ_RESPONSE or \"UD SEND\"",
			"no opcode's name contains %q", r.Opcode)
	}
	f.net.nextFault++
	r.ID = f.net.nextFault
	r.Hits = 0
	f.net.faults = append(f.net.faults, r)
	f.net.faultHits = append(f.net.faultHits, 0)
	return r.ID, nil
}

// removeFault does RemoveFault's work.
func (f *Fabric) removeFault(id int) error {
	for i, r := range f.net.faults {
		if r.ID == id {
			f.dropFault(i)
			return nil
		}
	}
	return verbs.Errorf("fault", verbs.ENOENT, "list the rules with faults", "there is no fault rule %d", id)
}

// dropFault removes rule i of the list.
func (f *Fabric) dropFault(i int) {
	n := &f.net
	n.faults = append(n.faults[:i], n.faults[i+1:]...)
	n.faultHits = append(n.faultHits[:i], n.faultHits[i+1:]...)
}

// clearFaults does ClearFaults's work.
func (f *Fabric) clearFaults() {
	f.net.faults = f.net.faults[:0]
	f.net.faultHits = f.net.faultHits[:0]
}

func (f *Fabric) deviceByName(name string) *device {
	for _, d := range f.devs {
		if d.name == name {
			return d
		}
	}
	return nil
}

// mcastName reports whether name is a multicast GID (a To for multicast).
func (f *Fabric) mcastName(name string) bool {
	g, err := verbs.ParseGID(name)
	return err == nil && g.IsMulticast()
}

// opcodeTextKnown reports whether some opcode's name contains s.
func opcodeTextKnown(s string) bool {
	for _, op := range wire.Opcodes() {
		if op.Matches(s) {
			return true
		}
	}
	return false
}

// applyFaults lets the rules act on p. It returns why p is dropped ("" if
// it is not) and whether it is duplicated; reorder, delay and corrupt are
// recorded in p. A packet arriving from beyond the fabric (a peer's, on
// the UDP link) comes in real time, when its datagram does: delay and
// reorder rules pass it by.
func (f *Fabric) applyFaults(p *packet, arriving bool) (drop string, dup bool) {
	n := &f.net
	retire := false
	for i := range n.faults {
		r := &n.faults[i]
		if arriving && (r.Action == verbs.FaultDelay || r.Action == verbs.FaultReorder) {
			continue
		}
		if !f.faultMatches(r, p) {
			continue
		}
		n.faultHits[i]++
		if r.Nth > 0 && n.faultHits[i] != r.Nth {
			continue
		}
		if r.Probability > 0 && r.Probability < 1 && n.faultRng.Float64() >= r.Probability {
			continue
		}
		r.Hits++
		if r.Count > 0 && r.Hits >= r.Count {
			retire = true
		}
		switch r.Action {
		case verbs.FaultDrop, verbs.FaultCut:
			drop = "fault rule " + itoa(r.ID) + " (" + r.Action.String() + ")"
		case verbs.FaultDuplicate:
			dup = true
		case verbs.FaultReorder:
			p.held = true
		case verbs.FaultDelay:
			p.at = min(p.at+min(r.Delay, verbs.MaxVirtualTime), verbs.MaxVirtualTime)
		case verbs.FaultCorrupt:
			p.corrupt = true
		}
		if drop != "" {
			break
		}
	}
	if retire {
		// Rules that acted Count times are retired.
		for i := len(n.faults) - 1; i >= 0; i-- {
			if r := &n.faults[i]; r.Count > 0 && r.Hits >= r.Count {
				f.dropFault(i)
			}
		}
	}
	if drop != "" {
		p.held, p.corrupt = false, false
		dup = false
	}
	return drop, dup
}

func (f *Fabric) faultMatches(r *verbs.FaultRule, p *packet) bool {
	if r.From != "" && r.From != p.from.name {
		return false
	}
	if r.To != "" && r.To != p.toName() && !(p.mcast && f.mcastName(r.To) && mustGID(r.To) == p.dgid) {
		return false
	}
	if r.HasPSN && uint32(p.hdr.BTH.PSN) != r.PSN {
		return false
	}
	if r.Opcode != "" && !p.hdr.BTH.Opcode.Matches(r.Opcode) {
		return false
	}
	return true
}

func mustGID(s string) verbs.GID {
	g, _ := verbs.ParseGID(s)
	return g
}
