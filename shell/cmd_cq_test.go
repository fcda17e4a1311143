package shell

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestGetCQEventNoEventHint: an empty channel is EAGAIN from the backend,
// and the hint says what a blocking program would do and why no event
// came — no CQ on the channel, or none armed since its last completion —
// naming the channel's CQs.
func TestGetCQEventNoEventHint(t *testing.T) {
	sh := newTestShell(t, 1, 1, true, nil)
	defer sh.Close()
	for _, l := range []string{"open_device A", "create_comp_channel ctx0", "create_cq ctx0"} {
		_, err := sh.Exec(l)
		require.NoError(t, err, l)
	}
	_, err := sh.Exec("get_cq_event ch0")
	require.Error(t, err)
	assert.Equal(t, verbs.EAGAIN, verbs.ErrnoOf(err))
	assert.Contains(t, err.Error(), "no CQ uses ch0")
	assert.Contains(t, err.Error(), "create_cq ctx0 channel=ch0")

	_, err = sh.Exec("create_cq ctx0 channel=ch0")
	require.NoError(t, err)
	_, err = sh.Exec("req_notify_cq cq1")
	require.NoError(t, err)
	_, err = sh.Exec("get_cq_event ch0 wait=1ms")
	require.Error(t, err)
	assert.Equal(t, verbs.EAGAIN, verbs.ErrnoOf(err))
	msg := err.Error()
	assert.Contains(t, msg, "would sleep here")
	assert.Contains(t, msg, "req_notify_cq (cq1)")
	assert.Contains(t, msg, "poll_cq cq1")
	assert.NotContains(t, msg, "cq0", "cq0 has no channel")
}

// TestPollWaitBoundsVirtualTime: poll_cq wait=100ms on the simulator lets
// 100 ms of virtual time pass, not the seconds an empty poll's run to the
// next retransmit timer would, poll after poll.
func TestPollWaitBoundsVirtualTime(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, l := range []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=64 access=local_write", "create_cq ctx0",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "connect qp0 qp1",
		"fault drop opcode=send_only", "post_send qp0 mr=mr0"} {
		if _, err := sh.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	out, err := sh.Exec("poll_cq cq0 wait=100ms")
	if err != nil || !strings.Contains(out, "virtual time ran 100ms forward, to t=100ms") {
		t.Errorf("poll_cq wait=100ms: %v\n%s", err, out)
	}
}

// TestGetCQEventWireFirst: with tracing on, the packets that a wait let
// through — a retransmission and its ACK — print above the event they
// caused, in the order they happened.
func TestGetCQEventWireFirst(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, l := range []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=64 access=local_write", "create_comp_channel ctx0",
		"create_cq ctx0 channel=ch0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"connect qp0 qp1", "req_notify_cq cq0", "fault drop opcode=send_only nth=1", "trace on", "post_recv qp1 mr=mr0", "post_send qp0 mr=mr0"} {
		if _, err := sh.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	out, err := sh.Exec("get_cq_event ch0 wait=1s")
	wire, event := strings.Index(out, "ACKNOWLEDGE"), strings.Index(out, "ibv_get_cq_event(ch0) → cq0")
	if err != nil || wire < 0 || event < 0 || wire > event {
		t.Errorf("get_cq_event: %v\n%s", err, out)
	}
}

// TestAckNoMoreEventsThanRead: ack_cq_events refuses to acknowledge more
// events than get_cq_event returned, which would make ibv_destroy_cq wait
// for ever; the events read are acknowledged, and the CQ goes.
func TestAckNoMoreEventsThanRead(t *testing.T) {
	sh := newTestShell(t, 2, 1, false, nil) // styled: the refusal names handles in plain text
	defer sh.Close()
	execAll(t, sh, "open_device A", "alloc_pd ctx0", "reg_mr pd0 length=64 access=local_write", "create_comp_channel ctx0",
		"create_cq ctx0 channel=ch0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0",
		"connect qp0 qp1")
	for _, tc := range []struct{ before, want string }{
		{"", "ibv_ack_cq_events(cq0, 1) refused: no completion event of cq0, read with get_cq_event, is not yet acknowledged"},
		{"req_notify_cq cq0; post_recv qp1 mr=mr0; post_send qp0 mr=mr0; get_cq_event ch0 wait=1s",
			"ibv_ack_cq_events(cq0, 2) refused: only 1 completion event of cq0, read with get_cq_event, is not yet acknowledged"},
	} {
		for _, l := range strings.Split(tc.before, "; ") {
			if l != "" {
				execAll(t, sh, l)
			}
		}
		n := strings.Count(tc.before, "get_cq_event") + 1
		if _, err := sh.Exec(fmt.Sprintf("ack_cq_events cq0 n=%d", n)); err == nil || !strings.Contains(sh.FormatError(err), tc.want) ||
			strings.Contains(err.Error(), "\x1b") {
			t.Errorf("ack_cq_events cq0 n=%d: %v; want %q", n, err, tc.want)
		}
	}
	execAll(t, sh, "ack_cq_events cq0", "destroy_qp qp0", "destroy_qp qp1", "destroy_cq cq0")
}

// TestWhyNoCompletion: an empty poll says what holds the work back.
func TestWhyNoCompletion(t *testing.T) {
	setup := pathsSetup[:len(pathsSetup)-1] // connected below, each its way
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"path MTU above the link's", []string{"connect qp0 qp1 path_mtu=4096", "post_recv qp1 mr=mr1 length=4096", "post_send qp0 mr=mr0 length=4096"},
			"qp0 holds a send (wr_id 2) that never went out, and nothing is in flight: its path_mtu 4096 is above the port's active MTU 1024"},
		{"small messages go", []string{"connect qp0 qp1 path_mtu=4096", "post_recv qp1 mr=mr1 length=4096", "post_send qp0 mr=mr0 length=64", "poll_cq cq0 wait=1s"},
			"nothing is in flight; was a signaled send or a receive posted"},
		{"RNR retry in step mode", []string{"connect qp0 qp1", "fabric step", "post_send qp0 mr=mr0 length=5", "run"},
			"in step mode only advance lets time pass (poll_cq wait= only polls)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			execAll(t, sh, append(slices.Clone(setup), tc.lines...)...)

			out, _ := sh.Exec("poll_cq cq0 wait=1s")
			if !strings.Contains(strings.Join(strings.Fields(out), " "), tc.want) {
				t.Errorf("poll_cq cq0 said:\n%s\nwant %q", out, tc.want)
			}
		})
	}
}
