package exchange

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// freePort returns a loopback TCP port nobody listens on.
func freePort(t *testing.T) uint64 {
	t.Helper()
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	p := l.Port()
	l.Close()
	return p
}

func TestConnSteps(t *testing.T) {
	bg := context.Background()
	for _, tt := range []struct {
		name string
		run  func(t *testing.T) error
		want func(error) bool
	}{
		{"dial refused for all of wait", func(t *testing.T) error {
			_, err := Dial(bg, Addr("127.0.0.1", freePort(t)), 100*time.Millisecond)
			return err
		}, func(err error) bool { return errors.Is(err, ErrRefused) }},
		{"dial interrupted", func(t *testing.T) error {
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			_, err := Dial(ctx, Addr("127.0.0.1", freePort(t)), time.Minute)
			return err
		}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"no host", func(t *testing.T) error {
			_, err := Dial(bg, Addr("no-such-host.invalid", 1), time.Second)
			return err
		}, func(err error) bool {
			var e *NoHostError
			return errors.As(err, &e) && e.Host == "no-such-host.invalid"
		}},
		{"accept times out", func(t *testing.T) error {
			l, err := Listen(0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = l.Accept(bg, 80*time.Millisecond)
			return err
		}, IsTimeout},
		{"accept interrupted", func(t *testing.T) error {
			l, err := Listen(0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ctx, cancel := context.WithTimeout(bg, 80*time.Millisecond)
			defer cancel()
			_, err = l.Accept(ctx, time.Minute)
			return err
		}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"read times out", func(t *testing.T) error {
			_, srv, cli := pair(t)
			defer srv.Close()
			defer cli.Close()
			return cli.ReadFull(bg, make([]byte, 5), 80*time.Millisecond)
		}, IsTimeout},
		{"read interrupted", func(t *testing.T) error {
			_, srv, cli := pair(t)
			defer srv.Close()
			defer cli.Close()
			ctx, cancel := context.WithTimeout(bg, 80*time.Millisecond)
			defer cancel()
			return cli.ReadFull(ctx, make([]byte, 5), time.Minute)
		}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := tt.run(t)
			if !tt.want(err) {
				t.Errorf("error %v (%T)", err, err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("took %s", el)
			}
		})
	}
}

// pair returns a listener and both ends of one connection to it.
func pair(t *testing.T) (*Listener, *Conn, *Conn) {
	t.Helper()
	l, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := l.Accept(context.Background(), 5*time.Second); ch <- res{c, err} }()
	cli, err := Dial(context.Background(), Addr("127.0.0.1", l.Port()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return l, r.c, cli
}

func TestConnExchange(t *testing.T) {
	_, srv, cli := pair(t)
	defer srv.Close()
	defer cli.Close()
	ctx := context.Background()
	local := Dest{LID: 1, QPN: 0x11, PSN: 0x123}
	go func() {
		m := local.Marshal()
		cli.Write(ctx, m[:], 5*time.Second)
	}()
	var buf [MsgSize]byte
	if err := srv.ReadFull(ctx, buf[:], 5*time.Second); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(buf[:])
	if err != nil || got != local {
		t.Errorf("read %v, %v; want %v", got, err, local)
	}
	if p := srv.Peer(); p != "127.0.0.1" {
		t.Errorf("Peer() = %q; want 127.0.0.1", p)
	}
}

// ExampleDial connects to a server on this host and sends it an address, a
// step at a time.
func ExampleDial() {
	l, err := Listen(0) // any free port
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	ctx := context.Background()
	go func() {
		c, err := Dial(ctx, Addr("127.0.0.1", l.Port()), 5*time.Second)
		if err != nil {
			return
		}
		defer c.Close()
		m := Dest{LID: 0, QPN: 0x1c, PSN: 0x2a}.Marshal()
		c.Write(ctx, m[:], 5*time.Second)
	}()
	srv, err := l.Accept(ctx, 5*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	var buf [MsgSize]byte
	if err := srv.ReadFull(ctx, buf[:], 5*time.Second); err != nil {
		fmt.Println(err)
		return
	}
	d, _ := Parse(buf[:])
	fmt.Printf("qpn %#x psn %#x\n", d.QPN, d.PSN)
	// Output: qpn 0x1c psn 0x2a
}
