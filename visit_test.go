package localtable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// queryStored pages exactly as Query does, and hands the visitor the
// entities Query returns: the same keys, Timestamps, ETags and properties,
// with every kind of filter, page size, scan limit and byte limit, on
// both engines.
func TestQueryStoredMatchesQuery(t *testing.T) {
	ctx := context.Background()
	for _, eng := range []struct {
		name string
		open func(t *testing.T) storage.Engine
	}{
		{"memory", func(*testing.T) storage.Engine { return memory.New(nil) }},
		{"pebble", func(t *testing.T) storage.Engine {
			db, err := pebble.Open(t.TempDir(), &pebble.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	} {
		t.Run(eng.name, func(t *testing.T) {
			a, err := Open(&Options{Engine: eng.open(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tbl, err := a.CreateTable(ctx, "visit")
			if err != nil {
				t.Fatal(err)
			}
			for p := range 3 {
				var acts []Action
				for r := range 60 {
					props := sampleProps()
					props["N"] = Int32Value(int32(p*100 + r))
					if r%7 == 0 {
						delete(props, "S")
					}
					pk, rk := fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r)
					if r == 5 {
						rk = "r\U0010fffd😀" // keys with escapes in their encoding
					}
					if r%2 == 0 {
						if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: rk, Properties: props}); err != nil {
							t.Fatal(err)
						}
						continue
					}
					acts = append(acts, Action{Type: ActionInsert, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: props}})
				}
				if _, err := tbl.Transact(ctx, acts); err != nil {
					t.Fatal(err)
				}
			}
			even := func(r PropertyReader) bool { v, ok := r.Property("N"); return ok && v.Int32()%2 == 0 }
			filters := map[string]Predicate{
				"none":   nil,
				"reader": benchPred{match: even},
				"keys": benchPred{ranges: []KeyRange{{Start: KeyAt("p0", "r10"), End: KeyAt("p0", "r40")}, {Start: PartitionStart("p2"), End: PartitionEnd("p2")}},
					match: even},
				"entity": entityPred(func(e *Entity) bool { return e.Properties["N"].Int32()%3 == 0 }),
			}
			for fname, f := range filters {
				for _, o := range []QueryOptions{{}, {PageSize: 7}, {ScanLimit: 11}, {MaxBytes: 900}, {PageSize: 13, Limit: 20}} {
					o.Filter = f
					t.Run(fmt.Sprintf("%s/%+v", fname, o), func(t *testing.T) {
						compareStored(t, ctx, tbl, o)
					})
				}
			}
		})
	}
}

// entityPred is a Predicate that is not a ReaderPredicate.
type entityPred func(e *Entity) bool

func (p entityPred) Match(e *Entity) bool          { return p(e) }
func (p entityPred) KeyRanges() ([]KeyRange, bool) { return nil, false }
func (p entityPred) String() string                { return "entity predicate" }

// compareStored walks every page of opts with Query and queryStored.
func compareStored(t *testing.T, ctx context.Context, tbl *Table, opts QueryOptions) {
	t.Helper()
	so := opts
	for pages := 0; ; pages++ {
		want, err := tbl.Query(ctx, &opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []Entity
		page, err := tbl.queryStored(ctx, so, func(pk, rk string, ticks int64, props iter.Seq2[string, Value]) error {
			e := Entity{PartitionKey: pk, RowKey: rk, Timestamp: TicksToTime(ticks), ETag: etagOf(ticks), Properties: Properties{}}
			prev := ""
			for name, v := range props {
				if name <= prev && prev != "" {
					return fmt.Errorf("%s after %s: not in name order", name, prev)
				}
				prev = name
				// Names and strings are valid during the call only.
				if v.Kind() == KindString || v.Kind() == KindBinary || v.Kind() == KindGUID {
					v.str = strings.Clone(v.str)
				}
				e.Properties[strings.Clone(name)] = v
			}
			e.PartitionKey, e.RowKey = strings.Clone(pk), strings.Clone(rk)
			got = append(got, e)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if page.Entities != nil {
			t.Fatalf("page %d: queryStored returned %d entities in the page", pages, len(page.Entities))
		}
		if page.Continuation != want.Continuation || page.Stats != want.Stats {
			t.Fatalf("page %d: continuation %+v stats %+v; Query: %+v %+v", pages, page.Continuation, page.Stats, want.Continuation, want.Stats)
		}
		if len(got) != len(want.Entities) {
			t.Fatalf("page %d: visited %d entities; Query returned %d", pages, len(got), len(want.Entities))
		}
		for i, w := range want.Entities {
			g := got[i]
			if g.PartitionKey != w.PartitionKey || g.RowKey != w.RowKey || !g.Timestamp.Equal(w.Timestamp) || g.ETag != w.ETag || len(g.Properties) != len(w.Properties) {
				t.Fatalf("page %d entity %d: visited %+v; Query returned %+v", pages, i, g, w)
			}
			for name, v := range w.Properties {
				if !g.Properties[name].Equal(v) && !(v.Kind() == KindDouble && v.Double() != v.Double()) {
					t.Fatalf("page %d entity %d: %s = %v; Query returned %v", pages, i, name, g.Properties[name], v)
				}
			}
		}
		// A visitor that reads none of the properties, the first only, or
		// all of them twice, ends the page where Query does: the entities
		// are measured (MaxBytes) whatever it read of them.
		for _, reads := range []int{0, 1, -2} {
			n := 0
			page, err := tbl.queryStored(ctx, so, func(_, _ string, _ int64, props iter.Seq2[string, Value]) error {
				n++
				for range max(1, -reads) {
					i := 0
					for range props {
						if i++; reads >= 0 && i > reads {
							break
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != len(want.Entities) || page.Continuation != want.Continuation || page.Stats != want.Stats {
				t.Fatalf("page %d, a visitor reading %d properties: %d entities, continuation %+v stats %+v; Query: %d, %+v %+v",
					pages, reads, n, page.Continuation, page.Stats, len(want.Entities), want.Continuation, want.Stats)
			}
		}
		if want.Continuation.IsZero() {
			return
		}
		opts.Continuation, so.Continuation = want.Continuation, want.Continuation
	}
}

// A visitor's error ends the query with it, and a selection is refused.
func TestQueryStoredErrors(t *testing.T) {
	ctx := context.Background()
	a, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tbl, err := a.CreateTable(ctx, "visit")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop")
	n := 0
	_, err = tbl.queryStored(ctx, QueryOptions{}, func(string, string, int64, iter.Seq2[string, Value]) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("visitor's error: %v after %d entities", err, n)
	}
	_, err = tbl.queryStored(ctx, QueryOptions{Select: []string{"A"}}, func(string, string, int64, iter.Seq2[string, Value]) error { return nil })
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("a selection: %v, want ErrInvalidInput", err)
	}
}
