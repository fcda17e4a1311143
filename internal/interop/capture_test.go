package interop

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/internal/toolcheck"
	"github.com/vsh-rdma/vsh/verbs/wire"
)

// TestCapture captures the simulator's end of the veth while rdma-core's
// programs on rxe1 and pingpong on the simulator exchange RC, UC, UD and
// SRQ traffic both ways, over IPv6 and IPv4, and checks every RoCEv2
// packet in the capture: its ICRC, recomputed with verbs/wire over the
// real IP and UDP headers in the capture, is the one it carries (Wireshark
// does not check ICRCs), and tshark finds no malformed packet.
func TestCapture(t *testing.T) {
	w := needWire(t)
	dumpcap := toolcheck.Require(t, "dumpcap", "apt-get install tshark")
	tshark := toolcheck.Require(t, "tshark", "apt-get install tshark")
	file := filepath.Join(t.TempDir(), "veth.pcap")
	capt := exec.Command(dumpcap, "-i", "rxeveth1", "-q", "-P", "-w", file, "-f", "udp port 4791")
	stderr, err := capt.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := capt.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var all []string
		for sc.Scan() {
			all = append(all, sc.Text())
			if strings.Contains(sc.Text(), "Capturing on") {
				started <- ""
			}
		}
		started <- strings.Join(all, "\n")
	}()
	select {
	case msg := <-started:
		if msg != "" {
			t.Fatalf("dumpcap: %s", msg)
		}
	case <-time.After(20 * time.Second):
		capt.Process.Kill()
		t.Fatal("dumpcap did not start capturing within 20 s")
	}
	port := 21000
	for _, v4 := range []bool{false, true} {
		for _, p := range []point{
			{"rc", 3000, 1024, 20, true, v4}, {"rc", 3000, 1024, 20, false, v4},
			{"uc", 2000, 1024, 10, false, v4}, {"ud", 500, 0, 10, true, v4}, {"srq", 1000, 1024, 5, false, v4},
		} {
			port++
			kernel, sim := w.argv(p, port)
			server, client := sim, kernel
			if p.kernelServer {
				server, client = kernel, sim
			}
			if sout, cout, err := proctest.RunPair(server, client, port, time.Minute); err != nil {
				t.Errorf("%v: %v\n%s\n%s", p, err, sout, cout)
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	capt.Process.Signal(syscall.SIGINT)
	if err := capt.Wait(); err != nil {
		t.Logf("dumpcap: %v", err)
	}

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("the capture's link type is %v, want Ethernet", r.LinkType())
	}
	counts := map[string]int{}
	bad, wrongHop := 0, 0
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 14 {
			continue
		}
		et := binary.BigEndian.Uint16(data[12:])
		fam := map[uint16]string{0x0800: "IPv4", 0x86dd: "IPv6"}[et]
		if fam == "" {
			continue
		}
		ip := data[14:]
		computed, carried, err := wire.PacketICRC(ip)
		if err != nil {
			t.Errorf("a %s packet: %v", fam, err)
			bad++
			continue
		}
		var src string
		if fam == "IPv4" {
			src = fmt.Sprint(ip[12:16])
		} else {
			src = fmt.Sprintf("%x", ip[8:24])
		}
		dir := "sim→kernel"
		if strings.Contains(src, "[198 51 100 1]") || strings.HasSuffix(src, "0001") {
			dir = "kernel→sim"
		}
		counts[fam+" "+dir]++
		// Both ends resolve the AV as the kernel does: the hop limit the
		// programs ask for (1) becomes the route's, 64.
		hop := ip[7]
		if fam == "IPv4" {
			hop = ip[8]
		}
		if hop != 64 {
			if wrongHop++; wrongHop <= 3 {
				t.Errorf("%s %s packet with TTL/hop limit %d, want 64", fam, dir, hop)
			}
		}
		if computed != carried {
			if bad++; bad <= 10 {
				t.Errorf("%s %s packet % x...: ICRC carried %#08x, computed over the captured headers %#08x", fam, dir, ip[:min(len(ip), 60)], carried, computed)
			}
		}
	}
	t.Logf("RoCEv2 packets checked: %v", counts)
	for _, k := range []string{"IPv6 kernel→sim", "IPv6 sim→kernel", "IPv4 kernel→sim", "IPv4 sim→kernel"} {
		if counts[k] == 0 {
			t.Errorf("the capture has no %s packet", k)
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	frames := func(filter string) []string {
		cmd := exec.Command(tshark, "-r", file, "--disable-heuristic", "rpcrdma_infiniband",
			"-Y", filter, "-T", "fields", "-e", "frame.number")
		var stderr strings.Builder
		cmd.Stderr = &stderr // "Running as user root" and the like
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark -Y %q: %v\n%s", filter, err, stderr.String())
		}
		return strings.Fields(string(out))
	}
	malformed := frames("_ws.malformed")
	if len(malformed) > 0 {
		t.Errorf("tshark finds malformed packets in the capture: frames %s", strings.Join(malformed, ", "))
	}
	if n := len(frames("infiniband.bth.opcode")); n != total {
		t.Errorf("tshark decodes %d packets as RoCEv2, want all %d", n, total)
	}
	fmt.Printf("RXE↔SIM capture on rxeveth1: %d RoCEv2 packets (%v), %d with a wrong ICRC, %d malformed for tshark\n", total, counts, bad, len(malformed))
}
