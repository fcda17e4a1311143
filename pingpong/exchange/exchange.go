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

const (
	// MsgSize is sizeof "0000:000000:000000:00000000000000000000000000000000":
	// 51 characters and a NUL.
	MsgSize = 52
	// MaxQP is how many messages ibv_srq_pingpong sends each way.
	MaxQP = 256
	// DefaultPort is the TCP port the ping-pong programs use (-p).
	DefaultPort = 18515
)

// done is the client's last message: sizeof "done", NUL included.
var done = [5]byte{'d', 'o', 'n', 'e', 0}

// Dest is one endpoint's address as the ping-pongs exchange it
// (struct pingpong_dest).
type Dest struct {
	LID uint16
	QPN uint32 // 24 bits
	PSN uint32 // 24 bits
	GID verbs.GID
}

func (d Dest) String() string {
	return fmt.Sprintf("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", d.LID, d.QPN, d.PSN, d.GID)
}

// Marshal formats d as "%04x:%06x:%06x:%s" with the wire GID, NUL-padded to
// MsgSize. QPN and PSN are masked to 24 bits, as they are on the wire.
func (d Dest) Marshal() [MsgSize]byte {
	var m [MsgSize]byte
	s := fmt.Sprintf("%04x:%06x:%06x:%s", d.LID, d.QPN&0xffffff, d.PSN&0xffffff, d.GID.Wire())
	copy(m[:MsgSize-1], s)
	return m
}

// ErrMalformed is wrapped by every parse failure.
var ErrMalformed = errors.New("malformed pingpong exchange message")

// ErrNotDone is wrapped by Server's error when the client's last message is
// not "done" (rdma-core's servers check only its length). A client that
// sends more addresses than the server reads (ibv_srq_pingpong against an
// rc, uc or ud server) is the usual cause.
var ErrNotDone = errors.New("the client's last message is not \"done\"")

// Parse reads one message as the C programs' sscanf("%x:%x:%x:%s") and
// wire_gid_to_gid do: three hex fields separated by colons, then 32 hex
// digits of GID. Anything after the NUL is ignored.
func Parse(msg []byte) (Dest, error) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	fields := bytes.SplitN(msg, []byte(":"), 4)
	if len(fields) != 4 {
		return Dest{}, fmt.Errorf("%w: %q: want LID:QPN:PSN:GID", ErrMalformed, msg)
	}
	var vals [3]uint64
	for i, f := range fields[:3] {
		v, err := strconv.ParseUint(string(f), 16, 32)
		if err != nil || len(f) == 0 {
			return Dest{}, fmt.Errorf("%w: the %s, field %d, %q is not hex", ErrMalformed, [...]string{"LID", "QPN", "PSN"}[i], i+1, f)
		}
		vals[i] = v
	}
	if vals[0] > 0xffff {
		return Dest{}, fmt.Errorf("%w: LID %#x does not fit 16 bits", ErrMalformed, vals[0])
	}
	g := fields[3]
	if len(g) < 32 {
		return Dest{}, fmt.Errorf("%w: GID %q: want 32 hex digits", ErrMalformed, g)
	}
	var gid verbs.GID
	if _, err := hex.Decode(gid[:], g[:32]); err != nil {
		return Dest{}, fmt.Errorf("%w: GID %q is not hex", ErrMalformed, g[:32])
	}
	return Dest{LID: uint16(vals[0]), QPN: uint32(vals[1]), PSN: uint32(vals[2]), GID: gid}, nil
}

// writeDests writes slots messages: one per dest, then zeroed ones.
func writeDests(w io.Writer, dests []Dest, slots int) error {
	if len(dests) > slots {
		return fmt.Errorf("exchange: %d destinations do not fit %d slots", len(dests), slots)
	}
	buf := make([]byte, 0, slots*MsgSize)
	for _, d := range dests {
		m := d.Marshal()
		buf = append(buf, m[:]...)
	}
	// ibv_srq_pingpong formats every one of its MaxQP slots, the unused ones
	// from a zeroed pingpong_dest: "0000:000000:000000:" and 32 zeros.
	empty := Dest{}.Marshal()
	for i := len(dests); i < slots; i++ {
		buf = append(buf, empty[:]...)
	}
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("exchange: couldn't send local address: %w", err)
	}
	return nil
}

// readDests reads slots messages and returns the destinations up to the
// first unused slot: one whose QPN is 0 (QPN 0 is the SMI QP, never a
// ping-pong's), as ibv_srq_pingpong writes them, or one that is all NUL bytes.
func readDests(r io.Reader, slots int) ([]Dest, error) {
	buf := make([]byte, slots*MsgSize)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("exchange: couldn't read remote address: %w", err)
	}
	var out []Dest
	for i := 0; i < slots; i++ {
		m := buf[i*MsgSize : (i+1)*MsgSize]
		if m[0] == 0 {
			break
		}
		d, err := Parse(m)
		if err != nil {
			return nil, fmt.Errorf("exchange: message %d: %w", i, err)
		}
		if d.QPN == 0 && len(out) > 0 {
			break
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("exchange: the peer sent no address: %w", ErrMalformed)
	}
	return out, nil
}

// Client runs the client's side (pp_client_exch_dest): write the local
// destinations in slots messages (1 for rc/uc/ud, MaxQP for srq), read the
// server's, write "done".
func Client(rw io.ReadWriter, local []Dest, slots int) ([]Dest, error) {
	if err := writeDests(rw, local, slots); err != nil {
		return nil, err
	}
	remote, err := readDests(rw, slots)
	if err != nil {
		return nil, err
	}
	if _, err := rw.Write(done[:]); err != nil {
		return nil, fmt.Errorf("exchange: couldn't send \"done\": %w", err)
	}
	return remote, nil
}

// Server runs the server's side (pp_server_exch_dest): read the client's
// destinations, call connect with them (the server moves its QPs to RTR and
// RTS before it replies), write the local ones, and read "done".
func Server(rw io.ReadWriter, local []Dest, slots int, connect func(remote []Dest) error) ([]Dest, error) {
	remote, err := readDests(rw, slots)
	if err != nil {
		return nil, err
	}
	if connect != nil {
		if err := connect(remote); err != nil {
			return remote, fmt.Errorf("exchange: couldn't connect to remote QP: %w", err)
		}
	}
	if err := writeDests(rw, local, slots); err != nil {
		return remote, err
	}
	var d [len(done)]byte
	if _, err := io.ReadFull(rw, d[:]); err != nil {
		return remote, fmt.Errorf("exchange: couldn't read \"done\" from client: %w", err)
	}
	if d != done {
		return remote, fmt.Errorf("exchange: the client sent %q where \"done\" belongs: %w", d[:], ErrNotDone)
	}
	return remote, nil
}
