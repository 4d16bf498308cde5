package tests

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage/memory"
)

// TestIndexCoveringWrites checks that a query through an index returns
// each entity as it is now after writes that leave its indexed value as
// it was: a covering index's entries hold the records, so every write of
// an entity must set its entries again, not only those that move it in
// the index. Each write is followed by the differential comparison of the
// pages through the index with the scan's (entities with their ETags,
// Timestamps and properties, $select, paging), and Verify.
func TestIndexCoveringWrites(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		// Covering on pebble too (not on a shared engine, which checks the
		// index that fetches).
		a := tabletest.OpenAccount(t, e, &localtable.Options{Engine: e.Open(t), IndexRecords: localtable.IndexRecordsAlways})
		tbl, err := a.CreateTable(ctx, "Covering")
		tabletest.Must(t, err)
		var acts []localtable.Action
		for i := range 60 {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", fmt.Sprintf("%02d", i), "V", int32(i%10), "W", "w0")})
		}
		_, err = tbl.Transact(ctx, acts)
		tabletest.Must(t, err)
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		f := mustParse(t, "V eq 3")
		check := func(what string, wantW string) {
			t.Helper()
			page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
			tabletest.Must(t, err)
			if page.Stats.Index != "byV" || len(page.Entities) != 6 {
				t.Fatalf("%s: %d entities through index %q; want 6 through byV", what, len(page.Entities), page.Stats.Index)
			}
			if got := page.Entities[0].Properties["W"].String(); got != wantW {
				t.Errorf("%s: the index returns W %q for %s; want %q", what, got, page.Entities[0].RowKey, wantW)
			}
			for _, o := range []localtable.QueryOptions{
				{Filter: f},
				{Filter: f, PageSize: 2},
				{Filter: f, Select: []string{"W"}, PageSize: 4},
			} {
				if d := comparePages(tbl, o); d != "" {
					t.Errorf("%s: %s", what, d)
				}
			}
			mustVerify(t, a)
		}
		check("after the build", "w0")
		// "03" is the first entity with V 3; each write keeps V 3.
		_, err = tbl.Update(ctx, tabletest.Ent("p", "03", "V", int32(3), "W", "replaced"), nil)
		tabletest.Must(t, err)
		check("after a replace", "replaced")
		_, err = tbl.Update(ctx, tabletest.Ent("p", "03", "W", "merged"), &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge})
		tabletest.Must(t, err)
		check("after a merge", "merged")
		_, err = tbl.Upsert(ctx, tabletest.Ent("p", "03", "V", int32(3), "W", "upserted", "X", int64(1)), nil)
		tabletest.Must(t, err)
		check("after an upsert", "upserted")
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpsertMerge, Entity: tabletest.Ent("p", "03", "W", "in a transaction")},
			{Type: localtable.ActionUpdateReplace, Entity: tabletest.Ent("p", "13", "V", int32(3), "W", "other")},
			{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", "60", "V", int32(4))},
		})
		tabletest.Must(t, err)
		check("after a transaction", "in a transaction")
		// Rebuilt, the entries hold the records as they are.
		tabletest.Must(t, tbl.RebuildIndex(ctx, "byV"))
		check("after a rebuild", "in a transaction")
	})
}

// TestIndexCoveringDefault: by default an index is covering on the memory
// engine (an entity shares its record with its entry) and not on pebble
// (each entry would hold a copy) nor on a shared engine; IndexRecordsAlways
// makes pebble's covering.
func TestIndexCoveringDefault(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		for _, rec := range []localtable.IndexRecords{localtable.IndexRecordsDefault, localtable.IndexRecordsAlways} {
			a := tabletest.OpenAccount(t, e, &localtable.Options{Engine: e.Open(t), IndexRecords: rec})
			tbl, err := a.CreateTable(ctx, "Default")
			tabletest.Must(t, err)
			tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
			infos, err := tbl.Indexes(ctx)
			tabletest.Must(t, err)
			want := e.Name == "memory" || (rec == localtable.IndexRecordsAlways && e.Name != "shared")
			if len(infos) != 1 || infos[0].Covering != want {
				t.Errorf("IndexRecords %d: Indexes = %+v; want byV, covering %v", rec, infos, want)
			}
		}
	})
}

