package shell

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

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
		// Past an int the braces stay: the command refuses them.
		{"wr_id={i+9223372036854775807}", 0, "wr_id=9223372036854775807"},
		{"wr_id={i+9223372036854775807}", 1, "wr_id={i+9223372036854775807}"},
		{"wr_id={i*4611686018427387904}", 2, "wr_id={i*4611686018427387904}"},
		{"wr_id={i*3074457345618258602+1}", 3, "wr_id=9223372036854775807"},
		{"wr_id={i*3074457345618258602+2}", 3, "wr_id={i*3074457345618258602+2}"},
		{"wr_id={i-9223372036854775807}", 1, "wr_id=-9223372036854775806"},
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
	// lesson help is help lesson, not a lesson named help.
	if out, err := sh.Exec("lesson help"); err != nil || !strings.Contains(out, "usage: lesson [list | ID [--force]") {
		t.Errorf("lesson help: %v\n%s", err, out)
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
		{"another lesson", "lesson break-it --force\n" + skips + "devices\n#! hint\n", "p.vsh:18: the tutor now runs lesson break-it, which the path started; its markers check lesson tour"},
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

// TestLessonSwitchAsks checks lesson ID while another lesson runs: off a
// terminal it refuses without --force; with a front end that can ask, the
// answer decides; --force goes with lesson ID only.
func TestLessonSwitchAsks(t *testing.T) {
	tests := []struct {
		name     string
		ask      func(string) (string, bool) // nil: off a terminal
		line     string
		wantErr  string // "" for none
		wantOut  string
		switched bool
	}{
		{"off a terminal", nil, "lesson rc-pingpong", "off a terminal vsh cannot ask whether to leave it for rc-pingpong", "", false},
		{"forced", nil, "lesson rc-pingpong --force", "", "» you leave lesson tour at step 1", true},
		{"forced, -f first", nil, "lesson -f rc-pingpong", "", "» you leave lesson tour at step 1", true},
		{"same lesson", nil, "lesson tour", "whether to start it over", "", false},
		{"force without a lesson", nil, "lesson next --force", "--force goes with lesson ID", "", false},
		{"answer yes", answer("yes", true), "lesson rc-pingpong", "", "» you leave lesson tour at step 1", true},
		{"answer y", answer(" Y ", true), "lesson rc-pingpong", "", "» you leave lesson tour", true},
		{"answer no", answer("n", true), "lesson rc-pingpong", "", "» you stay at step 1 of 9 of lesson tour", false},
		{"answer empty", answer("", true), "lesson rc-pingpong", "", "» you stay at step 1", false},
		{"no one answers", answer("y", false), "lesson rc-pingpong", "", "» you stay at step 1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, 2, 1, true, nil)
			defer sh.Close()
			if _, err := sh.Exec("lesson tour"); err != nil {
				t.Fatal(err)
			}
			var asked string
			if tt.ask != nil {
				sh.ask = func(q string) (string, bool) { asked = q; return tt.ask(q) }
			}
			out, err := sh.Exec(tt.line)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("%s: error %v, want %q", tt.line, err, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("%s: output does not say %q:\n%s", tt.line, tt.wantOut, out)
			}
			if tt.ask != nil && !strings.Contains(asked, "Leave it for rc-pingpong? [y/N]") {
				t.Errorf("%s: asked %q", tt.line, asked)
			}
			if got := sh.lesson.tutor.Lesson().ID == "rc-pingpong"; got != tt.switched {
				t.Errorf("%s: now in lesson %s; switched=%v, want %v", tt.line, sh.lesson.tutor.Lesson().ID, got, tt.switched)
			}
		})
	}
}

func answer(a string, ok bool) func(string) (string, bool) {
	return func(string) (string, bool) { return a, ok }
}

