package pingpong

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Stats are the figures behind rdma-core's two result lines.
type Stats struct {
	Size     int           // -s
	Iters    int           // -n
	Elapsed  time.Duration // from the first send (client) or the start of the loop (server) to its end
	CQEvents int           // completion events taken (-e)
	Polls    int           // ibv_poll_cq calls
	Posts    int           // ibv_post_send, ibv_post_recv and ibv_post_srq_recv calls
}

// Bytes is size * iters * 2: every exchange moves a message each way.
func (s Stats) Bytes() int64 { return int64(s.Size) * int64(s.Iters) * 2 }

// usec is the elapsed time as rdma-core holds it: whole microseconds in a float.
func (s Stats) usec() float32 { return float32(s.Elapsed.Microseconds()) }

// MbitPerSec is bytes * 8 / usec.
func (s Stats) MbitPerSec() float64 { return float64(s.Bytes()) * 8 / float64(s.usec()) }

// UsecPerIter is usec / iters (computed in single precision, as in C).
func (s Stats) UsecPerIter() float64 { return float64(s.usec() / float32(s.Iters)) }

// Lines returns rdma-core's result lines:
//
//	8192000 bytes in 0.01 seconds = 6024.38 Mbit/sec
//	1000 iters in 0.01 seconds = 10.88 usec/iter
func (s Stats) Lines() []string {
	sec := cfloat(float64(s.usec()) / 1e6)
	return []string{
		fmt.Sprintf("%d bytes in %s seconds = %s Mbit/sec", s.Bytes(), sec, cfloat(s.MbitPerSec())),
		fmt.Sprintf("%d iters in %s seconds = %s usec/iter", s.Iters, sec, cfloat(s.UsecPerIter())),
	}
}

// cfloat formats as printf("%.2f") does in glibc, inf and nan included.
func cfloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "-nan" // 0/0 on x86 is the negative quiet NaN
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// Start begins the loop on a connected endpoint. The client (-c: after
// writing its pattern) posts the first send on each QP; the server waits
// for a receive. This is where rdma-core starts its clock.
func (e *Endpoint) Start(client bool) error {
	if !e.connected {
		return fail("Couldn't post send", nil, "connect the endpoint (Connect) before starting the loop")
	}
	if e.started {
		return fail("Couldn't post send", nil, "the loop has started already")
	}
	e.client, e.started = client, true
	e.polls, e.posts = 0, 0
	for i := range e.pending {
		e.pending[i] = RecvWRID
	}
	if !client {
		return nil
	}
	if e.o.Check {
		e.writePattern()
	}
	for i := range e.qps {
		if err := e.postSend(i); err != nil {
			return fail("Couldn't post send", err, "")
		}
		e.pending[i] |= SendWRID
	}
	return nil
}

func (e *Endpoint) postSend(i int) error {
	e.posts++
	_, err := e.qps[i].PostSend(e.sendWRs[i : i+1])
	return err
}

// Done reports whether this side has received and sent -n messages.
func (e *Endpoint) Done() bool { return e.rcnt >= e.o.Iters && e.scnt >= e.o.Iters }

// Poll polls the CQ once, as many completions as the program does at a time
// (two; srq: rx_depth + num_qp), and handles them. It returns how many it
// handled.
func (e *Endpoint) Poll() (int, error) {
	e.polls++
	n, err := e.cq.Poll(e.wc)
	if err != nil {
		return 0, fail("poll CQ failed", err, "")
	}
	for i := 0; i < n; i++ {
		if err := e.Handle(e.wc[i]); err != nil {
			return i, err
		}
	}
	return n, nil
}

