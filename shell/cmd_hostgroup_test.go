package shell

import (
	"errors"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// TestHostGroupsUnavailable: on a backend without verbs.HostGroups,
// join_group and leave_group say so (and what a program does instead), and
// backend lists the capability as missing.
func TestHostGroupsUnavailable(t *testing.T) {
	sh, err := New(Options{
		Open: func() (verbs.Provider, error) {
			return struct{ verbs.Provider }{sim.New(sim.Config{Devices: 1, Seed: 1})}, nil
		},
		Plain: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for _, line := range []string{"join_group A gid=::ffff:239.1.1.1", "leave_group A gid=ff0e::1234"} {
		_, err := sh.Exec(line)
		msg := sh.FormatError(err)
		if err == nil || !strings.Contains(msg, "is not available on this backend") || !strings.Contains(msg, "IP_ADD_MEMBERSHIP") {
			t.Errorf("%s = %q; want a refusal that names the socket join", line, msg)
		}
	}
	out, err := sh.Exec("backend")
	if err != nil || !strings.Contains(out, "IP groups (join_group, leave_group)    no:") {
		t.Errorf("backend = %q, %v; want the capability listed as missing", out, err)
	}
}

// TestHostGroupsReset: reset restarts the backend, and the joins go with
// the old one.
func TestHostGroupsReset(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	mustExec(t, sh, "join_group B gid=::ffff:239.1.1.1", "reset")
	_, err := sh.Exec("leave_group B gid=::ffff:239.1.1.1")
	if n := verbs.ErrnoOf(err); !errors.Is(err, n) || n != 99 {
		t.Errorf("leave after reset = %v; want EADDRNOTAVAIL: the new backend holds no join", err)
	}
}
