package shell

// The interactive front end: c-bata/go-prompt v0.2.6 on a terminal. This is
// the only file that knows go-prompt; everything it does goes through
// Shell.Exec and Shell.Complete.
//
// Signals are vsh's, not go-prompt's: vsh carries go-prompt with its signal
// handler cut down to SIGWINCH (third_party/go-prompt/FORK.md). Here:
//
//   - Ctrl-C while a command runs interrupts it (Shell.Interrupt) and the
//     prompt comes back; at the prompt go-prompt reads it as a key that
//     clears the line, and a SIGINT sent from elsewhere is ignored, as a
//     shell's prompt ignores it.
//   - SIGTERM, SIGHUP and SIGQUIT end the session: a running command is
//     interrupted first, the terminal is restored (termios and blocking
//     mode), and RunTTY returns 128+N without waiting for go-prompt, whose
//     goroutine is left behind. From then on the parser neither reads nor
//     puts the terminal in raw mode again.
//   - A panic outside a command (a command's own is an error of its cell)
//     restores the terminal before RunTTY returns it as an error.
//
// Two defects of go-prompt v0.2.6 are also fixed here, by a wrapping input
// parser (prompt.OptionParser):
//
//  1. It leaves the terminal raw when it exits: its SetRaw edits the saved
//     termios in place, so its Restore restores raw mode. ttyParser saves
//     the terminal with golang.org/x/term before go-prompt touches it and
//     restores that state in every TearDown.
//  2. It takes one read as one key, so text pasted with its newlines
//     ("alloc_pd ctx0⏎quit⏎" in one chunk) is neither run nor shown.
//     ttyParser.Read hands out one line, then one Enter, at a time.
//
// A command that asks (lesson ID while another lesson runs) reads its
// answer here too (ttySession.ask), with the terminal as go-prompt leaves
// it while a command runs: in its normal line mode.
//
// go-prompt is never used off a terminal (it panics without one); scripts
// and pipes go through RunScript.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	prompt "github.com/c-bata/go-prompt"
	"github.com/vsh-rdma/vsh/shell/render"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// ttyParser wraps go-prompt's input parser. Its mutex orders go-prompt's
// Setup and TearDown with the session's end: once stopping is set, the
// terminal is restored and nothing puts it in raw mode again.
type ttyParser struct {
	inner   prompt.ConsoleParser
	fd      int
	saved   *term.State
	pending [][]byte // keys read and not yet handed out
	lineLen int      // bytes of text handed out since the last Enter (bound)

	mu       sync.Mutex
	stopping bool // the session is ending: a signal, a panic
	// entered is set when Read hands out an Enter and cleared by the
	// Setup that follows the command it runs: in between Read hands out
	// nothing, so that keys typed ahead stay in pending, where a question
	// the command asks finds its answer (takeLine).
	entered bool
}

var _ prompt.ConsoleParser = (*ttyParser)(nil)

// Setup puts the terminal in raw mode, through go-prompt's parser, unless
// the session is ending.
func (p *ttyParser) Setup() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entered = false
	if p.stopping {
		return nil
	}
	return p.inner.Setup()
}

// TearDown restores the terminal as it was before vsh started.
func (p *ttyParser) TearDown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restoreLocked()
}

// restoreLocked undoes go-prompt's Setup (raw mode, non-blocking reads),
// then restores the state saved at the start.
func (p *ttyParser) restoreLocked() error {
	err := p.inner.TearDown()
	if rerr := term.Restore(p.fd, p.saved); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// stop marks the session as ending and restores the terminal.
func (p *ttyParser) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopping = true
	p.restoreLocked()
}

func (p *ttyParser) isStopping() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping
}

// GetWinSize returns the terminal's size, or 80x24 when it cannot be read
// (go-prompt's own panics).
func (p *ttyParser) GetWinSize() *prompt.WinSize {
	w, h, err := term.GetSize(p.fd)
	if err != nil || w <= 0 || h <= 0 {
		return &prompt.WinSize{Row: 24, Col: 80}
	}
	return &prompt.WinSize{Row: uint16(h), Col: uint16(w)}
}

