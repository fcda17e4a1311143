package sim

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestLinkParams checks verbs.LinkConfigurer: links by device name, the
// port's active MTU following the netdev MTU (rxe_set_mtu), and refusals.
func TestLinkParams(t *testing.T) {
	f := New(Config{Devices: 2})
	defer f.Close()
	var lc verbs.LinkConfigurer = f
	p, err := lc.LinkParams("sim1")
	if err != nil {
		t.Fatal(err)
	}
	if want := (verbs.LinkParams{Latency: DefaultLinkLatency, Bandwidth: DefaultLinkBandwidth, MTU: DefaultLinkMTU}); p != want {
		t.Errorf("LinkParams(sim1) = %+v, want the defaults %+v", p, want)
	}
	set := verbs.LinkParams{Latency: 5 * time.Microsecond, Bandwidth: 100e9, MTU: 9000}
	if err := lc.SetLinkParams("sim1", set); err != nil {
		t.Fatal(err)
	}
	if p, _ := lc.LinkParams("sim1"); p != set {
		t.Errorf("after SetLinkParams(sim1, %+v): %+v", set, p)
	}
	if p, _ := lc.LinkParams("sim0"); p.MTU != DefaultLinkMTU {
		t.Errorf("sim0's MTU changed with sim1's: %d", p.MTU)
	}
	devs, _ := f.Devices()
	ctx, err := devs[1].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	if pa, _ := ctx.QueryPort(1); pa.ActiveMTU != verbs.MTU4096 {
		t.Errorf("active MTU on a 9000-byte netdev = %v, want 4096", pa.ActiveMTU)
	}
	// Zero fields take the defaults.
	if err := lc.SetLinkParams("sim1", verbs.LinkParams{}); err != nil {
		t.Fatal(err)
	}
	if pa, _ := ctx.QueryPort(1); pa.ActiveMTU != verbs.MTU1024 {
		t.Errorf("active MTU back on the default link = %v, want 1024", pa.ActiveMTU)
	}
	for _, tc := range []struct {
		name  string
		dev   string
		p     verbs.LinkParams
		errno syscall.Errno
	}{
		{"unknown device", "sim7", verbs.LinkParams{}, verbs.ENODEV},
		{"negative latency", "sim0", verbs.LinkParams{Latency: -1}, verbs.EINVAL},
		{"negative bandwidth", "sim0", verbs.LinkParams{Bandwidth: -1}, verbs.EINVAL},
		{"MTU below IPv4's", "sim0", verbs.LinkParams{MTU: 67}, verbs.EINVAL},
	} {
		if err := lc.SetLinkParams(tc.dev, tc.p); !errors.Is(err, tc.errno) {
			t.Errorf("%s: SetLinkParams(%s, %+v) = %v, want %v", tc.name, tc.dev, tc.p, err, tc.errno)
		}
	}
	if _, err := lc.LinkParams("sim7"); !errors.Is(err, verbs.ENODEV) {
		t.Errorf("LinkParams(sim7) = %v, want ENODEV", err)
	}
}
