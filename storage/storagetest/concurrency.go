package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/localtable/localtable/storage"
)

const (
	concWriters = 4
	concReaders = 4
	concBatches = 150 // per writer
	concPairs   = 8
)

func pairKeys(i int) (string, string) {
	return fmt.Sprintf("pair%02d/a", i), fmt.Sprintf("pair%02d/b", i)
}

// testConcurrentPairs has writers commit batches that always leave each
// pair of keys with equal values (or both absent), while readers check
// through snapshots, engine reads and iterators that no pair is ever seen
// half-written.
func testConcurrentPairs(t *testing.T, e storage.Engine) {
	var wg sync.WaitGroup
	var done atomic.Bool
	var checks atomic.Int64
	errc := make(chan error, concWriters+concReaders)

	for w := range concWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range concBatches {
				b := e.NewBatch()
				v := []byte(fmt.Sprintf("w%d-n%d", w, n))
				i := (w*7 + n) % concPairs
				ka, kb := pairKeys(i)
				var err error
				switch n % 5 {
				case 3: // delete the pair with a range deletion
					err = b.DeleteRange([]byte(fmt.Sprintf("pair%02d/", i)), []byte(fmt.Sprintf("pair%02d0", i)))
				case 4: // delete then rewrite both in the same batch
					err = errors.Join(b.Delete([]byte(ka)), b.Delete([]byte(kb)),
						b.Set([]byte(ka), v), b.Set([]byte(kb), v))
				default:
					err = errors.Join(b.Set([]byte(ka), v), b.Set([]byte(kb), v))
				}
				if err == nil {
					err = b.Commit(false)
				}
				b.Close()
				if err != nil {
					errc <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}

	check := func(r storage.Reader) error {
		// Point reads of one pair through a snapshot.
		for i := range concPairs {
			ka, kb := pairKeys(i)
			va, aerr := getString(r, ka)
			vb, berr := getString(r, kb)
			if aerr != nil || berr != nil || va != vb {
				return fmt.Errorf("pair %d: %q (%v) vs %q (%v)", i, va, aerr, vb, berr)
			}
		}
		// A full scan, forward and backward.
		for _, rev := range []bool{false, true} {
			it, err := r.NewIter(&storage.IterOptions{LowerBound: []byte("pair"), UpperBound: []byte("pais")})
			if err != nil {
				return err
			}
			seen := map[string]string{}
			ok := it.First()
			if rev {
				ok = it.Last()
			}
			for ; ok; ok = step(it, rev) {
				seen[string(it.Key())] = string(it.Value())
			}
			if err := it.Close(); err != nil {
				return err
			}
			for i := range concPairs {
				ka, kb := pairKeys(i)
				va, aok := seen[ka]
				vb, bok := seen[kb]
				if aok != bok || va != vb {
					return fmt.Errorf("scan (reverse=%v) pair %d: %q,%v vs %q,%v", rev, i, va, aok, vb, bok)
				}
			}
		}
		return nil
	}

	var rwg sync.WaitGroup
	for range concReaders {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for !done.Load() || checks.Load() < 4*concReaders {
				s, err := e.NewSnapshot()
				if err != nil {
					errc <- err
					return
				}
				err = check(s)
				s.Close()
				if err != nil {
					errc <- fmt.Errorf("snapshot: %w", err)
					return
				}
				checks.Add(1)
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if err := check(e); err != nil {
		t.Errorf("final state: %v", err)
	}
	t.Logf("%d consistent snapshot checks", checks.Load())
}

func getString(r storage.Reader, k string) (string, error) {
	v, c, err := r.Get([]byte(k))
	if errors.Is(err, storage.ErrNotFound) {
		return "<absent>", nil
	}
	if err != nil {
		return "", err
	}
	s := string(v)
	return s, c.Close()
}

// testConcurrentMonotonic has each writer bump its own counter key in every
// batch, while readers check that reads through the engine never go back
// in time: a read sees every commit that finished before it began.
func testConcurrentMonotonic(t *testing.T, e storage.Engine) {
	var wg sync.WaitGroup
	var done atomic.Bool
	errc := make(chan error, concWriters+concReaders)
	key := func(w int) []byte { return []byte(fmt.Sprintf("counter/%d", w)) }
	// committed[w] is the last counter value writer w has committed.
	var committed [concWriters]atomic.Int64

	for w := range concWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int64(1); n <= concBatches; n++ {
				b := e.NewBatch()
				err := b.Set(key(w), []byte(fmt.Sprintf("%09d", n)))
				if err == nil {
					err = b.Commit(false)
				}
				b.Close()
				if err != nil {
					errc <- err
					return
				}
				committed[w].Store(n)
			}
		}()
	}
	var rwg sync.WaitGroup
	for range concReaders {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			var last [concWriters]int64
			for !done.Load() {
				for w := range concWriters {
					floor := committed[w].Load() // committed before the read began
					s, err := getString(e, string(key(w)))
					if err != nil {
						errc <- err
						return
					}
					var n int64
					if s != "<absent>" {
						if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
							errc <- fmt.Errorf("counter %d: bad value %q", w, s)
							return
						}
					}
					if n < last[w] || n < floor {
						errc <- fmt.Errorf("counter %d read %d after reading %d (committed before the read: %d)", w, n, last[w], floor)
						return
					}
					last[w] = n
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for w := range concWriters {
		wantGet(t, e, string(key(w)), fmt.Sprintf("%09d", concBatches))
	}
}
