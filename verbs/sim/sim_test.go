package sim

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// env is one open device with a PD and a CQ, the usual start of a test.
type env struct {
	t   *testing.T
	f   *Fabric
	ctx verbs.Context
	pd  verbs.PD
	cq  verbs.CQ
}

func newEnv(t *testing.T) *env {
	t.Helper()
	f := New(Config{})
	devs, err := f.Devices()
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := devs[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := ctx.CreateCQ(verbs.CQInitAttr{CQE: 64})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, f: f, ctx: ctx, pd: pd, cq: cq}
}

func (e *env) qp(typ verbs.QPType, c verbs.QPCap) verbs.QP {
	e.t.Helper()
	if c == (verbs.QPCap{}) {
		c = verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 2, MaxRecvSGE: 2}
	}
	q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: typ, SendCQ: e.cq, RecvCQ: e.cq, Cap: c})
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

func (e *env) gid() verbs.GID {
	g, err := e.ctx.QueryGID(1, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

func (e *env) av() verbs.AHAttr {
	return verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: e.gid(), SGIDIndex: 1, HopLimit: 1}}
}

const (
	initMask = verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	rtrMask  = verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN |
		verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	rtsMask = verbs.AttrState | verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrSQPSN |
		verbs.AttrMaxQPRdAtomic
)

// toInit, toRTR and toRTS move an RC QP one step with exactly the required
// attributes.
func (e *env) toInit(q verbs.QP, access verbs.Access) {
	e.t.Helper()
	if err := q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, AccessFlags: access}, initMask); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) toRTR(q verbs.QP, dest uint32) {
	e.t.Helper()
	a := &verbs.QPAttr{State: verbs.QPSRTR, AH: e.av(), PathMTU: verbs.MTU1024, DestQPN: dest, RQPSN: 100,
		MaxDestRdAtomic: 1, MinRNRTimer: 12}
	if err := q.Modify(a, rtrMask); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) toRTS(q verbs.QP) {
	e.t.Helper()
	a := &verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: 100, MaxRdAtomic: 1}
	if err := q.Modify(a, rtsMask); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) poll() []verbs.WC {
	e.t.Helper()
	wc := make([]verbs.WC, 64)
	n, err := e.cq.Poll(wc)
	if err != nil {
		e.t.Fatal(err)
	}
	return wc[:n]
}

// wantErr checks err's errno and that its explanation mentions want.
func wantErr(t *testing.T, call string, err error, errno syscall.Errno, want string) {
	t.Helper()
	if errno == 0 {
		if err != nil {
			t.Errorf("%s = %v, want success", call, err)
		}
		return
	}
	if !errors.Is(err, errno) {
		t.Errorf("%s = %v, want %s", call, err, verbs.ErrnoName(errno))
		return
	}
	if want != "" && !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v, want it to mention %q", call, err, want)
	}
	if e, ok := verbs.AsError(err); !ok || e.Why == "" {
		t.Errorf("%s = %v: not an *verbs.Error with a Why", call, err)
	}
}

