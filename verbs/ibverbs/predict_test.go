package ibverbs

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

// rxeFacts is a device as rxe on a 1500-byte netdev reports it (Linux 6.1):
// one port, max_mtu 4096, 1024 GIDs of which 0 and 1 are filled.
func rxeFacts() *devFacts {
	return &devFacts{
		Attr: verbs.DeviceAttr{PhysPortCnt: 1, MaxQPWR: 1 << 20, MaxSGE: 32, MaxCQE: 1<<15 - 1, MaxQPRdAtom: 128,
			MaxSRQWR: 1 << 20, MaxSRQSGE: 27},
		Port: verbs.PortAttr{MaxMTU: verbs.MTU4096, ActiveMTU: verbs.MTU1024, GIDTblLen: 1024, PKeyTblLen: 1,
			LinkLayer: verbs.LinkLayerEthernet},
		NumCompVectors: 2,
		GIDSlot:        func(port uint8, i int) (bool, bool) { return i > 1, true },
	}
}

func av() verbs.AHAttr {
	return verbs.AHAttr{IsGlobal: true, PortNum: 1, GRH: verbs.GlobalRoute{DGID: verbs.GID{10: 0xff, 11: 0xff, 12: 192, 15: 1}, SGIDIndex: 1, HopLimit: 1}}
}

// rcAttr has a valid value in every field an RC transition may need.
func rcAttr(to verbs.QPState) *verbs.QPAttr {
	return &verbs.QPAttr{State: to, PathMTU: verbs.MTU1024, AH: av(), PortNum: 1, DestQPN: 17, RQPSN: 1, SQPSN: 2,
		MaxRdAtomic: 1, MaxDestRdAtomic: 1, MinRNRTimer: 12, Timeout: 14, RetryCnt: 7, RNRRetry: 7, QKey: 0x11111111}
}

const (
	initMask = verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags
	rtrMask  = verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN |
		verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	rtsMask = verbs.AttrState | verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrSQPSN |
		verbs.AttrMaxQPRdAtomic
)

// firstCertain returns the errno and why the rules predict first.
func firstCertain(p prediction) (syscall.Errno, string) {
	r, ok := p.certain()
	if !ok {
		return 0, ""
	}
	return r.errno, r.why
}

