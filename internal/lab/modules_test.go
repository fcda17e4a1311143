package lab

import (
	"reflect"
	"strings"
	"testing"
)

func TestModuleName(t *testing.T) {
	for in, want := range map[string]string{
		"rdma_rxe.ko": "rdma_rxe",
		"/lib/modules/6.1.0-56-amd64/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko": "rdma_rxe",
		"crc32-generic.ko": "crc32_generic",
		"9p.ko.xz":         "9p",
		"virtio_pci":       "virtio_pci",
		"x.ko.zst":         "x",
	} {
		if got := moduleName(in); got != want {
			t.Errorf("moduleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseModinfoDepends(t *testing.T) {
	tests := []struct {
		modinfo string
		want    []string
	}{
		{"license=GPL\x00depends=ib_core,ib_uverbs,ip6_udp_tunnel,udp_tunnel\x00name=rdma_rxe\x00", []string{"ib_core", "ib_uverbs", "ip6_udp_tunnel", "udp_tunnel"}},
		{"depends=\x00name=dummy\x00", nil},
		{"name=x\x00", nil},
		{"depends=crc32-generic\x00", []string{"crc32_generic"}},
		{"\x00\x00depends=a,,b\x00", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := parseModinfoDepends([]byte(tt.modinfo)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseModinfoDepends(%q) = %q, want %q", tt.modinfo, got, tt.want)
		}
	}
}

func TestLoadOrder(t *testing.T) {
	deps := map[string][]string{
		"rdma_rxe":       {"ib_core", "ip6_udp_tunnel", "udp_tunnel", "ib_uverbs"},
		"ib_uverbs":      {"ib_core"},
		"ib_core":        nil,
		"udp_tunnel":     nil,
		"ip6_udp_tunnel": nil,
		"9p":             {"9pnet", "netfs", "fscache"},
		"fscache":        {"netfs"},
		"netfs":          nil,
		"9pnet":          nil,
		"loop_a":         {"loop_b"},
		"loop_b":         {"loop_a"},
		"needs_ghost":    {"ghost"},
	}
	have := map[string]bool{}
	for k := range deps {
		have[k] = true
	}
	dep := func(n string) ([]string, error) { return deps[n], nil }
	tests := []struct {
		name    string
		roots   []guestModule
		builtin map[string]bool
		want    []string
		wantErr string
	}{
		{"deps before their users, each once",
			[]guestModule{{Name: "9p"}, {Name: "rdma_rxe"}, {Name: "ib_uverbs"}}, nil,
			[]string{"9pnet", "netfs", "fscache", "9p", "ib_core", "ip6_udp_tunnel", "udp_tunnel", "ib_uverbs", "rdma_rxe"}, ""},
		{"built-in modules are not loaded",
			[]guestModule{{Name: "9p"}, {Name: "virtio_pci"}}, map[string]bool{"netfs": true, "virtio_pci": true},
			[]string{"9pnet", "fscache", "9p"}, ""},
		{"missing optional root skipped",
			[]guestModule{{Name: "rdma_ucm", Optional: true}, {Name: "ib_core"}}, nil,
			[]string{"ib_core"}, ""},
		{"missing required root",
			[]guestModule{{Name: "rdma_rxe"}, {Name: "virtio_console", Why: "ports"}}, nil,
			nil, "module virtio_console (ports) is neither built in nor in the kernel package"},
		{"missing dependency",
			[]guestModule{{Name: "needs_ghost"}}, nil,
			nil, "module ghost (needed by rxe-lab -> needs_ghost) is not in the kernel package"},
		{"cycle",
			[]guestModule{{Name: "loop_a"}}, nil,
			nil, "module dependency cycle: rxe-lab -> loop_a -> loop_b -> loop_a"},
	}
	for _, tt := range tests {
		got, err := loadOrder(tt.roots, have, tt.builtin, dep)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: loadOrder = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestGuestModulesIncludeTheKnownPitfalls(t *testing.T) {
	// crc32_generic is not a declared dependency of rdma_rxe; without it
	// "rdma link add" fails in the guest (reference/rxe-kvm.md, pitfall 1).
	need := map[string]bool{"crc32_generic": false, "rdma_rxe": false, "ib_uverbs": false,
		"virtio_console": false, "9pnet_virtio": false, "9p": false, "dummy": false,
		// veth is a module in Debian's kernels (CONFIG_VETH=m), not built in.
		"veth": false}
	for _, m := range guestModules {
		if _, ok := need[m.Name]; ok {
			if m.Optional {
				t.Errorf("%s must not be optional", m.Name)
			}
			need[m.Name] = true
		}
	}
	for n, ok := range need {
		if !ok {
			t.Errorf("guestModules lacks %s", n)
		}
	}
}
