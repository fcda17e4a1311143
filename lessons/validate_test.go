package lessons_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

// TestCheckReportsEveryMistake checks testdata/check/mistakes.md, a lesson
// with one of each mistake the validator catches, and wants every one of
// them in one run, each at its line.
func TestCheckReportsEveryMistake(t *testing.T) {
	name := filepath.Join("testdata", "check", "mistakes.md")
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lessons.CheckLesson(name, src, lessons.CheckOptions{Open: simEnv(t), OpenOne: simEnvN(t, 1), Version: "v0.1.0"})
	var es lessons.Errors
	if !errors.As(err, &es) {
		t.Fatalf("CheckLesson = %v; want Errors", err)
	}
	want := []struct {
		line int
		msg  string
	}{
		{19, "the step's goal already holds when it starts"},
		{39, "\"trace on\" traces packets: it needs a backend with trace"},
		{40, "\"fault drop opcode=send nth=1\" injects faults: it needs a backend with faults"},
		{47, "```vhs opens a code block the lesson shows as prose"},
		{51, "```Vsh opens a code block"},
		{55, "```sh opens a code block the lesson shows as prose, never runs, and never checks, yet it holds 1 line of vsh commands"},
		{75, "played on one device, where A and B are the same device (as on a single rxe0): expect: ctx1.device == sim1"},
	}
	if len(es) != len(want) {
		t.Errorf("CheckLesson found %d problems, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		prefix := fmt.Sprintf("%s:%d: ", name, w.line)
		if i >= len(es) || !strings.HasPrefix(es[i].Error(), prefix) || !strings.Contains(es[i].Error(), w.msg) {
			t.Errorf("problem %d: want %s...%s; got\n%v", i+1, prefix, w.msg, err)
		}
	}
	var pe *lessons.PlayError
	if !errors.As(err, &pe) || pe.Line != 75 {
		t.Errorf("errors.As(err, *PlayError) = %v; want the one-device play's failure at line 75", pe)
	}
}

// TestCheckCollects: problems the parser finds and those the validator's
// other checks find come back together, in line order.
func TestCheckCollects(t *testing.T) {
	src := goodHead + "```vhs\nopen_device A\n```\n\n```vsh\nfault drop nth=1\n```\nexpect: qp0.statee == RTS\n"
	_, err := lessons.Check("x.md", []byte(src), simEnv(t), nil)
	want := []string{"x.md:7: ```vhs opens a code block", "x.md:12: \"fault drop nth=1\" injects faults", "x.md:14: expect: a queue pair has no field \"statee\""}
	got := strings.Split(fmt.Sprint(err), "\n")
	if len(got) != len(want) {
		t.Fatalf("Check = %v; want %d problems", err, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("problem %d = %q; want %q...", i+1, got[i], w)
		}
	}
}

func TestInferNeeds(t *testing.T) {
	tests := []struct {
		name, needs, cell string
		want              string // "" when nothing is missing
	}{
		{"stepping", "", "fabric step", "\"fabric step\" holds packets for stepping: it needs a backend with stepping"},
		{"advance", "", "advance 1ms", "needs a backend with stepping"},
		{"alias in a repeat", "", "repeat 2 fault drop nth=1", "needs a backend with faults"},
		{"ud qp", "", "open_device A\nalloc_pd ctx0\ncreate_cq ctx0\ncreate_qp pd0 type=ud send_cq=cq0 recv_cq=cq0", "creates a UD QP"},
		{"ud named", "ud", "open_device A\nalloc_pd ctx0\ncreate_cq ctx0\ncreate_qp pd0 type=ud send_cq=cq0 recv_cq=cq0", ""},
		{"rc qp", "", "open_device A\nalloc_pd ctx0\ncreate_cq ctx0\ncreate_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", ""},
		{"srq", "", "open_device A\nalloc_pd ctx0\ncreate_srq pd0", "creates an SRQ"},
		{"ip groups", "", "join_group A 239.1.1.1", "needs a backend with ip-groups"},
		{"in a do", "trace", "do trace on; fault drop nth=1", "injects faults"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(goodHead, "minutes: 1\n", "minutes: 1\n"+needsLine(tc.needs), 1) + "```vsh auto\n" + tc.cell + "\n```\n"
			_, err := lessons.Check("x.md", []byte(src), simEnv(t), nil)
			got := fmt.Sprint(err)
			if tc.want == "" && strings.Contains(got, "needs a backend with") || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Check = %v; want %q", err, tc.want)
			}
		})
	}
}

