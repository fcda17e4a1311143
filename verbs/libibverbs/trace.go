//go:build linux && cgo && ibverbs

package main

import "C"

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// The trace ($VSH_TRACE): every verb call the program makes, in the
// shell's form, with the simulator's explanation of every error; QP state
// changes; completions; packets. Each line is written at once, unbuffered,
// so that the last verb before a crash is in it.
var trace struct {
	on     atomic.Bool
	mu     sync.Mutex
	w      io.Writer
	last   string   // the last line written
	repeat int      // how many times since then it came again, not yet said
	hold   bool     // a post is in progress: its packets wait for its line
	held   []string // the lines that waited
	bytes  int64    // written so far
}

// traceMax bounds the trace: a long run (100,000 round trips write 130 MB
// of packets) stops being traced here, and the trace says so.
const traceMax = 16 << 20

func tracing() bool { return trace.on.Load() }

// openTrace starts the trace where $VSH_TRACE says: "-" is standard error,
// anything else a file, truncated.
func openTrace(f *sim.Fabric) {
	dst := os.Getenv("VSH_TRACE")
	switch dst {
	case "":
		return
	case "-":
		trace.w = os.Stderr
	default:
		fh, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "libibverbs (vsh): no trace: %v\n", err)
			return
		}
		trace.w = fh
	}
	trace.on.Store(true)
	traceLine(fmt.Sprintf("# vsh: the simulator in process %d; sim0 on the UDP link at %s", os.Getpid(), f.UDPAddr()))
	f.ObservePackets(func(e verbs.PacketEvent) {
		s := fmt.Sprintf("    packet #%d %s → %s: %s (%s)", e.Seq, e.From, e.To, e.Summary, e.Verdict)
		trace.mu.Lock()
		if trace.hold {
			trace.held = append(trace.held, s)
			trace.mu.Unlock()
			return
		}
		trace.mu.Unlock()
		traceLine(s)
	})
}

// traceLine writes one line; a line equal to the one before is counted,
// and said once ("... 499 more times") before the next other line.
func traceLine(s string) {
	if !tracing() {
		return
	}
	trace.mu.Lock()
	defer trace.mu.Unlock()
	writeLine(s)
}

// vshTraceFlush says the count of a run of equal lines the trace has not
// said yet; the C side calls it at exit.
//
//export vshTraceFlush
func vshTraceFlush() {
	// Another thread may be in a verb as the program exits: never wait.
	if !tracing() || !trace.mu.TryLock() {
		return
	}
	defer trace.mu.Unlock()
	writeLine("")
}

// holdPackets makes the packets a post sends wait until the post's own
// line is written (releasePackets), so that they follow it.
func holdPackets() {
	trace.mu.Lock()
	trace.hold = true
	trace.mu.Unlock()
}

func releasePackets() {
	trace.mu.Lock()
	defer trace.mu.Unlock()
	trace.hold = false
	for _, s := range trace.held {
		writeLine(s)
	}
	trace.held = trace.held[:0]
}

// writeLine writes s, after the count of the run of equal lines before
// it; "" writes only that count.
func writeLine(s string) {
	if s == trace.last && s != "" {
		trace.repeat++
		return
	}
	if trace.repeat > 0 {
		fmt.Fprintf(trace.w, "    (the line above %d more time%s)\n", trace.repeat, map[bool]string{true: "s"}[trace.repeat > 1])
		trace.repeat = 0
	}
	trace.last = s
	if s == "" {
		return
	}
	if trace.bytes += int64(len(s) + 1); trace.bytes > traceMax {
		io.WriteString(trace.w, "# vsh: the trace stops here, at 16 MiB; trace a shorter run (fewer iterations) to see it all\n")
		trace.on.Store(false)
		return
	}
	io.WriteString(trace.w, s+"\n")
}

