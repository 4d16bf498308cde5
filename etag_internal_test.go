package localtable

import (
	"math/rand/v2"
	"net/url"
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

// parseETag reads back what etagOf writes, and its percent-decoding
// agrees with net/url's (which the package no longer imports) on
// well-formed and malformed escapes.
func TestParseETag(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10_000 {
		ticks := rng.Int64N(maxTicks + 1)
		if got, ok := parseETag(etagOf(ticks)); !ok || got != ticks {
			t.Fatalf("parseETag(%s) = %d %v, want %d", etagOf(ticks), got, ok, ticks)
		}
	}
	for _, s := range []string{"", "2021-09-08T18%3A58%3A54.7899388Z", "2021-09-08T18%3a58%3a54Z", "a%", "a%3", "%zz", "%3G", "%41%42", "100%25", "plain"} {
		want, err := url.PathUnescape(s)
		got, ok := unescapePercent(s)
		if ok != (err == nil) || (ok && got != want) {
			t.Errorf("unescapePercent(%q) = %q %v, net/url %q %v", s, got, ok, want, err)
		}
	}
	if _, ok := parseETag(`W/"datetime'2021-09-08T18%3G58%3A54Z'"`); ok {
		t.Error("an ETag with a malformed escape parsed")
	}
}

// ticktime.Max is the data model's latest time.
func TestTicktimeMax(t *testing.T) {
	if maxTicks != ticktime.Max {
		t.Errorf("maxTicks is %d, ticktime.Max %d", maxTicks, ticktime.Max)
	}
}
