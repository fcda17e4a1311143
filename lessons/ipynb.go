package lessons

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Cell roles of an exported notebook, in a code cell's metadata
// ({"vsh": {"role": "learner", "step": 3}}): the kernel and the tests
// tell the cells apart by them, not by their text.
const (
	NotebookTutor   = "tutor"   // a step's ```vsh auto cell: the tutor's commands
	NotebookLearner = "learner" // where the learner writes a step's commands
	NotebookCheck   = "check"   // %check N, after a learner cell
)

// ExportNotebook writes lesson l as a Jupyter notebook (nbformat 4.5) for
// the vsh kernel: a title cell with the lesson's introduction and how to
// work through it, a code cell "%lesson REF" that starts the lesson, then
// for each step a Markdown cell (its heading, prose and goal; see
// stepText) and its code cells. A step the tutor does (```vsh auto) gets a cell with its
// commands; a step the learner does gets an empty cell to write in, then
// "%check N", which asks the kernel whether step N's goal is reached. With
// solutions, the learner's cells hold the lesson's own commands and the
// checks are "%check --strict N": a copy for instructors and CI, which
// runs green when the lesson plays.
//
// ref is what %lesson is given: a shipped lesson's id, or the path of the
// lesson file. Commands are written as the lesson writes them, "! " marks
// and comment lines kept. The bytes are the same for the same lesson, in
// the layout Jupyter itself writes (keys in order, one-space indent, a
// final newline), so that a notebook saved unchanged does not differ.
func ExportNotebook(l *Lesson, ref string, solutions bool) ([]byte, error) {
	if l == nil || len(l.Steps) == 0 {
		return nil, fmt.Errorf("lesson export: the lesson has no steps to export")
	}
	if strings.TrimSpace(ref) == "" || strings.ContainsAny(ref, "\n\r") {
		return nil, fmt.Errorf("lesson export: %q cannot name lesson %s in the notebook's %%lesson line; give its id or its file's path", ref, l.ID)
	}
	nb := notebook{
		Metadata: notebookMeta{
			Kernelspec: kernelspec{DisplayName: "vsh", Language: "vsh", Name: "vsh"},
			LanguageInfo: languageInfo{CodemirrorMode: "shell", FileExtension: ".vsh", Mimetype: "text/x-vsh",
				Name: "vsh", PygmentsLexer: "bash"},
		},
		Nbformat:      4,
		NbformatMinor: 5,
	}
	intro, _ := proseParts(l, 0)
	nb.markdown("intro", titleText(l, intro, solutions))
	nb.code("lesson", nil, "%lesson "+QuoteRef(ref))
	for i, s := range l.Steps {
		step := i + 1
		id := fmt.Sprintf("step-%d", step)
		nb.markdown(id, stepText(l, i))
		c := s.Cell
		switch {
		case c == nil:
		case c.Auto:
			nb.code(id+"-tutor", &vshMeta{Role: NotebookTutor, Step: step}, cellText(c))
		default:
			text, check := "", fmt.Sprintf("%%check %d", step)
			if solutions {
				text, check = cellText(c), fmt.Sprintf("%%check --strict %d", step)
			}
			nb.code(id+"-learner", &vshMeta{Role: NotebookLearner, Step: step}, text)
			nb.code(id+"-check", &vshMeta{Role: NotebookCheck, Step: step}, check)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as Jupyter writes: <, > and & as they are
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return nil, err
	}
	return b.Bytes(), nil // Encode ends it with a newline
}

// The notebook's JSON. Fields are in the order of their keys' names, as
// nbformat sorts them when Jupyter saves a notebook.
type notebook struct {
	Cells         []any        `json:"cells"`
	Metadata      notebookMeta `json:"metadata"`
	Nbformat      int          `json:"nbformat"`
	NbformatMinor int          `json:"nbformat_minor"`
}

type notebookMeta struct {
	Kernelspec   kernelspec   `json:"kernelspec"`
	LanguageInfo languageInfo `json:"language_info"`
}

type kernelspec struct {
	DisplayName string `json:"display_name"`
	Language    string `json:"language"`
	Name        string `json:"name"`
}

type languageInfo struct {
	CodemirrorMode string `json:"codemirror_mode"`
	FileExtension  string `json:"file_extension"`
	Mimetype       string `json:"mimetype"`
	Name           string `json:"name"`
	PygmentsLexer  string `json:"pygments_lexer"`
}

type markdownCell struct {
	CellType string   `json:"cell_type"`
	ID       string   `json:"id"`
	Metadata cellMeta `json:"metadata"`
	Source   []string `json:"source"`
}

type codeCell struct {
	CellType       string   `json:"cell_type"`
	ExecutionCount *int     `json:"execution_count"` // null: never run
	ID             string   `json:"id"`
	Metadata       cellMeta `json:"metadata"`
	Outputs        []any    `json:"outputs"`
	Source         []string `json:"source"`
}

// cellMeta is a cell's metadata: {} but for the cells of a step.
type cellMeta struct {
	VSH *vshMeta `json:"vsh,omitempty"`
}

// vshMeta says which step a code cell belongs to, and whose it is.
type vshMeta struct {
	Role string `json:"role"` // NotebookTutor, NotebookLearner or NotebookCheck
	Step int    `json:"step"` // counted from 1
}

func (nb *notebook) markdown(id, text string) {
	nb.Cells = append(nb.Cells, markdownCell{CellType: "markdown", ID: id, Source: sourceLines(text)})
}

func (nb *notebook) code(id string, meta *vshMeta, text string) {
	nb.Cells = append(nb.Cells, codeCell{CellType: "code", ID: id, Metadata: cellMeta{VSH: meta},
		Outputs: []any{}, Source: sourceLines(text)})
}

// sourceLines is text as a notebook holds it: a list of lines, each with
// its newline but the last; [] for no text.
func sourceLines(text string) []string {
	out := []string{}
	for text != "" {
		line, rest, found := strings.Cut(text, "\n")
		if found {
			line += "\n"
		}
		out = append(out, line)
		text = rest
	}
	return out
}

// proseParts splits step i's prose where its own section begins: before
// is what comes first (the lesson's introduction, for the first step; the
// words that end the section before, which explain its last cell, for a
// later one), and own is the step's own prose, its section's heading left
// out, as StepProse shows it. A step whose prose crosses no heading is
// all its own.
func proseParts(l *Lesson, i int) (before, own string) {
	s := l.Steps[i]
	if s.own == 0 {
		return "", StepProse(l, i)
	}
	return strings.TrimSpace(s.Prose[:s.own]), strings.TrimSpace(dropHeading(s.Prose[s.own:], s.Section))
}

// titleText is the notebook's first cell: the lesson's title, its
// introduction, and how to work through the notebook.
func titleText(l *Lesson, intro string, solutions bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lesson %s: %s\n\n", l.ID, l.Title)
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	b.WriteString("Run the cells in order: the first code cell starts the lesson, and cells with commands in them already " +
		"are the tutor's, to run as they are. ")
	if solutions {
		b.WriteString("This copy holds the solutions: under each goal, the cell is filled in with the lesson's own commands, " +
			"and the `%check --strict N` cell after it says whether step N's goal is reached, as an error when it is not. ")
	} else {
		b.WriteString("Under each goal, write your vsh commands in the empty cell; the `%check N` cell after it says " +
			"whether step N's goal is reached. ")
	}
	b.WriteString("A check judges the session's state, not the commands typed, so any commands that get there will do. " +
		"**Kernel → Restart and run all** starts the lesson over.")
	return b.String()
}

// stepText is step i's Markdown cell: a heading like the player's rule
// ("Step 3 of 14 · Connect"), the step's prose, and its goal. The words
// that end the section before come first, above the heading: they are
// about the cell just run. (The first step's go in the title cell.)
func stepText(l *Lesson, i int) string {
	s := l.Steps[i]
	before, own := proseParts(l, i)
	var b strings.Builder
	if before != "" && i > 0 {
		b.WriteString(before + "\n\n")
	}
	fmt.Fprintf(&b, "## Step %d of %d", i+1, len(l.Steps))
	if s.Section != "" {
		b.WriteString(" · " + s.Section)
	}
	if own != "" {
		b.WriteString("\n\n" + own)
	}
	if s.Cell != nil && s.Cell.Goal != "" {
		b.WriteString("\n\n**Goal:** " + s.Cell.Goal)
	}
	if s.Cell != nil && s.Cell.Predict != nil {
		p := s.Cell.Predict
		q, how := p.Question, "one of "+strings.Join(p.Choices, ", ")
		if q == "" {
			q = "What will " + p.Answer + " be after this step?"
		}
		switch p.Kind {
		case PredictNumber:
			how = "a number"
		case PredictBytes:
			how = `bytes ("text" or 0x hex)`
		}
		fmt.Fprintf(&b, "\n\n**Predict first:** %s Answer with `predict` and %s, on the first line of the cell below, "+
			"before the step's commands; the `%%check` after it says whether you were right.", q, how)
	}
	return b.String()
}

// cellText is a cell's commands, one a line, as the lesson writes them:
// the "! " marks and comment lines kept, which the kernel runs as vsh
// does (a comment is no command). The expect:, goal: and hint: lines
// after the cell are not commands, and are not in it.
func cellText(c *Cell) string {
	lines := make([]string, len(c.Commands))
	for i, cmd := range c.Commands {
		lines[i] = cmd.Text
	}
	return strings.Join(lines, "\n")
}

// QuoteRef quotes a lesson reference for a lesson or %lesson line as vsh's
// command line reads words: bare when it can be, else in single quotes,
// else double quotes with \" and \\ escaped.
func QuoteRef(ref string) string {
	if !strings.ContainsAny(ref, " \t\"'#\\") {
		return ref
	}
	if !strings.Contains(ref, "'") {
		return "'" + ref + "'"
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(ref) + `"`
}
