package wire

import "encoding/binary"

// Header sizes in bytes (rxe_hdr.h, include/rdma/ib_pack.h).
const (
	BTHLen          = 12 // Base Transport Header
	RDETHLen        = 4  // Reliable Datagram ETH (RD only; never carried)
	DETHLen         = 8  // Datagram ETH
	RETHLen         = 16 // RDMA ETH
	AtomicETHLen    = 28 // Atomic ETH
	AETHLen         = 4  // ACK ETH
	AtomicAckETHLen = 8  // Atomic ACK ETH
	ImmDtLen        = 4  // Immediate data
	IETHLen         = 4  // Invalidate ETH
	XRCETHLen       = 4  // XRC ETH (ib_pack.h IB_EXT_XRC_BYTES)
	ICRCLen         = 4  // Invariant CRC
	// MaxHeaderLen is rxe's bound on BTH plus extension headers
	// (RXE_MAX_HDR_LENGTH); a RoCEv2 MTU is the link MTU minus this.
	MaxHeaderLen = 80
)

// Fixed values rxe puts on the wire.
const (
	// DefaultPKey is the partition key rxe always sends (IB_DEFAULT_PKEY_FULL).
	DefaultPKey = 0xffff
	// GSIQKey is the Q_Key of QP1, the general services QP (rxe_hdr.h GSI_QKEY).
	GSIQKey = 0x80010000
	// MulticastQPN is the destination QPN of multicast packets (IB_MULTICAST_QPN).
	MulticastQPN = 0xffffff
	// QPNMask keeps the 24 bits of a queue pair number.
	QPNMask = 0xffffff
)

// Views. Each header type is a byte slice laid over the wire bytes, in the
// manner of gVisor's pkg/tcpip/header: getters read and setters write the
// underlying bytes in place, big-endian. A view must be at least as long as
// its header (BTHLen, RETHLen, ...); as with slice indexing, the methods
// panic on a shorter one. Decode checks lengths before it makes a view, so
// it never panics.

// BTH is a view of the 12-byte Base Transport Header.
//
//	byte 0     OpCode
//	byte 1     SE(7) MigReq(6) PadCnt(5:4) TVer(3:0)
//	bytes 2-3  P_Key
//	byte 4     FECN(7) BECN(6) resv6(5:0)   ("resv8a": masked out of the ICRC)
//	bytes 5-7  DestQP
//	byte 8     AckReq(7) resv7(6:0)
//	bytes 9-11 PSN
//
// Reference: rxe_hdr.h struct rxe_bth and the BTH_*_MASK values.
type BTH []byte

// BTHFields holds the BTH's fields, for BTH.Encode and Packet.
type BTHFields struct {
	Opcode   Opcode
	SE       bool   // solicited event
	MigReq   bool   // path migration state
	PadCount uint8  // 0..3 pad bytes after the payload
	TVer     uint8  // transport header version; must be 0
	PKey     uint16 // partition key; rxe sends DefaultPKey
	FECN     bool
	BECN     bool
	DestQP   uint32 // 24 bits
	AckReq   bool
	PSN      PSN // 24 bits
}

// Opcode returns the opcode.
func (b BTH) Opcode() Opcode { return Opcode(b[0]) }

// SetOpcode sets the opcode.
func (b BTH) SetOpcode(op Opcode) { b[0] = byte(op) }

// SE returns the solicited event bit.
func (b BTH) SE() bool { return b[1]&0x80 != 0 }

// SetSE sets the solicited event bit.
func (b BTH) SetSE(v bool) { b[1] = setBit(b[1], 0x80, v) }

// MigReq returns the migration request bit.
func (b BTH) MigReq() bool { return b[1]&0x40 != 0 }

// SetMigReq sets the migration request bit.
func (b BTH) SetMigReq(v bool) { b[1] = setBit(b[1], 0x40, v) }

// PadCount returns the number of pad bytes (0..3) between payload and ICRC.
func (b BTH) PadCount() int { return int(b[1]>>4) & 3 }

// SetPadCount sets the pad count (only the low two bits of n are kept).
func (b BTH) SetPadCount(n int) { b[1] = b[1]&^0x30 | byte(n&3)<<4 }

// TVer returns the transport header version; rxe drops packets where it is
// not 0.
func (b BTH) TVer() uint8 { return b[1] & 0x0f }

