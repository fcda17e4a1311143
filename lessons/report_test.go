package lessons_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

const threeSteps = `---
id: three
title: Three steps
level: beginner
minutes: 3
version: 2.1
---

## Open

` + "```vsh" + `
open_device A
` + "```" + `
goal: Open device A.

## A CQ

` + "```vsh" + `
create_cq ctx0 cqe=4
` + "```" + `
goal: Make a CQ of 4 entries on ctx0.
predict: How many entries does the device give it? 4 | 7 | 31
answer: cq0.cqe
hint: create_cq ctx0 cqe=4.

## A PD

` + "```vsh" + `
alloc_pd ctx0
` + "```" + `
goal: Allocate a protection domain on ctx0.
`

// startThree starts the lesson threeSteps, written in dir, in a fresh
// session whose tutor reads a clock that moves 2 s a reading.
func startThree(dir string) (*shell.Shell, *lessons.Tutor, error) {
	return startLesson(dir, threeSteps)
}

// startLesson is startThree for the lesson src.
func startLesson(dir, src string) (*shell.Shell, *lessons.Tutor, error) {
	path := filepath.Join(dir, "three.md")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return nil, nil, err
	}
	sh, err := shell.New(shell.Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil },
		Plain: true, Backend: "sim (test)", Version: "test"})
	if err != nil {
		return nil, nil, err
	}
	if _, err := sh.Exec("lesson " + path); err != nil {
		sh.Close()
		return nil, nil, err
	}
	at := time.Date(2026, 1, 12, 9, 0, 0, 0, time.UTC)
	sh.Tutor().SetClock(func() time.Time { at = at.Add(2 * time.Second); return at })
	return sh, sh.Tutor(), nil
}

// TestSummaryWideTitles: the summary's columns line up on a terminal where
// a title has wide runes, and a long one is cut by the cells it takes.
func TestSummaryWideTitles(t *testing.T) {
	src := strings.Replace(threeSteps, "## Open", "## 開く", 1)
	src = strings.Replace(src, "## A CQ", "## 完了キューを四つの項目で作り、その大きさを確かめる", 1)
	src = strings.Replace(src, "## A PD", "## 🇯🇵 ❤️ A PD", 1)
	sh, tu, err := startLesson(t.TempDir(), src)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	for range 3 {
		sh.Exec("lesson skip")
	}
	sum := tu.Summary()
	col := -1
	for _, line := range strings.Split(strings.TrimRight(sum, "\n"), "\n") {
		i := strings.Index(line, "outcome")
		if i < 0 {
			i = strings.Index(line, "skipped")
		}
		if i < 0 {
			t.Fatalf("a line of the summary without its outcome: %q", line)
		}
		c := cells(line[:i])
		if col >= 0 && c != col {
			t.Errorf("the outcome column starts at cell %d here, %d above:\n%s", c, col, sum)
		}
		col = c
	}
	if !strings.Contains(sum, "完了キューを四つの項目で作り、そ…") {
		t.Errorf("the long title is not cut at 34 cells:\n%s", sum)
	}
}

// playLesson starts the lesson src and types lines; it returns what the
// session said to them all, and the tutor.
func playLesson(t *testing.T, src string, lines ...string) (string, *lessons.Tutor) {
	t.Helper()
	sh, tu, err := startLesson(t.TempDir(), src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	var out string
	for _, line := range lines {
		o, _ := sh.Exec(line)
		out += o
	}
	return out, tu
}

// TestOwnObjectsAreNotTheLessons: a learner's extra CQ, armed where the
// lesson's cq0 is, does not stand for it (the learner's cq0 did at the
// step's start), so a poll of cq0 after arming the extra one does not
// count, and the tutor names the extra CQ as the learner's own.
func TestOwnObjectsAreNotTheLessons(t *testing.T) {
	arm := lessonHead("arm", "Arm") + "open_device A\ncreate_comp_channel ctx0\n" +
		"create_cq ctx0 channel=ch0\n```\n\nArm, then poll.\n\n```vsh\nreq_notify_cq cq0\npoll_cq cq0\npoll_cq cq0\n```\n" +
		"goal: Arm cq0, then poll it twice.\nexpect: commands contains [req_notify_cq cq0, poll_cq cq0]\nexpect: calls.poll_cq cq0 >= 2\n"
	out, tu := playLesson(t, arm, "lesson next", "create_cq ctx0 channel=ch0", "poll_cq cq1", "poll_cq cq1", "req_notify_cq cq1", "poll_cq cq0",
		"lesson goal --detail")
	if step, _ := tu.Step(); strings.Contains(out, "goal reached") || step != 1 {
		t.Errorf("polling cq0 after arming cq1 reached the goal (at step %d):\n%s", step+1, out)
	}
	for _, want := range []string{"req_notify_cq your cq1, poll_cq cq0]", "cq0 is not armed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tutor does not say %q:\n%s", want, out)
		}
	}
}

