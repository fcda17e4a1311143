//go:build linux && cgo && ibverbs

package ibverbs

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// hasRDMA reports whether this machine's kernel lists RDMA devices.
func hasRDMA() bool {
	ents, err := os.ReadDir("/sys/class/infiniband")
	return err == nil && len(ents) > 0
}

// TestNewWithoutDevices: on a machine with no RDMA device (the host of the
// lab: its kernel has no ib_uverbs), New says so clearly.
func TestNewWithoutDevices(t *testing.T) {
	if hasRDMA() {
		t.Skip("this machine has RDMA devices; TestConformanceRXE covers them")
	}
	p, err := New()
	if err == nil {
		p.Close()
		t.Fatal("New() succeeded on a machine with no /sys/class/infiniband")
	}
	if !errors.Is(err, ErrNoDevices) || !strings.Contains(err.Error(), "no RDMA devices found") {
		t.Errorf("New() = %v; want ErrNoDevices, \"no RDMA devices found\"", err)
	}
	t.Logf("New() = %v", err)
	// Without ib_uverbs, libibverbs 44 fails the list with ENOSYS; an empty
	// list gives no errno. Either way the error says what to do.
	if ve, ok := verbs.AsError(err); ok {
		if ve.Op != "ibv_get_device_list" || ve.Hint == "" {
			t.Errorf("the wrapped error = %+v; want ibv_get_device_list with a hint", ve)
		}
	} else if !strings.Contains(err.Error(), "rdma link add") {
		t.Errorf("New() = %v; want a way to create a device", err)
	}
}

func TestDeviceAttrFromC(t *testing.T) {
	got := hookDeviceAttr()
	want := verbs.DeviceAttr{FWVer: "1.2.3", NodeGUID: 0x0102030405060708, SysImageGUID: 0x1112131415161718,
		MaxMRSize: 4, PageSizeCap: 5, VendorID: 6, VendorPartID: 7, HWVer: 8, MaxQP: 9, MaxQPWR: 10, DeviceCapFlags: 11,
		MaxSGE: 12, MaxSGERd: 13, MaxCQ: 14, MaxCQE: 15, MaxMR: 16, MaxPD: 17, MaxQPRdAtom: 18, MaxEECRdAtom: 19,
		MaxResRdAtom: 20, MaxQPInitRdAtom: 21, MaxEECInitRdAtom: 22, AtomicCap: 1, MaxEE: 24, MaxRDD: 25, MaxMW: 26,
		MaxRawIPv6QP: 27, MaxRawEthyQP: 28, MaxMcastGrp: 29, MaxMcastQPAttach: 30, MaxTotalMcastQPAtt: 31, MaxAH: 32,
		MaxFMR: 33, MaxMapPerFMR: 34, MaxSRQ: 35, MaxSRQWR: 36, MaxSRQSGE: 37, MaxPKeys: 38, LocalCAAckDelay: 39, PhysPortCnt: 40}
	if got != want {
		t.Errorf("deviceAttrFromC:\n got %+v\nwant %+v", got, want)
	}
}

func TestPortAttrFromC(t *testing.T) {
	got := hookPortAttr()
	want := verbs.PortAttr{State: verbs.PortActive, MaxMTU: verbs.MTU4096, ActiveMTU: verbs.MTU1024, GIDTblLen: 4,
		PortCapFlags: 5, MaxMsgSz: 6, BadPKeyCntr: 7, QKeyViolCntr: 8, PKeyTblLen: 9, LID: 10, SMLID: 11, LMC: 12,
		MaxVLNum: 13, SMSL: 14, SubnetTimeout: 15, InitTypeReply: 16, ActiveWidth: 17, ActiveSpeed: 18, PhysState: 19,
		LinkLayer: verbs.LinkLayerEthernet, Flags: verbs.PortFlagGRHRequired}
	if got != want {
		t.Errorf("portAttrFromC:\n got %+v\nwant %+v", got, want)
	}
}

