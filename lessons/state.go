package lessons

import (
	"hash/maphash"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// A snapshot is a session's objects as the judge compares them: every
// live handle with what its verbs show (ibv_query_qp, the MR's bytes as
// page hashes, a CQ's unpolled completions where the backend shows them)
// and what the session keeps about it (the work requests outstanding).
// Handles refer to each other by name: a QP's send_cq is "cq0".
type snapshot struct {
	objs     []*objSnap // in creation order
	by       map[string]*objSnap
	settings []string
	// insp is set where the backend shows queue internals (the
	// simulator): CQ arming, unacknowledged events.
	insp bool
	recs int // the session's record count when it was taken
	// sends is set on the reference after a cell that posted work.
	sends bool
	// still is set on the reference after a cell that neither posted
	// work nor left or took a completion: nothing it did completed.
	still bool
	// fabric is set where the backend shows what its fabric holds (the
	// simulator); onWire is how many packets are on it.
	fabric bool
	onWire int
}

// objSnap is one object of a snapshot.
type objSnap struct {
	h      string // the handle: qp0
	kind   string // its prefix: ctx, pd, mr, ch, cq, srq, qp, ah, xrcd
	obj    any
	dev    int    // the place of its device in the device list
	parent string // ctx for pd, ch, cq and xrcd; pd for mr, srq, qp and ah; xrcd for an XRC_RECV QP

	// MR
	length           int
	access           verbs.Access
	addr             uint64
	lkey, rkey       uint32
	pages            []uint64 // a hash of each pageSize bytes
	mrBytes          func() []byte
	kept             []byte     // a copy of the bytes, in a snapshot that keeps them
	cqe              int        // CQ
	channel          string     // CQ: its completion channel
	wcs              []verbs.WC // CQ: the completions not yet polled
	wcsKnown         bool       // CQ: wcs could be read
	armed, solicited bool       // CQ (insp)
	unacked          int        // CQ (insp): events not acknowledged
	events           int        // CQ (insp): events waiting in its channel
	overflowed       bool       // CQ (insp)
	qpType           verbs.QPType
	qpn              uint32
	sendCQ, recvCQ   string
	srq              string
	attr             verbs.QPAttr
	cap              verbs.QPCap
	sigAll           bool
	sends, recvs     int         // QP: posted, not yet retired; SRQ: recvs
	groups           []verbs.GID // QP: multicast groups attached
	dgid             gidRef      // QP (RC, UC): the address vector's dgid; AH: its dgid
	peer             string      // QP: the QP its dest_qpn names, "" when none in the session
	srqAttr          verbs.SRQAttr
	srqType          verbs.SRQType // SRQ: basic or XRC
	srqXRCD, srqCQ   string        // XRC SRQ: its domain and the CQ its receives complete on
	srqn             uint32        // XRC SRQ: its number (ibv_get_srq_num), 0 when none
	file             string        // XRC domain: the file it was opened on, "" for none
	ahAttr           verbs.AHAttr
	queryErr         error // a query that failed
	// asked names the capacities the command that made (or resized) a
	// reference object gave: only those are compared, as minimums.
	asked map[string]string
}

// gidRef is a GID as the judge compares it: the device and index it
// stands at in the session's GID tables (random by nature: the simulator's
// and a real device's differ), or the GID itself when no device has it (a
// multicast group).
type gidRef struct {
	dev, idx int // -1 when not found
	raw      verbs.GID
}

func (g gidRef) equal(h gidRef) bool {
	if g.dev >= 0 || h.dev >= 0 {
		return g.dev == h.dev && g.idx == h.idx
	}
	return g.raw == h.raw
}

const pageSize = 4096

// maxCompared is the largest MR whose bytes the judge compares: hashing and
// keeping a larger one after every command would cost the learner time and
// memory.
const maxCompared = 64 << 20

var pageSeed = maphash.MakeSeed()

// hashPages hashes b in pageSize pieces.
func hashPages(b []byte) []uint64 {
	out := make([]uint64, 0, (len(b)+pageSize-1)/pageSize)
	for i := 0; i < len(b); i += pageSize {
		out = append(out, maphash.Bytes(pageSeed, b[i:min(i+pageSize, len(b))]))
	}
	return out
}

// gidTables caches each device's GID table (port 1), read once through a
// context of the session: GIDs do not change while a lesson runs.
type gidTables struct {
	tables map[int][]verbs.GID
}

func (t *gidTables) load(dev int, ctx verbs.Context) {
	if t.tables == nil {
		t.tables = map[int][]verbs.GID{}
	}
	if _, ok := t.tables[dev]; ok || ctx == nil {
		return
	}
	var gids []verbs.GID
	n := 16
	if pa, err := ctx.QueryPort(1); err == nil && pa.GIDTblLen > 0 {
		n = min(pa.GIDTblLen, 256)
	}
	for i := 0; i < n; i++ {
		g, err := ctx.QueryGID(1, i)
		if err != nil {
			break
		}
		gids = append(gids, g)
	}
	t.tables[dev] = gids
}

// ref finds g in the tables.
func (t *gidTables) ref(g verbs.GID) gidRef {
	if g != (verbs.GID{}) {
		for dev := 0; dev < 256; dev++ {
			tab, ok := t.tables[dev]
			if !ok {
				if dev > len(t.tables)+8 {
					break
				}
				continue
			}
			for i, x := range tab {
				if x == g {
					return gidRef{dev: dev, idx: i}
				}
			}
		}
	}
	return gidRef{dev: -1, idx: -1, raw: g}
}

// keepBytes copies the bytes of every MR of the snapshot, as they are now.
func (s *snapshot) keepBytes() {
	for _, o := range s.objs {
		if o.kind == "mr" && o.mrBytes != nil {
			o.kept = append([]byte(nil), o.mrBytes()...)
		}
	}
}

// takeSnapshot reads env's objects. CQs' unpolled completions are read
// later, by fillUnpolled, once the judge knows how many to wait for.
func takeSnapshot(env Env, gids *gidTables) *snapshot {
	s := &snapshot{by: map[string]*objSnap{}, recs: env.RecordCount(), settings: env.Settings()}
	s.fabric, s.onWire = fabricOf(env)
	_, s.insp = env.Provider().(verbs.Inspector)
	handles := env.Handles()
	names := map[any]string{}
	objs := map[string]any{}
	for _, h := range handles {
		o, ok := env.Object(h)
		if !ok {
			continue
		}
		objs[h] = o
		if o != nil {
			names[o] = h
		}
	}
	name := func(o any) string {
		if o == nil {
			return ""
		}
		return names[o]
	}
	for _, h := range handles {
		o, ok := objs[h]
		if !ok {
			continue
		}
		m := handlePattern.FindStringSubmatch(h)
		if m == nil {
			continue
		}
		os := &objSnap{h: h, kind: m[1], obj: o, dev: -1}
		if in, ok := env.Info(h); ok {
			os.dev, os.sends, os.recvs = in.Device, in.Sends, in.Recvs
			os.groups, os.file = in.Groups, in.File
		}
		switch x := o.(type) {
		case verbs.Context:
			gids.load(os.dev, x)
		case verbs.PD:
			os.parent = name(x.Context())
		case verbs.CompChannel:
			os.parent = name(x.Context())
		case verbs.MR:
			os.parent = name(x.PD())
			os.length, os.access, os.addr, os.lkey, os.rkey = x.Length(), x.Access(), x.Addr(), x.LKey(), x.RKey()
			if os.length <= maxCompared {
				os.pages = hashPages(x.Bytes())
				os.mrBytes = x.Bytes
			}
		case verbs.CQ:
			os.parent = name(x.Context())
			os.cqe = x.CQE()
			if ch := x.Channel(); ch != nil {
				os.channel = name(ch)
			}
			if insp, ok := env.Provider().(verbs.Inspector); ok {
				if in, err := insp.InspectCQ(x); err == nil {
					os.armed, os.solicited, os.unacked, os.overflowed = in.Armed, in.SolicitedOnly, in.Unacked, in.Overflowed
					os.events = in.Events
				}
			}
		case verbs.XRCD:
			os.parent = name(x.Context())
		case verbs.SRQ:
			os.parent = name(x.PD())
			if ex, ok := x.(verbs.ExtendedSRQ); ok {
				os.srqType = ex.Type()
				os.srqXRCD, os.srqCQ = name(ex.XRCD()), name(ex.CQ())
				if os.srqType == verbs.SRQTypeXRC {
					if n, err := x.Num(); err == nil {
						os.srqn = n
					}
				}
			}
			if a, err := x.Query(); err == nil {
				os.srqAttr = a
			} else {
				os.queryErr = err
			}
		case verbs.AH:
			os.parent = name(x.PD())
			os.ahAttr = x.Attr()
		case verbs.QP:
			os.parent = name(x.PD())
			if dq, ok := x.(verbs.DomainQP); ok && os.parent == "" {
				os.parent = name(dq.XRCD())
			}
			os.qpType, os.qpn = x.Type(), x.Num()
			a, ia, err := x.Query(verbs.AttrAll)
			if err != nil {
				os.queryErr = err
				break
			}
			os.attr, os.cap, os.sigAll = a, capOf(a, ia), ia.SQSigAll
			os.sendCQ, os.recvCQ = name(ia.SendCQ), name(ia.RecvCQ)
			if ia.SRQ != nil {
				os.srq = name(ia.SRQ)
			}
		}
		s.objs = append(s.objs, os)
		s.by[h] = os
	}
	// References that need every object: GIDs (their devices' tables) and
	// the QP a dest_qpn names.
	for _, os := range s.objs {
		switch os.kind {
		case "ah":
			os.dgid = gids.ref(os.ahAttr.GRH.DGID)
		case "qp":
			if os.qpType == verbs.QPTypeUD || os.attr.State < verbs.QPSRTR || os.attr.State == verbs.QPSErr && os.attr.AH.GRH.DGID == (verbs.GID{}) {
				continue
			}
			os.dgid = gids.ref(os.attr.AH.GRH.DGID)
			os.peer = s.qpAt(os.attr.DestQPN, os.dgid.dev)
		}
	}
	return s
}

// fabricOf reports whether env's backend shows what its fabric holds (the
// simulator), and how many packets are on it.
func fabricOf(env Env) (bool, int) {
	st, ok := env.Provider().(verbs.Stepper)
	if !ok {
		return false, 0
	}
	n, _ := st.Pending()
	return true, n
}

// qpAt finds the QP numbered qpn on device dev (any device when dev < 0).
func (s *snapshot) qpAt(qpn uint32, dev int) string {
	for _, o := range s.objs {
		if o.kind == "qp" && o.qpn == qpn && (dev < 0 || o.dev == dev) {
			return o.h
		}
	}
	return ""
}

// srqAt finds the XRC SRQ numbered n on device dev.
func (s *snapshot) srqAt(n uint32, dev int) string {
	for _, o := range s.objs {
		if o.kind == "srq" && o.srqn != 0 && o.srqn == n && o.dev == dev {
			return o.h
		}
	}
	return ""
}

// qpsNumbered lists the QPs numbered qpn on any device.
func (s *snapshot) qpsNumbered(qpn uint32) []string {
	var out []string
	for _, o := range s.objs {
		if o.kind == "qp" && o.qpn == qpn {
			out = append(out, o.h)
		}
	}
	return out
}

// mrFor finds the MR of device dev whose key (lkey, or rkey with remote)
// is key and whose bytes hold addr; it returns its handle and the offset.
func (s *snapshot) mrFor(dev int, key uint32, addr uint64, remote bool) (string, uint64, bool) {
	for _, o := range s.objs {
		if o.kind != "mr" || (dev >= 0 && o.dev != dev) {
			continue
		}
		if o.mrKey(remote) == key && o.holds(addr) {
			return o.h, addr - o.addr, true
		}
	}
	return "", 0, false
}

// mrKey is an MR's lkey, or its rkey with remote.
func (o *objSnap) mrKey(remote bool) uint32 {
	if remote {
		return o.rkey
	}
	return o.lkey
}

// holds reports whether addr falls in an MR's bytes, or just past them.
func (o *objSnap) holds(addr uint64) bool {
	return addr >= o.addr && addr <= o.addr+uint64(o.length)
}

// mrParts says, for a key and an address no one MR has both of, the MR
// whose key (lkey, or rkey with remote) is key and the one whose bytes
// hold addr, with the offset there; "" where there is none.
func (s *snapshot) mrParts(key uint32, addr uint64, remote bool) (keyMR, atMR string, off uint64) {
	for _, o := range s.objs {
		if o.kind != "mr" {
			continue
		}
		if keyMR == "" && o.mrKey(remote) == key {
			keyMR = o.h
		}
		if atMR == "" && o.holds(addr) {
			atMR, off = o.h, addr-o.addr
		}
	}
	return keyMR, atMR, off
}

// fillUnpolled reads the unpolled completions of the CQs, waiting up to
// wait for want[cq] of them where completions arrive in real time.
func (s *snapshot) fillUnpolled(env Env, want map[string]int, wait time.Duration) {
	for _, o := range s.objs {
		if o.kind != "cq" {
			continue
		}
		n, w := want[o.h], time.Duration(0)
		if n > 0 {
			w = wait
		}
		o.wcs, o.wcsKnown = env.Unpolled(o.h, n, w)
	}
}
