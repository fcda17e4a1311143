//go:build linux && cgo && ibverbs

package main

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// maxSGEs is more SGEs than any simulated queue takes: a work request with
// more is refused before its list is read.
const maxSGEs = 64

// sgList appends the n SGEs at p to buf.
func sgList(buf []verbs.SGE, p *C.struct_ibv_sge, n C.int) []verbs.SGE {
	if n <= 0 || p == nil {
		return buf
	}
	for _, s := range unsafe.Slice(p, int(n)) {
		buf = append(buf, verbs.SGE{Addr: uint64(s.addr), Length: uint32(s.length), LKey: uint32(s.lkey)})
	}
	return buf
}

func tooManySGEs(op string, i int, n C.int) error {
	return verbs.Errorf(op, verbs.EINVAL, "set num_sge to the number of entries in sg_list (at most the QP's max_send_sge/max_recv_sge)",
		"work request %d has num_sge %d", i, int(n))
}

//export vshPostSend
func vshPostSend(h C.uintptr_t, batch *C.struct_vsh_swr, n C.int, done *C.int) C.int {
	const op = "ibv_post_send"
	o, err := live[*qpObj](h, op)
	if err != nil {
		traceCall(op, "?", err)
		return errno(err)
	}
	ws := unsafe.Slice(batch, int(n))
	total := 0
	for i := range ws {
		if ws[i].num_sge < 0 || ws[i].num_sge > maxSGEs {
			*done = C.int(i)
			err := tooManySGEs(op, i, ws[i].num_sge)
			traceCall(op, o.name, err)
			return errno(err)
		}
		total += int(ws[i].num_sge)
	}
	if cap(o.sges) < total {
		o.sges = make([]verbs.SGE, 0, total)
	}
	o.sges, o.wrs = o.sges[:0], o.wrs[:0]
	for i := range ws {
		w := &ws[i]
		start := len(o.sges)
		o.sges = sgList(o.sges, w.sg_list, w.num_sge)
		wr := verbs.SendWR{
			WRID:       uint64(w.wr_id),
			SGList:     o.sges[start:len(o.sges):len(o.sges)],
			Opcode:     verbs.WROpcode(w.opcode),
			Flags:      verbs.SendFlags(w.send_flags),
			Imm:        uint32(w.imm),
			RemoteAddr: uint64(w.remote_addr),
			RKey:       uint32(w.rkey),
			CompareAdd: uint64(w.compare_add),
			Swap:       uint64(w.swap),
			RemoteQPN:  uint32(w.remote_qpn),
			RemoteQKey: uint32(w.remote_qkey),
			RemoteSRQN: uint32(w.remote_srqn),
		}
		if wr.Opcode == verbs.WRSendWithInv || wr.Opcode == verbs.WRLocalInv {
			wr.Imm, wr.InvRKey = 0, uint32(w.imm)
		}
		if w.ah != 0 {
			a, err := live[*ahObj](w.ah, op)
			if err != nil {
				*done = C.int(i)
				traceCall(op, o.name, err)
				return errno(err)
			}
			wr.AH = a.ah
		}
		o.wrs = append(o.wrs, wr)
	}
	on := tracing()
	if on {
		holdPackets()
	}
	posted, err := o.qp.PostSend(o.wrs)
	*done = C.int(posted)
	if on {
		tracePostSend(o, o.wrs, posted, err)
		releasePackets()
	}
	return errno(err)
}

