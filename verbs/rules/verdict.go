package rules

import (
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// Mode says what a profile's rules are used for.
type Mode int

const (
	// Decide: the caller is the device; every finding is certain, and the
	// first one is the verb's error.
	Decide Mode = iota
	// Predict: the caller is a backend that will ask the real device; a
	// finding that depends on what it cannot know is uncertain.
	Predict
)

// Finding is one way a call fails.
type Finding struct {
	Err *verbs.Error
	// Certain says the rules know the call fails so; otherwise it may.
	Certain bool
}

// Verdict is what the rules find in one call: its findings in the order
// the kernel checks them. No certain finding means the call succeeds.
type Verdict struct {
	Findings []Finding
}

// Err returns the first certain finding's error, or nil.
func (v Verdict) Err() error {
	for _, f := range v.Findings {
		if f.Certain {
			return f.Err
		}
	}
	return nil
}

// Failed reports whether the verdict has a certain finding.
func (v Verdict) Failed() bool { return v.Err() != nil }

// Add appends w's findings to v.
func (v *Verdict) Add(w Verdict) { v.Findings = append(v.Findings, w.Findings...) }

func (v *Verdict) fail(op string, errno syscall.Errno, hint, why string, args ...any) {
	v.Findings = append(v.Findings, Finding{Err: verbs.Errorf(op, errno, hint, why, args...), Certain: true})
}

func (v *Verdict) maybe(op string, errno syscall.Errno, hint, why string, args ...any) {
	v.Findings = append(v.Findings, Finding{Err: verbs.Errorf(op, errno, hint, why, args...)})
}

// failIf adds a finding that is certain when sure, uncertain otherwise.
func (v *Verdict) failIf(sure bool, op string, errno syscall.Errno, hint, why string, args ...any) {
	if sure {
		v.fail(op, errno, hint, why, args...)
	} else {
		v.maybe(op, errno, hint, why, args...)
	}
}
