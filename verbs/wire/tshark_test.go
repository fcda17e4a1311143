package wire

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// tsharkFields are the fields the test asks tshark for, in column order.
var tsharkFields = []string{
	"frame.protocols",
	"udp.dstport",
	"infiniband.bth.opcode",
	"infiniband.bth.destqp",
	"infiniband.bth.psn",
	"infiniband.bth.se",
	"infiniband.bth.m",
	"infiniband.bth.padcnt",
	"infiniband.bth.tver",
	"infiniband.bth.p_key",
	"infiniband.bth.a",
	"infiniband.reth.va",
	"infiniband.reth.r_key",
	"infiniband.reth.dmalen",
	"infiniband.aeth.syndrome",
	"infiniband.aeth.msn",
	"infiniband.deth.q_key",
	"infiniband.deth.srcqp",
	"infiniband.immdt",
	"infiniband.ieth",
	"infiniband.atomiceth.swapdt",
	"infiniband.atomiceth.cmpdt",
	"infiniband.atomicacketh.origremdt",
	"infiniband.invariant.crc",
	"_ws.malformed",
	"_ws.expert.message",
}

// TestTshark writes a capture holding every opcode of every transport and
// checks that a real dissector, tshark, decodes each frame as InfiniBand
// over UDP 4791 with our opcode, QPN, PSN, BTH flags and extension header
// fields, without malformed-packet or expert complaints. Wireshark does not
// check the ICRC (rocev2-wire.md §3), so it only checks that the last four
// bytes are where it expects them; the ICRC itself is tested against the
// two reference vectors.
//
// The RPC-over-RDMA heuristic is disabled: it takes arbitrary SEND payloads
// for RPCoRDMA and reports them malformed (rocev2-wire.md §7a).
func TestTshark(t *testing.T) {
	tshark := toolcheck.Require(t, "tshark", "apt-get install tshark")
	pkts := allOpcodesCapture()
	path := filepath.Join(t.TempDir(), "all-opcodes.pcap")
	if err := os.WriteFile(path, writeCapture(t, pkts), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-r", path, "-n", "--disable-heuristic", "rpcrdma_infiniband",
		"-T", "fields", "-E", "separator=|", "-E", "occurrence=f"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tshark, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user preferences
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(pkts) {
		t.Fatalf("tshark printed %d frames, wrote %d:\n%s", len(lines), len(pkts), out)
	}
	t.Logf("tshark decoded %d frames (%d opcodes, IPv4 and IPv6)", len(lines), len(Opcodes()))
	for i, line := range lines {
		c := pkts[i]
		p := &c.p
		cols := strings.Split(line, "|")
		if len(cols) != len(tsharkFields) {
			t.Errorf("frame %d: %d columns, want %d: %q", i+1, len(cols), len(tsharkFields), line)
			continue
		}
		got := map[string]string{}
		for k, f := range tsharkFields {
			got[f] = cols[k]
		}
		name := strconv.Itoa(i+1) + " " + Describe(p)
		if !strings.Contains(got["frame.protocols"], ":udp:infiniband") {
			t.Errorf("frame %s: protocols %q, want InfiniBand over UDP", name, got["frame.protocols"])
		}
		if got["_ws.malformed"] != "" || got["_ws.expert.message"] != "" {
			t.Errorf("frame %s: tshark complains: malformed %q, expert %q", name, got["_ws.malformed"], got["_ws.expert.message"])
		}
		want := map[string]uint64{
			"udp.dstport":              UDPPort,
			"infiniband.bth.opcode":    uint64(p.BTH.Opcode),
			"infiniband.bth.destqp":    uint64(p.BTH.DestQP),
			"infiniband.bth.psn":       uint64(p.BTH.PSN),
			"infiniband.bth.se":        uint64(b2i(p.BTH.SE)),
			"infiniband.bth.m":         uint64(b2i(p.BTH.MigReq)),
			"infiniband.bth.padcnt":    uint64(p.PadCount()),
			"infiniband.bth.tver":      0,
			"infiniband.bth.p_key":     DefaultPKey,
			"infiniband.bth.a":         uint64(b2i(p.BTH.AckReq)),
			"infiniband.invariant.crc": 0, // filled below
		}
		// tshark reads the ICRC big-endian; we store it least-significant
		// byte first, so it shows our value byte-swapped.
		roce, _ := p.Append(nil, &c.n)
		icrc := CarriedICRC(roce)
		want["infiniband.invariant.crc"] = uint64(icrc>>24 | icrc>>8&0xff00 | icrc<<8&0xff0000 | icrc<<24)
		op := p.BTH.Opcode
		if op.Has(HasRETH) {
			want["infiniband.reth.va"] = p.RETH.VA
			want["infiniband.reth.r_key"] = uint64(p.RETH.RKey)
			want["infiniband.reth.dmalen"] = uint64(p.RETH.DMALen)
		}
		if op.Has(HasAtomicETH) {
			// Wireshark shows the AtomicETH's VA and R_Key with the RETH's fields.
			want["infiniband.reth.va"] = p.AtomicETH.VA
			want["infiniband.reth.r_key"] = uint64(p.AtomicETH.RKey)
			want["infiniband.atomiceth.swapdt"] = p.AtomicETH.SwapAdd
			want["infiniband.atomiceth.cmpdt"] = p.AtomicETH.Compare
		}
		if op.Has(HasAETH) {
			want["infiniband.aeth.syndrome"] = uint64(p.AETH.Syndrome)
			want["infiniband.aeth.msn"] = uint64(p.AETH.MSN)
		}
		if op.Has(HasAtomicAckETH) {
			want["infiniband.atomicacketh.origremdt"] = p.AtomicAckETH
		}
		if op.Has(HasDETH) {
			want["infiniband.deth.q_key"] = uint64(p.DETH.QKey)
			want["infiniband.deth.srcqp"] = uint64(p.DETH.SrcQP)
		}
		if op.Has(HasImmDt) {
			want["infiniband.immdt"] = uint64(p.ImmDt)
		}
		if op.Has(HasIETH) {
			want["infiniband.ieth"] = uint64(p.IETH)
		}
		for _, f := range tsharkFields[1 : len(tsharkFields)-2] {
			w, present := want[f]
			g := got[f]
			if !present {
				if g != "" {
					t.Errorf("frame %s: tshark shows %s = %q, which the opcode does not carry", name, f, g)
				}
				continue
			}
			v, err := parseTsharkUint(f, g)
			if err != nil {
				t.Errorf("frame %s: %s = %q: %v", name, f, g, err)
				continue
			}
			if v != w {
				t.Errorf("frame %s: %s = %#x, want %#x", name, f, v, w)
			}
		}
	}
}

// parseTsharkUint reads a field as tshark prints it: decimal, 0x-hex, a
// boolean, or (for byte fields such as ImmDt and IETH) bare hex digits.
func parseTsharkUint(field, s string) (uint64, error) {
	switch s {
	case "True":
		return 1, nil
	case "False":
		return 0, nil
	}
	if field == "infiniband.immdt" || field == "infiniband.ieth" {
		return strconv.ParseUint(strings.ReplaceAll(s, ":", ""), 16, 64)
	}
	return strconv.ParseUint(s, 0, 64)
}