func needsLine(n string) string {
	if n == "" {
		return ""
	}
	return "needs: " + n + "\n"
}

func TestLintFences(t *testing.T) {
	tests := []struct {
		fence, body string
		want        bool
	}{
		{"```vsh", "alloc_pd ctx0", false},
		{"```vhs", "alloc_pd ctx0", true},
		{"```vsj", "ls", true},
		{"```Vsh", "alloc_pd ctx0", true},
		{"```VSH", "alloc_pd ctx0", true},
		{"```vsh-auto", "alloc_pd ctx0", true},
		{"```vssh", "alloc_pd ctx0", true},
		{"~~~vhs", "alloc_pd ctx0", true},
		{"```sh", "alloc_pd ctx0", true},
		{"```bash", "$ post_send qp0 mr=mr0", true},
		{"```sh", "make build", false},
		{"```bash", "go test ./...", false},
		{"```text", "alloc_pd ctx0", false},
		{"```", "alloc_pd ctx0", false},
		{"```python", "print(1)", false},
	}
	for _, tc := range tests {
		t.Run(tc.fence, func(t *testing.T) {
			src := goodHead + "Prose.\n\n" + tc.fence + "\n" + tc.body + "\n" + tc.fence[:3] + "\n\n```vsh auto\nopen_device A\n```\n"
			_, err := lessons.Check("x.md", []byte(src), simEnv(t), nil)
			got := strings.Contains(fmt.Sprint(err), "x.md:9: "+tc.fence+" opens a code block")
			if got != tc.want {
				t.Errorf("Check(%s block of %q) = %v; want a misspelled fence reported: %v", tc.fence, tc.body, err, tc.want)
			}
		})
	}
}

// TestFenceAutoSuggestion: a misspelled auto cell is pointed to vsh auto.
func TestFenceAutoSuggestion(t *testing.T) {
	src := goodHead + "Prose.\n\n```vsh-auto\nalloc_pd ctx0\n```\n\n```vsh auto\nopen_device A\n```\n"
	_, err := lessons.Check("x.md", []byte(src), simEnv(t), nil)
	if !strings.Contains(fmt.Sprint(err), "did you mean ```vsh auto?") {
		t.Errorf("Check = %v; want ```vsh auto suggested", err)
	}
}

func TestGoalHolds(t *testing.T) {
	cell := "```vsh auto\nopen_device A\nalloc_pd ctx0\n```\n\nAgain.\n\n```vsh\nquery_device ctx0\n```\ngoal: Keep pd0.\njudge: expect\nexpect: handles contains pd0\n"
	_, err := lessons.Check("x.md", []byte(goodHead+cell), simEnv(t), nil)
	if !strings.Contains(fmt.Sprint(err), "x.md:14: the step's goal already holds when it starts") {
		t.Errorf("Check = %v; want the step at line 14 refused", err)
	}
	marked := strings.Replace(cell, "judge: expect\n", "judge: expect\ngoal-holds: ok\n", 1)
	if _, err := lessons.Check("x.md", []byte(goodHead+marked), simEnv(t), nil); err != nil {
		t.Errorf("Check with goal-holds: ok = %v; want it accepted", err)
	}
	// A later play failure does not hide it: both are reported.
	failing := cell + "\nThen.\n\n```vsh\nalloc_pd ctx9\n```\ngoal: Fail.\n"
	_, err = lessons.Check("x.md", []byte(goodHead+failing), simEnv(t), nil)
	if got := fmt.Sprint(err); !strings.Contains(got, "x.md:14: the step's goal already holds") || !strings.Contains(got, "x.md:24: alloc_pd ctx9 failed") {
		t.Errorf("Check = %v; want the step at line 14 and the failure at line 24 reported", err)
	}
	bad := strings.Replace(cell, "judge: expect\n", "judge: expect\ngoal-holds: yes\n", 1)
	if _, err := lessons.Check("x.md", []byte(goodHead+bad), simEnv(t), nil); !strings.Contains(fmt.Sprint(err), `x.md:19: goal-holds: "yes"`) {
		t.Errorf("Check with goal-holds: yes = %v; want it refused at line 19", err)
	}
}

