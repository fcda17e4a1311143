package shell

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// join_group and leave_group: the host's half of RoCE multicast. On RoCE v2
// a multicast group is an IP multicast address, and ibv_attach_mcast only
// tells the device which QPs get a copy; the host's IP stack hands the
// device a datagram to a group only while the host is a member of it on the
// device's netdev. A program becomes a member with a socket
// (IP_ADD_MEMBERSHIP, IPV6_JOIN_GROUP) or with rdma_join_multicast; these
// commands do what the socket does, through verbs.HostGroups.

const groupHelp = "On RoCE v2 a multicast group is an IP multicast address, and a datagram to it is UDP in IP: the " +
	"host's IP stack hands the device a datagram to a group only while the host is a member of that group on the " +
	"device's netdev, and attach_mcast (ibv_attach_mcast) joins no group — it only tells the device which QPs get a " +
	"copy. Every interface is in 224.0.0.1, ff01::1 and ff02::1 from the start; any other group needs a join: a " +
	"socket's IP_ADD_MEMBERSHIP (IPv4) or IPV6_JOIN_GROUP (IPv6) on that interface, or rdma_join_multicast (rdma_cm), " +
	"which joins an IPv4 group with IGMP. join_group does what the socket does, on the netdev of the device named: A, " +
	"B, a device name, or a handle made on it (ctx1, qp17). An IPv4 group is written in its IPv4-mapped form, as its " +
	"GID is (::ffff:239.1.1.1). On the simulator it joins the simulated host's group; on real hardware vsh opens a UDP " +
	"socket, joins on the netdev's interface index and keeps the socket open until leave_group, reset or quit " +
	"(/proc/net/igmp and /proc/net/igmp6 show the membership meanwhile). Joins are counted, as the kernel counts a " +
	"group's users: each join_group needs its leave_group."

func groupArgs(join bool) []argSpec {
	gid, who := "the multicast group: ::ffff:239.1.1.1 (IPv4) or ff0e::1234 (IPv6)", "joins"
	if !join {
		gid, who = "a group join_group joined on the device", "leaves"
	}
	return []argSpec{
		pos("DEV", vDevice, true, "the device whose host "+who+": A, B, a device name, or a handle made on it (ctx1, qp17)"),
		reqKey("gid", vGID, gid, "dgid"),
	}
}

func joinGroupCmd() *command {
	return &command{Name: "join_group", Group: gQP, Usage: "join_group DEV gid=GROUP",
		Summary: "Make a device's host a member of an IP multicast group (a socket's IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP)",
		Help:    groupHelp,
		Args:    groupArgs(true), rawArgs: true, run: cmdJoinGroup, complete: completeGroup(true)}
}

func leaveGroupCmd() *command {
	return &command{Name: "leave_group", Group: gQP, Usage: "leave_group DEV gid=GROUP",
		Summary: "Undo one join_group (IP_DROP_MEMBERSHIP or IPV6_LEAVE_GROUP)",
		Help: "Undoes one join_group of the group on the device's netdev; the host stays a member while other joins " +
			"hold it (another join_group, another program on the same host, or a group every interface is in). " +
			"Leaving a group vsh did not join is EADDRNOTAVAIL, as for a socket that did not join it.",
		Args: groupArgs(false), rawArgs: true, run: cmdLeaveGroup, complete: completeGroup(false)}
}

// parsed parses a raw command's words with its Args (the commands are raw
// only so that their completion can offer groups).
func (c *call) parsed() (*call, error) {
	spec := *c.cmd
	spec.rawArgs = false
	a, err := parseArgs(&spec, c.a.pos)
	if err != nil {
		return nil, err
	}
	nc := *c
	nc.cmd, nc.a = &spec, a
	return &nc, nil
}

// groupDevice resolves DEV: A, B, a device name, or a handle made on a
// device. It returns the device's name.
func (s *Shell) groupDevice(w string) (string, error) {
	if k, isHandle := kindOfName(w); isHandle {
		o, ok := s.h.byName[strings.ToLower(w)]
		if !ok {
			return "", s.h.notFound(w, k)
		}
		ctx := ctxOf(o)
		if ctx == nil {
			return "", usagef("give A, B, a device name, or a handle made on a device (ctx0, qp1)", "%s has no device", w)
		}
		return ctx.Device().Name(), nil
	}
	d, err := s.device(w)
	if err != nil {
		return "", err
	}
	return d.Name(), nil
}

