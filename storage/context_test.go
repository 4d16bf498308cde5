package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// TestContextHelpers pins GetContext, NewIterContext and CommitContext on
// an engine without context support (the in-memory one): an ended context
// stops them before they act, a live one lets them through.
func TestContextHelpers(t *testing.T) {
	e := memory.New(nil)
	defer e.Close()
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()

	b := e.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := storage.CommitContext(ended, b, true); !errors.Is(err, context.Canceled) {
		t.Fatalf("CommitContext(ended) = %v, want context.Canceled", err)
	}
	if err := b.Commit(true); !errors.Is(err, storage.ErrClosed) {
		t.Errorf("Commit after a refused CommitContext = %v, want ErrClosed (the batch is closed)", err)
	}
	if _, _, err := e.Get([]byte("k")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get after a refused CommitContext = %v, want ErrNotFound", err)
	}

	b = e.NewBatch()
	if err := b.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := storage.CommitContext(live, b, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.GetContext(ended, e, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Errorf("GetContext(ended) = %v, want context.Canceled", err)
	}
	v, c, err := storage.GetContext(live, e, []byte("k"))
	if err != nil || string(v) != "v" {
		t.Fatalf("GetContext = %q, %v", v, err)
	}
	c.Close()
	if _, err := storage.NewIterContext(ended, e, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("NewIterContext(ended) = %v, want context.Canceled", err)
	}
	it, err := storage.NewIterContext(live, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() || string(it.Key()) != "k" {
		t.Errorf("iterator from NewIterContext: %q, %v", it.Key(), it.Error())
	}
	it.Close()
}
