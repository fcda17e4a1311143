package shell

import (
	"io"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/lessons"
)

// TestLessonList checks lesson (and lesson list) with no lesson running:
// every lesson that ships with vsh is listed. (The golden transcript
// lesson.txt leaves the list out, so that a new lesson does not change it.)
func TestLessonList(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, line := range []string{"lesson", "lesson list"} {
		out, err := sh.Exec(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for _, id := range lessons.IDs() {
			if !strings.Contains(out, id) {
				t.Errorf("%s does not list %s:\n%s", line, id, out)
			}
		}
	}
}

func TestLessonComplete(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	texts := func(line string) string {
		var out []string
		for _, s := range sh.Complete(line) {
			out = append(out, s.Text)
		}
		return strings.Join(out, " ")
	}
	if got := texts("lesson tou"); got != "tour" {
		t.Errorf(`Complete("lesson tou") = %q; want "tour"`, got)
	}
	if got := texts("lesson l"); !strings.Contains(got, "list") || !strings.Contains(got, "lifecycle") {
		t.Errorf(`Complete("lesson l") = %q; want list and lifecycle`, got)
	}
	// The tutor's words are offered once a lesson runs.
	if got := texts("lesson ski"); got != "" {
		t.Errorf(`Complete("lesson ski") with no lesson = %q; want nothing`, got)
	}
	if _, err := sh.Exec("lesson tour"); err != nil {
		t.Fatal(err)
	}
	if got := texts("lesson ski"); got != "skip" {
		t.Errorf(`Complete("lesson ski") = %q; want "skip"`, got)
	}
	if got := texts("do open_device A; alloc_p"); got != "alloc_pd" {
		t.Errorf(`Complete("do open_device A; alloc_p") = %q; want "alloc_pd"`, got)
	}
	if got := texts("pp_stats st"); got != "start" {
		t.Errorf(`Complete("pp_stats st") = %q; want "start"`, got)
	}
}

func TestSubstituteIndex(t *testing.T) {
	tests := []struct {
		in   string
		i    int
		want string
	}{
		{"qp{i}", 3, "qp3"},
		{"qp{i+16}", 3, "qp19"},
		{"qp{i-1}", 3, "qp2"},
		{"wr_id={i*2+1}", 3, "wr_id=7"},
		{"x={i*4}", 2, "x=8"},
		{"{j} {i} {i+} {i*} {", 1, "{j} 1 {i+} {i*} {"},
	}
	for _, tc := range tests {
		if got := substituteIndex(tc.in, tc.i); got != tc.want {
			t.Errorf("substituteIndex(%q, %d) = %q; want %q", tc.in, tc.i, got, tc.want)
		}
	}
}

// TestLessonTypos: a typo of a lesson command suggests the command, a typo
// of a lesson's id the lesson.
func TestLessonTypos(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	for _, tt := range []struct{ line, want string }{
		{"lesson nxt", `no lesson and no lesson command "nxt"; did you mean lesson next?`},
		{"lesson skp", "did you mean lesson skip?"},
		{"lesson lst", "did you mean lesson list?"},
		{"lesson tuor", `no lesson "tuor"; did you mean tour?`},
		{"lesson event", "did you mean events?"},
	} {
		_, err := sh.Exec(tt.line)
		if err == nil || !strings.Contains(sh.FormatError(err), tt.want) {
			t.Errorf("%s: %v; want %q", tt.line, err, tt.want)
		}
	}
}

// TestCheckLearnerPathHostile: paths that leave the lesson, start another,
// quit, put markers first, have none, or are too large are reported, never
// a crash or a false pass.
func TestCheckLearnerPathHostile(t *testing.T) {
	skips := strings.Repeat("lesson skip\n", 15)
	for _, tt := range []struct {
		name, path, want string
	}{
		{"another lesson", "lesson break-it\n" + skips + "devices\n#! hint\n", "p.vsh:18: the tutor now runs lesson break-it, which the path started; its markers check lesson tour"},
		{"marker first", "#! refused\ndevices\n#! step 2\n", "p.vsh:1: a marker checks the command before it, and there is none yet"},
		{"no markers", "devices\n", "p.vsh: no #! marker: nothing was checked"},
		{"quit", "devices\nquit\nopen_device A\n#! step 3\n", `p.vsh:2: "quit" leaves vsh: the rest of the path is not played`},
		{"left", "devices\nlesson quit\ndevices\n#! quiet\n", `p.vsh:4: no lesson is running (it was left before "devices")`},
		{"step past the end", "devices\n#! step 99\n", "not at step 99 (the lesson has 9)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			res, err := sh.CheckLearnerPath("tour", strings.NewReader(tt.path), "p.vsh")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Problems, "\n"), tt.want) {
				t.Errorf("problems %q; want one saying %q", res.Problems, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"endless line", io.LimitReader(zeroBytes{}, 1<<30), "p.vsh:1: the line is longer than 64 KiB (MaxLine)"},
		{"too large", strings.NewReader(strings.Repeat("# "+strings.Repeat("y", 1000)+"\n", MaxScriptFile/1000+10)), "larger than 16 MiB (MaxScriptFile)"},
	} {
		sh := newTestShell(t, 2, 1, true, nil)
		_, err := sh.CheckLearnerPath("tour", tt.r, "p.vsh")
		sh.Close()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
}

type zeroBytes struct{}

func (zeroBytes) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// TestCheckLearnerPathPredict: #! predict ANSWER answers the question the
// tutor asks there, and says where none is asked or the answer is refused.
func TestCheckLearnerPathPredict(t *testing.T) {
	toStep6 := "lesson next\nlesson skip\nlesson skip\nlesson skip\nlesson next\n#! step 6\n"
	rts := "modify_qp qp0 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=0 max_rd_atomic=1\n"
	rest := "post_send qp0 mr=mr0 length=8\npoll_cq cq0 wait=1s\n#! step 7\n"
	for _, tt := range []struct {
		name, path, want string
		predicted, right int
	}{
		{"right", toStep6 + "#! predict rnr_retry_exc_err\n" + rts + rest, "", 1, 1},
		{"wrong", toStep6 + "#! predict IBV_WC_SUCCESS\n" + rts + rest, "", 1, 0},
		{"not a choice", toStep6 + "#! predict blue\n" + rts + rest, `p.vsh:7: the tutor did not take the prediction "blue"`, 0, 0},
		{"too late", toStep6 + rts + "#! predict IBV_WC_SUCCESS\n" + rest, "p.vsh:8: the tutor asks no prediction here: step 6's prediction is closed", 0, 0},
		{"no answer", toStep6 + "#! predict\n", "p.vsh:7: #! predict takes the learner's answer", 0, 0},
		{"no question", "lesson next\n#! predict 0\n", "p.vsh:2: the tutor asks no prediction here: step 2 asks none", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			res, err := sh.CheckLearnerPath("break-it", strings.NewReader(tt.path), "p.vsh")
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(res.Problems, "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("problems %q; want %q", res.Problems, tt.want)
			}
			if res.Predicted != tt.predicted || res.Right != tt.right {
				t.Errorf("%d predicted, %d right; want %d, %d", res.Predicted, res.Right, tt.predicted, tt.right)
			}
		})
	}
}
