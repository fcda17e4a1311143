//go:build linux

package ibverbs

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// Host IP multicast groups (verbs.HostGroups) on a real RDMA device's
// netdev. On RoCE v2 ibv_attach_mcast only tells the device which QPs get a
// copy of a group's datagrams; the kernel's IP input hands rxe a datagram
// to a group only while the host is a member of it on rxe's netdev
// (ip_check_mc_rcu, ipv6_chk_mcast_addr). A program becomes a member the
// ordinary way, with a socket: IP_ADD_MEMBERSHIP for an IPv4 group
// (ip_mc_join_group) or IPV6_JOIN_GROUP for an IPv6 one
// (ipv6_sock_mc_join), on the interface's index. The membership lasts as
// long as the socket, so ipJoins keeps one open UDP socket per join and
// closes it on the leave. This needs no privilege and no cgo; the cgo
// backend's provider holds an ipJoins (hostgroups.go).

// ipJoins holds the sockets that keep a process's joins, by device.
type ipJoins struct {
	mu sync.Mutex
	// sysfs is where /sys is mounted ("" for /sys); tests point it at a
	// tree of their own.
	sysfs string
	// held are the sockets, oldest join first, by device and group.
	held   map[ipJoinKey][]int
	closed bool
}

type ipJoinKey struct {
	device string
	gid    verbs.GID
}

// groupOp names the socket call that joins or leaves g, as the
// simulator's errors name it: "setsockopt(IP_ADD_MEMBERSHIP)".
func groupOp(g verbs.GID, join bool) string {
	return "setsockopt(" + verbs.GroupSockopt(g, join) + ")"
}

// netdev returns the name and index of the netdev an RDMA device's port 1
// runs on: the netdev of its first GID that has one
// (/sys/class/infiniband/DEV/ports/1/gid_attrs/ndevs/N, which rdma-core's
// ibv_query_gid_ex reads too). For rxe that is the netdev of
// `rdma link add rxe0 type rxe netdev IF`.
func (j *ipJoins) netdev(op, device string) (string, int, error) {
	root := j.sysfs
	if root == "" {
		root = "/sys"
	}
	dir := filepath.Join(root, "class", "infiniband", device, "ports", "1", "gid_attrs", "ndevs")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", 0, verbs.Errorf(op, verbs.ENODEV, "check `rdma link show`: the device's port needs a netdev that is up",
			"cannot find %s's netdev: %v", device, err)
	}
	var slots []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			slots = append(slots, n)
		}
	}
	sort.Ints(slots)
	for _, n := range slots {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(n)))
		if name := strings.TrimSpace(string(b)); err == nil && name != "" {
			ifi, err := net.InterfaceByName(name)
			if err != nil {
				return "", 0, verbs.Errorf(op, verbs.ENODEV, "check `ip link show "+name+"`",
					"%s's netdev %s: %v", device, name, err)
			}
			return name, ifi.Index, nil
		}
	}
	return "", 0, verbs.Errorf(op, verbs.ENODEV, "bring the netdev up with an address (`ip link set IF up`), then try again",
		"no GID of %s's port 1 has a netdev (%s): its GID table is empty", device, dir)
}

// join makes the host a member of g on device's netdev with a socket of
// its own, which it keeps open until leave or close.
func (j *ipJoins) join(device string, g verbs.GID) error {
	op := groupOp(g, true)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return refuse(op, verbs.EINVAL, "open the backend again", "the provider was closed; its joins were left")
	}
	name, ifindex, err := j.netdev(op, device)
	if err != nil {
		return err
	}
	fd, err := groupSocket(g)
	if err != nil {
		return err
	}
	if errno := setGroup(fd, g, ifindex, true); errno != 0 {
		syscall.Close(fd)
		return groupError(op, errno, g, device, name)
	}
	if j.held == nil {
		j.held = map[ipJoinKey][]int{}
	}
	k := ipJoinKey{device, g}
	j.held[k] = append(j.held[k], fd)
	return nil
}

