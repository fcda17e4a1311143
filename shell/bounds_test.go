package shell

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// unanswered is an RC pair with a send that no receive answers: with
// rnr_retry 7, RNR retries for ever.
var unanswered = append(slices.Clone(pathsSetup), "post_send qp0 mr=mr0 length=4")

// TestAdvanceStopsAndBounds: advance through hours of RNR retries (a send
// with no receive, rnr_retry 7: for ever) stops on Interrupt, says how
// far it got, and holds a bounded number of events at a time.
func TestAdvanceStopsAndBounds(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	execAll(t, sh, unanswered...)
	go func() {
		time.Sleep(300 * time.Millisecond)
		sh.Interrupt()
	}()
	start := time.Now()
	_, err := sh.Exec("advance 1000h")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("advance took %s to stop", d)
	}
	if err == nil || !strings.Contains(sh.FormatError(err), "interrupted (Ctrl-C): advance moved virtual time from") {
		t.Fatalf("advance 1000h, interrupted: %v", err)
	}
	if now := sh.prov.(verbs.Stepper).Now(); now >= 1000*time.Hour {
		t.Errorf("virtual time %s: advance jumped to its end", now)
	}
	// Without Ctrl-C (a graded script), the work has a bound, and the
	// line that says so shows even when the events' lines were cut.
	defer func(n int) { maxAdvanceEvents = n }(maxAdvanceEvents)
	maxAdvanceEvents = 5000
	out, err := sh.Exec("advance 1000h")
	if err != nil || !regexp.MustCompile(`advance stopped after \d+ events at virtual time .*short of`).MatchString(out) {
		t.Errorf("advance 1000h, bounded: %v\n%s", err, out)
	}
}

