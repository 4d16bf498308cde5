package tests

import (
	"errors"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

// TestSelectNames: a Select entry that is not a property name is refused
// with ErrInvalidInput naming it, as the service answers a $select term
// that is not one (400 InvalidInput), by Query and Get alike; "*" selects
// every property, as $select=* does.
func TestSelectNames(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		if _, err := tbl.Insert(ctx, tabletest.Ent("p", "r", "Name", "n", "Ünï_2", int32(2), "Other", true)); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"bad name", "", "A-b", "1abc", "a.b", "Name,Other", "*A"} {
			_, err := tbl.Query(ctx, &localtable.QueryOptions{Select: []string{"Name", bad}})
			if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), `"`+bad+`"`) {
				t.Errorf("Query with Select %q: %v, want ErrInvalidInput naming it", bad, err)
			}
			for _, rk := range []string{"r", "missing"} { // the request is checked first
				_, err = tbl.Get(ctx, "p", rk, &localtable.GetOptions{Select: []string{bad}})
				if !errors.Is(err, localtable.ErrInvalidInput) || !strings.Contains(err.Error(), `"`+bad+`"`) {
					t.Errorf("Get %s with Select %q: %v, want ErrInvalidInput naming it", rk, bad, err)
				}
			}
		}
		for _, c := range []struct {
			sel  []string
			want int // custom properties returned
		}{
			{[]string{"Name", "_x", "Ünï_2", "PartitionKey", "Timestamp"}, 2},
			{[]string{"*"}, 3},
			{[]string{"Name", "*"}, 3},
			{[]string{}, 0},
		} {
			page, err := tbl.Query(ctx, &localtable.QueryOptions{Select: c.sel})
			if err != nil || len(page.Entities) != 1 || len(page.Entities[0].Properties) != c.want {
				t.Errorf("Query with Select %q: %v %+v, want %d properties", c.sel, err, page.Entities, c.want)
			}
			e, err := tbl.Get(ctx, "p", "r", &localtable.GetOptions{Select: c.sel})
			if err != nil || len(e.Properties) != c.want {
				t.Errorf("Get with Select %q: %v %+v, want %d properties", c.sel, err, e, c.want)
			}
		}
	})
}
