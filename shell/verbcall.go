package shell

import (
	"strings"

	"github.com/vsh-rdma/vsh/shell/render"

	"github.com/vsh-rdma/vsh/verbs"
)

// VerbCall is one libibverbs call a command made, as data: it makes the verb
// line the shell prints, the line's path tag and the counts paths shows.
type VerbCall struct {
	// Name is the libibverbs function: "ibv_create_cq".
	Name string
	// Args are its arguments as printed, without the parentheses (in a
	// cell's record, without the styles of a terminal).
	Args string
	// Bare prints the name alone, for a verb run as part of another on
	// one line ("ibv_open_device(A), ibv_query_device, ...").
	Bare bool
	// Result is what the call gave, as printed after it: "→ cq0", "= 0",
	// "= EINVAL, bad_wr = WR #2". One that starts with ':' follows the
	// call directly.
	Result string
	// WRs are the work requests a post verb carried.
	WRs int
}

// Data reports whether the call is on the data path (verbs.VerbPath.Data).
func (v VerbCall) Data() bool {
	p, _ := verbs.PathOf(v.Name)
	return p.Data
}

// String returns the call as the shell prints it.
func (v VerbCall) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v VerbCall) write(b *strings.Builder) {
	b.WriteString(v.Name)
	if !v.Bare {
		b.WriteByte('(')
		b.WriteString(v.Args)
		b.WriteByte(')')
	}
	if v.Result != "" {
		if v.Result[0] != ':' {
			b.WriteByte(' ')
		}
		b.WriteString(v.Result)
	}
}

// verbs prints one verb line of calls joined by ", ", tagged with the first
// call's path, and records them in the cell and in paths' counts.
func (c *call) verbs(calls ...VerbCall) { c.verbsJoined(", ", calls...) }

// verbsJoined is verbs with another separator between the calls.
func (c *call) verbsJoined(sep string, calls ...VerbCall) {
	var b strings.Builder
	for i, v := range calls {
		if i > 0 {
			b.WriteString(sep)
		}
		v.write(&b)
		c.s.counts().add(v)
	}
	keep := c.s.verbs.room(len(calls), MaxLogVerbs, func(i int) int { k := len(c.s.log[i].Verbs); c.s.log[i].Verbs = nil; return k })
	for _, v := range calls[:keep] { // the record is plain text, whatever the styles
		v.Args, v.Result = render.StripANSI(v.Args), render.StripANSI(v.Result)
		c.cell.Verbs = append(c.cell.Verbs, v)
	}
	st := c.s.st
	tag, style := "[control path]", st.Control
	if len(calls) > 0 && calls[0].Data() {
		tag, style = "[data path]", st.Data
	}
	c.out.addKind(render.Call, st.Render(st.Verb, b.String())+"  "+st.Render(style, tag))
}

// verbCount is how often one verb ran, and the work requests it carried.
type verbCount struct {
	calls, wrs int
}

// verbCounts are a session's counts (paths), in the order the verbs first
// ran.
type verbCounts struct {
	h     *handles // the handles they were counted under: a reset replaces them
	by    map[string]*verbCount
	order []string
}

func (vc *verbCounts) add(v VerbCall) {
	n := vc.by[v.Name]
	if n == nil {
		n = &verbCount{}
		vc.by[v.Name] = n
		vc.order = append(vc.order, v.Name)
	}
	n.calls++
	n.wrs += v.WRs
}

// counts returns the session's verb counts, empty again after a reset.
func (s *Shell) counts() *verbCounts {
	if s.vc == nil || s.vc.h != s.h {
		s.vc = &verbCounts{h: s.h, by: map[string]*verbCount{}}
	}
	return s.vc
}
