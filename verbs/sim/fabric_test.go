package sim

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// trace records observed packet events.
type trace struct {
	evs   []verbs.PacketEvent
	bytes [][]byte
}

func (tr *trace) observe(f *Fabric) func() {
	return f.ObservePackets(func(e verbs.PacketEvent) {
		tr.evs = append(tr.evs, e)
		tr.bytes = append(tr.bytes, append([]byte(nil), e.Bytes...))
	})
}

// lines returns "verdict summary" for every event whose verdict starts
// with one of the prefixes.
func (tr *trace) lines(prefix ...string) []string {
	var out []string
	for _, e := range tr.evs {
		line := e.Verdict + " " + e.Summary
		for _, p := range prefix {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// psns returns the PSNs of the packets sent whose summary contains op.
func (tr *trace) psns(verdict, op string) []uint32 {
	var out []uint32
	for i, e := range tr.evs {
		if strings.HasPrefix(e.Verdict, verdict) && strings.Contains(e.Summary, op) {
			out = append(out, uint32(wire.BTH(tr.bytes[i]).PSN()))
		}
	}
	return out
}

func mrOf(b *bed, d, n int) verbs.MR {
	m, err := b.pd[d].AllocMR(n, verbs.AccessLocalWrite|verbs.AccessRemote)
	b.must(err)
	return m
}

func sg(m verbs.MR, off, n int) []verbs.SGE {
	return []verbs.SGE{{Addr: m.Addr() + uint64(off), Length: uint32(n), LKey: m.LKey()}}
}

// TestObserverBytes: an observer sees every packet as RoCEv2 bytes whose
// ICRC checks under the framing rxe would use, in the order sent.
func TestObserverBytes(t *testing.T) {
	b := newBed(t, Config{})
	var tr trace
	defer tr.observe(b.f)()
	x, y := b.pair(0, 1, qpOpts{})
	src, dst := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
	fill(src.Bytes()[:3000], 5)
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 4096)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 3000)}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
		t.Fatalf("send completions %+v", wcs)
	}
	// The three request packets leave at once; each is delivered after
	// crossing the links; the ACK of the last comes back.
	want := []string{
		"sent RC SEND_FIRST", "sent RC SEND_MIDDLE", "sent RC SEND_LAST",
		"delivered RC SEND_FIRST", "delivered RC SEND_MIDDLE", "delivered RC SEND_LAST",
		"sent RC ACKNOWLEDGE", "delivered RC ACKNOWLEDGE",
	}
	got := tr.lines("sent", "delivered")
	if len(got) != len(want) {
		t.Fatalf("events:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d = %q, want %q...", i, got[i], want[i])
		}
	}
	for i, e := range tr.evs {
		var p wire.Packet
		if err := wire.Decode(tr.bytes[i], &p); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if s := wire.Describe(&p); s != e.Summary {
			t.Errorf("event %d: bytes describe as %q, summary %q", i, s, e.Summary)
		}
		srcQP := x.Num()
		if p.BTH.Opcode == wire.RCAcknowledge {
			srcQP = y.Num()
		}
		from, to := b.gids[0], b.gids[1]
		if e.From == "sim1" {
			from, to = to, from
		}
		n := wire.Network{Src: netip.AddrFrom16(from), Dst: netip.AddrFrom16(to), SrcPort: wire.SourcePort(srcQP)}
		if err := wire.VerifyICRC(tr.bytes[i], &n); err != nil {
			t.Errorf("event %d (%s): %v", i, e.Summary, err)
		}
		if e.Seq == 0 || e.From == "" || e.To == "" {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	if !bytes.Equal(src.Bytes()[:3000], dst.Bytes()[:3000]) {
		t.Errorf("data differs")
	}
}

// TestCorruptFault: a flipped bit fails the receiver's ICRC check; the
// retransmission gets through.
func TestCorruptFault(t *testing.T) {
	b := newBed(t, Config{})
	var tr trace
	defer tr.observe(b.f)()
	x, y := b.pair(0, 1, qpOpts{timeout: 8, retry: 3})
	src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
	fill(src.Bytes()[:100], 9)
	if _, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultCorrupt, Opcode: "SEND_ONLY", Count: 1}); err != nil {
		t.Fatal(err)
	}
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 100)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 100)}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
		t.Fatalf("send completions %+v", wcs)
	}
	drops := tr.lines("dropped")
	if len(drops) != 1 || !strings.Contains(drops[0], "bad ICRC") {
		t.Errorf("drops %q, want one bad ICRC", drops)
	}
	if !bytes.Equal(src.Bytes()[:100], dst.Bytes()[:100]) {
		t.Errorf("data differs")
	}
	if len(b.f.Faults()) != 0 {
		t.Errorf("rule with count 1 not retired: %+v", b.f.Faults())
	}
}

