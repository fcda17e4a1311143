package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-zeromq/zmq4"
	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
)

// MaxCell bounds the code of one cell: a larger one is refused with an
// error reply.
const MaxCell = 1 << 20

// Session says which session to open: the simulator's seed and the
// backend's name; zero values are the front end's defaults.
type Session struct {
	Seed    int64
	HasSeed bool // Seed was given (%seed); else the front end's default
	Backend string
}

// Config configures a Kernel.
type Config struct {
	// Conn is where to listen and the signing key.
	Conn *ConnectionInfo
	// Open starts a fresh session: at start, and for %seed and %backend.
	Open func(Session) (*shell.Shell, error)
	// Version is vsh's version, for kernel_info.
	Version string
	// Log gets a line for each message dropped and each failure; nil
	// discards them.
	Log io.Writer
}

// A Kernel is one Jupyter kernel: its sockets and its vsh session.
type Kernel struct {
	cfg     Config
	sig     signer
	session string
	log     *log.Logger

	ctx                               context.Context
	cancel                            context.CancelFunc
	shellS, control, stdin, iopub, hb zmq4.Socket

	pubMu sync.Mutex // iopub is written from the shell and control loops

	// The session, used by the shell loop alone (and Interrupt, which
	// the shell allows from any goroutine).
	shMu    sync.Mutex // guards sh for Interrupt
	sh      *shell.Shell
	current Session
	count   int // execution_count
	history []string
	// abortTo: execute_requests the shell socket received up to this
	// arrival number are answered "aborted" (a cell failed with
	// stop_on_error when the shell had received that many messages).
	abortTo uint64
	// abortAt and abortSession: when that cell failed (its reply's time)
	// and the session that sent it; see aborted.
	abortAt      time.Time
	abortSession string
	// shellRecvd counts the messages the shell socket has received.
	shellRecvd atomic.Uint64
}

// New opens the first session and binds the five sockets.
func New(cfg Config) (*Kernel, error) {
	if cfg.Conn == nil || cfg.Open == nil {
		return nil, errors.New("kernel: a Config needs Conn and Open")
	}
	lw := cfg.Log
	if lw == nil {
		lw = io.Discard
	}
	k := &Kernel{cfg: cfg, sig: signer{key: []byte(cfg.Conn.Key)}, session: newID(), log: log.New(lw, "vsh kernel: ", log.LstdFlags)}
	sh, err := cfg.Open(Session{})
	if err != nil {
		return nil, err
	}
	k.sh = sh
	k.ctx, k.cancel = context.WithCancel(context.Background())
	zl := zmq4.WithLogger(k.log) // a peer that fails its handshake is a log line
	k.shellS = zmq4.NewRouter(k.ctx, zl)
	k.control = zmq4.NewRouter(k.ctx, zl)
	k.stdin = zmq4.NewRouter(k.ctx, zl)
	k.iopub = zmq4.NewPub(k.ctx, zl)
	k.hb = zmq4.NewRep(k.ctx, zl)
	for _, b := range []struct {
		s    zmq4.Socket
		port int
		name string
	}{{k.shellS, cfg.Conn.ShellPort, "shell"}, {k.control, cfg.Conn.ControlPort, "control"}, {k.stdin, cfg.Conn.StdinPort, "stdin"},
		{k.iopub, cfg.Conn.IOPubPort, "iopub"}, {k.hb, cfg.Conn.HBPort, "heartbeat"}} {
		if err := b.s.Listen(cfg.Conn.endpoint(b.port)); err != nil {
			k.Close()
			return nil, fmt.Errorf("kernel: listening on %s for the %s channel: %v", cfg.Conn.endpoint(b.port), b.name, err)
		}
	}
	return k, nil
}

// Close ends the session and closes the sockets.
func (k *Kernel) Close() error {
	k.cancel()
	for _, s := range []zmq4.Socket{k.shellS, k.control, k.stdin, k.iopub, k.hb} {
		if s != nil {
			s.Close()
		}
	}
	k.shMu.Lock()
	defer k.shMu.Unlock()
	if k.sh != nil {
		err := k.sh.Close()
		k.sh = nil
		return err
	}
	return nil
}

