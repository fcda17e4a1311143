package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"sort"
	"strings"

	"github.com/vsh-rdma/vsh/shell/render/picture"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// Pictures: their width, and the most trace ladder draws.
const (
	defaultPictureWidth = 80
	maxPictureWidth     = 1000
	maxLadderPackets    = maxWireLog
)

// endpoint is a column of a ladder: a device, or one QP of a device that
// sends to itself (loopback), where only QPNs show the direction.
type endpoint struct {
	dev   string
	qpn   uint32
	byQPN bool
}

// unknownQPN stands for a sender the shell cannot name; multicastQPN is
// the destination of a multicast packet (IB_MULTICAST_QPN, ib_verbs.h).
const (
	unknownQPN   = 1 << 24
	multicastQPN = 0xffffff
)

// ladderOf builds the ladder of pkts under title.
func (s *Shell) ladderOf(pkts []wirePacket, title string) *picture.Ladder {
	loop := map[string]bool{}
	for _, p := range pkts {
		if p.from == p.to {
			loop[p.from] = true
		}
	}
	peers := s.qpPeers()
	ends := func(p *wirePacket) (src, dst endpoint) {
		src, dst = endpoint{dev: p.from}, endpoint{dev: p.to}
		if loop[p.from] {
			src.byQPN, src.qpn = true, p.sourceQPN(peers)
		}
		if loop[p.to] {
			dst.byQPN, dst.qpn = true, p.hdr.BTH.DestQP
		}
		return src, dst
	}
	col := map[endpoint]int{}
	var cols []endpoint
	for i := range pkts {
		src, dst := ends(&pkts[i])
		for _, e := range []endpoint{src, dst} {
			if _, ok := col[e]; !ok {
				col[e] = len(cols)
				cols = append(cols, e)
			}
		}
	}
	order := s.deviceOrder()
	sort.SliceStable(cols, func(i, j int) bool {
		a, b := cols[i], cols[j]
		if order(a.dev) != order(b.dev) {
			return order(a.dev) < order(b.dev)
		}
		return a.qpn < b.qpn
	})
	l := &picture.Ladder{Title: title, TimeTitle: "sent at"}
	for i, e := range cols {
		col[e] = i
		l.Columns = append(l.Columns, picture.Column{Name: e.dev, Sub: s.endpointQPs(e, pkts, peers)})
	}
	for i := range pkts {
		p := &pkts[i]
		src, dst := ends(p)
		a := p.arrow()
		a.From, a.To = col[src], col[dst]
		l.Arrows = append(l.Arrows, a)
	}
	return l
}

// deviceOrder ranks device names as the session lists the devices.
func (s *Shell) deviceOrder() func(string) int {
	rank := map[string]int{}
	for i, d := range s.devs {
		rank[d.Name()] = i
	}
	return func(name string) int {
		if r, ok := rank[name]; ok {
			return r
		}
		return len(rank)
	}
}

// qpPeer is a live QP and the QP it sends to (its dest_qp_num).
type qpPeer struct {
	o    *object
	dest uint32
}

// qpPeers lists the session's QPs with their destination QPNs.
func (s *Shell) qpPeers() []qpPeer {
	var out []qpPeer
	for _, o := range s.h.ofKind(kQP) {
		a, _, err := o.qp.Query(verbs.AttrDestQPN)
		if err != nil {
			continue
		}
		out = append(out, qpPeer{o, a.DestQPN})
	}
	return out
}

// sourceQPN is the QPN of the QP that sent p: a UD packet says it (DETH);
// otherwise it is the QP on the sending device connected to p's
// destination, or unknownQPN.
func (p *wirePacket) sourceQPN(peers []qpPeer) uint32 {
	if !p.decoded {
		return unknownQPN
	}
	if p.hdr.BTH.Opcode.Has(wire.HasDETH) {
		return p.hdr.DETH.SrcQP
	}
	for _, q := range peers {
		if q.o.dev == p.from && q.dest == p.hdr.BTH.DestQP {
			return q.o.qp.Num()
		}
	}
	return unknownQPN
}

