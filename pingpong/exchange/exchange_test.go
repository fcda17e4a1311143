package exchange_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

func gid(t *testing.T, s string) verbs.GID {
	t.Helper()
	g, err := verbs.ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The bytes rc_pingpong sends: sprintf(msg, "%04x:%06x:%06x:%s", ...) over
// sizeof msg = 52 (rdma-core libibverbs/examples/rc_pingpong.c, pingpong.c).
func TestMarshalMatchesRdmaCore(t *testing.T) {
	d := exchange.Dest{LID: 0, QPN: 0x11, PSN: 0xa3f1c2, GID: gid(t, "::ffff:10.0.0.1")}
	m := d.Marshal()
	want := "0000:000011:a3f1c2:00000000000000000000ffff0a000001\x00"
	if string(m[:]) != want {
		t.Fatalf("Marshal = %q\nwant      %q", m[:], want)
	}
	if len(m) != 52 {
		t.Fatalf("len = %d", len(m))
	}
	back, err := exchange.Parse(m[:])
	if err != nil || back != d {
		t.Fatalf("Parse(Marshal) = %+v, %v; want %+v", back, err, d)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"0000:000011:a3f1c2:00000000000000000000ffff0a000001", ""},
		{"1:2:3:00000000000000000000000000000000", ""}, // sscanf %x accepts short fields
		{"0000:000011:a3f1c2", "want LID:QPN:PSN:GID"},
		{"zzzz:000011:a3f1c2:00000000000000000000ffff0a000001", `the LID, field 1, "zzzz" is not hex`},
		{"0000:0000zz:a3f1c2:00000000000000000000ffff0a000001", `the QPN, field 2, "0000zz" is not hex`},
		{"0000:000011:a3f1c2:0000", "32 hex digits"},
		{"10000:1:1:00000000000000000000000000000000", "16 bits"},
		{"", "want LID:QPN:PSN:GID"},
	}
	for _, tc := range tests {
		_, err := exchange.Parse([]byte(tc.in))
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("Parse(%q) = %v", tc.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, exchange.ErrMalformed) {
			t.Errorf("Parse(%q) = %v; want error containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestHandshakeOverTCP(t *testing.T) {
	for _, slots := range []int{1, exchange.MaxQP} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		client := []exchange.Dest{{QPN: 0x12, PSN: 0x345, GID: gid(t, "10.0.0.1")}}
		server := []exchange.Dest{{QPN: 0x13, PSN: 0x678, GID: gid(t, "10.0.0.2")}}
		if slots > 1 {
			client = append(client, exchange.Dest{QPN: 0x14, PSN: 1, GID: gid(t, "10.0.0.1")})
		}
		type result struct {
			remote []exchange.Dest
			err    error
		}
		done := make(chan result, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				done <- result{nil, err}
				return
			}
			defer c.Close()
			var connected bool
			r, err := exchange.Server(c, server, slots, func(remote []exchange.Dest) error {
				connected = len(remote) > 0
				return nil
			})
			if err == nil && !connected {
				err = errors.New("connect not called")
			}
			done <- result{r, err}
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		got, err := exchange.Client(c, client, slots)
		c.Close()
		if err != nil {
			t.Fatalf("slots=%d: Client: %v", slots, err)
		}
		if len(got) != 1 || got[0] != server[0] {
			t.Errorf("slots=%d: client learned %+v; want %+v", slots, got, server)
		}
		res := <-done
		if res.err != nil {
			t.Fatalf("slots=%d: Server: %v", slots, res.err)
		}
		if len(res.remote) != len(client) || res.remote[0] != client[0] {
			t.Errorf("slots=%d: server learned %+v; want %+v", slots, res.remote, client)
		}
		ln.Close()
	}
}

func TestServerShortRead(t *testing.T) {
	var rw struct {
		bytes.Buffer
	}
	rw.WriteString("0000:000011")
	_, err := exchange.Server(&rw, nil, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "couldn't read remote address") {
		t.Fatalf("Server on a short message = %v", err)
	}
}

// A client that sends more than the server reads (ibv_srq_pingpong's 256
// addresses against an rc server) is caught where "done" belongs.
func TestServerNotDone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The srq client's side: 256 messages (the kernel buffers them).
	m := exchange.Dest{QPN: 0x12, PSN: 0x345, GID: gid(t, "10.0.0.1")}.Marshal()
	msgs := append(m[:], make([]byte, (exchange.MaxQP-1)*exchange.MsgSize)...)
	if _, err := c.Write(msgs); err != nil {
		t.Fatal(err)
	}
	_, err = exchange.Server(s, []exchange.Dest{{QPN: 0x13, GID: gid(t, "10.0.0.2")}}, 1, nil)
	if !errors.Is(err, exchange.ErrNotDone) || !strings.Contains(err.Error(), "where \"done\" belongs") {
		t.Fatalf("Server = %v; want ErrNotDone", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("0000:000011:a3f1c2:00000000000000000000ffff0a000001\x00"))
	f.Add([]byte("1:2:3:4"))
	f.Add([]byte(":::"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := exchange.Parse(b)
		if err != nil {
			return
		}
		m := d.Marshal()
		d2, err := exchange.Parse(m[:])
		if err != nil || d2.LID != d.LID || d2.GID != d.GID || d2.QPN != d.QPN&0xffffff || d2.PSN != d.PSN&0xffffff {
			t.Fatalf("round trip of %+v = %+v, %v", d, d2, err)
		}
	})
}

// ibv_srq_pingpong writes all MaxQP slots, the unused ones formatted from a
// zeroed pingpong_dest (srq_pingpong.c pp_client_exch_dest), and reads all
// MaxQP back. Found by interop against ibv_srq_pingpong on rxe0.
func TestSRQSlotsAsRdmaCoreWritesThem(t *testing.T) {
	var buf bytes.Buffer
	used := []exchange.Dest{{QPN: 0x11, PSN: 1}, {QPN: 0x12, PSN: 2}}
	if _, err := exchange.Client(&struct {
		io.Reader
		io.Writer
	}{strings.NewReader(""), &buf}, used, exchange.MaxQP); err == nil {
		t.Fatal("Client with no server reply succeeded")
	}
	if buf.Len() != exchange.MaxQP*exchange.MsgSize {
		t.Fatalf("wrote %d bytes, want %d", buf.Len(), exchange.MaxQP*exchange.MsgSize)
	}
	third := buf.Bytes()[2*exchange.MsgSize : 3*exchange.MsgSize]
	if want := "0000:000000:000000:00000000000000000000000000000000\x00"; string(third) != want {
		t.Fatalf("unused slot = %q, want %q", third, want)
	}
	// The same bytes, read back as a server reads them, give the two QPs.
	got, err := exchange.Server(&struct {
		io.Reader
		io.Writer
	}{io.MultiReader(bytes.NewReader(buf.Bytes()), strings.NewReader("done\x00")), io.Discard}, nil, exchange.MaxQP, nil)
	if err != nil || len(got) != 2 || got[1] != used[1] {
		t.Fatalf("Server read %+v, %v; want the two used slots", got, err)
	}
}
