package localtable

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
)

// Options configure an Account. The zero Options (or nil) give an
// in-memory account on the system clock.
type Options struct {
	// Engine stores the account's data. nil means a new in-memory engine
	// (memory.New, with the change feed's records kept as a log:
	// memory.Options.Logs). For data on disk, pass a pebble engine (package
	// storage/pebble).
	//
	// The Account owns the engine: nothing else may write to it, and Close
	// closes it. An engine belongs to one Account at a time: Open over an
	// engine that an open Account owns fails with ErrEngineInUse and
	// leaves that engine alone. (A pebble directory is likewise opened by
	// one pebble.Open at a time, in any process.)
	//
	// An engine that implements storage.VersionedEngine (storage/etcd)
	// is shared: several Accounts, each over an engine value of its own,
	// in one process or on several machines, may serve its store at once.
	// Every entity write then reads versions and commits on condition
	// that nothing it read changed, and re-runs when another writer got
	// there first; table IDs, table creation and deletion and the clock's
	// mark are changed the same way, and the table catalog is a cache
	// checked by every use. ETags, If-Match, transactions and table
	// create/delete keep their guarantees across the Accounts; a write
	// that loses the race ten times running fails with ErrServerBusy.
	Engine storage.Engine

	// Clock is the account's time source: for entity Timestamps, and
	// expiry's clock (an entity whose expiry property is at or before
	// Clock's time is hidden, and swept). nil means time.Now. Tests pass
	// a controllable clock; Timestamps stay strictly increasing even when
	// it stalls or steps back. A time outside
	// 1601-01-01 … 9999-12-31T23:59:59.9999999Z is refused: Open and
	// writes fail with ErrClockOutOfRange rather than stamp it.
	//
	// Clock is called from the account's own goroutines (the expiry
	// sweeper, the change feed's retention) as well as from its callers',
	// so it must be safe for concurrent use: a clock a test moves must
	// synchronize (localtabletest.NewClock(start).Now is such a manual
	// clock), not be a closure over a variable the test assigns.
	Clock func() time.Time

	// Feed, if set, turns on the account's change feed (see Watch) and
	// says how much of it is kept. nil: no feed, at no cost to writes.
	// Every commit then also writes its changes to the feed, in the same
	// commit; a store keeps its feed across reopens, and an account that
	// opens it without Feed neither extends nor prunes it: its writes
	// are missing from the feed, without a gap in the revisions, so every
	// writer of a watched store should have the feed on.
	Feed *FeedOptions

	// Expiry configures the expiry sweeper, which deletes the expired
	// entities of the tables with an expiry policy (Table.SetExpiry) in
	// the background. nil means the defaults: a pass every second (which
	// does nothing while no table has a policy).
	Expiry *ExpiryOptions

	// IndexRecords says whether the entries of the indexes this account
	// declares (with Table.CreateIndex, or SetExpiry) hold their entities'
	// records (IndexInfo.Covering), so that a query through one fetches no
	// entity. The default covers where it costs no copy of the record: on
	// the memory engine, whose entities share their records with their
	// entries, and not on pebble, where each entry would hold a copy that
	// every write of an indexed entity writes too (a transaction of 100
	// then costs about 1.6× the time without the index, against 1.3×
	// without the copies: BENCHMARKS.md, "Secondary indexes").
	// IndexRecordsAlways makes pebble's covering too, for read-heavy
	// tables; IndexRecordsNever makes none. On a shared engine (etcd) no
	// index is covering. An index keeps what it was declared with.
	IndexRecords IndexRecords

	// ReadOnly opens the account to read it and nothing else: Open writes
	// nothing to the engine (a store of an older format is read as it is,
	// its format left for the first build that writes it to raise), no
	// expiry sweeper runs (expired entities stay hidden, as from every
	// read), and every write, DDL and Restore fails with ErrReadOnly.
	// Diagnostics and tools that look at a store someone else writes open
	// it so (the CLI's offline reads do, over storage/pebble's
	// Options.ReadOnly). Watch works over a ReadOnly account with Feed
	// set: it reads the history the store holds, and no new commit comes.
	ReadOnly bool
}

// IndexRecords says which indexes hold their entities' records (see
// Options.IndexRecords).
type IndexRecords int

// The choices of Options.IndexRecords.
const (
	// IndexRecordsDefault: covering on an engine whose entities can share
	// their records with their entries (the memory engine's batches are
	// storage.NestedSetters), not on another.
	IndexRecordsDefault IndexRecords = iota
	// IndexRecordsAlways: covering on every engine the account owns.
	IndexRecordsAlways
	// IndexRecordsNever: no index is covering.
	IndexRecordsNever
)

