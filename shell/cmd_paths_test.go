package shell

import (
	"errors"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// execAll runs script lines and fails the test on the first error.
func execAll(t *testing.T, s *Shell, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := s.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
}

var pathsSetup = []string{
	"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
	"reg_mr pd0 length=4096 access=local_write", "reg_mr pd1 length=4096 access=local_write",
	"create_cq ctx0", "create_cq ctx1",
	"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
	"connect qp0 qp1",
}

// TestPathsCounts checks the counts: one call per ibv_post_send whatever its
// work requests (one doorbell per call on rxe), each verb a helper printed.
func TestPathsCounts(t *testing.T) {
	s := newTestShell(t, 2, 1, true, nil)
	defer s.Close()
	execAll(t, s, pathsSetup...)
	execAll(t, s,
		"post_recv qp1 mr=mr1 length=64 count=4",
		"post_send qp0 mr=mr0 length=8 count=3",
		"post_send qp0 mr=mr0 length=8",
		"poll_cq cq0", "poll_cq cq1",
		"repeat 2 poll_cq cq1")
	want := map[string]verbCount{
		"ibv_open_device": {2, 0}, "ibv_alloc_pd": {2, 0}, "ibv_reg_mr": {2, 0},
		"ibv_create_cq": {2, 0}, "ibv_create_qp": {2, 0},
		"ibv_query_qp":  {2, 0}, // connect reads each QP's state first
		"ibv_modify_qp": {6, 0},
		"ibv_post_recv": {1, 4}, "ibv_post_send": {2, 4}, "ibv_poll_cq": {4, 0},
	}
	vc := s.counts()
	if len(vc.by) != len(want) {
		t.Errorf("counted %v; want %v", vc.order, want)
	}
	for name, w := range want {
		if got := vc.by[name]; got == nil || *got != w {
			t.Errorf("%s counted %v; want %v", name, got, w)
		}
	}
	out, err := s.Exec("paths")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ibv_post_send    2      4    doorbell: write()   doorbell: MMIO store",
		"ibv_post_recv    1      4    user space          user space",
		"of these 25 calls, 20 make system calls on rxe; on hardware 18 would",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("paths lacks %q:\n%s", want, out)
		}
	}
}

// TestPathsKnowsEveryVerb runs commands across every group and checks that
// each verb their lines name is in verbs.VerbPaths.
func TestPathsKnowsEveryVerb(t *testing.T) {
	s := newTestShell(t, 2, 1, true, nil)
	defer s.Close()
	execAll(t, s, "devices", "devinfo A")
	execAll(t, s, pathsSetup...)
	execAll(t, s,
		"query_device ctx0", "query_port ctx0", "query_gid ctx0", "query_gid ctx0 index=1", "async_events ctx0",
		"create_comp_channel ctx0", "create_cq ctx0 channel=ch0", "req_notify_cq cq2",
		"create_srq pd1", "modify_srq srq0 srq_limit=1", "query_srq srq0", "post_srq_recv srq0 mr=mr1 length=64",
		"create_qp pd0 type=ud send_cq=cq2 recv_cq=cq2", "connect qp2 qp2", "create_ah pd0 dgid=A sgid_index=1",
		"attach_mcast qp2 gid=ff0e::1", "detach_mcast qp2 gid=ff0e::1",
		"post_recv qp2 mr=mr0 length=128", "post_send qp2 mr=mr0 length=8 ah=ah0 remote_qpn=qp2",
		"post_recv qp1 mr=mr1 length=64", "post_send qp0 mr=mr0 length=8", "poll_cq cq0",
		"get_cq_event ch0", "ack_cq_events cq2", "poll_cq cq2", "query_qp qp0", "resize_cq cq0 cqe=64",
		"destroy_ah ah0", "destroy_qp qp2", "destroy_srq srq0", "dereg_mr mr1",
		"destroy_qp qp0", "destroy_qp qp1", "destroy_cq cq2", "destroy_comp_channel ch0", "dereg_mr mr0",
		"destroy_cq cq0", "dealloc_pd pd0", "close_device ctx0")
	order := s.counts().order
	if len(order) < 30 {
		t.Errorf("the commands named only %d verbs: %v", len(order), order)
	}
	for _, name := range order {
		if _, ok := verbs.PathOf(name); !ok {
			t.Errorf("the shell ran %s, which verbs.VerbPaths does not know", name)
		}
	}
}