// Handle takes one completion as rdma-core's loop does: an error status
// ends the run; a send counts; a receive counts and, when few are left
// (1; srq: num_qp), the receives are topped up to rx_depth; and once both
// the send and a receive of a round are in (the pending mask), the next
// send goes out, until -n sends.
func (e *Endpoint) Handle(wc verbs.WC) error {
	if wc.Status != verbs.WCSuccess {
		return &Error{Msg: fmt.Sprintf("Failed status %s (%d) for wr_id %d", wc.Status.Str(), int(wc.Status), int(wc.WRID)),
			Hint: e.statusHint(wc)}
	}
	qi := 0
	if e.o.Transport == SRQ {
		qi = -1
		for i, qp := range e.qps {
			if qp.Num() == wc.QPNum {
				qi = i
				break
			}
		}
		if qi < 0 {
			return fail(fmt.Sprintf("Couldn't find QPN %06x", wc.QPNum), nil, "")
		}
	}
	switch wc.WRID {
	case SendWRID:
		e.scnt++
	case RecvWRID:
		got := int(wc.ByteLen)
		if e.o.Transport == UD && wc.Flags&verbs.WCGRH != 0 {
			got -= GRHSize
		}
		if got != e.o.Size {
			return fail(fmt.Sprintf("Received a %d-byte message, expected %d", got, e.o.Size), nil,
				fmt.Sprintf("the peer sends %d-byte messages but this side was started with -s %d: use the same -s on both sides", got, e.o.Size))
		}
		low := 1
		if e.o.Transport == SRQ {
			low = e.o.NumQP
		}
		e.routs--
		if e.routs <= low {
			e.routs += e.postRecv(e.o.RxDepth - e.routs)
			if e.routs < e.o.RxDepth {
				return fail(fmt.Sprintf("Couldn't post receive (%d)", e.routs), e.lastPostErr, "")
			}
		}
		e.rcnt++
	default:
		return fail(fmt.Sprintf("Completion for unknown wr_id %d", int(wc.WRID)), nil, "")
	}
	e.pending[qi] &^= int(wc.WRID)
	if e.scnt < e.o.Iters && e.pending[qi] == 0 {
		if err := e.postSend(qi); err != nil {
			return fail("Couldn't post send", err, "")
		}
		e.pending[qi] = RecvWRID | SendWRID
	}
	return nil
}

// statusHint explains a failed completion in ping-pong terms.
func (e *Endpoint) statusHint(wc verbs.WC) string {
	s := e.o.Size
	recv := wc.WRID == RecvWRID
	switch wc.Status {
	case verbs.WCRetryExcErr:
		h := "the peer never acknowledged: "
		if e.rcnt > 0 {
			h += fmt.Sprintf("it answered %d times and then stopped, so it probably ran with a smaller -n (this side has -n %d) or was stopped", e.rcnt, e.o.Iters)
		} else {
			h += "it cannot be reached (check -g and the GIDs both sides printed) or it failed after the exchange (see its output)"
		}
		if g := e.gidHint(); g != "" {
			h += "; " + g
		}
		if m := e.MTUWarning(); m != "" {
			h = m + "; " + h
		}
		return h
	case verbs.WCRNRRetryExcErr:
		return "the peer had no receive posted when the message arrived: it is not a ping-pong that posts its receives before connecting, or it stopped posting them"
	case verbs.WCRemInvReqErr:
		if recv {
			return fmt.Sprintf("an incoming message did not fit this side's receive buffer of %d bytes or broke the packet sequence: the peer uses a larger -s or another -m; use the same -s and -m on both sides", e.bufLen())
		}
		return fmt.Sprintf("the peer refused the message: its receive buffer is smaller than %d bytes (different -s), or the path MTUs differ (-m) for a message of several packets: use the same -s and -m on both sides", s)
	case verbs.WCRemOpErr:
		return fmt.Sprintf("the peer's side failed while taking the message, most often because its receive buffer is smaller than %d bytes: the peer was started with a smaller -s; use the same -s on both sides", s)
	case verbs.WCLocLenErr:
		return fmt.Sprintf("a message did not fit this side's receive buffer of %d bytes: the peer uses a larger -s; use the same -s on both sides", e.bufLen())
	case verbs.WCLocQPOpErr:
		if recv {
			return fmt.Sprintf("the receive failed: rxe ends a receive this way when the message is larger than its buffer (%d bytes here): the peer uses a larger -s; use the same -s on both sides", e.bufLen())
		}
		return "the send was refused locally (a bad work request or a failed transmit)"
	case verbs.WCWRFlushErr:
		return "the QP had already failed; an earlier completion or the peer's output has the real cause"
	case verbs.WCLocProtErr:
		return "the work request's buffer was refused locally (lkey or bounds); this is a bug in the ping-pong or the backend"
	}
	return ""
}

