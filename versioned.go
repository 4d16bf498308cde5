package localtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The versioned strategy: shared engines.
//
// On an engine that implements storage.VersionedEngine (etcd), several
// Accounts, in several processes, may serve one store at once. In-process
// locks then guarantee nothing, so every write reads the Versions of what
// it depends on and commits on condition that none of them changed
// (VersionedEngine.CommitIf), re-run from its read when another writer
// got there first:
//
//   - an entity write reads its entities and its table's catalog record in
//     one request (storage.GetVersions): two processes' updates of one
//     ETag cannot both apply, and a write into a table deleted (or
//     deleted and re-created) elsewhere fails instead of landing under a
//     dead table ID;
//   - its Timestamp is above those of the entities it replaces, whichever
//     process's clock stamped them (the plan's floor), so each entity's
//     ETags strictly increase and an old ETag never matches again;
//   - table IDs come from a counter raised by compare-and-swap, and a
//     table is created on condition that its name is free;
//   - the clock's high-water mark is only ever raised;
//   - the in-memory catalog is a cache: a table it lacks is looked up in
//     the engine, point reads and queries check that their table still
//     is the one the cache names, and table listings read the engine.
//
// The in-process locks stay: the partition lock spares conflicts between
// goroutines of one process, and the table lock lets DeleteTable wait for
// this process's writes.
type versioned struct {
	a     *Account
	ve    storage.VersionedEngine
	token uint64 // this account's nonce for the clock's mark

	followOnce sync.Once   // starts notify
	followed   atomic.Bool // the engine's notifications are in place
}

func newVersioned(a *Account, ve storage.VersionedEngine) *versioned {
	return &versioned{a: a, ve: ve, token: rand.Uint64() | 1} // never 0, the nonce of a mark without one
}

// maxConflictRetries bounds the attempts of one write on a shared engine
// that keeps losing races to other writers: after as many, it fails with
// ErrServerBusy. The clock's mark, which every writer raises, gets ten
// times as many.
const maxConflictRetries = 10

// Backoff between attempts: exponential from backoffBase, at most
// backoffMax, each wait drawn at random from half to all of it, so that
// writers that collided do not collide again in step.
const (
	backoffBase = 200 * time.Microsecond
	backoffMax  = 50 * time.Millisecond
)

func errBusy(what string, attempts int) error {
	return newError(ErrServerBusy, "%s lost the race to other writers %d times; nothing was applied, retry", what, attempts)
}

func (s *versioned) nonce() uint64 { return s.token }

// feedPoll is how often a watcher on a shared engine looks for the
// commits of other processes when the engine cannot tell it of them (it
// is no storage.ChangeNotifier, or its notifications are not in place).
// A variable for tests (SetFeedPoll): its nanoseconds.
var feedPollNS atomic.Int64

func init() { feedPollNS.Store(int64(50 * time.Millisecond)) }

func feedPoll() time.Duration { return time.Duration(feedPollNS.Load()) }

// The wait before setting up the engine's notifications again after one
// was lost, doubled after each failed attempt up to followRetryMax.
const (
	followRetryMin = 50 * time.Millisecond
	followRetryMax = 5 * time.Second
)

func (s *versioned) follow(prefix []byte, wake func(), stop <-chan struct{}) time.Duration {
	cn, ok := s.ve.(storage.ChangeNotifier)
	if !ok {
		return feedPoll()
	}
	s.followOnce.Do(func() { go s.notify(cn, prefix, wake, stop) })
	if s.followed.Load() {
		return 0
	}
	return feedPoll()
}

// notify keeps the engine's notifications of the commits under prefix in
// place until stop is closed, and wakes the waiters after each. Whenever
// they are not in place (before the first is, after one is lost, while
// the engine cannot set them up) the waiters poll; each change of state
// wakes them, so that a commit made while it changed is read.
func (s *versioned) notify(cn storage.ChangeNotifier, prefix []byte, wake func(), stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	pause := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	retry := followRetryMin
	for {
		ch, err := cn.NotifyChanges(ctx, prefix)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, storage.ErrClosed) || !pause(retry) {
				return
			}
			retry = min(2*retry, followRetryMax)
			continue
		}
		retry = followRetryMin
		s.followed.Store(true)
		wake() // a commit made before the watch was in place is read now
		for range ch {
			wake()
		}
		s.followed.Store(false)
		wake() // the watch is lost: read again, and poll until it is back
		if !pause(followRetryMin) {
			return
		}
	}
}

func (s *versioned) alone() bool { return false }

// exclusive serializes this process's commits whose contributors read
// (the feed's revision): they would only conflict with one another and
// re-run. Other processes' are kept apart by the commits' conditions.
func (s *versioned) exclusive() func() {
	s.a.contribMu.Lock()
	return s.a.unlockContrib
}

func (s *versioned) sync() error { return nil } // its commits are durable

