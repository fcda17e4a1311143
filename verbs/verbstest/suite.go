package verbstest

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

// Cap is a set of capabilities a backend may have beyond plain verbs. A
// scenario lists the ones it needs; Options.Has says which the backend
// offers. A scenario whose needs are not met is reported as not run, by name,
// in the summary and in Report.NotRun — never silently skipped.
type Cap uint32

// Capabilities.
const (
	// CapExplain: errors say why in words. The suite then also checks that
	// an error names the attribute that was missing or extra, or the legal
	// next states. On a real backend only the errno is checked.
	CapExplain Cap = 1 << iota
	// CapTwoDevices: the provider lists at least two devices that can reach
	// each other (the simulator; not one rxe0).
	CapTwoDevices
	// CapDataPath: packets move and completions are generated (send,
	// receive, RDMA, error completions, flush).
	CapDataPath
	// CapStepper: the provider implements verbs.Stepper.
	CapStepper
	// CapFaults: the provider implements verbs.FaultInjector.
	CapFaults
	// CapInspector: the provider implements verbs.Inspector.
	CapInspector
	// CapXRC: XRC domains, XRC SRQs and XRC QPs work (a NIC that has
	// them, or the simulator with XRC on; never kernel rxe).
	CapXRC
)

var capNames = []string{"explain", "two-devices", "data-path", "stepper", "faults", "inspector", "xrc"}

func (c Cap) String() string {
	if c == 0 {
		return "none"
	}
	var parts []string
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "+")
}

// Scenario is one named conformance check.
type Scenario struct {
	// Name is "area/what", e.g. "mr/remote-write-needs-local-write". It is
	// the subtest name and the key of Options.KnownFailures.
	Name string
	// Source says where the expected behaviour comes from: a kernel or
	// rdma-core function, or a man page. Never the simulator.
	Source string
	// Needs lists the capabilities the scenario cannot run without.
	Needs Cap
	// Run performs the scenario. It reports through e (Errorf, Fatalf); a
	// panic in the backend is caught and reported as a failure.
	Run func(e *Env)
}

var (
	regMu    sync.Mutex
	registry = map[string]Scenario{}
)

// Register adds a scenario to the suite. Scenario files call it from init.
// It panics on an empty or duplicate name, an empty source, or a nil Run:
// those are bugs in the suite.
func Register(s Scenario) {
	regMu.Lock()
	defer regMu.Unlock()
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, " \t\n"):
		panic(fmt.Sprintf("verbstest: bad scenario name %q", s.Name))
	case s.Source == "":
		panic("verbstest: scenario " + s.Name + " cites no source")
	case s.Run == nil:
		panic("verbstest: scenario " + s.Name + " has no Run")
	}
	if _, dup := registry[s.Name]; dup {
		panic("verbstest: duplicate scenario " + s.Name)
	}
	registry[s.Name] = s
}

// registerAll registers each scenario of list.
func registerAll(list []Scenario) {
	for _, s := range list {
		Register(s)
	}
}

// Scenarios returns every registered scenario, sorted by name.
func Scenarios() []Scenario {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Scenario, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Options says how to run the suite against one backend.
type Options struct {
	// Device names the device to test ("rxe0", "sim0"); empty means the
	// first one listed.
	Device string
	// Port is the port to use; 0 means 1.
	Port uint8
	// GIDIndex is the index of the device's IPv4-mapped RoCE v2 GID that
	// the scenarios address (loopback to itself); 0 means 1, which is where
	// rxe puts it on a netdev with one IPv4 address (index 0 is the
	// link-local default GID).
	GIDIndex int
	// ActiveMTU, when set, is the active MTU the port must report: 1024 for
	// rxe on a 1500-byte netdev. Zero checks only that it is valid and not
	// above the port's max MTU.
	ActiveMTU verbs.MTU
	// CapNetRaw says the process has CAP_NET_RAW (root in the lab guest),
	// which lets it set privileged Q_Keys; a learner's process, and so the
	// simulator's default, has not.
	CapNetRaw bool
	// Has lists the capabilities the backend offers. Declared capabilities
	// are checked (scenario "suite/declared-capabilities").
	Has Cap
	// KnownFailures maps scenario names to why they are expected to fail on
	// this backend (a backend bug, with the source it contradicts). A listed
	// scenario that fails is logged, not reported; one that passes fails the
	// suite, so that the list cannot rot. Unknown names fail the suite too.
	KnownFailures map[string]string
	// MinRun fails the suite when fewer scenarios ran (not counting those
	// not run for lack of a capability).
	MinRun int
	// Match, when set, runs only the scenarios whose names match this
	// regular expression (MinRun still applies).
	Match string
	// Wait bounds how long a scenario waits for asynchronous effects on
	// the backend (an SQ drain, an async event, a completion); 0 means 2s.
	Wait time.Duration
}

func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = 1
	}
	if o.GIDIndex == 0 {
		o.GIDIndex = 1
	}
	if o.Wait == 0 {
		o.Wait = 2 * time.Second
	}
	return o
}

