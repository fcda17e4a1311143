package interop

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// counters reads the kernel device's hardware counters (rxe's names).
// ib_core shows them in sysfs in the initial network namespace only; from
// the simulator's, they are read through the root of process 1, which is
// there.
func (w *labWire) counters(t *testing.T) map[string]int64 {
	t.Helper()
	var ents []os.DirEntry
	var dir string
	var err error
	for _, root := range []string{"", "/proc/1/root"} {
		dir = root + "/sys/class/infiniband/" + w.dev + "/ports/1/hw_counters/"
		if ents, err = os.ReadDir(dir); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]int64{}
	for _, e := range ents {
		b, err := os.ReadFile(dir + e.Name())
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			c[e.Name()] = v
		}
	}
	return c
}

// faultCase is a fault the simulator makes on its side of the wire, and
// what the kernel must do about it.
type faultCase struct {
	name    string
	rule    func(w *labWire) verbs.FaultRule
	fromSim bool // the simulator sends the message, else the kernel
	size    int  // the SEND's length (MTU 1024)
	retry   uint8
	timeout uint8
	status  verbs.WCStatus // the sender's completion
	// want gives, from the simulator's trace, how far each of the
	// kernel's counters must have moved; the trace must show the fault.
	want func(tr trace) map[string]int64
}

// trace is the simulator's packet trace, one "FROM > TO SUMMARY: VERDICT"
// line per event.
type trace []string

// count returns the number of packets whose event contains every one of
// subs: the second event of a packet that a QP discarded after its
// delivery is not counted again.
func (tr trace) count(subs ...string) int64 {
	var n int64
next:
	for _, e := range tr {
		if strings.Contains(e, ": delivered, discarded") {
			continue
		}
		for _, s := range subs {
			if !strings.Contains(e, s) {
				continue next
			}
		}
		n++
	}
	return n
}

