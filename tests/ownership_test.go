package tests

import (
	"errors"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

// TestEngineOwnedByOneAccount opens a second Account over an engine that
// an Account already owns. Both would allocate table ID 1, so their tables
// would share entities and neither's ETags would protect its writes: the
// second Open must fail with ErrEngineInUse, without closing the engine
// under the first Account.
func TestEngineOwnedByOneAccount(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		e := eng.Open(t)
		a, err := localtable.Open(&localtable.Options{Engine: e})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := localtable.Open(&localtable.Options{Engine: e})
		if err == nil {
			// Show what sharing does before failing.
			ta, _ := a.CreateTable(ctx, "Alpha")
			tb, _ := b.CreateTable(ctx, "Beta")
			if ta != nil && tb != nil {
				ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"})
				if _, err := tb.Get(ctx, "p", "r", nil); err == nil {
					t.Fatal("a second Account opened on an owned engine, and an entity inserted in its table Alpha is read from the other's table Beta")
				}
			}
			t.Fatal("a second Account opened on an engine another Account owns")
		}
		if !errors.Is(err, localtable.ErrEngineInUse) {
			t.Fatalf("second Open: %v, want ErrEngineInUse", err)
		}
		t.Logf("second Open: %v", err)
		// The failed Open left the engine to its owner.
		tbl, err := a.CreateTable(ctx, "Alpha")
		if err != nil {
			t.Fatalf("the owner after a refused Open: %v", err)
		}
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
			t.Fatalf("the owner after a refused Open: %v", err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		// Closing the owner closes the engine: an Account cannot be opened
		// over it any more, and says so.
		if _, err := localtable.Open(&localtable.Options{Engine: e}); err == nil {
			t.Fatal("Open on the engine the first Account closed succeeded")
		}
	})
}

// TestPebbleDirectoryOwned opens an Account over a pebble directory, then
// tries a second pebble.Open of it: refused with pebble.ErrInUse. After
// the Account is closed, the directory opens again with its data.
func TestPebbleDirectoryOwned(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTable(ctx, "Kept"); err != nil {
		t.Fatal(err)
	}
	if db2, err := pebble.Open(dir, nil); !errors.Is(err, pebble.ErrInUse) {
		if err == nil {
			db2.Close()
		}
		t.Fatalf("second pebble.Open of an Account's directory: %v, want ErrInUse", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = pebble.Open(dir, nil)
	if err != nil {
		t.Fatalf("pebble.Open after Close: %v", err)
	}
	a, err = localtable.Open(&localtable.Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.GetTable(ctx, "Kept"); err != nil {
		t.Fatal(err)
	}
}
