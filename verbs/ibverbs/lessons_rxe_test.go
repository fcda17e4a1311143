//go:build linux && cgo && ibverbs

package ibverbs

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLessonsRXE plays every lesson the built vsh embeds ($VSH_RXE_VSH,
// built with -tags ibverbs) with --backend ibverbs on rxe0, each in its
// own vsh lesson play: a lesson passes when every expectation of every
// step holds (its transcript is not compared: numbers, keys and timing
// differ from the simulator's). A lesson that needs what the backend lacks
// (stepping, faults, two devices, ...) is skipped with its reason, and
// vsh lesson list must mark the same lessons skipped. A lesson with a
// section that alone needs it (break-it's path MTU section needs two
// devices) plays without that section's steps, and vsh lesson list must
// count the same steps skipped. The lessons come from vsh lesson list, so
// new ones are covered without touching this test.
func TestLessonsRXE(t *testing.T) {
	bin := vshOnRXE(t)

	ids, listSkips, listPartial := listLessons(t, bin)
	if len(ids) == 0 {
		t.Fatal("vsh lesson list listed no lessons")
	}
	played, passed := 0, 0
	var skipped, partial []string
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			out, err := runVsh(t, bin, 3*time.Minute, "--backend", "ibverbs", "--plain", "lesson", "play", id)
			if m := regexp.MustCompile(`(?m)^skipped ` + regexp.QuoteMeta(id) + `: it needs (.*)$`).FindStringSubmatch(out); m != nil {
				if err != nil {
					t.Errorf("vsh lesson play %s skipped it but exited with %v:\n%s", id, err, out)
				}
				if !listSkips[id] {
					t.Errorf("vsh lesson play %s skipped it (%s) but vsh lesson list did not mark it skipped", id, m[1])
				}
				skipped = append(skipped, id+": "+m[1])
				t.Skipf("skipped: it needs %s", m[1])
			}
			played++
			if listSkips[id] {
				t.Errorf("vsh lesson list marked %s skipped, but vsh lesson play played it", id)
			}
			if err != nil {
				t.Fatalf("vsh lesson play %s: %v\n%s", id, err, out)
			}
			end := regexp.MustCompile(`(?m)^Lesson ` + regexp.QuoteMeta(id) + ` played to its end: \d+ steps?(?: \((\d+) skipped on this backend\))?, every expectation met\.$`).FindStringSubmatch(out)
			if end == nil {
				t.Fatalf("vsh lesson play %s exited 0 without saying every expectation was met:\n%s", id, out)
			}
			passed++
			n, _ := strconv.Atoi(end[1])
			if n != listPartial[id] {
				t.Errorf("vsh lesson play %s skipped %d steps; vsh lesson list said %d", id, n, listPartial[id])
			}
			if n > 0 {
				partial = append(partial, fmt.Sprintf("%s: %d of its steps skipped", id, n))
			}
		})
	}
	summary := fmt.Sprintf("lessons on %s: %d played, %d passed", rxeDevice(), played, passed)
	if len(partial) > 0 {
		summary += fmt.Sprintf(" (%d in part: %s)", len(partial), strings.Join(partial, ", "))
	}
	summary += fmt.Sprintf(", %d skipped", len(skipped))
	if len(skipped) > 0 {
		summary += " (" + strings.Join(skipped, ", ") + ")"
	}
	t.Log(summary)
	fmt.Println("RXE " + summary)
}

var (
	lessonCountRe   = regexp.MustCompile(`(?m)^(\d+) lessons on .*; (\d+) skipped(?:, (\d+) played in part)?\.`)
	lessonPartialRe = regexp.MustCompile(`\((\d+) steps? skipped here\)$`)
)

// listLessons runs vsh --backend ibverbs lesson list and returns the lesson
// ids in its order, which it marks skipped on this backend, and how many
// steps it says are skipped of those it plays in part.
func listLessons(t *testing.T, bin string) ([]string, map[string]bool, map[string]int) {
	t.Helper()
	out, err := runVsh(t, bin, time.Minute, "--backend", "ibverbs", "--plain", "lesson", "list")
	if err != nil {
		t.Fatalf("vsh lesson list: %v\n%s", err, out)
	}
	t.Logf("vsh --backend ibverbs lesson list:\n%s", out)
	m := lessonCountRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("vsh lesson list printed no \"N lessons on ...; M skipped.\" line:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	nskip, _ := strconv.Atoi(m[2])
	npart, _ := strconv.Atoi(m[3])
	lines := strings.Split(out, "\n")
	if len(lines) < n+1 || !strings.HasPrefix(lines[0], "lesson ") {
		t.Fatalf("vsh lesson list: want a header and %d rows:\n%s", n, out)
	}
	var ids []string
	skips := map[string]bool{}
	partial := map[string]int{}
	for _, l := range lines[1 : n+1] {
		f := strings.Fields(l)
		if len(f) == 0 {
			t.Fatalf("vsh lesson list: an empty row among the %d:\n%s", n, out)
		}
		ids = append(ids, f[0])
		if strings.HasSuffix(l, "(skipped here)") {
			skips[f[0]] = true
		}
		if pm := lessonPartialRe.FindStringSubmatch(l); pm != nil {
			partial[f[0]], _ = strconv.Atoi(pm[1])
		}
	}
	if len(skips) != nskip {
		t.Errorf("vsh lesson list marks %d lessons skipped but counts %d:\n%s", len(skips), nskip, out)
	}
	if len(partial) != npart {
		t.Errorf("vsh lesson list marks %d lessons played in part but counts %d:\n%s", len(partial), npart, out)
	}
	return ids, skips, partial
}

func runVsh(t *testing.T, bin string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%v (gave up after %s)", err, timeout)
	}
	return out.String(), err
}
