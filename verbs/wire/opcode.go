package wire

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/internal/number"
)

// Transport is the service type in bits 7:5 of a BTH opcode.
//
// Reference: include/rdma/ib_pack.h (IB_OPCODE_RC = 0x00, UC = 0x20, RD = 0x40,
// UD = 0x60, CNP = 0x80). Mainline ib_pack.h has no XRC opcodes (only
// IB_EXT_XRC_BYTES); XRC = 0xa0 is the value of the IBA spec, of Wireshark's
// packet-infiniband.c and of the IB_OPCODE_XRC that rxe's unmerged XRC
// patches add.
type Transport uint8

// The transports. vsh carries RC, UC, UD and XRC; rxe carries RC, UC and UD
// and does not implement XRC, so vsh's simulator carries XRC only when its
// XRC capability is on. RD and CNP are only named so that a foreign packet
// can be described.
const (
	RC  Transport = 0 // Reliable Connection
	UC  Transport = 1 // Unreliable Connection
	RD  Transport = 2 // Reliable Datagram (not implemented by rxe)
	UD  Transport = 3 // Unreliable Datagram
	CNP Transport = 4 // Congestion Notification Packet (never sent by rxe)
	XRC Transport = 5 // Extended Reliable Connection (not implemented by rxe)
)

var transportNames = [8]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "RSVD6", "RSVD7"}

// String returns the transport's short name: RC, UC, RD, UD, CNP or XRC.
func (t Transport) String() string { return transportNames[t&7] }

// LongName returns the transport's spelled-out name, as Wireshark shows it.
func (t Transport) LongName() string {
	switch t {
	case RC:
		return "Reliable Connection"
	case UC:
		return "Unreliable Connection"
	case RD:
		return "Reliable Datagram"
	case UD:
		return "Unreliable Datagram"
	case CNP:
		return "Congestion Notification"
	case XRC:
		return "Extended Reliable Connection"
	}
	return "Reserved"
}

// Opcode is the BTH opcode: the transport in bits 7:5 and the operation in
// bits 4:0.
type Opcode uint8

// The opcodes vsh carries: every RC, UC and UD opcode that rxe's opcode table
// (rxe_opcode.c) implements. The values are those of include/rdma/ib_pack.h.
// The XRC opcodes, which rxe does not implement, follow in their own block.
const (
	RCSendFirst              Opcode = 0x00
	RCSendMiddle             Opcode = 0x01
	RCSendLast               Opcode = 0x02
	RCSendLastImm            Opcode = 0x03
	RCSendOnly               Opcode = 0x04
	RCSendOnlyImm            Opcode = 0x05
	RCRDMAWriteFirst         Opcode = 0x06
	RCRDMAWriteMiddle        Opcode = 0x07
	RCRDMAWriteLast          Opcode = 0x08
	RCRDMAWriteLastImm       Opcode = 0x09
	RCRDMAWriteOnly          Opcode = 0x0a
	RCRDMAWriteOnlyImm       Opcode = 0x0b
	RCRDMAReadRequest        Opcode = 0x0c
	RCRDMAReadResponseFirst  Opcode = 0x0d
	RCRDMAReadResponseMiddle Opcode = 0x0e
	RCRDMAReadResponseLast   Opcode = 0x0f
	RCRDMAReadResponseOnly   Opcode = 0x10
	RCAcknowledge            Opcode = 0x11
	RCAtomicAcknowledge      Opcode = 0x12
	RCCompareSwap            Opcode = 0x13
	RCFetchAdd               Opcode = 0x14
	RCSendLastInvalidate     Opcode = 0x16
	RCSendOnlyInvalidate     Opcode = 0x17
	UCSendFirst              Opcode = 0x20
	UCSendMiddle             Opcode = 0x21
	UCSendLast               Opcode = 0x22
	UCSendLastImm            Opcode = 0x23
	UCSendOnly               Opcode = 0x24
	UCSendOnlyImm            Opcode = 0x25
	UCRDMAWriteFirst         Opcode = 0x26
	UCRDMAWriteMiddle        Opcode = 0x27
	UCRDMAWriteLast          Opcode = 0x28
	UCRDMAWriteLastImm       Opcode = 0x29
	UCRDMAWriteOnly          Opcode = 0x2a
	UCRDMAWriteOnlyImm       Opcode = 0x2b
	UDSendOnly               Opcode = 0x64
	UDSendOnlyImm            Opcode = 0x65
	opCNP                    Opcode = 0x81 // Mellanox CNP; rxe never sends one
	opMaskOperation          Opcode = 0x1f
)

