package tests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/tabletest"
)

func TestTableNames(t *testing.T) {
	cases := []struct {
		name string
		code localtable.ErrorCode
	}{
		{"abc", ""},
		{"A1b2C3", ""},
		{strings.Repeat("a", 63), ""},
		{"ab", "OutOfRangeInput"},
		{"", "OutOfRangeInput"},
		{strings.Repeat("a", 64), "OutOfRangeInput"},
		{"1abc", "InvalidResourceName"},
		{"ab-c", "InvalidResourceName"},
		{"ab_c", "InvalidResourceName"},
		{"abé", "InvalidResourceName"},
		{"tables", "InvalidInput"},
		{"Tables", "InvalidInput"},
		{"TABLES", "InvalidInput"},
	}
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, nil)
		for _, c := range cases {
			_, err := a.CreateTable(ctx, c.name)
			if got := localtable.ErrorCodeOf(err); got != c.code {
				t.Errorf("CreateTable(%q): %v, want code %q", c.name, err, c.code)
			}
			if c.code != "" && !errors.Is(err, localtable.ErrInvalidTableName) {
				t.Errorf("CreateTable(%q): %v does not match ErrInvalidTableName", c.name, err)
			}
		}
	})
}

func TestTableCaseInsensitive(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, nil)
		if _, err := a.CreateTable(ctx, "MyTable"); err != nil {
			t.Fatal(err)
		}
		_, err := a.CreateTable(ctx, "mytable")
		if !errors.Is(err, localtable.ErrTableExists) || localtable.ErrorCodeOf(err) != "TableAlreadyExists" {
			t.Errorf("CreateTable in other case: %v, want TableAlreadyExists", err)
		}
		tbl, err := a.CreateTableIfNotExists(ctx, "MYTABLE")
		if err != nil || tbl.Name() != "MyTable" {
			t.Errorf("CreateTableIfNotExists = %v, %v; want handle named MyTable", tbl, err)
		}
		// Entities are reachable through any case of the name.
		if _, err := a.Table("mytable").Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Table("MYTABLE").Get(ctx, "p", "r", nil); err != nil {
			t.Errorf("Get through other case: %v", err)
		}
		got, err := a.GetTable(ctx, "myTABLE")
		if err != nil || got.Name() != "MyTable" {
			t.Errorf("GetTable = %v, %v", got, err)
		}
		page, err := a.ListTables(ctx, nil)
		if err != nil || len(page.Tables) != 1 || page.Tables[0].Name != "MyTable" {
			t.Errorf("ListTables = %+v, %v; want [MyTable] as created", page, err)
		}
	})
}

func TestDeleteTable(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a, tbl := tabletest.NewTable(t, eng)
		for i := 0; i < 50; i++ {
			if _, err := tbl.Insert(ctx, localtable.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.DeleteTable(ctx, "TBL1"); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.Get(ctx, "p", "1", nil); !errors.Is(err, localtable.ErrTableNotFound) {
			t.Errorf("Get after DeleteTable: %v", err)
		}
		err := a.DeleteTable(ctx, "tbl1")
		if !errors.Is(err, localtable.ErrTableNotFound) || localtable.ErrorCodeOf(err) != "ResourceNotFound" {
			t.Errorf("DeleteTable of missing table: %v, want ResourceNotFound", err)
		}
		// A re-created table starts empty.
		tbl2, err := a.CreateTable(ctx, "tbl1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tbl2.Get(ctx, "p", "1", nil); !errors.Is(err, localtable.ErrEntityNotFound) {
			t.Errorf("Get in re-created table: %v, want ErrEntityNotFound", err)
		}
	})
}

// nameFilter is a Predicate on TableName for the listing test.
type nameFilter struct{ prefix string }

func (f nameFilter) Match(e *localtable.Entity) bool {
	v, ok := e.Property("TableName")
	return ok && strings.HasPrefix(v.String(), f.prefix)
}
func (f nameFilter) KeyRanges() ([]localtable.KeyRange, bool) { return nil, false }
func (f nameFilter) String() string                           { return "TableName ge '" + f.prefix + "'" }

func TestListTablesPaged(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		a := tabletest.OpenAccount(t, eng, nil)
		var want []string
		for i := 0; i < 25; i++ {
			name := fmt.Sprintf("T%02dx", 24-i)
			if i%2 == 0 {
				name = strings.ToLower(name)
			}
			if _, err := a.CreateTable(ctx, name); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}
		slices.SortFunc(want, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
		var got []string
		opts := localtable.ListTablesOptions{PageSize: 7}
		pages := 0
		for {
			page, err := a.ListTables(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, ti := range page.Tables {
				got = append(got, ti.Name)
			}
			if page.NextTableName == "" {
				break
			}
			opts.NextTableName = page.NextTableName
		}
		if !slices.Equal(got, want) || pages != 4 {
			t.Errorf("paged listing (%d pages) = %v\nwant %v", pages, got, want)
		}
		var all []string
		for ti, err := range a.Tables(ctx, &localtable.ListTablesOptions{PageSize: 3, Filter: nameFilter{"t1"}}) {
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ti.Name)
		}
		if len(all) != 5 {
			t.Errorf("filtered listing = %v, want the 5 tables t1?x", all)
		}
		for _, top := range []int{-1, 1001} {
			if _, err := a.ListTables(ctx, &localtable.ListTablesOptions{PageSize: top}); localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("PageSize=%d: %v, want InvalidInput", top, err)
			}
		}
		// Breaking out of the iterator stops it.
		n := 0
		for range a.Tables(ctx, &localtable.ListTablesOptions{PageSize: 2}) {
			n++
			if n == 3 {
				break
			}
		}
		if n != 3 {
			t.Errorf("iterated %d tables after break", n)
		}
	})
}

func TestAccessPolicies(t *testing.T) {
	tabletest.ForEachEngine(t, func(t *testing.T, eng tabletest.Engine) {
		_, tbl := tabletest.NewTable(t, eng)
		ps := []localtable.AccessPolicy{{ID: "read", Permission: "r"}, {ID: "all", Permission: "raud"}}
		if err := tbl.SetAccessPolicy(ctx, ps); err != nil {
			t.Fatal(err)
		}
		got, err := tbl.GetAccessPolicy(ctx)
		if err != nil || len(got) != 2 || got[1].Permission != "raud" {
			t.Errorf("GetAccessPolicy = %+v, %v", got, err)
		}
		six := make([]localtable.AccessPolicy, 6)
		for i := range six {
			six[i] = localtable.AccessPolicy{ID: fmt.Sprint(i)}
		}
		for _, bad := range [][]localtable.AccessPolicy{six, {{ID: "x", Permission: "w"}}, {{ID: ""}}, {{ID: "a"}, {ID: "a"}}} {
			if err := tbl.SetAccessPolicy(ctx, bad); localtable.ErrorCodeOf(err) != "InvalidInput" {
				t.Errorf("SetAccessPolicy(%+v): %v, want InvalidInput", bad, err)
			}
		}
	})
}
