//go:build linux && cgo && ibverbs

package ibverbs

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/internal/cabi"
)

// Conversions between libibverbs' structs and the verbs package's. Every
// field is converted; the round trips are tested (convert_test.go).

func goString(b []C.char) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	out := make([]byte, n)
	for i := 0; i < n; i++ {
		out[i] = byte(b[i])
	}
	return string(out)
}

// be64 reads a __be64 field (node_guid, sys_image_guid) in host order.
func be64(v C.__be64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], uint64(v))
	return binary.BigEndian.Uint64(b[:])
}

func toBE64(v uint64) C.__be64 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return C.__be64(binary.NativeEndian.Uint64(b[:]))
}

func deviceAttrFromC(c *C.struct_ibv_device_attr) verbs.DeviceAttr {
	return verbs.DeviceAttr{
		FWVer:              goString(c.fw_ver[:]),
		NodeGUID:           be64(c.node_guid),
		SysImageGUID:       be64(c.sys_image_guid),
		MaxMRSize:          uint64(c.max_mr_size),
		PageSizeCap:        uint64(c.page_size_cap),
		VendorID:           uint32(c.vendor_id),
		VendorPartID:       uint32(c.vendor_part_id),
		HWVer:              uint32(c.hw_ver),
		MaxQP:              int(c.max_qp),
		MaxQPWR:            int(c.max_qp_wr),
		DeviceCapFlags:     uint32(c.device_cap_flags),
		MaxSGE:             int(c.max_sge),
		MaxSGERd:           int(c.max_sge_rd),
		MaxCQ:              int(c.max_cq),
		MaxCQE:             int(c.max_cqe),
		MaxMR:              int(c.max_mr),
		MaxPD:              int(c.max_pd),
		MaxQPRdAtom:        int(c.max_qp_rd_atom),
		MaxEECRdAtom:       int(c.max_ee_rd_atom),
		MaxResRdAtom:       int(c.max_res_rd_atom),
		MaxQPInitRdAtom:    int(c.max_qp_init_rd_atom),
		MaxEECInitRdAtom:   int(c.max_ee_init_rd_atom),
		AtomicCap:          uint32(c.atomic_cap),
		MaxEE:              int(c.max_ee),
		MaxRDD:             int(c.max_rdd),
		MaxMW:              int(c.max_mw),
		MaxRawIPv6QP:       int(c.max_raw_ipv6_qp),
		MaxRawEthyQP:       int(c.max_raw_ethy_qp),
		MaxMcastGrp:        int(c.max_mcast_grp),
		MaxMcastQPAttach:   int(c.max_mcast_qp_attach),
		MaxTotalMcastQPAtt: int(c.max_total_mcast_qp_attach),
		MaxAH:              int(c.max_ah),
		MaxFMR:             int(c.max_fmr),
		MaxMapPerFMR:       int(c.max_map_per_fmr),
		MaxSRQ:             int(c.max_srq),
		MaxSRQWR:           int(c.max_srq_wr),
		MaxSRQSGE:          int(c.max_srq_sge),
		MaxPKeys:           int(c.max_pkeys),
		LocalCAAckDelay:    uint8(c.local_ca_ack_delay),
		PhysPortCnt:        uint8(c.phys_port_cnt),
		// MaxInlineData: libibverbs 44 reports no device-wide inline
		// limit (neither ibv_device_attr nor ibv_device_attr_ex has one);
		// a QP's comes back from ibv_create_qp/ibv_query_qp.
	}
}

func portAttrFromC(c *C.struct_ibv_port_attr) verbs.PortAttr {
	return verbs.PortAttr{
		State:         verbs.PortState(c.state),
		MaxMTU:        verbs.MTU(c.max_mtu),
		ActiveMTU:     verbs.MTU(c.active_mtu),
		GIDTblLen:     int(c.gid_tbl_len),
		PortCapFlags:  uint32(c.port_cap_flags),
		MaxMsgSz:      uint32(c.max_msg_sz),
		BadPKeyCntr:   uint32(c.bad_pkey_cntr),
		QKeyViolCntr:  uint32(c.qkey_viol_cntr),
		PKeyTblLen:    uint16(c.pkey_tbl_len),
		LID:           uint16(c.lid),
		SMLID:         uint16(c.sm_lid),
		LMC:           uint8(c.lmc),
		MaxVLNum:      uint8(c.max_vl_num),
		SMSL:          uint8(c.sm_sl),
		SubnetTimeout: uint8(c.subnet_timeout),
		InitTypeReply: uint8(c.init_type_reply),
		ActiveWidth:   uint8(c.active_width),
		ActiveSpeed:   uint8(c.active_speed),
		PhysState:     uint8(c.phys_state),
		LinkLayer:     verbs.LinkLayer(c.link_layer),
		Flags:         uint8(c.flags),
	}
}

func gidFromC(g *C.union_ibv_gid) verbs.GID {
	return verbs.GID(*(*[16]byte)(unsafe.Pointer(g)))
}

func gidToC(g verbs.GID, c *C.union_ibv_gid) {
	*(*[16]byte)(unsafe.Pointer(c)) = g
}

// capFits reports whether every capability fits the uint32_t fields of
// struct ibv_qp_cap.
func capFits(c verbs.QPCap) (string, int, bool) {
	for _, f := range []struct {
		name string
		v    int
	}{{"max_send_wr", c.MaxSendWR}, {"max_recv_wr", c.MaxRecvWR}, {"max_send_sge", c.MaxSendSGE},
		{"max_recv_sge", c.MaxRecvSGE}, {"max_inline_data", c.MaxInlineData}} {
		if f.v < 0 || uint64(f.v) > math.MaxUint32 {
			return f.name, f.v, false
		}
	}
	return "", 0, true
}

// srqAttrFits reports whether the attributes fit struct ibv_srq_attr's
// uint32_t fields; negative values are left to the kernel's checks when
// they only matter there.
func srqAttrFits(a verbs.SRQAttr) (string, int, bool) {
	for _, f := range []struct {
		name string
		v    int
	}{{"max_wr", a.MaxWR}, {"max_sge", a.MaxSGE}, {"srq_limit", a.SRQLimit}} {
		if f.v < 0 || uint64(f.v) > math.MaxUint32 {
			return f.name, f.v, false
		}
	}
	return "", 0, true
}

func srqAttrToC(a verbs.SRQAttr, c *C.struct_ibv_srq_attr) {
	c.max_wr = C.uint32_t(a.MaxWR)
	c.max_sge = C.uint32_t(a.MaxSGE)
	c.srq_limit = C.uint32_t(a.SRQLimit)
}

// wcFromC converts one completion (verbs/internal/cabi).
func wcFromC(c *C.struct_ibv_wc, w *verbs.WC) { cabi.WCFromC(unsafe.Pointer(c), w) }

func gidTypeFromC(t C.uint32_t) verbs.GIDType {
	return verbs.GIDType(t)
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
