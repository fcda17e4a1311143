package interop

import "testing"

// TestGridShape checks the grid make test-interop runs: every transport,
// size and MTU once, each transport both ways over both IP versions, and
// the sampled points drawn from the rest of the full grid, deterministic
// for a seed.
func TestGridShape(t *testing.T) {
	full, g := fullGrid(), grid()
	if len(full) != 80 || len(g) != 20 {
		t.Fatalf("full grid %d points, grid %d; want 80 and 20", len(full), len(g))
	}
	combos := map[string]map[[2]bool]bool{}
	for _, p := range g {
		if combos[p.tr] == nil {
			combos[p.tr] = map[[2]bool]bool{}
		}
		combos[p.tr][[2]bool{p.v4, p.kernelServer}] = true
	}
	for tr, c := range combos {
		if want := 4; tr == "ud" {
			if len(c) != 2 {
				t.Errorf("ud runs %d direction/version combinations, want 2", len(c))
			}
		} else if len(c) != want {
			t.Errorf("%s runs %d direction/version combinations, want %d", tr, len(c), want)
		}
	}
	inGrid := map[point]bool{}
	for _, p := range g {
		inGrid[p] = true
	}
	a, b := sampled(7, 12), sampled(7, 12)
	if len(a) != 12 {
		t.Fatalf("sampled %d points, want 12", len(a))
	}
	seen := map[point]bool{}
	for i, p := range a {
		if p != b[i] {
			t.Fatalf("sampled(7) differs between calls at %d: %v, %v", i, p, b[i])
		}
		if inGrid[p] || seen[p] {
			t.Errorf("sampled point %v is in the grid or drawn twice", p)
		}
		seen[p] = true
	}
	if all := sampled(1, 1000); len(all) != 60 {
		t.Errorf("sampled(1, 1000) = %d points, want the other 60", len(all))
	}
}
