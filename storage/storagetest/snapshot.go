package storagetest

import (
	"errors"
	"testing"

	"github.com/localtable/localtable/storage"
)

func testSnapshotIsolation(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	s1 := mustSnapshot(t, e)
	commit(t, e, set("a", "changed"), del("b"), delRange("c", "e"), set("f", "new"))
	s2 := mustSnapshot(t, e)
	commit(t, e, delRange("a", "z"))

	wantScan(t, s1, alphabet)
	wantGet(t, s1, "a", "1")
	wantGet(t, s1, "b", "2")
	wantGet(t, s1, "d", "4")
	wantAbsent(t, s1, "f")

	after := []KV{{"a", "changed"}, {"e", "5"}, {"f", "new"}}
	wantScan(t, s2, after)
	wantGet(t, s2, "a", "changed")
	wantAbsent(t, s2, "b")
	wantAbsent(t, s2, "c")

	wantScan(t, e, nil)
	wantAbsent(t, e, "a")
	// Snapshots are independent of each other.
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantScan(t, s2, after)
}

func testSnapshotIterStable(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	s := mustSnapshot(t, e)
	it := newIter(t, s, nil, nil)
	defer it.Close()
	engIt := newIter(t, e, nil, nil)
	defer engIt.Close()
	wantAt(t, it, it.First(), "First", "a", "1")
	wantAt(t, engIt, engIt.First(), "engine First", "a", "1")

	// Commits made while the iterators are open are invisible to them,
	// including keys ahead of the current position.
	commit(t, e, set("b", "changed"), del("c"), set("bb", "inserted"), delRange("d", "z"), set("0", "first"))
	for _, i := range []storage.Iterator{it, engIt} {
		for _, want := range alphabet[1:] {
			wantAt(t, i, i.Next(), "Next", want.K, want.V)
		}
		wantInvalid(t, i, i.Next(), "Next at end")
		if got := reversed(scanIter(t, i, true)); !kvSliceEqual(got, alphabet) {
			t.Errorf("backward rescan = %v, want %v", got, alphabet)
		}
	}
	// A new iterator on the old snapshot still sees the old state.
	wantScan(t, s, alphabet)
	wantScan(t, e, []KV{{"0", "first"}, {"a", "1"}, {"b", "changed"}, {"bb", "inserted"}})
}

func testSnapshotClose(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	s, err := e.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, _, err := s.Get(bs("a")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Get on closed snapshot = %v, want ErrClosed", err)
	}
	if it, err := s.NewIter(nil); !errors.Is(err, storage.ErrClosed) {
		if it != nil {
			it.Close()
		}
		t.Errorf("NewIter on closed snapshot = %v, want ErrClosed", err)
	}
	if err := s.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	wantScan(t, e, alphabet)
}

func testClosed(t *testing.T, e storage.Engine) {
	commitKVs(t, e, alphabet)
	pending := e.NewBatch()
	apply(t, pending, set("pending", "x"))
	if err := e.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if _, _, err := e.Get(bs("a")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if it, err := e.NewIter(nil); !errors.Is(err, storage.ErrClosed) {
		if it != nil {
			it.Close()
		}
		t.Errorf("NewIter after Close = %v, want ErrClosed", err)
	}
	if s, err := e.NewSnapshot(); !errors.Is(err, storage.ErrClosed) {
		if s != nil {
			s.Close()
		}
		t.Errorf("NewSnapshot after Close = %v, want ErrClosed", err)
	}
	if err := pending.Commit(false); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Commit of a batch made before Close = %v, want ErrClosed", err)
	}
	pending.Close()
	nb := e.NewBatch()
	if err := nb.Set(bs("k"), bs("v")); err != nil && !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Set on batch of closed engine = %v, want nil or ErrClosed", err)
	}
	if err := nb.Commit(true); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
	nb.Close()
	if s, ok := e.(storage.Syncer); ok {
		if err := s.Sync(); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Sync after Close = %v, want ErrClosed", err)
		}
	}
	if err := e.Close(); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
}
