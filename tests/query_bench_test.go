package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// The query benchmarks run on one data set per engine: queryBenchParts
// partitions of queryBenchRows entities of ~10 typed properties, loaded
// lazily (only when a benchmark of that engine runs, so never in a plain
// go test) and shared by the engine's sub-benchmarks.
const (
	queryBenchParts = 100
	queryBenchRows  = 2000
)

// queryBenchEntity is benchEntity with the properties the residual filters
// read varied: Age in 0..99 and Score in [0, 100), so that "Age gt 50"
// keeps 49% of a partition and "Score lt 1.0" 1% of the table.
func queryBenchEntity(p, r int) localtable.Entity {
	e := benchEntity(fmt.Sprintf("p%03d", p), fmt.Sprintf("r%06d", r))
	i := p*queryBenchRows + r
	e.Properties["Age"] = localtable.Int32Value(int32(i * 37 % 100))
	e.Properties["Score"] = localtable.DoubleValue(float64(uint32(i)*2654435761%100000) / 1000)
	return e
}

// openQueryBench opens an account on a new engine of kind eng, closed
// with parent, and loads the data set in transactions of 100. The pebble
// engine skips the fsync of each commit, for loading speed. It returns
// errors rather than failing parent, since the benchmark that calls it is
// one of parent's children.
func openQueryBench(parent *testing.B, eng tabletest.Engine) (*localtable.Table, error) {
	return openQueryBenchWith(parent, eng, localtable.IndexRecordsDefault)
}

// openQueryBenchWith is openQueryBench with the account's
// Options.IndexRecords set to records.
func openQueryBenchWith(parent *testing.B, eng tabletest.Engine, records localtable.IndexRecords) (*localtable.Table, error) {
	var e storage.Engine = memory.New(nil)
	if eng.Name == "pebble" {
		db, err := pebble.Open(parent.TempDir(), &pebble.Options{NoSync: true})
		if err != nil {
			return nil, err
		}
		e = db
	}
	a, err := localtable.Open(&localtable.Options{Engine: e, IndexRecords: records})
	if err != nil {
		return nil, err
	}
	parent.Cleanup(func() { a.Close() })
	tbl, err := a.CreateTable(ctx, "bench")
	if err != nil {
		return nil, err
	}
	acts := make([]localtable.Action, 0, localtable.MaxTransactionActions)
	for p := range queryBenchParts {
		for r := range queryBenchRows {
			acts = append(acts, localtable.Action{Type: localtable.ActionInsert, Entity: queryBenchEntity(p, r)})
			if len(acts) == cap(acts) {
				if _, err := tbl.Transact(ctx, acts); err != nil {
					return nil, err
				}
				acts = acts[:0]
			}
		}
	}
	return tbl, nil
}

// queryBenchCases are the queries measured. The or of ten point lookups
// has 20 comparisons, beyond the service's 15, so the filters are parsed
// without that limit.
var queryBenchCases = []struct{ name, filter string }{
	{"PointFilter", "PartitionKey eq 'p042' and RowKey eq 'r001234'"},
	{"Range100", "PartitionKey eq 'p042' and RowKey ge 'r001000' and RowKey lt 'r001100'"},
	{"PartitionResidual", "PartitionKey eq 'p042' and Age gt 50"},
	{"FullScanResidual", "Score lt 1.0"},
	{"Or10Points", orOfPoints(10)},
}

func orOfPoints(n int) string {
	var terms []string
	for i := range n {
		terms = append(terms, fmt.Sprintf("(PartitionKey eq 'p%03d' and RowKey eq 'r%06d')", i*9+3, i*197+17))
	}
	return strings.Join(terms, " or ")
}

// BenchmarkQuery measures filtered queries per engine on 200,000 entities,
// each op a whole query (every page), with the point Get as a baseline.
// It reports the entities scanned and returned per op.
//
//	go test -run XXX -bench Query -benchtime 2s
func BenchmarkQuery(b *testing.B) {
	for _, eng := range tabletest.Engines {
		b.Run(eng.Name, func(b *testing.B) {
			// The parent benchmark runs once; its children share the table.
			load := sync.OnceValues(func() (*localtable.Table, error) { return openQueryBench(b, eng) })
			for _, c := range queryBenchCases {
				b.Run(c.name, func(b *testing.B) {
					tbl, err := load()
					if err != nil {
						b.Fatal(err)
					}
					f, err := filter.ParseWithOptions(c.filter, nil)
					if err != nil {
						b.Fatal(err)
					}
					var scanned, returned int
					b.ResetTimer()
					for b.Loop() {
						opts := localtable.QueryOptions{Filter: f}
						for {
							page, err := tbl.Query(ctx, &opts)
							if err != nil {
								b.Fatal(err)
							}
							scanned += page.Stats.Scanned
							returned += page.Stats.Returned
							if page.Continuation.IsZero() {
								break
							}
							opts.Continuation = page.Continuation
						}
					}
					b.ReportMetric(float64(scanned)/float64(b.N), "scanned/op")
					b.ReportMetric(float64(returned)/float64(b.N), "returned/op")
				})
			}
			b.Run("Get", func(b *testing.B) {
				tbl, err := load()
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, err := tbl.Get(ctx, "p042", "r001234", nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(1, "scanned/op")
				b.ReportMetric(1, "returned/op")
			})
		})
	}
}

// TestQueryBenchFilters checks, on a small table, that the benchmark's
// filters plan as intended, without loading the benchmark's data set.
func TestQueryBenchFilters(t *testing.T) {
	want := map[string]string{
		"PointFilter":       "1 key range",
		"Range100":          "1 key range",
		"PartitionResidual": "1 key range",
		"FullScanResidual":  "full scan",
		"Or10Points":        "10 key ranges",
	}
	for _, c := range queryBenchCases {
		f, err := filter.ParseWithOptions(c.filter, nil)
		if err != nil {
			t.Fatal(err)
		}
		if x := f.Explain(); !strings.HasPrefix(x, want[c.name]) {
			t.Errorf("%s: plan\n%s\nwant %s", c.name, x, want[c.name])
		}
	}
}
