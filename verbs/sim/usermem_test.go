package sim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vsh-rdma/vsh/verbs"
)

// userBed is two connected RC QPs, x on sim0 and y on sim1, each with an
// MR over a slice the test owns (RegUserMR), as a C program's buffers.
type userBed struct {
	*bed
	x, y       verbs.QP
	xm, ym     verbs.MR
	xbuf, ybuf []byte
}

// Virtual addresses the program gives: one as the C heap would, one
// merely 8-byte aligned; neither from the simulator's allocator.
const (
	xIOVA = 0x7f3a_1c2e_5000
	yIOVA = 0x0000_0000_1000_0008
)

func newUserBed(t *testing.T) *userBed {
	t.Helper()
	u := &userBed{bed: newBed(t, Config{})}
	all := verbs.AccessLocalWrite | verbs.AccessRemote
	u.x, u.y = u.pair(0, 1, qpOpts{access: all, retry: 7, rnrRetry: 7})
	u.xbuf, u.ybuf = make([]byte, 16384), make([]byte, 16384)
	fill(u.xbuf, 1)
	fill(u.ybuf, 101)
	var err error
	u.xm, err = RegUserMR(u.pd[0], u.xbuf, xIOVA, all)
	require.NoError(t, err)
	u.ym, err = RegUserMR(u.pd[1], u.ybuf, yIOVA, all)
	require.NoError(t, err)
	return u
}

// sge is n bytes at offset off of m, by m's iova and lkey.
func (u *userBed) sge(m verbs.MR, off uint64, n uint32) []verbs.SGE {
	return []verbs.SGE{{Addr: m.Addr() + off, Length: n, LKey: m.LKey()}}
}

// statuses polls both CQs until want completions came and returns their
// statuses by WRID.
func (u *userBed) statuses(want int) map[uint64]verbs.WCStatus {
	out := map[uint64]verbs.WCStatus{}
	for _, cq := range u.cq[:2] {
		for _, wc := range u.drain(cq, 0) {
			out[wc.WRID] = wc.Status
		}
	}
	if len(out) < want {
		u.t.Fatalf("got completions %v, want %d", out, want)
	}
	return out
}

// TestUserMRDataPath: SEND, RDMA WRITE, READ and atomics between two MRs
// over caller-owned slices on two devices move the bytes in place, at the
// iovas the program gave.
func TestUserMRDataPath(t *testing.T) {
	tests := []struct {
		name  string
		post  func(u *userBed) error
		wcs   int
		check func(t *testing.T, u *userBed, ybefore []byte)
	}{
		{"send", func(u *userBed) error {
			if _, err := u.y.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: u.sge(u.ym, 100, 5000)}}); err != nil {
				return err
			}
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: u.sge(u.xm, 0, 3000)}})
			return err
		}, 2, func(t *testing.T, u *userBed, _ []byte) {
			assert.Equal(t, u.xbuf[:3000], u.ybuf[100:3100])
		}},
		{"write", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
				SGList: u.sge(u.xm, 0, 3000), RemoteAddr: u.ym.Addr() + 200, RKey: u.ym.RKey()}})
			return err
		}, 1, func(t *testing.T, u *userBed, _ []byte) {
			assert.Equal(t, u.xbuf[:3000], u.ybuf[200:3200])
		}},
		{"read", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMARead, Flags: verbs.SendSignaled,
				SGList: u.sge(u.xm, 4000, 3000), RemoteAddr: u.ym.Addr() + 300, RKey: u.ym.RKey()}})
			return err
		}, 1, func(t *testing.T, u *userBed, ybefore []byte) {
			assert.Equal(t, ybefore[300:3300], u.xbuf[4000:7000])
			assert.Equal(t, ybefore, u.ybuf, "a READ left the target alone")
		}},
		{"fetch and add", func(u *userBed) error {
			binary.LittleEndian.PutUint64(u.ybuf[8:], 40)
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled,
				SGList: u.sge(u.xm, 8000, 8), RemoteAddr: u.ym.Addr() + 8, RKey: u.ym.RKey(), CompareAdd: 2}})
			return err
		}, 1, func(t *testing.T, u *userBed, _ []byte) {
			assert.Equal(t, uint64(42), binary.LittleEndian.Uint64(u.ybuf[8:]))
			assert.Equal(t, uint64(40), binary.LittleEndian.Uint64(u.xbuf[8000:]))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUserBed(t)
			assert.Equal(t, uint64(xIOVA), u.xm.Addr())
			assert.Equal(t, uint64(yIOVA), u.ym.Addr())
			assert.Equal(t, len(u.xbuf), u.xm.Length())
			assert.Same(t, &u.xbuf[0], &u.xm.Bytes()[0], "Bytes is the caller's slice")
			ybefore := bytes.Clone(u.ybuf)
			require.NoError(t, tc.post(u))
			for id, st := range u.statuses(tc.wcs) {
				assert.Equal(t, verbs.WCSuccess, st, "WR %d", id)
			}
			tc.check(t, u, ybefore)
		})
	}
}

