// Package exchange speaks the out-of-band TCP exchange of rdma-core's
// ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong,
// byte for byte, so that a vsh program on one host and an rdma-core program
// on the other can learn each other's LID, QPN, PSN and GID.
//
// Each destination travels as one 52-byte message: "LLLL:QQQQQQ:PPPPPP:GID"
// (hex LID, QPN and PSN, then the GID as 32 hex digits in network order) and
// a terminating NUL. The client connects and writes its message(s); the
// server reads them, connects its QP(s), and writes its own; the client
// reads them and writes "done" (5 bytes with the NUL), which the server
// reads. ibv_srq_pingpong sends MaxQP messages each way, zeroed after the
// QPs in use.
//
//	remote, err := exchange.Client(conn, []exchange.Dest{local}, 1)
//	remote, err := exchange.Server(conn, []exchange.Dest{local}, 1, connect)
package exchange
