package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

func createCompChannelCmd() *command {
	return &command{Name: "create_comp_channel", Group: gCQ, Usage: "create_comp_channel CTX",
		Summary: "Create a completion event channel (ibv_create_comp_channel): ch0",
		Help:    "A channel lets a program sleep until a CQ it armed with req_notify_cq gets a completion.",
		Args:    []argSpec{argCtx}, run: cmdCreateChannel}
}

func cmdCreateChannel(c *call) error {
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	ch, err := ctx.ctx.CreateCompChannel()
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kChan, ch: ch, parent: ctx, dev: ctx.dev})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_comp_channel", Args: c.s.hn(ctx), Result: "→ " + c.s.hn(o)})
	return nil
}

func destroyCompChannelCmd() *command {
	return &command{Name: "destroy_comp_channel", Group: gCQ, Usage: "destroy_comp_channel CH",
		Summary: "Destroy a completion channel (ibv_destroy_comp_channel)",
		Args:    []argSpec{pos("CH", vChan, true, "a completion channel: ch0")}, run: cmdDestroyChannel}
}

func cmdDestroyChannel(c *call) error {
	o, err := c.obj(0, kChan)
	if err != nil {
		return err
	}
	if err := o.ch.Destroy(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_destroy_comp_channel", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func createCQCmd() *command {
	return &command{Name: "create_cq", Group: gCQ, Usage: "create_cq CTX [cqe=16] [channel=CH] [comp_vector=0]",
		Summary: "Create a completion queue (ibv_create_cq): cq0",
		Help:    "The device may give more entries than cqe asks for. Size it for every signaled send and every receive that can be outstanding, or it overflows.",
		Args: []argSpec{argCtx, key("cqe", vNum, "16", "the least number of entries"),
			key("channel", vChan, "none", "a completion channel for events"),
			key("comp_vector", vNum, "0", "the completion vector")},
		run: cmdCreateCQ}
}

func cmdCreateCQ(c *call) error {
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	cqe, err := c.intArg("cqe")
	if err != nil {
		return err
	}
	vec, err := c.intArg("comp_vector")
	if err != nil {
		return err
	}
	ch, _, err := c.keyObj("channel", kChan)
	if err != nil {
		return err
	}
	attr := verbs.CQInitAttr{CQE: cqe, CompVector: vec}
	chName := "NULL"
	if ch != nil {
		attr.Channel = ch.ch
		chName = ch.name
	}
	cq, err := ctx.ctx.CreateCQ(attr)
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kCQ, cq: cq, parent: ctx, dev: ctx.dev, chObj: ch})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_create_cq", Args: fmt.Sprintf("%s, cqe=%d, channel=%s, comp_vector=%d", c.s.hn(ctx), cqe, chName, vec), Result: "→ " + c.s.hn(o)})
	c.line("%s: cqe %d (the device rounds up what is asked)", o.name, cq.CQE())
	return nil
}

func resizeCQCmd() *command {
	return &command{Name: "resize_cq", Group: gCQ, Usage: "resize_cq CQ cqe=N",
		Summary: "Change a CQ's size (ibv_resize_cq)",
		Args:    []argSpec{argCQ, reqKey("cqe", vNum, "the new least number of entries")}, run: cmdResizeCQ}
}

func cmdResizeCQ(c *call) error {
	o, err := c.obj(0, kCQ)
	if err != nil {
		return err
	}
	cqe, err := c.intArg("cqe")
	if err != nil {
		return err
	}
	if err := o.cq.Resize(cqe); err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_resize_cq", Args: fmt.Sprintf("%s, %d", c.s.hn(o), cqe), Result: "= 0"})
	c.line("%s: cqe %d", o.name, o.cq.CQE())
	return nil
}

func destroyCQCmd() *command {
	return &command{Name: "destroy_cq", Group: gCQ, Usage: "destroy_cq CQ",
		Summary: "Destroy a completion queue (ibv_destroy_cq)",
		Help:    "Fails with EBUSY while a QP uses it.",
		Args:    []argSpec{argCQ}, run: cmdDestroyCQ}
}

