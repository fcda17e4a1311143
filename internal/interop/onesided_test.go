package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// pair is a kernel node and a simulator node, connected.
type pair struct {
	kernel, sim       side
	kernelEnd, simEnd endpoint
	fam               family
}

// connectPair opens both sides over family fam and connects their QPs;
// the kernel's with retry count retry and timeout (4.096 µs × 2^timeout).
func (w *labWire) connectPair(t *testing.T, fam family, retry, timeout uint8) *pair {
	t.Helper()
	p := &pair{kernel: local{&node{}}, sim: w.startRemote(t), fam: fam}
	p.kernelEnd = p.kernel.call(t, request{Op: "open", Dev: w.dev, GIDIndex: fam.kernelGID}).End
	p.simEnd = p.sim.call(t, request{Op: "open", Addr: fam.simAddr.String(), GIDIndex: 1}).End
	p.kernel.call(t, request{Op: "connect", Peer: p.simEnd, GIDIndex: fam.kernelGID, Retry: retry, Timeout: timeout})
	p.sim.call(t, request{Op: "connect", Peer: p.kernelEnd, GIDIndex: 1, Retry: 7, Timeout: 14})
	return p
}

// TestOneSided sends WRITE, WRITE_WITH_IMM, READ, compare-and-swap and
// fetch-and-add from each side to the other, kernel rxe1 and the
// simulator, over IPv6 and IPv4, and checks the bytes on both.
func TestOneSided(t *testing.T) {
	w := needWire(t)
	passed, n := 0, 0
	for _, fam := range w.families() {
		p := w.connectPair(t, fam, 7, 14)
		for _, dir := range []struct {
			name                string
			actor, target       side
			actorEnd, targetEnd endpoint
		}{
			{"kernel→sim", p.kernel, p.sim, p.kernelEnd, p.simEnd},
			{"sim→kernel", p.sim, p.kernel, p.simEnd, p.kernelEnd},
		} {
			n++
			ok := t.Run(fam.name+"/"+dir.name, func(t *testing.T) {
				a, b := dir.actor, dir.target
				post := func(wr wrSpec) wcOut {
					t.Helper()
					rep := a.call(t, request{Op: "post", Peer: dir.targetEnd, WR: wr})
					if w := rep.WCs[0]; w.Status != verbs.WCSuccess {
						t.Fatalf("%v: %v", wr.Opcode, w.Status)
					}
					return rep.WCs[0]
				}
				same := func(what string, off, n, remoteOff int) {
					t.Helper()
					x := a.call(t, request{Op: "read", Off: off, Len: n}).Bytes
					y := b.call(t, request{Op: "read", Off: remoteOff, Len: n}).Bytes
					if !bytes.Equal(x, y) {
						t.Fatalf("%s: the %d bytes differ (first: % x vs % x)", what, n, x[:8], y[:8])
					}
				}
				// WRITE of 9000 bytes: nine packets at MTU 1024.
				a.call(t, request{Op: "pattern", Off: 0, Len: 9000, Seed: 1})
				b.call(t, request{Op: "pattern", Off: 0, Len: 9000, Seed: 99})
				post(wrSpec{Opcode: verbs.WRRDMAWrite, Off: 0, Len: 9000, RemoteOff: 0})
				same("RDMA WRITE", 0, 9000, 0)
				// WRITE_WITH_IMM consumes a receive and tells the target.
				b.call(t, request{Op: "post_recv", Off: 60000, Len: 16})
				a.call(t, request{Op: "pattern", Off: 10000, Len: 300, Seed: 2})
				post(wrSpec{Opcode: verbs.WRRDMAWriteWithImm, Off: 10000, Len: 300, RemoteOff: 12000, Imm: 0x1234abcd})
				wc := b.call(t, request{Op: "poll", Len: 1}).WCs[0]
				if wc.Status != verbs.WCSuccess || wc.Opcode != verbs.WCOpRecvRDMAWithImm || !wc.WithImm || wc.Imm != 0x1234abcd || wc.ByteLen != 300 {
					t.Fatalf("the target's completion of WRITE_WITH_IMM: %+v", wc)
				}
				same("RDMA WRITE_WITH_IMM", 10000, 300, 12000)
				// READ of 6000 bytes: six response packets.
				b.call(t, request{Op: "pattern", Off: 20000, Len: 6000, Seed: 3})
				post(wrSpec{Opcode: verbs.WRRDMARead, Off: 30000, Len: 6000, RemoteOff: 20000})
				same("RDMA READ", 30000, 6000, 20000)
				// Atomics on an 8-byte word of the target.
				b.call(t, request{Op: "put64", Off: 40000, Value: 0x1111})
				post(wrSpec{Opcode: verbs.WRAtomicCmpAndSwp, Off: 40008, Len: 8, RemoteOff: 40000, Compare: 0x1111, Swap: 0x2222})
				post(wrSpec{Opcode: verbs.WRAtomicFetchAndAdd, Off: 40016, Len: 8, RemoteOff: 40000, Compare: 5})
				post(wrSpec{Opcode: verbs.WRAtomicCmpAndSwp, Off: 40024, Len: 8, RemoteOff: 40000, Compare: 0x9999, Swap: 1})
				got := a.call(t, request{Op: "read", Off: 40008, Len: 24}).Bytes
				word := b.call(t, request{Op: "read", Off: 40000, Len: 8}).Bytes
				orig := []uint64{binary.LittleEndian.Uint64(got), binary.LittleEndian.Uint64(got[8:]), binary.LittleEndian.Uint64(got[16:])}
				if orig[0] != 0x1111 || orig[1] != 0x2222 || orig[2] != 0x2227 || binary.LittleEndian.Uint64(word) != 0x2227 {
					t.Fatalf("atomics: originals %#x, word now %#x; want 0x1111 0x2222 0x2227 and 0x2227 (the failed compare leaves it)",
						orig, binary.LittleEndian.Uint64(word))
				}
			})
			if ok {
				passed++
			}
		}
		// Every packet of the kernel's passed the ICRC check; over IPv4,
		// with the identification rxe hashed into it.
		st := p.sim.call(t, request{Op: "stats"}).Stats
		t.Logf("%s: the simulator's UDP link: %+v", fam.name, st)
		if st.BadICRC != 0 || st.Malformed != 0 || st.Refused != 0 {
			t.Errorf("%s: the simulator dropped packets of the kernel's: %+v", fam.name, st)
		}
		if v4 := fam.simAddr.Is4(); v4 != (st.IPv4IDs > 0) {
			t.Errorf("%s: %d packets checked with a recovered IPv4 identification", fam.name, st.IPv4IDs)
		}
	}
	fmt.Printf("RXE↔SIM one-sided and atomics: %d of %d directions passed\n", passed, n)
}

// TestSimGIDTable checks the simulator's GID table on the veth: index 0 is
// the default GID, the link-local address the kernel gave the interface
// (EUI-64 of its MAC, as ib_core's make_default_gid), index 1 the GID of
// its address, for each IP version.
func TestSimGIDTable(t *testing.T) {
	w := needWire(t)
	ll := linkLocal(t, "rxeveth1")
	for _, fam := range w.families() {
		s := w.startRemote(t)
		s.call(t, request{Op: "open", Addr: fam.simAddr.String(), GIDIndex: 1})
		g0 := netip.AddrFrom16(s.call(t, request{Op: "gid", GIDIndex: 0}).End.GID)
		g1 := netip.AddrFrom16(s.call(t, request{Op: "gid", GIDIndex: 1}).End.GID).Unmap()
		if g0 != ll || g1 != fam.simAddr {
			t.Errorf("%s: GID 0 %v, GID 1 %v; want %v (rxeveth1's link-local) and %v", fam.name, g0, g1, ll, fam.simAddr)
		}
	}
}