func TestDeviceAndPort(t *testing.T) {
	e := newEnv(t)
	if got := e.ctx.Device().Name(); got != "sim0" {
		t.Errorf("Name = %q, want sim0", got)
	}
	da, err := e.ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int
	}{
		{"max_qp_wr", da.MaxQPWR, 1 << 20},
		{"max_sge", da.MaxSGE, 32},
		{"max_cqe", da.MaxCQE, 32767},
		{"max_qp_rd_atom", da.MaxQPRdAtom, 128},
		{"max_srq_sge", da.MaxSRQSGE, 27},
		{"max_srq_wr", da.MaxSRQWR, 1 << 20},
		{"max_inline", da.MaxInlineData, 512},
		{"phys_port_cnt", int(da.PhysPortCnt), 1},
		{"vendor_id", int(da.VendorID), 0xffffff},
		{"max_ah", da.MaxAH, 32767},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if da.NodeGUID != e.ctx.Device().GUID() {
		t.Errorf("node_guid %#x != device GUID %#x", da.NodeGUID, e.ctx.Device().GUID())
	}
	pa, err := e.ctx.QueryPort(1)
	if err != nil {
		t.Fatal(err)
	}
	if pa.State != verbs.PortActive || pa.MaxMTU != verbs.MTU4096 || pa.ActiveMTU != verbs.MTU1024 ||
		pa.LinkLayer != verbs.LinkLayerEthernet || pa.GIDTblLen != 1024 {
		t.Errorf("port = %+v", pa)
	}
	_, err = e.ctx.QueryPort(2)
	wantErr(t, "QueryPort(2)", err, verbs.EINVAL, "port 2")

	g0, _ := e.ctx.QueryGID(1, 0)
	g1, _ := e.ctx.QueryGID(1, 1)
	g2, err := e.ctx.QueryGID(1, 2)
	if !strings.HasPrefix(g0.String(), "fe80::") || g1.String() != "::ffff:10.0.0.1" || !g2.IsZero() || err != nil {
		t.Errorf("GIDs = %s, %s, %s (%v)", g0, g1, g2, err)
	}
	// The link-local GID's interface ID is the node GUID (both EUI-64 of the MAC).
	if g0.InterfaceID() != da.NodeGUID {
		t.Errorf("GID 0 interface id %#x, node GUID %#x", g0.InterfaceID(), da.NodeGUID)
	}
	if ty, _ := e.ctx.QueryGIDType(1, 1); ty != verbs.GIDTypeRoCEv2 {
		t.Errorf("GID type = %v", ty)
	}
	_, err = e.ctx.QueryGID(1, 1024)
	wantErr(t, "QueryGID(1024)", err, verbs.EINVAL, "outside")

	// Determinism: the same seed gives the same identity; another seed another.
	guid := func(seed int64) uint64 {
		d, _ := New(Config{Seed: seed}).Device(1)
		return d.GUID()
	}
	if guid(7) != guid(7) || guid(7) == guid(8) {
		t.Errorf("GUIDs not deterministic by seed")
	}
}

func TestRegMR(t *testing.T) {
	e := newEnv(t)
	lw, rw, rr, ra := verbs.AccessLocalWrite, verbs.AccessRemoteWrite, verbs.AccessRemoteRead, verbs.AccessRemoteAtomic
	tests := []struct {
		length   int
		access   verbs.Access
		errno    syscall.Errno
		want     string
		zeroRKey bool
	}{
		{4096, 0, 0, "", true},
		{4096, lw, 0, "", true},
		{4096, lw | rw, 0, "", false},
		{4096, rr, 0, "", false},
		{4096, rw, verbs.EINVAL, "LOCAL_WRITE", false},
		{4096, ra, verbs.EINVAL, "LOCAL_WRITE", false},
		{4096, rr | rw, verbs.EINVAL, "LOCAL_WRITE", false},
		{4096, lw | verbs.AccessOnDemand, verbs.EINVAL, "on-demand", false},
		{4096, lw | verbs.AccessRelaxedOrdering, 0, "", true},
		{4096, verbs.Access(1 << 12), verbs.EINVAL, "unknown", false},
		{0, lw, verbs.EINVAL, "no page", false},
		{-5, lw, verbs.EINVAL, "", false},
		{1, lw, 0, "", true},
	}
	var lastIdx uint32
	for i, tc := range tests {
		m, err := e.pd.AllocMR(tc.length, tc.access)
		wantErr(t, "AllocMR", err, tc.errno, tc.want)
		if err != nil {
			continue
		}
		if (m.RKey() == 0) != tc.zeroRKey {
			t.Errorf("#%d: rkey %#x with access %v", i, m.RKey(), tc.access)
		}
		if m.RKey() != 0 && m.RKey() != m.LKey() {
			t.Errorf("#%d: rkey %#x != lkey %#x", i, m.RKey(), m.LKey())
		}
		if idx := m.LKey() >> 8; idx != lastIdx+1 {
			t.Errorf("#%d: lkey %#x has index %d, want %d (rxe_mr_init: index<<8|key)", i, m.LKey(), idx, lastIdx+1)
		} else {
			lastIdx = idx
		}
		if m.Addr()&4095 != 0 || len(m.Bytes()) != tc.length {
			t.Errorf("#%d: addr %#x len %d", i, m.Addr(), len(m.Bytes()))
		}
	}
}

