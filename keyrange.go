package localtable

import (
	"bytes"
	"reflect"

	"github.com/localtable/localtable/internal/keyenc"
)

// Key is a position in a table's entity order: (PartitionKey, RowKey),
// ordinal UTF-16 order, PartitionKey first. Keys bound a [KeyRange]. The
// zero Key is unbounded: before every entity as a start, after every entity
// as an end.
type Key struct {
	enc []byte // S(pk) S(rk) in keyenc's encoding, or a bound between them
}

// KeyAt is the position of entity (pk, rk) itself.
func KeyAt(pk, rk string) Key {
	b := keyenc.AppendString(nil, pk)
	return Key{enc: keyenc.AppendString(b, rk)}
}

// KeyAfter is the position just after entity (pk, rk) and before the next
// possible entity.
func KeyAfter(pk, rk string) Key {
	k := KeyAt(pk, rk)
	k.enc = append(k.enc, 0)
	return k
}

// PartitionStart is the position before every entity of partition pk.
func PartitionStart(pk string) Key {
	return Key{enc: keyenc.AppendString(nil, pk)}
}

// PartitionEnd is the position after every entity of partition pk and
// before any later partition.
func PartitionEnd(pk string) Key {
	return Key{enc: keyenc.StringEnd(keyenc.AppendString(nil, pk))}
}

// IsZero reports whether k is the unbounded Key.
func (k Key) IsZero() bool { return k.enc == nil }

// Compare orders two bounded Keys: -1, 0 or +1. The zero Key compares as
// the smallest; callers that use it as an end bound must treat it as the
// largest themselves.
func (k Key) Compare(o Key) int { return bytes.Compare(k.enc, o.enc) }

// encoded returns the key's encoding relative to its table (see
// internal/keyenc).
func (k Key) encoded() []byte { return k.enc }

// KeyRange is the half-open range [Start, End) of entity keys. A zero Start
// is unbounded below, a zero End unbounded above.
type KeyRange struct {
	Start Key
	End   Key
}

// Empty reports whether r contains no key.
func (r KeyRange) Empty() bool {
	return !r.End.IsZero() && r.Start.Compare(r.End) >= 0
}

// Contains reports whether entity (pk, rk) lies in r.
func (r KeyRange) Contains(pk, rk string) bool {
	k := KeyAt(pk, rk)
	if !r.Start.IsZero() && k.Compare(r.Start) < 0 {
		return false
	}
	return r.End.IsZero() || k.Compare(r.End) < 0
}

// Intersect returns the range of the keys in both r and o, and whether it
// holds any. The start is the later of the starts and the end the earlier
// of the ends, a zero bound giving way to the other; when ok is false the
// range returned is Empty (never the zero KeyRange, which holds every key).
func (r KeyRange) Intersect(o KeyRange) (KeyRange, bool) {
	out := r
	if out.Start.IsZero() || (!o.Start.IsZero() && o.Start.Compare(out.Start) > 0) {
		out.Start = o.Start
	}
	if out.End.IsZero() || (!o.End.IsZero() && o.End.Compare(out.End) < 0) {
		out.End = o.End
	}
	return out, !out.Empty()
}

// Predicate selects entities in a query. Package filter's parsed and built
// filters implement it; so may your own types.
//
// A query (Table.Query, QueryAll, QueryAs, Count) relies on its Predicate
// for what it reads, so it checks what it can of this contract before it
// reads anything, and fails with ErrInvalidInput, naming the Predicate's
// type, where the Predicate breaks it:
//
//   - The Predicate is not a nil pointer (or other nil value) in a non-nil
//     interface: such a Predicate is refused, neither called nor taken for
//     "every entity", with an error that says what to pass instead. A nil
//     Predicate, the zero QueryOptions.Filter, selects every entity, and
//     so does filter.Const(true). Package filter's functions never return
//     a nil *filter.Filter, so a filter built with them is never refused
//     for this; the pointer to watch is one declared and left nil, as in
//     "var f *filter.Filter".
//   - If the Predicate has a method Err() error, as package filter's
//     Filters do, the query calls it first and fails with the very error it
//     returns when that is not nil: a Predicate reports so that it could
//     not be built. Err should then return an *Error wrapping
//     ErrInvalidInput, as filter's do.
//   - KeyRanges, when ok, returns ranges that are non-empty (Empty false),
//     sorted and disjoint: each range's End is set and is at or before the
//     next range's Start. No ranges with ok true means no entity can match:
//     nothing is read.
//
// And what no query can check: the ranges contain every entity Match
// accepts (an entity outside them is never read, so never returned);
// Match and KeyRanges answer the same for the same input every time they
// are called (each page of a query calls KeyRanges again); and a Predicate
// shared by concurrent queries is safe for concurrent use. A table listing
// (Account.ListTables, Tables) checks the first two rules and calls only
// Match.
type Predicate interface {
	// Match reports whether e satisfies the predicate. It reads e through
	// e.Property, so PartitionKey, RowKey and Timestamp are visible. e is
	// valid only for the call: a query reuses it for the next entity, so
	// Match must not modify or retain it or its Properties (the Values
	// themselves are immutable and may be kept).
	Match(e *Entity) bool
	// KeyRanges returns sorted, disjoint, non-empty ranges that together
	// contain every entity Match accepts. ok is false when no range can be
	// derived and the whole table must be scanned.
	KeyRanges() (ranges []KeyRange, ok bool)
	// String returns the predicate in the service's $filter syntax.
	String() string
}