// endpointQPs says which QPs a column stands for: "qp0 0x000011", or the
// handles of the QPs of a device that the packets went between.
func (s *Shell) endpointQPs(e endpoint, pkts []wirePacket, peers []qpPeer) string {
	if e.byQPN {
		switch e.qpn {
		case unknownQPN:
			return "QP ?"
		case multicastQPN:
			return "multicast"
		}
		return qpLabel(s.qpHandle(e.dev, e.qpn), e.qpn)
	}
	var names []string
	seen := map[uint32]bool{}
	add := func(qpn uint32) {
		if qpn == unknownQPN || qpn == multicastQPN || seen[qpn] {
			return
		}
		seen[qpn] = true
		names = append(names, qpLabel(s.qpHandle(e.dev, qpn), qpn))
	}
	for i := range pkts {
		p := &pkts[i]
		if p.to == e.dev && p.decoded {
			add(p.hdr.BTH.DestQP)
		}
		if p.from == e.dev {
			add(p.sourceQPN(peers))
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	for i, n := range names { // several: their handles alone
		names[i] = strings.Fields(n)[0]
	}
	return strings.Join(names, " ")
}

// qpLabel is "qp0 0x000011", or the number alone for a QP with no handle.
func qpLabel(handle string, qpn uint32) string {
	if handle == "" {
		return hex24(qpn)
	}
	return handle + " " + hex24(qpn)
}

// qpHandle is the handle of the live QP numbered qpn on dev, or "".
func (s *Shell) qpHandle(dev string, qpn uint32) string {
	for _, o := range s.h.ofKind(kQP) {
		if o.dev == dev && o.qp.Num() == qpn {
			return o.name
		}
	}
	return ""
}

// arrow is the packet as a ladder draws it: its label, marks and note.
func (p *wirePacket) arrow() picture.Arrow {
	a := picture.Arrow{Time: p.time.String(), Dropped: p.dropped(), Retransmit: p.resent}
	switch {
	case a.Dropped:
		a.Note = p.verdict
	case p.verdict == "sent":
		a.Note = "in flight: step or run delivers it"
	case strings.HasPrefix(p.verdict, "delivered, "):
		a.Note = strings.TrimPrefix(p.verdict, "delivered, ") // discarded by the responder
	}
	if !p.decoded {
		words := strings.Fields(wireOpcode(p.summary))
		if len(words) > 1 {
			words = words[1:] // the transport
		}
		a.Label = words
		return a
	}
	h := &p.hdr
	op := h.BTH.Opcode
	a.Label = []string{op.Name()}
	syn := h.AETH.Syndrome
	aeth := op.Has(wire.HasAETH)
	switch {
	case aeth && syn.IsRNRNAK():
		a.NAK = true
		a.Label = append(a.Label, "RNR_NAK")
		a.Note = noteOr(a.Note, "no receive WR: retry after "+syn.RNRTimer().String()+" (rnr_retry)")
	case aeth && syn.IsNAK():
		a.NAK = true
		a.Label = append(a.Label, "NAK("+syn.NAKCode().String()+")")
		a.Note = noteOr(a.Note, syn.NAKCode().Meaning())
	}
	a.Label = append(a.Label, "psn="+h.BTH.PSN.String())
	if h.BTH.AckReq {
		a.Label = append(a.Label, "AckReq")
	}
	if p.payload > 0 {
		a.Label = append(a.Label, fmt.Sprintf("len=%d", p.payload))
	}
	if aeth {
		a.Label = append(a.Label, fmt.Sprintf("msn=%d", h.AETH.MSN))
	}
	if aeth && syn.IsRNRNAK() {
		a.Label = append(a.Label, "timer="+syn.RNRTimer().String())
	}
	return a
}

// noteOr keeps a note already there (a drop says more than a NAK).
func noteOr(note, alt string) string {
	if note != "" {
		return note
	}
	return alt
}

// cellLine is cell n's command as typed, "" when the log has no such cell.
func (s *Shell) cellLine(n int) string {
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].N >= n })
	if i < len(s.log) && s.log[i].N == n {
		return s.log[i].Line
	}
	return ""
}

