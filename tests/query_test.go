package tests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

func TestQueryPaging(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 5, 500) // 2500 entities
		var got []string
		opts := localtable.QueryOptions{}
		pages := 0
		for {
			page, err := tbl.Query(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Entities) > 1000 {
				t.Fatalf("page of %d entities", len(page.Entities))
			}
			got = append(got, tabletest.KeysOf(page.Entities)...)
			if page.Continuation.IsZero() {
				break
			}
			opts.Continuation = page.Continuation
		}
		if pages != 3 || len(got) != 2500 || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != 2500 {
			t.Errorf("%d pages, %d entities, sorted %v", pages, len(got), slices.IsSorted(got))
		}
		// Exactly 1000: no continuation, since nothing follows.
		_, tbl2 := func() (*localtable.Account, *localtable.Table) {
			a := tabletest.OpenAccount(t, eng, nil)
			tb, _ := a.CreateTable(ctx, "exact")
			return a, tb
		}()
		tabletest.Fill(t, tbl2, 1, 1000)
		page, err := tbl2.Query(ctx, nil)
		if err != nil || len(page.Entities) != 1000 || !page.Continuation.IsZero() {
			t.Errorf("exactly 1000: %d entities, continuation %v, %v", len(page.Entities), page.Continuation, err)
		}
	})
}

func TestQueryTopAndSelect(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 2, 10)
		page, err := tbl.Query(ctx, &localtable.QueryOptions{PageSize: 3, Select: []string{"N", "Missing"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 3 || page.Continuation.IsZero() {
			t.Fatalf("PageSize 3: %d entities, continuation %v", len(page.Entities), page.Continuation)
		}
		e := page.Entities[0]
		if len(e.Properties) != 1 || e.Properties["N"].Int64() != 0 || e.ETag == "" || e.Timestamp.IsZero() {
			t.Errorf("projected entity = %+v", e)
		}
		for _, top := range []int{-1, 1001} {
			if _, err := tbl.Query(ctx, &localtable.QueryOptions{PageSize: top}); localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("PageSize %d: %v", top, err)
			}
		}
		// Select with a residual filter on a property that is not selected.
		page, err = tbl.Query(ctx, &localtable.QueryOptions{Select: []string{"N"}, Filter: tabletest.KeyPred{Accept: func(e *localtable.Entity) bool {
			v, ok := e.Property("Even")
			return ok && v.Bool()
		}}})
		if err != nil || len(page.Entities) != 10 || len(page.Entities[0].Properties) != 1 {
			t.Errorf("filter on unselected property: %d entities, %v", len(page.Entities), err)
		}
	})
}

func TestQueryRangesScanOnlyWhatTheyReturn(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 10, 200)
		// PartitionKey eq 'p003' and RowKey ge 'r0050' and RowKey lt 'r0150'
		r := localtable.KeyRange{Start: localtable.KeyAt("p003", "r0050"), End: localtable.KeyAt("p003", "r0150")}
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: tabletest.KeyPred{Ranges: []localtable.KeyRange{r}}})
		if err != nil {
			t.Fatal(err)
		}
		st := page.Stats
		if st.Returned != 100 || st.Scanned != 100 || st.FullScan || st.Ranges != 1 {
			t.Errorf("stats = %+v, want 100 scanned and returned from 1 range", st)
		}
		// A whole partition, and the union of two point lookups.
		page, _ = tbl.Query(ctx, &localtable.QueryOptions{Filter: tabletest.KeyPred{Ranges: []localtable.KeyRange{{Start: localtable.PartitionStart("p007"), End: localtable.PartitionEnd("p007")}}}})
		if page.Stats.Scanned != 200 || page.Stats.Returned != 200 {
			t.Errorf("partition scan stats = %+v", page.Stats)
		}
		pts := []localtable.KeyRange{
			{Start: localtable.KeyAt("p001", "r0007"), End: localtable.KeyAfter("p001", "r0007")},
			{Start: localtable.KeyAt("p009", "r0199"), End: localtable.KeyAfter("p009", "r0199")},
		}
		page, _ = tbl.Query(ctx, &localtable.QueryOptions{Filter: tabletest.KeyPred{Ranges: pts}})
		if got := tabletest.KeysOf(page.Entities); !slices.Equal(got, []string{"p001/r0007", "p009/r0199"}) || page.Stats.Scanned != 2 {
			t.Errorf("point lookups = %v, stats %+v", got, page.Stats)
		}
		// A residual-only filter scans everything.
		page, _ = tbl.Query(ctx, &localtable.QueryOptions{Filter: tabletest.KeyPred{Accept: func(e *localtable.Entity) bool { return e.RowKey == "r0001" }}})
		if page.Stats.Scanned != 2000 || page.Stats.Returned != 10 || !page.Stats.FullScan {
			t.Errorf("full scan stats = %+v", page.Stats)
		}
	})
}

