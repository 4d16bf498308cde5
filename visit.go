package localtable

import (
	"context"
	"iter"

	"github.com/localtable/localtable/internal/rawquery"
)

// visitFunc receives the entities of queryStored as stored; see package
// internal/rawquery.
type visitFunc = func(pk, rk string, ticks int64, props iter.Seq2[string, Value]) error

func init() { rawquery.Set[*Table, QueryOptions, QueryPage, Value]((*Table).queryStored) }

// queryStored is Query, handing each entity the page would hold to visit,
// as stored, instead of decoding it into the page.
func (t *Table) queryStored(ctx context.Context, opts QueryOptions, visit visitFunc) (QueryPage, error) {
	if opts.Select != nil {
		return QueryPage{}, newError(ErrInvalidInput, "a query of stored entities selects no properties")
	}
	if visit == nil {
		return QueryPage{}, newError(ErrInvalidInput, "a query of stored entities needs a visitor")
	}
	return t.queryPage(ctx, opts, &storedVisit{visit: visit})
}

// storedVisit hands entities to a visitFunc, as stored, or, with row
// set, to row as a *Row (Table.Rows).
type storedVisit struct {
	visit visitFunc
	rec   []byte // the record being visited
	it    recordWalker
	props iter.Seq2[string, Value] // all, made once
	// size is the PayloadSize of the properties all yielded, and sized
	// whether it yielded them all: then emit need not walk the record
	// again to measure it.
	size  int
	sized bool
	// fresh says that it was initialized on rec by emit and has not been
	// read since: all need not initialize it again.
	fresh bool

	row   func(*Row) error
	rowAt Row // what row receives, reset for each entity
}

// emit hands the entity of an engine key and record to the visitor, and
// returns its PayloadSize when size is set.
func (v *storedVisit) emit(key, rec []byte, size bool, row *Row) (int, error) {
	// The keys and the record are used during the call only: views of
	// the engine's bytes do, whatever the engine.
	if v.row != nil {
		// A Row decodes what it is asked for, its keys included. row, if
		// not nil, is v.rowAt, which the query's filter read already.
		if row == nil {
			row = &v.rowAt
			row.reset(key, rec)
		}
		err := row.err
		if err == nil {
			err = v.row(row)
		}
		row.clear() // a Row kept past its step reads as empty
		if err != nil || !size {
			return 0, err
		}
	}
	pk, rk, err := decodeEntityKey(key)
	if err != nil {
		return 0, err
	}
	ticks, err := v.it.init(rec, true)
	if err != nil {
		return 0, err
	}
	v.rec, v.sized, v.fresh = rec, false, true
	if v.row == nil {
		if v.props == nil {
			v.props = v.all
		}
		err = v.visit(pk, rk, ticks, v.props)
	}
	if err != nil {
		return 0, err
	}
	if v.it.err != nil {
		return 0, v.it.err
	}
	if !size {
		return 0, nil
	}
	// The measure of MaxBytes, as PayloadSize measures the entity: taken
	// as the visitor read the properties, if it read them all.
	n := payloadKeysSize(pk, rk)
	if v.sized {
		return n + v.size, nil
	}
	v.it.init(rec, true)
	for {
		name, val, ok := v.it.next()
		if !ok {
			break
		}
		n += payloadPropSize(name, val)
	}
	return n, v.it.err
}

// all yields the properties of the record emit is visiting.
func (v *storedVisit) all(yield func(string, Value) bool) {
	if !v.fresh {
		v.it.init(v.rec, true)
	}
	v.sized, v.fresh = false, false
	n := 0
	for {
		name, val, ok := v.it.next()
		if !ok {
			v.size, v.sized = n, v.it.err == nil
			return
		}
		n += payloadPropSize(name, val)
		if !yield(name, val) {
			return
		}
	}
}
