package sim

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// An ACK that reached the link's socket before the sender's retransmit
// timer fell due is delivered before the timer fires, however late the
// fabric gets to it: rxe handles each packet as it comes. The sender's
// fabric is held (its lock taken) from the SEND until past the timer's
// deadline, after the receiver has sent its ACK, so that the ACK waits on
// the socket; then either a verb runs the fabric without polling (verb) or
// the link reads the socket and runs it (poll). Either way the SEND must leave once: a second copy is a
// retransmission the ACK had made needless.
func TestUDPLinkACKBeforeRetransmitTimer(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  func(l *udpLink)
	}{
		{"verb", func(l *udpLink) { l.f.afterVerb() }},
		{"poll", func(l *udpLink) { l.pollLocked() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb := newUDPFabric(t), newUDPFabric(t)
			ea, eb := udpEnv(t, fa), udpEnv(t, fb)
			qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
			// Timeout 16 (268 ms): time enough for the ACK to come back
			// before the deadline on a loaded machine.
			connectRCTimeout(t, ea, eb, qa, qb, verbs.MTU1024, 16)
			mr, err := ea.pd.AllocMR(64, verbs.AccessLocalWrite)
			mustT(t, err)
			mb, err := eb.pd.AllocMR(64, verbs.AccessLocalWrite)
			mustT(t, err)
			_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 64, LKey: mb.LKey()}}}})
			mustT(t, err)
			var sends, acks atomic.Int32
			acked := make(chan time.Time, 1) // when B sent its ACK
			defer fb.ObservePackets(func(ev verbs.PacketEvent) {
				if ev.From == "sim0" && ev.Verdict == "sent" && strings.Contains(ev.Summary, "ACK") {
					select {
					case acked <- time.Now():
					default:
					}
				}
			})()
			defer fa.ObservePackets(func(ev verbs.PacketEvent) {
				switch {
				case ev.From == "sim0" && ev.Verdict == "sent" && strings.Contains(ev.Summary, "SEND"):
					sends.Add(1)
				case ev.To == "sim0" && ev.Verdict == "delivered" && strings.Contains(ev.Summary, "ACK"):
					acks.Add(1)
				}
			})()
			wr := verbs.SendWR{WRID: 7, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
				SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}
			fa.mu.Lock()
			l := fa.carrier.(*udpLink)
			fa.mu.Unlock()
			// The lock is taken at once after the SEND, before the ACK can
			// come back across the loopback and be read.
			_, err = qa.PostSend([]verbs.SendWR{wr})
			fa.mu.Lock()
			if err != nil {
				fa.mu.Unlock()
				t.Fatal(err)
			}
			if n := acks.Load(); n != 0 {
				fa.mu.Unlock()
				t.Skipf("the ACK was read before the fabric was held (%d); nothing to test", n)
			}
			at, ok := l.timerWall()
			if !ok {
				fa.mu.Unlock()
				t.Fatal("the SEND armed no retransmit timer")
			}
			var ackAt time.Time
			select {
			case ackAt = <-acked:
			case <-time.After(10 * time.Second):
				fa.mu.Unlock()
				t.Fatal("B sent no ACK within 10 s")
			}
			if !ackAt.Before(at) {
				fa.mu.Unlock()
				t.Skipf("B's ACK left %v after the deadline (a loaded machine): the retransmission is due", ackAt.Sub(at))
			}
			time.Sleep(time.Until(at) + 20*time.Millisecond) // past the deadline
			tt.run(l)
			fa.mu.Unlock()
			if w := waitWC(t, ea, 1); w[0].Status != verbs.WCSuccess {
				t.Fatalf("the SEND completed with %v", w[0].Status)
			}
			if n := sends.Load(); n != 1 {
				t.Errorf("the SEND left %d times, want once: the retransmit timer fired before the ACK waiting on the socket was delivered", n)
			}
		})
	}
}
