package cprograms

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A ping-pong case: rdma-core's ibv_TR_pingpong (or vsh's pingpong TR) on
// each side.
type ppCase struct {
	tr     string // rc, uc, ud, srq
	size   int    // -s
	iters  int    // -n
	events bool   // -e
	check  bool   // -c
}

func (c ppCase) String() string {
	s := fmt.Sprintf("%s -s %d -n %d", c.tr, c.size, c.iters)
	if c.events {
		s += " -e"
	}
	if c.check {
		s += " -c"
	}
	return s
}

// args are the options both sides take: always -d sim0 and -g 1 (RoCE
// needs a GID, and GID 1 is sim0's RoCEv2 GID).
func (c ppCase) args(port int) []string {
	a := []string{"-d", "sim0", "-g", "1", "-p", strconv.Itoa(port), "-s", strconv.Itoa(c.size), "-n", strconv.Itoa(c.iters)}
	if c.events {
		a = append(a, "-e")
	}
	if c.check {
		a = append(a, "-c")
	}
	return a
}

// ppCases are the sizes each ping-pong plays: 64 B, 4 KiB and 64 KiB (UD:
// 64 B and 2 KiB, within sim0's 4096-byte active MTU, which ud_pingpong
// checks -s against),
// some with completion events, some checking the data; fewer exchanges
// for the larger sizes.
var ppCases = []ppCase{
	{"rc", 64, 1000, false, false}, {"rc", 4096, 500, true, true}, {"rc", 65536, 100, false, true},
	{"uc", 64, 1000, true, false}, {"uc", 4096, 500, false, true}, {"uc", 65536, 100, true, true},
	{"srq", 64, 200, false, false}, {"srq", 4096, 100, true, true}, {"srq", 65536, 20, false, true},
	{"ud", 64, 1000, false, false}, {"ud", 2048, 500, true, true},
}

// resultRes are the two lines each side of a finished ping-pong prints.
var resultRes = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^\d+ bytes in \d+\.\d+ seconds = \d+\.\d+ Mbit/sec$`),
	regexp.MustCompile(`(?m)^\d+ iters in \d+\.\d+ seconds = \d+\.\d+ usec/iter$`),
}

// checkPingpong checks that each side printed its results and no bad data.
func checkPingpong(t *testing.T, server []string, sout string, client []string, cout string) {
	t.Helper()
	for _, side := range []struct{ name, out string }{{"server", sout}, {"client", cout}} {
		for _, re := range resultRes {
			if !re.MatchString(side.out) {
				t.Errorf("the %s printed no line matching %q\n%s", side.name, re, sides(server, sout, client, cout))
			}
		}
		if strings.Contains(side.out, "invalid data") {
			t.Errorf("the %s received bad data\n%s", side.name, sides(server, sout, client, cout))
		}
	}
}

// TestRdmaCorePingpong plays each of rdma-core's ibv_rc/uc/ud/srq_pingpong
// against itself, both under vsh run, on each size of ppCases.
func TestRdmaCorePingpong(t *testing.T) {
	for _, c := range ppCases {
		t.Run(c.String(), func(t *testing.T) {
			programCase(t)
			vsh, prog := built(t, "vsh"), debian(t, "ibv_"+c.tr+"_pingpong", "ibverbs-utils")
			parallel(t)
			port := tcpPort(t)
			server := vshRun(vsh, simAddr(t), nil, prog, c.args(port)...)
			client := vshRun(vsh, simAddr(t), nil, prog, append(c.args(port), "127.0.0.1")...)
			sout, cout := runPair(t, server, client, port)
			checkPingpong(t, server, sout, client, cout)
		})
	}
}

// TestPingpongAgainstGo plays each of rdma-core's ping-pongs against vsh's
// own pingpong (on the simulator's UDP link, without vsh run), each way
// round, checking the data on both sides.
func TestPingpongAgainstGo(t *testing.T) {
	cases := []ppCase{{"rc", 4096, 200, false, true}, {"uc", 4096, 200, true, true}, {"srq", 4096, 50, false, true}, {"ud", 2048, 200, true, true}}
	for _, c := range cases {
		for _, cServer := range []bool{true, false} {
			name := c.String() + ", Go server, C client"
			if cServer {
				name = c.String() + ", C server, Go client"
			}
			t.Run(name, func(t *testing.T) {
				programCase(t)
				vsh, pp, prog := built(t, "vsh"), built(t, "pingpong"), debian(t, "ibv_"+c.tr+"_pingpong", "ibverbs-utils")
				parallel(t)
				port := tcpPort(t)
				cSide := vshRun(vsh, simAddr(t), nil, prog, c.args(port)...)
				goSide := append([]string{pp, c.tr, "--sim-addr", simAddr(t)}, c.args(port)...)
				server, client := goSide, slices.Concat(cSide, []string{"127.0.0.1"})
				if cServer {
					server, client = cSide, slices.Concat(goSide, []string{"127.0.0.1"})
				}
				sout, cout := runPair(t, server, client, port)
				checkPingpong(t, server, sout, client, cout)
			})
		}
	}
}

// xrcdUnsupported is what ibv_xsrq_pingpong prints where ibv_open_xrcd
// fails with EOPNOTSUPP (95), as on kernel rxe, which has no XRC
// (rdma-core's libibverbs/examples/xsrq_pingpong.c, pp_init_ctx).
const xrcdUnsupported = "Couldn't Open the XRC Domain 95"

// TestXSRQPingpong runs rdma-core's ibv_xsrq_pingpong: without --sim-xrc
// the device has no XRC, as kernel rxe, and the program stops at
// ibv_open_xrcd; with --sim-xrc on both sides, a server for one client and
// the client both succeed.
func TestXSRQPingpong(t *testing.T) {
	t.Run("without --sim-xrc: no XRC domain", func(t *testing.T) {
		programCase(t)
		vsh, prog := built(t, "vsh"), debian(t, "ibv_xsrq_pingpong", "ibverbs-utils")
		parallel(t)
		argv := vshRun(vsh, simAddr(t), nil, prog, "-d", "sim0", "-g", "1", "-p", strconv.Itoa(tcpPort(t)))
		out, status := runOne(t, argv, pairLimit)
		if status != 1 || !strings.Contains(out, xrcdUnsupported) {
			t.Errorf("%s: exit status %d, want 1 and %q:\n%s", strings.Join(argv, " "), status, xrcdUnsupported, indent(out))
		}
	})
	t.Run("--sim-xrc: a server and one client", func(t *testing.T) {
		programCase(t)
		vsh, prog := built(t, "vsh"), debian(t, "ibv_xsrq_pingpong", "ibverbs-utils")
		parallel(t)
		port := tcpPort(t)
		args := []string{"-d", "sim0", "-g", "1", "-p", strconv.Itoa(port)}
		xrc := []string{"--sim-xrc"}
		server := vshRun(vsh, simAddr(t), xrc, prog, slices.Concat(args, []string{"-c", "1"})...)
		client := vshRun(vsh, simAddr(t), xrc, prog, slices.Concat(args, []string{"127.0.0.1"})...)
		sout, cout := runPair(t, server, client, port)
		for _, side := range []struct{ name, out string }{{"server", sout}, {"client", cout}} {
			if !regexp.MustCompile(`(?m)^success$`).MatchString(side.out) {
				t.Errorf("the %s did not print success\n%s", side.name, sides(server, sout, client, cout))
			}
		}
	})
}
