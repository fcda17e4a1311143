package sim

import "github.com/vsh-rdma/vsh/verbs"

// usermem.go lets a program bring its own memory, as a C program does: an
// MR over the caller's bytes (RegUserMR), and inline data read from the
// program's memory rather than from its MRs (SetProcessMemory); and be told
// of events as they are queued (SetEventNotify). A libibverbs built on the
// simulator runs an unmodified C program's verbs this way. The exported
// entry points take the fabric's lock in api.go.

// simPD returns x as a PD of this package, or the EINVAL RegUserMR gives
// for any other.
func simPD(x verbs.PD) (*pd, error) {
	p, ok := x.(*pd)
	if !ok || p == nil {
		return nil, verbs.Errorf("ibv_reg_mr", verbs.EINVAL, "pass a PD allocated on a simulator device",
			"the PD (%T) is not one of the simulator's", x)
	}
	return p, nil
}

// regUserMR does RegUserMR's work: ibv_reg_mr of buf at iova. It makes
// allocMR's checks (checkMR, addMR) in allocMR's order, except the limits
// on the simulator's own memory: buf is the caller's, so it is neither
// counted, zeroed nor copied, and the data path reads and writes it in
// place.
func (p *pd) regUserMR(buf []byte, iova uint64, access verbs.Access) (verbs.MR, error) {
	const op = "ibv_reg_mr"
	if err := p.checkMR(op, len(buf), access); err != nil {
		return nil, err
	}
	m, err := p.addMR(op, access)
	if err != nil {
		return nil, err
	}
	m.addr, m.buf, m.length, m.user = iova, buf, len(buf), true
	return m, nil
}

// processBytes returns the n bytes at addr (n > 0) of the program's
// memory, through the reader SetProcessMemory gave; ok is false when the
// reader says they are not the program's.
func (f *Fabric) processBytes(addr uint64, n int) (b []byte, ok bool) {
	b = f.processMem(addr, n)
	if len(b) < n {
		return nil, false
	}
	return b[:n], true
}

// compQueued tells SetEventNotify's hook of a completion event on ch.
func (f *Fabric) compQueued(ch *channel) {
	if f.eventNotify != nil {
		f.eventNotify(ch, nil)
	}
}

// asyncQueued tells SetEventNotify's hook of an async event of c.
func (f *Fabric) asyncQueued(c *context) {
	if f.eventNotify != nil {
		f.eventNotify(nil, c)
	}
}

// failWhy is why one completion failed.
type failWhy struct {
	qpn    uint32
	wrid   uint64
	status verbs.WCStatus
	why    string
}

// maxWhys is how many failed completions a CQ remembers the reasons of.
const maxWhys = 64

// noteWhy remembers why wc failed, for CompletionWhy; a success, a
// flush (whose reason is the QP's error state, not the request), or a
// failure without a reason is not kept.
func (q *cq) noteWhy(wc verbs.WC, why string) {
	if wc.Status == verbs.WCSuccess || wc.Status == verbs.WCWRFlushErr || why == "" {
		return
	}
	if len(q.whys) == maxWhys {
		q.whys = append(q.whys[:0], q.whys[1:]...)
	}
	q.whys = append(q.whys, failWhy{wc.QPNum, wc.WRID, wc.Status, why})
}

// completionWhy is CompletionWhy's work: the newest reason kept for a
// completion like wc.
func (q *cq) completionWhy(wc verbs.WC) string {
	for i := len(q.whys) - 1; i >= 0; i-- {
		w := q.whys[i]
		if w.qpn == wc.QPNum && w.wrid == wc.WRID && w.status == wc.Status {
			return w.why
		}
	}
	return ""
}