// TestIndexCoveringVerify damages the record a covering index's entry
// holds, behind the store's back (the entry of an entity rewritten with
// another record, or emptied): Verify reports it and names the index for
// repair, and RebuildIndex repairs it.
func TestIndexCoveringVerify(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		if e.Name == "shared" {
			t.Skip("indexes are not covering on a shared engine")
		}
		eng := e.Open(t)
		a := tabletest.OpenAccount(t, e, &localtable.Options{Engine: eng, IndexRecords: localtable.IndexRecordsAlways})
		tbl, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		for i := range 10 {
			_, err := tbl.Insert(ctx, tabletest.Ent("p", fmt.Sprintf("%02d", i), "V", int32(i), "W", "w"))
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		mustVerify(t, a)
		entries := indexEntries(t, eng, 1)
		if len(entries) != 10 {
			t.Fatalf("byV has %d entries; want 10", len(entries))
		}
		// Entry 0's value takes entity 01's record after entity 00's key;
		// entry 2's is emptied.
		v0, c0, err := eng.Get(entries[0])
		tabletest.Must(t, err)
		v1, c1, err := eng.Get(entries[1])
		tabletest.Must(t, err)
		k0 := keyenc.AppendEntityKey(nil, tableIDOf(entries[0]), "p", "00")
		k1 := keyenc.AppendEntityKey(nil, tableIDOf(entries[0]), "p", "01")
		if !bytes.HasPrefix(v0, k0) || !bytes.HasPrefix(v1, k1) {
			t.Fatalf("the entries' values do not start with their entities' keys: %q, %q", v0, v1)
		}
		damaged := append(bytes.Clone(k0), v1[len(k1):]...)
		c0.Close()
		c1.Close()
		b := eng.NewBatch()
		b.Set(entries[0], damaged)
		b.Set(entries[2], []byte{})
		tabletest.Must(t, b.Commit(true))
		rep, err := a.Verify(ctx)
		tabletest.Must(t, err)
		problems := strings.Join(rep.Tables[0].Problems, "\n")
		for _, want := range []string{`does not hold the record of entity ("p", "00")`, `does not hold the record of entity ("p", "02")`} {
			if !strings.Contains(problems, want) {
				t.Errorf("Verify does not report %q:\n%s", want, problems)
			}
		}
		if len(rep.Tables[0].RepairIndexes) != 1 || rep.Tables[0].RepairIndexes[0] != "byV" {
			t.Fatalf("RepairIndexes = %v; want byV", rep.Tables[0].RepairIndexes)
		}
		tabletest.Must(t, tbl.RebuildIndex(ctx, "byV"))
		mustVerify(t, a)
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: mustParse(t, "V eq 0")})
		tabletest.Must(t, err)
		if page.Stats.Index != "byV" || len(page.Entities) != 1 || page.Entities[0].RowKey != "00" || page.Entities[0].Properties["V"].Int32() != 0 {
			t.Fatalf("V eq 0 after the repair: %v via %q", tabletest.KeysOf(page.Entities), page.Stats.Index)
		}
	})
}

// tableIDOf returns the table ID of an index entry's key.
func tableIDOf(entry []byte) uint64 {
	var id uint64
	for _, c := range entry[1:keyenc.TablePrefixLen] {
		id = id<<8 | uint64(c)
	}
	return id
}