// TestFaults makes faults on the simulator's side of the wire — a kernel
// packet dropped on arrival, an ACK of its own dropped, a request
// duplicated, a packet of a message lost either way, the link cut — and
// checks that kernel rxe1 recovers as RoCEv2 says: its own counters
// (/sys/class/infiniband/rxe1/ports/1/hw_counters) against what the
// simulator's trace shows it did, and the completions on both sides.
//
// rxe counts a retry of the requester's (completer_retry_err) for every
// timeout or sequence NAK it acts on, a sequence NAK it receives
// (rcvd_seq_err) only when that NAK acknowledges something, and on the
// responder one out-of-sequence request per NAK it sends
// (out_of_seq_request) and every duplicate it gets (duplicate_request).
func TestFaults(t *testing.T) {
	w := needWire(t)
	fam := w.families()[0] // IPv6
	k := w.kernel6.String()
	cases := []faultCase{
		{name: "the kernel's SEND dropped on arrival: it retransmits",
			rule: func(w *labWire) verbs.FaultRule {
				return verbs.FaultRule{Action: verbs.FaultDrop, From: k, Opcode: "SEND_ONLY", Count: 1}
			},
			size: 100, retry: 7, timeout: 12, status: verbs.WCSuccess,
			want: func(tr trace) map[string]int64 {
				return map[string]int64{
					"completer_retry_err": tr.count(k+" > sim0", "SEND_ONLY") - 1, // every copy after the first
					"retry_exceeded_err":  0,
					"_dropped on arrival": tr.count("fault rule 1 (drop), on arrival"),
				}
			}},
		{name: "the simulator's ACK dropped: the kernel retransmits, the simulator acknowledges the duplicate",
			rule: func(w *labWire) verbs.FaultRule {
				return verbs.FaultRule{Action: verbs.FaultDrop, From: "sim0", Opcode: "ACKNOWLEDGE", Count: 1}
			},
			size: 100, retry: 7, timeout: 12, status: verbs.WCSuccess,
			want: func(tr trace) map[string]int64 {
				return map[string]int64{
					"completer_retry_err": tr.count(k+" > sim0", "SEND_ONLY") - 1,
					"_ACK dropped":        tr.count("ACKNOWLEDGE", "fault rule 1 (drop)"),
				}
			}},
		{name: "the simulator's SEND duplicated: the kernel's responder counts the duplicate",
			rule: func(w *labWire) verbs.FaultRule {
				return verbs.FaultRule{Action: verbs.FaultDuplicate, From: "sim0", Opcode: "SEND_ONLY", Count: 1}
			},
			fromSim: true, size: 100, retry: 7, timeout: 14, status: verbs.WCSuccess,
			want: func(tr trace) map[string]int64 {
				return map[string]int64{
					// the copies sent after the first, and the one the rule made
					"duplicate_request":  tr.count("sim0 > "+k, "SEND_ONLY", ": sent") - 1 + 1,
					"out_of_seq_request": 0,
				}
			}},
		{name: "the kernel's SEND_MIDDLE dropped on arrival: a sequence NAK, then Go-Back-N",
			rule: func(w *labWire) verbs.FaultRule {
				return verbs.FaultRule{Action: verbs.FaultDrop, From: k, Opcode: "SEND_MIDDLE", Count: 1}
			},
			size: 4000, retry: 7, timeout: 14, status: verbs.WCSuccess,
			want: func(tr trace) map[string]int64 {
				naks := tr.count("sim0 > "+k, "NAK(PSN_SEQUENCE_ERROR)", ": sent")
				return map[string]int64{"rcvd_seq_err": naks, "_NAKs sent": naks, "retry_exceeded_err": 0}
			}},
		{name: "the simulator's SEND_FIRST lost: the kernel's responder NAKs what follows",
			rule: func(w *labWire) verbs.FaultRule {
				return verbs.FaultRule{Action: verbs.FaultDrop, From: "sim0", Opcode: "SEND_FIRST", Count: 1}
			},
			fromSim: true, size: 4000, retry: 7, timeout: 14, status: verbs.WCSuccess,
			want: func(tr trace) map[string]int64 {
				naks := tr.count(k+" > sim0", "NAK(PSN_SEQUENCE_ERROR)")
				return map[string]int64{"out_of_seq_request": naks, "_NAKs received": naks}
			}},
		{name: "the link cut: the kernel retries retry_cnt times, then IBV_WC_RETRY_EXC_ERR",
			rule: func(w *labWire) verbs.FaultRule { return verbs.FaultRule{Action: verbs.FaultCut} },
			size: 100, retry: 3, timeout: 10, status: verbs.WCRetryExcErr,
			want: func(tr trace) map[string]int64 {
				return map[string]int64{
					"completer_retry_err": tr.count(k+" > sim0", "SEND_ONLY", "(cut), on arrival") - 1, // 3
					"retry_exceeded_err":  1,
				}
			}},
	}
	passed := 0
	for _, c := range cases {
		ok := t.Run(c.name, func(t *testing.T) {
			p := w.connectPair(t, fam, c.retry, c.timeout)
			p.sim.call(t, request{Op: "fault", Fault: c.rule(w)})
			sender, receiver, peer := p.kernel, p.sim, p.simEnd
			if c.fromSim {
				sender, receiver, peer = p.sim, p.kernel, p.kernelEnd
			}
			receiver.call(t, request{Op: "post_recv", Off: 32768, Len: 8192})
			sender.call(t, request{Op: "pattern", Off: 0, Len: c.size, Seed: 5})
			before := w.counters(t)
			rep := sender.call(t, request{Op: "post", Peer: peer, WR: wrSpec{Opcode: verbs.WRSend, Off: 0, Len: c.size}, Wait: 20 * time.Second})
			if st := rep.WCs[0].Status; st != c.status {
				t.Errorf("the sender's completion: %v, want %v", st, c.status)
			}
			recv := receiver.call(t, request{Op: "drain", Wait: 300 * time.Millisecond}).WCs
			wantRecv := 0
			if c.status == verbs.WCSuccess {
				wantRecv = 1
			}
			if len(recv) != wantRecv || wantRecv == 1 && (recv[0].Status != verbs.WCSuccess || recv[0].ByteLen != uint32(c.size)) {
				t.Errorf("the receiver's completions: %+v, want %d successful receive(s) of %d bytes", recv, wantRecv, c.size)
			}
			after := w.counters(t)
			var moved []string
			for k := range after {
				if d := after[k] - before[k]; d != 0 {
					moved = append(moved, fmt.Sprintf("%s +%d", k, d))
				}
			}
			sort.Strings(moved)
			t.Logf("%s's counters moved: %s", w.dev, strings.Join(moved, ", "))
			tr := trace(p.sim.call(t, request{Op: "events"}).Events)
			for name, want := range c.want(tr) {
				if what, ok := strings.CutPrefix(name, "_"); ok {
					// the fault itself, in the simulator's trace
					if want < 1 {
						t.Errorf("the simulator's trace shows no %s", what)
					}
					continue
				}
				if _, ok := after[name]; !ok {
					t.Errorf("%s has no counter %s", w.dev, name)
				} else if d := after[name] - before[name]; d != want || want < 0 {
					t.Errorf("%s: %s moved by %d; the simulator's trace says %d", w.dev, name, d, want)
				}
			}
			if t.Failed() {
				t.Logf("the simulator's trace:\n%s", strings.Join(tr, "\n"))
			}
		})
		if ok {
			passed++
		}
	}
	fmt.Printf("RXE↔SIM faults seen by %s: %d of %d cases passed\n", w.dev, passed, len(cases))
}
