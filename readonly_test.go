package localtable

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage/pebble"
)

// TestReadOnly opens a pebble store of an older format read-only, as the
// CLI's offline reads do: every read works (entities, queries, the feed's
// history, Verify, which takes the older format for what it is), every write fails with ErrReadOnly
// and writes nothing, and the store's format is left as it was until an
// account that writes opens it.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(&Options{Engine: db, Feed: &FeedOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := a.CreateTable(ctx, "Orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"a", "b", "c"} {
		if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: rk, Properties: Properties{"Total": Int64Value(int64(len(rk)))}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.CreateIndex(ctx, "byTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	setKey(t, db, metaFormat, encodeFormat(2)) // as an older build left it
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	format := func() uint64 {
		t.Helper()
		db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		v, c, err := db.Get(metaFormat)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return binary.BigEndian.Uint64(v)
	}

	db, err = pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err = Open(&Options{Engine: db, Feed: &FeedOptions{}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl = a.Table("Orders")
	if e, err := tbl.Get(ctx, "p", "b", nil); err != nil || e.Properties["Total"].Int64() != 1 {
		t.Errorf("Get: %v, %v", e, err)
	}
	page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{p: "Total", v: Int64Value(1)}})
	if err != nil || len(page.Entities) != 3 {
		t.Errorf("Query: %d entities, %v", len(page.Entities), err)
	}
	if rep, err := a.Verify(ctx); err != nil || !rep.OK() {
		t.Errorf("Verify: %v, %v", rep, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	n := 0
	for c, err := range a.Watch(wctx, &WatchOptions{Table: "Orders"}) {
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		if c.Kind == ChangeInsert {
			n++
		}
		if n == 3 {
			break
		}
	}
	cancel()
	if n != 3 {
		t.Errorf("Watch read %d inserts of the history, want 3", n)
	}

	cp, err := a.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]func() error{
		"Insert": func() error {
			_, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "d"})
			return err
		},
		"Delete":      func() error { return tbl.Delete(ctx, "p", "a", nil) },
		"CreateTable": func() error { _, err := a.CreateTable(ctx, "Other"); return err },
		"DeleteTable": func() error { return a.DeleteTable(ctx, "Orders") },
		"CreateIndex": func() error { return tbl.CreateIndex(ctx, "byOther", "Other") },
		"SetExpiry":   func() error { return tbl.SetExpiry(ctx, "Ends") },
		"Restore":     func() error { return a.Restore(ctx, cp) },
	}
	for what, w := range writes {
		if err := w(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only account: %v, want ErrReadOnly", what, err)
		}
	}
	cp.Close()
	if n, err := tbl.Count(ctx, nil); err != nil || n != 3 {
		t.Errorf("after the refused writes: %d entities, %v; want 3", n, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if v := format(); v != 2 {
		t.Errorf("after a read-only open the store's format is %d, want 2 as it was", v)
	}

	db, err = pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err = Open(&Options{Engine: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if v := format(); v != formatVersion {
		t.Errorf("after an open for writing the store's format is %d, want %d", v, formatVersion)
	}
}

// TestReadOnlyEngines checks Options.ReadOnly on the other strategies: an
// empty memory engine opened read-only reads as empty and refuses writes,
// and on a shared engine (the versioned strategy, as etcd's) a read-only
// account reads what another process's account wrote, follows its next
// writes, and writes nothing itself.
func TestReadOnlyEngines(t *testing.T) {
	ctx := context.Background()
	t.Run("memory", func(t *testing.T) {
		a, err := Open(&Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		n := 0
		for _, err := range a.Tables(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 0 {
			t.Errorf("%d tables in a new engine", n)
		}
		if _, err := a.CreateTable(ctx, "Orders"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("CreateTable: %v, want ErrReadOnly", err)
		}
	})
	t.Run("shared", func(t *testing.T) {
		store := sharedmem.New()
		w, err := Open(&Options{Engine: store.Open()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		tbl, err := w.CreateTable(ctx, "Orders")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "a"}); err != nil {
			t.Fatal(err)
		}
		r, err := Open(&Options{Engine: store.Open(), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Table("Orders").Get(ctx, "p", "a", nil); err != nil {
			t.Errorf("the reader's Get of the writer's entity: %v", err)
		}
		if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: "b"}); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Table("Orders").Count(ctx, nil); err != nil || n != 2 {
			t.Errorf("the reader's Count after the writer's next insert: %d, %v; want 2", n, err)
		}
		if _, err := r.Table("Orders").Insert(ctx, Entity{PartitionKey: "p", RowKey: "c"}); !errors.Is(err, ErrReadOnly) {
			t.Errorf("the reader's Insert: %v, want ErrReadOnly", err)
		}
		if err := r.DeleteTable(ctx, "Orders"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("the reader's DeleteTable: %v, want ErrReadOnly", err)
		}
		if n, err := tbl.Count(ctx, nil); err != nil || n != 2 {
			t.Errorf("the writer's Count: %d, %v; want 2", n, err)
		}
	})
}
