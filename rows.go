package localtable

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"
)

// Row is an entity of Rows, read in place: its accessors find what they
// are asked for in the entity's stored record, and build no Entity and no
// map. A Row, and every string, Binary and Guid it returns, is valid only
// until the loop over Rows moves to the next entity (or ends): like an
// iterator's key and value in pebble or a bbolt cursor's, they may share
// memory the engine reuses. Copy what you keep: Entity makes a copy of
// the whole entity, strings.Clone and bytes.Clone of a part.
//
// Reading a Row allocates nothing, but for keys holding characters above
// U+FFFF (emoji, among others), which the engine's key encoding stores
// rewritten: their keys are decoded into a copy, once a row.
type Row struct {
	key   []byte // the entity's engine key: its keys, decoded when asked for
	keyed bool   // pk and rk are decoded
	pk    string
	rk    string
	ticks int64
	rec   []byte
	err   error  // a corruption met by a read
	buf   []byte // GetRow's copy of the record, reused

	// at is the cursor of Property: the record's properties are stored in
	// name order, so a read of a name after the one last passed goes on
	// from there instead of from the first property. last is that name
	// ("" when at must start afresh).
	at   recordWalker
	last string
}

// keys decodes the entity's keys on the first call.
func (r *Row) keys() {
	if r.keyed || r.rec == nil {
		return
	}
	r.keyed = true
	pk, rk, err := decodeEntityKey(r.key, true)
	if err != nil {
		if r.err == nil {
			r.err = err
		}
		return
	}
	r.pk, r.rk = pk, rk
}

// PartitionKey returns the entity's PartitionKey.
func (r *Row) PartitionKey() string { r.keys(); return r.pk }

// RowKey returns the entity's RowKey.
func (r *Row) RowKey() string { r.keys(); return r.rk }

// Timestamp returns the entity's Timestamp.
func (r *Row) Timestamp() time.Time { return TicksToTime(r.ticks) }

// Property returns a property by name, as (*Entity).Property does:
// PartitionKey, RowKey, Timestamp or a custom property; false if the
// entity has none of that name. Row implements PropertyReader, so a
// filter's MatchReader reads it in place too. Reading properties in name
// order is the cheapest: each read goes on from where the last stopped.
func (r *Row) Property(name string) (Value, bool) {
	switch name {
	case PartitionKeyName:
		r.keys()
		return StringValue(r.pk), r.rec != nil && r.err == nil
	case RowKeyName:
		r.keys()
		return StringValue(r.rk), r.rec != nil && r.err == nil
	case TimestampName:
		return DateTimeTicksValue(r.ticks), r.rec != nil
	}
	if r.rec == nil || name == "" {
		return Value{}, false
	}
	if r.last == "" || !nameLess(r.last, name) {
		if _, err := r.at.init(r.rec, true); err != nil {
			if r.err == nil {
				r.err = err
			}
			return Value{}, false
		}
	}
	got, kind, at, found, ok := r.at.seek(name)
	if !ok {
		r.last = "" // past the last property: start afresh next time
		if r.at.err != nil && r.err == nil {
			r.err = r.at.err
		}
		return Value{}, false
	}
	r.last = got
	if !found {
		return Value{}, false
	}
	return r.at.value(kind, at), true
}

// Properties returns the entity's custom properties, in name order.
func (r *Row) Properties() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		var w recordWalker
		if _, err := w.init(r.rec, true); err != nil {
			r.err = err
			return
		}
		for {
			name, v, ok := w.next()
			if !ok {
				if w.err != nil && r.err == nil {
					r.err = w.err
				}
				return
			}
			if !yield(name, v) {
				return
			}
		}
	}
}

// ETag returns the entity's ETag (a string made for the call).
func (r *Row) ETag() ETag { return etagOf(r.ticks) }

// Entity returns a copy of the whole entity, with its ETag: valid for as
// long as it is kept.
func (r *Row) Entity() (Entity, error) {
	if r.rec == nil {
		return Entity{}, errRowGone
	}
	ticks, props, err := decodeSelected(r.rec, selection{})
	if err != nil {
		return Entity{}, err
	}
	r.keys()
	if r.err != nil {
		return Entity{}, r.err
	}
	return makeEntity(strings.Clone(r.pk), strings.Clone(r.rk), ticks, props), nil
}

var errRowGone = errors.New("localtable: a Row used after its step of Rows (copy what you keep: Row.Entity)")

// errStopRows ends the scan of a loop over Rows that stopped early.
var errStopRows = errors.New("localtable: Rows stopped")

// Rows is QueryAll without decoding: it yields each entity the query
// selects, in (PartitionKey, RowKey) order, as a *Row read in place,
// following continuations as QueryAll does. A loop over it that reads a
// few properties of each entity allocates nothing per entity (see Row for
// how long what it yields is valid). opts.Select must be nil: a Row reads
// only the properties asked for anyway. A corrupt record ends the loop
// with its error.
func (t *Table) Rows(ctx context.Context, opts *QueryOptions) iter.Seq2[*Row, error] {
	var o QueryOptions
	if opts != nil {
		o = *opts
	}
	return func(yield func(*Row, error) bool) {
		if o.Select != nil {
			yield(nil, newError(ErrInvalidInput, "Rows reads the properties asked for from each Row: it takes no Select"))
			return
		}
		opts := o // each run of the iterator starts afresh
		limit, yielded := opts.Limit, 0
		stopped := false
		visit := &storedVisit{row: func(r *Row) error {
			yielded++
			if !yield(r, nil) {
				stopped = true
				return errStopRows
			}
			if r.err != nil {
				return r.err
			}
			return nil
		}}
		for {
			if limit > 0 {
				opts.Limit = limit - yielded
			}
			page, err := t.queryPage(ctx, opts, visit)
			if stopped {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if page.Continuation.IsZero() {
				return
			}
			opts.Continuation = page.Continuation
		}
	}
}
