//go:build !linux && !windows

package sim

import (
	"net"
	"net/netip"
	"syscall"
)

// udpIO is the link's socket I/O elsewhere than Linux: one datagram a
// system call (there is no recvmmsg), read without blocking on the
// socket's descriptor, written through the runtime's poller. The
// socket's drops are not counted (drops stays 0).
type udpIO struct {
	udpSlots

	msg  []byte
	to   syscall.Sockaddr
	serr error
	wfn  func(uintptr) bool
}

func newUDPIO(c *net.UDPConn) (*udpIO, error) {
	io := &udpIO{}
	io.wfn = io.sendto
	if err := io.init(c, func(int) {}); err != nil {
		return nil, err
	}
	return io, nil
}

// recv reads the datagrams waiting on the socket, at most udpBatch,
// without blocking; 0 when there are none.
func (io *udpIO) recv() (int, error) {
	for k := 0; k < udpBatch; k++ {
		n, sa, err := syscall.Recvfrom(io.fd, io.bufs[k], syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EINTR:
			k--
			continue
		case err == syscall.EAGAIN:
			return k, nil
		case err != nil:
			if k > 0 {
				return k, nil
			}
			return 0, err
		}
		io.n[k] = n
		switch sa := sa.(type) {
		case *syscall.SockaddrInet4:
			io.from[k] = netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
		case *syscall.SockaddrInet6:
			io.from[k] = netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(sa.Port))
		default:
			io.from[k] = netip.AddrPort{}
		}
	}
	return udpBatch, nil
}

// pending reports whether a datagram waits on the socket, without taking
// it.
func (io *udpIO) pending(fd uintptr) bool {
	var b [1]byte
	for {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if err != syscall.EINTR {
			return err != syscall.EAGAIN
		}
	}
}

// send sends the datagrams msgs[i] to to[i], one datagram each, waiting
// while the socket's send buffer is full. It returns how many went before
// the first that failed, and why that one failed (nil when all went).
func (io *udpIO) send(msgs [][]byte, to []netip.AddrPort, scope uint32) (int, error) {
	for i, m := range msgs {
		a := to[i]
		if a.Addr().Is4() {
			io.to = &syscall.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().As4()}
		} else {
			io.to = &syscall.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16(), ZoneId: scope}
		}
		io.msg = m
		if err := io.raw.Write(io.wfn); err != nil {
			return i, err
		}
		if io.serr != nil {
			return i, io.serr
		}
	}
	return len(msgs), nil
}

func (io *udpIO) sendto(fd uintptr) bool {
	for {
		err := syscall.Sendto(int(fd), io.msg, 0, io.to)
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		io.serr = err
		return true
	}
}