func (s *Shell) hostGroups(cmd string) (verbs.HostGroups, error) {
	hg, ok := s.prov.(verbs.HostGroups)
	if !ok {
		return nil, usagef("a program joins with a socket's IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP, or with rdma_join_multicast",
			"%s is not available on this backend (%s): it does not let vsh join IP multicast groups", cmd, s.prov.Name())
	}
	return hg, nil
}

func cmdJoinGroup(c *call) error  { return hostGroup(c, true) }
func cmdLeaveGroup(c *call) error { return hostGroup(c, false) }

func hostGroup(c *call, join bool) error {
	c, err := c.parsed()
	if err != nil {
		return err
	}
	hg, err := c.s.hostGroups(c.cmd.Name)
	if err != nil {
		return err
	}
	dev, err := c.s.groupDevice(c.a.pos[0].text)
	if err != nil {
		return err
	}
	g, _, err := c.gid("gid", 0)
	if err != nil {
		return err
	}
	if join {
		err = hg.JoinIPGroup(dev, g)
	} else {
		err = hg.LeaveIPGroup(dev, g)
	}
	if err != nil {
		return err
	}
	st := c.s.st
	c.out.add(st.Render(st.Verb, fmt.Sprintf("setsockopt(%s, %s on %s's netdev) = 0", verbs.GroupSockopt(g, join), verbs.GroupAddr(g), dev)) +
		"  " + st.Render(st.Control, "[IP stack: a socket, not a verb]"))
	n := 0
	if joined, err := hg.IPGroups(dev); err == nil {
		for _, j := range joined {
			if j == g {
				n++
			}
		}
	}
	switch {
	case join:
		c.line("%s's host is a member of %s (joins held by vsh: %d): datagrams to %s pass its IP input to the QPs attached there",
			dev, verbs.GroupAddr(g), n, g)
	case n > 0:
		c.line("%s's host stays a member of %s: vsh holds %d more join%s", dev, verbs.GroupAddr(g), n, plural(n))
	default:
		c.line("vsh holds no join of %s on %s now: unless the interface is in it anyway (224.0.0.1, ff02::1), "+
			"its IP input drops the group's datagrams again", verbs.GroupAddr(g), dev)
	}
	return nil
}

// completeGroup completes join_group and leave_group as the table would,
// and gid= with groups: the two examples for a join, the groups joined on
// the device for a leave. A GID's colons separate completion words, so a
// suggestion is the rest of the group after the last colon typed.
func completeGroup(join bool) func(*Shell, []token, string) []Suggestion {
	return func(s *Shell, done []token, word string) []Suggestion {
		spec := *joinGroupCmd()
		if !join {
			spec = *leaveGroupCmd()
		}
		spec.rawArgs = false
		eq := strings.IndexByte(word, '=')
		if eq < 0 || spec.findSpec(strings.ToLower(word[:eq]), keyArg) == nil || spec.findSpec(strings.ToLower(word[:eq]), keyArg).name != "gid" {
			return s.completeArgs(&spec, done, word)
		}
		var groups []Suggestion
		if join {
			groups = []Suggestion{
				{"::ffff:239.1.1.1", "an IPv4 group no interface is in until something joins it"},
				{"ff0e::1234", "an IPv6 group of global scope no interface is in until something joins it"},
			}
		} else if hg, ok := s.prov.(verbs.HostGroups); ok && len(done) > 0 {
			if dev, err := s.groupDevice(done[0].text); err == nil {
				joined, _ := hg.IPGroups(dev)
				for _, g := range joined {
					groups = append(groups, Suggestion{g.String(), "joined on " + dev})
				}
			}
		}
		typed := word[eq+1:]
		cut := strings.LastIndexByte(typed, ':') + 1
		var out []Suggestion
		for _, g := range filter(groups, typed) {
			out = append(out, Suggestion{g.Text[cut:], g.Description})
		}
		return out
	}
}