// TestPredictModifyQP checks the modify rules against cases whose kernel
// outcome is known from the sources the conformance suite cites.
func TestPredictModifyQP(t *testing.T) {
	mod := func(f func(a *verbs.QPAttr)) *verbs.QPAttr {
		a := rcAttr(verbs.QPSRTR)
		f(a)
		return a
	}
	tests := []struct {
		name    string
		typ     verbs.QPType
		cur     verbs.QPState
		attr    *verbs.QPAttr
		mask    verbs.QPAttrMask
		want    syscall.Errno
		mention string // a word the why must contain
	}{
		{"rc reset→init", verbs.QPTypeRC, verbs.QPSReset, rcAttr(verbs.QPSInit), initMask, 0, ""},
		{"rc init→rtr", verbs.QPTypeRC, verbs.QPSInit, rcAttr(verbs.QPSRTR), rtrMask, 0, ""},
		{"rc rtr→rts", verbs.QPTypeRC, verbs.QPSRTR, rcAttr(verbs.QPSRTS), rtsMask, 0, ""},
		{"rc reset→rtr", verbs.QPTypeRC, verbs.QPSReset, rcAttr(verbs.QPSRTR), rtrMask, verbs.EINVAL, "IBV_QPS_INIT"},
		{"rc init→rtr without AV", verbs.QPTypeRC, verbs.QPSInit, rcAttr(verbs.QPSRTR), rtrMask &^ verbs.AttrAV, verbs.EINVAL, "IBV_QP_AV"},
		{"rc reset→init with qkey", verbs.QPTypeRC, verbs.QPSReset, rcAttr(verbs.QPSInit), initMask | verbs.AttrQKey, verbs.EINVAL, "IBV_QP_QKEY"},
		{"bad port", verbs.QPTypeRC, verbs.QPSReset, mod(func(a *verbs.QPAttr) { a.State, a.PortNum = verbs.QPSInit, 2 }), initMask, verbs.EINVAL, "IBV_QP_PORT"},
		{"av port 0", verbs.QPTypeRC, verbs.QPSInit, mod(func(a *verbs.QPAttr) { a.AH.PortNum = 0 }), rtrMask, verbs.EINVAL, "port"},
		{"av without grh", verbs.QPTypeRC, verbs.QPSInit, mod(func(a *verbs.QPAttr) { a.AH.IsGlobal = false }), rtrMask, verbs.EINVAL, "GRH"},
		{"empty sgid", verbs.QPTypeRC, verbs.QPSInit, mod(func(a *verbs.QPAttr) { a.AH.GRH.SGIDIndex = 255 }), rtrMask, errENODATA, "empty"},
		{"path mtu 6", verbs.QPTypeRC, verbs.QPSInit, mod(func(a *verbs.QPAttr) { a.PathMTU = 6 }), rtrMask, verbs.EINVAL, "IBV_QP_PATH_MTU"},
		{"alt path", verbs.QPTypeRC, verbs.QPSInit, mod(func(a *verbs.QPAttr) { a.AltAH, a.AltPortNum = av(), 1 }), rtrMask | verbs.AttrAltPath, verbs.EINVAL, "IBV_QP_ALT_PATH"},
		{"timeout 32", verbs.QPTypeRC, verbs.QPSRTR, mod(func(a *verbs.QPAttr) { a.State, a.Timeout = verbs.QPSRTS, 32 }), rtsMask, verbs.EINVAL, "IBV_QP_TIMEOUT"},
		{"max_rd_atomic 129", verbs.QPTypeRC, verbs.QPSRTR, mod(func(a *verbs.QPAttr) { a.State, a.MaxRdAtomic = verbs.QPSRTS, 129 }), rtsMask, verbs.EINVAL, "IBV_QP_MAX_QP_RD_ATOMIC"},
		{"state out of range", verbs.QPTypeUD, verbs.QPSReset, &verbs.QPAttr{State: 42}, verbs.AttrState, verbs.EINVAL, "state"},
		{"privileged qkey", verbs.QPTypeUD, verbs.QPSReset, &verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x80010000},
			verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrQKey, verbs.EPERM, "IBV_QP_QKEY"},
		{"rate limit", verbs.QPTypeRC, verbs.QPSReset, rcAttr(verbs.QPSInit), initMask | verbs.AttrRateLimit, verbs.EOPNOTSUPP, "IBV_QP_RATE_LIMIT"},
		{"uc sqd→sqd av implies port", verbs.QPTypeUC, verbs.QPSSQD, rcAttr(verbs.QPSSQD), verbs.AttrState | verbs.AttrAV, verbs.EINVAL, "adds it"},
		{"rc sqd→sqd av", verbs.QPTypeRC, verbs.QPSSQD, rcAttr(verbs.QPSSQD), verbs.AttrState | verbs.AttrAV, 0, ""},
		{"rtr→rtr", verbs.QPTypeRC, verbs.QPSRTR, rcAttr(verbs.QPSRTR), verbs.AttrAccessFlags, verbs.EINVAL, "IBV_QPS_RTR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := predictModifyQP(rxeFacts(), modifyFacts{Type: tc.typ, Cur: tc.cur, DrainKnown: true, Port: 1}, tc.attr, tc.mask)
			got, why := firstCertain(p)
			if got != tc.want {
				t.Fatalf("predictModifyQP = %v (%s); want %v", verbs.ErrnoName(got), why, verbs.ErrnoName(tc.want))
			}
			if tc.mention != "" && !strings.Contains(why, tc.mention) {
				t.Errorf("why %q does not mention %q", why, tc.mention)
			}
		})
	}
}

// TestPredictModifyQPCapNetRaw: with CAP_NET_RAW (root in the lab guest)
// a privileged Q_Key is accepted.
func TestPredictModifyQPCapNetRaw(t *testing.T) {
	d := rxeFacts()
	d.CapNetRaw = true
	p := predictModifyQP(d, modifyFacts{Type: verbs.QPTypeUD, Cur: verbs.QPSReset}, &verbs.QPAttr{State: verbs.QPSInit, PortNum: 1, QKey: 0x80010000},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrQKey)
	if e, why := firstCertain(p); e != 0 {
		t.Errorf("with CAP_NET_RAW: predicted %v (%s); want success", verbs.ErrnoName(e), why)
	}
}

