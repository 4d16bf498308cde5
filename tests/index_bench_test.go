package tests

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// indexBenchEngines are the engines of the index benchmarks: memory and
// pebble with the default indexes (covering on memory alone), and pebble
// with covering indexes ("pebble-covering": IndexRecordsAlways).
var indexBenchEngines = []struct {
	name    string
	eng     tabletest.Engine
	records localtable.IndexRecords
}{
	{"memory", tabletest.Engines[0], localtable.IndexRecordsDefault},
	{"pebble", tabletest.Engines[1], localtable.IndexRecordsDefault},
	{"pebble-covering", tabletest.Engines[1], localtable.IndexRecordsAlways},
}

// BenchmarkIndexFilter measures the full-table filter of BenchmarkQuery
// at 1% selectivity ("Score lt 1.0" over 200,000 entities) with an index
// on Score and without it (the same filter hidden behind noIndex, so the
// same table, in the same run), interleaved: each op runs both, every
// page, timed apart, as a query (every entity decoded), as Rows (every
// match read in place, its Score read: no Entity made) and as a Count
// (none decoded). It reports the time of each query, the ratios
// (without/with), and the build time of the index on the loaded table.
//
//	go test -run XXX -bench IndexFilter -benchtime 20x ./tests
func BenchmarkIndexFilter(b *testing.B) {
	for _, ie := range indexBenchEngines {
		b.Run(ie.name, func(b *testing.B) {
			tbl, err := openQueryBenchWith(b, ie.eng, ie.records)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if err := tbl.CreateIndex(ctx, "byScore", "Score"); err != nil {
				b.Fatal(err)
			}
			build := time.Since(start)
			f, err := filter.Parse("Score lt 1.0")
			if err != nil {
				b.Fatal(err)
			}
			run := func(p localtable.Predicate) (time.Duration, int, string) {
				t0 := time.Now()
				n, index := 0, ""
				opts := localtable.QueryOptions{Filter: p}
				for {
					page, err := tbl.Query(ctx, &opts)
					if err != nil {
						b.Fatal(err)
					}
					n += len(page.Entities)
					if page.Stats.Index != "" {
						index = page.Stats.Index
					}
					if page.Continuation.IsZero() {
						return time.Since(t0), n, index
					}
					opts.Continuation = page.Continuation
				}
			}
			// rows reads every match in place (Table.Rows: no Entity, no
			// map), its Score read from the record.
			rows := func(p localtable.Predicate) (time.Duration, int) {
				t0 := time.Now()
				n := readScoreRows(b, tbl, p)
				return time.Since(t0), n
			}
			count := func(p localtable.Predicate) (time.Duration, int) {
				t0 := time.Now()
				n, err := tbl.Count(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				return time.Since(t0), n
			}
			var with, without, cwith, cwithout, rwith, rwithout time.Duration
			i := 0
			for b.Loop() {
				// In turn first, so that neither pays for the other.
				var d1, d2 time.Duration
				var n1, n2 int
				var idx string
				if i%2 == 0 {
					d1, n1, idx = run(f)
					d2, n2, _ = run(noIndex{f})
				} else {
					d2, n2, _ = run(noIndex{f})
					d1, n1, idx = run(f)
				}
				if n1 != n2 || n1 < 1900 || n1 > 2100 || idx != "byScore" {
					b.Fatalf("with the index: %d entities (index %q); without: %d; want about 2000 (1%%) each", n1, idx, n2)
				}
				c1, m1 := count(f)
				c2, m2 := count(noIndex{f})
				if m1 != n1 || m2 != n1 {
					b.Fatalf("Count: %d with the index, %d without; the query returned %d", m1, m2, n1)
				}
				r1, k1 := rows(f)
				r2, k2 := rows(noIndex{f})
				if k1 != n1 || k2 != n1 {
					b.Fatalf("Rows: %d with the index, %d without; the query returned %d", k1, k2, n1)
				}
				with, without, cwith, cwithout = with+d1, without+d2, cwith+c1, cwithout+c2
				rwith, rwithout = rwith+r1, rwithout+r2
				i++
			}
			b.ReportMetric(float64(with.Nanoseconds())/float64(b.N), "ns-query-indexed/op")
			b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "ns-query-scan/op")
			b.ReportMetric(float64(without)/float64(with), "query-speedup")
			b.ReportMetric(float64(cwithout)/float64(cwith), "count-speedup")
			b.ReportMetric(float64(rwithout)/float64(rwith), "rows-speedup")
			b.ReportMetric(build.Seconds(), "build-s")
		})
	}
}

// readScoreRows reads every match of p in place (Table.Rows: no Entity,
// no map), its Score read from the record and checked below 1, and
// returns how many there were.
func readScoreRows(b *testing.B, tbl *localtable.Table, p localtable.Predicate) int {
	n := 0
	for r, err := range tbl.Rows(ctx, &localtable.QueryOptions{Filter: p}) {
		if err != nil {
			b.Fatal(err)
		}
		if v, ok := r.Property("Score"); !ok || v.Double() >= 1 {
			b.Fatalf("row %s/%s: Score %v", r.PartitionKey(), r.RowKey(), v)
		}
		n++
	}
	return n
}

