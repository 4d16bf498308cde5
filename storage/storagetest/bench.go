package storagetest

import (
	"fmt"
	"testing"

	"github.com/localtable/localtable/storage"
)

// Benchmark sizes, shared with the raw-library benchmarks in the engine
// packages so that engine and raw figures compare like with like.
const (
	// BenchKeys is the number of keys preloaded for Get and Scan.
	BenchKeys = 10_000
	// BenchBatch is the number of keys per batch in the Batch benchmark.
	BenchBatch = 100
	// BenchScan is the number of keys read per Scan iteration.
	BenchScan = 1000
	// BenchValueSize is the size of every value written.
	BenchValueSize = 100
)

// BenchKey returns the i'th benchmark key.
func BenchKey(i int) []byte { return fmt.Appendf(nil, "bench/key%09d", i) }

// BenchValue returns a benchmark value of BenchValueSize bytes.
func BenchValue() []byte {
	v := make([]byte, BenchValueSize)
	for i := range v {
		v[i] = byte('a' + i%26)
	}
	return v
}

// BenchPermute returns a fixed pseudo-random permutation step so that
// benchmarks touch keys in a scattered but deterministic order.
func BenchPermute(i, n int) int { return int((uint64(i) * 2654435761) % uint64(n)) }

// Bench runs the engine benchmarks as sub-benchmarks of b, opening a fresh
// engine for each (Bench closes it):
//
//   - Set: commit a batch of one Set (without sync) to a growing keyspace.
//   - Get: read a random present key from BenchKeys keys.
//   - Batch100: commit a batch of BenchBatch Sets.
//   - Scan1000: iterate BenchScan keys forward from a random start.
func Bench(b *testing.B, open func(b *testing.B) storage.Engine) {
	val := BenchValue()
	run := func(name string, fn func(b *testing.B, e storage.Engine)) {
		b.Run(name, func(b *testing.B) {
			e := open(b)
			defer e.Close()
			fn(b, e)
		})
	}
	run("Set", func(b *testing.B, e storage.Engine) {
		i := 0
		for b.Loop() {
			batch := e.NewBatch()
			if err := batch.Set(BenchKey(BenchPermute(i, 1<<30)), val); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(false); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			i++
		}
	})
	run("Get", func(b *testing.B, e storage.Engine) {
		Preload(b, e, BenchKeys)
		i := 0
		for b.Loop() {
			v, c, err := e.Get(BenchKey(BenchPermute(i, BenchKeys)))
			if err != nil || len(v) != BenchValueSize {
				b.Fatalf("Get: %v", err)
			}
			c.Close()
			i++
		}
	})
	run("Batch100", func(b *testing.B, e storage.Engine) {
		i := 0
		for b.Loop() {
			batch := e.NewBatch()
			for range BenchBatch {
				if err := batch.Set(BenchKey(BenchPermute(i, 1<<30)), val); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if err := batch.Commit(false); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
	run("Scan1000", func(b *testing.B, e storage.Engine) {
		Preload(b, e, BenchKeys)
		i := 0
		for b.Loop() {
			it, err := e.NewIter(nil)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ok := it.SeekGE(BenchKey(BenchPermute(i, BenchKeys-BenchScan))); ok && n < BenchScan; ok = it.Next() {
				n += len(it.Value()) / BenchValueSize
			}
			if n != BenchScan {
				b.Fatalf("scanned %d keys", n)
			}
			it.Close()
			i++
		}
	})
}

// Preload commits keys BenchKey(0..n-1) with BenchValue values.
func Preload(tb testing.TB, e storage.Engine, n int) {
	tb.Helper()
	val := BenchValue()
	for start := 0; start < n; start += 1000 {
		batch := e.NewBatch()
		for i := start; i < min(n, start+1000); i++ {
			if err := batch.Set(BenchKey(i), val); err != nil {
				tb.Fatal(err)
			}
		}
		if err := batch.Commit(false); err != nil {
			tb.Fatal(err)
		}
		batch.Close()
	}
}
