// Package pingpong is rdma-core's ping-pong examples (ibv_rc_pingpong,
// ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong, as of rdma-core v44,
// and ibv_xsrq_pingpong, XRC) written against the verbs API: the same flags and defaults, parsed as
// glibc's getopt_long parses them; the same out-of-band exchange (package
// exchange); the same attribute values at each QP transition, the same
// posting order (receives go in while the QP is in INIT), the same
// pending-mask loop, the same buffer contents and the same output lines. So
// a vsh pingpong on one host runs against rdma-core's binary on the other.
//
// Where rdma-core hangs or says little, this one explains: -c checks every
// byte (rdma-core checks one per page and exits 0 anyway) and exits 1 on bad
// data; once connected, every wait is bounded by a timeout whose message
// names the likely mistake (different -s, -m or -n on the two sides, -g on
// one side only, two different programs); a failed completion or verb comes
// with its probable cause.
//
// xsrq (XSRQEndpoint, the exchange's XRCDest) needs a backend with XRC
// (verbs.ExtendedContext); without it, as on kernel rxe, it stops as
// rdma-core's does, "Couldn't Open the XRC Domain 95". Its --verify
// (its -c is --clients) makes every message carry a pattern that names
// it and checks every byte of every message received. One deliberate
// difference: rdma-core's server sends client i's message k through
// XRC_SEND QP (i + k) mod clients, so it may arrive through another
// client's XRC_RECV QP, which works only because rdma-core's clients on
// one host share one XRC domain through /tmp/xrc_domain; simulator
// processes cannot share a domain (each has its own simulated device),
// so vsh's server sends each client's messages through that client's own
// connection. With one client the two are the same.
//
// Three levels of API:
//
//   - Program (and Run) is the whole command, from the command line to the
//     exit status; cmd/pingpong only wires it to os.Args and a backend.
//   - Endpoint is one side: NewEndpoint (everything before the exchange),
//     Local, Connect, Run (the loop), CheckData, Close. A program that
//     exchanges addresses its own way (the shell's "exchange" commands) uses
//     it with package exchange.
//   - RunPair runs both sides in one process between two device contexts,
//     one goroutine, no TCP, and returns each side's lines and figures: the
//     shell's "pingpong rc A B" command. For xsrq it runs one server of
//     one client.
package pingpong
