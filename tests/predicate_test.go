package tests

import (
	"errors"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// nilPred is a Predicate whose methods dereference their receiver, as most
// pointer types' do: a nil *nilPred panics if a query calls it.
type nilPred struct{ ranges []localtable.KeyRange }

func (p *nilPred) Match(*localtable.Entity) bool            { return p.ranges != nil }
func (p *nilPred) KeyRanges() ([]localtable.KeyRange, bool) { return p.ranges, true }
func (p *nilPred) String() string                           { return "nilPred" }

// errPred is a third-party Predicate with an Err method.
type errPred struct {
	tabletest.KeyPred
	err error
}

func (p errPred) Err() error { return p.err }

func partitions(from, to string) localtable.KeyRange {
	return localtable.KeyRange{Start: localtable.PartitionStart(from), End: localtable.PartitionEnd(to)}
}

// TestQueryPredicateRangesChecked: a query checks the key ranges a
// Predicate returns before it scans them. Ranges that overlap would return
// entities twice, ranges out of order would skip entities once a page
// ends, and an empty range breaks the contract: each fails the query with
// InvalidInput naming the Predicate's type, in Query, QueryAll and Count.
func TestQueryPredicateRangesChecked(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		tabletest.Fill(t, tbl, 4, 10) // p000..p003, r0000..r0009
		bad := map[string][]localtable.KeyRange{
			"overlapping":         {partitions("p000", "p001"), partitions("p001", "p002")},
			"out of order":        {partitions("p002", "p002"), partitions("p000", "p000")},
			"empty":               {partitions("p000", "p000"), {Start: localtable.PartitionEnd("p002"), End: localtable.PartitionStart("p002")}},
			"unbounded then more": {{Start: localtable.PartitionStart("p001")}, partitions("p002", "p003")},
			"more from the start": {partitions("p001", "p001"), {End: localtable.PartitionEnd("p003")}},
			"duplicate":           {partitions("p001", "p001"), partitions("p001", "p001")},
		}
		for name, rs := range bad {
			p := tabletest.KeyPred{Ranges: rs}
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), "tabletest.KeyPred") {
					t.Errorf("%s: %s: %v, want InvalidInput naming tabletest.KeyPred", name, op, err)
				}
			}
			_, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: p, PageSize: 5})
			check("Query", err)
			var all error
			n := 0
			for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: p, PageSize: 5}) {
				if err != nil {
					all = err
					break
				}
				n++
			}
			check("QueryAll", all)
			if n != 0 {
				t.Errorf("%s: QueryAll yielded %d entities before failing", name, n)
			}
			_, err = tbl.Count(ctx, p)
			check("Count", err)
		}
		// Adjacent ranges, and none at all, keep the contract.
		adjacent := tabletest.KeyPred{Ranges: []localtable.KeyRange{
			{Start: localtable.PartitionStart("p000"), End: localtable.KeyAt("p000", "r0005")},
			{Start: localtable.KeyAt("p000", "r0005"), End: localtable.PartitionEnd("p001")},
			{Start: localtable.PartitionStart("p003")},
		}}
		if got := tabletest.CollectKeys(t, tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: adjacent, PageSize: 3})); len(got) != 30 {
			t.Errorf("adjacent ranges: %d entities, want 30", len(got))
		}
		none := tabletest.KeyPred{Ranges: []localtable.KeyRange{}}
		if page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: none}); err != nil || len(page.Entities) != 0 || page.Stats.Scanned != 0 {
			t.Errorf("no ranges: %d entities, %d scanned, %v; want none", len(page.Entities), page.Stats.Scanned, err)
		}
	})
}

