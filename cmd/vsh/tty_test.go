package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/internal/toolcheck"
)

// TestTTY runs vsh on a real terminal, inside tmux: it types commands with
// short pauses, pastes several lines in one chunk (go-prompt v0.2.6 would
// drop them), completes, and leaves by quit, by Ctrl-D and by SIGTERM and
// SIGQUIT, checking each time with stty -a that the terminal is sane again
// (go-prompt alone leaves it raw: -isig -icanon -echo), and that quit leaves
// no prompt behind it (go-prompt draws one more after the executor). It
// takes a lesson too: its first step comes after the shell's banner. It
// reads the screen with capture-pane.
func TestTTY(t *testing.T) {
	tmuxPath := toolcheck.Require(t, "tmux", "apt-get install tmux")
	if testing.Short() {
		t.Skip("-short: the tmux test takes a few seconds")
	}
	bin := filepath.Join(t.TempDir(), "vsh")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	tm := &tmux{t: t, path: tmuxPath, sock: fmt.Sprintf("vsh-test-%d", os.Getpid())}
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "160", "-y", "50",
		"env", "-i", "PATH=/usr/bin:/bin", "TERM=xterm-256color", "HOME="+t.TempDir(), "HISTFILE=", "PS1=$ ", "bash", "--norc", "--noprofile")
	defer tm.run("kill-server")

	startWith := func(n int, args, prompt string) {
		tm.run("send-keys", "-t", "t", "clear", "Enter")
		time.Sleep(100 * time.Millisecond)
		// The marker is printed after vsh exits, then the terminal's modes.
		tm.typeLine(fmt.Sprintf("%s%s; echo VSH_EXIT_%d=$?; stty -a", bin, args, n))
		tm.waitFor(afterLaunch(n, prompt))
	}
	start := func(n int) { startWith(n, "", `\[1\] vsh> `) }
	startEnv := func(n int, env string) {
		tm.run("send-keys", "-t", "t", "clear", "Enter")
		time.Sleep(100 * time.Millisecond)
		tm.typeLine(fmt.Sprintf("%s %s; echo VSH_EXIT_%d=$?; stty -a", env, bin, n))
		tm.waitFor(afterLaunch(n, `\[1\] vsh> `))
	}
	// quitClean checks that nothing but vsh's own output comes between the
	// quit line and the marker printed after vsh exits: no prompt.
	quitClean := func(n int) {
		t.Helper()
		screen := tm.waitFor(fmt.Sprintf(`VSH_EXIT_%d=\d+`, n))
		q := strings.LastIndex(screen, "vsh> quit")
		end := -1 // the marker's output, not the command line that prints it
		if loc := regexp.MustCompile(fmt.Sprintf(`VSH_EXIT_%d=\d`, n)).FindStringIndex(screen); loc != nil {
			end = loc[0]
		}
		if q < 0 || end < q {
			t.Fatalf("run %d: no quit line before the exit marker:\n%s", n, screen)
		}
		if between := screen[q+len("vsh> quit") : end]; strings.Contains(between, "vsh>") {
			t.Errorf("run %d: a prompt is drawn after quit:\n%s", n, screen)
		}
	}
	sane := func(n int, wantStatus int) {
		t.Helper()
		screen := tm.waitFor(fmt.Sprintf(`VSH_EXIT_%d=\d+`, n))
		m := regexp.MustCompile(fmt.Sprintf(`VSH_EXIT_%d=(\d+)`, n)).FindStringSubmatch(screen)
		if got, _ := strconv.Atoi(m[1]); got != wantStatus {
			t.Errorf("run %d: exit status %d, want %d\n%s", n, got, wantStatus, screen)
		}
		screen = tm.waitFor(`min = \d+`)
		for _, mode := range []string{"isig", "icanon", "echo", "icrnl", "opost"} {
			if regexp.MustCompile(`(^|\s)-` + mode + `(\s|$)`).MatchString(screen) {
				t.Errorf("run %d: the terminal is left with -%s:\n%s", n, mode, screen)
			}
			if !regexp.MustCompile(`(^|\s)` + mode + `(\s|$)`).MatchString(screen) {
				t.Errorf("run %d: stty -a does not show %s:\n%s", n, mode, screen)
			}
		}
	}

	// 1. Typing, pasting, completing, quit.
	start(1)
	tm.typeLine("open_device A")
	tm.waitFor(`\[1\] ibv_open_device\(A = sim0\) → ctx0`)
	tm.paste("alloc_pd ctx0\rcreate_cq ctx0\rreg_mr pd0 length=64 access=local_write\r")
	tm.waitFor(`\[2\] ibv_alloc_pd\(ctx0\) → pd0`)
	tm.waitFor(`\[3\] ibv_create_cq\(ctx0`)
	tm.waitFor(`\[4\] ibv_reg_mr\(pd0, length=64`)
	tm.typeText("create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0 max_")
	tm.waitFor(`max_send_wr=\s+send queue depth`)
	tm.run("send-keys", "-t", "t", "C-u")
	// go-prompt takes what one read returns as one key or as text: on a
	// loaded machine C-u and the next line would arrive together.
	tm.waitFor(`(?m)^\[5\] vsh> *$`)
	tm.typeLine("frobnicate")
	tm.waitFor(`error: unknown command "frobnicate"`)
	tm.typeLine("quit")
	quitClean(1)
	sane(1, 0)

	// 2. Ctrl-D on an empty line.
	start(2)
	tm.typeLine("open_device B")
	tm.waitFor(`ibv_open_device\(B = sim1\)`)
	tm.run("send-keys", "-t", "t", "C-d")
	sane(2, 0)

	// 3. SIGTERM while waiting at the prompt: go-prompt would os.Exit with
	// the terminal raw; vsh restores it and exits 128+15.
	start(3)
	tm.typeText("alloc_pd ")
	time.Sleep(200 * time.Millisecond)
	tm.signal(syscall.SIGTERM)
	tm.waitFor(`vsh: terminated; the terminal is restored`)
	sane(3, 143)

	// 4. SIGQUIT likewise.
	start(4)
	tm.signal(syscall.SIGQUIT)
	sane(4, 131)

	// 5. A lesson: the banner, then the lesson's title and first step,
	// then the prompt; quit leaves, the lesson unfinished: status 1.
	startWith(5, " lesson tour", `\[2\] vsh> `)
	screen := tm.screen()
	banner, title, goal := strings.Index(screen, "vsh devel: the verbs shell on"), strings.Index(screen, "Lesson tour: "), strings.Index(screen, "» your turn")
	if banner < 0 || title < 0 || goal < 0 || banner > title || title > goal {
		t.Errorf("run 5: the lesson's title (at %d) does not come after the shell's banner (at %d):\n%s", title, banner, screen)
	}
	tm.typeLine("devices")
	tm.waitFor(`✓ goal reached`)
	// Another lesson asks first: no, Ctrl-C, then yes typed ahead.
	tm.typeLine("lesson rc-pingpong")
	tm.waitFor(`Leave it for rc-pingpong\? \[y/N\]`)
	tm.typeLine("n")
	tm.waitFor(`» you stay at step \d+ of 9 of lesson tour\n\[4\] vsh> `)
	tm.typeLine("lesson rc-pingpong")
	tm.waitFor(`\[4\] vsh> lesson rc-pingpong\n.*\[y/N\]`)
	tm.run("send-keys", "-t", "t", "C-c")
	tm.waitFor(`» you stay at step \d+ of 9 of lesson tour\n\[5\] vsh> `)
	tm.paste("lesson rc-pingpong\ry\rdevices\r")
	tm.waitFor(`\[\d\d+\] vsh> devices`) // after rc-pingpong's own cells
	if history := tm.run("capture-pane", "-t", "t", "-p", "-J", "-S", "-400"); !regexp.MustCompile(`\[y/N\] y\n» you leave lesson tour at step \d+`).MatchString(history) {
		t.Errorf("run 5: the answer typed ahead did not leave the lesson:\n%s", history)
	}
	tm.typeLine("quit")
	quitClean(5)
	sane(5, 1)

	// 6. Ctrl-C at the prompt clears the line, as a shell's does; the
	// session goes on.
	start(6)
	tm.typeText("alloc_pd ctx9")
	tm.run("send-keys", "-t", "t", "C-c")
	time.Sleep(200 * time.Millisecond)
	tm.typeLine("open_device A")
	tm.waitFor(`\[1\] ibv_open_device\(A = sim0\) → ctx0`)
	if strings.Contains(tm.screen(), "ctx9") && strings.Contains(tm.screen(), "no device context") {
		t.Errorf("run 6: Ctrl-C did not clear the line:\n%s", tm.screen())
	}

	// 7. Ctrl-C stops each long command within a second; the prompt comes
	// back and the session goes on.
	script := filepath.Join(t.TempDir(), "long.vsh")
	if err := os.WriteFile(script, []byte("pingpong rc iters=100000000\ndevices\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.typeLine("alloc_pd ctx0")
	tm.typeLine("reg_mr pd0 length=256m")
	tm.typeLine("create_cq ctx0")
	tm.typeLine("create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0")
	tm.waitFor(`\[5\] ibv_create_qp`)
	for _, long := range []struct{ cmd, says string }{
		{"pingpong rc iters=100000000", regexp.QuoteMeta("pingpong rc stopped before its 100000000 iterations")},
		// Ctrl-C lands in a fill (which says how far it wrote) or, now
		// and then, between two (repeat says how many it ran).
		{"repeat 10000 fill mr0 0xab", "fill wrote|repeat ran [0-9]+ of its 10000 repetitions"},
		{"do pingpong uc iters=100000000; devices", regexp.QuoteMeta("pingpong uc stopped")},
		{"source " + script, regexp.QuoteMeta("source " + script + " stopped at line 1")},
		{"bench op=write iters=100000000 min=65536 max=65536", regexp.QuoteMeta("stopped at 65536 bytes")},
		{"exchange listen qp0 port=47919 wait=60s", regexp.QuoteMeta("exchange listen stopped waiting for a client on port 47919")},
	} {
		tm.typeLine(long.cmd)
		// The command's own cell number: a sourced script's commands
		// number cells of their own, so it is read, not counted.
		typed := regexp.MustCompile(`\[(\d+)\] vsh> ` + regexp.QuoteMeta(long.cmd))
		ms := typed.FindAllStringSubmatch(tm.waitWithin(typed.String(), time.Second), -1)
		cell := ms[len(ms)-1][1]
		time.Sleep(500 * time.Millisecond)
		tm.run("send-keys", "-t", "t", "C-c")
		tm.waitWithin(`\[`+cell+`\] error: .*interrupted \(Ctrl-C\)`, time.Second)
		screen := tm.waitWithin(`(?m)^\[\d+\] vsh> ?$`, time.Second) // the next prompt, empty
		if !regexp.MustCompile(long.says).MatchString(strings.Join(strings.Fields(screen), " ")) {
			t.Errorf("run 7: after Ctrl-C, %s does not say %q:\n%s", long.cmd, long.says, screen)
		}
	}
	tm.typeLine("quit")
	sane(6, 0)

	// 8. SIGHUP at the prompt: the terminal is gone; vsh restores it and
	// exits 128+1.
	start(8)
	tm.signal(syscall.SIGHUP)
	tm.waitWithin(`VSH_EXIT_8=\d+`, time.Second)
	sane(8, 129)

	// 9. SIGTERM during a long command stops it and exits within a second.
	start(9)
	tm.typeLine("pingpong rc iters=100000000")
	time.Sleep(300 * time.Millisecond)
	tm.signal(syscall.SIGTERM)
	tm.waitWithin(`VSH_EXIT_9=\d+`, time.Second)
	sane(9, 143)

	// 10. SIGHUP, then SIGTERM 50 to 150 ms later (go-prompt deadlocked
	// there), at the prompt and during a command.
	for i, delay := range []int{50, 60, 70, 80, 90, 100, 110, 120, 135, 150} {
		n := 100 + i
		start(n)
		if i%2 == 1 {
			tm.typeLine("pingpong rc iters=100000000")
			time.Sleep(200 * time.Millisecond)
		}
		pid := tm.vshPID()
		syscall.Kill(pid, syscall.SIGHUP)
		time.Sleep(time.Duration(delay) * time.Millisecond)
		syscall.Kill(pid, syscall.SIGTERM) // vsh may be gone already
		tm.waitWithin(fmt.Sprintf(`VSH_EXIT_%d=\d+`, n), time.Second)
		sane(n, 129)
	}

	// 11. A command that panics is an error of its cell; the session goes on.
	startEnv(11, "VSH_TEST_PANIC=alloc_pd")
	tm.typeLine("open_device A")
	tm.typeLine("alloc_pd ctx0")
	tm.waitFor(`\[2\] error: alloc_pd: internal error in alloc_pd: a panic for tests`)
	tm.typeLine("devices")
	tm.waitFor(`\[3\] `)
	tm.typeLine("quit")
	sane(11, 0)

	// 14. lesson play --pause at a projector: space plays the step, b goes
	// back (the session rebuilt), q stops; the terminal is restored.
	startWith(14, " lesson play tour --pause --step 3", `Enter or space: next step`)
	tm.run("send-keys", "-t", "t", "Space")
	tm.waitFor(`(?s)ibv_query_device.*max_inline_data.*Enter or space: next step`)
	tm.run("send-keys", "-t", "t", "b")
	tm.waitFor(`(?s)max_inline_data.*rebuilt for step 3.*Enter or space: next step`)
	tm.run("send-keys", "-t", "t", "q")
	tm.waitFor(`stopped where the presenter pressed q`)
	sane(14, 0)

	// 15. Ctrl-C at a pause stops the play as an interrupt: 128+2.
	startWith(15, " lesson play tour --pause", `Enter or space: next step`)
	tm.run("send-keys", "-t", "t", "C-c")
	tm.waitFor(`vsh: interrupt: lesson play stopped`)
	sane(15, 130)

	// 12. A panic outside any command (the executor, completion) ends the
	// session with the terminal restored.
	for i, where := range []string{"executor", "complete"} {
		n := 12 + i
		startEnv(n, "VSH_TEST_PANIC="+where)
		tm.typeLine("devices")
		tm.waitWithin(fmt.Sprintf(`VSH_EXIT_%d=\d+`, n), 2*time.Second)
		if !strings.Contains(tm.screen(), "vsh: internal error: a panic for tests in "+where) {
			t.Errorf("run %d: the panic is not reported:\n%s", n, tm.screen())
		}
		sane(n, 2)
	}
}

// tmux drives one tmux server of the test's own.
type tmux struct {
	t    *testing.T
	path string
	sock string
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command(tm.path, append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil && args[0] != "kill-server" {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// typeText types text as keys, without Enter.
func (tm *tmux) typeText(text string) {
	tm.run("send-keys", "-t", "t", "-l", text)
	time.Sleep(150 * time.Millisecond)
}

// typeLine types text, pauses, then presses Enter (a pause, or the two may
// arrive in one read).
func (tm *tmux) typeLine(text string) {
	tm.typeText(text)
	tm.run("send-keys", "-t", "t", "Enter")
	time.Sleep(100 * time.Millisecond)
}

// paste sends text with its line breaks in one chunk, as a terminal paste does.
func (tm *tmux) paste(text string) { tm.run("send-keys", "-t", "t", "-l", text) }

func (tm *tmux) screen() string { return tm.run("capture-pane", "-t", "t", "-p", "-J") }

// waitFor waits until the screen matches re and returns the screen.
// afterLaunch matches prompt below run n's command line, so that the
// previous run's screen, not yet cleared on a loaded machine, does not.
func afterLaunch(n int, prompt string) string {
	return fmt.Sprintf(`(?s)echo VSH_EXIT_%d=\$\?; stty -a\n.*%s`, n, prompt)
}

func (tm *tmux) waitFor(re string) string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := tm.screen()
		if rx.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q:\n%s", re, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitWithin waits at most d until the screen matches re.
func (tm *tmux) waitWithin(re string, d time.Duration) string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(d)
	for {
		s := tm.screen()
		if rx.MatchString(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen did not show %q within %s:\n%s", re, d, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signal sends sig to the vsh running in the pane.
func (tm *tmux) signal(sig syscall.Signal) {
	tm.t.Helper()
	pid := tm.vshPID()
	if err := syscall.Kill(pid, sig); err != nil {
		tm.t.Fatalf("kill %d: %v", pid, err)
	}
}

// vshPID is the vsh running in the pane: the child of the pane's shell.
func (tm *tmux) vshPID() int {
	tm.t.Helper()
	shell := strings.TrimSpace(tm.run("list-panes", "-t", "t", "-F", "#{pane_pid}"))
	data, err := os.ReadFile(fmt.Sprintf("/proc/%s/task/%s/children", shell, shell))
	if err != nil {
		tm.t.Fatalf("finding vsh under the pane's shell %s: %v", shell, err)
	}
	kids := strings.Fields(string(data))
	if len(kids) != 1 {
		tm.t.Fatalf("the pane's shell has children %v; want just vsh", kids)
	}
	pid, _ := strconv.Atoi(kids[0])
	return pid
}
