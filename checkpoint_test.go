package localtable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/pebble"
)

// Restore returns tables, entities (with their Timestamps and ETags) and
// access policies to the checkpoint, on every engine; later writes get
// Timestamps after everything handed out before the Restore.
func TestCheckpointRestore(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		ctx := context.Background()
		a := tabletest.OpenAccount(t, eng, nil)
		orders, _ := a.CreateTable(ctx, "orders")
		if _, err := orders.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "1", Properties: localtable.Properties{"N": localtable.Int32Value(1)}}); err != nil {
			t.Fatal(err)
		}
		policy := []localtable.AccessPolicy{{ID: "read", Permission: "r"}}
		if err := orders.SetAccessPolicy(ctx, policy); err != nil {
			t.Fatal(err)
		}
		before, _ := orders.Get(ctx, "p", "1", nil)
		cp, err := a.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()

		// Diverge: a new table, a deleted-and-recreated one, changed
		// entities and policies.
		a.CreateTable(ctx, "later")
		if err := a.DeleteTable(ctx, "orders"); err != nil {
			t.Fatal(err)
		}
		orders, _ = a.CreateTable(ctx, "orders")
		orders.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "2"})
		var lastTag localtable.ETag
		for range 3 {
			if lastTag, err = orders.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "1", Properties: localtable.Properties{"N": localtable.Int32Value(9)}}, nil); err != nil {
				t.Fatal(err)
			}
		}

		for round := range 2 {
			if err := a.Restore(ctx, cp); err != nil {
				t.Fatal(err)
			}
			if _, err := a.GetTable(ctx, "later"); !errors.Is(err, localtable.ErrTableNotFound) {
				t.Fatalf("round %d: a table created after the checkpoint survived: %v", round, err)
			}
			got, err := orders.Get(ctx, "p", "1", nil)
			if err != nil || got.ETag != before.ETag || !got.Timestamp.Equal(before.Timestamp) || got.Properties["N"].Int32() != 1 {
				t.Fatalf("round %d: entity after Restore %+v (%v), want %+v", round, got, err, before)
			}
			if _, err := orders.Get(ctx, "p", "2", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Fatalf("round %d: an entity written after the checkpoint survived: %v", round, err)
			}
			if ps, err := orders.GetAccessPolicy(ctx); err != nil || len(ps) != 1 || ps[0].ID != "read" {
				t.Fatalf("round %d: policies %v (%v)", round, ps, err)
			}
			// The clock does not go back.
			tag, err := orders.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "3"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tt, _ := tag.Time()
			lt, _ := lastTag.Time()
			if !tt.After(lt) {
				t.Fatalf("round %d: a write after Restore got Timestamp %v, not after %v", round, tt, lt)
			}
			lastTag = tag
			// New tables get fresh IDs and work.
			if _, err := a.CreateTable(ctx, "fresh"); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestCheckpointErrors(t *testing.T) {
	ctx := context.Background()
	a := tabletest.OpenAccount(t, tabletest.Engines[0], nil)
	b := tabletest.OpenAccount(t, tabletest.Engines[0], nil)
	cp, err := b.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Restore(ctx, cp); !errors.Is(err, localtable.ErrInvalidInput) {
		t.Fatalf("Restore of another account's checkpoint: %v", err)
	}
	cp.Close()
	if err := b.Restore(ctx, cp); !errors.Is(err, localtable.ErrClosed) {
		t.Fatalf("Restore of a closed checkpoint: %v", err)
	}
	if err := cp.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	a.Close()
	if _, err := a.Checkpoint(ctx); !errors.Is(err, localtable.ErrClosed) {
		t.Fatalf("Checkpoint of a closed account: %v", err)
	}
}

// Restores racing with writes and table creations leave a consistent key
// space: no entity of a table missing from the catalog, and the catalog
// the engine holds is the one the account serves.
func TestCheckpointRestoreUnderWrites(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		ctx := context.Background()
		a := tabletest.OpenAccount(t, eng, nil)
		a.CreateTable(ctx, "kept")
		cp, err := a.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w, table := range []string{"kept", "later"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					a.CreateTableIfNotExists(ctx, table)
					_, err := a.Table(table).Upsert(ctx, localtable.Entity{PartitionKey: fmt.Sprint(w), RowKey: fmt.Sprint(i % 50)}, nil)
					if err != nil && !errors.Is(err, localtable.ErrTableNotFound) {
						t.Error(err)
						return
					}
				}
			}()
		}
		for range 30 {
			if err := a.Restore(ctx, cp); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		ids := checkKeySpace(t, localtable.EngineOf(a))
		for name := range ids {
			if _, err := a.GetTable(ctx, name); err != nil {
				t.Errorf("table %s is in the engine, not in the catalog: %v", name, err)
			}
		}
		page, _ := a.ListTables(ctx, nil)
		if len(page.Tables) != len(ids) {
			t.Errorf("catalog %v, engine %v", page.Tables, ids)
		}
	})
}

// TestCloseNamesOpenCheckpoint: closing a pebble account with a
// checkpoint left open fails with an error that says so.
func TestCloseNamesOpenCheckpoint(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := localtable.Open(&localtable.Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err == nil || !strings.Contains(err.Error(), "1 Checkpoint(s) of the account still open") {
		t.Fatalf("Close with a checkpoint open: %v", err)
	}
}
