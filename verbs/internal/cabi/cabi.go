//go:build linux && cgo && ibverbs

package cabi

/*
#include <infiniband/verbs.h>
*/
import "C"

import (
	"encoding/binary"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// AHAttrToC fills the struct ibv_ah_attr at p from a.
func AHAttrToC(a *verbs.AHAttr, p unsafe.Pointer) {
	c := (*C.struct_ibv_ah_attr)(p)
	*(*[16]byte)(unsafe.Pointer(&c.grh.dgid)) = a.GRH.DGID
	c.grh.flow_label = C.uint32_t(a.GRH.FlowLabel)
	c.grh.sgid_index = C.uint8_t(a.GRH.SGIDIndex)
	c.grh.hop_limit = C.uint8_t(a.GRH.HopLimit)
	c.grh.traffic_class = C.uint8_t(a.GRH.TrafficClass)
	c.dlid = C.uint16_t(a.DLID)
	c.sl = C.uint8_t(a.SL)
	c.src_path_bits = C.uint8_t(a.SrcPathBits)
	c.static_rate = C.uint8_t(a.StaticRate)
	c.is_global = 0
	if a.IsGlobal {
		c.is_global = 1
	}
	c.port_num = C.uint8_t(a.PortNum)
}

// AHAttrFromC reads the struct ibv_ah_attr at p.
func AHAttrFromC(p unsafe.Pointer) verbs.AHAttr {
	c := (*C.struct_ibv_ah_attr)(p)
	return verbs.AHAttr{
		GRH: verbs.GlobalRoute{
			DGID:         verbs.GID(*(*[16]byte)(unsafe.Pointer(&c.grh.dgid))),
			FlowLabel:    uint32(c.grh.flow_label),
			SGIDIndex:    uint8(c.grh.sgid_index),
			HopLimit:     uint8(c.grh.hop_limit),
			TrafficClass: uint8(c.grh.traffic_class),
		},
		DLID:        uint16(c.dlid),
		SL:          uint8(c.sl),
		SrcPathBits: uint8(c.src_path_bits),
		StaticRate:  uint8(c.static_rate),
		IsGlobal:    c.is_global != 0,
		PortNum:     uint8(c.port_num),
	}
}

// CapToC fills the struct ibv_qp_cap at p from a.
func CapToC(a verbs.QPCap, p unsafe.Pointer) {
	c := (*C.struct_ibv_qp_cap)(p)
	c.max_send_wr = C.uint32_t(a.MaxSendWR)
	c.max_recv_wr = C.uint32_t(a.MaxRecvWR)
	c.max_send_sge = C.uint32_t(a.MaxSendSGE)
	c.max_recv_sge = C.uint32_t(a.MaxRecvSGE)
	c.max_inline_data = C.uint32_t(a.MaxInlineData)
}

// CapFromC reads the struct ibv_qp_cap at p.
func CapFromC(p unsafe.Pointer) verbs.QPCap {
	c := (*C.struct_ibv_qp_cap)(p)
	return verbs.QPCap{
		MaxSendWR:     int(c.max_send_wr),
		MaxRecvWR:     int(c.max_recv_wr),
		MaxSendSGE:    int(c.max_send_sge),
		MaxRecvSGE:    int(c.max_recv_sge),
		MaxInlineData: int(c.max_inline_data),
	}
}

func b8(v bool) C.uint8_t {
	if v {
		return 1
	}
	return 0
}

// QPAttrToC fills every field of the struct ibv_qp_attr at p from a (a
// mask says which count).
func QPAttrToC(a *verbs.QPAttr, p unsafe.Pointer) {
	c := (*C.struct_ibv_qp_attr)(p)
	c.qp_state = uint32(a.State)
	c.cur_qp_state = uint32(a.CurState)
	c.path_mtu = uint32(a.PathMTU)
	c.path_mig_state = uint32(a.PathMigState)
	c.qkey = C.uint32_t(a.QKey)
	c.rq_psn = C.uint32_t(a.RQPSN)
	c.sq_psn = C.uint32_t(a.SQPSN)
	c.dest_qp_num = C.uint32_t(a.DestQPN)
	c.qp_access_flags = C.uint(a.AccessFlags)
	CapToC(a.Cap, unsafe.Pointer(&c.cap))
	AHAttrToC(&a.AH, unsafe.Pointer(&c.ah_attr))
	AHAttrToC(&a.AltAH, unsafe.Pointer(&c.alt_ah_attr))
	c.pkey_index = C.uint16_t(a.PKeyIndex)
	c.alt_pkey_index = C.uint16_t(a.AltPKeyIndex)
	c.en_sqd_async_notify = b8(a.EnSQDAsyncNotify)
	c.sq_draining = b8(a.SQDraining)
	c.max_rd_atomic = C.uint8_t(a.MaxRdAtomic)
	c.max_dest_rd_atomic = C.uint8_t(a.MaxDestRdAtomic)
	c.min_rnr_timer = C.uint8_t(a.MinRNRTimer)
	c.port_num = C.uint8_t(a.PortNum)
	c.timeout = C.uint8_t(a.Timeout)
	c.retry_cnt = C.uint8_t(a.RetryCnt)
	c.rnr_retry = C.uint8_t(a.RNRRetry)
	c.alt_port_num = C.uint8_t(a.AltPortNum)
	c.alt_timeout = C.uint8_t(a.AltTimeout)
	c.rate_limit = C.uint32_t(a.RateLimit)
}

// QPAttrFromC reads the struct ibv_qp_attr at p.
func QPAttrFromC(p unsafe.Pointer) verbs.QPAttr {
	c := (*C.struct_ibv_qp_attr)(p)
	return verbs.QPAttr{
		State:            verbs.QPState(c.qp_state),
		CurState:         verbs.QPState(c.cur_qp_state),
		PathMTU:          verbs.MTU(c.path_mtu),
		PathMigState:     verbs.MigState(c.path_mig_state),
		QKey:             uint32(c.qkey),
		RQPSN:            uint32(c.rq_psn),
		SQPSN:            uint32(c.sq_psn),
		DestQPN:          uint32(c.dest_qp_num),
		AccessFlags:      verbs.Access(c.qp_access_flags),
		Cap:              CapFromC(unsafe.Pointer(&c.cap)),
		AH:               AHAttrFromC(unsafe.Pointer(&c.ah_attr)),
		AltAH:            AHAttrFromC(unsafe.Pointer(&c.alt_ah_attr)),
		PKeyIndex:        uint16(c.pkey_index),
		AltPKeyIndex:     uint16(c.alt_pkey_index),
		EnSQDAsyncNotify: c.en_sqd_async_notify != 0,
		SQDraining:       c.sq_draining != 0,
		MaxRdAtomic:      uint8(c.max_rd_atomic),
		MaxDestRdAtomic:  uint8(c.max_dest_rd_atomic),
		MinRNRTimer:      uint8(c.min_rnr_timer),
		PortNum:          uint8(c.port_num),
		Timeout:          uint8(c.timeout),
		RetryCnt:         uint8(c.retry_cnt),
		RNRRetry:         uint8(c.rnr_retry),
		AltPortNum:       uint8(c.alt_port_num),
		AltTimeout:       uint8(c.alt_timeout),
		RateLimit:        uint32(c.rate_limit),
	}
}

// SRQAttrFromC reads the struct ibv_srq_attr at p.
func SRQAttrFromC(p unsafe.Pointer) verbs.SRQAttr {
	c := (*C.struct_ibv_srq_attr)(p)
	return verbs.SRQAttr{MaxWR: int(c.max_wr), MaxSGE: int(c.max_sge), SRQLimit: int(c.srq_limit)}
}

// WCToC fills the struct ibv_wc at p from w. imm_data is big-endian there;
// an invalidated rkey is in host order.
func WCToC(w *verbs.WC, p unsafe.Pointer) {
	c := (*C.struct_ibv_wc)(p)
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

// WCFromC reads the struct ibv_wc at p into w. imm_data is big-endian on the wire and
// in struct ibv_wc; WC.Imm is host order. With IBV_WC_WITH_INV the union
// holds the invalidated rkey, already in host order.
func WCFromC(p unsafe.Pointer, w *verbs.WC) {
	c := (*C.struct_ibv_wc)(p)
	raw := binary.NativeEndian.Uint32(c.anon0[:]) // the imm_data/invalidated_rkey union, without a call into C
	flags := verbs.WCFlags(c.wc_flags)
	imm := raw
	if flags&verbs.WCWithImm != 0 {
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], raw)
		imm = binary.BigEndian.Uint32(b[:])
	}
	*w = verbs.WC{
		WRID:         uint64(c.wr_id),
		Status:       verbs.WCStatus(c.status),
		Opcode:       verbs.WCOpcode(c.opcode),
		VendorErr:    uint32(c.vendor_err),
		ByteLen:      uint32(c.byte_len),
		Imm:          imm,
		QPNum:        uint32(c.qp_num),
		SrcQP:        uint32(c.src_qp),
		Flags:        flags,
		PKeyIndex:    uint16(c.pkey_index),
		SLID:         uint16(c.slid),
		SL:           uint8(c.sl),
		DLIDPathBits: uint8(c.dlid_path_bits),
	}
}
