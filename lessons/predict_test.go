package lessons

import (
	"fmt"
	"strings"
	"testing"
)

// predictLesson is a lesson whose learner cell ends with lines.
func predictLesson(auto string, lines ...string) string {
	return "---\nid: p\ntitle: P\nlevel: beginner\nminutes: 1\n---\n\nOpen A.\n\n```vsh" + auto + "\nopen_device A\nalloc_pd ctx0\ncreate_cq ctx0\n```\ngoal: Open A, make a PD and a CQ.\n" +
		strings.Join(lines, "\n") + "\n"
}

func TestParsePredict(t *testing.T) {
	tests := []struct {
		name    string
		auto    string
		lines   []string
		want    string // an error, or "" for none
		kind    string
		ask     string
		choices int
	}{
		{name: "choices", lines: []string{"predict: What state? IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR", "answer: cq0 completions"},
			kind: PredictChoice, ask: "What state? IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR", choices: 2},
		{name: "a number, no question", lines: []string{"predict: number", "answer: cq0.cqe"},
			kind: PredictNumber, ask: "What will cq0.cqe be after this step? (a number)"},
		{name: "bytes", lines: []string{"predict: What is there? bytes", "answer: mr0[0:4]"}, kind: PredictBytes, ask: `What is there? (bytes: "text" or 0x hex)`},
		{name: "no answer line", lines: []string{"predict: number"}, want: "p.md:16: predict: has no answer: line after it"},
		{name: "answer alone", lines: []string{"answer: cq0.cqe"}, want: "p.md:16: answer: follows a predict: line"},
		{name: "twice", lines: []string{"predict: number", "predict: bytes", "answer: cq0.cqe"}, want: "p.md:17: predict: is given twice (first at line 16)"},
		{name: "answer twice", lines: []string{"predict: number", "answer: cq0.cqe", "answer: cq0.cqe"}, want: "p.md:18: answer: is given twice"},
		{name: "on an auto cell", auto: " auto", lines: []string{"predict: number", "answer: cq0.cqe"}, want: "p.md:16: predict: belongs to a cell the learner performs"},
		{name: "no choices", lines: []string{"predict: What now?", "answer: cq0.cqe"}, want: "gives no answers to choose from"},
		{name: "one choice", lines: []string{"predict: RTS", "answer: qp0.state"}, want: "offers one answer only"},
		{name: "an empty choice", lines: []string{"predict: RTS | | ERR", "answer: qp0.state"}, want: "has an empty choice"},
		{name: "a choice of another type", lines: []string{"predict: RTS | blue", "answer: qp0.state"}, want: `p.md:17: predict: choice "blue" does not fit the answer`},
		{name: "the same choice twice", lines: []string{"predict: RTS | IBV_QPS_RTS", "answer: qp0.state"}, want: `choices "RTS" and "IBV_QPS_RTS" are the same answer`},
		{name: "a number of a status", lines: []string{"predict: number", "answer: cq0 completions"}, want: "predict: asks for a number"},
		{name: "bytes of a number", lines: []string{"predict: bytes", "answer: cq0.cqe"}, want: "predict: asks for bytes"},
		{name: "every QP", lines: []string{"predict: RTS | ERR", "answer: qp*.state"}, want: "an answer reads one"},
		{name: "a comparison", lines: []string{"predict: RTS | ERR", "answer: qp0.state == RTS"}, want: "names a subject, not a comparison"},
		{name: "a list of names", lines: []string{"predict: number", "answer: handles"}, want: "a prediction asks for one value"},
		{name: "an unknown field", lines: []string{"predict: number", "answer: cq0.depth"}, want: `answer: a completion queue has no field "depth"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Parse("p.md", []byte(predictLesson(tc.auto, tc.lines...)))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Parse = %v; want an error with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := l.Steps[0].Cell.Predict
			if p == nil || p.Kind != tc.kind || p.Ask() != tc.ask || len(p.Choices) != tc.choices || p.AnswerLine != 17 {
				t.Fatalf("Predict = %+v; want kind %s, %d choices, Ask %q", p, tc.kind, tc.choices, tc.ask)
			}
		})
	}
}

// TestPredictionRead: the answers a learner may give, and those refused.
func TestPredictionRead(t *testing.T) {
	lesson := func(lines ...string) *Prediction {
		l, err := Parse("p.md", []byte(predictLesson("", lines...)))
		if err != nil {
			t.Fatal(err)
		}
		return l.Steps[0].Cell.Predict
	}
	status := lesson("predict: IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR", "answer: cq0 completions.status")
	count := lesson("predict: number", "answer: cq0 completions.count")
	text := lesson("predict: bytes", "answer: mr0[0:5]")
	textChoice := lesson(`predict: "hello" | 0x0000000000`, "answer: mr0[0:5]")
	tests := []struct {
		p      *Prediction
		answer string
		want   string // the answer as taken, or the error
		ok     bool
	}{
		{status, "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", true},
		{status, "ibv_wc_success", "IBV_WC_SUCCESS", true},
		{status, "rnr_retry_exc_err", "IBV_WC_RNR_RETRY_EXC_ERR", true},
		{status, "IBV_WC_REM_ACCESS_ERR", `"IBV_WC_REM_ACCESS_ERR" is not one of the answers; answer with one of: predict IBV_WC_SUCCESS | predict IBV_WC_RNR_RETRY_EXC_ERR`, false},
		{status, "", "predict what?", false},
		{status, "0", `"0" is a number; answer with one of the names: IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR`, false}, // not IBV_WC_SUCCESS by its value
		{status, "0x0", `"0x0" is a number`, false},
		{count, "0x10", "16", true},
		{count, "many", `"many": not a number`, false},
		{text, "hello", `"hello"`, true},
		{text, `"a\tb"`, `"a\tb"`, false}, // taken, and printed as hex: checked below
		{text, "0x6869", `"hi"`, true},
		{textChoice, "hello", `"hello"`, true},
		{textChoice, "HELLO", `is not one of the answers`, false},
		{textChoice, `"HELLX"`, `"HELLX" is not one of`, false}, // one pair of quotes
	}
	for _, tc := range tests {
		_, got, err := tc.p.read(tc.answer)
		switch {
		case tc.ok && (err != nil || got != tc.want):
			t.Errorf("read(%q) = %q, %v; want %q", tc.answer, got, err, tc.want)
		case !tc.ok && tc.answer == `"a\tb"`:
			if err != nil || got != "0x610962" {
				t.Errorf("read(%q) = %q, %v; want 0x610962", tc.answer, got, err)
			}
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("read(%q) = %q, %v; want an error with %q", tc.answer, got, err, tc.want)
		}
	}
}

func ExamplePrediction_Ask() {
	src := "---\nid: rnr\ntitle: RNR\nlevel: beginner\nminutes: 1\n---\n\nPoll.\n\n```vsh\npoll_cq cq0\n```\n" +
		"goal: Poll A's CQ: what comes back?\n" +
		"predict: What does A's poll return? IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR\n" +
		"answer: cq0 completions.status\n"
	l, err := Parse("rnr.md", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := l.Steps[0].Cell.Predict
	fmt.Println(p.Ask())
	fmt.Println(p.Kind, p.Answer)
	// Output:
	// What does A's poll return? IBV_WC_SUCCESS | IBV_WC_RNR_RETRY_EXC_ERR
	// choice cq0 completions.status
}