// TestIndexCoveringSharesRecord checks that on the memory engine a
// covering index's entry costs no copy of its entity's record: the entity
// and the entry of its first covering index share one buffer, after the
// build (which writes the entity again, as it was, with the entry) and
// after a write or a transaction, the feed off or on (the feed's record
// then holds a copy).
func TestIndexCoveringSharesRecord(t *testing.T) {
	ctx := context.Background()
	for _, feed := range []bool{false, true} {
		eng := memory.New(nil)
		opts := &localtable.Options{Engine: eng}
		if feed {
			opts.Feed = &localtable.FeedOptions{}
		}
		a, err := localtable.Open(opts)
		tabletest.Must(t, err)
		defer a.Close()
		tbl, err := a.CreateTable(ctx, "Shares")
		tabletest.Must(t, err)
		for i := range 5 {
			_, err := tbl.Insert(ctx, tabletest.Ent("p", fmt.Sprint(i), "V", int32(i)))
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV2", "V", "W"))
		shared := func(rk string) (first, second bool) {
			t.Helper()
			entries := [][][]byte{indexEntries(t, eng, 1), indexEntries(t, eng, 2)}
			ek := keyenc.AppendEntityKey(nil, tableIDOf(entries[0][0]), "p", rk)
			ev, c, err := eng.Get(ek)
			tabletest.Must(t, err)
			defer c.Close()
			var out [2]bool
			for i, es := range entries {
				for _, k := range es {
					v, c, err := eng.Get(k)
					tabletest.Must(t, err)
					if bytes.HasPrefix(v, ek) {
						if !bytes.Equal(v[len(ek):], ev) {
							t.Fatalf("index %d's entry of %s holds %q; the entity's record is %q", i+1, rk, v[len(ek):], ev)
						}
						out[i] = unsafe.SliceData(v[len(ek):]) == unsafe.SliceData(ev)
					}
					c.Close()
				}
			}
			return out[0], out[1]
		}
		if first, second := shared("1"); !first || second {
			t.Errorf("feed %v: after the build, the entity shares its record with the first index's entry: %v, the second's: %v; want true, false", feed, first, second)
		}
		_, err = tbl.Upsert(ctx, tabletest.Ent("p", "1", "V", int32(1), "W", "x"), nil)
		tabletest.Must(t, err)
		if first, second := shared("1"); !first || second {
			t.Errorf("feed %v: after an upsert, the entity shares its record with the first index's entry: %v, the second's: %v; want true, false", feed, first, second)
		}
		_, err = tbl.Transact(ctx, []localtable.Action{
			{Type: localtable.ActionUpsertMerge, Entity: tabletest.Ent("p", "2", "W", "y")},
			{Type: localtable.ActionUpsertMerge, Entity: tabletest.Ent("p", "3", "W", "y")},
		})
		tabletest.Must(t, err)
		for _, rk := range []string{"2", "3"} {
			if first, second := shared(rk); !first || second {
				t.Errorf("feed %v: after a transaction, entity %s shares its record with the first index's entry: %v, the second's: %v; want true, false", feed, rk, first, second)
			}
		}
		mustVerify(t, a)
	}
}

// TestIndexNonCovering: an account opened with IndexRecordsNever declares
// plain indexes (not covering) on the memory engine too, whose
// pages fetch their entities (Stats.Scanned counts entries and fetches),
// with the answers of the scan, and entries with no value (Verify).
func TestIndexNonCovering(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		eng := e.Open(t)
		a := tabletest.OpenAccount(t, e, &localtable.Options{Engine: eng, IndexRecords: localtable.IndexRecordsNever})
		tbl, err := a.CreateTable(ctx, "Plain")
		tabletest.Must(t, err)
		for i := range 30 {
			_, err := tbl.Insert(ctx, tabletest.Ent("p", fmt.Sprintf("%02d", i), "V", int32(i%10)))
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		infos, err := tbl.Indexes(ctx)
		if err != nil || len(infos) != 1 || infos[0].Covering {
			t.Fatalf("Indexes = %+v, %v; want byV, not covering", infos, err)
		}
		f := mustParse(t, "V eq 3")
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f})
		tabletest.Must(t, err)
		if page.Stats.Index != "byV" || len(page.Entities) != 3 || page.Stats.Scanned != 6 {
			t.Fatalf("V eq 3: %d entities through %q, scanned %d; want 3 through byV, scanned 6 (3 entries, 3 fetches)", len(page.Entities), page.Stats.Index, page.Stats.Scanned)
		}
		if d := comparePages(tbl, localtable.QueryOptions{Filter: f, PageSize: 2}); d != "" {
			t.Error(d)
		}
		for _, k := range indexEntries(t, eng, 1) {
			v, c, err := eng.Get(k)
			tabletest.Must(t, err)
			if len(v) != 0 {
				t.Fatalf("entry %q holds %d bytes; want none", k, len(v))
			}
			c.Close()
		}
		mustVerify(t, a)
	})
}
