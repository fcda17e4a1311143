package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/vsh-rdma/vsh/shell"
)

// signalCause is the cause of a context a signal ended: "terminated".
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return c.sig.String() }

// stopOnSignals returns a context that SIGINT, SIGTERM and SIGHUP end, for
// a script or a lesson's play: the running command stops, then the run.
// SIGINT's cause is shell.ErrInterrupted ("interrupted (Ctrl-C)"). caught
// says which signal came, nil if none; stop stops watching. After the first
// signal a second one has its default effect, so a stuck run still dies.
func stopOnSignals() (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	var mu sync.Mutex
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			mu.Lock()
			got = sig
			mu.Unlock()
			if sig == syscall.SIGINT {
				cancel(shell.ErrInterrupted)
			} else {
				cancel(signalCause{sig})
			}
		case <-done:
		}
	}()
	var once sync.Once
	caught = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
	return ctx, caught, stop
}

// signalStatus is the exit status of a run a signal ended: 128+N.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
