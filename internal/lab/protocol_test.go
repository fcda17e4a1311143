package lab

import "testing"

func TestParseMsg(t *testing.T) {
	tests := []struct {
		line    string
		want    Msg
		wantErr bool
	}{
		{"up 2.53", Msg{Kind: MsgUp, Uptime: 2.53}, false},
		{"ready 3.10\r\n", Msg{Kind: MsgReady, Uptime: 3.10}, false},
		{"exit 0", Msg{Kind: MsgExit, Status: 0}, false},
		{"exit 143", Msg{Kind: MsgExit, Status: 143}, false},
		{"exit 255", Msg{Kind: MsgExit, Status: 255}, false},
		{"fail cannot mount /x (9p tag share0)", Msg{Kind: MsgFail, Text: "cannot mount /x (9p tag share0)"}, false},
		{"winsize 40 120", Msg{Kind: MsgWinsize, Rows: 40, Cols: 120}, false},
		{"exit 256", Msg{}, true},
		{"exit -1", Msg{}, true},
		{"exit", Msg{}, true},
		{"exit seven", Msg{}, true},
		{"up", Msg{}, true},
		{"up -1", Msg{}, true},
		{"winsize 40", Msg{}, true},
		{"winsize 0 80", Msg{}, true},
		{"winsize 40 x", Msg{}, true},
		{"hello world", Msg{}, true},
		{"", Msg{}, true},
		{"EXIT 0", Msg{}, true},
	}
	for _, tt := range tests {
		got, err := ParseMsg(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseMsg(%q) error = %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseMsg(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

func TestMsgRoundTrip(t *testing.T) {
	for _, m := range []Msg{
		{Kind: MsgUp, Uptime: 1.25},
		{Kind: MsgReady, Uptime: 3.5},
		{Kind: MsgFail, Text: "rdma link add failed"},
		{Kind: MsgExit, Status: 42},
		{Kind: MsgWinsize, Rows: 24, Cols: 80},
	} {
		got, err := ParseMsg(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMsg(%q) = %+v, %v; want %+v", m.String(), got, err, m)
		}
	}
	if s := (Msg{Kind: MsgFail, Text: "a\nb"}).String(); s != "fail a b" {
		t.Errorf("a fail message must stay on one line, got %q", s)
	}
}