// TestGoBackNResumes: a lost packet in the middle of a message is NAKed
// (PSN sequence error, carrying the PSN expected) and the requester
// resumes from that PSN, inside the WQE, as rxe's req_retry does.
func TestGoBackNResumes(t *testing.T) {
	b := newBed(t, Config{})
	var tr trace
	defer tr.observe(b.f)()
	o := qpOpts{startPSN: 100, retry: 7}
	x, y := b.pair(0, 1, o)
	src, dst := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
	fill(src.Bytes()[:5000], 1)
	if _, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, PSN: 102, HasPSN: true, From: "sim0", Count: 1}); err != nil {
		t.Fatal(err)
	}
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8192)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 5000)}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
		t.Fatalf("send completions %+v", wcs)
	}
	got := tr.psns("sent", "SEND")
	want := []uint32{100, 101, 102, 103, 104, 102, 103, 104}
	if len(got) != len(want) {
		t.Fatalf("PSNs sent %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PSNs sent %v, want %v", got, want)
		}
	}
	naks := tr.lines("sent RC ACKNOWLEDGE")
	if len(naks) == 0 || !strings.Contains(strings.Join(naks, "\n"), "NAK") {
		t.Errorf("no NAK: %q", naks)
	}
	if !bytes.Equal(src.Bytes()[:5000], dst.Bytes()[:5000]) {
		t.Errorf("data differs")
	}
}

// TestDuplicateReadReplays: a lost READ response makes the requester ask
// again for the rest; the responder, seeing a duplicate READ, answers it
// again from its resource — from the PSN asked.
func TestDuplicateReadReplays(t *testing.T) {
	b := newBed(t, Config{})
	var tr trace
	defer tr.observe(b.f)()
	x, _ := b.pair(0, 1, qpOpts{startPSN: 10, access: verbs.AccessRemote, timeout: 8, retry: 3})
	local, remote := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
	fill(remote.Bytes()[:3000], 3)
	if _, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "READ_RESPONSE_MIDDLE", Count: 1}); err != nil {
		t.Fatal(err)
	}
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled, SGList: sg(local, 0, 3000),
		RemoteAddr: remote.Addr(), RKey: remote.RKey()}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess || wcs[0].ByteLen != 3000 {
		t.Fatalf("read completions %+v", wcs)
	}
	if !bytes.Equal(local.Bytes()[:3000], remote.Bytes()[:3000]) {
		t.Errorf("data differs")
	}
	reqs := tr.lines("sent RC RDMA_READ_REQUEST")
	if len(reqs) != 2 || !strings.Contains(reqs[1], "psn=0x00000b") || !strings.Contains(reqs[1], "dlen=1976") {
		t.Errorf("READ requests %q; want the second from PSN 11 for the 1976 bytes left", reqs)
	}
	resp := tr.psns("sent", "READ_RESPONSE")
	want := []uint32{10, 11, 12, 11, 12}
	if len(resp) != len(want) {
		t.Fatalf("responses %v, want %v", resp, want)
	}
	for i := range want {
		if resp[i] != want[i] {
			t.Fatalf("responses %v, want %v", resp, want)
		}
	}
}

