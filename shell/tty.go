package shell

// The interactive front end: c-bata/go-prompt v0.2.6 on a terminal. This is
// the only file that knows go-prompt; everything it does goes through
// Shell.Exec and Shell.Complete.
//
// Three defects of go-prompt v0.2.6 are fixed here, by a wrapping input
// parser (prompt.OptionParser) and by how the prompt is run:
//
//  1. It leaves the terminal raw when it exits: its SetRaw edits the saved
//     termios in place, so its Restore restores raw mode. ttyParser saves
//     the terminal with golang.org/x/term before go-prompt touches it and
//     restores that state in every TearDown.
//  2. It takes one read as one key, so text pasted with its newlines
//     ("alloc_pd ctx0⏎quit⏎" in one chunk) is neither run nor shown.
//     ttyParser.Read hands out one line, then one Enter, at a time.
//  3. On SIGTERM, SIGQUIT or SIGINT it tears down and calls os.Exit itself.
//     go-prompt calls TearDown before that os.Exit; once a signal has come,
//     ttyParser.TearDown restores the terminal and never returns, and RunTTY
//     (which runs go-prompt on its own goroutine) returns to main, which
//     cleans up and exits with the signal's status.
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

// ttyParser wraps go-prompt's input parser.
type ttyParser struct {
	inner   prompt.ConsoleParser
	fd      int
	saved   *term.State
	pending [][]byte

	stopping atomic.Bool   // a terminating signal came
	poke     atomic.Bool   // hand out one harmless key so go-prompt looks at its exit checker
	parked   chan struct{} // closed when TearDown parks for good
	parkOnce sync.Once
}

var _ prompt.ConsoleParser = (*ttyParser)(nil)

// Setup puts the terminal in raw mode, through go-prompt's parser.
func (p *ttyParser) Setup() error { return p.inner.Setup() }

// TearDown restores the terminal as it was before vsh started. After a
// terminating signal it then blocks for good, so that go-prompt never
// reaches its os.Exit; RunTTY has returned by then.
func (p *ttyParser) TearDown() error {
	err := p.inner.TearDown()
	if rerr := term.Restore(p.fd, p.saved); rerr != nil && err == nil {
		err = rerr
	}
	if p.stopping.Load() {
		p.parkOnce.Do(func() { close(p.parked) })
		select {}
	}
	return err
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
// break, or a lone Enter.
func (p *ttyParser) Read() ([]byte, error) {
	if p.poke.CompareAndSwap(true, false) {
		return []byte{0x01}, nil // Ctrl-A: moves the cursor, harmless
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
// after quit or Ctrl-D, 128+N after signal N (the terminal restored either
// way). It never calls os.Exit.
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

	p := &ttyParser{inner: prompt.NewStandardInputParser(), fd: fd, saved: saved, parked: make(chan struct{})}
	var inExec atomic.Bool
	var quit atomic.Bool
	var caught atomic.Value // os.Signal

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
				if sig == syscall.SIGINT && inExec.Load() {
					s.Interrupt() // Ctrl-C while a command waits: stop waiting
					continue
				}
				caught.CompareAndSwap(nil, sig)
				p.stopping.Store(true)
				// go-prompt reacts by itself while it reads; if it does not
				// (between commands), make it look at its exit checker.
				go func() {
					time.Sleep(100 * time.Millisecond)
					p.poke.Store(true)
				}()
			}
		}
	}()

	executor := func(line string) {
		inExec.Store(true)
		defer inExec.Store(false)
		o, err := s.Exec(line)
		io.WriteString(out, o)
		switch {
		case errors.Is(err, ErrExit):
			quit.Store(true)
		case err != nil:
			io.WriteString(out, s.FormatError(err))
		}
	}
	completer := func(d prompt.Document) []prompt.Suggest {
		text := d.TextBeforeCursor()
		if text == "" {
			return nil
		}
		var out []prompt.Suggest
		for _, sg := range s.Complete(text) {
			out = append(out, prompt.Suggest{Text: sg.Text, Description: sg.Description})
		}
		return out
	}
	prefixColor := prompt.Cyan
	if s.st.plain {
		prefixColor = prompt.DefaultColor
	}
	io.WriteString(out, s.Banner())
	if intro != "" {
		io.WriteString(out, "\n"+intro)
	}
	pr := prompt.New(executor, completer,
		prompt.OptionParser(p),
		prompt.OptionPrefix(""),
		// go-prompt draws the prompt once more after the executor has run,
		// before it asks its exit checker; after quit that prompt is empty,
		// so that nothing follows the quit line.
		prompt.OptionLivePrefix(func() (string, bool) {
			if quit.Load() {
				return "", true
			}
			return s.Prompt(), true
		}),
		prompt.OptionPrefixTextColor(prefixColor),
		prompt.OptionCompletionWordSeparator(WordSeparators),
		prompt.OptionMaxSuggestion(8),
		prompt.OptionSetExitCheckerOnInput(func(string, bool) bool { return quit.Load() || p.stopping.Load() }),
	)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		pr.Run()
	}()
	select {
	case <-runDone:
	case <-p.parked:
	}
	term.Restore(fd, saved)
	if sig, ok := caught.Load().(os.Signal); ok {
		fmt.Fprintf(out, "\nvsh: %v; the terminal is restored\n", sig)
		return signalStatus(sig), nil
	}
	return 0, nil
}