// traceCall prints one verb call: "op(args) = 0", "op(args) → obj" when
// args already ends with its result, or "op(args) = ERRNO" with the
// simulator's why and hint.
func traceCall(op, args string, err error) {
	if !tracing() {
		return
	}
	var b strings.Builder
	b.WriteString(op + "(" + args)
	switch {
	case err != nil:
		b.WriteString(") = " + verbs.ErrnoName(verbs.ErrnoOf(err)))
		b.WriteString(explain(err))
	case strings.Contains(args, ") → "):
	default:
		b.WriteString(") = 0")
	}
	traceLine(b.String())
}

// explain is the indented why and hint of err.
func explain(err error) string {
	e, ok := verbs.AsError(err)
	if !ok {
		return "\n    error: " + err.Error()
	}
	s := "\n    error: " + e.Why
	if e.Hint != "" {
		s += "\n    hint: " + e.Hint
	}
	return s
}

func traceModify(o *qpObj, a *verbs.QPAttr, m verbs.QPAttrMask, err error) {
	if !tracing() {
		return
	}
	result := "0"
	if err != nil {
		result = verbs.ErrnoName(verbs.ErrnoOf(err))
	}
	line := fmt.Sprintf("ibv_modify_qp(%s, &attr, %s) = %s\n    attr: %s", o.name, m, result, qpAttrString(a, m))
	if err != nil {
		line += explain(err)
	}
	traceLine(line)
}

// qpAttrString prints the fields mask names, as the shell's attr: line.
func qpAttrString(a *verbs.QPAttr, m verbs.QPAttrMask) string {
	var f []string
	add := func(bit verbs.QPAttrMask, s string, v ...any) {
		if m&bit != 0 {
			f = append(f, fmt.Sprintf(s, v...))
		}
	}
	add(verbs.AttrState, "qp_state=%s", a.State)
	add(verbs.AttrCurState, "cur_qp_state=%s", a.CurState)
	add(verbs.AttrPKeyIndex, "pkey_index=%d", a.PKeyIndex)
	add(verbs.AttrPort, "port_num=%d", a.PortNum)
	add(verbs.AttrQKey, "qkey=%#x", a.QKey)
	add(verbs.AttrAccessFlags, "qp_access_flags=%s", a.AccessFlags)
	add(verbs.AttrPathMTU, "path_mtu=%s", a.PathMTU)
	add(verbs.AttrDestQPN, "dest_qp_num=%#06x", a.DestQPN)
	add(verbs.AttrRQPSN, "rq_psn=%#06x", a.RQPSN)
	add(verbs.AttrSQPSN, "sq_psn=%#06x", a.SQPSN)
	add(verbs.AttrMaxDestRdAtomic, "max_dest_rd_atomic=%d", a.MaxDestRdAtomic)
	add(verbs.AttrMaxQPRdAtomic, "max_rd_atomic=%d", a.MaxRdAtomic)
	add(verbs.AttrMinRNRTimer, "min_rnr_timer=%d", a.MinRNRTimer)
	add(verbs.AttrTimeout, "timeout=%d", a.Timeout)
	add(verbs.AttrRetryCnt, "retry_cnt=%d", a.RetryCnt)
	add(verbs.AttrRNRRetry, "rnr_retry=%d", a.RNRRetry)
	add(verbs.AttrAV, "ah_attr=%s", ahString(&a.AH))
	return strings.Join(f, " ")
}

// traceQPState prints the QP's place in its state machine.
func traceQPState(o *qpObj, st verbs.QPState) {
	if !tracing() {
		return
	}
	short := func(s verbs.QPState) string { return strings.TrimPrefix(s.String(), "IBV_QPS_") }
	mark := func(s verbs.QPState) string {
		if s == st {
			return "[" + short(s) + "]"
		}
		return short(s)
	}
	main := []string{}
	for _, s := range []verbs.QPState{verbs.QPSReset, verbs.QPSInit, verbs.QPSRTR, verbs.QPSRTS} {
		main = append(main, mark(s))
	}
	side := []string{}
	for _, s := range []verbs.QPState{verbs.QPSSQD, verbs.QPSSQE, verbs.QPSErr} {
		side = append(side, mark(s))
	}
	typ := strings.TrimPrefix(o.qp.Type().String(), "IBV_QPT_")
	traceLine(fmt.Sprintf("    %s %s %#06x  %s | %s", o.name, typ, o.qp.Num(),
		strings.Join(main, " → "), strings.Join(side, " ")))
}

