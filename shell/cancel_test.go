package shell

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInterruptStopsLongCommands runs each command that can take long, then
// interrupts its cell as Ctrl-C does: the command must return within a
// second with an error that says it was interrupted, and the session must
// go on.
func TestInterruptStopsLongCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: each case runs a command for a moment")
	}
	script := filepath.Join(t.TempDir(), "long.vsh")
	if err := os.WriteFile(script, []byte("alloc_pd ctx0\npingpong rc iters=100000000\nalloc_pd ctx0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nobody listens there: exchange connect retries until wait=
	tests := []struct {
		name  string
		setup []string
		cmd   string
		want  string // in the error
	}{
		{"pingpong", nil, "pingpong rc iters=100000000", "pingpong rc stopped before its 100000000 iterations"},
		{"pingpong with events", nil, "pingpong rc iters=100000000 events", "pingpong rc stopped"},
		{"bench", nil, "bench op=write iters=100000000 min=65536 max=65536", "stopped at 65536 bytes"},
		{"repeat of a fill", []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=256m"}, "repeat 10000 fill mr0 0xab", "fill wrote"},
		{"do", nil, "do pingpong rc iters=100000000; devices", "pingpong rc stopped"},
		{"source", []string{"open_device A"}, "source " + script, "source " + script + " stopped at line 2"},
		{"exchange connect", []string{"open_device A", "alloc_pd ctx0", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"},
			"exchange connect 127.0.0.1 qp0 port=" + strconv.Itoa(port) + " wait=60s", "interrupted"},
		{"exchange listen", []string{"open_device A", "alloc_pd ctx0", "create_cq ctx0", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"},
			"exchange listen qp0 port=" + strconv.Itoa(port) + " wait=60s", "interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			sh.files = osFiles{}
			defer sh.Close()
			for _, c := range tc.setup {
				if _, err := sh.Exec(c); err != nil {
					t.Fatalf("%s: %v", c, err)
				}
			}
			type result struct {
				out string
				err error
			}
			done := make(chan result, 1)
			go func() {
				out, err := sh.Exec(tc.cmd)
				done <- result{out, err}
			}()
			select {
			case r := <-done:
				t.Fatalf("%s ended by itself before the interrupt: %v\n%s", tc.cmd, r.err, r.out)
			case <-time.After(300 * time.Millisecond):
			}
			sh.Interrupt()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Second):
				t.Fatalf("%s still runs a second after Interrupt", tc.cmd)
			}
			if !errors.Is(r.err, ErrInterrupted) { // front ends tell it by this (Jupyter's ename Interrupted)
				t.Fatalf("%s: error %v; want one that wraps ErrInterrupted", tc.cmd, r.err)
			}
			if msg := sh.FormatError(r.err); !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %s\nwant it to say %q", tc.cmd, msg, tc.want)
			}
			if _, err := sh.Exec("devices"); err != nil {
				t.Errorf("the session does not go on: %v", err)
			}
		})
	}
}

// TestExecContext: a cell run with a context stops when the context ends,
// with the context's cause; Interrupt between cells does nothing.
func TestExecContext(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	sh.Interrupt() // no cell runs: nothing to stop, and the next cell is not stopped
	if _, err := sh.Exec("open_device A"); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("the kernel was told to stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(cause) })
	_, err := sh.ExecContext(ctx, "pingpong rc iters=100000000")
	if !errors.Is(err, cause) {
		t.Fatalf("ExecContext = %v; want the context's cause", err)
	}
	if msg := sh.FormatError(err); !strings.Contains(msg, "stopped (the kernel was told to stop)") {
		t.Errorf("the error does not give the cause: %s", msg)
	}
	if _, err := sh.Exec("alloc_pd ctx0"); err != nil {
		t.Errorf("the next cell does not run: %v", err)
	}
}

// TestScriptStopsWithContext: RunScriptContext stops at the line running
// when its context ends, and runs no line after it.
func TestScriptStopsWithContext(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(200*time.Millisecond, func() { cancel(ErrInterrupted) })
	var out strings.Builder
	err := sh.RunScriptContext(ctx, strings.NewReader("open_device A\npingpong rc iters=100000000\nalloc_pd ctx0\n"), &out, "s.vsh", true)
	var se *ScriptError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Fatalf("RunScriptContext = %v; want it stopped at line 2", err)
	}
	if strings.Contains(out.String(), "alloc_pd") {
		t.Errorf("a line after the stop ran:\n%s", out.String())
	}
}

// TestProgress: a long pingpong and bench report progress through
// Options.Progress while they run, and clear it when they end.
func TestProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: each case runs a command for over a second")
	}
	for _, tc := range []struct {
		cmd, status string
		step        bool // the status comes as a step too
	}{
		{"pingpong rc iters=100000000", "pingpong rc: 100000000 iterations, running for", false},
		{"bench op=write iters=20000 min=1 max=65536", "bench: ib_write_bw", true}, // a size takes well under the 10 s, even under load
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			type event struct {
				status string
				step   bool
			}
			events := make(chan event, 1000)
			sh.opts.Progress = func(status string, step bool) {
				select {
				case events <- event{status, step}:
				default:
				}
			}
			done := make(chan error, 1)
			go func() { _, err := sh.Exec(tc.cmd); done <- err }()
			var shown, stepped bool
			deadline := time.After(10 * time.Second)
			for !shown || (tc.step && !stepped) {
				select {
				case e := <-events:
					if strings.HasPrefix(e.status, tc.status) {
						shown = shown || !e.step
						stepped = stepped || e.step
					}
				case err := <-done:
					t.Fatalf("%s ended before showing progress: %v", tc.cmd, err)
				case <-deadline:
					t.Fatalf("no progress %q (step %v) within 10 s", tc.status, tc.step)
				}
			}
			sh.Interrupt()
			<-done
			var last event
			for len(events) > 0 {
				last = <-events
			}
			if last.status != "" {
				t.Errorf("the last progress is %q; want \"\" (cleared)", last.status)
			}
		})
	}
}
