package lessons_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// A mutant is a wrong variant of a learner cell: what a learner who makes
// one mistake types instead.
type mutant struct {
	op    string   // the mutation: "drop 2", "qp0→qp1", "type=uc"
	lines []string // what is typed, one command a line
}

// TestMutants plays wrong variants of every learner cell of every shipped
// lesson through the judge, each in a session rebuilt to the step's
// start: one command dropped, a handle swapped for its sibling (qp0↔qp1,
// A↔B), another transport, an access flag removed, another state, opcode
// or MTU, a number halved or doubled, a command repeated, two swapped.
// Each is classified by its resulting state against the step's reference
// without the judge's tolerances (lessons.Judge.Classify): equivalent,
// tolerated, or wrong. Every wrong one must be refused: the judge's verdict
// must not be met after any of its commands. A mutant the judge accepts
// must also be right by what follows: the rest of the lesson, each cell
// replayed on the learner's objects, must reach every later step's goal.
//
// It prints one line:
//
//	lesson mutants: N wrong paths tried, K refused, S accepted (T tolerated, E equivalent)
//
// and fails when S > 0. Each lesson's figures are kept in
// testdata/mutants/figures.txt, which docs/lessons.md shows (go generate ./lessons);
// after a change to a lesson or to the judge, regenerate it with
//
//	go test ./lessons -run TestMutants -rewrite
//
// and read the diff.
func TestMutants(t *testing.T) {
	if raceEnabled {
		t.Skip("the mutants are played without the race detector: make test runs them in a second go test without -race")
	}
	all, err := lessons.All()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var total tally
	perLesson := map[string]tally{}
	t.Run("lesson", func(t *testing.T) {
		for _, l := range all {
			t.Run(l.ID, func(t *testing.T) {
				t.Parallel()
				got := playMutants(t, l)
				mu.Lock()
				total.add(got)
				perLesson[l.ID] = got
				mu.Unlock()
			})
		}
	})
	ids := make([]string, 0, len(perLesson))
	for id := range perLesson {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Logf("%-13s %s", id, perLesson[id])
	}
	line := "lesson mutants: " + total.String()
	t.Log(line)
	fmt.Println(line)
	if t.Failed() {
		return
	}
	if len(perLesson) < len(all) { // -run picked some lessons: their figures alone
		if total.accepted > 0 {
			t.Errorf("%d wrong paths were accepted", total.accepted)
		}
		return
	}
	datadriven.RunTest(t, "testdata/mutants/figures.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "mutants" || len(d.CmdArgs) != 1 {
			d.Fatalf(t, "testdata/mutants/figures.txt holds blocks \"mutants ID\" (or \"mutants all\")")
		}
		if id := d.CmdArgs[0].Key; id != "all" {
			got, ok := perLesson[id]
			if !ok {
				d.Fatalf(t, "no lesson %q", id)
			}
			return got.String() + "\n"
		}
		return total.String() + "\n"
	})
	if total.accepted > 0 {
		t.Errorf("%d wrong paths were accepted", total.accepted)
	}
	if total.wrong < 1000 {
		t.Errorf("only %d wrong paths were tried; the lessons allow more than 1000", total.wrong)
	}
}

// tally counts mutants by outcome.
type tally struct {
	wrong, refused, accepted, tolerated, equivalent int
	strict                                          int // equivalent or tolerated, but refused
}

func (a *tally) add(b tally) {
	a.wrong += b.wrong
	a.refused += b.refused
	a.accepted += b.accepted
	a.tolerated += b.tolerated
	a.equivalent += b.equivalent
	a.strict += b.strict
}

func (a tally) String() string {
	return fmt.Sprintf("%d wrong paths tried, %d refused, %d accepted (%d tolerated, %d equivalent)",
		a.wrong, a.refused, a.accepted, a.tolerated, a.equivalent)
}

