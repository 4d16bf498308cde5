package localtable_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/localtable/localtable"
)

// TestConcurrentETagCounter has many goroutines increment one counter with
// read-modify-write under ETag conditions, retrying on conflict: no
// increment may be lost.
func TestConcurrentETagCounter(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng engine) {
		_, tbl := newTable(t, eng)
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
	forEachEngine(t, func(t *testing.T, eng engine) {
		_, tbl := newTable(t, eng)
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
	forEachEngine(t, func(t *testing.T, eng engine) {
		a, tbl := newTable(t, eng)
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
