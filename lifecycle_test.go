package localtable_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// checkKeySpace scans the engine's whole key space: every key is a catalog
// record, an entity of a table in the catalog, or account metadata. An
// entity key of any other table ID is an orphan: a write that landed in a
// deleted table. It returns the live tables' IDs by lower-cased name.
func checkKeySpace(t *testing.T, eng storage.Engine) map[string]uint64 {
	t.Helper()
	it, err := eng.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	live := map[uint64]string{}
	ids := map[string]uint64{}
	orphans := map[uint64]int{}
	var entities int
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		switch k[0] {
		case keyenc.PrefixCatalog:
			id, name, err := localtable.DecodeCatalogRecord(it.Value())
			if err != nil {
				t.Fatalf("catalog key %q: %v", k, err)
			}
			if strings.ToLower(name) != string(k[1:]) {
				t.Fatalf("catalog key %q holds table %q", k, name)
			}
			if other, dup := live[id]; dup {
				t.Fatalf("tables %q and %q share ID %d", other, name, id)
			}
			live[id], ids[string(k[1:])] = name, id
		case keyenc.PrefixEntity:
			// 'e' sorts after 'c': every catalog record is already read.
			if len(k) < keyenc.TablePrefixLen {
				t.Fatalf("short entity key %q", k)
			}
			id := binary.BigEndian.Uint64(k[1:keyenc.TablePrefixLen])
			if _, ok := live[id]; !ok {
				orphans[id]++
			}
			if _, _, err := keyenc.DecodeEntityKey(k); err != nil {
				t.Fatalf("entity key %q: %v", k, err)
			}
			entities++
		case keyenc.PrefixMeta:
		default:
			t.Fatalf("key %q of no known kind", k)
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	if len(orphans) > 0 {
		t.Errorf("orphan entities, by table ID, of no live table (live: %v): %v", live, orphans)
	}
	t.Logf("key space: %d tables, %d entities", len(live), entities)
	return ids
}

// lifeOp is one call of the lifecycle test, with the ticks of a logical
// clock before it started and after it returned.
type lifeOp struct {
	start, end int64
	keys       []string // RowKeys written (all in partition "p")
	err        error
}

// TestTableLifecycleIntegrity races entity writes (single writes and
// transactions, from several goroutines) against deleting and re-creating
// their table, then checks the engine's whole key space and every write:
//   - no record of a deleted table is left (no orphan keys);
//   - a write acknowledged is readable, unless a delete of its table that
//     did not end before the write began was acknowledged;
//   - no write is acknowledged while its table did not exist (after a
//     delete returned and before the next create began);
//   - a write that failed left nothing.
func TestTableLifecycleIntegrity(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, nil)
		tbl, err := a.CreateTable(ctx, "Life")
		if err != nil {
			t.Fatal(err)
		}
		bound, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var clock atomic.Int64
		var mu sync.Mutex
		var writes []lifeOp
		var deletes, creates []lifeOp // each acknowledged
		stop := make(chan struct{})
		var wg sync.WaitGroup
		const writers = 6
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					rk := fmt.Sprintf("w%d-%05d", w, i)
					op := lifeOp{start: clock.Add(1)}
					switch i % 3 {
					case 0:
						op.keys = []string{rk}
						_, op.err = tbl.Insert(bound, localtable.Entity{PartitionKey: "p", RowKey: rk})
					case 1:
						op.keys = []string{rk}
						_, op.err = tbl.Upsert(bound, localtable.Entity{PartitionKey: "p", RowKey: rk}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
					default:
						op.keys = []string{rk + "a", rk + "b", rk + "c"}
						acts := make([]localtable.Action, len(op.keys))
						for j, k := range op.keys {
							acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: k}}
						}
						_, op.err = tbl.Transact(bound, acts)
					}
					op.end = clock.Add(1)
					if op.err != nil && !errors.Is(op.err, localtable.ErrTableNotFound) {
						t.Errorf("write %v: %v", op.keys, op.err)
						return
					}
					mu.Lock()
					writes = append(writes, op)
					mu.Unlock()
					if op.err != nil {
						time.Sleep(100 * time.Microsecond) // the table is being re-created
					}
				}
			}()
		}
		const cycles = 30
		for range cycles {
			time.Sleep(2 * time.Millisecond) // let writes land in each incarnation
			op := lifeOp{start: clock.Add(1)}
			if err := a.DeleteTable(bound, "Life"); err != nil {
				t.Fatal(err)
			}
			op.end = clock.Add(1)
			deletes = append(deletes, op)
			op = lifeOp{start: clock.Add(1)}
			if _, err := a.CreateTable(bound, "Life"); err != nil {
				t.Fatal(err)
			}
			op.end = clock.Add(1)
			creates = append(creates, op)
		}
		time.Sleep(time.Millisecond)
		close(stop)
		wg.Wait()

		checkKeySpace(t, localtable.EngineOf(a))
		acked, failed, kept := 0, 0, 0
		for _, w := range writes {
			if w.err != nil {
				failed++
				for _, k := range w.keys {
					if _, err := tbl.Get(ctx, "p", k, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
						t.Errorf("write %s failed (%v), yet Get finds: %v", k, w.err, err)
					}
				}
				continue
			}
			acked++
			for i, d := range deletes {
				if w.start > d.end && w.end < creates[i].start {
					t.Errorf("write %v acknowledged (ticks %d–%d) while its table did not exist (deleted at %d, re-created from %d)", w.keys, w.start, w.end, d.end, creates[i].start)
				}
			}
			mayBeGone := false
			for _, d := range deletes {
				if d.end > w.start {
					mayBeGone = true
					break
				}
			}
			for _, k := range w.keys {
				_, err := tbl.Get(ctx, "p", k, nil)
				switch {
				case err == nil:
					kept++
				case errors.Is(err, localtable.ErrEntityNotFound) && mayBeGone:
				default:
					t.Errorf("acknowledged write %s (ticks %d–%d), no delete after it: Get = %v", k, w.start, w.end, err)
				}
			}
		}
		t.Logf("%d cycles: %d writes acknowledged (%d entities in the last incarnation), %d refused with TableNotFound", cycles, acked, kept, failed)
		if acked == 0 || failed == 0 {
			t.Errorf("the writes did not race the deletes: %d acknowledged, %d refused", acked, failed)
		}
	})
}

