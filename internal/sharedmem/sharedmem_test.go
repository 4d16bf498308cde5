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
