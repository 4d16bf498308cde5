package localtable

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// The expiry sweeper: the background deletion of expired entities (see
// expiry.go).
//
// Each pass reads, for each table with an expiry policy, the entries of
// the index on its expiry property whose value is an Edm.DateTime at or
// before the account's clock, oldest first, and deletes their entities
// through the write pipeline, ExpiryOptions.Batch of one partition per
// commit and up to ExpiryOptions.PassLimit per pass. Each deletion is an
// actionExpire: it deletes the entity only if, when the commit reads it,
// it is still expired with the ETag the pass read, so a write that
// extends an entity's life meanwhile wins, and two sweepers never delete
// one entity twice (the second finds it gone and skips it).
//
// On a shared engine (etcd) the accounts of every process would sweep the
// same entities: one at a time holds the sweeper's lease, a metadata key
// (metaSweeper) holding the holder's nonce and the time, on its clock, it
// holds it until, taken and renewed by a commit conditioned on the key,
// so by compare-and-swap. A pass that finds the lease held by another
// sweeps nothing.

// ExpiryOptions configure an account's expiry sweeper (see
// Table.SetExpiry). The zero value gives the defaults.
type ExpiryOptions struct {
	// Interval is the time between two passes of the sweeper, by the
	// system's clock (the expiry itself is by the account's clock). 0
	// means DefaultExpiryInterval. A negative Interval runs no background
	// sweeper: expired entities stay stored, invisible, until
	// Account.SweepExpired is called. A pass while no table has a
	// policy does nothing, but on a shared engine it reads the catalog
	// (another process may have set one).
	Interval time.Duration
	// Batch is how many entities one commit of a pass deletes, at most
	// (they are of one partition). 0 means 100, the most.
	Batch int
	// PassLimit is how many entities one pass deletes, at most: with
	// Interval, the sweeper's rate. 0 means DefaultExpiryPassLimit.
	PassLimit int
	// OnError, if set, is called with the error of a background pass
	// that failed (the next pass tries again); nil ignores them.
	OnError func(error)
}

// Defaults of ExpiryOptions.
const (
	DefaultExpiryInterval  = time.Second
	DefaultExpiryPassLimit = 1000
)

// sweepLease is how long a pass's lease on a shared engine holds, by the
// holder's clock: a sweeper that stops (its process dies) keeps the
// others out this long.
const sweepLease = 30 * time.Second

// metaSweeper is the key of the sweeper's lease on a shared engine.
var metaSweeper = keyenc.MetaKey("sweeper")

// actionExpire is the sweeper's deletion of an expired entity: only if,
// when its write reads it, it is still expired with the ETag IfMatch, and
// skipped otherwise (see planEntities). Only the sweeper writes it.
const actionExpire ActionType = -1

// sweeper is an account's background sweeper.
type sweeper struct {
	opts   ExpiryOptions
	cancel context.CancelFunc // stops it
	done   chan struct{}      // closed once it stopped
}

// startSweeper starts the account's sweeper, unless opts turn it off.
func (a *Account) startSweeper(opts ExpiryOptions) {
	if opts.Interval == 0 {
		opts.Interval = DefaultExpiryInterval
	}
	a.sweepOpts = opts
	if opts.Interval < 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sweeper{opts: opts, cancel: cancel, done: make(chan struct{})}
	a.sweeper = s
	go func() {
		defer close(s.done)
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				a.releaseSweepLease()
				return
			case <-t.C:
			}
			if _, err := a.SweepExpired(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) && opts.OnError != nil {
				opts.OnError(err)
			}
		}
	}()
}

// stopSweeper stops the sweeper and waits for it: for Close.
func (a *Account) stopSweeper() {
	if s := a.sweeper; s != nil {
		s.cancel()
		<-s.done
	}
}

// SweepExpired runs one pass of the expiry sweeper now and returns how
// many expired entities it deleted: at most ExpiryOptions.PassLimit, the
// oldest first, of every table with an expiry policy. The background
// sweeper calls it every ExpiryOptions.Interval; tests and accounts
// without a background sweeper call it themselves. On a shared engine a
// pass runs only in the account that holds the sweeper's lease, which it
// takes when it is free or lapsed: in another it deletes nothing.
func (a *Account) SweepExpired(ctx context.Context) (int, error) {
	if err := a.enter(ctx); err != nil {
		return 0, err
	}
	defer a.exit()
	cat, err := a.strategy.tables(ctx)
	if err != nil {
		return 0, err
	}
	var expiring []*liveTable
	for _, lower := range cat.sorted {
		if lt := cat.byName[lower]; *lt.expiry.Load() != "" {
			expiring = append(expiring, lt)
		}
	}
	if len(expiring) == 0 {
		return 0, nil
	}
	if !a.strategy.alone() {
		held, err := a.takeSweepLease(ctx)
		if err != nil || !held {
			return 0, err
		}
	}
	limit := a.sweepOpts.PassLimit
	if limit <= 0 {
		limit = DefaultExpiryPassLimit
	}
	total := 0
	for _, lt := range expiring {
		n, err := a.sweepTable(ctx, lt.name, limit-total)
		total += n
		if errors.Is(err, ErrTableNotFound) {
			continue // deleted meanwhile
		}
		if err != nil || total >= limit {
			return total, err
		}
	}
	return total, nil
}

