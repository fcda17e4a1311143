package pingpong

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Real invocations of rdma-core's programs (from their man pages, the
// rdma-core and SoftRoCE documentation, lab notes and bug reports), with
// what getopt_long makes of them.
func TestParseRealInvocations(t *testing.T) {
	type want struct {
		host                                       string
		dev                                        string
		port, ibport, size, rx, iters, sl, gid, nq int
		mtu                                        verbs.MTU
		events, chk                                bool
	}
	def := func(tr Transport) want {
		d := Defaults(tr)
		return want{port: d.Port, ibport: d.IBPort, size: d.Size, rx: d.RxDepth, iters: d.Iters, gid: -1, nq: d.NumQP, mtu: d.MTU}
	}
	tests := []struct {
		cmd  string
		edit func(*want)
	}{
		{"rc", nil},
		{"rc 192.168.1.10", func(w *want) { w.host = "192.168.1.10" }},
		{"rc -d rxe0 -g 1", func(w *want) { w.dev, w.gid = "rxe0", 1 }},
		{"rc -d rxe0 -g 1 192.168.1.10", func(w *want) { w.dev, w.gid, w.host = "rxe0", 1, "192.168.1.10" }},
		{"rc -g 0 -d mlx5_0 -i 1 10.0.0.1", func(w *want) { w.gid, w.dev, w.host = 0, "mlx5_0", "10.0.0.1" }},
		{"rc -d rxe0 -g 1 -s 4096 -n 1000 -m 1024 host", func(w *want) { w.dev, w.gid, w.host = "rxe0", 1, "host" }},
		{"rc -d rxe_eth0 -i 1 -g 1 -n 5 -s 64 -c server", func(w *want) {
			w.dev, w.gid, w.iters, w.size, w.chk, w.host = "rxe_eth0", 1, 5, 64, true, "server"
		}},
		// glibc permutes: options may follow the host name.
		{"rc host -g 1", func(w *want) { w.host, w.gid = "host", 1 }},
		{"rc 10.0.0.1 -d rxe0 -g 1 -n 10", func(w *want) { w.host, w.dev, w.gid, w.iters = "10.0.0.1", "rxe0", 1, 10 }},
		// An argument glued to its option, or in the next word.
		{"rc -p18515 -g1 host", func(w *want) { w.gid, w.host = 1, "host" }},
		{"rc -p 18516 -s65536 host", func(w *want) { w.port, w.size, w.host = 18516, 65536, "host" }},
		// Long options: --opt=V and --opt V, and unambiguous prefixes.
		{"rc --port=18516 --ib-dev=rxe0 --gid-idx=1 host", func(w *want) { w.port, w.dev, w.gid, w.host = 18516, "rxe0", 1, "host" }},
		{"rc --port 18516 --ib-dev rxe0 --ib-port 1 host", func(w *want) { w.port, w.dev, w.host = 18516, "rxe0", "host" }},
		{"rc --size=1 --mtu=256 --rx-depth=10 --iters=3 --sl=2 --events --chk", func(w *want) {
			w.size, w.mtu, w.rx, w.iters, w.sl, w.events, w.chk = 1, verbs.MTU256, 10, 3, 2, true, true
		}},
		{"rc --it 7 --ev --gid 1", func(w *want) { w.iters, w.events, w.gid = 7, true, 1 }},
		// Bundled flags; an option with an argument ends the bundle.
		{"rc -ec -g 1", func(w *want) { w.events, w.chk, w.gid = true, true, 1 }},
		{"rc -ecg1 host", func(w *want) { w.events, w.chk, w.gid, w.host = true, true, 1, "host" }},
		{"rc -ecn 5", func(w *want) { w.events, w.chk, w.iters = true, true, 5 }},
		// "--" ends the options.
		{"rc -g 1 -- host", func(w *want) { w.gid, w.host = 1, "host" }},
		{"rc -- -host", func(w *want) { w.host = "-host" }},
		// strtol's bases; a negative GID index means none.
		{"rc -n 0x10 -r 010 -g -1", func(w *want) { w.iters, w.rx = 16, 8 }},
		{"rc -g -5", nil},
		{"uc -d rxe0 -g 1 -s 2048 -m 2048 host", func(w *want) { w.dev, w.gid, w.size, w.mtu, w.host = "rxe0", 1, 2048, verbs.MTU2048, "host" }},
		{"ud", nil},
		{"ud -d rxe0 -g 1 -s 1024 10.0.0.2", func(w *want) { w.dev, w.gid, w.size, w.host = "rxe0", 1, 1024, "10.0.0.2" }},
		{"ud -s 512 -r 100 -n 50 -e host", func(w *want) { w.size, w.rx, w.iters, w.events, w.host = 512, 100, 50, true, "host" }},
		{"srq -d rxe0 -g 1 host", func(w *want) { w.dev, w.gid, w.host = "rxe0", 1, "host" }},
		{"srq -q 4 -r 100 -n 64 host", func(w *want) { w.nq, w.rx, w.iters, w.host = 4, 100, 64, "host" }},
		{"srq --num-qp=8 --chk -g1", func(w *want) { w.nq, w.chk, w.gid = 8, true, 1 }},
		{"ibv_rc_pingpong -g 1", func(w *want) { w.gid = 1 }},
		{"RC -g 1", func(w *want) { w.gid = 1 }},
	}
	for _, tc := range tests {
		args := strings.Fields(tc.cmd)
		o, err := ParseArgs(args)
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		w := def(o.Transport)
		if tc.edit != nil {
			tc.edit(&w)
		}
		got := want{host: o.Host, dev: o.IBDev, port: o.Port, ibport: o.IBPort, size: o.Size, rx: o.RxDepth, iters: o.Iters,
			sl: o.SL, gid: o.GIDIndex, nq: o.NumQP, mtu: o.MTU, events: o.Events, chk: o.Check}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.cmd, got, w)
		}
	}
}