// Account is a namespace of tables over one storage engine, the unit the
// service authorizes. It is safe for concurrent use by many goroutines.
type Account struct {
	eng      storage.Engine
	strategy strategy // how its writes commit (strategy.go)
	clock    clock
	seed     maphash.Seed

	// cat is the table catalog, copy-on-write (see catalog.go): calls load
	// it without a lock. ddl serializes the changes to it (creating and
	// deleting tables, setting access policies) and guards nextID.
	// records is Options.IndexRecords; nests says the engine's batches
	// are storage.NestedSetters.
	records IndexRecords
	nests   bool
	// readOnly is Options.ReadOnly: run refuses every write.
	readOnly bool

	cat    atomic.Pointer[catalog]
	ddl    sync.Mutex
	nextID uint64
	// cacheMu serializes the changes to the catalog on a shared engine,
	// where it is a cache (see versioned.go); it is held for no I/O.
	cacheMu sync.Mutex
	// clockWrote is the value of the clock's mark this Account last
	// wrote (-1: none, or not known to be the stored one), and clockPrev
	// the mark that write replaced; both are guarded by clock.mu (see
	// persistClock and lowerClock).
	clockWrote, clockPrev int64

	// contributors add their writes to every commit (contrib.go); set at
	// Open, then never changed.
	contributors []contributor
	feed         *feedLog // the change feed's contributor; nil: none
	// keeper, with the feed off on an engine whose feed names its
	// entities (pebble), keeps the images the feed a store holds from
	// earlier opens still needs (feedLog.off); nil: none.
	keeper *feedLog
	// sweeper deletes expired entities in the background (sweeper.go);
	// nil: none. sweepOpts are its options, with the defaults filled in.
	sweeper   *sweeper
	sweepOpts ExpiryOptions
	// contribMu serializes, on an engine the account owns, the commits
	// whose contributors read keys of their own (see strategy.exclusive).
	contribMu sync.Mutex
	// unlockContrib is contribMu.Unlock, made once: strategy.exclusive
	// returns it on every commit.
	unlockContrib func()

	// parts serializes writes to one partition: a write locks the stripe
	// of its (table, PartitionKey), reads its entities, and commits.
	parts [256]sync.Mutex

	// gate counts the calls in flight, for Close to wait for them;
	// released is closed once Close has closed the engine.
	gate     *gate
	released chan struct{}
	// checkpoints counts the Checkpoints not yet closed, for Close's
	// error when one is left open.
	checkpoints atomic.Int64

	// beforeCommit, if set (by tests), is called by every entity write
	// just before it commits; beforeCatalogCommit by CreateTable and
	// DeleteTable just before theirs (op "create", "delete"), and by
	// DeleteTable after its commit, before it publishes the catalog
	// ("delete-committed"), and by a step of an index's build once it has
	// listed its keys ("index-listed") and under its locks, before its
	// plan ("index-step").
	beforeCommit        func(table string, actions []Action)
	beforeCatalogCommit func(op, table string)
}

// Metadata keys.
var (
	metaClock  = keyenc.MetaKey("clock")
	metaNextID = keyenc.MetaKey("nexttable")
)