// TestDeleteWaitsForWriteInFlight pauses a write after it found its table
// and before it commits, and deletes the table meanwhile. The delete must
// wait for the write (or the write must fail): a write that commits after
// the delete would leave an orphan record in a deleted table's key range,
// acknowledged yet lost. The pause lasts 300 ms; a delete that returns
// within it has not waited.
func TestDeleteWaitsForWriteInFlight(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		bound, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		paused, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		localtable.SetBeforeCommitHook(a, func(table string, acts []localtable.Action) {
			once.Do(func() {
				close(paused)
				select {
				case <-release:
				case <-bound.Done():
				}
			})
		})
		wrote := make(chan error, 1)
		go func() {
			_, err := tbl.Insert(bound, localtable.Entity{PartitionKey: "p", RowKey: "in-flight"})
			wrote <- err
		}()
		select {
		case <-paused:
		case <-bound.Done():
			t.Fatal("the write never reached its commit")
		}
		deleted := make(chan error, 1)
		go func() { deleted <- a.DeleteTable(bound, "tbl1") }()
		select {
		case err := <-deleted:
			t.Errorf("DeleteTable returned (%v) while a write into the table was between its lookup and its commit", err)
			deleted <- err
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		var werr, derr error
		for _, ch := range []chan error{wrote, deleted} {
			select {
			case err := <-ch:
				if ch == wrote {
					werr = err
				} else {
					derr = err
				}
			case <-bound.Done():
				t.Fatal("the write or the delete did not return")
			}
		}
		if derr != nil {
			t.Fatalf("DeleteTable: %v", derr)
		}
		if werr != nil && !errors.Is(werr, localtable.ErrTableNotFound) {
			t.Fatalf("the write: %v", werr)
		}
		if _, err := a.CreateTable(ctx, "tbl1"); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Get(ctx, "p", "in-flight", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Fatalf("the re-created table holds the deleted one's entity: %v", err)
		}
		checkKeySpace(t, localtable.EngineOf(a))
	})
}

