package pingpong

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/proctest"
	"github.com/vsh-rdma/vsh/internal/toolcheck"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// newFabric returns a two-device simulator on rxe's usual 1500-byte
// links (active MTU 1024), closed with the test.
func newFabric(t testing.TB) *sim.Fabric {
	t.Helper()
	f := sim.New(sim.Config{Devices: 2, Seed: 1})
	t.Cleanup(func() { f.Close() })
	return f
}

// newJumboFabric returns a two-device simulator on 9000-byte links (jumbo
// frames, active MTU 4096), where every path MTU fits.
func newJumboFabric(t testing.TB) *sim.Fabric {
	t.Helper()
	f := sim.New(sim.Config{Devices: 2, Seed: 1, Link: sim.LinkConfig{MTU: 9000}})
	t.Cleanup(func() { f.Close() })
	return f
}

var (
	probeOnce, longOnce sync.Once
	probeErr, longErr   error
)

// requireDataPath skips the test, loudly, when the backend's data path
// cannot complete one RC SEND between two QPs on one device: the ping-pong
// needs packets and completions, not only the control path. The check is a
// real one-shot probe, not a guess from versions.
func requireDataPath(t testing.TB) {
	t.Helper()
	probeOnce.Do(func() { probeErr = probeRCSend(sim.New(sim.Config{Devices: 1, Seed: 7}), 8, verbs.MTU1024) })
	if probeErr != nil {
		toolcheck.Missing(t, "the simulator's data path cannot complete an RC SEND ("+probeErr.Error()+
			"); the end-to-end ping-pong tests need verbs/sim to deliver packets and completions")
	}
}

// longRCPackets is a message length, in packets, beyond rxe's window of
// 128 unacknowledged PSNs (RXE_MAX_UNACKED_PSNS), which the requester can
// cross only when the ACKs it asks for every 64 packets reopen the window.
const longRCPackets = 200

// requireLongRCMessages skips, loudly, when the backend cannot complete
// one RC SEND of more than 128 packets (a real probe, as requireDataPath).
func requireLongRCMessages(t testing.TB) {
	t.Helper()
	longOnce.Do(func() {
		longErr = probeRCSend(sim.New(sim.Config{Devices: 1, Seed: 7}), longRCPackets*256, verbs.MTU256)
	})
	if longErr != nil {
		toolcheck.Missing(t, fmt.Sprintf("the simulator cannot complete an RC SEND of %d packets (%v): the requester "+
			"stops at rxe's window of 128 unacknowledged PSNs and is not woken when a mid-message ACK moves the window "+
			"(rxe's completer reschedules the requester when it was waiting for PSNs); RC and SRQ runs whose "+
			"messages exceed 128 packets (-s/-m > 128) cannot finish until verbs/sim does that", longRCPackets, longErr))
	}
}

// probeRCSend connects two RC QPs on the provider's first device
// (loopback) and sends one message of size bytes at the given path MTU.
func probeRCSend(p verbs.Provider, size int, mtu verbs.MTU) error {
	defer p.Close()
	devs, err := p.Devices()
	if err != nil || len(devs) == 0 {
		return fmt.Errorf("no device: %v", err)
	}
	ctx, err := devs[0].Open()
	if err != nil {
		return err
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		return err
	}
	mr, err := pd.AllocMR(2*size, verbs.AccessLocalWrite)
	if err != nil {
		return err
	}
	cq, err := ctx.CreateCQ(verbs.CQInitAttr{CQE: 4})
	if err != nil {
		return err
	}
	gid, err := ctx.QueryGID(1, 1)
	if err != nil {
		return err
	}
	var qps [2]verbs.QP
	for i := range qps {
		if qps[i], err = pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
			Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
			return err
		}
		a := verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}
		if err := qps[i].Modify(&a, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags); err != nil {
			return err
		}
	}
	for i, qp := range qps {
		a := verbs.QPAttr{State: verbs.QPSRTR, PathMTU: mtu, DestQPN: qps[1-i].Num(), MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AH: verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: gid, SGIDIndex: 1, HopLimit: 1}}}
		if err := qp.Modify(&a, verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|
			verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer); err != nil {
			return err
		}
		a = verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}
		if err := qp.Modify(&a, verbs.AttrState|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|verbs.AttrSQPSN|
			verbs.AttrMaxQPRdAtomic); err != nil {
			return err
		}
	}
	sge := []verbs.SGE{{Addr: mr.Addr(), Length: uint32(size), LKey: mr.LKey()}}
	if _, err := qps[1].PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mr.Addr() + uint64(size), Length: uint32(size), LKey: mr.LKey()}}}}); err != nil {
		return err
	}
	if _, err := qps[0].PostSend([]verbs.SendWR{{WRID: 2, SGList: sge, Opcode: verbs.WRSend, Flags: verbs.SendSignaled}}); err != nil {
		return err
	}
	got := map[uint64]verbs.WCStatus{}
	wc := make([]verbs.WC, 4)
	for deadline := time.Now().Add(2 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		n, err := cq.Poll(wc)
		if err != nil {
			return err
		}
		for _, w := range wc[:n] {
			got[w.WRID] = w.Status
		}
	}
	if len(got) < 2 {
		return fmt.Errorf("a send and its receive gave %d of 2 completions in 2s", len(got))
	}
	for id, st := range got {
		if st != verbs.WCSuccess {
			return fmt.Errorf("wr_id %d completed with %s", id, st)
		}
	}
	return nil
}