// leave undoes the newest join of g on device: the drop, then the close
// of its socket. With no join held, it asks the kernel all the same, on a
// socket that never joined, and returns what the kernel says
// (EADDRNOTAVAIL: a socket leaves only what it joined).
func (j *ipJoins) leave(device string, g verbs.GID) error {
	op := groupOp(g, false)
	j.mu.Lock()
	defer j.mu.Unlock()
	name, ifindex, err := j.netdev(op, device)
	if err != nil {
		return err
	}
	k := ipJoinKey{device, g}
	fds := j.held[k]
	var fd int
	if len(fds) > 0 {
		fd = fds[len(fds)-1]
		if j.held[k] = fds[:len(fds)-1]; len(j.held[k]) == 0 {
			delete(j.held, k)
		}
	} else if fd, err = groupSocket(g); err != nil {
		return err
	}
	errno := setGroup(fd, g, ifindex, false)
	syscall.Close(fd)
	if errno != 0 {
		return groupError(op, errno, g, device, name)
	}
	return nil
}

// list returns the groups joined on device, once per join, in order.
func (j *ipJoins) list(device string) []verbs.GID {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []verbs.GID
	for k, fds := range j.held {
		if k.device == device {
			for range fds {
				out = append(out, k.gid)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return bytes.Compare(out[a][:], out[b][:]) < 0 })
	return out
}

// close closes every socket, which leaves every group (ip_mc_drop_socket,
// ipv6_sock_mc_close).
func (j *ipJoins) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, fds := range j.held {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}
	j.held = nil
	j.closed = true
}

// groupSocket opens a UDP socket of g's family.
func groupSocket(g verbs.GID) (int, error) {
	family, what := syscall.AF_INET6, "socket(AF_INET6, SOCK_DGRAM)"
	if _, v4 := g.IPv4(); v4 {
		family, what = syscall.AF_INET, "socket(AF_INET, SOCK_DGRAM)"
	}
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		errno, _ := err.(syscall.Errno)
		return -1, verbs.Errorf(what, errno, "close some files, or raise ulimit -n", "a socket to hold the group: %v", err)
	}
	return fd, nil
}

// setGroup joins or leaves g on the interface with a setsockopt.
func setGroup(fd int, g verbs.GID, ifindex int, join bool) syscall.Errno {
	var err error
	if a, v4 := g.IPv4(); v4 {
		opt := syscall.IP_DROP_MEMBERSHIP
		if join {
			opt = syscall.IP_ADD_MEMBERSHIP
		}
		err = syscall.SetsockoptIPMreqn(fd, syscall.IPPROTO_IP, opt, &syscall.IPMreqn{Multiaddr: a.As4(), Ifindex: int32(ifindex)})
	} else {
		opt := syscall.IPV6_LEAVE_GROUP
		if join {
			opt = syscall.IPV6_JOIN_GROUP
		}
		err = syscall.SetsockoptIPv6Mreq(fd, syscall.IPPROTO_IPV6, opt, &syscall.IPv6Mreq{Multiaddr: g, Interface: uint32(ifindex)})
	}
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno
	}
	return verbs.EIO
}

// groupError explains the errno the kernel gave a join or a leave.
func groupError(op string, errno syscall.Errno, g verbs.GID, device, netdev string) error {
	group := verbs.GroupAddr(g)
	on := fmt.Sprintf("%s on %s's netdev %s", group, device, netdev)
	var why, hint string
	switch errno {
	case verbs.EINVAL:
		why = group + " is not a multicast address (ip_mc_join_group, ipv6_sock_mc_join: the kernel checks it first)"
		hint = "use a multicast group: ::ffff:239.1.1.1 (IPv4) or ff0e::1234 (IPv6)"
	case verbs.ENODEV:
		family := "IPv6"
		if _, v4 := g.IPv4(); v4 {
			family = "IPv4"
		}
		why = "the kernel found no " + family + " configuration on " + netdev + " (ip_mc_find_dev, ipv6_sock_mc_join's device lookup)"
		hint = "give " + netdev + " an " + family + " address, or use a group of the other family"
	case syscall.EADDRNOTAVAIL:
		why = "vsh holds no join of " + on + ", and a socket can leave only a group it joined (ip_mc_leave_group, ipv6_sock_mc_drop)"
		hint = "leave only what join_group joined; the groups an interface is in from the start (224.0.0.1, ff02::1) stay"
	default:
		why = fmt.Sprintf("the kernel refused %s: %v", on, errno)
	}
	return &verbs.Error{Op: op, Errno: errno, Why: why, Hint: hint}
}
