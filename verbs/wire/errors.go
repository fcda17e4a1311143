package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error that Decode, DecodeIP, DecodeFrame,
// VerifyICRC and the encoders return wraps exactly one of them, so callers
// test with errors.Is(err, wire.ErrBadICRC); the message adds the detail.
var (
	ErrShort      = errors.New("wire: packet too short")
	ErrBadOpcode  = errors.New("wire: bad opcode")
	ErrBadTVer    = errors.New("wire: bad transport header version")
	ErrBadPad     = errors.New("wire: pad count larger than payload")
	ErrBadICRC    = errors.New("wire: bad ICRC")
	ErrBadLength  = errors.New("wire: bad length")
	ErrNotRoCE    = errors.New("wire: not RoCEv2 over IP and UDP")
	ErrBadIP      = errors.New("wire: bad IP header")
	ErrBadNetwork = errors.New("wire: bad network description")
)

// Error is a decoding or encoding failure: Kind is one of the sentinel
// errors above and Detail says what exactly was wrong.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

func errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}
