package pingpong

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

// Transport says which of rdma-core's five ping-pong programs to be.
type Transport int

// The five programs of rdma-core's libibverbs/examples.
const (
	RC   Transport = iota // ibv_rc_pingpong: one RC QP
	UC                    // ibv_uc_pingpong: one UC QP
	UD                    // ibv_ud_pingpong: one UD QP, an AH, the 40-byte GRH
	SRQ                   // ibv_srq_pingpong: num_qp RC QPs on one shared receive queue
	XSRQ                  // ibv_xsrq_pingpong: XRC, an XRC SRQ and an XRC_SEND/XRC_RECV pair per client
)

var transportNames = [...]string{"rc", "uc", "ud", "srq", "xsrq"}

// String returns "rc", "uc", "ud", "srq" or "xsrq".
func (t Transport) String() string {
	if t >= 0 && int(t) < len(transportNames) {
		return transportNames[t]
	}
	return fmt.Sprintf("transport(%d)", int(t))
}

// Program returns the name of rdma-core's program: "ibv_rc_pingpong".
func (t Transport) Program() string { return "ibv_" + t.String() + "_pingpong" }

// QPType is the type of the program's QPs (srq uses RC QPs; xsrq sends
// through XRC_SEND QPs and receives through XRC_RECV ones).
func (t Transport) QPType() verbs.QPType {
	switch t {
	case UC:
		return verbs.QPTypeUC
	case UD:
		return verbs.QPTypeUD
	case XSRQ:
		return verbs.QPTypeXRCSend
	}
	return verbs.QPTypeRC
}

// ParseTransport accepts rc, uc, ud, srq, xsrq in any case, and the program
// names rc_pingpong and ibv_rc_pingpong.
func ParseTransport(s string) (Transport, error) {
	n := strings.ToLower(s)
	n = strings.TrimPrefix(n, "ibv_")
	n = strings.TrimSuffix(n, "_pingpong")
	for i, name := range transportNames {
		if n == name {
			return Transport(i), nil
		}
	}
	return 0, fmt.Errorf("unknown ping-pong %q: want rc, uc, ud, srq or xsrq", s)
}

// TransportFromProgramName recognizes a program started under one of
// rdma-core's names (a link named ibv_rc_pingpong, rc_pingpong, ...), so
// that the binary can stand in for rdma-core's own.
func TransportFromProgramName(argv0 string) (Transport, bool) {
	base := strings.ToLower(filepath.Base(argv0))
	if !strings.HasSuffix(base, "_pingpong") {
		return 0, false
	}
	t, err := ParseTransport(base)
	return t, err == nil
}

// Options are a ping-pong's settings: rdma-core's flags and vsh's own. The
// zero value is not useful; start from Defaults.
type Options struct {
	Transport Transport
	// Host is the server to connect to; empty means: be the server.
	Host string
	// Port is the TCP port of the address exchange (-p, 18515).
	Port int
	// IBDev is the device (-d); empty means the first one.
	IBDev string
	// IBPort is the device's port (-i, 1).
	IBPort int
	// Size is the message size in bytes (-s; 4096, UD 1024).
	Size int
	// MTU is the path MTU of RC/UC/SRQ QPs (-m, 1024). UD has no -m.
	MTU verbs.MTU
	// RxDepth is how many receives are kept posted (-r, 500).
	RxDepth int
	// Iters is the number of exchanges (-n, 1000); xsrq's -n/--num_tests,
	// the messages each way per client (5).
	Iters int
	// Clients is xsrq's -c/--clients: how many clients the server serves
	// (1). A client always has 1, as rdma-core forces it.
	Clients int
	// SL is the service level (-l, 0).
	SL int
	// Events sleeps on completion events instead of busy-polling (-e).
	Events bool
	// GIDIndex is the local GID index (-g); -1 sends no GID, so no GRH.
	GIDIndex int
	// Check writes a pattern at the client and checks every byte of it at
	// the end (-c). For xsrq, whose -c is --clients, it is vsh's --verify:
	// every message carries a pattern that names it, and every byte of
	// every message received is checked.
	Check bool
	// NumQP is how many QPs srq uses (-q, 16).
	NumQP int
	// NewSend is rc's -N (the ibv_wr_* send API). vsh posts with
	// ibv_post_send either way; the packets are the same.
	NewSend bool
	// Backend is --backend: "sim", "ibverbs", or "" for the default.
	Backend string
	// SimAddr is --sim-addr: the address the simulator's UDP link binds,
	// on port 4791 (a loopback address such as 127.0.0.2, or one of the
	// host's own, IPv4 or IPv6); its RoCEv2 GID is the device's GID 1. ""
	// lets the program choose the first free loopback one. It implies
	// --backend sim.
	SimAddr string
	// Timeout bounds every wait once the two sides are connected: the
	// exchange, and the gap between two completions (--timeout, 10s).
	// Zero waits forever, as rdma-core does.
	Timeout time.Duration
	// PageSize is the page size of -c's pattern (sysconf(_SC_PAGESIZE));
	// 0 means the host's.
	PageSize int
	// Help is set by -h/--help.
	Help bool
	// Unsupported lists rdma-core flags that were given but that vsh
	// cannot honour (-o, -O, -P, -t, -j), as "-o (--odp)".
	Unsupported []string
}

