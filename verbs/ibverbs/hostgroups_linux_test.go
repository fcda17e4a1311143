//go:build linux

package ibverbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// The joins are real socket joins, so they run on any Linux host, without
// RDMA: a fake sysfs names lo as the netdev of a device "fake0", and the
// kernel's own tables (/proc/net/igmp, /proc/net/igmp6) say whether the
// host is in the group.

func fakeSysfs(t *testing.T, ndevs map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "class", "infiniband", "fake0", "ports", "1", "gid_attrs", "ndevs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range ndevs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// hostUsers returns how many users the kernel counts for group g on
// interface ifname (0 when the host is not in it there), from
// /proc/net/igmp or /proc/net/igmp6.
func hostUsers(t *testing.T, ifname string, g verbs.GID) int {
	t.Helper()
	v4, isV4 := g.IPv4()
	path := "/proc/net/igmp6"
	if isV4 {
		path = "/proc/net/igmp"
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s: %v (no IP multicast in this kernel?)", path, err)
	}
	dev := ""
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Fields(line)
		var users string
		switch {
		case len(f) < 2:
			continue
		case isV4 && !strings.HasPrefix(line, "\t"):
			// "4\teth0      :     1      V3": a device; its groups follow,
			// "\t\t\t\t010000E0     1 0:00000000\t\t0", the group being
			// a __be32 printed with %08X on a little-endian machine.
			dev = f[1]
			continue
		case isV4:
			b := v4.As4()
			if dev != ifname || f[0] != fmt.Sprintf("%02X%02X%02X%02X", b[3], b[2], b[1], b[0]) {
				continue
			}
			users = f[1]
		default:
			// "1    lo              ff020000000000000000000000000001     1 0000000C 0"
			if len(f) < 4 || f[1] != ifname || f[2] != fmt.Sprintf("%x", g[:]) {
				continue
			}
			users = f[3]
		}
		n, err := strconv.Atoi(users)
		if err != nil {
			t.Fatalf("%s: users %q in %q", path, users, line)
		}
		return n
	}
	return 0
}

func TestIPJoinsOnLoopback(t *testing.T) {
	j := &ipJoins{sysfs: fakeSysfs(t, map[string]string{"0": "", "1": "lo\n", "x": "eth0"})}
	defer j.close()
	for _, group := range []string{"::ffff:239.86.83.72", "ff0e::5653:4821"} {
		g, err := verbs.ParseGID(group)
		if err != nil {
			t.Fatal(err)
		}
		if n := hostUsers(t, "lo", g); n != 0 {
			t.Fatalf("%s: lo is in it before the test (%d users); is another test running?", group, n)
		}
		for i := 1; i <= 2; i++ {
			if err := j.join("fake0", g); err != nil {
				t.Fatalf("join %d of %s: %v", i, group, err)
			}
			if n := hostUsers(t, "lo", g); n != i {
				t.Errorf("after join %d of %s: the kernel counts %d users on lo", i, group, n)
			}
		}
		if got := j.list("fake0"); len(got) != 2 || got[0] != g || got[1] != g {
			t.Errorf("list(fake0) = %v; want %s twice", got, g)
		}
		for i := 1; i >= 0; i-- {
			if err := j.leave("fake0", g); err != nil {
				t.Fatalf("leave of %s: %v", group, err)
			}
			if n := hostUsers(t, "lo", g); n != i {
				t.Errorf("after a leave of %s: the kernel counts %d users on lo; want %d", group, n, i)
			}
		}
		err = j.leave("fake0", g)
		if !errors.Is(err, syscall.EADDRNOTAVAIL) || !strings.Contains(err.Error(), groupOp(g, false)) ||
			!strings.Contains(err.Error(), "holds no join") {
			t.Errorf("a third leave of %s = %v; want the kernel's EADDRNOTAVAIL, named", group, err)
		}
	}
	// The kernel checks the group first.
	uni, _ := verbs.ParseGID("::ffff:10.0.0.1")
	if err := j.join("fake0", uni); !errors.Is(err, verbs.EINVAL) || !strings.Contains(err.Error(), "not a multicast address") {
		t.Errorf("join of a unicast address = %v; want EINVAL", err)
	}
	// A device with no netdev, and one sysfs does not know.
	g, _ := verbs.ParseGID("::ffff:239.86.83.72")
	j2 := &ipJoins{sysfs: fakeSysfs(t, map[string]string{"0": ""})}
	for _, dev := range []string{"fake0", "nosuch0"} {
		if err := j2.join(dev, g); !errors.Is(err, verbs.ENODEV) || !strings.Contains(err.Error(), "setsockopt(IP_ADD_MEMBERSHIP)") {
			t.Errorf("join on %s = %v; want ENODEV", dev, err)
		}
	}
	// Close leaves everything.
	if err := j.join("fake0", g); err != nil {
		t.Fatal(err)
	}
	j.close()
	if n := hostUsers(t, "lo", g); n != 0 {
		t.Errorf("after close: the kernel counts %d users of %s on lo", n, g)
	}
	if err := j.join("fake0", g); !errors.Is(err, verbs.EINVAL) {
		t.Errorf("join after close = %v; want EINVAL", err)
	}
}
