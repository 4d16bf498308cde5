package localtable

import (
	"context"
	"sync/atomic"

	"github.com/localtable/localtable/storage"
)

// Checkpoint is a saved state of an account's data: its tables, their
// entities and their access policies. Account.Checkpoint makes one and
// Account.Restore returns the account to it, any number of times, which
// is how a test runs each case from the same fixture.
//
// On an engine that implements storage.Checkpointer (the in-memory engine
// does) both are O(1); on others, Checkpoint holds an engine snapshot and
// Restore copies it back, O(size of the data). Close a checkpoint before
// closing its account. A Checkpoint is safe for concurrent use.
type Checkpoint struct {
	a      *Account
	cp     storage.Checkpoint // the engine's, when it is a Checkpointer
	snap   storage.Snapshot   // otherwise a snapshot to copy back
	closed atomic.Bool
}

// Checkpoint saves the account's data as it is after every write that
// has returned and before any that has not.
func (a *Account) Checkpoint(ctx context.Context) (*Checkpoint, error) {
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	// The engine's state is whole commits, and every table change is one
	// commit of the catalog record with the entities: the state is
	// consistent without holding a lock.
	c := &Checkpoint{a: a}
	var err error
	if cpr, ok := a.eng.(storage.Checkpointer); ok {
		c.cp, err = cpr.Checkpoint()
	} else {
		c.snap, err = a.eng.NewSnapshot()
	}
	if err != nil {
		return nil, err
	}
	a.checkpoints.Add(1)
	return c, nil
}

// Restore returns the account's data to a checkpoint of this account:
// tables created since are gone, tables deleted since are back, and every
// entity has the properties, Timestamp and ETag it had. Restore waits for
// the writes in flight, as DeleteTable does for its table; calls that run
// alongside it may fail with ErrTableNotFound, so restore between the
// steps of a test, not during them. The clock is not set back: Timestamps
// (and so ETags) written after Restore are later than every one handed
// out before it, so an ETag read from the abandoned state never matches a
// new write by chance. Restoring another account's checkpoint fails with
// ErrInvalidInput, a closed one with ErrClosed, on a read-only account
// with ErrReadOnly.
func (a *Account) Restore(ctx context.Context, c *Checkpoint) error {
	if c == nil || c.a != a {
		return newError(ErrInvalidInput, "Restore: the checkpoint is of another account")
	}
	if c.closed.Load() {
		return ErrClosed
	}
	if a.readOnly {
		return ErrReadOnly
	}
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	a.ddl.Lock()
	defer a.ddl.Unlock()
	// Wait for the writes into every table and refuse the next ones: each
	// table gives way to the restored catalog's.
	old := a.cat.Load()
	for _, lt := range old.byName {
		lt.mu.Lock()
		lt.dropped.Store(true)
	}
	defer func() {
		for _, lt := range old.byName {
			lt.mu.Unlock()
		}
	}()
	// The clock's lock is held from here: the restored state's mark may
	// be below the ticks handed out since, and must never be left so.
	a.clock.mu.Lock()
	defer a.clock.mu.Unlock()
	var err error
	if c.cp != nil {
		err = a.restoreCheckpoint(ctx, c.cp)
	} else {
		err = a.copyBack(ctx, c.snap)
	}
	var cat *catalog
	var nextID uint64
	if err == nil {
		cat, nextID, err = a.loadCatalog()
	}
	if err != nil {
		for _, lt := range old.byName {
			lt.dropped.Store(false)
		}
		return err
	}
	a.nextID = max(a.nextID, nextID)
	// The feed's state is loaded from the restored data before the
	// restored tables are published (a.cat): from then on writes into them
	// run, and each must find it.
	if a.feed != nil {
		// The feed's next revision never goes down: the restored state's
		// may be behind the revisions handed out since.
		err = a.feed.load(ctx)
	}
	if a.keeper != nil && err == nil {
		// With the feed off, the restore put back the checkpoint's feed.
		err = a.keeper.loadOff(ctx)
	}
	a.cat.Store(cat)
	if err != nil {
		return err
	}
	if c.cp == nil || a.clock.reserved == 0 {
		return nil // the mark was restored with the data; or no Timestamp was handed out yet
	}
	// An engine that restores a checkpoint itself (in memory) restored the
	// old mark: persist the current one again, so that a reopen never
	// reuses the ticks handed out since.
	return a.persistClock(ctx, a.clock.reserved)
}

