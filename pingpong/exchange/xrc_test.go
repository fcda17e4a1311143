package exchange

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// The 66 bytes of ibv_xsrq_pingpong's address message, byte for byte:
// sprintf("%04x:%06x:%06x:%06x:%06x:%32s") is 65 characters, and write()
// sends the NUL too.
func TestXRCMarshalBytes(t *testing.T) {
	gid := verbs.GID(netip.MustParseAddr("::ffff:127.0.0.2").As16())
	d := XRCDest{LID: 0x12, RecvQPN: 0x11, SendQPN: 0x1000012, PSN: 0xabcdef, SRQN: 0x20001, GID: gid}
	m := d.Marshal()
	want := "0012:000011:000012:abcdef:020001:00000000000000000000ffff7f000002\x00"
	if len(want) != XRCMsgSize || len(m) != 66 {
		t.Fatalf("sizes: want %d, message %d; both must be 66", len(want), len(m))
	}
	if string(m[:]) != want {
		t.Errorf("Marshal = %q\nwant      %q", m[:], want)
	}
	// Written in one piece, nothing more.
	var b bytes.Buffer
	if err := WriteXRC(&b, d); err != nil || b.String() != want {
		t.Errorf("WriteXRC wrote %q, %v", b.Bytes(), err)
	}
	// Read back: the send QPN is masked to 24 bits, as on the wire.
	got, n, err := ReadXRC(&b)
	d.SendQPN &= 0xffffff
	if err != nil || n != 66 || got != d {
		t.Errorf("ReadXRC = %+v, %d, %v; want %+v", got, n, err, d)
	}
	// No GID (-g not given): 32 zeros, printed by inet_ntop as "::".
	z := XRCDest{RecvQPN: 1, SendQPN: 2, PSN: 3, SRQN: 4}.Marshal()
	if string(z[:]) != "0000:000001:000002:000003:000004:00000000000000000000000000000000\x00" {
		t.Errorf("zero GID: %q", z[:])
	}
}

// sscanf("%x:%x:%x:%x:%x:%s") takes what rdma-core's program writes and
// stops at the NUL; a message of another program is refused.
func TestParseXRC(t *testing.T) {
	d, err := ParseXRC([]byte("0001:00abc1:00abc2:000003:000004:fe800000000000000000000000000001\x00junk"))
	if err != nil || d.LID != 1 || d.RecvQPN != 0xabc1 || d.SendQPN != 0xabc2 || d.PSN != 3 || d.SRQN != 4 || d.GID.String() != "fe80::1" {
		t.Errorf("ParseXRC = %+v, %v", d, err)
	}
	for _, bad := range []string{
		"0000:000011:a3f1c0:00000000000000000000ffff7f000002\x00", // rc's 52-byte message
		"0000:000011:000012:xyz:000001:00000000000000000000ffff7f000002",
		"10000:000011:000012:000001:000001:00000000000000000000ffff7f000002",
		"0000:000011:000012:000001:000001:0000",
	} {
		if _, err := ParseXRC([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseXRC(%q) = %v; want ErrMalformed", bad, err)
		}
	}
}

// The termination message is "END" and its NUL: 4 bytes.
func TestEnd(t *testing.T) {
	var b bytes.Buffer
	if err := WriteEnd(&b); err != nil || b.String() != "END\x00" || EndSize != 4 {
		t.Fatalf("WriteEnd wrote %q, %v", b.Bytes(), err)
	}
	if n, err := ReadEnd(&b); err != nil || n != 4 {
		t.Errorf("ReadEnd = %d, %v", n, err)
	}
	if _, err := ReadEnd(strings.NewReader("done\x00")); !errors.Is(err, ErrNotEnd) {
		t.Errorf("ReadEnd(done) = %v; want ErrNotEnd", err)
	}
	if n, err := ReadEnd(strings.NewReader("EN")); n != 2 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadEnd(EN) = %d, %v", n, err)
	}
}
