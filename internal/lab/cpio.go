package lab

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// cpioWriter writes the "newc" cpio format (magic 070701) that the Linux
// kernel unpacks as an initramfs. Directories must be written before the
// entries in them; Close writes the trailer.
type cpioWriter struct {
	w   io.Writer
	ino uint32
	err error
}

func newCpioWriter(w io.Writer) *cpioWriter { return &cpioWriter{w: w, ino: 1} }

const (
	cpioDir  = 0o040000
	cpioFile = 0o100000
	cpioLink = 0o120000
)

// Dir adds a directory with permissions perm.
func (c *cpioWriter) Dir(name string, perm fs.FileMode) error {
	return c.entry(name, cpioDir|uint32(perm.Perm()), nil)
}

// File adds a regular file with permissions perm.
func (c *cpioWriter) File(name string, perm fs.FileMode, data []byte) error {
	return c.entry(name, cpioFile|uint32(perm.Perm()), data)
}

// Symlink adds a symbolic link name -> target.
func (c *cpioWriter) Symlink(name, target string) error {
	return c.entry(name, cpioLink|0o777, []byte(target))
}

// Close writes the trailer. It does not close the underlying writer.
func (c *cpioWriter) Close() error {
	return c.entry("TRAILER!!!", 0, nil)
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) error {
	return c.write(name, mode, data, 0, 0)
}

func (c *cpioWriter) entryDev(name string, mode, major, minor uint32) error {
	return c.write(name, mode, nil, major, minor)
}

func (c *cpioWriter) write(name string, mode uint32, data []byte, rmajor, rminor uint32) error {
	if c.err != nil {
		return c.err
	}
	if name != "TRAILER!!!" {
		clean := path.Clean(strings.TrimPrefix(name, "/"))
		if clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
			c.err = fmt.Errorf("cpio: bad entry name %q", name)
			return c.err
		}
		name = clean
	}
	nlink := 1
	if mode&0o170000 == cpioDir {
		nlink = 2
	}
	ino := c.ino
	c.ino++
	if mode == 0 {
		ino, nlink = 0, 1
	}
	// 13 eight-digit hex fields: ino mode uid gid nlink mtime filesize
	// devmajor devminor rdevmajor rdevminor namesize check.
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	buf := make([]byte, 0, len(hdr)+len(name)+4+len(data)+3)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	buf = pad4(buf)
	buf = append(buf, data...)
	buf = pad4(buf)
	_, c.err = c.w.Write(buf)
	return c.err
}

// pad4 pads b with NULs to a multiple of 4 bytes. Header and name are padded
// together (the header is 110 bytes), and so is the data.
func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// CharDev adds a character device node.
func (c *cpioWriter) CharDev(name string, perm fs.FileMode, major, minor uint32) error {
	return c.entryDev(name, 0o020000|uint32(perm.Perm()), major, minor)
}
