package cprograms

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// mistakeLines are the lines mistakes.c prints, one per step, when each
// mistake fails as kernel rxe fails it; the simulator follows rxe. A
// receive buffer too small for a SEND: rxe's copy_data returns -EINVAL,
// which send_data_in takes for a malformed WQE, so the receiver gets
// IBV_WC_LOC_QP_OP_ERR and the sender, NAKed with a remote operational
// error, IBV_WC_REM_OP_ERR (where the IB spec and mlx5 give
// IBV_WC_LOC_LEN_ERR and IBV_WC_REM_INV_REQ_ERR).
var mistakeLines = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^1 ibv_modify_qp INIT->RTR without IBV_QP_AV: EINVAL \(expected\)$`),
	regexp.MustCompile(`(?m)^2 ibv_post_send in INIT, before RTS: EINVAL \(expected\)$`),
	regexp.MustCompile(`(?m)^3 connect qp 0x[0-9a-f]{6} and qp 0x[0-9a-f]{6} through GID 1: ok$`),
	regexp.MustCompile(`(?m)^4 a 64-byte SEND into a 16-byte receive buffer: receiver IBV_WC_LOC_QP_OP_ERR \(local QP operation error\), sender IBV_WC_REM_OP_ERR \(remote operation error\) \(expected\)$`),
	regexp.MustCompile(`(?m)^5 an RDMA WRITE with a bad rkey: sender IBV_WC_REM_ACCESS_ERR \(remote access error\) \(expected\)$`),
	regexp.MustCompile(`(?m)^every mistake failed as expected$`),
}

// A traceWant is a trace entry (a call's line with the indented lines
// under it) that must show a mistake with the simulator's explanation.
type traceWant struct {
	mistake string
	entry   *regexp.Regexp // the entry's first line
	why     []string       // each in the entry
}

// traceWants are the entries the trace of mistakes.c must hold: the
// failing verb with its errno, or the failed completion (its wr_id the
// step's number) with its status, and why: the simulator's reason (for a
// completion, the NAK that caused it on the sender's side).
var traceWants = []traceWant{
	{"1, RTR without the address vector", regexp.MustCompile(`^ibv_modify_qp\(qp0, &attr, [A-Z_|]+\) = EINVAL$`),
		[]string{"missing: IBV_QP_AV"}},
	{"2, ibv_post_send before RTS", regexp.MustCompile(`^ibv_post_send\(qp0.*\) = EINVAL$`),
		[]string{"IBV_QPS_INIT", "RTS"}},
	{"4, the receive buffer smaller than the message (receiver)", regexp.MustCompile(`^ibv_poll_cq\(cq1\) → wr_id=4 IBV_WC_LOC_QP_OP_ERR `),
		[]string{"the receive WQE cannot take the data"}},
	{"4, the receive buffer smaller than the message (sender)", regexp.MustCompile(`^ibv_poll_cq\(cq0\) → wr_id=4 IBV_WC_REM_OP_ERR `),
		[]string{"NAK", "remote operational error"}},
	{"5, an RDMA WRITE with a bad rkey", regexp.MustCompile(`^ibv_poll_cq\(cq0\) → wr_id=5 IBV_WC_REM_ACCESS_ERR `),
		[]string{"NAK", "remote access error", "rkey"}},
}

// traceOrder are pairs of trace lines, each the first matching its regexp:
// a call's packets come after the call's own line.
var traceOrder = [][2]*regexp.Regexp{
	{regexp.MustCompile(`^ibv_post_send\(qp0, wr_id=4 `), regexp.MustCompile(`RC SEND_ONLY .*\(sent\)`)},
	{regexp.MustCompile(`^ibv_post_send\(qp0, wr_id=5 `), regexp.MustCompile(`RC RDMA_WRITE_ONLY .*\(sent\)`)},
}

// TestMistakes compiles testdata/mistakes.c against Debian's headers and
// library and runs it under vsh run --trace=FILE: it must exit 0 (each
// mistake failed as expected), and the trace must show, for each mistake,
// the failing verb with its errno or the completion's status, and the
// simulator's explanation.
func TestMistakes(t *testing.T) {
	programCase(t)
	vsh, gcc := built(t, "vsh"), debian(t, "gcc", "gcc")
	if _, err := os.Stat("/usr/include/infiniband/verbs.h"); err != nil {
		toolcheck.Missing(t, "no /usr/include/infiniband/verbs.h to compile testdata/mistakes.c against (install: apt-get install libibverbs-dev)")
	}
	parallel(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "mistakes")
	src := filepath.Join(repoRoot(t), "internal/cprograms/testdata/mistakes.c")
	if out, err := exec.Command(gcc, "-O0", "-Wall", "-o", prog, src, "-libverbs").CombinedOutput(); err != nil {
		t.Fatalf("gcc testdata/mistakes.c: %v\n%s", err, out)
	}
	trace := filepath.Join(dir, "trace.txt")
	argv := vshRun(vsh, simAddr(t), []string{"--trace=" + trace}, prog)
	out, status := runOne(t, argv, time.Minute)
	tr, err := os.ReadFile(trace)
	if err != nil {
		t.Errorf("vsh run --trace=%s wrote no trace: %v", trace, err)
	}
	if status != 0 {
		t.Errorf("%s: exit status %d, want 0\n%s", strings.Join(argv, " "), status, indent(out))
	}
	for _, re := range mistakeLines {
		if !re.MatchString(out) {
			t.Errorf("mistakes printed no line matching %q:\n%s", re, indent(out))
		}
	}
	entries := traceEntries(string(tr))
	for _, w := range traceWants {
		if findEntry(entries, w.entry, w.why) == "" {
			t.Errorf("mistake %s: the trace has no entry %q holding %q", w.mistake, w.entry, w.why)
		}
	}
	lines := strings.Split(string(tr), "\n")
	for _, o := range traceOrder {
		call, pkt := firstLine(lines, o[0]), firstLine(lines, o[1])
		if call < 0 || pkt < 0 || pkt < call {
			t.Errorf("the trace has no line %q (line %d) followed by its packet %q (line %d)", o[0], call+1, o[1], pkt+1)
		}
	}
	if t.Failed() {
		t.Logf("the trace:\n%s", indent(string(tr)))
	}
}

// traceEntries splits a trace into entries: a line that does not start
// with a space, and the indented lines under it.
func traceEntries(trace string) []string {
	var entries []string
	for _, l := range strings.Split(trace, "\n") {
		if len(entries) > 0 && (l == "" || l[0] == ' ' || l[0] == '\t') {
			entries[len(entries)-1] += "\n" + l
			continue
		}
		entries = append(entries, l)
	}
	return entries
}

// findEntry returns the first entry whose first line matches first and
// which holds each of want, or "".
func findEntry(entries []string, first *regexp.Regexp, want []string) string {
	for _, e := range entries {
		head, _, _ := strings.Cut(e, "\n")
		if !first.MatchString(head) {
			continue
		}
		all := true
		for _, w := range want {
			all = all && strings.Contains(e, w)
		}
		if all {
			return e
		}
	}
	return ""
}

// firstLine returns the index of the first of lines that re matches, or -1.
func firstLine(lines []string, re *regexp.Regexp) int {
	for i, l := range lines {
		if re.MatchString(l) {
			return i
		}
	}
	return -1
}
