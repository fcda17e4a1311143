package verbstest

import (
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestRegistry checks the suite itself: every scenario cites a source, the
// control-path scenarios number at least 80, and names are well formed.
func TestRegistry(t *testing.T) {
	control := 0
	for _, s := range Scenarios() {
		if !strings.Contains(s.Name, "/") {
			t.Errorf("scenario %q: want an area/what name", s.Name)
		}
		if len(s.Source) < 10 {
			t.Errorf("scenario %q: source %q is too thin to check", s.Name, s.Source)
		}
		if s.Needs&CapDataPath == 0 {
			control++
		}
	}
	if control < 80 {
		t.Errorf("%d control-path scenarios; want at least 80", control)
	}
	if data := len(Scenarios()) - control; data < 90 || len(Scenarios()) < 150 {
		t.Errorf("%d scenarios, %d of them data-path; want at least 150 and 90", len(Scenarios()), data)
	}
	t.Logf("%d scenarios, %d control-path", len(Scenarios()), control)
}

// TestOpcodeTables checks that every (transport, opcode) pair of the
// opcodes rxe carries is either legal or refused, never both or neither.
func TestOpcodeTables(t *testing.T) {
	seen := map[legalOp]string{}
	for _, c := range legalOps {
		seen[c] += "legal "
		if _, ok := sendWCOpcode[c.op]; !ok {
			t.Errorf("%v: no completion opcode in sendWCOpcode", c.op)
		}
	}
	for _, c := range illegalOps {
		seen[c] += "illegal "
	}
	for _, typ := range qpTypes {
		for op := verbs.WRRDMAWrite; op <= verbs.WRAtomicFetchAndAdd; op++ {
			if got := seen[legalOp{typ, op}]; got != "legal " && got != "illegal " {
				t.Errorf("%v %v is %q in the opcode tables; want exactly one of legal, illegal", typ, op, got)
			}
		}
	}
}

func TestIPv4Checksum(t *testing.T) {
	// RFC 1071 style check on a captured header (checksum 0xb861).
	h := []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}
	if got := ipv4Checksum(h); got != 0 {
		t.Errorf("checksum over a valid header = %#x; want 0", got)
	}
	h[10], h[11] = 0, 0
	if got := ipv4Checksum(h); got != 0xb861 {
		t.Errorf("checksum with the field zeroed = %#x; want 0xb861", got)
	}
}

func TestPatternAndDiff(t *testing.T) {
	a, b := patterned(300, 1), patterned(300, 1)
	if countDiff(a, b) != 0 || zero(a) {
		t.Errorf("patterned is not deterministic or is all zero")
	}
	c := patterned(300, 2)
	if countDiff(a, c) == 0 {
		t.Errorf("patterns of different seeds are equal")
	}
	if countDiff(a, a[:290]) != 10 {
		t.Errorf("countDiff does not count a length difference")
	}
	for i := 1; i < 256; i++ {
		if a[i] == a[i-1] {
			t.Errorf("pattern repeats a byte at %d", i)
		}
	}
}

// TestExpectWC checks which fields the completion checks compare.
func TestExpectWC(t *testing.T) {
	run := func(f func(e *Env)) []string {
		return runOne(t, Scenario{Name: "x/y", Source: "test", Run: f}, nil, Options{}.withDefaults(), false)
	}
	ok := verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: 5, QPNum: 17, Flags: verbs.WCGRH}
	if got := run(func(e *Env) { e.expectWC(ok, ok, "same") }); len(got) != 0 {
		t.Errorf("equal completions reported %q", got)
	}
	bad := ok
	bad.Flags = 0
	if got := run(func(e *Env) { e.expectWC(bad, ok, "flags") }); len(got) != 1 || !strings.Contains(got[0], "wc_flags") {
		t.Errorf("a wc_flags difference reported %q", got)
	}
	errWC := verbs.WC{WRID: 1, Status: verbs.WCWRFlushErr, QPNum: 17, Opcode: 99, ByteLen: 7}
	if got := run(func(e *Env) { e.expectWC(errWC, verbs.WC{WRID: 1, Status: verbs.WCWRFlushErr, QPNum: 17}, "flush") }); len(got) != 0 {
		t.Errorf("an error completion's undefined fields were compared: %q", got)
	}
	if got := run(func(e *Env) {
		e.expectStatuses([]verbs.WC{ok, errWC}, 17, []uint64{1, 1}, []verbs.WCStatus{verbs.WCSuccess, verbs.WCRemOpErr}, "two")
	}); len(got) != 1 || !strings.Contains(got[0], "status") {
		t.Errorf("expectStatuses reported %q; want one status difference", got)
	}
}

