package shell

import (
	"strings"
	"testing"
)

// twoSides opens A and B, each with a PD and a CQ, then runs more.
func twoSides(more ...string) []string {
	return append([]string{"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1", "create_cq ctx0", "create_cq ctx1"}, more...)
}

// TestDestQPNOnAnotherDevice: dest_qpn= naming a QP of another device
// than dgid= sends to gets a note; the right QP, or a number, none.
func TestDestQPNOnAnotherDevice(t *testing.T) {
	rtr := "state=rtr path_mtu=1024 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 sgid_index=1 hop_limit=1"
	tests := []struct {
		line, note string
	}{
		{"modify_qp qp0 dest_qpn=qp0 dgid=qp1 " + rtr, "note: dest_qpn=qp0 names qp0, but dgid= is another device's GID, where QP number 0x000011 is qp1: the packets go to qp1"},
		{"modify_qp qp0 dest_qpn=qp1 dgid=qp1 " + rtr, ""},
		{"modify_qp qp0 dest_qpn=0x11 dgid=B " + rtr, ""},
	}
	for _, tc := range tests {
		sh := newTestShell(t, 2, 1, true, nil)
		mustExec(t, sh, twoSides("create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
			"modify_qp qp0 state=init pkey_index=0 port=1 access=0")...)
		out := mustExec(t, sh, tc.line)
		flat := strings.Join(strings.Fields(out), " ")
		if tc.note == "" && strings.Contains(flat, "note: dest_qpn") || tc.note != "" && !strings.Contains(flat, tc.note) {
			t.Errorf("%s said:\n%s\nwant note %q", tc.line, out, tc.note)
		}
		sh.Close()
	}
}

// TestRemoteQPNOnAnotherDevice: a UD send whose remote_qpn= names a QP of
// another device than its AH's gets a note, and the number is labelled
// with the QP it reaches; the right QP, or a number, get no note.
func TestRemoteQPNOnAnotherDevice(t *testing.T) {
	tests := []struct {
		line, label, note string
	}{
		{"post_send qp0 mr=mr0 length=8 ah=ah0 remote_qpn=qp0 remote_qkey=0x11111111", "remote_qpn 0x000011 (qp1)",
			"note: remote_qpn=qp0 names qp0, but ah0 sends to another device's GID, where QP number 0x000011 is qp1: the datagram goes to qp1"},
		{"post_send qp0 mr=mr0 length=8 ah=ah0 remote_qpn=qp1 remote_qkey=0x11111111", "remote_qpn 0x000011 (qp1)", ""},
		{"post_send qp0 mr=mr0 length=8 ah=ah0 remote_qpn=0x11 remote_qkey=0x11111111", "remote_qpn 0x000011 (qp1)", ""},
		// A multicast group is no device: the QPN is the group's business.
		{"post_send qp0 mr=mr0 length=8 ah=ah1 remote_qpn=qp1 remote_qkey=0x11111111", "remote_qpn 0x000011 (qp1)", ""},
	}
	for _, tc := range tests {
		sh := newTestShell(t, 2, 1, true, nil)
		mustExec(t, sh, twoSides("reg_mr pd0 length=64 access=local_write", "create_qp pd0 type=ud send_cq=cq0 recv_cq=cq0",
			"create_qp pd1 type=ud send_cq=cq1 recv_cq=cq1", "connect qp0 qp1", "create_ah pd0 dgid=B sgid_index=1", "create_ah pd0 dgid=ff02::1 sgid_index=1")...)
		out := mustExec(t, sh, tc.line)
		flat := strings.Join(strings.Fields(out), " ")
		if !strings.Contains(flat, tc.label) || tc.note == "" && strings.Contains(flat, "note: remote_qpn") || tc.note != "" && !strings.Contains(flat, tc.note) {
			t.Errorf("%s said:\n%s\nwant label %q, note %q", tc.line, out, tc.label, tc.note)
		}
		sh.Close()
	}
}