// fullQPAttr has a distinct value in every field.
func fullQPAttr() verbs.QPAttr {
	return verbs.QPAttr{
		State: verbs.QPSRTS, CurState: verbs.QPSRTR, PathMTU: verbs.MTU2048, PathMigState: verbs.MigArmed,
		QKey: 0x11111111, RQPSN: 0x123456, SQPSN: 0xabcdef, DestQPN: 0x42, AccessFlags: verbs.AccessRemoteWrite | verbs.AccessRemoteRead,
		Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 2, MaxSendSGE: 3, MaxRecvSGE: 4, MaxInlineData: 5},
		AH: verbs.AHAttr{GRH: verbs.GlobalRoute{DGID: verbs.GID{0xfe, 0x80, 15: 1}, FlowLabel: 7, SGIDIndex: 1, HopLimit: 64, TrafficClass: 3},
			DLID: 9, SL: 2, SrcPathBits: 1, StaticRate: 4, IsGlobal: true, PortNum: 1},
		AltAH:     verbs.AHAttr{GRH: verbs.GlobalRoute{DGID: verbs.GID{0xff, 15: 2}, SGIDIndex: 2}, DLID: 8, PortNum: 2},
		PKeyIndex: 6, AltPKeyIndex: 7, EnSQDAsyncNotify: true, SQDraining: true, MaxRdAtomic: 8, MaxDestRdAtomic: 16,
		MinRNRTimer: 12, PortNum: 1, Timeout: 14, RetryCnt: 6, RNRRetry: 5, AltPortNum: 2, AltTimeout: 13, RateLimit: 1000,
	}
}

func TestQPAttrRoundTrip(t *testing.T) {
	a := fullQPAttr()
	if got := hookQPAttrRoundTrip(a); !reflect.DeepEqual(got, a) {
		t.Errorf("QPAttr round trip:\n got %+v\nwant %+v", got, a)
	}
	dgid, port, rq, sq := hookQPAttrOffsets(a)
	if dgid != a.AH.GRH.DGID || port != 1 || rq != a.RQPSN || sq != a.SQPSN {
		t.Errorf("C sees dgid %v port %d rq_psn %#x sq_psn %#x", dgid, port, rq, sq)
	}
	if got := hookQPAttrRoundTrip(verbs.QPAttr{}); got != (verbs.QPAttr{}) {
		t.Errorf("zero QPAttr round trip = %+v", got)
	}
}

func TestSRQAttrRoundTrip(t *testing.T) {
	a := verbs.SRQAttr{MaxWR: 127, MaxSGE: 3, SRQLimit: 10}
	if got := hookSRQAttrRoundTrip(a); got != a {
		t.Errorf("SRQAttr round trip = %+v; want %+v", got, a)
	}
	if _, _, ok := srqAttrFits(verbs.SRQAttr{MaxWR: -1}); ok {
		t.Errorf("srqAttrFits(max_wr -1) = ok")
	}
	if _, _, ok := capFits(verbs.QPCap{MaxSendWR: 1 << 33}); ok {
		t.Errorf("capFits(1<<33) = ok")
	}
}

func TestWCFromC(t *testing.T) {
	for _, w := range []verbs.WC{
		{WRID: 7, Status: verbs.WCSuccess, Opcode: verbs.WCOpRecvRDMAWithImm, ByteLen: 64, Imm: 0xdeadbeef, QPNum: 0x11,
			SrcQP: 0x12, Flags: verbs.WCWithImm | verbs.WCGRH, PKeyIndex: 1, SLID: 2, SL: 3, DLIDPathBits: 4},
		{WRID: 8, Status: verbs.WCRNRRetryExcErr, Opcode: verbs.WCOpSend, VendorErr: 0x81, QPNum: 0x13},
		{WRID: 9, Opcode: verbs.WCOpRecv, Imm: 0x1234, Flags: verbs.WCWithInv},
	} {
		if got := hookWC(w); got != w {
			t.Errorf("wcFromC:\n got %+v\nwant %+v", got, w)
		}
	}
}

