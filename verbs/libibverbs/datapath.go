//go:build linux && cgo && ibverbs

package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/internal/cabi"
)

// sgList appends the n SGEs at sges[from:] (the C side's copy) to buf.
func sgList(buf []verbs.SGE, sges []C.struct_ibv_sge, from C.uint32_t, n C.int) []verbs.SGE {
	for _, s := range sges[from : int(from)+int(n)] {
		buf = append(buf, verbs.SGE{Addr: uint64(s.addr), Length: uint32(s.length), LKey: uint32(s.lkey)})
	}
	return buf
}

// badSGEs is the refusal of work request i of a list, whose num_sge (n)
// is negative or more than any queue takes: rxe compares it, unsigned,
// with the queue's max_sge (validate_send_wr, rxe_post_one_recv).
func badSGEs(op string, i int, n C.int) error {
	return verbs.Errorf(op, verbs.EINVAL, "set num_sge to the number of entries in sg_list (at most the QP's max_send_sge or max_recv_sge)",
		"work request %d of the list has num_sge %d", i, int(n))
}

// totalSGEs is how many SGEs the n requests of a batch have.
func totalSGEs[T C.struct_vsh_swr | C.struct_vsh_rwr](ws []T, num func(*T) C.int) int {
	t := 0
	for i := range ws {
		t += int(num(&ws[i]))
	}
	return t
}

// vshPostSend posts the n requests the C side copied (batch, their SGEs
// in sges), the list's requests base.. on; stop says that request n
// after them has num_sge bad, refused once those before it are posted.
//
//export vshPostSend
func vshPostSend(h C.uintptr_t, batch *C.struct_vsh_swr, n C.int, sges *C.struct_ibv_sge, base, stop, bad C.int, done *C.int) C.int {
	const op = "ibv_post_send"
	o, err := live[*qpObj](h, op)
	if err != nil {
		return errno(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ws := unsafe.Slice(batch, int(n))
	total := totalSGEs(ws, func(w *C.struct_vsh_swr) C.int { return w.num_sge })
	sg := unsafe.Slice(sges, total)
	if cap(o.sges) < total {
		o.sges = make([]verbs.SGE, 0, total)
	}
	o.sges, o.wrs = o.sges[:0], o.wrs[:0]
	for i := range ws {
		w := &ws[i]
		start := len(o.sges)
		o.sges = sgList(o.sges, sg, w.sge, w.num_sge)
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
				n, stop = C.int(i), 0 // post those before it, then refuse it
				o.wrs = o.wrs[:i]
				return o.post(op, n, done, err)
			}
			wr.AH = a.ah
		}
		o.wrs = append(o.wrs, wr)
	}
	var after error
	if stop != 0 {
		after = badSGEs(op, int(base)+int(n), bad)
	}
	return o.post(op, n, done, after)
}

// post posts o.wrs; after, when the posts all went, is the refusal of the
// request that follows them (number n of the batch).
func (o *qpObj) post(op string, n C.int, done *C.int, after error) C.int {
	on := tracing()
	if on {
		holdPackets()
	}
	posted, err := 0, error(nil)
	if len(o.wrs) > 0 {
		posted, err = o.qp.PostSend(o.wrs)
	}
	if err == nil && after != nil {
		posted, err = int(n), after
	}
	*done = C.int(posted)
	if on {
		tracePostSend(o, o.wrs, posted, err)
		releasePackets()
	}
	return errno(err)
}

//export vshPostRecv
func vshPostRecv(h C.uintptr_t, srq C.int, batch *C.struct_vsh_rwr, n C.int, sges *C.struct_ibv_sge, base, stop, bad C.int, done *C.int) C.int {
	op := "ibv_post_recv"
	if srq != 0 {
		op = "ibv_post_srq_recv"
	}
	var post func([]verbs.RecvWR) (int, error)
	var b *object
	var wrs *[]verbs.RecvWR
	var buf *[]verbs.SGE
	var mu *sync.Mutex
	if srq != 0 {
		o, err := live[*srqObj](h, op)
		if err != nil {
			return errno(err)
		}
		post, b, wrs, buf, mu = o.srq.PostRecv, &o.object, &o.rwrs, &o.sges, &o.mu
	} else {
		o, err := live[*qpObj](h, op)
		if err != nil {
			return errno(err)
		}
		post, b, wrs, buf, mu = o.qp.PostRecv, &o.object, &o.rwrs, &o.sges, &o.mu
	}
	mu.Lock()
	defer mu.Unlock()
	ws := unsafe.Slice(batch, int(n))
	total := totalSGEs(ws, func(w *C.struct_vsh_rwr) C.int { return w.num_sge })
	sg := unsafe.Slice(sges, total)
	if cap(*buf) < total {
		*buf = make([]verbs.SGE, 0, total)
	}
	*buf, *wrs = (*buf)[:0], (*wrs)[:0]
	for i := range ws {
		start := len(*buf)
		*buf = sgList(*buf, sg, ws[i].sge, ws[i].num_sge)
		*wrs = append(*wrs, verbs.RecvWR{WRID: uint64(ws[i].wr_id), SGList: (*buf)[start:len(*buf):len(*buf)]})
	}
	posted, err := 0, error(nil)
	if len(*wrs) > 0 {
		posted, err = post(*wrs)
	}
	if err == nil && stop != 0 {
		posted, err = int(n), badSGEs(op, int(base)+int(n), bad)
	}
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
		return -C.int(errno(err))
	}
	if n <= 0 {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	want := min(int(n), 256)
	if out == nil {
		want = 1 // rxe writes only what it polls: NULL is harmless on an empty CQ
	}
	if cap(o.wcs) < want {
		o.wcs = make([]verbs.WC, want)
	}
	got, err := o.cq.Poll(o.wcs[:want])
	if err != nil {
		traceCall(op, o.name, err)
		return -C.int(errno(err))
	}
	if got > 0 && out == nil {
		traceCall(op, o.name+", wc=NULL", verbs.Errorf(op, verbs.EFAULT, "pass an array of num_entries struct ibv_wc", "a completion came and wc is NULL"))
		C.vsh_null(C.CString(op), C.CString("wc"), C.CString("a completion came and there is nowhere to put it: pass an array of num_entries struct ibv_wc"))
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
	if err != nil {
		return errno(err)
	}
	err = o.cq.ReqNotify(solicited != 0)
	traceCall(op, fmt.Sprintf("%s, solicited_only=%d", o.name, solicited), err)
	return errno(err)
}

// wcToC fills one struct ibv_wc (verbs/internal/cabi).
func wcToC(w *verbs.WC, c *C.struct_ibv_wc) { cabi.WCToC(w, unsafe.Pointer(c)) }