// Read returns one key as go-prompt expects: a chunk of text with no line
// break, or a lone Enter. Once the session is ending it reads nothing.
func (p *ttyParser) Read() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return nil, io.EOF
	}
	if p.entered {
		return []byte{0}, nil // go-prompt's "no key"
	}
	for len(p.pending) == 0 {
		b, err := p.inner.Read()
		if err != nil || len(b) == 0 {
			return b, err
		}
		// A late answer to TerminalTheme's questions is not a key.
		if b = terminalReply.ReplaceAll(b, nil); len(b) == 0 {
			return []byte{0}, nil // go-prompt's "no key"
		}
		if p.lineLen > MaxLine && plainText(b) {
			continue // the rest of a paste past MaxLine: dropped unseen
		}
		p.pending = splitKeys(b)
	}
	k := p.pending[0]
	p.pending = p.pending[1:]
	p.entered = string(k) == "\r"
	return p.bound(k), nil
}

// bound keeps the line being edited at most one byte over MaxLine, which
// the shell then refuses whole: go-prompt redraws the whole line, and
// completes it, at every key, so a pasted megabyte would take minutes.
// It follows the line's length through Enter, Ctrl-C, Ctrl-U and
// backspace; the keys past the bound are dropped.
func (p *ttyParser) bound(k []byte) []byte {
	switch {
	case len(k) == 0:
	case string(k) == "\r" || len(k) == 1 && (k[0] == 0x03 || k[0] == 0x15):
		p.lineLen = 0
	case len(k) == 1 && (k[0] == 0x7f || k[0] == 0x08):
		p.lineLen = max(0, p.lineLen-1)
	case k[0] == 0x1b || k[0] == 0:
		// An escape sequence (an arrow, a function key), or no key.
	case p.lineLen > MaxLine:
		return []byte{0} // go-prompt's "no key"
	default:
		if p.lineLen+len(k) > MaxLine+1 {
			k = k[:MaxLine+1-p.lineLen]
		}
		p.lineLen += len(k)
	}
	return k
}

// plainText reports whether b holds no line break, control character or
// escape sequence: text only.
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// splitKeys cuts one read into the keys go-prompt can take: the text
// between line breaks, and one Enter (\r) for each break (\r, \n or \r\n).
// A read with no line break is one key, so escape sequences stay whole.
func splitKeys(b []byte) [][]byte {
	var keys [][]byte
	start := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '\r' && b[i] != '\n' {
			continue
		}
		if i > start {
			keys = append(keys, append([]byte(nil), b[start:i]...))
		}
		keys = append(keys, []byte{'\r'})
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	if start < len(b) {
		keys = append(keys, append([]byte(nil), b[start:]...))
	}
	return keys
}

