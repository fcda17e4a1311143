package verbstest

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// Every work request opcode on every transport: the legal ones move the
// right bytes and complete with exactly the fields rxe fills in; the illegal
// ones are accepted by ibv_post_send and fail as a completion.

const (
	// The completion fields below are the suite's reading of Linux 6.1:
	// the sender's CQE from rxe_comp.c make_send_cqe (opcode from
	// wr_to_wc_opcode; byte_len = the WR's total SGE length, wqe->dma.length;
	// IB_WC_WITH_IMM also on the SENDER's completion of a *_WITH_IMM, which
	// ConnectX does not do), the receiver's from rxe_resp.c do_complete for
	// a user CQ (wc_flags always has IB_WC_GRH, plus IB_WC_WITH_IMM and
	// imm_data from the ImmDt header; byte_len = the bytes placed, or the
	// RETH length for RDMA WRITE with immediate (IBV_WC_RECV_RDMA_WITH_IMM);
	// src_qp only from a DETH, so 0 on RC and UC). rdma-core 44's
	// rxe_poll_cq copies the kernel's ib_uverbs_wc as it is; the Go API
	// carries imm_data in host order (ibv_wc.imm_data is big-endian).
	srcWCFields = "sw/rxe/rxe_comp.c make_send_cqe/wr_to_wc_opcode and rxe_resp.c do_complete (Linux 6.1); rdma-core v44 providers/rxe/rxe.c rxe_poll_cq; ibv_poll_cq(3)"
	srcIllegal  = "rdma-core v44 providers/rxe/rxe.c validate_send_wr does not check the opcode against the QP type, so ibv_post_send succeeds; the kernel's rxe_req.c rxe_requester then gets -EINVAL from next_opcode (next_opcode_uc knows only SEND/WRITE, UD only SEND) and completes the WR with IB_WC_LOC_QP_OP_ERR even though it was unsignaled (rxe_comp.c do_complete, IBA 10.7.3.1); COMPST_ERROR calls rxe_qp_error, and the WRs after it are flushed (IB_WC_WR_FLUSH_ERR)"
)

// immValue is the immediate data the opcode scenarios send.
const immValue = 0x1234abcd

// legalOp is one legal (transport, opcode) pair.
type legalOp struct {
	typ verbs.QPType
	op  verbs.WROpcode
}

var legalOps = []legalOp{
	{verbs.QPTypeRC, verbs.WRSend}, {verbs.QPTypeRC, verbs.WRSendWithImm},
	{verbs.QPTypeRC, verbs.WRRDMAWrite}, {verbs.QPTypeRC, verbs.WRRDMAWriteWithImm},
	{verbs.QPTypeRC, verbs.WRRDMARead},
	{verbs.QPTypeRC, verbs.WRAtomicCmpAndSwp}, {verbs.QPTypeRC, verbs.WRAtomicFetchAndAdd},
	{verbs.QPTypeUC, verbs.WRSend}, {verbs.QPTypeUC, verbs.WRSendWithImm},
	{verbs.QPTypeUC, verbs.WRRDMAWrite}, {verbs.QPTypeUC, verbs.WRRDMAWriteWithImm},
	{verbs.QPTypeUD, verbs.WRSend}, {verbs.QPTypeUD, verbs.WRSendWithImm},
}

// illegalOps are the opcodes of ibv_wr_opcode that the transport cannot
// carry: UC has no READ or atomics, UD only SEND (IBA table 36; rxe_req.c
// next_opcode_uc and next_opcode's UD case).
var illegalOps = []legalOp{
	{verbs.QPTypeUC, verbs.WRRDMARead}, {verbs.QPTypeUC, verbs.WRAtomicCmpAndSwp}, {verbs.QPTypeUC, verbs.WRAtomicFetchAndAdd},
	{verbs.QPTypeUD, verbs.WRRDMAWrite}, {verbs.QPTypeUD, verbs.WRRDMAWriteWithImm}, {verbs.QPTypeUD, verbs.WRRDMARead},
	{verbs.QPTypeUD, verbs.WRAtomicCmpAndSwp}, {verbs.QPTypeUD, verbs.WRAtomicFetchAndAdd},
}

