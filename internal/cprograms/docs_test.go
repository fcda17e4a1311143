package cprograms

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/proctest"
)

// docTraceMark marks the trace excerpt in docs/c-programs.md that
// TestDocsTrace checks.
const docTraceMark = "<!-- c-trace: ibv_rc_pingpong without -g, the server's trace -->"

// docTrace returns the lines of the fenced block after the mark.
func docTrace(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "c-programs.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), docTraceMark+"\n```text\n")
	if !ok {
		t.Fatalf("docs/c-programs.md has no %q followed by a ```text block", docTraceMark)
	}
	body, _, ok := strings.Cut(after, "\n```")
	if !ok {
		t.Fatal("docs/c-programs.md: the trace block does not end")
	}
	return strings.Split(body, "\n")
}

// psn is a PSN in a trace line, which differs from run to run.
var psn = regexp.MustCompile(`(rq_psn|sq_psn)=0x[0-9a-f]{6}`)

// TestDocsTrace runs ibv_rc_pingpong without -g, server and client, the
// server under vsh run --trace, and checks that the excerpt of
// docs/c-programs.md is in the server's trace, line after line.
func TestDocsTrace(t *testing.T) {
	programCase(t)
	vsh, prog := built(t, "vsh"), debian(t, "ibv_rc_pingpong", "ibverbs-utils")
	want := docTrace(t)
	parallel(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.txt")
	port := tcpPort(t)
	p := strconv.Itoa(port)
	server := vshRun(vsh, simAddr(t), []string{"--trace=" + trace}, prog, "-d", "sim0", "-p", p, "-n", "1")
	client := vshRun(vsh, simAddr(t), nil, prog, "-d", "sim0", "-p", p, "-n", "1", "127.0.0.1")
	// Both fail: the server at RTR, the client when the server hangs up.
	sout, cout, _ := proctest.RunPair(server, client, port, pairLimit)
	tr, err := os.ReadFile(trace)
	if err != nil {
		t.Fatalf("no trace: %v\n%s", err, sides(server, sout, client, cout))
	}
	lines := strings.Split(string(tr), "\n")
	at := 0
	for _, w := range want {
		re := regexp.MustCompile("^" + psn.ReplaceAllString(regexp.QuoteMeta(w), `$1=0x[0-9a-f]{6}`) + "$")
		for at < len(lines) && !re.MatchString(lines[at]) {
			at++
		}
		if at == len(lines) {
			t.Fatalf("docs/c-programs.md's trace line\n    %s\nis not in the server's trace (in this order):\n%s", w, indent(string(tr)))
		}
		at++
	}
}
