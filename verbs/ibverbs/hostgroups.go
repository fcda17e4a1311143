//go:build linux && cgo && ibverbs

package ibverbs

import (
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// The provider joins IP multicast groups on its devices' netdevs with
// sockets it keeps (hostgroups_linux.go); Close leaves them all.

var _ verbs.HostGroups = (*provider)(nil)

// hostDevice refuses a device the provider did not list.
func (p *provider) hostDevice(op, device string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return refuse(op, verbs.EINVAL, "create a new provider (ibverbs.New)", "the provider was closed, and its joins with it")
	}
	var names []string
	for _, d := range p.devs {
		if d.Name() == device {
			return nil
		}
		names = append(names, d.Name())
	}
	return refuse(op, verbs.ENODEV, "name one of the devices ibv_get_device_list gave: "+strings.Join(names, ", "),
		"no RDMA device %s", device)
}

// JoinIPGroup implements verbs.HostGroups: a UDP socket, kept open, with
// IP_ADD_MEMBERSHIP (an IPv4-mapped GID) or IPV6_JOIN_GROUP on the index
// of the device's netdev.
func (p *provider) JoinIPGroup(device string, g verbs.GID) error {
	if err := p.hostDevice(groupOp(g, true), device); err != nil {
		return err
	}
	return p.groups.join(device, g)
}

// LeaveIPGroup implements verbs.HostGroups: IP_DROP_MEMBERSHIP or
// IPV6_LEAVE_GROUP on the socket of the newest join, which is then closed.
func (p *provider) LeaveIPGroup(device string, g verbs.GID) error {
	if err := p.hostDevice(groupOp(g, false), device); err != nil {
		return err
	}
	return p.groups.leave(device, g)
}

// IPGroups implements verbs.HostGroups: the groups this provider joined on
// the device.
func (p *provider) IPGroups(device string) ([]verbs.GID, error) {
	if err := p.hostDevice("ip_groups", device); err != nil {
		return nil, err
	}
	return p.groups.list(device), nil
}