// The XRC opcodes, which vsh carries and rxe does not: the RC operations
// under transport XRC (0xa0 | operation), the 23 that Wireshark's
// packet-infiniband.c names (0xa0-0xb4, 0xb6, 0xb7; no FLUSH or
// ATOMIC_WRITE). Each has its RC counterpart's headers and flags, plus an
// XRCETH on the requests.
const (
	XRCSendFirst              Opcode = 0xa0
	XRCSendMiddle             Opcode = 0xa1
	XRCSendLast               Opcode = 0xa2
	XRCSendLastImm            Opcode = 0xa3
	XRCSendOnly               Opcode = 0xa4
	XRCSendOnlyImm            Opcode = 0xa5
	XRCRDMAWriteFirst         Opcode = 0xa6
	XRCRDMAWriteMiddle        Opcode = 0xa7
	XRCRDMAWriteLast          Opcode = 0xa8
	XRCRDMAWriteLastImm       Opcode = 0xa9
	XRCRDMAWriteOnly          Opcode = 0xaa
	XRCRDMAWriteOnlyImm       Opcode = 0xab
	XRCRDMAReadRequest        Opcode = 0xac
	XRCRDMAReadResponseFirst  Opcode = 0xad
	XRCRDMAReadResponseMiddle Opcode = 0xae
	XRCRDMAReadResponseLast   Opcode = 0xaf
	XRCRDMAReadResponseOnly   Opcode = 0xb0
	XRCAcknowledge            Opcode = 0xb1
	XRCAtomicAcknowledge      Opcode = 0xb2
	XRCCompareSwap            Opcode = 0xb3
	XRCFetchAdd               Opcode = 0xb4
	XRCSendLastInvalidate     Opcode = 0xb6
	XRCSendOnlyInvalidate     Opcode = 0xb7
)

// Headers is a set of extension headers, the ones that may follow the BTH.
type Headers uint16

// The extension headers. On the wire they follow the BTH in the order
// RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH,
// which is the order of every opcode in rxe_opcode.c (for example RDMA WRITE
// ONLY with immediate: RETH then ImmDt; UD SEND ONLY with immediate: DETH
// then ImmDt; ATOMIC ACKNOWLEDGE: AETH then AtomicAckETH) and puts the
// XRCETH of an XRC request directly after the BTH (XRC RDMA WRITE ONLY:
// XRCETH then RETH). The bit values follow the order the headers were added
// in, not the wire order, so that existing values never change.
const (
	HasRDETH        Headers = 1 << iota // Reliable Datagram ETH, 4 bytes (RD only; never carried)
	HasDETH                             // Datagram ETH, 8 bytes
	HasRETH                             // RDMA ETH, 16 bytes
	HasAtomicETH                        // Atomic ETH, 28 bytes
	HasAETH                             // ACK ETH, 4 bytes
	HasAtomicAckETH                     // Atomic ACK ETH, 8 bytes
	HasImmDt                            // Immediate data, 4 bytes
	HasIETH                             // Invalidate ETH, 4 bytes
	HasXRCETH                           // XRC ETH, 4 bytes (XRC requests only)
	numHeaders      = iota
)

// headerOrder is the wire order of the extension headers with their sizes.
var headerOrder = [numHeaders]struct {
	h    Headers
	size int
	name string
}{
	{HasRDETH, RDETHLen, "RDETH"},
	{HasDETH, DETHLen, "DETH"},
	{HasXRCETH, XRCETHLen, "XRCETH"},
	{HasRETH, RETHLen, "RETH"},
	{HasAtomicETH, AtomicETHLen, "AtomicETH"},
	{HasAETH, AETHLen, "AETH"},
	{HasAtomicAckETH, AtomicAckETHLen, "AtomicAckETH"},
	{HasImmDt, ImmDtLen, "ImmDt"},
	{HasIETH, IETHLen, "IETH"},
}

// String lists the headers in wire order, joined by "+", or "none".
func (h Headers) String() string {
	if h == 0 {
		return "none"
	}
	var b strings.Builder
	for _, e := range headerOrder {
		if h&e.h != 0 {
			if b.Len() > 0 {
				b.WriteByte('+')
			}
			b.WriteString(e.name)
		}
	}
	return b.String()
}

// Flags describe what an opcode means to the transport. They mirror the
// RXE_*_MASK bits of rxe_opcode.h that are not about headers.
type Flags uint16

