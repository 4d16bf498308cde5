// Package storage defines the ordered key-value engine interface that
// localtable's table layer is built on. The engines live beside it:
// storage/memory (in memory) and storage/pebble (on disk).
//
// The interface is deliberately small and split by capability, in the
// manner of pebble: a [Reader] reads keys and opens iterators, a [Batch]
// collects writes that an [Engine] applies atomically, and a [Snapshot] is a
// consistent, immutable view of the engine at one moment.
//
// Keys are compared bytewise (bytes.Compare). The table layer encodes its
// keys so that this order equals the order of the Table service.
//
// # Bounds
//
// Ranges are half-open, [lower, upper). Only an iterator's bounds
// (IterOptions, and a nil *IterOptions) can be unbounded, and nil says so:
// a nil LowerBound starts at the first key, a nil UpperBound runs past the
// last. Everywhere else a nil or empty slice is the empty key, the smallest
// there is: for Get, Set, Delete and SeekGE, for both ends of DeleteRange
// (so DeleteRange(x, nil) removes nothing), and for a bound that is empty
// but not nil (UpperBound: []byte{} selects nothing).
//
// # Buffer ownership
//
// Byte slices passed into the engine (keys and values given to Batch.Set and
// friends) are copied by the engine before the call returns; the caller may
// reuse them at once. Byte slices returned by the engine (Iterator.Key,
// Iterator.Value, and the value returned by Reader.Get) are owned by the
// engine and are valid only until the next call on the same iterator, or
// until the returned io.Closer is closed: copy what you keep. Callers must
// never modify a returned slice.
//
// # Concurrency
//
// An Engine and its Snapshots are safe for concurrent use. A Batch and an
// Iterator are not: each belongs to one goroutine at a time.
//
// Engines are tested by the conformance suite in package storagetest; a new
// engine should call storagetest.Run from its tests.
package storage

import (
	"context"
	"errors"
	"io"
)

// ErrNotFound is returned by Reader.Get when the key is absent.
var ErrNotFound = errors.New("storage: not found")

// ErrClosed is returned by operations on a closed engine, snapshot, batch or
// iterator.
var ErrClosed = errors.New("storage: closed")

// Reader reads keys and opens iterators. Engine and Snapshot implement it.
type Reader interface {
	// Get returns the value stored under key, or ErrNotFound. The value is
	// valid until closer.Close is called; the caller must call it (it is
	// never nil when err is nil).
	Get(key []byte) (value []byte, closer io.Closer, err error)

	// NewIter returns an iterator over the keys in [opts.LowerBound,
	// opts.UpperBound). A nil opts, or a nil bound, is unbounded on that
	// side. The iterator is unpositioned: call First, Last or SeekGE. The
	// caller must Close it.
	NewIter(opts *IterOptions) (Iterator, error)
}

// IterOptions bounds an iterator. Bounds are copied by NewIter.
type IterOptions struct {
	LowerBound []byte // inclusive; nil means the first key
	UpperBound []byte // exclusive; nil means past the last key
}

// Iterator walks keys in ascending byte order within its bounds. Errors are
// sticky: once an operation fails, Valid reports false and Error returns the
// error.
//
// An iterator that ran off one end may turn around: after Next reports
// false, Prev moves to the last key within bounds, and after Prev reports
// false, Next moves to the first. On an iterator not yet positioned, Next
// behaves like First and Prev like Last. After Close, positioning calls
// report false, Error returns ErrClosed, and a second Close returns
// ErrClosed.
type Iterator interface {
	// First moves to the first key within bounds and reports Valid().
	First() bool
	// Last moves to the last key within bounds and reports Valid().
	Last() bool
	// SeekGE moves to the first key >= key (clamped to the bounds) and
	// reports Valid().
	SeekGE(key []byte) bool
	// Next moves to the next key and reports Valid().
	Next() bool
	// Prev moves to the previous key and reports Valid().
	Prev() bool
	// Valid reports whether the iterator is positioned at a key.
	Valid() bool
	// Key returns the current key. It is valid until the next positioning
	// call or Close.
	Key() []byte
	// Value returns the current value. It is valid until the next
	// positioning call or Close.
	Value() []byte
	// Error returns the first error the iterator met, if any.
	Error() error
	// Close releases the iterator and returns Error().
	Close() error
}

