package localtable

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Commit strategies.
//
// Every write of an account goes through one pipeline (pipeline.go): its
// stateless checks and encoding, one read of the state it depends on, a
// plan (plan.go) that decides from that state alone what the write does,
// the writes contributors add (contrib.go), and a commit. How the state is
// read and how the commit is made safe against other writers is the
// account's strategy, chosen once at Open from its engine:
//
//   - local (this file), for an engine the account owns (memory, pebble):
//     nobody else writes, so the account's own locks (held by the
//     pipeline around the read and the commit) make the read still true
//     at the commit, and the commit is one batch;
//   - versioned (versioned.go), for a storage.VersionedEngine that other
//     accounts, in other processes, write too (etcd): the read returns
//     each key's Version, the commit is CommitIf on them, and an attempt
//     that lost a race is re-run from its read, with backoff.
//
// The strategy also says how far the account's catalog, a cache on a
// shared engine, can be trusted by reads. Nothing outside the two
// strategies asks which one an account has.
type strategy interface {
	// lookup returns the table of a name for a call that uses it at
	// once, or ErrTableNotFound: the cached table, or on a shared engine
	// the engine's when the cache lacks it (uses of a cached table check
	// it; see versioned.go).
	lookup(ctx context.Context, name string) (*liveTable, error)
	// current returns the table of a name as the store has it now.
	current(ctx context.Context, name string) (*liveTable, error)
	// tables returns the catalog as the store has it now, for a listing.
	tables(ctx context.Context) (*catalog, error)
	// snapshotTable returns the table of lt's name that snap shows, or
	// ErrTableNotFound.
	snapshotTable(ctx context.Context, lt *liveTable, snap storage.Snapshot) (*liveTable, error)
	// getEntity reads the record of entity (pk, rk) of lt's table,
	// building its key in *kb; on a shared engine it follows the table of
	// lt's name if another process re-created it, and returns the table
	// read.
	getEntity(ctx context.Context, lt *liveTable, pk, rk string, kb *[]byte) (*liveTable, []byte, io.Closer, error)

	// read reads keys into rs for a write: their values, and on a shared
	// engine their Versions, on which the commit is conditioned. With a
	// guard, the table's catalog record is read too (on a shared engine;
	// locally the pipeline's table lock guards it), and an attempt whose
	// guard is no longer the table of its name fails with errConflict.
	read(ctx context.Context, rs *readSet, guard *liveTable, keys [][]byte) error
	// commit applies ws atomically and durably; on a shared engine on
	// condition that nothing rs read has changed, else errConflict.
	commit(ctx context.Context, rs *readSet, ws []write) error
	// run runs an attempt of a write until it ends other than with
	// errConflict: once locally; on a shared engine again after a backoff,
	// at most budget times, then ErrServerBusy naming what.
	run(ctx context.Context, what string, budget int, w attempter) error

	// exclusive is taken by a commit whose contributors read keys of
	// their own, before the first such read, and released after the
	// commit: it serializes those commits of this account (locally the
	// pipeline's locks cover the write's own keys only; on a shared
	// engine the commit's conditions keep other processes' apart, and
	// this spares the account's own commits conflicts with one another).
	exclusive() (release func())

	// sync makes every commit acknowledged so far durable, on an engine
	// whose commits may not be (pebble with NoSync: storage.Syncer); it
	// does nothing on others.
	sync() error

	// alone reports whether the account is the only writer of its engine
	// (locally): a contributor may then keep in memory, under exclusive
	// (commitContext.hold), what it would otherwise read in every commit,
	// loading it at open and after a Restore.
	alone() bool

	// follow calls wake after the commits of other processes that write
	// keys under prefix, from its first call until stop is closed, as far
	// as the engine can tell them (storage.ChangeNotifier), and returns
	// how long a waiter may wait for a wake before it must read again:
	// 0 when every commit wakes it (locally, where every commit is this
	// account's and wakes its waiters itself; on a shared engine while
	// the engine's notifications are in place), else the poll interval.
	// An account has one follower: its change feed's watchers.
	follow(prefix []byte, wake func(), stop <-chan struct{}) time.Duration

	// nonce tags the clock's mark written by this account (0: none; see
	// encodeMark).
	nonce() uint64
}

// newStrategy returns the strategy of an account over its engine.
func newStrategy(a *Account) strategy {
	if ve, ok := a.eng.(storage.VersionedEngine); ok {
		return newVersioned(a, ve)
	}
	return local{a}
}

