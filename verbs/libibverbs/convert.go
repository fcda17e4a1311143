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
	"github.com/vsh-rdma/vsh/verbs/internal/cabi"
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

// The attribute conversions both directions share (verbs/internal/cabi).

func ahAttrToC(a *verbs.AHAttr, c *C.struct_ibv_ah_attr) { cabi.AHAttrToC(a, unsafe.Pointer(c)) }

func ahAttrFromC(c *C.struct_ibv_ah_attr) verbs.AHAttr { return cabi.AHAttrFromC(unsafe.Pointer(c)) }

func capToC(a verbs.QPCap, c *C.struct_ibv_qp_cap) { cabi.CapToC(a, unsafe.Pointer(c)) }

func capFromC(c *C.struct_ibv_qp_cap) verbs.QPCap { return cabi.CapFromC(unsafe.Pointer(c)) }

func qpAttrToC(a *verbs.QPAttr, c *C.struct_ibv_qp_attr) { cabi.QPAttrToC(a, unsafe.Pointer(c)) }

func qpAttrFromC(c *C.struct_ibv_qp_attr) verbs.QPAttr { return cabi.QPAttrFromC(unsafe.Pointer(c)) }

func srqAttrFromC(c *C.struct_ibv_srq_attr) verbs.SRQAttr {
	return cabi.SRQAttrFromC(unsafe.Pointer(c))
}