// DefaultTimeout is --timeout's default.
const DefaultTimeout = 10 * time.Second

// Defaults returns rdma-core's defaults for t (v44's main(); xsrq's
// init()).
func Defaults(t Transport) Options {
	o := Options{
		Transport: t,
		Port:      exchange.DefaultPort,
		IBPort:    1,
		Size:      4096,
		MTU:       verbs.MTU1024,
		RxDepth:   500,
		Iters:     1000,
		GIDIndex:  -1,
		NumQP:     16,
		Clients:   1,
		Timeout:   DefaultTimeout,
	}
	switch t {
	case UD:
		o.Size = 1024 // ud_pingpong's code; its help text says 2048
	case XSRQ:
		o.Iters = 5 // num_tests; MTU 1024 is the code's (the man page says 2048)
	}
	return o
}

// Long-only options of vsh (codes above any byte).
const (
	optBackend rune = 0x100 + iota
	optTimeout
	optHelp
	optSimAddr
	optVerify
)

// spec returns the getopt_long call of t's program (rdma-core v44; xsrq
// as of 2024, after its -c got its argument), plus vsh's -h/--help,
// --backend, --timeout, --sim-addr and xsrq's --verify.
func (t Transport) spec() optSpec {
	common := []longOpt{
		{"port", true, 'p'}, {"ib-dev", true, 'd'}, {"ib-port", true, 'i'}, {"size", true, 's'},
	}
	var s optSpec
	switch t {
	case RC:
		s.short = "p:d:i:s:m:r:n:l:eg:oOPtcjN"
		s.long = append(common, []longOpt{
			{"mtu", true, 'm'}, {"rx-depth", true, 'r'}, {"iters", true, 'n'}, {"sl", true, 'l'},
			{"events", false, 'e'}, {"gid-idx", true, 'g'}, {"odp", false, 'o'}, {"iodp", false, 'O'},
			{"prefetch", false, 'P'}, {"ts", false, 't'}, {"chk", false, 'c'}, {"dm", false, 'j'},
			{"new_send", false, 'N'},
		}...)
	case UC:
		s.short = "p:d:i:s:m:r:n:l:eg:c"
		s.long = append(common, []longOpt{
			{"mtu", true, 'm'}, {"rx-depth", true, 'r'}, {"iters", true, 'n'}, {"sl", true, 'l'},
			{"events", false, 'e'}, {"gid-idx", true, 'g'}, {"chk", false, 'c'},
		}...)
	case UD:
		s.short = "p:d:i:s:r:n:l:eg:c"
		s.long = append(common, []longOpt{
			{"rx-depth", true, 'r'}, {"iters", true, 'n'}, {"sl", true, 'l'},
			{"events", false, 'e'}, {"gid-idx", true, 'g'}, {"chk", false, 'c'},
		}...)
	case SRQ:
		s.short = "p:d:i:s:m:q:r:n:l:eog:c"
		s.long = append(common, []longOpt{
			{"mtu", true, 'm'}, {"num-qp", true, 'q'}, {"rx-depth", true, 'r'}, {"iters", true, 'n'},
			{"sl", true, 'l'}, {"events", false, 'e'}, {"odp", false, 'o'}, {"gid-idx", true, 'g'},
			{"chk", false, 'c'},
		}...)
	case XSRQ:
		s.short = "p:d:i:s:m:n:l:eog:c:"
		s.long = append(common, []longOpt{
			{"mtu", true, 'm'}, {"clients", true, 'c'}, {"num_tests", true, 'n'}, {"sl", true, 'l'},
			{"events", false, 'e'}, {"odp", false, 'o'}, {"gid-idx", true, 'g'},
		}...)
		s.long = append(s.long, longOpt{"verify", false, optVerify})
	}
	s.short += "h"
	s.long = append(s.long, longOpt{"backend", true, optBackend}, longOpt{"timeout", true, optTimeout},
		longOpt{"help", false, optHelp}, longOpt{"sim-addr", true, optSimAddr})
	return s
}

