package ibverbs

import (
	"errors"
	"fmt"
	"sync"
)

// ErrBackendDisabled is what New returns in a build without the real
// backend (not Linux, cgo off, or no ibverbs build tag).
var ErrBackendDisabled = errors.New("ibverbs: the real backend is not built in: it needs Linux, cgo and the ibverbs " +
	"build tag; install libibverbs-dev, then build with CGO_ENABLED=1 go build -tags ibverbs, or run make build, " +
	"which adds the tag when /usr/include/infiniband/verbs.h exists; meanwhile use -backend=sim")

// ErrNoDevices is what New returns when libibverbs lists no RDMA device.
var ErrNoDevices = errors.New("ibverbs: no RDMA devices found")

// Misprediction is one call whose outcome the backend's rules did not
// predict: a bug in verbs.CheckTransition, in the rules (verbs/rules), or in
// the simulator, which follows the same rules.
type Misprediction struct {
	Op        string // the verb: "ibv_modify_qp"
	Predicted string // what the rules expected: "success", "EINVAL: ..."
	Got       string // what libibverbs returned: "success", "EINVAL"
	Call      string // the call's arguments, as far as they matter
}

func (m Misprediction) String() string {
	s := fmt.Sprintf("%s: predicted %s, libibverbs gave %s", m.Op, m.Predicted, m.Got)
	if m.Call != "" {
		s += " (" + m.Call + ")"
	}
	return s
}

const keepMispredictions = 256

var mispredicted struct {
	sync.Mutex
	n   int
	log []Misprediction
}

// Mispredictions returns how many calls, since the process started, had an
// outcome other than the one the backend's rules predicted. It should be 0;
// each one is a bug to fix in the rules or the simulator, never to hide.
func Mispredictions() int {
	mispredicted.Lock()
	defer mispredicted.Unlock()
	return mispredicted.n
}

// MispredictionLog returns the most recent mispredictions (at most 256),
// oldest first.
func MispredictionLog() []Misprediction {
	mispredicted.Lock()
	defer mispredicted.Unlock()
	return append([]Misprediction(nil), mispredicted.log...)
}

func recordMisprediction(m Misprediction) {
	mispredicted.Lock()
	defer mispredicted.Unlock()
	mispredicted.n++
	mispredicted.log = append(mispredicted.log, m)
	if len(mispredicted.log) > keepMispredictions {
		mispredicted.log = mispredicted.log[len(mispredicted.log)-keepMispredictions:]
	}
}
