//go:build !race

package sim

// raceEnabled is set when the race detector is on.
const raceEnabled = false
