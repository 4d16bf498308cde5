package localtable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/localtable/localtable/internal/keyenc"
)

// The write pipeline.
//
// Every write of an account, entity writes and transactions, table
// creation and deletion, access policies and the clock's mark, runs the
// same steps:
//
//  1. stateless checks and encoding, before any lock (apply, and the
//     callers of update);
//  2. in an attempt of the account's strategy (strategy.go): the locks the
//     write needs, one read of the state it depends on (strategy.read);
//  3. the plan (plan.go), a pure function of the write, the state read
//     and, for entity writes, the Timestamp, which decides every action
//     and gives the write set;
//  4. the writes of the account's contributors (contrib.go), computed from
//     the changes the plan makes, added to the same write set;
//  5. the commit (strategy.commit): one atomic batch, conditioned on the
//     read on a shared engine, where an attempt that lost a race runs
//     again from step 2.

// apply validates and applies actions atomically. With tx, action errors
// are wrapped in *TransactionError.
func (t *Table) apply(ctx context.Context, actions []Action, tx bool) ([]ETag, error) {
	return t.write(ctx, actions, tx, false)
}

// write is apply, which takes the sweeper's actionExpire only with sweep.
func (t *Table) write(ctx context.Context, actions []Action, tx, sweep bool) ([]ETag, error) {
	w := entityWrites.Get().(*entityWrite)
	defer w.release()
	return w.run(ctx, t, actions, tx, sweep)
}

// single applies one action, and returns its ETag.
func (t *Table) single(ctx context.Context, act Action) (ETag, error) {
	w := entityWrites.Get().(*entityWrite)
	defer w.release()
	w.one[0] = act // the action and its ETag in w: no allocation for either
	tags, err := w.run(ctx, t, w.one[:], false, false)
	if err != nil {
		return "", err
	}
	return tags[0], nil
}

// run runs write (single) in w. The ETags it returns are in w's buffer
// for a write of one action (w.one), valid until w is released.
func (w *entityWrite) run(ctx context.Context, t *Table, actions []Action, tx, sweep bool) ([]ETag, error) {
	a := t.a
	if err := a.check(ctx); err != nil {
		if tx {
			if e := checkTransactionSize(actions, -1); e != nil {
				return nil, e
			}
		}
		return nil, err
	}
	w.t, w.actions, w.tx = t, actions, tx
	// Checks that need no state, before any lock. The record of each
	// entity written is encoded as it is checked, into recs, ending at
	// ends[i]; its Timestamp is set by the plan's write set. A
	// transaction's size is summed meanwhile (checkTransactionSize).
	recs, ends := w.recs[:0], w.endBuf[:0]
	size := 0
	for i := range actions {
		act := &actions[i]
		var err error
		switch act.Type {
		case ActionDelete, actionExpire:
			if act.Type == actionExpire && !sweep {
				err = newError(ErrInvalidInput, "unknown action type %d", int(act.Type))
				break
			}
			if err = validateKey(PartitionKeyName, act.Entity.PartitionKey); err == nil {
				err = validateKey(RowKeyName, act.Entity.RowKey)
			}
			if tx {
				size += PayloadSize(&act.Entity)
			}
		case ActionInsert, ActionUpdateReplace, ActionUpdateMerge, ActionUpsertReplace, ActionUpsertMerge:
			var n int
			if recs, n, err = appendValidRecord(recs, &act.Entity); err == nil && i == 0 {
				recs = slices.Grow(recs, len(recs)*(len(actions)-1)) // room for the rest, if alike
			}
			size += n
		default:
			err = newError(ErrInvalidInput, "unknown action type %d", int(act.Type))
		}
		if err == nil && act.IfMatch != "" && act.IfMatch != ETagAny {
			if !isWeakETag(act.IfMatch) {
				err = errBadETag(act.IfMatch)
			}
		}
		if err != nil {
			w.recs = recs
			if tx {
				if e := checkTransactionSize(actions, -1); e != nil {
					return nil, e
				}
			}
			return nil, w.fail(i, err)
		}
		ends = append(ends, len(recs))
	}
	w.recs, w.ends = recs, ends
	if tx {
		if err := checkTransactionSize(actions, size); err != nil {
			return nil, err
		}
	}

	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	if err := a.run(ctx, "the write", maxConflictRetries, w); err != nil {
		return nil, err
	}
	return w.tags, nil
}

