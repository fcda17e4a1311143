package wire

import "testing"

func TestPSNArithmetic(t *testing.T) {
	tests := []struct {
		p    PSN
		n    int
		want PSN
	}{
		{0, 1, 1},
		{0xffffff, 1, 0},
		{0xfffffe, 5, 3},
		{0, -1, 0xffffff},
		{10, -3, 7},
		{0x123456, 0x1000000, 0x123456},
	}
	for _, tc := range tests {
		if got := tc.p.Add(tc.n); got != tc.want {
			t.Errorf("PSN(%v).Add(%d) = %v, want %v", tc.p, tc.n, got, tc.want)
		}
	}
	if got := PSN(0xffffff).Next(); got != 0 {
		t.Errorf("Next() at the top = %v", got)
	}
}

// TestPSNCompare checks wrap-around comparison, the rule of rxe's
// psn_compare: (s32)((a - b) << 8). Reference: rocev2-wire.md §4.
func TestPSNCompare(t *testing.T) {
	tests := []struct {
		a, b PSN
		diff int32
	}{
		{5, 5, 0},
		{6, 5, 1},
		{5, 6, -1},
		{0, 0xffffff, 1},  // wrapped: 0 comes after 0xffffff
		{0xffffff, 0, -1}, //
		{0x000010, 0xfffff0, 0x20},
		{0x7fffff, 0, 0x7fffff}, // largest "later"
		{0x800000, 0, -0x800000},
		{0, 0x800001, 0x7fffff},
	}
	for _, tc := range tests {
		if got := tc.a.Diff(tc.b); got != tc.diff {
			t.Errorf("PSN(%v).Diff(%v) = %d, want %d", tc.a, tc.b, got, tc.diff)
		}
		// The reference rule, computed independently.
		ref := int32((uint32(tc.a) - uint32(tc.b)) << 8)
		want := 0
		if ref < 0 {
			want = -1
		} else if ref > 0 {
			want = 1
		}
		if got := tc.a.Compare(tc.b); got != want {
			t.Errorf("PSN(%v).Compare(%v) = %d, want %d", tc.a, tc.b, got, want)
		}
		if tc.a.Before(tc.b) != (want < 0) || tc.a.After(tc.b) != (want > 0) {
			t.Errorf("PSN(%v) Before/After(%v) disagree with Compare", tc.a, tc.b)
		}
	}
}

func TestPSNBetween(t *testing.T) {
	tests := []struct {
		p, first, last PSN
		want           bool
	}{
		{5, 5, 5, true},
		{5, 4, 6, true},
		{3, 4, 6, false},
		{7, 4, 6, false},
		{0, 0xfffffe, 1, true},
		{0xffffff, 0xfffffe, 1, true},
		{2, 0xfffffe, 1, false},
		{0xfffffd, 0xfffffe, 1, false},
	}
	for _, tc := range tests {
		if got := tc.p.Between(tc.first, tc.last); got != tc.want {
			t.Errorf("PSN(%v).Between(%v, %v) = %v, want %v", tc.p, tc.first, tc.last, got, tc.want)
		}
	}
	if got := PSN(0xa3f1).String(); got != "0x00a3f1" {
		t.Errorf("String() = %q", got)
	}
}
