package rules

import (
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
)

// CreateCQ is ibv_create_cq: uverbs' comp_vector check, then
// rxe_cq_chk_attr.
func (r *RXE) CreateCQ(cqe, compVector int) Verdict {
	const op = "ibv_create_cq"
	var v Verdict
	if n := r.NumCompVectors; (r.Mode == Decide || n > 0) && (compVector < 0 || compVector >= n) {
		v.fail(op, verbs.EINVAL, "use comp_vector=0",
			r.say("comp_vector %d is not below the device's num_comp_vectors (%d) (create_cq)",
				"comp_vector %d is not below the device's num_comp_vectors %d (create_cq)"), compVector, n)
	}
	v.Add(r.CQE(op, cqe, 0))
	return v
}

// CQE is rxe_cq_chk_attr: cqe in 1..max_cqe, and not below the completions
// the CQ holds (held; a negative held is unknown, Predict).
func (r *RXE) CQE(op string, cqe, held int) Verdict {
	var v Verdict
	switch max := r.Attr.MaxCQE; {
	case cqe <= 0:
		v.fail(op, verbs.EINVAL, r.say("ask for at least one entry", "ask for at least one entry: cqe=16"),
			r.say("cqe %d is not positive (rxe_cq_chk_attr)", "cqe %d: a CQ needs at least one entry (rxe_cq_chk_attr)"), cqe)
	case max > 0 && cqe > max:
		v.fail(op, verbs.EINVAL, fmt.Sprintf(r.say("ask for at most %d entries (query_device: max_cqe)", "ask for at most %d entries"), max),
			r.say("cqe %d is larger than the device's max_cqe %d (rxe_cq_chk_attr)", "cqe %d is above the device's max_cqe %d (rxe_cq_chk_attr)"), cqe, max)
	case cqe < held:
		v.fail(op, verbs.EINVAL, "poll the CQ first, or keep it larger",
			"cqe %d is smaller than the %d completions the CQ holds now (rxe_cq_chk_attr)", cqe, held)
	}
	if held < 0 {
		v.maybe(op, verbs.EINVAL, "poll the CQ first, or ask for more entries",
			"the CQ holds more completions than %d entries (rxe_cq_chk_attr)", cqe)
	}
	return v
}

// CreateSRQ is rxe_srq_chk_init: max_wr in 1..max_srq_wr, max_sge at most
// max_srq_sge.
func (r *RXE) CreateSRQ(a verbs.SRQAttr) Verdict {
	const op = "ibv_create_srq"
	var v Verdict
	maxWR, maxSGE := r.Attr.MaxSRQWR, r.Attr.MaxSRQSGE
	switch {
	case maxWR > 0 && a.MaxWR > maxWR:
		v.fail(op, verbs.EINVAL, fmt.Sprintf(r.say("ask for at most %d (query_device: max_srq_wr)", "ask for at most %d"), maxWR),
			r.say("max_wr %d is larger than the device's max_srq_wr %d (rxe_srq_chk_init)", "max_wr %d is above the device's max_srq_wr %d (rxe_srq_chk_init)"),
			a.MaxWR, maxWR)
	case a.MaxWR <= 0:
		v.fail(op, verbs.EINVAL, r.say("ask for at least one receive WR", "ask for at least one entry: max_wr=16"),
			r.say("max_wr %d is not positive (rxe_srq_chk_init)", "max_wr %d: an SRQ needs at least one entry (rxe_srq_chk_init)"), a.MaxWR)
	}
	if maxSGE > 0 && (a.MaxSGE > maxSGE || a.MaxSGE < 0) {
		v.fail(op, verbs.EINVAL, fmt.Sprintf(r.say("ask for at most %d (query_device: max_srq_sge)", "ask for at most %d"), maxSGE),
			r.say("max_sge %d is larger than the device's max_srq_sge %d (rxe_srq_chk_init)", "max_sge %d is above the device's max_srq_sge %d (rxe_srq_chk_init)"),
			a.MaxSGE, maxSGE)
	}
	return v
}

// SRQ is what the rules know of an SRQ being modified.
type SRQ struct {
	MaxWR int // its max_wr now
	Limit int // its armed srq_limit (0: not armed)
}

