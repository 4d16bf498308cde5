package tests

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// A filter whose parse failed, passed to a query despite the error, fails
// the query; it never selects every entity, as a nil filter would.
func TestQueryWithFailedParse(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "Parsed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatal(err)
	}
	f, perr := filter.Parse("Age gt (((")
	if perr == nil || f == nil || !errors.Is(f.Err(), localtable.ErrInvalidInput) {
		t.Fatalf("Parse = %v, %v; want a filter carrying the error", f, perr)
	}
	if n, err := tbl.Count(ctx, f); err == nil {
		t.Fatalf("Count with a failed filter = %d, nil; want its error", n)
	}
	if _, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f}); !errors.Is(err, localtable.ErrInvalidInput) {
		t.Fatalf("Query with a failed filter: %v", err)
	}
	for _, err := range tbl.QueryAll(ctx, &localtable.QueryOptions{Filter: f}) {
		if err == nil {
			t.Fatal("QueryAll with a failed filter yielded an entity")
		}
		break
	}
}

// A Continuation naming only a partition resumes at its first entity, the
// one with the empty RowKey included.
func TestContinuationAtPartition(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	tbl, err := acct.CreateTable(ctx, "Resume")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range [][2]string{{"a", "1"}, {"b", ""}, {"b", "x"}, {"c", "y"}} {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: k[0], RowKey: k[1]}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Continuation: localtable.ContinuationAtPartition("b")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entities {
		got = append(got, e.PartitionKey+"/"+e.RowKey)
	}
	if fmt.Sprint(got) != "[b/ b/x c/y]" {
		t.Fatalf("resumed at partition b: %v", got)
	}
}