// sendWCOpcode is rxe_comp.c wr_to_wc_opcode.
var sendWCOpcode = map[verbs.WROpcode]verbs.WCOpcode{
	verbs.WRSend: verbs.WCOpSend, verbs.WRSendWithImm: verbs.WCOpSend,
	verbs.WRRDMAWrite: verbs.WCOpRDMAWrite, verbs.WRRDMAWriteWithImm: verbs.WCOpRDMAWrite,
	verbs.WRRDMARead: verbs.WCOpRDMARead, verbs.WRAtomicCmpAndSwp: verbs.WCOpCompSwap,
	verbs.WRAtomicFetchAndAdd: verbs.WCOpFetchAdd,
}

func opName(c legalOp) string {
	return strings.ToLower(c.typ.Short()) + "-" + strings.ReplaceAll(strings.ToLower(c.op.Short()), "_", "-")
}

func init() {
	for _, c := range legalOps {
		Register(Scenario{
			Name:   "opcode/" + opName(c),
			Source: srcWCFields + "; the bytes: rxe_req.c finish_packet (copy_data from the SGEs), rxe_resp.c execute (send_data_in, write_data_in), read_reply, atomic_reply",
			Needs:  CapDataPath,
			Run:    func(e *Env) { runLegalOp(e, c) },
		})
	}
	for _, c := range illegalOps {
		Register(Scenario{
			Name:   "opcode/" + opName(c) + "-refused",
			Source: srcIllegal,
			Needs:  CapDataPath,
			Run:    func(e *Env) { runIllegalOp(e, c) },
		})
	}
}

// runLegalOp performs one operation of c on a fresh link and checks the
// memory on both sides and both completions field by field.
func runLegalOp(e *Env, c legalOp) {
	const n = 101 // not a multiple of 4: the packet carries pad bytes
	l := e.link(c.typ, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:n], 0x11)
	pattern(remote.Bytes()[:n], 0x77)
	remoteBefore := append([]byte(nil), remote.Bytes()...)

	var imm uint32
	var flagsA, flagsB verbs.WCFlags
	if c.op.HasImm() {
		imm, flagsA, flagsB = immValue, verbs.WCWithImm, verbs.WCWithImm
	}
	wr := verbs.SendWR{WRID: 1, Opcode: c.op, Flags: verbs.SendSignaled, Imm: imm,
		SGList: []verbs.SGE{sgeAt(local, 0, n)}, RemoteAddr: remote.Addr(), RKey: remote.RKey()}
	sendLen := uint32(n)
	consumes := c.op == verbs.WRSend || c.op == verbs.WRSendWithImm || c.op == verbs.WRRDMAWriteWithImm

	const orig, operand, swap = uint64(0x0102030405060708), uint64(0x1111), uint64(0xfeedfacecafebeef)
	if c.op.IsAtomic() {
		binary.NativeEndian.PutUint64(remote.Bytes(), orig)
		remoteBefore = append(remoteBefore[:0], remote.Bytes()...)
		wr.SGList = []verbs.SGE{sgeAt(local, 0, 8)}
		sendLen = 8
		if c.op == verbs.WRAtomicCmpAndSwp {
			wr.CompareAdd, wr.Swap = orig, swap
		} else {
			wr.CompareAdd = operand
		}
	}
	if c.typ == verbs.QPTypeUD {
		wr = l.udWR(1, c.op, verbs.SendSignaled, wr.SGList...)
		wr.Imm = imm
	}
	if consumes {
		e.recv(l.b, 2, sgeAt(rbuf, 0, 4096))
	}
	e.post(l.a, wr)

	wcs := e.waitWCs(l.acq, 1, "%v %v: the sender's completion", c.typ, c.op)
	e.expectWC(wcs[0], verbs.WC{WRID: 1, Status: verbs.WCSuccess, Opcode: sendWCOpcode[c.op], ByteLen: sendLen,
		QPNum: l.a.Num(), Flags: flagsA}, "sender")
	if consumes {
		want := verbs.WC{WRID: 2, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecv, ByteLen: n, Imm: imm,
			QPNum: l.b.Num(), Flags: verbs.WCGRH | flagsB}
		if c.op == verbs.WRRDMAWriteWithImm {
			want.Opcode = verbs.WCOpRecvRDMAWithImm
		}
		if c.typ == verbs.QPTypeUD {
			want.ByteLen += udGRH
			want.SrcQP = l.a.Num()
		}
		wcs := e.waitWCs(l.bcq, 1, "%v %v: the receiver's completion", c.typ, c.op)
		e.expectWC(wcs[0], want, "receiver")
	}
	e.expectNoWC(l.bcq, "%v %v: the peer's CQ after the operation", c.typ, c.op)

	// The bytes.
	switch c.op {
	case verbs.WRSend, verbs.WRSendWithImm:
		off := 0
		if c.typ == verbs.QPTypeUD {
			off = udGRH
		}
		e.expectBytes(rbuf.Bytes()[off:off+n], patterned(n, 0x11), "the receive buffer")
		if !zero(rbuf.Bytes()[off+n:]) {
			e.Errorf("bytes past the message in the receive buffer were written")
		}
		e.expectBytes(remote.Bytes(), remoteBefore, "the peer's other memory")
	case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm:
		e.expectBytes(remote.Bytes()[:n], patterned(n, 0x11), "the remote buffer after RDMA WRITE")
		e.expectBytes(remote.Bytes()[n:], remoteBefore[n:], "the remote memory past the written range")
		if !zero(rbuf.Bytes()) {
			e.Errorf("RDMA WRITE with immediate wrote into the receive buffer; it only consumes the receive WR")
		}
	case verbs.WRRDMARead:
		e.expectBytes(local.Bytes()[:n], patterned(n, 0x77), "the local buffer after RDMA READ")
		e.expectBytes(remote.Bytes(), remoteBefore, "the remote memory after RDMA READ")
	case verbs.WRAtomicCmpAndSwp, verbs.WRAtomicFetchAndAdd:
		newVal := orig + operand
		if c.op == verbs.WRAtomicCmpAndSwp {
			newVal = swap
		}
		if got := binary.NativeEndian.Uint64(remote.Bytes()); got != newVal {
			e.Errorf("remote 8 bytes after %v = %#x; want %#x", c.op, got, newVal)
		}
		if got := binary.NativeEndian.Uint64(local.Bytes()); got != orig {
			e.Errorf("the local buffer after %v holds %#x; want the original remote value %#x", c.op, got, orig)
		}
		e.expectBytes(remote.Bytes()[8:], remoteBefore[8:], "the remote memory past the atomic's 8 bytes")
	}
	for _, q := range []verbs.QP{l.a, l.b} {
		if s := e.State(q); s != verbs.QPSRTS {
			e.Errorf("QP %#x is in %v after a successful %v; want RTS", q.Num(), s, c.op)
		}
	}
}

