// Package cprograms runs unmodified C verbs programs on vsh's simulator:
// each program runs under `vsh run`, which puts bin/lib/libibverbs.so.1
// (verbs/libibverbs) in place of the system's libibverbs, so the simulated
// RNIC runs inside the program's own process, and two processes reach each
// other over the simulator's UDP link on their own loopback addresses.
//
// The programs are Debian's: rdma-core's ibv_devices, ibv_devinfo and
// ibv_rc/uc/ud/srq/xsrq_pingpong (ibverbs-utils), perftest's ib_send_lat,
// ib_send_bw, ib_write_lat, ib_write_bw, ib_read_lat and ib_read_bw, and
// testdata/mistakes.c, compiled by the test against Debian's headers, which
// makes the classic verbs mistakes and checks the errno or completion
// status of each, while vsh run --trace records why each failed. The
// ping-pongs also play against vsh's own cmd/pingpong, both ways round.
//
// The package holds only tests, and they skip unless VSH_TEST_C=1, as
// make test-c sets it:
//
//	make test-c    # make build, then VSH_TEST_C=1 go test ./internal/cprograms/
//
// They use bin/vsh, bin/pingpong and bin/lib/libibverbs.so.1 of the
// repository; a missing one, or a missing Debian program, is a loud skip,
// or a failure under VSH_REQUIRE_TOOLS=1 (internal/toolcheck). At the end
// TestMain prints "C programs on the simulator: P of N passed", N being the
// program cases that ran.
package cprograms
