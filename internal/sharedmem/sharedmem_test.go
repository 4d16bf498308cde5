package sharedmem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/localtable/localtable/internal/sharedmem"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Engine { return sharedmem.New().Open() })
}

// TestShared pins what the package is for: engines opened on one store
// see each other's writes, and one's conditional commit fails on a
// version another changed.
func TestShared(t *testing.T) {
	ctx := context.Background()
	s := sharedmem.New()
	a, b := s.Open(), s.Open()
	wa := a.NewBatch()
	wa.Set([]byte("k"), []byte("1"))
	if err := wa.Commit(true); err != nil {
		t.Fatal(err)
	}
	_, v, c, err := b.GetVersion(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	wa = a.NewBatch()
	wa.Set([]byte("k"), []byte("2"))
	if err := wa.Commit(true); err != nil {
		t.Fatal(err)
	}
	wb := b.NewBatch()
	wb.Set([]byte("k"), []byte("3"))
	if err := b.CommitIf(ctx, wb, []storage.Condition{{Key: []byte("k"), Version: v}}); !errors.Is(err, storage.ErrConditionFailed) {
		t.Fatalf("CommitIf on a version the other engine replaced = %v", err)
	}
	a.Close()
	if val, _, err := b.Get([]byte("k")); err != nil || string(val) != "2" {
		t.Fatalf("after the other engine closed: %q, %v", val, err)
	}
}

// TestNotifyChanges checks the store's storage.ChangeNotifier: a commit
// through any engine that writes under the prefix (a set, a delete, a
// range deletion that meets it) signals before Commit returns, a commit
// elsewhere does not, and the channel is closed by DropWatches, by its
// context and by its engine's Close.
func TestNotifyChanges(t *testing.T) {
	s := sharedmem.New()
	watcher, writer := s.Open(), s.Open()
	ch, err := watcher.NotifyChanges(context.Background(), []byte("w/"))
	if err != nil {
		t.Fatal(err)
	}
	commit := func(what string, f func(b storage.Batch) error, signal bool) {
		t.Helper()
		b := writer.NewBatch()
		if err := f(b); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ch:
			if !signal {
				t.Errorf("%s: signalled", what)
			}
		default:
			if signal {
				t.Errorf("%s: not signalled", what)
			}
		}
	}
	commit("set under the prefix", func(b storage.Batch) error { return b.Set([]byte("w/1"), nil) }, true)
	commit("set elsewhere", func(b storage.Batch) error { return b.Set([]byte("x/1"), nil) }, false)
	commit("delete", func(b storage.Batch) error { return b.Delete([]byte("w/1")) }, true)
	commit("range over the prefix", func(b storage.Batch) error { return b.DeleteRange([]byte("a"), []byte("x")) }, true)
	commit("range before it", func(b storage.Batch) error { return b.DeleteRange([]byte("a"), []byte("w/")) }, false)
	s.DropWatches()
	if _, ok := <-ch; ok {
		t.Error("DropWatches left the channel open")
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err = watcher.NotifyChanges(ctx, []byte("w/"))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, ok := <-ch; ok {
		t.Error("the end of its context left the channel open")
	}
	ch, err = watcher.NotifyChanges(context.Background(), []byte("w/"))
	if err != nil {
		t.Fatal(err)
	}
	watcher.Close()
	if _, ok := <-ch; ok {
		t.Error("Close left the channel open")
	}
	if _, err := watcher.NotifyChanges(context.Background(), []byte("w/")); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("NotifyChanges after Close = %v, want ErrClosed", err)
	}
}