// playMutants plays every mutant of every learner cell of l.
func playMutants(t *testing.T, l *lessons.Lesson) tally {
	var got tally
	open := func() (lessons.Env, func() error, error) {
		sh, err := shell.New(shell.Options{Open: func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: 2, Seed: 1}), nil }, Plain: true})
		if err != nil {
			return nil, nil, err
		}
		return sh.LessonEnv(), sh.Close, nil
	}
	ref := lessons.NewReference(l, nil, open)
	defer ref.Close()
	for i, s := range l.Steps {
		if !s.Interactive() {
			continue
		}
		if err := ref.At(i); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		wrongHere := 0
		for _, m := range mutants(s.Cell, ref.Handles()) {
			class, accepted, why := playMutant(t, l, ref, i, m)
			switch {
			case class == lessons.Wrong && accepted:
				got.wrong++
				got.accepted++
				t.Errorf("%s step %d (line %d): the wrong path %q (%s) was accepted: %s", l.ID, i+1, s.Cell.Line, strings.Join(m.lines, "; "), m.op, why)
			case class == lessons.Wrong:
				got.wrong++
				got.refused++
				wrongHere++
			case class == lessons.Tolerated:
				got.tolerated++
				if !accepted {
					got.strict++
				}
			default:
				got.equivalent++
				if !accepted {
					got.strict++
					t.Logf("%s step %d: the equivalent path %q (%s) was refused: %s", l.ID, i+1, strings.Join(m.lines, "; "), m.op, why)
				}
			}
		}
		if wrongHere < 5 && len(s.Cell.Commands) > 1 {
			t.Logf("%s step %d: only %d wrong mutants", l.ID, i+1, wrongHere)
		}
	}
	return got
}

// playMutant plays one mutant of step i in a fresh session rebuilt to the
// step's start, judged against ref. It returns the mutant's class — at the
// command whose state the judge accepted, or at its end — whether the
// judge accepted it, and why the class or the refusal.
func playMutant(t *testing.T, l *lessons.Lesson, ref *lessons.Reference, i int, m mutant) (lessons.Class, bool, string) {
	sh := newShell(t, 2)
	defer sh.Close()
	env := sh.LessonEnv()
	if _, err := lessons.Rebuild(env, l, nil, i); err != nil {
		t.Fatalf("rebuilding %s to step %d: %v", l.ID, i+1, err)
	}
	if err := ref.At(i); err != nil {
		t.Fatalf("%s step %d: %v", l.ID, i+1, err)
	}
	j := lessons.NewJudgeWith(env, ref)
	if err := j.Begin(i); err != nil {
		t.Fatalf("%s step %d: %v", l.ID, i+1, err)
	}
	for _, line := range m.lines {
		sh.Exec(line)
		if v := j.Verdict(); v.Met {
			class, why := j.Classify()
			if class != lessons.Wrong {
				if err := continueLesson(env, j, l, ref, i); err != nil {
					return lessons.Wrong, true, "what follows fails: " + err.Error()
				}
			}
			return class, true, strings.Join(why, "; ")
		}
	}
	class, why := j.Classify()
	return class, false, strings.Join(why, "; ")
}

// continueLesson replays the rest of the lesson after step i on the
// learner's objects, as lesson skip does, and checks each step's goal. The
// learner's own objects, which the judge lets be, are destroyed first, as
// a learner would before the lesson's teardown.
func continueLesson(env lessons.Env, j *lessons.Judge, l *lessons.Lesson, ref *lessons.Reference, i int) error {
	mine := map[string]bool{}
	for _, h := range j.Mapping() {
		mine[h] = true
	}
	hs := env.Handles()
	for k := len(hs) - 1; k >= 0; k-- {
		if !mine[hs[k]] {
			if _, err := env.Exec(destroyCommand(hs[k])); err != nil {
				return fmt.Errorf("destroying your own %s: %s", hs[k], firstLineOf(err.Error()))
			}
		}
	}
	for s := i + 1; s < len(l.Steps); s++ {
		c := l.Steps[s].Cell
		if c == nil {
			continue
		}
		if err := j.Begin(s); err != nil {
			return err
		}
		k := 0
		for _, cmd := range c.Commands {
			if strings.HasPrefix(strings.TrimSpace(cmd.Text), "#") {
				continue
			}
			n := env.RecordCount()
			for _, line := range j.TranslateLines(cmd.Text) {
				if _, err := env.Exec(line); err != nil {
					return fmt.Errorf("step %d: %s: %s", s+1, line, firstLineOf(err.Error()))
				}
			}
			var made []string
			for _, r := range env.Records(n) {
				made = append(made, r.Created...)
			}
			j.Built(k, made)
			k++
		}
		if v := j.Verdict(); !v.Met {
			return fmt.Errorf("step %d: %s", s+1, v.Diffs[0].Text)
		}
	}
	return nil
}

