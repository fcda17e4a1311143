// Package number reads the numbers a learner types into vsh, one way
// everywhere: the shell's arguments (length=, wr_id=, psn=, rkey=, nth=,
// step N, ...), the enum and flag values of package verbs (state=3,
// access=0x7) and a lesson's expect: lines.
//
// The grammar is
//
//	number  = decimal | hex
//	decimal = digit {digit}            42, 0100 (a leading 0 changes nothing: 0100 is 100)
//	hex     = ("0x" | "0X") hexdigit {hexdigit}
//	size    = number ["k" | "K" | "m" | "M"]   4k is 4096, 1m is 1048576
//
// and nothing else: no sign, no 0b binary, no 0o or C-style 0 octal, no _
// between digits. Blanks around the number are ignored. An error says
// "not a number: write decimal or 0x hex", "too large (at most N)" or, for
// a number with a minus sign, "negative: write 0 or more".
//
//	n, err := number.Parse("0x2a", 32)     // 42
//	sz, err := number.ParseSize("4k", 63)  // 4096
//
// The pingpong programs do not use it: they read their flags with
// strtol(…, 0), octal included, as rdma-core's programs do.
package number
