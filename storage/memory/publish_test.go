package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/localtable/localtable/storage"
)

func mustSet(t testing.TB, e storage.Engine, key, value []byte) {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	if err := b.Set(key, value); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
}

// Commits publish nothing: a run of writes with no reader between them
// changes the writer's tree in place, with no copy of the nodes on their
// paths. An overwrite of a present key allocates its item and its batch,
// and nothing else.
func TestCommitPublishesNothing(t *testing.T) {
	e := New(nil)
	defer e.Close()
	m := e.(*memEngine)
	for i := range 1000 {
		mustSet(t, e, fmt.Appendf(nil, "key%04d", i), []byte("value"))
	}
	before := m.pub.Load()
	key, value := []byte("key0500"), []byte("other")
	allocs := testing.AllocsPerRun(100, func() { mustSet(t, e, key, value) })
	if allocs > 2 && !raceEnabled { // the race detector makes sync.Pool drop items
		t.Errorf("an overwrite with no reader allocates %.1f times; want at most 2 (the batch and the item)", allocs)
	}
	if m.pub.Load() != before {
		t.Error("a commit published a view")
	}
}

// A Get after a commit sees it without publishing; publishAfter Gets in
// a row with no commit between them publish once, and the Gets that
// follow read the published view.
func TestStaleGetsPublish(t *testing.T) {
	e := New(nil)
	defer e.Close()
	m := e.(*memEngine)
	mustSet(t, e, []byte("k"), []byte("1"))
	before := m.pub.Load()
	for i := 1; i < publishAfter; i++ {
		if v, _, err := e.Get([]byte("k")); err != nil || string(v) != "1" {
			t.Fatalf("Get %d: %q, %v", i, v, err)
		}
	}
	if m.pub.Load() != before {
		t.Fatalf("published after %d Gets; want %d", publishAfter-1, publishAfter)
	}
	if v, _, err := e.Get([]byte("k")); err != nil || string(v) != "1" {
		t.Fatalf("Get: %q, %v", v, err)
	}
	v := m.pub.Load()
	if v == before || v.seq != m.seq.Load() {
		t.Fatalf("Get %d did not publish the current tree", publishAfter)
	}
	// A commit makes the view stale again; a snapshot publishes at once.
	mustSet(t, e, []byte("k"), []byte("2"))
	s, err := e.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _, err := s.Get([]byte("k")); err != nil || string(got) != "2" {
		t.Fatalf("snapshot after the commit: %q, %v", got, err)
	}
	if m.pub.Load() == v {
		t.Fatal("a snapshot after a commit did not publish")
	}
	// The published tree is not changed by later commits.
	mustSet(t, e, []byte("k"), []byte("3"))
	if got, _, err := s.Get([]byte("k")); err != nil || string(got) != "2" {
		t.Fatalf("snapshot after a later commit: %q, %v", got, err)
	}
}

// Every read sees every commit acknowledged before it began: writers bump
// their own counters, and readers check, through Get, iterators and
// snapshots of the engine, that no read returns a counter below the last
// value whose Commit had returned before the read. Run with -race: the
// Gets that read the writer's tree under its lock race with commits.
func TestReadYourWritesConcurrent(t *testing.T) {
	const writers, readers, commits = 3, 4, 2000
	e := New(&Options{Degree: 2}) // deep trees: long copy-on-write paths
	defer e.Close()
	key := func(w int) []byte { return fmt.Appendf(nil, "counter/%d", w) }
	// Other keys, so that the counters' leaves split and merge.
	for i := range 200 {
		mustSet(t, e, fmt.Appendf(nil, "counter/%d/pad%03d", i%writers, i), nil)
	}
	var acked [writers]atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := uint64(1); n <= commits; n++ {
				b := e.NewBatch()
				b.Set(key(w), binary.BigEndian.AppendUint64(nil, n))
				if n%7 == 0 { // churn around the counter
					b.Delete(fmt.Appendf(nil, "counter/%d/pad%03d", w, n%200))
				}
				if err := b.Commit(false); err != nil {
					t.Error(err)
					return
				}
				acked[w].Store(n)
			}
		}()
	}
	read := func(r storage.Reader, how int, w int) (uint64, error) {
		if how == 0 {
			v, c, err := r.Get(key(w))
			if errors.Is(err, storage.ErrNotFound) {
				return 0, nil
			}
			if err != nil {
				return 0, err
			}
			defer c.Close()
			return binary.BigEndian.Uint64(v), nil
		}
		it, err := r.NewIter(&storage.IterOptions{LowerBound: key(w)})
		if err != nil {
			return 0, err
		}
		defer it.Close()
		if !it.First() || !bytes.Equal(it.Key(), key(w)) {
			return 0, it.Error()
		}
		return binary.BigEndian.Uint64(it.Value()), nil
	}
	var rwg sync.WaitGroup
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; !done.Load(); i++ {
				w := i % writers
				floor := acked[w].Load() // acknowledged before the read began
				var got uint64
				var err error
				switch how := (i / writers) % 8; {
				case how < 5 || r == 0: // mostly Gets, so that some publish
					got, err = read(e, 0, w)
				case how < 7:
					got, err = read(e, 1, w)
				default:
					var s storage.Snapshot
					if s, err = e.NewSnapshot(); err == nil {
						got, err = read(s, i%2, w)
						s.Close()
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				if got < floor {
					t.Errorf("reader %d read counter %d = %d, after the commit of %d was acknowledged", r, w, got, floor)
					return
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
}

// A batch with a range deletion, which may take long, publishes the tree
// as it stands first when the published one is stale: Gets read that
// without the lock while the deletion runs.
func TestDeleteRangePublishesFirst(t *testing.T) {
	e := New(nil)
	defer e.Close()
	m := e.(*memEngine)
	mustSet(t, e, []byte("a"), []byte("1"))
	seq := m.seq.Load()
	b := e.NewBatch()
	b.DeleteRange([]byte("a"), []byte("b"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	v := m.pub.Load()
	if v.seq != seq {
		t.Fatalf("published view of change %d; want %d, the state before the range deletion", v.seq, seq)
	}
	if got, _, err := treeGet(v.t, []byte("a")); err != nil || string(got) != "1" {
		t.Fatalf("the published view: %q, %v", got, err)
	}
	if _, _, err := e.Get([]byte("a")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after the range deletion: %v", err)
	}
}