// The opcode flags.
const (
	FlagPayload  Flags = 1 << iota // may carry payload (RXE_PAYLOAD_MASK)
	FlagRequest                    // a request, handled by the responder (RXE_REQ_MASK)
	FlagResponse                   // a response, handled by the completer (RXE_ACK_MASK)
	FlagSend                       // part of a SEND (RXE_SEND_MASK)
	FlagWrite                      // part of an RDMA WRITE (RXE_WRITE_MASK)
	FlagRead                       // an RDMA READ request (RXE_READ_MASK)
	FlagAtomic                     // an atomic request (RXE_ATOMIC_MASK)
	FlagRWR                        // consumes a receive WQE (RXE_RWR_MASK)
	FlagComp                       // completes a receive WQE (RXE_COMP_MASK)
	FlagStart                      // first packet of a message (RXE_START_MASK)
	FlagMiddle                     // middle packet of a message (RXE_MIDDLE_MASK)
	FlagEnd                        // last packet of a message (RXE_END_MASK)
)

type opInfo struct {
	name    string // operation name without the transport, e.g. SEND_FIRST
	valid   bool   // carried by vsh (and, except XRC, by rxe)
	headers Headers
	flags   Flags
	hdrLen  int              // BTH plus extension headers
	offset  [numHeaders]int8 // offset of each extension header from the BTH start, -1 if absent
}

// opNames are the operation names (bits 4:0) as ib_pack.h spells them after
// IB_OPCODE_, shared by RC, UC, RD, UD and XRC.
var opNames = [32]string{
	0x00: "SEND_FIRST",
	0x01: "SEND_MIDDLE",
	0x02: "SEND_LAST",
	0x03: "SEND_LAST_WITH_IMMEDIATE",
	0x04: "SEND_ONLY",
	0x05: "SEND_ONLY_WITH_IMMEDIATE",
	0x06: "RDMA_WRITE_FIRST",
	0x07: "RDMA_WRITE_MIDDLE",
	0x08: "RDMA_WRITE_LAST",
	0x09: "RDMA_WRITE_LAST_WITH_IMMEDIATE",
	0x0a: "RDMA_WRITE_ONLY",
	0x0b: "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	0x0c: "RDMA_READ_REQUEST",
	0x0d: "RDMA_READ_RESPONSE_FIRST",
	0x0e: "RDMA_READ_RESPONSE_MIDDLE",
	0x0f: "RDMA_READ_RESPONSE_LAST",
	0x10: "RDMA_READ_RESPONSE_ONLY",
	0x11: "ACKNOWLEDGE",
	0x12: "ATOMIC_ACKNOWLEDGE",
	0x13: "COMPARE_SWAP",
	0x14: "FETCH_ADD",
	0x15: "RESYNC",
	0x16: "SEND_LAST_WITH_INVALIDATE",
	0x17: "SEND_ONLY_WITH_INVALIDATE",
	0x1c: "FLUSH",
	0x1d: "ATOMIC_WRITE",
}

// opTable is indexed by the full opcode byte.
var opTable = buildOpTable()

