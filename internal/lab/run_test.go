package lab

import (
	"bytes"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRingTail(t *testing.T) {
	r := newRing(16)
	r.Write([]byte("line1\r\nline2\n"))
	r.Write([]byte("line3\nline4\n"))
	if got := r.String(); len(got) != 16 || !strings.HasSuffix(got, "line4\n") {
		t.Errorf("ring kept %q, want the last 16 bytes", got)
	}
	if got := r.Tail(2); got != "line3\nline4" {
		t.Errorf("Tail(2) = %q", got)
	}
	if got := newRing(10).Tail(3); got != "" {
		t.Errorf("empty Tail = %q", got)
	}
}

// unixPair returns two connected Unix stream sockets.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: p, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

func TestForwardInput(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		escape     bool
		wantSent   string
		wantEscape bool
	}{
		{"copies to EOF and half-closes", "hello\nworld\n", false, "hello\nworld\n", false},
		{"Ctrl-] stops the guest", "ls\n\x1dmore", true, "ls\n", true},
		{"Ctrl-] is data without escape", "a\x1db", false, "a\x1db", false},
	}
	for _, tt := range tests {
		a, b := unixPair(t)
		escaped := false
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			forwardInput(strings.NewReader(tt.in), a, stop, true, tt.escape, func() { escaped = true })
			if tt.escape {
				a.CloseWrite()
			}
			close(done)
		}()
		var got bytes.Buffer
		b.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := got.ReadFrom(b); err != nil {
			t.Errorf("%s: reading: %v (the writer did not half-close?)", tt.name, err)
		}
		<-done
		if got.String() != tt.wantSent || escaped != tt.wantEscape {
			t.Errorf("%s: sent %q, escaped %v; want %q, %v", tt.name, got.String(), escaped, tt.wantSent, tt.wantEscape)
		}
	}
}
