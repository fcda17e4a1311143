package shell

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// bareProvider is a backend with none of the optional interfaces: the
// simulator seen as a real device is, with XRC or without it as made, and
// no way to switch it (verbs.XRCSwitch) or to look at its queues.
type bareProvider struct{ verbs.Provider }

// newBareShell is a session on a simulator made with cfg, behind
// bareProvider.
func newBareShell(t *testing.T, cfg sim.Config) *Shell {
	t.Helper()
	sh, err := New(Options{Open: func() (verbs.Provider, error) { return bareProvider{sim.New(cfg)}, nil }, Plain: true})
	if err != nil {
		t.Fatal(err)
	}
	sh.noRecover = true
	t.Cleanup(func() { sh.Close() })
	return sh
}

// xrcSetup makes what every XRC test needs: on A a PD, a CQ and an MR; on
// B the same, an XRC domain, an XRC SRQ with cq1 and an XRC_RECV QP
// (qp0); on A an XRC_SEND QP (qp1).
var xrcSetup = []string{
	"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1",
	"create_cq ctx0 cqe=16", "create_cq ctx1 cqe=16",
	"reg_mr pd0 length=4096 access=local_write", "reg_mr pd1 length=4096 access=local_write",
	"open_xrcd ctx1", "create_srq_ex pd1 type=xrc xrcd=xrcd0 cq=cq1 max_wr=16",
	"create_qp_ex ctx1 type=xrc_recv xrcd=xrcd0", "create_qp_ex pd0 type=xrc_send send_cq=cq0",
}

// TestXRCVerbsWithoutXRC: with XRC off, as on kernel rxe, every XRC verb
// fails with EOPNOTSUPP, and the hint says how this session turns it on.
// Reference: libibverbs dummy_ops.c (open_xrcd, create_srq_ex, ...).
func TestXRCVerbsWithoutXRC(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup []string
		line  string
	}{
		{"open_xrcd", nil, "open_xrcd ctx1"},
		{"open_xrcd with a file", nil, "open_xrcd ctx1 file=/tmp/xrc oflags=O_CREAT"},
		{"xrc_send QP", nil, "create_qp_ex pd0 type=xrc_send send_cq=cq0"},
		{"xrc_send QP through create_qp", nil, "create_qp pd0 type=xrc_send send_cq=cq0 recv_cq=cq0"},
		{"get_srq_num", []string{"create_srq pd0"}, "get_srq_num srq0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			execAll(t, sh, append([]string{"open_device A", "open_device B", "alloc_pd ctx1", "create_cq ctx1"}, tt.setup...)...)
			_, err := sh.Exec(tt.line)
			if !errors.Is(err, verbs.EOPNOTSUPP) {
				t.Fatalf("%s = %v; want EOPNOTSUPP", tt.line, err)
			}
			if msg := sh.FormatError(err); !strings.Contains(msg, "hint: backend xrc=on gives the simulator XRC") {
				t.Errorf("%s: the error does not say how to turn XRC on:\n%s", tt.line, msg)
			}
		})
	}
}

