// Package shell is the core of vsh, the verbs shell: a REPL with no
// terminal, in which every libibverbs verb is a command.
//
// A [Shell] holds a backend (a verbs.Provider), the objects the session
// created under short handles (ctx0, pd0, mr0, cq0, qp0, ...) and the
// numbered cells typed so far. Front ends are adapters around two methods:
//
//	sh, _ := shell.New(shell.Options{Open: func() (verbs.Provider, error) { return fabric, nil }})
//	out, err := sh.Exec("alloc_pd ctx0")  // one numbered cell: output, then a *CmdError on failure
//	sugg := sh.Complete("modify_qp qp0 state=r")
//
// [Shell.RunScript] runs scripts and Markdown notebooks (vsh -f), and
// [Shell.RunTTY] is the interactive front end on a terminal (go-prompt, in
// tty.go, the only file that knows about terminals; [Progress] is its way
// of showing a long command's progress). Tests drive Exec directly. Each
// cell runs under a context: [Shell.Interrupt] or ExecContext's context
// stops it.
//
// Each libibverbs call a command makes is recorded as a [VerbCall] in the
// cell: it makes the printed verb line and its [control path] or [data
// path] tag (verbs.VerbPath.Data), and paths counts it.
//
// Each command is declared next to its handler (openDeviceCmd beside
// cmdOpenDevice), and one table (commandTable in commands.go) lists them in
// the order help, completion and the generated reference docs/commands.md
// show them. A command's arguments are read through their specs, so the
// default that help shows is the one the command uses.
//
// After each command the shell shows what changed: QP state diagrams with
// the current state lit, queue and CQ occupancy, packets on the wire when
// tracing, and watched objects. Package render draws them (styles, tables,
// the state ladder; package picture the ladder diagram and the QP state
// diagram, as text and SVG), for every front end alike.
//
// A cell's output is built as lines that know their kind (render.Kind: a
// verb call, prose, a hint, a line meant to be typed back) and tables that
// know which columns may go (render.TableView), so that it can be fitted to
// Options.Width, asked before each cell is shown: on a terminal, its width.
// Without a width nothing is wrapped, and the cell's record (Cell.Out) is
// never wrapped; Cell.TypedBack lists the lines no width may break.
//
// The shell never imports a backend, nor a network package: the ping-pong
// exchange's TCP is in pingpong/exchange. Simulator-only features (stepping
// the fabric, fault injection, packet traces, queue internals) are reached
// through the optional interfaces of package verbs (Stepper, FaultInjector,
// PacketObserver, Inspector), and a backend without them is told so.
package shell

//go:generate go run ./internal/gendocs -o ../docs/commands.md
