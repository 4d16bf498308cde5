package tests

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

var deleteEntities = flag.Int("delete.entities", 20_000, "entities TestDeleteLargeTable loads (try 1000000)")

// TestDeleteLargeTable loads a table on pebble with Transact batches of 100
// and times DeleteTable, which is one range deletion whatever the table's
// size. The default size keeps CI fast; -delete.entities=1000000 measures
// the case of a million entities.
func TestDeleteLargeTable(t *testing.T) {
	n := *deleteEntities
	if n%localtable.MaxTransactionActions != 0 {
		t.Fatalf("-delete.entities must be a multiple of %d", localtable.MaxTransactionActions)
	}
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{NoSync: true}) // a quick load
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := a.CreateTable(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	keep, err := a.CreateTable(ctx, "neighbour")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keep.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	acts := make([]localtable.Action, localtable.MaxTransactionActions)
	for b := range n / len(acts) {
		pk := fmt.Sprintf("p%06d", b)
		for i := range acts {
			acts[i] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
				PartitionKey: pk, RowKey: fmt.Sprintf("r%03d", i),
				Properties: localtable.Properties{"N": localtable.Int32Value(int32(b*100 + i))},
			}}
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)

	// Delete with sync on commit, as in production.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if db, err = pebble.Open(dir, nil); err != nil {
		t.Fatal(err)
	}
	if a, err = localtable.Open(&localtable.Options{Engine: db}); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	reopen := time.Since(start)
	keep = a.Table("neighbour")

	start = time.Now()
	if err := a.DeleteTable(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	del := time.Since(start)

	start = time.Now()
	raw := countRaw(t, db, []byte("e"), []byte("f"))
	rawScan := time.Since(start)
	if raw != 1 {
		t.Fatalf("engine holds %d entity keys after DeleteTable, want the neighbour's 1", raw)
	}
	tbl, err = a.CreateTable(ctx, "Big")
	if err != nil {
		t.Fatal(err)
	}
	page, err := tbl.Query(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entities) != 0 || page.Stats.Scanned != 0 || !page.Continuation.IsZero() {
		t.Fatalf("re-created table: %d entities, %d scanned", len(page.Entities), page.Stats.Scanned)
	}
	if _, err := keep.Get(ctx, "p", "r", nil); err != nil {
		t.Fatalf("neighbour table lost its entity: %v", err)
	}
	t.Logf("%d entities: load (Transact x100, NoSync, then Sync) %v (%.0f entities/s); reopen (sync on) %v; DeleteTable %v (%.4f%% of the load); full engine scan after it %v",
		n, load.Round(time.Millisecond), float64(n)/load.Seconds(), reopen.Round(time.Microsecond), del, 100*del.Seconds()/load.Seconds(), rawScan)
}

// countRaw counts the engine's keys in [lo, hi).
func countRaw(t *testing.T, eng storage.Engine, lo, hi []byte) int {
	t.Helper()
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return n
}