// TestPredictModifyQPDraining: leaving SQD while the SQ drains is refused,
// but the drain may end between the query and the call, so the rule is
// never certain.
func TestPredictModifyQPDraining(t *testing.T) {
	p := predictModifyQP(rxeFacts(), modifyFacts{Type: verbs.QPTypeRC, Cur: verbs.QPSSQD, SQDraining: true}, rcAttr(verbs.QPSRTS), verbs.AttrState)
	if _, ok := p.certain(); ok {
		t.Errorf("draining: a certain reason %v", p.reasons)
	}
	err := judge("ibv_modify_qp", verbs.EINVAL, p)
	if ve, _ := verbs.AsError(err); ve == nil || !strings.Contains(ve.Why, "draining") {
		t.Errorf("judge(EINVAL) = %v; want the draining explanation", err)
	}
}

func resetMispredictions() {
	mispredicted.Lock()
	mispredicted.n, mispredicted.log = 0, nil
	mispredicted.Unlock()
}

// TestJudge covers the four outcomes: agreed success, agreed failure,
// and the two mispredictions (unexpected errno, unexpected success).
func TestJudge(t *testing.T) {
	resetMispredictions()
	d := rxeFacts()
	f := modifyFacts{Type: verbs.QPTypeRC, Cur: verbs.QPSReset}

	ok := predictModifyQP(d, f, rcAttr(verbs.QPSInit), initMask)
	if err := judge("ibv_modify_qp", 0, ok); err != nil || Mispredictions() != 0 {
		t.Fatalf("agreed success: %v, %d mispredictions", err, Mispredictions())
	}

	bad := predictModifyQP(d, f, rcAttr(verbs.QPSRTR), rtrMask)
	err := judge("ibv_modify_qp", verbs.EINVAL, bad)
	ve, isVE := verbs.AsError(err)
	if !isVE || !errors.Is(err, syscall.EINVAL) || ve.Op != "ibv_modify_qp" || !strings.Contains(ve.Why, "IBV_QPS_INIT") || ve.Hint == "" {
		t.Fatalf("agreed failure: %v", err)
	}
	if strings.Contains(ve.Why, "misprediction") || Mispredictions() != 0 {
		t.Fatalf("agreed failure counted as a misprediction: %v", err)
	}

	// The table said success, the kernel said EINVAL.
	err = judge("ibv_modify_qp", verbs.EINVAL, ok)
	if !strings.Contains(err.Error(), "misprediction") || !strings.Contains(err.Error(), "predicted success") || Mispredictions() != 1 {
		t.Fatalf("unexpected errno: %v, %d mispredictions", err, Mispredictions())
	}
	// The table said EINVAL, the kernel said yes.
	if err := judge("ibv_modify_qp", 0, bad); err != nil || Mispredictions() != 2 {
		t.Fatalf("unexpected success: %v, %d mispredictions", err, Mispredictions())
	}
	log := MispredictionLog()
	if len(log) != 2 || log[1].Got != "success" || !strings.HasPrefix(log[1].Predicted, "EINVAL") {
		t.Fatalf("log = %v", log)
	}
	// A certain reason with another errno came first: the kernel should
	// have stopped there.
	order := prediction{}
	order.fail(verbs.EPERM, "", "first")
	order.fail(verbs.EINVAL, "", "second")
	if err := judge("x", verbs.EINVAL, order); !strings.Contains(err.Error(), "second") || Mispredictions() != 3 {
		t.Fatalf("order: %v, %d", err, Mispredictions())
	}
	// An uncertain reason explains without counting.
	var maybe prediction
	maybe.exhaustive = true
	maybe.maybe(verbs.ENOMEM, "h", "memory")
	if err := judge("x", verbs.ENOMEM, maybe); !strings.Contains(err.Error(), "memory") || Mispredictions() != 3 {
		t.Fatalf("uncertain: %v, %d", err, Mispredictions())
	}
	// A verb without rules is explained by the table and never counted.
	err = judge("ibv_alloc_pd", verbs.ENOMEM, prediction{})
	if ve, _ := verbs.AsError(err); ve == nil || !strings.Contains(ve.Why, "PD") || Mispredictions() != 3 {
		t.Fatalf("table: %v", err)
	}
	resetMispredictions()
}

