package localtable_test

import (
	"sync/atomic"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
	"github.com/localtable/localtable/storage"
)

// countingEngine wraps an engine and counts the keys its iterators land
// on: each First, Last, SeekGE, Next or Prev that reports a key is one
// entity read. Tests use it to prove what a scan does not read.
type countingEngine struct {
	storage.Engine
	reads atomic.Int64
}

func (e *countingEngine) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	it, err := e.Engine.NewIter(o)
	if err != nil {
		return nil, err
	}
	return &countingIter{Iterator: it, reads: &e.reads}, nil
}

func (e *countingEngine) NewSnapshot() (storage.Snapshot, error) {
	s, err := e.Engine.NewSnapshot()
	if err != nil {
		return nil, err
	}
	return &countingSnapshot{Snapshot: s, reads: &e.reads}, nil
}

type countingSnapshot struct {
	storage.Snapshot
	reads *atomic.Int64
}

func (s *countingSnapshot) NewIter(o *storage.IterOptions) (storage.Iterator, error) {
	it, err := s.Snapshot.NewIter(o)
	if err != nil {
		return nil, err
	}
	return &countingIter{Iterator: it, reads: s.reads}, nil
}

type countingIter struct {
	storage.Iterator
	reads *atomic.Int64
}

func (it *countingIter) count(ok bool) bool {
	if ok {
		it.reads.Add(1)
	}
	return ok
}

func (it *countingIter) First() bool          { return it.count(it.Iterator.First()) }
func (it *countingIter) Last() bool           { return it.count(it.Iterator.Last()) }
func (it *countingIter) SeekGE(k []byte) bool { return it.count(it.Iterator.SeekGE(k)) }
func (it *countingIter) Next() bool           { return it.count(it.Iterator.Next()) }
func (it *countingIter) Prev() bool           { return it.count(it.Iterator.Prev()) }

// newCountingTable opens an account on a counting engine of kind eng and
// creates table "tbl1" in it.
func newCountingTable(t testing.TB, eng tabletest.Engine) (*countingEngine, *localtable.Table) {
	t.Helper()
	ce := &countingEngine{Engine: eng.Open(t)}
	a := tabletest.OpenAccount(t, eng, &localtable.Options{Engine: ce})
	tbl, err := a.CreateTable(ctx, "tbl1")
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return ce, tbl
}
