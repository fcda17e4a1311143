package lab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abc", "abc"},
		{"/work/main", "/work/main"},
		{"A=b", "A=b"},
		{"", "''"},
		{"two words", "'two words'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"a\nb", "'a\nb'"},
		{"*", "'*'"},
		{`PS1=\u@\h:\w\$ `, `'PS1=\u@\h:\w\$ '`},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	// What the shell makes of the quoted words must be the words.
	sh := toolcheck.Require(t, "sh", "any POSIX shell")
	words := []string{"plain", "", "two words", "it's", "$HOME `x` \"q\"", "a\nb", "-n", "*", `\`}
	out, err := exec.Command(sh, "-c", `for a in `+shellJoin(words)+`; do printf '[%s]' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, w := range words {
		want += "[" + w + "]"
	}
	if string(out) != want {
		t.Errorf("the shell read back %q, want %q", out, want)
	}
}

func TestPlanShares(t *testing.T) {
	// resolve: /link -> /work/real; everything else as is.
	resolve := func(p string) (string, error) {
		if p == "/link" || strings.HasPrefix(p, "/link/") {
			return "/work/real" + strings.TrimPrefix(p, "/link"), nil
		}
		if strings.HasPrefix(p, "/missing") {
			return "", os.ErrNotExist
		}
		return p, nil
	}
	tests := []struct {
		name    string
		dir     string
		extra   []Share
		argv0   string
		want    []Share
		wantErr string
	}{
		{"working directory read-write", "/work/main", nil, "ibv_devinfo",
			[]Share{{Path: "/work/main"}}, ""},
		{"checkout under /tmp", "/tmp/x/main", nil, "./bin/vsh",
			[]Share{{Path: "/tmp/x/main"}}, ""},
		{"root directory is not shared", "/", nil, "ls", nil, ""},
		{"symlinks resolved", "/link/sub", nil, "ls",
			[]Share{{Path: "/work/real/sub"}}, ""},
		{"extra shares, parents first", "/work/main",
			[]Share{{Path: "/data/b/c"}, {Path: "/data/b", ReadOnly: true}}, "ls",
			[]Share{{Path: "/data/b", ReadOnly: true}, {Path: "/data/b/c"}, {Path: "/work/main"}}, ""},
		{"share inside the working directory dropped", "/work/main",
			[]Share{{Path: "/work/main/bin", ReadOnly: true}, {Path: "/work/main"}}, "ls",
			[]Share{{Path: "/work/main"}}, ""},
		{"test binary under /tmp shared read-only", "/work/main/verbs",
			nil, "/tmp/go-build123/b001/verbs.test",
			[]Share{{Path: "/work/main/verbs"}, {Path: "/tmp/go-build123/b001", ReadOnly: true}}, ""},
		{"binary under /run shared", "/work/main", nil, "/run/user/0/x",
			[]Share{{Path: "/work/main"}, {Path: "/run/user/0", ReadOnly: true}}, ""},
		{"binary under the working directory: nothing more", "/tmp/w", nil, "/tmp/w/bin/vsh",
			[]Share{{Path: "/tmp/w"}}, ""},
		{"binary the guest sees anyway: nothing more", "/work/main", nil, "/usr/bin/ibv_devinfo",
			[]Share{{Path: "/work/main"}}, ""},
		{"relative share", "/work/main", []Share{{Path: "data"}}, "ls", nil, "is not an absolute path"},
		{"missing share", "/work/main", []Share{{Path: "/missing/x"}}, "ls", nil, "/missing/x"},
		{"/proc refused", "/work/main", []Share{{Path: "/proc/1"}}, "ls", nil, "the guest has its own"},
		{"/ read-write refused", "/work/main", []Share{{Path: "/"}}, "ls", nil, "cannot share the whole host filesystem read-write"},
		{"/ read-only is a no-op", "/work/main", []Share{{Path: "/", ReadOnly: true}}, "ls",
			[]Share{{Path: "/work/main"}}, ""},
	}
	for _, tt := range tests {
		got, err := planShares(tt.dir, tt.extra, tt.argv0, resolve)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: planShares = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestGuestEnv(t *testing.T) {
	host := []string{"PATH=/usr/local/go/bin:/usr/bin:relative:/usr/bin", "HOME=/home/me", "TERM=xterm",
		"LANG=C.UTF-8", "VSH_REQUIRE_TOOLS=1", "VSH_LAB_CACHE=/c", "SECRET=x", "GOTRACEBACK=all", "FOO=bar"}
	get := func(env []string, k string) (string, bool) {
		for _, kv := range env {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v, true
			}
		}
		return "", false
	}
	tests := []struct {
		name  string
		extra []string
		tty   bool
		peer  bool
		check map[string]string // "" value with "-" prefix key: must be absent
	}{
		{"defaults", nil, false, false, map[string]string{
			"PATH":              "/usr/local/go/bin:/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:/bin",
			"HOME":              "/root",
			"LANG":              "C.UTF-8",
			"GOTRACEBACK":       "all",
			"VSH_REQUIRE_TOOLS": "1",
			"VSH_LAB_GUEST":     "1", "VSH_LAB_DEVICE": "rxe0", "VSH_LAB_GID_INDEX": "1",
			"-VSH_LAB_CACHE": "", "-SECRET": "", "-TERM": "", "-FOO": "",
			"-VSH_LAB_PEER_NETNS": "", "-VSH_LAB_PEER_DEVICE": "", "-VSH_LAB_KERNEL_ADDR4": "",
		}},
		{"terminal", nil, true, false, map[string]string{"TERM": "xterm"}},
		{"-e copies and sets", []string{"FOO", "NEW=1", "UNSET_ON_HOST", "HOME=/tmp"}, false, false,
			map[string]string{"FOO": "bar", "NEW": "1", "HOME": "/tmp", "-UNSET_ON_HOST": ""}},
		{"-e value with =", []string{"A=b=c"}, false, false, map[string]string{"A": "b=c"}},
		{"the second wire", nil, false, true, map[string]string{
			"VSH_LAB_DEVICE": "rxe0", "VSH_LAB_GID_INDEX": "1",
			"VSH_LAB_PEER_NETNS": "vshpeer", "VSH_LAB_PEER_DEVICE": "rxe1",
			"VSH_LAB_PEER_ADDR4": "198.51.100.2", "VSH_LAB_PEER_ADDR6": "2001:db8:4791::2",
			"VSH_LAB_KERNEL_ADDR4": "198.51.100.1", "VSH_LAB_KERNEL_ADDR6": "2001:db8:4791::1",
		}},
		{"the second wire, a host variable of the same name", []string{"VSH_LAB_PEER_NETNS"}, false, true,
			map[string]string{"VSH_LAB_PEER_NETNS": "vshpeer"}},
	}
	for _, tt := range tests {
		env, err := guestEnv(host, tt.extra, tt.tty, tt.peer)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for k, want := range tt.check {
			if absent, ok := strings.CutPrefix(k, "-"); ok {
				if v, found := get(env, absent); found {
					t.Errorf("%s: %s=%s passed to the guest, want it absent", tt.name, absent, v)
				}
				continue
			}
			if v, _ := get(env, k); v != want {
				t.Errorf("%s: %s=%q, want %q", tt.name, k, v, want)
			}
		}
	}
	for _, bad := range []string{"", "=x", "1A=x", "A-B", "A B=1"} {
		if _, err := guestEnv(host, []string{bad}, false, false); err == nil {
			t.Errorf("guestEnv with -e %q succeeded, want an error", bad)
		}
	}
}

func TestScriptsParse(t *testing.T) {
	sh := toolcheck.Require(t, "sh", "any POSIX shell")
	scripts := map[string]string{"init": initScript()}
	for _, g := range []GuestSpec{
		{Args: []string{"ibv_devinfo"}, Dir: "/work/main", Env: []string{"PATH=/usr/bin"}, MTU: 1500},
		{Args: []string{"sh", "-c", "echo 'x'; exit 3"}, Dir: "/tmp/it's here", Env: []string{"A=b c"},
			Shares: []Share{{Path: "/tmp/it's here"}, {Path: "/tmp/go-build1/b001", ReadOnly: true}}, MTU: 9000, Stdin: true},
		{Args: []string{"/bin/bash", "--norc"}, Dir: "/work/main", Env: []string{`PS1=\u@\h:\w\$ `}, TTY: true, Rows: 40, Cols: 132, MTU: 1500},
		{Args: []string{"ip", "addr"}, Dir: "/work/main", Env: []string{"PATH=/usr/bin"}, MTU: 1500, Peer: true},
		{Args: []string{"/bin/bash"}, Dir: "/work/main", TTY: true, Rows: 24, Cols: 80, MTU: 1500, Peer: true},
	} {
		scripts[fmt.Sprintf("stage2 %q", g.Args)] = stage2Script(g)
	}
	for name, s := range scripts {
		if out, err := exec.Command(sh, "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v: %s\n%s", name, err, out, s)
		}
	}
}

func TestStage2Content(t *testing.T) {
	g := GuestSpec{Args: []string{"ibv_rc_pingpong", "-g", "1"}, Dir: "/tmp/w", Env: []string{"PATH=/usr/bin", "X=a b"},
		Shares: []Share{{Path: "/tmp/w"}, {Path: "/tmp/bin", ReadOnly: true}}, MTU: 4200}
	s := stage2Script(g)
	for _, want := range []string{
		"mount -t tmpfs -o mode=1777 tmpfs $R/tmp",
		"share share0 /tmp/w ''\n",
		"share share1 /tmp/bin ,ro\n",
		"ip link add rxenet0 type dummy",
		"ip link set rxenet0 mtu 4200 up",
		"ip addr add 192.0.2.1/24 dev rxenet0",
		"rdma link add rxe0 type rxe netdev rxenet0",
		"/sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null)\" = 0000:0000:0000:0000:0000:ffff:c000:0201",
		"chroot $R /usr/bin/env -i -C /tmp/w -- PATH=/usr/bin 'X=a b' ibv_rc_pingpong -g 1",
		"in=/dev/null",
		`echo "exit $rc" >&3`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("stage 2 lacks %q:\n%s", want, s)
		}
	}
	// /tmp must be the guest's own tmpfs before the shares are mounted on it.
	if i, j := strings.Index(s, "tmpfs $R/tmp"), strings.Index(s, "share share0"); i < 0 || j < i {
		t.Errorf("shares are mounted before the guest's tmpfs on /tmp:\n%s", s)
	}
	tty := stage2Script(GuestSpec{Args: []string{"bash"}, Dir: "/w", TTY: true, Rows: 30, Cols: 100, MTU: 1500})
	for _, want := range []string{"stty -F $tty rows 30 cols 100", "setsid -c chroot", "<$tty >$tty 2>&1 3>&- 4>&-", "winsize"} {
		if !strings.Contains(tty, want) {
			t.Errorf("tty stage 2 lacks %q:\n%s", want, tty)
		}
	}
}

