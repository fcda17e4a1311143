package lessons

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/internal/safefile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// StateDir is vsh's folder in the user's state directory:
// $XDG_STATE_HOME/vsh, else ~/.local/state/vsh (the XDG Base Directory
// specification's default). The learner's progress in courses and places
// in lessons are kept there.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "vsh"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("where to keep lesson state: %v; set XDG_STATE_HOME to a folder", err)
	}
	return filepath.Join(home, ".local", "state", "vsh"), nil
}

// readStateFile decodes the JSON file at path, of at most max bytes, into
// v; what names it in errors ("lesson progress"). A file that is not there
// leaves v as it is.
func readStateFile(path string, max int64, what string, v any) error {
	f, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %v", what, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s is not a regular file; remove it", what, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return fmt.Errorf("reading %s: %v", what, err)
	}
	if int64(len(data)) > max {
		return fmt.Errorf("%s %s is larger than %d bytes; it is not vsh's: remove it", what, path, max)
	}
	if err := json.Unmarshal(data, v); err != nil {
		why := "it is not JSON"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			why = fmt.Sprintf("its %s is not what vsh writes there", te.Field)
		}
		return fmt.Errorf("%s %s is not vsh's: %s; remove it to start afresh", what, path, why)
	}
	return nil
}

// writeStateFile writes v as JSON to path atomically: a temporary file in
// the same folder, renamed over it.
func writeStateFile(path, what string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving %s: %v; set XDG_STATE_HOME to a folder vsh can write", what, err)
	}
	if err := safefile.WriteAtomic(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving %s to %s: %v", what, path, err)
	}
	return nil
}