// TestDuplicateAtomicAnsweredFromSavedResult: when the ATOMIC ACK is lost,
// the retried atomic is a duplicate; the responder answers with the
// original value it saved and does not add again.
func TestDuplicateAtomicAnsweredFromSavedResult(t *testing.T) {
	b := newBed(t, Config{})
	x, _ := b.pair(0, 1, qpOpts{access: verbs.AccessRemote, timeout: 8, retry: 3})
	local, remote := mrOf(b, 0, 64), mrOf(b, 1, 64)
	binary.LittleEndian.PutUint64(remote.Bytes()[8:], 1000)
	if _, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultDrop, Opcode: "ATOMIC_ACKNOWLEDGE", Count: 1}); err != nil {
		t.Fatal(err)
	}
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled, SGList: sg(local, 0, 8),
		RemoteAddr: remote.Addr() + 8, RKey: remote.RKey(), CompareAdd: 5}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
		t.Fatalf("completions %+v", wcs)
	}
	if v := binary.LittleEndian.Uint64(remote.Bytes()[8:]); v != 1005 {
		t.Errorf("remote = %d, want 1005 (added once)", v)
	}
	if v := binary.LittleEndian.Uint64(local.Bytes()); v != 1000 {
		t.Errorf("original = %d, want 1000", v)
	}
}

// TestFaultRules covers the matchers and actions.
func TestFaultRules(t *testing.T) {
	b := newBed(t, Config{})
	for _, bad := range []verbs.FaultRule{
		{Action: verbs.FaultAction(99)},
		{Action: verbs.FaultDrop, Probability: 1.5},
		{Action: verbs.FaultDelay},
		{Action: verbs.FaultDrop, Delay: time.Millisecond},
		{Action: verbs.FaultDrop, From: "sim9"},
		{Action: verbs.FaultDrop, Opcode: "NO_SUCH_OP"},
		{Action: verbs.FaultDrop, Nth: -1},
	} {
		if _, err := b.f.AddFault(bad); err == nil {
			t.Errorf("AddFault(%+v) accepted", bad)
		} else if _, ok := verbs.AsError(err); !ok {
			t.Errorf("AddFault error %v is not a *verbs.Error", err)
		}
	}
	var tr trace
	defer tr.observe(b.f)()
	id, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultDuplicate, Opcode: "send_only", Nth: 2})
	b.must(err)
	x, y := b.pair(0, 1, qpOpts{})
	src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
	for i := 0; i < 3; i++ {
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: uint64(i), SGList: sg(dst, i*100, 100)}})))
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: uint64(i), Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 10)}})))
	}
	b.drain(b.cq[0], 3)
	rules := b.f.Faults()
	if len(rules) != 1 || rules[0].ID != id || rules[0].Hits != 1 {
		t.Errorf("rules %+v, want rule %d with 1 hit", rules, id)
	}
	if got := tr.psns("delivered", "SEND_ONLY"); len(got) != 4 || got[1] != got[2] {
		t.Errorf("SEND_ONLY deliveries %v; want the 2nd twice", got)
	}
	b.must(b.f.RemoveFault(id))
	if err := b.f.RemoveFault(id); err == nil {
		t.Errorf("RemoveFault twice succeeded")
	}
	// Delay moves the arrival.
	b.f.ClearFaults()
	_, err = b.f.AddFault(verbs.FaultRule{Action: verbs.FaultDelay, Delay: time.Millisecond, To: "sim1"})
	b.must(err)
	t0 := b.f.Now()
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 9, SGList: sg(dst, 0, 100)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 9, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 10)}})))
	b.drain(b.cq[0], 1)
	if d := b.f.Now() - t0; d < time.Millisecond || d > 2*time.Millisecond {
		t.Errorf("round trip with a 1 ms delay took %v", d)
	}
	// Cut: everything to sim1 is lost; retry_cnt 1 ends it.
	b.f.ClearFaults()
	x2, _ := b.pair(0, 1, qpOpts{timeout: 8, retry: 1})
	_, err = b.f.AddFault(verbs.FaultRule{Action: verbs.FaultCut, To: "sim1"})
	b.must(err)
	b.must(first(x2.PostSend([]verbs.SendWR{{WRID: 11, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 10)}})))
	wcs := b.drain(b.cq[0], 1)
	if len(wcs) != 1 || wcs[0].Status != verbs.WCRetryExcErr {
		t.Errorf("over a cut link: %+v, want RETRY_EXC_ERR", wcs)
	}
}

