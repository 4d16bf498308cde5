package tests

import "testing"

// leastAllocs is testing.AllocsPerRun(runs, f) taken three times, the
// least of them: an account's background work (the expiry sweeper's
// pass every second, a watcher's wake-up) allocates in goroutines of its
// own, which AllocsPerRun counts too, and can only add to a measure, so
// the least is f's own.
func leastAllocs(runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range 2 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}