// BenchmarkIndexQuery measures the query of BenchmarkIndexFilter (every
// page of "Score lt 1.0" over 200,000 entities, 1,998 matches decoded) as
// sub-benchmarks of their own, through the index ("indexed") and without
// it ("scan"), and the same as Rows (every match read in place, its Score
// read: "rows-indexed", "rows-scan"), for profiles and benchstat comparisons of one path. It
// reports the process's CPU time per op (cpu-ns/op) and, on Linux, the
// CPU time of the benchmark's own thread (thread-cpu-ns/op: the query's
// work without the engine's background compactions): steadier than the
// wall time on a shared machine.
//
//	go test -run XXX -bench 'IndexQuery/memory/indexed' -count 6 -cpuprofile cpu.out ./tests
func BenchmarkIndexQuery(b *testing.B) {
	for _, ie := range indexBenchEngines {
		b.Run(ie.name, func(b *testing.B) {
			tbl, err := openQueryBenchWith(b, ie.eng, ie.records)
			if err != nil {
				b.Fatal(err)
			}
			if err := tbl.CreateIndex(ctx, "byScore", "Score"); err != nil {
				b.Fatal(err)
			}
			f, err := filter.Parse("Score lt 1.0")
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range []string{"indexed", "scan", "rows-indexed", "rows-scan"} {
				b.Run(mode, func(b *testing.B) {
					var p localtable.Predicate = f
					if strings.HasSuffix(mode, "scan") {
						p = noIndex{f}
					}
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu0, th0 := cpuTime(), threadCPUTime()
					for b.Loop() {
						if strings.HasPrefix(mode, "rows") {
							if n := readScoreRows(b, tbl, p); n < 1900 || n > 2100 {
								b.Fatalf("%d rows, want about 2000 (1%%)", n)
							}
							continue
						}
						n, index := 0, ""
						opts := localtable.QueryOptions{Filter: p}
						for {
							page, err := tbl.Query(ctx, &opts)
							if err != nil {
								b.Fatal(err)
							}
							n += len(page.Entities)
							if page.Stats.Index != "" {
								index = page.Stats.Index
							}
							if page.Continuation.IsZero() {
								break
							}
							opts.Continuation = page.Continuation
						}
						if n < 1900 || n > 2100 || (index != "") != (mode == "indexed") {
							b.Fatalf("%d entities (index %q), want about 2000 (1%%)", n, index)
						}
					}
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
					if th1 := threadCPUTime(); th1 > 0 {
						b.ReportMetric(float64(th1-th0)/float64(b.N), "thread-cpu-ns/op")
					}
				})
			}
		})
	}
}

// BenchmarkIndexInsert measures the cost of one index on writes: inserts
// of one entity, and transactions of 100, into a table with an index on
// Score and into one without, interleaved in each op and timed apart.
// ratio is the time with the index over the time without; cpu-ratio the
// same of the process's CPU time (the garbage collector's included, on
// whichever side it runs).
//
//	go test -run XXX -bench IndexInsert -benchtime 2000x ./tests
func BenchmarkIndexInsert(b *testing.B) {
	for _, ie := range indexBenchEngines {
		for _, size := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/tx%d", ie.name, size), func(b *testing.B) {
				var e storage.Engine = memory.New(nil)
				if ie.eng.Name == "pebble" {
					db, err := pebble.Open(b.TempDir(), nil) // syncing, as in production
					if err != nil {
						b.Fatal(err)
					}
					e = db
				}
				a, err := localtable.Open(&localtable.Options{Engine: e, IndexRecords: ie.records})
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				plain, err := a.CreateTable(ctx, "plain")
				if err != nil {
					b.Fatal(err)
				}
				indexed, err := a.CreateTable(ctx, "indexed")
				if err != nil {
					b.Fatal(err)
				}
				if err := indexed.CreateIndex(ctx, "byScore", "Score"); err != nil {
					b.Fatal(err)
				}
				var cpuWith, cpuWithout int64 // the process's CPU time, ns
				write := func(tbl *localtable.Table, i int) time.Duration {
					acts := make([]localtable.Action, size)
					for j := range acts {
						acts[j] = localtable.Action{Type: localtable.ActionInsert, Entity: queryBenchEntity(i%1000, i/1000*size+j)}
					}
					c0, t0 := cpuTime(), time.Now()
					var err error
					if size == 1 {
						_, err = tbl.Insert(ctx, acts[0].Entity)
					} else {
						_, err = tbl.Transact(ctx, acts)
					}
					if err != nil {
						b.Fatal(err)
					}
					d, c := time.Since(t0), cpuTime()-c0
					if tbl == indexed {
						cpuWith += c
					} else {
						cpuWithout += c
					}
					return d
				}
				var with, without time.Duration
				i := 0
				for b.Loop() {
					if i%2 == 0 { // in turn first, so neither pays for the other
						without += write(plain, i)
						with += write(indexed, i)
					} else {
						with += write(indexed, i)
						without += write(plain, i)
					}
					i++
				}
				b.ReportMetric(float64(with.Nanoseconds())/float64(b.N), "ns-indexed/op")
				b.ReportMetric(float64(without.Nanoseconds())/float64(b.N), "ns-plain/op")
				b.ReportMetric(float64(with)/float64(without), "ratio")
				if cpuWithout > 0 {
					b.ReportMetric(float64(cpuWith)/float64(cpuWithout), "cpu-ratio")
				}
			})
		}
	}
}
