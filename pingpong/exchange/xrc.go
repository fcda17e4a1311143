package exchange

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/vsh-rdma/vsh/verbs"
)

// ibv_xsrq_pingpong's exchange. Each side sends one message per
// connection: its LID, the XRC_RECV and XRC_SEND QP numbers it made for
// that connection, the PSN both of them start from, its XRC SRQ's number
// and its wire GID, formatted "%04x:%06x:%06x:%06x:%06x:%32s" (65
// characters) and written with the NUL, 66 bytes. The client writes first;
// the server, which accepts its -c clients one after the other, answers
// each after reading its message. After the data, the client writes "END"
// (4 bytes with the NUL) and waits for the server's; the server reads
// "END" from every client, then writes it to each.

const (
	// XRCMsgSize is MSG_SIZE of xsrq_pingpong: 65 characters and a NUL.
	XRCMsgSize = 66
	// EndSize is TERMINATION_MSG_SIZE: "END" and its NUL.
	EndSize = 4
)

// End is the termination message, NUL included.
var End = [EndSize]byte{'E', 'N', 'D', 0}

// XRCDest is one connection's address as ibv_xsrq_pingpong exchanges it
// (its struct pingpong_dest, the fields that travel).
type XRCDest struct {
	LID     uint16
	RecvQPN uint32 // the XRC_RECV (TGT) QP the peer's XRC_SEND QP sends to
	SendQPN uint32 // the XRC_SEND (INI) QP the peer's XRC_RECV QP answers
	PSN     uint32 // the start PSN of both QPs
	SRQN    uint32 // the XRC SRQ that messages to this side must name
	GID     verbs.GID
}

// Marshal formats d as "%04x:%06x:%06x:%06x:%06x:%32s", NUL-terminated:
// XRCMsgSize bytes. The 24-bit fields are masked, as they are on the wire.
func (d XRCDest) Marshal() [XRCMsgSize]byte {
	var m [XRCMsgSize]byte
	s := fmt.Sprintf("%04x:%06x:%06x:%06x:%06x:%s", d.LID, d.RecvQPN&0xffffff, d.SendQPN&0xffffff,
		d.PSN&0xffffff, d.SRQN&0xffffff, d.GID.Wire())
	copy(m[:XRCMsgSize-1], s)
	return m
}

// ParseXRC reads a message as xsrq_pingpong's sscanf("%x:%x:%x:%x:%x:%s")
// and wire_gid_to_gid do: five hex fields separated by colons, then 32 hex
// digits of GID. Anything after the NUL is ignored.
func ParseXRC(msg []byte) (XRCDest, error) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	fields := bytes.SplitN(msg, []byte(":"), 6)
	if len(fields) != 6 {
		return XRCDest{}, fmt.Errorf("%w: %q: want LID:RECV_QPN:SEND_QPN:PSN:SRQN:GID (an ibv_xsrq_pingpong address)", ErrMalformed, msg)
	}
	names := [...]string{"LID", "RECV QPN", "SEND QPN", "PSN", "SRQN"}
	var vals [5]uint64
	for i, f := range fields[:5] {
		v, err := strconv.ParseUint(string(f), 16, 32)
		if err != nil || len(f) == 0 {
			return XRCDest{}, fmt.Errorf("%w: the %s, field %d, %q is not hex", ErrMalformed, names[i], i+1, f)
		}
		vals[i] = v
	}
	if vals[0] > 0xffff {
		return XRCDest{}, fmt.Errorf("%w: LID %#x does not fit 16 bits", ErrMalformed, vals[0])
	}
	g := fields[5]
	if len(g) < 32 {
		return XRCDest{}, fmt.Errorf("%w: GID %q: want 32 hex digits", ErrMalformed, g)
	}
	var gid verbs.GID
	if _, err := hex.Decode(gid[:], g[:32]); err != nil {
		return XRCDest{}, fmt.Errorf("%w: GID %q is not hex", ErrMalformed, g[:32])
	}
	return XRCDest{LID: uint16(vals[0]), RecvQPN: uint32(vals[1]), SendQPN: uint32(vals[2]), PSN: uint32(vals[3]),
		SRQN: uint32(vals[4]), GID: gid}, nil
}

// WriteXRC writes d's XRCMsgSize bytes in one write (send_local_dest).
func WriteXRC(w io.Writer, d XRCDest) error {
	m := d.Marshal()
	_, err := w.Write(m[:])
	return err
}

// ReadXRC reads XRCMsgSize bytes (recv_remote_dest) and parses them. It
// returns how many bytes it read, for rdma-core's "%d/%d: Couldn't read
// remote address" and for explaining a peer that sent something else.
func ReadXRC(r io.Reader) (XRCDest, int, error) {
	var m [XRCMsgSize]byte
	n, err := io.ReadFull(r, m[:])
	if err != nil {
		return XRCDest{}, n, err
	}
	d, err := ParseXRC(m[:])
	return d, n, err
}

// ErrNotEnd is ReadEnd's error when the 4 bytes are not "END" and its NUL
// (rdma-core: "Invalid termination ack was accepted").
var ErrNotEnd = errors.New("the termination message is not \"END\"")

// WriteEnd writes End.
func WriteEnd(w io.Writer) error {
	_, err := w.Write(End[:])
	return err
}

// ReadEnd reads EndSize bytes and checks that they are End. It returns
// how many bytes it read.
func ReadEnd(r io.Reader) (int, error) {
	var m [EndSize]byte
	n, err := io.ReadFull(r, m[:])
	if err != nil {
		return n, err
	}
	if m != End {
		return n, fmt.Errorf("%w: got %q", ErrNotEnd, m[:])
	}
	return n, nil
}