// TestQueryPredicateNil: a nil pointer in the Filter (not a nil
// Predicate) is refused, not called (which would panic) nor taken for
// "every entity", by every query and by ListTables. A nil *filter.Filter
// too: a nil Predicate is the one way to select everything.
func TestQueryPredicateNil(t *testing.T) {
	a, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	tabletest.Fill(t, tbl, 1, 3)
	for _, p := range []localtable.Predicate{(*nilPred)(nil), (*filter.Filter)(nil)} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), "nil") {
				t.Errorf("%T: %s: %v, want InvalidInput for a nil filter", p, op, err)
			}
		}
		_, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: p})
		check("Query", err)
		for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: p}) {
			check("QueryAll", err)
			if err == nil {
				break
			}
		}
		_, err = tbl.Count(ctx, p)
		check("Count", err)
		_, err = a.ListTables(ctx, &localtable.ListTablesOptions{Filter: p})
		check("ListTables", err)
	}
}

// TestQueryFilterBuiltUp: the common ways of building a filter from
// optional conditions. Conditions gathered in a slice and combined with
// filter.And select every entity when there is none (And of nothing is
// "true", never nil). A *filter.Filter declared nil and And-ed into only
// when a condition applies works when one does; when none does, the query
// refuses the nil pointer with a message that says exactly what to pass
// instead; a third-party Predicate's nil pointer gets the generic advice.
func TestQueryFilterBuiltUp(t *testing.T) {
	a, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	tabletest.Fill(t, tbl, 2, 3)
	query := func(f localtable.Predicate) (int, error) {
		n := 0
		for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	for _, pk := range []string{"", "p001"} {
		var conds []*filter.Filter
		if pk != "" {
			conds = append(conds, filter.PartitionKey().Eq(pk))
		}
		want := 6
		if pk != "" {
			want = 3
		}
		if n, err := query(filter.And(conds...)); err != nil || n != want {
			t.Errorf("And of %d conditions: %d entities, %v; want %d", len(conds), n, err, want)
		}

		var f *filter.Filter
		if pk != "" {
			f = filter.And(f, filter.PartitionKey().Eq(pk))
		}
		n, err := query(f)
		if pk != "" {
			if err != nil || n != 3 {
				t.Errorf("And(nil, cond): %d entities, %v; want 3", n, err)
			}
			continue
		}
		if !errors.Is(err, localtable.ErrInvalidInput) {
			t.Fatalf("a nil *filter.Filter: %v, want InvalidInput", err)
		}
		for _, advice := range []string{"nil *filter.Filter", "leave the Filter unset", "filter.Const(true)", "filter.And(conditions...)"} {
			if !strings.Contains(err.Error(), advice) {
				t.Errorf("the error %q does not say %q", err, advice)
			}
		}
		if _, err := a.ListTables(ctx, &localtable.ListTablesOptions{Filter: f}); err == nil || !strings.Contains(err.Error(), "filter.Const(true)") {
			t.Errorf("ListTables with a nil *filter.Filter: %v, want the advice", err)
		}
	}
	_, err := query((*nilPred)(nil))
	if err == nil || !strings.Contains(err.Error(), "nil *tests.nilPred") ||
		!strings.Contains(err.Error(), "leave the Filter unset") || strings.Contains(err.Error(), "filter.") {
		t.Errorf("a nil third-party Predicate: %v, want the generic advice", err)
	}
}

// TestQueryPredicateErrMethod: a third-party Predicate's Err method is
// part of the contract: a non-nil Err fails the query with that very
// error before anything is read.
func TestQueryPredicateErrMethod(t *testing.T) {
	a, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	tabletest.Fill(t, tbl, 1, 3)
	mine := errors.New("my predicate is broken")
	p := errPred{err: mine}
	if _, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: p}); err != mine {
		t.Errorf("Query: %v, want %v", err, mine)
	}
	if _, err := tbl.Count(ctx, p); err != mine {
		t.Errorf("Count: %v, want %v", err, mine)
	}
	if _, err := a.ListTables(ctx, &localtable.ListTablesOptions{Filter: p}); err != mine {
		t.Errorf("ListTables: %v, want %v", err, mine)
	}
	p.err = nil
	if n, err := tbl.Count(ctx, p); err != nil || n != 3 {
		t.Errorf("Count with a nil Err: %d, %v; want 3", n, err)
	}
}
