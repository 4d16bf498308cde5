package tests

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestDecodedEntitiesOutliveWrites checks that entities read by Get and
// Query keep their keys and values after the stored entities change: on
// the memory engine they are views of the engine's immutable records,
// which a later write must not alter.
func TestDecodedEntitiesOutliveWrites(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		pk, rk := "p😀", "r\U0010fffd" // keys whose encoding has escapes
		for _, keys := range [][2]string{{pk, rk}, {"p", "r"}} {
			if _, err := tbl.Insert(ctx, benchEntity(keys[0], keys[1])); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tbl.Get(ctx, "p", "r", nil)
		if err != nil {
			t.Fatal(err)
		}
		var queried []localtable.Entity
		for e, err := range tbl.QueryAll(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			queried = append(queried, e)
		}
		for _, keys := range [][2]string{{pk, rk}, {"p", "r"}} {
			e := localtable.Entity{PartitionKey: keys[0], RowKey: keys[1], Properties: localtable.Properties{
				"Name": localtable.StringValue("overwritten name"), "Id": localtable.StringValue("x"),
			}}
			if _, err := tbl.Update(ctx, e, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := tbl.Delete(ctx, "p", "r", nil); err != nil {
			t.Fatal(err)
		}
		want := benchEntity("p", "r")
		check := func(what string, e localtable.Entity, pk, rk string) {
			if e.PartitionKey != pk || e.RowKey != rk {
				t.Errorf("%s: keys changed to %q, %q", what, e.PartitionKey, e.RowKey)
			}
			for name, v := range want.Properties {
				if !e.Properties[name].Equal(v) {
					t.Errorf("%s: %s changed to %v, want %v", what, name, e.Properties[name], v)
				}
			}
		}
		check("Get", got, "p", "r")
		if len(queried) != 2 {
			t.Fatalf("queried %d entities", len(queried))
		}
		check("Query", queried[0], "p", "r")
		check("Query", queried[1], pk, rk)
	})
}

// mapAllocs returns the allocations of building a Properties map of n
// entries: the floor of decoding an entity of n properties.
func mapAllocs(n int) float64 {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("P%d", i)
	}
	var sink localtable.Properties
	a := leastAllocs(100, func() {
		p := make(localtable.Properties, n)
		for _, name := range names {
			p[name] = localtable.Int32Value(1)
		}
		sink = p
	})
	_ = sink
	return a
}

// mapBytes returns the bytes allocated to build a Properties map of n
// entries.
func mapBytes(n int) float64 {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("P%d", i)
	}
	var sink localtable.Properties
	const maps = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range maps {
		p := make(localtable.Properties, n)
		for _, name := range names {
			p[name] = localtable.Int32Value(1)
		}
		sink = p
	}
	runtime.ReadMemStats(&after)
	_ = sink
	return float64(after.TotalAlloc-before.TotalAlloc) / maps
}

// TestDecodeAllocations checks what reading an entity allocates on the
// memory engine, whose records the decoded strings view: a Get allocates
// its Properties map and its ETag; a query's page allocates the
// map of each entity it returns, plus the page (the entities of one
// transaction share their ETag).
func TestDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	const rows = 200
	acts := make([]localtable.Action, 0, 100)
	for i := range rows {
		acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: benchEntity("p", fmt.Sprintf("r%04d", i))})
		if len(acts) == cap(acts) {
			if _, err := tbl.Transact(ctx, acts); err != nil {
				t.Fatal(err)
			}
			acts = acts[:0]
		}
	}
	floor := mapAllocs(len(benchEntity("", "").Properties))
	get := leastAllocs(100, func() {
		if _, err := tbl.Get(ctx, "p", "r0042", nil); err != nil {
			t.Fatal(err)
		}
	})
	if get > floor+1 {
		t.Errorf("Get: %.0f allocations; want at most %.0f (its map) + 1", get, floor)
	}
	query := leastAllocs(10, func() {
		page, err := tbl.Query(ctx, nil)
		if err != nil || len(page.Entities) != rows {
			t.Fatalf("%d entities, %v", len(page.Entities), err)
		}
	})
	if per := query / rows; per > floor+0.1 {
		t.Errorf("Query: %.2f allocations per entity; want at most %.0f (its map) + 0.1", per, floor)
	}
	// The page is made at its length: the bytes per entity are its map's
	// and its own, not those of a slice grown by doubling.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const queries = 20
	for range queries {
		if page, err := tbl.Query(ctx, nil); err != nil || len(page.Entities) != rows {
			t.Fatalf("%d entities, %v", len(page.Entities), err)
		}
	}
	runtime.ReadMemStats(&after)
	perEntity := float64(after.TotalAlloc-before.TotalAlloc) / (queries * rows)
	want := mapBytes(len(benchEntity("", "").Properties)) + float64(unsafe.Sizeof(localtable.Entity{}))
	if perEntity > want*1.05 {
		t.Errorf("Query: %.0f bytes allocated per entity; want at most %.0f (its map and its Entity) + 5%%", perEntity, want)
	}
}
