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
		check map[string]string // "" value with "-" prefix key: must be absent
	}{
		{"defaults", nil, false, map[string]string{
			"PATH":              "/usr/local/go/bin:/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:/bin",
			"HOME":              "/root",
			"LANG":              "C.UTF-8",
			"GOTRACEBACK":       "all",
			"VSH_REQUIRE_TOOLS": "1",
			"VSH_LAB_GUEST":     "1", "VSH_LAB_DEVICE": "rxe0", "VSH_LAB_GID_INDEX": "1",
			"-VSH_LAB_CACHE": "", "-SECRET": "", "-TERM": "", "-FOO": "",
		}},
		{"terminal", nil, true, map[string]string{"TERM": "xterm"}},
		{"-e copies and sets", []string{"FOO", "NEW=1", "UNSET_ON_HOST", "HOME=/tmp"}, false,
			map[string]string{"FOO": "bar", "NEW": "1", "HOME": "/tmp", "-UNSET_ON_HOST": ""}},
		{"-e value with =", []string{"A=b=c"}, false, map[string]string{"A": "b=c"}},
	}
	for _, tt := range tests {
		env, err := guestEnv(host, tt.extra, tt.tty)
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
		if _, err := guestEnv(host, []string{bad}, false); err == nil {
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