// TestLessonResume checks that a session with a state folder keeps the
// learner's place and that lesson resume, in a later session, goes back to
// it; a session without one keeps nothing and says why.
func TestLessonResume(t *testing.T) {
	dir := t.TempDir()
	first := newTestShell(t, 2, 1, true, nil)
	first.opts.StateDir = dir
	for _, line := range []string{"lesson tour", "devices", "open_device A"} {
		if _, err := first.Exec(line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	step, _ := first.lesson.tutor.Step()
	first.Close()

	later := newTestShell(t, 2, 1, true, nil)
	defer later.Close()
	later.opts.StateDir = dir
	tests := []struct {
		line, want, wantErr string
	}{
		{"lesson resume rc-pingpong", "", "no place kept in lesson rc-pingpong"},
		{"lesson resume", fmt.Sprintf("» resuming lesson tour at step %d of 9, where you left it", step+1), ""},
		{"lesson resume", fmt.Sprintf("» you are in lesson tour already, at step %d of 9", step+1), ""},
		{"lesson resume tour extra", "", "lesson takes one word"},
		{"lesson quit", "you left lesson tour", ""},
		{"lesson resume tour --force", "» resuming lesson tour", ""},
	}
	for _, tt := range tests {
		out, err := later.Exec(tt.line)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(out, tt.want) {
			t.Errorf("%s: %v\n%s\nwant %q", tt.line, err, out, tt.want)
		}
	}
	// The state is that of the step's start: the lesson's own commands ran.
	if got, _ := later.lesson.tutor.Step(); got != step {
		t.Errorf("resumed at step %d, want %d", got+1, step+1)
	}
	if out, err := later.Exec("show ctx0"); err != nil || !strings.Contains(out, "ctx0") {
		t.Errorf("after resume, ctx0 is not there: %v\n%s", err, out)
	}

	none := newTestShell(t, 2, 1, true, nil)
	defer none.Close()
	if _, err := none.Exec("lesson resume"); err == nil || !strings.Contains(err.Error(), "keeps no places") {
		t.Errorf("resume without a state folder: %v", err)
	}
}

// TestCheckLearnerPathPredict: #! predict ANSWER answers the question the
// tutor asks there, and says where none is asked or the answer is refused;
// a #! refused where the tutor has no goal says so too.
func TestCheckLearnerPathPredict(t *testing.T) {
	toStep6 := "lesson next\nlesson skip\nlesson skip\nlesson skip\nlesson next\n#! step 6\n"
	rts := "modify_qp qp0 state=rts sq_psn=0 timeout=14 retry_cnt=7 rnr_retry=0 max_rd_atomic=1\n"
	rest := "post_send qp0 mr=mr0 length=8\npoll_cq cq0 wait=1s\n#! step 7\n"
	for _, tt := range []struct {
		name, path, want           string
		predicted, right, unjudged int
	}{
		{"right", toStep6 + "#! predict rnr_retry_exc_err\n" + rts + rest, "", 1, 1, 0},
		{"wrong", toStep6 + "#! predict IBV_WC_SUCCESS\n" + rts + rest, "", 1, 0, 0},
		// Answered, but the path stops before the step is done.
		{"not judged", toStep6 + "#! predict IBV_WC_SUCCESS\n" + rts, "", 0, 0, 1},
		{"not a choice", toStep6 + "#! predict blue\n" + rts + rest, `p.vsh:7: the tutor did not take the prediction "blue"`, 0, 0, 0},
		{"too late", toStep6 + rts + "#! predict IBV_WC_SUCCESS\n" + rest, "p.vsh:8: the tutor asks no prediction here: step 6's prediction is closed", 0, 0, 0},
		{"judged before", toStep6 + "lesson skip\nlesson back\n#! predict IBV_WC_SUCCESS\n",
			"p.vsh:9: the tutor asks no prediction here: step 6's prediction is closed: step 6's prediction was judged when the step was done (none made; what happened: IBV_WC_RNR_RETRY_EXC_ERR)", 0, 0, 0},
		{"no answer", toStep6 + "#! predict\n", "p.vsh:7: #! predict takes the learner's answer", 0, 0, 0},
		{"no question", "lesson next\n#! predict 0\n", "p.vsh:2: the tutor asks no prediction here: step 2 asks none", 0, 0, 0},
		// A marker about a goal where the tutor has none.
		{"refused at the tutor's step", "store mr7 u64=1\n#! refused\n", `p.vsh:2: "store mr7 u64=1" was typed at step 1, which is the tutor's`, 0, 0, 0},
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
			if res.Predicted != tt.predicted || res.Right != tt.right || res.Unjudged != tt.unjudged {
				t.Errorf("%d predicted, %d right, %d not judged; want %d, %d, %d", res.Predicted, res.Right, res.Unjudged, tt.predicted, tt.right, tt.unjudged)
			}
		})
	}
}

