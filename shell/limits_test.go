package shell

import (
	"bytes"
	"github.com/vsh-rdma/vsh/shell/render"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zeros is an endless input, as /dev/zero: it counts what was read.
type zeros struct{ read int }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.read += len(p)
	return len(p), nil
}

// TestLimits: input past each limit fails with an error that names the
// limit, without being read or kept whole.
func TestLimits(t *testing.T) {
	t.Run("a script line longer than MaxLine", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		z := &zeros{}
		var out strings.Builder
		err := sh.RunScript(z, &out, "zeros", false)
		require.ErrorContains(t, err, "(MaxLine)")
		require.Contains(t, out.String(), "zeros:1: the line is longer than 65536 bytes")
		require.Less(t, z.read, 2*MaxLine, "the script runner read on past the limit")
	})
	t.Run("keep-going skips the long line", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		in := strings.Repeat("x", MaxLine+10) + "\nopen_device A\n"
		var out strings.Builder
		err := sh.RunScript(strings.NewReader(in), &out, "s.vsh", true)
		require.ErrorContains(t, err, "1 command failed; the first at line 1")
		require.Contains(t, out.String(), "ibv_open_device(A = sim0) → ctx0")
	})
	t.Run("continued lines past MaxLine", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		in := strings.Repeat(strings.Repeat("y", 1000)+" \\\n", 100) + "devices\n"
		var out strings.Builder
		require.ErrorContains(t, sh.RunScript(strings.NewReader(in), &out, "s.vsh", false), "(MaxLine)")
	})
	t.Run("a command line longer than MaxLine", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		_, err := sh.Exec("explain " + strings.Repeat("w", MaxLine))
		require.ErrorContains(t, err, "the line is 65544 bytes long; a command line holds at most 65536 bytes (MaxLine)")
		require.Less(t, len(sh.Cells()[0].Line), 100, "the log keeps the whole line")
	})
	t.Run("a script file larger than MaxScriptFile", func(t *testing.T) {
		if _, err := os.Stat("/dev/zero"); err != nil {
			t.Skip("no /dev/zero")
		}
		sh := newTestShell(t, 2, 1, true, osFiles{})
		_, err := sh.Exec("source /dev/zero")
		require.ErrorContains(t, err, "/dev/zero is larger than 16777216 bytes (MaxScriptFile)")
		_, err = sh.Exec("lesson /dev/zero")
		require.ErrorContains(t, err, "(MaxScriptFile)")
	})
	t.Run("a word too long to suggest for", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		_, err := sh.Exec("alloc_pdx ctx0")
		require.ErrorContains(t, err, "did you mean alloc_pd?")
		_, err = sh.Exec(strings.Repeat("alloc_pd", 1000) + " ctx0")
		require.ErrorContains(t, err, "unknown command")
		require.NotContains(t, err.Error(), "did you mean")
		_, err = sh.Exec("explain " + strings.Repeat("rkey", 10000))
		require.ErrorContains(t, err, "nothing to explain")
	})
	t.Run("mem past MaxMemDump", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		for _, c := range []string{"open_device A", "alloc_pd ctx0", "reg_mr pd0 length=1m"} {
			_, err := sh.Exec(c)
			require.NoError(t, err)
		}
		_, err := sh.Exec("mem mr0 0 1m")
		require.ErrorContains(t, err, "mem shows at most 65536 bytes at a time (MaxMemDump)")
	})
	t.Run("a cell's output past MaxCellOutput", func(t *testing.T) {
		o := &output{}
		line := strings.Repeat("z", 1<<10)
		for range 2 * MaxCellOutput >> 10 {
			o.add(line)
		}
		text := o.render(render.New(true), 1, 0)
		require.Less(t, len(text), MaxCellOutput+MaxCellOutput/50)
		require.Contains(t, text, "(the rest of this cell's output is cut: a cell shows at most 16 MiB, MaxCellOutput)")
	})
	t.Run("the log past MaxLogOutput", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		sh.logOut = MaxLogOutput - 10
		out, err := sh.Exec("help")
		require.NoError(t, err)
		require.Equal(t, outputNotKept, sh.Cells()[0].Out)
		require.Greater(t, len(out), 100, "the output is shown all the same")
	})
	t.Run("a session past MaxCells", func(t *testing.T) {
		sh := newTestShell(t, 2, 1, true, nil)
		sh.cell = MaxCells
		_, err := sh.Exec("devices")
		require.ErrorContains(t, err, "the session has run 131072 cells, the most one session keeps (MaxCells)")
	})
}

// TestEchoEscapesControls: a script line is echoed with its control
// characters escaped, so that it cannot clear the screen or set the title.
func TestEchoEscapesControls(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	var out bytes.Buffer
	sh.RunScript(strings.NewReader("explain \x1b[2J\x1b]0;pwned\x07 \xff\n"), &out, "s.vsh", true)
	require.NotContains(t, out.String(), "\x1b", "an escape character reached the terminal")
	require.NotContains(t, out.String(), "\x07")
	require.Contains(t, out.String(), `vsh> explain \x1b[2J\x1b]0;pwned\a \xff`)
	var _ io.Writer = &out
}