// ModifySRQ is rxe_srq_chk_attr: a new max_wr in 1..max_srq_wr and not
// below the armed limit; a limit of 0..max_wr.
func (r *RXE) ModifySRQ(s SRQ, a verbs.SRQAttr, mask verbs.SRQAttrMask) Verdict {
	const op = "ibv_modify_srq"
	var v Verdict
	maxWR := r.Attr.MaxSRQWR
	if mask&verbs.SRQAttrMaxWR != 0 {
		switch {
		case maxWR > 0 && a.MaxWR > maxWR:
			v.fail(op, verbs.EINVAL, fmt.Sprintf("ask for at most %d", maxWR),
				r.say("max_wr %d is larger than the device's max_srq_wr %d (rxe_srq_chk_attr)", "IBV_SRQ_MAX_WR %d is above the device's max_srq_wr %d (rxe_srq_chk_attr)"),
				a.MaxWR, maxWR)
		case a.MaxWR <= 0:
			v.fail(op, verbs.EINVAL, r.say("ask for at least one receive WR", "give a positive max_wr"),
				r.say("max_wr %d is not positive (rxe_srq_chk_attr)", "IBV_SRQ_MAX_WR %d: an SRQ needs at least one entry (rxe_srq_chk_attr)"), a.MaxWR)
		case s.Limit > 0 && a.MaxWR < s.Limit:
			v.fail(op, verbs.EINVAL, r.say("lower or disarm the limit first (limit=0)", fmt.Sprintf("keep max_wr at least %d, or lower the limit first", s.Limit)),
				r.say("max_wr %d is below the armed srq_limit %d (rxe_srq_chk_attr)", "IBV_SRQ_MAX_WR %d is below the armed srq_limit %d (rxe_srq_chk_attr)"),
				a.MaxWR, s.Limit)
		}
	}
	if mask&verbs.SRQAttrLimit != 0 {
		switch {
		case r.Mode == Decide && (a.SRQLimit > maxWR || a.SRQLimit < 0):
			v.fail(op, verbs.EINVAL, "use a limit between 0 and max_wr",
				"srq_limit %d is larger than the device's max_srq_wr %d (rxe_srq_chk_attr)", a.SRQLimit, maxWR)
		case a.SRQLimit > s.MaxWR:
			v.fail(op, verbs.EINVAL, fmt.Sprintf(r.say("use a limit of at most %d", "arm a limit of at most %d"), s.MaxWR),
				r.say("srq_limit %d is larger than the SRQ's max_wr %d (rxe_srq_chk_attr)", "IBV_SRQ_LIMIT %d is above the SRQ's max_wr %d (rxe_srq_chk_attr)"),
				a.SRQLimit, s.MaxWR)
		case a.SRQLimit < 0:
			v.fail(op, verbs.EINVAL, "give a limit of 0 or more", "IBV_SRQ_LIMIT %d is negative", a.SRQLimit)
		}
	}
	return v
}

// MRAccess is ib_check_mr_access for ibv_reg_mr: REMOTE_WRITE or
// REMOTE_ATOMIC without LOCAL_WRITE, bits outside IB_ACCESS_SUPPORTED,
// ON_DEMAND without on-demand paging (rxe 6.1 has none). The simulator
// checks the first two in the other order.
func (r *RXE) MRAccess(access verbs.Access) Verdict {
	const op = "ibv_reg_mr"
	var v Verdict
	remote := access & (verbs.AccessRemoteWrite | verbs.AccessRemoteAtomic)
	noLocal := remote != 0 && access&verbs.AccessLocalWrite == 0
	extra := access &^ AccessSupported
	if r.Mode == Decide {
		if noLocal {
			v.fail(op, verbs.EINVAL, "add local_write: access=local_write,"+(access&verbs.AccessRemote).Short(),
				"%s needs IBV_ACCESS_LOCAL_WRITE too (ib_check_mr_access: memory the remote side may write must be locally writable)",
				remote.String())
		}
		if extra != 0 {
			v.fail(op, verbs.EINVAL, "use only the IBV_ACCESS_* flags", "access has unknown bits %#x (ib_check_mr_access)", uint32(extra))
		}
	} else {
		if extra != 0 {
			v.fail(op, verbs.EINVAL, "drop "+extra.String(),
				"access %s has bits no verbs flag defines (ib_check_mr_access: outside IB_ACCESS_SUPPORTED)", extra)
		}
		if noLocal {
			v.fail(op, verbs.EINVAL, "add local_write: access=local_write,"+remote.Short(),
				"%s needs IBV_ACCESS_LOCAL_WRITE too: the device writes the MR on the peer's behalf (ib_check_mr_access)", remote)
		}
	}
	if access&verbs.AccessOnDemand != 0 {
		v.fail(op, verbs.EINVAL, r.say("drop on_demand; register the memory normally", "drop on_demand: rxe in Linux 6.1 has no on-demand paging"),
			r.say("IBV_ACCESS_ON_DEMAND needs on-demand paging, which rxe in Linux 6.1 does not support (ib_check_mr_access)",
				"IBV_ACCESS_ON_DEMAND needs on-demand paging, which rxe in Linux 6.1 does not offer (ib_check_mr_access: no IBK_ON_DEMAND_PAGING)"))
	}
	return v
}

