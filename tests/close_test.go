package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// closeRounds is how many times TestCloseWhileInUse closes an account in
// use, per engine.
const closeRounds = 20

// expected reports whether err is an outcome a call racing the others may
// have: success, a closed account, or an outcome of the data model.
func expected(err error) bool {
	return err == nil || errors.Is(err, localtable.ErrClosed) ||
		errors.Is(err, localtable.ErrTableNotFound) || errors.Is(err, localtable.ErrTableExists) ||
		errors.Is(err, localtable.ErrEntityNotFound) || errors.Is(err, localtable.ErrEntityExists)
}

// TestCloseWhileInUse closes an account while goroutines read, query
// (page by page and with QueryAll), write, transact, list, and create and
// delete tables. Every call either succeeds (or fails as the data model
// says) or fails with ErrClosed; once one has seen ErrClosed, every later
// call does too; QueryAll stops with ErrClosed; nothing panics, and Close,
// called twice at once, returns once the engine is released: a pebble
// directory opens again at once, and holds every write acknowledged.
func TestCloseWhileInUse(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		for round := range closeRounds {
			closeRound(t, eng, round)
			if t.Failed() {
				t.Fatalf("round %d failed", round)
			}
		}
	})
}

func closeRound(t *testing.T, eng tabletest.Engine, round int) {
	var e storage.Engine
	var dir string
	if eng.Name == "pebble" {
		dir = filepath.Join(t.TempDir(), "db")
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		e = db
	} else {
		e = eng.Open(t)
	}
	a, err := localtable.Open(&localtable.Options{Engine: e})
	if err != nil {
		t.Fatal(err)
	}
	bound, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tbl, err := a.CreateTable(bound, "Data")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := tbl.Insert(bound, localtable.Entity{PartitionKey: fmt.Sprint("p", i%4), RowKey: fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	acked := map[string]bool{} // RowKeys of partition "w" acknowledged
	var wg sync.WaitGroup
	// run runs op in a loop until it fails with ErrClosed, then checks that
	// one more call fails with ErrClosed too.
	run := func(name string, op func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if bound.Err() != nil {
					t.Errorf("%s: still running at the deadline", name)
					return
				}
				err := op(i)
				if !expected(err) {
					t.Errorf("%s: %v", name, err)
					return
				}
				if errors.Is(err, localtable.ErrClosed) {
					if err := op(i + 1); !errors.Is(err, localtable.ErrClosed) {
						t.Errorf("%s after ErrClosed: %v, want ErrClosed", name, err)
					}
					return
				}
			}
		}()
	}
	for g := range 2 {
		run("Get", func(i int) error {
			_, err := tbl.Get(bound, fmt.Sprint("p", i%4), fmt.Sprint("r", i%40), nil)
			return err
		})
		run("Query", func(int) error {
			opts := localtable.QueryOptions{PageSize: 7}
			for {
				page, err := tbl.Query(bound, &opts)
				if err != nil || page.Continuation.IsZero() {
					return err
				}
				opts.Continuation = page.Continuation
			}
		})
		run("QueryAll", func(int) error {
			n := 0
			for _, err := range tbl.QueryAll(bound, &localtable.QueryOptions{PageSize: 3}) {
				if err != nil {
					return err
				}
				n++
			}
			if n < 40 {
				return fmt.Errorf("QueryAll ended after %d entities with no error", n)
			}
			return nil
		})
		run("Upsert", func(i int) error {
			rk := fmt.Sprintf("u%d-%d", g, i)
			_, err := tbl.Upsert(bound, localtable.Entity{PartitionKey: "w", RowKey: rk}, nil)
			if err == nil {
				mu.Lock()
				acked[rk] = true
				mu.Unlock()
			}
			return err
		})
		run("Transact", func(i int) error {
			rk := fmt.Sprintf("t%d-%d", g, i)
			_, err := tbl.Transact(bound, []localtable.Action{
				{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "w", RowKey: rk + "a"}},
				{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: "w", RowKey: rk + "b"}},
			})
			if err == nil {
				mu.Lock()
				acked[rk+"a"], acked[rk+"b"] = true, true
				mu.Unlock()
			}
			return err
		})
	}
	run("Count", func(int) error { _, err := tbl.Count(bound, nil); return err })
	run("Partitions", func(int) error {
		for _, err := range tbl.Partitions(bound) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	run("CreateDelete", func(i int) error {
		name := fmt.Sprint("Churn", i%3)
		if _, err := a.CreateTable(bound, name); err != nil {
			return err
		}
		if _, err := a.Table(name).Upsert(bound, localtable.Entity{PartitionKey: "p", RowKey: "r"}, nil); err != nil {
			return err
		}
		return a.DeleteTable(bound, name)
	})
	run("Tables", func(int) error {
		for _, err := range a.Tables(bound, &localtable.ListTablesOptions{PageSize: 1}) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	run("AccessPolicy", func(i int) error {
		if err := tbl.SetAccessPolicy(bound, []localtable.AccessPolicy{{ID: fmt.Sprint("id", i%5), Permission: "r"}}); err != nil {
			return err
		}
		_, err := tbl.GetAccessPolicy(bound)
		return err
	})

	time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
	closed := make(chan error, 2)
	for range 2 {
		go func() { closed <- a.Close() }()
	}
	var errs []error
	for range 2 {
		select {
		case err := <-closed:
			errs = append(errs, err)
		case <-bound.Done():
			t.Fatalf("round %d: Close did not return", round)
		}
	}
	if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errors.Join(errs...), localtable.ErrClosed) {
		t.Errorf("round %d: two Closes returned %v; want nil and ErrClosed", round, errs)
	}
	// Close returned: the engine is released.
	var reopened storage.Engine
	if dir != "" {
		db, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: pebble.Open once Close returned: %v", round, err)
		}
		reopened = db
	} else if _, _, err := e.Get([]byte("x")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("round %d: the engine after Close: %v, want storage.ErrClosed", round, err)
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-bound.Done():
		t.Fatalf("round %d: calls still running after Close", round)
	}
	if _, err := tbl.Get(ctx, "p0", "r0", nil); !errors.Is(err, localtable.ErrClosed) {
		t.Errorf("round %d: Get after Close: %v", round, err)
	}

	if reopened != nil {
		a, err := localtable.Open(&localtable.Options{Engine: reopened})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		tbl := a.Table("Data")
		for rk := range acked {
			if _, err := tbl.Get(ctx, "w", rk, nil); err != nil {
				t.Errorf("round %d: acknowledged write %s after Close and reopen: %v", round, rk, err)
			}
		}
	}
	t.Logf("round %d: %d writes acknowledged before Close", round, len(acked))
}

// blockingFilter matches nothing; on its first Match it signals entered
// and waits for proceed.
type blockingFilter struct {
	once             sync.Once
	entered, proceed chan struct{}
}

func (f *blockingFilter) Match(*localtable.Entity) bool {
	f.once.Do(func() {
		close(f.entered)
		<-f.proceed
	})
	return false
}
func (f *blockingFilter) KeyRanges() ([]localtable.KeyRange, bool) { return nil, false }
func (f *blockingFilter) String() string                           { return "Blocking eq true" }

// TestCloseStopsLongScan closes an account while a query scans a table of
// 5,000 entities that its filter rejects: the scan stops with ErrClosed
// instead of reading on, and Close returns after it.
func TestCloseStopsLongScan(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		bound, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for i := 0; i < 5000; i += localtable.MaxTransactionActions {
			var acts []localtable.Action
			for j := range localtable.MaxTransactionActions {
				acts = append(acts, localtable.Action{Type: localtable.ActionInsert,
					Entity: localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", i+j)}})
			}
			if _, err := tbl.Transact(bound, acts); err != nil {
				t.Fatal(err)
			}
		}
		f := &blockingFilter{entered: make(chan struct{}), proceed: make(chan struct{})}
		type result struct {
			page localtable.QueryPage
			err  error
		}
		queried := make(chan result, 1)
		go func() {
			page, err := tbl.Query(bound, &localtable.QueryOptions{Filter: f})
			queried <- result{page, err}
		}()
		select {
		case <-f.entered:
		case <-bound.Done():
			t.Fatal("the query never matched")
		}
		closed := make(chan error, 1)
		go func() { closed <- a.Close() }()
		// Close has begun once new calls fail.
		for {
			if _, err := a.GetTable(bound, "tbl1"); errors.Is(err, localtable.ErrClosed) {
				break
			}
			if bound.Err() != nil {
				t.Fatal("Close never began")
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a query was scanning", err)
		default:
		}
		close(f.proceed)
		select {
		case r := <-queried:
			if !errors.Is(r.err, localtable.ErrClosed) {
				t.Fatalf("the query scanning during Close: %v after %d entities, want ErrClosed", r.err, r.page.Stats.Scanned)
			}
		case <-bound.Done():
			t.Fatal("the query did not return")
		}
		select {
		case err := <-closed:
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
		case <-bound.Done():
			t.Fatal("Close did not return")
		}
	})
}
