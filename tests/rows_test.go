package tests

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// fillRows writes n entities over 7 partitions, with an escaped key
// among them, in transactions.
func fillRows(t testing.TB, tbl *localtable.Table, n int) {
	t.Helper()
	byPK := map[string][]localtable.Action{}
	for i := range n {
		pk := fmt.Sprintf("p%d", i%7)
		if i == 3 {
			pk = "p\U0001F600" // a key the engine stores rewritten
		}
		e := benchEntity(pk, fmt.Sprintf("r%05d", i))
		e.Properties["N"] = localtable.Int64Value(int64(i))
		byPK[pk] = append(byPK[pk], localtable.Action{Type: localtable.ActionInsert, Entity: e})
		if acts := byPK[pk]; len(acts) == localtable.MaxTransactionActions {
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
			byPK[pk] = nil
		}
	}
	for _, acts := range byPK {
		if len(acts) > 0 {
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRowsAgreeWithQueryAll checks, on every engine, that Rows yields the
// entities QueryAll does, in its order, with the same keys, Timestamps,
// properties and ETags, for filters, limits, small pages and scan limits.
func TestRowsAgreeWithQueryAll(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		fillRows(t, tbl, 1500)
		rng := rand.New(rand.NewPCG(1, 2))
		cases := []struct {
			filter string
			opts   localtable.QueryOptions
		}{
			{"", localtable.QueryOptions{}},
			{"N ge 100L and N lt 140L", localtable.QueryOptions{}},
			{"PartitionKey eq 'p3' or PartitionKey eq 'p\U0001F600'", localtable.QueryOptions{PageSize: 7}},
			{"Age eq 42", localtable.QueryOptions{Limit: 1234, ScanLimit: 100}},
			{"RowKey gt 'r01000' and Score gt 98.0", localtable.QueryOptions{PageSize: 1000}},
			{"N eq -1L", localtable.QueryOptions{}},
		}
		for _, c := range cases {
			opts := c.opts
			if c.filter != "" {
				f, err := filter.Parse(c.filter)
				if err != nil {
					t.Fatal(err)
				}
				opts.Filter = f
			}
			var want []localtable.Entity
			for e, err := range tbl.QueryAll(ctx, &opts) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, e)
			}
			i := 0
			for r, err := range tbl.Rows(ctx, &opts) {
				if err != nil {
					t.Fatalf("%q: %v", c.filter, err)
				}
				if i >= len(want) {
					t.Fatalf("%q: Rows yields more than QueryAll's %d", c.filter, len(want))
				}
				w := want[i]
				i++
				if r.PartitionKey() != w.PartitionKey || r.RowKey() != w.RowKey || !r.Timestamp().Equal(w.Timestamp) {
					t.Fatalf("%q: row %d is %q/%q at %v, want %q/%q at %v", c.filter, i, r.PartitionKey(), r.RowKey(), r.Timestamp(), w.PartitionKey, w.RowKey, w.Timestamp)
				}
				var names []string
				for name, v := range r.Properties() {
					names = append(names, name)
					if !v.Equal(w.Properties[name]) {
						t.Fatalf("%q: %s/%s %s = %v, want %v", c.filter, w.PartitionKey, w.RowKey, name, v, w.Properties[name])
					}
				}
				if len(names) != len(w.Properties) || !slices.IsSorted(names) {
					t.Fatalf("%q: properties %q, want the %d of QueryAll in name order", c.filter, names, len(w.Properties))
				}
				if v, ok := r.Property("N"); !ok || !v.Equal(w.Properties["N"]) {
					t.Fatalf("%q: Property(N) = %v, %v", c.filter, v, ok)
				}
				if v, ok := r.Property(localtable.PartitionKeyName); !ok || v.String() != w.PartitionKey {
					t.Fatalf("%q: Property(PartitionKey) = %v, %v", c.filter, v, ok)
				}
				if _, ok := r.Property("Missing"); ok {
					t.Fatalf("%q: a property the entity lacks is found", c.filter)
				}
				// Property is a cursor over the record: every order of
				// reads, absent names among them, finds what Entity has.
				order := append(slices.Clone(names), "A", "Missing", "Zzz", "", "N")
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, name := range order {
					v, ok := r.Property(name)
					wv, wok := w.Properties[name]
					if ok != wok || ok && !v.Equal(wv) {
						t.Fatalf("%q: after reads in the order %q, Property(%q) = %v, %v; want %v, %v", c.filter, order, name, v, ok, wv, wok)
					}
				}
				e, err := r.Entity()
				if err != nil {
					t.Fatal(err)
				}
				if e.ETag != w.ETag || e.PartitionKey != w.PartitionKey || len(e.Properties) != len(w.Properties) {
					t.Fatalf("%q: Entity() = %+v, want %+v", c.filter, e, w)
				}
			}
			if i != len(want) {
				t.Fatalf("%q: Rows yields %d, QueryAll %d", c.filter, i, len(want))
			}
		}
	})
}

