package storage

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"github.com/tidwall/btree"
)

// MemoryOptions configures an in-memory engine. The zero value is ready to
// use.
type MemoryOptions struct {
	// Degree is the B-tree degree (items and children per node); zero
	// selects the library default (32).
	Degree int
}

// NewMemory returns an empty in-memory engine with default options. It is
// shorthand for NewMemoryOptions(nil).
func NewMemory() Engine { return NewMemoryOptions(nil) }

// NewMemoryOptions returns an empty in-memory engine configured by opts (nil
// means the defaults). opts is not retained.
//
// The engine is a copy-on-write B-tree with multi-version concurrency
// control, in the manner of go-memdb: writers serialize on one mutex and
// apply each batch to a private tree, then publish an O(1) copy of it
// through an atomic pointer. Readers (Get, NewIter, NewSnapshot) load the
// published tree and never lock, so they never block writers nor each other,
// and a Snapshot costs O(1).
//
// The returned engine is safe for concurrent use. Values it returns (from
// Get and Iterator.Value) are the engine's own immutable copies; they stay
// valid for as long as the caller holds them, although the interface only
// promises validity until the next positioning call or Close. Callers must
// not modify them.
func NewMemoryOptions(opts *MemoryOptions) Engine {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	w := btree.NewBTreeGOptions(itemLess, btree.Options{Degree: o.Degree, NoLocks: true})
	m := &memEngine{w: w}
	m.pub.Store(w.Copy())
	return m
}

// item is one key-value pair in the tree. Both slices are owned by the
// engine and never modified once inserted.
type item struct {
	key, value []byte
}

func itemLess(a, b item) bool { return bytes.Compare(a.key, b.key) < 0 }

type tree = btree.BTreeG[item]

// memEngine is the in-memory Engine.
type memEngine struct {
	mu sync.Mutex // serializes writers; guards w
	w  *tree      // private writer tree; only ever read or written under mu

	// pub is the published, read-only tree; nil once the engine is closed.
	// A published tree is never modified and never Copy()'d (Copy writes
	// the receiver's isoid), so any number of goroutines may read it.
	pub atomic.Pointer[tree]
}

func (m *memEngine) load() (*tree, error) {
	t := m.pub.Load()
	if t == nil {
		return nil, ErrClosed
	}
	return t, nil
}

// Get implements Reader. The returned closer is NopCloser.
func (m *memEngine) Get(key []byte) ([]byte, io.Closer, error) {
	t, err := m.load()
	if err != nil {
		return nil, nil, err
	}
	return treeGet(t, key)
}

// NewIter implements Reader.
func (m *memEngine) NewIter(opts *IterOptions) (Iterator, error) {
	t, err := m.load()
	if err != nil {
		return nil, err
	}
	return newMemIter(t, opts), nil
}

// NewBatch implements Engine.
func (m *memEngine) NewBatch() Batch { return &memBatch{m: m} }

// NewSnapshot implements Engine. It is O(1): the snapshot holds the tree
// published by the last commit.
func (m *memEngine) NewSnapshot() (Snapshot, error) {
	t, err := m.load()
	if err != nil {
		return nil, err
	}
	return &memSnapshot{t: t}, nil
}

// Close implements Engine. A second Close returns ErrClosed. Snapshots and
// iterators opened before Close keep working (they hold their own tree), but
// every call on the engine itself returns ErrClosed.
func (m *memEngine) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pub.Swap(nil) == nil {
		return ErrClosed
	}
	m.w = nil
	return nil
}

// commit applies ops to the writer tree and publishes a copy of it.
func (m *memEngine) commit(ops []memOp) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pub.Load() == nil {
		return ErrClosed
	}
	w := m.w
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opSet:
			w.Set(item{key: op.key, value: op.value})
		case opDelete:
			w.Delete(item{key: op.key})
		case opDeleteRange:
			w.DeleteRange(item{key: op.key}, item{key: op.value},
				&btree.DeleteRangeOptions{NoReturn: true})
		}
	}
	// Copy gives w a fresh isoid, so its next mutation copies the nodes it
	// touches instead of writing into the ones shared with the published
	// tree.
	m.pub.Store(w.Copy())
	return nil
}

func treeGet(t *tree, key []byte) ([]byte, io.Closer, error) {
	it, ok := t.Get(item{key: key})
	if !ok {
		return nil, nil, ErrNotFound
	}
	return it.value, NopCloser, nil
}

// memSnapshot is a Snapshot of the in-memory engine: a published tree.
type memSnapshot struct {
	t      *tree
	closed atomic.Bool
}

// Get implements Reader.
func (s *memSnapshot) Get(key []byte) ([]byte, io.Closer, error) {
	if s.closed.Load() {
		return nil, nil, ErrClosed
	}
	return treeGet(s.t, key)
}

// NewIter implements Reader. The iterator stays valid after the snapshot
// is closed.
func (s *memSnapshot) NewIter(opts *IterOptions) (Iterator, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return newMemIter(s.t, opts), nil
}

// Close implements Snapshot; a second Close returns ErrClosed.
func (s *memSnapshot) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	return nil
}

type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange // key is start, value is end
)

type memOp struct {
	kind       opKind
	key, value []byte
}

// memBatch is a Batch of the in-memory engine: a list of operations with
// copied arguments.
type memBatch struct {
	m    *memEngine
	ops  []memOp
	done bool // committed or closed
}

func (b *memBatch) add(kind opKind, key, value []byte) error {
	if b.done {
		return ErrClosed
	}
	// One allocation for both copies. Copies are never nil, so an empty
	// value reads back as empty, not absent.
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	b.ops = append(b.ops, memOp{kind: kind, key: buf[:len(key):len(key)], value: buf[len(key):]})
	return nil
}

// Set implements Writer.
func (b *memBatch) Set(key, value []byte) error { return b.add(opSet, key, value) }

// Delete implements Writer.
func (b *memBatch) Delete(key []byte) error { return b.add(opDelete, key, nil) }

// DeleteRange implements Writer.
func (b *memBatch) DeleteRange(start, end []byte) error {
	if b.done {
		return ErrClosed
	}
	if bytes.Compare(start, end) >= 0 {
		return nil // empty range
	}
	return b.add(opDeleteRange, start, end)
}

// Len implements Batch.
func (b *memBatch) Len() int { return len(b.ops) }

// Commit implements Batch. Committing a batch twice, or after Close, returns
// ErrClosed.
func (b *memBatch) Commit(sync bool) error {
	if b.done {
		return ErrClosed
	}
	b.done = true
	ops := b.ops
	b.ops = nil
	return b.m.commit(ops)
}

// Close implements Batch. It always returns nil, so that a deferred Close
// after Commit is harmless.
func (b *memBatch) Close() error {
	b.done = true
	b.ops = nil
	return nil
}