func TestCQDepth(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		cqe, want int
		errno     syscall.Errno
	}{
		{1, 1, 0}, {2, 3, 0}, {10, 15, 0}, {16, 31, 0}, {1000, 1023, 0}, {32767, 32767, 0},
		{0, 0, verbs.EINVAL}, {-1, 0, verbs.EINVAL}, {32768, 0, verbs.EINVAL},
	}
	for _, tc := range tests {
		c, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: tc.cqe})
		wantErr(t, "CreateCQ", err, tc.errno, "cqe")
		if err == nil && c.CQE() != tc.want {
			t.Errorf("CreateCQ(%d).CQE() = %d, want %d", tc.cqe, c.CQE(), tc.want)
		}
	}
	_, err := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 1, CompVector: 5})
	wantErr(t, "CreateCQ(comp_vector 5)", err, verbs.EINVAL, "comp_vector")
	c, _ := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 4})
	if err := c.Resize(100); err != nil || c.CQE() != 127 {
		t.Errorf("Resize(100) = %v, cqe %d; want 127", err, c.CQE())
	}
	wantErr(t, "Resize(0)", c.Resize(0), verbs.EINVAL, "")
}

func TestCreateQP(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		typ   verbs.QPType
		cap   verbs.QPCap
		errno syscall.Errno
		want  string
		// rxe's answer: rounded max_send_wr, max_send_sge, max_inline_data, max_recv_wr
		sw, ss, si, rw int
	}{
		{"pingpong", verbs.QPTypeRC, verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 500, MaxSendSGE: 1, MaxRecvSGE: 1}, 0, "", 1, 1, 16, 511},
		{"inline 64", verbs.QPTypeRC, verbs.QPCap{MaxSendWR: 10, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}, 0, "", 15, 4, 64, 1},
		{"inline 20", verbs.QPTypeUC, verbs.QPCap{MaxSendWR: 16, MaxSendSGE: 1, MaxInlineData: 20}, 0, "", 31, 1, 20, 0},
		{"zero", verbs.QPTypeUD, verbs.QPCap{}, 0, "", 0, 0, 0, 0},
		{"send wr", verbs.QPTypeRC, verbs.QPCap{MaxSendWR: 1<<20 + 1}, verbs.EINVAL, "max_send_wr", 0, 0, 0, 0},
		{"send sge", verbs.QPTypeRC, verbs.QPCap{MaxSendSGE: 33}, verbs.EINVAL, "max_send_sge", 0, 0, 0, 0},
		{"recv sge", verbs.QPTypeRC, verbs.QPCap{MaxRecvSGE: 33}, verbs.EINVAL, "max_recv_sge", 0, 0, 0, 0},
		{"inline", verbs.QPTypeRC, verbs.QPCap{MaxInlineData: 513}, verbs.EINVAL, "max_inline_data", 0, 0, 0, 0},
		{"negative", verbs.QPTypeRC, verbs.QPCap{MaxSendWR: -1}, verbs.EINVAL, "max_send_wr", 0, 0, 0, 0},
		{"raw", verbs.QPTypeRawPacket, verbs.QPCap{}, verbs.EPERM, "CAP_NET_RAW", 0, 0, 0, 0},
		{"xrc", verbs.QPTypeXRCSend, verbs.QPCap{}, verbs.EOPNOTSUPP, "", 0, 0, 0, 0},
		{"bogus", verbs.QPType(77), verbs.QPCap{}, verbs.EINVAL, "not a QP type", 0, 0, 0, 0},
	}
	for _, tc := range tests {
		q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: tc.typ, SendCQ: e.cq, RecvCQ: e.cq, Cap: tc.cap})
		wantErr(t, "CreateQP("+tc.name+")", err, tc.errno, tc.want)
		if err != nil {
			continue
		}
		_, ia, _ := q.Query(verbs.AttrCap)
		c := ia.Cap
		if c.MaxSendWR != tc.sw || c.MaxSendSGE != tc.ss || c.MaxInlineData != tc.si || c.MaxRecvWR != tc.rw {
			t.Errorf("%s: caps %+v, want send_wr %d send_sge %d inline %d recv_wr %d", tc.name, c, tc.sw, tc.ss, tc.si, tc.rw)
		}
	}
	_, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.cq})
	wantErr(t, "CreateQP(no recv_cq)", err, verbs.EINVAL, "recv_cq")
	// QPNs as rxe allocates them: 17, 18, ... (16 is the GSI QP).
	e2 := newEnv(t)
	if a, b := e2.qp(verbs.QPTypeRC, verbs.QPCap{}), e2.qp(verbs.QPTypeUD, verbs.QPCap{}); a.Num() != 0x11 || b.Num() != 0x12 {
		t.Errorf("QPNs %#x %#x, want 0x11 0x12", a.Num(), b.Num())
	}
}