// Interrupt stops the running cell, as Ctrl-C does at the terminal.
func (k *Kernel) Interrupt() {
	k.shMu.Lock()
	defer k.shMu.Unlock()
	if k.sh != nil {
		k.sh.Interrupt()
	}
}

// Run serves the channels until a shutdown_request or ctx ends, then
// closes the kernel.
func (k *Kernel) Run(ctx context.Context) error {
	defer k.Close()
	go func() {
		select {
		case <-ctx.Done():
			k.cancel()
		case <-k.ctx.Done():
		}
	}()
	k.publish(nil, "status", map[string]any{"execution_state": "starting"})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); k.heartbeat() }()
	go func() { defer wg.Done(); k.serve(k.control, k.handleControl) }()
	go func() { defer wg.Done(); k.drain(k.stdin) }()
	k.serve(k.shellS, k.handleShell)
	k.cancel()
	wg.Wait()
	return nil
}

// heartbeat echoes every ping.
func (k *Kernel) heartbeat() {
	for {
		m, err := k.hb.Recv()
		if err != nil {
			if k.ctx.Err() != nil {
				return
			}
			k.log.Printf("heartbeat: %v", err) // one peer's bad message: serve the others
			continue
		}
		if err := k.hb.Send(m); err != nil && k.ctx.Err() == nil {
			k.log.Printf("heartbeat: %v", err)
		}
	}
}

// drain reads and drops what comes on a channel the kernel never asks
// on (stdin: a cell never reads input).
func (k *Kernel) drain(s zmq4.Socket) {
	for {
		if _, err := s.Recv(); err != nil && k.ctx.Err() != nil {
			return
		}
	}
}

// serve reads messages from s and hands each to handle, in order, until
// the kernel ends. A message that does not decode is dropped with a log
// line. When a cell fails with stop_on_error, the execute_requests of the
// same burst are answered "aborted" without running, as ipykernel does:
// Run All sends every cell at once, and stops at the first error only so.
// A request sent after the failed cell's reply runs (see aborted).
func (k *Kernel) serve(s zmq4.Socket, handle func(zmq4.Socket, *Message)) {
	type arrival struct {
		m  *Message
		n  uint64    // the shell socket's arrival number
		at time.Time // when it was read
	}
	queue := make(chan arrival, maxQueued)
	go func() {
		defer close(queue)
		for {
			raw, err := s.Recv()
			if err != nil {
				if k.ctx.Err() != nil {
					return
				}
				k.log.Printf("receiving: %v", err)
				continue
			}
			var n uint64
			if s == k.shellS {
				n = k.shellRecvd.Add(1)
			}
			at := time.Now()
			m, err := k.sig.Decode(raw.Frames)
			if err != nil {
				k.log.Printf("dropped a message: %v", err)
				continue
			}
			select {
			case queue <- arrival{m, n, at}:
			case <-k.ctx.Done():
				return
			}
		}
	}()
	for a := range queue {
		if s == k.shellS && a.m.Header.MsgType == "execute_request" && k.aborted(a.m, a.n, a.at) {
			k.one(s, a.m, func(s zmq4.Socket, m *Message) {
				k.reply(s, m, "execute_reply", map[string]any{"status": "aborted", "execution_count": k.count})
			})
		} else {
			k.one(s, a.m, handle)
		}
		if h := testHookHandled.Load(); h != nil {
			(*h)()
		}
		if k.ctx.Err() != nil {
			return
		}
	}
}

// abortGrace is how long after a failed cell's reply a request of the
// same session, dated before that reply, is still taken for part of the
// burst the failed cell came in.
const abortGrace = 500 * time.Millisecond

