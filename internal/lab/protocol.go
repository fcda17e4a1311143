package lab

import (
	"fmt"
	"strconv"
	"strings"
)

// The control channel (virtio-serial port vsh.ctl) carries one message per
// line. The guest sends, in this order:
//
//	up SECONDS       the initramfs init runs (SECONDS: guest uptime)
//	ready SECONDS    rxe0 is up; the command starts now
//	fail MESSAGE     the guest could not set up the lab; it powers off
//	exit STATUS      the command ended with STATUS (0-255; 128+N: signal N)
//
// and the host may send
//
//	winsize ROWS COLS   the terminal's size changed (tty sessions)
//
// Lines that parse as none of these are ignored, so that a future guest can
// add messages without breaking an older host.

// MsgKind is the kind of a control message.
type MsgKind int

const (
	MsgUnknown MsgKind = iota
	MsgUp
	MsgReady
	MsgFail
	MsgExit
	MsgWinsize
)

var msgNames = [...]string{"unknown", "up", "ready", "fail", "exit", "winsize"}

func (k MsgKind) String() string {
	if int(k) < len(msgNames) {
		return msgNames[k]
	}
	return "MsgKind(" + strconv.Itoa(int(k)) + ")"
}

// Msg is one control message.
type Msg struct {
	Kind   MsgKind
	Uptime float64 // up, ready: the guest's uptime in seconds
	Status int     // exit
	Text   string  // fail
	Rows   int     // winsize
	Cols   int     // winsize
}

// ParseMsg parses one line of the control channel (without its newline).
// It returns an error, and a Msg of kind MsgUnknown, for anything else.
func ParseMsg(line string) (Msg, error) {
	line = strings.TrimRight(line, "\r\n")
	word, rest, _ := strings.Cut(line, " ")
	bad := func(why string) (Msg, error) {
		return Msg{}, fmt.Errorf("control message %q: %s", line, why)
	}
	switch word {
	case "up", "ready":
		f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil || f < 0 {
			return bad("want a non-negative uptime in seconds")
		}
		k := MsgUp
		if word == "ready" {
			k = MsgReady
		}
		return Msg{Kind: k, Uptime: f}, nil
	case "fail":
		return Msg{Kind: MsgFail, Text: strings.TrimSpace(rest)}, nil
	case "exit":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 || n > 255 {
			return bad("want an exit status 0-255")
		}
		return Msg{Kind: MsgExit, Status: n}, nil
	case "winsize":
		f := strings.Fields(rest)
		if len(f) != 2 {
			return bad("want ROWS COLS")
		}
		r, err1 := strconv.Atoi(f[0])
		c, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || r <= 0 || c <= 0 || r > 65535 || c > 65535 {
			return bad("want two sizes 1-65535")
		}
		return Msg{Kind: MsgWinsize, Rows: r, Cols: c}, nil
	}
	return bad("unknown message")
}

// String formats m as its control line, without the newline.
func (m Msg) String() string {
	switch m.Kind {
	case MsgUp, MsgReady:
		return fmt.Sprintf("%s %.2f", m.Kind, m.Uptime)
	case MsgFail:
		return "fail " + strings.ReplaceAll(m.Text, "\n", " ")
	case MsgExit:
		return "exit " + strconv.Itoa(m.Status)
	case MsgWinsize:
		return fmt.Sprintf("winsize %d %d", m.Rows, m.Cols)
	}
	return "unknown"
}
