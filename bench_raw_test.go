package localtable

// Benchmarks of the table layer against its engine used bare: each
// localtable benchmark is paired with one that does the same engine reads
// and writes of the same bytes (the keys and records localtable would
// store, made with its own encoders) through pebble or tidwall/btree
// directly. Compare them in one run:
//
//	go test -run XXX -bench VsRaw -count 3 .
//
// and divide each localtable figure by its raw pair. Each benchmark also
// reports cpu-ns/op, the process's CPU time per operation (garbage
// collection included): on a machine shared with other work it varies far
// less than the wall time, so its ratio is the steadier figure.
//
// What remains of the overhead, and why (docs/benchmarks.md has figures):
//   - Get decodes the record into an Entity, and its Properties map is most
//     of that: a 10-entry map[string]Value costs about four copies of the
//     record. The strings view the memory engine's immutable record; on
//     pebble they are one copy.
//   - Writes validate the entity and encode its record in one pass over
//     its properties; on pebble with fsync the fsync dominates and an
//     Insert is within about 10%.
//   - The memory engine publishes its copy-on-write tree to readers only
//     when a reader needs a newer one, so a run of writes changes the tree
//     in place as the bare btree does. A snapshot or a query between
//     writes makes the next write copy the nodes on its path: the cost of
//     the engine's O(1) snapshots, not of the table layer.
//   - A filtered scan matches each record in place and decodes only the
//     matches, so it keeps up with a bare scan that copies every value.

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tidwall/btree"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// rawEngine is the bare engine a benchmark pairs with localtable: a point
// read, and an atomic batch of sets.
type rawEngine interface {
	get(key []byte) (n int, ok bool)     // the value's length
	read(dst, key []byte) ([]byte, bool) // the value appended to dst
	commit(keys, vals [][]byte)
}