func TestConstraint(t *testing.T) {
	tests := []struct {
		constraint, running string
		allows              bool
	}{
		{">= 0.4", "v0.4.0", true},
		{">= 0.4", "v0.3.9", false},
		{">= 0.4", "0.10.1", true},
		{"> 0.4", "v0.4.0", false},
		{">= 0.4, < 2", "v2.0.0", false},
		{">= 0.4, < 2", "v1.9.9", true},
		{"== 1.2.3", "v1.2.3", true},
		{"= 1.2", "v1.2.1", false},
		{"<= 1.2", "v1.2.0-rc1", true},
		{">= 0.4", "v0.4.1-0.20261120-abcdef", true},
		{">= 9", "devel", true},
		{">= 9", "v0.0.0-20261120-abcdef", true},
	}
	for _, tc := range tests {
		c, err := lessons.ParseConstraint(tc.constraint)
		if err != nil {
			t.Fatalf("ParseConstraint(%q) = %v", tc.constraint, err)
		}
		if got := c.Allows(tc.running); got != tc.allows {
			t.Errorf("%q.Allows(%q) = %v, want %v", tc.constraint, tc.running, got, tc.allows)
		}
	}
	for _, bad := range []string{"", "0.4", ">= x", ">= 1.2.3.4", "~> 1", ">= 0.4,", ">= -1"} {
		if _, err := lessons.ParseConstraint(bad); err == nil {
			t.Errorf("ParseConstraint(%q) accepted", bad)
		}
	}
}

func TestRequiresRefused(t *testing.T) {
	src := strings.Replace(goodHead, "minutes: 1\n", "minutes: 1\nrequires: >= 99.0\nauthor: A. Teacher\nlang: en\nversion: 2\n", 1) +
		"```vsh auto\nopen_device A\n```\n"
	_, err := lessons.CheckLesson("x.md", []byte(src), lessons.CheckOptions{Open: simEnv(t), Version: "v0.5.0"})
	if !strings.Contains(fmt.Sprint(err), "x.md:6: lesson t requires vsh >= 99.0, and this vsh is v0.5.0; install a newer vsh") {
		t.Errorf("CheckLesson = %v; want the lesson refused at its requires: line", err)
	}
	older := strings.Replace(src, "requires: >= 99.0", "requires: >= 0.1, < 0.5", 1)
	_, err = lessons.CheckLesson("x.md", []byte(older), lessons.CheckOptions{Open: simEnv(t), Version: "v0.5.0"})
	if !strings.Contains(fmt.Sprint(err), "requires vsh >= 0.1, < 0.5, and this vsh is v0.5.0; take it with an older vsh") {
		t.Errorf("CheckLesson = %v; want an older vsh asked for, not a newer", err)
	}
	l, err := lessons.Parse("x.md", []byte(src))
	if err != nil || l.Author != "A. Teacher" || l.Lang != "en" || l.Version != "2" {
		t.Errorf("Parse = %+v, %v; want author, lang and version read", l, err)
	}
	bad := strings.Replace(src, "lang: en", "lang: english!", 1)
	if _, err := lessons.Parse("x.md", []byte(bad)); !strings.Contains(fmt.Sprint(err), `x.md:8: front matter: lang "english!"`) {
		t.Errorf("Parse = %v; want lang refused", err)
	}
}

func ExampleParseConstraint() {
	c, err := lessons.ParseConstraint(">= 0.4, < 2")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Allows("v0.3.1"), c.Allows("v0.4.0"), c.Allows("v1.7.2"), c.Allows("v2.0.0"))
	// Output: false true true false
}