// attempter is a write that a strategy runs, in one attempt or more.
type attempter interface {
	// attempt runs the write once, from its read to its commit.
	attempt(ctx context.Context) error
}

// attemptFunc is a function that is an attempter.
type attemptFunc func(ctx context.Context) error

func (f attemptFunc) attempt(ctx context.Context) error { return f(ctx) }

// errConflict ends one attempt of a write that must be re-run from its
// read: a conditional commit failed, or the table's catalog record is
// not the one the cache holds. Only the versioned strategy returns it.
var errConflict = errors.New("localtable: conflict with another writer")

// readSet is the state a write read: each key's value (nil when absent)
// and, on a shared engine, its Version. The values stay valid until
// close. Its slices start in inline arrays: most writes read one or two
// keys.
type readSet struct {
	keys    [][]byte
	vals    [][]byte
	found   []bool
	vers    []storage.Version // NoVersion on an engine without Versions
	closers []io.Closer
	release func() // set: called by close (see strategy.exclusive)
	// nested is the list of nested writes the commit hands to the engine
	// (applyWrites), kept for the next commit of a pooled write.
	nested []storage.Nested

	inline struct {
		keys, vals [2][]byte
		found      [2]bool
		vers       [2]storage.Version
		closers    [2]io.Closer
	}
}

// newReadSet returns an empty read set.
func newReadSet() *readSet { return new(readSet).reset() }

// reset empties rs and returns it.
// A read set that grew beyond its inline arrays keeps the larger slices:
// a pooled one (see entityWrite) reads as many keys again without
// growing them anew.
func (rs *readSet) reset() *readSet {
	if rs.keys == nil {
		rs.keys, rs.vals, rs.found = rs.inline.keys[:0], rs.inline.vals[:0], rs.inline.found[:0]
		rs.vers, rs.closers = rs.inline.vers[:0], rs.inline.closers[:0]
		return rs
	}
	clear(rs.keys)
	clear(rs.vals)
	clear(rs.closers)
	rs.keys, rs.vals, rs.found = rs.keys[:0], rs.vals[:0], rs.found[:0]
	rs.vers, rs.closers = rs.vers[:0], rs.closers[:0]
	return rs
}

// add appends a key read to rs.
func (rs *readSet) add(k, v []byte, found bool, ver storage.Version) {
	rs.keys = append(rs.keys, k)
	rs.vals = append(rs.vals, v)
	rs.found = append(rs.found, found)
	rs.vers = append(rs.vers, ver)
}

// close releases the values read, and what the write held (see
// strategy.exclusive).
func (rs *readSet) close() {
	for _, c := range rs.closers {
		c.Close()
	}
	rs.closers = rs.closers[:0]
	if rs.release != nil {
		rs.release()
		rs.release = nil
	}
}

// write is one write of a commit's write set: value under key, or, with
// del, the deletion of key (of [key, end) when end is set).
//
// A write may be nested in a later one whose stored value holds its key
// and value, one after the other (a feed record that holds the entities
// of its commit, a covering index's entry that holds its entity): the
// outer write's value leaves them out, and each goes in at its at, a
// position in that value. Where the batch is a storage.NestedSetter, the
// outer write and every write nested in it are set together, by one
// SetNested call (at the outer write's place; a nested write is skipped
// at its own), which writes them all into one buffer; elsewhere the outer
// write's value is put together first, and every write set on its own.
// The outer write's inner is 1 + the index in the write set of the last
// write nested in it; a nested write has at and next, 1 + the index of
// the write nested in the same one before it (0: none). The writes nested
// in one go in at the order they were nested in.
type write struct {
	key, value []byte
	del        bool
	nested     bool
	inner      int32
	next       int32
	at         int32
	end        []byte
}

// nestIn marks ws[p] nested in ws's last write, at position at of its
// value (at or after that of the write nested there before).
func nestIn(ws []write, p, at int) {
	w, o := &ws[p], &ws[len(ws)-1]
	w.nested, w.at, w.next = true, int32(at), o.inner
	o.inner = int32(p + 1)
}

// findWrite returns the position of the write in ws under key (the same
// slice, not an equal one), searched for from from on, then before it,
// or -1 if ws has none; nestable says whether it may be nested in a later
// write: it is a set, and not nested already.
func findWrite(ws []write, key []byte, from int) (p int, nestable bool) {
	from = min(from, len(ws))
	for p := from; p < len(ws); p++ {
		if w := &ws[p]; len(w.key) == len(key) && unsafe.SliceData(w.key) == unsafe.SliceData(key) {
			return p, !w.nested && !w.del && w.end == nil
		}
	}
	for p := range from {
		if w := &ws[p]; len(w.key) == len(key) && unsafe.SliceData(w.key) == unsafe.SliceData(key) {
			return p, !w.nested && !w.del && w.end == nil
		}
	}
	return -1, false
}

