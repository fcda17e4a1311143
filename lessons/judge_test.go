package lessons_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
)

// A turn is one line a learner types in a tutor test, and what the tutor
// must (says) and must not (never) print after it. A says entry starting
// with "~" is a regular expression.
type turn struct {
	typed string
	says  []string
	never []string
}

// takeLesson starts lesson id in a fresh session and moves the tutor to
// step (1-based) with lesson skip and lesson next.
func takeLesson(t *testing.T, id string, step int) *shell.Shell {
	t.Helper()
	sh := newShell(t, 2)
	if _, err := sh.Exec("lesson " + id); err != nil {
		t.Fatalf("lesson %s: %s", id, sh.FormatError(err))
	}
	for i := 0; i < 100; i++ {
		at, over := sh.Tutor().Step()
		if at+1 == step || over {
			break
		}
		out, err := sh.Exec("lesson skip")
		if err != nil {
			t.Fatalf("lesson skip at step %d: %s%s", at+1, out, sh.FormatError(err))
		}
	}
	if at, _ := sh.Tutor().Step(); at+1 != step {
		t.Fatalf("the tutor is at step %d, not %d", at+1, step)
	}
	return sh
}

// goBackN is wire's Go-Back-N step after its fault rule: mark the bytes,
// post the receive, send.
var goBackN = []string{`fill mr0 "gobackn" offset=1024`, "post_recv qp1 mr=mr1 length=4096", "post_send qp0 mr=mr0 length=4096"}

// notMet and notYet are what a turn on the way must not hear.
var (
	notMet = []string{"goal reached"}
	notYet = []string{"not yet", "goal reached"}
)

// quiet is turns after which the tutor says none of never.
func quiet(never []string, lines ...string) []turn {
	out := make([]turn, len(lines))
	for i, l := range lines {
		out[i] = turn{l, nil, never}
	}
	return out
}

// seq joins runs of turns.
func seq(parts ...[]turn) []turn { return slices.Concat(parts...) }

// play types the turns and checks what the tutor says after each.
func play(t *testing.T, sh *shell.Shell, turns []turn) {
	t.Helper()
	for _, tu := range turns {
		out, err := sh.Exec(tu.typed)
		if err != nil {
			out += sh.FormatError(err)
		}
		flat := strings.Join(strings.Fields(out), " ") // the tutor wraps its lines
		for _, s := range tu.says {
			s = strings.Join(strings.Fields(s), " ")
			ok := strings.Contains(flat, s)
			if re, isRE := strings.CutPrefix(s, "~"); isRE {
				ok = regexp.MustCompile(re).MatchString(flat)
			}
			if !ok {
				t.Errorf("after %q the tutor did not say %q; it said:\n%s", tu.typed, s, out)
			}
		}
		for _, s := range tu.never {
			if strings.Contains(out, s) {
				t.Errorf("after %q the tutor said %q; it should not have:\n%s", tu.typed, s, out)
			}
		}
	}
}

