// +build !windows

package prompt

// vsh's fork: this file is the one change to c-bata/go-prompt v0.2.6
// (see FORK.md). go-prompt caught SIGINT, SIGTERM and SIGQUIT here and
// called os.Exit from Run. The program that embeds the prompt owns those
// signals instead: it stops the running command and restores the terminal
// itself. Upstream's handler also deadlocked: Run blocked sending on stop
// while this goroutine blocked sending on exitCh (a SIGTERM that came as Run
// was leaving). Here only SIGWINCH is handled, every send also watches
// stop, and the channel is unregistered when the handler stops.

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/c-bata/go-prompt/internal/debug"
)

func (p *Prompt) handleSignals(exitCh chan int, winSizeCh chan *WinSize, stop chan struct{}) {
	in := p.in
	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, syscall.SIGWINCH)
	defer signal.Stop(sigCh)

	for {
		select {
		case <-stop:
			debug.Log("stop handleSignals")
			return
		case <-sigCh:
			debug.Log("Catch SIGWINCH")
			select {
			case winSizeCh <- in.GetWinSize():
			case <-stop:
				return
			}
		}
	}
}
