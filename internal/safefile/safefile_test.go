package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file, fifo := filepath.Join(dir, "a.md"), filepath.Join(dir, "pipe.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if f, err := Open(file); err != nil {
		t.Errorf("a file: %v", err)
	} else {
		f.Close()
	}
	done := make(chan error, 1)
	go func() { _, err := Open(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a named pipe or a socket") {
			t.Errorf("a named pipe: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a named pipe hangs")
	}
	if _, err := Open(filepath.Join(dir, "none")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}
