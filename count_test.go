package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// TestCount: Count agrees with counting QueryAll's results, for filters
// with and without key ranges, also when it follows its own continuations
// (a scan limit of 7 per snapshot here).
func TestCount(t *testing.T) {
	for _, limit := range []int{1 << 16, 7} {
		t.Run(fmt.Sprint("scanlimit", limit), func(t *testing.T) {
			defer localtable.SetCountScanLimit(limit)()
			tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
				a, tbl := tabletest.NewTable(t, eng)
				tabletest.Fill(t, tbl, 4, 250)
				preds := map[string]localtable.Predicate{
					"all":  nil,
					"even": evenRows,
					"ranges": tabletest.KeyPred{Ranges: []localtable.KeyRange{
						{Start: localtable.KeyAt("p001", "r0100"), End: localtable.KeyAt("p001", "r0117")},
						{Start: localtable.PartitionStart("p003"), End: localtable.PartitionEnd("p003")},
					}},
					"ranges and residual": tabletest.KeyPred{
						Ranges: []localtable.KeyRange{{Start: localtable.PartitionStart("p002")}},
						Accept: func(e *localtable.Entity) bool { v, _ := e.Property("N"); return v.Int64()%3 == 0 },
					},
					"none": tabletest.KeyPred{Accept: func(*localtable.Entity) bool { return false }},
				}
				var every []localtable.Entity
				for e, err := range tbl.QueryAll(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					every = append(every, e)
				}
				for name, p := range preds {
					want := 0 // brute force: Match on every entity
					for i := range every {
						if p == nil || p.Match(&every[i]) {
							want++
						}
					}
					got, err := tbl.Count(ctx, p)
					if err != nil || got != want {
						t.Errorf("%s: Count = %d, %v; want %d", name, got, err, want)
					}
				}
				if n, err := a.Table("missing").Count(ctx, nil); !errors.Is(err, localtable.ErrTableNotFound) {
					t.Errorf("Count of a missing table = %d, %v", n, err)
				}
			})
		})
	}
}

// TestCountMaterializesNothing: counting every entity decodes no record,
// so it allocates a few objects per snapshot, not per entity.
func TestCountMaterializesNothing(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	tabletest.Fill(t, tbl, 2, 1000)
	var n int
	allocs := testing.AllocsPerRun(5, func() {
		var err error
		if n, err = tbl.Count(ctx, nil); err != nil {
			t.Fatal(err)
		}
	})
	if n != 2000 || allocs > 100 {
		t.Errorf("Count = %d with %.0f allocations; want 2000 with at most 100", n, allocs)
	}
	// With a filter each record is decoded into one reused entity: a
	// match costs no Entity, no Properties map and no ETag, so counting
	// 1000 matches allocates what counting none does.
	none := tabletest.KeyPred{Accept: func(e *localtable.Entity) bool {
		v, ok := e.Property("Even")
		return ok && v.Bool() && e.RowKey == ""
	}}
	countEven := testing.AllocsPerRun(3, func() { tbl.Count(ctx, evenRows) })
	countNone := testing.AllocsPerRun(3, func() { tbl.Count(ctx, none) })
	if countEven > countNone+20 {
		t.Errorf("Count: %.0f allocations for 1000 matches, %.0f for none", countEven, countNone)
	}
	queryEven := testing.AllocsPerRun(3, func() {
		for range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: evenRows}) {
		}
	})
	queryNone := testing.AllocsPerRun(3, func() {
		for range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: none}) {
		}
	})
	if queryEven < queryNone+1000 { // the measure can tell
		t.Errorf("QueryAll: %.0f allocations for 1000 matches, %.0f for none", queryEven, queryNone)
	}
}

