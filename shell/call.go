package shell

import (
	"fmt"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/internal/number"
	"github.com/vsh-rdma/vsh/verbs"
)

// call is one run of a command: its parsed arguments and its output.
type call struct {
	s    *Shell
	cmd  *command
	a    *args
	out  *output
	cell *Cell
	src  string // the line the tokens came from
}

func (c *call) line(format string, a ...any) { c.out.addf(format, a...) }

func (c *call) created(o *object) {
	c.cell.Created = append(c.cell.Created, o.name)
}

func (c *call) has(key string) bool {
	_, ok := c.a.kv[key]
	return ok
}

func (c *call) raw(key string) string { return c.a.kv[key] }

// bad reports a value that does not parse.
func (c *call) bad(key string, err error) error {
	hint := c.cmd.usageHint()
	if sp := c.cmd.findSpec(key, keyArg); sp != nil && sp.help != "" {
		hint = key + "= is " + sp.help
	}
	return usagef(hint, "bad %s=%s: %v", key, c.a.kv[key], err)
}

// obj resolves positional argument i as a handle of kind k.
func (c *call) obj(i int, k kind) (*object, error) {
	if i >= len(c.a.pos) {
		return nil, usagef(c.cmd.usageHint(), "missing the %s", kindInfo[k].noun)
	}
	return c.s.h.lookup(c.a.pos[i].text, k)
}

// keyObj resolves key=HANDLE.
func (c *call) keyObj(key string, k kind) (*object, bool, error) {
	v, ok := c.a.kv[key]
	if !ok {
		return nil, false, nil
	}
	o, err := c.s.h.lookup(v, k)
	if err != nil {
		return nil, true, err
	}
	return o, true, nil
}

// The readers of key=VALUE arguments. A plain reader (num, size, dur, ...)
// gives, when key is absent, the default its spec states: the spec's
// literal read the same way ("" reads as the zero value), so that help and
// behaviour cannot drift. A default the handler computes (the rest of an
// MR, a QP's current value) is read with the Or readers; where the spec
// states a literal all the same, the two must agree. A spec default that
// breaks these rules is a bug in vsh: the reader panics, and the command's
// tests fail. A key the command does not declare (a helper shared by
// several commands) cannot be given, and reads as the default.

// value reads key with parse, the spec's default when absent.
func value[T comparable](c *call, key string, parse func(string) (T, error)) (T, error) {
	if v, ok := c.a.kv[key]; ok {
		return readValue(c, key, v, parse)
	}
	var zero T
	sp := c.cmd.findSpec(key, keyArg)
	if sp == nil || sp.def == "" {
		return zero, nil
	}
	d, err := parse(sp.def)
	if err != nil {
		panic(fmt.Sprintf("shell: %s: the default of %s= is %q, which is no value (%v); read it with an Or reader", c.cmd.Name, key, sp.def, err))
	}
	return d, nil
}

// valueOr reads key with parse, def when absent.
func valueOr[T comparable](c *call, key string, def T, parse func(string) (T, error)) (T, error) {
	if sp := c.cmd.findSpec(key, keyArg); sp != nil && sp.def != "" {
		if d, err := parse(sp.def); err == nil && d != def {
			panic(fmt.Sprintf("shell: %s: the default of %s= is %q in its spec but %v in its handler", c.cmd.Name, key, sp.def, def))
		}
	}
	if v, ok := c.a.kv[key]; ok {
		return readValue(c, key, v, parse)
	}
	return def, nil
}

func readValue[T any](c *call, key, v string, parse func(string) (T, error)) (T, error) {
	x, err := parse(v)
	if err != nil {
		var zero T
		return zero, c.bad(key, err)
	}
	return x, nil
}

func uintOf(bits int) func(string) (uint64, error) {
	return func(s string) (uint64, error) { return parseUint(s, bits) }
}

func sizeOf(bits int) func(string) (uint64, error) {
	return func(s string) (uint64, error) { return number.ParseSize(s, bits) }
}

func narrow[T uint8 | uint32 | int](n uint64, err error) (T, error) { return T(n), err }

// num reads key as an unsigned number of the given width.
func (c *call) num(key string, bits int) (uint64, error) { return value(c, key, uintOf(bits)) }

