package cprograms

import (
	"regexp"
	"strconv"
	"testing"
)

// A perftest case: one program, both sides under vsh run.
type perfCase struct {
	prog   string
	size   int
	table  *regexp.Regexp // the results table's header
	server bool           // the server prints the table too
}

// perftest's results tables start with one of these header lines.
var (
	latTable = regexp.MustCompile(`(?m)^ #bytes #iterations\s+t_min\[usec\]\s+t_max\[usec\]\s+t_typical\[usec\]\s+t_avg\[usec\]`)
	bwTable  = regexp.MustCompile(`(?m)^ #bytes\s+#iterations\s+BW peak\[MB/sec\]\s+BW average\[MB/sec\]\s+MsgRate\[Mpps\]`)
)

// TestPerftest runs perftest's latency and bandwidth programs for SEND,
// RDMA WRITE and RDMA READ on RC, at 64 B and 64 KiB, -n 100: both sides
// exit 0, and each prints the results table with a row for the size (but
// ib_read_lat's server, as on any device).
func TestPerftest(t *testing.T) {
	var cases []perfCase
	for _, op := range []string{"send", "write", "read"} {
		for _, size := range []int{64, 65536} {
			// ib_read_lat's server only serves the reads: it measures nothing.
			cases = append(cases, perfCase{"ib_" + op + "_lat", size, latTable, op != "read"}, perfCase{"ib_" + op + "_bw", size, bwTable, true})
		}
	}
	for _, c := range cases {
		t.Run(c.prog+" -s "+strconv.Itoa(c.size), func(t *testing.T) {
			programCase(t)
			vsh, prog := built(t, "vsh"), debian(t, c.prog, "perftest")
			parallel(t)
			port := tcpPort(t)
			// -x 1: GID 1, sim0's RoCEv2 GID; -F: no cpufreq warning.
			args := []string{"-d", "sim0", "-x", "1", "-F", "-s", strconv.Itoa(c.size), "-n", "100", "-p", strconv.Itoa(port)}
			server := vshRun(vsh, simAddr(t), nil, prog, args...)
			client := vshRun(vsh, simAddr(t), nil, prog, append(args, "127.0.0.1")...)
			sout, cout := runPair(t, server, client, port)
			row := regexp.MustCompile(`(?m)^\s*` + strconv.Itoa(c.size) + `\s+100\s+\d+\.\d+`)
			for _, side := range []struct{ name, out string }{{"server", sout}, {"client", cout}} {
				if (side.name == "client" || c.server) && (!c.table.MatchString(side.out) || !row.MatchString(side.out)) {
					t.Errorf("the %s printed no results table (%q) with a row for %d bytes\n%s", side.name, c.table, c.size, sides(server, sout, client, cout))
				}
			}
		})
	}
}