// TestPathsResetAndClear: reset and paths clear start the counts again.
func TestPathsResetAndClear(t *testing.T) {
	s := newTestShell(t, 2, 1, true, nil)
	defer s.Close()
	execAll(t, s, "open_device A", "alloc_pd ctx0")
	if n := len(s.counts().order); n != 2 {
		t.Fatalf("counted %d verbs, want 2", n)
	}
	if out, _ := s.Exec("paths"); !strings.Contains(out, "of these 2 calls, 2 make system calls, on rxe and on hardware alike") {
		t.Errorf("paths after the control path alone:\n%s", out)
	}
	execAll(t, s, "reset")
	if vc := s.counts(); len(vc.order) != 0 {
		t.Errorf("after reset the counts are %v; want none", vc.order)
	}
	execAll(t, s, "open_device A", "paths clear")
	if vc := s.counts(); len(vc.order) != 0 {
		t.Errorf("after paths clear the counts are %v; want none", vc.order)
	}
	out, _ := s.Exec("paths")
	if !strings.Contains(out, "no verb counted yet") {
		t.Errorf("paths with nothing counted:\n%s", out)
	}
}

// TestPathsErrors: a verb that is not in the table gets a usage error that
// names the nearest one.
func TestPathsErrors(t *testing.T) {
	s := newTestShell(t, 2, 1, true, nil)
	defer s.Close()
	for _, tt := range []struct{ line, msg, hint string }{
		{"paths post_sned", `no verb "post_sned"`, "did you mean post_send?"},
		{"paths ibv_rc_pingpong", `no verb "ibv_rc_pingpong"`, "paths all lists them"},
		{"paths post_send all", "paths takes one word, not 2", "usage: paths"},
	} {
		_, err := s.Exec(tt.line)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tt.msg) || !strings.Contains(ue.hint, tt.hint) {
			t.Errorf("%s: error %v; want %q with hint %q", tt.line, err, tt.msg, tt.hint)
		}
	}
}

// TestVerbCallsAreData checks that a cell records the verb calls its verb
// lines show, that each line is made from them, and that the path tag is the
// verb's (verbs.VerbPath.Data), not the command's: ibv_req_notify_cq enters
// the kernel on rxe but is on the data path.
func TestVerbCallsAreData(t *testing.T) {
	s := newTestShell(t, 2, 1, true, nil)
	defer s.Close()
	execAll(t, s, pathsSetup...)
	for _, tt := range []struct {
		line string
		want []VerbCall
		tag  string
	}{
		{"devinfo A", []VerbCall{{Name: "ibv_open_device", Args: "sim0"}, {Name: "ibv_query_device", Bare: true},
			{Name: "ibv_query_port", Bare: true}, {Name: "ibv_close_device", Bare: true}}, "[control path]"},
		{"req_notify_cq cq0", []VerbCall{{Name: "ibv_req_notify_cq", Args: "cq0, solicited_only=0", Result: "= 0"}}, "[data path]"},
		{"post_recv qp1 mr=mr1 length=64 count=2", []VerbCall{{Name: "ibv_post_recv", Args: "qp1, 2 WRs", Result: "= 0", WRs: 2}}, "[data path]"},
		{"async_events ctx0", []VerbCall{{Name: "ibv_get_async_event", Args: "ctx0", Result: ": EAGAIN (no event pending)"}}, "[control path]"},
	} {
		out, err := s.Exec(tt.line)
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		cells := s.Cells()
		got := cells[len(cells)-1].Verbs
		if len(got) != len(tt.want) {
			t.Fatalf("%s: recorded %v; want %v", tt.line, got, tt.want)
		}
		var parts []string
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: call %d is %+v; want %+v", tt.line, i, got[i], tt.want[i])
			}
			parts = append(parts, got[i].String())
		}
		if want := strings.Join(parts, ", ") + "  " + tt.tag; !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", tt.line, want, out)
		}
	}
}
