// Package sim implements a deterministic, pure-Go RDMA device for teaching
// and tests: a simulated RoCEv2 RNIC that behaves, observably, as Linux
// soft-RoCE (rxe, kernel 6.1 with rdma-core 44) does.
//
// A Fabric is a verbs.Provider: devices sim0, sim1, ... on one simulated
// Ethernet segment, each with one port (ACTIVE, Ethernet link layer, max MTU
// 4096, active MTU 1024 as for a 1500-byte netdev), an IPv4 address
// (10.0.0.1, 10.0.0.2, ...) and rxe's GID table: index 0 the link-local
// fe80:: GID derived from the MAC, index 1 the IPv4-mapped RoCE v2 GID.
//
//	f := sim.New(sim.Config{})          // two devices, seed 1
//	devs, _ := f.Devices()
//	ctx, _ := devs[0].Open()
//	pd, _ := ctx.AllocPD()
//	...                                 // as with libibverbs
//
// # Fidelity
//
// Every validation rule is rxe's or the kernel core's, and each one cites
// the function it comes from; the control-path ones live in verbs/rules,
// which the simulator decides with and the real backend predicts with.
// They include attribute limits from rxe_param.h; queue
// depths rounded as rxe_queue_init rounds them (2^k-1); the QP state
// machine of ib_modify_qp_is_ok (verbs.CheckTransition) followed by
// rxe_qp_chk_attr; the posting rules of rdma-core's rxe provider
// (validate_send_wr, rxe_post_recv) and of the kernel's doorbell
// (rxe_post_send). Where rxe surprises a learner — a send posted before RTS
// is refused with EINVAL yet stays queued; a bad lkey is an
// IBV_WC_LOC_QP_OP_ERR completion, not a post error, while an SGE outside
// its MR is IBV_WC_LOC_PROT_ERR — the error or the completion says why. Where rxe would crash or hang a C program (a NULL
// AH, destroying a CQ with unacknowledged events), the simulator returns an
// error that says so instead.
//
// # XRC, beyond rxe
//
// rxe has no XRC, and neither has a Fabric by default: every XRC verb
// fails with EOPNOTSUPP, as libibverbs' dummy ops answer on rxe. With
// Config.XRC (or SetXRC) the devices have it as a NIC that implements it
// does (xrc.go): XRC domains per device and file, XRC SRQs numbered
// device-wide with a CQ of their own, XRC_SEND QPs whose requests carry
// the target SRQ's number (the XRCETH), and XRC_RECV QPs that belong to
// their domain, reached through handles (ibv_open_qp), and hand each
// message to the SRQ it names.
//
// # Determinism
//
// QP numbers are allocated as rxe's pool allocates them (cyclic from 17;
// 16 is the GSI QP), memory keys are index<<8 | 8 bits drawn from the
// seeded source, MACs, GUIDs and MR addresses come from the same source.
// The same Config and the same calls give the same results, byte for byte.
//
// # Engines and fabric
//
// Each QP runs rxe's three engines — requester, completer and responder,
// transcribed state by state from Linux 6.1's rxe_req.c, rxe_comp.c and
// rxe_resp.c — as plain functions over its state: a verb, a packet or a
// timer schedules them and the fabric runs them until none is pending.
//
// The core starts no goroutine, does no I/O and takes no lock: api.go, the
// API boundary, holds the fabric's one mutex around every exported method
// and calls the method's unexported twin, under which everything runs on
// the caller's goroutine. What lies beyond the fabric is its carrier
// (carrier.go): in process, nothing, and virtual time that moves only as
// timers and packets fall due; the UDP link, other processes and the wall
// clock; a replay carrier could come in the same way. The fabric's clock
// moves only forward, by its own methods. rxe's timers count jiffies
// (Config.HZ, 250 as Debian's kernel) on the kernel's timer wheel. By default the fabric delivers automatically after every
// verb (verbs.DeliverAuto); with verbs.DeliverStep nothing moves until
// Step, Run or Advance (the verbs.Stepper interface). The shortcuts for
// the usual case sit beside the transcription, behind one gate: packet
// trains in train.go, the others in fastpath.go; they call into the
// engines, whose files read against rxe's.
//
// # Packets and the link model
//
// Packets are verbs/wire packets: in process, decoded headers and a payload
// borrowed from the sender's memory (one copy, as DMA); encoded as genuine
// RoCEv2 bytes, ICRC included, and decoded by the receiver whenever they
// are observed (verbs.PacketObserver) or corrupted by a fault
// (verbs.FaultInjector: drop, duplicate, reorder, delay, corrupt, cut). Each
// device's link has a latency, a bandwidth and a netdev MTU (Config.Link,
// Fabric.SetLink); two QPs on one device use rxe's loopback, which has no
// MTU. verbs.Inspector shows queue contents, PSNs, retry counts and timers.
//
// # The UDP link
//
// NewUDP puts device sim0 on a real network: a UDP socket bound to an
// address of its own on port 4791 (a loopback one, 127.0.0.2, 127.0.0.3,
// ..., "" picking the first free one; or any of the host's IPv4 or IPv6
// addresses), GID 1 the RoCEv2 GID of that address. A QP of sim0 connected
// to another host's GID sends it genuine RoCEv2 datagrams, ICRC included —
// computed over the IP and UDP headers the wire carries (over IPv4 the
// link sends identification 0 with DF, and finds a sender's from the ICRC
// it receives: wire.RecoverIPv4) — and receives its packets through the
// same checks as in process, so it interoperates with kernel rxe. Time
// then follows the wall clock: timers fire in real time, and an empty
// poll waits on the socket (briefly) instead of moving virtual time. The
// UDP carrier (udplink.go and its socket files) is the only code here
// with goroutines and sockets: a program's own goroutine reads the socket
// while it polls, and one goroutine of the link's while it does not,
// each under the fabric's lock.
// TestCorePurity holds the rest of the package to all of this. Two pingpong
// processes (--sim-addr) or vsh --sim-addr and a pingpong thus run
// against each other.
//
// docs/simulator.md describes the simulator in full and lists every place
// where it follows rxe rather than the IBTA specification or ConnectX.
package sim