// TestBuildSend checks the ibv_send_wr chain PostSend hands libibverbs:
// one contiguous chain, SGEs in order, each opcode's union member, the
// immediate in network order.
func TestBuildSend(t *testing.T) {
	sge := func(a uint64) verbs.SGE { return verbs.SGE{Addr: a, Length: uint32(a & 0xff), LKey: 0x100} }
	wrs := []verbs.SendWR{
		{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: []verbs.SGE{sge(0x1010)}},
		{WRID: 2, Opcode: verbs.WRRDMAWriteWithImm, Imm: 0x01020304, SGList: []verbs.SGE{sge(0x2020), sge(0x2030)}, RemoteAddr: 0xabc000, RKey: 0x55},
		{WRID: 3, Opcode: verbs.WRAtomicCmpAndSwp, SGList: []verbs.SGE{sge(0x3008)}, RemoteAddr: 0xdef000, RKey: 0x66, CompareAdd: 42, Swap: 7},
		{WRID: 4, Opcode: verbs.WRSendWithInv, InvRKey: 0x77},
		{WRID: 5, Opcode: verbs.WRRDMARead, SGList: []verbs.SGE{sge(0x5040)}, RemoteAddr: 0x123000, RKey: 0x88},
	}
	got := hookBuildSend(verbs.QPTypeRC, wrs)
	offs := []int{0, 1, 3, -1, 4}
	for i, g := range got {
		wr := wrs[i]
		wantNext := i + 1
		if i == len(wrs)-1 {
			wantNext = -1
		}
		if g.WRID != wr.WRID || g.Next != wantNext || g.SGEOffset != offs[i] || g.NumSGE != len(wr.SGList) || g.Opcode != wr.Opcode || g.Flags != wr.Flags {
			t.Errorf("WR %d: %+v", i, g)
		}
		if len(wr.SGList) > 0 && !reflect.DeepEqual(g.SGEs, wr.SGList) {
			t.Errorf("WR %d SGEs = %v; want %v", i, g.SGEs, wr.SGList)
		}
		if wr.Opcode.IsRDMA() && (g.RemoteAddr != wr.RemoteAddr || g.RKey != wr.RKey) {
			t.Errorf("WR %d remote %#x/%#x; want %#x/%#x", i, g.RemoteAddr, g.RKey, wr.RemoteAddr, wr.RKey)
		}
	}
	if got[1].ImmWire != [4]byte{1, 2, 3, 4} {
		t.Errorf("imm_data bytes = %v; want network order 01 02 03 04", got[1].ImmWire)
	}
	if got[2].CompareAdd != 42 || got[2].Swap != 7 {
		t.Errorf("atomic compare_add/swap = %d/%d", got[2].CompareAdd, got[2].Swap)
	}
	if got[3].InvRKey != 0x77 {
		t.Errorf("invalidate_rkey = %#x", got[3].InvRKey)
	}

	ud := hookBuildSend(verbs.QPTypeUD, []verbs.SendWR{{WRID: 9, Opcode: verbs.WRSendWithImm, Imm: 5, AH: &ah{}, RemoteQPN: 0x99, RemoteQKey: 0x11111111}})
	if !ud[0].AHSet || ud[0].RemoteQPN != 0x99 || ud[0].RemoteQKey != 0x11111111 || ud[0].Next != -1 || ud[0].SGEOffset != -1 {
		t.Errorf("UD WR = %+v", ud[0])
	}

	// XRC_SEND names the target SRQ in qp_type.xrc.remote_srqn, beside the
	// opcode's own fields; other types leave it 0.
	xrc := hookBuildSend(verbs.QPTypeXRCSend, []verbs.SendWR{{WRID: 10, Opcode: verbs.WRRDMAWrite, RemoteAddr: 0x4000, RKey: 0x44, RemoteSRQN: 0xabcdef}})
	if xrc[0].RemoteSRQN != 0xabcdef || xrc[0].RemoteAddr != 0x4000 || xrc[0].RKey != 0x44 {
		t.Errorf("XRC_SEND WR = %+v; want remote_srqn 0xabcdef, remote_addr 0x4000, rkey 0x44", xrc[0])
	}
	if rc := hookBuildSend(verbs.QPTypeRC, []verbs.SendWR{{WRID: 11, Opcode: verbs.WRSend, RemoteSRQN: 0x123}}); rc[0].RemoteSRQN != 0 {
		t.Errorf("RC WR remote_srqn = %#x; want 0 (only XRC_SEND sets it)", rc[0].RemoteSRQN)
	}
}

// foreignCQ is a CQ of another backend.
type foreignCQ struct{ verbs.CQ }

