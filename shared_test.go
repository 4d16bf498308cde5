package localtable_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// Two Accounts on one shared store (internal/sharedmem, a
// storage.VersionedEngine in memory), as two processes on one etcd
// prefix: the table layer must keep ETags, If-Match, transactions and the
// catalog correct between them. storage/etcd runs the same scenarios on a
// real cluster, in two processes.

// openShared opens an Account on its own engine over s, closed with the
// test; clock may be nil.
func openShared(t testing.TB, s *sharedmem.Store, clock func() time.Time) *localtable.Account {
	t.Helper()
	a, err := localtable.Open(&localtable.Options{Engine: s.Open(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func counter(n int64) localtable.Properties {
	return localtable.Properties{"N": localtable.Int64Value(n)}
}

// TestSharedETagCounter: goroutines of two Accounts increment counters by
// Get, then Update (single) or Transact (two counters at once) with
// If-Match, retrying on ErrConditionNotMet. No acknowledged increment may
// be lost, and the two counters of the transactions stay equal.
func TestSharedETagCounter(t *testing.T) {
	s := sharedmem.New()
	a, b := openShared(t, s, nil), openShared(t, s, nil)
	ta, err := a.CreateTable(ctx, "Counters")
	tabletest.Must(t, err)
	for _, rk := range []string{"single", "x", "y"} {
		_, err := ta.Insert(ctx, localtable.Entity{PartitionKey: "c", RowKey: rk, Properties: counter(0)})
		tabletest.Must(t, err)
	}
	tb := b.Table("Counters") // b's catalog lacks it: found in the engine
	const perAccount, each = 3, 30
	var acked, conflicts atomic.Int64
	var wg sync.WaitGroup
	for _, tbl := range []*localtable.Table{ta, tb} {
		for g := range perAccount {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					for {
						var err error
						if g%2 == 0 {
							var e localtable.Entity
							if e, err = tbl.Get(ctx, "c", "single", nil); err != nil {
								t.Error(err)
								return
							}
							runtime.Gosched() // let the others read the same ETag
							_, err = tbl.Update(ctx, localtable.Entity{PartitionKey: "c", RowKey: "single",
								Properties: counter(e.Properties["N"].Int64() + 1)}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})
						} else {
							x, errx := tbl.Get(ctx, "c", "x", nil)
							y, erry := tbl.Get(ctx, "c", "y", nil)
							if err := errors.Join(errx, erry); err != nil {
								t.Error(err)
								return
							}
							runtime.Gosched()
							_, err = tbl.Transact(ctx, []localtable.Action{
								{Type: localtable.ActionUpdateReplace, Entity: localtable.Entity{PartitionKey: "c", RowKey: "x", Properties: counter(x.Properties["N"].Int64() + 1)}, IfMatch: x.ETag},
								{Type: localtable.ActionUpdateMerge, Entity: localtable.Entity{PartitionKey: "c", RowKey: "y", Properties: counter(y.Properties["N"].Int64() + 1)}, IfMatch: y.ETag},
							})
						}
						if err == nil {
							acked.Add(1)
							break
						}
						if !errors.Is(err, localtable.ErrConditionNotMet) {
							t.Error(err)
							return
						}
						conflicts.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	var single, x, y int64
	for rk, n := range map[string]*int64{"single": &single, "x": &x, "y": &y} {
		e, err := tb.Get(ctx, "c", rk, nil)
		tabletest.Must(t, err)
		*n = e.Properties["N"].Int64()
	}
	if single+x != acked.Load() || x != y {
		t.Errorf("counters single %d + x %d, y %d; %d increments acknowledged: updates were lost", single, x, y, acked.Load())
	}
	// Conflicts are likely, not certain: TestSharedLostRace makes them.
	t.Logf("%d increments, %d If-Match conflicts retried", acked.Load(), conflicts.Load())
}

// TestSharedLostRace makes another Account write between an entity
// write's reads and its commit, deterministically: the commit's condition
// fails, the write re-runs from its reads and answers as the new state
// requires.
func TestSharedLostRace(t *testing.T) {
	s := sharedmem.New()
	a, b := openShared(t, s, nil), openShared(t, s, nil)
	ta, err := a.CreateTable(ctx, "Race")
	tabletest.Must(t, err)
	tb := b.Table("Race")
	tag, err := ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(0)})
	tabletest.Must(t, err)

	// interleave makes a's next write run f on b first, once.
	interleave := func(f func() error) {
		var once sync.Once
		localtable.SetBeforeCommitHook(a, func(string, []localtable.Action) {
			once.Do(func() {
				if err := f(); err != nil {
					t.Errorf("the other Account's write: %v", err)
				}
			})
		})
	}
	interleave(func() error {
		_, err := tb.Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(1)}, &localtable.UpdateOptions{Mode: localtable.UpdateModeReplace, IfMatch: tag})
		return err
	})
	if _, err := ta.Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(2)}, &localtable.UpdateOptions{Mode: localtable.UpdateModeReplace, IfMatch: tag}); !errors.Is(err, localtable.ErrConditionNotMet) {
		t.Errorf("Update with an ETag the other Account replaced meanwhile = %v, want ErrConditionNotMet", err)
	}
	interleave(func() error {
		_, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "new", Properties: counter(1)})
		return err
	})
	if _, err := ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "new", Properties: counter(2)}); !errors.Is(err, localtable.ErrEntityExists) {
		t.Errorf("Insert of an entity the other Account inserted meanwhile = %v, want ErrEntityExists", err)
	}
	interleave(func() error { return tb.Delete(ctx, "p", "new", nil) })
	_, err = ta.Transact(ctx, []localtable.Action{
		{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "p", RowKey: "t1"}},
		{Type: localtable.ActionUpdateMerge, Entity: localtable.Entity{PartitionKey: "p", RowKey: "new", Properties: counter(3)}},
	})
	var te *localtable.TransactionError
	if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Errorf("transaction merging into an entity the other Account deleted meanwhile = %v, want action 1 ErrEntityNotFound", err)
	}
	if _, err := tb.Get(ctx, "p", "t1", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
		t.Errorf("the failed transaction's insert: Get = %v, want ErrEntityNotFound", err)
	}
	// A merge re-run after a concurrent merge keeps the other's property.
	interleave(func() error {
		_, err := tb.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"B": localtable.StringValue("b")}}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
		return err
	})
	_, err = ta.Upsert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: localtable.Properties{"A": localtable.StringValue("a")}}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
	tabletest.Must(t, err)
	e, err := tb.Get(ctx, "p", "r", nil)
	tabletest.Must(t, err)
	if e.Properties["A"].String() != "a" || e.Properties["B"].String() != "b" || e.Properties["N"].Int64() != 1 {
		t.Errorf("after two racing merges: %v, want N=1, A, B", e.Properties)
	}
	// A write whose table the other Account deletes meanwhile fails, and
	// leaves nothing under the dead table's ID.
	interleave(func() error { return b.DeleteTable(ctx, "Race") })
	if _, err := ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "orphan"}); !errors.Is(err, localtable.ErrTableNotFound) {
		t.Errorf("Insert into a table the other Account deleted meanwhile = %v, want ErrTableNotFound", err)
	}
	localtable.SetBeforeCommitHook(a, nil)
	checkKeySpace(t, s.Open())
}

