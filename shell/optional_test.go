package shell

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// richFabric is the simulator with test doubles for the optional
// interfaces the shell reaches by type assertion, so that the shell's side
// of them is tested whatever the simulator implements yet.
type richFabric struct {
	*sim.Fabric
	obs   func(verbs.PacketEvent)
	rules []verbs.FaultRule
	next  int
	qps   map[uint32]verbs.QPInternals
	cqs   map[verbs.CQ]verbs.CQInternals
}

var (
	_ verbs.PacketObserver = (*richFabric)(nil)
	_ verbs.FaultInjector  = (*richFabric)(nil)
	_ verbs.Inspector      = (*richFabric)(nil)
)

func (f *richFabric) ObservePackets(fn func(verbs.PacketEvent)) func() {
	f.obs = fn
	return func() { f.obs = nil }
}

func (f *richFabric) AddFault(r verbs.FaultRule) (int, error) {
	f.next++
	r.ID = f.next
	f.rules = append(f.rules, r)
	return r.ID, nil
}

func (f *richFabric) RemoveFault(id int) error {
	for i, r := range f.rules {
		if r.ID == id {
			f.rules = append(f.rules[:i], f.rules[i+1:]...)
			return nil
		}
	}
	return verbs.Errorf("fault", verbs.ENOENT, "fault list shows the rules", "no fault rule %d", id)
}

func (f *richFabric) Faults() []verbs.FaultRule { return append([]verbs.FaultRule(nil), f.rules...) }
func (f *richFabric) ClearFaults()              { f.rules = nil }

func (f *richFabric) InspectQP(qp verbs.QP) (verbs.QPInternals, error) {
	in, ok := f.qps[qp.Num()]
	if !ok {
		return verbs.QPInternals{SQDepth: 16, RQDepth: 16}, nil
	}
	return in, nil
}

func (f *richFabric) InspectCQ(cq verbs.CQ) (verbs.CQInternals, error) {
	in, ok := f.cqs[cq]
	if !ok {
		return verbs.CQInternals{Depth: cq.CQE()}, nil
	}
	return in, nil
}

func (f *richFabric) InspectSRQ(verbs.SRQ) (verbs.SRQInternals, error) {
	return verbs.SRQInternals{Depth: 64, Used: 2, Limit: 1, Armed: true}, nil
}

func newRichShell(t *testing.T) (*Shell, *richFabric, *memFiles) {
	t.Helper()
	rf := &richFabric{Fabric: sim.New(sim.Config{Devices: 2, Seed: 1}), qps: map[uint32]verbs.QPInternals{}, cqs: map[verbs.CQ]verbs.CQInternals{}}
	files := newMemFiles()
	sh, err := New(Options{Open: func() (verbs.Provider, error) { return rf, nil }, Plain: true})
	require.NoError(t, err)
	sh.noRecover = true
	sh.files = files
	t.Cleanup(func() { sh.Close() })
	return sh, rf, files
}

func mustExec(t *testing.T, sh *Shell, lines ...string) string {
	t.Helper()
	var all strings.Builder
	for _, l := range lines {
		out, err := sh.Exec(l)
		require.NoError(t, err, "%s\n%s", l, out)
		all.WriteString(out)
	}
	return all.String()
}

func TestFaultCommands(t *testing.T) {
	sh, rf, _ := newRichShell(t)
	out := mustExec(t, sh, "fault")
	assert.Contains(t, out, "no fault rules")
	out = mustExec(t, sh, "fault drop opcode=acknowledge nth=1 from=A to=B")
	assert.Contains(t, out, "fault rule 1: drop opcode~acknowledge from=sim0 to=sim1 nth=1")
	require.Len(t, rf.rules, 1)
	assert.Equal(t, verbs.FaultRule{ID: 1, Action: verbs.FaultDrop, Opcode: "acknowledge", From: "sim0", To: "sim1", Nth: 1}, rf.rules[0])
	mustExec(t, sh, "fault delay delay=10us psn=5 count=2", "fault dup prob=0.25")
	assert.Equal(t, 10*time.Microsecond, rf.rules[1].Delay)
	assert.True(t, rf.rules[1].HasPSN)
	assert.Equal(t, verbs.FaultDuplicate, rf.rules[2].Action)
	out = mustExec(t, sh, "fault list")
	assert.Contains(t, out, "id  rule")
	assert.Contains(t, out, "3   duplicate prob=0.25")
	mustExec(t, sh, "fault del 2")
	assert.Len(t, rf.rules, 2)
	_, err := sh.Exec("fault del 9")
	assert.True(t, errors.Is(err, verbs.ENOENT), "%v", err)
	for _, bad := range []string{"fault explode", "fault delay", "fault drop prob=2", "fault drop from=sim7", "fault del", "fault drop colour=red"} {
		_, err := sh.Exec(bad)
		assert.Error(t, err, bad)
	}
	mustExec(t, sh, "fault clear")
	assert.Empty(t, rf.rules)
}

