// Package feedbench holds the change feed's measurements that both the
// go test benchmarks (tests/feed_bench_test.go) and the standard workload
// program (bench/, which reports them in BENCHMARKS.md) make: the delivery
// latency to watchers, the catch-up of a watcher far behind, and the bytes
// the feed keeps per change. The write cost of the feed is a write with
// the feed on against the same write with it off: that needs no helper.
package feedbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Deliveries inserts n entities into tbl, one at a time (entity(i) is
// the i-th), with watchers watching the feed of a from before the first,
// and returns for each insert the time from its return until every
// watcher has received its change (0 if they all had it before Insert
// returned). Nothing else may write to a meanwhile.
func Deliveries(ctx context.Context, a *localtable.Account, tbl *localtable.Table, watchers, n int, entity func(i int) localtable.Entity) ([]time.Duration, error) {
	if watchers < 1 || n < 1 {
		return nil, errors.New("feedbench: at least one watcher and one insert")
	}
	rev0, err := a.Revision(ctx)
	if err != nil {
		return nil, err
	}
	counts := make([]atomic.Int32, n)
	arrived := make([]time.Time, n) // written by the last watcher to get change i
	all := make(chan int, n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	for range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c, err := range a.Watch(wctx, &localtable.WatchOptions{After: rev0}) {
				if err != nil {
					errs <- err
					return
				}
				i := int(c.Revision - rev0 - 1)
				if i < 0 || i >= n {
					errs <- fmt.Errorf("feedbench: a change at revision %d, not one of the %d inserts after %d", c.Revision, n, rev0)
					return
				}
				if int(counts[i].Add(1)) == watchers {
					arrived[i] = time.Now()
					all <- i
				}
				if i == n-1 {
					return
				}
			}
		}()
	}
	lat := make([]time.Duration, 0, n)
	var werr error
	for i := range n {
		if _, err := tbl.Insert(ctx, entity(i)); err != nil {
			werr = err
			break
		}
		done := time.Now()
		select {
		case j := <-all:
			if j != i {
				werr = fmt.Errorf("feedbench: insert %d's change arrived while waiting for insert %d's", j, i)
			} else {
				lat = append(lat, max(0, arrived[j].Sub(done)))
			}
		case werr = <-errs:
		case <-ctx.Done():
			werr = ctx.Err()
		}
		if werr != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	return lat, werr
}

// Fill writes n changes (rounded up to whole transactions) into tbl: in
// transactions of 100 inserts of a small entity (one Int64 property),
// each into a partition of its own, named from prefix.
func Fill(ctx context.Context, tbl *localtable.Table, prefix string, n int) error {
	acts := make([]localtable.Action, localtable.MaxTransactionActions)
	for i := 0; i < n; i += len(acts) {
		pk := prefix + strconv.Itoa(i/len(acts))
		for j := range acts {
			acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
				PartitionKey: pk, RowKey: strconv.Itoa(j),
				Properties: localtable.Properties{"N": localtable.Int64Value(int64(i + j))}}}
		}
		if _, err := tbl.Transact(ctx, acts); err != nil {
			return err
		}
	}
	return nil
}

// CatchUp reads the feed of a from its oldest change kept to revision
// last, as a watcher that was away would, and returns how many changes it
// read and the time it took.
func CatchUp(ctx context.Context, a *localtable.Account, last localtable.Revision) (int, time.Duration, error) {
	start := time.Now()
	n := 0
	if last == 0 {
		return 0, 0, nil
	}
	for c, err := range a.Watch(ctx, &localtable.WatchOptions{}) {
		if err != nil {
			return n, time.Since(start), err
		}
		n++
		if c.Revision >= last {
			return n, time.Since(start), nil
		}
	}
	return n, time.Since(start), fmt.Errorf("feedbench: the watch ended before revision %d", last)
}

// StoredBytes returns the bytes of the feed's records in eng, keys
// included.
func StoredBytes(eng storage.Engine) (int, error) {
	it, err := eng.NewIter(&storage.IterOptions{LowerBound: []byte{keyenc.PrefixFeed}, UpperBound: []byte{keyenc.PrefixFeed + 1}})
	if err != nil {
		return 0, err
	}
	size := 0
	for it.First(); it.Valid(); it.Next() {
		size += len(it.Key()) + len(it.Value())
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, err
	}
	return size, it.Close()
}