func TestExplainErrnoTable(t *testing.T) {
	for k, e := range errnoTable {
		if e.why == "" {
			t.Errorf("%s %s: empty explanation", k.op, verbs.ErrnoName(k.errno))
		}
		if !strings.HasPrefix(k.op, "ibv_") && k.op != "posix_memalign" {
			t.Errorf("%q is not a verb", k.op)
		}
	}
	why, hint := explainErrno("ibv_reg_mr", verbs.ENOMEM)
	if !strings.Contains(why, "ulimit -l") || !strings.Contains(hint, "ulimit -l") {
		t.Errorf("ibv_reg_mr ENOMEM: %q / %q; want the memlock limit named", why, hint)
	}
	if why, _ := explainErrno("ibv_post_send", verbs.ENOMEM); !strings.Contains(why, "send queue is full") {
		t.Errorf("ibv_post_send ENOMEM: %q", why)
	}
	if why, _ := explainErrno("ibv_create_qp", verbs.EINVAL); !strings.Contains(why, "limits") {
		t.Errorf("ibv_create_qp EINVAL: %q", why)
	}
	if why, _ := explainErrno("ibv_nothing", 1234); !strings.Contains(why, "errno 1234") {
		t.Errorf("unknown: %q", why)
	}
}

func TestPredictRegMR(t *testing.T) {
	lw, rw, ra := verbs.AccessLocalWrite, verbs.AccessRemoteWrite, verbs.AccessRemoteAtomic
	for _, c := range []struct {
		length  int
		access  verbs.Access
		memlock uint64
		want    syscall.Errno
	}{
		{4096, lw, ^uint64(0), 0},
		{4096, rw, ^uint64(0), verbs.EINVAL},
		{4096, ra, ^uint64(0), verbs.EINVAL},
		{4096, verbs.AccessRemoteRead, ^uint64(0), 0},
		{4096, lw | verbs.AccessOnDemand, ^uint64(0), verbs.EINVAL},
		{4096, lw | 1<<10, ^uint64(0), verbs.EINVAL},
		{4096, lw | verbs.AccessRelaxedOrdering, ^uint64(0), 0},
		{0, lw, ^uint64(0), verbs.EINVAL},
		{1 << 20, lw, 64 << 10, verbs.ENOMEM},
		{4096, lw, 64 << 10, 0},
	} {
		p := predictRegMR(c.length, c.access, c.memlock, false)
		if got, why := firstCertain(p); got != c.want {
			t.Errorf("predictRegMR(%d, %v, memlock %d) = %v (%s); want %v", c.length, c.access, c.memlock, verbs.ErrnoName(got), why, verbs.ErrnoName(c.want))
		}
	}
	// ENOMEM below the limit is possible (other pinned memory), and
	// explained with the limit.
	err := judge("ibv_reg_mr", verbs.ENOMEM, predictRegMR(4096, lw, 64<<10, false))
	if !strings.Contains(err.Error(), "ulimit -l") || strings.Contains(err.Error(), "misprediction") {
		t.Errorf("ENOMEM under the limit: %v", err)
	}
}

