//go:build linux && cgo && ibverbs

package ibverbs

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/verbstest"
)

// The real backend on kernel soft-RoCE. These tests run where VSH_RXE=1:
// make test-rxe builds this package's test binary on the host and runs it
// in the lab guest (rxe-lab run), next to rxe0. There a missing device is a
// failure, not a skip.

// rxeDevice is the device the tests use: $VSH_RXE_DEVICE, else the lab's
// $VSH_LAB_DEVICE, else rxe0.
func rxeDevice() string {
	for _, v := range []string{"VSH_RXE_DEVICE", "VSH_LAB_DEVICE"} {
		if d := os.Getenv(v); d != "" {
			return d
		}
	}
	return "rxe0"
}

// needRXE skips unless VSH_RXE is set, and then fails unless the device
// is there.
func needRXE(t *testing.T) verbs.Provider {
	t.Helper()
	if os.Getenv("VSH_RXE") == "" {
		t.Skip("set VSH_RXE=1 to run on kernel soft-RoCE (make test-rxe does, inside the lab guest)")
	}
	p, err := New()
	if err != nil {
		t.Fatalf("VSH_RXE is set but %v", err)
	}
	devs, err := p.Devices()
	if err != nil {
		t.Fatalf("Devices() = %v", err)
	}
	for _, d := range devs {
		if d.Name() == rxeDevice() {
			return p
		}
	}
	p.Close()
	t.Fatalf("VSH_RXE is set but device %s is not listed (%d devices)", rxeDevice(), len(devs))
	return nil
}

// rxeCaps is what the real backend offers beyond plain verbs on one rxe
// device: the data path, and errors that explain themselves. It has no
// second device, no stepper, no fault injection and no inspector: those
// are the simulator's, and the scenarios that need them cannot run here.
const rxeCaps = verbstest.CapDataPath | verbstest.CapExplain

// rxeCannot is what a single rxe device cannot offer at all (XRC: rxe's
// provider registers no open_xrcd).
const rxeCannot = verbstest.CapTwoDevices | verbstest.CapStepper | verbstest.CapFaults | verbstest.CapInspector | verbstest.CapXRC

// TestConformanceRXE runs the whole conformance suite (verbs/verbstest)
// against libibverbs on rxe0. Every scenario must pass, or be listed in
// rxeKnownDifferences (and then fail, which the suite asserts); a scenario
// not run for another reason than lacking what one rxe device cannot have
// fails the test. The rules behind the backend's explanations must have
// predicted every outcome: a misprediction fails the test too.
//
// VSH_RXE_MATCH, a regular expression, runs only the scenarios whose names
// match it (VSH_RXE_MATCH='^xrc/'), with the same checks on those.
func TestConformanceRXE(t *testing.T) {
	p := needRXE(t)
	p.Close()
	before := Mispredictions()
	all := verbstest.Scenarios()
	match := os.Getenv("VSH_RXE_MATCH")
	if match != "" {
		re, err := regexp.Compile(match)
		if err != nil {
			t.Fatalf("VSH_RXE_MATCH: %v", err)
		}
		var some []verbstest.Scenario
		for _, s := range all {
			if re.MatchString(s.Name) {
				some = append(some, s)
			}
		}
		all = some
	}
	known := map[string]string{}
	names := map[string]bool{}
	for _, s := range all {
		names[s.Name] = true
	}
	for name, why := range rxeKnownDifferences {
		if names[name] {
			known[name] = why
		} else {
			// The suite is edited beside this list; a scenario renamed or
			// not yet merged is not a difference of rxe.
			t.Logf("known difference %q names no scenario of this suite", name)
		}
	}
	rep := verbstest.Run(t, func(t *testing.T) verbs.Provider {
		p, err := New()
		if err != nil {
			t.Fatalf("ibverbs.New: %v", err)
		}
		return p
	}, verbstest.Options{
		Device:        rxeDevice(),
		Has:           rxeCaps,
		ActiveMTU:     verbs.MTU1024, // the lab's 1500-byte netdev
		CapNetRaw:     procCaps.netRaw,
		KnownFailures: known,
		Match:         match,
		MinRun:        len(all) - countNeeding(all, rxeCannot),
	})
	for _, n := range rep.NotRun {
		if n.Missing&^rxeCannot != 0 {
			t.Errorf("scenario %s did not run for lack of %v, which the real backend should offer", n.Name, n.Missing)
		}
	}
	if want := len(all) - len(rep.NotRun); rep.Ran != want {
		t.Errorf("%d scenarios ran; want %d (the suite's %d minus %d that need what one rxe device cannot have)", rep.Ran, want, len(all), len(rep.NotRun))
	}
	var notRun []string
	for _, n := range rep.NotRun {
		notRun = append(notRun, n.Name)
	}
	sort.Strings(notRun)
	summary := fmt.Sprintf("conformance on %s: %d of %d scenarios ran, %d passed, %d known differences, %d failed; not run (need %v): %s",
		rxeDevice(), rep.Ran, len(all), len(rep.Passed), rep.KnownFailed, rep.Failed, rxeCannot, strings.Join(notRun, ", "))
	t.Log(summary)
	fmt.Println("RXE " + summary)
	if got := Mispredictions() - before; got != 0 {
		for _, m := range MispredictionLog() {
			t.Errorf("misprediction: %v", m)
		}
		t.Errorf("%d misprediction(s): the backend's rules (verbs.CheckTransition, verbs/ibverbs/predict.go) disagree with rxe", got)
	}
}

func countNeeding(list []verbstest.Scenario, caps verbstest.Cap) int {
	n := 0
	for _, s := range list {
		if s.Needs&caps != 0 {
			n++
		}
	}
	return n
}
