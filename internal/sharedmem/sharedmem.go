// Package sharedmem is an in-memory storage.VersionedEngine that several
// Accounts in one process can share, each through an engine of its own
// (Store.Open). It stands in, in tests, for a store that several processes
// share, such as etcd: the table layer takes the same path on it as on
// etcd (versioned reads, conditional commits), at the speed of memory and
// under the race detector.
package sharedmem

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// Store is the shared data: an in-memory engine and the Version of each
// key. Engines opened on it see one another's writes at once.
type Store struct {
	mu   sync.RWMutex // held for writing by commits, for reading by versioned reads
	data storage.Engine
	vers map[string]storage.Version
	seq  storage.Version

	// BeforeCommit, if set, is called by every commit before it takes the
	// store's lock and checks its conditions; a test makes another writer
	// win a race there. It must be set before the engines are used.
	BeforeCommit func()

	// NotifyErr, if set, is the error of every NotifyChanges: the store
	// then cannot tell of commits, as an engine that is no
	// storage.ChangeNotifier. It must be set before the engines are used.
	NotifyErr error

	subsMu sync.Mutex
	subs   map[*sub]struct{} // the watches of NotifyChanges
}

// sub is a watch of NotifyChanges.
type sub struct {
	e      *Engine
	prefix []byte
	ch     chan struct{}
	stop   func() bool // ends the context.AfterFunc that drops it
}

// New returns an empty store.
func New() *Store {
	return &Store{data: memory.New(&memory.Options{Logs: keyenc.LogPrefixes()}), vers: make(map[string]storage.Version), subs: make(map[*sub]struct{})}
}

// DropWatches ends every watch of NotifyChanges, as a store that lost
// its connections would: their channels are closed.
func (s *Store) DropWatches() {
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	for w := range s.subs {
		s.dropLocked(w)
	}
}

func (s *Store) dropLocked(w *sub) {
	if _, ok := s.subs[w]; ok {
		delete(s.subs, w)
		w.stop()
		close(w.ch)
	}
}

// notify signals the watches of the keys a commit wrote: ops' keys and
// ranges.
func (s *Store) notify(ops []op) {
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	for w := range s.subs {
		for _, o := range ops {
			hit := bytes.HasPrefix(o.key, w.prefix)
			if o.kind == 'r' { // [key, val) meets the prefix's range
				hit = hit || (bytes.Compare(o.key, w.prefix) < 0 && bytes.Compare(o.val, w.prefix) > 0)
			}
			if hit {
				select {
				case w.ch <- struct{}{}:
				default:
				}
				break
			}
		}
	}
}

// Open returns a new engine over the store. Closing it closes only it;
// the data stays for the other engines.
func (s *Store) Open() *Engine { return &Engine{s: s} }

// Engine is one user's handle on a Store. It implements
// storage.VersionedEngine and storage.MultiGetter; its reads are stable,
// as the in-memory engine's are.
type Engine struct {
	s      *Store
	closed atomic.Bool
}

var (
	_ storage.VersionedEngine = (*Engine)(nil)
	_ storage.MultiGetter     = (*Engine)(nil)
	_ storage.StableReader    = (*Engine)(nil)
	_ storage.ChangeNotifier  = (*Engine)(nil)
)

// NotifyChanges implements storage.ChangeNotifier: the channel receives
// after each commit, through any engine of the store, that writes a key
// under prefix, until ctx ends, the engine closes or DropWatches.
func (e *Engine) NotifyChanges(ctx context.Context, prefix []byte) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.closed.Load() {
		return nil, storage.ErrClosed
	}
	s := e.s
	if s.NotifyErr != nil {
		return nil, s.NotifyErr
	}
	w := &sub{e: e, prefix: bytes.Clone(prefix), ch: make(chan struct{}, 1)}
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	s.subs[w] = struct{}{}
	w.stop = context.AfterFunc(ctx, func() {
		s.subsMu.Lock()
		defer s.subsMu.Unlock()
		s.dropLocked(w)
	})
	return w.ch, nil
}

// Get implements storage.Reader.
func (e *Engine) Get(key []byte) ([]byte, io.Closer, error) {
	if e.closed.Load() {
		return nil, nil, storage.ErrClosed
	}
	return e.s.data.Get(key)
}

// NewIter implements storage.Reader.
func (e *Engine) NewIter(opts *storage.IterOptions) (storage.Iterator, error) {
	if e.closed.Load() {
		return nil, storage.ErrClosed
	}
	return e.s.data.NewIter(opts)
}

// StableReads implements storage.StableReader.
func (e *Engine) StableReads() bool { return true }

