// Package proctest runs whole programs for tests: a program in the
// background whose output the test reads while it runs ([Start]), and vsh
// driven through a pipe line by line, as a learner types ([StartVsh]). The
// tests that run vsh against pingpong over the simulator's UDP link
// (cmd/vsh) and against rdma-core's programs on rxe0 (verbs/ibverbs) share
// it.
package proctest
