package shell

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/shell/render"
)

func TestPagerCommand(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/less", nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	for _, tt := range []struct {
		name string
		env  string
		look func(string) (string, error)
		want []string
	}{
		{"PAGER with arguments", "most -s", missing, []string{"most", "-s"}},
		{"less when PAGER is not set", "", found, []string{"/usr/bin/less", "-FRX"}},
		{"blank PAGER counts as unset", "  ", found, []string{"/usr/bin/less", "-FRX"}},
		{"none", "", missing, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name, args := pagerCommand(tt.env, tt.look)
			var got []string
			if name != "" {
				got = append([]string{name}, args...)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pagerCommand(%q) = %q, want %q", tt.env, got, tt.want)
			}
		})
	}
}

// TestWidthPerCell: the width is asked before each cell is shown, so that
// a resized terminal is followed; the cell's record stays unwrapped.
func TestWidthPerCell(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	width := 0
	sh.opts.Width = func() int { return width }
	widest := func(out string) int {
		w := 0
		for _, l := range strings.Split(out, "\n") {
			w = max(w, render.Width(l))
		}
		return w
	}
	for _, tt := range []struct {
		width int
		line  string
		most  int // the widest line shown
	}{
		{0, "open_device A", 54},
		{0, "alloc_pd ctx0", 46},
		{0, "create_cq ctx0 cqe=16", 84},
		{60, "create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", 60},
		{100, "modify_qp qp0 state=init pkey_index=0 port=1 access=remote_write,remote_read,remote_atomic", 100},
		{-5, "query_qp qp0", 0}, // a width below 0 wraps nothing, as 0
	} {
		width = tt.width
		out, err := sh.Exec(tt.line)
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		cell := sh.Cells()[len(sh.Cells())-1]
		if got := widest(out); tt.most > 0 && got > tt.most || tt.width > 0 && got > tt.width {
			t.Errorf("width %d: %s shows a line %d wide:\n%s", tt.width, tt.line, got, out)
		}
		if tt.width > 0 && cell.Out == out {
			t.Errorf("width %d: %s: nothing was wrapped:\n%s", tt.width, tt.line, out)
		}
		if tt.width <= 0 && cell.Out != out {
			t.Errorf("width %d: %s: the output is not the record:\n%s\nrecord:\n%s", tt.width, tt.line, out, cell.Out)
		}
	}
	if _, err := sh.Exec("help modify_qp"); err != nil {
		t.Fatal(err)
	}
	typed := sh.Cells()[len(sh.Cells())-1].TypedBack
	if len(typed) != 3 || !strings.HasPrefix(typed[1], "RC     INIT→RTR    state=rtr path_mtu=1024") {
		t.Errorf("help modify_qp: TypedBack = %q, want its three example commands", typed)
	}
}

// TestAnyWidth runs a session at widths from 1 up: nothing panics (the test
// shell lets panics through), and a width wider than every line changes
// nothing.
func TestAnyWidth(t *testing.T) {
	lines := []string{"open_device A", "open_device B", "alloc_pd ctx0", "alloc_pd ctx1", "create_cq ctx0", "create_cq ctx1",
		"create_qp pd0 type=rc send_cq=cq0 recv_cq=cq0", "create_qp pd1 type=rc send_cq=cq1 recv_cq=cq1",
		"reg_mr pd0 length=4096", "reg_mr pd1 length=4096 access=local_write", "connect qp0 qp1", "trace on",
		"post_recv qp1 mr=mr1 length=4", "post_send qp0 mr=mr0 length=64", "poll_cq cq0", "poll_cq cq1",
		"! modify_qp qp0 state=rtr", "help connect", "fill mr0 \"日本語\"", "mem mr0 0 16"}
	ref := newTestShell(t, 2, 1, true, nil) // no width
	defer ref.Close()
	var want []string
	for _, l := range lines {
		out, err := ref.Exec(l)
		want = append(want, out+ref.FormatError(err))
	}
	for _, width := range []int{1, 2, 5, 20, 10000} {
		sh := newTestShell(t, 2, 1, width != 5, nil) // and one in colour
		sh.opts.Width = func() int { return width }
		for i, l := range lines {
			out, err := sh.Exec(l)
			if out += sh.FormatError(err); width == 10000 && out != want[i] {
				t.Errorf("width %d: %s is not as without a width:\n%s\nwant:\n%s", width, l, out, want[i])
			}
		}
		sh.Close()
	}
}

// TestPicturesFitTheSession: without width=, a picture is drawn at the
// session's width and never wrapped after: every line of it fits, or the
// command says the width is too narrow.
func TestPicturesFitTheSession(t *testing.T) {
	for _, width := range []int{40, 60, 100} {
		sh := newTestShell(t, 2, 1, true, nil)
		sh.opts.Width = func() int { return width }
		for _, l := range notebookSession[1:15] { // up to the SEND, traced
			sh.Exec(l)
		}
		for _, cmd := range []string{"trace ladder", "show qp0 --diagram"} {
			out, err := sh.Exec(cmd)
			if err != nil {
				if !strings.Contains(err.Error(), "too narrow") {
					t.Errorf("width %d: %s: %v", width, cmd, err)
				}
				continue
			}
			for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				if w := render.Width(l); w > width {
					t.Errorf("width %d: %s: a line of %d columns:\n%s", width, cmd, w, out)
					break
				}
			}
		}
		sh.Close()
	}
}

// TestLessonFitsWidth: at a width under the lessons' 78 columns, the
// tutor's words — header, step rules, prose, goals, verdicts — wrap to it;
// only a hint (a command to type back) may run past.
func TestLessonFitsWidth(t *testing.T) {
	sh := newTestShell(t, 2, 1, true, nil)
	defer sh.Close()
	sh.opts.Width = func() int { return 50 }
	var all []string
	for _, l := range []string{"lesson rc-pingpong", "lesson next", "create_qp pd0 type=uc send_cq=cq0 recv_cq=cq0", "lesson goal"} {
		out, err := sh.Exec(l)
		all = append(all, out, sh.FormatError(err))
	}
	for _, line := range strings.Split(strings.Join(all, "\n"), "\n") {
		if render.Width(line) > 50 && !strings.HasPrefix(strings.TrimSpace(line), "hint:") && !strings.HasPrefix(strings.TrimSpace(line), "hint ") {
			t.Errorf("%d columns: %q", render.Width(line), line)
		}
	}
}
