package filter_test

import (
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

var fuzzSeeds = []string{
	"PartitionKey eq 'a' and RowKey ge 'b' and RowKey lt 'c'",
	"(PartitionKey eq 'a' or PartitionKey eq 'b') and not (Age gt 30)",
	"5 lt Age or Name eq 'it''s'",
	"Price le 200.5 and Price gt 3.5e-2 or Count eq 12345678901L",
	"IsActive and not Deleted",
	"T ge datetime'2008-07-10T00:00:00.1234567Z' and T lt datetime'2008-07-10T02:00:00+02:00'",
	"G ne guid'0f8fad5b-d9cb-469f-a165-70867728950e' and B eq X'0A0b' or C eq binary''",
	"D eq NaN or D eq -INF or D eq 1.5d or D eq -0.0",
	"PartitionKey gt '\U00010000' and PartitionKey lt '\uE000'",
	"not not (((A eq 1)))",
	"PartitionKey eq 1 or RowKey le ''",
	"true",
	"not false",
	"(true) and PartitionKey eq 'a'",
	"false or RowKey eq 'r' and not (not true)",
	"(true and RowKey eq '1') and ((false or PartitionKey eq 'p1') or PartitionKey eq 'p2') or PartitionKey eq 'p3'",
	"true eq IsActive or false ne B",
	"true eq false",
	"not 5 or true",
	"A eq 2147483648",
	"A eq",
	"",
}

// FuzzParse: Parse never panics, and whatever parses prints to a string
// that parses to the identical tree and prints identically.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := filter.ParseWithOptions(s, filter.Options{})
		if err != nil {
			if _, ok := err.(*filter.SyntaxError); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		out := p.String()
		q, err := filter.ParseWithOptions(out, filter.Options{})
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q: %v", s, out, err)
		}
		if !filter.Equal(p.Expr(), q.Expr()) {
			t.Fatalf("Parse(%q) = %s, reparsed to a different tree %s", s, out, q)
		}
		if q.String() != out {
			t.Fatalf("String not stable: %q then %q", out, q.String())
		}
		_ = p.Explain()
	})
}

// fuzzEntities is FuzzPlan's fixed data set: keys at the edges of the
// order (empty, NUL-extended, surrogate pairs around U+E000) and typed
// properties.
var fuzzEntities = func() []*localtable.Entity {
	keys := []string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "b", "m", "z", "\uD7FF", "\U00010000", "\uE000", "\uFFFF", "'"}
	vals := []localtable.Value{
		localtable.Int32Value(1), localtable.Int64Value(1), localtable.DoubleValue(1.5),
		localtable.StringValue("a"), localtable.BoolValue(true),
	}
	var out []*localtable.Entity
	for i, pk := range keys {
		for j, rk := range keys {
			e := &localtable.Entity{PartitionKey: pk, RowKey: rk}
			e.Set("A", vals[(i+j)%len(vals)])
			out = append(out, e)
		}
	}
	return out
}()

// FuzzPlan: the key ranges of any filter are sorted, disjoint and
// non-empty, contain every entity of the data set that the filter
// matches, and are those of the reference planner (for filters short
// enough for its cubic time).
func FuzzPlan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := filter.ParseWithOptions(s, filter.Options{})
		if err != nil {
			return
		}
		rs, ok := p.KeyRanges()
		if len(s) <= 1000 {
			if want, wok := filter.RefKeyRanges(p); ok != wok || !sameRanges(rs, want) {
				t.Fatalf("%s:\n got %v ok=%v\nwant %v ok=%v", p, rs, ok, want, wok)
			}
		}
		if !ok {
			if rs != nil {
				t.Fatalf("%s: ranges with ok=false", p)
			}
			return
		}
		checkRanges(t, p, rs)
		for _, e := range fuzzEntities {
			if p.Match(e) && !containsAny(rs, e) {
				t.Fatalf("%s matches (%q, %q), which no range contains:\n%s", p, e.PartitionKey, e.RowKey, p.Explain())
			}
		}
	})
}
