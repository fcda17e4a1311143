package render

import (
	"fmt"
	"strings"
	"testing"
)

// completions is a completion table as poll_cq prints it.
var completions = TableView{
	Columns: []Column{{Header: "wr_id"}, {Header: "status"}, {Header: "opcode"}, {Header: "byte_len"},
		{Header: "qp_num", Drop: 4}, {Header: "src_qp", Drop: 1}, {Header: "imm_data", Drop: 3}, {Header: "wc_flags", Drop: 2}},
	Rows: [][]string{
		{"1", "IBV_WC_SUCCESS", "IBV_WC_RECV", "4", "0x000011 (qp1)", "-", "-", "IBV_WC_GRH"},
		{"2", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_RECV_RDMA_WITH_IMM", "0", "0x000011 (qp1)", "-", "0x1", "IBV_WC_WITH_IMM"},
	},
}

func texts(ls []Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Text)
		b.WriteString("\n")
	}
	return b.String()
}

func TestTableViewLines(t *testing.T) {
	for _, tt := range []struct {
		name          string
		t             TableView
		width, indent int
		want          string
	}{
		{"no width: as Table prints it", completions, 0, 5,
			Table([]string{"wr_id", "status", "opcode", "byte_len", "qp_num", "src_qp", "imm_data", "wc_flags"}, completions.Rows) + "\n"},
		{"wide enough: as Table prints it", completions, 160, 5,
			Table([]string{"wr_id", "status", "opcode", "byte_len", "qp_num", "src_qp", "imm_data", "wc_flags"}, completions.Rows) + "\n"},
		{"80 columns keep wr_id, status, opcode and byte_len", completions, 80, 5, "" +
			"wr_id  status                  opcode                     byte_len\n" +
			"------------------------------------------------------------------\n" +
			"1      IBV_WC_SUCCESS          IBV_WC_RECV                4\n" +
			"2      IBV_WC_REM_INV_REQ_ERR  IBV_WC_RECV_RDMA_WITH_IMM  0\n" +
			"(qp_num, src_qp, imm_data, wc_flags left out to fit 80 columns; --width 124 shows them)\n"},
		{"more names another view", TableView{Columns: []Column{{Header: "a"}, {Header: "b", Drop: 1}},
			Rows: [][]string{{"xxxx", "yyyy"}}, More: "show cq0"}, 8, 0, "" +
			"a\n----\nxxxx\n(b left out to fit 8 columns; --width 12 shows them, as does show cq0)\n"},
		{"wrapping columns narrow about evenly", TableView{
			Columns: []Column{{Header: "arg"}, {Header: "default", Wrap: true}, {Header: "meaning", Wrap: true}},
			Rows:    [][]string{{"access=", "remote_write,remote_read", "what the peer may do to this QP's memory"}}}, 40, 0, "" +
			"arg      default         meaning\n" +
			"----------------------------------------\n" +
			"access=  remote_write,   what the peer\n" +
			"         remote_read     may do to this\n" +
			"                         QP's memory\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := texts(tt.t.Lines(tt.width, tt.indent)); got != tt.want {
				t.Errorf("Lines(%d, %d) =\n%s\nwant\n%s", tt.width, tt.indent, got, tt.want)
			}
		})
	}
}

// TestTableViewAnyWidth fits tables at every width: nothing panics, and the
// lines but the note fit wherever the columns that are never left out do.
func TestTableViewAnyWidth(t *testing.T) {
	wide := TableView{Columns: []Column{{Header: "名前", Wrap: true}, {Header: "x", Drop: 1}},
		Rows: [][]string{{"日本語 日本語 日本語", "\x1b[31mred\x1b[0m"}, {}, {"a", "b", "extra"}}}
	for _, tv := range []TableView{completions, wide, {}} {
		for width := 1; width <= 200; width++ {
			ls := tv.Lines(width, 4)
			if len(ls) == 0 && len(tv.Columns) > 0 {
				t.Fatalf("Lines(%d) is empty", width)
			}
			if width >= 74 && tv.Columns != nil && len(tv.Rows) == 2 {
				for _, l := range ls[:len(ls)-1] {
					if Width(l.Text) > width-4 && !strings.HasPrefix(l.Text, "(") {
						t.Errorf("Lines(%d): %q is wider", width, l.Text)
					}
				}
			}
		}
	}
}

func ExampleTableView() {
	tv := TableView{
		Columns: []Column{{Header: "wr_id"}, {Header: "status"}, {Header: "qp_num", Drop: 1}},
		Rows:    [][]string{{"1", "IBV_WC_SUCCESS", "0x000011 (qp1)"}},
	}
	for _, l := range tv.Lines(30, 0) {
		fmt.Println(l.Text)
	}
	// Output:
	// wr_id  status
	// ---------------------
	// 1      IBV_WC_SUCCESS
	// (qp_num left out to fit 30 columns; --width 39 shows them)
}