func TestModifyQP(t *testing.T) {
	e := newEnv(t)
	gidAV := e.av()
	badGRH := gidAV
	badGRH.IsGlobal = false
	emptySlot := gidAV
	emptySlot.GRH.SGIDIndex = 3
	tests := []struct {
		name  string
		from  verbs.QPState // RESET, INIT or RTR (an RC QP walked there first)
		attr  verbs.QPAttr
		mask  verbs.QPAttrMask
		errno syscall.Errno
		want  string
	}{
		{"reset→init", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}, initMask, 0, ""},
		{"reset→rtr", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSRTR}, verbs.AttrState, verbs.EINVAL, "IBV_QPS_INIT"},
		{"init missing access", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}, initMask &^ verbs.AttrAccessFlags, verbs.EINVAL, "missing: IBV_QP_ACCESS_FLAGS"},
		{"init extra qkey", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSInit, PortNum: 1}, initMask | verbs.AttrQKey, verbs.EINVAL, "IBV_QP_QKEY"},
		{"init port 2", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSInit, PortNum: 2}, initMask, verbs.EINVAL, "port 2"},
		{"rtr no grh", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: badGRH, PathMTU: verbs.MTU1024}, rtrMask, verbs.EINVAL, "GRH"},
		{"rtr empty sgid", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: emptySlot, PathMTU: verbs.MTU1024}, rtrMask, syscall.Errno(61), "empty GID"},
		{"rtr mtu 4096", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: gidAV, PathMTU: verbs.MTU4096}, rtrMask, 0, ""},
		{"rtr mtu 8192", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: gidAV, PathMTU: verbs.MTU(6)}, rtrMask, verbs.EINVAL, "max_mtu"},
		{"rtr alt path", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: gidAV, PathMTU: verbs.MTU1024}, rtrMask | verbs.AttrAltPath, verbs.EINVAL, "alternate"},
		{"rtr dest_rd_atomic 255", verbs.QPSInit, verbs.QPAttr{State: verbs.QPSRTR, AH: gidAV, PathMTU: verbs.MTU1024, MaxDestRdAtomic: 255}, rtrMask, 0, ""},
		{"rts timeout 32", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSRTS, Timeout: 32}, rtsMask, verbs.EINVAL, "timeout"},
		{"rts rd_atomic 129", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSRTS, MaxRdAtomic: 129}, rtsMask, verbs.EINVAL, "max_rd_atomic"},
		{"rts retry 9", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSRTS, RetryCnt: 9, RNRRetry: 200}, rtsMask, 0, ""},
		{"rts missing sq_psn", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSRTS}, rtsMask &^ verbs.AttrSQPSN, verbs.EINVAL, "missing: IBV_QP_SQ_PSN"},
		{"sqe", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSSQE}, verbs.AttrState, verbs.EINVAL, "SQE"},
		{"rate limit", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSInit}, initMask | verbs.AttrRateLimit, verbs.EOPNOTSUPP, "RATE_LIMIT"},
		{"state 9", verbs.QPSReset, verbs.QPAttr{State: verbs.QPState(9)}, verbs.AttrState, verbs.EINVAL, ""},
		{"to err", verbs.QPSRTR, verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState, 0, ""},
		{"cur_state lie", verbs.QPSReset, verbs.QPAttr{State: verbs.QPSRTS, CurState: verbs.QPSRTS}, verbs.AttrState | verbs.AttrCurState, 0, ""},
	}
	for _, tc := range tests {
		q := e.qp(verbs.QPTypeRC, verbs.QPCap{})
		if tc.from >= verbs.QPSInit {
			e.toInit(q, 0)
		}
		if tc.from >= verbs.QPSRTR {
			e.toRTR(q, 0x99)
		}
		a := tc.attr
		if a.DestQPN == 0 {
			a.DestQPN = 0x99
		}
		err := q.Modify(&a, tc.mask)
		wantErr(t, "Modify("+tc.name+")", err, tc.errno, tc.want)
		if err == nil && tc.mask&verbs.AttrState != 0 {
			got, _, _ := q.Query(verbs.AttrState)
			if got.State != tc.attr.State {
				t.Errorf("%s: state %v, want %v", tc.name, got.State, tc.attr.State)
			}
		}
	}
}