// TestSaveScript checks save FILE.vsh: the lines typed, as typed, but save
// and quit; in a lesson, those since it started, the tutor's own commands
// left out; a sourced script's lines stay in the script it came from.
func TestSaveScript(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"a session", []string{"open_device A", "# then a mistake", "! alloc_pd ctx9", "help save", "source s.vsh", "save x.md"},
			"# the commands typed in this vsh session; vsh -k -f out.vsh runs them again (-k: past the ones that failed)\n" +
				"open_device A\n# then a mistake\n! alloc_pd ctx9\nhelp save\nsource s.vsh\n"},
		{"a lesson", []string{"devices", "lesson tour", "devices", "lesson skip", "lesson hint", "predict 3"},
			"# the commands typed in lesson tour; vsh lesson tour < out.vsh takes the lesson again with them\ndevices\nlesson skip\nlesson hint\npredict 3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := &memFiles{m: map[string][]byte{"s.vsh": []byte("alloc_pd ctx0\n")}}
			sh := newTestShell(t, 2, 1, true, files)
			defer sh.Close()
			for _, l := range tt.lines {
				sh.Exec(l) // failures are part of what was typed
			}
			out, err := sh.Exec("save out.vsh")
			if err != nil || !strings.Contains(out, "saved the") {
				t.Fatalf("save: %v\n%s", err, out)
			}
			if got := string(files.m["out.vsh"]); got != tt.want {
				t.Errorf("saved\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestPredictionLocks: a prediction cannot be made inside source (the
// tutor sees a sourced script's commands only when it ends), nor after
// lesson goal --detail showed what the step checks.
func TestPredictionLocks(t *testing.T) {
	lesson := filepath.Join("..", "docs", "testdata", "class", "verbs-course", "first-qp.md")
	src, err := os.ReadFile(lesson)
	if err != nil {
		t.Fatal(err)
	}
	files := &memFiles{m: map[string][]byte{"first-qp.md": src, "p.vsh": []byte("predict IBV_QPS_RESET\n")}}
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"lesson first-qp.md", "open_device A", "alloc_pd ctx0", "create_cq ctx0 cqe=16"} {
		if _, err := sh.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	for _, tt := range []struct{ line, want string }{
		{"source p.vsh", "predict cannot run inside source"},
		{"lesson goal --detail", "the detail may give away this step's prediction, so it is kept as it is (unanswered)"},
		{"predict IBV_QPS_RESET", "too late"},
	} {
		out, err := sh.Exec(tt.line)
		if got := fmt.Sprint(out, err); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %s\nwant %q", tt.line, got, tt.want)
		}
	}
}

// TestScriptBOM: a script saved with a byte order mark (Notepad) runs.
func TestScriptBOM(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	var out strings.Builder
	if err := sh.RunScript(strings.NewReader("\ufeffdevices\n"), &out, "bom.vsh", false); err != nil {
		t.Errorf("a script with a BOM: %v\n%s", err, out.String())
	}
}

// TestContinued: a line ending in '\' continues on the next, unless the
// '\' is escaped or belongs to a comment.
func TestContinued(t *testing.T) {
	for line, want := range map[string]bool{
		`create_qp pd0 \`: true, `fill mr0 "a \`: true, `fill mr0 a\\`: false, `open_device A`: false,
		`# a note \`: false, `  # a note \`: false, `open_device A # a note \`: false,
		`fill mr0 "#1" \`: true, `fill mr0 '# x' \`: true, `fill mr0 "\"# x" \`: true, `fill mr0 a#b \`: true,
	} {
		if got := Continued(line); got != want {
			t.Errorf("Continued(%q) = %v, want %v", line, got, want)
		}
	}
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	var out strings.Builder
	if err := sh.RunScript(strings.NewReader("# A next \\\nopen_device A\nalloc_pd \\\n  ctx0\n"), &out, "c.vsh", false); err != nil || !strings.Contains(out.String(), "pd0") {
		t.Errorf("a comment ending in \\ took the next command, or a continued line did not run: %v\n%s", err, out.String())
	}
}

// TestSaveRefusesIpynb: save writes Markdown, HTML or a script; a name
// Jupyter would open as JSON is refused, not filled with Markdown.
func TestSaveRefusesIpynb(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 1, 1, true, files)
	defer sh.Close()
	for _, name := range []string{"x.ipynb", "X.IPYNB", "x.json"} {
		_, err := sh.Exec("save " + name)
		if err == nil || !strings.Contains(sh.FormatError(err), "save writes a Markdown notebook (.md), a web page (.html) or a script (.vsh)") {
			t.Errorf("save %s: %v", name, err)
		}
		if _, ok := files.m[name]; ok {
			t.Errorf("save %s wrote the file", name)
		}
	}
}

// TestFileErrorHints: a file command that fails names the errno and says
// how to mend it.
func TestFileErrorHints(t *testing.T) {
	dir := t.TempDir()
	folder := dir + "/adir.md"
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	sh := newTestShell(t, 1, 1, true, nil)
	defer sh.Close()
	tests := []struct{ line, want string }{
		{"save -f " + folder, "EISDIR: open " + folder + ": is a directory; hint: " + folder + " is a folder: give a file in it"},
		{"save " + dir + "/no/x.md", "ENOENT: open " + dir + "/no/x.md: no such file or directory; hint: give a file in a folder that exists, or create " + dir + "/no first"},
		{"source " + dir + "/nosuch.vsh", "hint: check the name: no such file here"},
		{"trace pcap " + folder, "EISDIR"},
	}
	for _, tc := range tests {
		_, err := sh.Exec(tc.line)
		if err == nil || !strings.Contains(sh.FormatError(err)+" "+err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.line, err, tc.want)
		}
	}
}