// TestRegUserMRRefusals: RegUserMR refuses what AllocMR refuses, with the
// same error, and takes none of the simulator's memory.
func TestRegUserMRRefusals(t *testing.T) {
	lw, rw := verbs.AccessLocalWrite, verbs.AccessRemoteWrite
	tests := []struct {
		name   string
		length int
		access verbs.Access
		errno  syscall.Errno
	}{
		{"remote write without local write", 4096, rw, verbs.EINVAL},
		{"unknown bit", 4096, verbs.Access(1 << 12), verbs.EINVAL},
		{"on demand", 4096, lw | verbs.AccessOnDemand, verbs.EINVAL},
		{"zero length", 0, lw, verbs.EINVAL},
		{"relaxed ordering is optional", 4096, lw | verbs.AccessRelaxedOrdering, 0},
		{"local write", 4096, lw, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			used := e.f.memUsed
			m, err := RegUserMR(e.pd, make([]byte, tc.length), 0x4000, tc.access)
			_, allocErr := e.pd.AllocMR(tc.length, tc.access)
			if tc.errno == 0 {
				require.NoError(t, err)
				require.NoError(t, allocErr)
				assert.Equal(t, used+int64(tc.length), e.f.memUsed, "only AllocMR's memory counts")
				require.NoError(t, m.Dereg())
				assert.Equal(t, used+int64(tc.length), e.f.memUsed, "Dereg gives back none of the simulator's memory")
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.errno), "RegUserMR = %v, want %s", err, verbs.ErrnoName(tc.errno))
			require.Error(t, allocErr)
			assert.Equal(t, allocErr.Error(), err.Error(), "RegUserMR and AllocMR refuse alike")
		})
	}
	t.Run("nil slice", func(t *testing.T) {
		e := newEnv(t)
		_, err := RegUserMR(e.pd, nil, 0x4000, lw)
		assert.True(t, errors.Is(err, verbs.EINVAL), "RegUserMR(nil) = %v, want EINVAL", err)
	})
	t.Run("not a simulator PD", func(t *testing.T) {
		_, err := RegUserMR(nil, make([]byte, 64), 0x4000, lw)
		assert.True(t, errors.Is(err, verbs.EINVAL), "RegUserMR(nil PD) = %v, want EINVAL", err)
		var pd *pd
		_, err = RegUserMR(pd, make([]byte, 64), 0x4000, lw)
		assert.True(t, errors.Is(err, verbs.EINVAL), "RegUserMR(nil *pd) = %v, want EINVAL", err)
	})
}

// TestUserMRDereg: after Dereg (or the context's Close) the simulator holds
// no reference to the caller's slice and never writes it again; work
// requests naming the old keys fail as on rxe.
func TestUserMRDereg(t *testing.T) {
	tests := []struct {
		name string
		// post runs after the MR named by dead is deregistered.
		dead string
		post func(u *userBed) error
		want map[uint64]verbs.WCStatus
	}{
		// copy_data: lookup_mr fails, -EINVAL: IBV_WC_LOC_QP_OP_ERR.
		{"send from it", "x", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: u.sge(u.xm, 0, 100)}})
			return err
		}, map[uint64]verbs.WCStatus{1: verbs.WCLocQPOpErr}},
		// check_rkey: lookup_mr fails, an R_Key violation NAK.
		{"write to it", "y", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
				SGList: u.sge(u.xm, 0, 3000), RemoteAddr: u.ym.Addr(), RKey: u.ym.RKey()}})
			return err
		}, map[uint64]verbs.WCStatus{1: verbs.WCRemAccessErr}},
		{"fetch and add on it", "y", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRAtomicFetchAndAdd, Flags: verbs.SendSignaled,
				SGList: u.sge(u.xm, 0, 8), RemoteAddr: u.ym.Addr() + 8, RKey: u.ym.RKey(), CompareAdd: 1}})
			return err
		}, map[uint64]verbs.WCStatus{1: verbs.WCRemAccessErr}},
		// A receive posted before Dereg: the data finds no MR (class A).
		{"receive into it", "y", func(u *userBed) error {
			_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: u.sge(u.xm, 0, 100)}})
			return err
		}, map[uint64]verbs.WCStatus{1: verbs.WCRemOpErr, 2: verbs.WCLocQPOpErr}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUserBed(t)
			_, err := u.y.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: u.sge(u.ym, 0, 4096)}})
			require.NoError(t, err)
			m, buf := u.xm, u.xbuf
			if tc.dead == "y" {
				m, buf = u.ym, u.ybuf
			}
			before := bytes.Clone(buf)
			require.NoError(t, m.Dereg())
			assert.Nil(t, m.Bytes())
			assert.Nil(t, m.(*mr).buf, "the simulator let go of the slice")
			require.NoError(t, tc.post(u))
			got := u.statuses(len(tc.want))
			for id, st := range tc.want {
				assert.Equal(t, st, got[id], "WR %d", id)
			}
			assert.Equal(t, before, buf, "the slice was written after Dereg")
		})
	}
	t.Run("context closed", func(t *testing.T) {
		u := newUserBed(t)
		require.NoError(t, u.ctx[1].Close())
		assert.Nil(t, u.ym.Bytes())
		assert.Nil(t, u.ym.(*mr).buf, "the simulator let go of the slice")
		assert.Equal(t, len(u.ybuf), u.ym.Length(), "Length outlives the memory")
	})
}

