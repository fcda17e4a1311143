package lessons

import (
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// TestPSNAgreementWaitsForSettledSenders checks when the tutor compares
// one QP's rq_psn with its peer's sq_psn: only when neither sender has
// requests outstanding (on rxe sq_psn goes back to the first
// unacknowledged PSN each time it resends, so a session mid-retry may
// agree where the lesson does not).
func TestPSNAgreementWaitsForSettledSenders(t *testing.T) {
	snap := func(rq, sq uint32, sends int) *snapshot {
		attr := func(rq, sq, dest uint32) verbs.QPAttr {
			return verbs.QPAttr{State: verbs.QPSRTS, RQPSN: rq, SQPSN: sq, DestQPN: dest, PathMTU: verbs.MTU1024}
		}
		qp0 := &objSnap{h: "qp0", kind: "qp", qpType: verbs.QPTypeRC, qpn: 1, peer: "qp1", attr: attr(0, sq, 2), sends: sends}
		qp1 := &objSnap{h: "qp1", kind: "qp", qpType: verbs.QPTypeRC, qpn: 2, peer: "qp0", attr: attr(rq, 0, 1)}
		return &snapshot{objs: []*objSnap{qp0, qp1}, by: map[string]*objSnap{"qp0": qp0, "qp1": qp1}}
	}
	tests := []struct {
		name     string
		ref, le  *snapshot
		wantText string // "" for no PSN difference
	}{
		{"lesson mid-retry, session rewound", snap(5, 6, 1), snap(6, 6, 1), ""},
		{"both settled, lesson disagrees", snap(5, 6, 0), snap(6, 6, 0), "not as this step leaves them"},
		{"both settled, lesson agrees", snap(6, 6, 0), snap(5, 6, 0), "in the lesson they agree"},
		{"both settled and alike", snap(6, 6, 0), snap(6, 6, 0), ""},
		{"session sending, lesson settled", snap(6, 6, 0), snap(5, 6, 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := qpAttrDiffs(tt.ref, tt.le, tt.ref.by["qp1"], tt.le.by["qp1"], mapping{}, true, func(s string) string { return s })
			var got string
			for _, d := range diffs {
				if strings.Contains(d.Text, "PSN") {
					got = d.Text
				}
			}
			switch {
			case tt.wantText == "" && got != "":
				t.Errorf("got a PSN difference %q; want none", got)
			case tt.wantText != "" && !strings.Contains(got, tt.wantText):
				t.Errorf("got PSN difference %q; want one saying %q", got, tt.wantText)
			}
		})
	}
}