// TestRowsMisuse checks Rows' refusals and its early stop.
func TestRowsMisuse(t *testing.T) {
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	fillRows(t, tbl, 300)
	for _, err := range tbl.Rows(ctx, &localtable.QueryOptions{Select: []string{"N"}}) {
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Fatalf("Rows with a Select: %v, want ErrInvalidInput", err)
		}
	}
	var kept *localtable.Row
	n := 0
	for r, err := range tbl.Rows(ctx, &localtable.QueryOptions{PageSize: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		kept = r
		if n++; n == 25 {
			break
		}
	}
	if n != 25 {
		t.Fatalf("the loop ran %d times", n)
	}
	if _, err := kept.Entity(); err == nil {
		t.Fatal("a Row kept past its step still reads its entity")
	}
	if _, err := tbl.Get(ctx, "p0", "r00000", nil); err != nil { // the table is usable after a break
		t.Fatal(err)
	}
}

// TestRowsAllocations checks that a loop over Rows that reads two
// properties of each entity allocates nothing per entity.
func TestRowsAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	const rows = 2000
	fillRows(t, tbl, rows)
	var sum int64
	allocs := leastAllocs(5, func() {
		n := 0
		for r, err := range tbl.Rows(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			v, _ := r.Property("N")
			sum += v.Int64() + int64(len(r.RowKey()))
			if s, ok := r.Property("Name"); ok {
				sum += int64(len(s.String()))
			}
			n++
		}
		if n != rows {
			t.Fatalf("%d rows", n)
		}
	})
	if per := allocs / rows; per > 0.05 {
		t.Errorf("%.0f allocations for %d rows (%.3f a row); want none a row, only the pages'", allocs, rows, per)
	}
}

// TestGetRow checks GetRow against Get on every engine: the same entity,
// the same errors, and a Row reused from one read to the next.
func TestGetRow(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		fillRows(t, tbl, 300)
		var row localtable.Row
		for i := range 300 {
			pk, rk := fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%05d", i)
			if i == 3 {
				pk = "p\U0001F600"
			}
			want, err := tbl.Get(ctx, pk, rk, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tbl.GetRow(ctx, pk, rk, &row); err != nil {
				t.Fatal(err)
			}
			if row.PartitionKey() != pk || row.RowKey() != rk || row.ETag() != want.ETag || !row.Timestamp().Equal(want.Timestamp) {
				t.Fatalf("GetRow(%q, %q) = %q/%q %s, want %s", pk, rk, row.PartitionKey(), row.RowKey(), row.ETag(), want.ETag)
			}
			if v, ok := row.Property("N"); !ok || v.Int64() != int64(i) {
				t.Fatalf("GetRow(%q, %q): N = %v, %v", pk, rk, v, ok)
			}
			got, err := row.Entity()
			if err != nil {
				t.Fatal(err)
			}
			if got.ETag != want.ETag || len(got.Properties) != len(want.Properties) {
				t.Fatalf("GetRow(%q, %q).Entity() = %+v, want %+v", pk, rk, got, want)
			}
			for name, v := range want.Properties {
				if !got.Properties[name].Equal(v) {
					t.Fatalf("GetRow(%q, %q): %s = %v, want %v", pk, rk, name, got.Properties[name], v)
				}
			}
		}
		// Get's errors, and a failed read leaves the Row empty.
		_, wantErr := tbl.Get(ctx, "p1", "absent", nil)
		if err := tbl.GetRow(ctx, "p1", "absent", &row); !errors.Is(err, localtable.ErrEntityNotFound) || err.Error() != wantErr.Error() {
			t.Fatalf("GetRow of an absent entity: %v, want %v", err, wantErr)
		}
		if _, ok := row.Property("N"); ok || row.PartitionKey() != "" {
			t.Fatal("a failed GetRow leaves the previous entity in the Row")
		}
		if err := tbl.GetRow(ctx, "p1", "bad/key", &row); !errors.Is(err, localtable.ErrInvalidInput) {
			t.Fatalf("GetRow of an invalid key: %v", err)
		}
	})
}

// TestGetRowAllocations checks that a point read into a reused Row
// allocates nothing, on memory and on pebble.
func TestGetRowAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	for _, eng := range tabletest.Engines[:2] {
		t.Run(eng.Name, func(t *testing.T) {
			_, tbl := tabletest.NewTable(t, eng)
			fillRows(t, tbl, 100)
			var row localtable.Row
			var sum int64
			allocs := leastAllocs(200, func() {
				if err := tbl.GetRow(ctx, "p1", "r00008", &row); err != nil {
					t.Fatal(err)
				}
				v, _ := row.Property("N")
				s, _ := row.Property("Name")
				sum += v.Int64() + int64(len(s.String())+len(row.RowKey()))
			})
			if allocs > 0 {
				t.Errorf("GetRow into a reused Row: %.1f allocations a read, want 0", allocs)
			}
		})
	}
}
