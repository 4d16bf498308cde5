package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/keyenc"
	"github.com/localtable/localtable/storage"
	"github.com/localtable/localtable/storage/memory"
	"github.com/localtable/localtable/storage/pebble"
)

// ltStore is localtable on the memory engine (dir "") or on pebble in
// dir, with the defaults: a pebble commit is synced before it returns.
type ltStore struct {
	label string
	dir   string
	acct  *localtable.Account
	eng   storage.Engine // the account's engine, which the bench opened
	tbl   *localtable.Table
	tmpl  localtable.Properties
	// feed is the feed's options the account was opened with.
	feed *localtable.FeedOptions
	// pool, if set, has the properties insert and tx100 write, one
	// entity after the other, in turn, instead of tmpl; next is the next
	// one's.
	pool []localtable.Properties
	next int
}

// props returns the properties of the next entity a write workload
// writes.
func (s *ltStore) props() localtable.Properties {
	if s.pool == nil {
		return s.tmpl
	}
	p := s.pool[s.next%len(s.pool)]
	s.next++
	return p
}

const tableName = "bench"

var ctx = context.Background()

// openLocaltable opens an account on a new memory engine, or a pebble
// engine in dir (with its fsync skipped when noSync: for loading), with
// the change feed on if feed is not nil, and returns it with its engine.
func openLocaltable(dir string, noSync bool, feed *localtable.FeedOptions) (*localtable.Account, storage.Engine, error) {
	var eng storage.Engine = memory.New(&memory.Options{Logs: keyenc.LogPrefixes()}) // as Open's default
	if dir != "" {
		db, err := pebble.Open(dir, &pebble.Options{NoSync: noSync})
		if err != nil {
			return nil, nil, err
		}
		eng = db
	}
	acct, err := localtable.Open(&localtable.Options{Engine: eng, Feed: feed, IndexRecords: indexRecords})
	return acct, eng, err
}

// indexRecords is the localtable stores' Options.IndexRecords (the flag
// -index-records).
var indexRecords localtable.IndexRecords

// openLtStore opens a localtable store with its table created: on a new
// memory engine (dir "") or on pebble in dir (its fsync skipped when
// noSync), with the change feed on if feed is not nil.
func openLtStore(label, dir string, noSync bool, feed *localtable.FeedOptions) (*ltStore, error) {
	acct, eng, err := openLocaltable(dir, noSync, feed)
	if err != nil {
		return nil, err
	}
	tbl, err := acct.CreateTable(ctx, tableName)
	if err != nil {
		acct.Close()
		return nil, err
	}
	tmpl := templateRow("", "")
	return &ltStore{label: label, dir: dir, acct: acct, eng: eng, tbl: tbl, tmpl: tmpl.props(), feed: feed}, nil
}

// newLocaltable opens a localtable store and loads it with data set s,
// one Insert per entity in the given order. A pebble store is loaded with
// its fsync off, then closed: the reopen workload opens it.
func newLocaltable(label, dir string, s shape, order []int) (*ltStore, error) {
	st, err := openLtStore(label, dir, true, nil)
	if err != nil {
		return nil, err
	}
	for _, i := range order {
		r := s.makeRow(i)
		if _, err := st.tbl.Insert(ctx, r.entity()); err != nil {
			st.close()
			return nil, fmt.Errorf("%s: load: %w", label, err)
		}
	}
	if dir != "" {
		if err := st.acct.Close(); err != nil {
			return nil, err
		}
		if err := st.reopen(pk(0), rk(0)); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (s *ltStore) name() string  { return s.label }
func (s *ltStore) filters() bool { return true }

func (s *ltStore) get(pk, rk string) error {
	e, err := s.tbl.Get(ctx, pk, rk, nil)
	if err != nil {
		return err
	}
	if len(e.Properties) != 10 {
		return fmt.Errorf("get %s/%s: %d properties", pk, rk, len(e.Properties))
	}
	return nil
}

func (s *ltStore) insert(pk, rk string) error {
	_, err := s.tbl.Insert(ctx, localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: s.props()})
	return err
}

func (s *ltStore) tx100(pk string, rks []string) error {
	acts := make([]localtable.Action, len(rks))
	for i, rk := range rks {
		acts[i] = localtable.Action{Type: localtable.ActionInsert, Entity: localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: s.props()}}
	}
	_, err := s.tbl.Transact(ctx, acts)
	return err
}

// replace replaces the entity pk/rk with the next properties.
func (s *ltStore) replace(pk, rk string) error {
	_, err := s.tbl.Upsert(ctx, localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: s.props()}, nil)
	return err
}

