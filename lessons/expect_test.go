package lessons_test

import (
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

// TestParseExpect covers the grammar: what parses, and what the error says
// when it does not.
func TestParseExpect(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{"qp0.state == RTS", ""},
		{"qp0.state == IBV_QPS_RTS", ""},
		{"qp*.state != reset", ""},
		{"qp0.dest_qpn == qp1", ""},
		{"qp0.dest_qpn == 0x11", ""},
		{"qp0.access contains remote_write|remote_read", ""},
		{"qp0.path_mtu <= 1024", ""},
		{"mr1[0:5] == \"hello\"", ""},
		{"mr1[0:2] == 0x6869", ""},
		{"mr1[0:16] contains \"lo\"", ""},
		{"ctx0.port.active_mtu == 1024", ""},
		{"ctx0.gid[1] == ::ffff:10.0.0.1", ""},
		{"ctx0.dev.max_qp > 0", ""},
		{"ctx0.device == B", ""},
		{"cq0 completions == [IBV_WC_SUCCESS, IBV_WC_SUCCESS]", ""},
		{"cq0 completions == [IBV_WC_SUCCESS*16]", ""},
		{"completions.qp_num contains [qp3, qp7]", ""},
		{"cq1 completions.count >= 2", ""},
		{"cq1 completions.byte_len == [5]", ""},
		{"error == EINVAL", ""},
		{"error == none", ""},
		{"error != any", ""},
		{"commands contains query_gid", ""},
		{"handles == []", ""},
		{"handles.count == 0", ""},
		{"srq0.max_wr >= 32", ""},
		{"ah0.hop_limit == 64", ""},
		{"qp2.send_cq == cq1", ""},
		{"qp0.srq == none", ""},
		{"mr0.pd == pd1", ""},
		{"mr0.u64[0] == 41", ""},
		{"mr1.be32[2] == 0x1000", ""},
		{"mr1.str[16] == \"hello\"", ""},
		{"cq0.unpolled == 0", ""},
		{"packets.count == 4", ""},
		{"packets.opcode == [SEND_ONLY, ACKNOWLEDGE]", ""},
		{"packets.opcode contains RC SEND_ONLY", ""},
		{"packets.retransmissions == 1", ""},
		{"packets.drops >= 1", ""},
		{"calls.post_send == 4", ""},
		{"calls.post_recv <= 1", ""},

		{"", "empty"},
		{"qp0.state", "no operator"},
		{"qp0.state ==", "nothing after =="},
		{"qp0 == RTS", `name a field: qp0.state`},
		{"qp0.stat == RTS", `did you mean state?`},
		{"xx0.state == RTS", "the subject starts with a handle"},
		{"qp0.state < RTS", "< compares numbers"},
		{"qp0.state == [RTS]", "one value, not a list"},
		{"qp0.state contains RTS", "contains looks into a list, flags or bytes"},
		{"cq0 completions == IBV_WC_SUCCESS", "is a list: write [IBV_WC_SUCCESS]"},
		{"cq0 completions.statis == [IBV_WC_SUCCESS]", "a completion has no field"},
		{"qp0 completions == []", "completions are counted per CQ"},
		{"cq0 completions == [IBV_WC_SUCESS]", "did you mean success?"},
		{"cq0 completions == [IBV_WC_SUCCESS*0]", "VALUE*N repeats"},
		{"mr1[5:1] == \"x\"", "OFFSET < END"},
		{"qp1[0:5] == \"hello\"", "only a memory region's bytes"},
		{"mr1[0:5] == \"hell\"", "mr1[0:5] is 5 bytes but \"hell\" is 4"},
		{"mr1[0:5] == hello", "in double quotes"},
		{"error == EWHAT", "is not an errno"},
		{"error < EINVAL", "compares numbers"},
		{"pd0.length == 4", "has no fields to check"},
		{"qp0.dest_qpn == mr1", "is not a QP number or a QP handle"},
		{"handles == [qp0", "a list ends with ]"},
		{"qp0.send_cq == 3", "is not a handle (cq0) or none"},
		{"mr0.u8[0] == 256", "is 1 bytes wide"},
		{"mr0.u65[0] == 1", "has no field"},
		{"calls == 4", "write calls.COMMAND"},
		{"calls.Post_Send == 4", "write calls.COMMAND"},
		{"calls.post_send == [4]", "one value, not a list"},
		{"packets.bytes == 4", "packets.count, packets.retransmissions or packets.drops"},
		{"packets == SEND_ONLY", "is a list"},
		// Numbers are read as the shell reads them: decimal or 0x hex.
		{"qp0.timeout == 014", ""},
		{"qp0.timeout == 0b1110", `"0b1110": not a number: write decimal or 0x hex`},
		{"qp0.timeout == 1_4", `"1_4": not a number: write decimal or 0x hex`},
		{"qp0.sq_psn == 18446744073709551616", "too large (at most 18446744073709551615)"},
		{"qp0.dest_qpn == 0o21", `"0o21": not a number`},
		{"mr1[0:0b101] == \"hello\"", "END 0b101: not a number"},
		{"mr0.u8[08] == 1", ""},
		{"cq0 completions == [IBV_WC_SUCCESS*010]", ""},
		{"cq0 completions == [IBV_WC_SUCCESS*1_0]", "VALUE*N repeats"},
	}
	for _, tc := range tests {
		_, err := lessons.ParseExpect(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseExpect(%q) = %v; want no error", tc.in, err)
		case tc.err != "" && err == nil:
			t.Errorf("ParseExpect(%q) = nil; want an error containing %q", tc.in, tc.err)
		case tc.err != "" && !strings.Contains(err.Error(), tc.err):
			t.Errorf("ParseExpect(%q) = %v; want an error containing %q", tc.in, err, tc.err)
		}
	}
}

