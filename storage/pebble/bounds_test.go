package pebble_test

import (
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/pebble"
)

// An empty, non-nil UpperBound is the empty key, so the iterator holds
// nothing, also with no LowerBound. Pebble copies bounds into a buffer of
// an iterator taken from a pool, and with a fresh one (no buffer yet) an
// empty bound came out nil, that is unbounded: the iterator returned every
// key. Emptying the pools (two collections) before each iterator makes
// the fresh case happen every time.
func TestEmptyUpperBoundFreshIterator(t *testing.T) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	commit(t, db, false, func(b storage.Batch) error { return b.Set([]byte("a"), []byte("1")) })
	snap, err := db.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, r := range []storage.Reader{db, snap} {
		for i := 0; i < 5; i++ {
			runtime.GC()
			runtime.GC()
			it, err := r.NewIter(&storage.IterOptions{UpperBound: []byte{}})
			if err != nil {
				t.Fatal(err)
			}
			first, last := it.First(), it.Last()
			seek := it.SeekGE(nil)
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if first || last || seek {
				t.Fatalf("%T: UpperBound []byte{}: First %v, Last %v, SeekGE(nil) %v; want an empty iterator", r, first, last, seek)
			}
		}
	}
}