// SetTVer sets the transport header version (low four bits of v).
func (b BTH) SetTVer(v uint8) { b[1] = b[1]&^0x0f | v&0x0f }

// PKey returns the partition key.
func (b BTH) PKey() uint16 { return binary.BigEndian.Uint16(b[2:]) }

// SetPKey sets the partition key.
func (b BTH) SetPKey(v uint16) { binary.BigEndian.PutUint16(b[2:], v) }

// FECN returns the forward explicit congestion notification bit.
func (b BTH) FECN() bool { return b[4]&0x80 != 0 }

// SetFECN sets the FECN bit.
func (b BTH) SetFECN(v bool) { b[4] = setBit(b[4], 0x80, v) }

// BECN returns the backward explicit congestion notification bit.
func (b BTH) BECN() bool { return b[4]&0x40 != 0 }

// SetBECN sets the BECN bit.
func (b BTH) SetBECN(v bool) { b[4] = setBit(b[4], 0x40, v) }

// DestQP returns the 24-bit destination queue pair number.
func (b BTH) DestQP() uint32 { return get24(b[5:]) }

// SetDestQP sets the destination QPN (low 24 bits of qpn).
func (b BTH) SetDestQP(qpn uint32) { put24(b[5:], qpn) }

// AckReq returns the acknowledge request bit.
func (b BTH) AckReq() bool { return b[8]&0x80 != 0 }

// SetAckReq sets the acknowledge request bit.
func (b BTH) SetAckReq(v bool) { b[8] = setBit(b[8], 0x80, v) }

// PSN returns the 24-bit packet sequence number.
func (b BTH) PSN() PSN { return PSN(get24(b[9:])) }

// SetPSN sets the PSN (low 24 bits of p).
func (b BTH) SetPSN(p PSN) { put24(b[9:], uint32(p)) }

// Encode writes every field of f, with the reserved bits zero, as rxe's
// bth_init does.
func (b BTH) Encode(f *BTHFields) {
	b[0] = byte(f.Opcode)
	b[1] = bit(f.SE, 0x80) | bit(f.MigReq, 0x40) | (f.PadCount&3)<<4 | f.TVer&0x0f
	binary.BigEndian.PutUint16(b[2:], f.PKey)
	b[4] = bit(f.FECN, 0x80) | bit(f.BECN, 0x40)
	put24(b[5:], f.DestQP)
	b[8] = bit(f.AckReq, 0x80)
	put24(b[9:], uint32(f.PSN))
}

// Fields returns the decoded fields.
func (b BTH) Fields() BTHFields {
	_ = b[BTHLen-1]
	return BTHFields{
		Opcode:   b.Opcode(),
		SE:       b.SE(),
		MigReq:   b.MigReq(),
		PadCount: uint8(b.PadCount()),
		TVer:     b.TVer(),
		PKey:     b.PKey(),
		FECN:     b.FECN(),
		BECN:     b.BECN(),
		DestQP:   b.DestQP(),
		AckReq:   b.AckReq(),
		PSN:      b.PSN(),
	}
}

// RETH is a view of the 16-byte RDMA Extended Transport Header: virtual
// address u64, R_Key u32, DMA length u32. It opens an RDMA WRITE (FIRST or
// ONLY) and carries an RDMA READ REQUEST.
type RETH []byte

// RETHFields holds the RETH's fields.
type RETHFields struct {
	VA     uint64 // remote virtual address
	RKey   uint32 // remote key
	DMALen uint32 // length of the whole message, not of this packet
}

// VA returns the remote virtual address.
func (r RETH) VA() uint64 { return binary.BigEndian.Uint64(r[0:]) }

// SetVA sets the remote virtual address.
func (r RETH) SetVA(v uint64) { binary.BigEndian.PutUint64(r[0:], v) }

// RKey returns the remote key.
func (r RETH) RKey() uint32 { return binary.BigEndian.Uint32(r[8:]) }

// SetRKey sets the remote key.
func (r RETH) SetRKey(v uint32) { binary.BigEndian.PutUint32(r[8:], v) }

// DMALen returns the DMA length.
func (r RETH) DMALen() uint32 { return binary.BigEndian.Uint32(r[12:]) }

