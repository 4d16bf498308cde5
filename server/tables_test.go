package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// listTables walks every page of a table listing and returns the names
// and the number of pages.
func listTables(t *testing.T, sc *aztables.ServiceClient, opts *aztables.ListTablesOptions) ([]string, int) {
	t.Helper()
	var names []string
	pages := 0
	pager := sc.NewListTablesPager(opts)
	for pager.More() {
		p, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListTables: %v", err)
		}
		pages++
		for _, tp := range p.Tables {
			names = append(names, *tp.Name)
		}
	}
	return names, pages
}

func TestSDKListTablesFilterTopSelect(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	var all []string
	for _, n := range []string{"alpha", "Bravo", "charlie", "delta", "echo", "mike", "november", "oscar", "zulu"} {
		if _, err := srv.Client.CreateTable(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
		all = append(all, n)
	}
	names, _ := listTables(t, srv.Client, nil)
	if strings.Join(names, ",") != strings.Join(all, ",") {
		t.Fatalf("all tables %v, want %v (sorted case-insensitively, as created)", names, all)
	}
	for _, c := range []struct {
		filter string
		want   string
	}{
		{"TableName eq 'delta'", "delta"},
		{"TableName eq 'nosuch'", ""},
		{"TableName ge 'a' and TableName lt 'n'", "alpha,charlie,delta,echo,mike"}, // ordinal: "Bravo" < "a"
		{"TableName ne 'zulu' and TableName gt 'n'", "november,oscar"},
		{"TableName eq 'Bravo' or TableName eq 'zulu'", "Bravo,zulu"},
	} {
		for _, top := range []int32{0, 1, 2, 1000} {
			opts := &aztables.ListTablesOptions{Filter: to.Ptr(c.filter)}
			if top > 0 {
				opts.Top = to.Ptr(top)
			}
			names, _ := listTables(t, srv.Client, opts)
			if got := strings.Join(names, ","); got != c.want {
				t.Errorf("filter %q top %d: %q, want %q", c.filter, top, got, c.want)
			}
		}
	}
	// Top pages with NextTableName across pages.
	names, pages := listTables(t, srv.Client, &aztables.ListTablesOptions{Top: to.Ptr(int32(4))})
	if strings.Join(names, ",") != strings.Join(all, ",") || pages != 3 {
		t.Fatalf("top 4: %v in %d pages", names, pages)
	}
	p, err := srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr(int32(4))}).NextPage(ctx)
	if err != nil || p.NextTableName == nil || *p.NextTableName != "echo" {
		t.Fatalf("first page NextTableName: %v %v", p.NextTableName, err)
	}
	// The last page of a TableName range has no continuation, though
	// tables follow it outside the range (the service's recorded
	// TestQueryTable_storage in the Go SDK).
	p, err = srv.Client.NewListTablesPager(&aztables.ListTablesOptions{
		Filter: to.Ptr("TableName ge 'a' and TableName lt 'n'"), Top: to.Ptr(int32(5))}).NextPage(ctx)
	if err != nil || len(p.Tables) != 5 || p.NextTableName != nil {
		t.Fatalf("last page of a range: %d tables, NextTableName %v, %v", len(p.Tables), p.NextTableName, err)
	}
	// Select TableName.
	names, _ = listTables(t, srv.Client, &aztables.ListTablesOptions{Select: to.Ptr("TableName"), Top: to.Ptr(int32(5))})
	if len(names) != len(all) {
		t.Fatalf("select: %v", names)
	}
	// A bad filter and a bad $top are 400 InvalidInput.
	_, err = srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq")}).NextPage(ctx)
	wantCode(t, err, 400, "InvalidInput")
	_, err = srv.Client.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr(int32(1001))}).NextPage(ctx)
	wantCode(t, err, 400, "InvalidInput")
}

func TestSDKTableErrors(t *testing.T) {
	ctx := context.Background()
	srv := localtabletest.NewServer(t)
	if _, err := srv.Client.CreateTable(ctx, "Orders", nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"orders", "ORDERS", "Orders"} {
		_, err := srv.Client.CreateTable(ctx, n, nil)
		wantCode(t, err, 409, "TableAlreadyExists")
	}
	_, err := srv.Client.DeleteTable(ctx, "missing", nil)
	wantCode(t, err, 404, "ResourceNotFound")
	_, err = srv.Client.NewClient("missing").Delete(ctx, nil)
	wantCode(t, err, 404, "ResourceNotFound")
	for _, c := range []struct{ name, code string }{
		{"1abc", "InvalidResourceName"},
		{"ab-c", "InvalidResourceName"},
		{"ab_c", "InvalidResourceName"},
		{"ab", "OutOfRangeInput"},
		{strings.Repeat("a", 64), "OutOfRangeInput"},
		{"tables", "InvalidInput"},
		{"Tables", "InvalidInput"},
	} {
		_, err := srv.Client.CreateTable(ctx, c.name, nil)
		wantCode(t, err, 400, c.code)
	}
	if _, err := srv.Client.CreateTable(ctx, strings.Repeat("a", 63), nil); err != nil {
		t.Fatalf("63-character name: %v", err)
	}
	// The table is gone after delete, and can be created again.
	if _, err := srv.Client.DeleteTable(ctx, "ORDERS", nil); err != nil {
		t.Fatalf("delete in other case: %v", err)
	}
	names, _ := listTables(t, srv.Client, &aztables.ListTablesOptions{Filter: to.Ptr("TableName eq 'Orders'")})
	if len(names) != 0 {
		t.Fatalf("deleted table listed: %v", names)
	}
	if _, err := srv.Client.CreateTable(ctx, "Orders", nil); err != nil {
		t.Fatalf("re-create: %v", err)
	}
}