// NewSnapshot implements storage.Engine.
func (e *Engine) NewSnapshot() (storage.Snapshot, error) {
	if e.closed.Load() {
		return nil, storage.ErrClosed
	}
	return e.s.data.NewSnapshot()
}

// Close implements storage.Engine. A second Close returns storage.ErrClosed.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return storage.ErrClosed
	}
	e.s.subsMu.Lock()
	defer e.s.subsMu.Unlock()
	for w := range e.s.subs {
		if w.e == e {
			e.s.dropLocked(w)
		}
	}
	return nil
}

// GetVersion implements storage.VersionedEngine.
func (e *Engine) GetVersion(ctx context.Context, key []byte) ([]byte, storage.Version, io.Closer, error) {
	vals, vers, c, err := e.GetVersions(ctx, [][]byte{key})
	if err != nil {
		return nil, storage.NoVersion, nil, err
	}
	if vers[0] == storage.NoVersion {
		return nil, storage.NoVersion, nil, storage.ErrNotFound
	}
	return vals[0], vers[0], c, nil
}

// GetVersions implements storage.MultiGetter.
func (e *Engine) GetVersions(ctx context.Context, keys [][]byte) ([][]byte, []storage.Version, io.Closer, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	if e.closed.Load() {
		return nil, nil, nil, storage.ErrClosed
	}
	s := e.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	vals := make([][]byte, len(keys))
	vers := make([]storage.Version, len(keys))
	for i, k := range keys {
		v, ok := s.vers[string(k)]
		if !ok {
			continue
		}
		val, c, err := s.data.Get(k)
		if err != nil {
			return nil, nil, nil, err
		}
		c.Close() // the memory engine's values stay valid
		vals[i], vers[i] = val, v
	}
	return vals, vers, storage.NopCloser, nil
}

// CommitIf implements storage.VersionedEngine.
func (e *Engine) CommitIf(ctx context.Context, b storage.Batch, conds []storage.Condition) error {
	sb, ok := b.(*batch)
	if !ok || sb.e != e {
		b.Close()
		return errors.New("sharedmem: CommitIf: the batch is not one of this engine's")
	}
	if err := ctx.Err(); err != nil {
		sb.Close()
		return err
	}
	return sb.commit(conds)
}

// NewBatch implements storage.Engine.
func (e *Engine) NewBatch() storage.Batch { return &batch{e: e} }

type op struct {
	kind     byte // 's' set, 'd' delete, 'r' delete range
	key, val []byte
}

type batch struct {
	e    *Engine
	ops  []op
	done bool
}

func (b *batch) add(o op) error {
	if b.done {
		return storage.ErrClosed
	}
	b.ops = append(b.ops, o)
	return nil
}

func (b *batch) Set(key, value []byte) error {
	return b.add(op{'s', bytes.Clone(key), append([]byte{}, value...)})
}

func (b *batch) Delete(key []byte) error { return b.add(op{'d', bytes.Clone(key), nil}) }

func (b *batch) DeleteRange(start, end []byte) error {
	return b.add(op{'r', append([]byte{}, start...), append([]byte{}, end...)})
}

func (b *batch) Len() int {
	if b.done {
		return 0
	}
	return len(b.ops)
}

func (b *batch) Commit(bool) error { return b.commit(nil) }

func (b *batch) Close() error {
	b.done, b.ops = true, nil
	return nil
}

func (b *batch) commit(conds []storage.Condition) error {
	if b.done {
		return storage.ErrClosed
	}
	ops := b.ops
	b.Close()
	e := b.e
	if e.closed.Load() {
		return storage.ErrClosed
	}
	s := e.s
	if s.BeforeCommit != nil {
		s.BeforeCommit()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range conds {
		if s.vers[string(c.Key)] != c.Version {
			return storage.ErrConditionFailed
		}
	}
	ib := s.data.NewBatch()
	defer ib.Close()
	for _, o := range ops {
		var err error
		switch o.kind {
		case 's':
			err = ib.Set(o.key, o.val)
			s.seq++
			s.vers[string(o.key)] = s.seq
		case 'd':
			err = ib.Delete(o.key)
			delete(s.vers, string(o.key))
		case 'r':
			err = ib.DeleteRange(o.key, o.val)
			for k := range s.vers {
				if k >= string(o.key) && k < string(o.val) {
					delete(s.vers, k)
				}
			}
		}
		if err != nil {
			return err
		}
	}
	if err := ib.Commit(true); err != nil {
		return err
	}
	s.notify(ops) // under s.mu: a read after it sees the commit
	return nil
}
