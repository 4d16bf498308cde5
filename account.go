package localtable

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"net/http"
	"reflect"
	"slices"
	"strings"
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
	// (memory.New). For data on disk, pass a pebble engine (package
	// storage/pebble).
	//
	// The Account owns the engine: nothing else may write to it, and Close
	// closes it. An engine belongs to one Account at a time: Open over an
	// engine that an open Account owns fails with ErrEngineInUse and
	// leaves that engine alone. (A pebble directory is likewise opened by
	// one pebble.Open at a time, in any process.)
	Engine storage.Engine

	// Clock is the account's time source for entity Timestamps. nil means
	// time.Now. Tests pass a controllable clock; Timestamps stay strictly
	// increasing even when it stalls or steps back. A time outside
	// 1601-01-01 … 9999-12-31T23:59:59.9999999Z is refused: Open and
	// writes fail with ErrClockOutOfRange rather than stamp it.
	Clock func() time.Time
}

// Account is a namespace of tables over one storage engine, the unit the
// service authorizes. It is safe for concurrent use by many goroutines.
type Account struct {
	eng   storage.Engine
	clock clock
	seed  maphash.Seed

	// cat is the table catalog, copy-on-write (see catalog.go): calls load
	// it without a lock. ddl serializes the changes to it (creating and
	// deleting tables, setting access policies) and guards nextID.
	cat    atomic.Pointer[catalog]
	ddl    sync.Mutex
	nextID uint64

	// parts serializes writes to one partition: a write locks the stripe
	// of its (table, PartitionKey), reads its entities, and commits.
	parts [256]sync.Mutex

	// gate counts the calls in flight, for Close to wait for them;
	// released is closed once Close has closed the engine.
	gate     *gate
	released chan struct{}

	// beforeCommit, if set (by tests), is called by every entity write
	// just before it commits; beforeCatalogCommit by CreateTable and
	// DeleteTable just before theirs (op "create", "delete"), and by
	// DeleteTable after its commit, before it publishes the catalog
	// ("delete-committed").
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
		o.Engine = memory.New(nil)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	a := &Account{
		eng:    o.Engine,
		seed:   maphash.MakeSeed(),
		nextID: 1,

		gate:     newGate(),
		released: make(chan struct{}),
	}
	a.clock = clock{now: o.Clock, persist: a.persistClock}
	if !claimEngine(o.Engine) {
		return nil, fmt.Errorf("%w (%T): close that Account before opening another over its engine", ErrEngineInUse, o.Engine)
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
	it, err := a.eng.NewIter(&storage.IterOptions{
		LowerBound: []byte{keyenc.PrefixCatalog},
		UpperBound: []byte{keyenc.PrefixCatalog + 1},
	})
	if err != nil {
		return err
	}
	cat := &catalog{byName: make(map[string]*liveTable)}
	for it.First(); it.Valid(); it.Next() {
		rec, err := decodeTableRecord(it.Value())
		if err != nil {
			it.Close()
			return fmt.Errorf("%w (key %q)", err, it.Key())
		}
		lower := string(it.Key()[1:])
		cat.byName[lower] = newLiveTable(&rec)
		cat.sorted = append(cat.sorted, lower) // in key order
		a.nextID = max(a.nextID, rec.ID+1)
	}
	if err := it.Close(); err != nil {
		return err
	}
	a.cat.Store(cat)
	if v, ok, err := a.getMeta(metaNextID); err != nil {
		return err
	} else if ok {
		a.nextID = max(a.nextID, v)
	}
	if v, ok, err := a.getMeta(metaClock); err != nil {
		return err
	} else if ok {
		a.clock.last, a.clock.reserved = int64(v), int64(v)
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
	if !ok {
		return 0, false, fmt.Errorf("localtable: corrupt metadata %q", key)
	}
	return uint64(t), true, nil
}

func (a *Account) persistClock(mark int64) error {
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Set(metaClock, encodeTicks(mark)); err != nil {
		return err
	}
	return b.Commit(true)
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
	first := a.gate.shut()
	<-a.gate.drained
	if !first {
		<-a.released
		return ErrClosed
	}
	err := a.eng.Close()
	releaseEngine(a.eng)
	close(a.released)
	return err
}

// check is a quick test, before a call does any work: ErrClosed once
// Close has begun, or ctx's error. Calls that touch the engine enter the
// gate (a.enter) instead.
func (a *Account) check(ctx context.Context) error { return a.interrupted(ctx) }

// Engine returns the account's storage engine, for tools and benchmarks.
// Writing to it directly bypasses every rule of the data model.
func (a *Account) Engine() storage.Engine { return a.eng }

// Table returns a handle to the named table. It does no I/O and does not
// check that the table exists: operations on a missing table fail with
// ErrTableNotFound. Table names are case-insensitive.
func (a *Account) Table(name string) *Table { return &Table{a: a, name: name} }

// GetTable returns a handle to an existing table, named as it was created,
// or ErrTableNotFound.
func (a *Account) GetTable(ctx context.Context, name string) (*Table, error) {
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	lt, err := a.lookup(name)
	if err != nil {
		return nil, err
	}
	return &Table{a: a, name: lt.name}, nil
}

// CreateTable creates a table. The name must match
// ^[A-Za-z][A-Za-z0-9]{2,62}$ and not be reserved; it is stored as given
// and looked up case-insensitively, so creating "Orders" when "orders"
// exists fails with ErrTableExists.
func (a *Account) CreateTable(ctx context.Context, name string) (*Table, error) {
	t, created, err := a.createTable(ctx, name)
	if err == nil && !created {
		err = newError(ErrTableExists, "table %q already exists (as %q)", name, t.name)
		t = nil
	}
	return t, err
}

// CreateTableIfNotExists creates a table unless one of that name (in any
// case) exists, and returns a handle to it either way.
func (a *Account) CreateTableIfNotExists(ctx context.Context, name string) (*Table, error) {
	t, _, err := a.createTable(ctx, name)
	return t, err
}

func (a *Account) createTable(ctx context.Context, name string) (*Table, bool, error) {
	if err := ValidateTableName(name); err != nil {
		return nil, false, err
	}
	if err := a.enter(ctx); err != nil {
		return nil, false, err
	}
	defer a.exit()
	lower := strings.ToLower(name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	cat := a.cat.Load()
	if lt := cat.byName[lower]; lt != nil {
		return &Table{a: a, name: lt.name}, false, nil
	}
	rec := &tableRecord{ID: a.nextID, Name: name}
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Set(keyenc.CatalogKey(lower), rec.append(nil)); err != nil {
		return nil, false, err
	}
	if err := b.Set(metaNextID, encodeTicks(int64(rec.ID+1))); err != nil {
		return nil, false, err
	}
	if h := a.beforeCatalogCommit; h != nil {
		h("create", name)
	}
	if err := b.Commit(true); err != nil {
		return nil, false, err
	}
	a.nextID++
	// Published after the commit: until then, writes into the table fail
	// with ErrTableNotFound, as the table does not exist yet.
	a.cat.Store(cat.with(lower, newLiveTable(rec)))
	return &Table{a: a, name: name}, true, nil
}

// DeleteTable deletes a table and all its entities. The entities are
// removed with one range deletion, not read one by one, so deleting a large
// table is cheap. A missing table is ErrTableNotFound (service code
// ResourceNotFound). It waits for the writes in flight into the table;
// the calls on other tables go on meanwhile.
func (a *Account) DeleteTable(ctx context.Context, name string) error {
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	lower := strings.ToLower(name)
	a.ddl.Lock()
	defer a.ddl.Unlock()
	cat := a.cat.Load()
	lt := cat.byName[lower]
	if lt == nil {
		return withCode(ErrTableNotFound, CodeResourceNotFound, http.StatusNotFound, "table %q does not exist", name)
	}
	prefix := keyenc.AppendTableID(nil, lt.id)
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Delete(keyenc.CatalogKey(lower)); err != nil {
		return err
	}
	if err := b.DeleteRange(prefix, keyenc.PrefixEnd(prefix)); err != nil {
		return err
	}
	// Wait for the writes into the table, and refuse the next ones.
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.dropped.Store(true)
	if h := a.beforeCatalogCommit; h != nil {
		h("delete", name)
	}
	if err := b.Commit(true); err != nil {
		lt.dropped.Store(false)
		return err
	}
	if h := a.beforeCatalogCommit; h != nil {
		h("delete-committed", name)
	}
	a.cat.Store(cat.without(lower))
	return nil
}

// TableInfo describes a table in a listing.
type TableInfo struct {
	Name string // as created
}

// ListTablesOptions select and page a table listing.
type ListTablesOptions struct {
	// Filter selects tables; it sees each table as an entity with one
	// String property, TableName. nil lists every table.
	Filter Predicate
	// Top is the page size: 1 to 1000, 0 meaning 1000.
	Top int
	// NextTableName resumes a listing where a previous page ended.
	NextTableName string
}

// TablesPage is one page of a table listing.
type TablesPage struct {
	Tables []TableInfo
	// NextTableName, when not empty, is where the next page starts: pass it
	// in ListTablesOptions.NextTableName.
	NextTableName string
}

// MaxPageSize is the most entities or tables one page holds.
const MaxPageSize = 1000

func pageSize(top int) (int, error) {
	switch {
	case top == 0:
		return MaxPageSize, nil
	case top < 0 || top > MaxPageSize:
		return 0, newError(ErrInvalidInput, "$top is %d; it must be 1 to %d", top, MaxPageSize)
	}
	return top, nil
}

// ListTables returns one page of tables, sorted by name (case-insensitive,
// as the names are unique), each named as created.
func (a *Account) ListTables(ctx context.Context, opts ListTablesOptions) (TablesPage, error) {
	var page TablesPage
	top, err := pageSize(opts.Top)
	if err != nil {
		return page, err
	}
	if err := predicateErr(opts.Filter); err != nil {
		return page, err
	}
	if err := a.enter(ctx); err != nil {
		return page, err
	}
	defer a.exit()
	cat := a.cat.Load()
	i := 0
	if opts.NextTableName != "" {
		i, _ = slices.BinarySearch(cat.sorted, strings.ToLower(opts.NextTableName))
	}
	probe := Entity{Properties: Properties{}}
	for ; i < len(cat.sorted); i++ {
		lt := cat.byName[cat.sorted[i]]
		if len(page.Tables) == top {
			page.NextTableName = lt.name
			break
		}
		if opts.Filter != nil {
			probe.Properties["TableName"] = StringValue(lt.name)
			if !opts.Filter.Match(&probe) {
				continue
			}
		}
		page.Tables = append(page.Tables, TableInfo{Name: lt.name})
	}
	return page, nil
}

// Tables returns an iterator over every table that opts select, walking all
// pages. It stops at the first error, which it yields.
func (a *Account) Tables(ctx context.Context, opts ListTablesOptions) iter.Seq2[TableInfo, error] {
	return func(yield func(TableInfo, error) bool) {
		for {
			page, err := a.ListTables(ctx, opts)
			if err != nil {
				yield(TableInfo{}, err)
				return
			}
			for _, t := range page.Tables {
				if !yield(t, nil) {
					return
				}
			}
			if page.NextTableName == "" {
				return
			}
			opts.NextTableName = page.NextTableName
		}
	}
}

// partition returns the lock of a table's partition.
func (a *Account) partition(id uint64, pk string) *sync.Mutex {
	h := maphash.String(a.seed, pk) ^ (id * 0x9E3779B97F4A7C15)
	return &a.parts[h%uint64(len(a.parts))]
}

// GetAccessPolicy returns the table's stored access policies.
func (t *Table) GetAccessPolicy(ctx context.Context) ([]AccessPolicy, error) {
	if err := t.a.enter(ctx); err != nil {
		return nil, err
	}
	defer t.a.exit()
	lt, err := t.a.lookup(t.name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(*lt.policies.Load()), nil
}

// SetAccessPolicy replaces the table's stored access policies (at most 5).
func (t *Table) SetAccessPolicy(ctx context.Context, policies []AccessPolicy) error {
	if err := validatePolicies(policies); err != nil {
		return err
	}
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	a.ddl.Lock()
	defer a.ddl.Unlock()
	lt, err := a.lookup(t.name)
	if err != nil {
		return err
	}
	next := lt.record()
	next.Policies = append([]AccessPolicy(nil), policies...)
	for i := range next.Policies {
		p := &next.Policies[i]
		p.Start, p.Expiry = truncPolicyTime(p.Start), truncPolicyTime(p.Expiry)
	}
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Set(keyenc.CatalogKey(strings.ToLower(lt.name)), next.append(nil)); err != nil {
		return err
	}
	if err := b.Commit(true); err != nil {
		return err
	}
	lt.policies.Store(&next.Policies)
	return nil
}

func truncPolicyTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
