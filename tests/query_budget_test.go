package tests

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestQueryDefaultScanLimit: a query that sets no ScanLimit reads at most
// DefaultScanLimit entities in a page, so a filter that matches only the
// last of more entities than that gets an empty page with a continuation
// from Query, while QueryAll, QueryAs and Count, which follow
// continuations, find the entity. A negative ScanLimit reads on.
func TestQueryDefaultScanLimit(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	n := localtable.DefaultScanLimit + 10
	for i := 0; i < n; i += 100 {
		acts := make([]localtable.Action, 0, 100)
		for j := i; j < min(i+100, n); j++ {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: tabletest.Ent(fmt.Sprintf("p%04d", i/100), fmt.Sprintf("r%03d", j%100), "N", int32(j))})
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	last := n - 1
	for _, f := range []localtable.Predicate{
		filter.Prop("N").Eq(last),
		tabletest.KeyPred{Accept: func(e *localtable.Entity) bool { return e.Properties["N"].Int32() == int32(last) }},
	} {
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 0 || page.Continuation.IsZero() || page.Stats.Scanned != localtable.DefaultScanLimit {
			t.Errorf("%T: first page: %d entities, %d scanned, continuation %v; want an empty page of %d scanned that continues",
				f, len(page.Entities), page.Stats.Scanned, page.Continuation, localtable.DefaultScanLimit)
		}
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Filter: f, Continuation: page.Continuation})
		if err != nil || len(page.Entities) != 1 || !page.Continuation.IsZero() {
			t.Errorf("%T: second page: %d entities, continuation %v, %v; want the last entity and no continuation", f, len(page.Entities), page.Continuation, err)
		}
		want := []string{fmt.Sprintf("p%04d/r%03d", last/100, last%100)}
		if got := tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f})); !equalStrings(got, want) {
			t.Errorf("%T: QueryAll: %v, want %v", f, got, want)
		}
		if got := tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f, Limit: 1})); !equalStrings(got, want) {
			t.Errorf("%T: QueryAll with Limit 1: %v, want %v", f, got, want)
		}
		type row struct{ N int32 }
		var rows []row
		for r, err := range localtable.QueryAs[row](ctx, tbl, &localtable.QueryOptions{Filter: f}) {
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		if len(rows) != 1 || rows[0].N != int32(last) {
			t.Errorf("%T: QueryAs: %v, want N %d", f, rows, last)
		}
		if c, err := tbl.Count(ctx, f); err != nil || c != 1 {
			t.Errorf("%T: Count: %d, %v; want 1", f, c, err)
		}
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Filter: f, ScanLimit: -1})
		if err != nil || len(page.Entities) != 1 || !page.Continuation.IsZero() || page.Stats.Scanned != n {
			t.Errorf("%T: ScanLimit -1: %d entities, %d scanned, continuation %v, %v; want 1 of %d in one page",
				f, len(page.Entities), page.Stats.Scanned, page.Continuation, err, n)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
