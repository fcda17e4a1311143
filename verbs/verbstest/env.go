package verbstest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Env is what a scenario runs in: a freshly opened provider and device, the
// options, and a recorder of failures. Objects created through its helpers
// are destroyed, newest first, when the scenario ends.
type Env struct {
	t        *testing.T
	Opts     Options
	Scenario Scenario

	P   verbs.Provider
	Dev verbs.Device
	Ctx verbs.Context
	// Port is Options.Port; GID is the device's GID at Options.GIDIndex,
	// the address loopback scenarios use as both source and destination.
	Port uint8
	GID  verbs.GID

	failures []string
	cleanups []func()
	pd       verbs.PD
	cq       verbs.CQ
}

// Errorf records a failure and lets the scenario go on.
func (e *Env) Errorf(format string, args ...any) {
	e.failures = append(e.failures, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the scenario.
func (e *Env) Fatalf(format string, args ...any) {
	e.Errorf(format, args...)
	panic(fatal{})
}

// Logf logs through the subtest.
func (e *Env) Logf(format string, args ...any) { e.t.Logf(format, args...) }

// Explains reports whether the backend's errors say why (CapExplain).
func (e *Env) Explains() bool { return e.Opts.Has&CapExplain != 0 }

// Failed reports whether the scenario has failed so far.
func (e *Env) Failed() bool { return len(e.failures) > 0 }

// Defer registers f to run when the scenario ends, before the objects
// created earlier are destroyed.
func (e *Env) Defer(f func()) { e.cleanups = append(e.cleanups, f) }

func (e *Env) runCleanups() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if r := recover(); r != nil {
					e.failures = append(e.failures, fmt.Sprintf("panic while cleaning up: %v", r))
				}
			}()
			e.cleanups[i]()
		}()
	}
	e.cleanups = nil
}

func (e *Env) setup(open func(t *testing.T) verbs.Provider) {
	e.Port = e.Opts.Port
	e.P = open(e.t)
	if e.P == nil {
		e.Fatalf("open returned no provider")
	}
	e.Defer(func() { _ = e.P.Close() })
	devs, err := e.P.Devices()
	if err != nil {
		e.Fatalf("Devices() = %v", err)
	}
	if len(devs) == 0 {
		e.Fatalf("Devices() listed no device (ibv_get_device_list would say \"No IB devices found\")")
	}
	e.Dev = devs[0]
	if e.Opts.Device != "" {
		e.Dev = nil
		for _, d := range devs {
			if d.Name() == e.Opts.Device {
				e.Dev = d
			}
		}
		if e.Dev == nil {
			e.Fatalf("device %q not found among %d devices", e.Opts.Device, len(devs))
		}
	}
	e.Ctx = e.open(e.Dev)
	gid, err := e.Ctx.QueryGID(e.Port, e.Opts.GIDIndex)
	if err != nil {
		e.Fatalf("QueryGID(%d, %d) = %v", e.Port, e.Opts.GIDIndex, err)
	}
	if gid.IsZero() {
		e.Fatalf("GID %d of port %d is empty; set Options.GIDIndex to the device's RoCE v2 GID", e.Opts.GIDIndex, e.Port)
	}
	e.GID = gid
}

// open opens a device and closes it at the end.
func (e *Env) open(d verbs.Device) verbs.Context {
	ctx, err := d.Open()
	if err != nil {
		e.Fatalf("%s.Open() = %v", d.Name(), err)
	}
	e.Defer(func() { _ = ctx.Close() })
	return ctx
}

// ---- object helpers: each fails the scenario on error and destroys the
// object at the end (a second destroy by the scenario itself is harmless:
// the backend must return an error, not crash).

// PD returns the scenario's default protection domain.
func (e *Env) PD() verbs.PD {
	if e.pd == nil {
		e.pd = e.NewPD(e.Ctx)
	}
	return e.pd
}

// NewPD allocates a protection domain on ctx.
func (e *Env) NewPD(ctx verbs.Context) verbs.PD {
	pd, err := ctx.AllocPD()
	if err != nil {
		e.Fatalf("ibv_alloc_pd: %v", err)
	}
	e.Defer(func() { _ = pd.Dealloc() })
	return pd
}

// MR allocates and registers length bytes on pd.
func (e *Env) MR(pd verbs.PD, length int, access verbs.Access) verbs.MR {
	mr, err := pd.AllocMR(length, access)
	if err != nil {
		e.Fatalf("AllocMR(%d, %v) = %v", length, access, err)
	}
	e.Defer(func() { _ = mr.Dereg() })
	return mr
}

// CQ returns the scenario's default completion queue (256 entries).
func (e *Env) CQ() verbs.CQ {
	if e.cq == nil {
		e.cq = e.NewCQ(e.Ctx, verbs.CQInitAttr{CQE: 256})
	}
	return e.cq
}

// NewCQ creates a completion queue.
func (e *Env) NewCQ(ctx verbs.Context, attr verbs.CQInitAttr) verbs.CQ {
	cq, err := ctx.CreateCQ(attr)
	if err != nil {
		e.Fatalf("ibv_create_cq(cqe=%d): %v", attr.CQE, err)
	}
	e.Defer(func() { _ = cq.Destroy() })
	return cq
}

// Channel creates a completion channel.
func (e *Env) Channel() verbs.CompChannel {
	ch, err := e.Ctx.CreateCompChannel()
	if err != nil {
		e.Fatalf("ibv_create_comp_channel: %v", err)
	}
	e.Defer(func() { _ = ch.Destroy() })
	return ch
}

