package server

import (
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
)

// appendStored writes an entity handed over as stored exactly as
// appendEntity writes the Entity decoded from it, at every metadata level,
// for Timestamps in and out of the data model's range.
func TestAppendStoredMatchesAppendEntity(t *testing.T) {
	props := localtable.Properties{
		"S": localtable.StringValue("héllo \"q\"\n"), "E": localtable.StringValue(""), "I32": localtable.Int32Value(math.MinInt32),
		"I64": localtable.Int64Value(math.MaxInt64), "D": localtable.DoubleValue(-0.5), "NaN": localtable.DoubleValue(math.NaN()),
		"Inf": localtable.DoubleValue(math.Inf(1)), "T": localtable.BoolValue(true),
		"DT":  localtable.DateTimeValue(time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC)),
		"G":   localtable.GUIDValue(localtable.MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Bin": localtable.BinaryValue([]byte{0, 1, 255}), "é": localtable.Int32Value(1), "_a": localtable.Int32Value(2),
	}
	seq := func(yield func(string, localtable.Value) bool) {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if !yield(name, props[name]) {
				return
			}
		}
	}
	for _, ticks := range []int64{0, 1, 638000000000000001, 3155378975999999999, 3155378976000000000, -1} {
		for _, level := range []metaLevel{metaNone, metaMinimal, metaFull} {
			o := &encodeOpts{level: level, base: "http://127.0.0.1/devstoreaccount1", account: "devstoreaccount1", table: "T1"}
			pk, rk := "p'é/", "r 1"
			e := localtable.Entity{PartitionKey: pk, RowKey: rk, Timestamp: localtable.TicksToTime(ticks), ETag: etagOfTicks(ticks), Properties: props}
			want := string(appendEntity(nil, &e, o, false))
			got := string(appendStored(nil, pk, rk, ticks, iter.Seq2[string, localtable.Value](seq), o))
			if got != want {
				t.Fatalf("ticks %d, level %v:\n got %s\nwant %s", ticks, level, got, want)
			}
		}
	}
}

// etagOfTicks is the ETag the core gives an entity written at ticks, by
// its definition (package localtable checks its own fast formatting
// against it).
func etagOfTicks(ticks int64) localtable.ETag {
	return localtable.ETag(`W/"datetime'` + strings.ReplaceAll(edmfmt.DateTime7(localtable.TicksToTime(ticks)), ":", "%3A") + `'"`)
}

// sortedNames sorts as the library sorts, below and above the length where
// it hands over, names sharing first bytes or not.
func TestSortedNames(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		p := localtable.Properties{}
		for len(p) < n {
			name := string(rune('A'+r.IntN(4))) + strconv.Itoa(r.IntN(100))
			if r.IntN(5) == 0 {
				name = "é" + name
			}
			p[name] = localtable.Int32Value(1)
		}
		if got, want := sortedNames(nil, p), slices.Sorted(maps.Keys(p)); !slices.Equal(got, want) {
			t.Fatalf("sortedNames = %q, want %q", got, want)
		}
	}
}