// result is one program run.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// runBoth runs a server and a client Program as two goroutines on one
// provider, with the real TCP exchange over 127.0.0.1 on a free port
// (appended to both command lines as -p). The client's host is 127.0.0.1.
func runBoth(t testing.TB, prov verbs.Provider, serverArgs, clientArgs string) (srv, cli result) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ps := " -p " + strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(string) (verbs.Provider, error) { return prov, nil }
	var wg sync.WaitGroup
	run := func(args string, listen func(int) (net.Listener, error), seed uint64, out *result) {
		defer wg.Done()
		var so, se proctest.Buf
		p := &Program{Stdout: &so, Stderr: &se, Open: open, Listen: listen, Rand: rand.New(rand.NewPCG(seed, 1))}
		out.code = p.Run(ctx, strings.Fields(args))
		out.stdout, out.stderr = so.String(), se.String()
	}
	wg.Add(2)
	go run(serverArgs+ps, func(p int) (net.Listener, error) {
		if p != port {
			return nil, fmt.Errorf("server asked for port %d, want %d", p, port)
		}
		return ln, nil
	}, 1, &srv)
	go run(clientArgs+ps+" 127.0.0.1", nil, 2, &cli)
	wg.Wait()
	return srv, cli
}

// The output formats of rdma-core's programs.
var (
	reLocal   = regexp.MustCompile(`^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$`)
	reLocalUD = regexp.MustCompile(`^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}): GID (\S+)$`)
	reRemote  = regexp.MustCompile(`^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$`)
	reBytes   = regexp.MustCompile(`^(\d+) bytes in (\d+\.\d\d) seconds = (\d+\.\d\d|inf) Mbit/sec$`)
	reIters   = regexp.MustCompile(`^(\d+) iters in (\d+\.\d\d) seconds = (\d+\.\d\d) usec/iter$`)
)

// parsed is a run's stdout, checked line by line against the formats.
type parsed struct {
	local, remote []string // "LID:QPN:PSN:GID"
	bytes, iters  int64
}

func parseOutput(t testing.TB, tr Transport, out string, nqp int) parsed {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2*nqp+2 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 2*nqp+2, out)
	}
	var p parsed
	lre := reLocal
	if tr == UD {
		lre = reLocalUD
	}
	for i, l := range lines {
		switch {
		case i < nqp:
			m := lre.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %d %q is not a local address line (%s)", i+1, l, lre)
			}
			p.local = append(p.local, strings.Join(m[1:], ":"))
		case i < 2*nqp:
			m := reRemote.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %d %q is not a remote address line", i+1, l)
			}
			p.remote = append(p.remote, strings.Join(m[1:], ":"))
		case i == 2*nqp:
			m := reBytes.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %d %q is not a bytes line", i+1, l)
			}
			p.bytes, _ = strconv.ParseInt(m[1], 10, 64)
		default:
			m := reIters.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("line %d %q is not an iters line", i+1, l)
			}
			p.iters, _ = strconv.ParseInt(m[1], 10, 64)
		}
	}
	return p
}
