package pebble_test

import (
	"testing"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
	"github.com/localtable/localtable/storage/storagetest"
)

// BenchmarkPebble runs the engine benchmarks on an on-disk database.
func BenchmarkPebble(b *testing.B) {
	storagetest.Bench(b, func(b *testing.B) storage.Engine {
		db, err := pebble.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return db
	})
}

type nopLogger struct{}

func (nopLogger) Infof(string, ...any)         {}
func (nopLogger) Errorf(string, ...any)        {}
func (nopLogger) Fatalf(f string, args ...any) { pdb.DefaultLogger.Fatalf(f, args...) }

// openRaw opens a bare Pebble database with the options pebble.Open uses.
func openRaw(b *testing.B) *pdb.DB {
	db, err := pdb.Open(b.TempDir(), pebble.NativeOptions(&pebble.Options{Logger: nopLogger{}}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkRawPebble runs the same operations on a bare pebble.DB, as the
// baseline for BenchmarkPebble.
func BenchmarkRawPebble(b *testing.B) {
	val := storagetest.BenchValue()
	preload := func(b *testing.B, db *pdb.DB) {
		for start := 0; start < storagetest.BenchKeys; start += 1000 {
			batch := db.NewBatch()
			for i := start; i < min(storagetest.BenchKeys, start+1000); i++ {
				batch.Set(storagetest.BenchKey(i), val, nil)
			}
			if err := batch.Commit(pdb.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	}
	b.Run("Set", func(b *testing.B) {
		db := openRaw(b)
		i := 0
		for b.Loop() {
			if err := db.Set(storagetest.BenchKey(storagetest.BenchPermute(i, 1<<30)), val, pdb.NoSync); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Get", func(b *testing.B) {
		db := openRaw(b)
		preload(b, db)
		i := 0
		for b.Loop() {
			v, c, err := db.Get(storagetest.BenchKey(storagetest.BenchPermute(i, storagetest.BenchKeys)))
			if err != nil || len(v) != storagetest.BenchValueSize {
				b.Fatal(err)
			}
			c.Close()
			i++
		}
	})
	b.Run("Batch100", func(b *testing.B) {
		db := openRaw(b)
		i := 0
		for b.Loop() {
			batch := db.NewBatch()
			for range storagetest.BenchBatch {
				batch.Set(storagetest.BenchKey(storagetest.BenchPermute(i, 1<<30)), val, nil)
				i++
			}
			if err := batch.Commit(pdb.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
	b.Run("Scan1000", func(b *testing.B) {
		db := openRaw(b)
		preload(b, db)
		i := 0
		for b.Loop() {
			it, err := db.NewIter(nil)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ok := it.SeekGE(storagetest.BenchKey(storagetest.BenchPermute(i, storagetest.BenchKeys-storagetest.BenchScan))); ok && n < storagetest.BenchScan; ok = it.Next() {
				n += len(it.Value()) / storagetest.BenchValueSize
			}
			if n != storagetest.BenchScan {
				b.Fatalf("scanned %d", n)
			}
			it.Close()
			i++
		}
	})
}