// TestSharedCatalogRaces makes another Account change the catalog between
// a catalog change's reads and its commit.
func TestSharedCatalogRaces(t *testing.T) {
	// armed makes the next commit on s run f first, once.
	arm := func(s *sharedmem.Store, f func() error) {
		var armed atomic.Bool
		armed.Store(true)
		s.BeforeCommit = func() {
			if armed.Swap(false) {
				if err := f(); err != nil {
					t.Errorf("the other Account: %v", err)
				}
			}
		}
	}
	t.Run("create", func(t *testing.T) {
		s := sharedmem.New()
		a, b := openShared(t, s, nil), openShared(t, s, nil)
		arm(s, func() error { _, err := b.CreateTable(ctx, "Same"); return err })
		if _, err := a.CreateTable(ctx, "SAME"); !errors.Is(err, localtable.ErrTableExists) {
			t.Errorf("CreateTable of a name the other took meanwhile = %v, want ErrTableExists", err)
		}
		if tbl, err := a.CreateTableIfNotExists(ctx, "same"); err != nil || tbl.Name() != "Same" {
			t.Errorf("CreateTableIfNotExists = %v, %v; want the other's table", tbl, err)
		}
		arm(s, func() error { _, err := b.CreateTable(ctx, "Other"); return err })
		_, err := a.CreateTable(ctx, "Mine") // the counter moved meanwhile
		tabletest.Must(t, err)
		_, err = a.Table("Mine").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "mine"})
		tabletest.Must(t, err)
		if page, err := b.Table("Other").Query(ctx, nil); err != nil || len(page.Entities) != 0 {
			t.Errorf("the other's table shows %d entities, %v: the two share an ID", len(page.Entities), err)
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := sharedmem.New()
		a, b := openShared(t, s, nil), openShared(t, s, nil)
		_, err := a.CreateTable(ctx, "Gone")
		tabletest.Must(t, err)
		arm(s, func() error { return b.DeleteTable(ctx, "Gone") })
		err = a.Table("Gone").SetAccessPolicy(ctx, []localtable.AccessPolicy{{ID: "p", Permission: "r"}})
		if !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("SetAccessPolicy on a table the other deleted meanwhile = %v, want ErrTableNotFound", err)
		}
		if _, err := b.GetTable(ctx, "Gone"); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("the table came back: GetTable = %v", err)
		}
		_, err = a.CreateTable(ctx, "Gone")
		tabletest.Must(t, err)
		_, err = a.Table("Gone").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "old"})
		tabletest.Must(t, err)
		arm(s, func() error {
			if err := b.DeleteTable(ctx, "Gone"); err != nil {
				return err
			}
			tbl, err := b.CreateTable(ctx, "Gone")
			if err != nil {
				return err
			}
			_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "new"})
			return err
		})
		tabletest.Must(t, a.DeleteTable(ctx, "Gone")) // deletes the re-created one
		if _, err := b.GetTable(ctx, "Gone"); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("after a delete that raced a re-creation: GetTable = %v, want ErrTableNotFound", err)
		}
		checkKeySpace(t, s.Open())
	})
}