// applyWrites adds ws to b. The lists of nested writes it hands to the
// engine are made in *nested (nil: a new one), kept for the next call.
func applyWrites(b storage.Batch, ws []write, nested *[]storage.Nested) error {
	ns, _ := b.(storage.NestedSetter)
	for i := range ws {
		w := &ws[i]
		var err error
		switch {
		case w.nested && ns != nil:
			continue // set with the write whose value holds it
		case w.inner > 0:
			if nested == nil {
				nested = new([]storage.Nested)
			}
			in := (*nested)[:0]
			for p := w.inner; p > 0; p = ws[p-1].next {
				// Field by field: a composite literal is built on the
				// stack and then copied, by loads wider than its stores
				// (a stall each, which a single insert measured).
				n := &ws[p-1]
				in = append(in, storage.Nested{})
				e := &in[len(in)-1]
				e.Key, e.Value, e.At = n.key, n.value, int(n.at)
			}
			slices.Reverse(in) // in the order they were nested
			*nested = in
			if ns != nil {
				err = ns.SetNested(w.key, w.value, in)
			} else {
				var v []byte
				if v, err = fillIn(w.value, in); err == nil {
					err = b.Set(w.key, v)
				}
			}
			clear(in) // the list is kept: it must not keep the writes' buffers
		case !w.del:
			err = b.Set(w.key, w.value)
		case w.end != nil:
			err = b.DeleteRange(w.key, w.end)
		default:
			err = b.Delete(w.key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fillIn returns value with the key then the value of each of inner
// inserted at its At, in a new buffer: the value that
// storage.NestedSetter.SetNested would store, and its error for inner
// writes out of place.
func fillIn(value []byte, inner []storage.Nested) ([]byte, error) {
	size, err := storage.NestedSize(value, inner)
	if err != nil {
		return nil, err
	}
	v := make([]byte, 0, size)
	from := 0
	for _, n := range inner {
		v = append(append(append(v, value[from:n.At]...), n.Key...), n.Value...)
		from = n.At
	}
	return append(v, value[from:]...), nil
}

// local is the strategy of an engine the account owns.
type local struct{ a *Account }

func (s local) lookup(_ context.Context, name string) (*liveTable, error) {
	if t := s.a.cat.Load().byName[strings.ToLower(name)]; t != nil {
		return t, nil
	}
	return nil, newError(ErrTableNotFound, "table %q does not exist", name)
}

func (s local) current(ctx context.Context, name string) (*liveTable, error) {
	return s.lookup(ctx, name)
}

func (s local) tables(context.Context) (*catalog, error) { return s.a.cat.Load(), nil }

func (s local) snapshotTable(_ context.Context, lt *liveTable, _ storage.Snapshot) (*liveTable, error) {
	return lt, nil
}

func (s local) getEntity(_ context.Context, lt *liveTable, pk, rk string, kb *[]byte) (*liveTable, []byte, io.Closer, error) {
	*kb = keyenc.AppendEntityKey((*kb)[:0], lt.id, pk, rk)
	v, c, err := s.a.eng.Get(*kb)
	return lt, v, c, err
}

func (s local) read(_ context.Context, rs *readSet, _ *liveTable, keys [][]byte) error {
	for _, k := range keys {
		v, c, err := s.a.eng.Get(k)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			rs.add(k, nil, false, storage.NoVersion)
			continue
		case err != nil:
			return err
		}
		rs.add(k, v, true, storage.NoVersion)
		rs.closers = append(rs.closers, c)
	}
	return nil
}

func (s local) commit(_ context.Context, rs *readSet, ws []write) error {
	b := s.a.eng.NewBatch()
	defer b.Close()
	if err := applyWrites(b, ws, &rs.nested); err != nil {
		return err
	}
	return b.Commit(true)
}

func (s local) run(ctx context.Context, _ string, _ int, w attempter) error {
	return w.attempt(ctx)
}

func (s local) nonce() uint64 { return 0 }

func (s local) follow([]byte, func(), <-chan struct{}) time.Duration { return 0 }

func (s local) alone() bool { return true }

func (s local) sync() error {
	if sy, ok := s.a.eng.(storage.Syncer); ok {
		return sy.Sync()
	}
	return nil
}

func (s local) exclusive() func() {
	s.a.contribMu.Lock()
	return s.a.unlockContrib
}
