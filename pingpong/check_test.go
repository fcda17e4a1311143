package pingpong

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/pingpong/exchange"
	"github.com/vsh-rdma/vsh/verbs"
)

func pattern(n, page int, fill byte) []byte {
	m := make([]byte, n)
	for i := range m {
		m[i] = patternByte(i, page, fill)
	}
	return m
}

func TestCheckPattern(t *testing.T) {
	const page = 4096
	m := pattern(3*page+5, page, Fill)
	if m[0] != 0 || m[page] != 0 || m[1] != Fill || m[3*page] != 0 || m[3*page+4] != Fill {
		t.Fatalf("pattern: % x ...", m[:4])
	}
	if bad := checkPattern(m, page, Fill); bad != nil {
		t.Fatalf("clean buffer: %v", bad)
	}
	// rdma-core would see none of these: it checks only the page starts.
	m[page+17] = 0x7c
	m[page+18] = 0
	m[3*page+4] = 1
	want := []BadPage{
		{Page: 1, Bad: 2, Len: page, First: page + 17, Got: 0x7c, Want: Fill},
		{Page: 3, Bad: 1, Len: 5, First: 3*page + 4, Got: 1, Want: Fill},
	}
	if bad := checkPattern(m, page, Fill); !reflect.DeepEqual(bad, want) {
		t.Errorf("got  %+v\nwant %+v", bad, want)
	}
	if s := want[0].String(); s != "page 1: 2 of 4096 bytes differ, the first at byte 4113 (0x7c where the pattern has 0x7b)" {
		t.Errorf("String() = %q", s)
	}
	// srq's buffer is cleared, not filled.
	z := pattern(100, page, 0)
	if bad := checkPattern(z, page, 0); bad != nil {
		t.Errorf("srq: %v", bad)
	}
	// A buffer nobody wrote the pattern into: every page start is wrong.
	u := make([]byte, 2*page)
	for i := range u {
		u[i] = Fill
	}
	bad := checkPattern(u, page, Fill)
	if len(bad) != 2 || bad[1].First != page || bad[1].Bad != 1 {
		t.Fatalf("unwritten: %+v", bad)
	}
	if h := checkHint(bad, Fill, page, false); !strings.Contains(h, "pass -c on both sides") {
		t.Errorf("hint %q", h)
	}
	if h := checkHint(want, Fill, page, false); h != "" {
		t.Errorf("hint for real corruption %q", h)
	}
}

func TestLines(t *testing.T) {
	s := Stats{Size: 4096, Iters: 1000, Elapsed: 10880 * 1000} // 10.88 ms
	got := s.Lines()
	want := []string{"8192000 bytes in 0.01 seconds = 6023.53 Mbit/sec", "1000 iters in 0.01 seconds = 10.88 usec/iter"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	z := Stats{Size: 1, Iters: 1}
	if l := z.Lines(); l[0] != "2 bytes in 0.00 seconds = inf Mbit/sec" || l[1] != "1 iters in 0.00 seconds = 0.00 usec/iter" {
		t.Errorf("zero time: %q", l)
	}
	if cfloat(0.0/zero()) != "-nan" {
		t.Error("nan")
	}
}

func zero() float64 { return 0 }

func TestAddressLines(t *testing.T) {
	g, _ := verbs.ParseGID("10.0.0.1")
	d := exchange.Dest{LID: 0, QPN: 0x11, PSN: 0xa3f1c2, GID: g}
	if s := LocalLine(RC, d); s != "  local address:  LID 0x0000, QPN 0x000011, PSN 0xa3f1c2, GID ::ffff:10.0.0.1" {
		t.Errorf("rc %q", s)
	}
	if s := LocalLine(UD, d); s != "  local address:  LID 0x0000, QPN 0x000011, PSN 0xa3f1c2: GID ::ffff:10.0.0.1" {
		t.Errorf("ud %q", s)
	}
	d.GID = verbs.GID{}
	d.LID = 0x1a
	if s := RemoteLine(d); s != "  remote address: LID 0x001a, QPN 0x000011, PSN 0xa3f1c2, GID ::" {
		t.Errorf("remote %q", s)
	}
	if s := InvalidPageLine(3); s != "invalid data in page 3" {
		t.Errorf("%q", s)
	}
}
