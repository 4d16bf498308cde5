package tests

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/feedbench"
	"github.com/localtable/localtable/internal/tabletest"
)

// BenchmarkFeedWrite measures what keeping the change feed costs a write:
// a single insert, a single replace, and a transaction of 100 inserts,
// with the feed off and on, on memory and pebble. Compare on with off of
// the same run.
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
				cpu := cpuTime()
				for b.Loop() {
					if _, err := tbl.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%100), fmt.Sprintf("r%09d", i))); err != nil {
						b.Fatal(err)
					}
					i++
				}
				reportCPU(b, cpu)
			})
			// Replace overwrites the entities of a partition in turn, each
			// write a replace once the first 1,000 are in.
			b.Run(fmt.Sprintf("%s/%s/Replace", eng.Name, name), func(b *testing.B) {
				a := tabletest.OpenAccount(b, eng, opts)
				tbl, err := a.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				i := 0
				cpu := cpuTime()
				for b.Loop() {
					if _, err := tbl.Upsert(ctx, variedEntity("p", fmt.Sprintf("r%04d", i%1000), i), nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
				reportCPU(b, cpu)
			})
			// Transact100 writes the same values into every entity, which
			// compress well; Transact100Varied values that differ from one
			// entity to the next, as most data does; both over 100
			// partitions in turn. Transact100NewPartition writes varied
			// entities into a new partition each, after all the others (as
			// the bench program's transaction of 100 does): keys that only
			// ascend.
			same := func(pk, rk string, _ int) localtable.Entity { return benchEntity(pk, rk) }
			for _, tx := range []struct {
				name   string
				entity func(pk, rk string, i int) localtable.Entity
				newPK  bool
			}{
				{"Transact100", same, false},
				{"Transact100Varied", variedEntity, false},
				{"Transact100NewPartition", variedEntity, true},
			} {
				b.Run(fmt.Sprintf("%s/%s/%s", eng.Name, name, tx.name), func(b *testing.B) {
					a := tabletest.OpenAccount(b, eng, opts)
					tbl, err := a.CreateTable(ctx, "Bench")
					if err != nil {
						b.Fatal(err)
					}
					acts := make([]localtable.Action, localtable.MaxTransactionActions)
					i := 0
					cpu := cpuTime()
					for b.Loop() {
						pk := fmt.Sprintf("p%03d", (i/len(acts))%100)
						if tx.newPK {
							pk = fmt.Sprintf("p%09d", i/len(acts))
						}
						for j := range acts {
							acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: tx.entity(pk, fmt.Sprintf("r%09d", i), i)}
							i++
						}
						if _, err := tbl.Transact(ctx, acts); err != nil {
							b.Fatal(err)
						}
					}
					reportCPU(b, cpu)
				})
			}
		}
	}
}

// variedEntity is benchEntity's shape with values that differ from one
// entity (number i) to the next, as a hash spreads them: what compression
// cannot fold away.
func variedEntity(pk, rk string, i int) localtable.Entity {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	blob := make([]byte, 64)
	for k := range blob {
		blob[k] = byte(r.Uint32())
	}
	e := benchEntity(pk, rk)
	e.Properties["Name"] = localtable.StringValue(fmt.Sprintf("customer %x", r.Uint64()))
	e.Properties["Email"] = localtable.StringValue(fmt.Sprintf("%x@example.com", r.Uint32()))
	e.Properties["Age"] = localtable.Int32Value(int32(r.IntN(100)))
	e.Properties["Balance"] = localtable.Int64Value(r.Int64())
	e.Properties["Score"] = localtable.DoubleValue(r.Float64() * 100)
	e.Properties["Joined"] = localtable.DateTimeTicksValue(637000000000000000 + r.Int64N(1e15))
	e.Properties["Blob"] = localtable.BinaryValue(blob)
	e.Properties["Notes"] = localtable.StringValue(fmt.Sprintf("notes %x %x", r.Uint64(), r.Uint64()))
	return e
}

// BenchmarkFeedLatency measures, in process, the time from a write's
// return until every watcher has its change, with 1 and 100 watchers on
// memory and pebble (feedbench.Deliveries, which the bench program reports
// too); it reports the 50th and 99th percentiles.
func BenchmarkFeedLatency(b *testing.B) {
	for _, eng := range tabletest.Engines[:2] {
		for _, watchers := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/watchers=%d", eng.Name, watchers), func(b *testing.B) {
				a := tabletest.OpenAccount(b, eng, feedOn)
				tbl, err := a.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				lat, err := feedbench.Deliveries(ctx, a, tbl, watchers, b.N, func(i int) localtable.Entity {
					return localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}
				})
				if err != nil {
					b.Fatal(err)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

var feedCatchUp = flag.Int("feed.catchup", 100_000, "BenchmarkFeedCatchUp: changes in the feed to catch up on")

// BenchmarkFeedCatchUp measures a watcher catching up from the start of a
// feed of -feed.catchup changes (transactions of 100 small entities:
// feedbench.Fill and CatchUp, which the bench program reports too), on
// memory and pebble; it reports changes per second, and the bytes the
// feed keeps per change.
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
			if err := feedbench.Fill(ctx, tbl, "p", n); err != nil {
				b.Fatal(err)
			}
			last, err := a.Revision(ctx)
			if err != nil {
				b.Fatal(err)
			}
			size, err := feedbench.StoredBytes(store)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := feedbench.CatchUp(ctx, a, last); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(last)*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
			b.ReportMetric(float64(size)/float64(last), "feed-B/change")
		})
	}
}
