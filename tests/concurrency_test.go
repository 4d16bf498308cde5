package tests

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestConcurrentETagCounter has many goroutines increment one counter with
// read-modify-write under ETag conditions, retrying on conflict: no
// increment may be lost.
func TestConcurrentETagCounter(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "counter",
			Properties: localtable.Properties{"N": localtable.Int64Value(0)}}); err != nil {
			t.Fatal(err)
		}
		const workers, each = 8, 25
		var wg sync.WaitGroup
		var mu sync.Mutex
		conflicts := 0
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					for {
						e, err := tbl.Get(ctx, "p", "counter", nil)
						if err != nil {
							t.Error(err)
							return
						}
						e.Properties["N"] = localtable.Int64Value(e.Properties["N"].Int64() + 1)
						_, err = tbl.Update(ctx, e, &localtable.UpdateOptions{IfMatch: e.ETag})
						if errors.Is(err, localtable.ErrConditionNotMet) {
							mu.Lock()
							conflicts++
							mu.Unlock()
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						break
					}
				}
			}()
		}
		wg.Wait()
		e, err := tbl.Get(ctx, "p", "counter", nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.Properties["N"].Int64(); n != workers*each {
			t.Errorf("counter = %d, want %d (lost updates)", n, workers*each)
		}
		t.Logf("%d conflicts retried", conflicts)
	})
}

// TestConcurrentPartitions inserts into many partitions from many
// goroutines while others read, then checks every entity.
func TestConcurrentPartitions(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		const parts, rows = 16, 40
		var wg sync.WaitGroup
		for p := 0; p < parts; p++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for r := 0; r < rows; r++ {
					e := localtable.Entity{PartitionKey: fmt.Sprint("p", p), RowKey: fmt.Sprint(r),
						Properties: localtable.Properties{"V": localtable.Int32Value(int32(p*1000 + r))}}
					if _, err := tbl.Insert(ctx, e); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			go func() { // a reader racing the writer: sees each entity whole or not at all
				defer wg.Done()
				for r := 0; r < rows; r++ {
					e, err := tbl.Get(ctx, fmt.Sprint("p", p), fmt.Sprint(r), nil)
					if errors.Is(err, localtable.ErrEntityNotFound) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if v := e.Properties["V"].Int32(); v != int32(p*1000+r) {
						t.Errorf("read V=%d, want %d", v, p*1000+r)
					}
				}
			}()
		}
		wg.Wait()
		for p := 0; p < parts; p++ {
			for r := 0; r < rows; r++ {
				e, err := tbl.Get(ctx, fmt.Sprint("p", p), fmt.Sprint(r), nil)
				if err != nil || e.Properties["V"].Int32() != int32(p*1000+r) {
					t.Fatalf("entity p%d/%d: %v %v", p, r, e.Properties, err)
				}
			}
		}
	})
}

// TestConcurrentTableLifecycle races entity writes against deleting and
// re-creating their table: every write either lands in a live table or
// fails with ErrTableNotFound.
func TestConcurrentTableLifecycle(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_, err := tbl.Upsert(ctx, localtable.Entity{PartitionKey: fmt.Sprint(w), RowKey: fmt.Sprint(i)}, &localtable.UpsertOptions{Mode: localtable.UpdateModeMerge})
					if err != nil && !errors.Is(err, localtable.ErrTableNotFound) {
						t.Error(err)
						return
					}
				}
			}()
		}
		for i := 0; i < 20; i++ {
			if err := a.DeleteTable(ctx, "tbl1"); err != nil {
				t.Fatal(err)
			}
			if _, err := a.CreateTable(ctx, "tbl1"); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
	})
}

// TestReadYourWritesConcurrent has writers bump counters in their own
// entities while readers check, through Get and Query, that a read never
// returns a counter below the last write acknowledged before the read
// began, and that the ETag read is that write's when the counter is. The
// memory engine publishes its readers' copy lazily; run with -race.
func TestReadYourWritesConcurrent(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		const writers, readers = 3, 3
		writes := 400
		if eng.Name != "memory" {
			writes = 60 // each write is fsynced
		}
		type acked struct {
			n   int64
			tag localtable.ETag
		}
		var last [writers]atomic.Pointer[acked]
		for w := range writers {
			last[w].Store(&acked{})
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := int64(1); n <= int64(writes); n++ {
					e := localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(w),
						Properties: localtable.Properties{"N": localtable.Int64Value(n)}}
					tag, err := tbl.Upsert(ctx, e, nil)
					if err != nil {
						t.Error(err)
						return
					}
					last[w].Store(&acked{n, tag})
				}
			}()
		}
		var done atomic.Bool
		var rwg sync.WaitGroup
		for r := range readers {
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				for i := 0; !done.Load(); i++ {
					w := i % writers
					floor := last[w].Load() // acknowledged before the read
					var e localtable.Entity
					var err error
					if r == 0 {
						page, qerr := tbl.Query(ctx, &localtable.QueryOptions{Filter: filter.And(filter.PartitionKey().Eq("p"), filter.RowKey().Eq(fmt.Sprint(w)))})
						switch err = qerr; {
						case err == nil && len(page.Entities) == 1:
							e = page.Entities[0]
						case err == nil && len(page.Entities) == 0:
							err = localtable.ErrEntityNotFound
						case err == nil:
							err = fmt.Errorf("the query returned %d entities", len(page.Entities))
						}
					} else {
						e, err = tbl.Get(ctx, "p", fmt.Sprint(w), nil)
					}
					if errors.Is(err, localtable.ErrEntityNotFound) && floor.n == 0 {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					n := e.Properties["N"].Int64()
					if n < floor.n || (n == floor.n && e.ETag != floor.tag) {
						t.Errorf("reader %d read entity %d: N=%d, ETag %s; the write of N=%d (ETag %s) was acknowledged before the read", r, w, n, e.ETag, floor.n, floor.tag)
						return
					}
				}
			}()
		}
		wg.Wait()
		done.Store(true)
		rwg.Wait()
	})
}