// entityWrite is an entity write (one action or a transaction) after its
// stateless checks: the actions, and their records encoded into recs,
// action i's ending at ends[i]. It holds the buffers of its attempts, and
// is pooled (entityWrites): a write of one entity allocates little more
// than its result.
type entityWrite struct {
	t       *Table
	actions []Action
	tx      bool // a transaction: action errors are *TransactionError
	recs    []byte
	ends    []int
	tags    []ETag // the result of the attempt that committed

	endBuf [MaxTransactionActions]int
	one    [1]Action // the action of a single write (Table.single)
	oneTag [1]ETag   // its ETag
	rs     readSet
	keyBuf []byte
	keys   [][]byte
	steps  []entityStep
	ws     []write
	cs     []change      // the changes, for the contributors
	cc     commitContext // the contributors' context, reused
}

var entityWrites = sync.Pool{New: func() any { return new(entityWrite) }}

// release returns w to entityWrites, keeping buffers of a typical size.
func (w *entityWrite) release() {
	if cap(w.recs) > 256<<10 || cap(w.keyBuf) > 64<<10 || cap(w.cc.buf) > 256<<10 {
		return
	}
	clear(w.keys)
	clear(w.steps)
	clear(w.ws)
	clear(w.cs)
	w.one[0], w.oneTag[0] = Action{}, ""
	w.cc = commitContext{buf: w.cc.buf[:0]}
	w.cs = w.cs[:0]
	w.t, w.actions, w.tx, w.ends, w.tags = nil, nil, false, nil, nil
	w.recs, w.keyBuf, w.keys, w.steps, w.ws = w.recs[:0], w.keyBuf[:0], w.keys[:0], w.steps[:0], w.ws[:0]
	w.rs.reset() // keeps its slices, emptied
	entityWrites.Put(w)
}

// fail returns the error of action i: with tx, a *TransactionError.
func (w *entityWrite) fail(i int, err error) error {
	var e *Error
	if w.tx && errors.As(err, &e) {
		return &TransactionError{Index: i, Err: e}
	}
	return err
}

// attempt is one attempt of the write: the table's lookup, the read, the
// plan and the commit.
func (w *entityWrite) attempt(ctx context.Context) error {
	a := w.t.a
	lt, err := a.strategy.lookup(ctx, w.t.name)
	if err != nil {
		return w.fail(0, err)
	}
	// The table's lock, held shared until the commit, keeps DeleteTable
	// from removing the table meanwhile; a table it removed since the
	// lookup is dropped.
	lt.mu.RLock()
	defer lt.mu.RUnlock()
	if lt.dropped.Load() {
		return w.fail(0, errDropped(w.t.name))
	}
	part := a.partition(lt.id, w.actions[0].Entity.PartitionKey)
	part.Lock()
	defer part.Unlock()

	w.keyBuf, w.keys = appendEntityKeys(w.keyBuf[:0], w.keys[:0], lt.id, w.actions)
	rs := w.rs.reset()
	defer rs.close()
	if err := a.strategy.read(ctx, rs, lt, w.keys); err != nil {
		return err
	}
	x, err := a.expiryCheck(lt)
	if err != nil {
		return err
	}
	p, i, err := planEntities(w.t.name, w.actions, rs.vals, rs.found, w.steps[:0], x)
	w.steps = p.steps
	if err != nil {
		if i < 0 {
			return err
		}
		return w.fail(i, err)
	}
	var ticks int64
	if p.stamp {
		if ticks, err = a.clock.nextAfter(ctx, p.floor); err != nil {
			return err
		}
	}
	var tags []ETag // the result: the caller's, but for a single action's
	if len(w.actions) == 1 && &w.actions[0] == &w.one[0] {
		tags = w.oneTag[:]
	}
	ws, tags := p.writeSet(w.actions, w.keys, w.recs, w.ends, ticks, w.ws[:0], tags)
	w.ws = ws
	if len(ws) == 0 { // a sweep whose every entity was rewritten meanwhile
		w.tags = tags
		return nil
	}
	var cc *commitContext
	if set := a.wanted(lt); set != 0 {
		w.cs = entityChanges(w.cs[:0], lt, w.actions, p.steps, rs, ws)
		if cc, err = a.contribute(ctx, &w.cc, set, rs, ws, w.cs, ticks); err != nil {
			return err
		}
		// Kept: the contributors' writes grow the slice, which the
		// pooled write reuses.
		ws = cc.writes
		w.ws = ws
	}
	if h := a.beforeCommit; h != nil {
		h(w.t.name, w.actions)
	}
	if err := a.strategy.commit(ctx, rs, ws); err != nil {
		return err
	}
	cc.committed()
	w.tags = tags
	return nil
}

