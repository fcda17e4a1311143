package lessons

import (
	"fmt"
	"sort"

	"github.com/vsh-rdma/vsh/verbs"
)

// Capability is something a lesson may need from the backend, named in
// its front matter (needs: two-devices, stepping).
type Capability struct {
	Name string
	// Doc says what it is, for docs/writing-lessons.md and messages.
	Doc string
	// has reports whether the backend offers it, and if not why.
	has func(p verbs.Provider, devs []verbs.Device) (bool, string)
}

// Capabilities lists every capability a lesson can need.
var Capabilities = []Capability{
	{"two-devices", "two RDMA devices, so that A and B are different hosts' NICs (else A and B are one device, in loopback)",
		func(p verbs.Provider, devs []verbs.Device) (bool, string) {
			if len(devs) >= 2 {
				return true, ""
			}
			return false, fmt.Sprintf("the backend has %d device%s", len(devs), plural(len(devs)))
		}},
	{"stepping", "a fabric that can be stepped packet by packet in virtual time (fabric step, step, run, advance)",
		optional[verbs.Stepper]("cannot be stepped: its packets move in real time")},
	{"faults", "fault injection on the wire (fault drop, cut, ...)",
		optional[verbs.FaultInjector]("cannot inject faults")},
	{"trace", "packet traces (trace on, trace pcap)",
		optional[verbs.PacketObserver]("does not show its packets")},
	{"inspect", "a view of queue internals: PSNs in flight, timers",
		optional[verbs.Inspector]("does not show its queue internals")},
	{"ud", "unreliable datagram QPs and address handles",
		devCap(func(a verbs.DeviceAttr) bool { return a.MaxAH > 0 }, "offers no address handles (max_ah 0)")},
	{"srq", "shared receive queues",
		devCap(func(a verbs.DeviceAttr) bool { return a.MaxSRQ > 0 }, "offers no SRQ (max_srq 0)")},
	{"atomics", "atomic operations (compare-and-swap, fetch-and-add)",
		devCap(func(a verbs.DeviceAttr) bool { return a.AtomicCap != 0 }, "offers no atomics (atomic_cap NONE)")},
	{"multicast", "UD multicast groups",
		devCap(func(a verbs.DeviceAttr) bool { return a.MaxMcastGrp > 0 }, "offers no multicast (max_mcast_grp 0)")},
	{"ip-groups", "joining a host's IP multicast group on a device's netdev (join_group, leave_group)",
		optional[verbs.HostGroups]("cannot join IP multicast groups")},
	{"xrc", "XRC domains, XRC SRQs and XRC QPs: a NIC that has them (mlx5), or the simulator, which turns them on for the lesson (kernel rxe has none)",
		hasXRC},
}

// hasXRC reports whether XRC works on the backend: the simulator can turn
// it on (verbs.XRCSwitch); elsewhere an XRC domain must open.
func hasXRC(p verbs.Provider, devs []verbs.Device) (bool, string) {
	if _, ok := p.(verbs.XRCSwitch); ok {
		return true, ""
	}
	if len(devs) == 0 {
		return false, "the backend has no device"
	}
	ctx, err := devs[0].Open()
	if err != nil {
		return false, fmt.Sprintf("opening %s: %v", devs[0].Name(), err)
	}
	defer ctx.Close()
	x, ok := ctx.(verbs.ExtendedContext)
	if !ok {
		return false, devs[0].Name() + " has no XRC verbs"
	}
	d, err := x.OpenXRCD(verbs.XRCDInitAttr{OFlags: verbs.XRCDCreate})
	if err != nil {
		return false, fmt.Sprintf("%s has no XRC: %v", devs[0].Name(), err)
	}
	_ = d.Close()
	return true, ""
}

var capabilityByName = func() map[string]*Capability {
	m := map[string]*Capability{}
	for i := range Capabilities {
		m[Capabilities[i].Name] = &Capabilities[i]
	}
	return m
}()