// TestRefusals: inputs libibverbs would crash on are refused before any C
// call (the fake objects' C structs are zeroed dummies a call would fault
// on), with a *verbs.Error that says so.
func TestRefusals(t *testing.T) {
	ctx, p, q, done := hookFake()
	defer done()
	expect := func(name string, err error, errno syscall.Errno) {
		t.Helper()
		ve, ok := verbs.AsError(err)
		if !ok || ve.Errno != errno || !strings.Contains(ve.Why, "refused by vsh") {
			t.Errorf("%s = %v; want a refusal with %s", name, err, verbs.ErrnoName(errno))
		}
	}
	cap1 := verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}
	_, err := p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, RecvCQ: q, Cap: cap1})
	expect("CreateQP(no send CQ)", err, verbs.EINVAL)
	_, err = p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: q, Cap: cap1})
	expect("CreateQP(no recv CQ)", err, verbs.EINVAL)
	_, err = p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: foreignCQ{}, RecvCQ: q, Cap: cap1})
	expect("CreateQP(foreign CQ)", err, verbs.EINVAL)
	_, err = p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: q, RecvCQ: q, Cap: verbs.QPCap{MaxSendWR: -1}})
	expect("CreateQP(max_send_wr -1)", err, verbs.EINVAL)
	_, err = p.AllocMR(-1, verbs.AccessLocalWrite)
	expect("AllocMR(-1)", err, verbs.EINVAL)
	_, err = ctx.CreateCQ(verbs.CQInitAttr{CQE: 1 << 40})
	expect("CreateCQ(1<<40)", err, verbs.EINVAL)
	_, err = p.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: -5}})
	expect("CreateSRQ(max_wr -5)", err, verbs.EINVAL)
	_, err = ctx.QueryGID(1, -1)
	expect("QueryGID(-1)", err, verbs.EINVAL)

	ud, free := hookFakeQP(ctx, p, verbs.QPTypeUD)
	defer free()
	n, err := ud.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend}})
	expect("UD PostSend without AH", err, verbs.EINVAL)
	if n != 0 {
		t.Errorf("UD PostSend without AH: n = %d", n)
	}
	n, err = ud.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, AH: &ah{pd: p}}})
	expect("UD PostSend with a destroyed AH", err, verbs.EINVAL)
	rc, free2 := hookFakeQP(ctx, p, verbs.QPTypeRC)
	defer free2()
	_, err = rc.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendInline, SGList: []verbs.SGE{{Addr: 0x1234, Length: 8}}}})
	expect("inline PostSend outside any MR", err, verbs.EFAULT)
	expect("Modify(nil)", rc.Modify(nil, verbs.AttrState), verbs.EINVAL)
	if n, err := rc.PostSend(nil); n != 0 || err != nil {
		t.Errorf("PostSend(nil) = %d, %v; want 0, nil", n, err)
	}
	if n, err := rc.PostRecv(nil); n != 0 || err != nil {
		t.Errorf("PostRecv(nil) = %d, %v; want 0, nil", n, err)
	}
}

// TestClosedContext: after Close every object refuses, none panics. The
// objects are made closed by hand (no device here).
func TestClosedContext(t *testing.T) {
	ctx, p, q, done := hookFake()
	defer done()
	x, free := hookFakeQP(ctx, p, verbs.QPTypeRC)
	defer free()
	ctx.c = nil
	var errs []error
	add := func(_ any, err error) { errs = append(errs, err) }
	add(ctx.QueryDevice())
	add(ctx.QueryPort(1))
	add(ctx.QueryGID(1, 0))
	add(ctx.QueryGIDType(1, 0))
	add(ctx.AllocPD())
	add(ctx.CreateCompChannel())
	add(ctx.CreateCQ(verbs.CQInitAttr{CQE: 4}))
	add(ctx.GetAsyncEvent(time.Millisecond))
	add(p.AllocMR(64, 0))
	add(p.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: q, RecvCQ: q}))
	add(p.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 1}}))
	add(p.CreateAH(verbs.AHAttr{}))
	add(nil, p.Dealloc())
	add(q.Poll(make([]verbs.WC, 1)))
	add(nil, q.ReqNotify(false))
	add(nil, q.Resize(8))
	add(nil, q.Destroy())
	add(x.PostSend([]verbs.SendWR{{}}))
	add(x.PostRecv([]verbs.RecvWR{{}}))
	add(nil, x.Modify(&verbs.QPAttr{}, verbs.AttrState))
	_, _, err := x.Query(verbs.AttrState)
	add(nil, err)
	add(nil, x.AttachMcast(verbs.GID{0: 0xff}, 0))
	add(nil, x.Destroy())
	add(nil, ctx.Close())
	for i, err := range errs {
		if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "closed") {
			t.Errorf("call %d on a closed context = %v; want EINVAL saying it is closed", i, err)
		}
	}
	ctx.AckAsyncEvent(verbs.AsyncEvent{QP: x})
	q.AckEvents(3)
	if m := Mispredictions(); m != 0 {
		t.Errorf("%d mispredictions from refusals", m)
	}
}

func TestEventElement(t *testing.T) {
	for ev, want := range map[verbs.EventType]element{
		verbs.EventSQDrained: elemQP, verbs.EventCommEst: elemQP, verbs.EventQPLastWQEReached: elemQP,
		verbs.EventCQErr: elemCQ, verbs.EventSRQLimitReached: elemSRQ, verbs.EventPortActive: elemPort,
		verbs.EventGIDChange: elemPort, verbs.EventWQFatal: elemOther,
	} {
		if got := eventElement(ev); got != want {
			t.Errorf("eventElement(%v) = %v; want %v", ev, got, want)
		}
	}
}

func TestWaitMillis(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 0, -time.Second: 0, time.Microsecond: 1, 10 * time.Millisecond: 10, 1 << 62: 1<<31 - 1} {
		if got := waitMillis(d); got != want {
			t.Errorf("waitMillis(%v) = %d; want %d", d, got, want)
		}
	}
}
