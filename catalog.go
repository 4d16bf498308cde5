package localtable

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The table catalog is copy-on-write: an immutable catalog, published
// through an atomic pointer, that readers and writers load without a
// lock. Creating and deleting a table (serialized among themselves by
// Account.ddl) commits the change to the engine, with its fsync, and then
// publishes a new catalog; no lock over the account is held meanwhile.
//
// A write must not commit into a table that a delete has removed. Each
// table has its own lock: entity writes hold it shared from the moment they
// find the table until they commit, and DeleteTable holds it exclusively,
// so that a delete waits for the writes in flight into its table, and only
// into its table, and the writes that follow find the table dropped.

// liveTable is a table of the catalog, shared by every catalog that
// holds it.
type liveTable struct {
	id   uint64
	name string // as created
	key  []byte // its catalog key

	policies atomic.Pointer[[]AccessPolicy] // stored access policies
	// indexes are the table's declared indexes (index.go), as its
	// catalog record holds them; rec is that record, encoded: on a shared
	// engine a write or a query that reads another record knows the cache
	// is stale.
	indexes atomic.Pointer[[]indexDef]
	rec     atomic.Pointer[[]byte]
	// expiry is the property of the table's expiry policy (expiry.go);
	// "": none.
	expiry atomic.Pointer[string]
	// minKeys is a lower bound on the number of the table's entities,
	// which the planner learns by counting them (planIndex) and the index
	// maintainer lowers at each deletion: a plan that needs to know the
	// table holds more need not count them again. (On a shared engine
	// other processes' deletions do not lower it: the plan, not the
	// answer, may then be another.)
	minKeys atomic.Int64

	// mu is held shared by entity writes into the table, from lookup to
	// commit, and exclusively by DeleteTable.
	mu sync.RWMutex
	// dropped is set (with mu held exclusively) by DeleteTable before it
	// commits, and cleared if the commit fails. Writes check it under mu;
	// reads check it after reading, so that a read that may have seen the
	// table's entities range-deleted reports the table missing.
	dropped atomic.Bool
}

func newLiveTable(rec *tableRecord) *liveTable {
	t := &liveTable{id: rec.ID, name: rec.Name, key: keyenc.CatalogKey(strings.ToLower(rec.Name))}
	t.set(rec)
	return t
}

// set makes t hold what rec says of it: its policies, indexes and expiry
// policy.
func (t *liveTable) set(rec *tableRecord) {
	p, x, e, b := rec.Policies, rec.Indexes, rec.Expiry, rec.append(nil)
	t.policies.Store(&p)
	if len(x) == 0 {
		t.minKeys.Store(0) // no index maintainer lowers it now
	}
	t.indexes.Store(&x)
	t.expiry.Store(&e)
	t.rec.Store(&b)
}

// catalog is a set of tables. Once published it is never modified.
type catalog struct {
	byName map[string]*liveTable // by lower-cased name
	sorted []string              // the lower-cased names, in order
}

// with returns a copy of c with t added under lower.
func (c *catalog) with(lower string, t *liveTable) *catalog {
	n := &catalog{byName: make(map[string]*liveTable, len(c.byName)+1)}
	for k, v := range c.byName {
		n.byName[k] = v
	}
	n.byName[lower] = t
	i, _ := slices.BinarySearch(c.sorted, lower)
	n.sorted = slices.Insert(slices.Clone(c.sorted), i, lower)
	return n
}

// without returns a copy of c without the table named lower.
func (c *catalog) without(lower string) *catalog {
	n := &catalog{byName: make(map[string]*liveTable, len(c.byName))}
	for k, v := range c.byName {
		if k != lower {
			n.byName[k] = v
		}
	}
	n.sorted = slices.DeleteFunc(slices.Clone(c.sorted), func(s string) bool { return s == lower })
	return n
}

// lookup returns the live table of a name, or ErrTableNotFound (see
// strategy.lookup).
func (a *Account) lookup(ctx context.Context, name string) (*liveTable, error) {
	return a.strategy.lookup(ctx, name)
}

