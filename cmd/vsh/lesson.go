package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/vsh-rdma/vsh/internal/safefile"
	"golang.org/x/term"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell"
	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

const lessonUsage = `usage: vsh [flags] lesson list [DIR]         the lessons, and which this backend can play; DIR: a course's, in order
       vsh [flags] lesson ID|FILE [--report OUT.json]
                                             take a lesson: you type (or a script on stdin does), the tutor
                                             checks each goal; --report writes how it went, as JSON, as it goes
       vsh [flags] lesson DIR [--report FOLDER]
                                             take a course's next lesson you have not solved; at a terminal, --report: FOLDER/ID.json
       vsh [flags] lesson play ID|FILE|DIR|all... [--pace 1s]
                                             play them in order, narrated, every cell run and checked; no terminal needed
       vsh [flags] lesson play ID|FILE [--step N] [--pause]
                                             at a projector: start at step N (the steps before replayed silently);
                                             --pause waits before each step: Enter or space plays it, b goes back, q stops
       vsh [flags] lesson check FILE|DIR...  validate lesson files (a course: all of its lessons) and play them on the simulator
       vsh [flags] lesson check FILE --learner PATH.vsh [--learner ...]
                                             and play learner paths through its tutor, checking their #! markers
       vsh [flags] lesson export ID|FILE --ipynb OUT.ipynb [--solutions] [-f|--force]
                                             write the lesson as a Jupyter notebook for the vsh kernel (docs/jupyter.md):
                                             a cell to write in and a check cell for each goal; --solutions fills in
                                             the lesson's own commands; -f overwrites OUT; --ipynb - writes to stdout
       vsh [flags] lesson export ID|FILE --md OUT.md [-f|--force]
                                             write the lesson's source (a shipped lesson's too), to copy and adapt
       vsh --lessons DIR [flags] ...         add a course's lessons to the shipped ones (lesson list, lesson ID)

A lesson that needs what the backend lacks (two devices, stepping, ...) is skipped, with the reason;
a section that alone needs it is skipped, and the lesson goes on.
A course is a folder of lesson files with an optional course.md (title, order, requires:); the course lessons
you solve are kept in $XDG_STATE_HOME/vsh/progress.json (~/.local/state/vsh/ without it).
Taking a lesson exits 0 when the learner solved every step, 1 when the lesson is unfinished or a step
was skipped or solved after lesson hint showed its commands, 2 when the lesson or the command line is
wrong. The report's format: docs/lesson-report.md.
Lessons ship with vsh (docs/lessons.md); instructors write their own (docs/writing-lessons.md).
`

// lessonFlags are the flags of vsh lesson, parsed with the others.
type lessonFlags struct {
	pace    *time.Duration
	learner *[]string
	report  *string
	step    *int
	pause   *bool
}

func addLessonFlags(fs *flag.FlagSet) lessonFlags {
	var learner []string
	fs.Func("learner", "", func(v string) error { learner = append(learner, v); return nil })
	var report string
	fs.Func("report", "", func(v string) error {
		if report != "" {
			return fmt.Errorf("--report is given twice (%s and %s): one report a lesson", report, v)
		}
		report = v
		return nil
	})
	pace := new(time.Duration)
	fs.Func("pace", "", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a time such as 2s or 500ms, zero or more")
		}
		*pace = d
		return nil
	})
	return lessonFlags{pace: pace, learner: &learner, report: &report,
		step: stepFlag(fs), pause: fs.Bool("pause", false, "")}
}

// parseLessonArgs reads the words after "lesson", with flags allowed
// among them (vsh lesson play tour --pace 2s).
func parseLessonArgs(fs *flag.FlagSet) ([]string, error) { return parseWords(fs, fs.Args()[1:]) }

