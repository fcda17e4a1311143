package pingpong

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// A client whose 52-byte message arrives whole but does not parse: the
// server could not read the remote address (rdma-core's wording for the
// read), and says what was wrong with it; it does not blame its own
// "send/recv local address", which it never got to.
func TestMalformedRemoteAddress(t *testing.T) {
	f := newFabric(t)
	tests := []struct {
		msg  string
		want string // what was wrong, in stderr
	}{
		{"0000:0000zz:a3f1c2:00000000000000000000ffff0a000002", `the QPN, field 2, "0000zz" is not hex`},
		{"zzzz:000011:a3f1c2:00000000000000000000ffff0a000002", `the LID, field 1, "zzzz" is not hex`},
		{"0000:000011:a3f1c2:0000ffff0a000002", "want 32 hex digits"},
		{"hello, this is not a pingpong", "want LID:QPN:PSN:GID"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			var m [exchange.MsgSize]byte
			copy(m[:exchange.MsgSize-1], tc.msg)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan result, 1)
			go func() {
				var so, se proctest.Buf
				p := &Program{Stdout: &so, Stderr: &se, Open: func(string) (verbs.Provider, error) { return f, nil },
					Listen: func(int) (net.Listener, error) { return ln, nil }}
				code := p.Run(context.Background(), strings.Fields("rc -g 1 --timeout 2s"))
				done <- result{code, so.String(), se.String()}
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(m[:]); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.code != 1 || !strings.Contains(r.stderr, "Couldn't read remote address") ||
				strings.Contains(r.stderr, "send/recv local address") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("client sent %q: want \"Couldn't read remote address\" and %q in\n%s", tc.msg, tc.want, r)
			}
		})
	}
}
