package localtable

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/localtable/localtable/internal/ticktime"
	"github.com/localtable/localtable/storage"
)

// Table is a handle to a table of an account. It is cheap to make and safe
// for concurrent use; it holds no state of its own, so a handle stays valid
// across the table's deletion and re-creation (operations on a missing table
// fail with ErrTableNotFound).
type Table struct {
	a    *Account
	name string
}

// Name returns the table name the handle was made with.
func (t *Table) Name() string { return t.name }

// UpdateMode says how a write treats the properties of an existing entity.
// The names are those of the Azure SDK for Go (aztables).
type UpdateMode int

const (
	// UpdateModeReplace replaces the entity: properties not written are
	// removed. It is the zero UpdateMode.
	UpdateModeReplace UpdateMode = iota
	// UpdateModeMerge merges into the entity: properties not written are
	// kept.
	UpdateModeMerge
)

// String returns "replace" or "merge".
func (m UpdateMode) String() string {
	switch m {
	case UpdateModeReplace:
		return "replace"
	case UpdateModeMerge:
		return "merge"
	}
	return fmt.Sprintf("UpdateMode(%d)", int(m))
}

// UpdateOptions modify Update. A nil *UpdateOptions means the defaults:
// replace the entity, whatever its ETag.
type UpdateOptions struct {
	// Mode is UpdateModeReplace (the zero value) or UpdateModeMerge.
	Mode UpdateMode
	// IfMatch is the ETag the entity must have, or ETagAny (or "", the
	// zero value) for any.
	IfMatch ETag
}

// UpsertOptions modify Upsert. A nil *UpsertOptions means the defaults:
// insert or replace.
type UpsertOptions struct {
	// Mode is UpdateModeReplace (the zero value: insert or replace) or
	// UpdateModeMerge (insert or merge).
	Mode UpdateMode
}

// DeleteOptions modify Delete. A nil *DeleteOptions means the defaults:
// delete the entity whatever its ETag.
type DeleteOptions struct {
	// IfMatch is the ETag the entity must have, or ETagAny (or "", the
	// zero value) for any.
	IfMatch ETag
}

// Insert adds a new entity and returns its ETag. It fails with
// ErrEntityExists if an entity with the same keys exists. e's Timestamp and
// ETag are ignored.
func (t *Table) Insert(ctx context.Context, e Entity) (ETag, error) {
	return t.single(ctx, Action{Type: ActionInsert, Entity: e})
}

// Update replaces or merges into an existing entity, as opts.Mode says, and
// returns its new ETag; nil opts means replace, unconditionally. A write
// conditional on opts.IfMatch that finds another ETag fails with
// ErrConditionNotMet (also for a weak ETag W/"…" of a form this package
// never makes), a missing entity with ErrEntityNotFound, and an IfMatch
// that is not a weak ETag, or an unknown Mode, with ErrInvalidInput.
func (t *Table) Update(ctx context.Context, e Entity, opts *UpdateOptions) (ETag, error) {
	act := Action{Type: ActionUpdateReplace, Entity: e}
	if opts != nil {
		typ, err := actionFor(opts.Mode, ActionUpdateReplace, ActionUpdateMerge)
		if err != nil {
			return "", err
		}
		act.Type, act.IfMatch = typ, opts.IfMatch
	}
	return t.single(ctx, act)
}

// Upsert inserts the entity, or replaces or merges into the existing one
// as opts.Mode says (insert-or-replace, insert-or-merge), and returns its
// new ETag; nil opts means insert-or-replace. An unknown Mode fails with
// ErrInvalidInput.
func (t *Table) Upsert(ctx context.Context, e Entity, opts *UpsertOptions) (ETag, error) {
	act := Action{Type: ActionUpsertReplace, Entity: e}
	if opts != nil {
		typ, err := actionFor(opts.Mode, ActionUpsertReplace, ActionUpsertMerge)
		if err != nil {
			return "", err
		}
		act.Type = typ
	}
	return t.single(ctx, act)
}

// actionFor returns the action of mode: replace or merge.
func actionFor(mode UpdateMode, replace, merge ActionType) (ActionType, error) {
	switch mode {
	case UpdateModeReplace:
		return replace, nil
	case UpdateModeMerge:
		return merge, nil
	}
	return 0, newError(ErrInvalidInput, "update mode %d is not valid: use UpdateModeReplace or UpdateModeMerge", int(mode))
}

// Delete deletes an entity; nil opts means whatever its ETag. A delete
// conditional on opts.IfMatch has the outcomes of Update's.
func (t *Table) Delete(ctx context.Context, pk, rk string, opts *DeleteOptions) error {
	act := Action{Type: ActionDelete, Entity: Entity{PartitionKey: pk, RowKey: rk}}
	if opts != nil {
		act.IfMatch = opts.IfMatch
	}
	_, err := t.single(ctx, act)
	return err
}

