package shell

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkStartToPrompt measures a new session on the simulator up to its
// first prompt (target: 50 ms; make bench reports it, no test asserts it).
func BenchmarkStartToPrompt(b *testing.B) {
	for b.Loop() {
		sh := newTestShell(b, 2, 1, true, nil)
		_ = sh.Banner() + sh.Prompt()
		sh.Close()
	}
}

// benchScript is a 200-command session: setup, connect, then sends,
// receives and polls.
func benchScript() string {
	lines := []string{
		"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
		"reg_mr pd0 length=4096 access=local_write,remote_write", "reg_mr pd1 length=4096 access=local_write,remote_write",
		"create_cq ctx0 cqe=64", "create_cq ctx1 cqe=64",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"connect qp0 qp1",
	}
	for len(lines) < 200 {
		lines = append(lines, "post_recv qp1 mr=mr1 length=64", "post_send qp0 mr=mr0 length=64", "poll_cq cq0", "poll_cq cq1")
	}
	return strings.Join(lines[:200], "\n")
}

// BenchmarkScript200 runs a 200-command script on the simulator (target:
// 200 ms).
func BenchmarkScript200(b *testing.B) {
	script := benchScript()
	for b.Loop() {
		sh := newTestShell(b, 2, 1, true, nil)
		if err := sh.RunScript(strings.NewReader(script), io.Discard, "bench", false); err != nil {
			b.Fatal(err)
		}
		sh.Close()
	}
}

// BenchmarkComplete measures one completion, as go-prompt asks at every key.
func BenchmarkComplete(b *testing.B) {
	sh := newTestShell(b, 2, 1, true, nil)
	defer sh.Close()
	sh.RunScript(strings.NewReader(benchScript()), io.Discard, "bench", false)
	for b.Loop() {
		sh.Complete("modify_qp qp0 state=r")
	}
}