// aborted reports whether an execute_request that arrived as number n at
// time at is one to answer "aborted": it arrived before the failed cell's
// reply went out, or it comes from the same session soon after and its
// header is dated before that reply — a Run All cell that was on its way
// when a cell failed at once. A cell the client made only after the
// failure (a client slower than the kernel) runs: the kernel cannot tell it
// from one sent in answer to the reply. The grace bounds the harm of a
// client whose clock runs behind the kernel's.
func (k *Kernel) aborted(m *Message, n uint64, at time.Time) bool {
	if n <= k.abortTo {
		return true
	}
	if k.abortAt.IsZero() || m.Header.Session != k.abortSession || at.Sub(k.abortAt) > abortGrace {
		return false
	}
	sent, err := time.Parse(time.RFC3339Nano, m.Header.Date)
	return err == nil && sent.Before(k.abortAt)
}

// testHookHandled, when set by a test, runs after each message is handled.
var testHookHandled atomic.Pointer[func()]

// maxQueued bounds the messages read ahead of the one being handled.
const maxQueued = 1024

// one handles one message between a busy and an idle status.
func (k *Kernel) one(s zmq4.Socket, m *Message, handle func(zmq4.Socket, *Message)) {
	k.publish(m, "status", map[string]any{"execution_state": "busy"})
	defer k.publish(m, "status", map[string]any{"execution_state": "idle"})
	defer func() {
		if r := recover(); r != nil {
			k.log.Printf("%s: a panic: %v", m.Header.MsgType, r)
		}
	}()
	handle(s, m)
}

// reply sends the reply to m on socket s.
func (k *Kernel) reply(s zmq4.Socket, m *Message, msgType string, content any) {
	k.send(s, m.Identities, m, msgType, content)
}

// publish sends content on iopub, as a child of parent (nil: none).
func (k *Kernel) publish(parent *Message, msgType string, content any) {
	k.pubMu.Lock()
	defer k.pubMu.Unlock()
	k.send(k.iopub, [][]byte{[]byte("kernel." + k.session + "." + msgType)}, parent, msgType, content)
}

func (k *Kernel) send(s zmq4.Socket, ids [][]byte, parent *Message, msgType string, content any) {
	c, err := json.Marshal(content)
	if err != nil {
		k.log.Printf("%s: %v", msgType, err)
		return
	}
	m := &Message{Identities: ids, Header: Header{MsgID: newID(), Session: k.session, Username: "vsh", Date: now(),
		MsgType: msgType, Version: ProtocolVersion}, Parent: json.RawMessage("{}"), Metadata: json.RawMessage("{}"), Content: c}
	if parent != nil {
		if h, err := json.Marshal(parent.Header); err == nil {
			m.Parent = h
		}
	}
	frames, err := k.sig.Encode(m)
	if err != nil {
		k.log.Printf("%s: %v", msgType, err)
		return
	}
	if err := s.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil && k.ctx.Err() == nil {
		k.log.Printf("sending %s: %v", msgType, err)
	}
}

// handleControl answers the control channel: interrupt, shutdown, and
// what the shell channel answers that needs no session.
func (k *Kernel) handleControl(s zmq4.Socket, m *Message) {
	switch m.Header.MsgType {
	case "interrupt_request":
		k.Interrupt()
		k.reply(s, m, "interrupt_reply", map[string]any{"status": "ok"})
	case "shutdown_request":
		k.shutdown(s, m)
	case "kernel_info_request":
		k.reply(s, m, "kernel_info_reply", k.kernelInfo())
	default:
		k.log.Printf("dropped an unknown message on the control channel: %q", m.Header.MsgType)
	}
}

// handleShell answers the shell channel.
func (k *Kernel) handleShell(s zmq4.Socket, m *Message) {
	switch m.Header.MsgType {
	case "kernel_info_request":
		k.reply(s, m, "kernel_info_reply", k.kernelInfo())
	case "execute_request":
		k.execute(s, m)
	case "complete_request":
		k.reply(s, m, "complete_reply", k.complete(m))
	case "inspect_request":
		k.reply(s, m, "inspect_reply", k.inspect(m))
	case "is_complete_request":
		k.reply(s, m, "is_complete_reply", k.isComplete(m))
	case "history_request":
		k.reply(s, m, "history_reply", k.historyReply(m))
	case "comm_info_request":
		k.reply(s, m, "comm_info_reply", map[string]any{"status": "ok", "comms": map[string]any{}})
	case "shutdown_request":
		k.shutdown(s, m)
	default:
		k.log.Printf("dropped an unknown message on the shell channel: %q", m.Header.MsgType)
	}
}

