package pingpong

import (
	"context"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// udpContexts returns two simulators on the UDP link, as two processes
// have them, and a context on each one's device.
func udpContexts(t testing.TB) (a, b verbs.Context) {
	t.Helper()
	var fs [2]*sim.Fabric
	var ctxs [2]verbs.Context
	for i := range fs {
		f, err := sim.NewUDP(sim.Config{Devices: 1, Seed: 1}, "")
		if err != nil {
			t.Skipf("no UDP link here: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		d, _ := f.Device(0)
		if ctxs[i], err = d.Open(); err != nil {
			t.Fatal(err)
		}
		fs[i] = f
	}
	return ctxs[0], ctxs[1]
}

// RunPair between two simulators on the UDP link: the four programs with
// -c, every packet a real datagram.
func TestPairOverUDPLink(t *testing.T) {
	for _, tc := range []struct {
		tr        Transport
		size, mtu int
	}{{RC, 65536, 256}, {UC, 4097, 4096}, {UD, 4096, 0}, {SRQ, 3000, 1024}} {
		t.Run(tc.tr.String(), func(t *testing.T) {
			a, b := udpContexts(t)
			o := Defaults(tc.tr)
			o.GIDIndex, o.Iters, o.Size, o.Check, o.NumQP = 1, 30, tc.size, true, 4
			if tc.mtu > 0 {
				o.MTU = verbs.MTUFromBytes(tc.mtu)
			}
			r, err := RunPair(context.Background(), a, b, o, PairHooks{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []Side{r.Server, r.Client} {
				if len(s.BadPages) > 0 || s.Stats.Iters != 30 {
					t.Errorf("%s: %+v", s.Name, s)
				}
			}
			out := strings.Join(r.Lines(), "\n")
			if !strings.Contains(out, "GID ::ffff:127.0.0.") || !strings.Contains(out, "30 iters in") {
				t.Errorf("lines:\n%s", out)
			}
		})
	}
}