// Open opens an account over opts.Engine (nil opts: a new in-memory
// account). It loads the table catalog and the clock's high-water mark.
// If opts.Engine belongs to an open Account, Open fails with
// ErrEngineInUse; if it fails otherwise, it closes the engine.
func Open(opts *Options) (*Account, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Engine == nil {
		o.Engine = memory.New(&memory.Options{Logs: keyenc.LogPrefixes()})
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	a := &Account{
		eng:      o.Engine,
		seed:     maphash.MakeSeed(),
		nextID:   1,
		records:  o.IndexRecords,
		readOnly: o.ReadOnly,

		gate:     newGate(),
		released: make(chan struct{}),
	}
	a.strategy = newStrategy(a)
	a.clockWrote = -1
	a.unlockContrib = a.contribMu.Unlock
	// Indexes may be declared at any time (by another process, on a
	// shared engine), so their contributor is always there; a table
	// without any costs it a load of its index list per write. It comes
	// first: where the engine nests writes, an entity's write is nested
	// in its first covering index's entry, whose buffer lives no longer
	// than the entity, rather than in the feed's record, which a
	// transaction's other entities share and the feed prunes.
	a.contributors = append(a.contributors, indexMaintainer{})
	if o.Feed != nil {
		a.feed = newFeedLog(a, *o.Feed)
		a.contributors = append(a.contributors, a.feed)
	} else if f := newFeedLog(a, FeedOptions{}); f.refs {
		f.off = true
		a.keeper = f
		a.contributors = append(a.contributors, f)
	}
	a.clock = clock{now: o.Clock, persist: a.persistClock, lower: a.lowerClock}
	if !claimEngine(o.Engine) {
		return nil, fmt.Errorf("%w (%T): close that Account before opening another over its engine", ErrEngineInUse, o.Engine)
	}
	if b := o.Engine.NewBatch(); b != nil { // what its batches can do
		_, a.nests = b.(storage.NestedSetter)
		b.Close()
	}
	_, err := clockTicks(o.Clock())
	if err == nil {
		err = a.load()
	}
	if err != nil {
		o.Engine.Close()
		releaseEngine(o.Engine)
		return nil, err
	}
	var eo ExpiryOptions
	if o.Expiry != nil {
		eo = *o.Expiry
	}
	if !a.readOnly {
		a.startSweeper(eo)
	}
	return a, nil
}

// owners holds the engines of open Accounts.
var owners struct {
	sync.Mutex
	m map[storage.Engine]bool
}

// claimEngine makes e owned, and reports false if it already was. Engines
// of a type that cannot be a map key (none of this module's) go unchecked.
func claimEngine(e storage.Engine) bool {
	if !reflect.TypeOf(e).Comparable() {
		return true
	}
	owners.Lock()
	defer owners.Unlock()
	if owners.m[e] {
		return false
	}
	if owners.m == nil {
		owners.m = make(map[storage.Engine]bool)
	}
	owners.m[e] = true
	return true
}

// releaseEngine undoes claimEngine.
func releaseEngine(e storage.Engine) {
	if !reflect.TypeOf(e).Comparable() {
		return
	}
	owners.Lock()
	delete(owners.m, e)
	owners.Unlock()
}

// load reads the catalog, the next table ID and the clock's mark.
func (a *Account) load() error {
	if err := a.checkFormat(context.Background()); err != nil {
		return err
	}
	cat, nextID, err := a.loadCatalog()
	if err != nil {
		return err
	}
	a.cat.Store(cat)
	a.nextID = nextID
	if v, ok, err := a.getMeta(metaClock); err != nil {
		return err
	} else if ok {
		a.clock.last, a.clock.reserved = int64(v), int64(v)
	}
	if a.feed != nil {
		return a.feed.load(context.Background())
	}
	if a.keeper != nil {
		return a.keeper.loadOff(context.Background())
	}
	return nil
}

func (a *Account) getMeta(key []byte) (uint64, bool, error) {
	v, c, err := a.eng.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	t, ok := decodeTicks(v)
	if string(key) == string(metaClock) {
		t, _, ok = decodeMark(v)
	}
	if !ok {
		return 0, false, fmt.Errorf("localtable: corrupt metadata %q", key)
	}
	return uint64(t), true, nil
}

// Close closes the account and its engine. Calls that begin after Close
// has begun fail with ErrClosed. Calls in flight finish, or fail with
// ErrClosed if they are long (a query's scan stops with it): Close waits for
// them, then closes the engine, and returns once the engine is released,
// so that a pebble directory can be opened again at once. A QueryAll,
// Tables or Partitions loop holds nothing between its pages: its next page
// fails with ErrClosed, which it yields.
//
// Close is safe to call more than once, from any goroutine: the first call
// returns the engine's Close error, and later calls wait until the engine
// is released and return ErrClosed.
func (a *Account) Close() error {
	a.stopSweeper()
	first := a.gate.shut()
	if a.feed != nil {
		a.feed.shut() // the watchers waiting for commits stop
	}
	<-a.gate.drained
	if !first {
		<-a.released
		return ErrClosed
	}
	a.clock.settle()
	err := a.eng.Close()
	if n := a.checkpoints.Load(); n > 0 && err != nil {
		err = fmt.Errorf("%w (%d Checkpoint(s) of the account still open: close them before the account)", err, n)
	}
	releaseEngine(a.eng)
	close(a.released)
	return err
}

// check is a quick test, before a call does any work: ErrClosed once
// Close has begun, or ctx's error. Calls that touch the engine enter the
// gate (a.enter) instead.
func (a *Account) check(ctx context.Context) error { return a.interrupted(ctx) }

// Table returns a handle to the named table. It does no I/O and does not
// check that the table exists: operations on a missing table fail with
// ErrTableNotFound. Table names are case-insensitive.
func (a *Account) Table(name string) *Table { return &Table{a: a, name: name} }

// MaxPageSize is the most entities or tables one page holds.
const MaxPageSize = 1000

// partition returns the lock of a table's partition.
func (a *Account) partition(id uint64, pk string) *sync.Mutex {
	h := maphash.String(a.seed, pk) ^ (id * 0x9E3779B97F4A7C15)
	return &a.parts[h%uint64(len(a.parts))]
}
