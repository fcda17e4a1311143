package shell

import (
	"strings"
	"testing"
	"time"
)

// TestReadersTakeTheSpecsDefault: a plain reader gives the spec's default
// when the key is absent, an Or reader the handler's, and a handler default
// that contradicts the spec's panics.
func TestReadersTakeTheSpecsDefault(t *testing.T) {
	cmd := &command{Name: "t", Args: []argSpec{
		key("n", vNum, "16", ""), key("z", vNum, "", ""), key("prose", vNum, "the rest", ""),
		key("d", vDuration, "30s", ""), key("b", vBool, "on", ""), key("s", vSize, "4k", ""),
	}}
	c := &call{cmd: cmd, a: &args{kv: map[string]string{}}}
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"n", must(c.intArg("n")), 16},
		{"z", must(c.intArg("z")), 0},
		{"undeclared", must(c.intArg("undeclared")), 0},
		{"prose", must(c.intOr("prose", 7)), 7},
		{"n agreeing", must(c.intOr("n", 16)), 16},
		{"d", must(c.dur("d")), 30 * time.Second},
		{"b", must(c.boolArg("b")), true},
		{"s", must(c.size("s")), uint64(4096)},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: %v; want %v", tt.name, tt.got, tt.want)
		}
	}
	c.a.kv["n"] = "3"
	if n := must(c.intArg("n")); n != 3 {
		t.Errorf("n=3 reads %d", n)
	}
	delete(c.a.kv, "n")
	for _, tt := range []struct {
		name string
		read func()
		want string
	}{
		{"two defaults", func() { c.intOr("n", 8) }, `the default of n= is "16" in its spec but 8 in its handler`},
		{"prose read plainly", func() { c.intArg("prose") }, `the default of prose= is "the rest", which is no value`},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tt.want) {
					t.Errorf("%s: panic %v; want one saying %q", tt.name, r, tt.want)
				}
			}()
			tt.read()
		}()
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSpecDefaultsRead: every command's default for a numeric, size,
// duration or boolean key is a value its reader reads, or prose that names
// what the handler computes (then the handler reads it with an Or reader).
// Prose must not look like a value read wrongly: a default that starts with
// a digit is a value.
func TestSpecDefaultsRead(t *testing.T) {
	for _, cmd := range commandTable() {
		for _, sp := range cmd.Args {
			if sp.kind != keyArg || sp.def == "" || sp.def[0] < '0' || sp.def[0] > '9' {
				continue
			}
			var err error
			switch sp.value {
			case vNum:
				_, err = parseUint(sp.def, 64)
			case vSize:
				_, err = parseSize(sp.def)
			case vDuration:
				_, err = parseDuration(sp.def)
			default:
				continue
			}
			if err != nil && !strings.Contains(sp.def, " ") {
				t.Errorf("%s: the default of %s= is %q, which its reader cannot read: %v", cmd.Name, sp.name, sp.def, err)
			}
		}
	}
}

// TestBenchMinAboveDefaultMax: bench's max= defaults to min= when that is
// larger than 1M (its spec says so in prose); it once read as two defaults
// that disagree.
func TestBenchMinAboveDefaultMax(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, line := range []string{"bench op=send min=2M mode=lat lat_iters=5", "bench op=send min=2M max=4M mode=lat lat_iters=5"} {
		out, err := sh.Exec(line)
		if err != nil || !strings.Contains(out, "2097152") {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
}