// TestReorder: a held-back packet arrives after the next one; on RC the
// responder NAKs once and the requester goes back.
func TestReorder(t *testing.T) {
	b := newBed(t, Config{})
	var tr trace
	defer tr.observe(b.f)()
	x, y := b.pair(0, 1, qpOpts{startPSN: 0, retry: 7})
	src, dst := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
	fill(src.Bytes()[:4096], 4)
	_, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultReorder, PSN: 1, HasPSN: true, Opcode: "SEND", Count: 1})
	b.must(err)
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8192)}})))
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 4096)}})))
	if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
		t.Fatalf("completions %+v", wcs)
	}
	got := tr.psns("delivered", "SEND")
	if len(got) < 4 || got[0] != 0 || got[1] != 2 || got[2] != 1 {
		t.Errorf("SEND deliveries %v; want 0, 2, 1, ...", got)
	}
	if !bytes.Equal(src.Bytes()[:4096], dst.Bytes()[:4096]) {
		t.Errorf("data differs")
	}
}

// TestMulticast: a UD datagram to a group reaches every QP attached on
// every device whose host joined the group; one detached no longer gets it.
func TestMulticast(t *testing.T) {
	b := newBed(t, Config{Devices: 3})
	for _, tc := range []struct {
		name string
		gid  string
		sgid uint8
	}{{"ipv4", "::ffff:239.1.2.3", 1}, {"ipv6", "ff0e::1", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := verbs.ParseGID(tc.gid)
			ud := func(d int) verbs.QP {
				q := b.qp(d, qpOpts{typ: verbs.QPTypeUD})
				b.connect(q, d, nil, 0, qpOpts{})
				return q
			}
			s := ud(0)
			r1, r2, r3, other := ud(1), ud(2), ud(2), ud(0)
			bufs := map[verbs.QP]verbs.MR{}
			for _, q := range []verbs.QP{r1, r2, r3, other} {
				d := 0
				if q == r1 {
					d = 1
				} else if q == r2 || q == r3 {
					d = 2
				}
				m := mrOf(b, d, 4096)
				bufs[q] = m
				b.must(first(q.PostRecv([]verbs.RecvWR{{WRID: uint64(q.Num()), SGList: sg(m, 0, 1024)}, {WRID: uint64(q.Num()), SGList: sg(m, 1024, 1024)}})))
			}
			for _, q := range []verbs.QP{r1, r2, r3} {
				b.must(q.AttachMcast(g, 0))
				b.must(q.AttachMcast(g, 0)) // again: nothing changes
			}
			// The receivers' hosts join the group, as a socket's
			// IP_ADD_MEMBERSHIP would; the sender's does not.
			b.must(b.f.JoinHostGroup(1, g))
			b.must(b.f.JoinHostGroup(2, g))
			src := mrOf(b, 0, 4096)
			copy(src.Bytes(), "to the group")
			ah, err := b.pd[0].CreateAH(verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: g, SGIDIndex: tc.sgid, HopLimit: 1}})
			b.must(err)
			send := func(id uint64) {
				b.must(first(s.PostSend([]verbs.SendWR{{WRID: id, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 12),
					AH: ah, RemoteQPN: wire.MulticastQPN, RemoteQKey: 0x11111111}})))
			}
			send(1)
			got := map[uint32]int{}
			for d := 0; d < 3; d++ {
				for _, wc := range b.drain(b.cq[d], 0) {
					if wc.Status != verbs.WCSuccess {
						t.Errorf("completion %+v", wc)
					}
					if wc.Opcode == verbs.WCOpRecv {
						got[uint32(d)<<24|wc.QPNum]++
						if wc.SrcQP != s.Num() || wc.ByteLen != 40+12 {
							t.Errorf("receive %+v", wc)
						}
					}
				}
			}
			if len(got) != 3 || got[1<<24|r1.Num()] != 1 || got[2<<24|r2.Num()] != 1 || got[2<<24|r3.Num()] != 1 {
				t.Errorf("receivers %v", got)
			}
			if string(bufs[r2].Bytes()[40:52]) != "to the group" {
				t.Errorf("payload %q", bufs[r2].Bytes()[40:52])
			}
			b.must(r2.DetachMcast(g, 0))
			if err := r2.DetachMcast(g, 0); err == nil {
				t.Errorf("second detach succeeded")
			}
			send(2)
			n := 0
			for d := 0; d < 3; d++ {
				for _, wc := range b.drain(b.cq[d], 0) {
					if wc.Opcode == verbs.WCOpRecv {
						n++
						if wc.QPNum == r2.Num() && d == 2 {
							t.Errorf("detached QP received")
						}
					}
				}
			}
			if n != 2 {
				t.Errorf("%d receivers after detach, want 2", n)
			}
			if err := r1.Destroy(); err == nil {
				t.Errorf("destroy while attached succeeded")
			}
		})
	}
}

