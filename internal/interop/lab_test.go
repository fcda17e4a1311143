package interop

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// labWire is the lab's second wire as the guest's environment describes
// it. The tests run in the simulator's namespace (rxe-lab run --peer), and
// so do rdma-core's programs on rxe1, since RDMA devices are shared by all
// namespaces; their TCP exchange uses the simulator's address, local
// there. rxe1's packets still leave through rxeveth0 in the root namespace
// and cross the veth to the simulator's socket on rxeveth1.
type labWire struct {
	netns   string // the simulator's namespace
	dev     string // the kernel's device on the veth (rxe1)
	kernel4 netip.Addr
	kernel6 netip.Addr
	sim4    netip.Addr
	sim6    netip.Addr
	gid4    int    // rxe1's GID index of kernel4
	gid6    int    // rxe1's GID index of kernel6
	pp      string // cmd/pingpong, built on the host
	vsh     string // cmd/vsh
}

// needWire returns the lab's wire, or skips the test outside the lab.
func needWire(t *testing.T) *labWire {
	t.Helper()
	if os.Getenv("VSH_RXE_SIM") == "" {
		t.Skip("runs in the lab guest, next to rxe1 and the namespace vshpeer: make test-interop")
	}
	w := &labWire{netns: os.Getenv("VSH_LAB_PEER_NETNS"), dev: os.Getenv("VSH_LAB_PEER_DEVICE"),
		pp: os.Getenv("VSH_RXE_SIM_PINGPONG"), vsh: os.Getenv("VSH_RXE_SIM_VSH")}
	for _, a := range []struct {
		p   *netip.Addr
		env string
	}{{&w.kernel4, "VSH_LAB_KERNEL_ADDR4"}, {&w.kernel6, "VSH_LAB_KERNEL_ADDR6"},
		{&w.sim4, "VSH_LAB_PEER_ADDR4"}, {&w.sim6, "VSH_LAB_PEER_ADDR6"}} {
		v, err := netip.ParseAddr(os.Getenv(a.env))
		if err != nil {
			t.Fatalf("$%s: %v (the lab sets it)", a.env, err)
		}
		*a.p = v
	}
	if w.netns == "" || w.dev == "" {
		t.Fatal("$VSH_LAB_PEER_NETNS or $VSH_LAB_PEER_DEVICE is empty: run the tests with rxe-lab run --peer")
	}
	if here, there := nsInode("/proc/self/ns/net"), nsInode("/run/netns/"+w.netns); here == 0 || here != there {
		t.Fatalf("the tests must run in the namespace %s (rxe-lab run --peer), where the simulator binds UDP 4791", w.netns)
	}
	for _, p := range []*string{&w.pp, &w.vsh} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				t.Fatal(err)
			}
			*p = abs
		}
	}
	var err error
	if w.gid4, err = gidIndex(w.dev, w.kernel4); err != nil {
		t.Fatal(err)
	}
	if w.gid6, err = gidIndex(w.dev, w.kernel6); err != nil {
		t.Fatal(err)
	}
	return w
}

// nsInode returns the inode of a namespace file, or 0.
func nsInode(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

// gidIndex finds the index of address a's RoCEv2 GID in dev's table.
func gidIndex(dev string, a netip.Addr) (int, error) {
	dir := "/sys/class/infiniband/" + dev + "/ports/1/gids"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("%s's GID table: %w", dev, err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		raw, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(string(b)), ":", ""))
		if err != nil || len(raw) != 16 {
			continue
		}
		if netip.AddrFrom16([16]byte(raw)).Unmap() == a {
			return strconv.Atoi(e.Name())
		}
	}
	return 0, fmt.Errorf("%s has no GID for %s in %s", dev, a, dir)
}

// family is one of the two IP versions the pairs run over.
type family struct {
	name      string
	kernelGID int
	simAddr   netip.Addr
}

func (w *labWire) families() []family {
	return []family{{"IPv6", w.gid6, w.sim6}, {"IPv4", w.gid4, w.sim4}}
}
