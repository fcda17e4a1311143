package lessons

import (
	"fmt"
	"strconv"
	"strings"
)

// A Prediction is a learner step's predict: line and the answer: line
// after it: a question the tutor asks when the step starts, which the
// learner answers with the predict command before running the step, and
// which is judged once the step is done against what it produced.
//
//	predict: What does A's poll return? IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR
//	answer: cq0 completions.status
//
// The answer: line names a subject of the expect: language; the right
// answer is its value after the step's cell, in the lesson's reference
// session (in play, the session itself). A list (completions, packets) is
// answered by its first value: the first completion the step polled.
type Prediction struct {
	Line int // the predict: line
	// Question is the question as written, up to and with its "?"; ""
	// when the line gives only the choices.
	Question string
	// Kind is "choice" (one of Choices), "number" or "bytes".
	Kind    string
	Choices []string
	// Answer is the answer: line's subject, as written.
	Answer     string
	AnswerLine int

	subj    *Expect // the subject, held as an expectation to read it
	choices []value // Choices, read as values of the subject's type
	bad     bool    // the predict: line did not parse (reported already)
}

// Prediction kinds.
const (
	PredictChoice = "choice"
	PredictNumber = "number"
	PredictBytes  = "bytes"
)

// predictLine applies a predict: or answer: line to the cell c.
func predictLine(c *Cell, ln int, key, rest string) error {
	if c.Auto {
		return fmt.Errorf("%s: belongs to a cell the learner performs: the tutor asks before the learner runs it, and runs a ```vsh auto cell itself", key)
	}
	if key == "predict" {
		if c.Predict != nil {
			return fmt.Errorf("predict: is given twice (first at line %d); a step asks one question", c.Predict.Line)
		}
		p, err := parsePredict(rest)
		if p == nil {
			p = &Prediction{bad: true}
		}
		p.Line = ln
		c.Predict = p
		return err
	}
	p := c.Predict
	switch {
	case p == nil:
		return fmt.Errorf("answer: follows a predict: line, and says what the prediction is checked against; this cell has no predict: before it")
	case p.AnswerLine != 0:
		return fmt.Errorf("answer: is given twice for the predict: at line %d (first at line %d)", p.Line, p.AnswerLine)
	}
	p.AnswerLine = ln
	if p.bad {
		return nil
	}
	return p.setAnswer(rest)
}

// parsePredict reads what follows "predict:": an optional question ending
// in "?", then number, bytes, or choices separated by "|".
func parsePredict(text string) (*Prediction, error) {
	p := &Prediction{}
	rest := strings.TrimSpace(text)
	if i := strings.LastIndexByte(rest, '?'); i >= 0 {
		p.Question, rest = strings.TrimSpace(rest[:i+1]), strings.TrimSpace(rest[i+1:])
	}
	switch strings.ToLower(rest) {
	case "":
		return nil, fmt.Errorf("predict: %q gives no answers to choose from; write predict: QUESTION? A | B | C, or predict: QUESTION? number (or bytes)", text)
	case PredictNumber, PredictBytes:
		p.Kind = strings.ToLower(rest)
		return p, nil
	}
	p.Kind = PredictChoice
	for _, c := range strings.Split(rest, "|") {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, fmt.Errorf("predict: %q has an empty choice; separate the choices with |: IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR", text)
		}
		p.Choices = append(p.Choices, c)
	}
	if len(p.Choices) < 2 {
		return nil, fmt.Errorf("predict: %q offers one answer only; give two or more, separated by |, or write number or bytes", text)
	}
	return p, nil
}

// setAnswer reads the answer: line's subject and checks the choices
// against its type.
func (p *Prediction) setAnswer(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return fmt.Errorf("answer: is empty; name what the answer is read from after the step: cq0 completions.status, mr1.str[0], error")
	}
	if _, op, _, ok := splitOp(text); ok {
		return fmt.Errorf("answer: %q names a subject, not a comparison: drop %s and what follows (the learner's prediction is the value)", text, op)
	}
	s, err := parseSubject(text)
	if err != nil {
		return fmt.Errorf("answer: %v", err)
	}
	e := &Expect{Text: text + " == ?", subj: s, op: "=="}
	switch {
	case s.kind == subjField && strings.HasSuffix(s.handle, "*"):
		return fmt.Errorf("answer: %q reads every %s; an answer reads one: %s0.%s", text, kindNouns[s.prefix], s.prefix, s.field)
	case (s.kind == subjCommands || s.kind == subjHandles) && !s.count:
		return fmt.Errorf("answer: %q is a list of names; a prediction asks for one value (%s.count counts them)", text, text)
	}
	t := e.elemType()
	switch p.Kind {
	case PredictNumber:
		if t != tNum && t != tHex && t != tPSN {
			return fmt.Errorf("answer: %s is %s, and predict: asks for a number; use choices (A | B) or an answer that is a number", text, typeNames[t])
		}
	case PredictBytes:
		if t != tBytes {
			return fmt.Errorf("answer: %s is %s, and predict: asks for bytes; read bytes (mr1[0:5], mr1.str[0]) or use choices", text, typeNames[t])
		}
	default:
		for i, c := range p.Choices {
			v, err := parseValue(nil, t, c)
			if err != nil {
				return fmt.Errorf("predict: choice %q does not fit the answer: %s is %s: %v", c, text, typeNames[t], err)
			}
			for j, w := range p.choices {
				if v.equal(w) && w.equal(v) {
					return fmt.Errorf("predict: choices %q and %q are the same answer", p.Choices[j], p.Choices[i])
				}
			}
			p.choices = append(p.choices, v)
		}
	}
	p.Answer, p.subj = text, e
	return nil
}