// Errors, worded as glibc's getopt_long words them, or as vsh explains them.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		cmd  string
		want string
		opt  bool // an *OptionError (getopt's own)
	}{
		{"rc -x", "invalid option -- 'x'", true},
		{"rc -ex", "invalid option -- 'x'", true},
		{"rc -p", "option requires an argument -- 'p'", true},
		{"rc -g", "option requires an argument -- 'g'", true},
		{"rc -q 4", "invalid option -- 'q'", true}, // -q is srq's
		{"ud -m 1024", "invalid option -- 'm'", true},
		{"ud --mtu=1024", "unrecognized option '--mtu=1024'", true},
		{"rc --foo=bar", "unrecognized option '--foo=bar'", true},
		{"rc --i 1", "option '--i' is ambiguous; possibilities: '--ib-dev' '--ib-port' '--iters' '--iodp'", true},
		{"rc --s=1", "option '--s=1' is ambiguous; possibilities: '--size' '--sl'", true},
		{"rc --events=1", "option '--events' doesn't allow an argument", true},
		{"rc --ev=1", "option '--events' doesn't allow an argument", true},
		{"rc --port", "option '--port' requires an argument", true},
		{"rc --po", "option '--port' requires an argument", true},
		{"rc -U", "invalid option -- 'U'", true}, // HEAD's -U is not in v44
		{"rc -p 70000", "-p 70000 is out of range", false},
		{"rc -i 0", "-i 0 is out of range", false},
		{"rc -m 1000", "the path MTU is one of 256, 512, 1024, 2048, 4096", false},
		{"rc -s 4k", `-s "4k" is not a number`, false},
		{"rc -s 0", "-s 0 is out of range", false},
		{"rc -n 0", "-n 0 is out of range", false},
		{"rc -n -1", "-n -1 is out of range", false},
		{"rc -r 0", "-r 0 is out of range", false},
		{"rc -l 16", "-l 16 is out of range", false},
		{"rc --size=", `--size "" is not a number`, false},
		{"rc a b", "one server host at most, got 2", false},
		{"srq -q 600", "-r 500 is too small for -q 600", false},
		{"srq -q 256 -r 1000", "-q 256 is too many", false},
		{"srq -q 0", "-q 0 is out of range", false},
		{"xrc", `unknown ping-pong "xrc": want rc, uc, ud, srq or xsrq`, false},
		{"rc --backend=rdma", `--backend "rdma"`, false},
		{"rc --timeout=soon", `--timeout "soon"`, false},
	}
	for _, tc := range tests {
		_, err := ParseArgs(strings.Fields(tc.cmd))
		if err == nil {
			t.Errorf("%s: no error; want %q", tc.cmd, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant it to contain %q", tc.cmd, err, tc.want)
		}
		var oe *OptionError
		if errors.As(err, &oe) != tc.opt {
			t.Errorf("%s: %T; OptionError want %v", tc.cmd, err, tc.opt)
		}
	}
}

func TestParseVshFlags(t *testing.T) {
	o, err := ParseArgs(strings.Fields("rc --backend sim --timeout=1500ms -g 1 host"))
	if err != nil {
		t.Fatal(err)
	}
	if o.Backend != "sim" || o.Timeout != 1500*time.Millisecond || o.Host != "host" {
		t.Errorf("got %+v", o)
	}
	if o, _ := ParseArgs([]string{"rc", "--timeout", "3"}); o.Timeout != 3*time.Second {
		t.Errorf("--timeout 3 = %v", o.Timeout)
	}
	if o, _ := ParseArgs([]string{"rc", "--timeout=0"}); o.Timeout != 0 {
		t.Errorf("--timeout=0 = %v", o.Timeout)
	}
	for _, h := range []string{"-h", "--help", "--he"} {
		if o, err := ParseArgs([]string{"srq", h}); err != nil || !o.Help {
			t.Errorf("%s: %+v %v", h, o, err)
		}
	}
	o, err = ParseArgs(strings.Fields("rc -o -t -N"))
	if err != nil || len(o.Unsupported) != 2 || !o.NewSend {
		t.Errorf("rc -o -t -N: %+v %v", o, err)
	}
}