func TestPredictCreate(t *testing.T) {
	d := rxeFacts()
	for _, c := range []struct {
		name string
		p    prediction
		want syscall.Errno
	}{
		{"cq 16", predictCreateCQ(d, 16, 0), 0},
		{"cq 0", predictCreateCQ(d, 0, 0), verbs.EINVAL},
		{"cq -1", predictCreateCQ(d, -1, 0), verbs.EINVAL},
		{"cq max+1", predictCreateCQ(d, 1<<15, 0), verbs.EINVAL},
		{"cq vector", predictCreateCQ(d, 16, 1<<20), verbs.EINVAL},
		{"resize 0", predictResizeCQ(d, 0), verbs.EINVAL},
		{"qp rc", predictCreateQP(d, qpCreate{Type: verbs.QPTypeRC, Cap: verbs.QPCap{MaxSendWR: 16}}), 0},
		{"qp sge 33", predictCreateQP(d, qpCreate{Type: verbs.QPTypeUD, Cap: verbs.QPCap{MaxSendSGE: 33}}), verbs.EINVAL},
		{"qp inline 513", predictCreateQP(d, qpCreate{Type: verbs.QPTypeUC, Cap: verbs.QPCap{MaxInlineData: 513}}), verbs.EINVAL},
		{"qp srq ignores recv caps", predictCreateQP(d, qpCreate{Type: verbs.QPTypeRC, HasSRQ: true, Cap: verbs.QPCap{MaxRecvWR: 1 << 21}}), 0},
		{"qp xrc send", predictCreateQP(d, qpCreate{Type: verbs.QPTypeXRCSend}), verbs.EOPNOTSUPP},
		{"qp xrc recv", predictCreateQP(d, qpCreate{Type: verbs.QPTypeXRCRecv}), verbs.EINVAL},
		{"qp raw", predictCreateQP(d, qpCreate{Type: verbs.QPTypeRawPacket}), verbs.EPERM},
		{"qp 99", predictCreateQP(d, qpCreate{Type: 99}), verbs.EINVAL},
		{"srq 0", predictCreateSRQ(d, verbs.SRQAttr{MaxWR: 0, MaxSGE: 1}), verbs.EINVAL},
		{"srq sge 28", predictCreateSRQ(d, verbs.SRQAttr{MaxWR: 16, MaxSGE: 28}), verbs.EINVAL},
		{"srq ok", predictCreateSRQ(d, verbs.SRQAttr{MaxWR: 16, MaxSGE: 0}), 0},
		{"srq limit over", predictModifySRQ(d, 127, 0, verbs.SRQAttr{SRQLimit: 128}, verbs.SRQAttrLimit), verbs.EINVAL},
		{"srq limit ok", predictModifySRQ(d, 127, 0, verbs.SRQAttr{SRQLimit: 127}, verbs.SRQAttrLimit), 0},
		{"srq resize below limit", predictModifySRQ(d, 127, 50, verbs.SRQAttr{MaxWR: 20}, verbs.SRQAttrMaxWR), verbs.EINVAL},
		{"ah", predictCreateAH(d, av()), 0},
		{"ah no grh", predictCreateAH(d, verbs.AHAttr{PortNum: 1}), verbs.EINVAL},
		{"ah port 2", predictCreateAH(d, verbs.AHAttr{PortNum: 2, IsGlobal: true}), verbs.EINVAL},
		{"ah sgid 255", predictCreateAH(d, verbs.AHAttr{PortNum: 1, IsGlobal: true, GRH: verbs.GlobalRoute{SGIDIndex: 255}}), errENODATA},
		{"mcast rc", predictAttachMcast(verbs.QPTypeRC, verbs.GID{0: 0xff}, false), verbs.EINVAL},
		{"mcast unicast", predictAttachMcast(verbs.QPTypeUD, av().GRH.DGID, false), verbs.EINVAL},
		{"mcast ok", predictAttachMcast(verbs.QPTypeUD, verbs.GID{0: 0xff, 1: 0x0e, 15: 1}, false), 0},
		{"mcast ipv4", predictAttachMcast(verbs.QPTypeUD, verbs.GID{10: 0xff, 11: 0xff, 12: 239, 15: 1}, false), 0},
		{"detach unknown", predictDetachMcast(verbs.GID{0: 0xff}, false), verbs.EINVAL},
		{"busy", predictBusy("ibv_dealloc_pd", "the PD", []string{"1 MR(s)"}, "h"), verbs.EBUSY},
	} {
		if got, why := firstCertain(c.p); got != c.want {
			t.Errorf("%s: predicted %v (%s); want %v", c.name, verbs.ErrnoName(got), why, verbs.ErrnoName(c.want))
		}
	}
}

