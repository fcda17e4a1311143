package lab

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseRunArgs(t *testing.T) {
	t.Setenv(EnvCache, "/cache/from/env")
	tests := []struct {
		name    string
		cmd     string
		args    []string
		check   func(*runArgs) string
		wantErr string
	}{
		{"command after --", "run", []string{"--", "ibv_devinfo", "-d", "rxe0"}, func(r *runArgs) string {
			if !reflect.DeepEqual(r.Spec.Args, []string{"ibv_devinfo", "-d", "rxe0"}) {
				return "args " + strings.Join(r.Spec.Args, " ")
			}
			if r.Spec.TTY || r.Spec.Stdin != nil || r.Spec.Peer || r.Opts.CacheDir != "/cache/from/env" {
				return "defaults wrong"
			}
			return ""
		}, ""},
		{"command without --: its flags are its own", "run", []string{"-q", "ibv_rc_pingpong", "-g", "1"}, func(r *runArgs) string {
			if !reflect.DeepEqual(r.Spec.Args, []string{"ibv_rc_pingpong", "-g", "1"}) || !r.Opts.Quiet {
				return "got " + strings.Join(r.Spec.Args, " ")
			}
			return ""
		}, ""},
		{"flags", "run", []string{"-cache", "/c", "-accel", "tcg", "-mem", "1024", "-mtu", "9000", "-timeout", "90s",
			"-e", "A", "-e", "B=1", "-share", "/data:ro", "-share", "/out", "-C", "/work", "-i", "-t", "sh"}, func(r *runArgs) string {
			switch {
			case r.Opts.CacheDir != "/c", r.Opts.Accel != "tcg", r.Opts.MemoryMiB != 1024, r.Opts.MTU != 9000:
				return "options"
			case r.Spec.Timeout != 90*time.Second, !reflect.DeepEqual(r.Spec.Env, []string{"A", "B=1"}):
				return "timeout or env"
			case !reflect.DeepEqual(r.Spec.Shares, []Share{{Path: "/data", ReadOnly: true}, {Path: "/out"}}):
				return "shares"
			case r.Spec.Dir != "/work" || r.Spec.Stdin == nil || !r.Spec.TTY:
				return "dir, -i or -t"
			}
			return ""
		}, ""},
		{"shell defaults", "shell", nil, func(r *runArgs) string {
			if !r.Shell || !r.Default || !r.Spec.TTY || r.Spec.Stdin == nil || !r.Spec.Escape {
				return "shell must be an interactive terminal session with the default command"
			}
			return ""
		}, ""},
		{"shell with a command", "shell", []string{"-vsh", "/x/vsh", "bash"}, func(r *runArgs) string {
			if r.Default || r.Vsh != "/x/vsh" || r.Spec.Args[0] != "bash" {
				return "wrong"
			}
			return ""
		}, ""},
		{"run --peer", "run", []string{"--peer", "--", "ip", "addr"}, func(r *runArgs) string {
			if !r.Spec.Peer || !reflect.DeepEqual(r.Spec.Args, []string{"ip", "addr"}) {
				return "want a peer run of ip addr"
			}
			return ""
		}, ""},
		{"run -peer with other flags", "run", []string{"-q", "-peer", "-i", "vsh"}, func(r *runArgs) string {
			if !r.Spec.Peer || !r.Opts.Quiet || r.Spec.Stdin == nil || r.Spec.Args[0] != "vsh" {
				return "flags lost"
			}
			return ""
		}, ""},
		{"--peer after the command is the command's", "run", []string{"vsh", "--peer"}, func(r *runArgs) string {
			if r.Spec.Peer || !reflect.DeepEqual(r.Spec.Args, []string{"vsh", "--peer"}) {
				return "rxe-lab took the command's flag"
			}
			return ""
		}, ""},
		{"shell --peer", "shell", []string{"--peer"}, func(r *runArgs) string {
			if !r.Spec.Peer || !r.Default || !r.Spec.TTY {
				return "want the default shell session in the namespace"
			}
			return ""
		}, ""},
		{"shell --peer with a command", "shell", []string{"--peer", "bash"}, func(r *runArgs) string {
			if !r.Spec.Peer || r.Default || r.Spec.Args[0] != "bash" {
				return "want bash in the namespace"
			}
			return ""
		}, ""},
		{"--peer takes no value", "run", []string{"--peer=maybe", "x"}, nil, "invalid boolean"},
		{"run needs a command", "run", []string{"-q"}, nil, "no command given"},
		{"negative timeout", "run", []string{"-timeout", "-1s", "x"}, nil, "positive"},
		{"unknown flag", "run", []string{"-nope", "x"}, nil, "not defined"},
		{"-vsh is for shell only", "run", []string{"-vsh", "x", "y"}, nil, "not defined"},
	}
	for _, tt := range tests {
		r, err := parseRunArgs(tt.cmd, tt.args, io.Discard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if msg := tt.check(r); msg != "" {
			t.Errorf("%s: %s: %+v", tt.name, msg, r)
		}
	}
}

func TestMainWithoutSetup(t *testing.T) {
	cache := t.TempDir()
	tests := []struct {
		args       []string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{[]string{"help"}, 0, "rxe-lab setup", ""},
		{nil, 2, "", "Usage"},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"run", "-cache", cache, "--", "true"}, StatusLabError, "", "run `rxe-lab setup`"},
		{[]string{"shell", "-cache", cache}, StatusLabError, "", "run `rxe-lab setup`"},
		{[]string{"run", "-cache", cache}, 2, "", "no command given"},
		{[]string{"run", "-h"}, 0, "", "Usage: rxe-lab run"},
		{[]string{"status", "-cache", cache}, 1, "not ready", ""},
		{[]string{"setup", "extra"}, 2, "", "unexpected arguments"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		got := Main(tt.args, nil, &out, &errb)
		if got != tt.wantStatus || !strings.Contains(out.String(), tt.wantOut) || !strings.Contains(errb.String(), tt.wantErr) {
			t.Errorf("Main(%q) = %d\nstdout: %s\nstderr: %s\nwant %d, stdout with %q, stderr with %q",
				tt.args, got, out.String(), errb.String(), tt.wantStatus, tt.wantOut, tt.wantErr)
		}
	}
}

func TestExitStatusFor(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	if got := exitStatusFor(ctx, Result{Status: StatusTimeout}); got != StatusTimeout {
		t.Errorf("not cancelled: %d, want %d", got, StatusTimeout)
	}
	cancel(signalError{syscall.SIGTERM})
	if got := exitStatusFor(ctx, Result{Status: StatusInterrupted}); got != 128+int(syscall.SIGTERM) {
		t.Errorf("SIGTERM: %d, want %d", got, 128+int(syscall.SIGTERM))
	}
	if !errors.Is(flag.ErrHelp, flag.ErrHelp) {
		t.Fatal("unreachable")
	}
}

func TestDefaultShellCommand(t *testing.T) {
	dir := t.TempDir()
	argv, why, err := defaultShellCommand(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) == 0 || !strings.HasSuffix(argv[0], "sh") || !strings.Contains(why, "no vsh binary") {
		t.Errorf("without vsh: %q (%s), want a shell and the reason", argv, why)
	}
	if _, _, err := defaultShellCommand(dir, dir+"/nope"); err == nil {
		t.Errorf("a missing --vsh must be an error")
	}
	if _, err := os.Stat("/bin/bash"); err == nil && argv[0] != "/bin/bash" {
		t.Errorf("with /bin/bash present, the shell is %q", argv[0])
	}
}
