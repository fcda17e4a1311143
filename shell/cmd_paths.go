package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"sort"
	"strconv"
	"strings"

	"github.com/vsh-rdma/vsh/verbs"
)

// paths shows, for the verbs this session called, how often each ran and
// which way it reaches the device: through a kernel command, a doorbell, an
// event read, or only user-space memory. The table is verbs.VerbPaths: what
// rdma-core 44's rxe provider does, read from its source, the same whatever
// backend runs the session; docs/lab.md has the counts strace measured.

func pathsCmd() *command {
	return &command{Name: "paths", Group: gSession, Usage: "paths [all | VERB | clear]",
		Summary: "Count the verbs this session called and show which enter the kernel on soft-RoCE and on hardware",
		Help: "Lists each verb the session's commands called (as their verb lines show them), how many times, the work requests " +
			"the post verbs carried, and its path as rdma-core 44's rxe provider carries it out — kernel command (an ioctl on " +
			"/dev/infiniband/uverbsN), doorbell (on rxe a write() system call, on hardware a store to a mapped device page), event " +
			"read, files, or user space (no system call) — and as a hardware provider (mlx5) does. The paths come from " +
			"rdma-core's and Linux's source, not from a measurement of this session: on the simulator nothing enters a kernel, and " +
			"docs/lab.md shows what strace counts on rxe0.\n\n" +
			"paths all lists every verb vsh knows; paths post_send explains one; paths clear starts the counts again (reset does too). " +
			"Each verb line counts once for each verb it names, so a command that runs a verb over a range (query_gid without " +
			"index=) counts it once. Not counted: the verbs that helpers run without printing them (the pingpong command's loop) " +
			"and the ibv_query_qp that vsh's views make to draw a QP's state.",
		rawArgs: true, meta: true, run: cmdPaths, complete: completePaths}
}

func cmdPaths(c *call) error {
	vc := c.s.counts()
	if len(c.a.pos) > 1 {
		return usagef(c.cmd.usageHint(), "paths takes one word, not %d", len(c.a.pos))
	}
	what := ""
	if len(c.a.pos) == 1 {
		what = strings.ToLower(c.a.pos[0].text)
	}
	switch what {
	case "":
		if len(vc.order) == 0 {
			c.line("no verb counted yet (counting starts with the session, reset and paths clear); paths all lists every verb vsh knows")
			return nil
		}
		c.line("the verbs this session called, and their paths as rdma-core 44 carries them out (from its source, not measured here):")
		c.out.add(pathTable(vc, vc.order))
		c.line("%s", pathSummary(vc))
		c.line("paths VERB explains one; docs/lab.md has what strace counts on rxe0")
		return nil
	case "all":
		all := verbs.VerbPaths()
		sort.SliceStable(all, func(i, j int) bool { return all[i].Path < all[j].Path })
		var names []string
		for _, p := range all {
			names = append(names, p.Verb)
		}
		c.line("every verb vsh runs, and its path as rdma-core 44 carries it out (calls: in this session):")
		c.out.add(pathTable(vc, names))
		return nil
	case "clear":
		*vc = verbCounts{h: c.s.h, by: map[string]*verbCount{}}
		c.line("the verb counts start again from zero")
		return nil
	}
	p, ok := verbs.PathOf(what)
	if !ok {
		var names []string
		for _, p := range verbs.VerbPaths() {
			names = append(names, strings.TrimPrefix(p.Verb, "ibv_"))
		}
		hint := "paths all lists them"
		if near := nearest(strings.TrimPrefix(what, "ibv_"), names); near != "" {
			hint = "did you mean " + near + "? " + hint
		}
		return usagef(hint, "no verb %q in the table of paths", what)
	}
	calls := "not called in this session"
	if n := vc.by[p.Verb]; n != nil {
		calls = fmt.Sprintf("called %d time%s in this session", n.calls, plural(n.calls))
		if n.wrs > 0 {
			calls += fmt.Sprintf(" with %d WR%s", n.wrs, plural(n.wrs))
		}
	}
	c.line("%s: %s on rxe, %s on hardware (mlx5); %s", p.Verb, p.Path, p.OnHardware(), calls)
	rows := [][]string{{"on rxe", p.RXE}}
	if p.HardwareNote != "" {
		rows = append(rows, []string{"on hardware", p.HardwareNote})
	}
	rows = append(rows, []string{"source", "rdma-core 44 " + p.Source})
	for _, r := range rows {
		c.line("  %-12s %s", r[0]+":", r[1])
	}
	return nil
}

// pathTable is the table of the named verbs with their counts.
func pathTable(vc *verbCounts, names []string) string {
	var rows [][]string
	for _, name := range names {
		n := vc.by[name]
		if n == nil {
			n = &verbCount{}
		}
		calls, wrs := strconv.Itoa(n.calls), "-"
		if n.calls == 0 {
			calls = "-"
		}
		if n.wrs > 0 {
			wrs = strconv.Itoa(n.wrs)
		}
		rxe, hw := "not in the table", "-"
		if p, ok := verbs.PathOf(name); ok {
			rxe, hw = p.Path.String(), p.OnHardware().String()
		}
		rows = append(rows, []string{name, calls, wrs, rxe, hw})
	}
	return render.Table([]string{"verb", "calls", "WRs", "on rxe (soft-RoCE)", "on hardware (mlx5)"}, rows)
}

// pathSummary says how many of the session's calls are system calls on rxe
// and how many would be on hardware.
func pathSummary(vc *verbCounts) string {
	var total, rxe, hw int
	for _, name := range vc.order {
		n := vc.by[name]
		total += n.calls
		if p, ok := verbs.PathOf(name); ok {
			if p.Path.EntersKernel() {
				rxe += n.calls
			}
			if p.OnHardware().EntersKernel() {
				hw += n.calls
			}
		}
	}
	if rxe == hw {
		return fmt.Sprintf("of these %d calls, %d make system calls, on rxe and on hardware alike", total, rxe)
	}
	return fmt.Sprintf("of these %d calls, %d make system calls on rxe; on hardware %d would: the doorbells and the CQ arming stay in user space there",
		total, rxe, hw)
}

func completePaths(s *Shell, done []token, word string) []Suggestion {
	if len(done) > 0 {
		return nil
	}
	out := []Suggestion{{"all", "every verb vsh knows"}, {"clear", "start the counts again"}}
	for _, p := range verbs.VerbPaths() {
		out = append(out, Suggestion{strings.TrimPrefix(p.Verb, "ibv_"), p.Path.String() + " on rxe"})
	}
	return filter(out, word)
}
