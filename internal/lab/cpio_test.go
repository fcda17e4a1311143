package lab

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

type cpioEntry struct {
	name         string
	mode         uint32
	data         string
	rmajor, rmin uint32
}

// readCpio parses a newc archive, checking the format as the kernel does.
func readCpio(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	field := func(i int) uint32 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+6+8*i+8]), 16, 32)
		if err != nil {
			t.Fatalf("entry at %d: field %d: %v", off, i, err)
		}
		return uint32(v)
	}
	for {
		if off%4 != 0 {
			t.Fatalf("entry at offset %d is not 4-byte aligned", off)
		}
		if len(b) < off+110 || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at offset %d", off)
		}
		mode, size, rmaj, rmin, nsize := field(1), field(6), field(9), field(10), field(11)
		name := string(b[off+110 : off+110+int(nsize)-1])
		if b[off+110+int(nsize)-1] != 0 {
			t.Fatalf("name %q not NUL-terminated", name)
		}
		p := (off + 110 + int(nsize) + 3) &^ 3
		data := string(b[p : p+int(size)])
		off = (p + int(size) + 3) &^ 3
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
		out = append(out, cpioEntry{name, mode, data, rmaj, rmin})
	}
}

func TestCpioWriter(t *testing.T) {
	var buf bytes.Buffer
	c := newCpioWriter(&buf)
	steps := []error{
		c.Dir("bin", 0o755),
		c.Dir("/dev/", 0o755),
		c.CharDev("dev/console", 0o600, 5, 1),
		c.File("init", 0o755, []byte("#!/bin/sh\n")),
		c.File("bin/x", 0o644, []byte("12345")), // odd size: padding
		c.File("empty", 0o644, nil),
		c.Symlink("bin/sh", "busybox"),
		c.Close(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := []cpioEntry{
		{"bin", 0o040755, "", 0, 0},
		{"dev", 0o040755, "", 0, 0},
		{"dev/console", 0o020600, "", 5, 1},
		{"init", 0o100755, "#!/bin/sh\n", 0, 0},
		{"bin/x", 0o100644, "12345", 0, 0},
		{"empty", 0o100644, "", 0, 0},
		{"bin/sh", 0o120777, "busybox", 0, 0},
	}
	got := readCpio(t, buf.Bytes())
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("archive holds\n%v\nwant\n%v", got, want)
	}
}

func TestCpioBadNames(t *testing.T) {
	for _, name := range []string{"", "/", ".", "..", "../etc/passwd", "a/../../b"} {
		c := newCpioWriter(&bytes.Buffer{})
		if err := c.File(name, 0o644, nil); err == nil {
			t.Errorf("File(%q) succeeded, want an error", name)
		}
	}
}