// UsageError is a command line that cannot be run; the message says what
// is wrong and how to fix it.
type UsageError struct {
	Msg string
}

func (e *UsageError) Error() string { return e.Msg }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ParseArgs parses a command line after the program name: the program
// (rc, uc, ud, srq, xsrq), then rdma-core's flags and the optional server host, in
// any order, as glibc's getopt_long takes them. Errors are *OptionError
// (worded as getopt words them) or *UsageError.
func ParseArgs(args []string) (Options, error) {
	if len(args) == 0 {
		return Options{}, usageErrorf("say which ping-pong to run: rc, uc, ud, srq or xsrq (pingpong --help)")
	}
	t, err := ParseTransport(args[0])
	if err != nil {
		return Options{}, &UsageError{Msg: err.Error()}
	}
	return ParseFlags(t, args[1:])
}

// ParseFlags parses the flags and operands of one program (everything after
// "rc", "uc", "ud", "srq" or "xsrq").
func ParseFlags(t Transport, args []string) (Options, error) {
	o := Defaults(t)
	opts, operands, err := t.spec().parse(args)
	if err != nil {
		return o, err
	}
	for _, p := range opts {
		if err := o.apply(p); err != nil {
			return o, err
		}
	}
	if o.Help {
		return o, nil
	}
	switch len(operands) {
	case 0:
	case 1:
		o.Host = operands[0]
	default:
		return o, usageErrorf("one server host at most, got %d: %s (options go before or after it; a value with spaces needs quotes)",
			len(operands), strings.Join(operands, " "))
	}
	if o.Transport == SRQ {
		if o.NumQP > o.RxDepth {
			return o, usageErrorf("-r %d is too small for -q %d: the shared receive queue needs at least one receive per QP; raise -r or lower -q",
				o.RxDepth, o.NumQP)
		}
		if o.NumQP >= exchange.MaxQP {
			return o, usageErrorf("-q %d is too many: the exchange has room for %d QPs, so use at most %d",
				o.NumQP, exchange.MaxQP, exchange.MaxQP-1)
		}
	}
	if o.Transport == XSRQ && o.Host != "" {
		o.Clients = 1 // xsrq_pingpong: a client serves one connection, whatever -c says
	}
	if o.SimAddr != "" && o.Backend == "ibverbs" {
		return o, usageErrorf("--sim-addr %s puts the simulator on its UDP link; it has no meaning with --backend ibverbs (drop one of them)", o.SimAddr)
	}
	return o, nil
}

