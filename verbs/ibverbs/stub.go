//go:build !(linux && cgo && ibverbs)

package ibverbs

import "github.com/vsh-rdma/vsh/verbs"

// New returns ErrBackendDisabled: this build has no real backend. It says
// how to build one.
func New() (verbs.Provider, error) { return nil, ErrBackendDisabled }
