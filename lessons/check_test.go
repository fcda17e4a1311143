package lessons_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

const goodHead = "---\nid: t\ntitle: T\nlevel: beginner\nminutes: 1\n---\n"

// checkTests are malformed lessons and what vsh lesson check says about
// them: each message carries its line.
// wridLesson is a lesson whose last step posts wr_id 7 and 3; its goal:
// and expect: lines follow.
const wridLesson = goodHead + "```vsh auto\n" + twoSides +
	"reg_mr pd0 length=64 access=local_write\nreg_mr pd1 length=64 access=local_write\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\n" +
	"create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\nconnect qp0 qp1\n```\n\n```vsh\npost_recv qp1 mr=mr1 wr_id=7\npost_send qp0 mr=mr0 wr_id=3\npoll_cq cq1\n```\n"

var checkTests = []struct {
	name string
	src  string
	want []string // each must appear in the errors
}{
	{"no front matter", "# hello\n", []string{"x.md:1: a lesson starts with front matter"}},
	{"unclosed front matter", "---\nid: t\n", []string{"x.md:1: front matter: no closing"}},
	{"missing keys", "---\nid: t\n---\nprose\n", []string{
		"x.md:3: front matter: title: is missing", "x.md:3: front matter: level: is missing", "x.md:3: front matter: minutes: is missing"}},
	{"bad values", "---\nid: Bad_ID\ntitle: T\nlevel: expert\nminutes: many\nneeds: stepping, teleport\nsumary: x\n---\nprose\n", []string{
		`x.md:2: front matter: id "Bad_ID"`, `x.md:4: front matter: level "expert": one of beginner, intermediate, advanced`,
		`x.md:5: front matter: minutes "many"`, `x.md:6: front matter: needs: unknown capability "teleport"`,
		`x.md:7: front matter: unknown key "sumary" (did you mean summary?)`}},
	{"duplicate key", "---\nid: t\nid: u\ntitle: T\nlevel: beginner\nminutes: 1\n---\nprose\n", []string{
		"x.md:3: front matter: id is given twice (first at line 2)"}},
	{"no steps", goodHead, []string{"x.md:6: no steps"}},
	{"cell without goal", goodHead + "Do it.\n\n```vsh\nopen_device A\n```\n\nMore.\n", []string{
		"x.md:9: the learner's cell has no goal: line"}},
	{"goal cut off by a blank line", goodHead + "```vsh\nopen_device A\n```\n\ngoal: Open A.\n", []string{
		"x.md:7: the learner's cell has no goal: line: the goal: at line 11 is cut off from it by the blank line or prose before it",
		"x.md:11: goal: belongs right after a ```vsh cell's closing fence"}},
	{"goal on an auto cell", goodHead + "```vsh auto\nopen_device A\n```\ngoal: Open A.\n", []string{
		"x.md:10: goal: belongs to a cell the learner performs"}},
	{"unknown hint kind", goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\nhint(typ): rc\n", []string{
		"x.md:11: hint(typ): unknown kind of difference (did you mean type?)"}},
	{"unknown judge", goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\njudge: loose\n", []string{
		`x.md:11: judge: "loose": judge: expect judges the step by its expect: lines alone`}},
	{"judge by no expect", goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\njudge: expect\n", []string{
		"x.md:7: judge: expect judges the step by its expect: lines alone, and the cell has none"}},
	{"packets without trace", goodHead + "```vsh\nopen_device A\n```\nexpect: packets.count == 0\n", []string{
		"x.md:10: expect: packets.count == 0 counts packets, which only a backend with a trace shows"}},
	{"unclosed cell", goodHead + "```vsh\nopen_device A\n", []string{"x.md:7: the ```vsh cell opened here is never closed"}},
	{"empty cell", goodHead + "```vsh\n```\nexpect: handles == []\n", []string{"x.md:7: the ```vsh cell is empty"}},
	{"unknown cell option", goodHead + "```vsh later\nopen_device A\n```\n", []string{`x.md:7: ` + "```vsh later: unknown cell option \"later\""}},
	{"stray expect", goodHead + "Prose.\n\nexpect: qp0.state == RTS\n", []string{
		"x.md:9: expect: belongs right after a ```vsh cell's closing fence; no ```vsh cell comes before it"}},
	{"expect after a blank line", goodHead + "```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n\nhint: too late\n", []string{
		"x.md:12: hint: belongs right after a ```vsh cell's closing fence; a blank line or prose ends the expect: and hint: lines of the cell closed at line 9"}},
	{"misspelled directives", goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\nExpect: ctx0.device == A\n\n```vsh\nopen_device B\n```\n" +
		"goal: Open B.\nexpects: ctx1.device == B\n\n```vsh\nalloc_pd ctx0\n```\ngoal: A PD.\nhnit: alloc_pd\n", []string{
		`x.md:11: "Expect:" is not a line the tutor reads, and as prose it would show the learner what it says; did you mean expect:?`,
		`x.md:17: "expects:" is not a line the tutor reads`, `x.md:23: "hnit:" is not a line the tutor reads, and as prose it would show the learner what it says; did you mean hint:?`}},
	{"a hint's kind spaced or bracketed", goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\nhint (type): open_device A\nexpect: ctx0.device == A\n\n" +
		"```vsh\nopen_device B\n```\ngoal: Open B.\nhint[type]: open_device B\nexpect: ctx1.device == B\n", []string{
		`x.md:11: "hint (type):" is not a line the tutor reads, and as prose it would show the learner what it says; did you mean hint:?`,
		`x.md:18: "hint[type]:" is not a line the tutor reads`}},
	{"bad expectation", goodHead + "```vsh\nopen_device A\n```\nexpect: qp0.statee == RTS\n", []string{
		`x.md:10: expect: a queue pair has no field "statee" (did you mean state?)`}},
	{"bad value", goodHead + "```vsh\nopen_device A\n```\nexpect: qp0.state == RUNNING\n", []string{
		`x.md:10: expect: "RUNNING" is not a QP state (RTS)`}},
	{"no operator", goodHead + "```vsh\nopen_device A\n```\nexpect: qp0.state is RTS\n", []string{
		`x.md:10: expect: "qp0.state is RTS" has no operator`}},
	{"failure unmarked", goodHead + "```vsh\nmodify_qp qp0 state=rtr\n```\nexpect: error == EINVAL\n", []string{
		"x.md:10: expect: error == EINVAL, but no command of the cell is marked \"! \""}},
	{"mark without error expectation", goodHead + "```vsh\n! modify_qp qp0 state=rtr\n```\nexpect: handles == []\n", []string{
		"x.md:7: a command of this cell is marked \"! \" but no expect: says which error"}},
	{"needs in the prose", goodHead + "Prose.\nneeds: two-devices\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:8: needs: in the lesson's body goes on the line right under a ## heading"}},
	{"needs after a cell", goodHead + "## S\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\nneeds: two-devices\n", []string{
		"x.md:13: needs: in the lesson's body goes on the line right under a ## heading"}},
	{"section needs unknown", goodHead + "## S\nneeds: two-device\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		`x.md:8: needs: unknown capability "two-device" (did you mean two-devices?)`}},
	{"section needs empty", goodHead + "## S\nneeds:\n\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:8: needs: is empty"}},
	{"section needs what the lesson needs", "---\nid: t\ntitle: T\nlevel: beginner\nminutes: 1\nneeds: ud\n---\n## S\nneeds: ud, srq\n" +
		"```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:9: needs: ud is needed by the whole lesson already"}},
	{"section needs twice", goodHead + "## S\nneeds: srq\nneeds: ud\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		`x.md:9: needs: is given twice for section "S" (first at line 8)`}},
	{"section needs without steps", goodHead + "## S\nneeds: srq\n\nProse only.\n\n## T\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		`x.md:8: needs: section "S" has no step to skip`}},
	{"shipped id", "---\nid: tour\ntitle: T\nlevel: beginner\nminutes: 1\n---\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:2: id tour is the id of a lesson that ships with vsh (lessons/tour.md): lesson tour runs that one"}},
	{"commands with a wildcard, twice, 01", goodHead + "```vsh\nopen_device A\n```\nexpect: commands contains [open_device ctx*]\nexpect: commands contains [open_device ctx0 ctx0]\nexpect: commands contains [open_device ctx01]\nexpect: calls.open_device ctx0 ctx0 == 1\n", []string{
		`x.md:10: expect: "open_device ctx*" is not a command`, `x.md:11: expect: "open_device ctx0 ctx0" is not a command (poll_cq, or poll_cq cq1 for a call on cq1): it names ctx0 twice`,
		`x.md:12: expect: "open_device ctx01" is not a command`, `x.md:13: expect: "calls.open_device ctx0 ctx0": after calls.open_device come the handles`}},
	{"commands with a number", goodHead + "```vsh\nopen_device A\n```\nexpect: commands contains [open_device 5]\n", []string{
		`x.md:10: expect: "open_device 5" is not a command (poll_cq, or poll_cq cq1 for a call on cq1): after the command come the handles its call names (poll_cq cq1); "5" is not one`}},
	{"terminal controls", goodHead + "## \x1b[31mRed\n\nProse \u202eevil.\n\n## A\ttab\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:7: the line holds the control character U+001B", "x.md:9: the line holds the control character U+202E",
		"x.md:11: a tab in a title, heading or goal"}},
	{"continuation", goodHead + "```vsh\nopen_device \\\nA\n```\nexpect: ctx0.device == A\n", []string{
		"x.md:8: a lesson's command fits on one line"}},
	{"goal names a wr_id nothing reads", wridLesson + "goal: Post a receive with wr_id 7 on B, then send with wr_id 3.\nexpect: cq1 completions.wr_id == [7]\n", []string{
		"x.md:26: goal: names wr_id 3, but no expect: line of the lesson reads a completion's wr_id 3"}},
	{"goal names wr_ids in a list", wridLesson + "goal: Post receives with wr_ids 7 and 3 on B.\nexpect: cq1 completions.wr_id == [7]\n", []string{
		"x.md:26: goal: names wr_id 3, but no expect: line of the lesson reads a completion's wr_id 3"}},
	{"goal names wr_id=N and work request ids", wridLesson + "goal: Post a receive, wr_id=7, then a send (work request ids 7 or 3).\nexpect: cq1 completions.wr_id == [7]\n", []string{
		"x.md:26: goal: names wr_id 3, but no expect: line of the lesson reads a completion's wr_id 3"}},
	{"goal names a PSN nothing reads", goodHead + "```vsh auto\nopen_device A\nopen_device B\nalloc_pd ctx0\nalloc_pd ctx1\ncreate_cq ctx0\ncreate_cq ctx1\n" +
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\ncreate_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\n" +
		"modify_qp qp0 state=init port=1 pkey_index=0 access=0\nmodify_qp qp1 state=init port=1 pkey_index=0 access=0\n```\n\n" +
		"```vsh\npp_dest qp0 psn=0x1a2b3c gid_index=1\n```\ngoal: Print A's address message with PSN 0x1a2b3c.\n\n" +
		"```vsh\nmodify_qp qp1 state=rtr path_mtu=1024 dest_qpn=qp0 rq_psn=0x1a2b3c dgid=A sgid_index=1\nmodify_qp qp1 state=rts sq_psn=0x4d5e6f\n```\n" +
		"goal: Connect B: RTR expecting PSN 0x1a2b3c, RTS with PSN 0x4d5e6f.\nexpect: qp1.state == RTS\n", []string{
		"x.md:29: goal: names PSN 0x4d5e6f, but no expect: line of the lesson reads a QP's PSN 0x4d5e6f"}},
}

