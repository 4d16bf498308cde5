package tests

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// BenchmarkFeedWrite measures what keeping the change feed costs a write:
// a single insert and a transaction of 100 inserts, with the feed off and
// on, on memory and pebble. Compare on with off of the same run.
func BenchmarkFeedWrite(b *testing.B) {
	for _, eng := range tabletest.Engines[:2] { // memory, pebble
		for _, feed := range []bool{false, true} {
			var opts *localtable.Options
			name := "off"
			if feed {
				opts, name = feedOn, "on"
			}
			b.Run(fmt.Sprintf("%s/%s/Insert", eng.Name, name), func(b *testing.B) {
				a := tabletest.OpenAccount(b, eng, opts)
				tbl, err := a.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				i := 0
				for b.Loop() {
					if _, err := tbl.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), fmt.Sprintf("r%09d", i))); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run(fmt.Sprintf("%s/%s/Transact100", eng.Name, name), func(b *testing.B) {
				a := tabletest.OpenAccount(b, eng, opts)
				tbl, err := a.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				acts := make([]localtable.Action, localtable.MaxTransactionActions)
				i := 0
				for b.Loop() {
					pk := fmt.Sprintf("p%03d", (i/len(acts))%100)
					for j := range acts {
						acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: benchEntity(pk, fmt.Sprintf("r%09d", i))}
						i++
					}
					if _, err := tbl.Transact(ctx, acts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFeedLatency measures, in process, the time from a write's
// return to its change reaching the watchers, with 1 and 100 watchers on
// memory and pebble; it reports the 50th and 99th percentiles.
func BenchmarkFeedLatency(b *testing.B) {
	for _, eng := range tabletest.Engines[:2] {
		for _, watchers := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/watchers=%d", eng.Name, watchers), func(b *testing.B) {
				a := tabletest.OpenAccount(b, eng, feedOn)
				tbl, err := a.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				rev, _ := a.Revision(ctx)
				wctx, cancel := context.WithCancel(ctx)
				defer cancel()
				got := make(chan time.Time, 1024)
				for w := range watchers {
					go func() {
						for _, err := range a.Watch(wctx, &localtable.WatchOptions{After: rev}) {
							if err != nil {
								return
							}
							if w == 0 {
								got <- time.Now()
							}
						}
					}()
				}
				var lat []time.Duration
				i := 0
				for b.Loop() {
					if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
						b.Fatal(err)
					}
					done := time.Now()
					lat = append(lat, max(0, (<-got).Sub(done))) // the watcher may be woken before Insert returns
					i++
				}
				slices.Sort(lat)
				if n := len(lat); n > 0 {
					b.ReportMetric(float64(lat[n/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[n*99/100].Microseconds()), "p99-µs")
				}
			})
		}
	}
}

var feedCatchUp = flag.Int("feed.catchup", 100_000, "BenchmarkFeedCatchUp: changes in the feed to catch up on")

// BenchmarkFeedCatchUp measures a watcher catching up from the start of a
// feed of -feed.catchup changes (transactions of 100 small entities), on
// memory and pebble; it reports changes per second.
func BenchmarkFeedCatchUp(b *testing.B) {
	for _, eng := range tabletest.Engines[:2] {
		b.Run(eng.Name, func(b *testing.B) {
			n := *feedCatchUp
			store := eng.Open(b)
			a := tabletest.OpenAccount(b, eng, &localtable.Options{Engine: store, Feed: &localtable.FeedOptions{KeepChanges: n}})
			tbl, err := a.CreateTable(ctx, "Bench")
			if err != nil {
				b.Fatal(err)
			}
			acts := make([]localtable.Action, localtable.MaxTransactionActions)
			for i := 0; i < n; i += len(acts) {
				for j := range acts {
					acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
						PartitionKey: fmt.Sprintf("p%05d", i/len(acts)), RowKey: fmt.Sprint(j),
						Properties: localtable.Properties{"N": localtable.Int64Value(int64(i + j))}}}
				}
				if _, err := tbl.Transact(ctx, acts); err != nil {
					b.Fatal(err)
				}
			}
			last, err := a.Revision(ctx)
			if err != nil {
				b.Fatal(err)
			}
			// What the feed keeps per change, keys included: its records.
			it, err := store.NewIter(&storage.IterOptions{LowerBound: []byte{'f'}, UpperBound: []byte{'g'}})
			if err != nil {
				b.Fatal(err)
			}
			var size int
			for it.First(); it.Valid(); it.Next() {
				size += len(it.Key()) + len(it.Value())
			}
			it.Close()
			for b.Loop() {
				for c, err := range a.Watch(ctx, &localtable.WatchOptions{}) {
					if err != nil {
						b.Fatal(err)
					}
					if c.Revision == last {
						break
					}
				}
			}
			b.ReportMetric(float64(last)*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
			b.ReportMetric(float64(size)/float64(last), "feed-B/change")
		})
	}
}