// signalStatus is the exit status of a shell ended by a signal.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// RunTTY runs the interactive session on a terminal: in is the terminal's
// input, out its output. It shows the banner, then intro (vsh lesson ID's
// first step; "" for none), then the prompt. It returns the exit status: 0
// after quit or Ctrl-D, 128+N after signal N, 2 with the error after a
// panic outside a command (the terminal restored each way). It never calls
// os.Exit.
func (s *Shell) RunTTY(in, out *os.File, intro string) (int, error) {
	fd := int(in.Fd())
	if !term.IsTerminal(fd) {
		return 1, errors.New("the interactive shell needs a terminal; give a script with -f or on stdin")
	}
	tty, err := os.Open("/dev/tty") // go-prompt opens it and panics when it cannot
	if err != nil {
		return 1, fmt.Errorf("no controlling terminal: %w", err)
	}
	tty.Close()
	saved, err := term.GetState(fd)
	if err != nil {
		return 1, err
	}
	defer term.Restore(fd, saved)

	t := &ttySession{s: s, out: out, ended: make(chan struct{}),
		p: &ttyParser{inner: prompt.NewStandardInputParser(), fd: fd, saved: saved}}
	s.ask = t.ask
	defer func() { s.ask = nil }()
	if len(s.opts.TypedAhead) > 0 {
		t.p.pending = splitKeys(s.opts.TypedAhead) // typed while the theme was asked for
	}
	stopSignals := t.watchSignals()
	defer stopSignals()
	for _, l := range strings.Split(strings.TrimRight(s.Banner(), "\n"), "\n") {
		for _, w := range render.Wrap(render.Line{Text: l, Kind: render.Para}, s.width()) {
			io.WriteString(out, w+"\n")
		}
	}
	if intro != "" {
		io.WriteString(out, "\n"+intro)
	}
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		defer func() {
			if r := recover(); r != nil {
				t.finish(nil, r)
			}
		}()
		t.prompt().Run()
	}()
	select {
	case <-runDone:
	case <-t.ended:
		// go-prompt leaves by itself after a command that was stopped;
		// give it a moment so that its last prompt is drawn before the
		// message below, and leave it behind otherwise.
		select {
		case <-runDone:
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.p.stop()
	t.mu.Lock()
	sig, r := t.caught, t.crash
	t.mu.Unlock()
	switch {
	case r != nil:
		io.WriteString(out, "\n")
		return 2, fmt.Errorf("internal error: %v (this is a bug in vsh; please report it); the terminal is restored", r)
	case sig != nil:
		fmt.Fprintf(out, "\nvsh: %v; the terminal is restored\n", sig)
		return signalStatus(sig), nil
	}
	return 0, nil
}

// ttySession is one RunTTY: go-prompt's executor and completer, the
// signals, and how the session ends.
type ttySession struct {
	s   *Shell
	out *os.File
	p   *ttyParser

	mu        sync.Mutex // orders the executor with the end of the session
	executing bool
	ending    bool
	caught    os.Signal
	crash     any // a panic outside a command
	quit      atomic.Bool
	ended     chan struct{} // closed when RunTTY may return
	endOnce   sync.Once
}

func (t *ttySession) end() { t.endOnce.Do(func() { close(t.ended) }) }

// finish ends the session from any goroutine: the terminal is restored at
// once; RunTTY returns now, or when the running command has stopped.
func (t *ttySession) finish(sig os.Signal, r any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ending {
		return
	}
	t.ending, t.caught, t.crash = true, sig, r
	t.p.stop()
	if t.executing {
		t.s.Interrupt()
		return
	}
	t.end()
}

// watchSignals owns the signals while the session runs: Ctrl-C stops the
// running command (at the prompt nothing runs), the others end the
// session. It returns the function that lets them go.
func (t *ttySession) watchSignals() func() {
	sigCh := make(chan os.Signal, 4)
	signal.Notify(sigCh, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigCh:
				if sig == syscall.SIGINT {
					t.s.Interrupt()
					continue
				}
				t.finish(sig, nil)
			}
		}
	}()
	return func() {
		signal.Stop(sigCh)
		close(done)
	}
}

// execute is go-prompt's executor: one cell.
func (t *ttySession) execute(line string) {
	t.mu.Lock()
	if t.ending {
		t.mu.Unlock()
		return
	}
	t.executing = true
	t.mu.Unlock()
	defer func() {
		r := recover()
		t.mu.Lock()
		t.executing = false
		stopped := t.ending
		t.mu.Unlock()
		if r != nil {
			t.finish(nil, r)
		}
		if stopped {
			t.end()
		}
	}()
	t.s.testPanic("executor")
	before := len(t.s.log)
	o, err := t.s.Exec(line)
	if len(t.s.log) == before || t.s.log[len(t.s.log)-1].cmd != "help" || !t.page(o) {
		io.WriteString(t.out, o)
	}
	switch {
	case errors.Is(err, ErrExit):
		t.quit.Store(true)
	case err != nil:
		io.WriteString(t.out, t.s.FormatError(err))
	}
}