// TestStage2ExitProtocol runs the generated stage 2 in the host's shell with
// the guest-only commands stubbed, and reads the control channel (fd 3) and
// the command's output as the host does: the command runs with the given
// directory and environment, and its status comes back as "exit N".
func TestStage2ExitProtocol(t *testing.T) {
	sh := toolcheck.Require(t, "sh", "any POSIX shell")
	if err := exec.Command("/usr/bin/env", "-i", "-C", "/", "--", "true").Run(); err != nil {
		t.Skipf("this host's /usr/bin/env has no -C (GNU coreutils 8.28+ has): %v", err)
	}
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{"success", []string{"sh", "-c", "echo out; echo err >&2"}, 0, "out\n", "err\n"},
		{"failure status", []string{"sh", "-c", "exit 7"}, 7, "", ""},
		{"not found", []string{"no-such-command-xyz"}, 127, "", "no-such-command-xyz"},
		{"killed by a signal", []string{"sh", "-c", "kill -TERM $$"}, 143, "", ""},
		{"directory and environment", []string{"sh", "-c", `echo "$(pwd) $VSH_T ${HOME:-unset}"`}, 0, "@DIR@ it works unset\n", ""},
		{"stdin is /dev/null", []string{"sh", "-c", "cat; echo end"}, 0, "end\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			work := filepath.Join(dir, "work dir")
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			out, errf, ctl := filepath.Join(dir, "out"), filepath.Join(dir, "err"), filepath.Join(dir, "ctl")
			g := GuestSpec{Args: tt.args, Dir: work, Env: []string{"PATH=" + os.Getenv("PATH"), "VSH_T=it works"}, MTU: 1500}
			stubs := `
die() { echo "fail $*" >&3; exit 99; }
say() { :; }
mount() { :; }
mkdir() { :; }
hostname() { :; }
inhost() { :; }
sync() { :; }
sleep() { :; }
grep() { return 0; }
cat() { if [ "$1" = /sys/class/infiniband/rxe0/ports/1/gids/1 ]; then echo ` + guestGIDSysfs + `; else command cat "$@"; fi; }
poweroff() { exit 0; }
waitport() { case $1 in vsh.out) echo ` + shellQuote(out) + `;; vsh.err) echo ` + shellQuote(errf) + `;; esac; }
`
			// A chroot on PATH (stage 2 execs it) that runs only the command
			// itself (chroot $R /usr/bin/env -i -C DIR ...): the guest's setup
			// (inhost ip ..., rdma ...) must never touch this host.
			bin := filepath.Join(dir, "bin")
			chroot := "#!" + sh + "\nshift\nif [ \"$2\" = -i ] && [ \"$3\" = -C ]; then exec \"$@\"; fi\necho \"not run: $*\" >&2\n"
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bin, "chroot"), []byte(chroot), 0o755); err != nil {
				t.Fatal(err)
			}
			script := "PATH=" + shellQuote(bin+":"+os.Getenv("PATH")) + "\n" + stubs + stage2Script(g)
			cmd := exec.Command(sh, "-c", script+"\n", "stage2")
			f, err := os.Create(ctl)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.ExtraFiles = []*os.File{f} // fd 3
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("stage 2 failed: %v\n%s", err, b)
			}
			b, _ := os.ReadFile(ctl)
			var kinds []MsgKind
			status := -1
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				m, err := ParseMsg(l)
				if err != nil {
					t.Errorf("control channel: %v", err)
				}
				kinds = append(kinds, m.Kind)
				status = m.Status
			}
			if !reflect.DeepEqual(kinds, []MsgKind{MsgReady, MsgExit}) || status != tt.wantStatus {
				t.Errorf("control channel says %q, want ready, then \"exit %d\"", b, tt.wantStatus)
			}
			gotOut, _ := os.ReadFile(out)
			if want := strings.ReplaceAll(tt.wantOut, "@DIR@", work); string(gotOut) != want {
				t.Errorf("stdout %q, want %q", gotOut, want)
			}
			gotErr, _ := os.ReadFile(errf)
			if !strings.Contains(string(gotErr), tt.wantErr) || tt.wantErr == "" && len(gotErr) > 0 {
				t.Errorf("stderr %q, want %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestSysfsGID(t *testing.T) {
	for addr, want := range map[string]string{
		GuestAddr:          guestGIDSysfs,
		"198.51.100.1":     "0000:0000:0000:0000:0000:ffff:c633:6401",
		"2001:db8:4791::1": "2001:0db8:4791:0000:0000:0000:0000:0001",
		"fe80::1":          "fe80:0000:0000:0000:0000:0000:0000:0001",
	} {
		if got := sysfsGID(addr); got != want {
			t.Errorf("sysfsGID(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestStage2Peer: a peer run makes the second wire after rxe0, and runs
// the command in the namespace; any other run leaves both out.
func TestStage2Peer(t *testing.T) {
	wire := []string{
		// rxe0 stays as it was, and comes first.
		"rdma link add rxe0 type rxe netdev rxenet0",
		"inhost ip -batch - <<'EOF' || die",
		"netns add vshpeer",
		"link add rxeveth0 mtu 9000 type veth peer name rxeveth1 mtu 9000 netns vshpeer",
		"addr add 198.51.100.1/24 dev rxeveth0",
		"addr add 2001:db8:4791::1/64 dev rxeveth0 nodad",
		"link set rxeveth0 up",
		"EOF",
		"inhost ip -netns vshpeer -batch - <<'EOF' || die",
		"link set lo up",
		"addr add 198.51.100.2/24 dev rxeveth1",
		"addr add 2001:db8:4791::2/64 dev rxeveth1 nodad",
		"link set rxeveth1 up",
		"EOF",
		"inhost rdma link add rxe1 type rxe netdev rxeveth0 || die",
		"grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null && " +
			"found=$(grep -x -e 0000:0000:0000:0000:0000:ffff:c633:6401 -e 2001:0db8:4791:0000:0000:0000:0000:0001 /sys/class/infiniband/rxe1/ports/1/gids/* 2>/dev/null)",
		`die "rxe1 port 1 is not ACTIVE with the GIDs ::ffff:198.51.100.1 and 2001:db8:4791::1 after 10 s`,
		`say "rxe1 ready on rxeveth0`,
		`echo "ready `,
	}
	tests := []struct {
		name   string
		g      GuestSpec
		want   []string // lines with these, in this order (after the wire's for a peer run)
		absent []string
	}{
		{"no second wire", GuestSpec{Args: []string{"ibv_devinfo"}, Dir: "/w", Env: []string{"A=b"}, MTU: 1500},
			[]string{"rdma link add rxe0 type rxe netdev rxenet0", `echo "ready `, "(exec chroot $R /usr/bin/env -i -C /w -- A=b ibv_devinfo <"},
			[]string{"netns", "veth", "rxe1", "198.51.100"}},
		{"peer", GuestSpec{Args: []string{"ip", "addr"}, Dir: "/w", Env: []string{"A=b"}, MTU: 1500, Peer: true},
			[]string{"(exec chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ip netns exec vshpeer /usr/bin/env -i -C /w -- A=b ip addr <"},
			nil},
		{"peer on a terminal", GuestSpec{Args: []string{"bash"}, Dir: "/w", MTU: 1500, Peer: true, TTY: true, Rows: 24, Cols: 80},
			[]string{"(exec setsid -c chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ip netns exec vshpeer /usr/bin/env -i -C /w -- "},
			nil},
	}
	for _, tt := range tests {
		s := stage2Script(tt.g)
		lines := strings.Split(s, "\n")
		at := 0 // the next line to look at
		want := tt.want
		if tt.g.Peer {
			want = append(append([]string{}, wire...), tt.want...)
		}
		for _, want := range want {
			for at < len(lines) && !strings.Contains(lines[at], want) {
				at++
			}
			if at == len(lines) {
				t.Errorf("%s: stage 2 lacks a line with %q (in this order):\n%s", tt.name, want, s)
				break
			}
			at++
		}
		for _, no := range tt.absent {
			if strings.Contains(s, no) {
				t.Errorf("%s: stage 2 has %q:\n%s", tt.name, no, s)
			}
		}
	}
}

// TestStage2PeerGIDs runs stage 2 in the host's shell with the guest-only
// commands stubbed and rxe1's port and GID table faked: it must wait for an
// ACTIVE port with both addresses' GIDs, wherever the kernel put them, say
// their indexes, and fail with what it found when they do not come.
func TestStage2PeerGIDs(t *testing.T) {
	sh := toolcheck.Require(t, "sh", "any POSIX shell")
	g4, g6 := sysfsGID(KernelAddr4), sysfsGID(KernelAddr6)
	gids := "/sys/class/infiniband/rxe1/ports/1/gids/"
	tests := []struct {
		name  string
		state string
		table []string // grep -x's output: FILE:GID
		fail  bool
		want  string // in what stage 2 said (say or fail)
	}{
		{"IPv4 first", "4: ACTIVE", []string{gids + "1:" + g4, gids + "2:" + g6}, false,
			"say rxe1 ready on rxeveth0 (198.51.100.1/24, 2001:db8:4791::1/64, MTU 9000): " +
				"GID index 1 = ::ffff:198.51.100.1, GID index 2 = 2001:db8:4791::1; rxeveth1 in the namespace vshpeer has 198.51.100.2 and 2001:db8:4791::2"},
		{"IPv6 first, indexes past 9", "4: ACTIVE", []string{gids + "10:" + g6, gids + "2:" + g4}, false,
			"GID index 2 = ::ffff:198.51.100.1, GID index 10 = 2001:db8:4791::1;"},
		{"IPv6 GID missing", "4: ACTIVE", []string{gids + "1:" + g4}, true,
			"fail rxe1 port 1 is not ACTIVE with the GIDs ::ffff:198.51.100.1 and 2001:db8:4791::1 after 10 s (state: 4: ACTIVE; found: " + gids + "1:" + g4 + ")"},
		{"port down", "1: DOWN", []string{gids + "1:" + g4, gids + "2:" + g6}, true,
			"(state: 1: DOWN; found: )"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			// chroot runs nothing: the command is not what this test is about.
			if err := os.WriteFile(filepath.Join(bin, "chroot"), []byte("#!"+sh+"\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			stubs := `
die() { echo "fail $*" >&3; exit 99; }
say() { echo "say $*" >&3; }
mount() { :; }
mkdir() { :; }
hostname() { :; }
inhost() { :; }
sync() { :; }
sleep() { :; }
poweroff() { exit 0; }
waitport() { echo /dev/null; }
STATE=` + shellQuote(tt.state) + `
TABLE=` + shellQuote(strings.Join(tt.table, "\n")) + `
cat() { case $1 in */rxe0/ports/1/gids/1) echo ` + guestGIDSysfs + `;; */rxe1/ports/1/state) echo "$STATE";; *) command cat "$@";; esac; }
grep() {
	case "$1 $3" in
	"-q "*/rxe0/*) return 0;;
	"-q "*/rxe1/*) case $STATE in *ACTIVE) return 0;; esac; return 1;;
	"-x "*) printf '%s\n' "$TABLE";;
	*) echo "unexpected grep $*" >&2; return 2;;
	esac
}
`
			ctl := filepath.Join(dir, "ctl")
			f, err := os.Create(ctl)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			script := "PATH=" + shellQuote(bin+":"+os.Getenv("PATH")) + "\n" + stubs +
				stage2Script(GuestSpec{Args: []string{"true"}, Dir: dir, MTU: 1500, Peer: true})
			cmd := exec.Command(sh, "-c", script+"\n", "stage2")
			cmd.ExtraFiles = []*os.File{f} // fd 3
			out, _ := cmd.CombinedOutput()
			b, _ := os.ReadFile(ctl)
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("stage 2 said:\n%s\nwant %q in it; its output:\n%s", b, tt.want, out)
			}
			if ran := strings.Contains(string(b), "\nexit 0\n"); ran == tt.fail {
				t.Errorf("the command ran: %v, want %v:\n%s", ran, !tt.fail, b)
			}
		})
	}
}
