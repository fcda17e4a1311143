package verbs

import (
	"strings"
	"testing"
)

// TestVerbPathsComplete checks the table's entries: every one named, with a
// known path, what rxe does and a source in rdma-core's tree, and no verb
// twice.
func TestVerbPathsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range VerbPaths() {
		if !strings.HasPrefix(p.Verb, "ibv_") {
			t.Errorf("%q: want a libibverbs function name", p.Verb)
		}
		if seen[p.Verb] {
			t.Errorf("%s is in the table twice", p.Verb)
		}
		seen[p.Verb] = true
		if p.Path.String() == "unknown" || p.OnHardware().String() == "unknown" {
			t.Errorf("%s: path %d on rxe, %d on hardware: not a Path", p.Verb, p.Path, p.OnHardware())
		}
		if p.RXE == "" {
			t.Errorf("%s: says nothing of what rxe does", p.Verb)
		}
		if p.Hardware != 0 && p.HardwareNote == "" {
			t.Errorf("%s: takes another path on hardware (%s) without saying how", p.Verb, p.Hardware)
		}
		for _, src := range strings.Split(p.Source, "; ") {
			if !strings.HasPrefix(src, "libibverbs/") && !strings.HasPrefix(src, "providers/") && !strings.HasPrefix(src, "Linux drivers/") {
				t.Errorf("%s: source %q is not a path in rdma-core's (or Linux's) tree", p.Verb, src)
			}
		}
		if p.Path == PathDoorbellMMIO {
			t.Errorf("%s: an MMIO doorbell on rxe, whose device is the kernel", p.Verb)
		}
	}
	for _, v := range []string{"ibv_open_device", "ibv_alloc_pd", "ibv_reg_mr", "ibv_create_cq", "ibv_create_qp",
		"ibv_modify_qp", "ibv_post_send", "ibv_post_recv", "ibv_poll_cq", "ibv_req_notify_cq", "ibv_get_cq_event"} {
		if !seen[v] {
			t.Errorf("%s is missing", v)
		}
	}
}

// TestVerbPathsRXE pins the paths that the lesson paths and docs/lab.md
// teach and that the lab measured with strace on rxe0 (rdma-core 44,
// providers/rxe/rxe.c; Linux 6.1).
func TestVerbPathsRXE(t *testing.T) {
	tests := []struct {
		verb         string
		rxe, hw      Path
		kernelOnRXE  bool
		kernelOnHard bool
	}{
		// The control path: uverbs commands (ioctl on /dev/infiniband/uverbs0).
		{"ibv_alloc_pd", PathCommand, PathCommand, true, true},
		{"ibv_reg_mr", PathCommand, PathCommand, true, true},
		{"ibv_create_qp", PathCommand, PathCommand, true, true},
		{"ibv_modify_qp", PathCommand, PathCommand, true, true},
		// rxe's doorbell is write() of an empty POST_SEND (post_send_db); mlx5's is an MMIO store.
		{"ibv_post_send", PathDoorbellWrite, PathDoorbellMMIO, true, false},
		// Receives and completions: the rings mapped at create time.
		{"ibv_post_recv", PathUser, PathUser, false, false},
		{"ibv_post_srq_recv", PathUser, PathUser, false, false},
		{"ibv_poll_cq", PathUser, PathUser, false, false},
		// rxe arms a CQ with a command (ibv_cmd_req_notify_cq); mlx5 through its UAR.
		{"ibv_req_notify_cq", PathCommand, PathDoorbellMMIO, true, false},
		{"ibv_get_cq_event", PathEvent, PathEvent, true, true},
		{"ibv_ack_cq_events", PathUser, PathUser, false, false},
		{"ibv_get_device_list", PathFile, PathFile, true, true},
	}
	for _, tt := range tests {
		p, ok := PathOf(tt.verb)
		if !ok {
			t.Errorf("PathOf(%q): not found", tt.verb)
			continue
		}
		if p.Path != tt.rxe || p.OnHardware() != tt.hw {
			t.Errorf("PathOf(%q) = %s on rxe, %s on hardware; want %s, %s", tt.verb, p.Path, p.OnHardware(), tt.rxe, tt.hw)
		}
		if p.Path.EntersKernel() != tt.kernelOnRXE || p.OnHardware().EntersKernel() != tt.kernelOnHard {
			t.Errorf("%s enters the kernel: %v on rxe, %v on hardware; want %v, %v", tt.verb,
				p.Path.EntersKernel(), p.OnHardware().EntersKernel(), tt.kernelOnRXE, tt.kernelOnHard)
		}
	}
}

func TestPathOf(t *testing.T) {
	for _, name := range []string{"ibv_post_send", "post_send"} {
		if p, ok := PathOf(name); !ok || p.Verb != "ibv_post_send" {
			t.Errorf("PathOf(%q) = %q, %v; want ibv_post_send", name, p.Verb, ok)
		}
	}
	for _, name := range []string{"", "ibv_", "post", "ibv_rc_pingpong", "IBV_POST_SEND"} {
		if p, ok := PathOf(name); ok {
			t.Errorf("PathOf(%q) = %q; want not found", name, p.Verb)
		}
	}
	if Path(0).String() != "unknown" || Path(0).EntersKernel() {
		t.Errorf("the zero Path is %q, enters the kernel %v; want unknown, false", Path(0), Path(0).EntersKernel())
	}
}

// TestDataPath checks which verbs are on the data path: those that move data
// and completions, whatever system call rxe makes for them.
func TestDataPath(t *testing.T) {
	data := map[string]bool{
		"ibv_post_send": true, "ibv_post_recv": true, "ibv_post_srq_recv": true, "ibv_poll_cq": true,
		"ibv_req_notify_cq": true, "ibv_get_cq_event": true, "ibv_ack_cq_events": true,
	}
	for _, p := range VerbPaths() {
		if p.Data != data[p.Verb] {
			t.Errorf("%s: Data is %v; want %v", p.Verb, p.Data, data[p.Verb])
		}
	}
}
