//go:build linux

package sim

import (
	"encoding/binary"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// udpIO is the link's socket I/O on Linux: recvmmsg and sendmmsg, a batch
// of datagrams a system call, with no allocation. Reading is non-blocking
// on the socket's descriptor itself, so that whoever holds the fabric's
// lock reads while another goroutine waits for the socket to become
// readable through the runtime's poller (udpLink.holdSocket); writing
// goes through the poller, which waits when the socket's send buffer is
// full. The socket counts what its full receive buffer dropped
// (SO_RXQ_OVFL) and stamps each datagram with the time the kernel received
// it (SO_TIMESTAMPNS); every datagram read carries both.
type udpIO struct {
	udpSlots

	rhdr   [udpBatch]unix.Mmsghdr
	riov   [udpBatch]unix.Iovec
	rname  [udpBatch]unix.RawSockaddrInet6
	roob   [udpBatch][64]byte // SO_RXQ_OVFL's 4 bytes and SCM_TIMESTAMPNS's timespec
	shdr   [udpBatch]unix.Mmsghdr
	siov   [udpBatch]unix.Iovec
	sname  [udpBatch]unix.RawSockaddrInet6
	sk     int                // messages for sendmmsg
	sn     int                // messages the last sendmmsg sent
	serr   error              // and its error
	sendFn func(uintptr) bool // sendmmsg, for raw.Write
}

func newUDPIO(c *net.UDPConn) (*udpIO, error) {
	io := &udpIO{}
	io.sendFn = io.sendmmsg
	err := io.init(c, func(fd int) {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		// As much as the privilege allows beyond net.core.rmem_max and
		// wmem_max.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, udpRcvBuf)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, udpSndBuf)
	})
	if err != nil {
		return nil, err
	}
	for i := range io.bufs {
		io.riov[i].Base = &io.bufs[i][0]
		io.riov[i].SetLen(udpMaxDatagram)
		h := &io.rhdr[i].Hdr
		h.Iov = &io.riov[i]
		h.SetIovlen(1)
	}
	return io, nil
}

// recv reads the datagrams waiting on the socket, at most udpBatch,
// without blocking; 0 when there are none.
func (io *udpIO) recv() (int, error) {
	for i := range io.rhdr {
		h := &io.rhdr[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&io.rname[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Control = &io.roob[i][0]
		h.SetControllen(len(io.roob[i]))
		h.Flags = 0
	}
	for {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(io.fd), uintptr(unsafe.Pointer(&io.rhdr[0])), udpBatch, unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		default:
			return 0, e
		}
		k := int(r)
		for i := 0; i < k; i++ {
			io.n[i] = int(io.rhdr[i].Len)
			io.from[i] = sockaddrAddrPort(&io.rname[i])
			io.at[i] = 0
			io.oob(i, &io.rhdr[i].Hdr, io.roob[i][:])
		}
		return k, nil
	}
}

// pending reports whether a datagram waits on the socket, without taking
// it.
func (io *udpIO) pending(fd uintptr) bool {
	var b [1]byte
	for {
		_, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
		if e != unix.EINTR {
			return e != unix.EAGAIN
		}
	}
}

// oob takes the drop count and datagram i's receive time from its
// control messages.
func (io *udpIO) oob(i int, h *unix.Msghdr, b []byte) {
	b = b[:h.Controllen]
	for len(b) >= unix.SizeofCmsghdr {
		c := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(c.Len)
		if l < unix.SizeofCmsghdr || l > len(b) {
			return
		}
		switch {
		case c.Level != unix.SOL_SOCKET:
		case c.Type == unix.SO_RXQ_OVFL && l >= unix.CmsgLen(4):
			io.drops = binary.NativeEndian.Uint32(b[unix.CmsgLen(0):])
		case c.Type == unix.SCM_TIMESTAMPNS && l >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))):
			var ts unix.Timespec // copied: the control bytes need not be aligned
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)), b[unix.CmsgLen(0):])
			io.at[i] = ts.Nano()
		}
		b = b[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(b)):]
	}
}

// sockaddrAddrPort is the address and port of a sockaddr_in or sockaddr_in6.
func sockaddrAddrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		p := (*[2]byte)(unsafe.Pointer(&s4.Port))
		return netip.AddrPortFrom(netip.AddrFrom4(s4.Addr), uint16(p[0])<<8|uint16(p[1]))
	case unix.AF_INET6:
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), uint16(p[0])<<8|uint16(p[1]))
	}
	return netip.AddrPort{}
}

// setSockaddr fills sa with a (an IPv4 address as sockaddr_in) and
// returns its length; scope is the interface index for a link-local
// address.
func setSockaddr(sa *unix.RawSockaddrInet6, a netip.AddrPort, scope uint32) uint32 {
	port := a.Port()
	if a.Addr().Is4() {
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*s4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: a.Addr().As4()}
		p := (*[2]byte)(unsafe.Pointer(&s4.Port))
		p[0], p[1] = byte(port>>8), byte(port)
		return unix.SizeofSockaddrInet4
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: a.Addr().As16(), Scope_id: scope}
	p := (*[2]byte)(unsafe.Pointer(&sa.Port))
	p[0], p[1] = byte(port>>8), byte(port)
	return unix.SizeofSockaddrInet6
}

// send sends the datagrams msgs[i] to to[i] (at most udpBatch), one
// datagram each, waiting while the socket's send buffer is full. It
// returns how many went before the first that failed, and why that one
// failed (nil when all went).
func (io *udpIO) send(msgs [][]byte, to []netip.AddrPort, scope uint32) (int, error) {
	for i := range msgs {
		io.siov[i].Base = unsafe.SliceData(msgs[i])
		io.siov[i].SetLen(len(msgs[i]))
		h := &io.shdr[i].Hdr
		h.Iov = &io.siov[i]
		h.SetIovlen(1)
		h.Name = (*byte)(unsafe.Pointer(&io.sname[i]))
		h.Namelen = setSockaddr(&io.sname[i], to[i], scope)
	}
	io.sk = len(msgs)
	if err := io.raw.Write(io.sendFn); err != nil {
		return 0, err
	}
	return io.sn, io.serr
}

// sendmmsg sends the sk messages prepared; it reports false (wait for
// room) only on EAGAIN.
func (io *udpIO) sendmmsg(fd uintptr) bool {
	for {
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&io.shdr[0])), uintptr(io.sk), 0, 0, 0)
		switch e {
		case 0:
			io.sn, io.serr = int(r), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			io.sn, io.serr = 0, e
			return true
		}
	}
}
