// Package rules holds the control-path rules of an RDMA device: what the
// kernel and libibverbs check when a program creates or modifies an object,
// in the order they check it, as pure functions of the device's attributes
// and the request. It has no cgo, no goroutines and no I/O.
//
// Both backends use the same rules. The simulator (verbs/sim) decides with
// them: the first certain finding is the error its verb returns. The real
// backend (verbs/ibverbs) predicts with them before it calls libibverbs, and
// explains the errno it gets with the finding that matches. A Profile's Mode
// says which of the two it serves; where deciding and predicting differ (a
// fact the real backend cannot know, a case rxe itself does not catch), the
// rule says so and marks the finding Certain or not.
//
// RXE is the profile of Linux 6.1 soft-RoCE with rdma-core 44. A later
// profile (XRC, mlx5) is another type beside it.
//
// The conformance suite (verbs/verbstest) keeps its own expectations: it is
// the oracle of these rules, not their user.
package rules
