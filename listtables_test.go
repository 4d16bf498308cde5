package localtable_test

import (
	"context"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/filter"
)

// A page's NextTableName names the next table the filter selects: the last
// page of a TableName range has none, whatever tables follow the range.
func TestListTablesNextNameSkipsUnselected(t *testing.T) {
	ctx := context.Background()
	acct, err := localtable.Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acct.Close()
	for _, n := range []string{"alpha", "apple", "avocado", "banana", "berry", "cherry"} {
		if _, err := acct.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		filter   string
		top      int
		names    string
		nextName string
	}{
		{"TableName ge 'a' and TableName lt 'b'", 3, "alpha,apple,avocado", ""},
		{"TableName ge 'a' and TableName lt 'b'", 2, "alpha,apple", "avocado"},
		{"TableName eq 'alpha' or TableName eq 'cherry'", 1, "alpha", "cherry"},
		{"TableName eq 'apple'", 1, "apple", ""},
	} {
		f, err := filter.Parse(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		page, err := acct.ListTables(ctx, &localtable.ListTablesOptions{Filter: f, PageSize: c.top})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ti := range page.Tables {
			names = append(names, ti.Name)
		}
		if got := strings.Join(names, ","); got != c.names || page.NextTableName != c.nextName {
			t.Errorf("%q top %d: %q next %q, want %q next %q", c.filter, c.top, got, page.NextTableName, c.names, c.nextName)
		}
	}
}
