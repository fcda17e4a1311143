// Package cabi converts between libibverbs' structs, as
// <infiniband/verbs.h> lays them out, and the verbs package's: QP, AH,
// capability and SRQ attributes and completions, both ways. The real backend
// (verbs/ibverbs), which hands the structs to libibverbs, and the C
// library (verbs/libibverbs), which takes them from a program, share it.
// Each function takes the struct's address as an unsafe.Pointer (cgo's
// types are per package). It builds where the real backend builds.
package cabi
