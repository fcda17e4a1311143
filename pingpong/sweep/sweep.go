package sweep

import (
	"fmt"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Op is the operation a sweep measures.
type Op int

// The operations, as perftest's programs name them.
const (
	Send  Op = iota // ib_send_bw, ib_send_lat: SEND into a posted receive
	Write           // ib_write_bw, ib_write_lat: RDMA WRITE into the peer's buffer
	Read            // ib_read_bw, ib_read_lat: RDMA READ from the peer's buffer
)

var opNames = [...]string{"send", "write", "read"}

func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Ops lists every operation.
func Ops() []Op { return []Op{Send, Write, Read} }

// ParseOp parses send, write or read.
func ParseOp(s string) (Op, error) {
	for i, n := range opNames {
		if strings.EqualFold(s, n) {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("unknown operation %q (one of: send, write, read)", s)
}

func (o Op) opcode() verbs.WROpcode {
	switch o {
	case Write:
		return verbs.WRRDMAWrite
	case Read:
		return verbs.WRRDMARead
	}
	return verbs.WRSend
}

// Test is what a series measures: bandwidth or latency.
type Test int

// The tests.
const (
	BW  Test = iota // many messages outstanding: bytes per second and messages per second
	Lat             // one message at a time: the time of a round trip
)

func (t Test) String() string {
	if t == Lat {
		return "lat"
	}
	return "bw"
}

// ParseTest parses bw or lat.
func ParseTest(s string) (Test, error) {
	switch strings.ToLower(s) {
	case "bw":
		return BW, nil
	case "lat":
		return Lat, nil
	}
	return 0, fmt.Errorf("unknown test %q (bw or lat)", s)
}

// Program is perftest's program for an operation and a test: ib_write_bw.
func Program(o Op, t Test) string { return "ib_" + o.String() + "_" + t.String() }

// Clock says what a sweep measures time with.
type Clock int

// The clocks.
const (
	Virtual Clock = iota // the fabric's virtual time (verbs.Stepper): deterministic
	Wall                 // elapsed real time
)

func (c Clock) String() string {
	if c == Wall {
		return "wall"
	}
	return "virtual"
}

// ParseClock parses virtual or wall.
func ParseClock(s string) (Clock, error) {
	switch strings.ToLower(s) {
	case "virtual", "virt", "v":
		return Virtual, nil
	case "wall", "real", "w":
		return Wall, nil
	}
	return 0, fmt.Errorf("unknown clock %q (virtual or wall)", s)
}

// Defaults, from perftest (perftest_parameters.h) where it has one.
const (
	DefaultMinSize  = 64
	DefaultMaxSize  = 1 << 20
	DefaultIters    = 1000 // DEF_ITERS (ib_write_bw's is DEF_ITERS_WB, 5000)
	DefaultLatIters = 1000 // DEF_ITERS
	DefaultTxDepth  = 128  // DEF_TX_BW
	DefaultRxDepth  = 512  // DEF_RX_SEND
	DefaultCQMod    = 100  // DEF_CQ_MOD: one signaled work request in this many
	DefaultTimeout  = 10 * time.Second

	// MinIters is perftest's MIN_ITER: latency needs a few samples left
	// after the two largest are dropped.
	MinIters = 5
	// MaxSize is the largest message a sweep sends (perftest's MAX_SIZE).
	MaxSize = 8 << 20
	// latTail is perftest's LAT_MEASURE_TAIL: the largest samples dropped.
	latTail = 2
)

// Config says what to measure. Zero fields take the defaults.
type Config struct {
	Ops   []Op   // default: Write
	Tests []Test // default: BW and Lat
	// MinSize and MaxSize bound the message sizes: MinSize, twice that, ...
	// up to MaxSize, which is always measured.
	MinSize, MaxSize int
	Iters            int // bandwidth: messages per size (perftest -n)
	LatIters         int // latency: round trips per size (perftest -n)
	TxDepth          int // bandwidth: work requests kept outstanding (perftest -t)
	RxDepth          int // receives kept posted on each side (perftest -r)
	// CQMod signals one send in CQMod (perftest -Q); it is capped to TxDepth.
	CQMod int
	// MTU is the path MTU. Zero takes the ports' active MTU; a larger one
	// than that is lowered to it, as perftest does.
	MTU verbs.MTU
	// Clock picks the clock; Virtual needs Fabric.
	Clock Clock
	// Fabric is the simulator's fabric, for Clock Virtual.
	Fabric verbs.Stepper
	// Timeout bounds a wait in which nothing moves (wall time; in virtual
	// time, the virtual time that passes with only timers pending).
	Timeout time.Duration
	// Progress, when set, is called after every size with what was
	// measured.
	Progress func(Progress)
	// Seed draws the start PSNs (perftest draws them with lrand48).
	Seed uint64
}

// Progress reports one measured point of a running sweep.
type Progress struct {
	Op     Op
	Test   Test
	Point  Point
	Done   int // points measured so far, this one included
	Total  int // points in the whole sweep
	Series int // index of the series in Result.Series
}

func (c Config) withDefaults() Config {
	if len(c.Ops) == 0 {
		c.Ops = []Op{Write}
	}
	if len(c.Tests) == 0 {
		c.Tests = []Test{BW, Lat}
	}
	if c.MinSize == 0 {
		c.MinSize = DefaultMinSize
	}
	if c.MaxSize == 0 {
		c.MaxSize = max(DefaultMaxSize, c.MinSize)
	}
	if c.Iters == 0 {
		c.Iters = DefaultIters
	}
	if c.LatIters == 0 {
		c.LatIters = DefaultLatIters
	}
	if c.TxDepth == 0 {
		c.TxDepth = DefaultTxDepth
	}
	if c.RxDepth == 0 {
		c.RxDepth = DefaultRxDepth
	}
	if c.CQMod == 0 {
		c.CQMod = DefaultCQMod
	}
	c.CQMod = min(c.CQMod, c.TxDepth)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// Validate checks a configuration after defaults.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.MinSize < 1 || c.MinSize > MaxSize:
		return fmt.Errorf("min size %d: a message has 1 byte to %d (8 MiB, perftest's largest)", c.MinSize, MaxSize)
	case c.MaxSize < c.MinSize || c.MaxSize > MaxSize:
		return fmt.Errorf("max size %d: it must be between the min size (%d) and %d (8 MiB, perftest's largest)", c.MaxSize, c.MinSize, MaxSize)
	case c.Iters < MinIters && hasTest(c.Tests, BW):
		return fmt.Errorf("%d iterations: perftest needs at least %d", c.Iters, MinIters)
	case c.LatIters < MinIters && hasTest(c.Tests, Lat):
		return fmt.Errorf("%d latency iterations: at least %d, so that samples remain after the two largest are dropped", c.LatIters, MinIters)
	case c.TxDepth < 1:
		return fmt.Errorf("tx_depth %d: at least one work request must be outstanding", c.TxDepth)
	case c.RxDepth < 1:
		return fmt.Errorf("rx_depth %d: at least one receive must be posted", c.RxDepth)
	case c.MTU != 0 && !c.MTU.Valid():
		return fmt.Errorf("path MTU %d: one of 256, 512, 1024, 2048, 4096", c.MTU)
	case c.Clock == Virtual && c.Fabric == nil:
		return fmt.Errorf("virtual time needs the simulator's fabric (a verbs.Stepper); use the wall clock on this backend")
	case c.Timeout < 0:
		return fmt.Errorf("timeout %v is negative", c.Timeout)
	}
	for _, o := range c.Ops {
		if o < Send || o > Read {
			return fmt.Errorf("unknown operation %d", int(o))
		}
	}
	for _, t := range c.Tests {
		if t != BW && t != Lat {
			return fmt.Errorf("unknown test %d", int(t))
		}
	}
	return nil
}

// HasOp reports whether the sweep measures operation o.
func (c Config) HasOp(o Op) bool {
	for _, x := range c.Ops {
		if x == o {
			return true
		}
	}
	return false
}

func hasTest(ts []Test, t Test) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// Sizes returns the message sizes of a sweep from min to max: min, then
// doubling, then max if doubling did not reach it exactly.
func Sizes(minSize, maxSize int) []int {
	var out []int
	if minSize < 1 || maxSize < minSize {
		return nil
	}
	s := minSize
	for ; s <= maxSize; s *= 2 {
		out = append(out, s)
		if s > maxSize/2 {
			break
		}
	}
	if out[len(out)-1] != maxSize {
		out = append(out, maxSize)
	}
	return out
}

// Point is what one size measured.
type Point struct {
	Size  int // bytes per message
	Iters int // messages (bw) or round trips (lat)
	// Elapsed is, for bandwidth, the time from the first post to the last
	// completion.
	Elapsed time.Duration
	// Latency figures in microseconds, as perftest prints them: the
	// smallest, the largest (perftest's t_max, the largest kept sample),
	// the median (t_typical), the mean, and the 99th percentile, over the
	// samples left after the two largest are dropped, each halved for SEND
	// and WRITE.
	TMin, TMax, TTypical, TAvg, T99 float64
}

// MiBps is the average bandwidth in MiB/s (perftest's "BW average[MB/sec]",
// whose MB is 2^20 bytes).
func (p Point) MiBps() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Size) * float64(p.Iters) / p.Elapsed.Seconds() / (1 << 20)
}

// Gbps is the average bandwidth in Gb/s (10^9 bits, perftest --report_gbits).
func (p Point) Gbps() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Size) * float64(p.Iters) * 8 / p.Elapsed.Seconds() / 1e9
}

// Mpps is the message rate in millions of messages per second.
func (p Point) Mpps() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Iters) / p.Elapsed.Seconds() / 1e6
}

// Series is one operation and test over every size.
type Series struct {
	Op     Op
	Test   Test
	Points []Point
}

// Program is the series' perftest program: ib_read_lat.
func (s Series) Program() string { return Program(s.Op, s.Test) }

// Result is a whole sweep.
type Result struct {
	Config Config // with the defaults filled in
	// A and B are the devices; Loopback is set when they are one device.
	A, B     string
	Loopback bool
	// PathMTU is the path MTU the QPs were given; ActiveMTU the ports'
	// (the smaller of the two).
	PathMTU, ActiveMTU verbs.MTU
	// OutReads is how many RDMA READs may be outstanding (max_rd_atomic,
	// the devices' max_qp_rd_atom, as perftest sets it).
	OutReads int
	// QPN of the QPs on A and B.
	QPNA, QPNB uint32
	Series     []Series
}
