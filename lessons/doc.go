// Package lessons is vsh's lesson engine: the lesson format, its parser and
// checker, the narrated player and the interactive tutor, and the lessons
// that ship with vsh (embedded from lessons/*.md).
//
// A lesson is data plus checks. It is a Markdown file:
//
//	---
//	id: lifecycle
//	title: The life of a verbs program
//	level: beginner                 (beginner, intermediate, advanced)
//	minutes: 20
//	needs: two-devices, srq         (optional; see Capabilities)
//	summary: One sentence for the catalog.   (optional)
//	mirrors: libibverbs/examples/rc_pingpong.c   (optional)
//	order: 20                       (optional: place in the catalog)
//	---
//
//	Prose in Markdown: why, then how.
//
//	```vsh
//	modify_qp qp0 state=init pkey_index=0 port=1 access=0
//	```
//	expect: qp0.state == INIT
//	hint: A new QP is in RESET; INIT needs the port, the P_Key index and the access flags.
//
// The file is split into steps: each step is the prose up to a ```vsh cell,
// the cell, and the expect: and hint: lines right after its closing fence.
// Prose after the last cell is a last step of its own. A ```vsh cell is for
// the learner to perform and needs at least one expect:, the step's goal; a
// ```vsh auto cell is run by the tutor (boilerplate, a demonstration) and
// needs none. In a cell, a line starting with "! " must fail (a learner types
// it without the mark); such a cell says which error with expect: error == X.
//
// A "## " heading starts a section. The line right under it may be a
// needs: line, the capabilities the section needs beyond the lesson's own:
//
//	## A path MTU bigger than the link
//	needs: two-devices
//
// On a backend that lacks one, the section's steps are skipped, saying why,
// and the lesson goes on after it ([SkippedSections]); nothing after the
// section may depend on it, which [Check] verifies by playing the lesson
// without each such capability too.
//
// # Expectations
//
// One grammar, SUBJECT OP VALUE, OP one of == != < <= > >= contains:
//
//	qp0.state == RTS                    object state, read through the verbs API (ibv_query_qp)
//	qp*.state == RTS                    every QP of the session
//	qp0.dest_qpn == qp1                 a handle stands for its number
//	qp0.access contains remote_write    flags
//	mr1[0:5] == "hello"                 an MR's bytes: "text" (with \n \0 \xNN) or 0x68656c6c6f
//	ctx0.port.active_mtu == 1024        ibv_query_port; ctx0.dev.max_qp (ibv_query_device); ctx0.gid[1] (ibv_query_gid)
//	cq0 completions == [IBV_WC_SUCCESS, IBV_WC_SUCCESS]   statuses polled from cq0 in the step
//	cq1 completions.opcode == [IBV_WC_RECV*16]             VALUE*N repeats
//	completions.qp_num contains [qp3, qp7]                 from any CQ; fields status, opcode, byte_len, wr_id, qp_num, src_qp, imm
//	cq0 completions.count == 2
//	error == EINVAL                     the errno of the step's last failed command (none, any)
//	commands contains query_gid         the commands that succeeded in the step
//	commands contains [req_notify_cq cq1, poll_cq cq1]    in that order, on those objects
//	handles == []                       the live handles (handles.count)
//
// Object state is queried when the expectation is checked. Completions and
// errors come from the session's log of what the step's commands returned
// (Env.Records): polling takes a completion off its CQ for good, so it can
// only be checked there. Nothing is ever read from printed output.
//
// # Modes
//
// [Play] runs every cell and checks every expectation, as a narrated
// demonstration with no terminal (vsh lesson play). [Tutor] runs a lesson
// interactively: it shows a step, lets the learner type any commands, and
// checks the goal after each one (vsh lesson ID; inside vsh, lesson next,
// back, hint, skip, reset, goal, quit). [Check] validates a file and plays it
// on the simulator (vsh lesson check). A lesson names what it needs
// (needs: stepping); on a backend without it, Play and NewTutor return a
// [SkipError] that says why, and [Missing] tells beforehand.
//
// The package reaches the session only through [Env], which the shell
// implements; it never imports a backend.
package lessons
