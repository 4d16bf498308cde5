package localtable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The change feed.
//
// With Options.Feed set, every commit of the account also writes what it
// changed to the account's feed, in the same atomic commit (the feed is a
// contributor of the write pipeline: see docs/architecture.md), under
// revisions that strictly increase in commit order. Watch reads the feed
// from any revision still retained, then waits for the commits that
// follow: a watcher reads the stored feed, so it never holds up a writer,
// however slow it is, and a watcher restarted from the last revision it
// saw, in this process or after a reopen or a crash, gets exactly the
// changes after it.

// Revision is the position of a change in an account's feed: revisions
// strictly increase in commit order, from 1.
type Revision uint64

// FeedOptions turn on an account's change feed and say how much of it is
// kept.
type FeedOptions struct {
	// KeepChanges is how many of the latest changes are kept, at least:
	// a watcher can resume from any of them. 0 means DefaultFeedChanges.
	KeepChanges int
	// KeepFor, if set, also drops changes older than this, by the
	// account's clock (Options.Clock), even when fewer than KeepChanges
	// are kept.
	KeepFor time.Duration
}

// DefaultFeedChanges is how many changes a feed keeps by default: enough
// for a watcher that was away for a while to catch up without a gap.
// Each commit takes 19 bytes (see feedlog.go), and each change:
//   - on the memory engine, its entity's record, its table's name and keys
//     and about 4 bytes more; a commit of one entity shares its record
//     with the entity while the entity is not replaced or deleted, for 9
//     bytes more;
//   - on pebble, its table's name and the entity's key and about 3 bytes
//     more, not the entity: the entity is read where it is; a write that
//     replaces or deletes an entity (or deletes its table, or restores the
//     account) keeps a copy of what it replaces, with its key twice, until
//     the feed no longer keeps the change;
//   - on etcd, as on the memory engine;
//
// and on pebble and etcd the changes of a commit that take 1 KiB or more
// (a transaction's) are stored compressed.
const DefaultFeedChanges = 100_000

// ChangeKind is the kind of a change.
type ChangeKind uint8

// The kinds of change.
const (
	ChangeInsert       ChangeKind = ChangeKind(changeInsert)       // an entity was inserted
	ChangeReplace      ChangeKind = ChangeKind(changeReplace)      // an existing entity was replaced
	ChangeMerge        ChangeKind = ChangeKind(changeMerge)        // properties were merged into an existing entity
	ChangeDelete       ChangeKind = ChangeKind(changeDelete)       // an entity was deleted
	ChangeTableCreated ChangeKind = ChangeKind(changeTableCreated) // a table was created
	ChangeTableDeleted ChangeKind = ChangeKind(changeTableDeleted) // a table was deleted with its entities
	// ChangeRestored: Account.Restore replaced the account's data, every
	// table of it, with a checkpoint's. The change names no table; a
	// watcher that keeps state derived from the data must read it again
	// (watching After this change's revision delivers what follows).
	ChangeRestored ChangeKind = ChangeKind(changeRestored)
	// ChangeExpired: an entity of a table with an expiry policy expired
	// and was deleted, by the sweeper or by an insert over it (which
	// follows this change in the same commit). Change.Entity holds its
	// keys alone, as after a delete. See Table.SetExpiry.
	ChangeExpired ChangeKind = ChangeKind(changeExpired)
)

var changeKindNames = map[ChangeKind]string{
	ChangeInsert: "Insert", ChangeReplace: "Replace", ChangeMerge: "Merge", ChangeDelete: "Delete",
	ChangeTableCreated: "TableCreated", ChangeTableDeleted: "TableDeleted", ChangeRestored: "Restored",
	ChangeExpired: "Expired",
}

// IsEntity reports whether a change of kind k is the change of one entity
// (an insert, replace, merge, delete or expiry), which Change.Entity
// describes; table changes and ChangeRestored are not.
func (k ChangeKind) IsEntity() bool {
	return k >= ChangeInsert && k <= ChangeDelete || k == ChangeExpired
}

