package localtable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// Shared engines.
//
// On an engine that implements storage.VersionedEngine (etcd), several
// Accounts, in several processes, may serve one store at once. In-process
// locks then guarantee nothing, so every check-then-write of the table
// layer becomes a read of versions and a conditional commit
// (VersionedEngine.CommitIf), re-run from its reads when another writer
// got there first:
//
//   - an entity write reads its entities and its table's catalog record in
//     one request (storage.GetVersions), checks existence and If-Match,
//     and commits on condition that none of them changed: two processes'
//     updates of one ETag cannot both apply, and a write into a table
//     deleted (or deleted and re-created) elsewhere fails instead of
//     landing under a dead table ID;
//   - its Timestamp is above those of the entities it replaces, whichever
//     process's clock stamped them, so each entity's ETags strictly
//     increase and an old ETag never matches again;
//   - table IDs come from a counter raised by compare-and-swap, and a
//     table is created on condition that its name is free;
//   - the clock's high-water mark is only ever raised;
//   - the in-memory catalog is a cache: a table it lacks is looked up in
//     the engine, point reads and queries check that their table still
//     is the one the cache names, and table listings read the engine.
//
// The in-process locks stay: the partition lock spares conflicts between
// goroutines of one process, and the table lock lets DeleteTable wait for
// this process's writes. Engines that are not versioned (memory, pebble)
// belong to one Account and keep the paths of the other files.

// maxConflictRetries bounds the attempts of one operation on a shared
// engine that keeps losing races to other writers: after as many, it
// fails with ErrServerBusy.
const maxConflictRetries = 10

// errConflict ends one attempt of an operation on a shared engine that
// must be re-run from its reads: a conditional commit failed, or the
// table's catalog record is not the one the cache holds.
var errConflict = errors.New("localtable: conflict with another writer")

func errBusy(what string) error {
	return newError(ErrServerBusy, "%s lost the race to other writers %d times; nothing was applied, retry", what, maxConflictRetries)
}

// tableRecordID returns the table ID of an encoded catalog record.
func tableRecordID(b []byte) (uint64, bool) {
	if len(b) < 9 || b[0] != recordVersion {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[1:9]), true
}

// applyShared is apply on a shared engine, after the checks that need no
// state: recs and ends are the encoded records of the actions, as apply
// made them.
func (t *Table) applyShared(ctx context.Context, actions []Action, recs []byte, ends []int, fail func(int, error) error) ([]ETag, error) {
	a := t.a
	for attempt := 1; ; attempt++ {
		lt, err := a.lookup(ctx, t.name)
		if err != nil {
			return nil, fail(0, err)
		}
		tags, stale, err := t.tryShared(ctx, lt, actions, recs, ends, fail)
		if stale {
			a.forget(strings.ToLower(lt.name), lt)
		}
		if !errors.Is(err, errConflict) {
			return tags, err
		}
		if attempt == maxConflictRetries {
			return nil, errBusy("the write")
		}
	}
}