// shutdown answers a shutdown_request and ends the kernel; for a restart,
// the kernel's manager starts a new process, with a fresh session.
func (k *Kernel) shutdown(s zmq4.Socket, m *Message) {
	var c struct {
		Restart bool `json:"restart"`
	}
	json.Unmarshal(m.Content, &c)
	k.reply(s, m, "shutdown_reply", map[string]any{"status": "ok", "restart": c.Restart})
	k.Interrupt()
	k.cancel()
}

func (k *Kernel) kernelInfo() map[string]any {
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       ProtocolVersion,
		"implementation":         "vsh",
		"implementation_version": k.cfg.Version,
		"language_info": map[string]any{"name": "vsh", "version": k.cfg.Version, "mimetype": "text/x-vsh",
			"file_extension": ".vsh", "pygments_lexer": "bash", "codemirror_mode": "shell"},
		"banner":     "vsh " + k.cfg.Version + ": the verbs shell, in Jupyter. help lists the commands; %lesson NAME takes a lesson.",
		"help_links": []any{map[string]any{"text": "vsh commands", "url": "https://github.com/vsh-rdma/vsh/blob/main/docs/commands.md"}},
		"debugger":   false,
	}
}

// execute runs a code cell: its lines in order, each output published as
// it comes, until the first unexpected failure.
func (k *Kernel) execute(s zmq4.Socket, m *Message) {
	var c struct {
		Code         string `json:"code"`
		Silent       bool   `json:"silent"`
		StoreHistory *bool  `json:"store_history"`
		StopOnError  *bool  `json:"stop_on_error"`
	}
	if err := json.Unmarshal(m.Content, &c); err != nil {
		k.reply(s, m, "execute_reply", k.errorContent("UsageError", "execute_request's content is not what the protocol says: "+err.Error(), ""))
		return
	}
	store := (c.StoreHistory == nil || *c.StoreHistory) && !c.Silent
	if store {
		k.count++
		k.history = append(k.history, c.Code)
		if len(k.history) > 10000 {
			k.history = k.history[1:]
		}
	}
	if !c.Silent {
		k.publish(m, "execute_input", map[string]any{"code": c.Code, "execution_count": k.count})
	}
	// failed marks, before the reply, the requests to abort: those that
	// arrived by then (what arrives after the reply runs). As ipykernel
	// does, a silent cell's failure aborts nothing.
	failed := func() {
		if !c.Silent && (c.StopOnError == nil || *c.StopOnError) {
			k.abortTo = k.shellRecvd.Load()
			k.abortAt, k.abortSession = time.Now(), m.Header.Session
		}
	}
	if len(c.Code) > MaxCell {
		e := k.errorContent("UsageError", fmt.Sprintf("the cell holds %d bytes; a cell holds at most %d KiB", len(c.Code), MaxCell>>10), "split it into cells")
		failed()
		k.publish(m, "error", e)
		k.reply(s, m, "execute_reply", e)
		return
	}
	if !c.Silent {
		k.sh.NotebookCell()
	}
	for _, line := range cellLines(c.Code) {
		if k.ctx.Err() != nil {
			break
		}
		e := k.runLine(m, line, c.Silent)
		if e != nil {
			e["execution_count"] = k.count
			failed()
			if !c.Silent {
				k.publish(m, "error", e)
			}
			k.reply(s, m, "execute_reply", e)
			return
		}
	}
	k.reply(s, m, "execute_reply", map[string]any{"status": "ok", "execution_count": k.count, "user_expressions": map[string]any{}, "payload": []any{}})
}

