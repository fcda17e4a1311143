//go:build !(linux && cgo && ibverbs)

package ibverbs

import (
	"errors"
	"strings"
	"testing"
)

// TestStub: without the real backend, New says how to build it.
func TestStub(t *testing.T) {
	p, err := New()
	if p != nil || !errors.Is(err, ErrBackendDisabled) {
		t.Fatalf("New() = %v, %v; want nil, ErrBackendDisabled", p, err)
	}
	for _, want := range []string{"libibverbs-dev", "CGO_ENABLED=1", "-tags ibverbs", "make build"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ErrBackendDisabled %q does not mention %q", err, want)
		}
	}
}