func buildOpTable() *[256]opInfo {
	var t [256]opInfo
	const (
		req  = FlagRequest
		resp = FlagResponse
		pay  = FlagPayload
		send = FlagSend | FlagRequest | FlagPayload
		wr   = FlagWrite | FlagRequest | FlagPayload
		only = FlagStart | FlagEnd
	)
	// The operations shared by RC and UC (rxe_opcode.c gives UC the same
	// headers and masks as RC for these twelve).
	common := []struct {
		op    Opcode
		hdrs  Headers
		flags Flags
	}{
		{0x00, 0, send | FlagRWR | FlagStart},
		{0x01, 0, send | FlagMiddle},
		{0x02, 0, send | FlagComp | FlagEnd},
		{0x03, HasImmDt, send | FlagComp | FlagEnd},
		{0x04, 0, send | FlagRWR | FlagComp | only},
		{0x05, HasImmDt, send | FlagRWR | FlagComp | only},
		{0x06, HasRETH, wr | FlagStart},
		{0x07, 0, wr | FlagMiddle},
		{0x08, 0, wr | FlagEnd},
		{0x09, HasImmDt, wr | FlagRWR | FlagComp | FlagEnd},
		{0x0a, HasRETH, wr | only},
		{0x0b, HasRETH | HasImmDt, wr | FlagRWR | FlagComp | only},
	}
	rcOnly := []struct {
		op    Opcode
		hdrs  Headers
		flags Flags
	}{
		{0x0c, HasRETH, req | FlagRead | only},
		{0x0d, HasAETH, resp | pay | FlagStart},
		{0x0e, 0, resp | pay | FlagMiddle},
		{0x0f, HasAETH, resp | pay | FlagEnd},
		{0x10, HasAETH, resp | pay | only},
		{0x11, HasAETH, resp | only},
		{0x12, HasAETH | HasAtomicAckETH, resp | only},
		{0x13, HasAtomicETH, req | FlagAtomic | only},
		{0x14, HasAtomicETH, req | FlagAtomic | only},
		{0x16, HasIETH, send | FlagComp | FlagEnd},
		{0x17, HasIETH, send | FlagRWR | FlagComp | only},
	}
	set := func(op Opcode, h Headers, f Flags) {
		e := &t[op]
		e.valid = true
		e.headers = h
		e.flags = f
	}
	for _, c := range common {
		set(Opcode(RC)<<5|c.op, c.hdrs, c.flags)
		set(Opcode(UC)<<5|c.op, c.hdrs, c.flags)
	}
	for _, c := range rcOnly {
		set(Opcode(RC)<<5|c.op, c.hdrs, c.flags)
	}
	// XRC has every RC operation, with the same headers and flags, plus
	// an XRCETH on each request: the target's XRC SRQ. Responses come
	// from the XRC target QP and carry none.
	for _, cs := range [][]struct {
		op    Opcode
		hdrs  Headers
		flags Flags
	}{common, rcOnly} {
		for _, c := range cs {
			h := c.hdrs
			if c.flags&FlagRequest != 0 {
				h |= HasXRCETH
			}
			set(Opcode(XRC)<<5|c.op, h, c.flags)
		}
	}
	set(UDSendOnly, HasDETH, send|FlagRWR|FlagComp|only)
	set(UDSendOnlyImm, HasDETH|HasImmDt, send|FlagRWR|FlagComp|only)

	for i := range t {
		e := &t[i]
		if o := Opcode(i) & opMaskOperation; definedOps(Opcode(i).Transport(), o) {
			e.name = opNames[o]
		}
		off := BTHLen
		for k, ho := range headerOrder {
			e.offset[k] = -1
			if e.headers&ho.h != 0 {
				e.offset[k] = int8(off)
				off += ho.size
			}
		}
		e.hdrLen = off
	}
	return &t
}

// Transport returns the opcode's transport (bits 7:5).
func (op Opcode) Transport() Transport { return Transport(op >> 5) }

// Valid reports whether op is an opcode vsh carries: one of the RC, UC and UD
// opcodes rxe implements, or an XRC opcode, which vsh's simulator carries
// when its XRC capability is on and rxe never does. Decode rejects every
// other opcode.
func (op Opcode) Valid() bool { return opTable[op].valid }

// Name returns the operation name without the transport, as include/rdma/ib_pack.h
// spells it (SEND_FIRST, RDMA_WRITE_ONLY_WITH_IMMEDIATE, ACKNOWLEDGE, ...), or
// "OPCODE_0x1e" for a value that names no operation (see definedOps).
func (op Opcode) Name() string {
	if n := opTable[op].name; n != "" {
		return n
	}
	if op == opCNP || op == Opcode(CNP)<<5 {
		return "CNP"
	}
	return fmt.Sprintf("OPCODE_0x%02x", uint8(op))
}

// definedOps reports whether operation o exists for transport t: as
// ib_pack.h defines them, RC has 0x00-0x14, the two invalidates and the newer
// FLUSH and ATOMIC_WRITE; UC the SENDs and WRITEs; RD the RC set up to
// FETCH_ADD plus RESYNC; UD the two SEND ONLYs. XRC, which ib_pack.h leaves
// out, has the RC set without FLUSH and ATOMIC_WRITE, as Wireshark's
// packet-infiniband.c names it.
func definedOps(t Transport, o Opcode) bool {
	switch t {
	case RC:
		return o <= 0x14 || o == 0x16 || o == 0x17 || o == 0x1c || o == 0x1d
	case XRC:
		return o <= 0x14 || o == 0x16 || o == 0x17
	case UC:
		return o <= 0x0b
	case RD:
		return o <= 0x15
	case UD:
		return o == 0x04 || o == 0x05
	}
	return false
}

// String returns the transport and operation joined by an underscore, as the
// IB_OPCODE_ constants of ib_pack.h are spelled without their prefix:
// RC_SEND_FIRST, UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, UD_SEND_ONLY,
// XRC_SEND_ONLY.
func (op Opcode) String() string {
	if op.Transport() == CNP {
		return op.Name()
	}
	return op.Transport().String() + "_" + op.Name()
}