// TestMadeAndDestroyedInTheStep: an object the step makes and destroys is
// named by its own handle when the step's commands are judged (it is
// paired with nothing at the step's start nor at its end).
func TestMadeAndDestroyedInTheStep(t *testing.T) {
	src := lessonHead("temp", "Temp") + "open_device A\ncreate_cq ctx0\n```\n\n" +
		"Make one, poll it, destroy it.\n\n```vsh\ncreate_cq ctx0 cqe=16\npoll_cq cq1\ndestroy_cq cq1\n```\n" +
		"goal: Make a CQ, poll it, then destroy it.\nexpect: commands contains [create_cq ctx0, poll_cq cq1, destroy_cq cq1]\n"
	out, _ := playLesson(t, src, "lesson next", "create_cq ctx0 cqe=16", "poll_cq cq1", "destroy_cq cq1")
	if !strings.Contains(out, "✓ goal reached") {
		t.Errorf("the lesson's own commands did not reach the goal:\n%s", out)
	}
}

// TestDestroyedOwnNameTaken: of two CQs alike, destroying either is the
// step's work (the pairing at the step's start was a tie, and the
// destroyed CQ is named as the one the lesson destroys), and the next
// goal names the CQ left. Of two CQs that differ, destroying the one the
// goal keeps is not: the pairing of the step's start holds, and the goal
// still names both as it did.
func TestDestroyedOwnNameTaken(t *testing.T) {
	src := func(first string) string {
		return lessonHead("two", "Two") + "open_device A\ncreate_comp_channel ctx0\ncreate_cq ctx0" + first + "\ncreate_cq ctx0\n```\n\n" +
			"Destroy the second.\n\n```vsh\ndestroy_cq cq1\n```\ngoal: Destroy cq1, keep cq0.\nexpect: commands contains [destroy_cq cq1]\n\n" +
			"Poll the other.\n\n```vsh\npoll_cq cq0\n```\ngoal: Poll cq0.\n"
	}
	out, _ := playLesson(t, src(""), "lesson next", "destroy_cq cq0")
	if !strings.Contains(out, "✓ goal reached") || !strings.Contains(out, "Poll cq1.") {
		t.Errorf("of two CQs alike, destroying the other did not reach the goal, or the next goal does not name the CQ left:\n%s", out)
	}
	out, _ = playLesson(t, src(" channel=ch0"), "lesson next", "destroy_cq cq0", "lesson goal --detail")
	for _, want := range []string{"cq0 is gone; the lesson still needs it", "goal: Destroy cq1, keep cq0.", "cq1 still exists; this step destroys it"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tutor does not say %q:\n%s", want, out)
		}
	}
}

// TestYoungerStandsForNew: a CQ the step makes stands for the learner's CQ
// made in the step, not for an identical extra one made before it.
func TestYoungerStandsForNew(t *testing.T) {
	src := lessonHead("age", "Age") + "open_device A\nalloc_pd ctx0\n```\n\n" +
		"Make a CQ, poll it.\n\n```vsh\ncreate_cq ctx0 cqe=16\npoll_cq cq0\n```\ngoal: Make a CQ and poll it.\n\n" +
		"Another, and a QP.\n\n```vsh\ncreate_cq ctx0 cqe=16\ncreate_qp pd0 type=rc send_cq=cq1 recv_cq=cq1\n```\ngoal: Make another CQ and an RC QP on it.\n"
	out, tu := playLesson(t, src, "lesson next", "create_cq ctx0 cqe=16", "create_cq ctx0 cqe=16", "poll_cq cq0",
		"create_cq ctx0 cqe=16", "create_qp pd0 type=rc send_cq=cq2 recv_cq=cq2")
	if _, done := tu.Step(); !done {
		t.Errorf("a QP on the CQ made in the step was refused:\n%s", out)
	}
}

// TestHintNamesDestroyed: lesson hint lists the step's commands with the
// learner's names of objects already destroyed in the step, not the
// lesson's, which here name another live CQ of the learner's.
func TestHintNamesDestroyed(t *testing.T) {
	src := lessonHead("down", "Down") + "open_device A\nopen_device B\n```\n\n" +
		"Two CQs.\n\n```vsh\ncreate_cq ctx0 cqe=16\ncreate_cq ctx1 cqe=16\n```\ngoal: A CQ on each device.\n\n" +
		"Both go.\n\n```vsh\ndestroy_cq cq0\ndestroy_cq cq1\n```\ngoal: Destroy both.\n"
	out, _ := playLesson(t, src, "lesson next", "create_cq ctx1 cqe=16", "create_cq ctx0 cqe=16", "destroy_cq cq1", "lesson hint", "lesson hint")
	_, list, _ := strings.Cut(out, "the lesson's commands for this step:")
	if !strings.Contains(list, "destroy_cq cq1\n    destroy_cq cq0\n") {
		t.Errorf("the hint does not name the learner's CQs (cq1 destroyed, then cq0):\n%s", out)
	}
}

