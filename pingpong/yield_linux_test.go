package pingpong

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// threadSleeps maps each of the process's threads to its
// voluntary_ctxt_switches: how often it has gone to sleep.
func threadSleeps() map[string]int {
	dirs, _ := filepath.Glob("/proc/self/task/*")
	m := map[string]int{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "status"))
		if err != nil {
			continue // the thread has gone
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				m[filepath.Base(d)], _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
	}
	return m
}

// yieldProbe is the child's half of TestGoyieldWakesNoThread: a loop that
// spins 200 µs between yields, as runBusy does between its own, three
// times; it prints the fewest threads that went to sleep during one, and
// whether the loop ever changed threads.
func yieldProbe(yield func()) string {
	runtime.GOMAXPROCS(4)
	var wg sync.WaitGroup
	for range 4 { // park a few threads, as a program's startup leaves them
		wg.Add(1)
		go func() { defer wg.Done(); time.Sleep(time.Millisecond) }()
	}
	wg.Wait()
	time.Sleep(30 * time.Millisecond)
	// Spin a while first: the thread that woke this goroutine from its
	// sleep may still be on its way back to sleep.
	for t := time.Now(); time.Since(t) < 5*time.Millisecond; {
	}
	least, moved := -1, false
	for range 3 { // the fewest of three rounds: the runtime has its own timers
		tid := syscall.Gettid()
		before := threadSleeps()
		for range 200 {
			for t := time.Now(); time.Since(t) < 200*time.Microsecond; {
			}
			yield()
		}
		slept := 0
		for th, n := range threadSleeps() {
			if n > before[th] {
				slept++
			}
		}
		if least < 0 || slept < least {
			least = slept
		}
		moved = moved || syscall.Gettid() != tid
	}
	return fmt.Sprintf("slept=%d moved=%v", least, moved)
}

// TestGoyieldWakesNoThread checks why runBusy yields with goyield: with idle
// processors and parked threads, runtime.Gosched wakes a thread (which looks
// for work, finds none and sleeps again, taking a CPU from a spinning peer
// on the way), while goyield lets the caller's own thread go on and wakes
// nobody. Each is measured in a fresh process; the runtime's monitor thread
// sleeps in both, so one sleeping thread is allowed.
func TestGoyieldWakesNoThread(t *testing.T) {
	if p := os.Getenv("VSH_YIELD_PROBE"); p != "" {
		yield := goyield
		if p == "gosched" {
			yield = runtime.Gosched
		}
		fmt.Println(yieldProbe(yield))
		return
	}
	probe := func(kind string) (slept int, moved bool) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGoyieldWakesNoThread$", "-test.count=1")
		cmd.Env = append(os.Environ(), "VSH_YIELD_PROBE="+kind)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s probe: %v\n%s", kind, err, out)
		}
		line := strings.SplitN(string(out), "\n", 2)[0]
		if _, err := fmt.Sscanf(line, "slept=%d moved=%t", &slept, &moved); err != nil {
			t.Fatalf("%s probe printed %q: %v", kind, line, err)
		}
		return slept, moved
	}
	gs, gm := probe("goyield")
	ss, _ := probe("gosched")
	t.Logf("threads that slept during 200 yields: goyield %d, runtime.Gosched %d", gs, ss)
	if gm {
		t.Errorf("goyield moved the loop to another thread")
	}
	if gs > 1 {
		t.Errorf("%d threads slept during the goyield loop; want at most the runtime's monitor", gs)
	}
	if ss <= gs {
		t.Errorf("the Gosched loop woke %d threads, the goyield loop %d: the probe does not tell them apart", ss, gs)
	}
}