// cellLines are the commands of a cell, one a line, where a line ending in
// '\' (not '\\') continues on the next, as in a script: a cell runs as the
// script save FILE.vsh writes of it is graded.
func cellLines(code string) []string {
	var out []string
	pending := ""
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimRight(line, "\r")
		if shell.Continued(line) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		out = append(out, pending+line)
		pending = ""
	}
	if pending != "" {
		out = append(out, strings.TrimSuffix(pending, " "))
	}
	return out
}

// runLine runs one line of a cell and publishes its output; it returns
// the error content when the line failed.
func (k *Kernel) runLine(m *Message, line string, silent bool) map[string]any {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "%") {
		return k.magic(m, t, silent)
	}
	d, err := k.sh.ExecDisplay(k.ctx, line)
	if errors.Is(err, shell.ErrExit) {
		return k.errorContent("UsageError", "quit does not end a notebook's session", "Kernel → Shut Down ends it; Kernel → Restart starts a fresh one")
	}
	if !silent {
		k.display(m, d)
	}
	if err != nil {
		name, why, hint := shell.ErrorParts(err)
		return k.errorContent(name, why, hint)
	}
	return nil
}

// display publishes what a line showed: its text and HTML, then each
// picture.
func (k *Kernel) display(m *Message, d shell.Display) {
	if strings.TrimSpace(d.Text) != "" {
		data := map[string]any{"text/plain": strings.TrimRight(d.Text, "\n")}
		if d.HTML != "" {
			data["text/html"] = d.HTML
		}
		k.publish(m, "display_data", map[string]any{"data": data, "metadata": map[string]any{}, "transient": map[string]any{}})
	}
	for _, svg := range d.SVG {
		k.publish(m, "display_data", map[string]any{"data": map[string]any{"image/svg+xml": fluid(svg), "text/plain": "(a picture; the text above draws it too)"},
			"metadata": map[string]any{}, "transient": map[string]any{}})
	}
}

// svgSize is the fixed size an SVG picture of the renderer starts with.
var svgSize = regexp.MustCompile(`^<svg ([^>]*?)width="(\d+)" height="(\d+)"`)

// fluid makes an SVG picture as wide as the output area at most, keeping
// its proportions (its viewBox), rather than overflowing a narrow one.
func fluid(svg string) string {
	return svgSize.ReplaceAllString(svg, `<svg ${1}width="100%" style="max-width: ${2}px; height: auto"`)
}

// text publishes plain text as a line's output.
func (k *Kernel) text(m *Message, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	k.publish(m, "stream", map[string]any{"name": "stdout", "text": strings.TrimRight(text, "\n") + "\n"})
}

// errorContent is an error reply's content: ename, evalue, and a
// traceback of why and the hint.
func (k *Kernel) errorContent(name, why, hint string) map[string]any {
	tb := []string{name + ": " + why}
	if hint != "" {
		tb = append(tb, "hint: "+hint)
	}
	return map[string]any{"status": "error", "ename": name, "evalue": why, "traceback": tb, "execution_count": k.count}
}

// magics are the line magics, for completion and help.
var magics = []struct{ name, usage, doc string }{
	{"%lesson", "%lesson NAME|FILE", "start a lesson in a fresh session; its tutor follows the notebook's cells"},
	{"%check", "%check [--strict] [N]", "whether step N's goal is reached (the current step's without N); --strict makes a \"not yet\" an error"},
	{"%seed", "%seed N", "a fresh session on the simulator with seed N"},
	{"%backend", "%backend NAME", "a fresh session on backend NAME (sim, ibverbs)"},
}

