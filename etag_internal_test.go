package localtable

import (
	"math/rand/v2"
	"testing"

	"github.com/localtable/localtable/internal/ticktime"
)

// etagOf must equal etagFor, its time.Format-based definition.
func TestETagOfMatchesETagFor(t *testing.T) {
	cases := []int64{0, 1, ticksPerSecond - 1, minTicks, maxTicks, maxTicks - 1, -1, maxTicks + 1,
		TimeToTicks(MaxDateTime), 638000000000000000, 638000000000000009}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		cases = append(cases, rng.Int64N(maxTicks+1))
	}
	for _, ticks := range cases {
		if got, want := etagOf(ticks), etagFor(ticks); got != want {
			t.Fatalf("etagOf(%d) = %s, etagFor = %s", ticks, got, want)
		}
	}
}

// ticktime.Max is the data model's latest time.
func TestTicktimeMax(t *testing.T) {
	if maxTicks != ticktime.Max {
		t.Errorf("maxTicks is %d, ticktime.Max %d", maxTicks, ticktime.Max)
	}
}