func TestModifyStoresAsRxe(t *testing.T) {
	e := newEnv(t)
	q := e.qp(verbs.QPTypeRC, verbs.QPCap{})
	a0, _, _ := q.Query(verbs.AttrAll)
	if a0.PathMTU != verbs.MTU256 || !a0.AH.IsGlobal {
		t.Errorf("fresh QP: path_mtu %v is_global %v; rxe starts at IBV_MTU_256 and always reports a GRH", a0.PathMTU, a0.AH.IsGlobal)
	}
	e.toInit(q, verbs.AccessRemoteWrite)
	err := q.Modify(&verbs.QPAttr{State: verbs.QPSRTR, AH: e.av(), PathMTU: verbs.MTU1024, DestQPN: 5, RQPSN: 0x1abcdef,
		MaxDestRdAtomic: 200, MinRNRTimer: 40}, rtrMask)
	if err != nil {
		t.Fatal(err)
	}
	err = q.Modify(&verbs.QPAttr{State: verbs.QPSRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: 0xff000001, MaxRdAtomic: 3}, rtsMask)
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := q.Query(verbs.AttrAll)
	checks := []struct {
		name      string
		got, want uint32
	}{
		{"rq_psn masked", a.RQPSN, 0xabcdef},
		{"sq_psn masked", a.SQPSN, 0x000001},
		{"max_rd_atomic rounded", uint32(a.MaxRdAtomic), 4},
		{"max_dest_rd_atomic 200 → 256 in a u8", uint32(a.MaxDestRdAtomic), 0},
		{"min_rnr_timer as given", uint32(a.MinRNRTimer), 40},
		{"path_mtu", uint32(a.PathMTU), uint32(verbs.MTU1024)},
		{"access", uint32(a.AccessFlags), uint32(verbs.AccessRemoteWrite)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

func TestPostRules(t *testing.T) {
	e := newEnv(t)
	m, _ := e.pd.AllocMR(4096, verbs.AccessLocalWrite)
	sge := []verbs.SGE{{Addr: m.Addr(), Length: 64, LKey: m.LKey()}}
	q := e.qp(verbs.QPTypeRC, verbs.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1})

	_, err := q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sge}})
	wantErr(t, "PostRecv in RESET", err, verbs.EINVAL, "RESET")
	n, err := q.PostSend([]verbs.SendWR{{WRID: 1, SGList: sge, Opcode: verbs.WRSend}})
	wantErr(t, "PostSend in RESET", err, verbs.EINVAL, "RTS")
	if n != 1 {
		t.Errorf("PostSend in RESET posted %d, want 1 (queued, doorbell refused)", n)
	}

	e.toInit(q, 0)
	// max_recv_wr 2 is rounded to 3 (rxe_queue_init: 2^k-1 slots).
	if n, err := q.PostRecv([]verbs.RecvWR{{WRID: 10, SGList: sge}, {WRID: 11, SGList: sge}, {WRID: 12, SGList: sge}}); n != 3 || err != nil {
		t.Errorf("PostRecv in INIT = %d, %v", n, err)
	}
	n, err = q.PostRecv([]verbs.RecvWR{{WRID: 12, SGList: sge}})
	wantErr(t, "PostRecv full", err, verbs.ENOMEM, "full")
	n, err = q.PostSend([]verbs.SendWR{{WRID: 2, SGList: append(sge, sge...), Opcode: verbs.WRSend}})
	wantErr(t, "PostSend 2 SGEs", err, verbs.EINVAL, "") // the doorbell's EINVAL wins over validate's
	if n != 0 {
		t.Errorf("PostSend 2 SGEs: n = %d, want 0", n)
	}

	e.toRTR(q, 0x99)
	e.toRTS(q)
	tests := []struct {
		name  string
		wr    verbs.SendWR
		errno syscall.Errno
		want  string
	}{
		{"sges", verbs.SendWR{SGList: append(sge, sge...), Opcode: verbs.WRSend}, verbs.EINVAL, "SGEs"},
		{"atomic misaligned", verbs.SendWR{SGList: sge, Opcode: verbs.WRAtomicFetchAndAdd, RemoteAddr: 0x1004}, verbs.EINVAL, "aligned"},
		{"atomic short", verbs.SendWR{SGList: []verbs.SGE{{Addr: m.Addr(), Length: 4, LKey: m.LKey()}}, Opcode: verbs.WRAtomicCmpAndSwp}, verbs.EINVAL, "8"},
		{"inline too big", verbs.SendWR{SGList: sge, Opcode: verbs.WRSend, Flags: verbs.SendInline}, verbs.EINVAL, "inline"},
		{"bad lkey posts fine", verbs.SendWR{SGList: []verbs.SGE{{Addr: 1, Length: 8, LKey: 0xdead}}, Opcode: verbs.WRSend}, 0, ""},
	}
	for _, tc := range tests {
		_, err := q.PostSend([]verbs.SendWR{tc.wr})
		wantErr(t, "PostSend("+tc.name+")", err, tc.errno, tc.want)
	}
}

