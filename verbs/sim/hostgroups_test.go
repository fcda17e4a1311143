package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestHostGroupsByName: verbs.HostGroups joins and leaves by device name,
// with the same effect on delivery and the same counting as
// JoinHostGroup; IPGroups lists the joins; a name the fabric does not
// have is ENODEV.
func TestHostGroupsByName(t *testing.T) {
	m := newMcastBed(t)
	var hg verbs.HostGroups = m.f
	g, _ := verbs.ParseGID("::ffff:239.1.1.1")
	g6, _ := verbs.ParseGID("ff0e::1234")
	if got, _ := m.send(g, 1, 1); len(got) != 0 {
		t.Fatalf("%s before any join: received on %v", g, got)
	}
	m.must(hg.JoinIPGroup("sim1", g))
	m.must(hg.JoinIPGroup("sim1", g6))
	m.must(hg.JoinIPGroup("sim1", g))
	list, err := hg.IPGroups("sim1")
	m.must(err)
	if s := gidList(list); s != "::ffff:239.1.1.1 ::ffff:239.1.1.1 ff0e::1234" {
		t.Errorf("IPGroups(sim1) = %s", s)
	}
	if list, _ := hg.IPGroups("sim0"); len(list) != 0 {
		t.Errorf("IPGroups(sim0) = %s; want none", gidList(list))
	}
	if got, _ := m.send(g, 1, 1); strings.Join(got, " ") != "sim1" {
		t.Errorf("%s joined on sim1: received on %v", g, got)
	}
	m.must(hg.LeaveIPGroup("sim1", g))
	m.must(hg.LeaveIPGroup("sim1", g))
	if got, _ := m.send(g, 1, 1); len(got) != 0 {
		t.Errorf("%s left twice: received on %v", g, got)
	}
	if list, _ := hg.IPGroups("sim1"); gidList(list) != "ff0e::1234" {
		t.Errorf("IPGroups(sim1) after the leaves = %s", gidList(list))
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"join", hg.JoinIPGroup("sim9", g), "setsockopt(IP_ADD_MEMBERSHIP): ENODEV: no device sim9"},
		{"leave", hg.LeaveIPGroup("rxe0", g6), "setsockopt(IPV6_LEAVE_GROUP): ENODEV: no device rxe0"},
		{"list", func() error { _, err := hg.IPGroups("B"); return err }(), "ENODEV: no device B"},
	} {
		if !errors.Is(tc.err, verbs.ENODEV) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v; want ENODEV and %q", tc.name, tc.err, tc.want)
		}
	}
}

func gidList(gs []verbs.GID) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.String())
	}
	return strings.Join(s, " ")
}