// TestCheckExpect runs expectations against a session: object state
// through the verbs API, completions and errors from the log.
func TestCheckExpect(t *testing.T) {
	sh := newShell(t, 2)
	env := sh.LessonEnv()
	for _, c := range []string{
		"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
		"reg_mr pd0 length=64 access=local_write", "reg_mr pd1 length=64 access=local_write",
		"create_cq ctx0", "create_cq ctx1",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"connect qp0 qp1 access=remote_write",
		"store mr0 offset=32 u64=41 be32=0x1000", "fill mr1 \"sixteen-bytes-..hello\\0x\"",
	} {
		if _, err := sh.Exec(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	start := env.RecordCount()
	for _, c := range []string{"post_recv qp1 mr=mr1", "fill mr0 \"hello\"", "post_send qp0 mr=mr0 length=5", "poll_cq cq0", "poll_cq cq1", "! modify_qp qp0 state=init"} {
		if _, err := sh.Exec(c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	recs := env.Records(start)
	tests := []struct {
		expect string
		why    string // "" when it holds
	}{
		{"qp0.state == RTS", ""},
		{"qp*.state == RTS", ""},
		{"qp0.state == RTR", "qp0.state is IBV_QPS_RTS; the goal is IBV_QPS_RTR"},
		{"qp0.dest_qpn == qp1", ""},
		{"qp0.access contains remote_write", ""},
		{"qp0.access contains remote_read", "qp0.access is IBV_ACCESS_REMOTE_WRITE, without IBV_ACCESS_REMOTE_READ"},
		{"qp0.path_mtu == 1024", ""},
		{"qp0.timeout == 014", ""}, // connect sets 14; a leading 0 is decimal, not C's octal 12
		{"qp0.timeout == 0xe", ""},
		{"qp0.timeout == 12", "qp0.timeout is 14; the goal is 12"},
		{"qp0.type == RC", ""},
		{"qp9.state == RTS", "there is no qp9 (yet)"},
		{"cq9 completions == []", "there is no cq9 (yet)"},
		{"cq9 completions.count == 0", "there is no cq9 (yet)"},
		{"qp0.dest_qpn == qp9", "there is no qp9, so qp0.dest_qpn == qp9 cannot hold yet"},
		{"mr1[0:5] == \"hello\"", ""},
		{"mr1[0:5] == 0x68656c6c6f", ""},
		{"mr1[0:5] == \"world\"", `mr1[0:5] is "hello"; the goal is "world"`},
		{"mr1[60:70] == \"0123456789\"", "mr1 is 64 bytes long"},
		{"ctx1.device == B", ""},
		{"ctx0.device == B", "ctx0.device is sim0; the goal is sim1"},
		{"ctx0.port.link_layer == Ethernet", ""},
		{"ctx0.gid[1] == ::ffff:10.0.0.1", ""},
		{"cq0 completions == [IBV_WC_SUCCESS]", ""},
		{"cq0 completions.opcode == [IBV_WC_SEND]", ""},
		{"cq1 completions.opcode == [IBV_WC_RECV]", ""},
		{"cq1 completions.byte_len == [5]", ""},
		{"cq1 completions.qp_num == [qp1]", ""},
		{"completions.count == 2", ""},
		{"completions.opcode contains [IBV_WC_RECV, IBV_WC_SEND]", ""},
		{"completions.opcode contains [IBV_WC_RECV, IBV_WC_RECV]", "without [IBV_WC_RECV, IBV_WC_RECV]"},
		{"cq0 completions == [IBV_WC_SUCCESS, IBV_WC_SUCCESS]", "cq0 completions is [IBV_WC_SUCCESS]; the goal is [IBV_WC_SUCCESS, IBV_WC_SUCCESS]"},
		{"error == EINVAL", ""},
		{"error == any", ""},
		{"error == EBUSY", "the step's last failure was EINVAL; the goal is EBUSY"},
		{"error == none", "a command of the step failed with EINVAL; the goal is none"},
		{"error != EINVAL", "a command of the step failed with EINVAL, which the goal rules out"},
		{"commands contains [post_send, poll_cq, poll_cq]", ""},
		{"commands contains [post_send, poll_cq]", ""},
		{"commands contains [poll_cq, post_send]", "commands is [post_recv, fill, post_send, poll_cq, poll_cq], without [poll_cq, post_send] in that order"},
		{"commands contains modify_qp", "without [modify_qp]"},
		{"handles contains [qp0, qp1]", ""},
		{"handles.count == 10", ""},
		{"qp1.send_cq == cq1", ""},
		{"qp1.recv_cq == cq0", "qp1.recv_cq is cq1; the goal is cq0"},
		{"qp1.srq == none", ""},
		{"qp0.pd == pd0", ""},
		{"mr1.pd == pd1", ""},
		{"cq0.channel == none", ""},
		{"mr0.u64[4] == 41", ""},
		{"mr0.be32[10] == 0x1000", ""},
		{"mr0.u32[10] == 0x1000", "mr0.u32[10] is 1048576; the goal is 4096"},
		{"mr0.u64[8] == 1", "mr0 is 64 bytes long; mr0.u64[8] would read bytes 64 to 72"},
		{"mr1.str[16] == \"hello\"", ""},
		{"mr1.str[22] == \"x\"", ""},
		{"mr1.str[0] == \"hello\"", `mr1.str[0] is "helloen-bytes-..hello"; the goal is "hello"`},
		{"cq0.unpolled == 0", ""},
		{"packets.count == 2", "the packets of this step are not known"},
		{"calls.post_send == 1", ""},
		{"calls.poll_cq == 2", ""},
		{"calls.modify_qp == 1", ""},
		{"calls.post_send == 4", "this step ran post_send 1 time; the goal is == 4"},
		{"calls.poll_cq < 2", "this step ran poll_cq 2 times; the goal is < 2"},
		{"calls.req_notify_cq >= 1", "this step ran req_notify_cq 0 times"},
	}
	for _, tc := range tests {
		e, err := lessons.ParseExpect(tc.expect)
		if err != nil {
			t.Errorf("ParseExpect(%q): %v", tc.expect, err)
			continue
		}
		err = e.Check(env, recs)
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: %v", tc.expect, err)
		case tc.why != "" && err == nil:
			t.Errorf("%s holds; want it not to (%s)", tc.expect, tc.why)
		case tc.why != "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("%s: %v; want %q", tc.expect, err, tc.why)
		}
	}
	// No completion in an empty step.
	e, _ := lessons.ParseExpect("cq0 completions == [IBV_WC_SUCCESS]")
	if err := e.Check(env, nil); err == nil || !strings.HasSuffix(err.Error(), "no completion was polled from cq0 in this step; the goal is [IBV_WC_SUCCESS]") {
		t.Errorf("empty step: %v", err)
	}
	e, _ = lessons.ParseExpect("completions.opcode contains IBV_WC_RECV")
	if err := e.Check(env, nil); err == nil || !strings.HasSuffix(err.Error(), "the goal is one that contains [IBV_WC_RECV]") {
		t.Errorf("empty step: %v", err)
	}
	e, _ = lessons.ParseExpect("error == EINVAL")
	if err := e.Check(env, nil); err == nil || !strings.Contains(err.Error(), "no command failed in this step") {
		t.Errorf("empty step: %v", err)
	}
	// A mistyped command (no verb ran) is no failure for error == none,
	// and a later one does not hide the step's EAGAIN.
	start = env.RecordCount()
	sh.Exec("post_recv qp1 mr=mr9")
	sh.Exec("! get_cq_event ch9")
	for _, c := range []struct{ expect, why string }{{"error == none", ""}, {"error == any", ""}} {
		e, _ := lessons.ParseExpect(c.expect)
		if err := e.Check(env, env.Records(start)); err != nil {
			t.Errorf("after typos, %s: %v", c.expect, err)
		}
	}
}

// FuzzParseExpect: no input makes the parser panic.
func FuzzParseExpect(f *testing.F) {
	for _, s := range []string{"qp0.state == RTS", "mr1[0:5] == \"a\\x4\"", "cq0 completions == [A*3, B]", "error != any", "]["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { lessons.ParseExpect(s) })
}

// FuzzParse: no lesson file makes the parser panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(goodHead + "```vsh\nopen_device A\n```\nexpect: ctx0.device == A\nhint: x\n"))
	f.Add([]byte("---\n---\n~~~vsh auto\n~~~\n```c\nexpect: x\n"))
	f.Fuzz(func(t *testing.T, b []byte) { lessons.Parse("f.md", b) })
}
