package shell

import (
	"fmt"
	"strings"
)

// maxMR is the largest MR the shell registers: its memory is real memory of
// this process, and a lesson needs a few KiB.
const maxMR = 1 << 30

func allocPDCmd() *command {
	return &command{Name: "alloc_pd", Group: gMemory, Usage: "alloc_pd CTX",
		Summary: "Allocate a protection domain (ibv_alloc_pd): pd0",
		Help:    "A PD groups the MRs, QPs, SRQs and AHs that may be used together: a QP can only use MRs of its own PD.",
		Args:    []argSpec{argCtx}, run: cmdAllocPD}
}

func cmdAllocPD(c *call) error {
	ctx, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	pd, err := ctx.ctx.AllocPD()
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kPD, pd: pd, parent: ctx, dev: ctx.dev})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_alloc_pd", Args: c.s.hn(ctx), Result: "→ " + c.s.hn(o)})
	return nil
}

func deallocPDCmd() *command {
	return &command{Name: "dealloc_pd", Group: gMemory, Usage: "dealloc_pd PD",
		Summary: "Free a protection domain (ibv_dealloc_pd)",
		Help:    "Fails with EBUSY while MRs, QPs, SRQs or AHs still use it.",
		Args:    []argSpec{argPD}, run: cmdDeallocPD}
}

func cmdDeallocPD(c *call) error {
	o, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	if err := o.pd.Dealloc(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_dealloc_pd", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func regMRCmd() *command {
	return &command{Name: "reg_mr", Aliases: []string{"reg"}, Group: gMemory, Usage: "reg_mr PD length=N [access=FLAGS]",
		Summary: "Allocate and register memory (memalign + ibv_reg_mr): mr0 with its addr, lkey and rkey",
		Help: "access= takes short forms, libibverbs names or a number: local_write,remote_write, " +
			"IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_READ, 0. Remote write and remote atomic also need local_write. " +
			"The lkey goes into local SGEs; the rkey is what the peer needs for RDMA READ, WRITE and atomics.",
		Args: []argSpec{argPD, reqKey("length", vSize, "the size in bytes: 4096, 0x1000 or 4k", "len"),
			key("access", vAccess, "0", "access flags")},
		run: cmdRegMR}
}

func cmdRegMR(c *call) error {
	pd, err := c.obj(0, kPD)
	if err != nil {
		return err
	}
	length, err := c.size("length")
	if err != nil {
		return err
	}
	if length > maxMR {
		return usagef("a lesson needs a few KiB: length=4096", "length=%d is more than vsh registers in one MR (%d bytes)", length, maxMR)
	}
	acc, err := c.access("access", 0)
	if err != nil {
		return err
	}
	mr, err := pd.pd.AllocMR(int(length), acc)
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kMR, mr: mr, parent: pd, dev: pd.dev})
	c.created(o)
	c.verbs(VerbCall{Name: "ibv_reg_mr", Args: fmt.Sprintf("%s, length=%d, %s", c.s.hn(pd), length, acc), Result: "→ " + c.s.hn(o)})
	c.line("%s", mrLine(o))
	return nil
}

func mrLine(o *object) string {
	return fmt.Sprintf("%s: addr 0x%x length %d lkey 0x%x rkey 0x%x access %s",
		o.name, o.mr.Addr(), o.mr.Length(), o.mr.LKey(), o.mr.RKey(), o.mr.Access().Short())
}

func deregMRCmd() *command {
	return &command{Name: "dereg_mr", Aliases: []string{"dereg"}, Group: gMemory, Usage: "dereg_mr MR",
		Summary: "Deregister a memory region (ibv_dereg_mr)", Args: []argSpec{argMR}, run: cmdDeregMR}
}

