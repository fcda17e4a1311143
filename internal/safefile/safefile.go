// Package safefile opens the files vsh reads on a user's word (scripts,
// lessons, learner paths) without hanging: a named pipe or a socket with
// no one writing would block open or read for ever, out of reach of
// Ctrl-C, so they are refused — but for the process's own standard input
// (vsh -f /dev/stdin), which is already open. It also writes files whole
// or not at all (WriteAtomic).
package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// stdinNames are the names of the process's standard input.
var stdinNames = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true}

// Open opens name for reading, refusing a named pipe or a socket (but for
// standard input) with an error that says why and what to do.
func Open(name string) (*os.File, error) {
	if !stdinNames[name] {
		st, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if m := st.Mode(); m&(os.ModeNamedPipe|os.ModeSocket) != 0 {
			return nil, fmt.Errorf("%s is a named pipe or a socket, not a file: vsh would wait on it for ever; "+
				"give a file, or pipe the text to vsh's standard input", name)
		}
	}
	return os.Open(name)
}

// WriteAtomic writes data to path whole or not at all: a temporary file
// in path's folder, given perm, then renamed over path. A reader never
// sees half a file, and a failure leaves path as it was. The error names
// path, not the temporary file.
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // not the temporary file's name
		}
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm) // CreateTemp's is 0600
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