// numOr is num with the handler's default.
func (c *call) numOr(key string, def uint64, bits int) (uint64, error) {
	return valueOr(c, key, def, uintOf(bits))
}

func (c *call) u8(key string) (uint8, error) { return narrow[uint8](c.num(key, 8)) }

func (c *call) u8Or(key string, def uint8) (uint8, error) {
	return narrow[uint8](c.numOr(key, uint64(def), 8))
}

func (c *call) u32(key string) (uint32, error) { return narrow[uint32](c.num(key, 32)) }

func (c *call) u32Or(key string, def uint32) (uint32, error) {
	return narrow[uint32](c.numOr(key, uint64(def), 32))
}

// count reads a count that sizes an allocation, with a ceiling.
func (c *call) count(key string, most int) (int, error) {
	return c.ceiling(key, most)(c.num(key, 31))
}

// countOr is count with the handler's default.
func (c *call) countOr(key string, def, most int) (int, error) {
	return c.ceiling(key, most)(c.numOr(key, uint64(def), 31))
}

func (c *call) ceiling(key string, most int) func(uint64, error) (int, error) {
	return func(n uint64, err error) (int, error) {
		if err != nil {
			return 0, err
		}
		if n > uint64(most) {
			return 0, usagef(fmt.Sprintf("use at most %d", most), "%s=%d is more than vsh allows here (%d)", key, n, most)
		}
		return int(n), nil
	}
}

// intArg reads a signed-int-sized number, passed to the backend as it is.
func (c *call) intArg(key string) (int, error) { return narrow[int](c.num(key, 31)) }

// intOr is intArg with the handler's default.
func (c *call) intOr(key string, def int) (int, error) {
	return narrow[int](c.numOr(key, uint64(def), 31))
}

// size reads key as a byte count (4096, 0x1000, 4k).
func (c *call) size(key string) (uint64, error) { return value(c, key, sizeOf(63)) }

// sizeOr is size with the handler's default.
func (c *call) sizeOr(key string, def uint64) (uint64, error) { return c.sizeBitsOr(key, def, 63) }

// sizeBitsOr reads a byte count that fits in bits bits (an SGE's length
// is 32), def when absent.
func (c *call) sizeBitsOr(key string, def uint64, bits int) (uint64, error) {
	return valueOr(c, key, def, sizeOf(bits))
}

func (c *call) dur(key string) (time.Duration, error) { return value(c, key, parseDuration) }

func (c *call) durOr(key string, def time.Duration) (time.Duration, error) {
	return valueOr(c, key, def, parseDuration)
}

func (c *call) boolArg(key string) (bool, error) { return value(c, key, parseBool) }

func (c *call) boolOr(key string, def bool) (bool, error) { return valueOr(c, key, def, parseBool) }

func (c *call) access(key string, def verbs.Access) (verbs.Access, error) {
	v, ok := c.a.kv[key]
	if !ok {
		return def, nil
	}
	acc, err := verbs.ParseAccess(v)
	if err != nil {
		return 0, c.bad(key, err)
	}
	return acc, nil
}

// posNum reads positional i as a number, def when absent.
func (c *call) posNum(i int, name string, def uint64) (uint64, error) {
	if i >= len(c.a.pos) {
		return def, nil
	}
	n, err := parseSize(c.a.pos[i].text)
	if err != nil {
		return 0, usagef(c.cmd.usageHint(), "bad %s %q: %v", name, c.a.pos[i].text, err)
	}
	return n, nil
}

// qpnValue reads a QP number or a QP handle (dest_qpn=qp1).
func (c *call) qpn(key string) (uint32, bool, error) {
	v, ok := c.a.kv[key]
	if !ok {
		return 0, false, nil
	}
	if k, isHandle := kindOfName(v); isHandle {
		if k != kQP {
			return 0, true, c.bad(key, fmt.Errorf("%s is a %s; give a QP (qp1) or a QP number", v, kindInfo[k].noun))
		}
		o, err := c.s.h.lookup(v, kQP)
		if err != nil {
			return 0, true, err
		}
		return o.qp.Num(), true, nil
	}
	n, err := parseUint(v, 24)
	if err != nil {
		return 0, true, c.bad(key, err)
	}
	return uint32(n), true, nil
}

