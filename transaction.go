package localtable

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
)

// ActionType is the kind of a write in an entity group transaction.
type ActionType int

// The action types, named after the Table method and UpdateMode each
// performs (aztables calls ActionInsert Add and the upserts Insert…).
const (
	ActionInsert        ActionType = iota // insert; fails if the entity exists
	ActionUpdateReplace                   // replace an existing entity (IfMatch)
	ActionUpdateMerge                     // merge into an existing entity (IfMatch)
	ActionUpsertReplace                   // insert or replace
	ActionUpsertMerge                     // insert or merge
	ActionDelete                          // delete an existing entity (IfMatch)
)

var actionNames = [...]string{"Insert", "UpdateReplace", "UpdateMerge", "UpsertReplace", "UpsertMerge", "Delete"}

// String returns the action type's name.
func (t ActionType) String() string {
	if t >= 0 && int(t) < len(actionNames) {
		return actionNames[t]
	}
	return fmt.Sprintf("ActionType(%d)", int(t))
}

// Action is one write of an entity group transaction. For ActionDelete
// only the Entity's keys are read. IfMatch applies to the update and delete
// actions: an ETag the entity must have, or ETagAny (or "") for any. As
// in the service, any weak ETag W/"…" is a valid condition that holds only
// for the entity's current ETag, and any other value is InvalidInput.
type Action struct {
	Type    ActionType // what the action does
	Entity  Entity     // the entity written, or whose keys are deleted
	IfMatch ETag       // the condition of an update or delete
}

// Transact applies up to 100 actions on entities of one partition as one
// entity group transaction: all of them or none, invisible to readers until
// committed. It returns the new ETag of each action's entity ("" for
// deletes), in order.
//
// A failed transaction applies nothing. A rule of the transaction as a
// whole fails it with an *Error: no actions or more than 100
// (ErrInvalidInput), over 4 MiB of entities by PayloadSize
// (ErrRequestBodyTooLarge). Everything else fails it with a
// *TransactionError whose Index is the 0-based position of the action at
// fault and whose Err is the *Error: an action on another PartitionKey
// than action 0's (ErrDifferentPartitions), an entity a second time
// (ErrDuplicateRow), an action that fails on its own (ErrEntityExists,
// ErrConditionNotMet, an invalid entity, …), and a missing table
// (ErrTableNotFound, at Index 0). errors.Is and errors.As see through a
// *TransactionError, so errors.Is(err, ErrEntityExists) and errors.As(err,
// &e) with e an *Error work on either.
func (t *Table) Transact(ctx context.Context, actions []Action) ([]ETag, error) {
	if len(actions) == 0 {
		return nil, newError(ErrInvalidInput, "a transaction needs at least one action")
	}
	if len(actions) > MaxTransactionActions {
		return nil, newError(ErrInvalidInput, "the batch request operation exceeds the maximum %d changes per change set (it has %d)", MaxTransactionActions, len(actions))
	}
	pk := actions[0].Entity.PartitionKey
	seen := make(map[string]int, len(actions))
	size := 0
	for i := range actions {
		e := &actions[i].Entity
		if e.PartitionKey != pk {
			return nil, &TransactionError{Index: i, Err: newError(ErrDifferentPartitions, "action %d has PartitionKey %q, action 0 has %q: all actions of a transaction act on one partition", i, abbrev(e.PartitionKey), abbrev(pk))}
		}
		if j, dup := seen[e.RowKey]; dup {
			return nil, &TransactionError{Index: i, Err: newError(ErrDuplicateRow, "actions %d and %d both act on RowKey %q: an entity can appear only once in a transaction", j, i, abbrev(e.RowKey))}
		}
		seen[e.RowKey] = i
		size += PayloadSize(e)
	}
	if size > MaxTransactionSize {
		return nil, newError(ErrRequestBodyTooLarge, "the transaction's entities total %d bytes; the limit is %d (4 MiB)", size, MaxTransactionSize)
	}
	return t.apply(ctx, actions, true)
}

