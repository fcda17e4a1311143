//go:build !race

package lessons_test

const raceEnabled = false