// tryShared is one attempt of applyShared on the table lt. It fails with
// errConflict when the attempt must be re-run, and reports stale when lt
// is no longer the table of its name.
func (t *Table) tryShared(ctx context.Context, lt *liveTable, actions []Action, recs []byte, ends []int, fail func(int, error) error) (tags []ETag, stale bool, err error) {
	a := t.a
	lt.mu.RLock()
	defer lt.mu.RUnlock()
	if lt.dropped.Load() { // deleted by this process meanwhile
		return nil, false, fail(0, errDropped(t.name))
	}
	part := a.partition(lt.id, actions[0].Entity.PartitionKey)
	part.Lock()
	defer part.Unlock()

	// One read: the catalog record, then every entity.
	keys := make([][]byte, 1+len(actions))
	keys[0] = lt.key
	size := 0
	for i := range actions {
		size += keyenc.TablePrefixLen + len(actions[i].Entity.PartitionKey) + len(actions[i].Entity.RowKey) + 8
	}
	buf := make([]byte, 0, size)
	for i := range actions {
		e := &actions[i].Entity
		start := len(buf)
		buf = keyenc.AppendEntityKey(buf, lt.id, e.PartitionKey, e.RowKey)
		keys[i+1] = buf[start:len(buf):len(buf)]
	}
	vals, vers, closer, err := storage.GetVersions(ctx, a.ve, keys)
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	if id, ok := tableRecordID(vals[0]); vers[0] == storage.NoVersion || !ok || id != lt.id {
		return nil, true, errConflict
	}

	// Check every action against the state read, and find the largest
	// Timestamp of the entities there.
	floor := int64(-1)
	merged := make([]Properties, len(actions))
	stamp := false
	for i := range actions {
		act := &actions[i]
		e := &act.Entity
		exists := vers[i+1] != storage.NoVersion
		merge := act.Type == ActionUpdateMerge || act.Type == ActionUpsertMerge
		var curTicks int64
		if exists {
			if merge {
				curTicks, merged[i], err = decodeSelected(vals[i+1], selection{})
			} else {
				curTicks, err = recordTicks(vals[i+1])
			}
			if err != nil {
				return nil, false, err
			}
			floor = max(floor, curTicks)
		}
		if err := checkCondition(t.name, act, exists, curTicks); err != nil {
			return nil, false, fail(i, err)
		}
		if act.Type == ActionDelete {
			continue
		}
		stamp = true
		if exists && merge {
			props := merged[i]
			for name, v := range e.Properties {
				if !v.IsNull() {
					props[name] = v
				}
			}
			m := Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: props}
			if err := checkMerged(&m); err != nil {
				return nil, false, fail(i, err)
			}
		} else {
			merged[i] = nil
		}
	}
	var ticks int64
	var tag ETag
	if stamp {
		if ticks, err = a.clock.nextAfter(ctx, floor); err != nil {
			return nil, false, err
		}
		tag = etagOf(ticks) // one Timestamp, so one ETag, per transaction
	}

	b := a.eng.NewBatch()
	defer b.Close()
	conds := make([]storage.Condition, len(keys))
	conds[0] = storage.Condition{Key: keys[0], Version: vers[0]}
	tags = make([]ETag, len(actions))
	var val, mval []byte
	for i := range actions {
		act := &actions[i]
		key := keys[i+1]
		conds[i+1] = storage.Condition{Key: key, Version: vers[i+1]}
		if act.Type == ActionDelete {
			if err := b.Delete(key); err != nil {
				return nil, false, err
			}
			continue
		}
		if merged[i] != nil {
			// A merge has a buffer of its own: val may alias recs, which
			// holds the other actions' records (written again on a retry).
			mval = appendRecord(mval[:0], ticks, merged[i])
			val = mval
		} else {
			from := 0
			if i > 0 {
				from = ends[i-1]
			}
			val = recs[from:ends[i]]
			setRecordTicks(val, ticks)
		}
		if err := b.Set(key, val); err != nil {
			return nil, false, err
		}
		tags[i] = tag
	}
	if h := a.beforeCommit; h != nil {
		h(t.name, actions)
	}
	err = a.ve.CommitIf(ctx, b, conds)
	if errors.Is(err, storage.ErrConditionFailed) {
		return nil, false, errConflict
	}
	if err != nil {
		return nil, false, err
	}
	return tags, false, nil
}

// readCatalogKey reads a table's catalog record from the engine: nil and
// NoVersion when the table does not exist.
func (a *Account) readCatalogKey(ctx context.Context, key []byte) (*tableRecord, storage.Version, error) {
	v, ver, c, err := a.ve.GetVersion(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, storage.NoVersion, nil
	}
	if err != nil {
		return nil, storage.NoVersion, err
	}
	defer c.Close()
	rec, err := decodeTableRecord(v)
	if err != nil {
		return nil, storage.NoVersion, fmt.Errorf("%w (key %q)", err, key)
	}
	return &rec, ver, nil
}

// fresh returns the table of a name as the engine has it now, and updates
// the cache with it.
func (a *Account) fresh(ctx context.Context, name string) (*liveTable, error) {
	lower := strings.ToLower(name)
	rec, _, err := a.readCatalogKey(ctx, keyenc.CatalogKey(lower))
	if err != nil {
		return nil, err
	}
	if rec == nil {
		a.forget(lower, nil)
		return nil, newError(ErrTableNotFound, "table %q does not exist", name)
	}
	return a.adopt(lower, rec), nil
}