// Matches reports whether the opcode's full name ("RC SEND_ONLY", also
// spelt RC_SEND_ONLY) contains text, case-insensitively: how a fault rule's
// opcode= picks packets.
func (op Opcode) Matches(text string) bool {
	text = strings.ToUpper(strings.TrimSpace(text))
	return strings.Contains(op.Transport().String()+" "+op.Name(), text) || strings.Contains(op.String(), text)
}

// Headers returns the extension headers the opcode carries after its BTH.
func (op Opcode) Headers() Headers { return opTable[op].headers }

// Flags returns what the opcode means to the transport.
func (op Opcode) Flags() Flags { return opTable[op].flags }

// Has reports whether the opcode carries every header in h.
func (op Opcode) Has(h Headers) bool { return opTable[op].headers&h == h }

// HeaderLen returns the length of the BTH plus the opcode's extension headers
// (rxe_opcode[op].length). For an opcode that is not Valid it is BTHLen.
func (op Opcode) HeaderLen() int { return opTable[op].hdrLen }

// Offset returns the offset of extension header h (a single Has* value) from
// the start of the BTH, or -1 if the opcode does not carry it.
func (op Opcode) Offset(h Headers) int {
	for k, ho := range headerOrder {
		if ho.h == h {
			return int(opTable[op].offset[k])
		}
	}
	return -1
}

// HasPayload reports whether packets with this opcode may carry payload.
func (op Opcode) HasPayload() bool { return opTable[op].flags&FlagPayload != 0 }

// IsRequest reports whether the packet goes to the responder (RXE_REQ_MASK);
// otherwise it is a response for the completer.
func (op Opcode) IsRequest() bool { return opTable[op].flags&FlagRequest != 0 }

// IsResponse reports whether the packet is a response (ACK, ATOMIC ACK or a
// READ response), handled by the requester's completer.
func (op Opcode) IsResponse() bool { return opTable[op].flags&FlagResponse != 0 }

// ConsumesRecvWQE reports whether the packet takes a receive WQE from the
// receive queue or SRQ (RXE_RWR_MASK): the first packet of a SEND, and the
// packet of an RDMA WRITE with immediate that carries the ImmDt.
func (op Opcode) ConsumesRecvWQE() bool { return opTable[op].flags&FlagRWR != 0 }

// CompletesRecvWQE reports whether the packet completes the receive WQE
// (RXE_COMP_MASK): the last packet of a SEND, or a WRITE with immediate.
func (op Opcode) CompletesRecvWQE() bool { return opTable[op].flags&FlagComp != 0 }

// IsFirst reports whether the packet starts a message (FIRST or ONLY).
func (op Opcode) IsFirst() bool { return opTable[op].flags&FlagStart != 0 }

// IsMiddle reports whether the packet is a MIDDLE packet.
func (op Opcode) IsMiddle() bool { return opTable[op].flags&FlagMiddle != 0 }

// IsLast reports whether the packet ends a message (LAST or ONLY).
func (op Opcode) IsLast() bool { return opTable[op].flags&FlagEnd != 0 }

// Opcodes returns every opcode vsh carries, in numeric order (RC, UC, UD,
// then XRC). Only the XRC ones are not also carried by rxe.
func Opcodes() []Opcode {
	var ops []Opcode
	for i := range opTable {
		if opTable[i].valid {
			ops = append(ops, Opcode(i))
		}
	}
	return ops
}

// ParseOpcode parses an opcode the way a learner may type it: its String form
// (RC_SEND_FIRST), with a space instead of the underscore (rc send_first), in
// any case, or a number (0x04, 100). It accepts only opcodes vsh carries,
// XRC ones (xrc send_only, 0xa4) included.
func ParseOpcode(s string) (Opcode, error) {
	t := strings.TrimSpace(s)
	if v, err := number.Parse(t, 8); err == nil {
		op := Opcode(v)
		if !op.Valid() {
			return op, fmt.Errorf("%w: %#02x is %s, which vsh (like rxe) does not carry", ErrBadOpcode, v, op)
		}
		return op, nil
	}
	norm := strings.ToUpper(strings.Join(strings.Fields(strings.ReplaceAll(t, "-", "_")), "_"))
	norm = strings.TrimPrefix(norm, "IB_OPCODE_")
	for i := range opTable {
		op := Opcode(i)
		if opTable[i].valid && op.String() == norm {
			return op, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown opcode %q (want e.g. RC_SEND_FIRST, uc rdma_write_only, 0x64)", ErrBadOpcode, s)
}