// destroyCommand is the command that destroys a handle's object.
func destroyCommand(h string) string {
	m := handleRE.FindStringSubmatch(h)
	verb := map[string]string{"ctx": "close_device", "pd": "dealloc_pd", "mr": "dereg_mr", "ch": "destroy_comp_channel",
		"cq": "destroy_cq", "srq": "destroy_srq", "qp": "destroy_qp", "ah": "destroy_ah"}[m[1]]
	return verb + " " + h
}

func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// mutants makes the wrong variants of a cell. handles are those of the
// reference at the step (before and after its cell): a swapped handle is
// one of them.
func mutants(c *lessons.Cell, handles []string) []mutant {
	var lines []string
	for _, cmd := range c.Commands {
		if t := strings.TrimSpace(cmd.Text); t != "" && !strings.HasPrefix(t, "#") {
			lines = append(lines, cmd.Bare())
		}
	}
	have := map[string]bool{}
	for _, h := range handles {
		have[h] = true
	}
	seen := map[string]bool{strings.Join(lines, "\n"): true}
	var out []mutant
	add := func(op string, ls []string) {
		k := strings.Join(ls, "\n")
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, mutant{op, ls})
	}
	with := func(k int, line string) []string {
		ls := append([]string(nil), lines...)
		ls[k] = line
		return ls
	}
	for k, line := range lines {
		// Drop it.
		add(fmt.Sprintf("drop %d", k+1), append(append([]string(nil), lines[:k]...), lines[k+1:]...))
		// Repeat it.
		add(fmt.Sprintf("repeat %d", k+1), append(append(append([]string(nil), lines[:k+1]...), line), lines[k+1:]...))
		// Swap it with the next.
		if k+1 < len(lines) && lines[k+1] != line {
			ls := append([]string(nil), lines...)
			ls[k], ls[k+1] = ls[k+1], ls[k]
			add(fmt.Sprintf("swap %d,%d", k+1, k+2), ls)
		}
		for _, r := range rewrites(line, have) {
			add(r.op, with(k, r.line))
		}
	}
	return out
}

// A rewrite is one command changed by one mutation.
type rewrite struct{ op, line string }

var (
	handleRE = regexp.MustCompile(`\b(ctx|pd|mr|ch|cq|srq|qp|ah)([0-9]+)\b`)
	deviceRE = regexp.MustCompile(`(^|[ =])([AB])\b`)
	keyNumRE = regexp.MustCompile(`\b([a-z_]+)=(0x[0-9a-fA-F]+|[0-9]+[kKmM]?)\b`)
	repeatRE = regexp.MustCompile(`^repeat ([0-9]+) `)
	wordRE   = regexp.MustCompile(`\b(type|state|opcode|path_mtu|access|flags)=([A-Za-z0-9_,|]+)`)
)

// numberKeys are the key=NUMBER arguments a mutation halves or doubles;
// the others (wr_id, PSNs, QP numbers, waits) are random or free by nature.
var numberKeys = map[string]bool{
	"length": true, "len": true, "offset": true, "count": true, "max_send_wr": true, "max_recv_wr": true,
	"max_send_sge": true, "max_recv_sge": true, "max_inline": true, "cqe": true, "max_wr": true, "max_sge": true,
	"srq_limit": true, "n": true, "timeout": true, "retry_cnt": true, "rnr_retry": true, "min_rnr_timer": true,
	"max_rd_atomic": true, "max_dest_rd_atomic": true, "sgid_index": true, "gid_index": true, "index": true,
	"pkey_index": true, "add": true, "compare": true, "swap": true, "imm": true, "qkey": true, "remote_qkey": true,
	"iters": true, "size": true, "nth": true, "hop_limit": true,
}

