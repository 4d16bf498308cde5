package filter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestTypeCheckProbe: README's example, "Total eq '12.5'" on a Double
// Total, read through an index on Total finds no entry and notes no
// entity, so Hints has nothing to say; Probe reads the entities by the
// filter's key ranges and the hint appears. After a query that noted
// entities, Probe reads nothing more.
func TestTypeCheckProbe(t *testing.T) {
	ctx := context.Background()
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	for _, rk := range []string{"a", "b", "c"} {
		if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: rk,
			Properties: localtable.Properties{"Total": localtable.DoubleValue(12.5)}}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := filter.Parse("Total eq '12.5'")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.CreateIndex(ctx, "byTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	c := f.TypeCheck()
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: c})
	if err != nil {
		t.Fatal(err)
	}
	if page.Stats.Index != "byTotal" || len(page.Entities) != 0 {
		t.Fatalf("the query read %d entities through index %q; want none, through byTotal", len(page.Entities), page.Stats.Index)
	}
	if h := c.Hints(); len(h) != 0 {
		t.Fatalf("hints before the probe: %q; the query noted no entity", h)
	}
	if err := c.Probe(ctx, tbl, 1000); err != nil {
		t.Fatal(err)
	}
	h := c.Hints()
	if len(h) != 1 || !strings.Contains(h[0], "Total is Edm.Double") || !strings.Contains(h[0], "such as 12.5") {
		t.Errorf("hints after the probe: %q; want the Double hint", h)
	}

	// Scanned: the query notes the entities itself, and Probe reads
	// nothing more (had it read, it would have noted the Int32 Total
	// inserted since, and the hint would name two types).
	g, err := filter.Parse("Total eq '12.5' or Other eq 1")
	if err != nil {
		t.Fatal(err)
	}
	c = g.TypeCheck()
	if _, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: c}); err != nil {
		t.Fatal(err)
	}
	before := c.Hints()
	if len(before) != 1 {
		t.Fatalf("hints of a scan: %q, want 1", before)
	}
	if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "d",
		Properties: localtable.Properties{"Total": localtable.Int32Value(12)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Probe(ctx, tbl, 1000); err != nil {
		t.Fatal(err)
	}
	if after := c.Hints(); len(after) != 1 || after[0] != before[0] {
		t.Errorf("Probe after a query that noted entities changed the hints: %q, was %q", after, before)
	}
}
