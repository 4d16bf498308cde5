package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// indexEntries returns the keys of the index entries of index ID id in
// eng, read behind the account's back.
func indexEntries(t *testing.T, eng storage.Engine, id uint32) [][]byte {
	t.Helper()
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixIndex}, UpperBound: []byte{keyenc.PrefixIndex + 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) >= keyenc.IndexPrefixLen && binary.BigEndian.Uint32(k[keyenc.TablePrefixLen:keyenc.IndexPrefixLen]) == id {
			out = append(out, bytes.Clone(k))
		}
	}
	return out
}

// TestIndexRepair damages an index behind the store's back (an entry
// deleted, one changed to another value, one left by an entity deleted
// around the store): Verify reports each and names the index (and only
// it) for repair; RebuildIndex repairs it, Verify is clean, and the
// query reads the index again with the right answer.
func TestIndexRepair(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		eng := e.Open(t)
		a := tabletest.OpenAccount(t, e, &localtable.Options{Engine: eng})
		tbl, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		var acts []localtable.Action
		for i := range 70 {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: tabletest.Ent("p", fmt.Sprintf("%02d", i), "V", int32(i%7), "W", fmt.Sprint("w", i%3))})
		}
		_, err = tbl.Transact(ctx, acts)
		tabletest.Must(t, err)
		tabletest.Must(t, tbl.CreateIndex(ctx, "byV", "V"))
		tabletest.Must(t, tbl.CreateIndex(ctx, "byW", "W", "V"))
		mustVerify(t, a)

		entries := indexEntries(t, eng, 1) // byV's, in value order
		if len(entries) != 70 {
			t.Fatalf("byV has %d entries; want 70", len(entries))
		}
		tableID := entries[0][1:keyenc.TablePrefixLen]
		b := eng.NewBatch()
		b.Delete(entries[0]) // missing
		stale := bytes.Clone(entries[1])
		stale[keyenc.IndexPrefixLen+4] ^= 0x01 // the Int32's low byte: another value
		b.Delete(entries[1])
		b.Set(stale, []byte{})
		// An entity deleted around the store leaves its entries extra.
		b.Delete(keyenc.AppendEntityKey(nil, binary.BigEndian.Uint64(tableID), "p", "69"))
		tabletest.Must(t, b.Commit(true))

		rep, err := a.Verify(ctx)
		tabletest.Must(t, err)
		problems := strings.Join(rep.Tables[0].Problems, "\n")
		for _, want := range []string{"index byV: missing entry", "index byV: stale entry", "index byV: extra entry", "index byW: extra entry", "index byV is wrong: Table.RebuildIndex, or localtable index repair Orders byV"} {
			if !strings.Contains(problems, want) {
				t.Errorf("Verify does not report %q:\n%s", want, problems)
			}
		}
		if !slices.Equal(rep.Tables[0].RepairIndexes, []string{"byV", "byW"}) {
			t.Fatalf("RepairIndexes = %v; want byV, byW", rep.Tables[0].RepairIndexes)
		}

		tabletest.Must(t, tbl.RebuildIndex(ctx, "byV"))
		rep, err = a.Verify(ctx)
		tabletest.Must(t, err)
		if !slices.Equal(rep.Tables[0].RepairIndexes, []string{"byW"}) {
			t.Fatalf("after repairing byV, RepairIndexes = %v %v; want byW", rep.Tables[0].RepairIndexes, rep.Tables[0].Problems)
		}
		tabletest.Must(t, tbl.RebuildIndex(ctx, "byW"))
		mustVerify(t, a)
		infos, err := tbl.Indexes(ctx)
		if err != nil || len(infos) != 2 || !infos[0].Ready || !infos[1].Ready {
			t.Fatalf("Indexes after the repair = %+v, %v", infos, err)
		}
		page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: mustParse(t, "V eq 0")})
		tabletest.Must(t, err)
		// V is i%7 for 00..68: 00 07 … 63, ten entities.
		if len(page.Entities) != 10 || page.Stats.Index != "byV" {
			t.Fatalf("V eq 0 after the repair: %v via %q", tabletest.KeysOf(page.Entities), page.Stats.Index)
		}
		if err := tbl.RebuildIndex(ctx, "nope"); !errors.Is(err, localtable.ErrIndexNotFound) {
			t.Fatalf("RebuildIndex of no index: %v", err)
		}
		if err := a.Table("Gone").RebuildIndex(ctx, "byV"); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Fatalf("RebuildIndex on no table: %v", err)
		}
	})
}