// page shows text through a pager when it is longer than the terminal is
// high: $PAGER, else less -FRX where it is installed. It reports whether a
// pager showed it; if not, the caller prints it.
func (t *ttySession) page(text string) bool {
	_, rows, err := term.GetSize(int(t.out.Fd()))
	if err != nil || strings.Count(text, "\n") < rows-1 {
		return false
	}
	name, args := pagerCommand(os.Getenv("PAGER"), exec.LookPath)
	if name == "" {
		return false
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(text), t.out, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		return errors.As(err, &exit) // it ran, and showed what it could
	}
	return true
}

// pagerCommand is the pager to run: $PAGER (a command and its arguments)
// when set, else less -FRX when look finds less (quit when the text fits a
// screen, keep colours, leave the text on the screen); "" for none.
func pagerCommand(env string, look func(string) (string, error)) (string, []string) {
	if f := strings.Fields(env); len(f) > 0 {
		return f[0], f[1:]
	}
	if path, err := look("less"); err == nil {
		return path, []string{"-FRX"}
	}
	return "", nil
}

// complete is go-prompt's completer.
func (t *ttySession) complete(d prompt.Document) (sugs []prompt.Suggest) {
	defer func() {
		if r := recover(); r != nil {
			t.finish(nil, r)
			sugs = nil
		}
	}()
	text := d.TextBeforeCursor()
	if text == "" {
		return nil
	}
	t.s.testPanic("complete")
	for _, sg := range t.s.Complete(text) {
		sugs = append(sugs, prompt.Suggest{Text: sg.Text, Description: sg.Description})
	}
	return sugs
}

func (t *ttySession) leaving() bool { return t.quit.Load() || t.p.isStopping() }

// prompt configures go-prompt.
func (t *ttySession) prompt() *prompt.Prompt {
	prefixColor := prompt.Cyan
	if t.s.st.Plain() {
		prefixColor = prompt.DefaultColor
	}
	return prompt.New(t.execute, t.complete,
		prompt.OptionParser(t.p),
		prompt.OptionPrefix(""),
		// go-prompt draws the prompt once more after the executor has run,
		// before it asks its exit checker; after quit that prompt is empty,
		// so that nothing follows the quit line.
		prompt.OptionLivePrefix(func() (string, bool) {
			if t.leaving() {
				return "", true
			}
			return t.s.Prompt(), true
		}),
		prompt.OptionPrefixTextColor(prefixColor),
		prompt.OptionCompletionWordSeparator(WordSeparators),
		prompt.OptionMaxSuggestion(8),
		prompt.OptionSetExitCheckerOnInput(func(string, bool) bool { return t.leaving() }),
	)
}

// Progress returns an Options.Progress that shows progress on f: on a
// terminal one line rewritten in place and cleared at the end; otherwise
// each step as a line of its own.
func Progress(f *os.File) func(status string, step bool) {
	tty := term.IsTerminal(int(f.Fd()))
	var mu sync.Mutex
	return func(status string, step bool) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case tty && !step:
			fmt.Fprintf(f, "\r\033[K%s", status)
		case !tty && step:
			fmt.Fprintln(f, status)
		}
	}
}

// maxAnswer bounds an answer to ask; the rest of a longer line is read and
// dropped.
const maxAnswer = 256

