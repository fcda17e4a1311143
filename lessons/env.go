package lessons

import (
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Env is the session a lesson runs in, seen through the few methods a
// lesson needs: run a command, read back what the commands returned, and
// reach the verbs objects behind the handles. The shell implements it
// (shell.Shell.LessonEnv); lessons never read the printed output.
type Env interface {
	// Exec runs one command line as a numbered cell, exactly as if the
	// learner had typed it, and returns its output and its failure.
	Exec(line string) (string, error)
	// FormatError renders a failure Exec returned, as the session shows it.
	FormatError(err error) string
	// Prompt is the prompt of the next cell: "[7] vsh> ".
	Prompt() string
	// Records returns what the commands of the session returned, from the
	// from-th on (0 for all), oldest first.
	Records(from int) []Record
	// RecordCount is how many commands the session has run.
	RecordCount() int
	// Object returns the verbs object a handle names (a verbs.Context, PD,
	// MR, CompChannel, CQ, SRQ, QP or AH).
	Object(handle string) (any, bool)
	// Handles lists the live handles, in the order they were created.
	Handles() []string
	// Provider is the backend the session runs on.
	Provider() verbs.Provider
	// Plain reports whether output must be plain text (no ANSI escapes):
	// not a terminal, NO_COLOR, --plain, or a golden test.
	Plain() bool

	// Info returns what the session keeps about an object beyond what its
	// verbs show.
	Info(handle string) (ObjectInfo, bool)
	// Unpolled returns the completions a CQ holds that no poll has taken
	// yet, oldest first, without taking them from the learner: the next
	// poll_cq still returns them. Where completions arrive in real time it
	// waits up to wait for at least want of them. It reports false where
	// the backend cannot show them.
	Unpolled(cq string, want int, wait time.Duration) ([]verbs.WC, bool)
	// Settings lists what the session has set beyond its objects — the
	// fabric's delivery mode, tracing, fault rules, link MTUs, the IP
	// groups a host joined, the clock pp_stats started — one "key=value"
	// each, in a fixed order, with devices named by their place (dev0).
	Settings() []string
	// Explain is the session's explanation of a completion status, errno,
	// state or opcode ("IBV_WC_LOC_PROT_ERR"), in a sentence or two; ""
	// when it has none.
	Explain(topic string) string
	// Shadow opens a fresh session on the simulator with as many devices
	// as this one, the same seed and plain output, in which the judge
	// replays a lesson's own cells; close ends it.
	Shadow() (shadow Env, close func() error, err error)
	// Expand returns the commands a line runs one by one where they
	// differ: repeat N CMD with {i} in it is N commands, {i} counted out;
	// any other line is itself.
	Expand(line string) []string
	// Unroll returns the single commands a repeat or do line runs, in
	// order ({i} counted out, do's parts each), or nil for a line that is
	// one command already, or too many (more than a few hundred).
	Unroll(line string) []string
	// RecordPackets turns on (or off) the recording of the packets each
	// command puts on the wire, in Record.Packets; it reports false where
	// the backend shows no packets.
	RecordPackets(on bool) bool
}

// Record is what one command of the session returned: the structured log
// that expectations about completions and errors read. Polling takes
// completions off a CQ for good, so they can only be checked here.
type Record struct {
	N    int    // the cell's number
	Line string // the command as typed, without "! "
	Cmd  string // the canonical command name ("poll_cq" for poll); "" when unknown
	// Err is the command's failure, nil when it succeeded. It keeps the
	// errno: verbs.ErrnoOf(Err) is EINVAL for a verb refused so.
	Err error
	// ExpectFail is set when the line was marked "! ".
	ExpectFail bool
	// Unexpected is set when a line marked "! " succeeded: Err says it
	// should not have, and every call of it ran.
	Unexpected bool
	// Completions are the work completions the command polled, each with
	// the handle of the CQ it came from.
	Completions []Completion
	// Created names the handles the command made.
	Created []string
	// Calls are the commands the line ran, in order: the command itself,
	// then those a repeat or do ran. A command that failed is the last.
	Calls []Call
	// Posts are the work requests the line's verbs took, in order.
	Posts []Post
	// Packets are the packets the line put on the wire, each once, in the
	// order sent, while the session records them (nil otherwise).
	Packets []Packet
}

// Packet is one packet on the wire, as an expectation counts it.
type Packet struct {
	Opcode string // its wire opcode, with the transport: "RC SEND_ONLY"
	// Retransmitted is set for a request sent again: the same sender,
	// destination QP, PSN and opcode as one sent before.
	Retransmitted bool
	Dropped       bool // lost on the way (a fault, the link)
}

// Completion is one polled work completion and the CQ it came from.
type Completion struct {
	CQ string // "cq0"
	WC verbs.WC
}

// Call is one command a line ran, with the arguments that name things.
type Call struct {
	Cmd  string // canonical name: "query_port"
	Args []Arg
	// Look is set for a command whose effect no snapshot of the objects
	// shows: it reads or prints something (query_port, mem, pp_dest), or
	// changes what the fabric does (trace, fault).
	Look bool
	// Wrote is the range of bytes a CPU write (fill, store) wrote, in the
	// MR its first handle names; nil for other calls, or one that failed.
	Wrote *ByteRange
}

// ByteRange is a range of bytes in an MR.
type ByteRange struct{ Off, Len uint64 }

// ArgKind says what an argument of a Call names.
type ArgKind int

// Argument kinds.
const (
	ArgHandle ArgKind = iota // qp0
	ArgDevice                // a device by its place in the device list: dev0, dev1
	ArgWord                  // any other word, lower case: rc, on, ibv_wc_success
	ArgNumber                // key=NUMBER, in decimal: max_recv_wr=4
)

// Arg is one argument of a Call. A call is compared by what it names,
// not by how much: numbers are kept only as key=NUMBER (which says what
// was asked for: max_recv_wr=4), sizes and durations not at all.
type Arg struct {
	Key   string // "" for a positional argument or a flag
	Kind  ArgKind
	Value string
}

// Post is one work request a verb took: to a QP's send queue, or (Recv) to
// a QP's or an SRQ's receive queue, whose WR then holds only the wr_id and
// the scatter list.
type Post struct {
	Queue string // qp0, srq0
	Recv  bool
	WR    verbs.SendWR
	// WRIDGiven is set when the command gave the wr_id (wr_id=2), rather
	// than taking the session's next number: then it is part of the work.
	WRIDGiven bool
	// Call is the place in its Record's Calls of the call that took it,
	// -1 when the session did not keep that call.
	Call int
}

// ObjectInfo is what the session keeps about an object beyond its verbs.
type ObjectInfo struct {
	// Device is the place in the backend's device list of the device the
	// object was made on.
	Device int
	// Sends and Recvs count the work requests posted to a QP (Recvs: or
	// to an SRQ) that no polled completion has retired yet.
	Sends, Recvs int
	// Groups are the multicast groups a QP is attached to.
	Groups []verbs.GID
	// File is the file an XRC domain was opened on ("" for a private
	// domain, fd -1).
	File string
}
