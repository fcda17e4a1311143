package pingpong

import "fmt"

// -c: the client writes a pattern into its buffer before its first send;
// every side echoes what it received, so at the end every buffer holds the
// client's pattern. rdma-core's pattern is the buffer's fill (0x7b; srq
// clears its buffer to 0) with the first byte of every page set to
// i / page_size % sizeof(char), which is always 0. rdma-core's server then
// compares only those first bytes; vsh compares every byte, on both sides.

// BadPage is a page of the buffer whose data differ from the pattern.
type BadPage struct {
	Page  int  // page number, from 0
	Bad   int  // how many bytes differ
	Len   int  // bytes of the message in this page
	First int  // offset in the message of the first bad byte
	Got   byte // the first bad byte
	Want  byte // what it should be
}

func (b BadPage) String() string {
	return fmt.Sprintf("page %d: %d of %d bytes differ, the first at byte %d (0x%02x where the pattern has 0x%02x)",
		b.Page, b.Bad, b.Len, b.First, b.Got, b.Want)
}

// patternByte is the client's pattern at message offset i.
func patternByte(i, page int, fill byte) byte {
	if i%page == 0 {
		return byte(i / page % 1) // rdma-core's i / page_size % sizeof(char): 0
	}
	return fill
}

func (e *Endpoint) fill() byte {
	if e.o.Transport == SRQ {
		return 0
	}
	return Fill
}

// msg returns the message part of the buffer (UD: after the GRH).
func (e *Endpoint) msg() []byte {
	if e.o.Transport == UD {
		return e.buf[GRHSize : GRHSize+e.o.Size]
	}
	return e.buf[:e.o.Size]
}

// writePattern is what the client does with -c before its first send.
func (e *Endpoint) writePattern() {
	m := e.msg()
	page := e.o.pageSize()
	for i := 0; i < len(m); i += page {
		m[i] = patternByte(i, page, e.fill())
	}
}

// CheckData compares every byte of the message buffer with the client's
// pattern and returns the pages that differ (none when all is well). It is
// meaningful after Run, on either side.
func (e *Endpoint) CheckData() []BadPage {
	return checkPattern(e.msg(), e.o.pageSize(), e.fill())
}

func checkPattern(m []byte, page int, fill byte) []BadPage {
	var bad []BadPage
	for start := 0; start < len(m); start += page {
		end := min(start+page, len(m))
		var b *BadPage
		for i := start; i < end; i++ {
			want := patternByte(i, page, fill)
			if m[i] == want {
				continue
			}
			if b == nil {
				bad = append(bad, BadPage{Page: start / page, Len: end - start, First: i, Got: m[i], Want: want})
				b = &bad[len(bad)-1]
			}
			b.Bad++
		}
	}
	return bad
}