// SetDMALen sets the DMA length.
func (r RETH) SetDMALen(v uint32) { binary.BigEndian.PutUint32(r[12:], v) }

// Encode writes every field of f.
func (r RETH) Encode(f *RETHFields) {
	_ = r[RETHLen-1]
	r.SetVA(f.VA)
	r.SetRKey(f.RKey)
	r.SetDMALen(f.DMALen)
}

// Fields returns the decoded fields.
func (r RETH) Fields() RETHFields {
	_ = r[RETHLen-1]
	return RETHFields{VA: r.VA(), RKey: r.RKey(), DMALen: r.DMALen()}
}

// AETH is a view of the 4-byte ACK Extended Transport Header: an 8-bit
// syndrome and a 24-bit message sequence number.
type AETH []byte

// AETHFields holds the AETH's fields.
type AETHFields struct {
	Syndrome Syndrome
	MSN      uint32 // 24 bits
}

// Syndrome returns the syndrome (ACK, RNR NAK or NAK).
func (a AETH) Syndrome() Syndrome { return Syndrome(a[0]) }

// SetSyndrome sets the syndrome.
func (a AETH) SetSyndrome(s Syndrome) { a[0] = byte(s) }

// MSN returns the 24-bit message sequence number.
func (a AETH) MSN() uint32 { return get24(a[1:]) }

// SetMSN sets the MSN (low 24 bits of v).
func (a AETH) SetMSN(v uint32) { put24(a[1:], v) }

// Encode writes every field of f.
func (a AETH) Encode(f *AETHFields) {
	_ = a[AETHLen-1]
	a[0] = byte(f.Syndrome)
	put24(a[1:], f.MSN)
}

// Fields returns the decoded fields.
func (a AETH) Fields() AETHFields {
	_ = a[AETHLen-1]
	return AETHFields{Syndrome: a.Syndrome(), MSN: a.MSN()}
}

// ImmDt is a view of the 4-byte immediate data header. The four bytes are
// opaque: rxe copies them unchanged into the work completion's imm_data,
// which libibverbs declares __be32. Imm reads them as a big-endian number,
// so Imm() == ntohl(wc.imm_data), the value Wireshark shows.
type ImmDt []byte

// Imm returns the immediate data read big-endian.
func (i ImmDt) Imm() uint32 { return binary.BigEndian.Uint32(i) }

// SetImm writes v big-endian.
func (i ImmDt) SetImm(v uint32) { binary.BigEndian.PutUint32(i, v) }

// IETH is a view of the 4-byte Invalidate Extended Transport Header: the
// R_Key that a SEND with invalidate asks the responder to invalidate.
type IETH []byte

// RKey returns the R_Key to invalidate.
func (i IETH) RKey() uint32 { return binary.BigEndian.Uint32(i) }

// SetRKey sets the R_Key to invalidate.
func (i IETH) SetRKey(v uint32) { binary.BigEndian.PutUint32(i, v) }

// AtomicETH is a view of the 28-byte Atomic Extended Transport Header:
// virtual address u64, R_Key u32, Swap-or-Add u64, Compare u64, packed.
// A COMPARE SWAP puts the swap value in SwapAdd and the compare value in
// Compare; a FETCH ADD puts the addend in SwapAdd (rxe_req.c).
type AtomicETH []byte

// AtomicETHFields holds the AtomicETH's fields.
type AtomicETHFields struct {
	VA      uint64
	RKey    uint32
	SwapAdd uint64
	Compare uint64
}

// VA returns the remote virtual address (8-byte aligned for a valid request).
func (a AtomicETH) VA() uint64 { return binary.BigEndian.Uint64(a[0:]) }

// SetVA sets the remote virtual address.
func (a AtomicETH) SetVA(v uint64) { binary.BigEndian.PutUint64(a[0:], v) }

// RKey returns the remote key.
func (a AtomicETH) RKey() uint32 { return binary.BigEndian.Uint32(a[8:]) }

// SetRKey sets the remote key.
func (a AtomicETH) SetRKey(v uint32) { binary.BigEndian.PutUint32(a[8:], v) }

// SwapAdd returns the swap (COMPARE SWAP) or add (FETCH ADD) value.
func (a AtomicETH) SwapAdd() uint64 { return binary.BigEndian.Uint64(a[12:]) }