// TestSharedServerBusy has another writer change the entity before every
// commit: the write gives up after its bounded retries with
// ErrServerBusy, nothing applied.
func TestSharedServerBusy(t *testing.T) {
	s := sharedmem.New()
	a := openShared(t, s, nil)
	tbl, err := a.CreateTable(ctx, "Busy")
	tabletest.Must(t, err)
	_, err = tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(0)})
	tabletest.Must(t, err)
	other := s.Open()
	key := keyenc.AppendEntityKey(nil, 1, "p", "r")
	val, c, err := other.Get(key)
	tabletest.Must(t, err)
	c.Close()
	var spoil, inHook atomic.Bool
	var spoilt atomic.Int64
	s.BeforeCommit = func() {
		if !spoil.Load() || inHook.Swap(true) {
			return // the spoiling commit itself passes through
		}
		defer inHook.Store(false)
		spoilt.Add(1)
		b := other.NewBatch()
		b.Set(key, val) // the same record, a new version
		if err := b.Commit(true); err != nil {
			t.Error(err)
		}
	}
	spoil.Store(true)
	_, err = tbl.Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(1)}, &localtable.UpdateOptions{Mode: localtable.UpdateModeReplace, IfMatch: localtable.ETagAny})
	spoil.Store(false)
	if !errors.Is(err, localtable.ErrServerBusy) || localtable.ErrorCodeOf(err) != localtable.CodeServerBusy {
		t.Fatalf("Update losing every race = %v, want ErrServerBusy", err)
	}
	if n := spoilt.Load(); n < 10 {
		t.Errorf("gave up after %d attempts", n)
	}
	e, err := tbl.Get(ctx, "p", "r", nil)
	tabletest.Must(t, err)
	if e.Properties["N"].Int64() != 0 {
		t.Errorf("the refused Update applied: N = %d", e.Properties["N"].Int64())
	}
}

// TestSharedETagsNeverRepeat: two Accounts whose clocks stand still at
// the same time hand out the same ticks, and a third's is an hour behind.
// Each write of an entity must still stamp it later than the version it
// replaces, whoever stamped that, so that an entity never returns to an
// earlier ETag: an If-Match made against an earlier version fails.
func TestSharedETagsNeverRepeat(t *testing.T) {
	s := sharedmem.New()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := openShared(t, s, tabletest.NewFakeClock(t0).Now)
	b := openShared(t, s, tabletest.NewFakeClock(t0).Now)
	c := openShared(t, s, tabletest.NewFakeClock(t0.Add(-time.Hour)).Now)
	_, err := a.CreateTable(ctx, "Tags")
	tabletest.Must(t, err)
	first, err := a.Table("Tags").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(0)})
	tabletest.Must(t, err)
	tags := []localtable.ETag{first}
	last := time.Time{}
	for i, acct := range []*localtable.Account{b, c, a, c, b} {
		tbl := acct.Table("Tags")
		tag, err := tbl.Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r", Properties: counter(int64(i + 1))}, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: tags[len(tags)-1]})
		tabletest.Must(t, err)
		e, err := tbl.Get(ctx, "p", "r", nil)
		tabletest.Must(t, err)
		if slices.Contains(tags, tag) || !e.Timestamp.After(last) {
			t.Fatalf("update %d: ETag %s, Timestamp %v; the entity had %v before", i, tag, e.Timestamp, tags)
		}
		tags, last = append(tags, tag), e.Timestamp
	}
	for _, stale := range tags[:len(tags)-1] {
		if _, err := b.Table("Tags").Update(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}, &localtable.UpdateOptions{Mode: localtable.UpdateModeReplace, IfMatch: stale}); !errors.Is(err, localtable.ErrConditionNotMet) {
			t.Errorf("Update with the stale ETag %s = %v, want ErrConditionNotMet", stale, err)
		}
	}
	// c's clock went on from the Timestamps it replaced, not from its own
	// time, an hour behind.
	tag, err := c.Table("Tags").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "other"})
	tabletest.Must(t, err)
	if tag <= first {
		t.Errorf("c's next ETag %s is not after the first write's, %s", tag, first)
	}
}