// MRLength is ib_umem_get's refusal of an empty region.
func (r *RXE) MRLength(length int) Verdict {
	var v Verdict
	if length <= 0 {
		v.fail("ibv_reg_mr", verbs.EINVAL, "register at least one byte",
			r.say("a region of %d bytes covers no page (ib_umem_get: npages == 0)", "length %d pins no page (ib_umem_get: npages == 0)"), length)
	}
	return v
}

// MRPin is ib_umem_get's charge of the pinned pages against RLIMIT_MEMLOCK
// (memlock, in bytes; all ones is unlimited) unless the process has
// CAP_IPC_LOCK. The process may have other memory pinned, so the finding is
// certain only when this registration alone is too large. The simulator
// keeps limits of its own instead.
func (r *RXE) MRPin(length int, memlock uint64, capIPCLock bool) Verdict {
	const op = "ibv_reg_mr"
	var v Verdict
	if length <= 0 || capIPCLock || memlock == ^uint64(0) {
		return v
	}
	pages := (uint64(length) + 4095) / 4096
	if pages*4096 > memlock {
		v.fail(op, verbs.ENOMEM, "raise the limit (ulimit -l unlimited) or register less",
			"pinning %d bytes exceeds the locked-memory limit of %d bytes (RLIMIT_MEMLOCK, ulimit -l; ib_umem_get)", pages*4096, memlock)
	} else {
		v.maybe(op, verbs.ENOMEM, "raise the limit (ulimit -l unlimited), deregister other MRs, or register less",
			"together with the memory this process has pinned already, %d more bytes may exceed the locked-memory limit of %d bytes (RLIMIT_MEMLOCK, ulimit -l; ib_umem_get)",
			pages*4096, memlock)
	}
	return v
}

// Mcast is ib_attach_mcast's checks, which ib_detach_mcast repeats: a
// multicast GID and a UD QP. qp names the QP for explanations.
func (r *RXE) Mcast(op, qp string, t verbs.QPType, gid verbs.GID) Verdict {
	var v Verdict
	if !gid.IsMulticast() {
		v.fail(op, verbs.EINVAL, r.say("use a multicast GID (ff0e::1, or ::ffff:239.1.1.1)", "use a multicast GID such as ff0e::1"),
			r.say("%s is not a multicast GID (ib_attach_mcast: rdma_is_multicast_addr)", "%s is not a multicast address (ib_attach_mcast: rdma_is_multicast_addr)"), gid)
	}
	if t != verbs.QPTypeUD {
		v.fail(op, verbs.EINVAL, r.say("multicast needs a UD QP", "attach a UD QP"),
			r.say(fmt.Sprintf("%s is %s; only UD QPs join multicast groups (ib_attach_mcast)", qp, t),
				fmt.Sprintf("only UD QPs join multicast groups; this one is %s (ib_attach_mcast)", t)))
	}
	return v
}

// DetachMcast is ib_uverbs_detach_mcast's refusal of a (GID, LID) the QP
// did not attach with; attached says it did.
func (r *RXE) DetachMcast(op, qp string, gid verbs.GID, lid uint16, attached bool) Verdict {
	var v Verdict
	if !attached {
		v.fail(op, verbs.EINVAL, r.say("detach with the GID and LID you attached with", "detach only a group attach_mcast attached"),
			r.say(fmt.Sprintf("%s is not attached to %s with LID %#x (ib_uverbs_detach_mcast)", qp, gid, lid),
				fmt.Sprintf("the QP is not attached to %s (ib_uverbs_detach_mcast)", gid)))
	}
	return v
}