// TestTutorJudgesState takes lessons the wrong way, as learners did when
// the tutor checked only a few expectations, and checks that it refuses
// each wrong path, says why in the learner's words, and accepts the right
// one however it is typed.
func TestTutorJudgesState(t *testing.T) {
	tests := []struct {
		name, lesson string
		step         int
		turns        []turn
	}{
		{"UC QPs where the lesson builds RC", "rc-pingpong", 2, []turn{
			{"create_qp pd0 type=uc send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=4",
				[]string{"» not yet: qp0 is IBV_QPT_UC; this step creates an RC QP", "hint: create_qp pd0 type=rc"}, []string{"goal reached"}},
			{"create_qp pd1 type=uc send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=4", nil, []string{"goal reached"}},
			{"lesson next", []string{"not reached yet: qp0 is IBV_QPT_UC"}, nil},
			// The right QPs next to the wrong ones: extra objects are let be.
			{"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0 max_send_wr=1 max_recv_wr=4", nil, []string{"goal reached", "not yet"}},
			{"create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1 max_send_wr=1 max_recv_wr=8", []string{"✓ goal reached"}, nil},
		}},
		{"receives on one side only", "rc-pingpong", 4, []turn{
			{"repeat 4 post_recv qp0 mr=mr0 wr_id=1", nil, []string{"»", "goal reached"}},
			{"post_recv qp1 mr=mr1 wr_id=1", nil, []string{"»", "goal reached"}},
			{"lesson next", []string{"not reached yet: qp1 has 1 receive posted in this step; this step posts 4"}, nil},
			{"lesson goal", []string{"✗ not yet: qp1 has 1 receive posted in this step; this step posts 4"}, nil},
			{"post_recv qp1 sge=mr1:0:4096 count=3", []string{"this step's goal is out of reach from here", "has wr_id 2; this step's has 1"}, nil},
			{"lesson reset", nil, nil},
			{"repeat 4 post_recv qp0 mr=mr0 wr_id=1", nil, []string{"»"}},
			{"repeat 4 post_recv qp1 sge=mr1:0:4096 wr_id=1", []string{"✓ goal reached"}, nil},
		}},
		{"the wrong side, longer than the MR", "rc-pingpong", 8, []turn{
			{"post_send qp1 mr=mr1 length=5000", []string{
				"~» this step's goal is out of reach from here: qp1 went to IBV_QPS_ERR at cell \\[\\d+\\] \\(post_send qp1 mr=mr1 length=5000\\), which this step does not expect",
				"cq1 got IBV_WC_LOC_PROT_ERR for wr_id 1 — Local protection error",
				"lesson reset rebuilds the session with the lesson's own commands up to this step"}, []string{"goal reached"}},
			{"post_send qp0 mr=mr0 wr_id=2", nil, []string{"goal reached"}},
			{"lesson reset", []string{"the session is rebuilt"}, nil},
			{"post_send qp0 mr=mr0 wr_id=2", []string{"✓ goal reached"}, nil},
		}},
		{"one credit where four are the point", "rpc", 2, []turn{
			{"post_recv qp1 mr=mr2 offset=0 length=64 wr_id=0", nil, []string{"goal reached", "»"}},
			{"lesson goal", []string{"qp1 has 1 receive posted in this step; this step posts 4"}, nil},
			{"repeat 3 post_recv qp1 mr=mr2 offset={i*64+64} length=64 wr_id={i+1}", []string{"✓ goal reached"}, nil},
		}},
		// rpc reads the wr_ids of the server's receives (the slot
		// numbers), not of its sends, which complete on the same CQ.
		{"a wr_id no expectation reads is the learner's to choose", "rpc", 6, []turn{
			{"post_send qp1 opcode=rdma_read mr=mr3 length=13 remote_addr=mr1 rkey=mr1", nil, []string{"out of reach", "has wr_id"}},
			{"poll_cq cq2 n=1 wait=1s", []string{"✓ goal reached"}, nil},
			{"lesson next", nil, nil},
			{"post_recv qp1 mr=mr2 offset=0 length=64 wr_id=7", []string{"out of reach", "has wr_id 7; this step's has 0"}, nil},
		}},
		// The state after polling, then re-arming, is the state after
		// re-arming, then polling: the lost wake-up is in the order.
		{"polled before re-arming", "events", 5, []turn{
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
			{"req_notify_cq cq1", []string{"not yet: commands is [ack_cq_events cq1, poll_cq cq1, poll_cq cq1,", "req_notify_cq cq1], not in the order", "where more commands cannot mend that, lesson reset starts the step over"}, []string{"goal reached"}},
			// One poll after the re-arm comes back empty: the loop is done.
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		// The order holds for the objects the lesson names: a poll of
		// another CQ after the re-arm is not the poll that closes the gap.
		{"re-armed, then polled the other CQ", "events", 5, []turn{
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
			{"req_notify_cq cq1", nil, []string{"goal reached"}},
			{"poll_cq cq0", []string{"not yet: commands is [ack_cq_events cq1, poll_cq cq1, req_notify_cq cq1,", "poll_cq cq0], not in the order"}, []string{"goal reached"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"one poll after the re-arm is not until empty", "events", 5, []turn{
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"req_notify_cq cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", []string{"this step ran poll_cq cq1 1 time"}, []string{"goal reached"}},
			{"poll_cq cq0", nil, []string{"goal reached"}},
			{"poll_cq cq7", nil, []string{"goal reached"}},     // no such CQ
			{"poll_cq cq1 n=0", nil, []string{"goal reached"}}, // refused: no call
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"spinning on A's CQ", "events", 2, []turn{
			{"repeat 3 poll_cq cq0", nil, []string{"goal reached"}},
			{"lesson goal", []string{"not yet: this step runs poll_cq cq1"}, nil},
			{"repeat 3 poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"a look at cq1 before the send", "events", 8, []turn{
			{"poll_cq cq1", nil, []string{"goal reached"}},
			{"post_send qp0 mr=mr0 length=16", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=1 wait=1s", nil, []string{"goal reached"}},
			{"get_cq_event ch0 wait=1s", nil, []string{"goal reached"}},
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
		}},
		{"the event before the poll", "events", 8, []turn{
			{"post_send qp0 mr=mr0 length=16", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=1 wait=1s", nil, []string{"goal reached"}},
			{"get_cq_event ch0 wait=1s", nil, []string{"goal reached"}},
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
			{"poll_cq cq1", []string{"not yet: commands is"}, []string{"goal reached"}},
		}},
		{"the server answers before it polls", "uc-pingpong", 6, []turn{
			{"post_send qp0 mr=mr0 wr_id=2", nil, []string{"goal reached"}},
			{"poll_cq cq0", nil, []string{"goal reached"}},
			{"post_send qp1 mr=mr1 wr_id=2", []string{"out of reach from here: every work request this step posts is posted, but not in the order"}, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached", "out of reach"}},
			{"poll_cq cq0", nil, []string{"goal reached", "out of reach"}},
		}},
		// A do that fails after its first commands ran them: they count,
		// in order; a repeat 0 runs nothing, so it orders nothing.
		{"a do whose last part fails", "qp-types", 3, []turn{
			{"fill mr0 \"over RC\"", nil, []string{"»"}},
			{"do post_recv qp1 mr=mr1 length=4096; post_send qp0 mr=mr0 length=7; poll_cq cq9", nil, []string{"goal reached", "not yet: commands"}},
			{"poll_cq cq0", nil, []string{"goal reached"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"the send before the receive, then a repeat 0", "qp-types", 3, []turn{
			{"fill mr0 \"over RC\"", nil, []string{"»"}},
			{"post_send qp0 mr=mr0 length=7", nil, []string{"goal reached"}},
			{"post_recv qp1 mr=mr1 length=4096", []string{"out of reach from here: every work request this step posts is posted, but not in the order"}, []string{"goal reached"}},
			{"repeat 0 post_send qp0 mr=mr0 length=7", nil, []string{"goal reached"}},
			{"poll_cq cq0", nil, []string{"goal reached"}},
			{"poll_cq cq1", nil, []string{"goal reached"}},
		}},
		{"the send before the receive it needs", "qp-types", 3, []turn{
			{"fill mr0 \"over RC\"", nil, []string{"»"}},
			{"post_send qp0 mr=mr0 length=7", nil, []string{"goal reached"}},
			{"post_recv qp1 mr=mr1 length=4096", []string{"out of reach from here: every work request this step posts is posted, but not in the order this step's goal asks for: only one more post_send could mend that"}, []string{"goal reached"}},
			// Said once.
			{"poll_cq cq0", nil, []string{"goal reached", "out of reach"}},
			{"poll_cq cq1", nil, []string{"goal reached", "out of reach"}},
		}},
		{"a post alone is not the poll", "qp-types", 3, []turn{
			{"post_recv qp1 mr=mr1 length=4096", nil, []string{"»"}},
			{"fill mr0 \"over RC\"", nil, []string{"»"}},
			{"post_send qp0 mr=mr0 length=7", nil, []string{"goal reached", "»"}},
			{"lesson goal", []string{"cq0 still holds 1 completion you have not polled"}, nil},
			{"poll_cq cq0", nil, []string{"goal reached", "»"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"a remote access error is called out", "qp-types", 4, []turn{
			{"post_send qp0 opcode=rdma_write mr=mr0 length=7 remote=mr0+100", []string{
				"this step's goal is out of reach from here: qp0 went to IBV_QPS_ERR", "cq0 got IBV_WC_REM_ACCESS_ERR", "lesson reset"}, []string{"goal reached"}},
			{"poll_cq cq0", nil, []string{"goal reached", "»"}},
		}},
		{"a buffer registered again stands for the lesson's", "lifecycle", 3, []turn{
			{"reg_mr pd0 length=4096 access=local_write", nil, []string{"»"}},
			{"reg_mr pd1 length=4096 access=local_write,remote_read", []string{"» not yet: mr1 has access local_write,remote_read; this step's MR has local_write"}, nil},
			{"dereg_mr mr1", nil, []string{"goal reached"}},
			{"reg_mr pd1 length=4096 access=local_write", []string{"✓ goal reached"}, nil},
			{"create_cq ctx0 cqe=16", nil, []string{"»"}},
			{"create_cq ctx1 cqe=16", []string{"✓ goal reached"}, nil},
			{"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", nil, []string{"»"}},
			{"create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1", []string{"✓ goal reached"}, nil},
			{"modify_qp qp0 state=init pkey_index=0 port=1 access=0", nil, []string{"»"}},
			{"modify_qp qp1 state=init pkey_index=0 port=1 access=0", []string{"✓ goal reached"}, nil},
			// The lesson's mr1 is the learner's mr2.
			{"post_recv qp1 mr=mr2 length=4096", []string{"✓ goal reached"}, nil},
		}},
		{"a state past the lesson's", "lifecycle", 6, []turn{
			{"modify_qp qp0 state=init pkey_index=0 port=1 access=remote_write", []string{"» not yet: qp0's access flags are remote_write; the lesson's QP's access flags are 0"}, nil},
		}},
		{"a probe before its setup", "events", 3, []turn{
			{"get_cq_event ch0", []string{"» not yet: your get_cq_event ch0 failed as this step's does, but before what comes first in the step"}, nil},
			{"req_notify_cq cq1", nil, []string{"goal reached"}},
			{"get_cq_event ch0", []string{"✓ goal reached"}, []string{"not yet"}},
		}},
		// The probe comes after its setup, but the completion it is
		// about was taken before the arm: retrying it cannot help.
		{"a probe after a poll the step does not make", "events", 7, []turn{
			{"post_send qp0 mr=mr0 length=16", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=1 wait=1s", nil, []string{"goal reached"}},
			{"poll_cq cq1 n=1 wait=1s", nil, []string{"goal reached"}},
			{"req_notify_cq cq1", nil, []string{"goal reached"}},
			{"get_cq_event ch0 wait=100ms", []string{"failed as this step's does, but in a session that differs from the step's there", "lesson reset starts the step over"},
				[]string{"goal reached", "before what comes first"}},
		}},
		// The ack is bookkeeping: the second try fails as the step's
		// does, acknowledged first or not.
		{"acknowledged before trying for a second event", "events", 6, []turn{
			{"post_send qp0 mr=mr0 length=16 count=2", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=2 wait=1s", nil, []string{"goal reached"}},
			{"get_cq_event ch0 wait=1s", nil, []string{"goal reached"}},
			{"ack_cq_events cq1", nil, []string{"goal reached"}},
			{"get_cq_event ch0 wait=100ms", nil, []string{"goal reached", "failed as this step's does, but"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, nil},
		}},
		{"four receives in four calls where the step batches them", "paths", 5, []turn{
			{"repeat 4 post_recv qp0 mr=mr0 length=64", []string{"out of reach from here: this step ran post_recv 4 times, not what this step's goal asks for", "lesson reset"}, []string{"goal reached"}},
		}},
		{"four sends in one call where the step makes four", "paths", 5, []turn{
			{"post_recv qp0 mr=mr0 length=64 count=4", nil, []string{"goal reached"}},
			{"post_send qp0 mr=mr0 offset=2048 length=8 count=4", []string{
				"out of reach from here: this step ran post_send 1 time, and every work request this step posts is posted: one more post_send would post more"}, []string{"goal reached"}},
			{"poll_cq cq0 n=8 wait=5s", nil, []string{"goal reached"}},
		}},
		{"four sends in four calls where the step makes one", "paths", 7, []turn{
			{"post_recv qp0 mr=mr0 length=64 count=4", nil, []string{"goal reached"}},
			{"repeat 4 post_send qp0 mr=mr0 offset=2048 length=8", []string{"out of reach from here: this step ran post_send 4 times"}, []string{"goal reached"}},
		}},
		{"a full queue reached in two calls", "break-it", 22, []turn{
			{"post_send qp0 mr=mr0 length=8 count=31", nil, []string{"goal reached", "not yet"}},
			{"post_send qp0 mr=mr0 length=8", []string{"✓ goal reached"}, []string{"not yet"}},
		}},
		{"a full queue on the wrong side", "break-it", 22, []turn{
			{"post_send qp1 mr=mr1 length=8 count=32", []string{"out of reach from here: qp1 has 31 sends posted in this step; this step posts 0"}, []string{"goal reached"}},
		}},
		// Closing a device frees what it holds; the step asks for the
		// teardown in order.
		// An object the step does not make, where it makes one of that
		// kind, is a wrong turn; the hint given unasked says lesson hint
		// twice shows the commands, the first one asked says again.
		{"an MR on the other end's PD", "lifecycle", 3, []turn{
			{"reg_mr pd0 length=4096 access=local_write", nil, []string{"»", "hint:"}},
			{"reg_mr pd0 length=4096 access=local_write", []string{
				"» not yet: your mr1 is not what this step makes: this step makes a 4096-byte MR on pd1 with access local_write; there is none yet",
				"» lesson hint twice: the lesson's own commands"}, []string{"goal reached", "lesson hint again"}},
			{"lesson hint", []string{"» lesson hint again: the lesson's own commands"}, []string{"lesson's commands for this step"}},
			{"reg_mr pd1 length=4096 access=local_write", []string{"✓ goal reached"}, nil},
		}},
		// Each try at an experiment with other settings is told its own
		// difference, the latest one, not the first try's again.
		{"three tries at a sweep", "sweep", 1, []turn{
			{"bench op=write mode=lat lat_iters=20 min=2", []string{"yours ran it with min=2, not 64"}, []string{"goal reached"}},
			{"bench op=write mode=lat lat_iters=20 clock=wall", nil, []string{"goal reached"}},
			{"bench op=write mode=lat lat_iters=20 mtu=512", []string{"yours ran it with mtu=512, not 1024"}, []string{"goal reached"}},
			{"lesson goal", []string{"mtu=512, not 1024"}, []string{"min=2"}},
			{"bench op=write mode=lat lat_iters=20", []string{"✓ goal reached"}, nil},
		}},
		// mtu= asked as the step's, lowered by the ports' active MTU: the
		// run's MTU is told as lowered, not as the learner's choice.
		{"jumbo frames forgotten", "sweep", 2, []turn{
			{"bench op=write mode=lat min=256 max=16k lat_iters=10 mtu=4096", []string{
				"yours ran it with mtu=1024 (asked for 4096, lowered by the run), not 4096", "without netdev_mtu=9000"}, []string{"goal reached"}},
			{"bench op=write mode=lat min=256 max=16k lat_iters=10 mtu=1024", []string{"yours ran it with mtu=1024, not 4096"}, []string{"goal reached", "asked for"}},
			{"bench op=write mode=lat min=256 max=16k lat_iters=10 mtu=4096 netdev_mtu=9000", []string{"✓ goal reached"}, nil},
		}},
		// An XRC send goes to the SRQ its remote_srqn numbers on the
		// peer's device: another SRQ there is another destination.
		{"an XRC send to another SRQ", "xrc", 8, []turn{
			{"create_srq_ex pd1 type=xrc xrcd=xrcd0 cq=cq1 max_wr=4 max_sge=1", nil, []string{"goal reached"}},
			{"post_srq_recv srq0 mr=mr1 wr_id=1", nil, []string{"goal reached"}},
			{"post_send qp1 mr=mr0 length=64 wr_id=2 remote_srqn=srq1", []string{
				"out of reach from here: the send you posted to qp1 goes to SRQ srq1 (remote_srqn 0x020002); this step's goes to SRQ srq0"}, []string{"goal reached"}},
		}},
		// The learner's XRC domain is named in the goal and hints of the
		// steps after, as any other handle.
		{"an XRC domain of another name", "xrc", 2, []turn{
			{"open_xrcd ctx0 file=/tmp/xrc_domain oflags=O_CREAT", nil, []string{"goal reached"}},
			{"open_xrcd ctx1 file=/tmp/xrc_domain oflags=O_CREAT", []string{"✓ goal reached", "your turn: Create an XRC SRQ on B in xrcd1"}, nil},
			{"lesson hint", []string{"hint: create_srq_ex pd1 type=xrc xrcd=xrcd1 cq=cq1"}, []string{"xrcd=xrcd0"}},
		}},
		// Four sends posted in three calls where the step makes four: a
		// fourth call would post a fifth send.
		{"four sends in three calls", "paths", 5, []turn{
			{"post_recv qp0 mr=mr0 length=64 count=4", nil, []string{"goal reached", "out of reach"}},
			{"post_send qp0 mr=mr0 offset=2048 length=8 count=2", nil, []string{"goal reached", "out of reach"}},
			{"post_send qp0 mr=mr0 offset=2048 length=8", nil, []string{"goal reached", "out of reach"}},
			{"post_send qp0 mr=mr0 offset=2048 length=8", []string{
				"out of reach from here: this step ran post_send 3 times, and every work request this step posts is posted: one more post_send would post more"}, []string{"goal reached"}},
		}},
		// The server answers only once it has polled its receive: the
		// pending bits.
		{"the server answers before it polls its receive", "rc-pingpong", 10, []turn{
			{"post_send qp1 mr=mr1 wr_id=2", []string{"out of reach from here: every work request this step posts is posted, but not in the order this step's goal asks for"}, []string{"goal reached"}},
			{"poll_cq cq1 n=1", nil, []string{"goal reached", "out of reach"}},
		}},
		// A's receive goes in before B's SEND that needs it.
		{"the descriptor sent before its receive", "write-read", 4, []turn{
			{"store mr1 u64=mr1.addr u32=mr1.rkey u32=4096", nil, []string{"goal reached", "out of reach"}},
			{"post_send qp1 mr=mr1 length=16", nil, []string{"goal reached", "out of reach"}},
			{"post_recv qp0 mr=mr0 length=64", []string{"out of reach from here"}, []string{"goal reached"}},
		}},
		// Wrong bytes sent: every send of the step is posted, so nothing
		// but another send could change what arrived.
		{"the wrong bytes sent", "lifecycle", 10, []turn{
			{`fill mr0 "hellp"`, nil, []string{"goal reached", "out of reach"}},
			{"post_send qp0 mr=mr0 length=5", []string{"out of reach from here: mr1 bytes 4..20 are", "they came over the wire, and every work request this step posts is posted"}, []string{"goal reached"}},
		}},
		// QPs made A, B, A, B ...: the hint's qp{i} counts the lesson's
		// handles, which are not the learner's; the tutor says so.
		{"a counted hint where the handles differ", "srq-pingpong", 4, []turn{
			{"repeat 16 do create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0 srq=srq0 max_send_wr=1; create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1 srq=srq1 max_send_wr=1", []string{"✓ goal reached"}, nil},
			{"pp_dest qp0 gid_index=1", nil, nil},
			{"pp_dest qp1 gid_index=1", []string{"✓ goal reached"}, nil},
			{"lesson hint", []string{"hint: repeat 16 connect qp{i} qp{i+16} access=0", "» {i} in the hint counts the lesson's QPs, numbered otherwise than yours: put yours in their places (lesson hint again gives the lesson's commands in your handles, as the step's solution)"}, []string{"lesson hint again: the lesson's own commands"}},
			{"lesson hint", []string{"connect qp0 qp1 access=0", "connect qp30 qp31 access=0"}, nil},
		}},
		{"the doorbell rung before its receive", "write-imm", 6, []turn{
			{"post_send qp0 opcode=rdma_write_with_imm mr=mr0 length=0 remote=mr1 imm=0xbeef", nil, []string{"goal reached"}},
			{"post_recv qp1 mr=mr1 length=0 wr_id=13", []string{"out of reach from here"}, []string{"goal reached"}},
		}},
		{"the long send before its short receive", "break-it", 18, []turn{
			{"post_send qp0 mr=mr0 length=64", nil, []string{"goal reached"}},
			{"post_recv qp1 mr=mr1 length=16", []string{"out of reach from here"}, []string{"goal reached"}},
		}},
		// An arm only a completion takes back, in a step that posts
		// nothing: out of reach, not "not yet" for good.
		{"the wrong CQ armed", "events", 3, []turn{
			{"req_notify_cq cq0", []string{"out of reach from here: cq0 is armed; after this step it is not, and only a completion on it would take the arm back: nothing in this step completes"}, []string{"goal reached"}},
			{"req_notify_cq cq1", nil, []string{"goal reached", "out of reach"}},
		}},
		// A loop's rounds typed one by one: on the way after each.
		{"three rounds typed one post at a time", "atomics", 5, []turn{
			{"post_send qp0 opcode=atomic_fetch_and_add mr=mr0 offset=0 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"post_send qp2 opcode=atomic_fetch_and_add mr=mr0 offset=8 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"post_send qp0 opcode=atomic_fetch_and_add mr=mr0 offset=0 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"post_send qp2 opcode=atomic_fetch_and_add mr=mr0 offset=8 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"post_send qp0 opcode=atomic_fetch_and_add mr=mr0 offset=0 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"post_send qp2 opcode=atomic_fetch_and_add mr=mr0 offset=8 remote=mr1 add=1", nil, []string{"not yet", "goal reached"}},
			{"poll_cq cq0", []string{"✓ goal reached"}, []string{"not yet"}},
		}},
		// An arm the step's own move to ERR takes back (its flushed
		// receives complete): not out of reach.
		{"armed before the step's flush", "events", 11, []turn{
			{"req_notify_cq cq1", nil, []string{"out of reach", "goal reached"}},
			{"modify_qp qp1 state=err", nil, []string{"out of reach"}},
			{"get_cq_event ch0 wait=1s", nil, []string{"out of reach"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, []string{"out of reach"}},
		}},
		// lesson skip after the first of a cell's repeat lines replays
		// the rest, not the whole session.
		{"skip after the first repeat line", "rc-pingpong", 4, []turn{
			{"repeat 4 post_recv qp0 mr=mr0 wr_id=1", nil, []string{"goal reached", "not yet"}},
			{"lesson skip", []string{"repeat 4 post_recv qp1 mr=mr1 wr_id=1"}, []string{"drifted", "rebuilt"}},
		}},
		// explain of a word it does not know is no try at the step: no
		// hint, no "not yet".
		{"explain of an unknown word", "rc-pingpong", 2, []turn{
			{"explain xyzzy", []string{"nothing to explain"}, []string{"hint: create_qp", "not yet", "lesson hint"}},
			{"help xyzzy", nil, []string{"hint: create_qp", "not yet", "lesson hint"}},
		}},
		{"jumbo frames forgotten, the MTU by its alias", "sweep", 2, []turn{
			{"bench op=write mode=lat min=256 max=16k lat_iters=10 path_mtu=4096", []string{"yours ran it with mtu=1024 (asked for 4096, lowered by the run), not 4096"}, []string{"goal reached"}},
		}},
		// A unicast QPN to a multicast GID: said as such, not as one of the
		// QPs that happen to have that number on some device.
		{"a unicast QPN to a group", "layouts", 19, []turn{
			{"post_send qp16 mr=mr0 length=13 ah=ah1 remote_qpn=qp17", []string{
				"goes to remote_qpn 0x000019 on a multicast GID, which takes 0xffffff; this step's goes to the multicast group (remote_qpn 0xffffff)"},
				[]string{"goes to QP qp16", "goes to none"}},
		}},
		{"closing the devices is no teardown", "lifecycle", 14, []turn{
			{"close_device ctx0", []string{"out of reach from here: qp0 is gone already, so destroy_qp qp0 can no longer come where this step's goal puts it: " +
				"[destroy_qp qp0, destroy_cq cq0, dealloc_pd pd0, close_device ctx0] in that order"}, []string{"goal reached", "hint:"}},
			{"close_device ctx1", nil, []string{"goal reached", "hint:", "»"}}, // said once
			{"lesson next", []string{"out of reach from here: qp0 is gone already", "lesson reset starts the step over"}, []string{"lesson hint helps"}},
		}},
		// A teardown in another order than the goal's: out of reach once an
		// object the goal ends later is gone, said once.
		{"a PD freed before its turn", "lifecycle", 14, []turn{
			{"destroy_qp qp0", nil, []string{"»"}},
			{"dereg_mr mr0", nil, []string{"»"}},
			{"dealloc_pd pd0", []string{"out of reach from here: pd0 is gone already, so dealloc_pd pd0 can no longer come where this step's goal puts it"}, nil},
			{"destroy_cq cq0", nil, []string{"»"}},
		}},
		// A limit disarms itself once reached: the SRQ's end state is the
		// same whatever it was armed at.
		{"an SRQ armed at another limit", "events", 16, []turn{
			{"modify_srq srq0 srq_limit=4", []string{"not yet: srq0's limit was armed at 4; this step arms it at 3"}, []string{"goal reached"}},
			{"post_send qp2 mr=mr0 length=16 count=2", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=2 wait=1s", nil, []string{"goal reached"}},
			{"poll_cq cq2 n=2 wait=1s", nil, []string{"goal reached"}},
			{"async_events ctx1 wait=1s", nil, []string{"goal reached"}},
		}},
		{"an SRQ armed by the limit alias, again", "events", 16, []turn{
			{"modify_srq srq0 srq_limit=4", nil, []string{"goal reached"}},
			{"poll_cq cq2", nil, []string{"goal reached"}}, // finds nothing: no data met the arm
			{"modify_srq srq0 limit=3", nil, []string{"goal reached", "not yet"}},
			{"post_send qp2 mr=mr0 length=16 count=2", nil, []string{"goal reached"}},
			{"poll_cq cq0 n=2 wait=1s", nil, []string{"goal reached"}},
			{"poll_cq cq2 n=2 wait=1s", nil, []string{"goal reached"}},
			{"async_events ctx1 wait=1s", []string{"✓ goal reached"}, nil},
		}},
		// The step's experiment run another way is named at once.
		{"three runs where the step runs op=all", "sweep", 3, []turn{
			{"bench op=send mode=lat max=4k lat_iters=20 chart=off", []string{"not yet: this step runs bench op=all", "yours ran bench op=send"}, []string{"goal reached"}},
		}},
		// A field written in the wrong byte order is a wrong turn, even
		// where its first byte is the zero that was there.
		{"an rkey stored big-endian", "rpc", 4, []turn{
			{`fill mr1 "hello, server"`, nil, []string{"goal reached"}},
			{"store mr0 u32=2 u32=1 u64=mr1.addr be32=mr1.rkey u32=13", []string{"not yet: mr0 bytes 16..32 are 0x0000025f"}, []string{"goal reached"}},
		}},
		// Fields stored in another order: the address's low byte is the
		// zero that was there, and the key stored first is B's own (the
		// buffer registered again, so not the reference's number).
		{"a descriptor stored key first", "write-read", 2, []turn{
			{"reg_mr pd0 length=4096 access=local_write", nil, []string{"goal reached"}},
			{"reg_mr pd1 length=4096 access=local_write,remote_write", nil, []string{"goal reached"}},
			{"dereg_mr mr1", nil, []string{"goal reached"}},
			{"reg_mr pd1 length=4096 access=local_write,remote_write,remote_read", []string{"✓ goal reached"}, nil},
			{"lesson next", nil, nil},
			{"post_recv qp0 mr=mr0 length=64 wr_id=7", nil, []string{"goal reached", "not yet"}},
			{"store mr2 offset=8 u32=mr2.rkey u32=4096", nil, []string{"goal reached", "not yet"}},
			{"store mr2 u64=mr2.addr", nil, []string{"goal reached", "not yet"}},
		}},
		// A memset before the fields, as C programs do, leaves them to come.
		{"a descriptor after a memset", "write-read", 4, []turn{
			{"show mr1", nil, []string{"goal reached", "not yet"}},
			{"post_recv qp0 mr=mr0 length=64 wr_id=7", nil, []string{"goal reached", "not yet"}},
			{"fill mr1 0x00 length=16", nil, []string{"goal reached", "not yet"}},
			{"store mr1 u64=mr1.addr", nil, []string{"goal reached", "not yet"}},
			{"store mr1 offset=8 u32=mr1.rkey", nil, []string{"goal reached", "not yet"}},
			{"store mr1 offset=12 u32=4096", nil, []string{"goal reached", "not yet"}},
			{"post_send qp1 mr=mr1 length=16", nil, []string{"not yet"}},
			{"poll_cq cq1", nil, []string{"not yet"}},
			{"poll_cq cq0", []string{"✓ goal reached"}, nil},
		}},
		// The reply's receive goes in before the request that asks for it.
		{"the request before its reply receive", "rpc", 4, []turn{
			{`fill mr1 "hello, server"`, nil, []string{"goal reached"}},
			{"store mr0 u32=2 u32=1 u64=mr1.addr u32=mr1.rkey u32=13", nil, []string{"goal reached"}},
			{"post_send qp0 mr=mr0 length=24 wr_id=1", nil, []string{"goal reached"}},
			{"post_recv qp0 mr=mr0 length=0 wr_id=101", []string{"out of reach from here: every work request this step posts is posted, but not in the order"}, []string{"goal reached"}},
			{"poll_cq cq0 n=1 wait=1s", nil, []string{"goal reached"}},
		}},
		// The receives go in before the sends that need them, even where
		// RNR retries would mend the other order.
		{"the sends before their receives", "paths", 5, []turn{
			{"repeat 4 post_send qp0 mr=mr0 offset=2048 length=8", nil, []string{"goal reached"}},
			{"post_recv qp0 mr=mr0 length=64 count=4", []string{"out of reach from here: every work request this step posts is posted, but not in the order"}, []string{"goal reached"}},
			{"poll_cq cq0 n=8 wait=5s", nil, []string{"goal reached"}},
		}},
		// More time than the step lets pass fires a timer that does
		// nothing (rxe's retransmit timer after the ACK): no difference.
		{"more time than the step lets pass", "wire", 7, []turn{
			{"post_recv qp1 mr=mr1 offset=4096 length=64", nil, []string{"goal reached"}},
			{"advance 1s", nil, []string{"not yet", "goal reached"}},
			{"poll_cq cq0", nil, []string{"not yet", "goal reached"}},
			{"poll_cq cq1", []string{"✓ goal reached"}, []string{"not yet"}},
			{"lesson skip", []string{"step 9 of 12"}, nil},
		}},
		// count=1 drops the same packet as the step's nth=1, and retires
		// the rule where nth=1 leaves it spent.
		{"one packet dropped with count=1", "wire", 9, seq(
			quiet(notYet, "fault drop opcode=send_middle count=1"), quiet(notYet, goBackN...), quiet(notYet, "run", "poll_cq cq0"),
			[]turn{{"poll_cq cq1", []string{"✓ goal reached"}, []string{"not yet"}}})},
		// Another rule for the same packet is the same work.
		{"the packet picked by its PSN", "wire", 9, seq(
			quiet(notYet, "fault drop psn=9 count=1"), quiet(notYet, goBackN...), quiet(notYet, "run", "poll_cq cq0"),
			[]turn{{"poll_cq cq1", []string{"✓ goal reached"}, []string{"not yet"}}})},
		{"another packet dropped", "wire", 9, seq(
			quiet(notMet, "fault drop opcode=send_middle nth=2"), quiet(notMet, goBackN...),
			[]turn{{"run", []string{"out of reach from here: packets is [RC SEND_FIRST"}, notMet}}, quiet(notMet, "poll_cq cq0", "poll_cq cq1"))},
		// Held back, then a resend dropped: one drop, three resends, and
		// not the step's packets.
		{"a reorder, then a resend dropped", "wire", 9, seq(
			quiet(notMet, "fault reorder opcode=send_middle count=1", "fault drop opcode=send_middle nth=3"), quiet(notMet, goBackN...),
			[]turn{{"run", []string{"out of reach from here: packets is [RC SEND_FIRST"}, notMet}}, quiet(notMet, "poll_cq cq0", "poll_cq cq1"))},
		// A duplicate delivered in a later cell (step mode) is no resend.
		{"the next packet dropped, a duplicate stepped", "wire", 9, seq(
			quiet(notMet, "fault drop opcode=send_middle nth=2", "fault duplicate opcode=send_first count=1"), quiet(notMet, goBackN...),
			quiet(notMet, "step", "step"),
			[]turn{{"run", []string{"out of reach from here: packets is [RC SEND_FIRST"}, notMet}}, quiet(notMet, "poll_cq cq0", "poll_cq cq1"))},
		// A second drop in the step cannot be taken back.
		{"two packets dropped", "wire", 9, seq(
			quiet(notMet, "fault drop opcode=send_middle count=2"), quiet(notMet, goBackN[:2]...),
			[]turn{{goBackN[2], []string{"this step's goal is out of reach from here: packets.drops is 2"}, notMet}},
			quiet(notMet, "run", "poll_cq cq0", "poll_cq cq1"))},
		{"a rule added, then cleared", "wire", 9, seq(
			quiet(notMet, "fault drop opcode=send_middle count=1", "fault clear"), quiet(notMet, goBackN...), quiet(notMet, "run", "poll_cq cq0"),
			[]turn{{"poll_cq cq1", []string{"not yet: packets is [RC SEND_FIRST"}, notMet}})},
		{"a second rule left to act later", "wire", 9, seq(
			quiet(notMet, "fault drop opcode=send_middle nth=1", "fault drop opcode=send_first nth=5"), quiet(notMet, goBackN...),
			// Once the step's packets are out, a rule still to act is one
			// too many, said at once.
			[]turn{{"run", []string{"not yet: the fault rules are drop opcode=send_first nth=5"}, notMet}},
			quiet(notMet, "poll_cq cq0", "poll_cq cq1"),
			[]turn{{"lesson goal", []string{"the fault rules are drop opcode=send_first nth=5; after this step they are none"}, nil}})},
		// A unicast AH's hop limit is the route's whatever it is given.
		{"an AH with another hop limit", "ud-pingpong", 9, []turn{
			{"create_ah pd0 dgid=B sgid_index=1", nil, []string{"not yet", "goal reached"}},
			{"create_ah pd1 dgid=A sgid_index=1 hop_limit=64", []string{"✓ goal reached"}, []string{"not yet"}},
		}},
		// A verb at a step of the tutor's is said to count for none, once.
		{"commands before lesson next", "write-imm", 1, []turn{
			{"mem mr0 0 8", nil, []string{"»"}},
			{"post_recv qp1 mr=mr1 offset=2048 length=64 wr_id=10", []string{"» step 1 is the tutor's and done: lesson next goes on to step 2"}, nil},
			{"post_recv qp1 mr=mr1 offset=2048 length=64 wr_id=10", nil, []string{"»"}},
		}},
		// One entry of the GID table is not the table.
		{"one GID where the step reads the table", "tour", 5, []turn{
			{"query_gid ctx0 index=5", nil, []string{"goal reached"}},
			{"lesson goal", []string{"yours ran query_gid ctx0 index=5, which shows only part of it"}, nil},
			{"query_gid ctx0", []string{"✓ goal reached"}, nil},
		}},
		// Five requests go out after their five reply receives, not one
		// of them before.
		{"one request before the reply receives", "rpc", 11, []turn{
			{"predict 4", nil, nil},
			{"post_send qp0 mr=mr0 offset=128 length=24 wr_id=3", nil, []string{"goal reached"}},
			{"post_recv qp0 mr=mr0 length=0 count=5 wr_id=103", nil, []string{"goal reached"}},
			{"repeat 4 post_send qp0 mr=mr0 offset={i*32+160} length=24 wr_id={i+4}", []string{"out of reach from here: every work request this step posts is posted, but not in the order"}, []string{"goal reached"}},
			{"poll_cq cq0 n=5 wait=100ms", nil, []string{"goal reached"}},
		}},
		{"the expected failure is no mistake", "lifecycle", 13, []turn{
			{"dealloc_pd pd0", []string{"» not yet: this step makes dealloc_pd pd1 fail (with EBUSY); it has not failed yet"}, nil},
			{"dealloc_pd pd1", []string{"✓ goal reached"}, []string{"not yet"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := takeLesson(t, tc.lesson, tc.step)
			play(t, sh, tc.turns)
		})
	}
}

// TestGoalIsProse: a step shows its goal: line, not its expectations;
// lesson goal --detail shows those and what the judge compares.
func TestGoalIsProse(t *testing.T) {
	l, _ := lessons.Find("break-it")
	for i, s := range l.Steps {
		if !s.Interactive() {
			continue
		}
		sh := takeLesson(t, "break-it", i+1)
		out, _ := sh.Exec("lesson")
		if s.Cell.Goal == "" || !strings.Contains(strings.Join(strings.Fields(out), " "), "» your turn: "+s.Cell.Goal) {
			t.Errorf("step %d shows no goal line %q:\n%s", i+1, s.Cell.Goal, out)
		}
		for _, e := range s.Cell.Expects {
			if strings.Contains(out, e.Text) {
				t.Errorf("step %d shows its expectation %q:\n%s", i+1, e.Text, out)
			}
		}
		out, _ = sh.Exec("lesson goal --detail")
		for _, e := range s.Cell.Expects {
			if !strings.Contains(out, e.Text) {
				t.Errorf("lesson goal --detail at step %d does not show %q:\n%s", i+1, e.Text, out)
			}
		}
		return
	}
}

// TestSkipAlwaysWorks: lesson skip gets to the end of the step from any
// state, rebuilding the session where it drifted, and cell numbers only
// grow.
func TestSkipAlwaysWorks(t *testing.T) {
	sh := takeLesson(t, "rc-pingpong", 4)
	for _, c := range []string{"post_recv qp0 mr=mr0", "create_cq ctx0", "modify_qp qp1 state=err"} {
		sh.Exec(c)
	}
	last := cellNumber(sh.Prompt())
	out, err := sh.Exec("lesson skip")
	if err != nil {
		t.Fatalf("lesson skip: %s%s", out, sh.FormatError(err))
	}
	if !strings.Contains(out, "your session had drifted from the lesson's") {
		t.Errorf("lesson skip did not say it rebuilt the session:\n%s", out)
	}
	if at, _ := sh.Tutor().Step(); at+1 != 5 {
		t.Errorf("after lesson skip the tutor is at step %d; want 5", at+1)
	}
	if n := cellNumber(sh.Prompt()); n <= last {
		t.Errorf("the next cell is [%d]; before lesson skip it was [%d]", n, last)
	}
	// The rebuilt session is the lesson's: the rest of it skips through.
	for i := 0; i < 30; i++ {
		if _, over := sh.Tutor().Step(); over {
			break
		}
		if out, err := sh.Exec("lesson skip"); err != nil {
			t.Fatalf("lesson skip: %s%s", out, sh.FormatError(err))
		}
	}
	if _, skipped := sh.Tutor().Solved(); skipped == 0 {
		t.Errorf("no step counted as done by the tutor")
	}
}

func cellNumber(prompt string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(prompt, "["), "] vsh> "))
	return n
}

// TestJudgeByExpect: a step marked judge: expect is judged by its expect:
// lines alone, where the comparison with the reference would refuse.
func TestJudgeByExpect(t *testing.T) {
	lesson := func(judge string) string {
		return "---\nid: loose\ntitle: Loose\nlevel: beginner\nminutes: 1\n---\n\n```vsh auto\nopen_device A\n```\n\n" +
			"Make a CQ.\n\n```vsh\ncreate_cq ctx0 cqe=16\n```\ngoal: Make a CQ on A.\n" + judge + "expect: handles contains cq0\n\nDone.\n"
	}
	for _, tc := range []struct {
		judge string
		says  string
	}{
		{"", "» not yet: cq0's completion channel is ch0; this step's completion channel is none"},
		{"judge: expect\n", "✓ goal reached"},
	} {
		dir := t.TempDir()
		path := dir + "/loose.md"
		if err := writeFileT(path, lesson(tc.judge)); err != nil {
			t.Fatal(err)
		}
		sh := newShell(t, 2)
		if out, err := sh.Exec("lesson " + path); err != nil {
			t.Fatalf("%s%s", out, sh.FormatError(err))
		}
		sh.Exec("lesson next")
		sh.Exec("create_comp_channel ctx0")
		play(t, sh, []turn{{"create_cq ctx0 cqe=16 channel=ch0", []string{tc.says}, nil}})
	}
}

func writeFileT(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

// TestShippedGoals: every learner step of a shipped lesson has a goal:
// line, and none leans on judge: expect or on commands but for an order
// (commands contains [A, B]) — the comparison with the reference judges
// what the commands built.
func TestShippedGoals(t *testing.T) {
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range all {
		for i, s := range l.Steps {
			if !s.Interactive() {
				continue
			}
			n++
			if s.Cell.Goal == "" {
				t.Errorf("%s step %d (line %d) has no goal: line", l.ID, i+1, s.Cell.Line)
			}
			if s.Cell.ByExpect {
				t.Errorf("%s step %d (line %d) is judged by its expect: lines alone", l.ID, i+1, s.Cell.Line)
			}
			for _, e := range s.Cell.Expects {
				if strings.HasPrefix(e.Text, "commands") && !strings.HasPrefix(e.Text, "commands contains [") {
					t.Errorf("%s:%d: expect: %s", l.Name, e.Line, e.Text)
				}
			}
		}
	}
	if n < 150 {
		t.Errorf("only %d learner steps in the shipped lessons", n)
	}
}

// TestPacketsExpectation: a step's packets, recorded while its goal counts
// them, in play and in the tutor.
func TestPacketsExpectation(t *testing.T) {
	src := "---\nid: wirebits\ntitle: Packets\nlevel: beginner\nminutes: 1\nneeds: trace\n---\n\n```vsh auto\n" +
		"open_device A\nopen_device B\nalloc_pd ctx0\nalloc_pd ctx1\nreg_mr pd0 length=64 access=local_write\nreg_mr pd1 length=64 access=local_write\n" +
		"create_cq ctx0\ncreate_cq ctx1\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\ncreate_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\n" +
		"connect qp0 qp1\npost_recv qp1 mr=mr1\n```\n\nSend.\n\n```vsh\npost_send qp0 mr=mr0 length=8\n```\ngoal: Send 8 bytes from A.\n" +
		"expect: packets.opcode == [SEND_ONLY, ACKNOWLEDGE]\nexpect: packets.count == 2\nexpect: packets.retransmissions == 0\n\nDone.\n"
	l, err := lessons.Parse("wirebits.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sh := newShell(t, 2)
	var b strings.Builder
	if err := lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !strings.Contains(b.String(), "✓ expect: packets.opcode == [SEND_ONLY, ACKNOWLEDGE]") {
		t.Errorf("play did not check the packets:\n%s", b.String())
	}
	path := t.TempDir() + "/wirebits.md"
	if err := writeFileT(path, src); err != nil {
		t.Fatal(err)
	}
	sh = newShell(t, 2)
	sh.Exec("lesson " + path)
	sh.Exec("lesson next")
	play(t, sh, []turn{
		{"post_send qp0 mr=mr0 length=8 count=2", []string{"out of reach"}, []string{"goal reached"}},
		{"lesson goal --detail", []string{"✗ packets.count == 2: packets.count is 4; the goal is 2"}, nil},
		{"lesson reset", nil, nil},
		{"post_send qp0 mr=mr0 length=8", []string{"✓ goal reached"}, nil},
	})
}

// TestBrokenLessonIsNeverSolved: a step whose own commands fail in the
// reference cannot be judged, so no learner solves it — with expect:
// lines or without — and the tutor says the lesson is broken.
func TestBrokenLessonIsNeverSolved(t *testing.T) {
	for _, expect := range []string{"", "expect: handles contains pd0\n"} {
		src := "---\nid: broken\ntitle: Broken\nlevel: beginner\nminutes: 1\n---\n\n```vsh\nopen_device A\nalloc_pd ctx9\n```\n" +
			"goal: Open device A and allocate a PD on it.\n" + expect
		path := t.TempDir() + "/broken.md"
		if err := writeFileT(path, src); err != nil {
			t.Fatal(err)
		}
		sh := newShell(t, 2)
		out, _ := sh.Exec("lesson " + path)
		if !strings.Contains(out, "the lesson is broken here and the step cannot be judged") {
			t.Errorf("%q: the tutor did not say the lesson is broken:\n%s", expect, out)
		}
		play(t, sh, []turn{
			{"open_device A", []string{"this step cannot be judged: the lesson's own commands failed"}, []string{"goal reached"}},
			{"alloc_pd ctx0", nil, []string{"goal reached"}},
			{"lesson goal", []string{"✗", "cannot be judged"}, nil},
		})
		if sh.Tutor().Broken() == nil || sh.Tutor().Complete() {
			t.Errorf("%q: Broken() = %v, Complete() = %v; want the failure and false", expect, sh.Tutor().Broken(), sh.Tutor().Complete())
		}
	}
}
