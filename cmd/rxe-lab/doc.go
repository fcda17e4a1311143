// Command rxe-lab boots Linux soft-RoCE (rdma_rxe) in a throw-away QEMU guest
// that shares the host's filesystem, and runs commands there: rdma-core's
// tools, host-built programs and test binaries, or an interactive shell.
//
//	rxe-lab setup               install and prepare (idempotent)
//	rxe-lab run [--] CMD...     run CMD next to rxe0; exit with its status
//	rxe-lab shell               a terminal session on rxe0
//	rxe-lab status              what is cached and how a guest would boot
//
// The logic lives in package internal/lab; see docs/lab.md.
package main