func TestTraceCommand(t *testing.T) {
	sh, rf, files := newRichShell(t)
	out := mustExec(t, sh, "trace pcap roce.pcap")
	assert.Contains(t, out, "packets also go to roce.pcap")
	require.NotNil(t, rf.obs)
	payload := []byte{0x04, 0, 0xff, 0xff, 0, 0, 0, 0x12, 0x80, 0, 0, 0, 0, 0, 0, 0}
	ev := verbs.PacketEvent{Seq: 1, Time: 3 * time.Microsecond, From: "sim0", To: "sim1", Bytes: payload,
		Summary: "RC SEND_ONLY qp=0x12 psn=0x0", Verdict: "delivered"}
	rf.obs(ev)
	ev.Verdict = "sent"
	rf.obs(ev) // the same packet again: printed, not captured twice
	out = mustExec(t, sh, "open_device A")
	assert.Contains(t, out, "wire #1 t=3µs sim0 → sim1 RC SEND_ONLY qp=0x12 psn=0x0: sent")
	assert.NotContains(t, out, "delivered", "a packet shows once, at its latest event")
	mustExec(t, sh, "trace off")
	assert.Nil(t, rf.obs)

	pcap := files.m["roce.pcap"]
	require.Len(t, pcap, 24+16+20+8+len(payload), "one record: IPv4 + UDP + the RoCEv2 bytes")
	assert.Equal(t, uint32(pcapMagicNano), binary.LittleEndian.Uint32(pcap))
	assert.Equal(t, uint32(linkTypeRaw), binary.LittleEndian.Uint32(pcap[20:]))
	rec := pcap[24:]
	assert.Equal(t, uint32(3000), binary.LittleEndian.Uint32(rec[4:]), "nanoseconds of virtual time")
	ip := rec[16:]
	assert.Equal(t, byte(0x45), ip[0])
	assert.Equal(t, []byte{10, 0, 0, 1}, ip[12:16], "sim0's IPv4-mapped GID")
	assert.Equal(t, []byte{10, 0, 0, 2}, ip[16:20])
	assert.Equal(t, uint16(0), checksum(ip[:20], 0), "IPv4 header checksum")
	assert.Equal(t, uint16(4791), binary.BigEndian.Uint16(ip[22:]))
	assert.Equal(t, payload, ip[28:])
}

func TestLiveViewWithInspector(t *testing.T) {
	sh, rf, _ := newRichShell(t)
	out := mustExec(t, sh, "open_device A", "alloc_pd ctx0", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0")
	assert.Contains(t, out, "qp0 SQ 0/16 RQ 0/16")
	assert.Contains(t, out, "cq0 CQ 0/31")

	qp, _ := sh.Object("qp0")
	cq, _ := sh.Object("cq0")
	rf.qps[qp.(verbs.QP).Num()] = verbs.QPInternals{SQDepth: 16, RQDepth: 16,
		SQ:     []verbs.WQEInfo{{WRID: 7, Opcode: "send", Length: 64, State: "sent", FirstPSN: 0, LastPSN: 0}},
		Timers: []verbs.TimerInfo{{Name: "retransmit", Deadline: time.Millisecond}}}
	rf.cqs[cq.(verbs.CQ)] = verbs.CQInternals{Depth: 31, Used: 2}
	out = mustExec(t, sh, "alloc_pd ctx0")
	assert.Contains(t, out, "qp0 SQ 1/16 RQ 0/16")
	assert.Contains(t, out, "cq0 CQ 2/31 (+2 new; poll_cq cq0 reads them)")

	out = mustExec(t, sh, "alloc_pd ctx0")
	assert.NotContains(t, out, "qp0 SQ", "nothing changed: nothing drawn")

	out = mustExec(t, sh, "show qp0")
	assert.Contains(t, out, "timer retransmit fires at 1ms")
	assert.Contains(t, out, "send queue:")
	assert.Contains(t, out, "7      send    64      sent   0x000000")

	out = mustExec(t, sh, "create_srq pd0", "show srq0")
	assert.Contains(t, out, "srq0 SRQ 2/64 limit 1 (armed)")

	out = mustExec(t, sh, "backend")
	assert.Contains(t, out, "packet trace (trace)                   yes")
}

// ExampleShell_Exec shows a session driven without a terminal.
func ExampleShell_Exec() {
	sh, _ := New(Options{
		Open:  func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil },
		Plain: true,
	})
	defer sh.Close()
	for _, line := range []string{"open_device A", "alloc_pd ctx0", "alloc_pd ctx7"} {
		out, err := sh.Exec(line)
		fmt.Print(out, sh.FormatError(err))
	}
	// Output:
	// [1] ibv_open_device(A = sim0) → ctx0  [control path]
	// [2] ibv_alloc_pd(ctx0) → pd0  [control path]
	// [3] error: alloc_pd: no device context "ctx7"
	//     hint: did you mean ctx0? the device contexts are: ctx0
}