// NotRun is a scenario the backend could not run.
type NotRun struct {
	Name    string
	Missing Cap
}

// Report is what a Run did.
type Report struct {
	Ran         int      // scenarios run (passed + failed)
	Failed      int      // unexpected failures, and known failures that passed
	KnownFailed int      // listed in KnownFailures and failed as expected
	Passed      []string // names of the scenarios that passed
	NotRun      []NotRun // scenarios whose needs the backend lacks
}

// Run runs every registered scenario against the backend that open
// returns, each as a subtest of t named after the scenario. open is called
// once per scenario, so that scenarios do not see each other's objects; the
// suite closes each provider it opened.
//
// Run logs a summary line, "conformance: N scenarios ran, M failed ...",
// and returns the Report so that a caller can assert the counts.
func Run(t *testing.T, open func(t *testing.T) verbs.Provider, opts Options) Report {
	t.Helper()
	return runScenarios(t, Scenarios(), open, opts)
}

func runScenarios(t *testing.T, list []Scenario, open func(t *testing.T) verbs.Provider, opts Options) Report {
	t.Helper()
	opts = opts.withDefaults()
	var match *regexp.Regexp
	if opts.Match != "" {
		var err error
		if match, err = regexp.Compile(opts.Match); err != nil {
			t.Fatalf("verbstest: bad Options.Match: %v", err)
		}
	}
	names := map[string]bool{}
	for _, s := range list {
		names[s.Name] = true
	}
	for name := range opts.KnownFailures {
		if !names[name] {
			t.Errorf("verbstest: Options.KnownFailures lists %q, which is not a scenario", name)
		}
	}

	var rep Report
	for _, sc := range list {
		if match != nil && !match.MatchString(sc.Name) {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			if missing := sc.Needs &^ opts.Has; missing != 0 {
				rep.NotRun = append(rep.NotRun, NotRun{sc.Name, missing})
				t.Skipf("NOT RUN: needs %s, which this backend does not declare (counted in the summary)", missing)
			}
			rep.Ran++
			failures := runOne(t, sc, open, opts, true)
			reason, known := opts.KnownFailures[sc.Name]
			switch classify(len(failures) > 0, known) {
			case outcomeKnownFailure:
				rep.KnownFailed++
				t.Logf("KNOWN FAILURE (%s); source: %s\n%s", reason, sc.Source, strings.Join(failures, "\n"))
			case outcomeFailed:
				rep.Failed++
				t.Logf("source: %s", sc.Source)
				for _, f := range failures {
					t.Error(f)
				}
			case outcomeUnexpectedPass:
				rep.Failed++
				t.Errorf("listed in KnownFailures (%s) but passed: remove it from the list", reason)
			default:
				rep.Passed = append(rep.Passed, sc.Name)
			}
		})
	}

	var nr []string
	for _, n := range rep.NotRun {
		nr = append(nr, fmt.Sprintf("%s (needs %s)", n.Name, n.Missing))
	}
	line := fmt.Sprintf("conformance: %d scenarios ran, %d failed (%d known failures expected); %d not run",
		rep.Ran, rep.Failed+rep.KnownFailed, rep.KnownFailed, len(rep.NotRun))
	if len(nr) > 0 {
		line += ": " + strings.Join(nr, ", ")
	}
	t.Log(line)
	if rep.Ran < opts.MinRun {
		t.Errorf("conformance: only %d scenarios ran; want at least %d", rep.Ran, opts.MinRun)
	}
	return rep
}

type outcome int

const (
	outcomePassed outcome = iota
	outcomeFailed
	outcomeKnownFailure
	outcomeUnexpectedPass
)

// classify decides what a scenario's result means given whether it is a
// known failure.
func classify(failed, known bool) outcome {
	switch {
	case failed && known:
		return outcomeKnownFailure
	case failed:
		return outcomeFailed
	case known:
		return outcomeUnexpectedPass
	}
	return outcomePassed
}

// fatal is the panic value Env.Fatalf uses to end a scenario.
type fatal struct{}

// runOne runs a scenario in a fresh Env and returns its failures. Without
// setup (the suite's own tests) the Env has no provider or device.
func runOne(t *testing.T, sc Scenario, open func(t *testing.T) verbs.Provider, opts Options, setup bool) (failures []string) {
	e := &Env{t: t, Opts: opts, Scenario: sc}
	defer func() {
		e.runCleanups()
		failures = e.failures
	}()
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatal); ok {
					return
				}
				e.failures = append(e.failures, fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
			}
		}()
		if setup {
			e.setup(open)
		}
		sc.Run(e)
	}()
	return
}
