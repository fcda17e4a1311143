package lessons

import (
	"math"
	"time"
)

// ReportSchema names the version of the report's JSON format,
// docs/lesson-report.schema.json. A change that could break a reader of
// the report makes a new version.
const ReportSchema = "vsh-lesson-report/1"

// Report is how a learner took a lesson, for grading: vsh lesson FILE
// --report out.json writes it as JSON, rewritten as the lesson goes, in
// the format docs/lesson-report.schema.json describes.
type Report struct {
	Schema string `json:"schema"` // ReportSchema
	// VSH is the version of vsh that ran the lesson.
	VSH     string       `json:"vsh"`
	Lesson  ReportLesson `json:"lesson"`
	Backend string       `json:"backend"`
	// Seed is the simulator's seed (the reference session's, on a real
	// device): the same script with the same seed runs the same way.
	Seed int64 `json:"seed"`
	// Started and Ended are RFC 3339 times: when the lesson started, and
	// when the report was last written.
	Started string `json:"started"`
	Ended   string `json:"ended"`
	// Finished is set when the run ended as it should (the lesson over or
	// left, the script or terminal at its end); a report of a run that was
	// killed has it false.
	Finished bool `json:"finished"`
	// Complete is set when the lesson is over with every learner step
	// solved by the learner: vsh lesson's exit status 0.
	Complete bool `json:"complete"`
	// Notebook is set when the script was saved in a notebook (its first
	// line says so) and graded as a notebook's cells: the tutor ran none of
	// the lesson's own, and judged each step as %check does.
	Notebook bool `json:"notebook,omitempty"`
	// Steps are the lesson's learner steps, in order.
	Steps []StepReport `json:"steps"`
}

// ReportLesson names the lesson a report is of, and its exact text.
type ReportLesson struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	File    string `json:"file"`    // the file's name, or the embedded lesson's ("tour.md")
	Version string `json:"version"` // front matter version:, "" without
	SHA256  string `json:"sha256"`  // of the lesson file, in hex
}

// StepReport is how the learner did at one learner step.
type StepReport struct {
	Step  int    `json:"step"` // its number in the lesson, from 1, as the tutor shows it
	Title string `json:"title"`
	// Outcome is solved, tutor (solved after lesson hint showed the
	// lesson's own commands), skipped (lesson skip), not reached, or not
	// played (its section needs what the backend lacks).
	Outcome  string  `json:"outcome"`
	Attempts int     `json:"attempts"` // commands typed at the step
	Hints    int     `json:"hints"`    // hints shown at the step: lesson hint, or given after a wrong turn
	Resets   int     `json:"resets"`   // lesson reset at it, lesson back to it
	Seconds  float64 `json:"seconds"`  // time spent at it
	// Predictions are the step's questions asked before it runs (none, or
	// one).
	Predictions []PredictionReport `json:"predictions"`
}

// PredictionReport is a step's prediction: the question, the learner's
// answer and, once the step is done, what happened.
type PredictionReport struct {
	Question string   `json:"question"`
	Kind     string   `json:"kind"`    // choice, number or bytes
	Choices  []string `json:"choices"` // for choice; empty otherwise
	// Answer is the learner's answer, nil when none was given.
	Answer *string `json:"answer"`
	// Observed is the right answer, read after the step; nil until the
	// step is done, or when it could not be read.
	Observed *string `json:"observed"`
	// Right says whether Answer is Observed; nil when either is missing.
	Right *bool `json:"right"`
}

// Report is how the learner has done so far. The caller fills in what the
// tutor does not know: VSH, Backend, Seed, Finished.
func (t *Tutor) Report() *Report {
	t.tick()
	r := &Report{Schema: ReportSchema, Started: t.started.Format(time.RFC3339), Ended: t.now().Format(time.RFC3339),
		Complete: t.Complete(), Steps: []StepReport{},
		Lesson: ReportLesson{ID: t.l.ID, Title: t.l.Title, File: t.l.Name, Version: t.l.Version, SHA256: t.l.Hash}}
	for i, s := range t.l.Steps {
		if !s.Interactive() {
			continue
		}
		rec := &t.rec[i]
		sr := StepReport{Step: i + 1, Title: stepTitle(s), Outcome: t.outcome(i), Attempts: rec.attempts, Hints: rec.hints,
			Resets: rec.resets, Seconds: math.Round(rec.time.Seconds()*1000) / 1000, Predictions: []PredictionReport{}}
		if p := s.Cell.Predict; p != nil {
			sr.Predictions = append(sr.Predictions, predictionReport(p, &rec.pred))
		}
		r.Steps = append(r.Steps, sr)
	}
	return r
}

func predictionReport(p *Prediction, r *predictionRecord) PredictionReport {
	pr := PredictionReport{Question: p.Ask(), Kind: p.Kind, Choices: append([]string{}, p.Choices...)}
	if p.Question != "" {
		pr.Question = p.Question
	}
	if r.answered {
		a := r.answer
		pr.Answer = &a
	}
	if r.judged && r.why == "" {
		o := r.observed
		pr.Observed = &o
		if r.answered {
			right := r.right
			pr.Right = &right
		}
	}
	return pr
}
