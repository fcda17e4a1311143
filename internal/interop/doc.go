// Package interop holds the tests that put vsh's simulated RNIC and Linux's
// soft-RoCE on one wire: in the lab guest (internal/lab), kernel rxe1 sits
// on one end of a veth pair and the simulator's UDP link, in the network
// namespace vshpeer, on the other. rdma-core's ibv_*_pingpong on rxe1 runs
// against cmd/pingpong on the simulator, vsh drives one side by hand, and
// the packets each side sends are checked by the other.
//
// The tests run only in the lab (make test-interop); elsewhere they skip.
package interop
