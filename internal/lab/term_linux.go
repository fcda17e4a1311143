//go:build linux

package lab

import (
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

func isTerminal(fd int) bool {
	var t syscall.Termios
	return ioctl(fd, syscall.TCGETS, unsafe.Pointer(&t)) == nil
}

// termState is a terminal's settings, to restore.
type termState struct {
	fd  int
	old syscall.Termios
}

// makeRaw puts the terminal in raw mode: no echo, no line editing, no
// signals from keys (Ctrl-C is a byte for the guest), no output processing.
func makeRaw(fd int) (*termState, error) {
	s := &termState{fd: fd}
	if err := ioctl(fd, syscall.TCGETS, unsafe.Pointer(&s.old)); err != nil {
		return nil, err
	}
	t := s.old
	t.Iflag &^= syscall.IGNBRK | syscall.BRKINT | syscall.PARMRK | syscall.ISTRIP |
		syscall.INLCR | syscall.IGNCR | syscall.ICRNL | syscall.IXON
	t.Oflag &^= syscall.OPOST
	t.Lflag &^= syscall.ECHO | syscall.ECHONL | syscall.ICANON | syscall.ISIG | syscall.IEXTEN
	t.Cflag &^= syscall.CSIZE | syscall.PARENB
	t.Cflag |= syscall.CS8
	t.Cc[syscall.VMIN] = 1
	t.Cc[syscall.VTIME] = 0
	if err := ioctl(fd, syscall.TCSETS, unsafe.Pointer(&t)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *termState) restore() error {
	return ioctl(s.fd, syscall.TCSETS, unsafe.Pointer(&s.old))
}

type winsize struct{ Row, Col, X, Y uint16 }

func termSize(fd int) (rows, cols int, err error) {
	var w winsize
	if err := ioctl(fd, syscall.TIOCGWINSZ, unsafe.Pointer(&w)); err != nil {
		return 0, 0, err
	}
	return int(w.Row), int(w.Col), nil
}

// waitReadable waits up to d for fd to be readable, so that a reader can
// stop between waits instead of blocking in read forever.
func waitReadable(fd int, d time.Duration) (bool, error) {
	if fd < 0 || fd >= 1024 {
		return true, nil // beyond select's reach: read blocks
	}
	var set syscall.FdSet
	set.Bits[fd/64] |= 1 << (uint(fd) % 64)
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	n, err := syscall.Select(fd+1, &set, nil, nil, &tv)
	if err == syscall.EINTR {
		return false, nil
	}
	return n > 0, err
}

func notifyWinch(ch chan<- os.Signal) { signal.Notify(ch, syscall.SIGWINCH) }

func signalStop(ch chan os.Signal) { signal.Stop(ch) }