func TestErrorFlushes(t *testing.T) {
	e := newEnv(t)
	m, _ := e.pd.AllocMR(4096, verbs.AccessLocalWrite)
	sge := []verbs.SGE{{Addr: m.Addr(), Length: 64, LKey: m.LKey()}}
	q := e.qp(verbs.QPTypeRC, verbs.QPCap{})
	e.toInit(q, 0)
	q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: sge}, {WRID: 2, SGList: sge}})
	e.toRTR(q, 0x99)
	// Refused at the doorbell, but queued (rdma-core wrote them already).
	q.PostSend([]verbs.SendWR{{WRID: 3, SGList: sge, Opcode: verbs.WRSend}})
	if got := e.poll(); len(got) != 0 {
		t.Fatalf("completions before ERR: %+v", got)
	}
	if err := q.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState); err != nil {
		t.Fatal(err)
	}
	got := e.poll()
	if len(got) != 3 {
		t.Fatalf("got %d completions, want 3: %+v", len(got), got)
	}
	ids := map[uint64]bool{}
	for _, wc := range got {
		ids[wc.WRID] = true
		if wc.Status != verbs.WCWRFlushErr || wc.QPNum != q.Num() {
			t.Errorf("wc %+v, want IBV_WC_WR_FLUSH_ERR on QP %#x", wc, q.Num())
		}
	}
	if !ids[1] || !ids[2] || !ids[3] {
		t.Errorf("flushed %v, want 1, 2, 3", ids)
	}
	// A send posted in ERR is accepted and flushed.
	if _, err := q.PostSend([]verbs.SendWR{{WRID: 4, SGList: sge, Opcode: verbs.WRSend}}); err != nil {
		t.Errorf("PostSend in ERR = %v", err)
	}
	if got := e.poll(); len(got) != 1 || got[0].WRID != 4 || got[0].Status != verbs.WCWRFlushErr {
		t.Errorf("after send in ERR: %+v", got)
	}
	// RESET empties without completions.
	q.Modify(&verbs.QPAttr{State: verbs.QPSReset}, verbs.AttrState)
	if got := e.poll(); len(got) != 0 {
		t.Errorf("RESET made completions: %+v", got)
	}
}

