package memory_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tidwall/btree"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/storagetest"
)

func TestMemory(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine { return memory.New(nil) })
}

// A small degree gives deep trees, exercising node splits, merges and
// copy-on-write paths with few keys.
func TestMemoryDegree2(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine {
		return memory.New(&memory.Options{Degree: 2})
	})
}

func ExampleNew() {
	e := memory.New(nil)
	defer e.Close()

	b := e.NewBatch()
	b.Set([]byte("b"), []byte("2"))
	b.Set([]byte("a"), []byte("1"))
	b.Set([]byte("c"), []byte("3"))
	if err := b.Commit(true); err != nil {
		panic(err)
	}
	b.Close()

	snap, _ := e.NewSnapshot()
	defer snap.Close()

	b = e.NewBatch()
	b.DeleteRange([]byte("a"), []byte("c"))
	b.Commit(true)
	b.Close()

	for name, r := range map[string]storage.Reader{"engine": e} {
		it, _ := r.NewIter(nil)
		for ok := it.First(); ok; ok = it.Next() {
			fmt.Printf("%s: %s=%s\n", name, it.Key(), it.Value())
		}
		it.Close()
	}
	it, _ := snap.NewIter(&storage.IterOptions{LowerBound: []byte("b")})
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Printf("snapshot: %s=%s\n", it.Key(), it.Value())
	}
	it.Close()

	_, _, err := e.Get([]byte("a"))
	fmt.Println(err)
	// Output:
	// engine: c=3
	// snapshot: c=3
	// snapshot: b=2
	// storage: not found
}

func BenchmarkMemory(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Engine { return memory.New(nil) })
}

// rawItem is an item of two slices, as a plain user of the btree writes it.
type rawItem struct{ key, value []byte }

func rawLess(a, b rawItem) bool { return bytes.Compare(a.key, b.key) < 0 }

func newRaw() *btree.BTreeG[rawItem] {
	return btree.NewBTreeGOptions(rawLess, btree.Options{NoLocks: true})
}

func rawPreload(tr *btree.BTreeG[rawItem], n int) {
	val := storagetest.BenchValue()
	for i := range n {
		tr.Set(rawItem{storagetest.BenchKey(i), val})
	}
}

// BenchmarkRawBTree runs the same operations on a bare tidwall BTreeG
// (no copying, no MVCC) as the baseline for BenchmarkMemory.
func BenchmarkRawBTree(b *testing.B) {
	val := storagetest.BenchValue()
	b.Run("Set", func(b *testing.B) {
		tr := newRaw()
		i := 0
		for b.Loop() {
			tr.Set(rawItem{storagetest.BenchKey(storagetest.BenchPermute(i, 1<<30)), val})
			i++
		}
	})
	b.Run("Get", func(b *testing.B) {
		tr := newRaw()
		rawPreload(tr, storagetest.BenchKeys)
		i := 0
		for b.Loop() {
			it, ok := tr.Get(rawItem{key: storagetest.BenchKey(storagetest.BenchPermute(i, storagetest.BenchKeys))})
			if !ok || len(it.value) != storagetest.BenchValueSize {
				b.Fatal("not found")
			}
			i++
		}
	})
	b.Run("Batch100", func(b *testing.B) {
		tr := newRaw()
		i := 0
		for b.Loop() {
			for range storagetest.BenchBatch {
				tr.Set(rawItem{storagetest.BenchKey(storagetest.BenchPermute(i, 1<<30)), val})
				i++
			}
		}
	})
	b.Run("Scan1000", func(b *testing.B) {
		tr := newRaw()
		rawPreload(tr, storagetest.BenchKeys)
		i := 0
		for b.Loop() {
			it := tr.Iter()
			n := 0
			for ok := it.Seek(rawItem{key: storagetest.BenchKey(storagetest.BenchPermute(i, storagetest.BenchKeys-storagetest.BenchScan))}); ok && n < storagetest.BenchScan; ok = it.Next() {
				n += len(it.Item().value) / storagetest.BenchValueSize
			}
			if n != storagetest.BenchScan {
				b.Fatalf("scanned %d", n)
			}
			it.Release()
			i++
		}
	})
}

// BenchmarkMemoryLogs is BenchmarkMemory on an engine with a log prefix
// that the benchmarks' keys are not under: what declaring one costs the
// other keys.
func BenchmarkMemoryLogs(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Engine {
		return memory.New(&memory.Options{Logs: [][]byte{{'f'}}})
	})
}

// BenchmarkFeedPattern commits what the table layer does for an insert
// with the change feed on: an entity at a scattered key, and a record
// under 'f' and the next revision, the oldest records deleted by range
// every 1,024 commits, 100,000 kept. The records go in the B-tree
// ("tree") or in a log (Options.Logs, "log").
func BenchmarkFeedPattern(b *testing.B) {
	for _, name := range []string{"tree", "log"} {
		b.Run(name, func(b *testing.B) {
			var opts memory.Options
			if name == "log" {
				opts.Logs = [][]byte{{'f'}}
			}
			e := memory.New(&opts)
			defer e.Close()
			val := storagetest.BenchValue()
			rec := bytes.Repeat(val, 2)
			i := uint64(0)
			for b.Loop() {
				i++
				batch := e.NewBatch()
				batch.Set(storagetest.BenchKey(storagetest.BenchPermute(int(i), 1<<30)), val)
				batch.Set(binary.BigEndian.AppendUint64([]byte{'f'}, i), rec)
				if i%1024 == 0 && i > 100_000 {
					batch.DeleteRange([]byte{'f'}, binary.BigEndian.AppendUint64([]byte{'f'}, i-100_000))
				}
				if err := batch.Commit(false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
