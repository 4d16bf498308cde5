package pebble

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/localtable/localtable"
)

// BenchmarkFeedWriteAmp writes transactions of 100 entities, each into a
// new partition after all the others (keys that only ascend, as the bench
// program's), into a localtable account on this engine with its change
// feed off and on, and reports Pebble's write amplification (bytes written
// by flushes and compactions per byte flushed, write-amp) and the
// compactions per 1,000 transactions. They are what the span policy
// (fileSpans) is about; compare builds with and without it.
//
//	go test -run XXX -bench FeedWriteAmp -benchtime 10000x ./storage/pebble
func BenchmarkFeedWriteAmp(b *testing.B) {
	ctx := context.Background()
	for _, feed := range []bool{false, true} {
		b.Run(fmt.Sprintf("feed=%v", feed), func(b *testing.B) {
			d, err := Open(b.TempDir(), &Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			o := &localtable.Options{Engine: d}
			if feed {
				o.Feed = &localtable.FeedOptions{}
			}
			a, err := localtable.Open(o)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			tbl, err := a.CreateTable(ctx, "Things")
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			acts := make([]localtable.Action, 100)
			i := 0
			for b.Loop() {
				for j := range acts {
					blob := make([]byte, 64)
					for k := range blob {
						blob[k] = byte(r.Uint32())
					}
					acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
						PartitionKey: fmt.Sprintf("p%09d", i), RowKey: fmt.Sprintf("r%03d", j),
						Properties: localtable.Properties{
							"Count": localtable.Int64Value(r.Int64()),
							"Blob":  localtable.BinaryValue(blob),
							"Name":  localtable.StringValue(fmt.Sprintf("thing %x", r.Uint64())),
						}}}
				}
				if _, err := tbl.Transact(ctx, acts); err != nil {
					b.Fatal(err)
				}
				i++
			}
			m := d.db.Metrics()
			total := m.Total()
			b.ReportMetric(total.WriteAmp(), "write-amp")
			b.ReportMetric(float64(m.Compact.Count)*1000/float64(b.N), "compactions/1000tx")
		})
	}
}