// magic runs a line magic.
func (k *Kernel) magic(m *Message, line string, silent bool) map[string]any {
	f, err := shell.Words(line)
	if err != nil || len(f) == 0 {
		return k.errorContent("UsageError", fmt.Sprint(err), "a magic's words are read as a command's: quote a path with blanks")
	}
	name, args := f[0], f[1:]
	out := func(text string) {
		if !silent {
			k.text(m, text)
		}
	}
	switch name {
	case "%lesson":
		if len(args) != 1 {
			return k.errorContent("UsageError", "%lesson takes one lesson: an ID (vsh lesson list) or a lesson file", "%lesson rc-pingpong")
		}
		head, err := k.sh.NotebookLesson(args[0])
		if err != nil {
			n, why, hint := shell.ErrorParts(err)
			return k.errorContent(n, why, hint)
		}
		out(head)
	case "%check":
		strict := false
		if len(args) > 0 && args[0] == "--strict" {
			strict, args = true, args[1:]
		}
		n := 0
		switch {
		case len(args) == 1:
			v, err := strconv.Atoi(args[0])
			if err != nil || v < 1 {
				return k.errorContent("UsageError", fmt.Sprintf("%%check takes a step number, not %q", args[0]), "%check 3")
			}
			n = v
		case len(args) > 1:
			return k.errorContent("UsageError", "%check takes one step number", "%check 3, or %check --strict 3")
		}
		if n == 0 {
			t := k.sh.Tutor()
			if t == nil {
				return k.errorContent("UsageError", "no lesson is running", "%lesson NAME starts one")
			}
			step, _ := t.Step()
			n = step + 1
		}
		text, met, err := k.sh.NotebookCheck(n)
		if err != nil {
			name, why, hint := shell.ErrorParts(err)
			return k.errorContent(name, why, hint)
		}
		if !met && strict {
			lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
			e := k.errorContent("GoalNotReached", lines[0], "")
			e["traceback"] = append([]string{"GoalNotReached: " + lines[0]}, lines[1:]...)
			return e
		}
		out(text)
	case "%seed", "%backend":
		if len(args) != 1 {
			return k.errorContent("UsageError", name+" takes one value", "%seed 7, or %backend sim")
		}
		next := k.current
		if name == "%seed" {
			v, err := strconv.ParseInt(args[0], 0, 64)
			if err != nil {
				return k.errorContent("UsageError", fmt.Sprintf("%%seed takes a number, not %q", args[0]), "%seed 7")
			}
			next.Seed, next.HasSeed = v, true
		} else {
			next.Backend = args[0]
		}
		sh, err := k.cfg.Open(next)
		if err != nil {
			return k.errorContent("Error", err.Error(), "the session is as it was")
		}
		k.shMu.Lock()
		old := k.sh
		k.sh, k.current = sh, next
		k.shMu.Unlock()
		old.Close()
		out("a fresh session: " + strings.TrimSpace(firstLine(sh.Banner())))
	default:
		var names []string
		for _, mg := range magics {
			names = append(names, mg.name)
		}
		return k.errorContent("UsageError", fmt.Sprintf("no magic %s", name), "the magics are "+strings.Join(names, ", "))
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// cursorLine returns the line of code the cursor (counted in code points,
// as the protocol does) is on, up to the cursor, after the lines it
// continues (cellLines), and the cursor as a byte offset.
func cursorLine(code string, cursor int) (string, int) {
	off := 0
	cursor = clampCursor(code, cursor)
	for i := 0; i < cursor && off < len(code); i++ {
		_, n := utf8.DecodeRuneInString(code[off:])
		off += n
	}
	lines := strings.Split(code[:off], "\n")
	before := lines[len(lines)-1]
	for i := len(lines) - 2; i >= 0; i-- { // the lines it continues
		prev := strings.TrimRight(lines[i], "\r")
		if !shell.Continued(prev) {
			break
		}
		before = strings.TrimSuffix(prev, `\`) + " " + before
	}
	return before, off
}

// clampCursor puts a cursor (in code points) inside code.
func clampCursor(code string, cursor int) int {
	return min(max(cursor, 0), utf8.RuneCountInString(code))
}

// complete answers complete_request with the shell's completions (and
// the magics, and lesson names after %lesson).
func (k *Kernel) complete(m *Message) map[string]any {
	var c struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	json.Unmarshal(m.Content, &c)
	c.CursorPos = clampCursor(c.Code, c.CursorPos)
	line, _ := cursorLine(c.Code, c.CursorPos)
	word := line
	if i := strings.LastIndexAny(line, shell.WordSeparators); i >= 0 {
		word = line[i+1:]
	}
	var matches []string
	t := strings.TrimLeft(line, " \t")
	switch {
	case strings.HasPrefix(t, "%lesson "):
		for _, id := range lessons.IDs() {
			if strings.HasPrefix(id, word) {
				matches = append(matches, id)
			}
		}
	case strings.HasPrefix(t, "%") && !strings.Contains(t, " "):
		for _, mg := range magics {
			if strings.HasPrefix(mg.name, t) {
				matches = append(matches, mg.name)
			}
		}
		word = t
	default:
		for _, s := range k.sh.Complete(line) {
			matches = append(matches, s.Text)
		}
	}
	if matches == nil {
		matches = []string{}
	}
	return map[string]any{"status": "ok", "matches": matches, "cursor_start": c.CursorPos - utf8.RuneCountInString(word),
		"cursor_end": c.CursorPos, "metadata": map[string]any{}}
}

// inspect answers inspect_request with the help of the command (or
// magic) on the cursor's line.
func (k *Kernel) inspect(m *Message) map[string]any {
	var c struct {
		Code      string `json:"code"`
		CursorPos int    `json:"cursor_pos"`
	}
	json.Unmarshal(m.Content, &c)
	line, off := cursorLine(c.Code, c.CursorPos)
	if rest := c.Code[off:]; rest != "" { // the whole line the cursor is on
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		line += rest
	}
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "! "))
	reply := map[string]any{"status": "ok", "found": false, "data": map[string]any{}, "metadata": map[string]any{}}
	if len(f) == 0 {
		return reply
	}
	if strings.HasPrefix(f[0], "%") {
		for _, mg := range magics {
			if mg.name == f[0] {
				reply["found"], reply["data"] = true, map[string]any{"text/plain": mg.usage + "\n\n" + mg.doc}
			}
		}
		return reply
	}
	if h, ok := k.sh.Help(f[0]); ok {
		reply["found"], reply["data"] = true, map[string]any{"text/plain": h}
	}
	return reply
}

// isComplete answers is_complete_request: code whose last line ends in
// '\' is incomplete (it continues on the next); otherwise complete, or
// invalid when a command leaves a quote open.
func (k *Kernel) isComplete(m *Message) map[string]any {
	var c struct {
		Code string `json:"code"`
	}
	json.Unmarshal(m.Content, &c)
	lines := strings.Split(c.Code, "\n") // a last line left empty ends it
	if shell.Continued(strings.TrimRight(lines[len(lines)-1], "\r")) {
		return map[string]any{"status": "incomplete", "indent": ""}
	}
	for _, line := range cellLines(c.Code) {
		if _, err := shell.Words(line); err != nil {
			return map[string]any{"status": "invalid"}
		}
	}
	return map[string]any{"status": "complete"}
}

// historyReply answers history_request from this kernel's cells: the
// last n (tail), all (range), or those matching a glob (search).
func (k *Kernel) historyReply(m *Message) map[string]any {
	var c struct {
		AccessType string `json:"hist_access_type"`
		N          int    `json:"n"`
		Pattern    string `json:"pattern"`
		Unique     bool   `json:"unique"`
	}
	json.Unmarshal(m.Content, &c)
	first := k.count - len(k.history) + 1
	var out []any
	seen := map[string]bool{}
	for i, code := range k.history {
		if c.AccessType == "search" && c.Pattern != "" {
			if ok, _ := path.Match(c.Pattern, code); !ok {
				continue
			}
		}
		if c.Unique && seen[code] {
			continue
		}
		seen[code] = true
		out = append(out, []any{1, first + i, code})
	}
	if (c.AccessType == "tail" || c.AccessType == "search") && c.N > 0 && len(out) > c.N {
		out = out[len(out)-c.N:]
	}
	if out == nil {
		out = []any{}
	}
	return map[string]any{"status": "ok", "history": out}
}
