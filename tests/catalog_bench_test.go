package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// BenchmarkCatalogChurn measures the latency of reads (Get) and writes
// (Upsert) of one table while another goroutine creates and deletes other
// tables without pause, on pebble on disk with every commit fsynced, and
// reports its percentiles. "idle" is the same without the churn. A catalog
// change that held a lock over the whole account during its fsync would
// show in the p99 of every operation.
//
//	go test -run XXX -bench CatalogChurn -benchtime 2s ./
func BenchmarkCatalogChurn(b *testing.B) {
	for _, op := range []string{"Get", "Upsert"} {
		for _, churn := range []bool{false, true} {
			name := op + "/idle"
			if churn {
				name = op + "/churn"
			}
			b.Run(name, func(b *testing.B) { benchCatalogChurn(b, op, churn) })
		}
	}
}

func benchCatalogChurn(b *testing.B, op string, churn bool) {
	a := tabletest.OpenAccount(b, tabletest.Engines[1], nil) // pebble
	tbl, err := a.CreateTable(ctx, "Steady")
	if err != nil {
		b.Fatal(err)
	}
	const rows = 1000
	var acts []localtable.Action
	for i := range rows {
		acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{
			PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i),
			Properties: localtable.Properties{"V": localtable.Int64Value(int64(i))}}})
		if len(acts) == localtable.MaxTransactionActions {
			if _, err := tbl.Transact(ctx, acts); err != nil {
				b.Fatal(err)
			}
			acts = acts[:0]
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var changes atomic.Int64
	started := make(chan struct{}) // closed after the first change
	if churn {
		wg.Add(1)
		var once sync.Once
		signal := func() { once.Do(func() { close(started) }) }
		go func() {
			defer wg.Done()
			defer signal()
			for i := 0; ; i++ {
				if i == 1 {
					signal()
				}
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprint("Churn", i%4)
				if _, err := a.CreateTable(ctx, name); err != nil {
					b.Error(err)
					return
				}
				if err := a.DeleteTable(ctx, name); err != nil {
					b.Error(err)
					return
				}
				changes.Add(2)
			}
		}()
		<-started
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start, changes0 := time.Now(), changes.Load()
	for i := range b.N {
		rk := fmt.Sprintf("r%04d", rng.IntN(rows))
		t0 := time.Now()
		switch op {
		case "Get":
			_, err = tbl.Get(ctx, "p", rk, nil)
		default:
			_, err = tbl.Upsert(ctx, localtable.Entity{PartitionKey: "w", RowKey: rk}, nil)
		}
		lat[i] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
	}
	elapsed, changed := time.Since(start), changes.Load()-changes0
	b.StopTimer()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds())/1e3, "max-µs")
	if churn {
		b.ReportMetric(float64(changed)/elapsed.Seconds(), "catalog-changes/s")
	}
}
