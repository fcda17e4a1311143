package sim

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// FuzzVerbs drives every verb with arguments taken from the fuzzer's
// bytes, against objects alive, destroyed or foreign, and checks only that
// nothing panics and that errors are *verbs.Error values. The seeds run in
// plain go test.
func FuzzVerbs(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30})
	f.Add([]byte{1, 1, 1, 3, 3, 5, 5, 9, 9, 9, 12, 12, 12, 12, 15, 15, 14, 14, 13, 2, 2, 0xff, 0x80, 0x7f})
	f.Add([]byte("\x02\x05\x09\x0c\x0c\x0c\x0e\x0e\x0f\x11\x12\x13\x14\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e"))
	seed := make([]byte, 512)
	for i := range seed {
		seed[i] = byte(i*37 + i/7)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		runOps(t, data)
	})
}

// TestRandomCallSequences runs many pseudo-random sequences, for the
// no-panic guarantee without the fuzzer.
func TestRandomCallSequences(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		data := make([]byte, 400)
		for j := range data {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			data[j] = byte(x)
		}
		runOps(t, data)
	}
}

type opReader struct{ b []byte }

func (r *opReader) u8() uint8 {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *opReader) u32() uint32 {
	if len(r.b) < 4 {
		return uint32(r.u8())
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// small returns mostly small values, sometimes huge or negative ones.
func (r *opReader) small() int {
	v := r.u8()
	switch {
	case v < 200:
		return int(v % 40)
	case v < 230:
		return int(int32(r.u32()))
	default:
		return -int(v)
	}
}

func runOps(t *testing.T, data []byte) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v (input %x)", r, data)
		}
	}()
	r := &opReader{b: data}
	f := New(Config{Devices: 2, Seed: int64(r.u8()) + 1})
	devs, _ := f.Devices()
	var (
		ctxs []verbs.Context
		pds  []verbs.PD
		mrs  []verbs.MR
		cqs  []verbs.CQ
		chs  []verbs.CompChannel
		qps  []verbs.QP
		srqs []verbs.SRQ
		ahs  []verbs.AH
	)
	pick := func(n int) int {
		if n == 0 {
			return -1
		}
		return int(r.u8()) % n
	}
	check := func(err error) {
		if err != nil {
			if _, ok := verbs.AsError(err); !ok {
				t.Fatalf("error %v (%T) is not a *verbs.Error", err, err)
			}
		}
	}
	sges := func() []verbs.SGE {
		n := int(r.u8() % 4)
		out := make([]verbs.SGE, n)
		for i := range out {
			if j := pick(len(mrs)); j >= 0 && r.u8()%4 != 0 {
				m := mrs[j]
				out[i] = verbs.SGE{Addr: m.Addr() + uint64(r.u8()), Length: uint32(r.small()), LKey: m.LKey()}
			} else {
				out[i] = verbs.SGE{Addr: uint64(r.u32()), Length: r.u32(), LKey: r.u32()}
			}
		}
		return out
	}
	qpAttr := func() (*verbs.QPAttr, verbs.QPAttrMask) {
		a := &verbs.QPAttr{
			State: verbs.QPState(r.u8() % 9), CurState: verbs.QPState(r.u8() % 9), PathMTU: verbs.MTU(r.u8() % 7),
			QKey: r.u32(), RQPSN: r.u32(), SQPSN: r.u32(), DestQPN: r.u32() % 40, AccessFlags: verbs.Access(r.u8() % 16),
			PKeyIndex: uint16(r.u8() % 3), MaxRdAtomic: r.u8(), MaxDestRdAtomic: r.u8(), MinRNRTimer: r.u8() % 33,
			PortNum: r.u8() % 3, Timeout: r.u8() % 40, RetryCnt: r.u8() % 9, RNRRetry: r.u8() % 9,
			AH: verbs.AHAttr{IsGlobal: r.u8()%5 != 0, PortNum: r.u8() % 3, GRH: verbs.GlobalRoute{SGIDIndex: r.u8() % 4, HopLimit: 1}},
		}
		if i := pick(len(devs)); i >= 0 {
			a.AH.GRH.DGID = verbs.GIDFromIPv4(f.devs[i].ip)
		}
		var mask verbs.QPAttrMask
		switch r.u8() % 5 {
		case 0:
			mask = verbs.AttrState | verbs.AttrPKeyIndex | verbs.AttrPort | verbs.AttrAccessFlags | verbs.AttrQKey
		case 1:
			mask = verbs.AttrState | verbs.AttrAV | verbs.AttrPathMTU | verbs.AttrDestQPN | verbs.AttrRQPSN | verbs.AttrMaxDestRdAtomic | verbs.AttrMinRNRTimer | verbs.AttrQKey
		case 2:
			mask = verbs.AttrState | verbs.AttrTimeout | verbs.AttrRetryCnt | verbs.AttrRNRRetry | verbs.AttrSQPSN | verbs.AttrMaxQPRdAtomic
		case 3:
			mask = verbs.AttrState
		default:
			mask = verbs.QPAttrMask(r.u32())
		}
		return a, mask
	}
	wc := make([]verbs.WC, 8)
	for steps := 0; len(r.b) > 0 && steps < 400; steps++ {
		switch r.u8() % 32 {
		case 0:
			if i := pick(len(devs)); i >= 0 {
				c, err := devs[i].Open()
				check(err)
				if c != nil {
					ctxs = append(ctxs, c)
				}
			}
		case 1:
			if i := pick(len(ctxs)); i >= 0 {
				p, err := ctxs[i].AllocPD()
				check(err)
				if p != nil {
					pds = append(pds, p)
				}
			}
		case 2:
			if i := pick(len(ctxs)); i >= 0 {
				var ch verbs.CompChannel
				if j := pick(len(chs)); j >= 0 && r.u8()%2 == 0 {
					ch = chs[j]
				}
				c, err := ctxs[i].CreateCQ(verbs.CQInitAttr{CQE: r.small(), Channel: ch, CompVector: r.small() % 3})
				check(err)
				if c != nil {
					cqs = append(cqs, c)
				}
			}
		case 3:
			if i := pick(len(pds)); i >= 0 {
				size := r.small() * 64
				if size > 1<<20 {
					size += maxMRBytes // huge asks fail fast instead of allocating
				}
				m, err := pds[i].AllocMR(size, verbs.Access(r.u8()))
				check(err)
				if m != nil {
					mrs = append(mrs, m)
				}
			}
		case 4:
			if i := pick(len(ctxs)); i >= 0 {
				c, err := ctxs[i].CreateCompChannel()
				check(err)
				if c != nil {
					chs = append(chs, c)
				}
			}
		case 5:
			if i := pick(len(pds)); i >= 0 {
				a := verbs.QPInitAttr{Type: verbs.QPType(2 + r.u8()%9), SQSigAll: r.u8()%2 == 0,
					Cap: verbs.QPCap{MaxSendWR: r.small(), MaxRecvWR: r.small(), MaxSendSGE: r.small(), MaxRecvSGE: r.small(), MaxInlineData: r.small()}}
				if j := pick(len(cqs)); j >= 0 {
					a.SendCQ = cqs[j]
				}
				if j := pick(len(cqs)); j >= 0 {
					a.RecvCQ = cqs[j]
				}
				if j := pick(len(srqs)); j >= 0 && r.u8()%3 == 0 {
					a.SRQ = srqs[j]
				}
				q, err := pds[i].CreateQP(a)
				check(err)
				if q != nil {
					qps = append(qps, q)
				}
			}
		case 6:
			if i := pick(len(pds)); i >= 0 {
				s, err := pds[i].CreateSRQ(verbs.SRQInitAttr{Attr: verbs.SRQAttr{MaxWR: r.small(), MaxSGE: r.small(), SRQLimit: r.small()}})
				check(err)
				if s != nil {
					srqs = append(srqs, s)
				}
			}
		case 7:
			if i := pick(len(pds)); i >= 0 {
				a, _ := qpAttr()
				h, err := pds[i].CreateAH(a.AH)
				check(err)
				if h != nil {
					ahs = append(ahs, h)
				}
			}
		case 8, 9, 10:
			if i := pick(len(qps)); i >= 0 {
				a, m := qpAttr()
				if r.u8()%8 == 0 {
					a = nil
				}
				check(qps[i].Modify(a, m))
			}
		case 11:
			if i := pick(len(qps)); i >= 0 {
				_, _, err := qps[i].Query(verbs.QPAttrMask(r.u32()))
				check(err)
			}
		case 12, 13:
			if i := pick(len(qps)); i >= 0 {
				n := int(r.u8() % 4)
				wrs := make([]verbs.SendWR, n)
				for k := range wrs {
					wrs[k] = verbs.SendWR{WRID: uint64(k), SGList: sges(), Opcode: verbs.WROpcode(r.u8() % 12),
						Flags: verbs.SendFlags(r.u8() % 32), Imm: r.u32(), RemoteAddr: uint64(r.u32()), RKey: r.u32(),
						CompareAdd: uint64(r.u32()), Swap: uint64(r.u32()), RemoteQPN: r.u32() % 40, RemoteQKey: r.u32()}
					if j := pick(len(ahs)); j >= 0 {
						wrs[k].AH = ahs[j]
					}
					if j := pick(len(mrs)); j >= 0 {
						wrs[k].RemoteAddr = mrs[j].Addr() + uint64(r.u8())
						wrs[k].RKey = mrs[j].RKey()
					}
				}
				_, err := qps[i].PostSend(wrs)
				check(err)
			}
		case 14:
			if i := pick(len(qps)); i >= 0 {
				wrs := make([]verbs.RecvWR, int(r.u8()%4))
				for k := range wrs {
					wrs[k] = verbs.RecvWR{WRID: uint64(k), SGList: sges()}
				}
				_, err := qps[i].PostRecv(wrs)
				check(err)
			}
		case 15:
			if i := pick(len(cqs)); i >= 0 {
				_, err := cqs[i].Poll(wc[:r.u8()%9])
				check(err)
			}
		case 16:
			if i := pick(len(cqs)); i >= 0 {
				check(cqs[i].ReqNotify(r.u8()%2 == 0))
			}
		case 17:
			if i := pick(len(chs)); i >= 0 {
				c, err := chs[i].GetEvent(time.Duration(r.u8()) * time.Millisecond)
				check(err)
				if c != nil {
					c.AckEvents(int(r.u8() % 3))
				}
			}
		case 18:
			if i := pick(len(ctxs)); i >= 0 {
				ev, err := ctxs[i].GetAsyncEvent(time.Duration(r.u8()) * time.Millisecond)
				check(err)
				if err == nil && r.u8()%4 != 0 {
					ctxs[i].AckAsyncEvent(ev)
				}
			}
		case 19:
			if i := pick(len(qps)); i >= 0 {
				check(qps[i].Destroy())
			}
		case 20:
			if i := pick(len(cqs)); i >= 0 {
				check(cqs[i].Destroy())
			}
		case 21:
			if i := pick(len(mrs)); i >= 0 {
				check(mrs[i].Dereg())
			}
		case 22:
			if i := pick(len(pds)); i >= 0 {
				check(pds[i].Dealloc())
			}
		case 23:
			if i := pick(len(srqs)); i >= 0 {
				check(srqs[i].Destroy())
			}
		case 24:
			if i := pick(len(chs)); i >= 0 {
				check(chs[i].Destroy())
			}
		case 25:
			if i := pick(len(ahs)); i >= 0 {
				check(ahs[i].Destroy())
			}
		case 26:
			if i := pick(len(srqs)); i >= 0 {
				wrs := make([]verbs.RecvWR, int(r.u8()%4))
				for k := range wrs {
					wrs[k] = verbs.RecvWR{WRID: uint64(k), SGList: sges()}
				}
				_, err := srqs[i].PostRecv(wrs)
				check(err)
				check(srqs[i].Modify(verbs.SRQAttr{MaxWR: r.small(), SRQLimit: r.small()}, verbs.SRQAttrMask(r.u8()%4)))
				_, err = srqs[i].Query()
				check(err)
			}
		case 27:
			if i := pick(len(cqs)); i >= 0 {
				check(cqs[i].Resize(r.small()))
			}
		case 28:
			if i := pick(len(ctxs)); i >= 0 && r.u8()%4 == 0 {
				check(ctxs[i].Close())
			}
		case 29:
			if i := pick(len(qps)); i >= 0 {
				var g verbs.GID
				g[0] = 0xff - r.u8()%2
				check(qps[i].AttachMcast(g, 0))
				if r.u8()%2 == 0 {
					check(qps[i].DetachMcast(g, 0))
				}
			}
		case 30:
			switch r.u8() % 5 {
			case 0:
				f.SetDeliveryMode(verbs.DeliveryMode(r.u8() % 2))
			case 1:
				f.Step()
			case 2:
				f.Run()
			case 3:
				f.Advance(time.Duration(r.u32()))
			case 4:
				check(f.SetPortState(int(r.u8()%3), verbs.PortState(r.u8()%6)))
			}
		case 31:
			if i := pick(len(ctxs)); i >= 0 {
				_, err := ctxs[i].QueryGID(r.u8(), r.small())
				check(err)
				_, err = ctxs[i].QueryPort(r.u8())
				check(err)
				_, err = ctxs[i].QueryGIDType(r.u8(), r.small())
				check(err)
			}
		}
	}
	check(f.Close())
}