// The cache may fall behind the engine, or even, when two of its updates
// race, step back: each use of a cached table checks it (entity writes by
// their catalog-key condition, point reads and queries by reading the
// catalog record with the data, the other calls by reading the record
// first), and a table found stale is forgotten and looked up again. Its
// updates are serialized by a.cacheMu, held for no I/O.

// adopt makes the cache hold the table of rec under lower and returns
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
			p := rec.Policies
			cur.policies.Store(&p)
			return cur
		case cur.id > rec.ID:
			return cur
		}
	}
	lt := newLiveTable(rec)
	a.cat.Store(cat.with(lower, lt))
	return lt
}

// forget removes the table named lower from the cache, if it is lt (any
// table, when lt is nil): it no longer exists as the cache has it (it was
// deleted, or deleted and re-created, by another process). Only
// DeleteTable marks a table dropped: that flag tells the calls in flight
// that the table was deleted while they ran, which a table found stale
// may not have been.
func (a *Account) forget(lower string, lt *liveTable) {
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	cat := a.cat.Load()
	if cur := cat.byName[lower]; cur != nil && (lt == nil || cur == lt) {
		a.cat.Store(cat.without(lower))
	}
}

// syncCatalog replaces the cached catalog with the engine's, keeping the
// tables whose IDs did not change, and returns it.
func (a *Account) syncCatalog(ctx context.Context) (*catalog, error) {
	it, err := storage.NewIterContext(ctx, a.eng, &storage.IterOptions{
		LowerBound: []byte{keyenc.PrefixCatalog},
		UpperBound: []byte{keyenc.PrefixCatalog + 1},
	})
	if err != nil {
		return nil, err
	}
	var lowers []string // in key order
	var recs []tableRecord
	for it.First(); it.Valid(); it.Next() {
		rec, err := decodeTableRecord(it.Value())
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("%w (key %q)", err, it.Key())
		}
		lowers, recs = append(lowers, string(it.Key()[1:])), append(recs, rec)
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	old := a.cat.Load()
	cat := &catalog{byName: make(map[string]*liveTable, len(lowers)), sorted: lowers}
	for i, lower := range lowers {
		lt := old.byName[lower]
		if lt != nil && lt.id == recs[i].ID {
			p := recs[i].Policies
			lt.policies.Store(&p)
		} else {
			lt = newLiveTable(&recs[i])
		}
		cat.byName[lower] = lt
	}
	a.cat.Store(cat)
	return cat, nil
}

// readEntity reads the record of (pk, rk) in lt's table. On a shared
// engine an entity not found may be one of a table that another process
// deleted, or deleted and re-created: the catalog record says, and the
// read is made again in the table of that name, which readEntity returns
// with the record. The record is valid until the closer is closed.
func (a *Account) readEntity(ctx context.Context, lt *liveTable, pk, rk string) (*liveTable, []byte, io.Closer, error) {
	kb := keyBufs.Get().(*[]byte)
	defer putKeyBuf(kb) // engines do not keep the keys they are given
	for {
		*kb = keyenc.AppendEntityKey((*kb)[:0], lt.id, pk, rk)
		key := *kb
		if a.ve == nil {
			val, c, err := a.eng.Get(key)
			return lt, val, c, err
		}
		val, c, err := storage.GetContext(ctx, a.eng, key)
		if !errors.Is(err, storage.ErrNotFound) {
			return lt, val, c, err
		}
		cur, ferr := a.fresh(ctx, lt.name)
		if ferr != nil {
			return lt, nil, nil, ferr
		}
		if cur.id <= lt.id {
			return lt, nil, nil, err // the table is the one read: the entity does not exist
		}
		lt = cur
	}
}

