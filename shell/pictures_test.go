package shell

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// TestQPDiagramCoversTable: every move verbs.LookupTransition allows is an
// arrow of the diagram or said in its notes, and every arrow is a legal
// move or the device's. Reference: ib_modify_qp_is_ok, as verbs has it.
func TestQPDiagramCoversTable(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, typ := range []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD} {
		o := &object{name: "qp9", qpType: typ, qp: fakeQP{}}
		d := sh.qpStateDiagram(o, verbs.QPSReset)
		drawn := map[[2]string]bool{}
		for _, e := range d.Edges {
			drawn[[2]string{e.From, e.To}] = true
			from, _ := verbs.ParseQPState(strings.ToLower(e.From))
			to, _ := verbs.ParseQPState(strings.ToLower(e.To))
			if _, ok := verbs.LookupTransition(typ, from, to); !ok && !e.Auto {
				t.Errorf("%s: the diagram draws %s → %s, which ibv_modify_qp refuses", typ, e.From, e.To)
			}
		}
		notes := strings.Join(d.Notes, "\n")
		for _, from := range qpStates {
			for _, to := range qpStates {
				if _, ok := verbs.LookupTransition(typ, from, to); !ok {
					continue
				}
				f, tt := stateName(from), stateName(to)
				switch {
				case drawn[[2]string{f, tt}]:
				case from == to:
					if !strings.Contains(notes, "staying put") || !strings.Contains(notes, f) {
						t.Errorf("%s: %s → itself is neither drawn nor noted:\n%s", typ, f, notes)
					}
				case to == verbs.QPSReset || to == verbs.QPSErr:
					if !strings.Contains(notes, "→ "+tt+" from any state") {
						t.Errorf("%s: %s → %s is neither drawn nor noted:\n%s", typ, f, tt, notes)
					}
				default:
					t.Errorf("%s: %s → %s is legal but the diagram does not show it", typ, f, tt)
				}
			}
		}
		if !strings.Contains(notes, "any state but") {
			t.Errorf("%s: the notes do not say RESET → ERR is refused:\n%s", typ, notes)
		}
	}
}

// fakeQP is a QP that only has a number, for the diagram's title.
type fakeQP struct{ verbs.QP }

func (fakeQP) Num() uint32 { return 0x99 }

func TestNotePath(t *testing.T) {
	o := &object{}
	for _, st := range []verbs.QPState{verbs.QPSInit, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS, verbs.QPSErr} {
		o.notePath(st)
	}
	if got, want := o.pathString(), "RESET → INIT → RTR → RTS → ERR"; got != want {
		t.Errorf("path = %q; want %q", got, want)
	}
	for i := 0; i < 1000; i++ {
		o.notePath(verbs.QPSReset)
		o.notePath(verbs.QPSInit)
	}
	if len(o.path) > maxQPPath || !o.pathCut || !strings.HasPrefix(o.pathString(), "… → ") {
		t.Errorf("path not bounded: %d states, cut %v: %s", len(o.path), o.pathCut, o.pathString())
	}
}

// packetEvent encodes a packet as the simulator reports it.
func packetEvent(t *testing.T, seq uint64, from, to string, p wire.Packet, verdict string) verbs.PacketEvent {
	t.Helper()
	n := wire.Network{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2")}
	b, err := p.Append(nil, &n)
	if err != nil {
		t.Fatal(err)
	}
	return verbs.PacketEvent{Seq: seq, Time: time.Duration(seq) * time.Microsecond, From: from, To: to, Bytes: b,
		Summary: wire.Describe(&p), Verdict: verdict}
}

// TestWireLog: verdicts update a packet in place, a request sent again is
// a retransmission, packets go to the cell that ends next, and the log
// keeps the last maxWireLog packets however many pass.
func TestWireLog(t *testing.T) {
	wl := newWireLog()
	send := wire.Packet{BTH: wire.BTHFields{Opcode: wire.RCSendOnly, PKey: wire.DefaultPKey, DestQP: 0x11, PSN: 5, AckReq: true},
		Payload: []byte("ping")}
	wl.observe(packetEvent(t, 1, "sim0", "sim1", send, "sent"))
	wl.observe(packetEvent(t, 1, "sim0", "sim1", send, "dropped: fault rule 1 (drop)"))
	wl.endCell(7)
	wl.observe(packetEvent(t, 2, "sim0", "sim1", send, "delivered"))
	wl.endCell(8)
	got := wl.last(0)
	if len(got) != 2 || !got[0].dropped() || got[0].resent || !got[1].resent || got[0].cell != 7 || got[1].cell != 8 {
		t.Fatalf("log = %+v", got)
	}
	if got[0].payload != 4 || got[0].opName() != "SEND_ONLY" {
		t.Errorf("decoded: payload %d, opcode %s", got[0].payload, got[0].opName())
	}
	if last := wl.lastCell(); len(last) != 1 || last[0].seq != 2 {
		t.Errorf("lastCell = %+v", last)
	}
	for i := uint64(3); i < 3*maxWireLog; i++ {
		send.BTH.PSN = wire.PSN(i)
		wl.observe(packetEvent(t, i, "sim0", "sim1", send, "delivered"))
	}
	if wl.size() != maxWireLog || len(wl.pkts) > maxWireLog+maxWireLog/4 || len(wl.bySeq) != len(wl.pkts) ||
		len(wl.sent) > len(wl.pkts) {
		t.Errorf("log not bounded: %d packets, %d by seq, %d keys", len(wl.pkts), len(wl.bySeq), len(wl.sent))
	}
	if n := len(wl.last(10)); n != 10 {
		t.Errorf("last(10) = %d packets", n)
	}
}
