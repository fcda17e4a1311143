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
// go-prompt is never used off a terminal (it panics without one); scripts
// and pipes go through RunScript.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	prompt "github.com/c-bata/go-prompt"
	"golang.org/x/term"
)

// ttyParser wraps go-prompt's input parser. Its mutex orders go-prompt's
// Setup and TearDown with the session's end: once stopping is set, the
// terminal is restored and nothing puts it in raw mode again.
type ttyParser struct {
	inner   prompt.ConsoleParser
	fd      int
	saved   *term.State
	pending [][]byte

	mu       sync.Mutex
	stopping bool // the session is ending: a signal, a panic
}

var _ prompt.ConsoleParser = (*ttyParser)(nil)

// Setup puts the terminal in raw mode, through go-prompt's parser, unless
// the session is ending.
func (p *ttyParser) Setup() error {
	p.mu.Lock()
	defer p.mu.Unlock()
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
	if p.isStopping() {
		return nil, io.EOF
	}
	if len(p.pending) == 0 {
		b, err := p.inner.Read()
		if err != nil || len(b) == 0 {
			return b, err
		}
		p.pending = splitKeys(b)
	}
	k := p.pending[0]
	p.pending = p.pending[1:]
	return k, nil
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

	p := &ttyParser{inner: prompt.NewStandardInputParser(), fd: fd, saved: saved}
	var (
		mu        sync.Mutex // orders the executor with the end of the session
		executing bool
		ending    bool
		caught    os.Signal
		crash     any // a panic outside a command
		quit      atomic.Bool
	)
	ended := make(chan struct{}) // closed when RunTTY may return
	var endOnce sync.Once
	end := func() { endOnce.Do(func() { close(ended) }) }
	// finish ends the session from any goroutine: the terminal is restored
	// at once; RunTTY returns now, or when the running command has stopped.
	finish := func(sig os.Signal, r any) {
		mu.Lock()
		defer mu.Unlock()
		if ending {
			return
		}
		ending, caught, crash = true, sig, r
		p.stop()
		if executing {
			s.Interrupt()
			return
		}
		end()
	}

	sigCh := make(chan os.Signal, 4)
	signal.Notify(sigCh, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigCh)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigCh:
				if sig == syscall.SIGINT {
					s.Interrupt() // Ctrl-C stops the running command; at the prompt, nothing runs
					continue
				}
				finish(sig, nil)
			}
		}
	}()

	executor := func(line string) {
		mu.Lock()
		if ending {
			mu.Unlock()
			return
		}
		executing = true
		mu.Unlock()
		defer func() {
			r := recover()
			mu.Lock()
			executing = false
			stopped := ending
			mu.Unlock()
			if r != nil {
				finish(nil, r)
			}
			if stopped {
				end()
			}
		}()
		s.testPanic("executor")
		o, err := s.Exec(line)
		io.WriteString(out, o)
		switch {
		case errors.Is(err, ErrExit):
			quit.Store(true)
		case err != nil:
			io.WriteString(out, s.FormatError(err))
		}
	}
	completer := func(d prompt.Document) (sugs []prompt.Suggest) {
		defer func() {
			if r := recover(); r != nil {
				finish(nil, r)
				sugs = nil
			}
		}()
		text := d.TextBeforeCursor()
		if text == "" {
			return nil
		}
		s.testPanic("complete")
		for _, sg := range s.Complete(text) {
			sugs = append(sugs, prompt.Suggest{Text: sg.Text, Description: sg.Description})
		}
		return sugs
	}
	prefixColor := prompt.Cyan
	if s.st.Plain() {
		prefixColor = prompt.DefaultColor
	}
	io.WriteString(out, s.Banner())
	if intro != "" {
		io.WriteString(out, "\n"+intro)
	}
	leaving := func() bool { return quit.Load() || p.isStopping() }
	pr := prompt.New(executor, completer,
		prompt.OptionParser(p),
		prompt.OptionPrefix(""),
		// go-prompt draws the prompt once more after the executor has run,
		// before it asks its exit checker; after quit that prompt is empty,
		// so that nothing follows the quit line.
		prompt.OptionLivePrefix(func() (string, bool) {
			if leaving() {
				return "", true
			}
			return s.Prompt(), true
		}),
		prompt.OptionPrefixTextColor(prefixColor),
		prompt.OptionCompletionWordSeparator(WordSeparators),
		prompt.OptionMaxSuggestion(8),
		prompt.OptionSetExitCheckerOnInput(func(string, bool) bool { return leaving() }),
	)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		defer func() {
			if r := recover(); r != nil {
				finish(nil, r)
			}
		}()
		pr.Run()
	}()
	select {
	case <-runDone:
	case <-ended:
		// go-prompt leaves by itself after a command that was stopped;
		// give it a moment so that its last prompt is drawn before the
		// message below, and leave it behind otherwise.
		select {
		case <-runDone:
		case <-time.After(100 * time.Millisecond):
		}
	}
	p.stop()
	mu.Lock()
	sig, r := caught, crash
	mu.Unlock()
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