// TestInspector: queue contents, PSNs and timers as the shell shows them.
func TestInspector(t *testing.T) {
	b := newBed(t, Config{})
	x, y := b.pair(0, 1, qpOpts{startPSN: 50, timeout: 14, retry: 5, rnrRetry: 6})
	src := mrOf(b, 0, 8192)
	b.f.SetDeliveryMode(verbs.DeliverStep)
	b.must(first(x.PostSend([]verbs.SendWR{
		{WRID: 1, Opcode: verbs.WRSend, SGList: sg(src, 0, 2000)},
		{WRID: 2, Opcode: verbs.WRRDMARead, SGList: sg(src, 4096, 8), RemoteAddr: 0x1000, RKey: 0x99},
	})))
	in, err := b.f.InspectQP(x)
	b.must(err)
	if len(in.SQ) != 2 || in.SQ[0].State != "sent" || in.SQ[0].FirstPSN != 50 || in.SQ[0].LastPSN != 51 ||
		in.SQ[1].State != "sent" || in.SQ[1].FirstPSN != 52 || in.NextPSN != 53 || in.UnackedPSN != 50 {
		t.Errorf("requester %+v", in)
	}
	if in.InflightRdAtomic != 1 || in.RetryLeft != 5 || in.RNRRetryLeft != 6 || len(in.Timers) != 1 || in.Timers[0].Name != "retransmit" {
		t.Errorf("internals %+v", in)
	}
	b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 7, SGList: sg(mrOf(b, 1, 4096), 0, 4096)}})))
	yin, _ := b.f.InspectQP(y)
	if len(yin.RQ) != 1 || yin.RQ[0].WRID != 7 || yin.RQ[0].State != "posted" || yin.ExpectedPSN != 50 {
		t.Errorf("responder %+v", yin)
	}
	b.f.Step() // SEND_FIRST arrives: the receive is being filled
	yin, _ = b.f.InspectQP(y)
	if yin.RQ[0].State != "receiving" || yin.ExpectedPSN != 51 {
		t.Errorf("responder after one packet %+v", yin)
	}
	b.must(b.cq[0].ReqNotify(true))
	cin, _ := b.f.InspectCQ(b.cq[0])
	if !cin.Armed || !cin.SolicitedOnly || cin.Depth != 8191 {
		t.Errorf("CQ %+v", cin)
	}
	s, err := b.pd[1].CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 8, MaxSGE: 1, SRQLimit: 2}})
	b.must(err)
	b.must(first(s.PostRecv([]verbs.RecvWR{{WRID: 3}, {WRID: 4}})))
	sin, _ := b.f.InspectSRQ(s)
	if sin.Used != 2 || sin.Limit != 2 || !sin.Armed || len(sin.Queue) != 2 || sin.Queue[1].WRID != 4 {
		t.Errorf("SRQ %+v", sin)
	}
	other := New(Config{})
	if _, err := other.InspectQP(x); err == nil {
		t.Errorf("another fabric inspected the QP")
	}
}

