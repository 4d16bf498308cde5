//go:build race

package memory

// raceEnabled reports whether the race detector is on: sync.Pool then
// drops items at random, so allocation counts that a pool keeps down
// are not asserted. Such a test runs without -race in .ci/run, which
// names it: add a new one there.
const raceEnabled = true
