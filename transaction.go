package localtable

import (
	"context"
	"fmt"
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
	for i := range actions {
		e := &actions[i].Entity
		if e.PartitionKey != pk {
			return nil, &TransactionError{Index: i, Err: newError(ErrDifferentPartitions, "action %d has PartitionKey %q, action 0 has %q: all actions of a transaction act on one partition", i, abbrev(e.PartitionKey), abbrev(pk))}
		}
		if j, dup := seen[e.RowKey]; dup {
			return nil, &TransactionError{Index: i, Err: newError(ErrDuplicateRow, "actions %d and %d both act on RowKey %q: an entity can appear only once in a transaction", j, i, abbrev(e.RowKey))}
		}
		seen[e.RowKey] = i
	}
	// The limit on the transaction's size (checkTransactionSize) is
	// checked by the pipeline, with each entity's validation and encoding
	// (a pass over its properties, which measures them too).
	return t.apply(ctx, actions, true)
}

// checkTransactionSize returns the error of a transaction whose entities'
// PayloadSize total more than MaxTransactionSize (size, if known, else
// computed), or nil. It comes before the error of any of its actions.
func checkTransactionSize(actions []Action, size int) error {
	if size < 0 {
		size = 0
		for i := range actions {
			size += PayloadSize(&actions[i].Entity)
		}
	}
	if size > MaxTransactionSize {
		return newError(ErrRequestBodyTooLarge, "the transaction's entities total %d bytes; the limit is %d (4 MiB)", size, MaxTransactionSize)
	}
	return nil
}
