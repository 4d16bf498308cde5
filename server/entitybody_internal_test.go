package server

import (
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/internal/ticktime"

	"github.com/localtable/localtable/internal/odata"
)

// appendStored writes an entity handed over as stored exactly as
// appendEntity writes the Entity decoded from it, at every metadata level, in a page or alone (a Get's response),
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
			for _, standalone := range []bool{false, true} {
				o := &encodeOpts{level: level, base: "http://127.0.0.1/devstoreaccount1", account: "devstoreaccount1", table: "T1"}
				pk, rk := "p'é/", "r 1"
				e := localtable.Entity{PartitionKey: pk, RowKey: rk, Timestamp: localtable.TicksToTime(ticks), ETag: etagOfTicks(ticks), Properties: props}
				want := string(appendEntity(nil, &e, o, standalone))
				got := string(appendStored(nil, pk, rk, ticks, iter.Seq2[string, localtable.Value](seq), o, standalone))
				if got != want {
					t.Fatalf("ticks %d, level %v, standalone %v:\n got %s\nwant %s", ticks, level, standalone, got, want)
				}
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

// TestAppendEntityPath checks appendEntityPath's fast path for keys of
// unreserved characters against the escaping it skips, and its
// allocations.
func TestAppendEntityPath(t *testing.T) {
	slow := func(table, pk, rk string) string {
		esc := func(k string) string { return strings.ReplaceAll(url.PathEscape(odata.Quote(k)), "%27", "'") }
		return table + "(PartitionKey=" + esc(pk) + ",RowKey=" + esc(rk) + ")"
	}
	keys := []string{"", "p0", "r000123", "A-Z_a.z~09", "it's", "a b", "x/y", "ü", "a%27b", "#?&=+$,:;@", "''"}
	for _, pk := range keys {
		for _, rk := range keys {
			if got, want := entityPath("t1", pk, rk), slow("t1", pk, rk); got != want {
				t.Errorf("entityPath(%q, %q) = %q, want %q", pk, rk, got, want)
			}
		}
	}
	buf := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() { buf = appendEntityPath(buf[:0], "bench", "p0", "r000123") }); n != 0 {
		t.Errorf("appendEntityPath: %v allocations, want 0", n)
	}
}

// A storedWriter made once for a page writes each of its entities as
// appendEntity does, whatever their shapes, and once it has seen the
// first, without allocating.
func TestStoredWriterReused(t *testing.T) {
	props := localtable.Properties{
		"Name": localtable.StringValue("Jonathan"), "Age": localtable.Int32Value(42), "Visits": localtable.Int64Value(1234567890123),
		"Joined": localtable.DateTimeValue(time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)), "Payload": localtable.BinaryValue([]byte("0123")),
	}
	names := slices.Sorted(maps.Keys(props))
	seq := func(yield func(string, localtable.Value) bool) {
		for _, name := range names {
			if !yield(name, props[name]) {
				return
			}
		}
	}
	// Entities of other shapes after the first: a property fewer, a type
	// or an annotation changed at a position, names that need escaping,
	// more properties than the first.
	others := []localtable.Properties{
		props,
		{"Age": localtable.Int32Value(1), "Joined": localtable.DateTimeValue(time.Unix(0, 0).UTC())},
		{"Age": localtable.DoubleValue(math.NaN()), "Joined": localtable.Int64Value(7), "Name": localtable.DoubleValue(0.5)},
		{"A\"b": localtable.StringValue("x"), "Age": localtable.DoubleValue(1.5), "Z\u2028": localtable.BoolValue(false)},
		{"Age": localtable.Int32Value(2), "B": localtable.Int32Value(3), "C": localtable.Int32Value(4), "D": localtable.Int32Value(5),
			"Joined": localtable.DateTimeValue(time.Unix(0, 0).UTC()), "Name": localtable.StringValue("n"), "Payload": localtable.BinaryValue(nil), "Visits": localtable.Int64Value(1)},
		props,
	}
	// A page whose first entity has a finite Double where the next have
	// one that is not (annotated), and finite again.
	doubles := []localtable.Properties{
		{"Score": localtable.DoubleValue(0.5)}, {"Score": localtable.DoubleValue(math.NaN())},
		{"Score": localtable.DoubleValue(math.Inf(-1))}, {"Score": localtable.DoubleValue(1)}, {"Score": localtable.Int32Value(1)},
	}
	// Timestamps at the ends of the range and past them.
	tickss := []int64{0, 1, ticktime.Max, ticktime.Max + 1, -1}
	for _, level := range []metaLevel{metaNone, metaMinimal, metaFull} {
		for _, page := range [][]localtable.Properties{others, doubles} {
			o := &encodeOpts{level: level, base: "http://127.0.0.1/devstoreaccount1", account: "devstoreaccount1", table: "T1"}
			sw := newStoredWriter(o)
			var got, want []byte
			for i, p := range page {
				ticks := int64(638000000000000001 + i)
				if i < len(tickss) && len(page) == len(doubles) {
					ticks = tickss[i]
				}
				rk := "r" + strconv.Itoa(i)
				pn := slices.Sorted(maps.Keys(p))
				pseq := func(yield func(string, localtable.Value) bool) {
					for _, name := range pn {
						if !yield(name, p[name]) {
							return
						}
					}
				}
				got = sw.append(got, "p0", rk, ticks, pseq, false)
				e := localtable.Entity{PartitionKey: "p0", RowKey: rk, Timestamp: localtable.TicksToTime(ticks), ETag: etagOfTicks(ticks), Properties: p}
				want = appendEntity(want, &e, o, false)
			}
			if string(got) != string(want) {
				t.Fatalf("level %v:\n got %s\nwant %s", level, got, want)
			}
		}
	}
	o := &encodeOpts{level: metaMinimal, base: "http://127.0.0.1/devstoreaccount1", account: "devstoreaccount1", table: "T1"}
	sw := newStoredWriter(o)
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = sw.append(buf[:0], "p0", "r0", 638000000000000001, seq, false) }); n != 0 {
		t.Errorf("storedWriter.append: %v allocations per entity, want 0", n)
	}
}