// checkPredicate checks p as Predicate's contract says, but for its key
// ranges (see predicateRanges). A nil p is valid.
func checkPredicate(p Predicate) error {
	if p == nil {
		return nil
	}
	switch v := reflect.ValueOf(p); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		if v.IsNil() {
			return nilPredicateError(p)
		}
	}
	if e, ok := p.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}

// filterPkg is the import path of package filter, whose nil *Filter a
// query refuses with advice of its own.
const filterPkg = "github.com/localtable/localtable/filter"

// nilPredicateError is the error of a query given a nil pointer (or other
// nil value) in a non-nil Predicate: it says what to pass instead.
func nilPredicateError(p Predicate) *Error {
	if t := reflect.TypeOf(p); t.Kind() == reflect.Pointer && t.Elem().PkgPath() == filterPkg {
		return newError(ErrInvalidInput, "the filter is a nil %T, which is not \"no filter\": "+
			"to select every entity leave the Filter unset or pass filter.Const(true); "+
			"to combine optional conditions pass filter.And(conditions...), which is never nil "+
			"(filter.Const(true) when there are none)", p)
	}
	return newError(ErrInvalidInput, "the filter is a nil %T, which is not \"no filter\": "+
		"to select every entity leave the Filter unset (a nil Predicate)", p)
}

// predicateRanges returns the key ranges a query of p scans: p's, checked,
// or the whole table (full) when p is nil or has none. p has passed
// checkPredicate.
func predicateRanges(p Predicate) (ranges []KeyRange, full bool, err error) {
	if p == nil {
		return []KeyRange{{}}, true, nil
	}
	rs, ok := p.KeyRanges()
	if !ok {
		return []KeyRange{{}}, true, nil
	}
	for i, r := range rs {
		switch {
		case r.Empty():
			return nil, false, newError(ErrInvalidInput, "filter %T: its key range %d of %d is empty; a Predicate's KeyRanges must be non-empty, sorted and disjoint", p, i, len(rs))
		case i > 0 && (rs[i-1].End.IsZero() || r.Start.Compare(rs[i-1].End) < 0):
			return nil, false, newError(ErrInvalidInput, "filter %T: its key ranges %d and %d of %d overlap or are out of order; a Predicate's KeyRanges must be non-empty, sorted and disjoint", p, i-1, i, len(rs))
		}
	}
	return rs, false, nil
}

// ValueRange is a range of values of one Edm type: those of Kind between
// Low and High. A null Low (or High) is unbounded on that side, within
// Kind; LowExclusive (HighExclusive) leaves the bound itself out. Values
// are ordered as the service compares them (see filter.Compare).
type ValueRange struct {
	Kind                        Kind
	Low, High                   Value
	LowExclusive, HighExclusive bool
}

// IndexPredicate is a Predicate that can bound the values of a property
// its matches hold, so that a query can read an index on that property
// instead of the table (see Table.CreateIndex). Package filter's filters
// implement it.
type IndexPredicate interface {
	Predicate
	// PropertyRanges returns ranges that together hold the value of
	// property name of every entity Match accepts: an entity that lacks
	// the property, or whose value lies outside them, does not match. ok
	// is false when the predicate does not bound the property. No ranges
	// with ok true means no entity can match. The query still matches
	// every entity it reads with Match, so the ranges may hold more.
	PropertyRanges(name string) (ranges []ValueRange, ok bool)
}

// An IndexPredicate may also have a method
//
//	PropertyRangesExact(name string) bool
//
// (package filter's filters do) that reports whether the predicate matches
// exactly the entities whose property name lies in PropertyRanges(name),
// testing nothing else: a Count of it then reads an index on the property
// alone, without fetching the entities, and a query without key ranges
// returns the entities it fetches through the index without matching
// them again.
type exactRanges interface {
	PropertyRangesExact(name string) bool
}