// TestAdvanceToTheEndOfTime: advance refuses to pass verbs.MaxVirtualTime,
// and a send posted there finishes: no timer's expiry overflows into the
// past (a clock at the largest Duration retransmitted without end, using
// memory without bound).
func TestAdvanceToTheEndOfTime(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	execAll(t, sh, pathsSetup...)
	if _, err := sh.Exec("advance 2562047h47m16.8s"); err == nil || !strings.Contains(sh.FormatError(err), "advance at most 1281023h53m38.427387904s") {
		t.Fatalf("advance past the end of virtual time: %v", err)
	}
	execAll(t, sh, "advance 1281023h53m38s")
	done := make(chan string, 1)
	go func() {
		out, _ := sh.Exec("post_recv qp1 mr=mr1")
		o2, _ := sh.Exec("post_send qp0 mr=mr0 length=4")
		o3, _ := sh.Exec("poll_cq cq1 wait=1s")
		done <- out + o2 + o3
	}()
	select {
	case out := <-done:
		if !strings.Contains(out, "IBV_WC_SUCCESS") {
			t.Errorf("a send at the end of virtual time did not arrive:\n%s", out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a send at the end of virtual time did not finish in 20 s")
	}
	if _, err := sh.Exec("advance 1s"); err == nil || !strings.Contains(sh.FormatError(err), "virtual time ends at") {
		t.Errorf("advance past the end, near the end: %v", err)
	}
	// A packet delayed past the end arrives at it: the clock stops there,
	// and the sends after it finish.
	sh2 := newTestShell(t, 2, 1, true, nil)
	defer sh2.Close()
	execAll(t, sh2, pathsSetup...)
	execAll(t, sh2, "fault delay opcode=send_only delay=2562047h47m16.85s count=1", "post_recv qp1 mr=mr1", "post_send qp0 mr=mr0 length=4")
	go func() {
		for _, l := range []string{"poll_cq cq0 wait=1s", "fault drop opcode=send_only count=1", "post_recv qp1 mr=mr1", "post_send qp0 mr=mr0 length=4", "poll_cq cq0 wait=100h"} {
			sh2.Exec(l)
		}
		done <- ""
	}()
	select {
	case <-done:
		if now := sh2.prov.(verbs.Stepper).Now(); now > verbs.MaxVirtualTime {
			t.Errorf("a delayed packet took virtual time to %s, past its end", now)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sends after a packet delayed past the end of virtual time did not finish in 20 s")
	}
}

// TestTraceBound: one cell's trace keeps maxTraceEvents packet events and
// says how many more it saw.
func TestTraceBound(t *testing.T) {
	tr := &tracer{seen: map[uint64]bool{}, wire: newWireLog()}
	for i := 1; i <= maxTraceEvents+10; i++ {
		tr.observe(verbs.PacketEvent{Seq: uint64(i), Summary: "RC SEND_ONLY", Verdict: "delivered"})
	}
	lines := tr.drain(nil)
	if len(lines) != maxTraceEvents+1 || !strings.Contains(lines[len(lines)-1], "10 more packet events in this cell are not shown") {
		t.Errorf("%d lines, the last %q", len(lines), lines[len(lines)-1])
	}
	if lines := tr.drain(nil); len(lines) != 0 {
		t.Errorf("a second drain gave %d lines", len(lines))
	}
}

// TestKeptRecords: past the bound, the oldest cells' records go first,
// and a cell alone past it keeps what fits.
func TestKeptRecords(t *testing.T) {
	held := map[int]int{}
	var k keptRecords
	drop := func(i int) int { n := held[i]; delete(held, i); return n }
	for i := 0; i < 5; i++ {
		held[i] = k.room(4, 10, drop)
		k.logged(i, held[i])
	}
	if got := fmt.Sprint(held, k.kept); got != "map[3:4 4:4] 8" {
		t.Errorf("held %v, kept %d", held, k.kept)
	}
	if n := k.room(100, 10, drop); n != 10 || len(held) != 0 {
		t.Errorf("room(100) = %d, still held %v", n, held)
	}
}

// TestCappedWriter: source keeps at most its bound of a script's output.
func TestCappedWriter(t *testing.T) {
	w := &cappedWriter{most: 10}
	for _, s := range []string{"12345", "67890abc", "def"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if w.b.String() != "1234567890" || w.cut != 6 {
		t.Errorf("kept %q, cut %d", w.b.String(), w.cut)
	}
}

// TestStoppedCellNotReplayed: a cell stopped with Ctrl-C is saved as a
// comment, in a notebook and in a script, so that a replay does not run
// it whole (a wait of hours), nor take its stop for an expected failure.
func TestStoppedCellNotReplayed(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	sh.opts.Width = nil
	execAll(t, sh, unanswered...)
	go func() {
		time.Sleep(200 * time.Millisecond)
		sh.Interrupt()
	}()
	if _, err := sh.Exec("poll_cq cq0 wait=100000h"); err == nil {
		t.Fatal("the wait was not stopped")
	}
	for _, name := range []string{"n.md", "s.vsh"} {
		if out, err := sh.Exec("save " + name); err != nil {
			t.Fatalf("save %s: %s%s", name, out, sh.FormatError(err))
		}
		text := string(files.m[name])
		if !strings.Contains(text, "# stopped before its end, not replayed: poll_cq cq0 wait=100000h") || strings.Contains(text, "! poll_cq") {
			t.Errorf("%s:\n%s", name, text)
		}
	}
}

// TestVerbsKeptBounded: the verb calls the cells keep stay under
// MaxLogVerbs, the oldest cells' going first, however many polls run.
func TestVerbsKeptBounded(t *testing.T) {
	sh := newTestShell(t, 1, 1, true, nil)
	defer sh.Close()
	for _, line := range []string{"open_device sim0", "create_cq ctx0"} {
		if _, err := sh.Exec(line); err != nil {
			t.Fatal(err)
		}
	}
	const per = 10000 // repeat's most
	for i := 0; i < MaxLogVerbs/per+2; i++ {
		if _, err := sh.Exec(fmt.Sprintf("repeat %d poll_cq cq0", per)); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for _, c := range sh.Cells() {
		kept += len(c.Verbs)
	}
	if kept > MaxLogVerbs || kept < MaxLogVerbs-per {
		t.Errorf("the cells keep %d verb calls; want at most %d (MaxLogVerbs), the latest", kept, MaxLogVerbs)
	}
	if last := sh.Cells()[len(sh.Cells())-1]; len(last.Verbs) != per {
		t.Errorf("the last cell keeps %d verb calls; want its %d", len(last.Verbs), per)
	}
}