// TestSharedClockMark: an Account behind the other must not lower the
// clock's stored high-water mark, so an Account opened later on a clock
// that is behind still stamps after every Timestamp handed out.
func TestSharedClockMark(t *testing.T) {
	s := sharedmem.New()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	behind := tabletest.NewFakeClock(t0)
	b := openShared(t, s, behind.Now) // opened first: the mark is unset
	a := openShared(t, s, tabletest.NewFakeClock(t0.Add(time.Hour)).Now)
	ta, err := a.CreateTable(ctx, "Clock")
	tabletest.Must(t, err)
	_, err = ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "a"}) // mark: t0+1h+1s
	tabletest.Must(t, err)
	_, err = b.Table("Clock").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "b"}) // b raises it to t0+1s, it thinks
	tabletest.Must(t, err)
	raw := s.Open()
	v, c, err := raw.Get(keyenc.MetaKey("clock"))
	tabletest.Must(t, err)
	mark := localtable.TicksToTime(int64(binary.BigEndian.Uint64(v)))
	c.Close()
	if mark.Before(t0.Add(time.Hour)) {
		t.Errorf("the stored mark is %v: lowered below the hour-ahead Account's", mark)
	}
	a.Close()
	b.Close()
	later := openShared(t, s, tabletest.NewFakeClock(t0).Now) // a restart on a clock behind
	e, err := later.Table("Clock").Get(ctx, "p", "a", nil)
	tabletest.Must(t, err)
	tag, err := later.Table("Clock").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "c"})
	tabletest.Must(t, err)
	got, err := later.Table("Clock").Get(ctx, "p", "c", nil)
	tabletest.Must(t, err)
	if !got.Timestamp.After(e.Timestamp) || tag == e.ETag {
		t.Errorf("after a restart: Timestamp %v, not after %v handed out before", got.Timestamp, e.Timestamp)
	}
}

