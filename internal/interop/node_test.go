package interop

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/ibverbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// A node is one side of a one-sided or fault test: an RC QP with a 64 KiB
// MR open to remote reads, writes and atomics, on the kernel's device
// (verbs/ibverbs, in this process) or on the simulator (a copy of this
// test binary, driven through a pipe: remote), as two hosts would be.
type node struct {
	prov verbs.Provider
	ctx  verbs.Context
	pd   verbs.PD
	cq   verbs.CQ
	qp   verbs.QP
	mr   verbs.MR
	psn  uint32

	mu     sync.Mutex
	events []string // the simulator's packet trace: "summary: verdict"
}

const nodeMR = 64 << 10

// endpoint is what each side tells the other: an RC QP and its MR.
type endpoint struct {
	QPN, PSN uint32
	GID      verbs.GID
	Addr     uint64
	RKey     uint32
}

// wrSpec is a work request, by offsets into the two MRs.
type wrSpec struct {
	Opcode        verbs.WROpcode
	Off, Len      int
	RemoteOff     int
	Imm           uint32
	Compare, Swap uint64
}

// request is one call on a node.
type request struct {
	Op       string // open, connect, pattern, put64, read, post_recv, post, poll, drain, fault, gid, stats, events
	Addr     string // open: the simulator's address
	Dev      string // open: the kernel's device
	GIDIndex int
	Peer     endpoint // connect
	Timeout  uint8
	Retry    uint8
	Off, Len int
	Seed     byte
	Value    uint64
	WR       wrSpec
	Wait     time.Duration
	Fault    verbs.FaultRule
}

type wcOut struct {
	Status  verbs.WCStatus
	Opcode  verbs.WCOpcode
	ByteLen uint32
	Imm     uint32
	WithImm bool
}

type reply struct {
	Stats  sim.UDPLinkStats
	Err    string
	End    endpoint
	Bytes  []byte
	WCs    []wcOut
	Events []string
}

// pattern returns n bytes that depend on seed and offset.
func pattern(off, n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((off+i)*7) ^ seed
	}
	return b
}

// do runs one request.
func (n *node) do(r request) (rep reply) {
	defer func() {
		if p := recover(); p != nil {
			rep = reply{Err: fmt.Sprint("panic: ", p)}
		}
	}()
	if err := n.run(r, &rep); err != nil {
		rep.Err = err.Error()
	}
	return rep
}

func (n *node) run(r request, rep *reply) error {
	all := verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic
	switch r.Op {
	case "open":
		var err error
		if r.Addr != "" {
			f, err := sim.NewUDP(sim.Config{Devices: 1, Seed: 1}, r.Addr)
			if err != nil {
				return err
			}
			n.prov = f
			f.ObservePackets(func(ev verbs.PacketEvent) {
				n.mu.Lock()
				if len(n.events) < 10000 {
					n.events = append(n.events, ev.From+" > "+ev.To+" "+ev.Summary+": "+ev.Verdict)
				}
				n.mu.Unlock()
			})
		} else if n.prov, err = ibverbs.New(); err != nil {
			return err
		}
		devs, err := n.prov.Devices()
		if err != nil {
			return err
		}
		var dev verbs.Device
		for _, d := range devs {
			if r.Dev == "" || d.Name() == r.Dev {
				dev = d
				break
			}
		}
		if dev == nil {
			return fmt.Errorf("no device %q", r.Dev)
		}
		if n.ctx, err = dev.Open(); err != nil {
			return err
		}
		if n.pd, err = n.ctx.AllocPD(); err != nil {
			return err
		}
		if n.mr, err = n.pd.AllocMR(nodeMR, all); err != nil {
			return err
		}
		if n.cq, err = n.ctx.CreateCQ(verbs.CQInitAttr{CQE: 64}); err != nil {
			return err
		}
		if n.qp, err = n.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: n.cq, RecvCQ: n.cq,
			Cap: verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
			return err
		}
		if err := n.qp.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: all},
			verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags); err != nil {
			return err
		}
		gid, err := n.ctx.QueryGID(1, r.GIDIndex)
		if err != nil {
			return err
		}
		n.psn = 0x1000 + n.qp.Num()&0xff
		rep.End = endpoint{QPN: n.qp.Num(), PSN: n.psn, GID: gid, Addr: n.mr.Addr(), RKey: n.mr.RKey()}
	case "connect":
		av := verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: r.Peer.GID, SGIDIndex: uint8(r.GIDIndex), HopLimit: 1}}
		rtr := func() error {
			return n.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: av, PathMTU: verbs.MTU1024, DestQPN: r.Peer.QPN,
				RQPSN: r.Peer.PSN, MaxDestRdAtomic: 1, MinRNRTimer: 12},
				verbs.AttrState|verbs.AttrAV|verbs.AttrPathMTU|verbs.AttrDestQPN|verbs.AttrRQPSN|verbs.AttrMaxDestRdAtomic|verbs.AttrMinRNRTimer)
		}
		err := rtr()
		if errors.Is(err, verbs.ETIMEDOUT) {
			// The kernel resolves the dgid's MAC (ib_resolve_eth_dmac); the
			// first neighbour discovery after the guest boots can take
			// longer than its wait under TCG. The neighbour is known now.
			err = rtr()
		}
		if err != nil {
			return err
		}
		return n.qp.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: r.Timeout, RetryCnt: r.Retry, RNRRetry: 7, SQPSN: n.psn, MaxRdAtomic: 1},
			verbs.AttrState|verbs.AttrTimeout|verbs.AttrRetryCnt|verbs.AttrRNRRetry|verbs.AttrSQPSN|verbs.AttrMaxQPRdAtomic)
	case "pattern":
		copy(n.mr.Bytes()[r.Off:r.Off+r.Len], pattern(r.Off, r.Len, r.Seed))
	case "put64":
		binary.LittleEndian.PutUint64(n.mr.Bytes()[r.Off:], r.Value)
	case "read":
		rep.Bytes = append([]byte(nil), n.mr.Bytes()[r.Off:r.Off+r.Len]...)
	case "post_recv":
		_, err := n.qp.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: n.mr.Addr() + uint64(r.Off), Length: uint32(r.Len), LKey: n.mr.LKey()}}}})
		return err
	case "post":
		w := r.WR
		wr := verbs.SendWR{WRID: 2, Opcode: w.Opcode, Flags: verbs.SendSignaled, Imm: w.Imm,
			SGList:     []verbs.SGE{{Addr: n.mr.Addr() + uint64(w.Off), Length: uint32(w.Len), LKey: n.mr.LKey()}},
			RemoteAddr: r.Peer.Addr + uint64(w.RemoteOff), RKey: r.Peer.RKey, CompareAdd: w.Compare, Swap: w.Swap}
		if _, err := n.qp.PostSend([]verbs.SendWR{wr}); err != nil {
			return err
		}
		return n.poll(1, r.Wait, rep)
	case "poll":
		return n.poll(r.Len, r.Wait, rep)
	case "drain": // whatever completes within r.Wait
		if err := n.poll(1<<30, r.Wait, rep); err != nil && !strings.Contains(err.Error(), "completions within") {
			return err
		}
	case "fault":
		fi, ok := n.prov.(verbs.FaultInjector)
		if !ok {
			return fmt.Errorf("%s has no fault rules", n.prov.Name())
		}
		_, err := fi.AddFault(r.Fault)
		return err
	case "gid":
		g, err := n.ctx.QueryGID(1, r.GIDIndex)
		if err != nil {
			return err
		}
		rep.End.GID = g
	case "stats":
		f, ok := n.prov.(*sim.Fabric)
		if !ok {
			return fmt.Errorf("%s has no UDP link", n.prov.Name())
		}
		rep.Stats = f.UDPStats()
	case "events":
		n.mu.Lock()
		rep.Events, n.events = n.events, nil
		n.mu.Unlock()
	default:
		return fmt.Errorf("unknown op %q", r.Op)
	}
	return nil
}

