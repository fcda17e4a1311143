package docs

import (
	"strings"
	"testing"
)

func TestParseMarks(t *testing.T) {
	doc := strings.Join([]string{
		"# A doc",
		"```vsh",
		"open_device A",
		"alloc_pd ctx0",
		"```",
		"<!-- transcript: sim seed=7 devices=1 script=above -->",
		"```text",
		"...",
		"```",
		"<!-- transcript: sim -->",
		"```text",
		"[1] vsh> open_device A",
		"[1] ibv_open_device(A = sim0) → ctx0  [control path]",
		"```",
		"<!-- transcript: rxe0",
		"open_device rxe0",
		"-->",
		"````text",
		"...",
		"````",
		"    [2] vsh> an indented, unmarked prompt",
		"```",
		"[3] vsh> in an unmarked block",
		"```",
	}, "\n")
	bs, unmarked, err := parseFile("x.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 {
		t.Fatalf("parseFile found %d blocks, want 3", len(bs))
	}
	for i, want := range []struct {
		backend, from, script string
		seed                  int64
		devices, first, end   int
	}{
		{"sim", "above", "open_device A|alloc_pd ctx0", 7, 1, 7, 8},
		{"sim", "block", "open_device A", 1, 2, 11, 13},
		{"rxe0", "mark", "open_device rxe0", 1, 2, 18, 19},
	} {
		b := bs[i]
		if b.backend != want.backend || b.from != want.from || strings.Join(b.script, "|") != want.script ||
			b.seed != want.seed || b.devices != want.devices || b.first != want.first || b.end != want.end {
			t.Errorf("block %d = %s %s %q seed %d devices %d body %d..%d, want %+v", i, b.backend, b.from,
				b.script, b.seed, b.devices, b.first, b.end, want)
		}
	}
	if got := len(unmarked); got != 2 || unmarked[0] != 21 || unmarked[1] != 23 {
		t.Errorf("unmarked prompts at %v, want [21 23]", unmarked)
	}

	for _, bad := range []string{
		"<!-- transcript: -->\n```\n[1] vsh> x\n```",                          // no backend
		"<!-- transcript: sim seed=x -->\n```\n[1] vsh> x\n```",               // bad seed
		"<!-- transcript: rxe0 seed=1 -->\n```\n[1] vsh> x\n```",              // seed on rxe0
		"<!-- transcript: sim -->\n\n```\n[1] vsh> x\n```",                    // not at once
		"<!-- transcript: sim -->\n```\nno prompt\n```",                       // no commands
		"<!-- transcript: sim script=above -->\n```\n[1] vsh> x\n```",         // nothing above
		"<!-- transcript: sim\nopen_device A\n```\n[1] vsh> x\n```",           // never closed
		"```vsh\nx\n```\n<!-- transcript: sim script=above\ny\n-->\n```\n```", // two scripts
	} {
		if _, _, err := parseFile("bad.md", bad); err == nil {
			t.Errorf("parseFile(%q) = nil error, want one", bad)
		}
	}
}

func TestAlign(t *testing.T) {
	out := []string{
		"[1] vsh> open_device A",
		"[1] ibv_open_device(A = sim0) → ctx0  [control path]",
		"[2] vsh> reg_mr pd0 length=64",
		"    mr0: addr 0x1000 lkey 0x1bd",
		"[3] vsh> poll_cq cq0",
		"     wire #1 t=2.054µs delivered",
		"     cq0 CQ 0/31",
	}
	for _, tc := range []struct {
		name      string
		body      []string
		match     bool
		rewritten []string // when it does not match
	}{
		{name: "exact", body: out, match: true},
		{name: "elisions and masks", match: true, body: []string{
			"... cells 1 and 2",
			"    mr0: addr «addr» lkey «key»",
			"...",
			"     wire #1 t=«time» delivered",
			"...",
		}},
		{name: "an elision may take no line", match: true, body: append(append([]string{}, out[:3]...), append([]string{"..."}, out[3:]...)...)},
		{name: "a mask takes one line, not more", body: []string{"«all»"}, rewritten: append([]string{"«all»"}, out[1:]...)},
		{name: "a line edited by hand", body: []string{
			"[1] vsh> open_device A",
			"...",
			"     cq0 CQ 1/31",
		}, rewritten: []string{
			"[1] vsh> open_device A",
			"...",
			"     cq0 CQ 0/31",
		}},
		{name: "a masked line that no longer matches, and new lines", body: []string{
			"[1] vsh> open_device A",
			"[1] ibv_open_device(A = sim0) → ctx0  [control path]",
			"    mr0: addr «addr» lkey 0x0",
			"[3] vsh> poll_cq cq0",
			"     cq0 CQ 0/31",
		}, rewritten: []string{
			"[1] vsh> open_device A",
			"[1] ibv_open_device(A = sim0) → ctx0  [control path]",
			"[2] vsh> reg_mr pd0 length=64",
			"    mr0: addr 0x1000 lkey 0x1bd",
			"[3] vsh> poll_cq cq0",
			"     wire #1 t=2.054µs delivered",
			"     cq0 CQ 0/31",
		}},
		{name: "a line vsh no longer prints", body: append(append([]string{}, out...), "     gone"), rewritten: out},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := compile(tc.body)
			ops := align(ps, out)
			if got := matched(ops); got != tc.match {
				t.Fatalf("matched = %v, want %v", got, tc.match)
			}
			want := tc.rewritten
			if tc.match {
				want = tc.body
			}
			if got := rewritten(tc.body, ops, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("rewritten =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			b := &block{file: "x.md", body: tc.body}
			if d := diff(b, ops, out); (d == "") != tc.match {
				t.Errorf("diff = %q; matched %v", d, tc.match)
			}
			// What is rewritten always matches.
			rw := rewritten(tc.body, ops, out)
			if !matched(align(compile(rw), out)) {
				t.Errorf("the rewritten block does not match:\n%s", strings.Join(rw, "\n"))
			}
		})
	}
}