// CapabilityNames lists the capability names, sorted.
func CapabilityNames() []string {
	out := make([]string, 0, len(Capabilities))
	for _, c := range Capabilities {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

func optional[T any](why string) func(verbs.Provider, []verbs.Device) (bool, string) {
	return func(p verbs.Provider, _ []verbs.Device) (bool, string) {
		if _, ok := p.(T); ok {
			return true, ""
		}
		return false, "the " + p.Name() + " backend " + why
	}
}

func devCap(ok func(verbs.DeviceAttr) bool, why string) func(verbs.Provider, []verbs.Device) (bool, string) {
	return func(p verbs.Provider, devs []verbs.Device) (bool, string) {
		if len(devs) == 0 {
			return false, "the backend has no device"
		}
		ctx, err := devs[0].Open()
		if err != nil {
			return false, fmt.Sprintf("opening %s: %v", devs[0].Name(), err)
		}
		defer ctx.Close()
		a, err := ctx.QueryDevice()
		if err != nil {
			return false, fmt.Sprintf("ibv_query_device(%s): %v", devs[0].Name(), err)
		}
		if ok(a) {
			return true, ""
		}
		return false, devs[0].Name() + " " + why
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Missing returns, for each capability the lesson needs and the backend
// lacks, why: "stepping: the ibverbs backend cannot be stepped: ...".
// An empty result means the lesson can run. It looks at the lesson's own
// needs (its front matter); the sections it can play only in part are
// SkippedSections'.
func Missing(l *Lesson, p verbs.Provider) []string {
	return (&capChecker{p: p}).missing(l.Needs)
}

// capChecker answers which capabilities one backend lacks, and why,
// looking at each once.
type capChecker struct {
	p verbs.Provider
	// lacking are treated as missing whatever the backend offers: lesson
	// check plays a lesson without its sections' needs too.
	lacking []string
	listed  bool
	devs    []verbs.Device
	devErr  error
	memo    map[string]string // capability → why it is missing; "" when it is not
}

// missing returns "name: why" for each of needs the backend lacks.
func (c *capChecker) missing(needs []string) []string {
	if len(needs) == 0 {
		return nil
	}
	if !c.listed {
		c.listed = true
		c.devs, c.devErr = c.p.Devices()
		c.memo = map[string]string{}
	}
	if c.devErr != nil {
		return []string{fmt.Sprintf("listing devices: %v", c.devErr)}
	}
	var out []string
	for _, n := range needs {
		why, done := c.memo[n]
		if !done {
			why = c.why(n)
			c.memo[n] = why
		}
		if why != "" {
			out = append(out, n+": "+why)
		}
	}
	return out
}

func (c *capChecker) why(name string) string {
	if contains(c.lacking, name) {
		return "lesson check plays the lesson without it too"
	}
	cp := capabilityByName[name]
	if cp == nil {
		return "unknown capability"
	}
	if ok, why := cp.has(c.p, c.devs); !ok {
		return why
	}
	return ""
}

// SkippedSection is a section of a lesson that a backend cannot play:
// the needs: line under its heading names something the backend lacks.
// Its steps are skipped, and the lesson goes on after them.
type SkippedSection struct {
	Section     string // its heading
	First, Last int    // its steps: indexes into Lesson.Steps, inclusive
	// Reasons says what it needs that the backend lacks, and why:
	// "two-devices: the backend has 1 device".
	Reasons []string
}

// Steps is "step 25" or "steps 25 to 27", numbered from 1.
func (s *SkippedSection) Steps() string {
	if s.First == s.Last {
		return fmt.Sprintf("step %d", s.First+1)
	}
	return fmt.Sprintf("steps %d to %d", s.First+1, s.Last+1)
}

// StepCount is how many steps it has.
func (s *SkippedSection) StepCount() int { return s.Last - s.First + 1 }

// SkippedSections returns the sections of l that backend p cannot play,
// in order: each a run of steps whose section needs (Step.Needs) what p
// lacks. The lesson's own needs are Missing's.
func SkippedSections(l *Lesson, p verbs.Provider) []*SkippedSection {
	return skippedSections(l, &capChecker{p: p})
}

func skippedSections(l *Lesson, c *capChecker) []*SkippedSection {
	var out []*SkippedSection
	for i, s := range l.Steps {
		if len(s.Needs) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Last == i-1 && l.Steps[i-1].SectionLine == s.SectionLine {
			out[n-1].Last = i
			continue
		}
		if miss := c.missing(s.Needs); len(miss) > 0 {
			out = append(out, &SkippedSection{Section: s.Section, First: i, Last: i, Reasons: miss})
		}
	}
	return out
}

// stepSkips maps each step of l to the skipped section it is in, or nil.
func stepSkips(l *Lesson, secs []*SkippedSection) []*SkippedSection {
	out := make([]*SkippedSection, len(l.Steps))
	for _, s := range secs {
		for i := s.First; i <= s.Last; i++ {
			out[i] = s
		}
	}
	return out
}

// SectionNeed is a section of a lesson that needs more than the lesson
// does: the needs: line under its heading.
type SectionNeed struct {
	Section string
	Line    int // the needs: line
	Needs   []string
}

// SectionNeeds lists the sections of l that need more than the lesson
// does, in order.
func SectionNeeds(l *Lesson) []SectionNeed {
	var out []SectionNeed
	for _, s := range l.Steps {
		if len(s.Needs) > 0 && (len(out) == 0 || out[len(out)-1].Line != s.NeedsLine) {
			out = append(out, SectionNeed{s.Section, s.NeedsLine, s.Needs})
		}
	}
	return out
}

// SkipError is returned for a lesson the backend cannot run.
type SkipError struct {
	Lesson  *Lesson
	Reasons []string
}

func (e *SkipError) Error() string {
	s := "lesson " + e.Lesson.ID + " is skipped on this backend: it needs "
	for i, r := range e.Reasons {
		if i > 0 {
			s += "; "
		}
		s += r
	}
	return s
}

// switchOn gives env's backend the capabilities l (or a section of it)
// needs that the backend keeps switched off: XRC, which the simulator
// keeps off as kernel rxe has none. Every session that plays a lesson —
// the learner's, the judge's reference, a check's — goes through it.
func switchOn(env Env, l *Lesson) error {
	needs := l.Needs
	for _, s := range l.Steps {
		needs = append(needs, s.Needs...)
	}
	if !contains(needs, "xrc") {
		return nil
	}
	sw, ok := env.Provider().(verbs.XRCSwitch)
	if !ok || sw.XRC() {
		return nil
	}
	return sw.SetXRC(true)
}
