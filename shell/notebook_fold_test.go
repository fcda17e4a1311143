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
			if got := foldRepeats(tt.in); got != tt.want {
				t.Errorf("foldRepeats\n%s\n got\n%s\nwant\n%s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNotebookCommentParagraphs: comment lines typed in a row are one
// paragraph, an empty comment starts another, and they sit under the
// heading of the step whose cell follows them.
func TestNotebookCommentParagraphs(t *testing.T) {
	files := newMemFiles()
	sh := newTestShell(t, 2, 1, true, files)
	defer sh.Close()
	for _, l := range []string{"lesson tour", "devices", "# first line", "# second line", "#", "# new paragraph", "lesson next", "# about the next step", "open_device A", "save nb.md"} {
		sh.Exec(l)
	}
	nb := string(files.m["nb.md"])
	for _, want := range []string{"\nfirst line second line\n\nnew paragraph\n\n## Step 2 of 9", "</details>\n\nabout the next step\n\n```vsh cell="} {
		if !strings.Contains(nb, want) {
			t.Errorf("the notebook has no %q:\n%s", want, nb)
		}
	}
}
