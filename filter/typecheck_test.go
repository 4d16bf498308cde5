package filter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestTypeCheckHints: a comparison with a literal of another type than
// the property's in the entities scanned gets a hint; a comparable one
// (same type, or an Int32 literal with a Double or Int64), an absent
// property and an empty scan get none. The query's answer is the
// filter's own. On every engine: a query reads the stored records
// through MatchReader.
func TestTypeCheckHints(t *testing.T) {
	tabletest.ForEachEngine(t, testTypeCheckHints)
}

func testTypeCheckHints(t *testing.T, eng tabletest.Engine) {
	ctx := context.Background()
	acct := tabletest.OpenAccount(t, eng, nil)
	tb, _ := acct.CreateTable(ctx, "Orders")
	for i, total := range []float64{12.5, 7} {
		if _, err := tb.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: string(rune('a' + i)), Properties: localtable.Properties{
			"Total": localtable.DoubleValue(total), "Items": localtable.Int64Value(3), "Status": localtable.StringValue("open")}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		filter string
		n      int
		hints  []string
	}{
		{"Total eq '12.5'", 0, []string{"Total is Edm.Double in the entities scanned (12.5, for one); the filter compares it with a String ('12.5'), and values of different types never match: write a Double literal, such as 12.5."}},
		{"Total gt 10.0 or Items eq 3", 2, nil},
		{"Items eq 3L and Status eq 1", 0, []string{"Status is Edm.String in the entities scanned ('open', for one); the filter compares it with an Int32 (1), and values of different types never match: write a String literal, such as 'open'."}},
		{"Total gt 10", 1, nil},
		{"Totl eq 'x'", 0, nil},
		{"PartitionKey eq 'q' and Total eq 'x'", 0, nil},
		{"not (Items eq 3.0)", 2, []string{"Items is Edm.Int64 in the entities scanned (3L, for one); the filter compares it with a Double (3.0), and values of different types never match: write an Int64 literal, such as 3L."}},
	} {
		f, err := filter.Parse(tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		check := f.TypeCheck()
		var n int
		for _, err := range tb.QueryAll(ctx, &localtable.QueryOptions{Filter: check}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != tc.n {
			t.Errorf("%s: %d entities, want %d", tc.filter, n, tc.n)
		}
		if got := check.Hints(); strings.Join(got, "\n") != strings.Join(tc.hints, "\n") {
			t.Errorf("%s: hints\n  %q\nwant\n  %q", tc.filter, got, tc.hints)
		}
	}
}

// TestTypeCheckKeepsIndexPlan: a filter wrapped for hints plans as the
// filter does, an index included.
func TestTypeCheckKeepsIndexPlan(t *testing.T) {
	ctx := context.Background()
	_, tbl := tabletest.NewTable(t, tabletest.Engines[0])
	for i := range 500 {
		e := localtable.Entity{PartitionKey: "p", RowKey: strings.Repeat("r", 1+i%7) + string(rune('a'+i%26)) + strings.Repeat("x", i/26), Properties: localtable.Properties{"Total": localtable.DoubleValue(float64(i))}}
		if _, err := tbl.Upsert(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.CreateIndex(ctx, "byTotal", "Total"); err != nil {
		t.Fatal(err)
	}
	f, err := filter.Parse("Total gt 495.0")
	if err != nil {
		t.Fatal(err)
	}
	page, err := tbl.Query(ctx, &localtable.QueryOptions{Filter: f.TypeCheck()})
	if err != nil {
		t.Fatal(err)
	}
	if page.Stats.Index != "byTotal" || len(page.Entities) != 4 {
		t.Fatalf("with TypeCheck: index %q, %d entities; want byTotal, 4", page.Stats.Index, len(page.Entities))
	}
}
