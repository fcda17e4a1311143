package sim

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// socketWaits counts the times a goroutine starts waiting on f's socket.
func socketWaits(f *Fabric) *atomic.Int64 {
	var n atomic.Int64
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.carrier.(*udpLink)
	check := l.waitCheck
	l.waitFn = func(fd uintptr) bool {
		if l.waitFirst {
			n.Add(1)
		}
		return check(fd)
	}
	return &n
}

// A program that left the fabric alone (the keeper took the socket) and
// then waits for a completion event takes the socket over once and waits
// on it, not over and over.
func TestUDPLinkGetEventAfterQuiet(t *testing.T) {
	f := newUDPFabric(t)
	n := socketWaits(f)
	e := udpEnv(t, f)
	ch, err := e.ctx.CreateCompChannel()
	mustT(t, err)
	cq, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 16, Channel: ch})
	mustT(t, err)
	mustT(t, cq.ReqNotify(false))
	waitFor(t, "the keeper on the socket", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		l := f.carrier.(*udpLink)
		return l.sockHeld && l.sockKeeper
	})
	before := n.Load()
	if _, err := ch.GetEvent(300 * time.Millisecond); err == nil {
		t.Fatal("GetEvent found an event where there was none")
	}
	if waits := n.Load() - before; waits > 10 {
		t.Errorf("a GetEvent of 300 ms with nothing to wait for waited on the socket %d times; want a few", waits)
	}
}

// A timer armed in step mode fires once the fabric is back in automatic
// mode, though the program does nothing more.
func TestUDPLinkTimersAfterStepMode(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	a, err := newWriteSide(benchContext(t, fa), 64, 1)
	mustT(t, err)
	b, err := newWriteSide(benchContext(t, fb), 64, 1)
	mustT(t, err)
	mustT(t, a.connectTimeout(b.qp.Num(), b.gid, 10)) // b stays in INIT: no ACK, ever
	var sent atomic.Int64
	defer fa.ObservePackets(func(ev verbs.PacketEvent) {
		if ev.Verdict == "sent" && ev.From == "sim0" {
			sent.Add(1)
		}
	})()
	fa.SetDeliveryMode(verbs.DeliverStep)
	_, err = a.qp.PostSend([]verbs.SendWR{{Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: a.mr.Addr(), Length: 64, LKey: a.mr.LKey()}}}})
	mustT(t, err)
	fa.Run()
	fa.SetDeliveryMode(verbs.DeliverAuto)
	s0 := sent.Load()
	waitFor(t, "a retransmission in automatic mode", func() bool { return sent.Load() > s0 })
}