// SRQ creates a shared receive queue on pd.
func (e *Env) SRQ(pd verbs.PD, attr verbs.SRQAttr) verbs.SRQ {
	srq, err := pd.CreateSRQ(verbs.SRQInitAttr{Attr: attr})
	if err != nil {
		e.Fatalf("ibv_create_srq(%+v): %v", attr, err)
	}
	e.Defer(func() { _ = srq.Destroy() })
	return srq
}

// DefaultCap is the capacity scenario QPs get unless they ask otherwise.
var DefaultCap = verbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}

// QP creates a QP of type typ on the default PD and CQ with DefaultCap.
func (e *Env) QP(typ verbs.QPType) verbs.QP {
	return e.NewQP(e.PD(), verbs.QPInitAttr{Type: typ, SendCQ: e.CQ(), RecvCQ: e.CQ(), Cap: DefaultCap})
}

// NewQP creates a QP.
func (e *Env) NewQP(pd verbs.PD, attr verbs.QPInitAttr) verbs.QP {
	qp, err := pd.CreateQP(attr)
	if err != nil {
		e.Fatalf("ibv_create_qp(%v, %+v): %v", attr.Type, attr.Cap, err)
	}
	e.Defer(func() { _ = qp.Destroy() })
	return qp
}

// AH creates an address handle.
func (e *Env) AH(pd verbs.PD, attr verbs.AHAttr) verbs.AH {
	ah, err := pd.CreateAH(attr)
	if err != nil {
		e.Fatalf("ibv_create_ah: %v", err)
	}
	e.Defer(func() { _ = ah.Destroy() })
	return ah
}

// AV returns an address vector that loops back to the device's own GID, as
// pyverbs' tests and rc_pingpong -g do on one rxe device: GRH present
// (RoCE requires it), sgid_index Options.GIDIndex, hop_limit 1.
func (e *Env) AV() verbs.AHAttr {
	return verbs.AHAttr{
		IsGlobal: true,
		PortNum:  e.Port,
		GRH: verbs.GlobalRoute{
			DGID:      e.GID,
			SGIDIndex: uint8(e.Opts.GIDIndex),
			HopLimit:  1,
		},
	}
}

// ---- checks

// Must fails the scenario when err is not nil.
func (e *Env) Must(err error, what string, args ...any) {
	if err != nil {
		e.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// ExpectErrno checks that err carries errno want; it reports and returns
// false otherwise. what describes the call ("ibv_reg_mr(REMOTE_WRITE)").
func (e *Env) ExpectErrno(err error, want syscall.Errno, what string, args ...any) bool {
	call := fmt.Sprintf(what, args...)
	switch {
	case err == nil:
		e.Errorf("%s = nil; want %s", call, verbs.ErrnoName(want))
		return false
	case !errors.Is(err, want):
		e.Errorf("%s = %v (errno %s); want %s", call, err, verbs.ErrnoName(verbs.ErrnoOf(err)), verbs.ErrnoName(want))
		return false
	}
	return true
}

// ExpectError checks that err is not nil, whatever its errno.
func (e *Env) ExpectError(err error, what string, args ...any) bool {
	if err == nil {
		e.Errorf("%s = nil; want an error", fmt.Sprintf(what, args...))
		return false
	}
	return true
}

// ExpectNamesAttr checks, on a backend that explains errors, that err's
// text names the QP attribute b (IBV_QP_PATH_MTU or path_mtu).
func (e *Env) ExpectNamesAttr(err error, b verbs.QPAttrMask, what string, args ...any) {
	if !e.Explains() || err == nil {
		return
	}
	if !namesAttr(err.Error(), b) {
		e.Errorf("%s: error %q does not name %v", fmt.Sprintf(what, args...), err.Error(), b)
	}
}

// ExpectNamesStates checks, on a backend that explains errors, that err's
// text names every one of states.
func (e *Env) ExpectNamesStates(err error, states []verbs.QPState, what string, args ...any) {
	if !e.Explains() || err == nil {
		return
	}
	var missing []string
	for _, s := range states {
		if !namesState(err.Error(), s) {
			missing = append(missing, s.String())
		}
	}
	if len(missing) > 0 {
		e.Errorf("%s: error %q does not name the legal next state(s) %s", fmt.Sprintf(what, args...), err.Error(), strings.Join(missing, ", "))
	}
}

// namesAttr reports whether text names the attribute b as a whole word: its
// libibverbs name (IBV_QP_AV), its short form (av), or another spelling the
// verbs package parses as that bit (the struct field ah_attr, max_rd_atomic).
func namesAttr(text string, b verbs.QPAttrMask) bool {
	for _, tok := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(text, -1) {
		if m, err := verbs.ParseQPAttrMask(tok); err == nil && m == b {
			return true
		}
	}
	return false
}

// namesState reports whether text names the state s (IBV_QPS_RTR or RTR).
func namesState(text string, s verbs.QPState) bool {
	want := strings.ToLower(s.Short())
	for _, tok := range regexp.MustCompile(`[a-z0-9]+`).FindAllString(strings.ToLower(text), -1) {
		if tok == want {
			return true
		}
	}
	return false
}

// Eventually polls cond until it holds or Options.Wait passes.
func (e *Env) Eventually(cond func() bool) bool {
	deadline := time.Now().Add(e.Opts.Wait)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if st, ok := e.P.(verbs.Stepper); ok && st.DeliveryMode() == verbs.DeliverStep {
			st.Run()
		}
		time.Sleep(time.Millisecond)
	}
}

// NoPanic runs f and reports a panic as a failure instead of ending the
// scenario.
func (e *Env) NoPanic(what string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatal); ok {
				panic(r)
			}
			e.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}