// TestXRCMistakes: the learner's mistakes with XRC, each refused with what
// is wrong: by vsh before any verb (a usage error) or by the verb (errno).
func TestXRCMistakes(t *testing.T) {
	for _, tt := range []struct {
		line  string
		errno syscall.Errno // 0: a usage error, no verb ran
		want  string
	}{
		{"post_recv qp0 mr=mr1", verbs.EINVAL, "post_recv: EINVAL: an xrc_recv QP has no receive queue"},
		{"post_recv qp1 mr=mr0", verbs.EINVAL, "post_recv: EINVAL: an xrc_send QP has no receive queue"},
		{"post_send qp1 mr=mr0 length=8", 0, "an XRC send needs remote_srqn="},
		{"post_send qp1 mr=mr0 length=8 remote_srqn=mr0", 0, "bad remote_srqn=mr0: mr0 is a memory region; give an SRQ"},
		{"close_xrcd xrcd0", verbs.EBUSY, "hint: destroy what was made through xrcd0 first: qp0, srq0"},
		{"backend xrc=off", verbs.EBUSY, "XRC domains open"},
		{"create_qp_ex ctx0 type=xrc_send send_cq=cq0", 0, "an XRC_SEND QP needs a PD"},
		{"create_qp_ex pd1 type=xrc_recv xrcd=xrcd0", 0, "an XRC_RECV QP has no PD"},
		{"create_qp_ex ctx1 type=xrc_recv xrcd=xrcd0 recv_cq=cq1", 0, "recv_cq= is not for an XRC_RECV QP"},
		{"create_qp_ex ctx1 type=xrc_recv", verbs.EINVAL, "XRC domain"},
		{"create_qp_ex pd0 type=rc send_cq=cq0", 0, "missing recv_cq="},
		{"create_qp_ex pd0 type=xrc_send send_cq=cq0 xrcd=xrcd0", 0, "xrcd= is for type=xrc_recv"},
		{"create_srq_ex pd1 type=basic cq=cq1", 0, "xrcd= and cq= are for an XRC SRQ"},
		{"create_srq_ex pd1 type=xrc xrcd=xrcd0", verbs.EINVAL, "CQ"},
		{"open_xrcd ctx1 oflags=O_TRUNC", 0, "is no open(2) flag ibv_open_xrcd reads"},
		{"open_xrcd ctx1 file=nofile oflags=0", verbs.EAGAIN, "O_CREAT is not set"},
		{"open_qp ctx1 xrcd=xrcd0 qp_num=0x999", verbs.EINVAL, "has no XRC_RECV QP"},
		{"open_qp ctx1 xrcd=xrcd0 qp_num=qp0 type=rc", verbs.EINVAL, "cannot be opened"},
		{"connect qp1 qp1", 0, "XRC connects a sender to a receiver"},
	} {
		t.Run(tt.line, func(t *testing.T) {
			sh := newTestShellConfig(t, sim.Config{Devices: 2, Seed: 1, XRC: true}, true, nil)
			defer sh.Close()
			execAll(t, sh, xrcSetup...)
			out, err := sh.Exec(tt.line)
			if err == nil {
				t.Fatalf("%s succeeded; want it refused:\n%s", tt.line, out)
			}
			var ue *usageError
			switch {
			case tt.errno == 0 && !errors.As(err, &ue):
				t.Errorf("%s = %v; want a usage error, before any verb", tt.line, err)
			case tt.errno != 0 && !errors.Is(err, tt.errno):
				t.Errorf("%s = %v; want %s", tt.line, err, verbs.ErrnoName(tt.errno))
			}
			if msg := sh.FormatError(err); !strings.Contains(msg, tt.want) {
				t.Errorf("%s: error\n%s\nwant it to say %q", tt.line, msg, tt.want)
			}
		})
	}
}

// TestXRCExchange: a send from the XRC_SEND QP that names the SRQ lands in
// the SRQ's buffer and completes on the SRQ's CQ with the XRC_RECV QP's
// number; a number no SRQ has fails the send with IBV_WC_REM_ACCESS_ERR.
func TestXRCExchange(t *testing.T) {
	sh := newTestShellConfig(t, sim.Config{Devices: 2, Seed: 1, XRC: true}, true, nil)
	defer sh.Close()
	execAll(t, sh, xrcSetup...)
	execAll(t, sh, "connect qp1 qp0", `fill mr0 "xrc!"`, "post_srq_recv srq0 mr=mr1 length=64 wr_id=7",
		"post_send qp1 mr=mr0 length=4 remote_srqn=srq0 wr_id=8")
	out, err := sh.Exec("poll_cq cq1")
	if err != nil {
		t.Fatal(err)
	}
	wcs := sh.Cells()[len(sh.Cells())-1].Completions
	if len(wcs) != 1 || wcs[0].Status != verbs.WCSuccess || wcs[0].WRID != 7 || wcs[0].ByteLen != 4 {
		t.Fatalf("poll_cq cq1 = %+v; want wr_id 7 IBV_WC_SUCCESS of 4 bytes\n%s", wcs, out)
	}
	qp0, _ := sh.Object("qp0")
	if got, want := wcs[0].QPNum, qp0.(verbs.QP).Num(); got != want {
		t.Errorf("the receive's qp_num = %#x; want the XRC_RECV QP's, %#x", got, want)
	}
	if !strings.Contains(out, "(qp0)") {
		t.Errorf("poll_cq cq1 does not name qp0:\n%s", out)
	}
	if out, _ := sh.Exec("mem mr1 0 4"); !strings.Contains(out, "|xrc!|") {
		t.Errorf("the message did not land in the SRQ's buffer:\n%s", out)
	}
	execAll(t, sh, "post_srq_recv srq0 mr=mr1 length=64", "post_send qp1 mr=mr0 length=4 srqn=0x123456 wr_id=9", "poll_cq cq0")
	wcs = sh.Cells()[len(sh.Cells())-1].Completions
	if len(wcs) != 2 || wcs[0].WRID != 8 || wcs[0].Status != verbs.WCSuccess || wcs[1].WRID != 9 || wcs[1].Status != verbs.WCRemAccessErr {
		t.Errorf("poll_cq cq0 = %+v; want wr_id 8 IBV_WC_SUCCESS, then wr_id 9 (to SRQ 0x123456) IBV_WC_REM_ACCESS_ERR", wcs)
	}
}