func sgeBytes(s []verbs.SGE) uint64 {
	var n uint64
	for _, g := range s {
		n += uint64(g.Length)
	}
	return n
}

func tracePostSend(o *qpObj, wrs []verbs.SendWR, posted int, err error) {
	if err != nil && posted >= len(wrs) {
		posted = len(wrs) - 1 // a refusal of the whole call: said on the last WR
	}
	for i, w := range wrs {
		if i > posted || (i == posted && err == nil) {
			break
		}
		args := fmt.Sprintf("%s, wr_id=%d %s %d bytes", o.name, w.WRID, w.Opcode, sgeBytes(w.SGList))
		if w.Flags != 0 {
			args += " send_flags=" + w.Flags.String()
		}
		switch w.Opcode {
		case verbs.WRRDMAWrite, verbs.WRRDMAWriteWithImm, verbs.WRRDMARead, verbs.WRAtomicCmpAndSwp, verbs.WRAtomicFetchAndAdd:
			args += fmt.Sprintf(" remote_addr=%#x rkey=%#x", w.RemoteAddr, w.RKey)
		}
		if o.qp.Type() == verbs.QPTypeUD {
			args += fmt.Sprintf(" remote_qpn=%#06x", w.RemoteQPN)
		}
		var e error
		if i == posted {
			e = err
		}
		traceCall("ibv_post_send", args, e)
	}
}

func tracePostRecv(op string, b *object, wrs []verbs.RecvWR, posted int, err error) {
	if err != nil && posted >= len(wrs) {
		posted = len(wrs) - 1
	}
	for i, w := range wrs {
		if i > posted || (i == posted && err == nil) {
			break
		}
		var e error
		if i == posted {
			e = err
		}
		traceCall(op, fmt.Sprintf("%s, wr_id=%d %d bytes", b.name, w.WRID, sgeBytes(w.SGList)), e)
	}
}

func tracePoll(o *cqObj, wcs []verbs.WC) {
	for _, w := range wcs {
		s := fmt.Sprintf("ibv_poll_cq(%s) → wr_id=%d %s %s byte_len=%d qp_num=%#06x",
			o.name, w.WRID, w.Status, w.Opcode, w.ByteLen, w.QPNum)
		if w.Status != verbs.WCSuccess {
			// opcode and byte_len mean nothing in a failed completion.
			s = fmt.Sprintf("ibv_poll_cq(%s) → wr_id=%d %s qp_num=%#06x vendor_err=%#x",
				o.name, w.WRID, w.Status, w.QPNum, w.VendorErr)
			if why := sim.CompletionWhy(o.cq, w); why != "" {
				s += "\n    why: " + why
			}
			s += "\n    " + w.Status.Explain()
		}
		traceLine(s)
		if w.Status != verbs.WCSuccess {
			traceErrState(o.ctx, w.QPNum)
		}
	}
}

// traceErrState shows the state a failed completion left its QP in (ERR
// on RC; a QP of this context, found by number).
func traceErrState(c *ctxObj, qpn uint32) {
	if c == nil {
		return
	}
	state.mu.RLock()
	var q *qpObj
	for _, o := range c.owned {
		if x, ok := o.(*qpObj); ok && !x.dead && x.qp != nil && x.qp.Num() == qpn {
			q = x
		}
	}
	state.mu.RUnlock()
	if q == nil {
		return
	}
	a, _, err := q.qp.Query(verbs.AttrState)
	q.mu.Lock()
	changed := err == nil && a.State != q.state
	if changed {
		q.state = a.State
	}
	q.mu.Unlock()
	if changed {
		traceQPState(q, a.State)
	}
}