// sweepTable deletes up to limit expired entities of table name and
// returns how many it deleted.
func (a *Account) sweepTable(ctx context.Context, name string, limit int) (int, error) {
	lt, snap, err := a.tableSnapshot(ctx, name)
	if err != nil {
		return 0, err
	}
	x, err := a.expiryCheck(lt)
	if err != nil || x.prop == "" {
		snap.Close()
		return 0, err
	}
	def := expiryIndexOf(*lt.indexes.Load(), x.prop, true)
	if def == nil { // being rebuilt: the entities stay hidden until it is ready
		snap.Close()
		return 0, nil
	}
	groups, err := expiredCandidates(snap, lt.id, def, x, limit)
	snap.Close()
	if err != nil {
		return 0, err
	}
	batch := a.sweepOpts.Batch
	if batch <= 0 || batch > MaxTransactionActions {
		batch = MaxTransactionActions
	}
	t := a.Table(lt.name)
	n := 0
	for _, g := range groups {
		for chunk := range slices.Chunk(g, batch) {
			tags, err := t.write(ctx, chunk, false, true)
			if err != nil {
				return n, err
			}
			for _, tag := range tags {
				if tag != "" {
					n++
				}
			}
		}
	}
	return n, nil
}

// expiredCandidates reads from snap up to limit entities of table tableID
// that have expired by x, oldest first, from the entries of index def, and
// returns an actionExpire of each, conditioned on the ETag read, grouped
// by partition.
func expiredCandidates(snap storage.Snapshot, tableID uint64, def *indexDef, x expiryCheck, limit int) ([][]Action, error) {
	lo := append(keyenc.AppendIndexPrefix(nil, tableID, def.ID), byte(KindDateTime))
	hi := keyenc.PrefixEnd(keyenc.AppendOrderedInt64(slices.Clone(lo), x.now)) // V(now) included
	it, err := snap.NewIter(&storage.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var groups [][]Action
	byPK := map[string]int{}
	seen := map[string]bool{}
	tablePrefix := keyenc.AppendTableID(nil, tableID)
	n := 0
	for ok := it.First(); ok && n < limit; ok = it.Next() {
		ek, err := indexEntityKey(it.Key(), len(def.Props))
		if err != nil {
			return nil, err
		}
		if seen[string(ek)] {
			continue
		}
		seen[string(ek)] = true
		key := append(slices.Clip(tablePrefix), ek...)
		val, c, err := snap.Get(key)
		if errors.Is(err, storage.ErrNotFound) {
			continue // an entry of no entity: Verify reports it
		}
		if err != nil {
			return nil, err
		}
		expired, err := x.expired(val)
		var ticks int64
		if err == nil {
			ticks, err = recordTicks(val)
		}
		c.Close()
		if err != nil {
			return nil, err
		}
		if !expired {
			continue
		}
		pk, rk, err := keyenc.DecodePair(bytes.Clone(ek))
		if err != nil {
			return nil, err
		}
		act := Action{Type: actionExpire, Entity: Entity{PartitionKey: pk, RowKey: rk}, IfMatch: etagOf(ticks)}
		g, ok := byPK[pk]
		if !ok {
			g = len(groups)
			byPK[pk] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], act)
		n++
	}
	return groups, it.Error()
}

// takeSweepLease takes or renews the sweeper's lease on a shared engine,
// and reports whether this account holds it.
func (a *Account) takeSweepLease(ctx context.Context) (bool, error) {
	now, err := clockTicks(a.clock.now())
	if err != nil {
		return false, err
	}
	nonce := a.strategy.nonce()
	held := false
	err = a.update(ctx, "taking the expiry sweeper's lease", maxConflictRetries, [][]byte{metaSweeper}, func(rs *readSet) (*metaPlan, error) {
		held = false
		if rs.found[0] {
			until, holder, ok := decodeMark(rs.vals[0])
			if ok && holder != nonce && until > now {
				return nil, nil // another's, and not lapsed
			}
		}
		return &metaPlan{
			writes: []write{{key: metaSweeper, value: encodeMark(now+int64(sweepLease/100), nonce)}},
			finish: func(err error) { held = err == nil },
		}, nil
	})
	return held, err
}

// releaseSweepLease gives the sweeper's lease up, if this account holds
// it, so that another process's sweeper takes it at its next pass rather
// than once it lapses.
func (a *Account) releaseSweepLease() {
	if a.strategy.alone() {
		return
	}
	nonce := a.strategy.nonce()
	// Best effort: a lease not given up lapses after sweepLease.
	_ = a.update(context.Background(), "releasing the expiry sweeper's lease", maxConflictRetries, [][]byte{metaSweeper}, func(rs *readSet) (*metaPlan, error) {
		if !rs.found[0] {
			return nil, nil
		}
		if _, holder, ok := decodeMark(rs.vals[0]); !ok || holder != nonce {
			return nil, nil
		}
		return &metaPlan{writes: []write{{key: metaSweeper, del: true}}}, nil
	})
}
