package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/rules"
)

// rxe's device and port parameters, from drivers/infiniband/sw/rxe/rxe_param.h
// (Linux 6.1, as Debian's 6.1 kernel ships it) and rxe.c
// rxe_init_device_param / rxe_init_port_param.
const (
	defaultMaxValue      = 1 << 20 // DEFAULT_MAX_VALUE
	rxeMaxQPWR           = defaultMaxValue
	rxeMaxSGE            = 32
	rxeMaxSGERd          = 32
	rxeSGESize           = 16                      // sizeof(struct ib_sge)
	rxeMaxInlineData     = rxeMaxSGE * rxeSGESize  // RXE_MAX_WQE_SIZE - sizeof(struct rxe_send_wqe)
	rxeMaxCQ             = defaultMaxValue         // RXE_MAX_CQ
	rxeMaxLogCQE         = 15                      // RXE_MAX_LOG_CQE
	rxeMaxCQE            = (1 << rxeMaxLogCQE) - 1 // attr.max_cqe
	rxeMaxPD             = defaultMaxValue
	rxeMaxQPRdAtom       = 128
	rxeMaxResRdAtom      = 0x3f000
	rxeMaxQPInitRdAtom   = 128
	rxeMaxMcastGrp       = 8192
	rxeMaxMcastQPAttach  = 56
	rxeMaxTotMcastQPAtt  = 0x70000
	rxeMaxAH             = (1 << 15) - 1
	rxeMaxSRQWR          = defaultMaxValue
	rxeMinSRQWR          = 1
	rxeMaxSRQSGE         = 27
	rxeMinSRQSGE         = 1
	rxeMaxFMRPageListLen = 512
	rxeMaxPKeys          = 64
	rxeLocalCAAckDelay   = 15
	rxeMinQPIndex        = 16
	rxeMaxQPIndex        = defaultMaxValue
	rxeMaxQP             = defaultMaxValue - rxeMinQPIndex
	rxeMinSRQIndex       = 0x00020001
	rxeMaxSRQ            = defaultMaxValue - rxeMinSRQIndex
	rxeMinMRIndex        = 1
	rxeMaxMRIndex        = defaultMaxValue >> 1
	rxeMaxMR             = rxeMaxMRIndex - rxeMinMRIndex
	rxeMaxMW             = defaultMaxValue - (rxeMaxMRIndex + 1)
	rxeMaxPktPerAck      = 64  // RXE_MAX_PKT_PER_ACK
	rxeMaxUnackedPSNs    = 128 // RXE_MAX_UNACKED_PSNS
	rxeVendorID          = 0xFFFFFF
	rxeMaxMRSize         = ^uint64(0)
	rxePageSizeCap       = 0xfffff000

	rxePortGIDTblLen  = 1024
	rxePortMaxMsgSz   = 0x800000
	rxePortPKeyTblLen = 1

	// ib_device.num_comp_vectors: rxe uses num_possible_cpus(); the
	// simulated host has two CPUs, like the lab guest.
	numCompVectors = NumCompVectors
)

// NumCompVectors is every simulated device's num_comp_vectors (rxe gives
// num_possible_cpus(); the simulated host has two CPUs, like the lab
// guest): create_cq takes comp_vector 0 and 1.
const NumCompVectors = 2

// IB device capability bits rxe sets (RXE_DEVICE_CAP_FLAGS; values from
// uapi/rdma/ib_user_verbs.h enum ib_uverbs_device_cap_flags).
const rxeDeviceCapFlags = 1<<1 | // BAD_PKEY_CNTR
	1<<2 | // BAD_QKEY_CNTR
	1<<4 | // AUTO_PATH_MIG
	1<<5 | // CHANGE_PHY_PORT
	1<<6 | // UD_AV_PORT_ENFORCE
	1<<10 | // PORT_ACTIVE_EVENT
	1<<11 | // SYS_IMAGE_GUID
	1<<12 | // RC_RNR_NAK_GEN
	1<<13 | // SRQ_RESIZE
	1<<17 | // MEM_WINDOW
	1<<21 | // MEM_MGT_EXTENSIONS
	1<<24 // MEM_WINDOW_TYPE_2B

// deviceXRC is IB_DEVICE_XRC, which a device with XRC domains sets (mlx5;
// rxe does not): the simulator sets it when XRC is on.
const deviceXRC = 1 << 20

// rxePortCapFlags is RXE_PORT_PORT_CAP_FLAGS = IB_PORT_CM_SUP; rxe never
// sets ip_gids, so the uverbs response adds nothing.
const rxePortCapFlags = 1 << 16

// Values of struct ib_port_attr that are not in the verbs enums.
const (
	ibWidth1X          = 1
	ibSpeedSDR         = 1 // ib_get_eth_speed for a netdev of unknown speed (SPEED_1000)
	ibPortPhysLinkUp   = 5 // IB_PORT_PHYS_STATE_LINK_UP
	ibPortPhysDisabled = 3
	ibAtomicHCA        = 1 // IB_ATOMIC_HCA
)