// gid reads a GID, or a handle whose GID at index is meant: a QP or context
// (its device), a device name, A or B.
func (c *call) gid(key string, index int) (verbs.GID, bool, error) {
	v, ok := c.a.kv[key]
	if !ok {
		return verbs.GID{}, false, nil
	}
	g, err := c.s.gidOf(v, index)
	if err != nil {
		return verbs.GID{}, true, c.bad(key, err)
	}
	return g, true, nil
}

// gidOf resolves a GID written as an address or as a handle.
func (s *Shell) gidOf(v string, index int) (verbs.GID, error) {
	if k, isHandle := kindOfName(v); isHandle {
		o, ok := s.h.byName[strings.ToLower(v)]
		if !ok {
			return verbs.GID{}, s.h.notFound(v, k)
		}
		ctx := ctxOf(o)
		if ctx == nil {
			return verbs.GID{}, fmt.Errorf("%s has no device; give a QP, a context or a device", v)
		}
		return queryGIDAt(ctx, index, o.name)
	}
	if d, err := s.device(v); err == nil {
		ctx, err := d.Open()
		if err != nil {
			return verbs.GID{}, err
		}
		defer ctx.Close()
		return queryGIDAt(ctx, index, d.Name())
	}
	return verbs.ParseGID(v)
}

func queryGIDAt(ctx verbs.Context, index int, who string) (verbs.GID, error) {
	g, err := ctx.QueryGID(1, index)
	if err != nil {
		return verbs.GID{}, fmt.Errorf("reading %s's GID at index %d: %w", who, index, err)
	}
	return g, nil
}

// ctxOf returns the context an object was made from.
func ctxOf(o *object) verbs.Context {
	for ; o != nil; o = o.parent {
		if o.kind == kCtx {
			return o.ctx
		}
	}
	return nil
}

// mrOffset reads "mr1" or "mr1+100" (also "mr1-8" is refused).
func (s *Shell) mrOffset(v string) (*object, uint64, error) {
	name, off := v, uint64(0)
	if i := strings.IndexByte(v, '+'); i >= 0 {
		name = v[:i]
		n, err := parseSize(v[i+1:])
		if err != nil {
			return nil, 0, fmt.Errorf("bad offset in %q: %v", v, err)
		}
		off = n
	}
	o, err := s.h.lookup(name, kMR)
	if err != nil {
		return nil, 0, err
	}
	return o, off, nil
}

// remote resolves the remote buffer of an RDMA or atomic work request:
// remote=mr1+100, or remote_addr= and rkey= (numbers or handles).
func (c *call) remote() (addr uint64, rkey uint32, given bool, err error) {
	if v, ok := c.a.kv["remote"]; ok {
		if c.has("remote_addr") || c.has("rkey") {
			return 0, 0, true, usagef("give either remote=mr1+OFF or remote_addr= with rkey=", "remote= and remote_addr=/rkey= both given")
		}
		o, off, err := c.s.mrOffset(v)
		if err != nil {
			return 0, 0, true, c.bad("remote", err)
		}
		return o.mr.Addr() + off, o.mr.RKey(), true, nil
	}
	if v, ok := c.a.kv["remote_addr"]; ok {
		given = true
		if k, isHandle := kindOfName(strings.SplitN(v, "+", 2)[0]); isHandle && k == kMR {
			o, off, err := c.s.mrOffset(v)
			if err != nil {
				return 0, 0, true, c.bad("remote_addr", err)
			}
			addr = o.mr.Addr() + off
		} else if addr, err = parseUint(v, 64); err != nil {
			return 0, 0, true, c.bad("remote_addr", err)
		}
	}
	if v, ok := c.a.kv["rkey"]; ok {
		given = true
		if k, isHandle := kindOfName(v); isHandle && k == kMR {
			o, err := c.s.h.lookup(v, kMR)
			if err != nil {
				return 0, 0, true, err
			}
			rkey = o.mr.RKey()
		} else {
			n, err := parseUint(v, 32)
			if err != nil {
				return 0, 0, true, c.bad("rkey", err)
			}
			rkey = uint32(n)
		}
	}
	return addr, rkey, given, nil
}

