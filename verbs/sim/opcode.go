package sim

import "fmt"

// opcode is a BTH opcode (include/rdma/ib_pack.h). This is the seam to
// verbs/wire: the engines use these values and masks; encoding to bytes
// belongs to verbs/wire.
type opcode uint8

const (
	opRC = 0x00
	opUC = 0x20
	opUD = 0x60

	opSendFirst      = 0x00
	opSendMiddle     = 0x01
	opSendLast       = 0x02
	opSendLastImm    = 0x03
	opSendOnly       = 0x04
	opSendOnlyImm    = 0x05
	opWriteFirst     = 0x06
	opWriteMiddle    = 0x07
	opWriteLast      = 0x08
	opWriteLastImm   = 0x09
	opWriteOnly      = 0x0a
	opWriteOnlyImm   = 0x0b
	opReadRequest    = 0x0c
	opReadRespFirst  = 0x0d
	opReadRespMiddle = 0x0e
	opReadRespLast   = 0x0f
	opReadRespOnly   = 0x10
	opAck            = 0x11
	opAtomicAck      = 0x12
	opCompareSwap    = 0x13
	opFetchAdd       = 0x14
)

func (o opcode) transport() uint8 { return uint8(o) & 0xe0 }
func (o opcode) op() uint8        { return uint8(o) & 0x1f }

func (o opcode) isSend() bool  { return o.op() <= opSendOnlyImm }
func (o opcode) isWrite() bool { return o.op() >= opWriteFirst && o.op() <= opWriteOnlyImm }
func (o opcode) isRead() bool  { return o.op() == opReadRequest }
func (o opcode) isAtomic() bool {
	return o.op() == opCompareSwap || o.op() == opFetchAdd
}
func (o opcode) isRequest() bool {
	return o.isSend() || o.isWrite() || o.isRead() || o.isAtomic()
}
func (o opcode) isReadResp() bool { return o.op() >= opReadRespFirst && o.op() <= opReadRespOnly }
func (o opcode) hasAETH() bool {
	switch o.op() {
	case opReadRespFirst, opReadRespLast, opReadRespOnly, opAck, opAtomicAck:
		return o.transport() == opRC
	}
	return false
}

// start and end: RXE_START_MASK / RXE_END_MASK.
func (o opcode) start() bool {
	switch o.op() {
	case opSendFirst, opSendOnly, opSendOnlyImm, opWriteFirst, opWriteOnly, opWriteOnlyImm,
		opReadRequest, opCompareSwap, opFetchAdd, opReadRespFirst, opReadRespOnly:
		return true
	}
	return false
}

func (o opcode) end() bool {
	switch o.op() {
	case opSendLast, opSendLastImm, opSendOnly, opSendOnlyImm, opWriteLast, opWriteLastImm, opWriteOnly,
		opWriteOnlyImm, opReadRequest, opCompareSwap, opFetchAdd, opReadRespLast, opReadRespOnly:
		return true
	}
	return false
}

func (o opcode) hasImm() bool {
	switch o.op() {
	case opSendLastImm, opSendOnlyImm, opWriteLastImm, opWriteOnlyImm:
		return true
	}
	return false
}

// takesRecvWQE is RXE_RWR_MASK: the packet consumes a receive WQE.
func (o opcode) takesRecvWQE() bool {
	switch o.op() {
	case opSendFirst, opSendOnly, opSendOnlyImm, opWriteLastImm, opWriteOnlyImm:
		return true
	}
	return false
}

// completesRecv is RXE_COMP_MASK on a request.
func (o opcode) completesRecv() bool {
	switch o.op() {
	case opSendLast, opSendLastImm, opSendOnly, opSendOnlyImm, opWriteLastImm, opWriteOnlyImm:
		return true
	}
	return false
}

var opNames = [...]string{
	"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE", "SEND_ONLY", "SEND_ONLY_WITH_IMMEDIATE",
	"RDMA_WRITE_FIRST", "RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST", "RDMA_WRITE_LAST_WITH_IMMEDIATE",
	"RDMA_WRITE_ONLY", "RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST",
	"RDMA_READ_RESPONSE_MIDDLE", "RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE",
	"ATOMIC_ACKNOWLEDGE", "COMPARE_SWAP", "FETCH_ADD",
}

// String names the opcode as Wireshark does: "RC SEND_ONLY".
func (o opcode) String() string {
	t := map[uint8]string{opRC: "RC", opUC: "UC", opUD: "UD"}[o.transport()]
	if t == "" {
		t = fmt.Sprintf("0x%02x", uint8(o)&0xe0)
	}
	if int(o.op()) < len(opNames) {
		return t + " " + opNames[o.op()]
	}
	return fmt.Sprintf("%s op 0x%02x", t, o.op())
}

// AETH syndromes (rxe_hdr.h enum aeth_syndrome).
const (
	synACK       = 0x1f // ACK, unlimited credits
	synRNRNAK    = 0x20
	synNAKPSNSeq = 0x60
	synNAKInvReq = 0x61
	synNAKRemAcc = 0x62
	synNAKRemOp  = 0x63
	synTypeMask  = 0x60
)

func synString(s uint8) string {
	switch {
	case s&synTypeMask == 0:
		return "ACK"
	case s&synTypeMask == synRNRNAK:
		return fmt.Sprintf("RNR_NAK(timer=%d)", s&0x1f)
	case s == synNAKPSNSeq:
		return "NAK(PSN sequence error)"
	case s == synNAKInvReq:
		return "NAK(invalid request)"
	case s == synNAKRemAcc:
		return "NAK(remote access error)"
	case s == synNAKRemOp:
		return "NAK(remote operational error)"
	}
	return fmt.Sprintf("syndrome 0x%02x", s)
}

// rnrNakUsec is rxe_comp.c's rnrnak_usec: the RNR timer codes in µs
// (including rxe's 61410 for code 25).
var rnrNakUsec = [32]int64{
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61410, 81920, 122880, 163840, 245760, 327680, 491520,
}

// psnCmp is psn_compare: the sign of a-b in 24-bit serial arithmetic.
func psnCmp(a, b uint32) int32 { return int32((a - b) << 8) }
