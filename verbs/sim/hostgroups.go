package sim

import (
	"bytes"
	"sort"

	"github.com/vsh-rdma/vsh/verbs"
)

// The host IP groups of verbs.HostGroups, by device name, over
// JoinHostGroup and LeaveHostGroup (mcast.go).

var _ verbs.HostGroups = (*Fabric)(nil)

// JoinIPGroup implements verbs.HostGroups: JoinHostGroup on the named
// device, what a socket's IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP on its
// netdev does.
func (f *Fabric) JoinIPGroup(device string, g verbs.GID) error {
	i, err := f.deviceIndex(hostGroupOp(g, true), device)
	if err != nil {
		return err
	}
	return f.JoinHostGroup(i, g)
}

// LeaveIPGroup implements verbs.HostGroups: LeaveHostGroup on the named
// device.
func (f *Fabric) LeaveIPGroup(device string, g verbs.GID) error {
	i, err := f.deviceIndex(hostGroupOp(g, false), device)
	if err != nil {
		return err
	}
	err = f.LeaveHostGroup(i, g)
	if e, ok := verbs.AsError(err); ok && e.Errno == eADDRNOTAVAIL {
		// The hint names this interface's join, not the fabric's.
		c := *e
		c.Hint = "leave only a group the host joined (JoinIPGroup; in vsh, join_group)"
		return &c
	}
	return err
}

// IPGroups implements verbs.HostGroups: the groups joined on the named
// device, once per join, in increasing order.
func (f *Fabric) IPGroups(device string) ([]verbs.GID, error) {
	i, err := f.deviceIndex("ip_groups", device)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []verbs.GID
	for g, n := range f.devs[i].ipGroups {
		for range n {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(a, b int) bool { return bytes.Compare(out[a][:], out[b][:]) < 0 })
	return out, nil
}