// checkSnapshotTable checks, on a shared engine, that snap shows lt as the
// table of its name, and returns the table it shows.
func (a *Account) checkSnapshotTable(ctx context.Context, lt *liveTable, snap storage.Snapshot) (*liveTable, error) {
	v, c, err := storage.GetContext(ctx, snap, lt.key)
	if errors.Is(err, storage.ErrNotFound) {
		a.forget(strings.ToLower(lt.name), lt)
		return nil, errDropped(lt.name)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if id, ok := tableRecordID(v); ok && id == lt.id {
		return lt, nil
	}
	rec, err := decodeTableRecord(v)
	if err != nil {
		return nil, err
	}
	cur := a.adopt(strings.ToLower(lt.name), &rec)
	if cur.id != rec.ID { // the cache knows a newer table than the snapshot
		return newLiveTable(&rec), nil
	}
	return cur, nil
}

// createShared is createTable on a shared engine: the table's ID comes
// from the counter by compare-and-swap, and the table is created on
// condition that its name is free. a.ddl must be held.
func (a *Account) createShared(ctx context.Context, name, lower string) (*Table, bool, error) {
	key := keyenc.CatalogKey(lower)
	for attempt := 1; attempt <= maxConflictRetries; attempt++ {
		vals, vers, c, err := storage.GetVersions(ctx, a.ve, [][]byte{key, metaNextID})
		if err != nil {
			return nil, false, err
		}
		if vers[0] != storage.NoVersion {
			rec, err := decodeTableRecord(vals[0])
			c.Close()
			if err != nil {
				return nil, false, fmt.Errorf("%w (key %q)", err, key)
			}
			return &Table{a: a, name: a.adopt(lower, &rec).name}, false, nil
		}
		next := a.nextID
		if vers[1] != storage.NoVersion {
			n, ok := decodeTicks(vals[1])
			if !ok {
				c.Close()
				return nil, false, fmt.Errorf("localtable: corrupt metadata %q", metaNextID)
			}
			next = max(next, uint64(n))
		}
		c.Close()
		rec := &tableRecord{ID: next, Name: name}
		b := a.eng.NewBatch()
		if err := b.Set(key, rec.append(nil)); err != nil {
			b.Close()
			return nil, false, err
		}
		if err := b.Set(metaNextID, encodeTicks(int64(next+1))); err != nil {
			b.Close()
			return nil, false, err
		}
		if h := a.beforeCatalogCommit; h != nil {
			h("create", name)
		}
		err = a.ve.CommitIf(ctx, b, []storage.Condition{{Key: key, Version: storage.NoVersion}, {Key: metaNextID, Version: vers[1]}})
		b.Close()
		if errors.Is(err, storage.ErrConditionFailed) {
			continue // the name was taken, or the counter moved: read again
		}
		if err != nil {
			return nil, false, err
		}
		a.nextID = next + 1
		a.adopt(lower, rec)
		return &Table{a: a, name: name}, true, nil
	}
	return nil, false, errBusy("creating table " + name)
}

// deleteShared is DeleteTable on a shared engine: it deletes the table
// the engine has under the name, on condition that it is still that one.
// a.ddl must be held.
func (a *Account) deleteShared(ctx context.Context, name, lower string) error {
	key := keyenc.CatalogKey(lower)
	for attempt := 1; attempt <= maxConflictRetries; attempt++ {
		rec, ver, err := a.readCatalogKey(ctx, key)
		if err != nil {
			return err
		}
		if rec == nil {
			a.forget(lower, nil)
			return errNoTable(name)
		}
		prefix := keyenc.AppendTableID(nil, rec.ID)
		b := a.eng.NewBatch()
		if err := b.Delete(key); err != nil {
			b.Close()
			return err
		}
		if err := b.DeleteRange(prefix, keyenc.PrefixEnd(prefix)); err != nil {
			b.Close()
			return err
		}
		// This process's writes into the table finish first, and the
		// next ones find it dropped.
		lt := a.cat.Load().byName[lower]
		if lt != nil && lt.id == rec.ID {
			lt.mu.Lock()
			lt.dropped.Store(true)
		} else {
			lt = nil
		}
		if h := a.beforeCatalogCommit; h != nil {
			h("delete", name)
		}
		err = a.ve.CommitIf(ctx, b, []storage.Condition{{Key: key, Version: ver}})
		b.Close()
		if err != nil {
			if lt != nil {
				lt.dropped.Store(false)
				lt.mu.Unlock()
			}
			if errors.Is(err, storage.ErrConditionFailed) {
				continue
			}
			return err
		}
		if h := a.beforeCatalogCommit; h != nil {
			h("delete-committed", name)
		}
		a.forget(lower, nil)
		if lt != nil {
			lt.mu.Unlock()
		}
		return nil
	}
	return errBusy("deleting table " + name)
}

// setPoliciesShared is SetAccessPolicy on a shared engine: it rewrites
// the catalog record the engine has, on condition that it is unchanged.
// a.ddl must be held.
func (a *Account) setPoliciesShared(ctx context.Context, name string, policies []AccessPolicy) error {
	lower := strings.ToLower(name)
	key := keyenc.CatalogKey(lower)
	for attempt := 1; attempt <= maxConflictRetries; attempt++ {
		rec, ver, err := a.readCatalogKey(ctx, key)
		if err != nil {
			return err
		}
		if rec == nil {
			a.forget(lower, nil)
			return newError(ErrTableNotFound, "table %q does not exist", name)
		}
		rec.Policies = policies
		err = a.setIf(ctx, key, rec.append(nil), ver)
		if errors.Is(err, storage.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return err
		}
		a.adopt(lower, rec)
		return nil
	}
	return errBusy("setting the access policies of table " + name)
}

// raiseClockMark makes the clock's high-water mark on a shared engine
// cover mark, by compare-and-swap, so that no process lowers a mark that
// another raised.
//
// Every process that reserves ticks writes the mark, even when the
// stored one already covers its reservation (it then writes the stored
// mark plus one tick): so the last writer knows that no reservation came
// after its own. It remembers the Version of its write and the mark it
// replaced, which covered every reservation before its own, for
// lowerClockMark.
func (a *Account) raiseClockMark(ctx context.Context, mark int64) error {
	for attempt := 1; attempt <= 10*maxConflictRetries; attempt++ {
		v, ver, c, err := a.ve.GetVersion(ctx, metaClock)
		var stored int64
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		default:
			var ok bool
			stored, _, ok = decodeMark(v)
			c.Close()
			if !ok {
				return fmt.Errorf("localtable: corrupt metadata %q", metaClock)
			}
		}
		write := mark
		if stored >= mark {
			if stored >= maxTicks {
				a.clockVer = storage.NoVersion
				return nil // the last tick there is: nothing to write
			}
			write = stored + 1
		}
		err = a.setIf(ctx, metaClock, encodeMark(write, a.clockNonce), ver)
		if errors.Is(err, storage.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return err
		}
		// The Version of the write, if the mark is still the one this
		// Account wrote: its value and nonce. (The value alone does not
		// say it: another process's Close may have lowered the mark back
		// to write since.)
		a.clockVer, a.clockPrev = storage.NoVersion, stored
		if v, ver, c, err := a.ve.GetVersion(ctx, metaClock); err == nil {
			if t, n, ok := decodeMark(v); ok && t == write && n == a.clockNonce {
				a.clockVer = ver
			}
			c.Close()
		}
		return nil
	}
	return errBusy("raising the clock's mark")
}

