package rules_test

import (
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
)

// The same rule decides for the simulator and predicts for the real
// backend: path_mtu 0 is refused by the one, and only may fail on the other,
// since rxe 6.1 itself does not check it.
func ExampleRXE_ModifyQPAttr() {
	qp := rules.QP{Type: verbs.QPTypeRC, State: verbs.QPSInit, DrainKnown: true}
	a := &verbs.QPAttr{State: verbs.QPSRTR, PathMTU: 0}
	for _, mode := range []rules.Mode{rules.Decide, rules.Predict} {
		r := &rules.RXE{Mode: mode, Attr: verbs.DeviceAttr{PhysPortCnt: 1}}
		v := r.ModifyQPAttr(qp, a, verbs.AttrState|verbs.AttrPathMTU)
		for _, f := range v.Findings {
			fmt.Printf("%s certain=%v\n", verbs.ErrnoName(f.Err.Errno), f.Certain)
		}
		fmt.Println("error:", v.Err() != nil)
	}
	// Output:
	// EINVAL certain=true
	// error: true
	// EINVAL certain=false
	// error: false
}