// loop runs op b.N times with b.Loop, and reports the CPU time per op.
func loop(b *testing.B, op func()) {
	start := cpuTime()
	for b.Loop() {
		op()
	}
	if start > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

type benchEngine struct {
	name string
	lt   func(b *testing.B) storage.Engine
	raw  func(b *testing.B) rawEngine
}

var benchEngines = []benchEngine{
	{"memory",
		func(*testing.B) storage.Engine { return memory.New(nil) },
		func(*testing.B) rawEngine { return newRawBTree() }},
	{"pebble-disk",
		func(b *testing.B) storage.Engine { return mustPebble(b, b.TempDir(), nil) },
		func(b *testing.B) rawEngine { return openRawPebble(b, b.TempDir(), vfs.Default) }},
	{"pebble-memfs",
		func(b *testing.B) storage.Engine { return mustPebble(b, "", &pebble.Options{FS: vfs.NewMem()}) },
		func(b *testing.B) rawEngine { return openRawPebble(b, "", vfs.NewMem()) }},
}

func mustPebble(b *testing.B, dir string, o *pebble.Options) storage.Engine {
	db, err := pebble.Open(dir, o)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// rawBTree is tidwall/btree used directly, with an item of two slices.
type rawBTree struct {
	t *btree.BTreeG[item]
}

func newRawBTree() *rawBTree {
	return &rawBTree{btree.NewBTreeGOptions(func(a, b item) bool { return string(a.key) < string(b.key) }, btree.Options{NoLocks: true})}
}

type item struct{ key, value []byte }

func (r *rawBTree) get(key []byte) (int, bool) {
	it, ok := r.t.Get(item{key: key})
	return len(it.value), ok
}

func (r *rawBTree) read(dst, key []byte) ([]byte, bool) {
	it, ok := r.t.Get(item{key: key})
	return append(dst, it.value...), ok
}

func (r *rawBTree) commit(keys, vals [][]byte) {
	for i := range keys {
		// Copy, as any engine must: the caller reuses its buffers.
		buf := make([]byte, len(keys[i])+len(vals[i]))
		copy(buf, keys[i])
		copy(buf[len(keys[i]):], vals[i])
		r.t.Set(item{key: buf[:len(keys[i]):len(keys[i])], value: buf[len(keys[i]):]})
	}
}

type rawPebble struct{ db *pdb.DB }

type quietPebbleLogger struct{}

func (quietPebbleLogger) Infof(string, ...any)         {}
func (quietPebbleLogger) Errorf(string, ...any)        {}
func (quietPebbleLogger) Fatalf(f string, args ...any) { pdb.DefaultLogger.Fatalf(f, args...) }

// openRawPebble opens a bare pebble.DB with the options pebble.Open uses.
func openRawPebble(b *testing.B, dir string, fs vfs.FS) *rawPebble {
	db, err := pdb.Open(dir, pebble.NativeOptions(&pebble.Options{FS: fs, Logger: quietPebbleLogger{}}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return &rawPebble{db}
}

func (r *rawPebble) get(key []byte) (int, bool) {
	v, c, err := r.db.Get(key)
	if err != nil {
		return 0, false
	}
	n := len(v)
	c.Close()
	return n, true
}

func (r *rawPebble) read(dst, key []byte) ([]byte, bool) {
	v, c, err := r.db.Get(key)
	if err != nil {
		return nil, false
	}
	dst = append(dst, v...)
	c.Close()
	return dst, true
}

func (r *rawPebble) commit(keys, vals [][]byte) {
	batch := r.db.NewBatch()
	for i := range keys {
		batch.Set(keys[i], vals[i], nil)
	}
	if err := batch.Commit(pdb.Sync); err != nil {
		panic(err)
	}
	batch.Close()
}

// benchProps is a typical entity of 10 typed properties.
func benchProps() Properties {
	return Properties{
		"Name":    StringValue("a customer name"),
		"Email":   StringValue("someone@example.com"),
		"Age":     Int32Value(42),
		"Balance": Int64Value(1234567890123),
		"Score":   DoubleValue(98.6),
		"Active":  BoolValue(true),
		"Joined":  DateTimeTicksValue(637000000000000000),
		"Id":      GUIDValue(MustParseGUID("4185404a-5818-48c3-b9be-f217df0dba6f")),
		"Blob":    BinaryValue(make([]byte, 64)),
		"Notes":   StringValue("some notes about this customer"),
	}
}

// benchKeys returns the keys of the i'th benchmark entity; both sides of
// a pair make them the same way.
func benchKeys(i int) (pk, rk string) {
	var buf [24]byte
	pk = string(strconv.AppendInt(append(buf[:0], 'p'), int64(i%100), 10))
	rk = string(strconv.AppendInt(append(buf[:0], 'r'), int64(i), 10))
	return pk, rk
}

// benchTable opens an account over eng with one table; it returns the
// table and its ID.
func benchTable(b *testing.B, eng storage.Engine) (*Table, uint64) {
	a, err := Open(&Options{Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	t, err := a.CreateTable(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return t, a.cat.Load().byName["bench"].id
}

// benchRecord is the record localtable stores for benchProps.
func benchRecord() []byte {
	return appendRecord(nil, TimeToTicks(time.Now()), benchProps())
}

const benchGetKeys = 10_000

func BenchmarkVsRaw(b *testing.B) {
	ctx := context.Background()
	for _, be := range benchEngines {
		b.Run(be.name+"/Insert/localtable", func(b *testing.B) {
			tbl, _ := benchTable(b, be.lt(b))
			props := benchProps()
			i := 0
			loop(b, func() {
				pk, rk := benchKeys(i)
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: rk, Properties: props}); err != nil {
					b.Fatal(err)
				}
				i++
			})
		})
		b.Run(be.name+"/Insert/raw", func(b *testing.B) {
			r := be.raw(b)
			val := benchRecord()
			keys, vals := make([][]byte, 1), [][]byte{val}
			i := 0
			loop(b, func() {
				pk, rk := benchKeys(i)
				keys[0] = keyenc.AppendEntityKey(keys[0][:0], 1, pk, rk)
				if _, ok := r.get(keys[0]); ok { // Insert checks the entity is absent
					b.Fatal("exists")
				}
				r.commit(keys, vals)
				i++
			})
		})
		b.Run(be.name+"/Transact100/localtable", func(b *testing.B) {
			tbl, _ := benchTable(b, be.lt(b))
			props := benchProps()
			acts := make([]Action, MaxTransactionActions)
			i := 0
			loop(b, func() {
				for j := range acts {
					pk, rk := benchKeys(i)
					if j > 0 {
						pk = acts[0].Entity.PartitionKey
					}
					acts[j] = Action{Type: ActionInsert, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: props}}
					i++
				}
				if _, err := tbl.Transact(ctx, acts); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(be.name+"/Transact100/raw", func(b *testing.B) {
			r := be.raw(b)
			val := benchRecord()
			keys, vals := make([][]byte, MaxTransactionActions), make([][]byte, MaxTransactionActions)
			i := 0
			loop(b, func() {
				var pk0 string
				for j := range keys {
					pk, rk := benchKeys(i)
					if j == 0 {
						pk0 = pk
					}
					keys[j] = keyenc.AppendEntityKey(keys[j][:0], 1, pk0, rk)
					vals[j] = val
					if _, ok := r.get(keys[j]); ok {
						b.Fatal("exists")
					}
					i++
				}
				r.commit(keys, vals)
			})
		})
		b.Run(be.name+"/Get/localtable", func(b *testing.B) {
			tbl, _ := benchTable(b, be.lt(b))
			props := benchProps()
			for i := range benchGetKeys {
				pk, rk := benchKeys(i)
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: rk, Properties: props}); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			loop(b, func() {
				pk, rk := benchKeys((i * 7919) % benchGetKeys)
				e, err := tbl.Get(ctx, pk, rk, nil)
				if err != nil || len(e.Properties) != 10 {
					b.Fatal(err)
				}
				i++
			})
		})
		b.Run(be.name+"/Get/row", func(b *testing.B) {
			// GetRow reading two properties in place, into a reused Row.
			tbl, _ := benchTable(b, be.lt(b))
			props := benchProps()
			for i := range benchGetKeys {
				pk, rk := benchKeys(i)
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: rk, Properties: props}); err != nil {
					b.Fatal(err)
				}
			}
			var row Row
			var sum int64
			i := 0
			loop(b, func() {
				pk, rk := benchKeys((i * 7919) % benchGetKeys)
				if err := tbl.GetRow(ctx, pk, rk, &row); err != nil {
					b.Fatal(err)
				}
				balance, ok := row.Property("Balance")
				name, ok2 := row.Property("Name")
				if !ok || !ok2 {
					b.Fatal("missing properties")
				}
				sum += balance.Int64() + int64(len(name.String()))
				i++
			})
		})
		for _, reuse := range []bool{false, true} {
			name := "/Get/raw"
			if reuse {
				name += "reuse" // the least a caller of the bare engine pays
			}
			b.Run(be.name+name, func(b *testing.B) {
				r := be.raw(b)
				val := benchRecord()
				keys, vals := make([][]byte, 1), [][]byte{val}
				for i := range benchGetKeys {
					pk, rk := benchKeys(i)
					keys[0] = keyenc.AppendEntityKey(keys[0][:0], 1, pk, rk)
					r.commit(keys, vals)
				}
				var key, sink []byte
				i := 0
				loop(b, func() {
					pk, rk := benchKeys((i * 7919) % benchGetKeys)
					key = keyenc.AppendEntityKey(key[:0], 1, pk, rk)
					var dst []byte // a copy, as a reader keeping the value must
					if reuse {
						dst = sink[:0] // a copy into one reused buffer
					}
					v, ok := r.read(dst, key)
					if !ok || len(v) != len(val) {
						b.Fatal("missing")
					}
					sink = v
					i++
				})
				_ = sink
			})
		}
	}
}

// The scan benchmarks' data set: scanParts partitions of scanRows
// entities, entity i being row i%scanRows of partition i/scanRows, with
// benchProps varied so that "Score lt 1.0" keeps 1% of them.
// LOCALTABLE_SCAN_ROWS sets scanRows (at least 200, at most 1,000,000) to
// measure how the scans' cost grows with the table: 2000 for 200,000
// entities, 20000 for 2,000,000.
const scanParts = 100

var scanRows = func() int {
	if n, err := strconv.Atoi(os.Getenv("LOCALTABLE_SCAN_ROWS")); err == nil && n >= 200 && n <= 1_000_000 {
		return n
	}
	return 300
}()

func scanKeys(i int) (pk, rk string) {
	return "p" + strconv.Itoa(1000 + i/scanRows)[1:], "r" + strconv.Itoa(1_000_000 + i%scanRows)[1:]
}

func scanProps(i int) Properties {
	p := benchProps()
	p["Age"] = Int32Value(int32(i * 37 % 100))
	p["Score"] = DoubleValue(float64(uint32(i)*2654435761%100000) / 1000)
	return p
}

// loadScan loads the scan data set into tbl in transactions of 100, and
// returns the records stored, by entity.
func loadScan(b *testing.B, tbl *Table) {
	acts := make([]Action, 0, MaxTransactionActions)
	for i := range scanParts * scanRows {
		pk, rk := scanKeys(i)
		acts = append(acts, Action{Type: ActionInsert, Entity: Entity{PartitionKey: pk, RowKey: rk, Properties: scanProps(i)}})
		if len(acts) == cap(acts) {
			if _, err := tbl.Transact(context.Background(), acts); err != nil {
				b.Fatal(err)
			}
			acts = acts[:0]
		}
	}
}

// rawScanner is a bare engine that also scans, calling f with each value
// in [lo, hi).
type rawScanner interface {
	rawEngine
	scan(lo, hi []byte, f func(v []byte))
}

func (r *rawBTree) scan(lo, hi []byte, f func([]byte)) {
	r.t.Ascend(item{key: lo}, func(it item) bool {
		if string(it.key) >= string(hi) {
			return false
		}
		f(it.value)
		return true
	})
}

func (r *rawPebble) scan(lo, hi []byte, f func([]byte)) {
	it, err := r.db.NewIter(&pdb.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		panic(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		f(it.Value())
	}
	if err := it.Close(); err != nil {
		panic(err)
	}
}

// loadRawScan writes the scan data set's keys and records (made as
// localtable makes them) to r, 100 a commit.
func loadRawScan(r rawEngine) {
	keys, vals := make([][]byte, 0, 100), make([][]byte, 0, 100)
	ticks := TimeToTicks(time.Now())
	for i := range scanParts * scanRows {
		pk, rk := scanKeys(i)
		keys = append(keys, keyenc.AppendEntityKey(nil, 1, pk, rk))
		vals = append(vals, appendRecord(nil, ticks, scanProps(i)))
		if len(keys) == cap(keys) {
			r.commit(keys, vals)
			keys, vals = keys[:0], vals[:0]
		}
	}
}

// rangeFilter and scanFilter are the predicates of the scan benchmarks:
// rows 100 to 199 of partition p042, and Score lt 1.0 over the whole
// table. The package's tests cannot import package filter, so they are
// written here with the table layer's own types.
// They are ReaderPredicates, as package filter's filters are.
type benchPred struct {
	ranges []KeyRange
	match  func(r PropertyReader) bool
}

func (p benchPred) Match(e *Entity) bool              { return p.match(e) }
func (p benchPred) MatchReader(r PropertyReader) bool { return p.match(r) }
func (p benchPred) KeyRanges() ([]KeyRange, bool) {
	return p.ranges, p.ranges != nil
}
func (p benchPred) String() string { return "bench" }

var (
	rangeFilter = benchPred{
		ranges: []KeyRange{{Start: KeyAt("p042", "r000100"), End: KeyAt("p042", "r000200")}},
		match:  func(PropertyReader) bool { return true },
	}
	scanFilter = benchPred{match: func(r PropertyReader) bool {
		v, ok := r.Property("Score")
		return ok && v.Kind() == KindDouble && v.Double() < 1.0
	}}
)

// BenchmarkScanVsRaw measures a 100-row RowKey range query and a full
// scan keeping 1% (Score lt 1.0) on 30,000 entities, against a bare scan
// of the same keys that copies every value it reads (as a reader keeping
// values must; it cannot filter without decoding). Rows per second is
// the figure to compare.
func BenchmarkScanVsRaw(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name   string
		pred   benchPred
		want   int
		lo, hi []byte // the raw scan's bounds
	}{
		{"Range100", rangeFilter, 100,
			keyenc.AppendEntityKey(nil, 1, "p042", "r000100"), keyenc.AppendEntityKey(nil, 1, "p042", "r000200")},
		{"ScanFilter", scanFilter, 0, keyenc.AppendTableID(nil, 1), keyenc.PrefixEnd(keyenc.AppendTableID(nil, 1))},
	}
	for _, be := range benchEngines {
		for _, c := range cases {
			b.Run(be.name+"/"+c.name+"/localtable", func(b *testing.B) {
				tbl, _ := benchTable(b, be.lt(b))
				loadScan(b, tbl)
				rows := 0
				loop(b, func() {
					n := 0
					for e, err := range tbl.QueryAll(ctx, &QueryOptions{Filter: c.pred}) {
						if err != nil || len(e.Properties) != 10 {
							b.Fatal(err)
						}
						n++
					}
					if c.want > 0 && n != c.want {
						b.Fatalf("%d rows, want %d", n, c.want)
					}
					rows += n
				})
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
			b.Run(be.name+"/"+c.name+"/rows", func(b *testing.B) {
				// Table.Rows reading two properties of each row in place,
				// as a hot path does, and decoding nothing else.
				tbl, _ := benchTable(b, be.lt(b))
				loadScan(b, tbl)
				rows := 0
				var sum int64
				loop(b, func() {
					n := 0
					for r, err := range tbl.Rows(ctx, &QueryOptions{Filter: c.pred}) {
						if err != nil {
							b.Fatal(err)
						}
						balance, ok := r.Property("Balance")
						name, ok2 := r.Property("Name")
						if !ok || !ok2 {
							b.Fatal("missing properties")
						}
						sum += balance.Int64() + int64(len(name.String()))
						n++
					}
					if c.want > 0 && n != c.want {
						b.Fatalf("%d rows, want %d", n, c.want)
					}
					rows += n
				})
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
			b.Run(be.name+"/"+c.name+"/rawreuse", func(b *testing.B) {
				// The least a caller of the bare engine pays: each value
				// copied into one reused buffer.
				r := be.raw(b).(rawScanner)
				loadRawScan(r)
				var sink []byte
				rows := 0
				loop(b, func() {
					n := 0
					r.scan(c.lo, c.hi, func(v []byte) { sink = append(sink[:0], v...); n++ })
					if c.want > 0 && n != c.want {
						b.Fatalf("%d rows, want %d", n, c.want)
					}
					rows += n
				})
				_ = sink
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
			b.Run(be.name+"/"+c.name+"/raw", func(b *testing.B) {
				r := be.raw(b).(rawScanner)
				loadRawScan(r)
				var sink []byte
				rows := 0
				loop(b, func() {
					n := 0
					r.scan(c.lo, c.hi, func(v []byte) { sink = bytes.Clone(v); n++ })
					if c.want > 0 && n != c.want {
						b.Fatalf("%d rows, want %d", n, c.want)
					}
					rows += n
				})
				_ = sink
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
		}
	}
}

// BenchmarkHeapVsRaw measures the live heap per entity of 30,000 entities
// inserted one at a time, in a shuffled order, into the memory engine and
// into a bare btree holding the same keys and records. Each op loads the
// whole set afresh; the figure is the heapB/entity metric.
func BenchmarkHeapVsRaw(b *testing.B) {
	n := scanParts * scanRows
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	measure := func(b *testing.B, load func() any) {
		var total float64
		for b.Loop() {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			keep := load()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			runtime.KeepAlive(keep)
			total += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
		}
		b.ReportMetric(total/float64(b.N), "heapB/entity")
	}
	ctx := context.Background()
	b.Run("memory/localtable", func(b *testing.B) {
		measure(b, func() any {
			a, err := Open(&Options{Engine: memory.New(nil)})
			if err != nil {
				b.Fatal(err)
			}
			tbl, err := a.CreateTable(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			for _, i := range order {
				pk, rk := scanKeys(i)
				if _, err := tbl.Insert(ctx, Entity{PartitionKey: pk, RowKey: rk, Properties: scanProps(i)}); err != nil {
					b.Fatal(err)
				}
			}
			return a
		})
	})
	b.Run("memory/raw", func(b *testing.B) {
		ticks := TimeToTicks(time.Now())
		measure(b, func() any {
			r := newRawBTree()
			keys, vals := make([][]byte, 1), make([][]byte, 1)
			for _, i := range order {
				pk, rk := scanKeys(i)
				keys[0] = keyenc.AppendEntityKey(keys[0][:0], 1, pk, rk)
				vals[0] = appendRecord(vals[0][:0], ticks, scanProps(i))
				if _, ok := r.get(keys[0]); ok {
					b.Fatal("exists")
				}
				r.commit(keys, vals)
			}
			return r
		})
	})
}