// Ask is the question as the tutor asks it: the question, and what to
// answer with.
func (p *Prediction) Ask() string {
	q := p.Question
	if q == "" {
		q = "What will " + p.Answer + " be after this step?"
	}
	switch p.Kind {
	case PredictNumber:
		return q + " (a number)"
	case PredictBytes:
		return q + ` (bytes: "text" or 0x hex)`
	}
	return q + " " + strings.Join(p.Choices, " | ")
}

// observe reads the right answer in x: the subject's value, or the first
// of a list's values.
func (p *Prediction) observe(x *evalCtx) (value, error) {
	e := *p.subj
	e.seen = &observation{}
	err := e.checkWant(x, []value{{t: e.elemType()}})
	switch {
	case !e.seen.read && err != nil:
		if u, ok := err.(*Unmet); ok {
			return value{}, fmt.Errorf("%s", u.Why)
		}
		return value{}, err
	case !e.seen.read:
		return value{}, fmt.Errorf("%s could not be read", p.Answer)
	case len(e.seen.vals) == 0:
		return value{}, fmt.Errorf("%s is empty after the step", p.Answer)
	}
	return e.seen.vals[0], nil
}

// show prints a value as the prediction's answers are written: a choice
// as the lesson wrote it.
func (p *Prediction) show(v value) string {
	for i, c := range p.choices {
		if v.equal(c) && c.equal(v) {
			return p.Choices[i]
		}
	}
	return v.String()
}

// read takes a learner's answer: one of the choices (as written, in any
// case, or in another form of the same value: rnr_retry_exc_err), a
// number, or bytes ("text", 0x hex, or bare text).
func (p *Prediction) read(answer string) (value, string, error) {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return value{}, "", fmt.Errorf("predict what? %s", p.usage())
	}
	t := p.subj.elemType()
	switch p.Kind {
	case PredictChoice:
		for i, c := range p.Choices {
			if strings.EqualFold(c, answer) {
				return p.choices[i], c, nil
			}
		}
		if numeric := t == tNum || t == tHex || t == tPSN || t == tQPN || t == tMTU || t == tBytes; !numeric && answer[0] >= '0' && answer[0] <= '9' {
			// A choice's name read as its enum's value: "3" would be
			// IBV_QPS_RTS, not the third choice.
			return value{}, "", fmt.Errorf("%q is a number; answer with one of the names: %s", answer, strings.Join(p.Choices, " | "))
		}
		lit := answer
		if t == tBytes && !strings.HasPrefix(lit, `"`) && !strings.HasPrefix(strings.ToLower(lit), "0x") {
			lit = fmt.Sprintf("%q", lit) // bare text
		}
		if v, err := parseValue(nil, t, lit); err == nil {
			for i, c := range p.choices {
				if v.equal(c) && c.equal(v) {
					return c, p.Choices[i], nil
				}
			}
		}
		shown := answer // "lastt" typed in quotes is shown in one pair
		if u, err := strconv.Unquote(answer); err == nil && strings.HasPrefix(answer, `"`) {
			shown = u
		}
		return value{}, "", fmt.Errorf("%q is not one of the answers; %s", clip(shown, 60), p.usage())
	case PredictBytes:
		if !strings.HasPrefix(answer, `"`) && !strings.HasPrefix(strings.ToLower(answer), "0x") {
			answer = fmt.Sprintf("%q", answer)
		}
	}
	v, err := parseValue(nil, t, answer)
	if err != nil {
		return value{}, "", fmt.Errorf("%v; %s", err, p.usage())
	}
	return v, v.String(), nil
}

// usage says how to answer.
func (p *Prediction) usage() string {
	switch p.Kind {
	case PredictNumber:
		return "answer with a number: predict 123"
	case PredictBytes:
		return `answer with bytes: predict "hello" or predict 0x68656c6c6f`
	}
	return "answer with one of: predict " + strings.Join(p.Choices, " | predict ")
}

// clip shortens s to n runes for a message, marking what it left out.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