// ask is Shell.ask on the terminal: it shows question and reads one line,
// first from what go-prompt's parser read ahead (keys typed before the
// question), then from the terminal, polling so that Ctrl-C (the shell
// interrupted) or the session's end gives up at once. It runs inside a
// command, while go-prompt reads nothing.
func (t *ttySession) ask(question string) (string, bool) {
	io.WriteString(t.out, question)
	if line, ok := t.p.takeLine(); ok {
		io.WriteString(t.out, line+"\n")
		return line, true
	}
	var line []byte
	buf := make([]byte, 512)
	for {
		if t.s.interrupted() || t.p.isStopping() {
			io.WriteString(t.out, "\n")
			return "", false
		}
		fds := []unix.PollFd{{Fd: int32(t.p.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return "", false
		}
		m, err := unix.Read(t.p.fd, buf)
		if m <= 0 || err != nil {
			return "", false // end of input
		}
		if len(line) < maxAnswer {
			line = append(line, buf[:min(m, maxAnswer-len(line))]...)
		}
		if i := bytes.IndexAny(line, "\r\n"); i >= 0 || buf[m-1] == '\n' {
			if i >= 0 {
				line = line[:i]
			}
			return string(line), true
		}
	}
}

// takeLine returns the keys read ahead up to the next Enter, if there is
// one, and drops them from what go-prompt will read.
func (p *ttyParser) takeLine() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []byte
	for i, k := range p.pending {
		if string(k) == "\r" {
			p.pending = p.pending[i+1:]
			return string(b), true
		}
		if len(b) < maxAnswer {
			b = append(b, k...)
		}
	}
	return "", false
}

// themeWait bounds how long TerminalTheme waits for the terminal's answer:
// a terminal that never answers must not hold up the start.
const themeWait = 100 * time.Millisecond

var (
	oscBackground = regexp.MustCompile(`\x1b\]11;rgba?:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})`)
	// terminalReply is an answer to TerminalTheme's questions: the
	// background colour (OSC 11, ended by BEL or ST) or the device
	// attributes (DA1). ttyParser.Read drops one that comes late.
	terminalReply = regexp.MustCompile(`\x1b\]11;[^\x07\x1b]*(\x07|\x1b\\)|\x1b\[\?[0-9;]*c`)
	deviceAttrs   = regexp.MustCompile(`\x1b\[\?[0-9;]*c`)
)

// TerminalTheme tells whether the terminal's background is light: from
// COLORFGBG when it says, else by asking the terminal on in and out for its
// background colour (OSC 11) followed by its device attributes (DA1), which
// every terminal answers, so that one that does not know OSC 11 is not
// waited for; it waits themeWait at most. known is false when neither
// says (not a terminal, no answer in time): then take a dark background.
// ahead is what was typed meanwhile, which is not the terminal's answer:
// give it to the session (Options.TypedAhead), which reads it first.
func TerminalTheme(in, out *os.File) (light, known bool, ahead []byte) {
	if light, known := colorFGBG(os.Getenv("COLORFGBG")); known {
		return light, true, nil
	}
	fd := int(in.Fd())
	if !term.IsTerminal(fd) || !term.IsTerminal(int(out.Fd())) {
		return false, false, nil
	}
	saved, err := term.MakeRaw(fd)
	if err != nil {
		return false, false, nil
	}
	defer term.Restore(fd, saved)
	if _, err := io.WriteString(out, "\x1b]11;?\x1b\\\x1b[c"); err != nil {
		return false, false, nil
	}
	var got []byte
	buf := make([]byte, 256)
	deadline := time.Now().Add(themeWait)
	for len(got) < 1024 && !deviceAttrs.Match(got) {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			break // no answer in time
		}
		n, err = unix.Read(fd, buf)
		if n <= 0 || err != nil {
			break
		}
		got = append(got, buf[:n]...)
	}
	light, known = backgroundReply(got)
	return light, known, terminalReply.ReplaceAll(got, nil)
}

// colorFGBG reads COLORFGBG ("15;0": foreground, then background, as
// xterm's 16 colours, of which 0-6 and 8 are dark).
func colorFGBG(v string) (light, known bool) {
	f := strings.Split(v, ";")
	if len(f) < 2 {
		return false, false
	}
	bg, err := strconv.Atoi(f[len(f)-1])
	if err != nil || bg < 0 || bg > 15 {
		return false, false
	}
	return bg == 7 || bg >= 9, true
}

// backgroundReply reads a terminal's answer to OSC 11
// ("ESC ] 11 ; rgb:RRRR/GGGG/BBBB ST"): light when its luminance is over
// one half.
func backgroundReply(b []byte) (light, known bool) {
	m := oscBackground.FindSubmatch(b)
	if m == nil {
		return false, false
	}
	var rgb [3]float64
	for i := range rgb {
		v, _ := strconv.ParseUint(string(m[i+1]), 16, 16)
		rgb[i] = float64(v) / float64(uint64(1)<<(4*len(m[i+1]))-1)
	}
	return 0.2126*rgb[0]+0.7152*rgb[1]+0.0722*rgb[2] > 0.5, true
}