// On a shared engine the catalog is a cache that may fall behind the
// engine, or even, when two of its updates race, step back: each use of a
// cached table checks it (entity writes by their catalog-key condition,
// point reads and queries by reading the catalog record with the data, the
// other calls by reading the record first), and a table found stale is
// forgotten and looked up again. Its updates, adopt and forget, are
// serialized by a.cacheMu, held for no I/O; on an engine the account owns
// they follow its commits.

// adopt makes the catalog hold the table of rec under lower and returns
// it: the cached table if it has rec's ID (with rec's access policies),
// else a new one. A cached table of a higher ID is newer than rec (IDs
// only grow) and stays.
func (a *Account) adopt(lower string, rec *tableRecord) *liveTable {
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	cat := a.cat.Load()
	if cur := cat.byName[lower]; cur != nil {
		switch {
		case cur.id == rec.ID:
			cur.set(rec)
			return cur
		case cur.id > rec.ID:
			return cur
		}
	}
	lt := newLiveTable(rec)
	a.cat.Store(cat.with(lower, lt))
	return lt
}

// forget removes the table named lower from the catalog, if it is lt (any
// table, when lt is nil): it no longer exists as the catalog has it (it was
// deleted, or on a shared engine deleted and re-created by another
// process). Only DeleteTable marks a table dropped: that flag tells the
// calls in flight that the table was deleted while they ran, which a table
// found stale may not have been.
func (a *Account) forget(lower string, lt *liveTable) {
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	cat := a.cat.Load()
	if cur := cat.byName[lower]; cur != nil && (lt == nil || cur == lt) {
		a.cat.Store(cat.without(lower))
	}
}

// catalogBounds are the bounds of the catalog's keys.
var catalogBounds = &storage.IterOptions{
	LowerBound: []byte{keyenc.PrefixCatalog},
	UpperBound: []byte{keyenc.PrefixCatalog + 1},
}

// scanCatalog reads the catalog records it walks, and closes it: each
// table's lower-cased name, in key order, and record.
func scanCatalog(it storage.Iterator) (lowers []string, recs []tableRecord, err error) {
	for it.First(); it.Valid(); it.Next() {
		rec, err := decodeTableRecord(it.Value())
		if err != nil {
			it.Close()
			return nil, nil, fmt.Errorf("%w (key %q)", err, it.Key())
		}
		lowers, recs = append(lowers, string(it.Key()[1:])), append(recs, rec)
	}
	if err := it.Close(); err != nil {
		return nil, nil, err
	}
	return lowers, recs, nil
}

// loadCatalog reads the table catalog and the next table ID from the
// engine.
func (a *Account) loadCatalog() (*catalog, uint64, error) {
	it, err := a.eng.NewIter(catalogBounds)
	if err != nil {
		return nil, 0, err
	}
	lowers, recs, err := scanCatalog(it)
	if err != nil {
		return nil, 0, err
	}
	cat := &catalog{byName: make(map[string]*liveTable, len(lowers)), sorted: lowers}
	nextID := uint64(1)
	for i, lower := range lowers {
		cat.byName[lower] = newLiveTable(&recs[i])
		nextID = max(nextID, recs[i].ID+1)
	}
	if v, ok, err := a.getMeta(metaNextID); err != nil {
		return nil, 0, err
	} else if ok {
		nextID = max(nextID, v)
	}
	return cat, nextID, nil
}

// errDropped is the error of a read that found its table deleted under it.
func errDropped(name string) error {
	return newError(ErrTableNotFound, "table %q does not exist", name)
}

// tableSnapshot returns a table and a snapshot of the engine that shows
// it: a snapshot taken after the table was dropped is ErrTableNotFound.
// On a shared engine the snapshot's catalog record says which table it
// shows.
func (a *Account) tableSnapshot(ctx context.Context, name string) (*liveTable, storage.Snapshot, error) {
	lt, err := a.lookup(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	snap, err := a.eng.NewSnapshot()
	if err != nil {
		return nil, nil, err
	}
	if lt.dropped.Load() {
		snap.Close()
		return nil, nil, errDropped(name)
	}
	if lt, err = a.strategy.snapshotTable(ctx, lt, snap); err != nil {
		snap.Close()
		return nil, nil, err
	}
	return lt, snap, nil
}