// TestCheckGoalNumbers: the goal lints read the lists a goal names, and
// not a number that prose puts after one ("wr_id 1 and 4096 bytes").
func TestCheckGoalNumbers(t *testing.T) {
	for _, tc := range []struct {
		goal, want, not string // an error the lints give; one they do not
	}{
		{"Post four receives, all with wr_id 7 and 4096 bytes long.", "", "names wr_id 4096"},
		{"Move both QPs to RTS: send PSN 0 and 7 retries of each kind.", "names PSN 0", "names PSN 7"},
		{"Post receives with wr_ids 7 and 3 on B.", "names wr_id 3", ""},
		{"Post receives (wr_ids 7, 3).", "names wr_id 3", ""},
		{"Post a receive, wr_id=7, then a send (work request ids 7 or 3).", "names wr_id 3", ""},
		{"Post a receive with wr_id 07 on B.", "", "names wr_id"}, // decimal, as the shell reads it
		{"Post a receive with wr_id 010 on B.", "names wr_id 10", ""},
		{"The sender's PSN is 0x1a2b3c.", "names PSN 0x1a2b3c", ""},
		{"Connect qp0 and qp1 (a PSN is 24 bits: connect picks them).", "", "names PSN"},
		{"Post with wr_id 7 and 64 with inline.", "", "names wr_id 64"},
		{"Post receives, wr_id: 3.", "names wr_id 3", ""},
		{"Post receives with wr_ids 7-9.", "names wr_id 9", ""},
		{"Post receives with wr_ids 7 through 9.", "names wr_id 9", ""},
		{"Post the receive with wr_id 7 to B.", "", "names wr_id"},
	} {
		src := wridLesson + "goal: " + tc.goal + "\nexpect: cq1 completions.wr_id == [7]\n"
		_, err := lessons.Check("x.md", []byte(src), simEnv(t), io.Discard)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tc.want != "" && !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("goal %q: errors %q; want %q and not %q", tc.goal, got, tc.want, tc.not)
		}
	}
}

