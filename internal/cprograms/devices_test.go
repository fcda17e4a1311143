package cprograms

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDevices runs rdma-core's ibv_devices and ibv_devinfo -v: they list
// sim0 and sim1, each a RoCE device (transport InfiniBand, link layer
// Ethernet) with an active port, sim0's GID 1 the RoCEv2 GID of the
// address vsh run gave it.
func TestDevices(t *testing.T) {
	t.Run("ibv_devices", func(t *testing.T) {
		programCase(t)
		vsh, prog := built(t, "vsh"), debian(t, "ibv_devices", "ibverbs-utils")
		parallel(t)
		argv := vshRun(vsh, simAddr(t), nil, prog)
		out, status := runOne(t, argv, 30*time.Second)
		if status != 0 {
			t.Fatalf("%s: exit status %d\n%s", strings.Join(argv, " "), status, indent(out))
		}
		for _, dev := range []string{"sim0", "sim1"} {
			if !regexp.MustCompile(`(?m)^\s+` + dev + `\s+[0-9a-f]{16}\s*$`).MatchString(out) {
				t.Errorf("%s lists no %s with its node GUID:\n%s", strings.Join(argv, " "), dev, indent(out))
			}
		}
	})
	t.Run("ibv_devinfo -v", func(t *testing.T) {
		programCase(t)
		vsh, prog := built(t, "vsh"), debian(t, "ibv_devinfo", "ibverbs-utils")
		parallel(t)
		addr := simAddr(t)
		argv := vshRun(vsh, addr, nil, prog, "-v")
		out, status := runOne(t, argv, 30*time.Second)
		if status != 0 {
			t.Fatalf("%s: exit status %d\n%s", strings.Join(argv, " "), status, indent(out))
		}
		devs := devinfoByDevice(out)
		for _, dev := range []string{"sim0", "sim1"} {
			info, ok := devs[dev]
			if !ok {
				t.Errorf("%s lists no hca_id %s:\n%s", strings.Join(argv, " "), dev, indent(out))
				continue
			}
			want := []string{`(?m)^\ttransport:\s+InfiniBand \(0\)$`, `(?m)^\t+state:\s+PORT_ACTIVE \(4\)$`, `(?m)^\t+link_layer:\s+Ethernet$`}
			if dev == "sim0" {
				want = append(want, `(?m)^\t+GID\[\s*1\]:\s+::ffff:`+regexp.QuoteMeta(addr)+`, RoCE v2$`)
			}
			for _, re := range want {
				if !regexp.MustCompile(re).MatchString(info) {
					t.Errorf("%s: %s has no line matching %q:\n%s", strings.Join(argv, " "), dev, re, indent(info))
				}
			}
		}
	})
}

// devinfoByDevice splits ibv_devinfo's output into each device's part, by
// its hca_id.
func devinfoByDevice(out string) map[string]string {
	devs := map[string]string{}
	for _, part := range strings.Split(out, "hca_id:")[1:] {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "\n")
		devs[strings.TrimSpace(name)] = part
	}
	return devs
}