// TestCatalogChangeBlocksNoOtherTable pauses CreateTable and DeleteTable
// just before they commit (where they fsync), and meanwhile reads, writes,
// queries and lists another table: none of it may wait for the catalog
// change. The table being created is not visible until its create
// returns.
func TestCatalogChangeBlocksNoOtherTable(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
			t.Fatal(err)
		}
		bound, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, op := range []string{"create", "delete"} {
			paused, release := make(chan struct{}), make(chan struct{})
			localtable.SetBeforeCatalogCommitHook(a, func(o, _ string) {
				if o != op {
					return
				}
				close(paused)
				select {
				case <-release:
				case <-bound.Done():
				}
			})
			changed := make(chan error, 1)
			go func() {
				if op == "create" {
					_, err := a.CreateTable(bound, "Other")
					changed <- err
				} else {
					changed <- a.DeleteTable(bound, "Other")
				}
			}()
			select {
			case <-paused:
			case <-bound.Done():
				t.Fatalf("%s never reached its commit", op)
			}
			done := make(chan error, 1)
			go func() {
				done <- func() error {
					if _, err := tbl.Get(bound, "p", "r", nil); err != nil {
						return err
					}
					if _, err := tbl.Upsert(bound, localtable.Entity{PartitionKey: "p", RowKey: op}, nil); err != nil {
						return err
					}
					if _, err := tbl.Query(bound, nil); err != nil {
						return err
					}
					page, err := a.ListTables(bound, nil)
					if err != nil {
						return err
					}
					if _, err := a.GetTable(bound, "tbl1"); err != nil {
						return err
					}
					if n := len(page.Tables); op == "create" && n != 1 {
						return fmt.Errorf("ListTables during the create lists %v", page.Tables)
					}
					if _, err := a.GetTable(bound, "Other"); op == "create" && !errors.Is(err, localtable.ErrTableNotFound) {
						return fmt.Errorf("GetTable of the table being created: %v, want ErrTableNotFound", err)
					}
					return nil
				}()
			}()
			blocked := false
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("during a %s: %v", op, err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("calls on another table waited for a %s of the catalog", op)
				blocked = true
			}
			close(release)
			select {
			case err := <-changed:
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
			case <-bound.Done():
				t.Fatalf("%s did not return", op)
			}
			if blocked {
				select {
				case <-done:
				case <-bound.Done():
					t.Fatal("calls on another table did not return")
				}
			}
		}
	})
}

// TestReadsDuringDelete pauses DeleteTable after its commit has removed
// the table's entities and before the catalog without the table is
// published. Reads then must say the table is missing: not that an entity
// it held is missing, nor that it is empty.
func TestReadsDuringDelete(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
			t.Fatal(err)
		}
		bound, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		paused, release := make(chan struct{}), make(chan struct{})
		localtable.SetBeforeCatalogCommitHook(a, func(op, _ string) {
			if op != "delete-committed" {
				return
			}
			close(paused)
			select {
			case <-release:
			case <-bound.Done():
			}
		})
		deleted := make(chan error, 1)
		go func() { deleted <- a.DeleteTable(bound, "tbl1") }()
		select {
		case <-paused:
		case <-bound.Done():
			t.Fatal("the delete never committed")
		}
		if _, err := tbl.Get(bound, "p", "r", nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Get during the delete: %v, want ErrTableNotFound", err)
		}
		if page, err := tbl.Query(bound, nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Query during the delete: %d entities, %v; want ErrTableNotFound", len(page.Entities), err)
		}
		if n, err := tbl.Count(bound, nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Count during the delete: %d, %v; want ErrTableNotFound", n, err)
		}
		close(release)
		select {
		case err := <-deleted:
			if err != nil {
				t.Fatal(err)
			}
		case <-bound.Done():
			t.Fatal("the delete did not return")
		}
	})
}
