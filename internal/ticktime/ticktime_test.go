package ticktime

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// epoch is 0001-01-01T00:00:00Z, tick zero.
var epoch = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

func toTime(ticks int64) time.Time {
	sec := ticks / PerSecond
	return epoch.AddDate(0, 0, int(sec/86400)).
		Add(time.Duration(sec%86400)*time.Second + time.Duration(ticks%PerSecond)*100)
}

// Append agrees with time.Format on the first and last ticks, around leap
// days and century years, and on random ticks over the whole range, with
// and without fixed digits.
func TestAppendMatchesFormat(t *testing.T) {
	cases := []int64{0, 1, PerSecond - 1, PerSecond, 86400*PerSecond - 1, Max, Max - 1, Max - PerSecond + 1}
	for _, d := range []time.Time{
		time.Date(2000, 2, 29, 23, 59, 59, 999999900, time.UTC), time.Date(2000, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1900, 2, 28, 12, 0, 0, 100, time.UTC), time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(1600, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		cases = append(cases, int64(d.Sub(time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC))/100)+621355968000000000)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		cases = append(cases, r.Int64N(Max+1))
		cases = append(cases, r.Int64N(Max/PerSecond+1)*PerSecond+int64(r.IntN(10))*1_000_000) // short fractions
	}
	for _, ticks := range cases {
		tm := toTime(ticks)
		if got, want := string(Append(nil, ticks, true, ":")), tm.Format("2006-01-02T15:04:05.0000000Z"); got != want {
			t.Fatalf("Append(%d, fixed) = %s, want %s", ticks, got, want)
		}
		if got, want := string(Append(nil, ticks, false, ":")), tm.Format("2006-01-02T15:04:05.9999999Z"); got != want {
			t.Fatalf("Append(%d) = %s, want %s", ticks, got, want)
		}
		if got, want := string(Append(nil, ticks, true, "%3A")), strings.ReplaceAll(tm.Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A"); got != want {
			t.Fatalf("Append(%d, %%3A) = %s, want %s", ticks, got, want)
		}
	}
}

func TestAppendAllocations(t *testing.T) {
	b := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { b = Append(b[:0], Max, false, ":") }); n != 0 {
		t.Errorf("Append allocates %.0f times into a buffer with room", n)
	}
}
