package pingpong

import (
	"fmt"

	"github.com/vsh-rdma/vsh/verbs"
)

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
// meaningful after Run and Stop, on either side: before Stop, the peer may
// still be writing into the buffer (see Stop).
func (e *Endpoint) CheckData() []BadPage {
	return checkPattern(e.msg(), e.o.pageSize(), e.fill())
}

// Stop moves the endpoint's QPs to the error state, as destroying them
// would, so that nothing more lands in the buffer; the loop must be over.
//
// A side's loop ends on its own counts (-n received and -n sends
// completed), not when its peer is done. srq's loop, like rdma-core's,
// posts a send whenever one QP's round is over and fewer than -n sends
// have *completed* across all QPs, so in the last round several QPs may
// each post one more: up to num_qp-1 extra messages each way (-n 1000 -q
// 16 typically sends 1008). The peer, done counting, still receives them:
// its receives stay posted on the SRQ. rdma-core's programs destroy their
// QPs right after the result lines and never read the buffer again; -c
// reads it, so the program stops the QPs first, at the point where rdma-core
// would destroy them, and checks a buffer that nobody writes any more.
func (e *Endpoint) Stop() error {
	for _, qp := range e.qps {
		if err := qp.Modify(&verbs.QPAttr{State: verbs.QPSErr}, verbs.AttrState); err != nil {
			return fail("Failed to modify QP to ERR", err, "")
		}
	}
	return nil
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
