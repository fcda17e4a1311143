//go:build !linux

package lab

import (
	"errors"
	"os"
	"time"
)

var errNoTerm = errors.New("terminal handling is implemented for Linux only")

func isTerminal(fd int) bool { return false }

type termState struct{}

func makeRaw(fd int) (*termState, error)                 { return nil, errNoTerm }
func (s *termState) restore() error                      { return nil }
func termSize(fd int) (int, int, error)                  { return 0, 0, errNoTerm }
func notifyWinch(ch chan<- os.Signal)                    {}
func waitReadable(fd int, d time.Duration) (bool, error) { return true, nil }

func signalStop(ch chan os.Signal) {}
