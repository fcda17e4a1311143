package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
)

// Multicast: uverbs keeps each QP's (GID, LID) attachments; rxe keeps, per
// device, the groups and the QPs attached to each (rxe_mcast.c). A packet
// to a multicast GID reaches every device (the switch floods it; the
// sender's own device gets it through the IP layer's multicast loopback),
// and each device hands a copy to every QP of the group that passes the
// type, state and Q_Key checks (rxe_recv.c rxe_rcv_mcast_pkt).

// mcastEntry is one ib_uverbs_mcast_entry.
type mcastEntry struct {
	gid verbs.GID
	lid uint16
}

// mcastGroup is struct rxe_mcg.
type mcastGroup struct {
	gid verbs.GID
	qps []*qp
}

// AttachMcast implements verbs.QP (ibv_attach_mcast). uverbs ignores a
// repeated (GID, LID); ib_attach_mcast wants a multicast GID and a UD QP;
// rxe_attach_mcast creates the group if needed (at most max_mcast_grp per
// device), and adds the QP (at most max_mcast_qp_attach QPs per group and
// max_total_mcast_qp_attach in all).
func (q *qp) AttachMcast(gid verbs.GID, lid uint16) error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	const op = "ibv_attach_mcast"
	if err := q.check(op); err != nil {
		return err
	}
	for _, e := range q.mcast {
		if e.gid == gid && e.lid == lid {
			return nil
		}
	}
	if err := checkMcast(op, q, gid); err != nil {
		return err
	}
	d := q.pd.ctx.dev
	g := d.mcgs[gid]
	if g == nil {
		if len(d.mcgs) >= rxeMaxMcastGrp {
			return verbs.Errorf(op, verbs.ENOMEM, "detach QPs from groups you no longer use",
				"the device has %d multicast groups already, its max_mcast_grp (rxe_get_mcg)", rxeMaxMcastGrp)
		}
		g = &mcastGroup{gid: gid}
		d.mcgs[gid] = g
	}
	if err := d.attachMcg(op, g, q); err != nil {
		if len(g.qps) == 0 {
			delete(d.mcgs, gid)
		}
		return err
	}
	q.mcast = append(q.mcast, mcastEntry{gid, lid})
	return nil
}

// attachMcg is rxe_attach_mcg.
func (d *device) attachMcg(op string, g *mcastGroup, q *qp) error {
	for _, x := range g.qps {
		if x == q {
			return nil
		}
	}
	if d.mcgAttach+1 > rxeMaxTotMcastQPAtt {
		return verbs.Errorf(op, verbs.ENOMEM, "detach QPs first",
			"the device has %d multicast attachments, its max_total_mcast_qp_attach (__rxe_init_mca)", d.mcgAttach)
	}
	if len(g.qps)+1 > rxeMaxMcastQPAttach {
		return verbs.Errorf(op, verbs.ENOMEM, "use another group, or detach a QP from this one",
			"group %s has %d QPs, the device's max_mcast_qp_attach (__rxe_init_mca)", g.gid, len(g.qps))
	}
	d.mcgAttach++
	g.qps = append(g.qps, q)
	return nil
}

// detachMcg is rxe_detach_mcg; it reports whether q was attached.
func (d *device) detachMcg(gid verbs.GID, q *qp) bool {
	g := d.mcgs[gid]
	if g == nil {
		return false
	}
	for i, x := range g.qps {
		if x == q {
			g.qps = append(g.qps[:i], g.qps[i+1:]...)
			d.mcgAttach--
			if len(g.qps) == 0 {
				delete(d.mcgs, gid)
			}
			return true
		}
	}
	return false
}

// DetachMcast implements verbs.QP (ibv_detach_mcast): uverbs wants the
// same (GID, LID) as the attach, else EINVAL; then ib_detach_mcast's checks
// and rxe_detach_mcast.
func (q *qp) DetachMcast(gid verbs.GID, lid uint16) error {
	f := q.fab()
	f.mu.Lock()
	defer f.mu.Unlock()
	const op = "ibv_detach_mcast"
	if err := q.check(op); err != nil {
		return err
	}
	found := false
	for i, e := range q.mcast {
		if e.gid == gid && e.lid == lid {
			q.mcast = append(q.mcast[:i], q.mcast[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		return verbs.Errorf(op, verbs.EINVAL, "detach with the GID and LID you attached with",
			"%s is not attached to %s with LID %#x (ib_uverbs_detach_mcast)", q.name(), gid, lid)
	}
	if err := checkMcast(op, q, gid); err != nil {
		return err
	}
	if !q.pd.ctx.dev.detachMcg(gid, q) {
		return verbs.Errorf(op, verbs.EINVAL, "", "%s is not in the device's group %s (rxe_detach_mcast)", q.name(), gid)
	}
	return nil
}

func checkMcast(op string, q *qp, gid verbs.GID) error {
	if !isMcastGID(gid) {
		return verbs.Errorf(op, verbs.EINVAL, "use a multicast GID (ff0e::1, or ::ffff:239.1.1.1)",
			"%s is not a multicast GID (ib_attach_mcast: rdma_is_multicast_addr)", gid)
	}
	if q.typ != verbs.QPTypeUD {
		return verbs.Errorf(op, verbs.EINVAL, "multicast needs a UD QP", "%s is %s; only UD QPs join multicast groups (ib_attach_mcast)", q.name(), q.typ)
	}
	return nil
}

// detachAll removes a destroyed QP from its device's groups.
func (q *qp) detachAll() {
	d := q.pd.ctx.dev
	for _, e := range q.mcast {
		d.detachMcg(e.gid, q)
	}
	q.mcast = nil
}

// receiveMcast is rxe_rcv_mcast_pkt: a copy for every QP of the group that
// takes it. It returns why nobody did, or "".
func (f *Fabric) receiveMcast(p *packet) string {
	to := p.to
	g := to.mcgs[p.dgid]
	if g == nil {
		return to.name + " has no QP attached to " + p.dgid.String()
	}
	var takers []*qp
	why := ""
	for _, q := range g.qps {
		if w := q.checkTypeState(p); w != "" {
			why = w
			continue
		}
		if w := q.checkKeys(p, p.hdr.BTH.DestQP); w != "" {
			why = w
			continue
		}
		takers = append(takers, q)
	}
	if len(takers) == 0 {
		if why == "" {
			why = "no QP of the group takes it"
		}
		return why
	}
	for i, q := range takers {
		c := p
		if i < len(takers)-1 {
			c = f.clonePacket(p)
		}
		q.rcvPkt(c)
	}
	return ""
}
