package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// The go test benchmarks of the disk-backed stores, for before/after
// comparisons of one change with benchstat (the program's interleaved
// rounds compare systems; these compare commits). Sub-benchmarks run in
// turn within each -count, so the systems' figures are interleaved too:
//
//	go test -run '^$' -bench 'Stores' -count 10 -benchtime 20x | tee new.txt
//
// BENCH_ENTITIES sets the data set's size (default 200,000: a full run's).
// BENCH_STORES names a directory to keep the loaded stores in: a later
// run with the same size opens them instead of loading again (loading
// 200,000 entities into four stores takes minutes). Without it the
// stores are loaded into a temporary directory and removed.

var benchStores struct {
	once   sync.Once
	err    error
	shape  shape
	stores map[string]store
}

// storesManifest is what a kept directory records of its stores.
type storesManifest struct {
	Shape   shape  `json:"shape"`
	TableID uint64 `json:"table_id"`
}

func loadBenchStores(b *testing.B) (shape, map[string]store) {
	b.Helper()
	benchStores.once.Do(func() {
		benchStores.shape, benchStores.stores, benchStores.err = openBenchStores()
	})
	if benchStores.err != nil {
		b.Fatal(benchStores.err)
	}
	return benchStores.shape, benchStores.stores
}

func openBenchStores() (shape, map[string]store, error) {
	n := 200_000
	if v := os.Getenv("BENCH_ENTITIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2000 || n%2000 != 0 {
			return shape{}, nil, fmt.Errorf("BENCH_ENTITIES=%q: want a multiple of 2000", v)
		}
	}
	s := shape{Parts: n / 2000, Rows: 2000}
	dir := os.Getenv("BENCH_STORES")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "lt-stores-bench"); err != nil {
			return s, nil, err
		}
		// Removed when the process exits: the stores stay open until then.
	} else {
		dir = filepath.Join(dir, strconv.Itoa(n))
	}
	sub := func(name string) string { return filepath.Join(dir, name) }
	var m storesManifest
	if data, err := os.ReadFile(sub("stores.json")); err == nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return s, nil, err
		}
		if m.Shape != s {
			return s, nil, fmt.Errorf("%s holds %+v, want %+v", dir, m.Shape, s)
		}
		stores, err := openKeptStores(sub, m)
		return s, stores, err
	}
	order := shuffled(s.n(), 1)
	lt, err := newLocaltable(sLtMem, "", s, order)
	if err != nil {
		return s, nil, err
	}
	rec, err := captureRecords(lt, s)
	if err != nil {
		return s, nil, err
	}
	lt.close()
	stores := map[string]store{}
	for _, d := range []string{"lt", "raw", "sqlite", "bolt"} {
		if err := os.MkdirAll(sub(d), 0o755); err != nil {
			return s, nil, err
		}
	}
	if stores[sLtPeb], err = newLocaltable(sLtPeb, sub("lt"), s, order); err != nil {
		return s, nil, err
	}
	if stores[sRawPeb], err = newRawPebble(sub("raw"), rec, s, order); err != nil {
		return s, nil, err
	}
	if stores[sSQLite], err = newSQLite(sub("sqlite"), s, order); err != nil {
		return s, nil, err
	}
	if stores[sBolt], err = newBolt(sub("bolt"), s, order); err != nil {
		return s, nil, err
	}
	data, err := json.Marshal(storesManifest{Shape: s, TableID: rec.tableID})
	if err != nil {
		return s, nil, err
	}
	return s, stores, os.WriteFile(sub("stores.json"), data, 0o644)
}

// openKeptStores opens the stores an earlier run loaded.
func openKeptStores(sub func(string) string, m storesManifest) (map[string]store, error) {
	tmpl := templateRow("", "")
	acct, eng, err := openLocaltable(sub("lt"), false, nil)
	if err != nil {
		return nil, err
	}
	tbl, err := acct.GetTable(ctx, tableName)
	if err != nil {
		return nil, err
	}
	lt := &ltStore{label: sLtPeb, dir: sub("lt"), acct: acct, eng: eng, tbl: tbl, tmpl: tmpl.props()}
	rp, err := openRawPebble(sub("raw"), false)
	if err != nil {
		return nil, err
	}
	raw := &rawStore{label: sRawPeb, rec: &records{tableID: m.TableID}, eng: rp}
	sq := &sqliteStore{path: filepath.Join(sub("sqlite"), "bench.db"), tmpl: tmpl}
	bo := &boltStore{path: filepath.Join(sub("bolt"), "bench.bolt")}
	stores := map[string]store{sLtPeb: lt, sRawPeb: raw, sSQLite: sq, sBolt: bo}
	for _, st := range []reopener{sq, bo} {
		if err := st.reopen(pk(0), rk(0)); err != nil {
			return nil, err
		}
	}
	return stores, nil
}

