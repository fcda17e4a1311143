package exchange

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
)

// Conn is one TCP connection of the exchange, driven a step at a time, as
// the shell's exchange command does to show each step. Each step ends when
// it is done, when its wait has passed (IsTimeout reports the error), or when
// its context is done (the context's error).
type Conn struct {
	c net.Conn
}

// ErrRefused is Dial's error when nobody listened on the port for all of the
// wait: every try was refused.
var ErrRefused = errors.New("nobody listens on that port (connection refused)")

// NoHostError is Dial's error for a host name that does not resolve.
type NoHostError struct {
	Host string
	Why  string // the resolver's reason: "no such host"
}

func (e *NoHostError) Error() string { return "no host " + strconv.Quote(e.Host) + ": " + e.Why }

// Addr returns host:port as the exchange dials it.
func Addr(host string, port uint64) string {
	return net.JoinHostPort(host, strconv.FormatUint(port, 10))
}

// dialContext is how Dial dials (a test stands in for the network).
var dialContext = func(ctx context.Context, timeout time.Duration, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.DialContext(ctx, "tcp", addr)
}

// Dial connects to addr (Addr's form). A server that is not up yet refuses:
// Dial tries again every 20 ms until wait has passed, so that a script can
// start both sides at once; then it returns ErrRefused, also when the last
// try ran out of time after refusals (a loaded machine).
func Dial(ctx context.Context, addr string, wait time.Duration) (*Conn, error) {
	deadline := time.Now().Add(wait)
	refused := false
	for {
		left := time.Until(deadline)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if left <= 0 {
			return nil, ErrRefused
		}
		c, err := dialContext(ctx, left, addr)
		if err == nil {
			return &Conn{c: c}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &NoHostError{Host: host, Why: dnsErr.Err}
		}
		var ne net.Error
		if refused && errors.As(err, &ne) && ne.Timeout() {
			return nil, ErrRefused
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		refused = true
		time.Sleep(min(20*time.Millisecond, time.Until(deadline)))
	}
}

// Peer returns the other end's IP address, or "the client" when it has none.
func (c *Conn) Peer() string {
	if ta, ok := c.c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return "the client"
}

// Write writes all of b.
func (c *Conn) Write(ctx context.Context, b []byte, wait time.Duration) error {
	return c.step(ctx, wait, func() error { _, err := c.c.Write(b); return err })
}

// ReadFull reads exactly len(b) bytes.
func (c *Conn) ReadFull(ctx context.Context, b []byte, wait time.Duration) error {
	return c.step(ctx, wait, func() error { _, err := io.ReadFull(c.c, b); return err })
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// step runs fn under a deadline wait away that ctx's end brings forward.
func (c *Conn) step(ctx context.Context, wait time.Duration, fn func() error) error {
	c.c.SetDeadline(time.Now().Add(wait))
	stop := context.AfterFunc(ctx, func() { c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	err := fn()
	c.c.SetDeadline(time.Time{})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// IsTimeout reports whether err is a step's or Accept's wait running out.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Listener is the server's side: a TCP port on every address.
type Listener struct {
	l *net.TCPListener
}

// Listen listens on TCP port on every address, as rdma-core's servers do.
func Listen(port uint64) (*Listener, error) {
	l, err := net.Listen("tcp", ":"+strconv.FormatUint(port, 10))
	if err != nil {
		return nil, err
	}
	return &Listener{l: l.(*net.TCPListener)}, nil
}

// Accept waits up to wait for a client, looking at ctx every 50 ms.
func (l *Listener) Accept(ctx context.Context, wait time.Duration) (*Conn, error) {
	deadline := time.Now().Add(wait)
	for {
		l.l.SetDeadline(time.Now().Add(min(50*time.Millisecond, time.Until(deadline))))
		c, err := l.l.Accept()
		if err == nil {
			return &Conn{c: c}, nil
		}
		if !IsTimeout(err) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !time.Now().Before(deadline) {
			return nil, err
		}
	}
}

// Close stops listening.
func (l *Listener) Close() error { return l.l.Close() }

// Port returns the TCP port listened on (the one chosen when Listen was given 0).
func (l *Listener) Port() uint64 { return uint64(l.l.Addr().(*net.TCPAddr).Port) }