func TestCheckRejects(t *testing.T) {
	for _, tc := range checkTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lessons.Check("x.md", []byte(tc.src), simEnv(t), io.Discard)
			if err == nil {
				t.Fatalf("Check accepted:\n%s", tc.src)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check errors:\n%v\nwant one containing %q", err, w)
				}
			}
		})
	}
}

// TestCheckMisspeltDirectiveAlone: the lines after a misspelt directive
// still belong to its cell; only the misspelt line is an error.
func TestCheckMisspeltDirectiveAlone(t *testing.T) {
	src := goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\nhint (type): open_device A\nexpect: ctx0.device == A\nhint: open_device A\n"
	_, err := lessons.Check("x.md", []byte(src), simEnv(t), io.Discard)
	if err == nil || strings.Count(err.Error(), "x.md:") != 1 {
		t.Errorf("Check errors:\n%v\nwant one, at the misspelt line", err)
	}
	// Prose whose first words have a remark in brackets is prose.
	for _, prose := range []string{"Answer (for the curious): the device is sim0.", "Answer (spoiler): it is sim0.", "Hint (spoiler): sim0."} {
		src = goodHead + "```vsh\nopen_device A\n```\ngoal: Open A.\nexpect: ctx0.device == A\n" + prose + "\n"
		if _, err := lessons.Check("x.md", []byte(src), simEnv(t), io.Discard); err != nil {
			t.Errorf("prose after a cell's lines refused:\n%v", err)
		}
	}
}