// TestUserMRDeregMidWrite: an MR deregistered while a multi-packet WRITE
// into it is half done takes none of the rest (the responder still holds
// the MR, resp.mr): the later packets are R_Key violations, nothing
// panics, and the slice keeps only what arrived before Dereg.
func TestUserMRDeregMidWrite(t *testing.T) {
	u := newUserBed(t)
	u.f.SetDeliveryMode(verbs.DeliverStep)
	ybefore := bytes.Clone(u.ybuf)
	_, err := u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRRDMAWrite, Flags: verbs.SendSignaled,
		SGList: u.sge(u.xm, 0, 3000), RemoteAddr: u.ym.Addr(), RKey: u.ym.RKey()}})
	require.NoError(t, err)
	for i := 0; i < 1000 && bytes.Equal(u.ybuf[:1024], ybefore[:1024]); i++ {
		_, ok := u.f.Step()
		require.True(t, ok, "the fabric went quiet before the first packet landed")
	}
	require.Equal(t, u.xbuf[:1024], u.ybuf[:1024], "the first packet landed")
	require.Equal(t, ybefore[1024:], u.ybuf[1024:], "only the first packet landed before Dereg")
	require.NoError(t, u.ym.Dereg())
	u.f.Run()
	assert.Equal(t, map[uint64]verbs.WCStatus{1: verbs.WCRemAccessErr}, u.statuses(1))
	assert.Equal(t, ybefore[1024:], u.ybuf[1024:], "the slice was written after Dereg")
}

// TestSetProcessMemory: with a reader of the program's memory, an inline
// send copies its SGEs from there, lkeys and MRs unused, as rdma-core's
// memcpy does; without one, only MR memory will do (EFAULT otherwise).
func TestSetProcessMemory(t *testing.T) {
	const base = 0x6000_0000 // in no MR
	mem := make([]byte, 256)
	fill(mem, 7)
	read := func(addr uint64, n int) []byte {
		if addr < base || addr-base > uint64(len(mem)) || uint64(n) > uint64(len(mem))-(addr-base) {
			return nil
		}
		return mem[addr-base : addr-base+uint64(n)]
	}
	// A zero-length SGE reads nothing, wherever it points: memcpy of 0
	// bytes does not fault.
	tests := []struct {
		name   string
		reader func(addr uint64, n int) []byte
		sge    func(u *userBed) []verbs.SGE
		errno  syscall.Errno
		want   []byte
	}{
		{"program memory in no MR", read, func(u *userBed) []verbs.SGE {
			return []verbs.SGE{{Addr: base + 16, Length: 40}, {Addr: 0, Length: 0}, {Addr: base + 200, Length: 8}}
		}, 0, append(bytes.Clone(mem[16:56]), mem[200:208]...)},
		{"no reader", nil, func(u *userBed) []verbs.SGE {
			return []verbs.SGE{{Addr: base + 16, Length: 40}}
		}, verbs.EFAULT, nil},
		{"outside program memory", read, func(u *userBed) []verbs.SGE {
			return []verbs.SGE{{Addr: base + 250, Length: 40}}
		}, verbs.EFAULT, nil},
		{"MR memory the reader does not know", read, func(u *userBed) []verbs.SGE {
			return u.sge(u.xm, 0, 40)
		}, verbs.EFAULT, nil},
		{"MR memory without a reader", nil, func(u *userBed) []verbs.SGE {
			return u.sge(u.xm, 0, 40)
		}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := newUserBed(t)
			u.f.SetProcessMemory(tc.reader)
			_, err := u.y.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: u.sge(u.ym, 0, 4096)}})
			require.NoError(t, err)
			sgl := tc.sge(u)
			want := tc.want
			if want == nil {
				want = bytes.Clone(u.xbuf[:40])
			}
			_, err = u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled | verbs.SendInline, SGList: sgl}})
			if tc.errno != 0 {
				assert.True(t, errors.Is(err, tc.errno), "PostSend = %v, want %s", err, verbs.ErrnoName(tc.errno))
				return
			}
			require.NoError(t, err)
			for id, st := range u.statuses(2) {
				assert.Equal(t, verbs.WCSuccess, st, "WR %d", id)
			}
			assert.Equal(t, want, u.ybuf[:len(want)])
		})
	}
}