// Writer collects writes. Batch implements it.
type Writer interface {
	// Set stores value under key, replacing any previous value.
	Set(key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(key []byte) error
	// DeleteRange removes every key in [start, end) without reading them.
	// A nil start or end is the empty key (not unbounded); if start >= end
	// the range is empty and nothing is removed.
	DeleteRange(start, end []byte) error
}

// Batch is an ordered set of writes that Commit applies atomically: after a
// crash, either all of them are present or none is. Writes within one batch
// apply in the order they were made. A Batch is not readable: read through
// the engine or a snapshot.
type Batch interface {
	Writer
	// Len returns the number of writes in the batch.
	Len() int
	// Commit applies the batch atomically. With sync, Commit returns only
	// after the writes are durable (for engines that persist). A committed
	// batch may not be reused.
	Commit(sync bool) error
	// Close releases the batch; closing an uncommitted batch discards it.
	// Close always returns nil, so a deferred Close after Commit is fine.
	// Writes and Commit after Commit or Close return ErrClosed.
	Close() error
}

// Snapshot is a consistent, immutable view of an engine. Reads through it do
// not see later commits. It must be closed; reads after Close, and a second
// Close, return ErrClosed.
type Snapshot interface {
	Reader
	Close() error
}

// Engine is an ordered key-value store. All methods are safe for concurrent
// use. Reads through the Engine itself see every batch committed before the
// read began.
type Engine interface {
	Reader
	// NewBatch returns an empty batch.
	NewBatch() Batch
	// NewSnapshot returns a snapshot of the engine's current state.
	NewSnapshot() (Snapshot, error)
	// Close closes the engine. Open snapshots and iterators must be closed
	// first. Every later call on the engine, including a second Close,
	// returns ErrClosed.
	Close() error
}

// Syncer is implemented by engines that can flush acknowledged writes made
// without sync to durable storage.
type Syncer interface {
	// Sync makes every write acknowledged so far durable.
	Sync() error
}

// NestedSetter is implemented by batches that can store writes in one
// buffer when the key and value of some, one after the other, lie in the
// value of another (a change feed's record that holds the entities its
// commit writes; a covering index's entry that holds its entity). The
// caller gives the outer value without them, and where each goes: the
// batch builds the buffer, writing each byte once.
type NestedSetter interface {
	// SetNested stores under key value with the key then the value of
	// each inner write inserted at its At, in order, and each inner
	// write's value under its key: it is Set(key, v) then Set(n.Key,
	// n.Value) for each n of inner, where v is value so filled in. Each
	// At is a position in value, at or after the previous one's and at
	// most len(value), or SetNested returns an error and sets nothing.
	// It does not retain its arguments.
	SetNested(key, value []byte, inner []Nested) error
}

// Nested is a write that NestedSetter.SetNested stores within another
// write's value: its Key then its Value are inserted into that value at
// At.
type Nested struct {
	Key, Value []byte
	At         int
}

// ErrNestedOutOfPlace is the error of NestedSetter.SetNested for inner
// writes whose At is out of order or past the value's end.
var ErrNestedOutOfPlace = errors.New("storage: a nested write's At is out of order or past the value's end")

// NestedSize returns the size of the value that NestedSetter.SetNested
// stores for value and inner (value's, with each inner write's key and
// value), or ErrNestedOutOfPlace.
func NestedSize(value []byte, inner []Nested) (uint64, error) {
	size, prev := uint64(len(value)), 0
	for i := range inner {
		n := &inner[i]
		if n.At < prev || n.At > len(value) {
			return 0, ErrNestedOutOfPlace
		}
		prev = n.At
		size += uint64(len(n.Key)) + uint64(len(n.Value))
	}
	return size, nil
}

// StableReader is implemented by engines whose reads stay valid: the keys
// and values that Get and Iterator return never change and remain valid
// for as long as the caller holds them, beyond the next positioning call
// or Close, so a caller may keep them (or strings made over them) without
// copying. It is an optional promise beyond the buffer ownership rules
// above; the in-memory engine makes it.
type StableReader interface {
	// StableReads reports whether the engine's reads are stable.
	StableReads() bool
}

// NopCloser is an io.Closer that does nothing; engines may return it from Get.
var NopCloser io.Closer = nopCloser{}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// Errors of engines that reach their data over a network, or share it with
// other processes. The in-process engines never return them.
var (
	// ErrUnavailable marks an operation that could not be served because
	// the engine could not reach its store (a lost connection, a cluster
	// without a leader, a server shutting down). The operation did not
	// take effect: a read, or a commit that the store refused before
	// applying it. Retrying later is safe. Engines wrap it, so test with
	// errors.Is.
	ErrUnavailable = errors.New("storage: unavailable")

	// ErrCommitUnknown marks a commit whose outcome is unknown: the
	// request reached the store, then the connection broke, the store
	// timed out or the caller's context ended before the answer came. The
	// batch was applied entirely or not at all, but which one is not
	// known. Replaying a blind batch could overwrite a later write by
	// another client; a caller resolves the doubt by reading back what it
	// wrote, or by committing with conditions (VersionedEngine.CommitIf),
	// which a replay cannot apply twice.
	ErrCommitUnknown = errors.New("storage: commit outcome unknown")

	// ErrConditionFailed is returned by VersionedEngine.CommitIf when a
	// key no longer has the version its Condition names. Nothing of the
	// batch was applied.
	ErrConditionFailed = errors.New("storage: condition failed")
)

// ContextReader is implemented by readers (engines and snapshots) whose
// reads may wait on I/O that a context should bound, such as a network
// round trip. The methods are Reader's, bounded by ctx: when ctx ends
// first they fail with an error that wraps ctx.Err(). An iterator from
// NewIterContext uses ctx for every read it makes until it is closed.
type ContextReader interface {
	// GetContext is Reader.Get bounded by ctx.
	GetContext(ctx context.Context, key []byte) (value []byte, closer io.Closer, err error)
	// NewIterContext is Reader.NewIter bounded by ctx.
	NewIterContext(ctx context.Context, opts *IterOptions) (Iterator, error)
}

// ContextCommitter is implemented by batches whose commit may wait on I/O
// that a context should bound. CommitContext is Commit bounded by ctx. A
// commit cut short by ctx after its request was sent may still apply: the
// error then wraps both ctx.Err() and ErrCommitUnknown.
type ContextCommitter interface {
	CommitContext(ctx context.Context, sync bool) error
}

// GetContext reads key through r, bounded by ctx when r implements
// ContextReader; otherwise it checks ctx once and calls r.Get.
func GetContext(ctx context.Context, r Reader, key []byte) ([]byte, io.Closer, error) {
	if cr, ok := r.(ContextReader); ok {
		return cr.GetContext(ctx, key)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	return r.Get(key)
}

// NewIterContext opens an iterator on r whose reads ctx bounds when r
// implements ContextReader; otherwise it checks ctx once and calls
// r.NewIter.
func NewIterContext(ctx context.Context, r Reader, opts *IterOptions) (Iterator, error) {
	if cr, ok := r.(ContextReader); ok {
		return cr.NewIterContext(ctx, opts)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return r.NewIter(opts)
}

// CommitContext commits b, bounded by ctx when b implements
// ContextCommitter; otherwise it checks ctx once and calls b.Commit. A
// batch not committed because ctx had ended is closed.
func CommitContext(ctx context.Context, b Batch, sync bool) error {
	if cc, ok := b.(ContextCommitter); ok {
		return cc.CommitContext(ctx, sync)
	}
	if err := ctx.Err(); err != nil {
		b.Close()
		return err
	}
	return b.Commit(sync)
}

// Version identifies one stored version of a key in a VersionedEngine. It
// changes on every write of the key, including a write of the same value,
// and never returns to an earlier value, so a key deleted and written
// again does not get its old Version back (no ABA). An absent key has
// NoVersion. Versions are comparable only for equality, and only between
// reads of the same key.
type Version uint64

// NoVersion is the Version of an absent key.
const NoVersion Version = 0

// Condition is a precondition of VersionedEngine.CommitIf: Key must still
// have Version, the Version a read returned (NoVersion: Key must still be
// absent).
type Condition struct {
	Key     []byte
	Version Version
}

// VersionedEngine is implemented by engines that several processes can
// share: it turns the check-then-write of a caller into one atomic step,
// which an in-process lock can no longer provide once another process
// writes to the same store.
//
// A caller reads with GetVersion, decides, and commits with CommitIf,
// naming the versions it read; the commit applies only if none of those
// keys has been written since. On ErrConditionFailed the caller reads
// again and retries. Optimistic concurrency of this kind is what the
// table layer needs for ETags, If-Match and entity group transactions
// across processes.
type VersionedEngine interface {
	Engine

	// GetVersion returns the value and Version of key. An absent key
	// returns ErrNotFound (and NoVersion). The value is valid until
	// closer.Close is called, as with Reader.Get.
	GetVersion(ctx context.Context, key []byte) (value []byte, v Version, closer io.Closer, err error)

	// CommitIf applies b atomically and durably if every condition holds
	// at the moment of the commit, and otherwise applies nothing and
	// returns an error wrapping ErrConditionFailed. It consumes b, as
	// Commit does. Conditions may name keys that b does not write; a key
	// named twice must hold both versions (so only one can pass).
	CommitIf(ctx context.Context, b Batch, conds []Condition) error
}

// ChangeNotifier is implemented by engines that other processes write to
// (a VersionedEngine) and that can tell a reader when keys are written, by
// any of them, as etcd's watch does: a reader waiting for other processes'
// commits (a watcher of the change feed) then learns of them as soon as
// the store delivers them, instead of by reading again at intervals.
type ChangeNotifier interface {
	// NotifyChanges starts watching the keys that begin with prefix and
	// returns, once the watch is in place, a channel that receives after
	// the commits, by any process, that write one of them: a commit that
	// a read begun after NotifyChanges returned may not have seen is
	// followed by a receive, made once the commit is visible to reads.
	// Receives are coalesced (the channel holds at most one, for one
	// commit or several) and may come without a commit.
	//
	// The channel is closed when ctx ends, when the engine closes, and
	// when the engine loses the watch (its connection, a compaction of
	// the revisions it had to resume from, a member without a leader):
	// from then on nothing is promised, and the caller reads again and
	// falls back to reading at intervals, or calls NotifyChanges again.
	// An error means the watch could not be set up.
	NotifyChanges(ctx context.Context, prefix []byte) (<-chan struct{}, error)
}

// MultiGetter is implemented by versioned engines that read several keys in
// one request, as a store reached over a network can: the table layer reads
// every entity of a transaction, and its table's catalog record, at once.
type MultiGetter interface {
	// GetVersions reads keys as of one moment and returns, in the order
	// of keys, each one's value and Version: nil and NoVersion for an
	// absent key. The values are valid until closer.Close is called (it
	// is never nil when err is nil).
	GetVersions(ctx context.Context, keys [][]byte) (values [][]byte, versions []Version, closer io.Closer, err error)
}

// GetVersions reads keys through e in one request when e implements
// MultiGetter, and otherwise with one GetVersion each (then not as of one
// moment). The values are valid until closer.Close is called.
func GetVersions(ctx context.Context, e VersionedEngine, keys [][]byte) ([][]byte, []Version, io.Closer, error) {
	if mg, ok := e.(MultiGetter); ok {
		return mg.GetVersions(ctx, keys)
	}
	vals := make([][]byte, len(keys))
	vers := make([]Version, len(keys))
	var cs closers
	for i, k := range keys {
		v, ver, c, err := e.GetVersion(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			cs.Close()
			return nil, nil, nil, err
		}
		vals[i], vers[i] = v, ver
		cs = append(cs, c)
	}
	return vals, vers, cs, nil
}

// closers closes each of its closers.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