// TestSavedFilesHaveNoControls: control characters and invalid UTF-8 a
// learner typed are saved escaped in a notebook, as the terminal shows
// them: it is valid UTF-8 and cannot move a cursor or set a title. A
// script keeps the line as typed, which is what replays it.
func TestSavedFilesHaveNoControls(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 1, 1, true, files)
	defer sh.Close()
	sh.Exec("explain A\x00B\x1b[31mC\xff\xfeD\a")
	sh.Exec("# comment \x1b]0;title\a")
	for _, name := range []string{"c.md", "c.html"} {
		if out, err := sh.Exec("save " + name); err != nil {
			t.Fatalf("save %s: %s%s", name, out, sh.FormatError(err))
		}
		data := files.m[name]
		if !utf8.Valid(data) {
			t.Errorf("%s is not valid UTF-8", name)
		}
		for _, c := range data {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				t.Errorf("%s holds control byte %#x", name, c)
				break
			}
		}
		if !bytes.Contains(data, []byte(`A\x00B\x1b[31mC\xff\xfeD\a`)) {
			t.Errorf("%s does not show the command escaped:\n%s", name, data)
		}
	}
	if _, err := sh.Exec("save c.vsh"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files.m["c.vsh"], []byte("explain A\x00B\x1b[31mC\xff\xfeD\a\n")) {
		t.Errorf("c.vsh does not keep the line as typed:\n%q", files.m["c.vsh"])
	}
}

// TestBrokenLessonFileHint: a lesson file that does not parse points at
// vsh lesson check, which lists all its problems.
func TestBrokenLessonFileHint(t *testing.T) {
	files := newMemFiles()
	files.m["bad.md"] = []byte("---\nid: x\ntitle: T\nlevel: expert\nminutes: 1\n---\n\n```vsh\nopen_device A\n```\ngoal: Open A.\n")
	sh := newTestShell(t, 1, 1, true, files)
	defer sh.Close()
	_, err := sh.Exec("lesson bad.md")
	if err == nil || !strings.Contains(sh.FormatError(err), "hint: vsh lesson check bad.md lists every problem of the file") {
		t.Errorf("lesson bad.md: %v", err)
	}
}
