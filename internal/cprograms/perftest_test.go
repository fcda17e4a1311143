package cprograms

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

// clockCalibration is what perftest prints when its own measurement of the
// CPU clock (a regression of cycles against gettimeofday) was disturbed,
// as on a loaded machine: it then reports every time as inf.
var clockCalibration = regexp.MustCompile(`Correlation coefficient r\^2: \S+ < 0\.9`)

// calibrationAttempts is how often a pair runs when only perftest's clock
// calibration failed.
const calibrationAttempts = 3

// TestPerftest runs perftest's latency and bandwidth programs for SEND,
// RDMA WRITE and RDMA READ on RC, at 64 B and 64 KiB, -n 100: both sides
// exit 0, and each prints the results table with a row for the size whose
// t_min or BW average is positive (but ib_read_lat's server, as on any
// device).
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
			// The row's t_min or BW average must be a positive number:
			// perftest prints inf or 0.00 there when it has no clock (a
			// receiver's BW peak may be 0.00 at any time).
			figure := `\s+`
			if c.table == bwTable {
				figure = `\s+\d+\.\d+\s+`
			}
			row := regexp.MustCompile(`(?m)^\s*` + strconv.Itoa(c.size) + `\s+100` + figure + `(\d*[1-9]\d*\.\d+|\d+\.\d*[1-9]\d*)\s`)
			saddr, caddr := simAddr(t), simAddr(t)
			for attempt := 1; ; attempt++ {
				port := tcpPort(t)
				// -x 1: GID 1, sim0's RoCEv2 GID; -F: no cpufreq warning.
				args := []string{"-d", "sim0", "-x", "1", "-F", "-s", strconv.Itoa(c.size), "-n", "100", "-p", strconv.Itoa(port)}
				server := vshRun(vsh, saddr, nil, prog, args...)
				client := vshRun(vsh, caddr, nil, prog, append(args, "127.0.0.1")...)
				sout, cout := runPair(t, server, client, port)
				missing, calibration := c.withoutFigures(row, sout, cout)
				if len(missing) == 0 {
					return
				}
				if calibration && attempt < calibrationAttempts && !t.Failed() {
					t.Logf("perftest's own clock calibration failed on a busy machine (%q): its table has no figures; running the pair again", clockCalibration)
					continue
				}
				why := ""
				if calibration {
					why = fmt.Sprintf(" (perftest's own clock calibration failed, %d times)", attempt)
				}
				t.Errorf("the %s printed no results table (%q) with a positive figure for %d bytes%s\n%s", strings.Join(missing, " and "), c.table, c.size, why, sides(server, sout, client, cout))
				return
			}
		})
	}
}

// withoutFigures names the sides (server, client) that should print c's
// results table with a row matching row and did not, and says whether one
// of those printed perftest's failed clock calibration.
func (c perfCase) withoutFigures(row *regexp.Regexp, sout, cout string) (missing []string, calibration bool) {
	for _, side := range []struct{ name, out string }{{"server", sout}, {"client", cout}} {
		if (side.name == "client" || c.server) && (!c.table.MatchString(side.out) || !row.MatchString(side.out)) {
			missing = append(missing, side.name)
			calibration = calibration || clockCalibration.MatchString(side.out)
		}
	}
	return missing, calibration
}