func (s *versioned) run(ctx context.Context, what string, budget int, w attempter) error {
	wait := backoffBase
	for n := 1; ; n++ {
		err := w.attempt(ctx)
		if !errors.Is(err, errConflict) {
			return err
		}
		if n >= budget {
			return errBusy(what, budget)
		}
		d := wait/2 + rand.N(wait/2+1)
		wait = min(2*wait, backoffMax)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *versioned) read(ctx context.Context, rs *readSet, guard *liveTable, keys [][]byte) error {
	all := keys
	if guard != nil {
		// The guard is a condition of the commit, not a key of the write:
		// it goes last, so that rs's first keys are keys'.
		all = append(keys[:len(keys):len(keys)], guard.key)
	}
	vals, vers, c, err := storage.GetVersions(ctx, s.ve, all)
	if err != nil {
		return err
	}
	rs.closers = append(rs.closers, c)
	if guard != nil {
		last := len(all) - 1
		if id, ok := tableRecordID(vals[last]); vers[last] == storage.NoVersion || !ok || id != guard.id {
			s.a.forget(strings.ToLower(guard.name), guard)
			return errConflict
		}
		// Another process changed the table's record since the cache
		// read it: if its indexes or its expiry policy differ, the write
		// must maintain the indexes and apply the policy the record
		// declares, so the cache learns them and the attempt runs again.
		if cached := guard.rec.Load(); !bytes.Equal(vals[last], *cached) {
			rec, err := decodeTableRecord(vals[last])
			if err != nil {
				return err
			}
			old, oldExpiry := *guard.indexes.Load(), *guard.expiry.Load()
			s.a.adopt(strings.ToLower(guard.name), &rec)
			if !sameIndexes(old, rec.Indexes) || oldExpiry != rec.Expiry {
				return errConflict
			}
		}
	}
	for i, k := range all {
		rs.add(k, vals[i], vers[i] != storage.NoVersion, vers[i])
	}
	return nil
}

func (s *versioned) commit(ctx context.Context, rs *readSet, ws []write) error {
	b := s.a.eng.NewBatch()
	defer b.Close()
	if err := applyWrites(b, ws, &rs.nested); err != nil {
		return err
	}
	conds := make([]storage.Condition, len(rs.keys))
	for i, k := range rs.keys {
		conds[i] = storage.Condition{Key: k, Version: rs.vers[i]}
	}
	err := s.ve.CommitIf(ctx, b, conds)
	if errors.Is(err, storage.ErrConditionFailed) {
		return errConflict
	}
	return err
}

func (s *versioned) lookup(ctx context.Context, name string) (*liveTable, error) {
	if t := s.a.cat.Load().byName[strings.ToLower(name)]; t != nil {
		return t, nil
	}
	return s.current(ctx, name)
}

// current reads the table of a name from the engine and updates the
// cache with it.
func (s *versioned) current(ctx context.Context, name string) (*liveTable, error) {
	lower := strings.ToLower(name)
	rec, err := s.readTableRecord(ctx, keyenc.CatalogKey(lower))
	if err != nil {
		return nil, err
	}
	if rec == nil {
		s.a.forget(lower, nil)
		return nil, newError(ErrTableNotFound, "table %q does not exist", name)
	}
	return s.a.adopt(lower, rec), nil
}

// readTableRecord reads a table's catalog record from the engine: nil
// when the table does not exist.
func (s *versioned) readTableRecord(ctx context.Context, key []byte) (*tableRecord, error) {
	v, c, err := storage.GetContext(ctx, s.ve, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rec, err := decodeTableRecord(v)
	if err != nil {
		return nil, fmt.Errorf("%w (key %q)", err, key)
	}
	return &rec, nil
}

// tables replaces the cached catalog with the engine's, keeping the
// tables whose IDs did not change, and returns it.
func (s *versioned) tables(ctx context.Context) (*catalog, error) {
	it, err := storage.NewIterContext(ctx, s.ve, catalogBounds)
	if err != nil {
		return nil, err
	}
	lowers, recs, err := scanCatalog(it)
	if err != nil {
		return nil, err
	}
	a := s.a
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	old := a.cat.Load()
	cat := &catalog{byName: make(map[string]*liveTable, len(lowers)), sorted: lowers}
	for i, lower := range lowers {
		lt := old.byName[lower]
		if lt != nil && lt.id == recs[i].ID {
			lt.set(&recs[i])
		} else {
			lt = newLiveTable(&recs[i])
		}
		cat.byName[lower] = lt
	}
	a.cat.Store(cat)
	return cat, nil
}

// getEntity reads an entity of lt's table. An entity not found may be one
// of a table that another process deleted, or deleted and re-created: the
// catalog record says, and the read is made again in the table of that
// name, which getEntity returns with the record.
func (s *versioned) getEntity(ctx context.Context, lt *liveTable, pk, rk string, kb *[]byte) (*liveTable, []byte, io.Closer, error) {
	for {
		*kb = keyenc.AppendEntityKey((*kb)[:0], lt.id, pk, rk)
		val, c, err := storage.GetContext(ctx, s.ve, *kb)
		if !errors.Is(err, storage.ErrNotFound) {
			return lt, val, c, err
		}
		cur, ferr := s.current(ctx, lt.name)
		if ferr != nil {
			return lt, nil, nil, ferr
		}
		if cur.id <= lt.id {
			return lt, nil, nil, err // the table is the one read: the entity does not exist
		}
		lt = cur
	}
}

// snapshotTable checks that snap shows lt as the table of its name, and
// returns the table it shows.
func (s *versioned) snapshotTable(ctx context.Context, lt *liveTable, snap storage.Snapshot) (*liveTable, error) {
	v, c, err := storage.GetContext(ctx, snap, lt.key)
	if errors.Is(err, storage.ErrNotFound) {
		s.a.forget(strings.ToLower(lt.name), lt)
		return nil, errDropped(lt.name)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if id, ok := tableRecordID(v); ok && id == lt.id && bytes.Equal(v, *lt.rec.Load()) {
		return lt, nil
	}
	rec, err := decodeTableRecord(v)
	if err != nil {
		return nil, err
	}
	s.a.adopt(strings.ToLower(lt.name), &rec)
	// The snapshot's own view of the table (its indexes among it), which
	// the cache may already have moved past.
	return newLiveTable(&rec), nil
}

// tableRecordID returns the table ID of an encoded catalog record.
func tableRecordID(b []byte) (uint64, bool) {
	if len(b) < 9 || !knownTableRecord(b[0]) {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[1:9]), true
}
