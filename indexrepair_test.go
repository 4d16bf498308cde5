package localtable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/localtable/localtable/internal/keyenc"
)

// TestPlanRebuildIndex: the first commit of a rebuild writes the record
// with the index not ready and its build not begun, and range-deletes its
// entries; the other indexes are untouched; an undeclared name is
// ErrIndexNotFound.
func TestPlanRebuildIndex(t *testing.T) {
	if _, _, _, err := planRebuildIndex("Gone", "gone", nil, false, "i"); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("a missing table: %v", err)
	}
	rec := tableRecord{ID: 4, Name: "Orders", Indexes: []indexDef{
		{ID: 2, Name: "a", Props: []string{"P"}, Ready: true},
		{ID: 3, Name: "b", Props: []string{"Q"}, Cursor: []byte("k")},
	}}
	stored := rec.append(nil)
	for _, name := range []string{"a", "b"} {
		got, def, ws, err := planRebuildIndex("Orders", "orders", stored, true, name)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(got.Indexes, func(x indexDef) bool { return x.Name == name })
		if x := got.Indexes[i]; x.Ready || x.Cursor != nil || def.ID != x.ID || !slices.Equal(x.Props, rec.Indexes[i].Props) {
			t.Fatalf("rebuild %s: %+v, def %+v", name, x, def)
		}
		if other := got.Indexes[1-i]; other.Ready != rec.Indexes[1-i].Ready || string(other.Cursor) != string(rec.Indexes[1-i].Cursor) {
			t.Fatalf("rebuild %s changed %+v", name, other)
		}
		if !rec.Indexes[0].Ready || string(rec.Indexes[1].Cursor) != "k" {
			t.Fatal("the plan changed the record it was given")
		}
		prefix := keyenc.AppendIndexPrefix(nil, 4, def.ID)
		if len(ws) != 2 || string(ws[0].key) != string(keyenc.CatalogKey("orders")) || !ws[1].del || string(ws[1].key) != string(prefix) || string(ws[1].end) != string(keyenc.PrefixEnd(prefix)) {
			t.Fatalf("rebuild %s: writes %+v", name, ws)
		}
		back, err := decodeTableRecord(ws[0].value)
		if err != nil || back.Indexes[i].Ready || back.Indexes[i].Cursor != nil {
			t.Fatalf("the record written: %+v, %v", back, err)
		}
	}
	if _, _, _, err := planRebuildIndex("Orders", "orders", stored, true, "c"); !errors.Is(err, ErrIndexNotFound) {
		t.Fatalf("an undeclared index: %v", err)
	}
}

// TestRebuildIndexSteps: from the rebuild's first commit the damaged
// index is empty and not ready, queries scan, Verify finds it right (no
// entity built yet); writes before and after the cursor keep it; a
// rebuild stopped midway resumes with CreateIndex, and ends ready and
// right.
func TestRebuildIndexSteps(t *testing.T) {
	defer func(n int) { indexBuildChunk = n }(indexBuildChunk)
	indexBuildChunk = 7
	ctx := context.Background()
	for name, open := range testIndexEngines() {
		t.Run(name, func(t *testing.T) {
			a, tbl := openOrders(t, open)
			for i := range 40 {
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int32Value(int32(i % 5))}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			// Damage: the entry of "03" deleted, a stale one for "04".
			lt, _ := a.lookup(ctx, "Orders")
			x := &(*lt.indexes.Load())[0]
			b := a.eng.NewBatch()
			b.Delete(appendIndexEntry(nil, lt.id, x, keyenc.AppendEntityKey(nil, lt.id, "p", "03"), []Value{Int32Value(3)}))
			b.Set(appendIndexEntry(nil, lt.id, x, keyenc.AppendEntityKey(nil, lt.id, "p", "04"), []Value{Int32Value(3)}), emptyValue)
			if err := b.Commit(true); err != nil {
				t.Fatal(err)
			}
			rep, err := a.Verify(ctx)
			if err != nil || rep.OK() || !slices.Equal(rep.Tables[0].RepairIndexes, []string{"byV"}) {
				t.Fatalf("Verify of the damaged index: %+v, %v", rep, err)
			}
			id, err := tbl.restartIndex(ctx, "byV")
			if err != nil {
				t.Fatal(err)
			}
			verifyOK(t, a)
			if infos, _ := tbl.Indexes(ctx); infos[0].Ready {
				t.Fatalf("Indexes after the rebuild's first commit = %+v", infos)
			}
			for step := range 3 {
				done, err := tbl.buildStep(ctx, id, indexBuildChunk)
				if err != nil || done {
					t.Fatalf("step %d: %v, done %v", step, err, done)
				}
			}
			page, err := tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
			if err != nil || page.Stats.Index != "" {
				t.Fatalf("a query mid-rebuild read index %q (%v)", page.Stats.Index, err)
			}
			for _, rk := range []string{"02", "32"} { // V was 2: now 3
				if _, err := tbl.Upsert(ctx, Entity{PartitionKey: "p", RowKey: rk, Properties: Properties{"V": Int32Value(3)}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, rk := range []string{"08", "38"} { // V was 3
				if err := tbl.Delete(ctx, "p", rk, nil); err != nil {
					t.Fatal(err)
				}
			}
			verifyOK(t, a)
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			verifyOK(t, a)
			page, err = tbl.Query(ctx, &QueryOptions{Filter: indexEq{"V", Int32Value(3)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range page.Entities {
				got = append(got, e.RowKey)
			}
			if want := []string{"02", "03", "13", "18", "23", "28", "32", "33"}; !slices.Equal(got, want) || page.Stats.Index != "byV" {
				t.Fatalf("V eq 3 = %v via %q; want %v via byV", got, page.Stats.Index, want)
			}
		})
	}
}

// TestRebuildDuringAStep: a rebuild that restarts the build between a
// step's listing of its keys and its commit makes that step write
// nothing (the cursor it listed after is gone), so the build resumed
// from the start indexes every entity: Verify is clean once it is ready.
func TestRebuildDuringAStep(t *testing.T) {
	defer func(n int) { indexBuildChunk = n }(indexBuildChunk)
	indexBuildChunk = 7
	ctx := context.Background()
	for name, open := range testIndexEngines() {
		t.Run(name, func(t *testing.T) {
			a, tbl := openOrders(t, open)
			for i := range 40 {
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: Properties{"V": Int32Value(int32(i % 5))}}); err != nil {
					t.Fatal(err)
				}
			}
			id, _, err := tbl.declareIndex(ctx, "byV", []string{"V"}, false)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := tbl.buildStep(ctx, id, indexBuildChunk); err != nil {
					t.Fatal(err)
				}
			}
			a.beforeCatalogCommit = func(op, _ string) {
				if op == "index-listed" {
					a.beforeCatalogCommit = nil
					if _, err := tbl.restartIndex(ctx, "byV"); err != nil {
						t.Error(err)
					}
				}
			}
			if done, err := tbl.buildStep(ctx, id, indexBuildChunk); err != nil || done {
				t.Fatalf("the step the rebuild overtook: %v, done %v", err, done)
			}
			verifyOK(t, a)
			if err := tbl.CreateIndex(ctx, "byV", "V"); err != nil {
				t.Fatal(err)
			}
			verifyOK(t, a)
		})
	}
}