// lowerClockMark lowers the clock's mark on a shared engine for a clean
// Close, if this Account's write is still the last one (compare-and-swap
// on its Version): to last, or to the mark that write replaced if that is
// higher, since other processes may still hand out ticks up to it. A mark
// written since is left as it is: another process reserved ticks under
// it.
func (a *Account) lowerClockMark(ctx context.Context, last int64) error {
	if a.clockVer == storage.NoVersion {
		return errClockMarkMoved
	}
	if err := a.setIf(ctx, metaClock, encodeMark(max(last, a.clockPrev), a.clockNonce), a.clockVer); err != nil {
		if errors.Is(err, storage.ErrConditionFailed) {
			return errClockMarkMoved
		}
		return err
	}
	a.clockVer = storage.NoVersion
	return nil
}

// setIf writes value at key on a shared engine if key is still at
// Version ver (storage.NoVersion: absent); otherwise it returns an error
// wrapping storage.ErrConditionFailed and writes nothing.
func (a *Account) setIf(ctx context.Context, key, value []byte, ver storage.Version) error {
	b := a.eng.NewBatch()
	defer b.Close()
	if err := b.Set(key, value); err != nil {
		return err
	}
	return a.ve.CommitIf(ctx, b, []storage.Condition{{Key: key, Version: ver}})
}

// errClockMarkMoved says that the clock's mark on a shared engine is no
// longer the one this Account wrote, so it was left alone.
var errClockMarkMoved = errors.New("localtable: the clock's mark moved")