// TestLinkModel: virtual time follows latency and bandwidth; the MTU
// refuses or drops what does not fit; loopback has no MTU.
func TestLinkModel(t *testing.T) {
	t.Run("latency", func(t *testing.T) {
		b := newBed(t, Config{})
		x, y := b.pair(0, 1, qpOpts{})
		src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 64)}})))
		t0 := b.f.Now()
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 64)}})))
		b.drain(b.cq[0], 1)
		// SEND 108-byte datagram, ACK 48 bytes: each frame crosses two
		// links of 1 µs at 25 Gb/s (146 and 86 bytes on the wire).
		ser := func(n int64) time.Duration { return time.Duration(n * 8 * int64(time.Second) / 25e9) }
		want := 2*(2*time.Microsecond) + 2*ser(146) + 2*ser(86)
		if d := b.f.Now() - t0; d != want {
			t.Errorf("64-byte SEND round trip took %v, want %v", d, want)
		}
	})
	t.Run("bandwidth", func(t *testing.T) {
		b := newBed(t, Config{Link: LinkConfig{MTU: 9000}})
		pa, _ := b.ctx[0].QueryPort(1)
		if pa.ActiveMTU != verbs.MTU4096 {
			t.Errorf("active MTU with a 9000-byte link = %v", pa.ActiveMTU)
		}
		x, _ := b.pair(0, 1, qpOpts{mtu: verbs.MTU4096, access: verbs.AccessRemote})
		src, dst := mrOf(b, 0, 1<<20), mrOf(b, 1, 1<<20)
		t0 := b.f.Now()
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled, SGList: sg(src, 0, 1<<20),
			RemoteAddr: dst.Addr(), RKey: dst.RKey()}})))
		b.drain(b.cq[0], 1)
		d := b.f.Now() - t0
		gbps := float64(1<<20) * 8 / d.Seconds() / 1e9
		if gbps < 22 || gbps > 25 {
			t.Errorf("1 MiB WRITE took %v: %.1f Gb/s on a 25 Gb/s link", d, gbps)
		}
	})
	t.Run("sender MTU refuses", func(t *testing.T) {
		b := newBed(t, Config{})
		var tr trace
		defer tr.observe(b.f)()
		x, y := b.pair(0, 1, qpOpts{mtu: verbs.MTU4096, retry: 1, timeout: 8})
		src, dst := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8192)}})))
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 3000)}})))
		if wcs := b.drain(b.cq[0], 0); len(wcs) != 0 {
			t.Errorf("completions %+v; rxe keeps trying and completes nothing", wcs)
		}
		refused := tr.lines("refused")
		if len(refused) == 0 || len(tr.lines("sent")) != 0 {
			t.Errorf("events %q", tr.lines(""))
		}
		in, _ := b.f.InspectQP(x)
		if in.SQ[0].State != "posted" {
			t.Errorf("WQE %+v, want rolled back to posted", in.SQ[0])
		}
		// A small message still fits.
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 3, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 100)}})))
		if wcs := b.drain(b.cq[0], 0); len(wcs) != 0 {
			t.Errorf("completions %+v behind the refused WQE", wcs)
		}
	})
	t.Run("receiver MTU drops", func(t *testing.T) {
		b := newBed(t, Config{})
		b.must(b.f.SetLink(0, LinkConfig{MTU: 9000}))
		var tr trace
		defer tr.observe(b.f)()
		x, y := b.pair(0, 1, qpOpts{mtu: verbs.MTU4096, retry: 2, timeout: 8})
		src, dst := mrOf(b, 0, 8192), mrOf(b, 1, 8192)
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8192)}})))
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 3000)}})))
		wcs := b.drain(b.cq[0], 1)
		if len(wcs) != 1 || wcs[0].Status != verbs.WCRetryExcErr {
			t.Errorf("completions %+v, want RETRY_EXC_ERR", wcs)
		}
		if d := tr.lines("dropped"); len(d) != 3 || !strings.Contains(d[0], "MTU") {
			t.Errorf("drops %q, want 3 (the first try and 2 retries)", d)
		}
	})
	t.Run("loopback has no MTU", func(t *testing.T) {
		b := newBed(t, Config{})
		x, y := b.pair(0, 0, qpOpts{mtu: verbs.MTU4096})
		src, dst := mrOf(b, 0, 8192), mrOf(b, 0, 8192)
		fill(src.Bytes()[:8000], 2)
		b.must(first(y.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sg(dst, 0, 8192)}})))
		b.must(first(x.PostSend([]verbs.SendWR{{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: sg(src, 0, 8000)}})))
		if wcs := b.drain(b.cq[0], 2); len(wcs) != 2 || wcs[0].Status != verbs.WCSuccess || wcs[1].Status != verbs.WCSuccess {
			t.Errorf("completions %+v", wcs)
		}
		if !bytes.Equal(src.Bytes()[:8000], dst.Bytes()[:8000]) {
			t.Errorf("data differs")
		}
	})
	t.Run("config", func(t *testing.T) {
		b := newBed(t, Config{})
		if err := b.f.SetLink(5, LinkConfig{}); err == nil {
			t.Errorf("SetLink(5) accepted")
		}
		if err := b.f.SetLink(0, LinkConfig{MTU: 20}); err == nil {
			t.Errorf("MTU 20 accepted")
		}
		b.must(b.f.SetLink(1, LinkConfig{Latency: 3 * time.Microsecond}))
		l, _ := b.f.Link(1)
		if l.Latency != 3*time.Microsecond || l.Bandwidth != DefaultLinkBandwidth || l.MTU != DefaultLinkMTU {
			t.Errorf("Link(1) = %+v", l)
		}
	})
}

