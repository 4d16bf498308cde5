package localtable_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// evenRows matches the entities tabletest.Fill marks Even: every other row.
var evenRows = tabletest.KeyPred{Accept: func(e *localtable.Entity) bool {
	v, ok := e.Property("Even")
	return ok && v.Bool()
}}

// TestQueryAllLimitReadsNoFurther: the first n of a filtered QueryAll read
// the entities up to the n-th match and not one more, where PageSize would
// read a whole page.
func TestQueryAllLimitReadsNoFurther(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		ce, tbl := newCountingTable(t, eng)
		tabletest.Fill(t, tbl, 5, 1000) // rows r0000..r0999 of p000..p004; even rows match
		all := tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: evenRows}))
		if len(all) != 2500 {
			t.Fatalf("unlimited: %d matches", len(all))
		}

		ce.reads.Store(0)
		got := tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: evenRows, Limit: 10}))
		if !slices.Equal(got, all[:10]) {
			t.Errorf("Limit 10 = %v, want %v", got, all[:10])
		}
		// The 10th even row is the 19th row: First and 18 Next, no peek.
		if n := ce.reads.Load(); n != 19 {
			t.Errorf("Limit 10 read %d entities, want 19", n)
		}

		// Across pages: 1000 matches on the first page, then a page
		// limited to the 500 that remain. The 1500th match is row 2998.
		ce.reads.Store(0)
		got = tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: evenRows, Limit: 1500}))
		if !slices.Equal(got, all[:1500]) {
			t.Errorf("Limit 1500: %d entities, first difference from the unlimited query", len(got))
		}
		if n := ce.reads.Load(); n > 3000 {
			t.Errorf("Limit 1500 read %d entities, want at most 3000 (2999 and the first page's look-ahead)", n)
		}

		// A Limit above the matches is no limit.
		got = tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: evenRows, Limit: 1 << 20, PageSize: 333}))
		if !slices.Equal(got, all) {
			t.Errorf("Limit above the matches: %d entities, want %d", len(got), len(all))
		}

		// Breaking out early still works with a Limit.
		n := 0
		for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Limit: 50}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 5 {
				break
			}
		}
	})
}

// TestQueryLimitPage: on one page, a Limit at or under PageSize ends the query
// (no Continuation, nothing read after the Limit-th match, not even in a
// later key range); a Limit over PageSize is a page like any other.
func TestQueryLimitPage(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		ce, tbl := newCountingTable(t, eng)
		tabletest.Fill(t, tbl, 3, 20)

		page, err := tbl.Query(ctx, &localtable.QueryOptions{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := tabletest.KeysOf(page.Entities); !slices.Equal(got, []string{"p000/r0000", "p000/r0001", "p000/r0002"}) {
			t.Errorf("Limit 3 = %v", got)
		}
		if !page.Continuation.IsZero() || page.Stats.Scanned != 3 || page.Stats.Returned != 3 {
			t.Errorf("Limit 3: continuation %v, stats %+v; want none, 3 scanned", page.Continuation, page.Stats)
		}

		page, err = tbl.Query(ctx, &localtable.QueryOptions{Limit: 3, PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 2 || page.Continuation.IsZero() {
			t.Errorf("Limit 3, PageSize 2: %d entities, continuation %v; want 2 and a continuation", len(page.Entities), page.Continuation)
		}
		// The caller pages on with what remains of the Limit.
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Limit: 1, PageSize: 2, Continuation: page.Continuation})
		if err != nil {
			t.Fatal(err)
		}
		if got := tabletest.KeysOf(page.Entities); !slices.Equal(got, []string{"p000/r0002"}) || !page.Continuation.IsZero() {
			t.Errorf("rest of Limit 3 = %v, continuation %v", got, page.Continuation)
		}

		// The Limit is reached at the end of the first of two ranges: the
		// second is not looked into.
		two := tabletest.KeyPred{Ranges: []localtable.KeyRange{
			{Start: localtable.PartitionStart("p000"), End: localtable.PartitionEnd("p000")},
			{Start: localtable.PartitionStart("p002"), End: localtable.PartitionEnd("p002")},
		}}
		ce.reads.Store(0)
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Filter: two, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 20 || !page.Continuation.IsZero() {
			t.Errorf("Limit 20 over two ranges: %d entities, continuation %v", len(page.Entities), page.Continuation)
		}
		if n := ce.reads.Load(); n != 20 {
			t.Errorf("Limit 20 over two ranges read %d entities, want 20", n)
		}
		// Without the Limit, PageSize 20 looks ahead to say the query goes on.
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Filter: two, PageSize: 20})
		if err != nil {
			t.Fatal(err)
		}
		if page.Continuation.IsZero() {
			t.Error("PageSize 20 over two ranges of 40 entities: no continuation")
		}

		_, err = tbl.Query(ctx, &localtable.QueryOptions{Limit: -1})
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("Limit -1: %v, want ErrInvalidInput", err)
		}
		for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Limit: -1}) {
			if !errors.Is(err, localtable.ErrInvalidInput) {
				t.Errorf("QueryAll Limit -1: %v, want ErrInvalidInput", err)
			}
		}
	})
}
