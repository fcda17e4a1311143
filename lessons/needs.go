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
// An empty result means the lesson can run.
func Missing(l *Lesson, p verbs.Provider) []string {
	if len(l.Needs) == 0 {
		return nil
	}
	devs, err := p.Devices()
	if err != nil {
		return []string{fmt.Sprintf("listing devices: %v", err)}
	}
	var out []string
	for _, n := range l.Needs {
		c := capabilityByName[n]
		if c == nil {
			out = append(out, n+": unknown capability")
			continue
		}
		if ok, why := c.has(p, devs); !ok {
			out = append(out, n+": "+why)
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