// TestCheckAcceptsCQPolledThenDestroyed: an expect: on the completions of
// a CQ the step polled and then destroyed reads what the polls found.
func TestCheckAcceptsCQPolledThenDestroyed(t *testing.T) {
	src := goodHead + "```vsh auto\n" + twoSides +
		"reg_mr pd0 length=4096 access=local_write\nreg_mr pd1 length=4096 access=local_write,remote_write\n" +
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0\ncreate_qp pd1 type=rc send_cq=cq1 recv_cq=cq1\nconnect qp0 qp1 access=remote_write\n```\n\n" +
		"```vsh\npost_send qp0 opcode=rdma_write mr=mr0 length=8 remote=mr1\npoll_cq cq0\npoll_cq cq1\ndestroy_qp qp1\ndestroy_cq cq1\n```\n" +
		"goal: WRITE into B's mr1, poll both CQs, then destroy B's QP and CQ.\nexpect: cq1 completions.count == 0\n"
	if _, err := lessons.Check("x.md", []byte(src), simEnv(t), io.Discard); err != nil {
		t.Errorf("Check refused:\n%v", err)
	}
}

// TestCheckPlays: a lesson that parses but does not play green is rejected
// with the line of the command or expectation at fault.
func TestCheckPlays(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"command fails", goodHead + "```vsh\nopen_device A\nalloc_pd ctx7\n```\nexpect: handles == [ctx0]\n",
			"x.md:9: alloc_pd ctx7 failed"},
		{"expectation fails", goodHead + "```vsh\nopen_device A\n```\nexpect: ctx0.device == A\nexpect: handles.count == 2\n",
			"x.md:11: expect: handles.count == 2: handles.count is 1; the goal is 2"},
		{"marked command succeeds", goodHead + "```vsh\n! open_device A\n```\nexpect: error == EINVAL\n",
			"x.md:8: open_device A was expected to fail, but it succeeded"},
		{"wrong errno", goodHead + "```vsh\nopen_device A\nalloc_pd ctx0\n! dealloc_pd pd7\n```\nexpect: error == EBUSY\n",
			"x.md:12: expect: error == EBUSY: the step's last failure was a failure with no errno (dealloc_pd: no protection domain \"pd7\"); the goal is EBUSY"},
		// Played again without two-devices, a later step may not use what
		// the skipped section made, nor count on its handles' numbers.
		{"handle of a skipped section",
			strings.Replace(partial, "alloc_pd ctx0\n```\nexpect: handles contains pd0", "alloc_pd ctx1\n```\nexpect: handles contains pd0", 1),
			"x.md:33: played without two-devices, as on a backend that lacks it (the sections that need it skipped): alloc_pd ctx1 failed"},
		{"handles renumbered by a skipped section",
			strings.Replace(partial, "open_device B\n```\nexpect: ctx1.device == B", "open_device B\nalloc_pd ctx1\n```\nexpect: ctx1.device == B", 1) +
				"\n```vsh\nalloc_pd ctx0\n```\nexpect: handles contains pd2\n",
			"x.md:43: played without two-devices, as on a backend that lacks it (the sections that need it skipped): expect: handles contains pd2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lessons.Check("x.md", []byte(tc.src), simEnv(t), io.Discard)
			var pe *lessons.PlayError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check = %v; want a *PlayError containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckAcceptsShippedLessons(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o := lessons.CheckOptions{Open: simEnv(t), OpenOne: simEnvN(t, 1), Version: "v0.1.0"}
		if _, err := lessons.CheckLesson(f, data, o); err != nil {
			t.Errorf("%v", err)
		}
		// The same lesson saved with CRLF line ends is still the shipped
		// one, not a copy that takes its id.
		if f == "tour.md" {
			crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			if _, err := lessons.CheckLesson(f, crlf, o); err != nil {
				t.Errorf("with CRLF: %v", err)
			}
		}
	}
}

func simEnv(t *testing.T) func() (lessons.Env, func() error, error) { return simEnvN(t, 2) }

// simEnvN opens sessions on a simulator with n devices.
func simEnvN(t *testing.T, n int) func() (lessons.Env, func() error, error) {
	return func() (lessons.Env, func() error, error) {
		sh := newShell(t, n)
		return sh.LessonEnv(), func() error { return nil }, nil
	}
}

// hidden hides a provider's optional interfaces: a backend that cannot be
// stepped, traced or faulted, as real hardware.
type hidden struct{ verbs.Provider }

func TestSkipWhereTheBackendLacks(t *testing.T) {
	src := "---\nid: needy\ntitle: Needy\nlevel: advanced\nminutes: 5\nneeds: stepping, two-devices\n---\n```vsh\nopen_device A\n```\nexpect: ctx0.device == A\n"
	l, err := lessons.Parse("needy.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sh := newShellOn(t, func() (verbs.Provider, error) { return hidden{sim.New(sim.Config{Devices: 1, Seed: 1})}, nil })
	var b bytes.Buffer
	err = lessons.Play(sh.LessonEnv(), l, &b, lessons.PlayOptions{})
	var skip *lessons.SkipError
	if !errors.As(err, &skip) {
		t.Fatalf("Play = %v; want a *SkipError", err)
	}
	for _, w := range []string{"stepping: the sim backend cannot be stepped", "two-devices: the backend has 1 device"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("skip reason %q lacks %q", err, w)
		}
	}
	if b.Len() != 0 {
		t.Errorf("a skipped lesson printed:\n%s", b.String())
	}
	if _, _, err := lessons.NewTutor(sh.LessonEnv(), l); !errors.As(err, &skip) {
		t.Errorf("NewTutor = %v; want a *SkipError", err)
	}
	// On the full simulator it plays.
	if err := lessons.Play(newShell(t, 2).LessonEnv(), l, &b, lessons.PlayOptions{}); err != nil {
		t.Errorf("on the simulator: %v", err)
	}
}

// TestCatalogUpToDate fails when docs/lessons.md no longer matches the
// lessons' front matter.
func TestCatalogUpToDate(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "docs", "lessons.md"))
	if err != nil {
		t.Fatalf("reading docs/lessons.md: %v; run go generate ./lessons", err)
	}
	f, err := os.Open(filepath.Join("testdata", "mutants", "figures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mutants, err := lessons.ReadMutants(f)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := lessons.WriteCatalog(&got, mutants); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("docs/lessons.md is stale; run go generate ./lessons")
	}
}

func TestPace(t *testing.T) {
	l, _ := lessons.Find("tour")
	var slept []string
	sleep := func(d time.Duration) { slept = append(slept, d.String()) }
	sh := newShell(t, 2)
	if err := lessons.Play(sh.LessonEnv(), l, io.Discard, lessons.PlayOptions{Pace: 2 * time.Second, Sleep: sleep}); err != nil {
		t.Fatal(err)
	}
	// One pause before each step and each command.
	want := len(l.Steps)
	for _, c := range l.Commands() {
		if !strings.HasPrefix(c.Text, "#") {
			want++
		}
	}
	if len(slept) != want || slept[0] != "2s" {
		t.Errorf("slept %d times (%v...); want %d pauses of 2s", len(slept), slept[:min(3, len(slept))], want)
	}
}