// SetSwapAdd sets the swap or add value.
func (a AtomicETH) SetSwapAdd(v uint64) { binary.BigEndian.PutUint64(a[12:], v) }

// Compare returns the compare value (COMPARE SWAP only).
func (a AtomicETH) Compare() uint64 { return binary.BigEndian.Uint64(a[20:]) }

// SetCompare sets the compare value.
func (a AtomicETH) SetCompare(v uint64) { binary.BigEndian.PutUint64(a[20:], v) }

// Encode writes every field of f.
func (a AtomicETH) Encode(f *AtomicETHFields) {
	_ = a[AtomicETHLen-1]
	a.SetVA(f.VA)
	a.SetRKey(f.RKey)
	a.SetSwapAdd(f.SwapAdd)
	a.SetCompare(f.Compare)
}

// Fields returns the decoded fields.
func (a AtomicETH) Fields() AtomicETHFields {
	_ = a[AtomicETHLen-1]
	return AtomicETHFields{VA: a.VA(), RKey: a.RKey(), SwapAdd: a.SwapAdd(), Compare: a.Compare()}
}

// AtomicAckETH is a view of the 8-byte Atomic ACK Extended Transport
// Header: the value the remote memory held before the atomic operation.
type AtomicAckETH []byte

// OrigData returns the original remote value.
func (a AtomicAckETH) OrigData() uint64 { return binary.BigEndian.Uint64(a) }

// SetOrigData sets the original remote value.
func (a AtomicAckETH) SetOrigData(v uint64) { binary.BigEndian.PutUint64(a, v) }

// DETH is a view of the 8-byte Datagram Extended Transport Header: Q_Key
// u32, one reserved byte, 24-bit source QPN.
type DETH []byte

// DETHFields holds the DETH's fields.
type DETHFields struct {
	QKey  uint32
	SrcQP uint32 // 24 bits
}

// QKey returns the queue key.
func (d DETH) QKey() uint32 { return binary.BigEndian.Uint32(d[0:]) }

// SetQKey sets the queue key.
func (d DETH) SetQKey(v uint32) { binary.BigEndian.PutUint32(d[0:], v) }

// SrcQP returns the sender's 24-bit QPN.
func (d DETH) SrcQP() uint32 { return get24(d[5:]) }

// SetSrcQP sets the sender's QPN (low 24 bits of v).
func (d DETH) SetSrcQP(v uint32) { put24(d[5:], v) }

// Encode writes every field of f, with the reserved byte zero.
func (d DETH) Encode(f *DETHFields) {
	_ = d[DETHLen-1]
	d.SetQKey(f.QKey)
	d[4] = 0
	put24(d[5:], f.SrcQP)
}

// Fields returns the decoded fields.
func (d DETH) Fields() DETHFields {
	_ = d[DETHLen-1]
	return DETHFields{QKey: d.QKey(), SrcQP: d.SrcQP()}
}

// XRCETH is a view of the 4-byte XRC Extended Transport Header that follows
// the BTH of every XRC request: one reserved byte, then the 24-bit number of
// the XRC SRQ at the target whose receive WQEs (and XRC domain) the request
// uses. The target's responses carry none.
//
//	byte 0     reserved (sent as zero, ignored on receive)
//	bytes 1-3  XRC SRQ number
type XRCETH []byte

// SRQN returns the 24-bit XRC SRQ number.
func (x XRCETH) SRQN() uint32 { return get24(x[1:]) }

// SetSRQN sets the XRC SRQ number (low 24 bits of v), leaving the reserved
// byte alone.
func (x XRCETH) SetSRQN(v uint32) { put24(x[1:], v) }

// Encode writes the XRC SRQ number (low 24 bits of srqn) with the reserved
// byte zero.
func (x XRCETH) Encode(srqn uint32) {
	_ = x[XRCETHLen-1]
	x[0] = 0
	put24(x[1:], srqn)
}

func get24(b []byte) uint32 {
	_ = b[2]
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

func put24(b []byte, v uint32) {
	_ = b[2]
	b[0] = byte(v >> 16)
	b[1] = byte(v >> 8)
	b[2] = byte(v)
}

func bit(v bool, mask byte) byte {
	if v {
		return mask
	}
	return 0
}

func setBit(b, mask byte, v bool) byte {
	if v {
		return b | mask
	}
	return b &^ mask
}
