package shell

import (
	"strings"
	"testing"
)

func TestUnwrapParagraphs(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"paragraph", "one\ntwo\nthree", "one two three"},
		{"two paragraphs, blank runs", "a\nb\n\n\n\nc\nd", "a b\n\nc d"},
		{"list items", "Intro:\n\n- the **LID**;\n- the **PSN**, a\n  number;\n1. first\n2) second\n   more", "Intro:\n\n- the **LID**;\n- the **PSN**, a number;\n1. first\n2) second more"},
		{"fenced code stays", "text\n```c\nint a;\nint b;\n```\nafter\nmore", "text\n```c\nint a;\nint b;\n```\nafter more"},
		{"table stays", "| a | b |\n|---|---|\n| 1 | 2 |", "| a | b |\n|---|---|\n| 1 | 2 |"},
		{"hard break", "line one  \nline two\nthree", "line one  \nline two three"},
		{"heading", "# Title\nbody\nmore", "# Title\nbody more"},
		{"quote and html", "> a quote\n<b>x</b>\ny", "> a quote\n<b>x</b>\ny"},
		{"a number that is not a list", "in 2024. Then\n2024 was", "in 2024. Then 2024 was"},
		{"a number and ) mid-paragraph", "a TCP connection (port\n18515) and", "a TCP connection (port 18515) and"},
		{"an ordered list from 1 interrupts", "steps:\n1. one\n2. two\n   more", "steps:\n1. one\n2. two more"},
		{"a hash that is no heading", "issue\n#5 is", "issue #5 is"},
		{"hard break kept", "a  \nb\nc", "a  \nb c"},
		{"hard break of a joined line", "x\ny  \nthen", "x y  \nthen"},
		{"indented code", "text\n\n    a := 1\n    b := 2\n\nafter\nmore", "text\n\n    a := 1\n    b := 2\n\nafter more"},
		{"setext heading", "Para\n---\nnext", "Para\n---\nnext"},
		{"table without outer bars", "a | b\n--- | ---\n1 | 2\n\nx\ny", "a | b\n--- | ---\n1 | 2\n\nx y"},
		{"four-backtick fence holds three", "````md\n```\ninner\n````\nafter\nmore", "````md\n```\ninner\n````\nafter more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unwrapParagraphs(tt.in); got != tt.want {
				t.Errorf("unwrapParagraphs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFoldRepeats(t *testing.T) {
	same := "[7] #0 post_recv qp0 mr=mr0\n    ok\n    wr 1\n#1"
	tests := []struct{ name, in, want string }{
		{"all the same, then the states",
			"[7] #0 recv qp0\n    ok\n    wr 1\n    #1 recv qp0\n    ok\n    wr 1\n    #2 recv qp0\n    ok\n    wr 1\n    qp0 RQ 3/7\n",
			"[7] #0 recv qp0\n    ok\n    wr 1\n    #1 to #2: the same output as #0\n    qp0 RQ 3/7\n"},
		{"one the same",
			"[7] #0 recv qp0\n    ok\n    #1 recv qp0\n    ok\n",
			"[7] #0 recv qp0\n    ok\n    #1: the same output as #0\n"},
		{"{i} makes each different",
			"[7] #0 recv qp0 wr_id=0\n    ok\n    #1 recv qp0 wr_id=1\n    ok\n",
			"[7] #0 recv qp0 wr_id=0\n    ok\n    #1 recv qp0 wr_id=1\n    ok\n"},
		{"a different one ends the run",
			"[10] #0 poll cq0\n     1 row\n     #1 poll cq0\n     1 row\n     #2 poll cq0\n     none\n     #3 poll cq0\n     none\n",
			"[10] #0 poll cq0\n     1 row\n     #1: the same output as #0\n     #2 poll cq0\n     none\n     #3: the same output as #2\n"},
		{"an error after the last",
			"[7] #0 recv qp0\n    ok\n    #1 recv qp0\n    ok\n[7] error: repeat: ENOMEM\n",
			"[7] #0 recv qp0\n    ok\n    #1: the same output as #0\n[7] error: repeat: ENOMEM\n"},
		{"a shorter last one stays", "[7] #0 recv qp0\n    ok\n    more\n    #1 recv qp0\n    ok\n",
			"[7] #0 recv qp0\n    ok\n    more\n    #1 recv qp0\n    ok\n"},
		{"no repetitions", "[7] ibv_post_recv = 0\n", "[7] ibv_post_recv = 0\n"},
		{"not a cell's output", same, same},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&repeatFold{}).fold(0, tt.in); got != tt.want {
				t.Errorf("fold\n%s\n got\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNotebookCommentParagraphs: comment lines typed in a row are one
// paragraph, an empty comment starts another, and they sit in the step
// the tutor was at when they were typed: under its heading, before its
// cells — the tutor's too, after lesson skip — or, typed before a
// lesson, before it.
func TestNotebookCommentParagraphs(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"# before the lesson", "open_device A", "# still before", "lesson tour --force", "devices",
		"# first line", "# second line", "#", "# new paragraph", "lesson next", "# about step 2", "open_device A",
		"# step 3: I let the tutor do it", "lesson skip", "# [a link](javascript:alert(1)) *bold* | <b>", "# 1. not a list", "# ---", "save nb.md"} {
		sh.Exec(l)
	}
	nb := string(files.m["nb.md"])
	for _, want := range []string{
		"# vsh notebook: Lesson tour: A tour of an RDMA device\n",
		"\nbefore the lesson\n\n```vsh cell=1\n[1] vsh> open_device A\n[1] ibv_open_device(A = sim0) → ctx0  [control path]\n```",
		"\nstill before\n\n```vsh cell=3\n[3] tutor> reset\n```", // the lesson's fresh start
		"</details>\n\n## Step 1 of 9 · Devices\n",
		"</details>\n\nfirst line second line\n\nnew paragraph\n\nabout step 2\n\n```vsh cell=",
		"## Step 3 of 9 · What the device can do\n<details",
		"</details>\n\nstep 3: I let the tutor do it\n\n```vsh cell=8\n[8] tutor> query_device ctx0\n```",
		"\n\\[a link\\](javascript:alert(1)) \\*bold\\* \\| &lt;b&gt; 1\\. not a list \\---\n",
	} {
		if !strings.Contains(nb, want) {
			t.Errorf("the notebook has no %q:\n%s", want, nb)
		}
	}
}

// TestProseHTML: one line, words kept apart where the Markdown broke a
// line, code's newlines kept, raw HTML and risky links left out.
func TestProseHTML(t *testing.T) {
	for _, tt := range []struct{ md, want, not string }{
		{"> a\n> b", "a b", "ab"},
		{"text <https://example.com/x> more", "example.com/x", "\n"},
		{"```\nline 1\nline 2\n```", "line 1&#10;line 2", "\n"},
		{"hi <img src=x onerror=alert(1)> [x](javascript:alert(1))", "hi", "onerror"},
		{"[x](javascript:alert(1))", "x", "javascript:"},
	} {
		got := proseHTML(tt.md)
		if !strings.Contains(got, tt.want) || strings.Contains(got, tt.not) || strings.Contains(got, "\n") {
			t.Errorf("proseHTML(%q) = %q, want %q and no %q", tt.md, got, tt.want, tt.not)
		}
	}
}

// TestFoldRepeatsAcrossCells: a later cell's repetitions that printed
// what an earlier cell's did name it; a different one is shown.
func TestFoldRepeatsAcrossCells(t *testing.T) {
	var f repeatFold
	first := "[34] #0 do send; poll\n     sent\n     polled\n     #1 do send; poll\n     sent\n     polled\n     qp0 SQ 0/1\n"
	if got, want := f.fold(34, first), "[34] #0 do send; poll\n     sent\n     polled\n     #1: the same output as #0\n     qp0 SQ 0/1\n"; got != want {
		t.Errorf("first cell:\n%s\nwant\n%s", got, want)
	}
	later := "[37] #0 do send; poll\n     sent\n     polled\n     #1 do send; poll\n     sent\n     polled\n     #2 do send; poll\n     sent\n     polled\n     qp0 SQ 0/3\n"
	if got, want := f.fold(37, later), "[37] #0 to #2: the same output as [34] #0\n     qp0 SQ 0/3\n"; got != want {
		t.Errorf("later cell:\n%s\nwant\n%s", got, want)
	}
	other := "[40] #0 do send; poll\n     sent\n     NOT polled\n     #1 do send; poll\n     sent\n     polled\n"
	if got, want := f.fold(40, other), "[40] #0 do send; poll\n     sent\n     NOT polled\n     #1: the same output as [34] #0\n"; got != want {
		t.Errorf("a different one:\n%s\nwant\n%s", got, want)
	}
}
