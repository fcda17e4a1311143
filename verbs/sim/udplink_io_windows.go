//go:build windows

package sim

import (
	"errors"
	"net"
	"net/netip"
)

// udpIO has no implementation on Windows, whose sockets have no
// non-blocking read the link can make under the fabric's lock: NewUDP
// fails there, saying so.
type udpIO struct{ udpSlots }

func newUDPIO(*net.UDPConn) (*udpIO, error) {
	return nil, errors.New("the simulator's UDP link runs on Linux and other Unix systems, not on Windows: use the simulator in one process (no --sim-addr), or WSL")
}

func (*udpIO) recv() (int, error)                                   { return 0, nil }
func (*udpIO) pending(uintptr) bool                                 { return false }
func (*udpIO) send([][]byte, []netip.AddrPort, uint32) (int, error) { return 0, errors.ErrUnsupported }
