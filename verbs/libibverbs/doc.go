// Command libibverbs is the simulator as a shared library with libibverbs'
// binary interface: built with -buildmode=c-shared into
// bin/lib/libibverbs.so.1 (make build, where cgo and libibverbs' headers
// exist), it takes the place of the system's libibverbs.so.1 in an
// unmodified C program, so that rdma-core's examples, perftest and a
// student's own verbs program run on vsh's simulated RNIC in the program's
// own process. `vsh run -- PROGRAM ARGS...` puts it in place.
//
// The C part (shim.c, stubs.c) is compiled against Debian's
// <infiniband/verbs.h>, so every struct the program sees has the header's
// layout. Every symbol the system's libibverbs.so.1 exports is exported at
// the same default version (libibverbs.map). A context is a struct
// verbs_context whose ops reach the Go side, which keeps each object in a
// table by handle and calls the simulator through the verbs API. Destroyed
// objects' structs are kept while their context is open, so that a call
// through a stale pointer still reaches the library and gets an errno.
//
// The devices: sim0, on the simulator's UDP link at $VSH_SIM_ADDR (by
// default the first free loopback address from 127.0.0.2), so that two
// programs in two processes reach each other; sim1, in the same process.
// $VSH_TRACE (a file, or "-" for standard error) prints every verb call,
// QP state change, completion and packet as vsh's shell shows them.
//
// Without cgo and the headers this package is an empty program.
package main

func main() {}
