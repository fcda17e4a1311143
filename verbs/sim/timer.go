package sim

import (
	"time"
)

// Timers, as the kernel runs rxe's: in jiffies, on the timer wheel.
//
// rxe arms its retransmit timer with mod_timer(jiffies + qp_timeout_jiffies)
// (qp_timeout_jiffies = nsecs_to_jiffies(4096 ns << timeout), at least 1;
// rxe_qp.c rxe_qp_from_attr) and its RNR timer with
// mod_timer(jiffies + max(usecs_to_jiffies(rnrnak_usec[code]), 1))
// (rxe_comp.c). The wheel never fires a timer early: it rounds the expiry up
// to the next multiple of the level's granularity, which on level 0 is one
// jiffy (kernel/time/timer.c calc_index, calc_wheel_index). Debian's 6.1
// kernel has HZ = 250, so a jiffy is 4 ms: the 0.64 ms RNR delay of
// min_rnr_timer 12 really waits 4–8 ms, and timeout 14 (67 ms) waits
// 64–68 ms. Neither timer is ever stopped except when the QP is destroyed
// (rxe_qp_do_cleanup): a retransmit timer left armed after the last ACK
// fires later and finds nothing to do, as on rxe.

// Timer kinds.
const (
	timerRetrans = iota // retrans_timer: a timeout for the completer
	timerRNR            // rnr_nak_timer: the requester may retry
	numTimers
)

var timerNames = [numTimers]string{"retransmit", "rnr"}

// timer is one armed kernel timer of a QP.
type timer struct {
	q    *qp
	at   time.Duration // when it fires; valid while hix >= 0
	ord  uint64
	hix  int32 // index in the fabric's timer heap, -1 when not armed
	kind uint8
}

// jiffy returns the length of one tick.
func (f *Fabric) jiffy() time.Duration { return time.Second / time.Duration(f.cfg.HZ) }

// jiffies returns the tick count at virtual time t.
func (f *Fabric) jiffies(t time.Duration) uint64 { return uint64(t / f.jiffy()) }

// nsecsToJiffies is nsecs_to_jiffies: rounded down.
func (f *Fabric) nsecsToJiffies(ns int64) uint64 { return uint64(ns / int64(f.jiffy())) }

// usecsToJiffies is usecs_to_jiffies: rounded up.
func (f *Fabric) usecsToJiffies(us int64) uint64 {
	j := int64(f.jiffy() / time.Microsecond)
	return uint64((us + j - 1) / j)
}

// wheelExpiry is when the timer wheel really fires a timer whose expiry is
// n jiffies from tick now: the expiry rounded up past the granularity of
// the wheel level that holds it (calc_wheel_index, calc_index; 64 buckets
// per level, each level 8 times coarser).
func wheelExpiry(now, n uint64) uint64 {
	exp := now + n
	shift := uint(0)
	for lvl := uint(1); lvl < 9; lvl++ {
		if n < 63<<((lvl-1)*3) {
			break
		}
		shift = lvl * 3
	}
	return (exp>>shift + 1) << shift
}

// modTimer is mod_timer(timer, jiffies + n): it (re)arms the timer.
func (f *Fabric) modTimer(t *timer, n uint64) {
	at := time.Duration(wheelExpiry(f.jiffies(f.clock.now()), n)) * f.jiffy()
	t.at = at
	f.net.timerOrd++
	t.ord = f.net.timerOrd
	if t.hix >= 0 {
		f.net.timers.fix(int(t.hix))
		return
	}
	f.net.timers.push(t)
}

// delTimer is del_timer_sync.
func (f *Fabric) delTimer(t *timer) {
	if t.hix >= 0 {
		f.net.timers.remove(int(t.hix))
	}
}

// timerPending is timer_pending.
func timerPending(t *timer) bool { return t.hix >= 0 }

// timerHeap is a binary heap of armed timers by (at, ord).
type timerHeap []*timer

func (h timerHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].ord < h[j].ord
}

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hix = int32(i)
	h[j].hix = int32(j)
}

func (h *timerHeap) push(t *timer) {
	t.hix = int32(len(*h))
	*h = append(*h, t)
	h.up(int(t.hix))
}

func (h *timerHeap) remove(i int) *timer {
	old := *h
	n := len(old) - 1
	t := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	t.hix = -1
	return t
}

func (h timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h timerHeap) down(i int) bool {
	start := i
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

// packetHeap is a binary heap of packets in flight by (at, ord).
type packetHeap []*packet

func (h packetHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].ord < h[j].ord
}

func (h packetHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hix = i
	h[j].hix = j
}

func (h *packetHeap) push(p *packet) {
	p.hix = len(*h)
	*h = append(*h, p)
	h.up(p.hix)
}

func (h *packetHeap) pop() *packet {
	old := *h
	n := len(old) - 1
	p := old[0]
	old.swap(0, n)
	old[n] = nil
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	p.hix = -1
	return p
}

func (h packetHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h packetHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
}

// flight holds the packets in flight in arrival order. Most packets are
// queued in arrival order already (each link delivers in order), so they
// go to a FIFO; only those that overtake a queued packet (a shorter path,
// a fault's delay) go to a heap.
type flight struct {
	fifo []*packet
	head int
	heap packetHeap
}

func pktLess(a, b *packet) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.ord < b.ord
}

func (q *flight) len() int { return len(q.fifo) - q.head + len(q.heap) }

func (q *flight) push(p *packet) {
	if n := len(q.fifo); n == q.head || pktLess(q.fifo[n-1], p) {
		p.hix = -1
		q.fifo = append(q.fifo, p)
		return
	}
	q.heap.push(p)
}

// peek returns the next packet to arrive, or nil.
func (q *flight) peek() *packet {
	var f *packet
	if q.head < len(q.fifo) {
		f = q.fifo[q.head]
	}
	if len(q.heap) > 0 && (f == nil || pktLess(q.heap[0], f)) {
		return q.heap[0]
	}
	return f
}

// take removes p, the packet peek returned.
func (q *flight) take(p *packet) {
	if p.hix >= 0 {
		q.heap.pop()
		return
	}
	q.fifo[q.head] = nil
	q.head++
	if q.head == len(q.fifo) {
		q.fifo, q.head = q.fifo[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.fifo) {
		q.compact()
	}
}

// compact moves the FIFO's packets to the front of its slice.
func (q *flight) compact() {
	n := copy(q.fifo, q.fifo[q.head:])
	clear(q.fifo[n:])
	q.fifo, q.head = q.fifo[:n], 0
}