// TestInterleavedCreation: QPs alike, made A, B, A, B, A, B where the
// lesson makes A's three then B's three, are paired in the order each
// side made them, not by number (the lesson's qp3, B's first, is not the
// learner's qp3, B's second), so connecting each side's i-th QPs is the
// lesson's pairing.
func TestInterleavedCreation(t *testing.T) {
	src := lessonHead("pairs", "Pairs") + twoSides + "```\n\nThree QPs a side.\n\n```vsh\nrepeat 3 create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\n" +
		"repeat 3 create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\n```\ngoal: Make three RC QPs on each side.\n\n" +
		"Connect A's i-th to B's i-th.\n\n```vsh\nrepeat 3 connect qp{i} qp{i+3}\n```\ngoal: Connect A's QP i to B's QP i.\n"
	out, tu := playLesson(t, src, "lesson next",
		"repeat 3 do create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0; create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"connect qp0 qp1", "connect qp2 qp3", "connect qp4 qp5")
	if _, done := tu.Step(); !done {
		t.Errorf("connecting each side's i-th QP was refused:\n%s", out)
	}
}

// TestExperimentSettings: a bench is judged by every setting it runs
// with, those left at their defaults too (bench and pingpong record them
// all): another tx_depth or link delay than the step's is another
// experiment, which the tutor names at once, and the default given
// explicitly is the same one; runs of the step may come in any order.
func TestExperimentSettings(t *testing.T) {
	src := lessonHead("exp", "Exp") + "open_device A\n```\n\n" +
		"Two runs.\n\n```vsh\nbench op=write mode=bw min=64 max=64 iters=100 chart=off\nbench op=write mode=bw min=64 max=64 iters=100 tx_depth=1 chart=off\n```\n" +
		"goal: Run it with the default depth, then with one outstanding.\n\n" +
		"Far.\n\n```vsh\nbench op=write mode=lat min=64 max=128 lat_iters=10 delay=10us chart=off\n```\ngoal: Measure over 10 µs cables.\n"
	one := "bench op=write mode=bw min=64 max=64 iters=100 tx_depth=1 chart=off"
	out, tu := playLesson(t, src, "lesson next", one, one)
	if step, _ := tu.Step(); step != 1 {
		t.Errorf("two runs with tx_depth=1 passed a step that runs the default 128 (at step %d):\n%s", step+1, out)
	}
	if !strings.Contains(out, "yours ran it with tx_depth=1, not 128") {
		t.Errorf("the tutor does not name the other tx_depth:\n%s", out)
	}
	out, tu = playLesson(t, src, "lesson next", one, "bench op=write mode=bw min=64 max=64 iters=100 tx_depth=128 chart=off",
		"bench op=write mode=lat min=64 max=128 lat_iters=10 chart=off")
	if step, _ := tu.Step(); step != 2 || !strings.Contains(out, "yours ran it with delay=1µs, not 10µs") {
		t.Errorf("the runs in the other order with tx_depth=128 given did not pass, or the run without delay= did:\n%s", out)
	}
	out, tu = playLesson(t, src, "lesson next", "bench A B op=write mode=bw min=64 max=64 iters=100 clock=virtual chart=off", one)
	if step, _ := tu.Step(); step != 2 {
		t.Errorf("the devices and the clock spelled out as their defaults did not pass:\n%s", out)
	}
	out, tu = playLesson(t, src, "lesson next", "bench op=write mode=bw min=64 max=128 iters=100 chart=off")
	if !strings.Contains(out, "yours ran it with max=128, not 64") {
		t.Errorf("a sweep to another size is not named:\n%s", out)
	}
	// A PSN is named in hex, as the lesson and the programs write it.
	pp := lessonHead("ppd", "Ppd") + rcPair + "Print.\n\n```vsh\npp_dest qp0 psn=0x1a2b3c gid_index=1\n```\ngoal: Print A's address message.\n"
	out, _ = playLesson(t, pp, "lesson next", "pp_dest qp0 psn=0x111111 gid_index=1")
	if !strings.Contains(out, "with psn=0x111111, not 0x1a2b3c") {
		t.Errorf("another PSN is not named in hex:\n%s", out)
	}
	// The path MTU compares as the sweep runs at it: the ports' active
	// MTU (1024 on a 1500-byte netdev, 4096 on 9000), or mtu= below it.
	mtu := lessonHead("mtu", "Mtu") + "open_device A\n```\n\n" +
		"Default.\n\n```vsh\nbench op=write mode=lat min=64 max=64 lat_iters=10 chart=off\n```\ngoal: Measure.\n\n" +
		"Jumbo.\n\n```vsh\nbench op=write mode=lat min=64 max=64 lat_iters=10 mtu=4096 netdev_mtu=9000 chart=off\n```\ngoal: Measure with jumbo frames.\n"
	for _, runs := range [][2]string{{"mtu=1024", "netdev_mtu=9000"}, {"mtu=1024 netdev_mtu=9000", "mtu=4096 netdev_mtu=9001"}} {
		out, tu = playLesson(t, mtu, "lesson next", "bench op=write mode=lat min=64 max=64 lat_iters=10 "+runs[0]+" chart=off",
			"bench op=write mode=lat min=64 max=64 lat_iters=10 "+runs[1]+" chart=off")
		if step, done := tu.Step(); !done {
			t.Errorf("%q for the default run, then %q for the jumbo one, did not pass (at step %d):\n%s", runs[0], runs[1], step+1, out)
		}
	}
	out, tu = playLesson(t, mtu, "lesson next", "lesson skip", "bench op=write mode=lat min=64 max=64 lat_iters=10 mtu=4096 chart=off")
	if _, done := tu.Step(); done || !strings.Contains(strings.Join(strings.Fields(out), " "), "mtu=1024 (asked for 4096, lowered by the run), not 4096") {
		t.Errorf("mtu=4096 on a 1500-byte netdev (run at 1024) passed for the jumbo run, or was not named:\n%s", out)
	}
}

// TestWireBytesNotByCPU: bytes a WRITE should have carried, written on
// both sides by fill after a WRITE that carried zeros, do not pass for the
// WRITE's; clearing the target before the WRITE is no such thing.
func TestWireBytesNotByCPU(t *testing.T) {
	src := lessonHead("wr", "Wr") + rcPair +
		"Write.\n\n```vsh\nfill mr0 \"payload!\"\npost_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1\npoll_cq cq0\n```\ngoal: WRITE payload! into B's mr1.\n"
	for _, fills := range [][]string{{`fill mr0 "payload!"`, `fill mr1 "payload!"`}, {`do fill mr0 "payload!"; fill mr1 "payload!"; show nothing`}} {
		out, tu := playLesson(t, src, append([]string{"lesson next", "post_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1", "poll_cq cq0"}, fills...)...)
		if _, done := tu.Step(); done || !strings.Contains(out, " was written by fill at [") {
			t.Errorf("a WRITE of zeros, then %q, passed or was not named:\n%s", fills, out)
		}
	}
	out, tu := playLesson(t, src, "lesson next", "fill mr1 0x00", `fill mr0 "payload!"`, "post_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1", "poll_cq cq0")
	if _, done := tu.Step(); !done {
		t.Errorf("clearing B's buffer before the WRITE was refused:\n%s", out)
	}
}

// TestStaleRKey: a WRITE with a key no MR has is compared by where its
// address falls and which MR its key names: the right address with a
// stale rkey is not B's own rkey with a wrong address.
func TestStaleRKey(t *testing.T) {
	src := lessonHead("rkey", "Rkey") + rcPair +
		"Stale.\n\n```vsh\npost_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=mr1 rkey=0x1234\npoll_cq cq0\n```\n" +
		"goal: WRITE 8 bytes to the start of B's buffer with the stale rkey 0x1234.\nexpect: cq0 completions == [IBV_WC_REM_ACCESS_ERR]\n"
	for _, tc := range []struct {
		post string
		ok   bool
	}{
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=mr1 rkey=0x1234", true},
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=mr1 rkey=0x4321", true}, // another stale key
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=0x10 rkey=mr1", false},
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=mr1+4096 rkey=mr1", false},
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=0x10 rkey=0x1234", false},
		{"post_send qp0 opcode=rdma_write mr=mr0 length=8 remote_addr=mr1 rkey=mr0", false},
	} {
		out, tu := playLesson(t, src, "lesson next", tc.post, "poll_cq cq0")
		if _, done := tu.Step(); done != tc.ok {
			t.Errorf("%s: solved %v, want %v:\n%s", tc.post, done, tc.ok, out)
		}
	}
}

// TestWireBytesCellWritesPart: where the step's cell itself writes part
// of a buffer the wire fills, only those bytes are the learner's to write
// too; a SEND of zeros, then fill over the rest, is no SEND.
func TestWireBytesCellWritesPart(t *testing.T) {
	src := lessonHead("part", "Part") + rcPair +
		"Send.\n\n```vsh\npost_recv qp1 mr=mr1 length=8\nfill mr1 \"zz\" length=2\nfill mr0 \"payload!\"\npost_send qp0 mr=mr0 length=8\npoll_cq cq1\n```\n" +
		"goal: B receives payload!; its first two bytes, written while the receive waits, are overwritten.\n"
	for _, tc := range []struct {
		lines []string
		ok    bool
	}{
		{[]string{"post_recv qp1 mr=mr1 length=8", `fill mr1 "zz" length=2`, `fill mr0 "payload!"`, "post_send qp0 mr=mr0 length=8", "poll_cq cq1"}, true},
		{[]string{`fill mr0 "payload!"`, "post_recv qp1 mr=mr1 length=8", "post_send qp0 mr=mr0 length=8", "poll_cq cq1", `fill mr1 "zz" length=2`, `fill mr1 "payload!" length=2`}, true},
		{[]string{"post_recv qp1 mr=mr1 length=8", "post_send qp0 mr=mr0 length=8", "poll_cq cq1", `fill mr1 "payload!" length=8`, `fill mr0 "payload!"`}, false},
		{[]string{"post_recv qp1 mr=mr1 length=8", "post_send qp0 mr=mr0 length=8", "poll_cq cq1", `fill mr1 "pa" length=2`, `fill mr1 "yload!" offset=2 length=6`}, false},
	} {
		out, tu := playLesson(t, src, append([]string{"lesson next"}, tc.lines...)...)
		if _, done := tu.Step(); done != tc.ok {
			t.Errorf("%q: solved %v, want %v:\n%s", tc.lines, done, tc.ok, out)
		} else if !tc.ok && !strings.Contains(out, "mr1 was written by fill at [") {
			t.Errorf("%q: refused without naming the fill into mr1:\n%s", tc.lines, out)
		}
	}
}

// TestWireBytesAcrossSteps: a receive posted in one step is still the
// destination of the bytes the next step compares: filling its buffer
// there with the CPU, after a SEND of zeros, is not the SEND. Once the
// receive's completion is polled the buffer is the program's again.
func TestWireBytesAcrossSteps(t *testing.T) {
	src := lessonHead("rx", "Rx") + rcPair +
		"Receive.\n\n```vsh\npost_recv qp1 mr=mr1 length=8\n```\ngoal: Post a receive on B.\n\n" +
		"Send.\n\n```vsh\nfill mr0 \"payload!\"\npost_send qp0 mr=mr0 length=8\npoll_cq cq1\n```\ngoal: SEND payload! to B.\n\n" +
		"Again.\n\n```vsh\nfill mr1 0x00\npost_recv qp1 mr=mr1 length=8\nfill mr0 \"second!!\"\npost_send qp0 mr=mr0 length=8\npoll_cq cq1\n```\ngoal: Clear B's buffer and SEND second!!.\n"
	out, tu := playLesson(t, src, "lesson next", "post_recv qp1 mr=mr1 length=8",
		"post_send qp0 mr=mr0 length=8", "poll_cq cq1", `fill mr1 "payload!"`)
	if i, done := tu.Step(); done || i != 2 || !strings.Contains(out, "mr1 was written by fill at [") {
		t.Errorf("a SEND of zeros, then fill into the buffer of a receive posted the step before, passed or was not named:\n%s", out)
	}
	out, tu = playLesson(t, src, "lesson next", "post_recv qp1 mr=mr1 length=8",
		`fill mr0 "payload!"`, "post_send qp0 mr=mr0 length=8", "poll_cq cq1",
		"fill mr1 0x00", "post_recv qp1 mr=mr1 length=8", `fill mr0 "second!!"`, "post_send qp0 mr=mr0 length=8", "poll_cq cq1")
	if _, done := tu.Step(); !done {
		t.Errorf("clearing a buffer whose receive was polled the step before was refused:\n%s", out)
	}
}

// TestCPUWritesBeforeTheWire: on the shipped lessons' own steps, writing
// a buffer with the CPU before the work in flight into it lands (or where
// nothing can land yet) is no fake: the wire's bytes still decide. Writing
// a SEND's buffer after posting it is: the wire carries the old bytes.
func TestCPUWritesBeforeTheWire(t *testing.T) {
	tests := []struct {
		lesson, goal string   // the step, by the start of its goal
		before       []string // typed before the step's own commands
		after        []string // typed after them; when given, instead of them
		ok           bool
	}{
		{"srq-pingpong", "Create sixteen RC QPs", []string{"fill mr0 0x00", "fill mr1 0x00"}, nil, true},
		{"rc-pingpong", "Run rounds 4 to 6", []string{"fill mr1 0x00"}, nil, true},
		{"rc-pingpong", "Round 1, the client's move", []string{"fill mr0 0x7b"}, nil, true},
		{"ud-pingpong", "Run rounds 2 to 4", []string{"fill mr1 0x00 length=40"}, nil, true},
		{"write-imm", "Post the missing receive", []string{"fill mr1 0x00 offset=512 length=8"}, nil, true},
		{"wire", "Deliver one packet", []string{"fill mr1 0x00"}, nil, true},
		{"wire", "Mark \"first\"", []string{"post_recv qp1 mr=mr1 length=4096", "post_send qp0 mr=mr0 length=4096"},
			[]string{`fill mr0 "first"`, `fill mr0 "last!" offset=4091`}, false},
		// Bytes of the buffer no work takes: the notice after the WRITE.
		{"write-imm", "B posts a receive at offset 2048", nil, []string{"post_recv qp1 mr=mr1 offset=2048 length=64 wr_id=10",
			`fill mr0 "payload!"`, "post_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1 flags=0", `fill mr0 "done" offset=8`,
			"post_send qp0 mr=mr0 offset=8 length=4", "poll_cq cq0", "poll_cq cq1"}, true},
		// A "! " line that succeeds still wrote: the WRITE carried X's.
		{"write-read", "RDMA WRITE \"hello, B\"", nil, []string{`fill mr0 "XXXXXXXX"`, "post_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1",
			"poll_cq cq0", "poll_cq cq1", `! fill mr1 "hello, B"`, `! fill mr0 "hello, B"`}, false},
		// A READ's source, written after the READ was posted and before
		// the fabric delivered it.
		{"write-read", "Fill B's whole buffer with 0x5a", nil, []string{"fabric step", "post_send qp0 opcode=rdma_read mr=mr0 remote=mr1",
			"fill mr1 0x5a", "fabric auto", "run", "poll_cq cq0"}, false},
		// A do line: the fill comes before the send that takes its bytes.
		{"qp-types", "Post a receive of B's whole 4096-byte mr1 on qp1, send", nil, []string{`do post_recv qp1 mr=mr1 length=4096; fill mr0 "over RC"; post_send qp0 mr=mr0 length=7; poll_cq cq0; poll_cq cq1`}, true},
	}
	for _, tc := range tests {
		l, ok := lessons.Find(tc.lesson)
		if !ok {
			t.Fatalf("no lesson %s", tc.lesson)
		}
		src, err := lessons.Source(l.Name)
		if err != nil {
			t.Fatal(err)
		}
		at := -1
		for i, st := range l.Steps {
			if st.Cell != nil && strings.HasPrefix(st.Cell.Goal, tc.goal) {
				at = i
				break
			}
		}
		if at < 0 {
			t.Fatalf("%s: no step whose goal starts %q", tc.lesson, tc.goal)
		}
		sh, tu, err := startLesson(t.TempDir(), string(src))
		if err != nil {
			t.Fatal(err)
		}
		for range 40 {
			if i, _ := tu.Step(); i >= at {
				break
			}
			sh.Exec("lesson skip")
		}
		lines := append([]string(nil), tc.before...)
		if tc.after == nil {
			for _, c := range l.Steps[at].Cell.Commands {
				if b := c.Bare(); !strings.HasPrefix(b, "#") {
					lines = append(lines, b)
				}
			}
		}
		lines = append(lines, tc.after...)
		var out string
		for _, line := range lines {
			o, _ := sh.Exec(line)
			out += o
		}
		i, _ := tu.Step()
		if reached := i > at; reached != tc.ok || !tc.ok && !strings.Contains(out, " was written by fill at [") || tc.ok && strings.Contains(out, "out of reach") {
			t.Errorf("%s, %q with %q before and %q after: reached %v, want %v:\n%s", tc.lesson, tc.goal, tc.before, tc.after, reached, tc.ok, out[max(0, len(out)-1500):])
		}
		sh.Close()
	}
}

// TestStepCommandsBounded: past MaxStepCommands commands in one step the
// tutor judges no more of them (each verdict reads them all), says so
// once, and lesson reset starts the step over.
func TestStepCommandsBounded(t *testing.T) {
	src := lessonHead("many", "Many") + "open_device A\n```\n\n" +
		"A PD.\n\n```vsh\nalloc_pd ctx0\n```\ngoal: Allocate a PD on ctx0.\n"
	lines := []string{"lesson next"}
	for range lessons.MaxStepCommands + 5 {
		lines = append(lines, "devices")
	}
	out, tu := playLesson(t, src, append(lines, "alloc_pd ctx0")...)
	if _, done := tu.Step(); done || strings.Count(out, "the tutor judges no more of them") != 1 {
		t.Errorf("past %d commands the step was judged, or the tutor did not say so once", lessons.MaxStepCommands)
	}
	// Past it, the step's prediction can no longer be made: the tutor no
	// longer sees whether a verb ran before it.
	pred := lessonHead("pred", "Pred") + "open_device A\nalloc_pd ctx0\ncreate_cq ctx0\n```\n\n" +
		"A QP.\n\n```vsh\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\n```\ngoal: Make an RC QP.\n" +
		"predict: In which state is the new QP? IBV_QPS_RESET | IBV_QPS_INIT\nanswer: qp0.state\n"
	pad := []string{"lesson next"}
	for range lessons.MaxStepCommands + 1 {
		pad = append(pad, "lesson goal")
	}
	out, _ = playLesson(t, pred, append(pad, "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "predict IBV_QPS_RESET")...)
	if strings.Contains(out, "your prediction") { // refused: "too late", as an error
		t.Errorf("a prediction made past the commands the tutor judges was taken:\n%s", out[max(0, len(out)-2000):])
	}
	out, tu = playLesson(t, src, append(lines, "lesson reset", "alloc_pd ctx0")...)
	if _, done := tu.Step(); !done {
		t.Errorf("after lesson reset the step's command was not judged:\n%s", out[max(0, len(out)-2000):])
	}
	// The report counts every command typed at the step, judged or not.
	if r := tu.Report(); len(r.Steps) != 1 || r.Steps[0].Attempts != lessons.MaxStepCommands+6 {
		t.Errorf("report: %+v; want %d attempts at the step", r.Steps, lessons.MaxStepCommands+6)
	}
}

// TestRTRAttributesFixed: a QP taken to RTR with a wrong path keeps it
// (there is no RTR → RTR): the tutor says how to mend that.
func TestRTRAttributesFixed(t *testing.T) {
	src := lessonHead("rtr", "Rtr") + twoSides + "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\ncreate_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\n" +
		"modify_qp qp0 state=init pkey_index=0 port=1 access=0\n```\n\nRTR.\n\n```vsh\n" +
		"modify_qp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=qp1 sgid_index=1 hop_limit=1\n```\ngoal: Take qp0 to RTR.\n"
	out, _ := playLesson(t, src, "lesson next",
		"modify_qp qp0 state=rtr path_mtu=1024 dest_qpn=qp1 rq_psn=0 max_dest_rd_atomic=1 min_rnr_timer=12 dgid=qp1 sgid_index=0 hop_limit=1")
	if !strings.Contains(out, "modify_qp cannot change it in RTR") {
		t.Errorf("the tutor does not say a QP in RTR keeps its path:\n%s", out)
	}
}

// TestExtraInline: an 8-byte WRITE sent inline where the step's is not
// inline is the same work; a WRITE not inline where the step's is, is not.
func TestExtraInline(t *testing.T) {
	head := lessonHead("in", "In") + rcPair +
		"Write.\n\n```vsh\npost_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1%s\npoll_cq cq0\n```\ngoal: WRITE 8 bytes into B's mr1.\n"
	tests := []struct {
		cell, learner string
		ok            bool
	}{
		{"", " flags=signaled,inline", true},
		{" flags=signaled,inline", "", false},
		{"", " flags=signaled,fence", false},
	}
	// A READ sent inline is not the same work (rxe drops its gather list).
	read := strings.Replace(head, "opcode=rdma_write mr=mr0 length=8 remote=mr1%s", "opcode=rdma_read mr=mr0 length=8 remote=mr1%s", 1)
	read = strings.Replace(read, "access=local_write,remote_write\ncreate_qp", "access=local_write,remote_read\ncreate_qp", 1)
	read = strings.Replace(read, "connect qp0 qp1 access=remote_write", "connect qp0 qp1 access=remote_read", 1)
	out, tu := playLesson(t, fmt.Sprintf(read, ""), "lesson next", "post_send qp0 opcode=rdma_read mr=mr0 length=8 remote=mr1 flags=signaled,inline", "poll_cq cq0")
	if _, done := tu.Step(); done {
		t.Errorf("a READ sent inline passed for one that is not:\n%s", out)
	}
	for _, tc := range tests {
		out, tu := playLesson(t, fmt.Sprintf(head, tc.cell), "lesson next", "post_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1"+tc.learner, "poll_cq cq0")
		if _, done := tu.Step(); done != tc.ok {
			t.Errorf("cell%s, learner%s: reached %v, want %v:\n%s", tc.cell, tc.learner, done, tc.ok, out)
		}
	}
}

// lessonHead starts a test lesson: its front matter and the opening of
// its auto cell.
func lessonHead(id, title string) string {
	return "---\nid: " + id + "\ntitle: " + title + "\nlevel: beginner\nminutes: 1\n---\n\n```vsh auto\n"
}

// twoSides is the start of an auto cell: devices A and B, a PD and a CQ
// on each.
const twoSides = "open_device A\nopen_device B\nalloc_pd ctx0\nalloc_pd ctx1\ncreate_cq ctx0\ncreate_cq ctx1\n"

// rcPair is the rest of an auto cell: A's qp0 and B's qp1 connected, B's
// mr1 open to remote writes.
const rcPair = twoSides +
	"reg_mr pd0 length=4096 access=local_write\nreg_mr pd1 length=4096 access=local_write,remote_write\n" +
	"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\ncreate_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\nconnect qp0 qp1 access=remote_write\n```\n\n"

// cells is how many terminal cells the test's titles take, counted by
// hand: kana, kanji and CJK punctuation two, a flag (two regional
// indicators) two, ❤ with its emoji selector two, the rest one.
func cells(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r >= 0x3000 && r <= 0x9fff:
			n += 2
		case r >= 0x1f1e6 && r <= 0x1f1ff: // a regional indicator: half a flag
			n++
		case r == 0x2764:
			n += 2
		case r == 0xfe0f:
		default:
			n++
		}
	}
	return n
}

// TestTutorReport: what the report says of each step — outcome, commands
// typed, hints, resets, time, the prediction — and when the lesson counts
// as complete.
func TestTutorReport(t *testing.T) {
	sh, tu, err := startThree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	progress := 0
	tu.OnProgress(func() { progress++ })
	for _, line := range []string{
		"open_device Z", "lesson hint", "lesson hint", "open_device A", // step 1: after the commands were shown
		"predict 31", "create_cq ctx9 cqe=4", "lesson reset", "create_cq ctx0 cqe=4", // step 2: a wrong prediction, the hint given after a failure, a reset
		"lesson skip", // step 3
	} {
		sh.Exec(line)
	}
	r := tu.Report()
	if r.Schema != lessons.ReportSchema || r.Lesson.ID != "three" || r.Lesson.Version != "2.1" || len(r.Lesson.SHA256) != 64 ||
		r.Started != "2026-01-12T09:00:02Z" || r.Complete {
		t.Errorf("report header: %+v", r)
	}
	type got struct {
		outcome                 string
		attempts, hints, resets int
	}
	want := []got{{lessons.OutcomeTutor, 2, 2, 0}, {lessons.OutcomeSolved, 2, 1, 1}, {lessons.OutcomeSkipped, 0, 0, 0}}
	if len(r.Steps) != len(want) {
		t.Fatalf("%d steps in the report; want %d", len(r.Steps), len(want))
	}
	for i, s := range r.Steps {
		if g := (got{s.Outcome, s.Attempts, s.Hints, s.Resets}); g != want[i] || s.Seconds <= 0 || s.Step != i+1 {
			t.Errorf("step %d: %+v (%v s); want %+v", s.Step, g, s.Seconds, want[i])
		}
	}
	p := r.Steps[1].Predictions
	if len(p) != 1 || p[0].Answer == nil || *p[0].Answer != "31" || p[0].Observed == nil || *p[0].Observed != "7" || p[0].Right == nil || *p[0].Right {
		t.Errorf("the prediction: %+v", p)
	}
	if progress == 0 {
		t.Error("OnProgress's function was never called")
	}
	if !strings.Contains(tu.Summary(), "A CQ   solved") {
		t.Errorf("the summary:\n%s", tu.Summary())
	}
	// Solved by the learner throughout: complete.
	sh2, tu2, err := startThree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sh2.Close()
	for _, line := range []string{"open_device A", "predict 7", "create_cq ctx0 cqe=4", "alloc_pd ctx0"} {
		sh2.Exec(line)
	}
	if r := tu2.Report(); !tu2.Complete() || !r.Complete || *r.Steps[1].Predictions[0].Right != true {
		t.Errorf("a lesson solved throughout: complete %v, %+v", tu2.Complete(), r.Steps)
	}
}

func ExampleTutor_Report() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	sh, tu, err := startThree(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sh.Close()
	for _, line := range []string{"open_device A", "predict 7", "create_cq ctx0 cqe=4", "lesson skip"} {
		sh.Exec(line)
	}
	r := tu.Report()
	fmt.Println(r.Schema, r.Lesson.ID, "complete:", r.Complete)
	for _, s := range r.Steps {
		fmt.Printf("step %d %s: %s, %d command(s), %.0f s\n", s.Step, s.Title, s.Outcome, s.Attempts, s.Seconds)
		for _, p := range s.Predictions {
			fmt.Printf("  %s you said %s; it was %s\n", p.Question, *p.Answer, *p.Observed)
		}
	}
	// Output:
	// vsh-lesson-report/1 three complete: false
	// step 1 Open: solved, 1 command(s), 2 s
	// step 2 A CQ: solved, 1 command(s), 2 s
	//   How many entries does the device give it? you said 7; it was 7
	// step 3 A PD: skipped, 0 command(s), 4 s
}

// TestPostsShortNotLost: a calls.post_send count below its goal, with
// every work request posted, is out of reach only where another call
// would post more: not where the step's own last post fails (a refused
// post counts and posts nothing), nor in a step judged by expectations.
func TestPostsShortNotLost(t *testing.T) {
	full := lessonHead("full", "Full") + rcPair + "Fill.\n\n```vsh\npost_send qp0 mr=mr0 length=8 count=31\n! post_send qp0 mr=mr0 length=8\n```\n" +
		"goal: Fill qp0's send queue, then try one more.\nexpect: error == ENOMEM\nexpect: calls.post_send == 2\n"
	loose := lessonHead("loose", "Loose") + rcPair + "Two.\n\n```vsh\npost_recv qp1 mr=mr1 length=64 count=2\npost_send qp0 mr=mr0 length=8\npost_send qp0 mr=mr0 length=8\npoll_cq cq0 n=2 wait=1s\n```\n" +
		"goal: Two receives, two sends in two calls, then poll.\njudge: expect\nexpect: calls.post_send == 2\nexpect: commands contains [post_recv qp1, post_send qp0]\nexpect: cq0 completions.count == 2\n"
	for _, tc := range []struct {
		name, src string
		lines     []string
	}{
		{"a failing post to come", full, []string{"lesson next", "post_send qp0 mr=mr0 length=8 count=31", "post_send qp0 mr=mr0 length=8"}},
		{"judged by expectations", loose, []string{"lesson next", "post_recv qp1 mr=mr1 length=64 count=2", "post_send qp0 mr=mr0 length=8",
			"post_send qp0 mr=mr0 length=8", "poll_cq cq0 n=2 wait=1s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, tu := playLesson(t, tc.src, tc.lines...)
			if strings.Contains(out, "out of reach") {
				t.Errorf("said out of reach:\n%s", out)
			}
			if _, done := tu.Step(); !done {
				t.Errorf("not done:\n%s", out)
			}
		})
	}
}