func TestDestroyRules(t *testing.T) {
	e := newEnv(t)
	ch, _ := e.ctx.CreateCompChannel()
	cq2, _ := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 4, Channel: ch})
	m, _ := e.pd.AllocMR(64, 0)
	s, _ := e.pd.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 4, MaxSGE: 1}})
	q, err := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq2, RecvCQ: e.cq, SRQ: s})
	if err != nil {
		t.Fatal(err)
	}
	ah, _ := e.pd.CreateAH(e.av())

	wantErr(t, "Dealloc PD", e.pd.Dealloc(), verbs.EBUSY, "QP")
	wantErr(t, "Destroy CQ", cq2.Destroy(), verbs.EBUSY, "QP")
	wantErr(t, "Destroy channel", ch.Destroy(), verbs.EBUSY, "CQ")
	wantErr(t, "Destroy SRQ", s.Destroy(), verbs.EBUSY, "QP")
	for _, step := range []struct {
		name string
		err  error
	}{
		{"qp", q.Destroy()}, {"srq", s.Destroy()}, {"cq2", cq2.Destroy()}, {"channel", ch.Destroy()},
		{"mr", m.Dereg()}, {"ah", ah.Destroy()}, {"cq", e.cq.Destroy()}, {"pd", e.pd.Dealloc()},
	} {
		if step.err != nil {
			t.Errorf("destroy %s: %v", step.name, step.err)
		}
	}
	wantErr(t, "QP destroy twice", q.Destroy(), verbs.EINVAL, "destroyed")
	wantErr(t, "MR dereg twice", m.Dereg(), verbs.EINVAL, "destroyed")
	_, err = q.PostSend([]verbs.SendWR{{}})
	wantErr(t, "PostSend after destroy", err, verbs.EINVAL, "destroyed")
	_, err = e.pd.AllocMR(64, 0)
	wantErr(t, "AllocMR on dead PD", err, verbs.EINVAL, "destroyed")

	// Close with children destroys them.
	e2 := newEnv(t)
	q2 := e2.qp(verbs.QPTypeUD, verbs.QPCap{})
	if err := e2.ctx.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, err = q2.Query(verbs.AttrState)
	wantErr(t, "Query after Close", err, verbs.EINVAL, "context was closed")
	wantErr(t, "Close twice", e2.ctx.Close(), verbs.EINVAL, "already closed")
}

func TestSRQ(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		attr          verbs.SRQAttr
		errno         syscall.Errno
		maxWR, maxSGE int
	}{
		{verbs.SRQAttr{MaxWR: 1, MaxSGE: 0}, 0, 1, 1},
		{verbs.SRQAttr{MaxWR: 100, MaxSGE: 27}, 0, 127, 27},
		{verbs.SRQAttr{MaxWR: 0, MaxSGE: 1}, verbs.EINVAL, 0, 0},
		{verbs.SRQAttr{MaxWR: 1, MaxSGE: 28}, verbs.EINVAL, 0, 0},
		{verbs.SRQAttr{MaxWR: 1<<20 + 1, MaxSGE: 1}, verbs.EINVAL, 0, 0},
	}
	for _, tc := range tests {
		s, err := e.pd.CreateSRQ(verbs.SRQInitAttr{Attr: tc.attr})
		wantErr(t, "CreateSRQ", err, tc.errno, "")
		if err != nil {
			continue
		}
		a, _ := s.Query()
		if a.MaxWR != tc.maxWR || a.MaxSGE != tc.maxSGE {
			t.Errorf("CreateSRQ(%+v) = %+v, want max_wr %d max_sge %d", tc.attr, a, tc.maxWR, tc.maxSGE)
		}
	}
	s, _ := e.pd.CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: 10, MaxSGE: 1}})
	wantErr(t, "limit above max_wr", s.Modify(verbs.SRQAttr{SRQLimit: 16}, verbs.SRQAttrLimit), verbs.EINVAL, "srq_limit")
	wantErr(t, "limit 5", s.Modify(verbs.SRQAttr{SRQLimit: 5}, verbs.SRQAttrLimit), 0, "")
	wantErr(t, "max_wr below limit", s.Modify(verbs.SRQAttr{MaxWR: 3}, verbs.SRQAttrMaxWR), verbs.EINVAL, "limit")
	wantErr(t, "resize", s.Modify(verbs.SRQAttr{MaxWR: 40}, verbs.SRQAttrMaxWR), 0, "")
	if a, _ := s.Query(); a.MaxWR != 63 || a.SRQLimit != 5 {
		t.Errorf("after modify: %+v", a)
	}
	q, _ := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: e.cq, RecvCQ: e.cq, SRQ: s})
	e.toInit(q, 0)
	_, err := q.PostRecv([]verbs.RecvWR{{}})
	wantErr(t, "PostRecv on SRQ QP", err, verbs.EINVAL, "SRQ")
	if n, err := s.PostRecv(nil); n != 0 || err != nil {
		t.Errorf("SRQ PostRecv(nil) = %d, %v; rxe posts nothing and succeeds", n, err)
	}
}