var benchSystems = []string{sLtPeb, sRawPeb, sSQLite, sBolt}

// ltRows is localtable pebble read through Table.Rows into the typed row
// SQLite scans into (its strings and bytes copies): what a user who knows
// the entity's shape writes, beside the Entity maps of the workload.
type ltRows struct{ *ltStore }

func (s ltRows) name() string { return "localtable pebble Rows" }

func (s ltRows) partitionFilter(pk string) (int, error) {
	f := filter.And(filter.PartitionKey().Eq(pk), filter.Prop("Age").Gt(int32(50)))
	n := 0
	var r row
	for x, err := range s.tbl.Rows(ctx, &localtable.QueryOptions{Filter: f}) {
		if err != nil {
			return n, err
		}
		// The properties in name order, each read going on from the last.
		get := func(name string) localtable.Value {
			v, _ := x.Property(name)
			return v
		}
		r.PartitionKey, r.RowKey = strings.Clone(x.PartitionKey()), strings.Clone(x.RowKey())
		r.Active = get("Active").Bool()
		r.Age = get("Age").Int32()
		r.Email = strings.Clone(get("Email").String())
		r.ID = guid(get("ID").GUID())
		r.Joined = get("Joined").Time()
		r.Name = strings.Clone(get("Name").String())
		r.Notes = strings.Clone(get("Notes").String())
		r.Payload = get("Payload").Binary()
		r.Score = get("Score").Double()
		r.Visits = get("Visits").Int64()
		n++
	}
	return n, nil
}

// BenchmarkStoresReopen is the reopen workload: close the store, open it
// again, read one entity.
func BenchmarkStoresReopen(b *testing.B) {
	s, stores := loadBenchStores(b)
	for _, name := range benchSystems {
		st := stores[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := st.(reopener).reopen(pk(1%s.Parts), rk(7)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoresPartitionFilter is the partition scan with an Int32
// filter: PartitionKey eq 'pNNN' and Age gt 50.
func BenchmarkStoresPartitionFilter(b *testing.B) {
	s, stores := loadBenchStores(b)
	for _, name := range append(benchSystems, "localtable pebble Rows") {
		st := stores[name]
		if st == nil {
			st = ltRows{stores[sLtPeb].(*ltStore)}
		}
		b.Run(name, func(b *testing.B) {
			// One pass over every partition first: the figure is that of
			// a warm cache (pebble's, SQLite's, the OS's), as in the
			// program's rounds.
			for p := range s.Parts {
				if _, err := st.partitionFilter(pk(p)); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu0, err := procCPU(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				p := i % s.Parts
				n, err := st.partitionFilter(pk(p))
				if err != nil {
					b.Fatal(err)
				}
				want := s.Rows
				if st.filters() {
					want = s.ageMatches(p)
				}
				if n != want {
					b.Fatalf("%s: %d, want %d", pk(p), n, want)
				}
				i++
			}
			// CPU time is steadier than wall time on a machine that
			// other work shares.
			cpu1, err := procCPU(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(i), "cpu-ns/op")
		})
	}
}

// BenchmarkStoresRange is the range of 100 rows: PartitionKey eq 'pNNN'
// and RowKey ge 'rX' and RowKey lt 'rX+100'.
func BenchmarkStoresRange(b *testing.B) {
	s, stores := loadBenchStores(b)
	for _, name := range benchSystems[:3] {
		st := stores[name]
		b.Run(name, func(b *testing.B) {
			cpu0, err := procCPU(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				p, r := i%s.Parts, i*37%(s.Rows-100)
				n, err := st.rangeQuery(pk(p), rk(r), rk(r+100))
				if err != nil {
					b.Fatal(err)
				}
				if n != 100 {
					b.Fatalf("range %s %s: %d", pk(p), rk(r), n)
				}
				i++
			}
			cpu1, err := procCPU(os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(i), "cpu-ns/op")
		})
	}
}