// ladderTitle says which packets a ladder shows.
func (s *Shell) ladderTitle(pkts []wirePacket, asked int) string {
	first, last := pkts[0].cell, pkts[len(pkts)-1].cell
	what := fmt.Sprintf("%d packet%s", len(pkts), plural(len(pkts)))
	switch {
	case asked > len(pkts):
		what = fmt.Sprintf("all %s recorded (%d asked for)", what, asked)
	case asked > 0:
		what = "the last " + what
	}
	if first == last {
		return fmt.Sprintf("%s of [%d] %s", what, first, s.cellLine(first))
	}
	return fmt.Sprintf("%s of cells [%d] to [%d]", what, first, last)
}

// traceLadder is trace ladder [N] [width=W] [svg=FILE].
func traceLadder(c *call) error {
	s := c.s
	n := 0
	if len(c.a.pos) > 1 {
		v, err := parseUint(c.a.pos[1].text, 31)
		if err != nil || v == 0 {
			return usagef(fmt.Sprintf("trace ladder 10 draws the last 10 packets (1 to %d); trace ladder alone, the last command's", maxLadderPackets),
				"ladder %s: N counts the packets to draw, from 1 up", c.a.pos[1].text)
		}
		if v > maxLadderPackets {
			return usagef(fmt.Sprintf("ask for at most %d: trace ladder %d", maxLadderPackets, maxLadderPackets),
				"ladder %d: vsh keeps only the last %d packets", v, maxLadderPackets)
		}
		n = int(v)
	}
	w, err := c.pictureWidth()
	if err != nil {
		return err
	}
	if s.wire == nil || s.wire.size() == 0 {
		if s.tr == nil {
			return usagef("trace on, then the commands that send (post_send ...), then trace ladder",
				"ladder: no packets recorded: tracing is off")
		}
		c.line("trace ladder: no packet has crossed the wire since trace on; post_send ... sends some")
		return nil
	}
	pkts := s.wire.lastCell()
	if n > 0 {
		pkts = s.wire.last(n)
	}
	if len(pkts) == 0 {
		c.line("trace ladder: the packets recorded are of the running command only; trace ladder 10 draws the last 10")
		return nil
	}
	l := s.ladderOf(pkts, s.ladderTitle(pkts, n))
	if need := l.MinWidth() + c.indent(); w < need {
		return tooNarrow(w, need, "trace ladder")
	}
	text, err := l.Text(w-c.indent(), s.st)
	if err != nil {
		return err
	}
	c.out.addKind(render.Figure, text) // drawn to fit: never wrapped
	return c.picture(l.SVG)
}

// indent is how far the cell's output lines are indented: "[12] ".
func (c *call) indent() int {
	if c.cell == nil {
		return 0
	}
	return len(fmt.Sprintf("[%d] ", c.cell.N))
}

// pictureWidth reads width=, the widest line of a picture; without it, the
// session's width when it has one (--width, the terminal's), else 80.
func (c *call) pictureWidth() (int, error) {
	if sw := c.s.width(); !c.has("width") && sw > 0 {
		return min(max(sw, 20), maxPictureWidth), nil
	}
	w, err := c.num("width", 31)
	if err != nil {
		return 0, err
	}
	if w < 20 || w > maxPictureWidth {
		return 0, usagef(fmt.Sprintf("give width= from 20 to %d: width=80", maxPictureWidth), "width=%d is out of range", w)
	}
	return int(w), nil
}

// tooNarrow is the error of a picture that does not fit width=w.
func tooNarrow(w, need int, cmd string) error {
	return usagef(fmt.Sprintf("%s width=%d", cmd, need), "width=%d is too narrow for this picture: it needs %d columns", w, need)
}

// maxCellSVG bounds a picture an HTML notebook embeds.
const maxCellSVG = 1 << 20

// picture keeps how to draw the picture as SVG with the cell, for an HTML
// notebook (save FILE.html draws it then), and writes it to the svg= file
// when one is given.
func (c *call) picture(svg func() (string, error)) error {
	file := c.raw("svg")
	if c.has("svg") && file == "" {
		return usagef("svg=picture.svg", "svg= needs a file name")
	}
	if c.cell != nil {
		c.cell.svgs = append(c.cell.svgs, svg)
	}
	if !c.has("svg") {
		return nil
	}
	doc, err := svg()
	if err != nil {
		return err
	}
	if err := c.s.files.WriteFile(file, []byte(doc)); err != nil {
		return err
	}
	c.line("SVG written to %s (%d bytes)", file, len(doc))
	return nil
}