// TestKernelTableFacts pins facts of qp_state_table that are easy to get
// wrong, so that an edit of the suite's table is caught.
func TestKernelTableFacts(t *testing.T) {
	legal := func(f, to verbs.QPState) bool { _, ok := lookupRow(f, to); return ok }
	for _, c := range []struct {
		from, to verbs.QPState
		want     bool
	}{
		{verbs.QPSReset, verbs.QPSErr, false},
		{verbs.QPSReset, verbs.QPSRTR, false},
		{verbs.QPSRTR, verbs.QPSRTR, false},
		{verbs.QPSRTS, verbs.QPSRTR, false},
		{verbs.QPSInit, verbs.QPSInit, true},
		{verbs.QPSErr, verbs.QPSErr, true},
		{verbs.QPSSQE, verbs.QPSRTS, true},
		{verbs.QPSRTS, verbs.QPSSQE, false},
		{verbs.QPSSQD, verbs.QPSSQD, true},
	} {
		if got := legal(c.from, c.to); got != c.want {
			t.Errorf("legal(%v→%v) = %v; want %v", c.from, c.to, got, c.want)
		}
	}
	r, _ := lookupRow(verbs.QPSInit, verbs.QPSRTR)
	if r.req[typeCol(verbs.QPTypeUD)] != 0 || r.req[typeCol(verbs.QPTypeUC)]&aDestRd != 0 || r.req[typeCol(verbs.QPTypeRC)]&aMinRNR == 0 {
		t.Errorf("INIT→RTR masks wrong: %v", r.req)
	}
	r, _ = lookupRow(verbs.QPSReset, verbs.QPSInit)
	if r.req[typeCol(verbs.QPTypeUD)]&aQKey == 0 || r.req[typeCol(verbs.QPTypeRC)]&aQKey != 0 {
		t.Errorf("RESET→INIT masks wrong: %v", r.req)
	}
	if got := legalNext(verbs.QPSSQD); len(got) != 4 {
		t.Errorf("legalNext(SQD) = %v; want RESET, RTS, SQD, ERR", got)
	}
}

func TestRxeRounding(t *testing.T) {
	for _, c := range []struct{ n, want int }{{0, 0}, {1, 1}, {2, 3}, {16, 31}, {500, 511}, {32767, 32767}} {
		if got := rxeQueueDepth(c.n); got != c.want {
			t.Errorf("rxeQueueDepth(%d) = %d; want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct{ sge, inline, wantSGE, wantInline int }{{1, 0, 1, 16}, {1, 100, 6, 100}, {2, 0, 2, 32}, {0, 512, 32, 512}} {
		if s, i := rxeSendCaps(c.sge, c.inline); s != c.wantSGE || i != c.wantInline {
			t.Errorf("rxeSendCaps(%d, %d) = %d, %d; want %d, %d", c.sge, c.inline, s, i, c.wantSGE, c.wantInline)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		text string
		b    verbs.QPAttrMask
		want bool
	}{
		{"missing: IBV_QP_AV", verbs.AttrAV, true},
		{"you have no path", verbs.AttrAV, false},
		{"drop alt_timeout", verbs.AttrTimeout, false},
		{"add timeout=14", verbs.AttrTimeout, true},
		{"needs IBV_QP_PATH_MTU, IBV_QP_DEST_QPN", verbs.AttrDestQPN, true},
		{"ah_attr has no GRH", verbs.AttrAV, true},
		{"max_rd_atomic 129 is larger", verbs.AttrMaxQPRdAtomic, true},
		{"max_rd_atomic 129 is larger", verbs.AttrMaxDestRdAtomic, false},
		{"IBV_QP_STATE and 129", verbs.AttrState, true},
	} {
		if got := namesAttr(c.text, c.b); got != c.want {
			t.Errorf("namesAttr(%q, %v) = %v; want %v", c.text, c.b, got, c.want)
		}
	}
	if !namesState("from INIT it can go to: IBV_QPS_RESET, IBV_QPS_RTR", verbs.QPSRTR) || namesState("RTS", verbs.QPSRTR) {
		t.Errorf("namesState is wrong")
	}
}

// TestRunner checks how the runner treats a scenario's outcome.
func TestRunner(t *testing.T) {
	for _, c := range []struct {
		failed, known bool
		want          outcome
	}{
		{false, false, outcomePassed},
		{true, false, outcomeFailed},
		{true, true, outcomeKnownFailure},
		{false, true, outcomeUnexpectedPass},
	} {
		if got := classify(c.failed, c.known); got != c.want {
			t.Errorf("classify(%v, %v) = %v; want %v", c.failed, c.known, got, c.want)
		}
	}
	run := func(f func(e *Env)) []string {
		return runOne(t, Scenario{Name: "x/y", Source: "test", Run: f}, nil, Options{}.withDefaults(), false)
	}
	if got := run(func(e *Env) {}); len(got) != 0 {
		t.Errorf("passing scenario reported %q", got)
	}
	got := run(func(e *Env) {
		e.Errorf("one")
		e.Fatalf("two")
		e.Errorf("never")
	})
	if len(got) != 2 || got[0] != "one" || got[1] != "two" {
		t.Errorf("Errorf+Fatalf reported %q; want [one two]", got)
	}
	if got := run(func(e *Env) { var m map[int]int; m[1] = 1 }); len(got) != 1 || !strings.Contains(got[0], "panic") {
		t.Errorf("a panicking backend reported %q; want one panic failure", got)
	}
	cleaned := false
	run(func(e *Env) { e.Defer(func() { cleaned = true }); e.Fatalf("stop") })
	if !cleaned {
		t.Errorf("cleanups did not run after Fatalf")
	}
	if got := run(func(e *Env) { e.NoPanic("x", func() { panic("boom") }); e.Errorf("after") }); len(got) != 2 {
		t.Errorf("NoPanic: reported %q; want the panic and the later error", got)
	}
}

func TestSetupWithoutDevices(t *testing.T) {
	got := runOne(t, Scenario{Name: "x/y", Source: "test", Run: func(e *Env) {}},
		func(t *testing.T) verbs.Provider { return fakeProvider{} }, Options{}.withDefaults(), true)
	if len(got) != 1 || !strings.Contains(got[0], "no device") {
		t.Errorf("setup on an empty provider reported %q; want one failure naming the missing device", got)
	}
}

type fakeProvider struct{}

func (fakeProvider) Name() string                     { return "fake" }
func (fakeProvider) Devices() ([]verbs.Device, error) { return nil, nil }
func (fakeProvider) Close() error                     { return nil }