func TestSendRules(t *testing.T) {
	f := &sendFacts{Type: verbs.QPTypeRC, State: verbs.QPSRTS, MaxSGE: 1, MaxInline: 64}
	sge := verbs.SGE{Addr: 0x1000, Length: 8}
	for _, c := range []struct {
		wr verbs.SendWR
		ok bool
	}{
		{verbs.SendWR{Opcode: verbs.WRSend, SGList: []verbs.SGE{sge}}, true},
		{verbs.SendWR{Opcode: verbs.WRSend, SGList: []verbs.SGE{sge, sge}}, false},
		{verbs.SendWR{Opcode: verbs.WRAtomicFetchAndAdd, SGList: []verbs.SGE{sge}, RemoteAddr: 0x1004}, false},
		{verbs.SendWR{Opcode: verbs.WRAtomicCmpAndSwp, SGList: []verbs.SGE{{Length: 4}}, RemoteAddr: 0x1000}, false},
		{verbs.SendWR{Opcode: verbs.WRAtomicCmpAndSwp, SGList: []verbs.SGE{sge}, RemoteAddr: 0x1000}, true},
		{verbs.SendWR{Opcode: verbs.WRSend, Flags: verbs.SendInline, SGList: []verbs.SGE{{Length: 65}}}, false},
		{verbs.SendWR{Opcode: verbs.WRSend, Flags: verbs.SendInline, SGList: []verbs.SGE{{Length: 64}}}, true},
		{verbs.SendWR{Opcode: verbs.WRSend}, true},
	} {
		var length uint64
		for _, s := range c.wr.SGList {
			length += uint64(s.Length)
		}
		if _, ok := sendWRReason(f, &c.wr, length); ok != c.ok {
			t.Errorf("sendWRReason(%+v) ok = %v; want %v", c.wr, ok, c.ok)
		}
	}
	for s, ok := range map[verbs.QPState]bool{verbs.QPSReset: false, verbs.QPSInit: false, verbs.QPSRTR: false,
		verbs.QPSRTS: true, verbs.QPSSQD: true, verbs.QPSErr: true} {
		if _, got := sendDoorbellReason(s, 1); got != ok {
			t.Errorf("sendDoorbellReason(%v) = %v; want %v", s, got, ok)
		}
	}
	if _, ok := recvPreReason(verbs.QPSReset, false); ok {
		t.Errorf("recv in RESET allowed")
	}
	if _, ok := recvPreReason(verbs.QPSInit, true); ok {
		t.Errorf("recv on an SRQ QP allowed")
	}
	if _, ok := recvPreReason(verbs.QPSInit, false); !ok {
		t.Errorf("recv in INIT refused")
	}
}

func TestJudgePost(t *testing.T) {
	resetMispredictions()
	defer resetMispredictions()
	q := postQueue{name: "send queue", depth: 7, grow: "grow"}
	badSGE := reason{errno: verbs.EINVAL, certain: true, why: "too many SGEs"}
	door, _ := sendDoorbellReason(verbs.QPSInit, 2)
	for _, c := range []struct {
		name           string
		errno          syscall.Errno
		gotBad         int
		predBad        int
		door           bool
		wantN          int
		wantMention    string
		mispredictions int
	}{
		{"ok", 0, -1, -1, false, 3, "", 0},
		{"sge refused", verbs.EINVAL, 1, 1, false, 1, "WR #2: too many SGEs", 0}, // bad_wr index 1: the second WR
		{"queue full", verbs.ENOMEM, 2, -1, false, 2, "send queue is full", 0},
		{"doorbell", verbs.EINVAL, -1, -1, true, 3, "IBV_QPS_INIT", 0},
		{"wr and doorbell", verbs.EINVAL, 1, 1, true, 1, "too many SGEs", 0},
		{"unexpected errno", verbs.EIO, -1, -1, false, 0, "misprediction", 1},
		{"unexpected success", 0, -1, 1, false, 3, "", 1},
		{"refused elsewhere", verbs.EINVAL, 0, 2, false, 0, "misprediction", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			resetMispredictions()
			d := reason{}
			if c.door {
				d = door
			}
			n, err := judgePost("ibv_post_send", c.errno, c.gotBad, 3, c.predBad, badSGE, d, c.door, q)
			if n != c.wantN {
				t.Errorf("n = %d; want %d", n, c.wantN)
			}
			if c.wantMention != "" && (err == nil || !strings.Contains(err.Error(), c.wantMention)) {
				t.Errorf("err = %v; want it to mention %q", err, c.wantMention)
			}
			if (c.errno == 0) != (err == nil) {
				t.Errorf("err = %v for errno %v", err, c.errno)
			}
			if got := Mispredictions(); got != c.mispredictions {
				t.Errorf("%d mispredictions; want %d (%v)", got, c.mispredictions, MispredictionLog())
			}
		})
	}
}

// TestJudgePostAllocs: the success path of a post allocates nothing.
func TestJudgePostAllocs(t *testing.T) {
	q := postQueue{name: "send queue", depth: 7, grow: "grow"}
	f := &sendFacts{Type: verbs.QPTypeRC, State: verbs.QPSRTS, MaxSGE: 1, MaxInline: 64}
	wr := verbs.SendWR{Opcode: verbs.WRSend, SGList: []verbs.SGE{{Length: 8}}}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = sendWRReason(f, &wr, 8)
		d, ok := sendDoorbellReason(f.State, 1)
		_, _ = judgePost("ibv_post_send", 0, -1, 1, -1, reason{}, d, !ok, q)
	})
	if allocs != 0 {
		t.Errorf("the success path allocates %v times per post; want 0", allocs)
	}
}