// TestXRCCountedQueues: where the backend shows no queues, vsh counts an
// XRC SRQ's receives itself, and retires them on the completions the
// SRQ's CQ gives for the XRC_RECV QP, which has no CQs of its own.
func TestXRCCountedQueues(t *testing.T) {
	sh := newBareShell(t, sim.Config{Devices: 2, Seed: 1, XRC: true})
	execAll(t, sh, xrcSetup...)
	execAll(t, sh, "connect qp1 qp0", "post_srq_recv srq0 mr=mr1 length=64 count=2", "post_send qp1 mr=mr0 length=4 remote_srqn=srq0")
	if out, _ := sh.Exec("show srq0"); !strings.Contains(out, "srq0 SRQ 2/") {
		t.Fatalf("show srq0 after two receives:\n%s", out)
	}
	execAll(t, sh, "poll_cq cq1 wait=1s", "poll_cq cq0 wait=1s")
	out, _ := sh.Exec("show srq0 qp0 qp1")
	for _, want := range []string{"srq0 SRQ 1/", "srq_type IBV_SRQT_XRC", "in xrcd0, its receives complete on cq1",
		"qp0 no queues", "qp1 SQ 0/", "no RQ (XRC_SEND)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show srq0 qp0 qp1 does not say %q:\n%s", want, out)
		}
	}
}