//export vshPostRecv
func vshPostRecv(h C.uintptr_t, srq C.int, batch *C.struct_vsh_rwr, n C.int, done *C.int) C.int {
	op := "ibv_post_recv"
	if srq != 0 {
		op = "ibv_post_srq_recv"
	}
	var post func([]verbs.RecvWR) (int, error)
	var b *object
	var wrs *[]verbs.RecvWR
	var sges *[]verbs.SGE
	if srq != 0 {
		o, err := live[*srqObj](h, op)
		if err != nil {
			traceCall(op, "?", err)
			return errno(err)
		}
		post, b, wrs, sges = o.srq.PostRecv, &o.object, &o.rwrs, &o.sges
	} else {
		o, err := live[*qpObj](h, op)
		if err != nil {
			traceCall(op, "?", err)
			return errno(err)
		}
		post, b, wrs, sges = o.qp.PostRecv, &o.object, &o.rwrs, &o.sges
	}
	ws := unsafe.Slice(batch, int(n))
	total := 0
	for i := range ws {
		if ws[i].num_sge < 0 || ws[i].num_sge > maxSGEs {
			*done = C.int(i)
			err := tooManySGEs(op, i, ws[i].num_sge)
			traceCall(op, b.name, err)
			return errno(err)
		}
		total += int(ws[i].num_sge)
	}
	if cap(*sges) < total {
		*sges = make([]verbs.SGE, 0, total)
	}
	*sges, *wrs = (*sges)[:0], (*wrs)[:0]
	for i := range ws {
		start := len(*sges)
		*sges = sgList(*sges, ws[i].sg_list, ws[i].num_sge)
		*wrs = append(*wrs, verbs.RecvWR{WRID: uint64(ws[i].wr_id), SGList: (*sges)[start:len(*sges):len(*sges)]})
	}
	posted, err := post(*wrs)
	*done = C.int(posted)
	if tracing() {
		tracePostRecv(op, b, *wrs, posted, err)
	}
	return errno(err)
}

//export vshPollCQ
func vshPollCQ(h C.uintptr_t, n C.int, out *C.struct_ibv_wc) C.int {
	const op = "ibv_poll_cq"
	o, err := live[*cqObj](h, op)
	if err != nil {
		traceCall(op, "?", err)
		return -C.int(errno(err))
	}
	if n <= 0 {
		return 0
	}
	want := min(int(n), 256)
	if cap(o.wcs) < want {
		o.wcs = make([]verbs.WC, want)
	}
	got, err := o.cq.Poll(o.wcs[:want])
	if err != nil {
		traceCall(op, o.name, err)
		return -C.int(errno(err))
	}
	cs := unsafe.Slice(out, got)
	for i := 0; i < got; i++ {
		wcToC(&o.wcs[i], &cs[i])
	}
	if got > 0 && tracing() {
		tracePoll(o, o.wcs[:got])
	}
	return C.int(got)
}

//export vshReqNotifyCQ
func vshReqNotifyCQ(h C.uintptr_t, solicited C.int) C.int {
	const op = "ibv_req_notify_cq"
	o, err := live[*cqObj](h, op)
	if err == nil {
		err = o.cq.ReqNotify(solicited != 0)
	}
	if err != nil {
		traceCall(op, "?", err)
	}
	return errno(err)
}

// wcToC fills one struct ibv_wc. imm_data is big-endian there; an
// invalidated rkey is in host order.
func wcToC(w *verbs.WC, c *C.struct_ibv_wc) {
	c.wr_id = C.uint64_t(w.WRID)
	c.status = uint32(w.Status)
	c.opcode = uint32(w.Opcode)
	c.vendor_err = C.uint32_t(w.VendorErr)
	c.byte_len = C.uint32_t(w.ByteLen)
	v := w.Imm
	if w.Flags&verbs.WCWithImm != 0 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		v = binary.NativeEndian.Uint32(b[:])
	}
	binary.NativeEndian.PutUint32(c.anon0[:], v)
	c.qp_num = C.uint32_t(w.QPNum)
	c.src_qp = C.uint32_t(w.SrcQP)
	c.wc_flags = C.uint(w.Flags)
	c.pkey_index = C.uint16_t(w.PKeyIndex)
	c.slid = C.uint16_t(w.SLID)
	c.sl = C.uint8_t(w.SL)
	c.dlid_path_bits = C.uint8_t(w.DLIDPathBits)
}
