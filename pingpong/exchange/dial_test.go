package exchange

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestDialLastTryOutOfTime checks Dial's error when tries are refused and
// one runs out of the wait (a loaded machine): still ErrRefused, the
// reason a learner can act on; a timeout with no refusal before it stays
// a timeout (a host that drops the SYN).
func TestDialLastTryOutOfTime(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name  string
		tries []error
		want  error
	}{
		{"refused, then out of time", []error{refused, refused, timeout}, ErrRefused},
		{"out of time at once", []error{timeout}, os.ErrDeadlineExceeded},
		{"refused until the wait ends", []error{refused, refused, refused, refused, refused, refused, refused, refused}, ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			defer func(d func(context.Context, time.Duration, string) (net.Conn, error)) { dialContext = d }(dialContext)
			dialContext = func(context.Context, time.Duration, string) (net.Conn, error) {
				err := tt.tries[min(n, len(tt.tries)-1)]
				n++
				return nil, err
			}
			_, err := Dial(context.Background(), "127.0.0.1:1", 100*time.Millisecond)
			if !errors.Is(err, tt.want) {
				t.Errorf("Dial after %d tries: %v; want %v", n, err, tt.want)
			}
		})
	}
}
