package shell

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnroll: the single commands a repeat or do line runs, in order;
// nil for one command, or past the bound.
func TestUnroll(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	env := lessonEnv{sh}
	tests := []struct {
		line string
		want []string
	}{
		{"post_send qp0 mr=mr0", nil},
		{"do poll_cq cq0; poll_cq cq1", []string{"poll_cq cq0", "poll_cq cq1"}},
		{"repeat 2 do post_send qp0 mr=mr0 offset={i*8}; poll_cq cq1 n=1", []string{
			"post_send qp0 mr=mr0 offset=0", "poll_cq cq1 n=1", "post_send qp0 mr=mr0 offset=8", "poll_cq cq1 n=1"}},
		{"repeat 3 post_recv qp{i} mr=mr0", []string{"post_recv qp0 mr=mr0", "post_recv qp1 mr=mr0", "post_recv qp2 mr=mr0"}},
		{"repeat 1 poll_cq cq0", nil},
		{"repeat 300 poll_cq cq0", nil},
		{"repeat 20 repeat 20 poll_cq cq0", nil},
		{"do fill mr0 \"a;b\"; poll_cq cq0", []string{"fill mr0 \"a;b\"", "poll_cq cq0"}},
	}
	for _, tc := range tests {
		got := env.Unroll(tc.line)
		for i := range got {
			got[i] = strings.TrimSpace(got[i])
		}
		assert.Equal(t, tc.want, got, tc.line)
	}
}