// apply sets the option p.
func (o *Options) apply(p parsedOpt) error {
	var err error
	switch p.val {
	case 'p':
		o.Port, err = intArg(p, 0, 65535, "a TCP port from 0 to 65535")
	case 'd':
		o.IBDev = p.arg
	case 'i':
		o.IBPort, err = intArg(p, 1, 255, "a port number from 1 (the first port) to 255")
	case 's':
		o.Size, err = intArg(p, 1, math.MaxInt32, "a message size in bytes, at least 1")
	case 'm':
		var n int
		n, err = intArg(p, math.MinInt32, math.MaxInt32, "one of 256, 512, 1024, 2048, 4096")
		if err == nil {
			o.MTU = verbs.MTUFromBytes(n)
			if o.MTU == 0 {
				err = usageErrorf("%s %s: the path MTU is one of 256, 512, 1024, 2048, 4096", p.name, p.arg)
			}
		}
	case 'r':
		o.RxDepth, err = intArg(p, 1, math.MaxInt32, "how many receives to keep posted, at least 1")
	case 'n':
		if o.Transport == XSRQ {
			o.Iters, err = intArg(p, 1, maxXSRQTests, fmt.Sprintf("the number of messages each way per client, 1 to %d", maxXSRQTests))
		} else {
			o.Iters, err = intArg(p, 1, math.MaxInt32, "the number of exchanges, at least 1")
		}
	case 'l':
		o.SL, err = intArg(p, 0, 15, "a service level from 0 to 15")
	case 'e':
		o.Events = true
	case 'g':
		o.GIDIndex, err = intArg(p, math.MinInt32, math.MaxInt32, "a GID index such as 1 (ibv_devinfo -v lists them), or -1 for none")
		if o.GIDIndex < 0 {
			o.GIDIndex = -1
		}
	case 'c':
		if o.Transport == XSRQ {
			o.Clients, err = intArg(p, 1, maxXSRQClients, fmt.Sprintf("the number of clients the server waits for, 1 to %d", maxXSRQClients))
		} else {
			o.Check = true
		}
	case optVerify:
		o.Check = true
	case 'q':
		o.NumQP, err = intArg(p, 1, math.MaxInt32, "the number of QPs, at least 1")
	case 'N':
		o.NewSend = true
	case 'o':
		o.Unsupported = append(o.Unsupported, "-o (--odp): on-demand paging")
	case 'O':
		o.Unsupported = append(o.Unsupported, "-O (--iodp): implicit on-demand paging")
	case 'P':
		o.Unsupported = append(o.Unsupported, "-P (--prefetch): prefetching an ODP MR")
	case 't':
		o.Unsupported = append(o.Unsupported, "-t (--ts): completion timestamps")
	case 'j':
		o.Unsupported = append(o.Unsupported, "-j (--dm): device memory")
	case optBackend:
		switch p.arg {
		case "sim", "ibverbs":
			o.Backend = p.arg
		default:
			err = usageErrorf("--backend %q: use sim (the simulated RNIC) or ibverbs (libibverbs: hardware, rxe)", p.arg)
		}
	case optTimeout:
		o.Timeout, err = durationArg(p)
	case optSimAddr:
		o.SimAddr, err = simAddrArg(p.arg)
	case 'h', optHelp:
		o.Help = true
	}
	return err
}

