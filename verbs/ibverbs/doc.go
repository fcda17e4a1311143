// Package ibverbs is the real backend of vsh: the verbs API
// (github.com/vsh-rdma/vsh/verbs) over libibverbs through cgo, for RDMA
// hardware and Linux soft-RoCE (rxe).
//
// It is built only with cgo on Linux and the ibverbs build tag (the
// Makefile adds the tag when /usr/include/infiniband/verbs.h exists):
//
//	apt-get install libibverbs-dev
//	CGO_ENABLED=1 go build -tags ibverbs ./cmd/vsh    # or: make build
//
// Elsewhere New returns ErrBackendDisabled, which says how to build it.
//
//	p, err := ibverbs.New()     // ibv_get_device_list
//	devs, _ := p.Devices()
//	ctx, _ := devs[0].Open()    // ibv_open_device
//
// Registered memory lives outside the Go heap: PD.AllocMR allocates
// page-aligned, zeroed C memory and registers it (ibv_reg_mr); MR.Bytes is a
// view of it, valid until Dereg (or until the context is closed). Posting and
// polling cross into C once per batch: the work requests of one PostSend are
// laid out as an ibv_send_wr chain in C memory the QP keeps, and posted with
// one ibv_post_send.
//
// libibverbs decides. Every verb is called first; when it fails, the errno it
// returned is wrapped in a *verbs.Error and explained: by rxe's control-path
// rules (verbs/rules in Predict mode, which the simulator decides with; for
// ibv_modify_qp they include the transition table, verbs.CheckTransition),
// else by a (verb, errno) table, with what the backend knows of the objects
// (device limits, queue capacities, QP state). Before each control verb the
// same rules predict its outcome; when libibverbs gives
// a different one — an errno the rules did not expect, or success where they
// expected a refusal — the error says so and Mispredictions counts it, because
// that is a bug in the table or in the simulator that shares it.
//
// The context also offers the extended verbs of XRC (verbs.ExtendedContext:
// ibv_open_xrcd, ibv_create_srq_ex, ibv_create_qp_ex, ibv_open_qp; and
// SRQ.Num, ibv_get_srq_num), passed to libibverbs as they are: an XRC
// domain's path is opened as xsrq_pingpong opens /tmp/xrc_domain and kept
// open until the domain is closed. rxe has no XRC — its provider registers
// no open_xrcd, open_qp or get_srq_num, so those fail with EOPNOTSUPP, and
// libibverbs refuses an XRC SRQ or XRC_RECV QP without a domain with EINVAL
// — and the errors say so; XRC needs a NIC that has it (mlx5), or the
// simulator with --sim-xrc.
//
// A few inputs are refused before libibverbs sees them, because libibverbs
// would crash or hang on them rather than return an errno: nil or foreign
// objects, destroyed objects, a QP without a CQ, a UD send without an address
// handle, inline data outside registered memory, an SRQ type libibverbs
// does not know, and destroying an object whose events were not
// acknowledged. Those errors say so.
package ibverbs