// MTUWarning says, when it is so, that -m exceeds the port's active MTU
// while a message needs packets of the full path MTU: such packets do not
// fit the link (on RoCE, the netdev's MTU), so they never arrive — rxe
// accepts the path MTU and then cannot send them. Empty otherwise.
func (e *Endpoint) MTUWarning() string {
	if e.o.Transport == UD {
		return ""
	}
	act := e.port.ActiveMTU.Bytes()
	if act == 0 || e.o.MTU.Bytes() <= act || e.o.Size <= act {
		return ""
	}
	return fmt.Sprintf("-m %d is larger than the port's active MTU (%d), and a %d-byte message needs packets that big: they do not fit the link (on RoCE, the netdev's MTU), so they never arrive; use -m %d or less, or raise the link's MTU",
		e.o.MTU.Bytes(), act, e.o.Size, act)
}

// stallError is the timeout of a loop that stopped moving, with the most
// likely reasons.
func (e *Endpoint) stallError(waited time.Duration, extra string) *Error {
	msg := fmt.Sprintf("No completion for %s: %d of %d messages received, %d sent", waited, e.rcnt, e.o.Iters, e.scnt)
	hint := e.stallHint()
	if extra != "" {
		hint += "; " + extra
	}
	return &Error{Msg: msg, Hint: hint, Timeout: true}
}

func (e *Endpoint) stallHint() string {
	sendOut := false
	for _, p := range e.pending {
		if p&SendWRID != 0 {
			sendOut = true
		}
	}
	reliable := e.o.Transport == RC || e.o.Transport == SRQ
	var h string
	switch {
	case e.rcnt > 0 && e.rcnt < e.o.Iters:
		h = fmt.Sprintf("the peer stopped answering after %d messages: it was probably started with a smaller -n (-n %d here; both sides need the same -n), or it was stopped", e.rcnt, e.o.Iters)
	case e.rcnt >= e.o.Iters && sendOut:
		h = "every message arrived but the last send was never acknowledged: the peer has exited already, probably because it was started with a smaller -n"
	case e.client && sendOut && reliable:
		h = "the first message was never acknowledged: the peer's QP cannot be reached — a wrong GID or -g, the two sides on different fabrics, or a peer that failed after the exchange (see its output)"
	case e.client && reliable:
		h = "the peer acknowledged the first message but never answered: it failed on it or stopped (see its output); a different -s on the two sides is the usual cause"
	case e.client:
		h = "nothing came back: the messages are dropped on the way, which UC and UD do silently — most often the two sides differ in -s (a message larger than the peer's receive buffer is dropped) or in -m, or the peer runs another program (rc, uc, ud, srq)"
	default:
		h = "the client's first message never arrived: the two sides probably differ in -s or -m (UC and UD drop what does not fit), run different programs (rc, uc, ud, srq), or cannot reach each other (check -g and the GIDs both sides printed)"
	}
	if g := e.gidHint(); g != "" {
		h = g + "; " + h
	}
	if m := e.MTUWarning(); m != "" {
		h = m + "; " + h
	}
	return h + ". Both sides must use the same program, -s, -m, -n and -q, and -g on both or neither"
}

// Run runs the loop on a connected endpoint until -n messages went each
// way: Start, then poll (or, with -e, sleep on completion events) and
// Handle. With a timeout (Options.Timeout) it gives up when no completion
// comes for that long, with an *Error that says what is most likely wrong;
// extra is added to that explanation. The context stops it too.
//
// On a device that works without the program (verbs.SelfDriven: rxe, a
// NIC) the loop busy-polls as rdma-core's does (runBusy): no clock read
// per completion or per empty poll, a yield only every busyYield.
func (e *Endpoint) Run(ctx context.Context, client bool, extra string) (Stats, error) {
	if err := e.Start(client); err != nil {
		return Stats{}, err
	}
	if e.o.Events {
		return e.runEvents(ctx, extra)
	}
	if sd, ok := e.vctx.(verbs.SelfDriven); ok && sd.SelfDriven() {
		return e.runBusy(ctx, extra)
	}
	now := time.Now
	start := now()
	last := start
	idle := 0
	timeout := e.o.Timeout
	for !e.Done() {
		n, err := e.Poll()
		if err != nil {
			return e.stats(now().Sub(start)), err
		}
		if n > 0 {
			idle = 0
			last = now()
			continue
		}
		idle++
		// An empty poll may have waited (the simulator's UDP link waits
		// in it for up to 50 ms), so Ctrl-C is looked at every time; the
		// clock (for the timeout) every 16th.
		if err := ctx.Err(); err != nil {
			return e.stats(now().Sub(start)), fail("Interrupted", err, "")
		}
		if idle%16 == 0 {
			// Let the peer run when it shares this process (a backend
			// such as the simulator, both sides in one program).
			runtime.Gosched()
			if t := now(); timeout > 0 && t.Sub(last) >= timeout {
				return e.stats(t.Sub(start)), e.stallError(timeout, extra)
			}
		}
	}
	return e.stats(now().Sub(start)), nil
}

