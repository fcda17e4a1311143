//go:build linux

package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// TestUDPLinkWireICRC reads the link's IPv4 datagrams as the kernel puts
// them on the wire, IP header included (a raw socket, CAP_NET_RAW), and
// checks that the ICRC each carries is right over that real header: the
// unconnected socket with DF gets identification 0, as the link assumes
// when it computes the ICRC, so a peer that checks ICRCs (kernel rxe)
// accepts its packets. The resolved AV's hop limit is the TTL on the wire.
func TestUDPLinkWireICRC(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_UDP)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		toolcheck.Missing(t, "a raw socket needs CAP_NET_RAW: run the test as root to see the link's real IPv4 headers")
	}
	if err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	raw := os.NewFile(uintptr(fd), "raw-udp")
	defer raw.Close()

	fa, fb := newUDPFabric(t), newUDPFabric(t)
	ea, eb := udpEnv(t, fa), udpEnv(t, fb)
	qa, qb := ea.qp(verbs.QPTypeRC, verbs.QPCap{}), eb.qp(verbs.QPTypeRC, verbs.QPCap{})
	connectRC(t, ea, eb, qa, qb, verbs.MTU1024)
	mb, err := eb.pd.AllocMR(8192, verbs.AccessLocalWrite)
	mustT(t, err)
	ma, err := ea.pd.AllocMR(8192, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = qb.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 8192, LKey: mb.LKey()}}}})
	mustT(t, err)
	_, err = qa.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled,
		SGList: []verbs.SGE{{Addr: ma.Addr(), Length: 3000, LKey: ma.LKey()}}}})
	mustT(t, err)
	waitWC(t, ea, 1)
	waitWC(t, eb, 1)

	a, b := fa.UDPAddr().Addr().As4(), fb.UDPAddr().Addr().As4()
	buf := make([]byte, 1<<16)
	checked := 0
	_ = raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	for checked < 4 { // three SEND packets and the ACK at least
		n, err := raw.Read(buf)
		if err != nil {
			t.Fatalf("after %d datagrams: %v", checked, err)
		}
		ip := buf[:n]
		if n < 28 || binary.BigEndian.Uint16(ip[22:]) != wire.UDPPort ||
			!(bytes.Equal(ip[12:16], a[:]) && bytes.Equal(ip[16:20], b[:]) || bytes.Equal(ip[12:16], b[:]) && bytes.Equal(ip[16:20], a[:])) {
			continue // other traffic on the host
		}
		computed, carried, err := wire.PacketICRC(ip)
		if err != nil || computed != carried {
			t.Errorf("datagram % x...: ICRC carried %#08x, computed over the real header %#08x (%v)", ip[:28], carried, computed, err)
		}
		if id, df := binary.BigEndian.Uint16(ip[4:]), ip[6]&0x40 != 0; id != 0 || !df {
			t.Errorf("IPv4 identification %#04x, DF %v; the link sends ID 0 with DF", id, df)
		}
		// connectRC asks for hop limit 1; resolving the AV, the kernel
		// replaces it with the route's, 64 (ib_resolve_unicast_gid_dmac).
		if ip[8] != 64 {
			t.Errorf("TTL %d, want the resolved AV's hop limit 64", ip[8])
		}
		checked++
	}
}

// TestUDPLinkIPv4ID sends the link UD datagrams as kernel rxe does, with a
// hashed IPv4 identification (a raw socket, IP_HDRINCL), which its UDP
// socket cannot see: the link checks the ICRC with the ID it implies,
// delivers the message with that header in the GRH, and counts it; a
// datagram with a bit flipped is still dropped for its ICRC.
func TestUDPLinkIPv4ID(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_RAW)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		toolcheck.Missing(t, "a raw socket needs CAP_NET_RAW: run the test as root to send datagrams with rxe's IPv4 identification")
	}
	if err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	defer syscall.Close(fd)

	fb := newUDPFabric(t)
	eb := udpEnv(t, fb)
	ub := eb.qp(verbs.QPTypeUD, verbs.QPCap{})
	mustT(t, ub.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey))
	mustT(t, ub.Modify(&verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState))
	mb, err := eb.pd.AllocMR(4096, verbs.AccessLocalWrite)
	mustT(t, err)
	_, err = ub.PostRecv([]verbs.RecvWR{
		{WRID: 1, SGList: []verbs.SGE{{Addr: mb.Addr(), Length: 2048, LKey: mb.LKey()}}},
		{WRID: 2, SGList: []verbs.SGE{{Addr: mb.Addr() + 2048, Length: 2048, LKey: mb.LKey()}}}})
	mustT(t, err)

	dst := fb.UDPAddr().Addr()
	send := func(id uint16, flip bool) {
		t.Helper()
		p := wire.Packet{BTH: wire.BTHFields{Opcode: wire.UDSendOnly, PKey: wire.DefaultPKey, DestQP: ub.Num(), PSN: 7},
			DETH: wire.DETHFields{QKey: 0x11111111, SrcQP: 0x99}, Payload: []byte("hello from rxe")}
		n := wire.Network{Src: netip.MustParseAddr("127.0.0.77"), Dst: dst, SrcPort: wire.SourcePort(0x99), FixedID: true, ID: id}
		b, err := p.AppendIP(nil, &n)
		mustT(t, err)
		if flip {
			b[len(b)-10] ^= 0x04
		}
		to := &syscall.SockaddrInet4{Addr: dst.As4()}
		if err := syscall.Sendto(fd, b, 0, to); err != nil {
			t.Fatalf("sendto: %v", err)
		}
	}
	send(0xb7e1, true) // dropped: bad ICRC
	send(0xb7e1, false)
	wc := waitWC(t, eb, 1)
	if wc[0].Status != verbs.WCSuccess || wc[0].WRID != 1 || wc[0].ByteLen != 40+14 {
		t.Fatalf("completion %+v, want WR 1 with 54 bytes", wc[0])
	}
	g := mb.Bytes()[:40]
	if id := binary.BigEndian.Uint16(g[20+4:]); id != 0xb7e1 {
		t.Errorf("the GRH's IPv4 header has ID %#04x, want the sender's 0xb7e1", id)
	}
	if string(mb.Bytes()[40:54]) != "hello from rxe" {
		t.Errorf("payload %q", mb.Bytes()[40:54])
	}
	if st := fb.UDPStats(); st.IPv4IDs != 1 {
		t.Errorf("UDPStats().IPv4IDs = %d, want 1", st.IPv4IDs)
	}
	time.Sleep(50 * time.Millisecond)
	if more := eb.poll(); len(more) != 0 {
		t.Errorf("the corrupted datagram completed: %+v", more)
	}
}
