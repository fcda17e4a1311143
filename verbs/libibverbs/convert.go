//go:build linux && cgo && ibverbs

package main

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
)

// Conversions between the header's structs and the verbs package's: the
// program's arguments in, the simulator's answers out.

// setBE64 stores v in a __be64 field (node_guid, sys_image_guid).
func setBE64(dst *C.__be64, v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	*dst = C.__be64(binary.NativeEndian.Uint64(b[:]))
}

func deviceAttrToC(a *verbs.DeviceAttr, c *C.struct_ibv_device_attr) {
	*c = C.struct_ibv_device_attr{}
	setCString(c.fw_ver[:], a.FWVer)
	setBE64(&c.node_guid, a.NodeGUID)
	setBE64(&c.sys_image_guid, a.SysImageGUID)
	c.max_mr_size = C.uint64_t(a.MaxMRSize)
	c.page_size_cap = C.uint64_t(a.PageSizeCap)
	c.vendor_id = C.uint32_t(a.VendorID)
	c.vendor_part_id = C.uint32_t(a.VendorPartID)
	c.hw_ver = C.uint32_t(a.HWVer)
	c.max_qp = C.int(a.MaxQP)
	c.max_qp_wr = C.int(a.MaxQPWR)
	c.device_cap_flags = C.uint(a.DeviceCapFlags)
	c.max_sge = C.int(a.MaxSGE)
	c.max_sge_rd = C.int(a.MaxSGERd)
	c.max_cq = C.int(a.MaxCQ)
	c.max_cqe = C.int(a.MaxCQE)
	c.max_mr = C.int(a.MaxMR)
	c.max_pd = C.int(a.MaxPD)
	c.max_qp_rd_atom = C.int(a.MaxQPRdAtom)
	c.max_ee_rd_atom = C.int(a.MaxEECRdAtom)
	c.max_res_rd_atom = C.int(a.MaxResRdAtom)
	c.max_qp_init_rd_atom = C.int(a.MaxQPInitRdAtom)
	c.max_ee_init_rd_atom = C.int(a.MaxEECInitRdAtom)
	c.atomic_cap = uint32(a.AtomicCap)
	c.max_ee = C.int(a.MaxEE)
	c.max_rdd = C.int(a.MaxRDD)
	c.max_mw = C.int(a.MaxMW)
	c.max_raw_ipv6_qp = C.int(a.MaxRawIPv6QP)
	c.max_raw_ethy_qp = C.int(a.MaxRawEthyQP)
	c.max_mcast_grp = C.int(a.MaxMcastGrp)
	c.max_mcast_qp_attach = C.int(a.MaxMcastQPAttach)
	c.max_total_mcast_qp_attach = C.int(a.MaxTotalMcastQPAtt)
	c.max_ah = C.int(a.MaxAH)
	c.max_fmr = C.int(a.MaxFMR)
	c.max_map_per_fmr = C.int(a.MaxMapPerFMR)
	c.max_srq = C.int(a.MaxSRQ)
	c.max_srq_wr = C.int(a.MaxSRQWR)
	c.max_srq_sge = C.int(a.MaxSRQSGE)
	c.max_pkeys = C.uint16_t(a.MaxPKeys)
	c.local_ca_ack_delay = C.uint8_t(a.LocalCAAckDelay)
	c.phys_port_cnt = C.uint8_t(a.PhysPortCnt)
}

func portAttrToC(a *verbs.PortAttr, c *C.struct_ibv_port_attr) {
	c.state = uint32(a.State)
	c.max_mtu = uint32(a.MaxMTU)
	c.active_mtu = uint32(a.ActiveMTU)
	c.gid_tbl_len = C.int(a.GIDTblLen)
	c.port_cap_flags = C.uint32_t(a.PortCapFlags)
	c.max_msg_sz = C.uint32_t(a.MaxMsgSz)
	c.bad_pkey_cntr = C.uint32_t(a.BadPKeyCntr)
	c.qkey_viol_cntr = C.uint32_t(a.QKeyViolCntr)
	c.pkey_tbl_len = C.uint16_t(a.PKeyTblLen)
	c.lid = C.uint16_t(a.LID)
	c.sm_lid = C.uint16_t(a.SMLID)
	c.lmc = C.uint8_t(a.LMC)
	c.max_vl_num = C.uint8_t(a.MaxVLNum)
	c.sm_sl = C.uint8_t(a.SMSL)
	c.subnet_timeout = C.uint8_t(a.SubnetTimeout)
	c.init_type_reply = C.uint8_t(a.InitTypeReply)
	c.active_width = C.uint8_t(a.ActiveWidth)
	c.active_speed = C.uint8_t(a.ActiveSpeed)
	c.phys_state = C.uint8_t(a.PhysState)
	c.link_layer = C.uint8_t(a.LinkLayer)
	c.flags = C.uint8_t(a.Flags)
}

// ahString prints an address vector as the shell does.
func ahString(a *verbs.AHAttr) string {
	if !a.IsGlobal {
		return fmt.Sprintf("{is_global=0 dlid=%d sl=%d port_num=%d}", a.DLID, a.SL, a.PortNum)
	}
	return fmt.Sprintf("{is_global=1 grh.dgid=%s grh.sgid_index=%d grh.hop_limit=%d sl=%d port_num=%d}",
		a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit, a.SL, a.PortNum)
}

func ahAttrToC(a *verbs.AHAttr, c *C.struct_ibv_ah_attr) {
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

func ahAttrFromC(c *C.struct_ibv_ah_attr) verbs.AHAttr {
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

func capToC(a verbs.QPCap, c *C.struct_ibv_qp_cap) {
	c.max_send_wr = C.uint32_t(a.MaxSendWR)
	c.max_recv_wr = C.uint32_t(a.MaxRecvWR)
	c.max_send_sge = C.uint32_t(a.MaxSendSGE)
	c.max_recv_sge = C.uint32_t(a.MaxRecvSGE)
	c.max_inline_data = C.uint32_t(a.MaxInlineData)
}

func capFromC(c *C.struct_ibv_qp_cap) verbs.QPCap {
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

// qpAttrToC fills every field of c from a (the mask says which count).
func qpAttrToC(a *verbs.QPAttr, c *C.struct_ibv_qp_attr) {
	c.qp_state = uint32(a.State)
	c.cur_qp_state = uint32(a.CurState)
	c.path_mtu = uint32(a.PathMTU)
	c.path_mig_state = uint32(a.PathMigState)
	c.qkey = C.uint32_t(a.QKey)
	c.rq_psn = C.uint32_t(a.RQPSN)
	c.sq_psn = C.uint32_t(a.SQPSN)
	c.dest_qp_num = C.uint32_t(a.DestQPN)
	c.qp_access_flags = C.uint(a.AccessFlags)
	capToC(a.Cap, &c.cap)
	ahAttrToC(&a.AH, &c.ah_attr)
	ahAttrToC(&a.AltAH, &c.alt_ah_attr)
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

func qpAttrFromC(c *C.struct_ibv_qp_attr) verbs.QPAttr {
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
		Cap:              capFromC(&c.cap),
		AH:               ahAttrFromC(&c.ah_attr),
		AltAH:            ahAttrFromC(&c.alt_ah_attr),
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

func srqAttrFromC(c *C.struct_ibv_srq_attr) verbs.SRQAttr {
	return verbs.SRQAttr{MaxWR: int(c.max_wr), MaxSGE: int(c.max_sge), SRQLimit: int(c.srq_limit)}
}
