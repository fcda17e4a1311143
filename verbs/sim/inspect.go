package sim

import (
	"github.com/vsh-rdma/vsh/verbs"
)

var _ verbs.Inspector = (*Fabric)(nil)

// inspectQP does InspectQP's work.
func (f *Fabric) inspectQP(x verbs.QP) (verbs.QPInternals, error) {
	q, ok := x.(*qp)
	if t, isTgt := x.(*tgtQP); isTgt && t != nil {
		if t.closed != "" {
			return verbs.QPInternals{}, deadErr("inspect", t.qp.name(), t.closed)
		}
		q, ok = t.qp, true
	}
	if !ok || q == nil || q.pd.ctx.fab() != f {
		return verbs.QPInternals{}, verbs.Errorf("inspect", verbs.EINVAL, "", "the QP does not belong to this simulator")
	}
	if err := q.check("inspect"); err != nil {
		return verbs.QPInternals{}, err
	}
	in := verbs.QPInternals{
		State:            q.attr.State,
		SQDepth:          q.sq.maxWR,
		NextPSN:          q.req.psn,
		UnackedPSN:       q.comp.psn,
		ExpectedPSN:      q.resp.psn,
		MSN:              q.resp.msn,
		RetryLeft:        q.comp.retryCnt,
		RNRRetryLeft:     q.comp.rnrRetry,
		InflightRdAtomic: int(q.attr.MaxRdAtomic) - q.req.rdAtomic,
	}
	if in.InflightRdAtomic < 0 {
		in.InflightRdAtomic = 0
	}
	for i := q.sq.cons; i != q.sq.prod; i++ {
		w := q.sq.at(i)
		wi := verbs.WQEInfo{WRID: w.wr.WRID, Opcode: w.wr.Opcode.Short(), Length: w.dma.length, State: w.state.String()}
		if w.state != wqePosted {
			wi.FirstPSN, wi.LastPSN = w.firstPSN, w.lastPSN
		}
		in.SQ = append(in.SQ, wi)
	}
	if q.srq == nil {
		in.RQDepth = q.rq.maxWR
		for i := 0; i < q.rq.count; i++ {
			w := q.rq.at(i)
			st := "posted"
			if i == 0 && q.resp.wqe != nil {
				st = "receiving"
			}
			in.RQ = append(in.RQ, verbs.WQEInfo{WRID: w.wrID, Opcode: "recv", Length: w.length, State: st})
		}
	} else if w := q.resp.wqe; w != nil {
		in.RQ = append(in.RQ, verbs.WQEInfo{WRID: w.wrID, Opcode: "recv", Length: w.length, State: "receiving"})
	}
	for k := range q.timers {
		if t := &q.timers[k]; timerPending(t) {
			in.Timers = append(in.Timers, verbs.TimerInfo{Name: timerNames[k], Deadline: t.at})
		}
	}
	return in, nil
}

// inspectCQ does InspectCQ's work.
func (f *Fabric) inspectCQ(x verbs.CQ) (verbs.CQInternals, error) {
	c, ok := x.(*cq)
	if !ok || c == nil || c.ctx.fab() != f {
		return verbs.CQInternals{}, verbs.Errorf("inspect", verbs.EINVAL, "", "the CQ does not belong to this simulator")
	}
	if err := c.check("inspect"); err != nil {
		return verbs.CQInternals{}, err
	}
	in := verbs.CQInternals{
		Depth:         c.cqe,
		Used:          c.count,
		Armed:         c.notify != notifyNone,
		SolicitedOnly: c.notify == notifySolicited,
		Overflowed:    c.overflowed,
		Unacked:       c.compUnacked,
		Entries:       make([]verbs.WC, c.count),
	}
	for i := range in.Entries {
		in.Entries[i] = c.ring[(c.head+i)%c.cqe]
	}
	if c.ch != nil {
		for _, x := range c.ch.events {
			if x == c {
				in.Events++
			}
		}
	}
	return in, nil
}

// inspectSRQ does InspectSRQ's work.
func (f *Fabric) inspectSRQ(x verbs.SRQ) (verbs.SRQInternals, error) {
	s, ok := x.(*srq)
	if !ok || s == nil || s.pd.ctx.fab() != f {
		return verbs.SRQInternals{}, verbs.Errorf("inspect", verbs.EINVAL, "", "the SRQ does not belong to this simulator")
	}
	if err := s.check("inspect"); err != nil {
		return verbs.SRQInternals{}, err
	}
	in := verbs.SRQInternals{Depth: s.rq.maxWR, Used: s.rq.count, Limit: s.limit, Armed: s.limit > 0}
	for i := 0; i < s.rq.count; i++ {
		w := s.rq.at(i)
		in.Queue = append(in.Queue, verbs.WQEInfo{WRID: w.wrID, Opcode: "recv", Length: w.length, State: "posted"})
	}
	return in, nil
}