func TestQueryContinuationAcrossRanges(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 4, 30)
		rs := []localtable.KeyRange{
			{Start: localtable.PartitionStart("p000"), End: localtable.PartitionEnd("p000")},
			{Start: localtable.KeyAt("p002", "r0010"), End: localtable.KeyAt("p002", "r0020")},
			{Start: localtable.PartitionStart("p003"), End: localtable.PartitionEnd("p003")},
		}
		var got []string
		for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{PageSize: 7, Filter: tabletest.KeyPred{Ranges: rs}}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e.PartitionKey+"/"+e.RowKey)
		}
		if len(got) != 70 || !slices.IsSorted(got) || got[30] != "p002/r0010" || got[40] != "p003/r0000" {
			t.Errorf("got %d entities: %v", len(got), got)
		}
	})
}

func TestQueryScanLimit(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 1, 100)
		// Only the last entity matches; a scan limit of 30 gives empty pages
		// that continue.
		opts := localtable.QueryOptions{ScanLimit: 30, Filter: tabletest.KeyPred{Accept: func(e *localtable.Entity) bool { return e.RowKey == "r0099" }}}
		var pages, found int
		for {
			page, err := tbl.Query(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			found += len(page.Entities)
			if page.Continuation.IsZero() {
				break
			}
			opts.Continuation = page.Continuation
		}
		if pages != 4 || found != 1 {
			t.Errorf("%d pages, %d found; want 4 pages and 1 entity", pages, found)
		}
	})
}

func TestQueryBadContinuation(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		for _, c := range []localtable.Continuation{{NextPartitionKey: "garbage"}, {NextPartitionKey: "1!4!cA==", NextRowKey: "1!9!$$"}} {
			_, err := tbl.Query(ctx, &localtable.QueryOptions{Continuation: c})
			if localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("continuation %+v: %v, want InvalidInput", c, err)
			}
		}
		if _, err := localtable.Open(nil); err != nil {
			t.Fatal(err)
		}
		var a *localtable.Account = tabletest.OpenAccount(t, eng, nil)
		if _, err := a.Table("nosuch").Query(ctx, nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("query of missing table: %v", err)
		}
	})
}

// TestQueryConcurrentWrites pages through a table while others insert new
// entities and rewrite existing ones: every entity present for the whole
// query is returned exactly once, in order.
func TestQueryConcurrentWrites(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 3, 400)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// new rows between existing ones, and rewrites of existing ones
				tbl.Upsert(ctx, tabletest.Ent(fmt.Sprintf("p%03d", i%3), fmt.Sprintf("r%04d_new%d", i%400, i)), nil)
				tbl.Upsert(ctx, tabletest.Ent(fmt.Sprintf("p%03d", i%3), fmt.Sprintf("r%04d", (i*7)%400), "N", -1), &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
			}
		}()
		seen := map[string]int{}
		var order []string
		for e, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{PageSize: 50}) {
			if err != nil {
				t.Fatal(err)
			}
			k := e.PartitionKey + "/" + e.RowKey
			seen[k]++
			order = append(order, k)
		}
		close(stop)
		wg.Wait()
		for p := 0; p < 3; p++ {
			for r := 0; r < 400; r++ {
				if k := fmt.Sprintf("p%03d/r%04d", p, r); seen[k] != 1 {
					t.Fatalf("%s seen %d times", k, seen[k])
				}
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("%s seen %d times", k, n)
			}
		}
		if !slices.IsSorted(order) {
			t.Error("results out of order")
		}
	})
}

