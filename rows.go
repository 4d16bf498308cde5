package localtable

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"
	"unsafe"

	"github.com/localtable/localtable/internal/keyenc"
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
	err   error  // the first corruption met by a read
	buf   []byte // GetRow's copy of the record, reused
	kbuf  []byte // the keys decoded, when the engine's key rewrites them

	// at is the cursor of Property: the record's properties are stored in
	// name order, so a read of a name after the one last passed goes on
	// from there instead of from the first property. last is that name
	// ("" when at must start afresh).
	at   recordWalker
	last string
	// hints are where the names last read were, for find's first guess:
	// the entities of one table mostly share their properties, and a Row
	// reads one after another (see Table.Rows, and a query's filter).
	hints [4]propHint
	nhint int // the hints set, of which the last len(hints) are kept
}

// propHint is where a property was in the last record it was read from.
type propHint struct {
	name string
	k    uint64
}

// reset points r at the entity of an engine key and its record, keeping
// its buffers. A corrupt record header sets err (and reads as Timestamp
// zero).
func (r *Row) reset(key, rec []byte) {
	ticks, err := recordTicks(rec)
	r.key, r.keyed, r.pk, r.rk, r.ticks, r.rec, r.err, r.last = key, false, "", "", ticks, rec, err, ""
}

// clear empties r, keeping its buffers: a Row used past its step reads as
// empty.
func (r *Row) clear() {
	r.key, r.keyed, r.pk, r.rk, r.ticks, r.rec, r.err, r.last = nil, false, "", "", 0, nil, nil, ""
}

// keys decodes the entity's keys on the first call, and reports whether
// they are decoded. Keys the engine stores as they are read as views of
// its key; rewritten keys are decoded into kbuf.
func (r *Row) keys() bool {
	if r.keyed {
		return true
	}
	if r.rec == nil {
		return false
	}
	key := r.key
	if len(key) < keyenc.TablePrefixLen || key[0] != keyenc.PrefixEntity {
		r.fail(keyenc.ErrCorrupt)
		return false
	}
	key = key[keyenc.TablePrefixLen:]
	if p, rest, ok := keyenc.CutPlain(key); ok {
		if k, rest, ok := keyenc.CutPlain(rest); ok && len(rest) == 0 {
			r.pk, r.rk, r.keyed = bytesView(p), bytesView(k), true
			return true
		}
	}
	buf, rest, err := keyenc.AppendDecoded(r.kbuf[:0], key)
	n := len(buf)
	if err == nil {
		buf, rest, err = keyenc.AppendDecoded(buf, rest)
	}
	r.kbuf = buf
	if err == nil && len(rest) != 0 {
		err = keyenc.ErrCorrupt
	}
	if err != nil {
		r.fail(err)
		return false
	}
	r.pk, r.rk, r.keyed = bytesView(buf[:n]), bytesView(buf[n:]), true
	return true
}

// fail records the first corruption a read meets.
func (r *Row) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// PartitionKey returns the entity's PartitionKey.
func (r *Row) PartitionKey() string { r.keys(); return r.pk }

// RowKey returns the entity's RowKey.
func (r *Row) RowKey() string { r.keys(); return r.rk }

// Timestamp returns the entity's Timestamp.
func (r *Row) Timestamp() time.Time { return TicksToTime(r.ticks) }

// Property returns a property by name, as (*Entity).Property does:
// PartitionKey, RowKey, Timestamp or a custom property; false if the
// entity has none of that name. Row implements PropertyReader: a query's
// filter reads each entity it scans through one. Reading properties in
// name order is the cheapest: each read goes on from where the last
// stopped.
func (r *Row) Property(name string) (Value, bool) {
	switch name {
	case PartitionKeyName:
		ok := r.keys()
		return StringValue(r.pk), ok
	case RowKeyName:
		ok := r.keys()
		return StringValue(r.rk), ok
	case TimestampName:
		_, err := recordTicks(r.rec) // reset read it: a corrupt header reads as absent
		return DateTimeTicksValue(r.ticks), err == nil
	}
	if r.rec == nil || name == "" {
		return Value{}, false
	}
	hint, slot := noHint, -1
	for j := range r.hints {
		// A filter reads the same string for each entity: its bytes are
		// compared only when it is another.
		h := &r.hints[j]
		if len(h.name) == len(name) && (unsafe.StringData(h.name) == unsafe.StringData(name) || h.name == name) {
			hint, slot = h.k, j
			break
		}
	}
	if slot >= 0 {
		// Where the last entity had it: read without a walk, and the
		// next read starts afresh.
		if v, ok := findAt(r.rec, name, hint); ok {
			r.last = ""
			return v, true
		}
	}
	if r.last == "" || !nameLess(r.last, name) {
		if _, err := r.at.init(r.rec, true); err != nil {
			r.fail(err)
			return Value{}, false
		}
	}
	got, kind, at, found, ok := r.at.find(name, hint)
	if !ok {
		r.last = "" // past the last property: start afresh next time
		if r.at.err != nil {
			r.fail(r.at.err)
		}
		return Value{}, false
	}
	r.last = got
	if !found {
		return Value{}, false
	}
	if k := r.at.p - 1; slot >= 0 {
		r.hints[slot].k = k
	} else {
		r.hints[r.nhint%len(r.hints)] = propHint{name, k}
		r.nhint++
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

// Err returns the first corruption a read of r met since it was read
// (its keys, a Property, Properties' loop ended early): nil if what it
// returned is the whole, sound entity. A loop over Rows reports it too;
// a GetRow's reader checks it after reading.
func (r *Row) Err() error { return r.err }

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
	if !r.keys() {
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