// appendEntityKeys appends the engine keys of the actions' entities in
// table id to buf, and a slice of each to keys.
func appendEntityKeys(buf []byte, keys [][]byte, id uint64, actions []Action) ([]byte, [][]byte) {
	size := 0
	for i := range actions {
		size += keyenc.TablePrefixLen + len(actions[i].Entity.PartitionKey) + len(actions[i].Entity.RowKey) + 8
	}
	buf = slices.Grow(buf, size)
	for i := range actions {
		e := &actions[i].Entity
		start := len(buf)
		buf = keyenc.AppendEntityKey(buf, id, e.PartitionKey, e.RowKey)
		keys = append(keys, buf[start:len(buf):len(buf)])
	}
	return buf, keys
}

// run runs a write's attempts by the account's strategy: the one way
// every write (an entity write, or update's) reaches the engine, refused
// with ErrReadOnly on an account opened with Options.ReadOnly.
func (a *Account) run(ctx context.Context, what string, budget int, w attempter) error {
	if a.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, what)
	}
	return a.strategy.run(ctx, what, budget, w)
}

// update runs a write of the account's metadata (the catalog, the
// clock's mark) through the pipeline: in each attempt, it reads keys and
// hands what it read to plan, which returns the write set (nil: nothing to
// write) and the changes it makes; the write set, with the contributors'
// writes, is committed on condition that the keys read are unchanged.
// prepare, if plan sets it, runs before the contributors and the commit,
// and finish, if set, right after the commit, with its outcome (or the
// contributors' error).
func (a *Account) update(ctx context.Context, what string, budget int, keys [][]byte, plan func(rs *readSet) (*metaPlan, error)) error {
	return a.run(ctx, what, budget, attemptFunc(func(context.Context) error {
		rs := newReadSet()
		defer rs.close()
		if err := a.strategy.read(ctx, rs, nil, keys); err != nil {
			return err
		}
		p, err := plan(rs)
		if err != nil || p == nil || p.writes == nil {
			return err
		}
		// prepare takes the locks the commit needs (DeleteTable: its
		// table's) before the contributors run: they may take
		// strategy.exclusive, which entity writes take under their table's
		// lock, so it always comes second.
		if p.prepare != nil {
			p.prepare()
		}
		ws := p.writes
		var cc *commitContext
		if a.contributors != nil && len(p.changes) > 0 {
			cc, err = a.contribute(ctx, nil, allContributors, rs, ws, p.changes, 0)
			if cc != nil {
				ws = cc.writes
			}
		}
		if err == nil {
			err = a.strategy.commit(ctx, rs, ws)
		}
		if err == nil && p.durable {
			err = a.strategy.sync()
		}
		if p.finish != nil {
			p.finish(err)
		}
		if err == nil {
			cc.committed()
		}
		return err
	}))
}

// metaPlan is what a metadata write's plan decided.
type metaPlan struct {
	writes  []write
	changes []change
	prepare func()
	finish  func(err error)
	// durable: the commit must be durable even on an engine that skips
	// syncs (the clock's mark: see strategy.sync).
	durable bool
}