func (s *ltStore) remove(pk string, rks []string) error {
	for len(rks) > 0 {
		n := min(len(rks), localtable.MaxTransactionActions)
		acts := make([]localtable.Action, n)
		for i, rk := range rks[:n] {
			acts[i] = localtable.Action{Type: localtable.ActionDelete, Entity: localtable.Entity{PartitionKey: pk, RowKey: rk}}
		}
		if _, err := s.tbl.Transact(ctx, acts); err != nil {
			return err
		}
		rks = rks[n:]
	}
	return nil
}

func (s *ltStore) count(f *filter.Filter) (int, error) {
	n := 0
	for e, err := range s.tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
		if err != nil {
			return n, err
		}
		if len(e.Properties) != 10 {
			return n, fmt.Errorf("query: %d properties", len(e.Properties))
		}
		n++
	}
	return n, nil
}

func (s *ltStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.count(rangeFilter(pk, lo, hi))
}

// rangeFilter selects the entities of partition pk with lo <= RowKey < hi.
func rangeFilter(pk, lo, hi string) *filter.Filter {
	return filter.And(filter.PartitionKey().Eq(pk), filter.RowKey().Ge(lo), filter.RowKey().Lt(hi))
}

// scoreFilter is the full-table filter's: Score < 1.0.
func scoreFilter() *filter.Filter { return filter.Prop("Score").Lt(1.0) }

func (s *ltStore) partitionFilter(pk string) (int, error) {
	return s.count(filter.And(filter.PartitionKey().Eq(pk), filter.Prop("Age").Gt(int32(50))))
}

func (s *ltStore) fullFilter() (int, error) { return s.count(scoreFilter()) }

func (s *ltStore) update(pk, rk string) (int, error) {
	for conflicts := 0; ; conflicts++ {
		e, err := s.tbl.Get(ctx, pk, rk, nil)
		if err != nil {
			return conflicts, err
		}
		patch := localtable.Entity{PartitionKey: pk, RowKey: rk, Properties: localtable.Properties{
			"Visits": localtable.Int64Value(e.Properties["Visits"].Int64() + 1),
		}}
		_, err = s.tbl.Update(ctx, patch, &localtable.UpdateOptions{Mode: localtable.UpdateModeMerge, IfMatch: e.ETag})
		if !errors.Is(err, localtable.ErrConditionNotMet) {
			return conflicts, err
		}
	}
}

func (s *ltStore) reopen(pk, rk string) error {
	if s.dir == "" {
		return errors.New("reopen: memory store")
	}
	// After the load the account is closed already.
	if err := s.acct.Close(); err != nil && !errors.Is(err, localtable.ErrClosed) {
		return err
	}
	acct, eng, err := openLocaltable(s.dir, false, nil)
	if err != nil {
		return err
	}
	tbl, err := acct.GetTable(ctx, tableName)
	if err != nil {
		acct.Close()
		return err
	}
	s.acct, s.eng, s.tbl = acct, eng, tbl
	return s.get(pk, rk)
}

func (s *ltStore) close() error {
	if err := s.acct.Close(); err != nil && !errors.Is(err, localtable.ErrClosed) {
		return err
	}
	return nil
}

// rowStore is localtable read in place: GetRow into one reused Row, and
// Rows for the queries, each entity read through its Row without building
// an Entity or a map (README's hot paths). A read checks that the entity
// has the property its workload reads (Score), as the map-based reads
// check its ten properties. It reads only (get, range, full scan) and
// shares its account with the ltStore it views, which owns it.
type rowStore struct {
	*ltStore
	label string
	row   localtable.Row
	sum   float64
}

func (s *rowStore) name() string { return s.label }

func (s *rowStore) get(pk, rk string) error {
	if err := s.tbl.GetRow(ctx, pk, rk, &s.row); err != nil {
		return err
	}
	return s.read(&s.row)
}

// read reads the Score of r, failing if it has none.
func (s *rowStore) read(r *localtable.Row) error {
	v, ok := r.Property("Score")
	if !ok {
		return fmt.Errorf("row %s/%s: no Score", r.PartitionKey(), r.RowKey())
	}
	s.sum += v.Double()
	return nil
}

func (s *rowStore) count(f *filter.Filter) (int, error) {
	n := 0
	for r, err := range s.tbl.Rows(ctx, &localtable.QueryOptions{Filter: f}) {
		if err != nil {
			return n, err
		}
		if err := s.read(r); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (s *rowStore) rangeQuery(pk, lo, hi string) (int, error) {
	return s.count(rangeFilter(pk, lo, hi))
}

func (s *rowStore) fullFilter() (int, error) { return s.count(scoreFilter()) }

// close does nothing: the ltStore it views closes the account.
func (s *rowStore) close() error { return nil }
