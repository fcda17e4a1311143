//go:build race

package sim

// raceEnabled is set when the race detector is on: the full-size
// reliability runs are then left to the Makefile's non-race step.
const raceEnabled = true
