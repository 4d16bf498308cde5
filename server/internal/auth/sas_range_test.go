package auth

import (
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// TestRestrictMatchInRanges: a SAS-restricted filter matched within its
// key ranges agrees with Match, with and without an inner filter.
func TestRestrictMatchInRanges(t *testing.T) {
	keys := []string{"", "a", "b", "b\x00", "bc", "c", "d", "z"}
	ranges := []localtable.KeyRange{
		{Start: localtable.PartitionStart("b"), End: localtable.PartitionEnd("c")},
		{Start: localtable.KeyAt("b", "b"), End: localtable.KeyAt("c", "bc")},
		{Start: localtable.KeyAt("a", "c")},
	}
	filters := []string{
		"PartitionKey eq 'b' and Age gt 3",
		"PartitionKey ge 'b' and RowKey lt 'c'",
		"PartitionKey eq 'c' and RowKey ge 'b' and RowKey le 'bc'",
		"RowKey eq 'b' or PartitionKey eq 'd'",
		"Age gt 3",
	}
	checked := 0
	for _, r := range ranges {
		for _, fs := range append(filters, "") {
			var inner localtable.Predicate
			if fs != "" {
				f, err := filter.Parse(fs)
				if err != nil {
					t.Fatal(err)
				}
				inner = f
			}
			p := Restrict(inner, r)
			rp, ok := p.(localtable.RangeReaderPredicate)
			if !ok {
				t.Fatalf("Restrict(%q): %T is no RangeReaderPredicate", fs, p)
			}
			rs, _ := p.KeyRanges()
			for _, pk := range keys {
				for _, rk := range keys {
					e := &localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{"Age": localtable.Int32Value(int32(len(pk) + len(rk)))}}
					in := false
					for _, x := range rs {
						in = in || x.Contains(pk, rk)
					}
					if !in {
						continue
					}
					checked++
					if got, want := rp.MatchInRanges(e), p.Match(e); got != want {
						t.Errorf("%q within %v: MatchInRanges(%q, %q) %v, Match %v", fs, r, pk, rk, got, want)
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("weak test: %d entities checked", checked)
	}
}
