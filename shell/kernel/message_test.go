package kernel

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSignAndDecode(t *testing.T) {
	s := signer{key: []byte("k")}
	m := &Message{Identities: [][]byte{[]byte("id")}, Header: Header{MsgID: "1", MsgType: "kernel_info_request", Version: ProtocolVersion},
		Parent: json.RawMessage("{}"), Metadata: json.RawMessage("{}"), Content: json.RawMessage(`{"a":1}`)}
	frames, err := s.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Decode(frames)
	if err != nil || got.Header.MsgType != "kernel_info_request" || string(got.Identities[0]) != "id" || string(got.Content) != `{"a":1}` {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	tests := []struct {
		name   string
		mutate func([][]byte) [][]byte
		want   error
	}{
		{"another key's signature", func(f [][]byte) [][]byte { f[2] = bytes.Repeat([]byte("0"), 64); return f }, ErrSignature},
		{"altered content", func(f [][]byte) [][]byte { f[6] = []byte(`{"a":2}`); return f }, ErrSignature},
		{"no delimiter", func(f [][]byte) [][]byte { return [][]byte{f[0], f[2]} }, ErrNoDelimiter},
		{"short", func(f [][]byte) [][]byte { return f[:4] }, ErrShort},
		{"too large", func(f [][]byte) [][]byte { return append(f, make([]byte, MaxMessage)) }, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := s.Encode(m)
			if _, err := s.Decode(tt.mutate(f)); err != tt.want {
				t.Errorf("Decode: %v, want %v", err, tt.want)
			}
		})
	}
	// With no key there is no signature to check.
	if _, err := (signer{}).Decode(frames); err != nil {
		t.Errorf("no key: %v", err)
	}
}

// FuzzDecode: whatever the frames hold, Decode returns a message or an
// error, never a panic, and a message it returns re-encodes.
func FuzzDecode(f *testing.F) {
	s := signer{key: []byte("key")}
	m := &Message{Header: Header{MsgID: "1", MsgType: "execute_request"}, Content: json.RawMessage(`{"code":"open_device A"}`)}
	frames, _ := s.Encode(m)
	f.Add(bytes.Join(frames, []byte{0}), true)
	f.Add([]byte("<IDS|MSG>\x00x\x00{}\x00{}\x00{}\x00{}"), false)
	f.Add([]byte("\x00\x00<IDS|MSG>"), true)
	f.Fuzz(func(t *testing.T, data []byte, keyed bool) {
		frames := bytes.Split(data, []byte{0})
		sig := s
		if !keyed {
			sig = signer{}
		}
		got, err := sig.Decode(frames)
		if err != nil {
			return
		}
		if _, err := sig.Encode(got); err != nil {
			t.Errorf("a decoded message does not encode: %v", err)
		}
	})
}