// poll waits up to wait for want completions.
func (n *node) poll(want int, wait time.Duration, rep *reply) error {
	if wait == 0 {
		wait = 10 * time.Second
	}
	deadline := time.Now().Add(wait)
	wc := make([]verbs.WC, 4)
	for len(rep.WCs) < want {
		k, err := n.cq.Poll(wc)
		if err != nil {
			return err
		}
		for _, w := range wc[:k] {
			rep.WCs = append(rep.WCs, wcOut{w.Status, w.Opcode, w.ByteLen, w.Imm, w.Flags&verbs.WCWithImm != 0})
		}
		if k == 0 {
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d completions within %v", len(rep.WCs), want, wait)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	return nil
}

// A side is a node here or in the helper process.
type side interface {
	call(t *testing.T, r request) reply
}

type local struct{ n *node }

func (l local) call(t *testing.T, r request) reply {
	t.Helper()
	rep := l.n.do(r)
	if rep.Err != "" {
		t.Fatalf("kernel side, %s: %s", r.Op, rep.Err)
	}
	return rep
}

// remote is the simulator's node in the helper process.
type remote struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

const helperEnv = "VSH_INTEROP_HELPER"

// startRemote starts this test binary as the simulator's side.
func (w *labWire) startRemote(t *testing.T) *remote {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe, "-test.run", "^TestHelperSimSide$", "-test.count=1")
	c.Env = append(os.Environ(), helperEnv+"=1")
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r := &remote{cmd: c, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); c.Process.Kill(); c.Wait() })
	return r
}

func (r *remote) call(t *testing.T, q request) reply {
	t.Helper()
	b, _ := json.Marshal(q)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("simulator side, %s: %v", q.Op, err)
	}
	for {
		line, err := r.out.ReadString('\n')
		if err != nil {
			t.Fatalf("simulator side, %s: %v", q.Op, err)
		}
		if rest, ok := strings.CutPrefix(line, "PEER "); ok {
			var rep reply
			if err := json.Unmarshal([]byte(rest), &rep); err != nil {
				t.Fatalf("simulator side, %s: %v", q.Op, err)
			}
			if rep.Err != "" {
				t.Fatalf("simulator side, %s: %s", q.Op, rep.Err)
			}
			return rep
		}
	}
}

// TestHelperSimSide is the simulator's side of the tests that need one,
// started by them in the namespace vshpeer; on its own it does nothing.
func TestHelperSimSide(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("the simulator's side of TestOneSided and TestFaults, which start it")
	}
	var n node
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r request
		rep := reply{}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			rep.Err = err.Error()
		} else {
			rep = n.do(r)
		}
		b, _ := json.Marshal(rep)
		fmt.Printf("PEER %s\n", b)
	}
	if n.prov != nil {
		n.prov.Close()
	}
}