// Close releases the checkpoint. It is idempotent.
func (c *Checkpoint) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.a.checkpoints.Add(-1)
	if c.cp != nil {
		c.cp.Release()
		return nil
	}
	return c.snap.Close()
}

// restoreCheckpoint has the engine, a storage.Checkpointer, restore cp.
// The engine restores every key; the store's format version is then set
// to this localtable's, and the change feed's history put back as it was (from a snapshot taken before), in the commit that
// makes the restore's change, which follows at once (such an engine, in
// memory, keeps nothing across a crash: nothing can come between the
// two).
func (a *Account) restoreCheckpoint(ctx context.Context, cp storage.Checkpoint) error {
	var feed storage.Snapshot
	if a.feed != nil {
		var err error
		if feed, err = a.eng.NewSnapshot(); err != nil {
			return err
		}
		defer feed.Close()
	}
	if err := a.eng.(storage.Checkpointer).Restore(cp); err != nil {
		return err
	}
	return a.update(ctx, "the restore", maxConflictRetries, nil, func(*readSet) (*metaPlan, error) {
		// The store's format is this localtable's, whose records it
		// writes next, whatever the checkpoint held.
		ws := []write{{key: metaFormat, value: encodeFormat(formatVersion)}}
		if feed != nil {
			var err error
			if ws, err = feedCopy(ws, feed); err != nil {
				return nil, err
			}
		}
		var changes []change
		if a.contributors != nil {
			changes = restoredChanges
		}
		return &metaPlan{writes: ws, changes: changes}, nil
	})
}

// restoredChanges are the changes of a Restore, as contributors see it.
var restoredChanges = []change{{kind: changeRestored}}

// copyBack replaces every key of the account's engine with the
// snapshot's, in one batch, except the change feed's (its history, with
// the next revision, kept in memory: feedLog.rev), the store's format
// version (this localtable's, whose records it writes next) and two: the clock's
// mark, which becomes the higher of the snapshot's and the one the clock
// reserved since, and the next table ID, likewise. The contributors'
// writes for the restore (the feed's Restored change) are in the batch. A crash, at any moment, leaves either the
// state before or the restored state with a mark that covers every tick
// handed out: never a clock behind its own Timestamps, which would let an
// abandoned ETag match again. a.clock.mu must be held.
func (a *Account) copyBack(ctx context.Context, snap storage.Snapshot) error {
	b := a.eng.NewBatch()
	defer b.Close()
	// Every key starts with a prefix byte below 0xff (internal/keyenc).
	keepFeed := a.feed != nil
	if keepFeed {
		err := b.DeleteRange([]byte{}, feedDataBounds.LowerBound)
		if err == nil {
			err = b.DeleteRange(feedDataBounds.UpperBound, []byte{0xff})
		}
		if err != nil {
			return err
		}
	} else if err := b.DeleteRange([]byte{}, []byte{0xff}); err != nil {
		return err
	}
	it, err := snap.NewIter(nil)
	if err != nil {
		return err
	}
	mark, next := a.clock.reserved, int64(a.nextID)
	for ok := it.First(); ok; ok = it.Next() {
		switch k := it.Key(); {
		case string(k) == string(metaClock):
			if t, _, ok := decodeMark(it.Value()); ok {
				mark = max(mark, t)
			}
			continue
		case keepFeed && (inFeedData(k) || string(k) == string(metaFeedRev)):
			continue // the feed is kept
		case string(k) == string(metaNextID):
			if n, ok := decodeTicks(it.Value()); ok {
				next = max(next, n)
			}
			continue
		case string(k) == string(metaFormat):
			continue // this localtable's, set below: it writes in its format
		}
		if err := b.Set(it.Key(), it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if mark > 0 {
		if err := b.Set(metaClock, encodeMark(mark, a.strategy.nonce())); err != nil {
			return err
		}
	}
	if err := b.Set(metaNextID, encodeTicks(next)); err != nil {
		return err
	}
	if err := b.Set(metaFormat, encodeFormat(formatVersion)); err != nil {
		return err
	}
	var cc *commitContext
	if a.contributors != nil {
		rs := newReadSet()
		defer rs.close()
		var err error
		if cc, err = a.contribute(ctx, nil, allContributors, rs, nil, restoredChanges, 0); err != nil {
			return err
		}
		if err := applyWrites(b, cc.writes, nil); err != nil {
			return err
		}
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	cc.committed()
	if mark > 0 {
		a.clockWrote, a.clockPrev = mark, mark
	}
	a.clock.reserved = max(a.clock.reserved, mark)
	return nil
}
