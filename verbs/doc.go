// Package verbs is the RDMA verbs API of vsh: the objects, values, work
// requests, completions and errors of libibverbs, in Go form.
//
// It mirrors libibverbs one to one so that a learner can hold rc_pingpong.c
// beside the shell and map every line: a Provider lists Devices; a Device opens
// a Context; a Context allocates PDs, completion channels and CQs; a PD
// allocates MRs, QPs, SRQs and AHs. Every enum and flag prints its libibverbs
// name (IBV_QPS_RTS, IBV_ACCESS_REMOTE_WRITE, IBV_WC_SUCCESS) and parses it
// back, short forms too (rts, remote_write, success).
//
// The typical walk, as rc_pingpong.c does it:
//
//	devs, _ := provider.Devices()
//	ctx, _ := devs[0].Open()                       // ibv_open_device
//	pd, _ := ctx.AllocPD()                         // ibv_alloc_pd
//	mr, _ := pd.AllocMR(4096, verbs.AccessLocalWrite) // memalign + ibv_reg_mr
//	cq, _ := ctx.CreateCQ(verbs.CQInitAttr{CQE: 16}) // ibv_create_cq
//	qp, _ := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
//		Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: 500, MaxSendSGE: 1, MaxRecvSGE: 1}})
//	qp.Modify(&verbs.QPAttr{State: verbs.QPSInit, PKeyIndex: 0, PortNum: 1},
//		verbs.AttrState|verbs.AttrPKeyIndex|verbs.AttrPort|verbs.AttrAccessFlags)
//	// ... RTR, RTS, PostRecv, PostSend, Poll ...
//
// Registered memory belongs to the backend: PD.AllocMR allocates and registers
// it and MR.Bytes hands out a view, so that the real backend can keep it
// outside the Go heap.
//
// The data path is batched: QP.PostSend, QP.PostRecv, SRQ.PostRecv and CQ.Poll
// take slices, so a backend crosses into C once per batch. A work completion's
// status is data (WC.Status), not an error.
//
// Errors are *Error values that keep the errno (errors.Is(err,
// syscall.EINVAL) holds) and say which verb failed, why and how to fix it.
//
// Simulator-only features — single-stepping the fabric, fault injection,
// packet observation and inspection of queue internals — are small optional
// interfaces (Stepper, FaultInjector, PacketObserver, Inspector) that a
// Provider may implement; callers discover them with a type assertion and
// never import a backend.
package verbs
