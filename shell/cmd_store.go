package shell

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// store writes numbers into a memory region, as a program fills in a
// struct before it sends it: a request naming an operation and a buffer
// descriptor (addr, rkey, length) for the peer to use. fill writes text or
// one repeated byte; the numbers a descriptor holds differ from one device
// to the next, so store takes them from handles: mr1.addr, mr1.rkey.

func storeCmd() *command {
	return &command{Name: "store", Group: gMemory, Usage: "store MR [offset=N] TYPE=VALUE ...",
		Summary: "Write numbers into a memory region, field after field: a request, a buffer's addr and rkey",
		Help: "Each TYPE=VALUE writes one field right after the one before, from offset= on, as the fields of a packed C struct: " +
			"store mr0 u32=2 u32=7 u64=mr1.addr u32=mr1.rkey u32=4096 writes 24 bytes. TYPE is u8, u16, u32 or u64, " +
			"little-endian (the byte order of x86 and arm64: what a C struct holds there), or be16, be32 or be64, big-endian " +
			"(network order). " +
			"VALUE is a number (42, 0x2a) or a field of a handle, which is how one side hands the other its buffer: " +
			"mr1.addr, mr1.rkey, mr1.lkey, mr1.length, qp1.qp_num, optionally plus a number (mr1.addr+2048). " +
			"The memory is the application's own: writing it is no verb.",
		rawArgs: true, run: cmdStore, complete: completeStore}
}

// storeTypes are the field types store writes.
var storeTypes = []struct {
	name string
	size int
	big  bool
}{
	{"u8", 1, false}, {"u16", 2, false}, {"u32", 4, false}, {"u64", 8, false},
	{"be16", 2, true}, {"be32", 4, true}, {"be64", 8, true},
}

// storeFields are the handle fields a value may name.
var storeFields = []struct {
	k    kind
	name string
	help string
}{
	{kMR, "addr", "the MR's address (ibv_mr.addr)"},
	{kMR, "rkey", "the MR's remote key (ibv_mr.rkey)"},
	{kMR, "lkey", "the MR's local key (ibv_mr.lkey)"},
	{kMR, "length", "the MR's length in bytes"},
	{kQP, "qp_num", "the QP's number"},
}

// storeField is one field to write.
type storeField struct {
	typ   string
	size  int
	big   bool
	value uint64
	from  string // the handle field it came from, or ""
}

const storeUsage = "store mr0 u32=2 u64=mr1.addr u32=mr1.rkey u32=4096"

func cmdStore(c *call) error {
	if len(c.a.pos) == 0 {
		return usagef(storeUsage, "a memory region and the fields to write are missing")
	}
	o, err := c.s.h.lookup(c.a.pos[0].text, kMR)
	if err != nil {
		return err
	}
	var off uint64
	offGiven := false
	var fields []storeField
	for _, t := range c.a.pos[1:] {
		if t.eq < 0 {
			return usagef(storeUsage, "%q is not TYPE=VALUE: give each field a type, u32=%s", t.text, t.text)
		}
		k, v := strings.ToLower(t.text[:t.eq]), t.text[t.eq+1:]
		if k == "offset" {
			if offGiven {
				return usagef("give offset= once: the fields follow each other from there", "offset is given twice")
			}
			if len(fields) > 0 {
				return usagef("store mr0 offset=64 u32=1 ...", "offset= must come before the fields")
			}
			if off, err = parseSize(v); err != nil {
				return usagef("offset= is where the first field goes: offset=64", "bad offset=%s: %v", v, err)
			}
			offGiven = true
			continue
		}
		f, err := c.s.storeField(k, v)
		if err != nil {
			return err
		}
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return usagef(storeUsage, "no field to write: give at least one TYPE=VALUE")
	}
	buf := o.mr.Bytes()
	total := uint64(0)
	for _, f := range fields {
		total += uint64(f.size)
	}
	if off > uint64(len(buf)) || total > uint64(len(buf))-off {
		return usagef(fmt.Sprintf("%s is %d bytes long; start lower, or register a larger MR", o.name, len(buf)),
			"%d bytes from offset %d do not fit in %s (%d bytes)", total, off, o.name, len(buf))
	}
	c.noteWrite(off, total)
	c.line("%s bytes %d..%d, %s:", o.name, off, off+total, byteOrder(fields))
	at := off
	for _, f := range fields {
		dst := buf[at : at+uint64(f.size)]
		putField(dst, f)
		val := fmt.Sprintf("%d", f.value)
		switch {
		case f.value >= 1<<32:
			val = fmt.Sprintf("0x%x", f.value)
		case f.value >= 10:
			val = fmt.Sprintf("%d = 0x%x", f.value, f.value)
		}
		if f.from != "" {
			val += "  " + f.from
		}
		c.line("  %4d  %-4s  %s", at, f.typ, val)
		at += uint64(f.size)
	}
	return nil
}

// byteOrder says how the multi-byte fields were written.
func byteOrder(fields []storeField) string {
	little, big := false, false
	for _, f := range fields {
		if f.size > 1 {
			little, big = little || !f.big, big || f.big
		}
	}
	switch {
	case little && big:
		return "little- and big-endian fields"
	case big:
		return "big-endian (network order)"
	case little:
		return "little-endian"
	}
	return "bytes"
}