// String returns the kind's name.
func (k ChangeKind) String() string {
	if s, ok := changeKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// Change is one change of an account's feed.
type Change struct {
	// Revision is the change's position in the feed.
	Revision Revision
	// Commit is the revision of the first change of the commit that made
	// this one: the changes of one commit (a transaction's actions) share
	// it and arrive together, in their order.
	Commit Revision
	// Last marks the last change of its commit.
	Last bool
	// Kind is what the change did.
	Kind ChangeKind
	// Table is the table's name, as created.
	Table string
	// Entity is the entity after an insert, replace or merge (all its
	// properties, its Timestamp and ETag), and only its keys after a
	// delete or an expiry. It is empty for a table's changes.
	Entity Entity
}

// WatchOptions select what Watch delivers. A nil *WatchOptions is the
// zero WatchOptions: every table of the account, from the oldest change
// kept.
type WatchOptions struct {
	// Table, if set, selects the changes of that table (case-insensitive),
	// and ChangeRestored, which concerns every table. A name no table can
	// have fails the watch (ValidateTableName's error).
	Table string
	// Filter, if set, selects the entity changes whose entity it matches:
	// after an insert, replace or merge, the entity as written; after a
	// delete or an expiry, its keys. Table changes and ChangeRestored
	// always pass.
	Filter Predicate
	// After starts the watch after this revision: the first change
	// delivered is the one that follows it. 0 starts at the oldest change
	// kept. A revision older than that fails with a *FeedCompactedError,
	// and one beyond the account's current revision with ErrInvalidInput.
	After Revision
	// FromNow starts at the next commit, whatever After says.
	FromNow bool
}

// Selects reports whether a watch with options o delivers c (FromNow and
// After aside): c is of o.Table, or a ChangeRestored, and its entity
// matches o.Filter if it is an entity's change. A nil o selects every
// change.
func (o *WatchOptions) Selects(c *Change) bool {
	if o == nil {
		return true
	}
	if o.Table != "" && c.Kind != ChangeRestored && !strings.EqualFold(c.Table, o.Table) {
		return false
	}
	return o.Filter == nil || !c.Kind.IsEntity() || o.Filter.Match(&c.Entity)
}

// ErrFeedOff is returned by Watch and Revision on an account opened
// without Options.Feed.
var ErrFeedOff = errors.New("localtable: the account has no change feed (Options.Feed)")

// FeedCompactedError is the error of a watch that asks for changes the
// feed no longer keeps: resuming After a revision older than Oldest-1
// would skip changes. errors.Is(err, ErrFeedCompacted) is true.
type FeedCompactedError struct {
	After  Revision // the revision asked for
	Oldest Revision // the oldest revision the feed keeps
}

// ErrFeedCompacted matches a *FeedCompactedError with errors.Is.
var ErrFeedCompacted = errors.New("localtable: the feed no longer keeps the changes asked for")

// Error says which revisions are gone and what to do.
func (e *FeedCompactedError) Error() string {
	return fmt.Sprintf("localtable: the feed keeps revisions from %d; changes after %d are gone (compacted): reread the data, then watch from the current revision", e.Oldest, e.After)
}

// Is reports whether target is ErrFeedCompacted.
func (e *FeedCompactedError) Is(target error) bool { return target == ErrFeedCompacted }

// Revision returns the account's current revision: the last one its feed
// holds (0 before the first change). Watching After it delivers the
// changes of the commits that follow.
func (a *Account) Revision(ctx context.Context) (Revision, error) {
	if a.feed == nil {
		return 0, ErrFeedOff
	}
	if err := a.enter(ctx); err != nil {
		return 0, err
	}
	defer a.exit()
	next, err := a.feed.next(ctx)
	return next - 1, err
}

// Watch returns the changes of the account's feed that opts select, in
// revision order, each once: first those kept after opts.After, then
// each commit's as it is made, until ctx ends (the iterator then stops
// without an error) or the account is closed (it yields ErrClosed). An
// error ends it: resume with After set to the last Revision received.
// A nil opts is the zero WatchOptions: every change, from the oldest
// kept; set FromNow to see only the commits still to come.
func (a *Account) Watch(ctx context.Context, opts *WatchOptions) iter.Seq2[Change, error] {
	var o WatchOptions // nil: the zero options, as everywhere in the API
	if opts != nil {
		o = *opts
	}
	return func(yield func(Change, error) bool) {
		if a.feed == nil {
			yield(Change{}, ErrFeedOff)
			return
		}
		if err := checkPredicate(o.Filter); err != nil {
			yield(Change{}, err)
			return
		}
		if o.Table != "" {
			if err := ValidateTableName(o.Table); err != nil {
				yield(Change{}, err) // no change could ever be of it
				return
			}
		}
		after := o.After
		if o.FromNow || after > 0 {
			rev, err := a.Revision(ctx)
			if err != nil {
				yield(Change{}, err)
				return
			}
			if o.FromNow {
				after = rev
			} else if after > rev {
				// A revision of another store, or of this one before a
				// restore from an older backup: waiting would wait for
				// revisions that mean other changes.
				yield(Change{}, newError(ErrInvalidInput, "watch after revision %d: the account's feed is at revision %d", after, rev))
				return
			}
		}
		for {
			wake := a.feed.wait() // before the read: a commit after it wakes us
			// Only the changes of the commits made, below the next
			// revision (feedLog.next), never one that a crash could
			// still take back, whose revision the next commit would
			// then reuse (a watcher resuming after it would skip a
			// change): on pebble a commit is visible to readers a
			// moment before its write-ahead log is synced (pebble
			// publishes, then syncs; TestCrashFeed caught a watcher
			// receiving a change that the kill then lost). On an
			// engine the account owns alone the next revision is
			// raised once the commit is made (feedLog.advance), which
			// wakes the watchers; on a shared engine it is stored, and
			// a commit there is durable once visible.
			limit, err := a.feed.next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					yield(Change{}, err)
				}
				return
			}
			held := false
			n, err := a.feed.read(ctx, after, func(c *Change) bool {
				if c.Revision >= limit {
					held = true
					return false
				}
				after = c.Revision
				if !o.Selects(c) {
					return true
				}
				return yield(*c, nil)
			})
			if err != nil {
				if ctx.Err() == nil {
					yield(Change{}, err)
				}
				return
			}
			if n < 0 && !held { // yield asked to stop
				return
			}
			if err := a.feed.waitFor(ctx, wake); err != nil {
				if !errors.Is(err, ctx.Err()) {
					yield(Change{}, err)
				}
				return
			}
		}
	}
}

// broadcaster wakes every waiter at once: wait returns a channel that the
// next wake closes. A wake with no wait since the last one does nothing,
// without taking the lock: every commit to the feed wakes, and most find
// no watcher waiting. That is safe for a waiter that calls wait before it
// looks for what it waits for, and a waker that wakes after it made that
// (both with atomics): either the waker sees waited set, or the waiter
// sees what the waker made.
type broadcaster struct {
	mu     sync.Mutex
	ch     chan struct{} // guarded by mu
	waited atomic.Bool   // wait was called since ch was made; set under mu
}

func newBroadcaster() *broadcaster { return &broadcaster{ch: make(chan struct{})} }

func (b *broadcaster) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waited.Store(true)
	return b.ch
}

func (b *broadcaster) wake() {
	if !b.waited.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.waited.Load() {
		return
	}
	close(b.ch)
	b.ch = make(chan struct{})
	b.waited.Store(false)
}
