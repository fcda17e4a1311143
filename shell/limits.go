package shell

import (
	"bufio"
	"fmt"
	"github.com/vsh-rdma/vsh/internal/safefile"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// The limits on what the shell reads, so that no input can make it grow
// without bound. docs/commands.md lists them; each error names its limit.
const (
	// MaxLine is the longest command line, in bytes, from a script, a
	// notebook or the terminal.
	MaxLine = 64 << 10
	// MaxScriptFile is the largest file source and lesson read whole.
	MaxScriptFile = 16 << 20
	// MaxCells is how many cells one session runs; the session log keeps
	// each for history and save.
	MaxCells = 1 << 17
	// MaxLogOutput is how much command output, in bytes, the session log
	// keeps for save; the output of later cells is shown but not kept.
	MaxLogOutput = 64 << 20
	// MaxCellOutput is the most output one cell shows, in bytes; a repeat
	// of a long command is cut there.
	MaxCellOutput = 16 << 20
	// MaxMemDump is the most bytes one mem command shows: 4096 lines.
	MaxMemDump = 64 << 10
	// MaxLogPosts is how many posted work requests the session keeps for
	// the lesson judge; past it, those of the oldest cells go first.
	MaxLogPosts = 1 << 16
	// MaxLogCalls is the same for the commands the cells ran.
	MaxLogCalls = 1 << 16
	// MaxLogVerbs is the same for the libibverbs calls the cells show,
	// and for the work completions they polled.
	MaxLogVerbs = 1 << 16
)

// lineTooLong is the error for a line longer than MaxLine: n bytes long,
// or 0 when it was not read to its end.
func lineTooLong(n int) error {
	long := fmt.Sprintf("longer than %d bytes", MaxLine)
	if n > 0 {
		long = fmt.Sprintf("%d bytes long", n)
	}
	return usagef("split the command, or put long data in a file",
		"the line is %s; a command line holds at most %d bytes (MaxLine)", long, MaxLine)
}

// readLine reads one line of at most MaxLine bytes, without its line break.
// A longer line is not read further: long reports it, more says whether
// its rest is still to come (skipLine drops it). err is io.EOF at the end
// of input (with the last line when it has no line break).
func readLine(br *bufio.Reader) (line string, long, more bool, err error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > MaxLine+1 { // +1: the line break
			return "", true, err == bufio.ErrBufferFull, nil
		}
		b = append(b, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && len(b) == 0 {
			return "", false, false, err
		}
		return strings.TrimRight(string(b), "\r\n"), false, false, err
	}
}

// skipLine reads up to the end of the line readLine found too long.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

// readFileLimit reads a file whole, refusing one larger than limit without
// reading more than that (a device such as /dev/zero, a huge file). what
// names the limit, kind the file.
func readFileLimit(name string, limit int64, what, kind string) ([]byte, error) {
	f, err := safefile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes (%s), the largest %s vsh reads", name, limit, what, kind)
	}
	return data, nil
}

// escapeControls shows the control characters and invalid bytes of s as
// Go escapes (\x1b, \a), as error messages quote them, so that an echoed
// line cannot move the cursor, clear the screen or set the window title.
func escapeControls(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) && r != '\t':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// outputNotKept stands for a cell's output in the log once MaxLogOutput
// bytes are kept.
const outputNotKept = "(output not kept: the session keeps 64 MiB of output, MaxLogOutput)\n"

// keepOutput returns what the log keeps of a cell's output.
func (s *Shell) keepOutput(out string) string {
	if s.logOut+len(out) > MaxLogOutput {
		return outputNotKept
	}
	s.logOut += len(out)
	return out
}

// writeLimits writes the reference's section on Ctrl-C and the limits.
func writeLimits(b *strings.Builder) {
	b.WriteString("## Stopping a command, and limits\n\n")
	b.WriteString("Ctrl-C stops the running command within a few milliseconds and the prompt comes back: waits (`poll_cq wait=`, " +
		"`get_cq_event`, `async_events`, `exchange`), `repeat`, `do`, `source`, `pingpong`, `bench` and `fill` look at it at " +
		"least every 10 ms of work; the command's error says what it had done (`repeat ran 3 of its 10 repetitions`). " +
		"SIGTERM and SIGHUP stop the command the same way, restore the terminal and end vsh with status 128+N. In a script " +
		"(`vsh -f`, `vsh < FILE`) a signal stops the running command and the script. `step`, `run` and `advance` do a " +
		"bounded amount of the simulator's work and are not stopped halfway.\n\n")
	b.WriteString("No input makes vsh grow without bound. Past a limit, the command fails with an error that names it:\n\n")
	b.WriteString("| limit | value | what it bounds |\n|---|---|---|\n")
	for _, l := range []struct {
		name  string
		value int
		what  string
	}{
		{"MaxLine", MaxLine, "bytes in one command line, from the terminal, a script or a notebook; a longer script line is not read further"},
		{"MaxScriptFile", MaxScriptFile, "bytes in a file `source` or `lesson FILE` reads"},
		{"lessons.MaxFileSize", lessons.MaxFileSize, "bytes in a lesson file"},
		{"MaxMemDump", MaxMemDump, "bytes one `mem` shows"},
		{"MaxCellOutput", MaxCellOutput, "bytes of output one cell shows; the rest is cut, and a line says so"},
		{"MaxLogOutput", MaxLogOutput, "bytes of output the session keeps for `save` and `history`; later cells are shown but not kept"},
		{"MaxCells", MaxCells, "cells in one session"},
		{"MaxLogPosts", MaxLogPosts, "work requests the session keeps for the lesson tutor, those of the oldest cells dropped first"},
		{"MaxLogCalls", MaxLogCalls, "commands (with those a `repeat` or `do` ran) the session keeps for the lesson tutor, likewise"},
		{"MaxLogVerbs", MaxLogVerbs, "libibverbs calls, and work completions polled, the session keeps with its cells, likewise"},
		{"trace", maxTraceEvents, "packet events one cell's `trace on` prints; a line counts the rest (`trace pcap` keeps all)"},
		{"verbs.MaxSuggestWord", verbs.MaxSuggestWord, "bytes in a word that \"did you mean\" looks for a near name for"},
		{"repeat", maxRepeat, "repetitions of one `repeat`"},
		{"step", maxSteps, "packets one `step N` moves"},
		{"source nesting", maxSourceDepth, "scripts that source scripts"},
	} {
		fmt.Fprintf(b, "| `%s` | %d | %s |\n", l.name, l.value, l.what)
	}
	b.WriteString("\nObjects are bounded by the device's own limits, as `query_device` reports them (`max_qp`, `max_cq`, `max_mr`, " +
		"`max_pd`, ...): the simulator refuses past them as rxe does. The simulator's UDP link bounds its peers and the " +
		"packets it holds in step mode (docs/simulator.md).\n")
}
