package sim

import (
	"net/netip"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// A carrier is what lies beyond the fabric: the devices of other hosts, and
// where time comes from. inProcess, the default, has nothing beyond the
// fabric and lets virtual time pass only when the fabric moves it; udpLink
// (udplink.go) reaches other processes over UDP, in wall-clock time. A
// replay carrier would feed recorded packets and times through the same
// methods. Every method runs under the fabric's lock (api.go).
type carrier interface {
	// elapsed is the time the carrier's world has reached: the fabric's
	// clock moves up to it (never back) before a verb's work.
	elapsed() time.Duration
	// peer returns the stand-in for the device beyond the fabric that
	// answers for g, as seen from d, or nil.
	peer(d *device, g verbs.GID) *device
	// peerErr explains why no peer can answer for g (op and field name
	// the verb and its argument), or returns nil.
	peerErr(op, field string, d *device, g verbs.GID) error
	// peerName returns the canonical name of the device beyond the
	// fabric that name (an address) means, as fault rules match it; or,
	// when name is an address that no such device can have, why not; or
	// two empty strings when name is no address.
	peerName(name string) (canon, why string)
	// unreachable says why no device beyond the fabric can answer for
	// address a, or "" when one may.
	unreachable(a netip.Addr) string
	// peerHint completes "use one of DEVICES" for a fault rule's device:
	// how to name a peer, or "" when there are none.
	peerHint() string
	// send carries p to its destination, a peer's stand-in.
	send(p *packet) error
	// settled is told that a verb's work is done.
	settled()
	// arrivedBy is asked before a timer due at t fires: it queues the
	// packets that reached the fabric by then and are not yet queued, and
	// reports whether one of them is to be delivered before the timer.
	arrivedBy(t time.Duration) bool
	// wait lets up to d pass, in automatic delivery mode, until ready
	// reports true.
	wait(d time.Duration, ready func() bool)
	// idle is an empty poll in automatic delivery mode: the time a program
	// spinning on its CQ lets pass.
	idle(ready func() bool)
	// stop releases what the carrier holds; it runs without the lock.
	stop()
}

// inProcess is the carrier of a fabric on its own: no peers, and virtual
// time that passes only as the fabric's timers and packets fall due.
type inProcess struct{ f *Fabric }

var _ carrier = inProcess{}

func (inProcess) elapsed() time.Duration                           { return 0 }
func (inProcess) peer(*device, verbs.GID) *device                  { return nil }
func (inProcess) peerErr(string, string, *device, verbs.GID) error { return nil }
func (inProcess) peerName(name string) (string, string) {
	if _, err := netip.ParseAddr(strings.TrimSpace(name)); err == nil {
		return "", "this fabric is not on the UDP link, so it has no peers beyond it: start vsh with --sim-addr to reach other hosts"
	}
	return "", ""
}
func (inProcess) peerHint() string              { return "" }
func (inProcess) unreachable(netip.Addr) string { return "" }
func (inProcess) settled()                      {}
func (inProcess) arrivedBy(time.Duration) bool  { return false }
func (inProcess) stop()                         {}

// send is never called: only another carrier makes stand-ins.
func (inProcess) send(p *packet) error {
	return verbs.Errorf("ibv_post_send", eNETUNREACH, "", "%s is beyond this fabric, which has no link to other hosts", p.to.name)
}

// wait lets up to d of virtual time pass, firing timers and delivering
// what they cause, until ready reports true.
func (c inProcess) wait(d time.Duration, ready func() bool) {
	f := c.f
	f.runLocked()
	limit := f.clock.after(d)
	for i := 0; i < idleTimerBudget && !ready(); i++ {
		t, ok := f.nextTimer()
		if !ok || t.at > limit {
			break
		}
		f.fireTimer()
		f.runLocked()
	}
}

// idle lets virtual time move on to the next timers, as real time passes
// while a program spins on ibv_poll_cq.
func (c inProcess) idle(ready func() bool) {
	c.f.runTasks()
	c.wait(idleTimeBudget, ready)
}

// clock is the fabric's time. Only its methods change it, and it never
// goes back.
type clock struct{ t time.Duration }

// now is the time.
func (c *clock) now() time.Duration { return c.t }

// after is the time d from now, or the end of virtual time
// (verbs.MaxVirtualTime) if that comes first.
func (c *clock) after(d time.Duration) time.Duration {
	return c.t + min(max(d, 0), max(verbs.MaxVirtualTime-c.t, 0))
}

// advance moves the clock to t if t is later, and no further than
// verbs.MaxVirtualTime: a packet delayed past the end arrives there.
func (c *clock) advance(t time.Duration) {
	if t > c.t {
		c.t = min(t, verbs.MaxVirtualTime)
	}
}