// GetOptions modify a point read.
type GetOptions struct {
	// Select lists the custom properties to return ($select); nil, or a
	// list holding "*", returns all. The keys and Timestamp are always
	// returned. A selected property the entity lacks is absent from
	// Properties. A name that is not a property name fails the read with
	// ErrInvalidInput, as for QueryOptions.Select.
	Select []string
}

// Get reads one entity by its keys, or fails with ErrEntityNotFound.
func (t *Table) Get(ctx context.Context, pk, rk string, opts *GetOptions) (Entity, error) {
	var sel selection
	if opts != nil {
		var err error
		if sel, err = makeSelection(opts.Select); err != nil {
			return Entity{}, err
		}
	}
	var e Entity
	err := t.read(ctx, pk, rk, func(val []byte, stable bool) error {
		ticks, props, err := decodeProps(val, sel, stable)
		if err != nil {
			return err
		}
		e = makeEntity(pk, rk, ticks, props)
		return nil
	})
	return e, err
}

// GetRow reads the entity with the given keys into row, in place, as Rows
// yields them: a hot path's point read, which builds no Entity and no map.
// What row returns (its strings, Binary and Guid values included) is
// valid until the next GetRow into it, which reuses its memory: copy what
// you keep (row.Entity copies it all). A zero Row is ready to use; reusing
// one, a read allocates nothing. The errors are Get's.
func (t *Table) GetRow(ctx context.Context, pk, rk string, row *Row) error {
	row.clear()
	return t.read(ctx, pk, rk, func(val []byte, stable bool) error {
		ticks, err := recordTicks(val)
		if err != nil {
			return err
		}
		if !stable { // the engine's bytes go at the read's end
			row.buf = append(row.buf[:0], val...)
			val = row.buf
		}
		row.keyed, row.pk, row.rk, row.ticks, row.rec = true, pk, rk, ticks, val
		return nil
	})
}

// read calls fn with the record of the entity with the given keys, which
// is valid during the call (stable: for as long as it is kept, see
// storage.StableReader). It is the point read of Get and GetRow.
func (t *Table) read(ctx context.Context, pk, rk string, fn func(rec []byte, stable bool) error) error {
	a := t.a
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.exit()
	lt, err := a.lookup(ctx, t.name)
	if err != nil {
		return err
	}
	if err := validateKey(PartitionKeyName, pk); err != nil {
		return err
	}
	if err := validateKey(RowKeyName, rk); err != nil {
		return err
	}
	kb := keyBufs.Get().(*[]byte)
	defer putKeyBuf(kb) // engines do not keep the keys they are given
	lt, val, c, err := a.strategy.getEntity(ctx, lt, pk, rk, kb)
	if lt.dropped.Load() { // deleted under the read, which may have seen it
		if err == nil {
			c.Close()
		}
		return errDropped(t.name)
	}
	if err == nil && *lt.expiry.Load() != "" {
		err = a.hideExpired(lt, val, c)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return newError(ErrEntityNotFound, "entity (%q, %q) does not exist in table %q", abbrev(pk), abbrev(rk), t.name)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(val, stableReads(a.eng))
}

// keyBufs holds buffers for the engine keys of reads and writes, which
// the engine copies or forgets before its call returns.
var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

// putKeyBuf returns kb to keyBufs, unless it grew beyond the keys of
// most entities.
func putKeyBuf(kb *[]byte) {
	if cap(*kb) <= 1024 {
		keyBufs.Put(kb)
	}
}

func makeEntity(pk, rk string, ticks int64, props Properties) Entity {
	return Entity{PartitionKey: pk, RowKey: rk, Timestamp: TicksToTime(ticks), ETag: etagOf(ticks), Properties: props}
}

// errBadETag is the error for an If-Match value that is neither "*" nor a
// weak ETag.
func errBadETag(tag ETag) error {
	return newError(ErrInvalidInput, "the ETag %q is not valid: use \"*\" or an ETag the service returned", string(tag))
}

// etagOf returns etagFor(ticks), formatted straight from the ticks rather
// than with time.Format and strings.ReplaceAll: it is made on every read
// and write.
func etagOf(ticks int64) ETag {
	if ticks < 0 || ticks > ticktime.Max {
		return etagFor(ticks)
	}
	var buf [etagLen]byte
	return ETag(appendETag(buf[:0], ticks))
}

// etagLen is the length of the ETag of a Timestamp within ticktime.Max.
const etagLen = len(`W/"datetime'`) + len("0000-00-00T00%3A00%3A00.0000000Z") + len(`'"`)

// appendETag appends etagOf(ticks) to b.
func appendETag(b []byte, ticks int64) []byte {
	if ticks < 0 || ticks > ticktime.Max {
		return append(b, etagFor(ticks)...)
	}
	b = append(b, `W/"datetime'`...)
	b = ticktime.Append(b, ticks, true, "%3A")
	return append(b, `'"`...)
}