func TestAHAndEvents(t *testing.T) {
	e := newEnv(t)
	av := e.av()
	if _, err := e.pd.CreateAH(av); err != nil {
		t.Fatal(err)
	}
	noGRH := av
	noGRH.IsGlobal = false
	_, err := e.pd.CreateAH(noGRH)
	wantErr(t, "CreateAH without GRH", err, verbs.EINVAL, "GRH")
	empty := av
	empty.GRH.SGIDIndex = 2
	_, err = e.pd.CreateAH(empty)
	wantErr(t, "CreateAH sgid 2", err, syscall.Errno(61), "empty")

	_, err = e.ctx.GetAsyncEvent(0)
	wantErr(t, "GetAsyncEvent on a fresh context", err, verbs.EAGAIN, "")

	q := e.qp(verbs.QPTypeRC, verbs.QPCap{})
	e.toInit(q, 0)
	e.toRTR(q, 0x99)
	e.toRTS(q)
	if err := q.Modify(&verbs.QPAttr{State: verbs.QPSSQD}, verbs.AttrState); err != nil {
		t.Fatal(err)
	}
	e.f.SetPortState(0, verbs.PortDown)
	e.f.SetPortState(0, verbs.PortActive)
	var got []verbs.EventType
	for {
		ev, err := e.ctx.GetAsyncEvent(0)
		if err != nil {
			break
		}
		got = append(got, ev.Type)
		e.ctx.AckAsyncEvent(ev)
	}
	want := []verbs.EventType{verbs.EventSQDrained, verbs.EventPortErr, verbs.EventPortActive}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestCompChannel(t *testing.T) {
	e := newEnv(t)
	ch, _ := e.ctx.CreateCompChannel()
	c, _ := e.ctx.CreateCQ(verbs.CQInitAttr{CQE: 4, Channel: ch})
	q, _ := e.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: c, RecvCQ: c, Cap: verbs.QPCap{MaxRecvWR: 4, MaxRecvSGE: 1}})
	q.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x11111111}, verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey)
	q.PostRecv([]verbs.RecvWR{{WRID: 7}})
	if err := c.ReqNotify(false); err != nil {
		t.Fatal(err)
	}
	q.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState)
	got, err := ch.GetEvent(0)
	if err != nil || got != c {
		t.Fatalf("GetEvent = %v, %v", got, err)
	}
	_, err = ch.GetEvent(0)
	wantErr(t, "second GetEvent (not re-armed)", err, verbs.EAGAIN, "")
	q.Destroy()
	wantErr(t, "Destroy CQ with unacked event", c.Destroy(), verbs.EBUSY, "acknowledged")
	c.AckEvents(1)
	if err := c.Destroy(); err != nil {
		t.Errorf("Destroy after ack = %v", err)
	}
}
