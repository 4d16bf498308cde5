package tests

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestQueryRejectsWithoutAllocating checks that a filtered scan allocates
// nothing for the entities its filter rejects: a query over n entities
// that keeps none allocates the same whatever n is. The filters compare a
// custom property of each type, and the keys; before filters were matched
// on the stored record, each rejected entity cost three allocations.
func TestQueryRejectsWithoutAllocating(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0]) // memory: its iterators allocate nothing per step
	filters := []string{
		"Age gt 1000",
		"Name eq 'nobody'",
		"Balance lt 0L",
		"Score gt 1000.0",
		"Active eq false",
		"Joined lt datetime'2000-01-01T00:00:00Z'",
		"Id eq guid'00000000-0000-0000-0000-000000000000'",
		"Blob eq X'01'",
		"Missing eq 1",
		"RowKey lt 'r' or PartitionKey gt 'q'",
		"Timestamp lt datetime'2000-01-01T00:00:00Z'",
		"not (Age lt 1000 and Notes ne '')",
	}
	allocs := func(f *filter.Filter) float64 {
		return leastAllocs(10, func() {
			page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
			if err != nil || len(page.Entities) != 0 {
				t.Fatalf("%v: %d entities, %v", f, len(page.Entities), err)
			}
		})
	}
	load := func(from, to int) {
		for i := from; i < to; i++ {
			if _, err := tbl.Insert(ctx, benchEntity("p", fmt.Sprintf("r%04d", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range filters {
		f, err := filter.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		load(0, 10)
		few := allocs(f)
		load(10, 1000)
		many := allocs(f)
		if many > few {
			t.Errorf("%s: %.0f allocations scanning 10 entities, %.0f scanning 1000", s, few, many)
		}
		if err := tbl.Delete(ctx, "p", "r0000", nil); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 1000; i++ {
			if err := tbl.Delete(ctx, "p", fmt.Sprintf("r%04d", i), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}
