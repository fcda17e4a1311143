package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	errNotNumber = "not a number: write decimal or 0x hex"
	errNotSize   = "not a number: write decimal or 0x hex, optionally with k or m (4k is 4096)"
)

// TestNumbers: every number a command reads is decimal or 0x hex, a leading
// 0 is decimal (length=0100 is 100, not C's octal 64), and a number that is
// refused says either "not a number" or "too large (at most N)".
func TestNumbers(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	mustExec(t, sh, "open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
		"reg_mr pd0 length=4k access=local_write", "reg_mr pd1 length=0x1000 access=local_write",
		"create_cq ctx0", "create_cq ctx1",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"connect qp0 qp1", "post_recv qp1 mr=mr1 wr_id=0x10 count=02")

	out := mustExec(t, sh, "post_send qp0 mr=mr0 length=0100 wr_id=010")
	assert.Contains(t, out, "wr_id 10: IBV_WR_SEND sg_list mr0+0:100 ")
	out = mustExec(t, sh, "post_send qp0 mr=mr0 length=08")
	assert.Contains(t, out, "sg_list mr0+0:8 ", "length=08 is 8, not a bad octal number")
	out = mustExec(t, sh, "poll_cq cq1 n=02")
	assert.Regexp(t, `(?m)^\s+16\s+IBV_WC_SUCCESS\s+IBV_WC_RECV\s+100\s`, out, "wr_id=0x10 is 16; 100 bytes came")
	assert.Regexp(t, `(?m)^\s+17\s+IBV_WC_SUCCESS\s+IBV_WC_RECV\s+8\s`, out)

	tests := []struct{ line, err string }{
		{"post_send qp0 mr=mr0 length=0b101", "bad length=0b101: " + errNotSize},
		{"post_send qp0 mr=mr0 length=1_000", "bad length=1_000: " + errNotSize},
		{"post_send qp0 mr=mr0 length=0o17", "bad length=0o17: " + errNotSize},
		{"post_send qp0 mr=mr0 length=", "bad length=: " + errNotSize},
		{"post_send qp0 mr=mr0 length=18446744073709551615", "bad length=18446744073709551615: too large (at most 4294967295)"},
		{"post_send qp0 sge=mr0:0:0x100000000", "bad sge=mr0:0:0x100000000: too large (at most 4294967295)"},
		{"reg_mr pd0 length=18446744073709551616", "bad length=18446744073709551616: too large (at most 9223372036854775807)"},
		{"reg_mr pd0 length=2g", "bad length=2g: " + errNotSize},
		{"reg_mr pd0 length=64 access=0b1", "bad access=0b1: " + errNotNumber},
		{"post_send qp0 mr=mr0 wr_id=-1", "bad wr_id=-1: negative: write 0 or more"},
		{"post_send qp0 mr=mr0 wr_id=18446744073709551616", "bad wr_id=18446744073709551616: too large (at most 18446744073709551615)"},
		{"post_send qp0 opcode=rdma_write mr=mr0 remote_addr=0x1000 rkey=0x1_0", "bad rkey=0x1_0: " + errNotNumber},
		{"post_send qp0 opcode=rdma_write mr=mr0 remote_addr=0b1 rkey=1", "bad remote_addr=0b1: " + errNotNumber},
		{"modify_qp qp0 timeout=0x100", "bad timeout=0x100: too large (at most 255)"},
		{"modify_qp qp0 sq_psn=0x1000000", "bad sq_psn=0x1000000: too large (at most 16777215)"},
		{"poll_cq cq0 n=1e3", "bad n=1e3: " + errNotNumber},
		{"step 0b1", `bad N "0b1": ` + errNotSize},
		{"mem mr0 0x", `bad OFFSET "0x": ` + errNotSize},
	}
	for _, tc := range tests {
		_, err := sh.Exec(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v; want an error saying %q", tc.line, err, tc.err)
		}
	}
}

// TestFaultNth: nth counts from 1; nth=0, which once meant every match
// without saying so, is refused, as are prob=0 and count=0.
func TestFaultNth(t *testing.T) {
	sh, rf, _ := newRichShell(t)
	mustExec(t, sh, "fault drop nth=01 count=0x2")
	require.Len(t, rf.rules, 1)
	assert.Equal(t, 1, rf.rules[0].Nth)
	assert.Equal(t, 2, rf.rules[0].Count)
	_, err := sh.Exec("fault drop nth=0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad nth=0: nth counts from 1")
	// A zero probability or count would read as "always", "no limit".
	for line, want := range map[string]string{
		"fault drop prob=0":      "bad prob=0: a rule that never acts does nothing",
		"fault drop prob=1e-400": "bad prob=1e-400: a rule that never acts does nothing",
		"fault drop count=0":     "bad count=0: count retires the rule after that many hits, at least 1",
	} {
		_, err = sh.Exec(line)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), want)
	}
	_, err = sh.Exec("fault del 0b1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad rule id 0b1: "+errNotNumber)
	assert.Len(t, rf.rules, 1)
}

// TestDurationTooLong: a duration past time.Duration's range is called too
// long, not "not a duration"; a negative one is called negative, even
// without a unit; history n=0 is refused, not "no cells yet".
func TestDurationTooLong(t *testing.T) {
	for in, want := range map[string]string{
		"99999999999999h": `"99999999999999h" is too long: a duration is at most 2562047h`,
		"9999999999h":     `"9999999999h" is too long`,
		"5xs":             `"5xs" is not a duration`,
		"5":               `"5" needs a unit`,
		"-1":              `"-1" is negative: write 0 or more, with a unit`,
		"-1ms":            `"-1ms" is negative: write 0 or more`,
	} {
		_, err := parseDuration(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want)
	}
	d, err := parseDuration("2562047h")
	require.NoError(t, err)
	assert.Equal(t, 2562047*time.Hour, d)
	sh, _, _ := newRichShell(t)
	_, err = sh.Exec("history n=0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad n=0: history n=N shows the last N cells, at least 1")
}

// TestRepeatNegative: a negative count is refused as one, not as "not a
// number".
func TestRepeatNegative(t *testing.T) {
	sh, _, _ := newRichShell(t)
	_, err := sh.Exec("repeat -1 devices")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad count -1: a count is 0 or more")
}
