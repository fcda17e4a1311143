package sim

import (
	"strings"
	"sync"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// When the socket's send buffer fills in the middle of a batch, sendmmsg
// sends part of it and the rest follows: nothing is dropped.
func TestUDPLinkPartialSendmmsg(t *testing.T) {
	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	mr, err := ea.pd.AllocMR(64, verbs.AccessLocalWrite)
	mustT(t, err)
	mb, err := eb.pd.AllocMR(64*4, verbs.AccessLocalWrite)
	mustT(t, err)
	for i := 0; i < 4; i++ {
		_, err = qb.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: []verbs.SGE{{Addr: mb.Addr() + uint64(64*i), Length: 64, LKey: mb.LKey()}}}})
		mustT(t, err)
	}
	var mu sync.Mutex
	var drops []string
	defer fa.ObservePackets(func(ev verbs.PacketEvent) {
		if ev.From == "sim0" && strings.HasPrefix(ev.Verdict, "dropped") {
			mu.Lock()
			drops = append(drops, ev.Summary+": "+ev.Verdict)
			mu.Unlock()
		}
	})()
	fa.mu.Lock()
	io := fa.carrier.(*udpLink).io
	sendmmsg, partial := io.sendFn, 0
	io.sendFn = func(fd uintptr) bool {
		if partial == 0 && io.sk > 1 { // the kernel takes one, then its buffer is full
			partial, io.sk = io.sk, 1
			r := sendmmsg(fd)
			io.sk = partial
			return r
		}
		return sendmmsg(fd)
	}
	fa.mu.Unlock()
	var wrs []verbs.SendWR
	for i := 0; i < 4; i++ {
		wrs = append(wrs, verbs.SendWR{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
			SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}})
	}
	_, err = qa.PostSend(wrs)
	mustT(t, err)
	if partial == 0 {
		t.Fatal("no batch of more than one datagram was sent")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(drops) > 0 {
		t.Errorf("a partial sendmmsg dropped datagrams: %q", drops)
	}
	if w := waitWC(t, eb, 4); len(w) != 4 {
		t.Errorf("%d receives, want 4", len(w))
	}
}
