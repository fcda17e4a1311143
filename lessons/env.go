package lessons

import (
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
	// Completions are the work completions the command polled, each with
	// the handle of the CQ it came from.
	Completions []Completion
	// Created names the handles the command made.
	Created []string
	// Inner names the commands a repeat or do ran ("post_recv" for
	// repeat 4 post_recv ...), as typed.
	Inner []string
}

// Completion is one polled work completion and the CQ it came from.
type Completion struct {
	CQ string // "cq0"
	WC verbs.WC
}