// profile is the device's control-path rules, to decide with: rxe's, over
// this device's attributes. It is made once; the port's attributes (its
// state, a link's MTU) are read again at each call. Callers hold f.mu.
func (d *device) profile() *rules.RXE {
	if d.prof == nil {
		d.prof = &rules.RXE{Mode: rules.Decide, Attr: d.deviceAttr(), NumCompVectors: numCompVectors,
			CapNetRaw: d.f.cfg.CapNetRaw, GID: d.gidSlot, Name: d.name, XRC: d.f.cfg.XRC}
	}
	d.prof.Port = d.portAttr()
	d.prof.XRC = d.f.cfg.XRC
	return d.prof
}

// gidSlot is the GID table as the rules read it.
func (d *device) gidSlot(port uint8, i int) (verbs.GID, bool, bool) {
	g, ok := d.gid(i)
	return g, ok, true
}

// deviceAttr is what ibv_query_device returns on rxe, with IB_DEVICE_XRC
// when XRC is on.
func (d *device) deviceAttr() verbs.DeviceAttr {
	flags := uint32(rxeDeviceCapFlags)
	if d.f.cfg.XRC {
		flags |= deviceXRC
	}
	return verbs.DeviceAttr{
		FWVer:              "0.0.0", // rxe sets no firmware version
		NodeGUID:           d.guid,
		SysImageGUID:       d.guid,
		MaxMRSize:          rxeMaxMRSize,
		PageSizeCap:        rxePageSizeCap,
		VendorID:           rxeVendorID,
		VendorPartID:       0,
		HWVer:              0,
		MaxQP:              rxeMaxQP,
		MaxQPWR:            rxeMaxQPWR,
		DeviceCapFlags:     flags,
		MaxSGE:             rxeMaxSGE,
		MaxSGERd:           rxeMaxSGERd,
		MaxCQ:              rxeMaxCQ,
		MaxCQE:             rxeMaxCQE,
		MaxMR:              rxeMaxMR,
		MaxPD:              rxeMaxPD,
		MaxQPRdAtom:        rxeMaxQPRdAtom,
		MaxResRdAtom:       rxeMaxResRdAtom,
		MaxQPInitRdAtom:    rxeMaxQPInitRdAtom,
		AtomicCap:          ibAtomicHCA,
		MaxMW:              rxeMaxMW,
		MaxMcastGrp:        rxeMaxMcastGrp,
		MaxMcastQPAttach:   rxeMaxMcastQPAttach,
		MaxTotalMcastQPAtt: rxeMaxTotMcastQPAtt,
		MaxAH:              rxeMaxAH,
		MaxMapPerFMR:       0,
		MaxSRQ:             rxeMaxSRQ,
		MaxSRQWR:           rxeMaxSRQWR,
		MaxSRQSGE:          rxeMaxSRQSGE,
		MaxPKeys:           rxeMaxPKeys,
		LocalCAAckDelay:    rxeLocalCAAckDelay,
		PhysPortCnt:        1,
		MaxInlineData:      rxeMaxInlineData,
	}
}

// activeMTU is the port's active MTU, as rxe_set_mtu derived it from the
// netdev MTU; UD sends are limited to it (rxe_req.c get_mtu: mtu_cap).
func (d *device) activeMTU() verbs.MTU { return verbs.RoCEActiveMTU(d.link.cfg.MTU) }

func (d *device) portAttr() verbs.PortAttr {
	a := verbs.PortAttr{
		State:        d.portState,
		MaxMTU:       verbs.MTU4096,
		ActiveMTU:    d.activeMTU(),
		GIDTblLen:    rxePortGIDTblLen,
		PortCapFlags: rxePortCapFlags,
		MaxMsgSz:     rxePortMaxMsgSz,
		PKeyTblLen:   rxePortPKeyTblLen,
		BadPKeyCntr:  min(d.badPKeyCntr, 0xffff),
		QKeyViolCntr: min(d.qkeyViolCntr, 0xffff),
		MaxVLNum:     1,
		ActiveWidth:  ibWidth1X,
		ActiveSpeed:  ibSpeedSDR,
		PhysState:    ibPortPhysLinkUp,
		LinkLayer:    verbs.LinkLayerEthernet,
		// rxe's port is RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP, which has
		// RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP, one of the bits of
		// RDMA_CORE_PORT_IB_GRH_REQUIRED; so rdma_is_grh_required holds and
		// the uverbs response sets IBV_QPF_GRH_REQUIRED
		// (uverbs_std_types_device.c copy_port_attr_to_resp).
		Flags: verbs.PortFlagGRHRequired,
	}
	if d.portState != verbs.PortActive {
		a.PhysState = ibPortPhysDisabled
	}
	return a
}

// roundQueue is rxe_queue_init's sizing: one slot is kept empty and the
// number of slots is a power of two, so a queue asked for n entries holds
// roundup_pow_of_two(n+1) - 1.
func roundQueue(n int) int {
	slots := 1
	for slots < n+1 {
		slots <<= 1
	}
	return slots - 1
}

// roundPow2 is roundup_pow_of_two for n > 0.
func roundPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
