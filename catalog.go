package localtable

import (
	"context"
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
	p := rec.Policies
	t.policies.Store(&p)
	return t
}

// record returns the table's catalog record.
func (t *liveTable) record() tableRecord {
	return tableRecord{ID: t.id, Name: t.name, Policies: *t.policies.Load()}
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

// lookup returns the live table of a name, or ErrTableNotFound. On a
// shared engine the catalog is a cache: a table it lacks is looked up in
// the engine (another process may have created it).
func (a *Account) lookup(ctx context.Context, name string) (*liveTable, error) {
	t := a.cat.Load().byName[strings.ToLower(name)]
	if t == nil {
		if a.ve != nil {
			return a.fresh(ctx, name)
		}
		return nil, newError(ErrTableNotFound, "table %q does not exist", name)
	}
	return t, nil
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
	if a.ve != nil {
		if lt, err = a.checkSnapshotTable(ctx, lt, snap); err != nil {
			snap.Close()
			return nil, nil, err
		}
	}
	return lt, snap, nil
}
