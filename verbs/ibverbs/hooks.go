//go:build linux && cgo && ibverbs

package ibverbs

// Test hooks: cgo cannot be used in _test.go files, so the tests of the
// conversions reach C memory through these functions. They are small and
// unexported; nothing else calls them.

/*
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/internal/cabi"
)

// hookDeviceAttr converts a struct ibv_device_attr whose fields hold 1, 2,
// 3 ... in declaration order (fw_ver "1.2.3", node_guid 0x0102030405060708
// big-endian).
func hookDeviceAttr() verbs.DeviceAttr {
	var c C.struct_ibv_device_attr
	for i, b := range []byte("1.2.3") {
		c.fw_ver[i] = C.char(b)
	}
	c.node_guid = toBE64(0x0102030405060708)
	c.sys_image_guid = toBE64(0x1112131415161718)
	c.max_mr_size, c.page_size_cap = 4, 5
	c.vendor_id, c.vendor_part_id, c.hw_ver = 6, 7, 8
	c.max_qp, c.max_qp_wr, c.device_cap_flags, c.max_sge, c.max_sge_rd = 9, 10, 11, 12, 13
	c.max_cq, c.max_cqe, c.max_mr, c.max_pd = 14, 15, 16, 17
	c.max_qp_rd_atom, c.max_ee_rd_atom, c.max_res_rd_atom, c.max_qp_init_rd_atom, c.max_ee_init_rd_atom = 18, 19, 20, 21, 22
	c.atomic_cap = 1
	c.max_ee, c.max_rdd, c.max_mw, c.max_raw_ipv6_qp, c.max_raw_ethy_qp = 24, 25, 26, 27, 28
	c.max_mcast_grp, c.max_mcast_qp_attach, c.max_total_mcast_qp_attach, c.max_ah = 29, 30, 31, 32
	c.max_fmr, c.max_map_per_fmr, c.max_srq, c.max_srq_wr, c.max_srq_sge = 33, 34, 35, 36, 37
	c.max_pkeys, c.local_ca_ack_delay, c.phys_port_cnt = 38, 39, 40
	return deviceAttrFromC(&c)
}

// hookPortAttr converts a struct ibv_port_attr holding 1, 2, 3 ... in
// declaration order (state ACTIVE, MTUs 4096 and 1024, link layer Ethernet).
func hookPortAttr() verbs.PortAttr {
	var c C.struct_ibv_port_attr
	c.state, c.max_mtu, c.active_mtu = C.IBV_PORT_ACTIVE, C.IBV_MTU_4096, C.IBV_MTU_1024
	c.gid_tbl_len, c.port_cap_flags, c.max_msg_sz, c.bad_pkey_cntr, c.qkey_viol_cntr = 4, 5, 6, 7, 8
	c.pkey_tbl_len, c.lid, c.sm_lid, c.lmc, c.max_vl_num, c.sm_sl = 9, 10, 11, 12, 13, 14
	c.subnet_timeout, c.init_type_reply, c.active_width, c.active_speed, c.phys_state = 15, 16, 17, 18, 19
	c.link_layer, c.flags = C.IBV_LINK_LAYER_ETHERNET, 1
	return portAttrFromC(&c)
}

// hookQPAttrRoundTrip sends a through struct ibv_qp_attr and back.
func hookQPAttrRoundTrip(a verbs.QPAttr) verbs.QPAttr {
	var c C.struct_ibv_qp_attr
	qpAttrToC(&a, &c)
	return qpAttrFromC(&c)
}

// hookQPAttrOffsets reports where qpAttrToC put a few fields, read through
// C's own layout: the AV's dgid and port, the PSNs.
func hookQPAttrOffsets(a verbs.QPAttr) (dgid verbs.GID, port uint8, rqPSN, sqPSN uint32) {
	var c C.struct_ibv_qp_attr
	qpAttrToC(&a, &c)
	return gidFromC(&c.ah_attr.grh.dgid), uint8(c.ah_attr.port_num), uint32(c.rq_psn), uint32(c.sq_psn)
}

// hookSRQAttrRoundTrip sends a through struct ibv_srq_attr and back.
func hookSRQAttrRoundTrip(a verbs.SRQAttr) verbs.SRQAttr {
	var c C.struct_ibv_srq_attr
	srqAttrToC(a, &c)
	return srqAttrFromC(&c)
}

// hookWC converts a struct ibv_wc as rxe fills it: imm_data in network
// order when IBV_WC_WITH_IMM is set.
func hookWC(w verbs.WC) verbs.WC {
	var c C.struct_ibv_wc
	cabi.WCToC(&w, unsafe.Pointer(&c))
	var out verbs.WC
	wcFromC(&c, &out)
	return out
}

// builtSend is one ibv_send_wr as vsh_build_send laid it out.
type builtSend struct {
	WRID       uint64
	Next       int // index of the next WR, -1 for NULL
	SGEOffset  int // index of sg_list in the SGE array, -1 for NULL
	NumSGE     int
	Opcode     verbs.WROpcode
	Flags      verbs.SendFlags
	RemoteAddr uint64
	RKey       uint32
	CompareAdd uint64
	Swap       uint64
	AHSet      bool
	RemoteQPN  uint32
	RemoteQKey uint32
	ImmWire    [4]byte // imm_data as bytes in memory (network order)
	InvRKey    uint32
	RemoteSRQN uint32 // qp_type.xrc.remote_srqn
	SGEs       []verbs.SGE
}

// hookBuildSend lays out wrs as PostSend does for a QP of type t and reads
// the chain back through C. ah stands for any AH (a dummy pointer).
func hookBuildSend(t verbs.QPType, wrs []verbs.SendWR) []builtSend {
	var b sendBuf
	defer b.free()
	total := 0
	for _, w := range wrs {
		total += len(w.SGList)
	}
	if !b.reserve(len(wrs), total) {
		panic("ibverbs: test hook: out of memory")
	}
	dummyAH := (*C.struct_ibv_ah)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ibv_ah{}))))
	defer C.free(unsafe.Pointer(dummyAH))
	flat := unsafe.Slice(b.flat, len(wrs))
	sges := unsafe.Slice(b.sges, max(total, 1))
	off := 0
	for i := range wrs {
		wr := &wrs[i]
		fl := &flat[i]
		*fl = C.struct_vsh_send{wr_id: C.uint64_t(wr.WRID), remote_addr: C.uint64_t(wr.RemoteAddr), compare_add: C.uint64_t(wr.CompareAdd),
			swap: C.uint64_t(wr.Swap), num_sge: C.uint32_t(len(wr.SGList)), opcode: C.uint32_t(wr.Opcode), send_flags: C.uint32_t(wr.Flags),
			imm: C.uint32_t(wr.Imm), inv_rkey: C.uint32_t(wr.InvRKey), rkey: C.uint32_t(wr.RKey), remote_qpn: C.uint32_t(wr.RemoteQPN),
			remote_qkey: C.uint32_t(wr.RemoteQKey), remote_srqn: C.uint32_t(wr.RemoteSRQN)}
		if wr.AH != nil {
			fl.ah = dummyAH
		}
		fillSGEs(sges[off:off+len(wr.SGList)], wr.SGList)
		off += len(wr.SGList)
	}
	C.vsh_build_send(C.int(t), b.flat, C.int(len(wrs)), b.wrs, b.sges)
	ws := unsafe.Slice(b.wrs, len(wrs))
	base := uintptr(unsafe.Pointer(b.wrs))
	sbase := uintptr(unsafe.Pointer(b.sges))
	out := make([]builtSend, len(wrs))
	for i := range ws {
		w := &ws[i]
		o := &out[i]
		o.WRID, o.NumSGE, o.Opcode, o.Flags = uint64(w.wr_id), int(w.num_sge), verbs.WROpcode(w.opcode), verbs.SendFlags(w.send_flags)
		o.Next, o.SGEOffset = -1, -1
		if w.next != nil {
			o.Next = int((uintptr(unsafe.Pointer(w.next)) - base) / unsafe.Sizeof(*w))
		}
		if w.sg_list != nil {
			o.SGEOffset = int((uintptr(unsafe.Pointer(w.sg_list)) - sbase) / unsafe.Sizeof(C.struct_ibv_sge{}))
			for _, s := range unsafe.Slice(w.sg_list, int(w.num_sge)) {
				o.SGEs = append(o.SGEs, verbs.SGE{Addr: uint64(s.addr), Length: uint32(s.length), LKey: uint32(s.lkey)})
			}
		}
		var ra, ca, sw C.uint64_t
		var rk, qpn, qkey, imm, inv C.uint32_t
		var ahp *C.struct_ibv_ah
		C.vsh_send_wr_fields(w, &ra, &rk, &ca, &sw, &ahp, &qpn, &qkey, &imm, &inv)
		o.RemoteAddr, o.RKey, o.CompareAdd, o.Swap = uint64(ra), uint32(rk), uint64(ca), uint64(sw)
		o.AHSet, o.RemoteQPN, o.RemoteQKey = ahp == dummyAH, uint32(qpn), uint32(qkey)
		binary.NativeEndian.PutUint32(o.ImmWire[:], uint32(imm))
		o.InvRKey = uint32(inv)
		o.RemoteSRQN = uint32(C.vsh_send_wr_remote_srqn(w))
	}
	return out
}

// hookFake returns a context, PD and CQ whose C objects are zeroed dummies:
// enough for the paths that refuse before calling libibverbs, which must
// never touch them. done frees them.
func hookFake() (ctx *context, p *pd, q *cq, done func()) {
	cc := (*C.struct_ibv_context)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ibv_context{}))))
	cp := (*C.struct_ibv_pd)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ibv_pd{}))))
	ccq := (*C.struct_ibv_cq)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ibv_cq{}))))
	ctx = &context{c: cc, mrs: map[*mr]struct{}{}, qps: map[*C.struct_ibv_qp]*qp{}, cqs: map[*C.struct_ibv_cq]*cq{}, srqs: map[*C.struct_ibv_srq]*srq{}}
	ctx.facts.Attr.PhysPortCnt = 1
	p = &pd{ctx: ctx, c: cp}
	q = &cq{ctx: ctx, c: ccq}
	return ctx, p, q, func() {
		C.free(unsafe.Pointer(cc))
		C.free(unsafe.Pointer(cp))
		C.free(unsafe.Pointer(ccq))
	}
}

// hookFakeQP returns a QP of type t on the fake context with a dummy C
// object, for refusals on the data path.
func hookFakeQP(ctx *context, p *pd, t verbs.QPType) (*qp, func()) {
	cq := (*C.struct_ibv_qp)(C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ibv_qp{}))))
	cq.state = C.IBV_QPS_RTS
	x := &qp{ctx: ctx, pd: p, c: cq, typ: t, caps: verbs.QPCap{MaxSendSGE: 1, MaxInlineData: 64}}
	return x, func() { C.free(unsafe.Pointer(cq)) }
}