// The busy loop's rhythm on a self-driven device (runBusy).
const (
	// busyClock: the loop reads the clock once every busyClock polls.
	busyClock = 64
	// busyYield: the loop gives the scheduler a turn (goyield) when
	// busyYield has passed since the last. Go preempts a goroutine that
	// has run 10 ms without a turn, and when that happens during a call
	// into C (a poll, a post) the runtime hands the goroutine's processor
	// to another thread, and the loop goes on in yet another. goyield
	// wakes no thread, so it can come often enough to leave a wide margin
	// for the time the kernel takes the CPU away.
	busyYield = 1 * time.Millisecond
)

// runBusy is Run's loop on a self-driven device: a poll, and what came,
// as rdma-core's loop does; Ctrl-C is an atomic load per empty poll, the
// clock is read every busyClock polls. The timeout counts from the first
// look at the clock after the last completion, so it ends the loop up to
// twice busyClock polls late, never early.
func (e *Endpoint) runBusy(ctx context.Context, extra string) (Stats, error) {
	var stopped atomic.Bool
	defer context.AfterFunc(ctx, func() { stopped.Store(true) })()
	start := time.Now()
	last, yielded := start, start
	seen := e.rcnt + e.scnt // completions at the last look at the clock
	timeout := e.o.Timeout
	for !e.Done() {
		n, err := e.Poll()
		if err != nil {
			return e.stats(time.Since(start)), err
		}
		if n == 0 && stopped.Load() {
			return e.stats(time.Since(start)), fail("Interrupted", ctx.Err(), "")
		}
		if e.polls%busyClock != 0 {
			continue
		}
		t := time.Now()
		if t.Sub(yielded) >= busyYield {
			goyield()
			yielded = t
		}
		if c := e.rcnt + e.scnt; c != seen {
			seen, last = c, t
		} else if timeout > 0 && t.Sub(last) >= timeout {
			return e.stats(t.Sub(start)), e.stallError(timeout, extra)
		}
	}
	return e.stats(time.Since(start)), nil
}

// runEvents is Run's loop with -e: sleep on the completion channel, then
// poll.
func (e *Endpoint) runEvents(ctx context.Context, extra string) (Stats, error) {
	start := time.Now()
	last := start
	for !e.Done() {
		if err := e.waitEvent(ctx, last, extra); err != nil {
			return e.stats(time.Since(start)), err
		}
		n, err := e.Poll()
		if err != nil {
			return e.stats(time.Since(start)), err
		}
		if n > 0 {
			last = time.Now()
		}
	}
	return e.stats(time.Since(start)), nil
}

func (e *Endpoint) stats(d time.Duration) Stats {
	return Stats{Size: e.o.Size, Iters: e.o.Iters, Elapsed: d, CQEvents: e.cqEvents, Polls: e.polls, Posts: e.posts}
}

// eventSlice is how long one wait for a completion event lasts before the
// context and the timeout are looked at again.
const eventSlice = 100 * time.Millisecond

// waitEvent sleeps until a completion event (ibv_get_cq_event), counts it
// for ibv_ack_cq_events and re-arms the CQ.
func (e *Endpoint) waitEvent(ctx context.Context, last time.Time, extra string) error {
	for {
		if err := ctx.Err(); err != nil {
			return fail("Interrupted", err, "")
		}
		wait := eventSlice
		if e.o.Timeout > 0 {
			left := e.o.Timeout - time.Since(last)
			if left <= 0 {
				return e.stallError(e.o.Timeout, extra)
			}
			wait = min(wait, left)
		}
		cq, err := e.channel.GetEvent(wait)
		if err != nil {
			if errors.Is(err, verbs.EAGAIN) {
				// A backend whose wait returns early (the simulator
				// lets virtual time pass, not real time) must not
				// starve the peer's goroutine.
				runtime.Gosched()
				continue
			}
			return fail("Failed to get cq_event", err, "")
		}
		e.cqEvents++
		if cq != e.cq {
			return fail("CQ event for unknown CQ", nil, "")
		}
		if err := e.cq.ReqNotify(false); err != nil {
			return fail("Couldn't request CQ notification", err, "")
		}
		return nil
	}
}
