package proctest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// pairProc is a process of a pair, with its output.
type pairProc struct {
	cmd *exec.Cmd
	out bytes.Buffer
	err chan error
}

func startPairProc(ctx context.Context, argv []string) (*pairProc, error) {
	p := &pairProc{err: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.err <- p.cmd.Wait() }()
	return p, nil
}

// RunPair runs a ping-pong pair: server (argv), then, once the server
// listens on TCP port in its network namespace, client. It returns both
// outputs, and an error when either exits with one, the server does not
// listen within 20 s, or the pair takes longer than limit; a side that
// fails stops the other 2 s later.
func RunPair(server, client []string, port int, limit time.Duration) (sout, cout string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	srv, err := startPairProc(ctx, server)
	if err != nil {
		return "", "", err
	}
	for deadline := time.Now().Add(20 * time.Second); !Listening(srv.cmd.Process.Pid, port); {
		select {
		case err := <-srv.err:
			return srv.out.String(), "", fmt.Errorf("the server exited before it listened: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			<-srv.err
			return srv.out.String(), "", fmt.Errorf("the server did not listen on TCP %d within 20 s", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cli, err := startPairProc(ctx, client)
	if err != nil {
		cancel()
		<-srv.err
		return srv.out.String(), "", err
	}
	var serr, cerr error
	select {
	case serr = <-srv.err:
		if serr != nil {
			time.AfterFunc(2*time.Second, cancel)
		}
		cerr = <-cli.err
	case cerr = <-cli.err:
		if cerr != nil {
			time.AfterFunc(2*time.Second, cancel)
		}
		serr = <-srv.err
	}
	if ctx.Err() != nil && serr == nil && cerr == nil {
		serr = ctx.Err()
	}
	if serr != nil || cerr != nil {
		err = fmt.Errorf("server: %v, client: %v", serr, cerr)
	}
	return srv.out.String(), cli.out.String(), err
}

// LastLine returns the last non-empty line of s.
func LastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
