package verbs_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
)

func TestEnumNamesRoundTrip(t *testing.T) {
	for s := verbs.QPSReset; s <= verbs.QPSUnknown; s++ {
		for _, in := range []string{s.String(), s.Short(), strings.ToUpper(s.Short())} {
			got, err := verbs.ParseQPState(in)
			if err != nil || got != s {
				t.Errorf("ParseQPState(%q) = %v, %v; want %v", in, got, err, s)
			}
		}
	}
	for st := verbs.WCSuccess; st <= verbs.WCTMRndvIncomplete; st++ {
		got, err := verbs.ParseWCStatus(st.String())
		if err != nil || got != st {
			t.Errorf("ParseWCStatus(%q) = %v, %v", st.String(), got, err)
		}
		if st.Str() == "unknown" {
			t.Errorf("%v has no ibv_wc_status_str", st)
		}
	}
	for _, name := range verbs.WROpcodeNames() {
		op, err := verbs.ParseWROpcode(name)
		if err != nil || op.Short() != name {
			t.Errorf("ParseWROpcode(%q) = %v, %v", name, op, err)
		}
	}
}

func TestEnumStrings(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{verbs.QPSRTR.String(), "IBV_QPS_RTR"},
		{verbs.QPTypeUD.String(), "IBV_QPT_UD"},
		{verbs.WCRNRRetryExcErr.String(), "IBV_WC_RNR_RETRY_EXC_ERR"},
		{verbs.WCRNRRetryExcErr.Str(), "RNR retry counter exceeded"},
		{verbs.WCWRFlushErr.Str(), "Work Request Flushed Error"},
		{verbs.WROpcode(3).String(), "IBV_WR_SEND_WITH_IMM"},
		{verbs.WCOpRecvRDMAWithImm.String(), "IBV_WC_RECV_RDMA_WITH_IMM"},
		{verbs.MTU1024.String(), "IBV_MTU_1024"},
		{(verbs.AccessLocalWrite | verbs.AccessRemoteWrite).String(), "IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE"},
		{(verbs.AccessLocalWrite | verbs.AccessRemoteRead).Short(), "local_write,remote_read"},
		{verbs.Access(0).String(), "0"},
		{(verbs.AttrState | verbs.AttrPathMTU).String(), "IBV_QP_STATE|IBV_QP_PATH_MTU"},
		{verbs.QPState(42).String(), "IBV_QPS(42)"},
		{verbs.EventPortActive.Str(), "port active"},
		{verbs.SendFlags(verbs.SendSignaled | 0x100).String(), "IBV_SEND_SIGNALED|0x100"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("#%d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		in   string
		want verbs.Access
		err  bool
	}{
		{"0", 0, false},
		{"", 0, false},
		{"local_write,remote_write", verbs.AccessLocalWrite | verbs.AccessRemoteWrite, false},
		{"IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_READ", verbs.AccessLocalWrite | verbs.AccessRemoteRead, false},
		{"7", 7, false},
		{"0x8", verbs.AccessRemoteAtomic, false},
		{"010", 10, false}, // decimal, as everywhere in vsh: not C's octal 8
		{"0b1", 0, true},
		{"1_0", 0, true},
		{"remote_wirte", 0, true},
	}
	for _, tc := range tests {
		got, err := verbs.ParseAccess(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseAccess(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
	_, err := verbs.ParseAccess("remote_wirte")
	if err == nil || !strings.Contains(err.Error(), "did you mean remote_write") {
		t.Errorf("ParseAccess typo error = %v; want a did-you-mean", err)
	}
}

// TestParseEnumNumbers: an enum written as a number is read as the shell
// reads numbers (package number), and must fit the enum's type.
func TestParseEnumNumbers(t *testing.T) {
	if got, err := verbs.ParseQPState("02"); err != nil || got != verbs.QPSRTR {
		t.Errorf("ParseQPState(02) = %v, %v; want RTR", got, err)
	}
	for in, want := range map[string]string{
		"0x100000000": "too large (at most 4294967295)",
		"0o3":         "not a number: write decimal or 0x hex",
	} {
		if _, err := verbs.ParseQPState(in); err == nil || err.Error() != want {
			t.Errorf("ParseQPState(%s) = %v; want %q", in, err, want)
		}
	}
	if got, err := verbs.ParseErrno("022"); err != nil || got != verbs.EINVAL {
		t.Errorf("ParseErrno(022) = %v, %v; want EINVAL", got, err)
	}
	if got, err := verbs.ParseMTU("01024"); err != nil || got != verbs.MTU1024 {
		t.Errorf("ParseMTU(01024) = %v, %v; want 1024", got, err)
	}
}

func TestParseMTU(t *testing.T) {
	for in, want := range map[string]verbs.MTU{"256": verbs.MTU256, "4096": verbs.MTU4096, "3": verbs.MTU1024, "IBV_MTU_2048": verbs.MTU2048} {
		got, err := verbs.ParseMTU(in)
		if err != nil || got != want {
			t.Errorf("ParseMTU(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := verbs.ParseMTU("1500"); err == nil {
		t.Error("ParseMTU(1500) succeeded; want an error")
	}
	if verbs.MTU1024.Bytes() != 1024 || verbs.MTU(9).Bytes() != 0 {
		t.Error("MTU.Bytes wrong")
	}
}

func TestRoCEActiveMTU(t *testing.T) {
	for _, tc := range []struct {
		netdev int
		want   verbs.MTU
	}{
		{1500, verbs.MTU1024}, {9000, verbs.MTU4096}, {4176, verbs.MTU4096}, {4175, verbs.MTU2048},
		{2128, verbs.MTU2048}, {2127, verbs.MTU1024}, {1104, verbs.MTU1024}, {1103, verbs.MTU512},
		{592, verbs.MTU512}, {591, verbs.MTU256}, {68, verbs.MTU256},
	} {
		if got := verbs.RoCEActiveMTU(tc.netdev); got != tc.want {
			t.Errorf("RoCEActiveMTU(%d) = %v, want %v", tc.netdev, got, tc.want)
		}
	}
}

func ExampleRoCEActiveMTU() {
	fmt.Println(verbs.RoCEActiveMTU(1500).Bytes(), verbs.RoCEActiveMTU(9000).Bytes())
	// Output: 1024 4096
}

func TestGID(t *testing.T) {
	g, err := verbs.ParseGID("192.168.1.2")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.String(); got != "::ffff:192.168.1.2" {
		t.Errorf("String = %q", got)
	}
	if got := g.Wire(); got != "00000000000000000000ffffc0a80102" {
		t.Errorf("Wire = %q", got)
	}
	g2, err := verbs.ParseGID(g.Wire())
	if err != nil || g2 != g {
		t.Errorf("ParseGID(wire) = %v, %v", g2, err)
	}
	if _, err := verbs.ParseGID("nonsense"); err == nil {
		t.Error("ParseGID(nonsense) succeeded")
	}
	if (verbs.GID{}).String() != "::" || !(verbs.GID{}).IsZero() {
		t.Error("zero GID")
	}
}

func TestErrorUnwrap(t *testing.T) {
	err := error(verbs.Errorf("ibv_modify_qp", verbs.EINVAL, "add dgid", "missing: %s", verbs.AttrAV))
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("errors.Is(%v, EINVAL) = false", err)
	}
	want := "ibv_modify_qp: EINVAL: missing: IBV_QP_AV; hint: add dgid"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if verbs.ErrnoOf(err) != verbs.EINVAL {
		t.Errorf("ErrnoOf = %v", verbs.ErrnoOf(err))
	}
}

// Reference: qp_state_table in drivers/infiniband/core/verbs.c; ibv_modify_qp(3).
func TestCheckTransition(t *testing.T) {
	rtr := verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN |
		verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer
	tests := []struct {
		name     string
		typ      verbs.QPType
		cur, nxt verbs.QPState
		mask     verbs.QPAttrMask
		wantText string // "" for success
	}{
		{"rc init", verbs.QPTypeRC, verbs.QPSReset, verbs.QPSInit, verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags, ""},
		{"ud init needs qkey", verbs.QPTypeUD, verbs.QPSReset, verbs.QPSInit, verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort, "missing: IBV_QP_QKEY"},
		{"rc rtr", verbs.QPTypeRC, verbs.QPSInit, verbs.QPSRTR, rtr, ""},
		{"rc rtr no av", verbs.QPTypeRC, verbs.QPSInit, verbs.QPSRTR, rtr &^ verbs.AttrAV, "missing: IBV_QP_AV"},
		{"uc rtr extra", verbs.QPTypeUC, verbs.QPSInit, verbs.QPSRTR, rtr, "does not accept IBV_QP_MIN_RNR_TIMER|IBV_QP_MAX_DEST_RD_ATOMIC"},
		{"ud rtr", verbs.QPTypeUD, verbs.QPSInit, verbs.QPSRTR, verbs.AttrState, ""},
		{"reset to rtr", verbs.QPTypeRC, verbs.QPSReset, verbs.QPSRTR, rtr, "from IBV_QPS_RESET it can go to: IBV_QPS_RESET, IBV_QPS_INIT"},
		{"reset to err", verbs.QPTypeRC, verbs.QPSReset, verbs.QPSErr, verbs.AttrState, "cannot go from"},
		{"rc to sqe", verbs.QPTypeRC, verbs.QPSRTS, verbs.QPSSQE, verbs.AttrState, "cannot go from"},
		{"cur_state from init", verbs.QPTypeRC, verbs.QPSInit, verbs.QPSInit, verbs.AttrCurState, "IBV_QP_CUR_STATE"},
		{"err to reset", verbs.QPTypeUD, verbs.QPSErr, verbs.QPSReset, verbs.AttrState, ""},
		{"ud sqe to rts", verbs.QPTypeUD, verbs.QPSSQE, verbs.QPSRTS, verbs.AttrState | verbs.AttrQKey, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verbs.CheckTransition(tc.typ, tc.cur, tc.nxt, tc.mask)
			if tc.wantText == "" {
				if err != nil {
					t.Fatalf("CheckTransition = %v; want success", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantText) || err.Errno != verbs.EINVAL {
				t.Fatalf("CheckTransition = %v; want EINVAL containing %q", err, tc.wantText)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"alloc_pd", "reg_mr", "modify_qp", "create_qp"}
	for in, want := range map[string]string{"alloc_dp": "alloc_pd", "modify": "modify_qp", "zzzzzz": ""} {
		if got := verbs.Nearest(in, cands); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGIDIsMulticast: rdma_is_multicast_addr's reading, IPv6 and
// IPv4-mapped.
func TestGIDIsMulticast(t *testing.T) {
	for g, want := range map[verbs.GID]bool{
		{0: 0xff, 1: 0x0e, 15: 1}:              true,
		{10: 0xff, 11: 0xff, 12: 224, 15: 1}:   true,
		{10: 0xff, 11: 0xff, 12: 192, 15: 1}:   false,
		{0: 0xfe, 1: 0x80, 15: 1}:              false,
		{10: 0xff, 11: 0xff, 12: 239, 13: 255}: true,
	} {
		if got := g.IsMulticast(); got != want {
			t.Errorf("%v.IsMulticast() = %v; want %v", g, got, want)
		}
	}
}

// TestRoutedHopLimit: a unicast RoCE v2 destination takes the route's hop
// limit; a multicast one, IPv6 or IPv4-mapped, keeps the one given.
func TestRoutedHopLimit(t *testing.T) {
	for _, tc := range []struct {
		dgid   string
		global bool
		want   bool
	}{
		{"::ffff:10.0.0.2", true, true},
		{"fe80::2", true, true},
		{"ff0e::1", true, false},
		{"::ffff:239.1.1.1", true, false},
		{"::ffff:224.0.0.1", true, false},
		{"::ffff:10.0.0.2", false, false},
		{"::", true, false},
	} {
		g, err := verbs.ParseGID(tc.dgid)
		if err != nil {
			t.Fatal(err)
		}
		av := verbs.AHAttr{IsGlobal: tc.global, GRH: verbs.GlobalRoute{DGID: g}}
		if got := av.RoutedHopLimit(); got != tc.want {
			t.Errorf("RoutedHopLimit(%s, global=%v) = %v, want %v", tc.dgid, tc.global, got, tc.want)
		}
	}
}