func TestQueryMaxBytes(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		big := localtable.StringValue(strings.Repeat("x", 30000))
		for i := 0; i < 10; i++ {
			if _, err := tbl.Insert(ctx, tabletest.Ent("p", fmt.Sprint(i), "S", big)); err != nil {
				t.Fatal(err)
			}
		}
		// ~30 KB an entity: a 100 KB bound gives pages of 4 (the fourth
		// reaches it), then 4, then 2.
		opts := localtable.QueryOptions{MaxBytes: 100_000}
		var sizes []int
		for {
			page, err := tbl.Query(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page.Entities))
			if page.Continuation.IsZero() {
				break
			}
			opts.Continuation = page.Continuation
		}
		if !slices.Equal(sizes, []int{4, 4, 2}) {
			t.Errorf("page sizes %v, want [4 4 2]", sizes)
		}
	})
}

// TestQueryPredicateErr: a query whose Predicate reports an error through
// an Err method (a filter the builder could not build) fails with that
// error instead of scanning; so does a table listing.
func TestQueryPredicateErr(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 1, 3)
		bad := filter.Or(filter.PartitionKey().Eq("p000"), filter.Prop("N").Eq(uint64(1)<<63))
		if _, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: bad}); err == nil || err != bad.Err() || !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("Query: %v, want %v", err, bad.Err())
		}
		for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: bad}) {
			if err != bad.Err() {
				t.Errorf("QueryAll: %v", err)
			}
		}
		if _, err := tbl.Count(ctx, bad); err != bad.Err() {
			t.Errorf("Count: %v", err)
		}
		if _, err := a.ListTables(ctx, &localtable.ListTablesOptions{Filter: filter.Prop("Table-Name").Eq("x")}); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Errorf("ListTables: %v", err)
		}
		// A valid built filter queries as usual.
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: filter.Or(filter.PartitionKey().Eq("p000"), filter.Prop("N").Eq(1))})
		if err != nil || len(page.Entities) != 3 {
			t.Errorf("valid filter: %d entities, %v", len(page.Entities), err)
		}
	})
}

// TestIteratorsRerun: the iterators of QueryAll, QueryAs and Tables read
// their options when made, so each run walks every page from the first,
// however many pages there are, and later changes to the caller's options
// do not reach them.
func TestIteratorsRerun(t *testing.T) {
	a, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	tabletest.Fill(t, tbl, 1, 5)
	for _, name := range []string{"tbl2", "tbl3", "tbl4"} {
		if _, err := a.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	opts := &localtable.QueryOptions{PageSize: 2, Limit: 4}
	all := tbl.QueryAll(ctx, opts)
	type row struct{ RowKey string }
	typed := localtable.QueryAs[row](ctx, tbl, opts)
	opts.Filter = tabletest.KeyPred{Accept: func(*localtable.Entity) bool { return false }}
	for run := range 2 {
		n := 0
		for _, err := range all {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		m := 0
		for _, err := range typed {
			if err != nil {
				t.Fatal(err)
			}
			m++
		}
		if n != 4 || m != 4 {
			t.Errorf("run %d: QueryAll yielded %d, QueryAs %d; want 4 each", run, n, m)
		}
	}
	topts := &localtable.ListTablesOptions{PageSize: 1}
	tables := a.Tables(ctx, topts)
	topts.NextTableName = "tbl4"
	for run := range 2 {
		n := 0
		for _, err := range tables {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 4 {
			t.Errorf("run %d: Tables yielded %d, want 4", run, n)
		}
	}
}
