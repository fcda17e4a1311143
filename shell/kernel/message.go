package kernel

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ProtocolVersion is the Jupyter messaging protocol the kernel speaks.
const ProtocolVersion = "5.3"

// delimiter separates a message's routing identities from its parts.
const delimiter = "<IDS|MSG>"

// MaxMessage bounds a message's size: the kernel drops a larger one with
// a log line.
const MaxMessage = 16 << 20

// Header is a message's header.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Message is one Jupyter message: its routing identities, header, the
// header of the message it answers, metadata and content.
type Message struct {
	Identities [][]byte
	Header     Header
	Parent     json.RawMessage // "{}" when it answers nothing
	Metadata   json.RawMessage
	Content    json.RawMessage
	Buffers    [][]byte
}

// Errors decoding a message.
var (
	ErrNoDelimiter = errors.New("kernel: a message without the <IDS|MSG> delimiter")
	ErrShort       = errors.New("kernel: a message with fewer than its five parts after the delimiter")
	ErrSignature   = errors.New("kernel: a message whose signature does not match (another key, or altered)")
	ErrTooLarge    = fmt.Errorf("kernel: a message over %d MiB", MaxMessage>>20)
)

// signer signs and checks messages with the connection's key.
type signer struct{ key []byte }

// sign returns the hex HMAC-SHA256 of the parts, or "" with no key.
func (s signer) sign(parts ...[]byte) string {
	if len(s.key) == 0 {
		return ""
	}
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Decode reads a message from its ZeroMQ frames and checks its signature.
// It never panics, whatever the frames hold.
func (s signer) Decode(frames [][]byte) (*Message, error) {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	if size > MaxMessage {
		return nil, ErrTooLarge
	}
	d := -1
	for i, f := range frames {
		if string(f) == delimiter {
			d = i
			break
		}
	}
	if d < 0 {
		return nil, ErrNoDelimiter
	}
	if len(frames)-d-1 < 5 {
		return nil, ErrShort
	}
	sig, h, p, md, c := frames[d+1], frames[d+2], frames[d+3], frames[d+4], frames[d+5]
	if len(s.key) > 0 {
		want := s.sign(h, p, md, c)
		if !hmac.Equal([]byte(want), sig) {
			return nil, ErrSignature
		}
	}
	m := &Message{Identities: frames[:d], Parent: p, Metadata: md, Content: c, Buffers: frames[d+6:]}
	if err := json.Unmarshal(h, &m.Header); err != nil {
		return nil, fmt.Errorf("kernel: a message whose header is not JSON: %v", err)
	}
	for _, part := range []json.RawMessage{p, md, c} {
		if !json.Valid(part) {
			return nil, fmt.Errorf("kernel: a %q message with a part that is not JSON", m.Header.MsgType)
		}
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("kernel: a message with no msg_type")
	}
	return m, nil
}

// Encode returns the message's frames, signed.
func (s signer) Encode(m *Message) ([][]byte, error) {
	h, err := json.Marshal(m.Header)
	if err != nil {
		return nil, err
	}
	parts := [][]byte{h, orEmpty(m.Parent), orEmpty(m.Metadata), orEmpty(m.Content)}
	frames := append([][]byte{}, m.Identities...)
	frames = append(frames, []byte(delimiter), []byte(s.sign(parts...)))
	frames = append(frames, parts...)
	return append(frames, m.Buffers...), nil
}

func orEmpty(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// newID returns a random message or session id, as a UUID's hex.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// now is the message date, as ISO 8601 with microseconds.
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }
