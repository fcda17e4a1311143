package picture_test

import (
	"fmt"
	"strings"

	"github.com/vsh-rdma/vsh/shell/render/picture"
)

// A SEND, its ACK lost, and the SEND again when the retransmit timer fires.
func ExampleLadder_Text() {
	l := &picture.Ladder{
		Title:   "a lost ACK",
		Columns: []picture.Column{{Name: "sim0", Sub: "qp0"}, {Name: "sim1", Sub: "qp1"}},
		Arrows: []picture.Arrow{
			{Time: "0s", From: 0, To: 1, Label: []string{"SEND_ONLY", "psn=0x000000", "AckReq"}},
			{Time: "2.054µs", From: 1, To: 0, Label: []string{"ACKNOWLEDGE", "psn=0x000000"}, Dropped: true,
				Note: "dropped: fault rule 1"},
			{Time: "67.1ms", From: 0, To: 1, Label: []string{"SEND_ONLY", "psn=0x000000", "AckReq"}, Retransmit: true},
			{Time: "67.102ms", From: 1, To: 0, Label: []string{"ACKNOWLEDGE", "psn=0x000000"}},
		},
	}
	text, err := l.Text(60, nil) // nil styles: plain text
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// a lost ACK
	//     time  sim0                                 sim1
	//            qp0                                  qp1
	//       0s    │── SEND_ONLY psn=0x000000 AckReq ──▶│
	//  2.054µs    │         ✗────── ACKNOWLEDGE ───────│
	//             │ dropped: fault rule 1              │
	//   67.1ms    │─ ↻ SEND_ONLY psn=0x000000 AckReq ─▶│
	// 67.102ms    │◀──── ACKNOWLEDGE psn=0x000000 ─────│
	// ↻ sent again: a retransmission
	// ✗ dropped on the way
}

func ExampleLadder_SVG() {
	l := &picture.Ladder{
		Columns: []picture.Column{{Name: "sim0"}, {Name: "sim1"}},
		Arrows:  []picture.Arrow{{Time: "0s", From: 0, To: 1, Label: []string{"SEND_ONLY"}}},
	}
	svg, err := l.SVG()
	if err != nil {
		fmt.Println(err)
		return
	}
	// One element, ready to put inline in an HTML page.
	fmt.Println(strings.HasPrefix(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""), strings.Count(svg, "<polygon"))
	// Output: true 1
}

// The QP state machine's first row, with the QP in RTR after RESET and INIT.
func ExampleDiagram_Text() {
	d := &picture.Diagram{
		Title: "qp0: RESET → INIT → RTR",
		Nodes: []picture.Node{
			{Name: "RESET", Visited: true},
			{Name: "INIT", Col: 1, Visited: true},
			{Name: "RTR", Col: 2, Visited: true, Current: true},
			{Name: "RTS", Col: 3},
		},
		Edges: []picture.Edge{
			{From: "RESET", To: "INIT", Taken: true},
			{From: "INIT", To: "RTR", Taken: true},
			{From: "RTR", To: "RTS"},
		},
		Notes: []string{"━ the path qp0 took"},
	}
	text, err := d.Text(60, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	// Output:
	// qp0: RESET → INIT → RTR
	//
	// ┏━━━━━━━━━┓       ┏━━━━━━━━┓       ╔═══════╗       ┌───────┐
	// ┃  RESET  ┃━━━━━━▶┃  INIT  ┃━━━━━━▶║ [RTR] ║──────▶│  RTS  │
	// ┗━━━━━━━━━┛       ┗━━━━━━━━┛       ╚═══════╝       └───────┘
	//
	// ━ the path qp0 took
}

func ExampleDiagram_SVG() {
	d := &picture.Diagram{Nodes: []picture.Node{{Name: "RESET", Current: true}, {Name: "INIT", Col: 1}},
		Edges: []picture.Edge{{From: "RESET", To: "INIT"}}}
	svg, err := d.SVG()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Count(svg, "<rect"), strings.Count(svg, "<line"), strings.HasSuffix(svg, "</svg>\n"))
	// Output: 3 1 true
}
