package wire

import (
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// tsharkOpcodeColumn is a custom column that shows the BTH opcode's name as
// Wireshark resolves it ("Reliable Connection (RC) - SEND Only"); the test
// reads it back as the field _ws.col.<title>.
const tsharkOpcodeColumn = `gui.column.format:"Opcode","%Cus:infiniband.bth.opcode:0:R"`

// tsharkFields are the fields the test asks tshark for, in column order:
// three text fields, the numeric fields from udp.dstport on, and the two
// complaint fields.
var tsharkFields = []string{
	"frame.protocols",
	"_ws.col.Opcode",
	"infiniband.vendor",
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

// tsharkNumeric are the fields of tsharkFields compared as numbers.
var tsharkNumeric = tsharkFields[3 : len(tsharkFields)-2]

// TestTshark writes a capture holding every opcode of every transport and
// checks that a real dissector, tshark, decodes each frame as InfiniBand
// over UDP 4791 with our opcode (by number and by the name Wireshark gives
// it), QPN, PSN, BTH flags and extension header fields, without
// malformed-packet or expert complaints. Wireshark does not check the ICRC
// (rocev2-wire.md §3), so it only checks that the last four bytes are where
// it expects them; the ICRC itself is tested against the two reference
// vectors.
//
// tshark 4.0 (Debian 12) names the XRC opcodes but dissects nothing after
// their BTH: no XRCETH, RETH, AETH or ICRC fields, only an "Unknown/Vendor
// Specific Data" item (infiniband.vendor) holding the rest of the packet.
// For XRC frames the test therefore checks the BTH fields, that no other
// field appears, and that this data is byte for byte what follows our BTH:
// for a request its first four bytes, at BTH+12, are the XRCETH (00, then
// the SRQ number); for a response, the AETH or payload RC would carry there.
// A tshark that dissects XRC fails the test with a message saying so.
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
		"-o", tsharkOpcodeColumn, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=;"}
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
	// Wireshark's name for each RC operation, to compare XRC's with.
	rcNames := map[Opcode]string{}
	xrcLogged := false
	for i, line := range lines {
		c := pkts[i]
		p := &c.p
		cols := strings.Split(line, "|")
		if len(cols) != len(tsharkFields) {
			t.Errorf("frame %d: %d columns, want %d: %q", i+1, len(cols), len(tsharkFields), line)
			continue
		}
		name := strconv.Itoa(i+1) + " " + Describe(p)
		op := p.BTH.Opcode
		// tshark prints every occurrence of a field, joined by ";".
		// Some fields occur twice, as a subtree item and the field
		// itself (ImmDt, IETH), with the same value; the vendor data
		// (see checkTsharkXRC) occurs twice with different extents.
		got := map[string]string{}
		for k, f := range tsharkFields {
			if f == "infiniband.vendor" {
				got[f] = cols[k]
				continue
			}
			v, rest, _ := strings.Cut(cols[k], ";")
			for rest != "" {
				var w string
				w, rest, _ = strings.Cut(rest, ";")
				if w != v {
					t.Errorf("frame %s: tshark shows %s with different values: %q", name, f, cols[k])
				}
			}
			got[f] = v
		}
		// The opcode's name: "<LongName> (<transport>) - <operation>".
		prefix := op.Transport().LongName() + " (" + op.Transport().String() + ") - "
		opName, ok := strings.CutPrefix(got["_ws.col.Opcode"], prefix)
		if !ok {
			t.Errorf("frame %s: tshark names the opcode %q, want %q...", name, got["_ws.col.Opcode"], prefix)
		}
		switch op.Transport() {
		case RC:
			rcNames[op&opMaskOperation] = opName
		case XRC:
			if w, seen := rcNames[op&opMaskOperation]; !seen || opName != w {
				t.Errorf("frame %s: tshark names the XRC operation %q, its RC counterpart %q", name, opName, w)
			}
		}
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
		if op.Transport() == XRC {
			// Only the BTH is dissected; the rest is vendor data.
			delete(want, "infiniband.invariant.crc")
			checkTsharkXRC(t, name, p, roce, got["infiniband.vendor"])
			if !xrcLogged && op.Has(HasXRCETH) {
				t.Logf("tshark on frame %s: opcode %q, vendor data %q", name, got["_ws.col.Opcode"], got["infiniband.vendor"])
				xrcLogged = true
			}
		} else {
			if got["infiniband.vendor"] != "" {
				t.Errorf("frame %s: tshark shows vendor data %q", name, got["infiniband.vendor"])
			}
			wantTsharkHeaders(p, want)
		}
		for _, f := range tsharkNumeric {
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

// wantTsharkHeaders adds to want the extension header fields tshark shows
// for p, an RC, UC or UD packet.
func wantTsharkHeaders(p *Packet, want map[string]uint64) {
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
}

// checkTsharkXRC checks what tshark 4.0 makes of an XRC packet after its
// BTH: an item of the four bytes at BTH+12, then one of everything from
// there to the end (headers, payload, pad, ICRC), both infiniband.vendor,
// which vendor holds joined by ";". roce is our encoding of p.
func checkTsharkXRC(t *testing.T, name string, p *Packet, roce []byte, vendor string) {
	t.Helper()
	if vendor == "" {
		t.Errorf("frame %s: tshark shows no vendor data after the BTH of an XRC packet; "+
			"if this tshark dissects XRC (XRCETH and the rest), check its fields instead", name)
		return
	}
	first, all, _ := strings.Cut(vendor, ";")
	if want := hex.EncodeToString(roce[BTHLen : BTHLen+4]); first != want {
		t.Errorf("frame %s: tshark's data at BTH+12 is %q, want %q", name, first, want)
	}
	if want := hex.EncodeToString(roce[BTHLen:]); all != want {
		t.Errorf("frame %s: tshark's data after the BTH is\n %q, want\n %q", name, all, want)
	}
	if p.BTH.Opcode.Has(HasXRCETH) {
		srqn := p.XRCETH & 0xffffff
		if want := hex.EncodeToString([]byte{0, byte(srqn >> 16), byte(srqn >> 8), byte(srqn)}); first != want {
			t.Errorf("frame %s: the XRCETH at BTH+12 is %q, want %q (reserved 00, SRQN %#06x)", name, first, want, srqn)
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
