package interop

import "testing"

// TestGridShape checks the grid make test-interop runs — every transport,
// size, MTU, direction and IP version of docs/lab.md, 80 pairs, none twice
// — and that sampled points lie in its space and are the same for a seed.
func TestGridShape(t *testing.T) {
	g := grid()
	if len(g) != 80 {
		t.Fatalf("grid: %d points, want 80", len(g))
	}
	seen := map[point]bool{}
	for _, p := range g {
		if seen[p] {
			t.Errorf("grid: %v twice", p)
		}
		seen[p] = true
	}
	a, b := sampled(7, 50), sampled(7, 50)
	for i, p := range a {
		if p != b[i] {
			t.Fatalf("sampled(7) differs between calls at %d: %v, %v", i, p, b[i])
		}
		max := 65536
		if p.tr == "ud" {
			max = 4096
		}
		if p.size < 1 || p.size > max || p.iters < 1 || p.iters > interopIters || (p.tr == "ud") != (p.mtu == 0) {
			t.Errorf("sampled point %v is outside the grid's space", p)
		}
	}
	if c := sampled(8, 50); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Errorf("seeds 7 and 8 draw the same points")
	}
}

// TestSRQEndRace tells srq_pingpong's end race from other failures: the
// kernel's side finished, the simulator's got every message but one ACK.
func TestSRQEndRace(t *testing.T) {
	done := "500 iters in 2.93 seconds = 5857.78 usec/iter"
	race := "No completion for 10s: 503 of 500 messages received, 499 sent\npingpong srq: likely cause: every message arrived but the last send was never acknowledged: ..."
	other := "No completion for 10s: 3 of 500 messages received, 2 sent"
	for _, tc := range []struct {
		kernelServer bool
		sout, cout   string
		want         bool
	}{
		{false, race, done, true},
		{true, done, race, true},
		{false, done, race, false}, // the sides the other way round
		{false, race, "Failed status transport retry counter exceeded", false},
		{false, other, done, false},
	} {
		if got := srqEndRace(point{tr: "srq", kernelServer: tc.kernelServer}, tc.sout, tc.cout); got != tc.want {
			t.Errorf("kernel server %v, server %q, client %q: %v, want %v", tc.kernelServer, tc.sout[:20], tc.cout[:20], got, tc.want)
		}
	}
}