// TestCountContext: Count stops on a cancelled context, also in the middle
// of a long scan.
func TestCountContext(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 1, 3000)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := tbl.Count(cctx, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Count on a cancelled context: %v", err)
		}
		cctx, cancel = context.WithCancel(ctx)
		defer cancel()
		seen := 0
		cancelling := tabletest.KeyPred{Accept: func(*localtable.Entity) bool {
			if seen++; seen == 10 {
				cancel()
			}
			return true
		}}
		if n, err := tbl.Count(cctx, cancelling); !errors.Is(err, context.Canceled) {
			t.Errorf("Count cancelled mid-scan = %d, %v", n, err)
		}
		if seen >= 3000 {
			t.Errorf("Count read all %d entities after its context was cancelled", seen)
		}
	})
}

// TestPartitionsSeeks: listing the partitions of 100 × 1,000 entities
// reads one entity per partition, not 100,000.
func TestPartitionsSeeks(t *testing.T) {
	bulk := []tabletest.Engine{
		tabletest.Engines[0],
		{Name: "pebble", Open: func(t testing.TB) storage.Engine { // unsynced: a bulk load
			db, err := pebble.Open(t.TempDir(), &pebble.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	}
	for _, eng := range bulk {
		t.Run(eng.Name, func(t *testing.T) {
			ce, tbl := newCountingTable(t, eng)
			tabletest.Fill(t, tbl, 100, 1000)
			ce.reads.Store(0)
			var got []string
			for pk, err := range tbl.Partitions(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, pk)
			}
			var want []string
			for p := 0; p < 100; p++ {
				want = append(want, fmt.Sprintf("p%03d", p))
			}
			if !slices.Equal(got, want) {
				t.Errorf("Partitions = %v", got)
			}
			if n := ce.reads.Load(); n != 100 {
				t.Errorf("Partitions read %d entities, want 100 (one per partition)", n)
			}
		})
	}
}

// TestPartitions: the partitions are every distinct PartitionKey in
// order, including the empty one and ones that extend another, also across
// snapshot batches (3 here); a broken loop, an empty table and a missing
// table behave.
func TestPartitions(t *testing.T) {
	for _, batch := range []int{1000, 3, 1} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			defer localtable.SetPartitionBatch(batch)()
			tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
				a, tbl := tabletest.NewTable(t, eng)
				list := func() []string {
					t.Helper()
					var pks []string
					for pk, err := range tbl.Partitions(ctx) {
						if err != nil {
							t.Fatal(err)
						}
						pks = append(pks, pk)
					}
					return pks
				}
				if got := list(); len(got) != 0 {
					t.Errorf("empty table: %v", got)
				}
				pks := []string{"", "a", "a b", "a!", "ab", "b", "é", "\U0001F600", "\uFFFD", "z"}
				for i, pk := range pks {
					for r := 0; r <= i%3; r++ {
						if _, err := tbl.Insert(ctx, tabletest.Ent(pk, fmt.Sprint(r))); err != nil {
							t.Fatal(err)
						}
					}
				}
				// Brute force: the distinct keys of every entity, in the
				// table's order.
				var want []string
				for e, err := range tbl.QueryAll(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if len(want) == 0 || want[len(want)-1] != e.PartitionKey {
						want = append(want, e.PartitionKey)
					}
				}
				if len(want) != len(pks) {
					t.Fatalf("table holds %d partitions, want %d", len(want), len(pks))
				}
				if got := list(); !slices.Equal(got, want) {
					t.Errorf("Partitions = %q, want %q", got, want)
				}
				n := 0
				for range tbl.Partitions(ctx) {
					if n++; n == 2 {
						break
					}
				}
				for _, err := range a.Table("missing").Partitions(ctx) {
					if !errors.Is(err, localtable.ErrTableNotFound) {
						t.Errorf("Partitions of a missing table: %v", err)
					}
				}
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				for _, err := range tbl.Partitions(cctx) {
					if !errors.Is(err, context.Canceled) {
						t.Errorf("Partitions on a cancelled context: %v", err)
					}
				}
			})
		})
	}
}
