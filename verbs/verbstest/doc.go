// Package verbstest is the conformance suite of vsh: one set of named
// scenarios that any verbs backend — the simulator, or libibverbs on Linux
// soft-RoCE — must pass, so that what a learner sees on the simulator is what
// rxe does.
//
// Run it from a test of the backend:
//
//	func TestConformance(t *testing.T) {
//		rep := verbstest.Run(t, func(t *testing.T) verbs.Provider {
//			return sim.New(sim.Config{Devices: 2, Seed: 1})
//		}, verbstest.Options{
//			Has:       verbstest.CapExplain | verbstest.CapTwoDevices,
//			ActiveMTU: verbs.MTU1024,
//			MinRun:    80,
//		})
//		_ = rep // rep.Ran, rep.Failed, rep.NotRun
//	}
//
// Each scenario is a subtest named "area/what" (qp-state/walk-rc,
// mr/remote-write-needs-local-write, post/send-before-rts ...) and cites the
// source its expectation comes from: a kernel function of Linux 6.1 (the
// version the lab guest runs, with rdma-core 44), an rdma-core function, or
// a man page. The expectations are the suite's own: the QP state machine is
// a table transcribed here from the kernel's qp_state_table
// (drivers/infiniband/core/verbs.c), not verbs.CheckTransition, and the
// device limits and rounding rules are rxe's (rxe_param.h, rxe_queue.c). So
// when the simulator, the shared table, or a backend is wrong, the suite says
// so.
//
// Scenarios pair two QPs on one device (rxe loops back packets addressed to
// its own GID), so the suite runs unchanged on a single rxe0.
//
// The suite never passes by skipping. Run counts the scenarios that ran and
// logs "conformance: N scenarios ran, M failed ..."; a scenario that needs a
// capability the backend lacks (Options.Has: two devices, the data path, a
// stepper ...) is reported by name as not run, and Options.MinRun makes too
// few runs a failure. Options.KnownFailures lists scenarios expected to fail
// on a backend (a bug being fixed elsewhere): they are logged, and the suite
// fails when one of them starts to pass, so that the list cannot rot.
//
// On a backend that explains its errors (CapExplain, the simulator), the
// suite also checks that an error names the missing or extra attribute or the
// legal next states; on a real backend only the errno is checked.
//
// New scenarios — the data-path ones in particular — are added with Register
// from an init function, each with a name, a source and the capabilities it
// needs; Env gives them an opened device, helpers that create and clean up
// objects and walk QPs through their states, and checks (ExpectErrno,
// ExpectNamesAttr, PollN, Eventually).
//
// The data-path scenarios (sc_data_*.go, Needs CapDataPath) connect two QPs
// on the one device and check every byte moved and every completion field
// against the suite's own reading of rxe: each legal opcode on RC, UC and UD
// (opcode/...), each illegal one (opcode/...-refused), each error status from
// its cause (status/...), the error state and its flush (flush/...), UD's
// network header, Q_Key and MTU (ud/...), SRQs, completion channels and
// solicited events, CQ overflow, signaling, inline data, SGE lists,
// zero-length messages, segmentation, ordering and fences, rd_atomic credits,
// atomics, UC's silent drops, and — with CapStepper — the retransmit and RNR
// timers in virtual time. Where real rxe and the IBTA or ConnectX differ
// (IBV_WC_GRH on every receive, IBV_WC_WITH_IMM on the sender's completion,
// no IBV_WC_LOC_LEN_ERR, oversized UD "success", send completions that never
// count as solicited), the scenarios follow rxe and say so in their sources.
// A retry-exhaustion scenario needs no fault injection: a peer QP moved to
// RESET drops every packet, as a cut link would, on rxe too. The
// fault-injection scenarios (sc_data_faults.go, CapFaults) are built with
// -tags vsh_faults until the simulator implements verbs.FaultInjector.
package verbstest