// TestTimersInJiffies: rxe's timers count jiffies (HZ 250) on the timer
// wheel: a 64 ms timeout (timeout 14) fires after 16 to 17 jiffies.
func TestTimersInJiffies(t *testing.T) {
	b := newBed(t, Config{})
	x, _ := b.pair(0, 1, qpOpts{timeout: 14, retry: 7})
	src := mrOf(b, 0, 64)
	_, err := b.f.AddFault(verbs.FaultRule{Action: verbs.FaultCut})
	b.must(err)
	b.f.SetDeliveryMode(verbs.DeliverStep)
	b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, SGList: sg(src, 0, 8)}})))
	t0 := b.f.Now()
	b.f.Run()
	in, _ := b.f.InspectQP(x)
	if len(in.Timers) != 1 {
		t.Fatalf("timers %+v", in.Timers)
	}
	d := in.Timers[0].Deadline - t0
	if d < 64*time.Millisecond || d > 68*time.Millisecond || d%(4*time.Millisecond) != 0 {
		t.Errorf("retransmit timer in %v, want 64-68 ms on a jiffy", d)
	}
	if wheelExpiry(100, 164) != 272 || wheelExpiry(0, 1) != 2 || wheelExpiry(7, 62) != 70 {
		t.Errorf("wheel: %d %d %d", wheelExpiry(100, 164), wheelExpiry(0, 1), wheelExpiry(7, 62))
	}
}