// runIllegalOp posts an opcode the transport cannot carry, unsignaled,
// followed by a signaled SEND.
func runIllegalOp(e *Env, c legalOp) {
	l := e.link(c.typ, linkCfg{})
	local := e.MR(l.apd, 4096, accAll)
	remote := e.MR(l.bpd, 4096, accAll)
	rbuf := e.MR(l.bpd, 4096, accLocal)
	pattern(local.Bytes()[:64], 0x11)
	pattern(remote.Bytes()[:64], 0x77)
	e.recv(l.b, 9, sgeAt(rbuf, 0, 4096))

	bad := verbs.SendWR{WRID: 1, Opcode: c.op, SGList: []verbs.SGE{sgeAt(local, 0, 8)},
		RemoteAddr: remote.Addr(), RKey: remote.RKey(), CompareAdd: 1, Swap: 2}
	next := verbs.SendWR{WRID: 2, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sgeAt(local, 0, 16)}}
	if c.typ == verbs.QPTypeUD {
		b := l.udWR(1, c.op, 0, bad.SGList...)
		b.RemoteAddr, b.RKey, b.CompareAdd, b.Swap = bad.RemoteAddr, bad.RKey, 1, 2
		bad, next = b, l.udWR(2, verbs.WRSend, verbs.SendSignaled, next.SGList...)
	}
	n, err := l.a.PostSend([]verbs.SendWR{bad, next})
	if err != nil || n != 2 {
		e.Fatalf("ibv_post_send(%v, SEND) on a %v QP = %d, %v; want 2 posted: the provider does not check opcodes against the transport", c.op, c.typ, n, err)
	}
	wcs := e.waitWCs(l.acq, 2, "%v on %v", c.op, c.typ)
	e.expectStatuses(wcs, l.a.Num(), []uint64{1, 2}, []verbs.WCStatus{verbs.WCLocQPOpErr, verbs.WCWRFlushErr},
		fmt.Sprintf("%v (unsignaled) then SEND on a %v QP", c.op, c.typ))
	e.expectState(l.a, verbs.QPSErr, "after the refused opcode")
	e.expectNoWC(l.bcq, "the peer of a refused %v", c.op)
	e.expectBytes(remote.Bytes()[:64], patterned(64, 0x77), "the peer's memory after a refused %v", c.op)
	if !zero(rbuf.Bytes()) {
		e.Errorf("the peer's receive buffer was written")
	}
}
