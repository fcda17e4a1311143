package shell

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// kind is the type of object a handle names.
type kind int

const (
	kCtx kind = iota
	kPD
	kMR
	kChan
	kCQ
	kSRQ
	kQP
	kAH
	kXRCD
	numKinds
)

var kindInfo = [numKinds]struct {
	prefix string // handle prefix: ctx0, pd0, ...
	noun   string // for messages
	create string // the command that makes one
}{
	kCtx:  {"ctx", "device context", "open_device A"},
	kPD:   {"pd", "protection domain", "alloc_pd ctx0"},
	kMR:   {"mr", "memory region", "reg_mr pd0 length=4096 access=local_write"},
	kChan: {"ch", "completion channel", "create_comp_channel ctx0"},
	kCQ:   {"cq", "completion queue", "create_cq ctx0 cqe=16"},
	kSRQ:  {"srq", "shared receive queue", "create_srq pd0 max_wr=64 max_sge=1"},
	kQP:   {"qp", "queue pair", "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0"},
	kAH:   {"ah", "address handle", "create_ah pd0 dgid=qp1 sgid_index=1"},
	kXRCD: {"xrcd", "XRC domain", "open_xrcd ctx0"},
}

func (k kind) String() string { return kindInfo[k].noun }

// object is one verbs object the session created, under its handle.
type object struct {
	name   string
	kind   kind
	seq    int     // creation order across all kinds
	at     int     // index in handles.order
	parent *object // ctx for pd/cq/ch/xrcd; pd for mr/qp/srq/ah; xrcd for an XRC_RECV QP
	dev    string  // device name

	ctx verbs.Context
	pd  verbs.PD
	mr  verbs.MR
	ch  verbs.CompChannel
	cq  verbs.CQ
	srq verbs.SRQ
	qp  verbs.QP
	ah  verbs.AH
	xd  verbs.XRCD

	// XRC domain: how it was opened (file= and oflags=).
	xrcdPath  string
	xrcdFlags verbs.XRCDOFlags
	// SRQ: its type; an XRC SRQ's domain (xrcdObj) and the CQ its
	// receives complete on (recvCQ).
	srqType verbs.SRQType
	xrcdObj *object

	// QP: its creation attributes, as handles.
	qpType         verbs.QPType
	sendCQ, recvCQ *object
	srqObj         *object
	chObj          *object

	// What the application has posted and not yet seen complete, as vsh
	// counts it from posts and polled completions: the queue occupancy
	// shown where the backend cannot be inspected.
	sent    []uint64    // QP: wr_ids of posted sends, oldest first
	recvs   int         // QP or SRQ: posted receives not yet completed
	sqDepth int         // QP: the send queue's depth (cap.max_send_wr)
	rqDepth int         // QP: receive queue depth; SRQ: max_wr
	groups  []verbs.GID // QP: the multicast groups it is attached to, in order
	// path holds the states a QP went through, for show --diagram
	// (notePath); pathCut says its oldest were let go.
	path    []verbs.QPState
	pathCut bool
	// stash holds completions a lesson's judge took off a CQ to look at
	// them where the backend cannot show a CQ's contents; poll_cq returns
	// them first.
	stash []verbs.WC
}

// trackGroup notes an attach (or detach) of the multicast group g.
func (o *object) trackGroup(g verbs.GID, attach bool) {
	for i, x := range o.groups {
		if x == g {
			if !attach {
				o.groups = append(o.groups[:i:i], o.groups[i+1:]...)
			}
			return
		}
	}
	if attach {
		o.groups = append(o.groups, g)
	}
}

// handles is the session's table of objects.
type handles struct {
	byName map[string]*object
	// order holds the live objects in creation order, nil where one
	// left; the holes are squeezed out once they outnumber the objects,
	// so that removing n objects costs O(n) in any order.
	order []*object
	holes int
	// walked counts the slots compaction has gone through, so that tests
	// can check teardown is linear without timing it.
	walked int
	next   [numKinds]int
	seq    int
}

func newHandles() *handles { return &handles{byName: map[string]*object{}} }

// add names a new object of kind k: qp0, qp1, ... Numbers are never reused
// within a session (until reset), so a transcript's names stay unambiguous.
func (h *handles) add(o *object) *object {
	o.name = fmt.Sprintf("%s%d", kindInfo[o.kind].prefix, h.next[o.kind])
	h.next[o.kind]++
	h.seq++
	o.seq = h.seq
	h.byName[o.name] = o
	o.at = len(h.order)
	h.order = append(h.order, o)
	return o
}

func (h *handles) remove(o *object) {
	if o.at < 0 || o.at >= len(h.order) || h.order[o.at] != o {
		return // removed already
	}
	delete(h.byName, o.name)
	h.order[o.at], o.at = nil, -1
	if h.holes++; h.holes > len(h.byName) {
		h.compact()
	}
}

// clear removes every object at once; numbering goes on.
func (h *handles) clear() {
	for _, o := range h.order {
		if o != nil {
			o.at = -1
		}
	}
	h.byName, h.order, h.holes = map[string]*object{}, nil, 0
}