// busyWriters runs n writers on tbl until stop is closed: inserts of new
// keys, replaces and merges that change the indexed properties V and W
// (to any Edm type, or away), and deletes, over rows keys of 20
// partitions. It returns a function that stops them and returns the first
// error and the writes made. It returns once each writer has made a
// write.
func busyWriters(ctx context.Context, tbl *localtable.Table, n, rows int) func() (int, error) {
	stop := make(chan struct{})
	var started sync.WaitGroup
	started.Add(n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	writes := 0
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1234))
			for i := 0; ; i++ {
				if i == 1 {
					started.Done()
				}
				select {
				case <-stop:
					mu.Lock()
					writes += i
					mu.Unlock()
					return
				default:
				}
				e := randIndexEntity(rng, fmt.Sprintf("%06d", rng.IntN(rows+rows/10)))
				e.PartitionKey = fmt.Sprintf("p%02d", rng.IntN(20))
				var err error
				switch rng.IntN(4) {
				case 0:
					_, err = tbl.Insert(ctx, e)
					if errors.Is(err, localtable.ErrEntityExists) {
						err = nil
					}
				case 1:
					_, err = tbl.Upsert(ctx, e, nil)
				case 2:
					_, err = tbl.Upsert(ctx, e, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
				default:
					err = tbl.Delete(ctx, e.PartitionKey, e.RowKey, nil)
					if errors.Is(err, localtable.ErrEntityNotFound) {
						err = nil
					}
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					if i == 0 {
						started.Done()
					}
					return
				}
			}
		}()
	}
	started.Wait()
	return func() (int, error) {
		close(stop)
		wg.Wait()
		return writes, first
	}
}

// fillIndexTable inserts n entities of random V and W into tbl, over 20
// partitions, in transactions of 100.
func fillIndexTable(t *testing.T, tbl *localtable.Table, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 5))
	for p := range 20 {
		for start := 0; start < n/20; start += 100 {
			var acts []localtable.Action
			for r := start; r < min(start+100, n/20); r++ {
				e := randIndexEntity(rng, fmt.Sprintf("%06d", r*20))
				e.PartitionKey = fmt.Sprintf("p%02d", p)
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: e})
			}
			_, err := tbl.Transact(context.Background(), acts)
			tabletest.Must(t, err)
		}
	}
}

// TestIndexBuildAndRepairBusyTable builds two indexes on a table of
// 20,000 entities while 4 writers insert, replace and merge (changing the
// indexed properties) and delete, then rebuilds one under the same
// writers: neither fails a write, both end ready and Verify finds every
// index exactly as its table calls for. (A build step holds the table's
// writes in its process for its own duration: writers wait, never fail.)
func TestIndexBuildAndRepairBusyTable(t *testing.T) {
	ctx := context.Background()
	n := 20_000
	if testing.Short() {
		n = 4_000
	}
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		if e.Name == "shared" {
			t.Skip("TestIndexBuildUnderWrites covers the shared engine, with writers of another account")
		}
		a, tbl := tabletest.NewTable(t, e)
		fillIndexTable(t, tbl, n)

		stop := busyWriters(ctx, tbl, 4, n)
		err := tbl.CreateIndex(ctx, "byV", "V")
		err2 := tbl.CreateIndex(ctx, "byWV", "W", "V")
		writes, werr := stop()
		tabletest.Must(t, err)
		tabletest.Must(t, err2)
		tabletest.Must(t, werr)
		t.Logf("%s: %d writes during the build of 2 indexes of %d entities", e.Name, writes, n)
		mustVerify(t, a)

		stop = busyWriters(ctx, tbl, 4, n)
		err = tbl.RebuildIndex(ctx, "byV")
		writes, werr = stop()
		tabletest.Must(t, err)
		tabletest.Must(t, werr)
		t.Logf("%s: %d writes during the rebuild", e.Name, writes)
		mustVerify(t, a)
		infos, err := tbl.Indexes(ctx)
		if err != nil || len(infos) != 2 || !infos[0].Ready || !infos[1].Ready {
			t.Fatalf("Indexes = %+v, %v", infos, err)
		}
	})
}

// TestRebuildExpiryIndex: the index a table's expiry policy reads can be
// rebuilt like any other (while it is not ready the sweeper leaves the
// table, whose expired entities stay hidden: sweeper.go), and the
// sweeper then deletes the expired entities through it; Verify is clean.
func TestRebuildExpiryIndex(t *testing.T) {
	ctx := context.Background()
	tabletest.ForEachEngine(t, func(t *testing.T, e tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, e)
		past := time.Now().Add(-time.Hour)
		for i := range 30 {
			at := past
			if i%3 == 0 {
				at = time.Now().Add(time.Hour)
			}
			_, err := tbl.Insert(ctx, tabletest.Ent("p", fmt.Sprintf("%02d", i), "At", at))
			tabletest.Must(t, err)
		}
		tabletest.Must(t, tbl.SetExpiry(ctx, "At"))
		infos, err := tbl.Indexes(ctx)
		tabletest.Must(t, err)
		if len(infos) != 1 {
			t.Fatalf("Indexes = %+v", infos)
		}
		tabletest.Must(t, tbl.RebuildIndex(ctx, infos[0].Name))
		mustVerify(t, a)
		n, err := a.SweepExpired(ctx)
		tabletest.Must(t, err)
		if n != 20 {
			t.Fatalf("SweepExpired after the rebuild deleted %d; want 20", n)
		}
		mustVerify(t, a)
	})
}