func TestGetoptOperandOrder(t *testing.T) {
	s := optSpec{short: "ab:", long: []longOpt{{"alpha", false, 'a'}, {"beta", true, 'b'}}}
	opts, ops, err := s.parse([]string{"x", "-a", "y", "-bz", "--beta", "w", "-", "--", "-a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"x", "y", "-", "-a"}; !reflect.DeepEqual(ops, want) {
		t.Errorf("operands %q, want %q", ops, want)
	}
	if len(opts) != 3 || opts[1].arg != "z" || opts[2].arg != "w" || opts[2].name != "--beta" {
		t.Errorf("opts %+v", opts)
	}
	// A required argument is the next word, whatever it looks like.
	opts, _, err = s.parse([]string{"-b", "-a", "--beta", "--"})
	if err != nil || opts[0].arg != "-a" || opts[1].arg != "--" {
		t.Errorf("opts %+v, %v", opts, err)
	}
	// '+' at the front: stop at the first operand (POSIXLY_CORRECT).
	p := optSpec{short: "+a"}
	_, ops, _ = p.parse([]string{"-a", "x", "-a"})
	if want := []string{"x", "-a"}; !reflect.DeepEqual(ops, want) {
		t.Errorf("posix operands %q, want %q", ops, want)
	}
	// An exact name wins over a longer one it prefixes.
	q := optSpec{long: []longOpt{{"ts", false, 't'}, {"tsx", false, 'x'}}}
	opts, _, err = q.parse([]string{"--ts"})
	if err != nil || opts[0].val != 't' {
		t.Errorf("--ts: %+v %v", opts, err)
	}
}

func TestParseCNumber(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "12": 12, "0x1f": 31, "0X1F": 31, "017": 15, "-1": -1, "+5": 5, " 7": 7} {
		if got, ok := parseCNumber(in); !ok || got != want {
			t.Errorf("parseCNumber(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "0x", "12a", "1_000", "08", "--1", "1e3", "4k"} {
		if got, ok := parseCNumber(in); ok {
			t.Errorf("parseCNumber(%q) = %d; want an error", in, got)
		}
	}
}

func TestOptionsArgsRoundTrip(t *testing.T) {
	for _, cmd := range []string{"rc", "rc -s 64 -n 10 -g 1 -c host", "srq -q 4 -r 8 -m 256 -e", "ud -s 100 -l 3 -p 9000 -d sim1"} {
		o, err := ParseArgs(strings.Fields(cmd))
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseFlags(o.Transport, o.Args())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(o, back) {
			t.Errorf("%s: Args() = %q parses to\n%+v\nwant\n%+v", cmd, o.Args(), back, o)
		}
	}
}

func TestDefaults(t *testing.T) {
	for _, tr := range []Transport{RC, UC, UD, SRQ} {
		d := Defaults(tr)
		if d.Port != 18515 || d.IBPort != 1 || d.MTU != verbs.MTU1024 || d.RxDepth != 500 || d.Iters != 1000 ||
			d.SL != 0 || d.GIDIndex != -1 || d.Events || d.Check || d.Timeout != DefaultTimeout {
			t.Errorf("%s: %+v", tr, d)
		}
		want := 4096
		if tr == UD {
			want = 1024
		}
		if d.Size != want {
			t.Errorf("%s: size %d, want %d", tr, d.Size, want)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", tr, err)
		}
	}
	if Defaults(SRQ).NumQP != 16 {
		t.Error("srq -q default")
	}
	for name, want := range map[string]Transport{"ibv_uc_pingpong": UC, "/usr/bin/ibv_srq_pingpong": SRQ, "ud_pingpong": UD} {
		if got, ok := TransportFromProgramName(name); !ok || got != want {
			t.Errorf("%s: %v %v", name, got, ok)
		}
	}
	if _, ok := TransportFromProgramName("pingpong"); ok {
		t.Error("pingpong is not a transport")
	}
	if got, ok := TransportFromProgramName("ibv_xsrq_pingpong"); !ok || got != XSRQ {
		t.Errorf("ibv_xsrq_pingpong: %v %v", got, ok)
	}
}

// --sim-addr takes any unicast address of the host, a link-local one with
// its zone; the rest is refused before anything opens.
func TestSimAddrFlag(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"127.0.0.2", ""},
		{"2001:db8::2", ""},
		{"[2001:db8::2]:4791", ""},
		{"fe80::2%eth1", ""},
		{"2001:db8::2%eth1", "only a link-local IPv6 address takes a zone"},
		{"0.0.0.0", "can be a GID"},
		{"ff02::1", "can be a GID"},
		{"127.0.0.2:5000", "port 4791"},
		{"localhost", "not an IP address"},
	} {
		o, err := ParseFlags(RC, []string{"--sim-addr", tc.in})
		if tc.err == "" {
			if err != nil || o.SimAddr != tc.in {
				t.Errorf("--sim-addr %s: %v (SimAddr %q)", tc.in, err, o.SimAddr)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("--sim-addr %s: %v, want an error with %q", tc.in, err, tc.err)
		}
	}
}
