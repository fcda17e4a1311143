package sim

import (
	"bytes"
	"sort"

	"github.com/vsh-rdma/vsh/verbs"
)

// The host IP groups of verbs.HostGroups, by device name, over
// JoinHostGroup and LeaveHostGroup (mcast.go).

var _ verbs.HostGroups = (*Fabric)(nil)

// joinIPGroup does JoinIPGroup's work.
func (f *Fabric) joinIPGroup(device string, g verbs.GID) error {
	i, err := f.deviceIndex(hostGroupOp(g, true), device)
	if err != nil {
		return err
	}
	return f.joinHostGroup(i, g)
}

// leaveIPGroup does LeaveIPGroup's work.
func (f *Fabric) leaveIPGroup(device string, g verbs.GID) error {
	i, err := f.deviceIndex(hostGroupOp(g, false), device)
	if err != nil {
		return err
	}
	err = f.leaveHostGroup(i, g)
	if e, ok := verbs.AsError(err); ok && e.Errno == eADDRNOTAVAIL {
		// The hint names this interface's join, not the fabric's.
		c := *e
		c.Hint = "leave only a group the host joined (JoinIPGroup; in vsh, join_group)"
		return &c
	}
	return err
}

// ipGroups does IPGroups's work.
func (f *Fabric) ipGroups(device string) ([]verbs.GID, error) {
	i, err := f.deviceIndex("ip_groups", device)
	if err != nil {
		return nil, err
	}
	var out []verbs.GID
	for g, n := range f.devs[i].ipGroups {
		for range n {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(a, b int) bool { return bytes.Compare(out[a][:], out[b][:]) < 0 })
	return out, nil
}