var otherWords = map[string]map[string][]string{
	"type":     {"rc": {"uc", "ud"}, "uc": {"rc", "ud"}, "ud": {"rc", "uc"}},
	"state":    {"init": {"rtr"}, "rtr": {"init", "rts"}, "rts": {"rtr", "sqd"}, "err": {"rts", "reset"}, "reset": {"init"}, "sqd": {"rts"}},
	"opcode":   {"send": {"rdma_write"}, "rdma_write": {"send", "rdma_read"}, "rdma_read": {"rdma_write"}, "send_with_imm": {"rdma_write_with_imm", "send"}, "rdma_write_with_imm": {"send_with_imm", "rdma_write"}, "atomic_fetch_and_add": {"atomic_cmp_and_swp"}, "atomic_cmp_and_swp": {"atomic_fetch_and_add"}},
	"path_mtu": {"256": {"512"}, "512": {"256", "1024"}, "1024": {"512", "2048"}, "2048": {"1024", "4096"}, "4096": {"2048"}},
}

// rewrites are the single changes of one command.
func rewrites(line string, have map[string]bool) []rewrite {
	var out []rewrite
	// A handle for its sibling.
	for _, m := range handleRE.FindAllStringSubmatchIndex(line, -1) {
		prefix := line[m[2]:m[3]]
		n, _ := strconv.Atoi(line[m[4]:m[5]])
		for _, d := range []int{1, -1} {
			sib := fmt.Sprintf("%s%d", prefix, n+d)
			if n+d >= 0 && have[sib] {
				out = append(out, rewrite{fmt.Sprintf("%s%d→%s", prefix, n, sib), line[:m[0]] + sib + line[m[1]:]})
				break
			}
		}
	}
	// A device for the other.
	for _, m := range deviceRE.FindAllStringSubmatchIndex(line, -1) {
		d := line[m[4]:m[5]]
		o := map[string]string{"A": "B", "B": "A"}[d]
		out = append(out, rewrite{d + "→" + o, line[:m[4]] + o + line[m[5]:]})
	}
	// Another transport, state, opcode or MTU; an access or send flag less.
	for _, m := range wordRE.FindAllStringSubmatchIndex(line, -1) {
		key, val := line[m[2]:m[3]], strings.ToLower(line[m[4]:m[5]])
		repl := func(v string) { out = append(out, rewrite{key + "=" + v, line[:m[4]] + v + line[m[5]:]}) }
		if key == "access" || key == "flags" {
			flags := strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == '|' })
			if len(flags) == 1 && flags[0] != "0" {
				repl("0")
			}
			for f := range flags {
				if len(flags) > 1 {
					repl(strings.Join(append(append([]string(nil), flags[:f]...), flags[f+1:]...), ","))
				}
			}
			continue
		}
		for _, v := range otherWords[key][strings.TrimPrefix(strings.TrimPrefix(val, "ibv_qpt_"), "ibv_qps_")] {
			repl(v)
		}
	}
	// A number halved or doubled.
	for _, m := range keyNumRE.FindAllStringSubmatchIndex(line, -1) {
		key := line[m[2]:m[3]]
		if !numberKeys[key] {
			continue
		}
		v, ok := parseNum(line[m[4]:m[5]])
		if !ok {
			continue
		}
		for _, nv := range []uint64{v / 2, v * 2} {
			if nv == v || (v == 0 && nv == 0) {
				nv = 1
			}
			if nv != v {
				out = append(out, rewrite{fmt.Sprintf("%s=%d", key, nv), line[:m[4]] + strconv.FormatUint(nv, 10) + line[m[5]:]})
			}
		}
	}
	if m := repeatRE.FindStringSubmatchIndex(line); m != nil {
		n, _ := strconv.Atoi(line[m[2]:m[3]])
		for _, nv := range []int{n / 2, n * 2} {
			if nv > 0 && nv != n {
				out = append(out, rewrite{fmt.Sprintf("repeat %d", nv), line[:m[2]] + strconv.Itoa(nv) + line[m[3]:]})
			}
		}
	}
	return out
}

func parseNum(s string) (uint64, bool) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m") || strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	v, err := strconv.ParseUint(s, 0, 64)
	return v * mult, err == nil
}