func cmdDeregMR(c *call) error {
	o, err := c.obj(0, kMR)
	if err != nil {
		return err
	}
	if err := o.mr.Dereg(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_dereg_mr", Args: c.s.hn(o), Result: "= 0"})
	c.s.forget(o)
	return nil
}

func memCmd() *command {
	return &command{Name: "mem", Group: gMemory, Usage: "mem MR [OFFSET] [LENGTH]",
		Summary: "Hex dump of a memory region's bytes",
		Help:    "The memory is the application's own: reading it is no verb. LENGTH defaults to 64 bytes (at most the rest of the MR).",
		Args: []argSpec{argMR, pos("OFFSET", vSize, false, "where to start, default 0"),
			pos("LENGTH", vSize, false, "how many bytes, default 64")},
		run: cmdMem}
}

func cmdMem(c *call) error {
	o, err := c.obj(0, kMR)
	if err != nil {
		return err
	}
	buf := o.mr.Bytes()
	off, err := c.posNum(1, "OFFSET", 0)
	if err != nil {
		return err
	}
	if off > uint64(len(buf)) {
		return usagef(fmt.Sprintf("%s is %d bytes long", o.name, len(buf)), "offset %d is past the end of %s", off, o.name)
	}
	n, err := c.posNum(2, "LENGTH", min(64, uint64(len(buf))-off))
	if err != nil {
		return err
	}
	if n > uint64(len(buf))-off {
		return usagef(fmt.Sprintf("%s has %d bytes from offset %d", o.name, uint64(len(buf))-off, off),
			"offset %d + length %d is past the end of %s (%d bytes)", off, n, o.name, len(buf))
	}
	if n > MaxMemDump {
		return usagef(fmt.Sprintf("show a part at a time: mem %s %d %d, then mem %s %d %d", o.name, off, MaxMemDump, o.name, off+MaxMemDump, MaxMemDump),
			"mem shows at most %d bytes at a time (MaxMemDump), not %d", MaxMemDump, n)
	}
	c.line("%s at 0x%x, bytes %d..%d of %d:", o.name, o.mr.Addr()+off, off, off+n, len(buf))
	c.out.add(hexdump(buf[off:off+n], off))
	return nil
}

// hexdump prints 16 bytes a line: offset, hex, text.
func hexdump(b []byte, base uint64) string {
	if len(b) == 0 {
		return "(no bytes)"
	}
	var lines []string
	for i := 0; i < len(b); i += 16 {
		end := min(i+16, len(b))
		var hex, text strings.Builder
		for j := i; j < i+16; j++ {
			if j == i+8 {
				hex.WriteByte(' ')
			}
			if j < end {
				fmt.Fprintf(&hex, "%02x ", b[j])
				if b[j] >= 0x20 && b[j] < 0x7f {
					text.WriteByte(b[j])
				} else {
					text.WriteByte('.')
				}
			} else {
				hex.WriteString("   ")
			}
		}
		lines = append(lines, fmt.Sprintf("%08x  %s |%s|", base+uint64(i), hex.String(), text.String()))
	}
	return strings.Join(lines, "\n")
}

func fillCmd() *command {
	return &command{Name: "fill", Group: gMemory, Usage: "fill MR \"TEXT\"|0xNN [offset=N] [length=N]",
		Summary: "Write into a memory region: text, or one byte repeated",
		Help: "fill mr0 \"hello\" writes the text at offset 0; fill mr0 0xab length=64 repeats the byte. " +
			"Quoted text may use \\n, \\t, \\0 and \\xNN. The memory is the application's own: writing it is no verb.",
		Args: []argSpec{argMR, pos("DATA", vText, true, "\"text\" or a byte 0xNN"),
			key("offset", vSize, "0", "where to start"), key("length", vSize, "text length, or the rest of the MR", "where to stop", "len")},
		run: cmdFill}
}

func cmdFill(c *call) error {
	o, err := c.obj(0, kMR)
	if err != nil {
		return err
	}
	buf := o.mr.Bytes()
	off, err := c.size("offset")
	if err != nil {
		return err
	}
	if off > uint64(len(buf)) {
		return usagef(fmt.Sprintf("%s is %d bytes long", o.name, len(buf)), "offset=%d is past the end of %s", off, o.name)
	}
	data := c.a.pos[1]
	var src []byte
	repeat := false
	if !data.quoted && strings.HasPrefix(strings.ToLower(data.text), "0x") {
		v, err := parseUint(data.text, 8)
		if err != nil {
			return usagef("a byte is 0x00 to 0xff; quote text that starts with 0x: \"0x...\"", "bad byte %s: %v", data.text, err)
		}
		src, repeat = []byte{byte(v)}, true
	} else {
		src = []byte(data.text)
	}
	room := uint64(len(buf)) - off
	def := room
	if !repeat {
		def = min(uint64(len(src)), room)
	}
	n, err := c.sizeOr("length", def)
	if err != nil {
		return err
	}
	if n > room {
		return usagef(fmt.Sprintf("%s has %d bytes from offset %d", o.name, room, off),
			"offset %d + length %d is past the end of %s (%d bytes)", off, n, o.name, len(buf))
	}
	if !repeat && uint64(len(src)) > room {
		return usagef(fmt.Sprintf("%s has %d bytes from offset %d", o.name, room, off),
			"%d bytes of text do not fit at offset %d of %s (%d bytes)", len(src), off, o.name, len(buf))
	}
	dst := buf[off : off+n]
	if err := c.s.fillBytes(o.name, dst, src, repeat); err != nil {
		return err
	}
	c.noteWrite(off, n)
	if repeat {
		c.line("%s bytes %d..%d = 0x%02x", o.name, off, off+n, src[0])
	} else {
		c.line("%s bytes %d..%d = %s", o.name, off, off+n, filled(src, n))
	}
	return nil
}

// filled says what fill wrote: the text cut to length n, or the text and
// the zero bytes that pad it to n.
func filled(src []byte, n uint64) string {
	switch {
	case n < uint64(len(src)):
		return fmt.Sprintf("%s (the first %d of the %d bytes of %s)", quote(string(src[:n])), n, len(src), quote(string(src)))
	case n > uint64(len(src)):
		pad := n - uint64(len(src))
		return fmt.Sprintf("%s and %d zero byte%s", quote(string(src)), pad, plural(int(pad)))
	}
	return quote(string(src))
}

// fillChunk is how much fill writes between two looks at its cell's
// context: well under a millisecond of memory bandwidth.
const fillChunk = 1 << 20

// fillBytes writes dst: src's one byte over and over (repeat), or src then
// zero bytes, a chunk at a time, stopping when the cell is.
func (s *Shell) fillBytes(name string, dst, src []byte, repeat bool) error {
	for start := 0; start < len(dst); start += fillChunk {
		if s.interrupted() {
			return s.stopped("fill wrote %d of the %d bytes of %s it was to write", start, len(dst), name)
		}
		part := dst[start:min(start+fillChunk, len(dst))]
		switch {
		case repeat:
			part[0] = src[0]
			for k := 1; k < len(part); k *= 2 {
				copy(part[k:], part[:k])
			}
		case start < len(src):
			clear(part[copy(part, src[start:]):])
		default:
			clear(part)
		}
	}
	return nil
}
