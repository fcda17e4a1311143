package shell

// Stopping a cell. Each top-level cell runs in a context of its own
// (ExecContext); Interrupt cancels it, and every command that can take
// longer than a moment checks it at least every 10 ms of work and returns
// what it did with an error that wraps ErrInterrupted. The front ends only
// call Interrupt: the TTY on Ctrl-C and on SIGTERM/SIGHUP before it exits,
// the script runner on a signal, a notebook kernel on interrupt_request.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// ErrInterrupted is the cause of a cell's context when Interrupt stopped
// it: a long command returns an error that wraps it.
var ErrInterrupted = errors.New("interrupted")

// Interrupt stops the running cell, as Ctrl-C does: it cancels the cell's
// context, and every long command (waits, repeat, do, source, pingpong,
// bench, step, run) checks it at least every 10 ms of work and returns.
// Between cells it does nothing. It is safe from any goroutine.
func (s *Shell) Interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(ErrInterrupted)
	}
}

// interrupted reports whether the running cell was stopped.
func (s *Shell) interrupted() bool { return s.ctx != nil && s.ctx.Err() != nil }

// stopped returns the error a command returns when its cell was stopped:
// what was done and what was not, after "interrupted".
func (s *Shell) stopped(format string, a ...any) error {
	cause := context.Cause(s.ctx)
	if cause == nil {
		cause = ErrInterrupted
	}
	return &stopError{cause: cause, what: fmt.Sprintf(format, a...)}
}

// stopError is a command stopped by its cell's context.
type stopError struct {
	cause error
	what  string
}

func (e *stopError) Error() string {
	if errors.Is(e.cause, ErrInterrupted) {
		return "interrupted (Ctrl-C): " + e.what
	}
	return "stopped (" + e.cause.Error() + "): " + e.what
}

func (e *stopError) Unwrap() error { return e.cause }

// waitSlice is the longest a command blocks in one backend call before it
// looks at its cell's context again.
const waitSlice = 10 * time.Millisecond

// virtualWaits reports whether a wait on the backend takes no real time:
// the simulator without its UDP link advances its own clock, a bounded
// amount of work, so a wait is one call and stays deterministic.
func (s *Shell) virtualWaits() bool {
	if _, ok := s.prov.(verbs.Stepper); !ok {
		return false
	}
	if rt, ok := s.prov.(verbs.RealTimeClock); ok && rt.RealTime() {
		return false
	}
	return true
}

// waitIn calls try with waits that add up to wait, each at most waitSlice
// where waits take real time, until try reports done, the wait is over, or
// the cell is stopped. try reports done false with the error that says
// "nothing yet" (EAGAIN), and done true for a result or a failure. waitIn
// returns try's last answer.
func (s *Shell) waitIn(wait time.Duration, try func(time.Duration) (bool, error)) (bool, error) {
	if s.virtualWaits() || wait <= 0 {
		return try(wait)
	}
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		done, err := try(max(0, min(left, waitSlice)))
		if done || left <= waitSlice || s.interrupted() {
			return done, err
		}
	}
}

// testPanic panics where Options.TestPanic says.
func (s *Shell) testPanic(where string) {
	if s.opts.TestPanic != "" && s.opts.TestPanic == where {
		panic("a panic for tests in " + where + " (VSH_TEST_PANIC)")
	}
}

// ticker runs fn every d on a goroutine of its own until the function it
// returns is called; that function returns once fn has run for the last time.
func (s *Shell) ticker(d time.Duration, fn func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	return func() { close(done); <-finished }
}