// apply validates and applies actions atomically. With tx, action errors
// are wrapped in *TransactionError.
func (t *Table) apply(ctx context.Context, actions []Action, tx bool) ([]ETag, error) {
	a := t.a
	if err := a.check(ctx); err != nil {
		return nil, err
	}
	fail := func(i int, err error) error {
		var e *Error
		if tx && errors.As(err, &e) {
			return &TransactionError{Index: i, Err: e}
		}
		return err
	}
	// Checks that need no state, before any lock. The record of each
	// entity written is encoded as it is checked, into recs, ending at
	// ends[i]; its Timestamp is set at commit.
	rb := recordBufs.Get().(*[]byte)
	recs := (*rb)[:0]
	defer func() { putRecordBuf(rb, recs) }()
	var endBuf [MaxTransactionActions]int
	ends := endBuf[:0]
	for i := range actions {
		act := &actions[i]
		var err error
		switch act.Type {
		case ActionDelete:
			if err = validateKey(PartitionKeyName, act.Entity.PartitionKey); err == nil {
				err = validateKey(RowKeyName, act.Entity.RowKey)
			}
		case ActionInsert, ActionUpdateReplace, ActionUpdateMerge, ActionUpsertReplace, ActionUpsertMerge:
			if recs, err = appendValidRecord(recs, &act.Entity); err == nil && i == 0 {
				recs = slices.Grow(recs, len(recs)*(len(actions)-1)) // room for the rest, if alike
			}
		default:
			err = newError(ErrInvalidInput, "unknown action type %d", int(act.Type))
		}
		if err == nil && act.IfMatch != "" && act.IfMatch != ETagAny {
			if !isWeakETag(act.IfMatch) {
				err = errBadETag(act.IfMatch)
			}
		}
		if err != nil {
			return nil, fail(i, err)
		}
		ends = append(ends, len(recs))
	}

	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	defer a.exit()
	if a.ve != nil {
		return t.applyShared(ctx, actions, recs, ends, fail)
	}
	lt, err := a.lookup(ctx, t.name)
	if err != nil {
		return nil, fail(0, err)
	}
	// The table's lock, held shared until the commit, keeps DeleteTable
	// from removing the table meanwhile; a table it removed since the
	// lookup is dropped.
	lt.mu.RLock()
	defer lt.mu.RUnlock()
	if lt.dropped.Load() {
		return nil, fail(0, errDropped(t.name))
	}
	part := a.partition(lt.id, actions[0].Entity.PartitionKey)
	part.Lock()
	defer part.Unlock()

	b := a.eng.NewBatch()
	defer b.Close()
	tags := make([]ETag, len(actions))
	var ticks int64
	var tag ETag
	kb := keyBufs.Get().(*[]byte)
	defer putKeyBuf(kb)
	key := *kb
	var val, mval []byte
	for i := range actions {
		act := &actions[i]
		e := &act.Entity
		key = keyenc.AppendEntityKey(key[:0], lt.id, e.PartitionKey, e.RowKey)
		*kb = key
		merge := act.Type == ActionUpdateMerge || act.Type == ActionUpsertMerge
		cur, curTicks, exists, err := t.read(key, merge)
		if err != nil {
			return nil, err
		}
		if err := checkCondition(t.name, act, exists, curTicks); err != nil {
			return nil, fail(i, err)
		}
		if act.Type == ActionDelete {
			if err := b.Delete(key); err != nil {
				return nil, err
			}
			continue
		}
		props := e.Properties
		if exists && merge {
			props = cur
			for name, v := range e.Properties {
				if !v.IsNull() {
					props[name] = v
				}
			}
			merged := Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: props}
			if err := checkMerged(&merged); err != nil {
				return nil, fail(i, err)
			}
		}
		if ticks == 0 {
			if ticks, err = a.clock.next(ctx); err != nil {
				return nil, err
			}
			tag = etagOf(ticks) // one Timestamp, so one ETag, per transaction
		}
		if exists && merge {
			// A merge has a buffer of its own: val may alias recs, which
			// holds the records of the actions after this one.
			mval = appendRecord(mval[:0], ticks, props)
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
			return nil, err
		}
		tags[i] = tag
	}
	if h := a.beforeCommit; h != nil {
		h(t.name, actions)
	}
	if err := b.Commit(true); err != nil {
		return nil, err
	}
	return tags, nil
}

// read returns the stored Timestamp of an entity key and, with props, its
// properties (only merges need them; other actions check the record's
// header alone).
func (t *Table) read(key []byte, props bool) (Properties, int64, bool, error) {
	v, c, err := t.a.eng.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	defer c.Close()
	if !props {
		ticks, err := recordTicks(v)
		return nil, ticks, err == nil, err
	}
	ticks, p, err := decodeSelected(v, selection{})
	if err != nil {
		return nil, 0, false, err
	}
	return p, ticks, true, nil
}

// checkCondition applies an action's existence and If-Match rules.
func checkCondition(table string, act *Action, exists bool, curTicks int64) error {
	e := &act.Entity
	switch act.Type {
	case ActionInsert:
		if exists {
			return newError(ErrEntityExists, "entity (%q, %q) already exists in table %q", abbrev(e.PartitionKey), abbrev(e.RowKey), table)
		}
	case ActionUpdateReplace, ActionUpdateMerge, ActionDelete:
		if !exists {
			return newError(ErrEntityNotFound, "entity (%q, %q) does not exist in table %q", abbrev(e.PartitionKey), abbrev(e.RowKey), table)
		}
		if act.IfMatch != "" && act.IfMatch != ETagAny {
			if cur := etagOf(curTicks); act.IfMatch != cur {
				return newError(ErrConditionNotMet, "entity (%q, %q) has ETag %s, not %s", abbrev(e.PartitionKey), abbrev(e.RowKey), cur, act.IfMatch)
			}
		}
	}
	return nil
}