// sges builds the scatter/gather list from mr=/offset=/length= or sge=.
// It returns the SGEs and a description for the verb line.
func (c *call) sges(defLen func(mrLen uint64) uint64) ([]verbs.SGE, string, error) {
	if v, ok := c.a.kv["sge"]; ok {
		var both []string
		for _, k := range []string{"mr", "offset", "length"} {
			if c.has(k) {
				both = append(both, k+"=")
			}
		}
		if len(both) > 0 {
			return nil, "", usagef("give either mr= (with offset= and length=) or sge=MR:OFFSET:LENGTH, whose offset and length are in it",
				"sge= given with %s too", strings.Join(both, " and "))
		}
		var out []verbs.SGE
		var desc []string
		for _, item := range strings.Split(v, ",") {
			parts := strings.Split(item, ":")
			if len(parts) > 3 || parts[0] == "" {
				return nil, "", c.bad("sge", fmt.Errorf("%q is not MR:OFFSET:LENGTH", item))
			}
			o, err := c.s.h.lookup(parts[0], kMR)
			if err != nil {
				return nil, "", err
			}
			var off uint64
			if len(parts) > 1 {
				if off, err = parseSize(parts[1]); err != nil {
					return nil, "", c.bad("sge", err)
				}
			}
			mrLen := uint64(o.mr.Length())
			length := uint64(0)
			if mrLen > off {
				length = mrLen - off
			}
			if len(parts) > 2 {
				if length, err = number.ParseSize(parts[2], 32); err != nil {
					return nil, "", c.bad("sge", err)
				}
			}
			if length > 1<<32-1 {
				return nil, "", c.bad("sge", fmt.Errorf("length %d does not fit in 32 bits", length))
			}
			out = append(out, verbs.SGE{Addr: o.mr.Addr() + off, Length: uint32(length), LKey: o.mr.LKey()})
			desc = append(desc, fmt.Sprintf("%s+%d:%d", o.name, off, length))
		}
		if len(out) > 64 {
			return nil, "", c.bad("sge", fmt.Errorf("%d SGEs; vsh takes at most 64", len(out)))
		}
		return out, strings.Join(desc, ","), nil
	}
	o, given, err := c.keyObj("mr", kMR)
	if err != nil {
		return nil, "", err
	}
	if !given {
		if c.has("offset") || c.has("length") {
			return nil, "", usagef("add mr=mr0", "offset= and length= need mr=")
		}
		return nil, "no SGE", nil
	}
	off, err := c.sizeOr("offset", 0)
	if err != nil {
		return nil, "", err
	}
	mrLen := uint64(o.mr.Length())
	def := uint64(0)
	if mrLen > off {
		def = mrLen - off
	}
	if defLen != nil {
		def = defLen(def)
	}
	length, err := c.sizeBitsOr("length", def, 32)
	if err != nil {
		return nil, "", err
	}
	if length > 1<<32-1 { // the default: what the MR has past offset=
		return nil, "", c.bad("length", fmt.Errorf("%d does not fit in 32 bits", length))
	}
	return []verbs.SGE{{Addr: o.mr.Addr() + off, Length: uint32(length), LKey: o.mr.LKey()}},
		fmt.Sprintf("%s+%d:%d", o.name, off, length), nil
}

// device resolves a device name, or A and B.
func (s *Shell) device(name string) (verbs.Device, error) {
	if len(s.devs) == 0 {
		return nil, usagef("this backend has no RDMA device; on Linux create one with: rdma link add rxe0 type rxe netdev eth0",
			"no devices")
	}
	switch name {
	case "A", "a":
		return s.devs[0], nil
	case "B", "b":
		if len(s.devs) > 1 {
			return s.devs[1], nil
		}
		return s.devs[0], nil
	}
	var names []string
	for _, d := range s.devs {
		if d.Name() == name {
			return d, nil
		}
		names = append(names, d.Name())
	}
	if n, err := number.Parse(name, 31); err == nil && n < uint64(len(s.devs)) {
		return s.devs[n], nil
	}
	hint := "the devices are " + strings.Join(names, ", ") + ", and A and B"
	if near := nearest(name, names); near != "" {
		hint = "did you mean " + near + "? " + hint
	}
	return nil, usagef(hint, "no device %q", name)
}

// nextWRID returns the next automatic wr_id.
func (s *Shell) nextWRID() uint64 {
	id := s.wrid
	s.wrid++
	return id
}

// hex24 prints a QPN as rc_pingpong does.
func hex24(n uint32) string { return fmt.Sprintf("0x%06x", n) }