func cmdDestroyCQ(c *call) error {
	o, err := c.obj(0, kCQ)
	if err != nil {
		return err
	}
	if err := o.cq.Destroy(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_destroy_cq", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func reqNotifyCQCmd() *command {
	return &command{Name: "req_notify_cq", Group: gCQ, Usage: "req_notify_cq CQ [solicited]",
		Summary: "Arm a CQ to raise one event on its channel (ibv_req_notify_cq)",
		Help:    "An armed CQ raises one event on its channel at the next completion (with solicited: the next solicited or error completion), then must be armed again.",
		Args:    []argSpec{argCQ, flag("solicited", "only solicited or error completions raise the event", "solicited_only")},
		run:     cmdReqNotify}
}

func cmdReqNotify(c *call) error {
	o, err := c.obj(0, kCQ)
	if err != nil {
		return err
	}
	sol := c.a.flags["solicited"]
	if err := o.cq.ReqNotify(sol); err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_req_notify_cq", Args: fmt.Sprintf("%s, solicited_only=%d", c.s.hn(o), b2i(sol)), Result: "= 0"})
	if o.chObj == nil {
		c.line("%s has no completion channel, so no event will be seen; create it with channel=ch0", o.name)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func getCQEventCmd() *command {
	return &command{Name: "get_cq_event", Group: gCQ, Usage: "get_cq_event CH [wait=DURATION]",
		Summary: "Take the next completion event from a channel (ibv_get_cq_event)",
		Help:    "Says which CQ raised it. Every event must be acknowledged with ack_cq_events before the CQ can be destroyed.",
		Args:    []argSpec{pos("CH", vChan, true, "a completion channel: ch0"), key("wait", vDuration, "0", "how long to wait")},
		run:     cmdGetCQEvent}
}

func cmdGetCQEvent(c *call) error {
	o, err := c.obj(0, kChan)
	if err != nil {
		return err
	}
	wait, err := c.dur("wait")
	if err != nil {
		return err
	}
	var cq verbs.CQ
	_, err = c.s.waitIn(wait, func(d time.Duration) (bool, error) {
		var err error
		cq, err = o.ch.GetEvent(d)
		if waitErr(err) {
			return false, err
		}
		return true, err
	})
	if err != nil && waitErr(err) && c.s.interrupted() {
		return c.s.stopped("get_cq_event stopped waiting for an event on %s", c.s.hn(o))
	}
	if err != nil {
		if waitErr(err) {
			if ve, ok := verbs.AsError(err); ok {
				e := *ve
				e.Hint = c.s.noEventHint(o)
				return &e
			}
		}
		return err
	}
	name := "a CQ"
	for _, x := range c.s.h.ofKind(kCQ) {
		if x.cq == cq {
			name = c.s.hn(x)
		}
	}
	c.s.flushWire(c, nil) // the packets that led to the event, above it
	c.verbs(VerbCall{Name: "ibv_get_cq_event", Args: c.s.hn(o), Result: fmt.Sprintf("→ %s", name)})
	c.line("acknowledge it with ack_cq_events, arm the CQ again with req_notify_cq, then poll it")
	return nil
}

// noEventHint says why a completion channel has no event, and what a
// program would be doing meanwhile: ibv_get_cq_event on a blocking channel
// sleeps, where vsh reads it without blocking.
func (s *Shell) noEventHint(ch *object) string {
	var cqs []string
	for _, x := range s.h.ofKind(kCQ) {
		if x.chObj == ch {
			cqs = append(cqs, x.name)
		}
	}
	if len(cqs) == 0 {
		return fmt.Sprintf("no CQ uses %s, so no event can come (a program's ibv_get_cq_event would sleep for ever): "+
			"create_cq %s channel=%s", ch.name, ch.parent.name, ch.name)
	}
	return fmt.Sprintf("a program's ibv_get_cq_event would sleep here; vsh returns (wait= waits). "+
		"An event comes from a CQ armed with req_notify_cq (%s), once per arm, at its next completion "+
		"(with solicited, its next solicited one); completions queued before the arm raise none: poll_cq %s",
		strings.Join(cqs, ", "), cqs[0])
}

func ackCQEventsCmd() *command {
	return &command{Name: "ack_cq_events", Group: gCQ, Usage: "ack_cq_events CQ [n=1]",
		Summary: "Acknowledge completion events (ibv_ack_cq_events)",
		Help: "ibv_destroy_cq waits until every event get_cq_event returned is acknowledged. libibverbs counts whatever n it is given, " +
			"so acknowledging more events than were read makes ibv_destroy_cq wait for ever: vsh refuses that.",
		Args: []argSpec{argCQ, key("n", vNum, "1", "how many events")}, run: cmdAckCQEvents}
}

func cmdAckCQEvents(c *call) error {
	o, err := c.obj(0, kCQ)
	if err != nil {
		return err
	}
	n, err := c.count("n", 1<<20)
	if err != nil {
		return err
	}
	if ec, ok := o.cq.(verbs.EventCounter); ok && n > ec.UnackedEvents() {
		// ibv_ack_cq_events returns nothing and counts whatever it is
		// given: the hang comes later, in ibv_destroy_cq.
		u, h := ec.UnackedEvents(), o.name
		read, hint := fmt.Sprintf("only %d completion event%s of %s, read with get_cq_event, %s", u, plural(u), h, isAre(u)), fmt.Sprintf("ack_cq_events %s n=%d", h, u)
		if u == 0 {
			read, hint = "no completion event of "+h+", read with get_cq_event, is", "get_cq_event, then ack_cq_events "+h
		}
		return usagef(hint, "ibv_ack_cq_events(%s, %d) refused: %s not yet acknowledged; libibverbs would count all %d, "+
			"and ibv_destroy_cq would then wait for ever for events that never come", h, n, read, n)
	}
	o.cq.AckEvents(n)
	c.verbs(VerbCall{Name: "ibv_ack_cq_events", Args: fmt.Sprintf("%s, %d", c.s.hn(o), n)})
	return nil
}

// pollSlice is how many completions one ibv_poll_cq call may take.
const maxPoll = 4096

func pollCQCmd() *command {
	return &command{Name: "poll_cq", Aliases: []string{"poll"}, Group: gData, Usage: "poll_cq CQ [n=16] [wait=DURATION]",
		Summary: "Take completions off a CQ (ibv_poll_cq) and print them",
		Help: "Polling takes completions off the CQ: each is seen once. wait= keeps polling until n completions came or " +
			"the time is up; on real hardware completions arrive in real time, so scripts and lessons use it. On the " +
			"simulator in auto mode, wait lets virtual time pass (retransmit and RNR timers fire); in step mode it only polls.",
		Args: []argSpec{argCQ, key("n", vNum, "16", "the most completions to take", "num_entries"),
			key("wait", vDuration, "0", "how long to keep polling")},
		run: cmdPollCQ}
}

func cmdPollCQ(c *call) error {
	o, err := c.obj(0, kCQ)
	if err != nil {
		return err
	}
	n, err := c.count("n", maxPoll)
	if err != nil {
		return err
	}
	if n == 0 {
		return usagef("n=1 or more", "n=0 polls nothing")
	}
	wait, err := c.dur("wait")
	if err != nil {
		return err
	}
	clock, t0 := c.s.virtualClock()
	wcs := make([]verbs.WC, n)
	// Completions a lesson's judge already took off the device to look at
	// them come first: for the program they were never polled.
	stashed := copy(wcs, o.stash)
	o.stash = o.stash[stashed:]
	got, calls, err := stashed, 0, error(nil)
	if stashed < n {
		var more int
		more, calls, err = c.s.poll(o.cq, wcs[stashed:], wait)
		got += more
		if err != nil {
			return err
		}
	}
	wcs = wcs[:got]
	keep := c.s.wcs.room(len(wcs), MaxLogVerbs, func(i int) int {
		k := len(c.s.log[i].Completions)
		c.s.log[i].Completions, c.s.log[i].CompletionCQs = nil, nil
		return k
	})
	c.cell.Completions = append(c.cell.Completions, wcs[:keep]...)
	for range wcs[:keep] {
		c.cell.CompletionCQs = append(c.cell.CompletionCQs, o.name)
	}
	c.s.retire(o, wcs)
	suffix := ""
	if calls > 1 {
		suffix = fmt.Sprintf(" (after %d polls)", calls)
	}
	if stashed > 0 {
		suffix += fmt.Sprintf(" (%d of them read from the device earlier, by the tutor's check)", stashed)
	}
	c.verbs(VerbCall{Name: "ibv_poll_cq", Args: fmt.Sprintf("%s, %d", c.s.hn(o), n), Result: fmt.Sprintf("= %d%s", got, suffix)})
	if got == 0 && len(c.cell.calls) > 0 {
		c.cell.calls[len(c.cell.calls)-1].Look = true // it found nothing: it only looked
	}
	if clock != nil {
		if now := clock.Now(); now-t0 > time.Millisecond {
			why := "an empty poll lets the simulator's clock run to its timers, as time passes for a program spinning on ibv_poll_cq"
			if wait > 0 {
				why = "poll_cq waited on the simulator's clock"
			}
			c.line("virtual time ran %s forward, to t=%s: %s; no wall time passed", (now - t0).Round(time.Microsecond), now, why)
		}
	}
	c.s.flushWire(c, nil) // what happened on the wire while it polled
	if got == 0 {
		c.line("%s", c.s.whyNoCompletion(o))
	} else {
		c.out.addTable(c.s.wcTable(wcs, o.dev))
		failed := false
		for _, wc := range wcs {
			if wc.Status != verbs.WCSuccess {
				c.out.addKind(render.Clauses, fmt.Sprintf("wr_id %d: %s (%s); explain %s", wc.WRID, wc.Status, wc.Status.Str(), wc.Status))
				failed = true
			}
		}
		if failed {
			c.line("%s", errorWCNote)
		}
	}
	if wait > 0 && got < n && c.s.interrupted() {
		return c.s.stopped("poll_cq stopped waiting with %d of the %d completions asked for", got, n)
	}
	return nil
}

// errorWCNote explains the opcode of an error completion, which rxe leaves
// zero (IBV_WC_SEND) whatever the work request was.
const errorWCNote = "opcode and byte_len mean nothing in an error completion: rxe fills only wr_id, status and qp_num " +
	"(make_send_cqe in rxe_comp.c, flush_recv_wqe in rxe_resp.c), so the opcode reads 0, IBV_WC_SEND, whatever the WR was"

// virtualClock returns the simulator's clock and its time now, or nil
// where time is wall time (real devices, the simulator's UDP link).
func (s *Shell) virtualClock() (verbs.Stepper, time.Duration) {
	st, ok := s.prov.(verbs.Stepper)
	if !ok {
		return nil, 0
	}
	if rt, ok := s.prov.(verbs.RealTimeClock); ok && rt.RealTime() {
		return nil, 0
	}
	return st, st.Now()
}

// poll polls cq until it has len(wcs) completions or wait is over. On a
// fabric that can be stepped, in auto mode, waiting lets virtual time pass;
// elsewhere it polls in real time.
func (s *Shell) poll(cq verbs.CQ, wcs []verbs.WC, wait time.Duration) (got, calls int, err error) {
	var st verbs.Stepper
	virtual := false // time is the simulator's: a wait moves it
	if wait > 0 {
		st, virtual = s.prov.(verbs.Stepper)
		if rt, ok := s.prov.(verbs.RealTimeClock); ok && rt.RealTime() {
			virtual = false // on the simulator's UDP link a peer's packets arrive in real time
		}
	}
	if virtual && st.DeliveryMode() == verbs.DeliverAuto {
		// A wait lets exactly wait of virtual time pass: its polls must not
		// each run the clock on to the next timer, as an empty poll does.
		st.SetDeliveryMode(verbs.DeliverStep)
		defer st.SetDeliveryMode(verbs.DeliverAuto)
		st.Run() // what is due now, as the auto mode's poll delivers it
	} else if virtual {
		wait = 0 // stepping by hand: the person moves time
	}
	n, err := cq.Poll(wcs)
	calls = 1
	if err != nil || n == len(wcs) || wait <= 0 {
		return n, calls, err
	}
	got = n
	if virtual {
		// Time moves a millisecond at a time, so that the wait ends within
		// one of the completion that ends it (or of the fabric going idle).
		var waited time.Duration
		const step = time.Millisecond
		for waited < wait && got < len(wcs) && !s.interrupted() {
			packets, timers := st.Pending()
			if packets == 0 && timers == 0 {
				break // nothing in flight: no completion can come
			}
			d := min(step, wait-waited)
			st.Advance(d)
			waited += d
			if st.Now() >= verbs.MaxVirtualTime {
				break // time has ended: nothing more can come
			}
			n, err = cq.Poll(wcs[got:])
			calls++
			got += n
			if err != nil {
				return got, calls, err
			}
		}
		return got, calls, nil
	}
	deadline := time.Now().Add(wait)
	for got < len(wcs) && time.Now().Before(deadline) && !s.interrupted() {
		time.Sleep(time.Millisecond)
		n, err = cq.Poll(wcs[got:])
		calls++
		got += n
		if err != nil {
			return got, calls, err
		}
	}
	return got, calls, nil
}

// retire updates the queue counts of the QPs whose completions were polled:
// a receive completion retires one receive (of the QP, or of its SRQ); a
// send completion retires its WR and every unsignaled one posted before it.
// An error completion's opcode is not defined, so its wr_id tells which
// queue it came from.
func (s *Shell) retire(cq *object, wcs []verbs.WC) {
	for _, wc := range wcs {
		var qp *object
		for _, o := range s.h.ofKind(kQP) {
			if o.qp.Num() == wc.QPNum && o.dev == cq.dev && (o.sendCQ == cq || o.recvCQ == cq) {
				qp = o
				break
			}
		}
		if qp == nil {
			// An XRC_RECV QP has no CQs: its receives complete on the CQ
			// of the XRC SRQ the sender named.
			if srq := s.xrcSRQOf(cq); srq != nil && (wc.Opcode.IsRecv() || wc.Status != verbs.WCSuccess) {
				srq.recvs = max(0, srq.recvs-1)
			}
			continue
		}
		isSend := !wc.Opcode.IsRecv()
		at := -1
		for i, id := range qp.sent {
			if id == wc.WRID {
				at = i
				break
			}
		}
		if wc.Status != verbs.WCSuccess {
			isSend = at >= 0 && qp.sendCQ == cq
		}
		switch {
		case isSend && at >= 0:
			qp.sent = qp.sent[at+1:]
		case !isSend && qp.srqObj != nil:
			qp.srqObj.recvs = max(0, qp.srqObj.recvs-1)
		case !isSend:
			qp.recvs = max(0, qp.recvs-1)
		}
	}
}

// whyNoCompletion says why a poll came back empty.
func (s *Shell) whyNoCompletion(cq *object) string {
	msg := "no completion yet"
	if st, ok := s.prov.(verbs.Stepper); ok {
		packets, timers := st.Pending()
		stuck := ""
		if packets == 0 && timers == 0 {
			stuck = s.stuckSend(cq)
		}
		switch {
		case st.DeliveryMode() == verbs.DeliverStep && packets > 0:
			msg += fmt.Sprintf(": the fabric is in step mode with %d packet%s in flight; step or run delivers them", packets, plural(packets))
		case timers > 0 && st.DeliveryMode() == verbs.DeliverStep:
			msg += fmt.Sprintf(": %d timer%s armed (a retransmit or RNR retry); in step mode only advance lets time pass (poll_cq wait= only polls)", timers, plural(timers))
		case timers > 0:
			msg += fmt.Sprintf(": %d timer%s armed (a retransmit or RNR retry); advance or poll_cq wait= lets time pass", timers, plural(timers))
		case stuck != "":
			msg += ": " + stuck
		default:
			msg += ": nothing is in flight; was a signaled send or a receive posted, and did it finish?"
		}
	}
	return msg
}

// stuckSend names a QP completing on cq whose send queue holds a send that
// has not gone out while nothing is in flight, and why it may not; "" when
// there is none or the backend does not show its queues.
func (s *Shell) stuckSend(cq *object) string {
	insp, ok := s.prov.(verbs.Inspector)
	if !ok {
		return ""
	}
	for _, o := range s.h.ofKind(kQP) {
		if o.sendCQ != cq {
			continue
		}
		in, err := insp.InspectQP(o.qp)
		if err != nil {
			continue
		}
		for _, w := range in.SQ {
			if w.State != "posted" {
				continue
			}
			why := fmt.Sprintf("%s holds a send (wr_id %d) that never went out, and nothing is in flight", s.hn(o), w.WRID)
			if in.State != verbs.QPSRTS {
				return why + fmt.Sprintf(": %s is in %s, and only a QP in RTS sends (modify_qp %s state=rts)", s.hn(o), in.State, s.hn(o))
			}
			if a, _, err := o.qp.Query(verbs.AttrPathMTU | verbs.AttrPort); err == nil {
				if pa, err := ctxOf(o).QueryPort(max(a.PortNum, 1)); err == nil && a.PathMTU > pa.ActiveMTU {
					return why + fmt.Sprintf(": its path_mtu %d is above the port's active MTU %d, so its packets are too big for the link and rxe tries them again and again; "+
						"modify_qp %s state=err flushes the WR back, then connect again with path_mtu=%d or less",
						a.PathMTU.Bytes(), pa.ActiveMTU.Bytes(), s.hn(o), pa.ActiveMTU.Bytes())
				}
			}
			return why + " (show " + s.hn(o) + " --detail)"
		}
	}
	return ""
}

// wcColumns are the columns of a completion table, with libibverbs' field
// names as headers: at 80 columns wr_id, status, opcode and byte_len stay.
var wcColumns = []render.Column{{Header: "wr_id"}, {Header: "status"}, {Header: "opcode"}, {Header: "byte_len"},
	{Header: "qp_num", Drop: 4}, {Header: "src_qp", Drop: 1}, {Header: "imm_data", Drop: 3}, {Header: "wc_flags", Drop: 2}}

// wcTable is a table of completions.
func (s *Shell) wcTable(wcs []verbs.WC, dev string) render.TableView {
	var rows [][]string
	for _, wc := range wcs {
		imm := "-"
		if wc.Flags&verbs.WCWithImm != 0 {
			imm = fmt.Sprintf("0x%x", wc.Imm)
		}
		src := "-"
		if wc.SrcQP != 0 {
			src = hex24(wc.SrcQP)
		}
		status := wc.Status.String()
		flags := "0"
		if wc.Flags != 0 {
			flags = wc.Flags.String()
		}
		opcode := wc.Opcode.String()
		rows = append(rows, []string{fmt.Sprint(wc.WRID), status, opcode, fmt.Sprint(wc.ByteLen),
			s.qpName(wc.QPNum, dev), src, imm, flags})
	}
	return render.TableView{Columns: wcColumns, Rows: rows}
}

// qpName prints a QPN with its handle when the session has it: 0x000011
// (qp0). QP numbers are per device, so dev (when known) picks among QPs of
// the same number; otherwise every candidate is named.
func (s *Shell) qpName(n uint32, dev string) string {
	var names []string
	for _, o := range s.h.ofKind(kQP) {
		if o.qp.Num() == n && (dev == "" || o.dev == dev) {
			names = append(names, o.name)
		}
	}
	if len(names) == 0 {
		return hex24(n)
	}
	if dev == "" && len(names) > 1 {
		for i, nm := range names {
			names[i] = nm + " on " + s.h.byName[nm].dev
		}
		return hex24(n) + " (" + strings.Join(names, " or ") + ")"
	}
	return hex24(n) + " (" + names[0] + ")"
}