// TestXRCReceiveQPHasNoPD: an XRC_RECV QP's PD() is nil; the commands that
// need the QP's context find it through its domain.
func TestXRCReceiveQPHasNoPD(t *testing.T) {
	sh := newTestShellConfig(t, sim.Config{Devices: 2, Seed: 1, XRC: true}, true, nil)
	defer sh.Close()
	execAll(t, sh, xrcSetup...)
	execAll(t, sh, "open_qp ctx1 xrcd=xrcd0 qp_num=qp0")
	for _, line := range []string{"pp_dest qp0", "pp_dest qp2 gid_index=1", "query_qp qp0", "show qp0 --diagram", "show", "show xrcd0", "store mr1 u32=qp0.qp_num"} {
		if out, err := sh.Exec(line); err != nil {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
	out, _ := sh.Exec("query_qp qp0")
	if !strings.Contains(out, "xrcd  xrcd0") || strings.Contains(out, "send_cq") {
		t.Errorf("query_qp of an XRC_RECV QP names its domain, not CQs:\n%s", out)
	}
}

// TestBackendXRC: backend xrc=on|off switches the simulator's XRC, reset
// keeps the choice, and a backend without verbs.XRCSwitch says it cannot.
func TestBackendXRC(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	out := mustExec(t, sh, "backend")
	if !strings.Contains(out, "off — as kernel rxe, which has no XRC verbs") {
		t.Errorf("backend does not say XRC is off:\n%s", out)
	}
	out = mustExec(t, sh, "backend xrc=on", "reset", "open_device B", "open_xrcd ctx0", "backend")
	if !strings.Contains(out, "on — beyond rxe: XRC as mlx5 implements it") {
		t.Errorf("backend does not say XRC is on after reset:\n%s", out)
	}
	if _, err := sh.Exec("backend xrc=maybe"); err == nil {
		t.Error("backend xrc=maybe succeeded")
	}
	if !contains(sh.LessonEnv().Settings(), "xrc=on") {
		t.Errorf("Settings() = %q; want xrc=on in it", sh.LessonEnv().Settings())
	}

	bare := newBareShell(t, sim.Config{Devices: 1, Seed: 1})
	out = mustExec(t, bare, "backend")
	if !strings.Contains(out, "the device's own: vsh cannot switch it") {
		t.Errorf("backend on a backend without XRCSwitch:\n%s", out)
	}
	_, err := bare.Exec("backend xrc=on")
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "cannot switch XRC on or off") {
		t.Errorf("backend xrc=on without XRCSwitch = %v; want a usage error that says it cannot", err)
	}
}

const xrcLesson = `---
id: xrc-test
title: XRC in a test
level: advanced
minutes: 1
needs: xrc
---

One step.

` + "```vsh auto\nopen_device B\nopen_xrcd ctx0\n```\n"

// TestLessonNeedsXRC: a lesson that needs xrc turns the simulator's XRC on
// (and its judge's reference session's), and is refused, with the reason,
// on a backend that has no XRC and cannot switch it.
func TestLessonNeedsXRC(t *testing.T) {
	l, err := lessons.Parse("xrc-test.md", []byte(xrcLesson))
	if err != nil {
		t.Fatal(err)
	}
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	if err := sh.canTake(l); err != nil {
		t.Fatalf("canTake on the simulator: %v", err)
	}
	said, err := sh.PrepareLesson(l)
	if err != nil || !strings.Contains(said, "XRC is on for this lesson") {
		t.Fatalf("PrepareLesson = %q, %v; want XRC turned on", said, err)
	}
	if !sh.xrcOn() {
		t.Fatal("XRC is still off")
	}
	shadow, closeShadow, err := sh.LessonEnv().Shadow()
	if err != nil {
		t.Fatal(err)
	}
	defer closeShadow()
	if sw, ok := shadow.Provider().(verbs.XRCSwitch); !ok || !sw.XRC() {
		t.Error("the judge's reference session has no XRC")
	}
	if out, err := shadow.Exec("open_device B"); err != nil {
		t.Fatal(err, out)
	}
	if out, err := shadow.Exec("open_xrcd ctx0"); err != nil {
		t.Errorf("open_xrcd in the reference session: %v\n%s", err, out)
	}
	if said, err := sh.PrepareLesson(l); said != "" || err != nil {
		t.Errorf("PrepareLesson again = %q, %v; want nothing to say", said, err)
	}

	bare := newBareShell(t, sim.Config{Devices: 1, Seed: 1})
	err = bare.canTake(l)
	if err == nil || !strings.Contains(err.Error(), "lesson xrc-test needs what this backend lacks: xrc: ibv_open_xrcd on sim0: EOPNOTSUPP") {
		t.Errorf("canTake without XRC = %v; want it refused with open_xrcd's EOPNOTSUPP", err)
	}
	if _, err := bare.PrepareLesson(l); err == nil {
		t.Error("PrepareLesson without XRC succeeded")
	}
	withXRC := newBareShell(t, sim.Config{Devices: 1, Seed: 1, XRC: true})
	if err := withXRC.canTake(l); err != nil {
		t.Errorf("canTake on a device that has XRC itself: %v", err)
	}
}

// TestXRCCompletion: the XRC arguments complete: QP and SRQ types, the
// domain handles, open(2) flags, the SRQ handles for remote_srqn.
func TestXRCCompletion(t *testing.T) {
	sh := newTestShellConfig(t, sim.Config{Devices: 2, Seed: 1, XRC: true}, true, nil)
	defer sh.Close()
	execAll(t, sh, xrcSetup...)
	for _, tt := range []struct{ line, want string }{
		{"create_qp_ex pd0 type=xrc_", "xrc_send xrc_recv"},
		{"create_qp_ex ctx1 type=xrc_recv xrcd=", "xrcd0"},
		{"create_qp_ex ", "pd0 pd1 ctx0 ctx1"},
		{"create_srq_ex pd1 type=", "basic xrc"},
		{"open_xrcd ctx1 oflags=O_", "O_CREAT O_CREAT|O_EXCL"},
		{"backend xrc=", "on off"},
		{"post_send qp1 remote_srqn=", "srq0"},
		{"close_xrcd ", "xrcd0"},
		{"open_qp ctx1 xrcd=xrcd0 qp_num=", "qp0 qp1"},
	} {
		var got []string
		for _, sg := range sh.Complete(tt.line) {
			got = append(got, sg.Text)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Complete(%q) = %q; want %q", tt.line, got, tt.want)
		}
	}
}