// parseCNumber parses an integer as strtol(s, NULL, 0) reads one — an
// optional sign, then 0x hex, 0 octal or decimal — but rejects anything
// left over, where strtol would silently stop.
func parseCNumber(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" || strings.ContainsAny(t, "_+-") {
		return 0, false
	}
	v, err := strconv.ParseUint(t, base, 63)
	if err != nil {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

func intArg(p parsedOpt, lo, hi int64, want string) (int, error) {
	v, ok := parseCNumber(p.arg)
	if !ok {
		return 0, usageErrorf("%s %q is not a number: want %s", p.name, p.arg, want)
	}
	if v < lo || v > hi {
		return 0, usageErrorf("%s %s is out of range: want %s", p.name, p.arg, want)
	}
	return int(v), nil
}

func durationArg(p parsedOpt) (time.Duration, error) {
	if v, ok := parseCNumber(p.arg); ok && v >= 0 && v <= math.MaxInt32 {
		return time.Duration(v) * time.Second, nil
	}
	d, err := time.ParseDuration(p.arg)
	if err != nil || d < 0 {
		return 0, usageErrorf("%s %q: want a duration such as 10s, 500ms or 2m (0 waits forever)", p.name, p.arg)
	}
	return d, nil
}

// pageSize is the page size of -c's pattern.
func (o *Options) pageSize() int {
	if o.PageSize > 0 {
		return o.PageSize
	}
	return os.Getpagesize()
}

// Args renders o as the flags that differ from the defaults, in rdma-core's
// spelling: "-s 64 -n 10 -g 1 -c". The host, when set, comes last.
func (o Options) Args() []string {
	d := Defaults(o.Transport)
	var a []string
	add := func(f string, v any) { a = append(a, f, fmt.Sprint(v)) }
	if o.Port != d.Port {
		add("-p", o.Port)
	}
	if o.IBDev != "" {
		add("-d", o.IBDev)
	}
	if o.IBPort != d.IBPort {
		add("-i", o.IBPort)
	}
	if o.Size != d.Size {
		add("-s", o.Size)
	}
	if o.Transport != UD && o.MTU != d.MTU && o.MTU.Valid() {
		add("-m", o.MTU.Bytes())
	}
	if o.Transport == SRQ && o.NumQP != d.NumQP {
		add("-q", o.NumQP)
	}
	if o.Transport == XSRQ && o.Clients != d.Clients && o.Host == "" {
		add("-c", o.Clients)
	}
	if o.Transport != XSRQ && o.RxDepth != d.RxDepth {
		add("-r", o.RxDepth)
	}
	if o.Iters != d.Iters {
		add("-n", o.Iters)
	}
	if o.SL != d.SL {
		add("-l", o.SL)
	}
	if o.Events {
		a = append(a, "-e")
	}
	if o.GIDIndex >= 0 {
		add("-g", o.GIDIndex)
	}
	switch {
	case o.Check && o.Transport == XSRQ:
		a = append(a, "--verify")
	case o.Check:
		a = append(a, "-c")
	}
	if o.Host != "" {
		a = append(a, o.Host)
	}
	return a
}

// Validate checks what ParseFlags checks, for Options built in code.
func (o Options) Validate() error {
	switch {
	case o.Transport < RC || o.Transport > XSRQ:
		return usageErrorf("unknown transport %d", int(o.Transport))
	case o.Size < 1:
		return usageErrorf("size %d: a message has at least 1 byte", o.Size)
	case o.Transport != UD && !o.MTU.Valid():
		return usageErrorf("path MTU %d: use one of 256, 512, 1024, 2048, 4096", int(o.MTU))
	case o.RxDepth < 1 && o.Transport != XSRQ:
		return usageErrorf("rx-depth %d: keep at least 1 receive posted", o.RxDepth)
	case o.Transport == XSRQ && (o.Clients < 1 || o.Clients > maxXSRQClients):
		return usageErrorf("clients %d: a server serves 1 to %d clients", o.Clients, maxXSRQClients)
	case o.Transport == XSRQ && o.Iters > maxXSRQTests:
		return usageErrorf("num_tests %d: at most %d messages each way per client", o.Iters, maxXSRQTests)
	case o.Iters < 1:
		return usageErrorf("iters %d: run at least 1 exchange", o.Iters)
	case o.IBPort < 1 || o.IBPort > 255:
		return usageErrorf("ib-port %d: ports are numbered from 1", o.IBPort)
	case o.SL < 0 || o.SL > 15:
		return usageErrorf("sl %d: a service level is 0 to 15", o.SL)
	case o.Transport == SRQ && (o.NumQP < 1 || o.NumQP >= exchange.MaxQP):
		return usageErrorf("num-qp %d: use 1 to %d", o.NumQP, exchange.MaxQP-1)
	case o.Transport == SRQ && o.NumQP > o.RxDepth:
		return usageErrorf("rx-depth %d is too small for %d QPs: the SRQ needs at least one receive per QP", o.RxDepth, o.NumQP)
	case o.SimAddr != "" && o.Backend == "ibverbs":
		return usageErrorf("--sim-addr %s puts the simulator on its UDP link; it has no meaning with --backend ibverbs (drop one of them)", o.SimAddr)
	}
	return nil
}

// simAddrArg checks --sim-addr: an IP address, optionally with the UDP
// link's port, 4791.
func simAddrArg(s string) (string, error) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return "", usageErrorf("--sim-addr %q is not an IP address: give a loopback address such as 127.0.0.2, a different one on each side, or an address of this host", s)
		}
		if ap.Port() != 4791 {
			return "", usageErrorf("--sim-addr %s: the simulator's UDP link uses port 4791, where every RoCEv2 peer sends; give the address alone", s)
		}
		a = ap.Addr()
	}
	if a.Zone() != "" && !a.IsLinkLocalUnicast() || a.Unmap().IsUnspecified() || a.IsMulticast() {
		return "", usageErrorf("--sim-addr %s: give an address of this host that can be a GID, such as 127.0.0.2 (only a link-local IPv6 address takes a zone: fe80::2%%eth1)", s)
	}
	return s, nil
}