// TestLargeTransfers: a READ and a UC WRITE of many more packets than an
// engine sends in one turn complete, with the in-flight limit pacing them.
func TestLargeTransfers(t *testing.T) {
	const size = 48 << 20
	for _, tc := range []struct {
		name string
		typ  verbs.QPType
		op   verbs.WROpcode
		dev  int
	}{
		{"rc read", verbs.QPTypeRC, verbs.WRRDMARead, 1},
		{"uc write loopback", verbs.QPTypeUC, verbs.WRRDMAWrite, 0},
		{"uc write", verbs.QPTypeUC, verbs.WRRDMAWrite, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("48 MiB")
			}
			b := newBed(t, Config{})
			x, _ := b.pair(0, tc.dev, qpOpts{typ: tc.typ, access: verbs.AccessRemote, retry: 7})
			local, remote := mrOf(b, 0, size), mrOf(b, tc.dev, size)
			fill(remote.Bytes()[size-4096:], 3)
			fill(local.Bytes()[size-4096:], 4)
			b.must(first(x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: tc.op, Flags: verbs.SendSignaled, SGList: sg(local, 0, size),
				RemoteAddr: remote.Addr(), RKey: remote.RKey()}})))
			if wcs := b.drain(b.cq[0], 1); len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess {
				t.Fatalf("completions %+v", wcs)
			}
			if !bytes.Equal(local.Bytes()[size-4096:], remote.Bytes()[size-4096:]) {
				t.Errorf("the last bytes differ")
			}
			if p, _ := b.f.Pending(); p != 0 {
				t.Errorf("%d packets still in flight", p)
			}
		})
	}
}

// TestObserverDiscards: a packet the receiving QP drops without a trace on
// the wire (UC and UD have no NAK) is delivered, then discarded, as a
// second event of the same packet that says by whom and why.
func TestObserverDiscards(t *testing.T) {
	tests := []struct {
		name   string
		opts   qpOpts
		opcode verbs.WROpcode
		want   string
	}{
		{"UC SEND, no receive", qpOpts{typ: verbs.QPTypeUC}, verbs.WRSend,
			"delivered, discarded by the UC responder: no receive posted for a new message"},
		{"UC WRITE, no remote write", qpOpts{typ: verbs.QPTypeUC}, verbs.WRRDMAWrite,
			"delivered, discarded by the UC responder: the QP's access flags lack IBV_ACCESS_REMOTE_WRITE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBed(t, Config{})
			var tr trace
			defer tr.observe(b.f)()
			x, _ := b.pair(0, 1, tt.opts)
			src, dst := mrOf(b, 0, 4096), mrOf(b, 1, 4096)
			wr := verbs.SendWR{WRID: 1, Opcode: tt.opcode, Flags: verbs.SendSignaled, SGList: sg(src, 0, 16)}
			if tt.opcode == verbs.WRRDMAWrite {
				wr.RemoteAddr, wr.RKey = dst.Addr(), dst.RKey()
			}
			b.must(first(x.PostSend([]verbs.SendWR{wr})))
			b.drain(b.cq[0], 1)
			var seqs []uint64
			var verdicts []string
			for _, e := range tr.evs {
				seqs, verdicts = append(seqs, e.Seq), append(verdicts, e.Verdict)
			}
			if len(tr.evs) != 3 || verdicts[0] != "sent" || verdicts[1] != "delivered" || verdicts[2] != tt.want ||
				seqs[0] != seqs[1] || seqs[1] != seqs[2] {
				t.Errorf("events of seqs %v: %q; want sent, delivered, %q of one packet", seqs, verdicts, tt.want)
			}
		})
	}
}
