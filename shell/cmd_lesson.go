package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"strings"

	"github.com/vsh-rdma/vsh/lessons"
)

// lessonCmd is the command table's entry for lesson: every lesson
// control lives under this one word, so none clashes with a verb or with
// the shell's own reset.
func lessonCmd() *command {
	return &command{Name: "lesson", Group: gSession,
		Usage:   "lesson [list | ID | FILE | next | back | hint | skip | reset | goal [--detail] | quit]",
		Summary: "Take a lesson: the tutor shows each step and checks its goal after every command you type",
		Help: "lesson ID starts a lesson that ships with vsh (lesson list shows them), lesson FILE an instructor's own. " +
			"The session is reset, then each step's prose is shown with its goal; type any commands you like, and the tutor " +
			"checks the goal after each one — by the state of the objects and what the commands returned, never by what you typed. " +
			"lesson alone shows the current step again.\n\n" +
			"\tlesson next    go on (once the goal is reached)\n" +
			"\tlesson back    go back one step (the session is rebuilt as it was then)\n" +
			"\tlesson hint    a hint; twice: the lesson's own commands\n" +
			"\tlesson skip    the tutor does the step for you\n" +
			"\tlesson reset   rebuild the session as it was at the step's start (the shell's reset still resets everything)\n" +
			"\tlesson goal    the step's goal, and what is still missing (--detail: all the tutor compares)\n" +
			"\tlesson quit    leave the lesson\n\n" +
			"A step may ask you to predict what happens before you run it: answer with predict ANSWER (help predict).\n\n" +
			"From the command line: vsh lesson ID [--report OUT.json], vsh lesson play ID [--pace 1s], vsh lesson list, vsh lesson check FILE.",
		rawArgs: true, meta: true, skipNotebook: true, run: cmdLesson, complete: completeLesson}
}

func cmdLesson(c *call) error {
	st := c.s.lessonState()
	words := c.a.pos
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
	} else if len(words) > 1 {
		return usagef(c.cmd.usageHint(), "lesson takes one word, not %d (lesson goal --detail is the one that takes two)", len(words))
	}
	for _, tc := range lessons.TutorCommands {
		if strings.EqualFold(w, tc.Name) {
			if st.tutor == nil || st.tutor.Quit() {
				return usagef("lesson list shows the lessons; lesson ID starts one", "no lesson is running")
			}
			out, err := st.tutor.Do(tc.Name + detail)
			c.out.addRaw(out)
			if tc.Name == "quit" {
				st.tutor = nil
			}
			return err
		}
	}
	if strings.EqualFold(w, "list") {
		return listLessons(c)
	}
	if near := nearLessonCommand(w); near != "" {
		return usagef("lesson "+near, "no lesson and no lesson command %q; did you mean lesson %s?", w, near)
	}
	l, err := lessons.Load(w, c.s.files.ReadFile)
	if err != nil {
		return usagef("lesson list shows the lessons", "%s", firstLines(err.Error(), 12))
	}
	env := c.s.LessonEnv()
	if miss := lessons.Missing(l, c.s.prov); len(miss) > 0 {
		return usagef("vsh --backend sim has everything the lessons need",
			"lesson %s needs what this backend lacks: %s", l.ID, strings.Join(miss, "; "))
	}
	if st.tutor != nil && !st.tutor.Quit() {
		if _, over := st.tutor.Step(); !over {
			c.out.addRaw(fmt.Sprintf("» you leave lesson %s for %s", st.tutor.Lesson().ID, l.ID))
		}
	}
	if st.tutor != nil {
		st.tutor.Close()
	}
	st.tutor = nil
	if len(c.s.h.all()) > 0 {
		if _, err := env.Exec("reset"); err != nil {
			return err
		}
		c.out.addRaw("» the session is reset: a lesson starts from a fresh backend")
	}
	t, intro, err := lessons.NewTutor(env, l)
	if err != nil {
		return err
	}
	st.tutor = t
	c.out.addRaw(intro)
	return nil
}

func listLessons(c *call) error {
	all, err := lessons.All()
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
	out = append(out, Suggestion{"list", "the lessons that ship with vsh"})
	if all, err := lessons.All(); err == nil {
		for _, l := range all {
			out = append(out, Suggestion{l.ID, l.Title})
		}
	}
	return filter(out, word)
}

// nearLessonCommand is the lesson command (next, hint, list, ...) that a
// word which names no lesson and no file is a typo of, or "": lesson nxt
// means lesson next, not the lesson rpc.
func nearLessonCommand(w string) string {
	if _, ok := lessons.Find(w); ok || strings.ContainsAny(w, `/\.`) {
		return ""
	}
	names := []string{"list"}
	for _, tc := range lessons.TutorCommands {
		names = append(names, tc.Name)
	}
	return nearest(strings.ToLower(w), names)
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
			"\tpredict 40\n" +
			"\tpredict \"hello\"",
		rawArgs: true, meta: true, run: cmdPredict, complete: completePredict}
}

func cmdPredict(c *call) error {
	tu := c.s.Tutor()
	if tu == nil || tu.Quit() {
		return usagef("lesson ID starts a lesson; its steps that ask a question say so", "no lesson is running, so there is nothing to predict")
	}
	answer := ""
	if len(c.a.pos) > 0 {
		answer = strings.TrimSpace(c.src[c.a.pos[0].start:])
	}
	out, err := tu.Predict(answer)
	if err != nil {
		return usagef("lesson shows the step and its question", "%v", err)
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