// parseWords reads words with fs's flags allowed among them.
func parseWords(fs *flag.FlagSet, rest []string) ([]string, error) {
	words := []string{}
	for {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return words, nil
		}
		words = append(words, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

// lessonRun is what vsh lesson needs from main: how to open the chosen
// backend and describe it, and the simulator's settings for check.
type lessonRun struct {
	open    func() (verbs.Provider, error)
	desc    string
	plain   bool
	devices int
	seed    int64
	xrc     bool // --sim-xrc: lesson check's simulator has XRC
	pace    time.Duration
	learner []string // lesson check --learner
	report  string   // vsh lesson ID --report OUT.json
	// confined: the sessions write no files and reach no network
	// (shell.Options.Confined): lesson check, and --report with a script
	// on stdin (at a terminal the learner saves a notebook as ever).
	confined bool
	step     int  // vsh lesson play ID --step N: from step N (1-based), 0 for the first
	pause    bool // vsh lesson play --pause: a key before each step
	// interrupted is set when the presenter pressed Ctrl-C at a pause.
	interrupted bool
	light       bool // --theme: colours for a light background
	// clock times the steps for the report; nil is time.Now. Tests set it.
	clock    func() time.Time
	stdin    *os.File
	stdout   io.Writer
	stderr   io.Writer
	terminal bool
	// judge: play compares every cell with the lesson's reference on the
	// simulator, as the tutor judges a learner (on a real device).
	judge bool
	// catalog: the shipped lessons and those of --lessons DIR (course.go).
	catalog *lessons.Catalog
	// solved: the course lessons the learner solved (course.go).
	solved *lessons.Progress
	// width: the width output fits (--width, or the terminal's); nil none.
	width func() int
	// export: vsh lesson export's flags.
	export exportFlags
}

func (r *lessonRun) newShell(open func() (verbs.Provider, error), desc string) (*shell.Shell, error) {
	confined := r.confined || r.report != "" && !r.terminal
	solved := r.solved
	if confined {
		solved = nil // the grader's own progress file is not the student's
	}
	return shell.New(shell.Options{Open: open, Shadow: shadowSim(r.seed), Plain: r.plain, Light: r.light, Backend: desc, Version: versionString(),
		Progress: shell.Progress(os.Stderr), Lessons: r.catalog, Solved: solved, StateDir: stateDir(r.terminal), Width: r.width,
		Confined: confined})
}

// simShell is a session on the simulator with --devices and --seed, where
// lesson check plays whatever --backend says.
func (r *lessonRun) simShell() (*shell.Shell, error) { return r.simShellN(r.devices) }

func (r *lessonRun) simShellN(devices int) (*shell.Shell, error) {
	return r.simShellXRC(devices, r.xrc)
}

// simShellXRC is simShellN with the simulator's XRC on or off.
func (r *lessonRun) simShellXRC(devices int, xrc bool) (*shell.Shell, error) {
	n, seed := devices, r.seed
	return r.newShell(func() (verbs.Provider, error) { return sim.New(sim.Config{Devices: n, Seed: seed, XRC: xrc}), nil },
		fmt.Sprintf("sim (%d devices, seed %d%s)", devices, r.seed, map[bool]string{true: ", XRC on"}[xrc]))
}

// simOpener opens lesson check's sessions on a simulator with devices.
func (r *lessonRun) simOpener(devices int) func() (lessons.Env, func() error, error) {
	return r.simOpenerXRC(devices, r.xrc)
}

// simOpenerXRC is simOpener with the simulator's XRC on or off: on for a
// lesson that needs xrc (shell.Shell.PrepareLesson turns it on in a
// session; lesson check's plays are lessons.CheckLesson's own).
func (r *lessonRun) simOpenerXRC(devices int, xrc bool) func() (lessons.Env, func() error, error) {
	return func() (lessons.Env, func() error, error) {
		sh, err := r.simShellXRC(devices, xrc)
		if err != nil {
			return nil, nil, err
		}
		return sh.LessonEnv(), sh.Close, nil
	}
}

// runLesson is vsh lesson: it returns the exit status.
func runLesson(words []string, r *lessonRun) int {
	if len(words) == 0 {
		fmt.Fprint(r.stderr, "vsh: lesson needs a word\n\n"+lessonUsage)
		return 2
	}
	if status := r.playFlags(words); status != 0 {
		return status
	}
	if r.report != "" && (len(words) != 1 || slices.Contains([]string{"list", "play", "check", "help"}, words[0])) {
		fmt.Fprintf(r.stderr, "vsh: --report is for taking one lesson: vsh lesson ID --report OUT.json (with the learner's script on stdin, or on a terminal)\n")
		return 2
	}
	if len(r.learner) > 0 && (words[0] != "check" || len(words) != 2 || isDir(words[1])) {
		fmt.Fprintf(r.stderr, "vsh: --learner is for vsh lesson check with one lesson file: vsh lesson check FILE --learner PATH.vsh\n")
		return 2
	}
	switch words[0] {
	case "list":
		switch len(words) {
		case 1:
			return r.list()
		case 2:
			return r.listCourse(words[1])
		}
		fmt.Fprintf(r.stderr, "vsh: lesson list takes at most a course folder, not %q and %q\n", words[1], words[2])
		return 2
	case "play":
		if len(words) < 2 {
			fmt.Fprint(r.stderr, "vsh: lesson play takes lessons: ids, files, course folders, or all\n\n"+lessonUsage)
			return 2
		}
		return r.play(words[1:])
	case "check":
		if len(words) < 2 {
			fmt.Fprint(r.stderr, "vsh: lesson check needs a lesson file\n\n"+lessonUsage)
			return 2
		}
		return r.check(words[1:])
	case "export":
		return r.exportNotebook(words[1:])
	case "help":
		fmt.Fprint(r.stdout, lessonUsage)
		return 0
	}
	if len(words) > 1 {
		fmt.Fprintf(r.stderr, "vsh: lesson %s takes nothing more, not %q (lesson play takes several)\n\n%s", words[0], words[1], lessonUsage)
		return 2
	}
	if isDir(words[0]) {
		return r.nextInCourse(words[0])
	}
	return r.interactive(words[0])
}

func (r *lessonRun) list() int {
	all, err := r.catalog.All()
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	p, err := r.open()
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	defer p.Close()
	tw := tabwriter.NewWriter(r.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "lesson\tlevel\ttime\ttitle")
	skipped, partly := 0, 0
	var notes []string
	for _, l := range all {
		mark := ""
		if miss := lessons.Missing(l, p); len(miss) > 0 {
			skipped++
			mark = " (skipped here)"
			notes = append(notes, fmt.Sprintf("%s needs %s", l.ID, strings.Join(miss, "; ")))
		} else if secs := lessons.SkippedSections(l, p); len(secs) > 0 {
			// The lesson plays, without the sections that need more.
			partly++
			n := 0
			for _, s := range secs {
				n += s.StepCount()
				notes = append(notes, fmt.Sprintf("%s plays without %s (%q): they need %s", l.ID, s.Steps(), s.Section, strings.Join(s.Reasons, "; ")))
			}
			mark = fmt.Sprintf(" (%d step%s skipped here)", n, plural(n))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d min\t%s%s\n", l.ID, l.Level, l.Minutes, l.Title, mark)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(r.stdout, n)
	}
	counts := fmt.Sprintf("%d skipped", skipped)
	if partly > 0 {
		counts += fmt.Sprintf(", %d played in part", partly)
	}
	fmt.Fprintf(r.stdout, "%d lessons on %s; %s. vsh lesson ID takes one; vsh lesson play ID plays it.\n", len(all), r.desc, counts)
	return 0
}

// play plays lessons in order, each in a fresh session: ids, files,
// course folders (their lessons in the course's order) and all.
func (r *lessonRun) play(which []string) int {
	list, err := r.expand(which)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	if r.step > 0 && len(list) == 1 && r.step > len(list[0].Steps) {
		fmt.Fprintf(r.stderr, "vsh: --step %d: lesson %s has steps 1 to %d, not a step %d\n", r.step, list[0].ID, len(list[0].Steps), r.step)
		return 2
	}
	played, partly, skipped, failed := 0, 0, 0, 0
	ctx, caught, stop := stopOnSignals()
	defer stop()
	for i, l := range list {
		if i > 0 {
			fmt.Fprintln(r.stdout)
		}
		sh, err := r.newShell(r.open, r.desc)
		if err != nil {
			fmt.Fprintf(r.stderr, "vsh: %v\n", err)
			return 1
		}
		o := lessons.PlayOptions{Pace: r.pace, Judge: r.judge, Context: ctx, From: max(r.step-1, 0)}
		if r.pause {
			o.Pause = r.presenterKey
		}
		err = r.playIn(sh, l, o)
		if errors.Is(err, lessons.ErrPlayQuit) {
			sh.Close()
			if r.interrupted {
				fmt.Fprintf(r.stderr, "vsh: interrupt: lesson play stopped\n")
				return 130 // 128 + SIGINT, as a shell reports Ctrl-C
			}
			fmt.Fprintf(r.stdout, "\n» the play of lesson %s stopped where the presenter pressed q\n", l.ID)
			return 0
		}
		if sig := caught(); sig != nil {
			sh.Close()
			fmt.Fprintf(r.stderr, "vsh: %v: lesson play stopped\n", sig)
			return signalStatus(sig)
		}
		if err == nil && len(lessons.SkippedSections(l, sh.LessonEnv().Provider())) > 0 {
			partly++
		}
		sh.Close()
		var skip *lessons.SkipError
		switch {
		case errors.As(err, &skip):
			skipped++
			fmt.Fprintf(r.stdout, "skipped %s: it needs %s\n", l.ID, strings.Join(skip.Reasons, "; "))
		case err != nil:
			failed++
			fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		default:
			played++
		}
	}
	if len(list) > 1 || skipped > 0 {
		inPart := ""
		if partly > 0 {
			inPart = fmt.Sprintf(" (%d in part)", partly)
		}
		fmt.Fprintf(r.stdout, "\n%d lesson%s on %s: %d played%s, %d skipped, %d failed\n",
			len(list), plural(len(list)), r.desc, played, inPart, skipped, failed)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// playIn plays lesson l in sh, once the session has what l needs that the
// backend keeps switched off (XRC: shell.Shell.PrepareLesson).
func (r *lessonRun) playIn(sh *shell.Shell, l *lessons.Lesson, o lessons.PlayOptions) error {
	said, err := sh.PrepareLesson(l)
	if err != nil {
		return &lessons.SkipError{Lesson: l, Reasons: []string{err.Error()}}
	}
	io.WriteString(r.stdout, said)
	return lessons.Play(sh.LessonEnv(), l, r.stdout, o)
}

// needsXRC reports whether the lesson in src needs XRC, itself or in a
// section (needs: xrc); a lesson that does not parse does not.
func needsXRC(name string, src []byte) bool {
	l, err := lessons.Parse(name, src)
	if err != nil {
		return false
	}
	needs := l.Needs
	for _, s := range l.Steps {
		needs = append(needs, s.Needs...)
	}
	for _, n := range needs {
		if n == "xrc" {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// check validates lesson files and plays each on the simulator, whatever
// --backend says: a lesson must play there before it ships.
func (r *lessonRun) check(files []string) int {
	r.confined = true
	status := 0
	o := lessons.CheckOptions{Open: r.simOpener(r.devices), Version: versionString()}
	if r.devices > 1 {
		o.OpenOne = r.simOpener(1)
	}
	for _, f := range files {
		if isDir(f) {
			status = max(status, r.checkCourse(f, o))
			continue
		}
		data, err := lessons.ReadFile(f)
		if err != nil {
			fmt.Fprintf(r.stderr, "vsh: %v\n", err)
			status = 1
			continue
		}
		lo := o
		if !r.xrc && needsXRC(f, data) {
			lo.Open, lo.OpenOne = r.simOpenerXRC(r.devices, true), nil
			if r.devices > 1 {
				lo.OpenOne = r.simOpenerXRC(1, true)
			}
		}
		l, err := lessons.CheckLesson(f, data, lo)
		if err != nil {
			var es lessons.Errors
			if errors.As(err, &es) {
				for _, e := range es {
					fmt.Fprintln(r.stderr, e)
				}
				fmt.Fprintf(r.stderr, "%s: %d problem%s\n", f, len(es), plural(len(es)))
			} else {
				fmt.Fprintln(r.stderr, err)
			}
			status = 1
			continue
		}
		fmt.Fprintf(r.stdout, "%s: ok: lesson %s, %d step%s (%d for the learner), played on the simulator with every expectation met\n",
			f, l.ID, len(l.Steps), plural(len(l.Steps)), l.Interactive())
		for _, path := range r.learner {
			status = max(status, r.checkLearner(f, path))
		}
	}
	return status
}

// checkLearner plays a learner's path through the tutor of lesson file f on
// the simulator and reports the markers that did not hold.
func (r *lessonRun) checkLearner(f, path string) int {
	in, err := safefile.Open(path)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	defer in.Close()
	sh, err := r.simShell()
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	defer sh.Close()
	res, err := sh.CheckLearnerPath(f, in, path)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	for _, p := range res.Problems {
		fmt.Fprintln(r.stderr, p)
	}
	end := fmt.Sprintf("the learner stopped at step %d", res.Step)
	switch {
	case res.Over:
		end = "the lesson ended"
	case res.Step == 0:
		end = "the path left the lesson"
	}
	if len(res.Problems) > 0 {
		fmt.Fprintf(r.stderr, "the session's last lines:\n%s\n", lastLines(res.Transcript, 30))
		fmt.Fprintf(r.stderr, "%s: %d problem%s (%s; %d of %d learner steps solved by the learner, %d skipped)\n",
			path, len(res.Problems), plural(len(res.Problems)), end, res.Solved, res.Interactive, res.Skipped)
		return 1
	}
	preds := ""
	if res.Predicted > 0 {
		preds = fmt.Sprintf("; %d of %d predictions right", res.Right, res.Predicted)
	}
	if res.Unjudged > 0 {
		preds += fmt.Sprintf("; %d prediction%s answered in a step the path did not finish, not judged", res.Unjudged, plural(res.Unjudged))
	}
	fmt.Fprintf(r.stdout, "%s: ok: every marker held; %s, %d of %d learner steps solved by the learner, %d skipped%s\n",
		path, end, res.Solved, res.Interactive, res.Skipped, preds)
	return 0
}

// interactive starts a session with the lesson running: on a terminal the
// usual prompt, otherwise the learner's commands from stdin, one a line,
// carrying on past mistakes. It returns 0 when the learner solved every
// step, 1 when not, 2 when the lesson did not start.
func (r *lessonRun) interactive(which string) int {
	sh, err := r.newShell(r.open, r.desc)
	if err != nil {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	defer sh.Close()
	var script *bufio.Reader
	notebook, handIn := false, ""
	if !r.terminal {
		// A script saved in a notebook did the tutor's setup itself.
		script = bufio.NewReader(r.stdin)
		first, _ := script.Peek(4096)
		handIn, notebook = notebookHandIn(first)
		if savedNotebook(first) {
			fmt.Fprintf(r.stderr, "vsh: stdin is a Markdown notebook (save FILE.md), which shows the session but leaves out the learner's lesson commands (lesson next, hint, skip); grade the learner's script instead: save FILE.vsh in the session writes it\n")
			r.removeStaleReport()
			return 2
		}
	}
	var out string
	if notebook {
		out, err = sh.NotebookLesson(which)
		if err == nil {
			out = strings.TrimSuffix(out, "\n") + "\n» graded as a notebook's cells: the tutor runs none of the lesson's own, and judges each step as %check did\n"
		}
	} else {
		out, err = sh.Exec("lesson " + lessons.QuoteRef(which))
	}
	tu := sh.Tutor()
	if err != nil || tu == nil {
		io.WriteString(r.stdout, out)
		if err != nil {
			fmt.Fprint(r.stderr, sh.FormatError(err))
		}
		r.removeStaleReport()
		return 2
	}
	if notebook && handIn != tu.Lesson().ID {
		fmt.Fprintf(r.stderr, "vsh: stdin was saved in a notebook of lesson %s, not of lesson %s: grade it against its own lesson\n", handIn, tu.Lesson().ID)
		r.removeStaleReport()
		return 2
	}
	if r.clock != nil {
		tu.SetClock(r.clock)
	}
	if err := r.reportTarget(tu.Lesson()); err != nil {
		fmt.Fprintf(r.stderr, "vsh: --report %s: %v\n", r.report, err)
		return 2
	}
	rep := &reportFile{path: r.report, tutor: tu, run: r, notebook: notebook}
	if err := rep.write(false); err != nil {
		fmt.Fprintf(r.stderr, "vsh: --report: %v\n", err)
		return 2
	}
	tu.OnProgress(func() { rep.update() })
	status := r.takeLesson(sh, out, script)
	if notebook {
		tu.Settle() // a step longer than the tutor judges as it goes
	}
	if status >= 0 {
		return status
	}
	if _, over := tu.Step(); over && notebook && !tu.Quit() { // lesson quit shows it
		fmt.Fprintf(r.stdout, "» the notebook's cells went through lesson %s:\n%s", tu.Lesson().ID, tu.Summary())
	} else if !over && !r.terminal {
		step, _ := tu.Step()
		fmt.Fprintf(r.stdout, "» the script ended at step %d of %d of lesson %s, before the lesson did:\n%s",
			step+1, len(tu.Lesson().Steps), tu.Lesson().ID, tu.Summary())
	}
	if err := rep.write(true); err != nil {
		fmt.Fprintf(r.stderr, "vsh: --report: %v\n", err)
	}
	if err := tu.Broken(); err != nil {
		fmt.Fprintf(r.stderr, "vsh: lesson %s is broken: its own commands failed on the simulator (%v), so its steps could not all be judged; vsh lesson check on its file says where\n",
			tu.Lesson().ID, err)
		return 2
	}
	if tu.Complete() {
		return 0
	}
	return 1
}

// notebookHandIn reports whether a script starts as save FILE.vsh writes
// one in a notebook's lesson (after a BOM and blank lines, as the script
// reader skips them), and the lesson it names.
func notebookHandIn(head []byte) (lesson string, ok bool) {
	rest, ok := strings.CutPrefix(scriptText(head), shell.NotebookHandIn)
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, ";")
	return strings.TrimSpace(id), true
}

// savedNotebook reports whether a script starts as save FILE.md writes a
// notebook: its title, or a vsh block (after blank lines and a BOM).
func savedNotebook(head []byte) bool {
	t := scriptText(head)
	return strings.HasPrefix(t, "# vsh notebook") || strings.HasPrefix(t, "```vsh")
}

// scriptText is a script's start from its first text: a byte order mark
// and blank lines left out, as the script reader skips them.
func scriptText(head []byte) string {
	return strings.TrimLeft(strings.TrimPrefix(string(head), "\ufeff"), " \t\r\n\v\f")
}

// removeStaleReport removes the --report file of an earlier run when this
// one graded nothing, so that no old grade is read as this run's. It
// removes only a regular file that is a vsh lesson report: --report may
// name anything (a script, the lesson) when the run goes wrong.
func (r *lessonRun) removeStaleReport() {
	if r.report == "" {
		return
	}
	if fi, err := os.Lstat(r.report); err != nil || !fi.Mode().IsRegular() || fi.Size() > 16<<20 {
		return
	}
	data, err := os.ReadFile(r.report)
	if err != nil {
		return
	}
	var rep lessons.Report
	if json.Unmarshal(data, &rep) != nil || rep.Schema != lessons.ReportSchema {
		return
	}
	if err := os.Remove(r.report); err == nil {
		fmt.Fprintf(r.stderr, "vsh: --report: removed %s, an earlier run's report: this run graded nothing\n", r.report)
	}
}

// takeLesson runs the learner's side of a lesson that has started (its
// first words out): the terminal, or the commands of script (stdin's). It returns -1
// when the session ended as it should, an exit status otherwise.
func (r *lessonRun) takeLesson(sh *shell.Shell, out string, script io.Reader) int {
	if r.terminal {
		// The lesson's first step comes after the shell's banner.
		status, err := sh.RunTTY(r.stdin, r.stdout.(*os.File), out)
		if err != nil {
			fmt.Fprintf(r.stderr, "vsh: %v\n", err)
			return max(status, 1)
		}
		return -1
	}
	io.WriteString(r.stdout, out)
	ctx, caught, stop := stopOnSignals()
	err := sh.RunScriptContext(ctx, script, r.stdout, "stdin", true)
	stop()
	if sig := caught(); sig != nil {
		fmt.Fprintf(r.stderr, "vsh: %v: the lesson stopped\n", sig)
		return signalStatus(sig)
	}
	var se *shell.ScriptError
	if err != nil && !errors.As(err, &se) {
		fmt.Fprintf(r.stderr, "vsh: %v\n", err)
		return 1
	}
	return -1
}

// reportFile is the report of vsh lesson --report, rewritten whole (to a
// temporary file, then renamed over it) after every command, so that a run
// killed at any point leaves a valid report.
type reportFile struct {
	path     string
	tutor    *lessons.Tutor
	run      *lessonRun
	failed   bool // a write failed, and was said
	notebook bool // the script is a notebook's hand-in (Report.Notebook)
}

// update rewrites the report as the lesson goes; a failure is said once.
func (f *reportFile) update() {
	if err := f.write(false); err != nil && !f.failed {
		f.failed = true
		fmt.Fprintf(f.run.stderr, "vsh: --report: %v (the lesson goes on)\n", err)
	}
}

// write writes the report; finished says the run ended as it should.
func (f *reportFile) write(finished bool) error {
	if f.path == "" {
		return nil
	}
	rep := f.tutor.Report()
	rep.VSH, rep.Backend, rep.Seed, rep.Finished, rep.Notebook = versionString(), f.run.desc, f.run.seed, finished, f.notebook
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := safefile.WriteAtomic(f.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %v; give a file in a folder you can write to", f.path, err)
	}
	return nil
}

// lastLines is the end of text, at most n lines.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// playFlags checks the flags only lesson play takes: --pace, --step and
// --pause (which needs a terminal to read the presenter's keys). It
// returns 0, or the exit status after saying what is wrong.
func (r *lessonRun) playFlags(words []string) int {
	play := words[0] == "play"
	switch {
	case r.pace != 0 && !play:
		fmt.Fprintf(r.stderr, "vsh: --pace is for vsh lesson play\n")
	case (r.step != 0 || r.pause) && !play:
		fmt.Fprintf(r.stderr, "vsh: --step and --pause are for vsh lesson play ID\n")
	case r.step != 0 && (len(words) != 2 || isDir(words[1]) || words[1] == "all"):
		fmt.Fprintf(r.stderr, "vsh: --step N starts one lesson at step N: vsh lesson play ID --step N\n")
	case r.pause && !r.terminal:
		fmt.Fprintf(r.stderr, "vsh: --pause reads the presenter's keys from a terminal, and this is not one; "+
			"give --pace 2s to play at a steady pace instead\n")
	case r.pause && r.pace != 0:
		fmt.Fprintf(r.stderr, "vsh: --pause and --pace: give one (--pause waits for a key, --pace for a time)\n")
	default:
		return 0
	}
	return 2
}

// presenterKey is lesson play --pause's PlayOptions.Pause: it shows which
// keys do what, reads one with the terminal raw, and clears the line.
func (r *lessonRun) presenterKey(step int) lessons.PlayKey {
	const prompt = "» Enter or space: next step · b: back · q: quit "
	fmt.Fprint(r.stdout, prompt)
	defer fmt.Fprint(r.stdout, "\r"+strings.Repeat(" ", len([]rune(prompt)))+"\r")
	fd := int(r.stdin.Fd())
	saved, err := term.MakeRaw(fd)
	if err != nil {
		return lessons.PlayQuit
	}
	defer term.Restore(fd, saved)
	b := make([]byte, 1)
	for {
		if n, err := r.stdin.Read(b); n == 0 || err != nil {
			return lessons.PlayQuit // end of input
		}
		switch b[0] {
		case '\r', '\n', ' ':
			return lessons.PlayNext
		case 'b', 'B':
			return lessons.PlayBack
		case 3: // Ctrl-C: the terminal is raw, so it comes as a key
			r.interrupted = true
			return lessons.PlayQuit
		case 'q', 'Q', 4: // q, and Ctrl-D
			return lessons.PlayQuit
		}
	}
}

// reportTarget refuses a --report file that is the lesson's own file or
// the script being read: writing the report would destroy it.
func (r *lessonRun) reportTarget(l *lessons.Lesson) error {
	st, err := os.Stat(r.report)
	if err != nil {
		return nil // not there yet: nothing to destroy
	}
	if st.IsDir() {
		return fmt.Errorf("it is a folder; give the report file's name, e.g. %s", filepath.Join(r.report, l.ID+".json"))
	}
	if ls, err := os.Stat(l.Name); err == nil && os.SameFile(st, ls) {
		return fmt.Errorf("it is the lesson's own file; give another name, e.g. %s.json", l.ID)
	}
	if r.stdin != nil {
		if in, err := r.stdin.Stat(); err == nil && os.SameFile(st, in) {
			return fmt.Errorf("it is the script vsh reads on standard input; give another name, e.g. %s.json", l.ID)
		}
	}
	return nil
}

// stepFlag is --step N: a step, counted from 1 (0 when not given).
func stepFlag(fs *flag.FlagSet) *int {
	var n int
	fs.Func("step", "", func(v string) error {
		i, err := strconv.Atoi(v)
		if err != nil || i < 1 {
			return fmt.Errorf("--step %s: a step number, counted from 1", v)
		}
		n = i
		return nil
	})
	return &n
}