// TestSharedCatalog: tables created, deleted and re-created by one
// Account are seen by the other, whose catalog is a cache; concurrent
// CreateTable of one name has one winner, and table IDs are never shared.
func TestSharedCatalog(t *testing.T) {
	t.Run("created elsewhere", func(t *testing.T) {
		s := sharedmem.New()
		a, b := openShared(t, s, nil), openShared(t, s, nil)
		_, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		if _, err := b.GetTable(ctx, "orders"); err != nil {
			t.Errorf("GetTable of a table the other created: %v", err)
		}
		page, err := b.ListTables(ctx, nil)
		tabletest.Must(t, err)
		if len(page.Tables) != 1 || page.Tables[0].Name != "Orders" {
			t.Errorf("ListTables = %v, want [Orders]", page.Tables)
		}
		if _, err := b.CreateTable(ctx, "ORDERS"); !errors.Is(err, localtable.ErrTableExists) {
			t.Errorf("CreateTable of a name the other took = %v, want ErrTableExists", err)
		}
	})

	t.Run("deleted and re-created elsewhere", func(t *testing.T) {
		s := sharedmem.New()
		a, b := openShared(t, s, nil), openShared(t, s, nil)
		ta, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		_, err = ta.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "old"})
		tabletest.Must(t, err)
		tb := b.Table("Orders")
		_, err = tb.Get(ctx, "p", "old", nil) // b's cache now holds the table
		tabletest.Must(t, err)
		tabletest.Must(t, a.DeleteTable(ctx, "Orders"))
		if _, err := tb.Query(ctx, nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Query of a table the other deleted = %v, want ErrTableNotFound", err)
		}
		if _, err := tb.Get(ctx, "p", "old", nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Get in a table the other deleted = %v, want ErrTableNotFound", err)
		}
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "x"}); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Insert into a table the other deleted = %v, want ErrTableNotFound", err)
		}
		if err := tb.SetAccessPolicy(ctx, []localtable.AccessPolicy{{ID: "p", Permission: "r"}}); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("SetAccessPolicy on a table the other deleted = %v, want ErrTableNotFound", err)
		}
		if err := b.DeleteTable(ctx, "Orders"); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("DeleteTable of a table the other deleted = %v, want ErrTableNotFound", err)
		}
		if page, err := b.ListTables(ctx, nil); err != nil || len(page.Tables) != 0 {
			t.Errorf("ListTables = %v, %v; want none", page.Tables, err)
		}

		// Cached again, then re-created by a: b's writes land in the new
		// table, and the old entities are gone.
		_, err = a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		_, err = tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "first"})
		tabletest.Must(t, err)
		tabletest.Must(t, a.DeleteTable(ctx, "Orders"))
		ta2, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "new"}); err != nil {
			t.Errorf("Insert into the re-created table: %v", err)
		}
		if _, err := ta2.Get(ctx, "p", "new", nil); err != nil {
			t.Errorf("the other's Insert is not in the re-created table: %v", err)
		}
		for _, rk := range []string{"old", "first"} {
			if _, err := tb.Get(ctx, "p", rk, nil); !errors.Is(err, localtable.ErrEntityNotFound) {
				t.Errorf("Get of %s of an earlier incarnation = %v, want ErrEntityNotFound", rk, err)
			}
		}
		tabletest.Must(t, a.DeleteTable(ctx, "Orders"))
		ta3, err := a.CreateTable(ctx, "Orders")
		tabletest.Must(t, err)
		_, err = ta3.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "third"})
		tabletest.Must(t, err)
		page, err := tb.Query(ctx, nil)
		if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != "third" {
			t.Errorf("Query of the re-created table (cached as the old one) = %v, %v; want [third]", page.Entities, err)
		}
		// Access policies set by one are read by the other.
		pol := []localtable.AccessPolicy{{ID: "read", Permission: "r"}}
		tabletest.Must(t, a.Table("Orders").SetAccessPolicy(ctx, pol))
		got, err := tb.GetAccessPolicy(ctx)
		if err != nil || len(got) != 1 || got[0].ID != "read" {
			t.Errorf("GetAccessPolicy of policies the other set = %v, %v", got, err)
		}
	})

	t.Run("concurrent creates", func(t *testing.T) {
		s := sharedmem.New()
		accts := []*localtable.Account{openShared(t, s, nil), openShared(t, s, nil)}
		const names = 40
		var wg sync.WaitGroup
		wins := make([]atomic.Int32, names)
		for _, acct := range accts {
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range names {
						name := fmt.Sprintf("T%03d", i)
						if g == 1 {
							name = fmt.Sprintf("t%03d", i) // one name, another case
						}
						_, err := acct.CreateTable(ctx, name)
						switch {
						case err == nil:
							wins[i].Add(1)
						case !errors.Is(err, localtable.ErrTableExists):
							t.Error(err)
						}
					}
				}()
			}
		}
		wg.Wait()
		for i := range wins {
			if n := wins[i].Load(); n != 1 {
				t.Errorf("table %d: %d CreateTable calls succeeded, want 1", i, n)
			}
		}
		ids := map[uint64]string{}
		it, err := s.Open().NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixCatalog}, UpperBound: []byte{keyenc.PrefixCatalog + 1}})
		tabletest.Must(t, err)
		for it.First(); it.Valid(); it.Next() {
			id, name, err := localtable.DecodeCatalogRecord(it.Value())
			tabletest.Must(t, err)
			if other, dup := ids[id]; dup {
				t.Errorf("tables %s and %s share ID %d", other, name, id)
			}
			ids[id] = name
		}
		tabletest.Must(t, it.Close())
		if len(ids) != names {
			t.Errorf("%d tables in the catalog, want %d", len(ids), names)
		}
		// Each table holds only its own entities.
		for i := range names {
			name := fmt.Sprintf("T%03d", i)
			_, err := accts[i%2].Table(name).Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: name})
			tabletest.Must(t, err)
		}
		for i := range names {
			page, err := accts[(i+1)%2].Table(fmt.Sprintf("T%03d", i)).Query(ctx, nil)
			tabletest.Must(t, err)
			if len(page.Entities) != 1 || page.Entities[0].RowKey != fmt.Sprintf("T%03d", i) {
				t.Errorf("table T%03d holds %d entities", i, len(page.Entities))
			}
		}
	})
}
