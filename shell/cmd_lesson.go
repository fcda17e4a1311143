package shell

import (
	"fmt"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/shell/render"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// lessonCmd is the command table's entry for lesson: every lesson
// control lives under this one word, so none clashes with a verb or with
// the shell's own reset.
func lessonCmd() *command {
	return &command{Name: "lesson", Group: gSession,
		Usage:   "lesson [list | ID [--force] | FILE [--force] | resume [ID] | next | back | hint | skip | reset | goal [--detail] | quit]",
		Summary: "Take a lesson: the tutor shows each step and checks its goal after every command you type",
		Help: "lesson ID starts a lesson that ships with vsh (lesson list shows them), lesson FILE an instructor's own. " +
			"The session is reset, then each step's prose is shown with its goal; type any commands you like, and the tutor " +
			"checks the goal after each one — by the state of the objects and what the commands returned, never by what you typed. " +
			"lesson alone shows the current step again. Starting a lesson while another is in progress asks first; " +
			"--force leaves it without asking (off a terminal, where no one can answer, --force is needed).\n\n" +
			"\tlesson next    go on (once the goal is reached)\n" +
			"\tlesson back    go back one step (the session is rebuilt with the lesson's commands up to it)\n" +
			"\tlesson hint    a hint; twice: the lesson's own commands\n" +
			"\tlesson skip    the tutor does the step for you\n" +
			"\tlesson reset   rebuild the session with the lesson's commands up to the step's start, under its handles (the shell's reset still resets everything)\n" +
			"\tlesson goal    the step's goal, and what is still missing (--detail: all the tutor compares)\n" +
			"\tlesson quit    leave the lesson\n" +
			"\tlesson resume  back to the step where you left the last lesson you did not finish (resume ID: that lesson's); " +
			"vsh keeps your place when you use it at a terminal\n\n" +
			"A step may ask you to predict what happens before you run it: answer with predict ANSWER (help predict).\n\n" +
			"From the command line: vsh lesson ID [--report OUT.json], vsh lesson play ID [--pace 1s], vsh lesson list, vsh lesson check FILE, " +
			"vsh lesson export ID --ipynb OUT.ipynb (a Jupyter notebook); " +
			"a course folder: vsh lesson list DIR, vsh lesson DIR (its next lesson), vsh --lessons DIR (its lessons in lesson list).",
		rawArgs: true, meta: true, skipNotebook: true, run: cmdLesson, complete: completeLesson}
}

func cmdLesson(c *call) error {
	st := c.s.lessonState()
	words, force := withoutForce(c.a.pos)
	if len(words) == 0 {
		if st.tutor == nil {
			return listLessons(c)
		}
		out, err := st.tutor.Do("")
		c.out.addRaw(out)
		return err
	}
	w := words[0].text
	detail := ""
	if len(words) == 2 && strings.EqualFold(w, "goal") && (words[1].text == "--detail" || words[1].text == "detail" || words[1].text == "-d") {
		detail = " --detail"
	} else if len(words) == 2 && strings.EqualFold(w, "resume") {
		return resumeLesson(c, words[1].text, force)
	} else if len(words) > 1 {
		return usagef(c.cmd.usageHint(), "lesson takes one word, not %d (lesson goal --detail and lesson resume ID take two; lesson ID --force adds a flag)", len(words))
	}
	if force && len(words) == 1 && (!isLessonCommand(w) || strings.EqualFold(w, "resume")) {
		// lesson ID --force and lesson resume --force.
	} else if force {
		return usagef("lesson ID --force", "--force goes with lesson ID and lesson resume, to leave a lesson in progress without being asked")
	}
	for _, tc := range lessons.TutorCommands {
		if strings.EqualFold(w, tc.Name) {
			if st.tutor == nil || st.tutor.Quit() {
				return usagef("lesson list shows the lessons; lesson ID starts one", "no lesson is running")
			}
			out, err := st.tutor.Do(tc.Name + detail)
			c.out.addRaw(out + st.takeNote())
			c.out.addRaw(c.s.keepPlace())
			if tc.Name == "quit" {
				st.tutor = nil
			}
			return err
		}
	}
	if strings.EqualFold(w, "help") {
		writeCommandHelp(c.out, c.cmd) // lesson help is help lesson
		return nil
	}
	if strings.EqualFold(w, "list") {
		return listLessons(c)
	}
	if strings.EqualFold(w, "resume") {
		return resumeLesson(c, "", force)
	}
	if near := c.s.nearLessonCommand(w); near != "" {
		return usagef("lesson "+near, "no lesson and no lesson command %q; did you mean lesson %s?", w, near)
	}
	l, err := c.s.opts.Lessons.Load(w, c.s.files.ReadFile)
	if err != nil {
		return usagef(c.s.loadHint(w, "lesson list shows the lessons"), "%s", firstLines(err.Error(), 12))
	}
	_, err = startLesson(c, l, force, true)
	return err
}

// startLesson starts lesson l, once the lesson in progress may be left
// (leaveLesson), showing its first step when intro is set, else only its
// header; it reports whether it started.
func startLesson(c *call, l *lessons.Lesson, force, intro bool) (bool, error) {
	st := c.s.lessonState()
	if err := c.s.canTake(l); err != nil {
		return false, err
	}
	env := c.s.LessonEnv()
	if c.s.opts.Confined && st.graded != "" {
		// A graded session grades the lesson it started with.
		return false, usagef("lesson reset starts the current step again; lesson quit ends the lesson",
			"refused: this session is confined to lesson %s (a script being graded with vsh lesson --report) and starts no other lesson, nor that one again", st.graded)
	}
	if st.tutor != nil && !st.tutor.Quit() {
		if stay, err := leaveLesson(c, st.tutor, l, force); stay || err != nil {
			return false, err
		}
	}
	if reset, err := c.s.freshForLesson(); err != nil {
		return false, err
	} else if reset {
		c.out.addRaw("» the session is reset: a lesson starts from a fresh backend")
	}
	said, err := c.s.PrepareLesson(l)
	if err != nil {
		return false, err
	}
	if said != "" {
		c.out.addRaw(strings.TrimSuffix(said, "\n"))
	}
	st.starting = l
	t, first, err := lessons.NewTutor(env, l)
	st.starting = nil
	if err != nil {
		return false, err
	}
	st.tutor, st.marked, st.startedAt = t, "", c.cell.N
	if c.s.opts.Confined {
		st.graded = l.ID
	}
	c.s.recordSolved(t)
	if !intro {
		first = lessons.Header(l)
	}
	c.out.addRaw(c.s.prerequisites(l) + first + st.takeNote())
	c.out.addRaw(c.s.keepPlace())
	return true, nil
}

// canTake says why lesson l cannot run in this session (a newer vsh, a
// backend without what it needs), or nil.
func (s *Shell) canTake(l *lessons.Lesson) error {
	if err := lessons.CheckVersion(l, s.opts.Version); err != nil {
		return usagef("vsh --version says which vsh this is", "%v", err)
	}
	if contains(l.Needs, needXRC) { // lessons.Missing cannot tell that the simulator can switch it on
		if _, ok := s.prov.(verbs.XRCSwitch); !ok {
			if why := xrcMissing(s.devs); why != "" {
				return usagef("vsh --backend sim turns XRC on for the lessons that need it",
					"lesson %s needs what this backend lacks: xrc: %s", l.ID, why)
			}
		}
	}
	if miss := lessons.Missing(l, s.prov); len(miss) > 0 {
		return usagef("vsh --backend sim has everything the lessons need",
			"lesson %s needs what this backend lacks: %s", l.ID, strings.Join(miss, "; "))
	}
	return nil
}

// needXRC is the lesson need (front matter needs: xrc, or a section's
// needs: line) that PrepareLesson meets by turning the simulator's XRC on.
const needXRC = "xrc"

// PrepareLesson gives the session what lesson l needs that the backend
// has but keeps switched off: XRC (needs: xrc, the lesson's or a
// section's), which the simulator keeps off as kernel rxe has none, is
// turned on through verbs.XRCSwitch, and stays on, through reset, until
// backend xrc=off. It returns what to tell the learner, "" for nothing. On
// a backend that cannot switch XRC, the device must have it: the error
// says why it has not, for a lesson that needs it; a section that needs
// it is the lesson's player's to skip.
func (s *Shell) PrepareLesson(l *lessons.Lesson) (string, error) {
	needs := l.Needs
	for _, st := range l.Steps {
		needs = append(needs, st.Needs...)
	}
	if !contains(needs, needXRC) {
		return "", nil
	}
	if _, ok := s.prov.(verbs.XRCSwitch); !ok && !contains(l.Needs, needXRC) {
		return "", nil // only sections need it: skipped where the device has none
	}
	said, err := s.needXRC() // cmd_xrc.go
	if err == nil {
		s.xrcLesson = true
	}
	return said, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// freshForLesson ends the lesson in progress, if any, and resets the
// session when it holds objects; it reports whether it reset.
func (s *Shell) freshForLesson() (bool, error) {
	st := s.lessonState()
	if st.tutor != nil {
		st.tutor.Close()
		st.tutor = nil
	}
	if len(s.h.all()) == 0 {
		return false, nil
	}
	if _, err := s.LessonEnv().Exec("reset"); err != nil {
		return false, err
	}
	return true, nil
}

// resumeLesson is lesson resume [ID|FILE]: the lesson left last (or the
// one named) starts again at the step where the learner left it.
func resumeLesson(c *call, ref string, force bool) error {
	if c.s.opts.StateDir == "" {
		return usagef("run vsh at a terminal to have your place kept",
			"this session keeps no places in lessons (it is not at a terminal), so there is nothing to resume")
	}
	b, err := lessons.OpenBookmarks(c.s.opts.StateDir)
	if err != nil {
		return err
	}
	m, ok := b.Last()
	if ref != "" {
		m, ok = b.Find(ref)
	}
	if !ok {
		what := "no lesson left unfinished"
		if ref != "" {
			what = fmt.Sprintf("no place kept in lesson %s", ref)
		}
		return usagef("lesson ID starts a lesson; your place is kept when you leave it before its end",
			"%s (places are kept in %s)", what, b.Path())
	}
	if t := c.s.lessonState().tutor; t != nil && !t.Quit() && lessons.Ref(t.Lesson()) == m.Ref {
		if step, over := t.Step(); !over {
			c.line("» you are in lesson %s already, at step %d of %d", m.ID, step+1, len(t.Lesson().Steps))
			return nil
		}
	}
	l, err := c.s.opts.Lessons.Load(m.Ref, c.s.files.ReadFile)
	if err != nil {
		return usagef("lesson list shows the lessons", "lesson resume: %s", firstLines(err.Error(), 6))
	}
	resume := m.Step > 0 && m.Step < len(l.Steps) // else at the start, or the lesson changed since
	if started, err := startLesson(c, l, force, !resume); !started || err != nil || !resume {
		return err
	}
	out, err := c.s.lessonState().tutor.Resume(m.Step)
	c.out.addRaw(fmt.Sprintf("» resuming lesson %s at step %d of %d, where you left it", l.ID, m.Step+1, len(l.Steps)))
	c.out.addRaw(out)
	c.out.addRaw(c.s.keepPlace())
	return err
}

// prerequisites is a note on the lessons of l's course that l builds on
// and the learner has not solved, or "".
func (s *Shell) prerequisites(l *lessons.Lesson) string {
	co := s.opts.Lessons.Course(l)
	if co == nil || s.opts.Solved == nil {
		return ""
	}
	if miss := s.opts.Solved.Unsolved(co, l); len(miss) > 0 {
		return fmt.Sprintf("» lesson %s builds on %s, which you have not solved yet; lesson %s takes it\n",
			l.ID, strings.Join(miss, ", "), miss[0])
	}
	return ""
}

// recordSolved has the tutor record its lesson in opts.Solved when the
// learner solves it: every learner step, none done by the tutor.
func (s *Shell) recordSolved(t *lessons.Tutor) {
	if s.opts.Solved == nil || t.Lesson().Course == "" {
		return
	}
	t.OnFinish(func(t *lessons.Tutor) {
		if !t.Complete() {
			return
		}
		if err := s.opts.Solved.MarkSolved(t.Lesson(), time.Now()); err != nil {
			s.lessonState().note = fmt.Sprintf("» your progress is not saved: %v\n", err)
			return
		}
		s.lessonState().note = fmt.Sprintf("» lesson %s is solved; your progress is kept in %s\n", t.Lesson().ID, s.opts.Solved.Path())
	})
}

func listLessons(c *call) error {
	all, err := c.s.opts.Lessons.All()
	if err != nil {
		return err
	}
	var rows [][]string
	skipped := 0
	for _, l := range all {
		note := ""
		if miss := lessons.Missing(l, c.s.prov); len(miss) > 0 {
			note = "skipped here: needs " + strings.Join(miss, "; ")
			skipped++
		} else if secs := lessons.SkippedSections(l, c.s.prov); len(secs) > 0 {
			var parts []string
			for _, s := range secs {
				parts = append(parts, s.Steps()+" skipped here: need "+strings.Join(s.Reasons, "; "))
			}
			note = strings.Join(parts, "; ")
		}
		if c.s.opts.Solved != nil && c.s.opts.Solved.Solved(l) {
			note = strings.TrimPrefix(note+"; solved", "; ")
		}
		rows = append(rows, []string{l.ID, l.Level, fmt.Sprintf("%d min", l.Minutes), l.Title, note})
	}
	c.out.add(render.Table([]string{"lesson", "level", "time", "title", ""}, rows))
	if skipped > 0 {
		c.line("%d of %d lessons cannot run on this backend", skipped, len(all))
	}
	c.line("lesson ID starts one; lesson FILE takes an instructor's own")
	return nil
}

func completeLesson(s *Shell, done []token, word string) []Suggestion {
	if len(done) > 0 {
		return nil
	}
	var out []Suggestion
	if st := s.lesson; st != nil && st.tutor != nil && !st.tutor.Quit() {
		for _, tc := range lessons.TutorCommands {
			out = append(out, Suggestion{tc.Name, tc.Doc})
		}
	}
	out = append(out, Suggestion{"list", "the lessons that ship with vsh, and the courses added"},
		Suggestion{"resume", "go back to the step where you left a lesson"})
	if all, err := s.opts.Lessons.All(); err == nil {
		for _, l := range all {
			out = append(out, Suggestion{l.ID, l.Title})
		}
	}
	return filter(out, word)
}

// nearLessonCommand is the lesson command (next, hint, list, ...) that a
// word which names no lesson and no file is a typo of, or "": lesson nxt
// means lesson next, not the lesson rpc.
func (s *Shell) nearLessonCommand(w string) string {
	if _, ok := s.opts.Lessons.Find(w); ok || strings.ContainsAny(w, `/\.`) {
		return ""
	}
	names := []string{"list", "resume"}
	for _, tc := range lessons.TutorCommands {
		names = append(names, tc.Name)
	}
	return nearest(strings.ToLower(w), names)
}

// withoutForce returns the words without --force (or -f) and whether it was
// there.
func withoutForce(words []token) ([]token, bool) {
	var out []token
	force := false
	for _, w := range words {
		if w.text == "--force" || w.text == "-f" {
			force = true
			continue
		}
		out = append(out, w)
	}
	return out, force
}

// isLessonCommand reports whether w is list or one of the tutor's commands.
func isLessonCommand(w string) bool {
	if strings.EqualFold(w, "list") || strings.EqualFold(w, "resume") {
		return true
	}
	for _, tc := range lessons.TutorCommands {
		if strings.EqualFold(w, tc.Name) {
			return true
		}
	}
	return false
}

// leaveLesson decides whether lesson ID may end the lesson t runs, to start
// l: at once with --force or once t is over; on a terminal after asking;
// elsewhere (a script, a pipe) never, since no one can answer. It reports
// whether the learner stays.
func leaveLesson(c *call, t *lessons.Tutor, l *lessons.Lesson, force bool) (stay bool, err error) {
	step, over := t.Step()
	cur := t.Lesson()
	if over {
		return false, nil
	}
	where := fmt.Sprintf("step %d of %d of lesson %s", step+1, len(cur.Steps), cur.ID)
	what, question := "leave it for "+l.ID, "Leave it for "+l.ID+"?"
	if l.ID == cur.ID {
		what, question = "start it over", "Start it over?"
	}
	switch {
	case force:
	case c.s.ask == nil:
		return true, usagef("lesson "+l.ID+" --force",
			"you are at %s; off a terminal vsh cannot ask whether to %s, so you stay: add --force to %s", where, what, what)
	default:
		answer, ok := c.s.ask(fmt.Sprintf("» you are at %s. %s [y/N] ", where, question))
		if a := strings.ToLower(strings.TrimSpace(answer)); !ok || (a != "y" && a != "yes") {
			c.out.addRaw(fmt.Sprintf("» you stay at %s", where))
			return true, nil
		}
	}
	c.out.addRaw(fmt.Sprintf("» you leave lesson %s at step %d", cur.ID, step+1))
	return false, nil
}

// predictCmd is the command table's entry for predict: the learner's
// answer to the question a lesson step asks before it runs.
func predictCmd() *command {
	return &command{Name: "predict", Group: gSession,
		Usage:   "predict ANSWER",
		Summary: "Answer the question a lesson step asks before you run it (the tutor says after the step whether you were right)",
		Help: "Some lesson steps ask you to predict what will happen before you run them: which completion status comes back, " +
			"how many bytes land, what the buffer holds. predict ANSWER commits to an answer: one of the choices the step offers " +
			"(Tab completes them), a number, or bytes (\"text\" or 0x hex). You may change it until a command of the step runs a verb; " +
			"then it is kept, and once the step is done the tutor says whether it was right and what happened. " +
			"An unanswered prediction never holds the lesson up: it is recorded as unanswered.\n\n" +
			"\tpredict IBV_WC_RNR_RETRY_EXC_ERR\n" +
			"\tpredict 123\n" +
			"\tpredict \"hello\"",
		rawArgs: true, meta: true, run: cmdPredict, complete: completePredict}
}

func cmdPredict(c *call) error {
	tu := c.s.Tutor()
	if tu == nil || tu.Quit() {
		return usagef("lesson ID starts a lesson; its steps that ask a question say so", "no lesson is running, so there is nothing to predict")
	}
	if c.s.depth > 0 {
		// A sourced script's commands are seen by the tutor only when the
		// source ends: a prediction there could follow what it predicts.
		return usagef("type predict ANSWER at the prompt, or as a line of the script vsh lesson reads",
			"predict cannot run inside source: the tutor would see the script's commands only after the prediction")
	}
	answer := ""
	if len(c.a.pos) > 0 {
		answer = strings.TrimSpace(c.src[c.a.pos[0].start:])
	}
	out, err := tu.Predict(answer)
	if err != nil {
		hint := "lesson shows the step and its question"
		if tu.Driven() {
			hint = "the notebook asks each step's question under its goal"
		}
		return usagef(hint, "%v", err)
	}
	c.out.addRaw(out)
	return nil
}

func completePredict(s *Shell, done []token, word string) []Suggestion {
	tu := s.Tutor()
	if len(done) > 0 || tu == nil {
		return nil
	}
	p := tu.Prediction()
	if p == nil {
		return nil
	}
	var out []Suggestion
	for _, c := range p.Choices {
		out = append(out, Suggestion{c, "your prediction"})
	}
	return filter(out, word)
}

// loadHint is the hint for a lesson that did not load: for a file that
// exists, how to see all its problems; else where lessons are listed.
func (s *Shell) loadHint(ref, list string) string {
	if strings.HasSuffix(strings.ToLower(ref), ".md") && s.files.Exists(ref) {
		return "vsh lesson check " + ref + " lists every problem of the file, each with its line"
	}
	return list
}