// compact squeezes the holes out of order, into a smaller slice when most
// of it is spare (a million objects gone should not pin their slots).
func (h *handles) compact() {
	h.walked += len(h.order)
	inPlace := cap(h.order) <= 4*(len(h.byName)+16)
	live := h.order[:0]
	if !inPlace {
		live = make([]*object, 0, 2*len(h.byName))
	}
	for _, o := range h.order {
		if o != nil {
			o.at = len(live)
			live = append(live, o)
		}
	}
	if inPlace {
		clear(h.order[len(live):])
	}
	h.order, h.holes = live, 0
}

// all returns the live objects in creation order, in a slice of the
// caller's.
func (h *handles) all() []*object {
	out := make([]*object, 0, len(h.byName))
	for _, o := range h.order {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// ofKind returns the live objects of kind k in creation order.
func (h *handles) ofKind(k kind) []*object {
	var out []*object
	for _, o := range h.all() {
		if o.kind == k {
			out = append(out, o)
		}
	}
	return out
}

func (h *handles) names(k kind) []string {
	var out []string
	for _, o := range h.ofKind(k) {
		out = append(out, o.name)
	}
	return out
}

// children returns the live objects whose parent is o.
func (h *handles) children(o *object) []*object {
	var out []*object
	for _, c := range h.all() {
		if c.parent == o {
			out = append(out, c)
		}
	}
	return out
}

// users returns the live objects that use o other than as parent: QPs that
// use a CQ or SRQ, CQs that use a channel, XRC SRQs that use a CQ and an
// XRC domain.
func (h *handles) users(o *object) []*object {
	var out []*object
	for _, c := range h.all() {
		if c.sendCQ == o || c.recvCQ == o || c.srqObj == o || c.chObj == o || c.xrcdObj == o {
			out = append(out, c)
		}
	}
	return out
}

// lookup finds the object named name of kind k. Its error says what exists
// and how to make one.
func (h *handles) lookup(name string, k kind) (*object, error) {
	o, ok := h.byName[strings.ToLower(name)]
	if ok && o.kind == k {
		return o, nil
	}
	if ok {
		return nil, usagef(fmt.Sprintf("give %s handle (%s0, %s1, ...)", aNoun(kindInfo[k].noun), kindInfo[k].prefix, kindInfo[k].prefix),
			"%s is %s, not %s", o.name, aNoun(o.kind.String()), aNoun(kindInfo[k].noun))
	}
	return nil, h.notFound(name, k)
}

func (h *handles) notFound(name string, k kind) error {
	if k2, ok := kindOfName(name); ok && k2 != k {
		return usagef(fmt.Sprintf("give %s handle: %s0, %s1, ...", aNoun(kindInfo[k].noun), kindInfo[k].prefix, kindInfo[k].prefix),
			"%s names %s, not %s", strings.ToLower(name), aNoun(k2.String()), aNoun(kindInfo[k].noun))
	}
	have := h.names(k)
	if len(have) == 0 {
		return usagef("create one first: "+kindInfo[k].create, "no %s %q: there is none", kindInfo[k].noun, name)
	}
	hint := "the " + kindInfo[k].noun + "s are: " + strings.Join(have, ", ")
	if near := nearest(strings.ToLower(name), have); near != "" {
		hint = "did you mean " + near + "? " + hint
	}
	return usagef(hint, "no %s %q", kindInfo[k].noun, name)
}

// nearest wraps verbs.Nearest for the shell's suggestions.
func nearest(s string, candidates []string) string { return verbs.Nearest(s, candidates) }

// kindOfName guesses the kind from a handle's prefix: "qp3" is a QP.
func kindOfName(name string) (kind, bool) {
	name = strings.ToLower(name)
	best, bestLen := kind(0), 0
	for k := kind(0); k < numKinds; k++ {
		p := kindInfo[k].prefix
		if strings.HasPrefix(name, p) && len(p) > bestLen {
			rest := name[len(p):]
			if rest != "" && strings.Trim(rest, "0123456789") == "" {
				best, bestLen = k, len(p)
			}
		}
	}
	return best, bestLen > 0
}

// hn is an object's handle as the shell prints it, styled; NULL for none.
func (s *Shell) hn(o *object) string {
	if o == nil {
		return "NULL"
	}
	return s.st.Render(s.st.Handle, o.name)
}

// forget removes a destroyed object from the table and the watch list.
func (s *Shell) forget(o *object) {
	s.h.remove(o)
	s.snap.forget(o)
	for i := 0; i < len(s.watched); i++ {
		if s.watched[i] == o.name {
			s.watched = append(s.watched[:i], s.watched[i+1:]...)
			i--
		}
	}
}

// busyHint adds to an EBUSY what still uses the object, when the backend
// gave no hint.
func busyHint(err error, s *Shell, o *object) error {
	ve, ok := verbs.AsError(err)
	if !ok || ve.Errno != verbs.EBUSY {
		return err
	}
	var users []string
	for _, ch := range s.h.children(o) {
		users = append(users, ch.name)
	}
	for _, u := range s.h.users(o) {
		users = append(users, u.name)
	}
	if len(users) == 0 || ve.Hint != "" {
		return err
	}
	e := *ve
	e.Hint = fmt.Sprintf("destroy what uses %s first: %s", o.name, strings.Join(users, ", "))
	return &e
}

// aNoun is a kind's noun with its article: "a queue pair", "an XRC domain".
func aNoun(noun string) string {
	if strings.HasPrefix(noun, "XRC") {
		return "an " + noun
	}
	return "a " + noun
}