func putField(dst []byte, f storeField) {
	var b [8]byte
	if f.big {
		binary.BigEndian.PutUint64(b[:], f.value)
		copy(dst, b[8-f.size:])
		return
	}
	binary.LittleEndian.PutUint64(b[:], f.value)
	copy(dst, b[:f.size])
}

// storeField reads one TYPE=VALUE.
func (s *Shell) storeField(typ, v string) (storeField, error) {
	f := storeField{typ: typ}
	found := false
	for _, t := range storeTypes {
		if t.name == typ {
			f.size, f.big, found = t.size, t.big, true
		}
	}
	if !found {
		var names []string
		for _, t := range storeTypes {
			names = append(names, t.name)
		}
		hint := "the types are " + strings.Join(names, ", ") + " (u: little-endian; be: big-endian, network order)"
		if near := nearest(typ, names); near != "" {
			hint = "did you mean " + near + "? " + hint
		}
		return f, usagef(hint, "unknown field type %q", typ)
	}
	bits := f.size * 8
	if v == "" {
		return f, usagef(storeUsage, "%s= needs a value: a number or a handle's field (mr1.addr)", typ)
	}
	if k, isHandle := kindOfName(strings.SplitN(strings.SplitN(v, ".", 2)[0], "+", 2)[0]); isHandle {
		n, from, err := s.handleField(k, v)
		if err != nil {
			return f, err
		}
		if bits < 64 && n>>bits != 0 {
			return f, usagef(fmt.Sprintf("%s needs a wider field: u64=%s", from, v),
				"%s is 0x%x, which does not fit in %s (%d bits)", from, n, typ, bits)
		}
		f.value, f.from = n, from
		return f, nil
	}
	n, err := parseUint(v, bits)
	if err != nil {
		return f, usagef(fmt.Sprintf("%s= takes a number up to %d bits, or a handle's field: mr1.addr, mr1.rkey", typ, bits),
			"bad %s=%s: %v", typ, v, err)
	}
	f.value = n
	return f, nil
}

// handleField reads HANDLE.FIELD or HANDLE.FIELD+N: mr1.addr+2048.
func (s *Shell) handleField(k kind, v string) (uint64, string, error) {
	expr, plus := v, uint64(0)
	if i := strings.IndexByte(v, '+'); i >= 0 {
		expr = v[:i]
		n, err := parseSize(v[i+1:])
		if err != nil {
			return 0, "", usagef("add a number: mr1.addr+2048", "bad %q: %v", v, err)
		}
		plus = n
	}
	name, field, ok := strings.Cut(expr, ".")
	var names []string
	for _, sf := range storeFields {
		if sf.k == k {
			names = append(names, name+"."+sf.name)
		}
	}
	if len(names) == 0 {
		return 0, "", usagef("store takes the fields of MRs and QPs: mr1.addr, mr1.rkey, qp1.qp_num",
			"%s is a %s: store has no field of it", name, k)
	}
	if !ok {
		return 0, "", usagef("name the field: "+strings.Join(names, ", "),
			"%s alone could be several numbers; which one?", name)
	}
	o, err := s.h.lookup(name, k)
	if err != nil {
		return 0, "", err
	}
	field = strings.ToLower(field)
	var n uint64
	switch {
	case k == kMR && field == "addr":
		n = o.mr.Addr()
	case k == kMR && field == "rkey":
		n = uint64(o.mr.RKey())
	case k == kMR && field == "lkey":
		n = uint64(o.mr.LKey())
	case k == kMR && field == "length":
		n = uint64(o.mr.Length())
	case k == kQP && field == "qp_num":
		n = uint64(o.qp.Num())
	default:
		hint := "its fields are " + strings.Join(names, ", ")
		if near := nearest(name+"."+field, names); near != "" {
			hint = "did you mean " + near + "? " + hint
		}
		return 0, "", usagef(hint, "%s has no field %q", o.name, field)
	}
	from := o.name + "." + field
	if plus > 0 {
		if n+plus < n {
			return 0, "", usagef("add less", "%s+%d overflows 64 bits", from, plus)
		}
		n += plus
		from += fmt.Sprintf("+%d", plus)
	}
	return n, from, nil
}

// completeStore completes the MR, then offset= and the types, then a
// handle's fields after TYPE=.
func completeStore(s *Shell, done []token, word string) []Suggestion {
	if len(done) == 0 {
		var out []Suggestion
		for _, o := range s.h.ofKind(kMR) {
			out = append(out, Suggestion{o.name, s.handleDesc(o)})
		}
		return filter(out, word)
	}
	if i := strings.IndexByte(word, '='); i >= 0 {
		if strings.ToLower(word[:i]) == "offset" {
			return nil
		}
		var out []Suggestion
		for _, sf := range storeFields {
			for _, o := range s.h.ofKind(sf.k) {
				out = append(out, Suggestion{o.name + "." + sf.name, sf.help})
			}
		}
		return filter(out, word[i+1:])
	}
	var out []Suggestion
	if len(done) == 1 {
		out = append(out, Suggestion{"offset=", "where the first field goes (default 0)"})
	}
	for _, t := range storeTypes {
		order := "little-endian"
		if t.big {
			order = "big-endian, network order"
		}
		out = append(out, Suggestion{t.name + "=", fmt.Sprintf("a %d-byte number, %s", t.size, order)})
	}
	return filter(out, word)
}