// TestEventNotify: the hook hears of each completion event on its channel
// and each async event of its context, once per event, as it is queued;
// the events stay queued for GetEvent, which the hook does not consume.
func TestEventNotify(t *testing.T) {
	u := newUserBed(t)
	var chans []verbs.CompChannel
	var ctxs []verbs.Context
	u.f.SetEventNotify(func(ch verbs.CompChannel, ctx verbs.Context) {
		if ch != nil {
			chans = append(chans, ch)
		}
		if ctx != nil {
			ctxs = append(ctxs, ctx)
		}
	})
	ch, err := u.ctx[0].CreateCompChannel()
	require.NoError(t, err)
	cq, err := u.ctx[0].CreateCQ(verbs.CQInitAttr{CQE: 1, Channel: ch})
	require.NoError(t, err)
	qp, err := u.pd[0].CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	require.NoError(t, cq.ReqNotify(false))
	// ERR flushes the two receives: one completion (an event), then a
	// second into the full CQ (CQ_ERR).
	require.NoError(t, qp.Modify(&verbs.QPAttr{State: verbs.QPSInit, PortNum: 1},
		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags))
	_, err = qp.PostRecv([]verbs.RecvWR{{WRID: 1}, {WRID: 2}})
	require.NoError(t, err)
	require.NoError(t, qp.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState))
	u.drain(u.cq[0], 0) // let the fabric run
	assert.Equal(t, []verbs.CompChannel{ch}, chans, "one completion event, on the channel")
	assert.Equal(t, []verbs.Context{u.ctx[0]}, ctxs, "one async event (CQ_ERR), of the context")
	got, err := ch.GetEvent(0)
	require.NoError(t, err, "the hook left the event queued")
	assert.Equal(t, cq, got)
	cq.AckEvents(1)
	ev, err := u.ctx[0].GetAsyncEvent(0)
	require.NoError(t, err)
	assert.Equal(t, verbs.EventCQErr, ev.Type)
	u.ctx[0].AckAsyncEvent(ev)
	u.f.SetEventNotify(nil)
	require.NoError(t, cq.ReqNotify(false))
	n := len(chans)
	_, _ = cq.Poll(make([]verbs.WC, 4))
	_, err = qp.PostRecv([]verbs.RecvWR{{WRID: 3}})
	require.NoError(t, err)
	u.drain(u.cq[0], 0)
	assert.Len(t, chans, n, "no hook, no call")
}

// TestCompletionWhy: a failed completion's reason, as the simulator
// decided it, is kept for the receiver's and the sender's CQ; a success
// has none.
func TestCompletionWhy(t *testing.T) {
	u := newUserBed(t)
	_, err := u.y.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: u.sge(u.ym, 0, 16)}})
	require.NoError(t, err)
	_, err = u.x.PostSend([]verbs.SendWR{{WRID: 1, Opcode: verbs.WRSend, Flags: verbs.SendSignaled, SGList: u.sge(u.xm, 0, 64)}})
	require.NoError(t, err)
	var send, recv verbs.WC
	for _, wc := range u.drain(u.cq[0], 1) {
		send = wc
	}
	for _, wc := range u.drain(u.cq[1], 1) {
		recv = wc
	}
	require.NotEqual(t, verbs.WCSuccess, recv.Status)
	assert.Contains(t, CompletionWhy(u.cq[1], recv), "the receive WQE cannot take the data")
	assert.Contains(t, CompletionWhy(u.cq[0], send), "NAK")
	ok := send
	ok.Status = verbs.WCSuccess
	assert.Empty(t, CompletionWhy(u.cq[0], ok))
	// The receives behind the failed one are flushed: no reason of their
	// own, and they do not push the failure's out.
	for i := range 100 {
		_, err = u.y.PostRecv([]verbs.RecvWR{{WRID: 2, SGList: u.sge(u.ym, uint64(i), 1)}})
		require.NoError(t, err)
	}
	for _, wc := range u.drain(u.cq[1], 100) {
		require.Equal(t, verbs.WCWRFlushErr, wc.Status)
		assert.Empty(t, CompletionWhy(u.cq[1], wc))
	}
	assert.Contains(t, CompletionWhy(u.cq[1], recv), "the receive WQE cannot take the data")
	assert.Empty(t, CompletionWhy(nil, send))
}
