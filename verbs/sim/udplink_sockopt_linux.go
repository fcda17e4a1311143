//go:build linux

package sim

import (
	"net"

	"golang.org/x/sys/unix"
)

// rocev2Socket sets the link's socket up to send as rxe does: IPv4 with DF
// and, the socket being unconnected, the identification 0
// (ip_select_ident_segs), so that the ICRC the link computes over ID 0
// is the one on the wire; IPv6 with flow label 0 (rxe's
// ip6_flow_hdr(…, 0)) and no fragmentation. Over IPv6 it also takes
// datagrams with a zero UDP checksum (UDP_NO_CHECK6_RX), which rxe sends
// and Linux otherwise drops (RFC 8200 forbids them but for tunnels, and
// rxe's own socket accepts them).
func rocev2Socket(c *net.UDPConn, v4 bool) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if v4 {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
			return
		}
		if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO); serr != nil {
			return
		}
		if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_AUTOFLOWLABEL, 0); serr != nil {
			return
		}
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_RX, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
